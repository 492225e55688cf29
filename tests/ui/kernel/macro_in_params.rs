// macro_params.cu declares `scale(REAL* x, REAL a, int n)` with `#define REAL float`. kgraph
// reads the preprocessed source nvcc compiled, so `REAL` is `float` and a `double` buffer is a
// precise mismatch (it used to be "cannot verify").
#[kgraph::kernel("macro_params.cu")]
pub fn scale(x: &mut [f64], a: f32, n: i32);

fn main() {}
