// A declaration without `unsafe(extents)` has an `unsafe` launch; so has its stub when the
// declaration has errors (`a` is `float` in ui.cu), so the `unsafe` block below is neither
// missing nor needless: the mismatch is the only error.
#[kgraph::kernel("ui.cu")]
pub fn axpb(x: &[f32], y: &mut [f32], a: f64, b: f32, n: i32);

fn main() -> kgraph::Result<()> {
    let device = kgraph::Device::new(0)?;
    let x = device.upload(&[1.0f32; 4])?;
    let mut y = device.alloc_zeros::<f32>(4)?;
    let k = Axpb::new(&device)?;
    // SAFETY: a compile-fail case; never run.
    unsafe { k.launch(device.stream(), k.cfg_for(4), &x, &mut y, 2.0, 1.0, 4) }?;
    Ok(())
}
