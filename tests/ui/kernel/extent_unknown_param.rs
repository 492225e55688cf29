// An extent names `m`, which is not a parameter of the kernel.
#[kgraph::kernel("ui.cu", unsafe(extents))]
pub fn axpb(x: &[f32; m], y: &mut [f32; n], a: f32, b: f32, n: i32);

fn main() {}
