// `n` is `long long` (64 bits) and `a` is `float` (32 bits).
#[kgraph::kernel("ui.cu")]
pub fn count(keys: &[i32], hist: &mut [u32], n: i32);

#[kgraph::kernel("ui.cu")]
pub fn axpb(x: &[f32], y: &mut [f32], a: f64, b: f32, n: i32);

fn main() {}
