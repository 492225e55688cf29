// An extent is in terms of the integer scalar parameters: not a pointer (`x`), not a float (`a`).
#[kgraph::kernel("ui.cu", unsafe(extents))]
pub fn axpb(x: &[f32; n], y: &mut [f32; x * 2], a: f32, b: f32, n: i32);

#[kgraph::kernel("ui.cu", name = "axpb", unsafe(extents))]
pub fn axpb_by_float(x: &[f32; n], y: &mut [f32; n + a], a: f32, b: f32, n: i32);

fn main() {}
