// `unsafe(extents)` promises an extent for every pointer parameter: `y` has none.
#[kgraph::kernel("ui.cu", unsafe(extents))]
pub fn axpb(x: &[f32; n], y: &mut [f32], a: f32, b: f32, n: i32);

fn main() {}
