//! Must fail to compile: `unsafe(device_fn = ..)` naming what the `.cu` (as nvcc preprocessed it)
//! does not declare as a `__device__` function taking the block and the block count before the
//! kernel's parameters: `helper` takes one parameter; `axpb_block` does not exist.

#[kgraph::kernel("ui.cu", unsafe(extents, device_fn = "helper"))]
pub fn axpb(x: &[f32; n], y: &mut [f32; n], a: f32, b: f32, n: i32);

#[kgraph::kernel("ui.cu", name = "axpb", unsafe(extents, device_fn = "axpb_block"))]
pub fn axpb_again(x: &[f32; n], y: &mut [f32; n], a: f32, b: f32, n: i32);

fn main() {}
