// #32.5: no safe `&[T]` over mapped memory. Through `&self` nothing can keep device writes away
// while the slice lives (another `&self` lends a `PinnedPtr` to a kernel that writes through it,
// or a captured graph replays), and a device write under a live shared reference is undefined
// behaviour; the host reads mapped memory by copying (`to_vec`, `read_into`) instead.
use kgraph::{Device, MappedBuffer};

fn main() {
    let dev = Device::new(0).unwrap();
    let buf = MappedBuffer::<f32>::new(&dev, 16).unwrap();
    let view: &[f32] = buf.as_slice().unwrap();
    let _ptr = buf.device_ptr();
    println!("{}", view[0]);
}
