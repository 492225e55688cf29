// `hist` is `unsigned int*`.
#[kgraph::kernel("ui.cu")]
pub fn count(keys: &[i32], hist: &mut [i32], n: i64);

fn main() {}
