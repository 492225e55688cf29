// macro_params.cu declares `scale(REAL* x, REAL a, int n)` with `#define REAL float`.
#[kgraph::kernel("macro_params.cu")]
pub fn scale(x: &mut [f32], a: f32, n: i32);

fn main() {}
