// H5: no host view of a `MappedBuffer` exists while a `PinnedMutPtr` to it does (and the view
// taken after the launch waits for the kernel at run time).
use kgraph::{Device, MappedBuffer, PinnedMutPtr};

fn launch(_out: PinnedMutPtr<'_, f32>) {}

fn main() {
    let dev = Device::new(0).unwrap();
    let mut buf = MappedBuffer::<f32>::new(&dev, 16).unwrap();
    let out = buf.device_ptr_mut();
    let view = buf.as_slice().unwrap();
    launch(out);
    println!("{}", view[0]);
}
