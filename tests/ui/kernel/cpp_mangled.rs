// `mangled.cu`'s kernel has C++ linkage: kgraph binds it by its mangled symbol from the record
// of what nvcc compiled (`_Z7mangledPfi`), and checks it like any other: `int n` is signed.
#[kgraph::kernel("mangled.cu")]
pub fn mangled(out: &mut [f32], n: u32);

fn main() {}
