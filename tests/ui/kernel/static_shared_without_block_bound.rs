// `tile_sum` indexes a static `__shared__ float[128]` by `threadIdx.x` and has no
// `__launch_bounds__`: a checked launch must know its block bound (`max_block = 128`), else a
// block of 1024 threads would pass every check and write past the array.
#[kgraph::kernel("bounds_ui.cu", unsafe(extents))]
pub fn tile_sum(out: &mut [f32; 1], n: i32);

fn main() {}
