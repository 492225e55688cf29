// H5: the host view that does not wait for queued kernels is `unsafe` (the caller promises no
// device work writes the buffer while the slice lives).
use kgraph::{Device, MappedBuffer};

fn main() {
    let dev = Device::new(0).unwrap();
    let buf = MappedBuffer::<f32>::new(&dev, 16).unwrap();
    let view = buf.as_slice_unsynchronized();
    println!("{}", view[0]);
}
