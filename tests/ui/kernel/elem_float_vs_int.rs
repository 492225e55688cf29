// `keys` is `const int*`.
#[kgraph::kernel("ui.cu")]
pub fn count(keys: &[f32], hist: &mut [u32], n: i64);

fn main() {}
