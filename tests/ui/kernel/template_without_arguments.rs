// `fill` is a template kernel with two instantiations in templates.cu: named without its
// template arguments, the one error names the template and the instantiations to choose from
// (not "expected `extern \"C\"`"), and code using the handle adds none.
#[kgraph::kernel("templates.cu", unsafe(extents))]
pub fn fill(x: &mut [f32; n], value: f32, n: i32);

fn main() -> kgraph::Result<()> {
    let device = kgraph::Device::new(0)?;
    let mut x = device.alloc_zeros::<f32>(4)?;
    let k = Fill::new(&device)?;
    k.launch(device.stream(), k.cfg_for(4), &mut x, 1.0, 4)?;
    Ok(())
}
