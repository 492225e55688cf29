// `PinnedMut<T>` is written by the kernel; `x` is `const float*`, which the kernel only reads.
#[kgraph::kernel("ui.cu")]
pub fn axpb(x: PinnedMut<f32>, y: &mut [f32], a: f32, b: f32, n: i32);

fn main() {}
