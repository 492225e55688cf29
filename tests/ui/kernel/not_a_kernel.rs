// `helper` is a __device__ function in ui.cu: it cannot be launched.
#[kgraph::kernel("ui.cu")]
pub fn helper(v: f32);

fn main() {}
