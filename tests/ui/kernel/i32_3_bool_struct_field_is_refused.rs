// #32.3: a C struct with a `bool` field has no sound Rust twin (a `Pod` twin's byte could be
// anything where the kernel reads a `bool`): refused with the reason and the fix.
#[derive(Clone, Copy, kgraph::bytemuck::Pod, kgraph::bytemuck::Zeroable, kgraph::DeviceStruct)]
#[bytemuck(crate = "kgraph::bytemuck")]
#[repr(C)]
pub struct FlaggedTwin {
    pub x: f32,
    pub on: u8,
    pub _pad: [u8; 3],
}

#[kgraph::kernels]
mod k {
    use super::FlaggedTwin;
    #[kernel("types_ui.cu", unsafe(extents))]
    pub fn flagged(f: FlaggedTwin, out: &mut [f32; 1]);
}

fn main() {}
