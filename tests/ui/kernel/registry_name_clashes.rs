// Items of a `#[kernels]` module named like what it generates: the registry struct `Kernels`
// and a handle's hidden module. Each is one error on the user's item (no E0428/E0255 about
// generated names), and the other declaration's handle still works.
#[kgraph::kernels]
mod k {
    pub struct Kernels;

    #[allow(non_snake_case)]
    mod __kgraph_kernel_Count {}

    #[kernel("ui.cu", unsafe(extents))]
    pub fn axpb(x: &[f32; n], y: &mut [f32; n], a: f32, b: f32, n: i32);

    #[kernel("ui.cu", unsafe(extents))]
    pub fn count(keys: &[i32; n], hist: &mut [u32; n], n: i64);
}

fn main() -> kgraph::Result<()> {
    let device = kgraph::Device::new(0)?;
    let x = device.upload(&[1.0f32; 4])?;
    let mut y = device.alloc_zeros::<f32>(4)?;
    let axpb = k::Axpb::new(&device)?;
    axpb.launch(device.stream(), axpb.cfg_for(4), &x, &mut y, 2.0, 1.0, 4)?;
    Ok(())
}
