// `Pinned<T>` is read-only; `y` is written by the kernel.
#[kgraph::kernel("ui.cu")]
pub fn axpb(x: &[f32], y: Pinned<f32>, a: f32, b: f32, n: i32);

fn main() {}
