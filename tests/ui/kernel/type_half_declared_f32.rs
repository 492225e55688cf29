// C `__half` is `kgraph::f16`, not `f32`: each parameter's message says so.
#[kgraph::kernel("types_ui.cu")]
pub fn half_scale(x: &[f32], a: f32, n: i32, y: &mut [kgraph::f16]);

fn main() {}
