// One bad declaration in a `#[kernels]` module: its error is the only one. The good
// declaration keeps its real handle, the bad one has a stub with every item of a handle, and
// the registry `Kernels` has both fields.
#[kgraph::kernels]
mod k {
    #[kernel("ui.cu", unsafe(extents))]
    pub fn axpb(x: &[f32; n], y: &mut [f32; n], a: f32, b: f32, n: i32);

    // `n` is `long long` in ui.cu.
    #[kernel("ui.cu", unsafe(extents))]
    pub fn count(keys: &[i32; n], hist: &mut [u32; n], n: i32);
}

fn main() -> kgraph::Result<()> {
    let device = kgraph::Device::new(0)?;
    let kernels = k::Kernels::load(&device)?;
    let x = device.upload(&[1.0f32; 4])?;
    let mut y = device.alloc_zeros::<f32>(4)?;
    kernels.axpb.launch(device.stream(), kernels.axpb.cfg_for(4), &x, &mut y, 2.0, 1.0, 4)?;
    let keys = device.upload(&[0i32; 4])?;
    let mut hist = device.alloc_zeros::<u32>(4)?;
    kernels.count.launch(device.stream(), kernels.count.cfg_for(4), &keys, &mut hist, 4)?;
    let _sources = (k::Axpb::SOURCE, k::Count::SOURCE);
    let _handles = (k::Axpb::new(&device)?, k::Count::new(&device)?);
    Ok(())
}
