// Every parameter type problem of one declaration is reported together.
#[kgraph::kernel("ui.cu")]
pub fn axpb(x: Vec<f32>, y: &mut [bool], a: &f32, b: f32, n: usize);

fn main() {}
