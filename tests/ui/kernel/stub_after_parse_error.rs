// The attribute does not parse (the file is not a string literal): one error, and the stub
// (with a safe launch, as nothing says otherwise) keeps the code below from adding any.
#[kgraph::kernel(ui.cu)]
pub fn axpb(x: &[f32; n], y: &mut [f32; n], a: f32, b: f32, n: i32);

fn main() -> kgraph::Result<()> {
    let device = kgraph::Device::new(0)?;
    let x = device.upload(&[1.0f32; 4])?;
    let mut y = device.alloc_zeros::<f32>(4)?;
    let k = Axpb::new(&device)?;
    k.launch(device.stream(), k.cfg_for(4), &x, &mut y, 2.0, 1.0, 4)?;
    let _source = (Axpb::SOURCE, Axpb::NAME, Axpb::MAX_THREADS);
    Ok(())
}
