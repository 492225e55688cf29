// A divisor that folds to 0 makes every launch fail: one error at the divisor, at compile time,
// in an extent and in `shared`; code using the handle adds none.
#[kgraph::kernel("ui.cu", unsafe(extents))]
pub fn axpb(x: &[f32; n / (2 - 2)], y: &mut [f32; n], a: f32, b: f32, n: i32);

#[kgraph::kernel("ui.cu", unsafe(extents), shared = block.x % 0)]
pub fn count(keys: &[i32; n], hist: &mut [u32; n], n: i64);

fn main() -> kgraph::Result<()> {
    let device = kgraph::Device::new(0)?;
    let x = device.upload(&[1.0f32; 4])?;
    let mut y = device.alloc_zeros::<f32>(4)?;
    let k = Axpb::new(&device)?;
    k.launch(device.stream(), k.cfg_for(4), &x, &mut y, 2.0, 1.0, 4)?;
    let _source = Count::SOURCE;
    Ok(())
}
