// `max_block` is threads per block: 1 to 1024, an integer literal.
#[kgraph::kernel("bounds_ui.cu", unsafe(extents), max_block = 2048)]
pub fn tile_sum(out: &mut [f32; 1], n: i32);

#[kgraph::kernel("bounds_ui.cu", name = "tile_sum", unsafe(extents), max_block = n)]
pub fn tile_sum_named(out: &mut [f32; 1], n: i32);

fn main() {}
