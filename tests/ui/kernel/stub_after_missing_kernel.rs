// No such kernel in ui.cu: one error, and code using the handle adds none.
#[kgraph::kernel("ui.cu", unsafe(extents))]
pub fn axpby(x: &[f32; n], y: &mut [f32; n], a: f32, b: f32, n: i32);

fn main() -> kgraph::Result<()> {
    let device = kgraph::Device::new(0)?;
    let x = device.upload(&[1.0f32; 4])?;
    let mut y = device.alloc_zeros::<f32>(4)?;
    let k = Axpby::new(&device)?;
    k.launch(device.stream(), k.cfg_for(4), &x, &mut y, 2.0, 1.0, 4)?;
    let _source = (Axpby::SOURCE, Axpby::FILE, Axpby::SYMBOL);
    Ok(())
}
