// Texture/surface objects and structs holding pointers are integers on the Rust side that safe
// code can set to anything: such a kernel gets an `unsafe` launch only.
#[derive(Clone, Copy, kgraph::bytemuck::Pod, kgraph::bytemuck::Zeroable, kgraph::DeviceStruct)]
#[bytemuck(crate = "kgraph::bytemuck")]
#[repr(C)]
pub struct GatherArgs {
    pub source: u64,
    pub count: i32,
    pub _pad: [u8; 4],
}

#[kgraph::kernel("bounds_ui.cu", unsafe(extents))]
pub fn sample(out: &mut [f32; n], tex: u64, n: i32);

#[kgraph::kernel("bounds_ui.cu", unsafe(extents))]
pub fn store(surf: u64, n: i32);

#[kgraph::kernel("bounds_ui.cu", unsafe(extents))]
pub fn gather(out: &mut [f32; n], g: GatherArgs, n: i32);

fn main() {}
