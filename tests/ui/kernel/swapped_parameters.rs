// `d` and `num_tokens` have one type, so only their names tell them apart: declared in each
// other's place, the launch would feed the kernel the wrong sizes. One error naming the swap,
// and code using the handle adds none.
#[kgraph::kernel("names_ui.cu", unsafe(extents))]
pub fn rms_norm(out: &mut [f32; num_tokens * d], input: &[f32; num_tokens * d], d: i32, num_tokens: i32);

fn main() -> kgraph::Result<()> {
    let device = kgraph::Device::new(0)?;
    let input = device.upload(&[1.0f32; 8])?;
    let mut out = device.alloc_zeros::<f32>(8)?;
    let k = RmsNorm::new(&device)?;
    k.launch(device.stream(), k.cfg_for(2), &mut out, &input, 4, 2)?;
    Ok(())
}
