// One mistake, one error: `b` is declared `i32` (the kernel takes `float b`). The code below
// uses every item of the handle; the stub in its place has them all, so the mismatch is the
// only error.
#[kgraph::kernel("ui.cu", unsafe(extents))]
pub fn axpb(x: &[f32; n], y: &mut [f32; n], a: f32, b: i32, n: i32);

fn main() -> kgraph::Result<()> {
    let device = kgraph::Device::new(0)?;
    let x = device.upload(&[1.0f32; 4])?;
    let mut y = device.alloc_zeros::<f32>(4)?;
    let k = Axpb::new(&device)?;
    k.launch(device.stream(), k.cfg_for(4), &x, &mut y, 2.0, 1, 4)?;
    k.launch_with(device.stream(), k.cfg_for(4), kgraph::LaunchOptions::default(), &x, &mut y, 2.0, 1, 4)?;
    let _consts = (Axpb::NAME, Axpb::SYMBOL, Axpb::FILE, Axpb::PDL_WAITS, Axpb::PARAM_SIZES, Axpb::MAX_THREADS);
    let _source = Axpb::SOURCE;
    let _loaded = (k.function(), k.module());
    Ok(())
}
