// `Mystery` is neither a type kgraph knows nor one the `.cu` defines.
#[kgraph::kernel("types_ui.cu")]
pub fn mystery(m: &[u8], n: i32);

fn main() {}
