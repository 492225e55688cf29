// The C `Params` is `__align__(16)` (48 bytes); this twin forgot `align(16)`: 40 bytes, align 8.
#[derive(Clone, Copy, kgraph::bytemuck::Pod, kgraph::bytemuck::Zeroable, kgraph::DeviceStruct)]
#[bytemuck(crate = "kgraph::bytemuck")]
#[repr(C)]
pub struct Params {
    pub a: f32,
    pub flags: i32,
    pub b: f64,
    pub w: [f32; 4],
    pub tag: i16,
    pub _pad: [u8; 6],
}

#[kgraph::kernel("test_types.cu", unsafe(extents))]
pub fn ty_affine(p: Params, x: &[f32; n], n: i32, y: &mut [f32; n]);

fn main() {}
