// `tests/kernels/test_types.cu`'s `Params` is { float a; int flags; double b; float w[4]; short
// tag; } (48 bytes, align 16); this twin swaps `a` and `flags`: same size, wrong offsets.
#[derive(Clone, Copy, kgraph::bytemuck::Pod, kgraph::bytemuck::Zeroable, kgraph::DeviceStruct)]
#[bytemuck(crate = "kgraph::bytemuck")]
#[repr(C, align(16))]
pub struct Params {
    pub flags: i32,
    pub a: f32,
    pub b: f64,
    pub w: [f32; 4],
    pub tag: i16,
    pub _pad: [u8; 14],
}

#[kgraph::kernel("test_types.cu", unsafe(extents))]
pub fn ty_affine(p: Params, x: &[f32; n], n: i32, y: &mut [f32; n]);

fn main() {}
