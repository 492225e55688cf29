// `dim3` has no kgraph Rust type: the message says what to pass instead.
#[kgraph::kernel("ui.cu")]
pub fn grid_dims(d: u32, out: &mut [f32]);

fn main() {}
