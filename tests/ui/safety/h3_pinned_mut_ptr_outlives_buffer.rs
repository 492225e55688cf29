// H3: a `PinnedMutPtr` mutably borrows its `MappedBuffer`, so the buffer cannot be dropped
// (its host memory freed) while the pointer can still be handed to a launch.
use kgraph::{Device, MappedBuffer, PinnedMutPtr};

fn launch(_out: PinnedMutPtr<'_, f32>) {}

fn main() {
    let dev = Device::new(0).unwrap();
    let mut buf = MappedBuffer::<f32>::new(&dev, 16).unwrap();
    let out = buf.device_ptr_mut();
    drop(buf);
    launch(out);
}
