// #32.3: a C `const bool*` is declared `&[bool; n]` and launched with a buffer of `kgraph::Bool`,
// which safe code fills with 0 and 1 only: a buffer of bytes (0x7f where the kernel reads a
// `bool`, which nvcc does not mask) is refused at compile time.
#[kgraph::kernels]
mod k {
    #[kernel("types_ui.cu", unsafe(extents))]
    pub fn flags_ptr(flags: &[bool; n], n: i32);
}

fn main() {
    let dev = kgraph::Device::new(0).unwrap();
    let k = k::Kernels::load(&dev).unwrap();
    let bytes = dev.upload(&[0x7fu8; 4]).unwrap();
    k.flags_ptr.launch(dev.stream(), k.flags_ptr.cfg_for(4), &bytes, 4).unwrap();
    let flags = dev.upload(&[kgraph::Bool::TRUE; 4]).unwrap();
    k.flags_ptr.launch(dev.stream(), k.flags_ptr.cfg_for(4), &flags, 4).unwrap();
}
