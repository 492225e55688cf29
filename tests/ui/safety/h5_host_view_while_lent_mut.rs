// H5: no host read of a `MappedBuffer` happens while a `PinnedMutPtr` to it exists (and the
// read made after the launch waits for the kernel at run time).
use kgraph::{Device, MappedBuffer, PinnedMutPtr};

fn launch(_out: PinnedMutPtr<'_, f32>) {}

fn main() {
    let dev = Device::new(0).unwrap();
    let mut buf = MappedBuffer::<f32>::new(&dev, 16).unwrap();
    let out = buf.device_ptr_mut();
    let view = buf.to_vec().unwrap();
    launch(out);
    println!("{}", view[0]);
}
