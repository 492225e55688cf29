// `bool` has no kgraph element type.
#[kgraph::kernel("ui.cu")]
pub fn flags(enabled: u8, out: &mut [f32]);

fn main() {}
