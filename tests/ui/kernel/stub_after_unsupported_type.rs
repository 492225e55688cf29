// `usize` is no kernel parameter type: one error, and the stub (which takes any value where the
// type did not parse) keeps the code below from adding any.
#[kgraph::kernel("ui.cu", unsafe(extents))]
pub fn axpb(x: &[f32; 4], y: &mut [f32; 4], a: f32, b: f32, n: usize);

fn main() -> kgraph::Result<()> {
    let device = kgraph::Device::new(0)?;
    let x = device.upload(&[1.0f32; 4])?;
    let mut y = device.alloc_zeros::<f32>(4)?;
    let k = Axpb::new(&device)?;
    k.launch(device.stream(), k.cfg_for(4), &x, &mut y, 2.0, 1.0, 4usize)?;
    Ok(())
}
