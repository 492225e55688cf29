// A handle's safe launch trusts its fields (the function it pushes the declared arguments for,
// its dynamic shared memory limit), so they are private to the generated code, also in the
// module the declaration is in: pointing a checked `Saxpy` at another kernel's function would
// launch that kernel with `saxpy`'s argument list from safe code.
#[kgraph::kernel("saxpy.cu", unsafe(extents))]
pub fn saxpy(a: f32, x: &[f32; n], y: &mut [f32; n], n: i32);

pub fn repoint(h: &mut Saxpy, other: &kgraph::cudarc::driver::CudaFunction) {
    h.function = other.clone();
}

fn main() {}
