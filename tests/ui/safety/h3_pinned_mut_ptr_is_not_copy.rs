// H3: a `PinnedMutPtr` is not `Copy`: one pointer cannot be kept after it was handed to a
// launch (reborrow it for each launch instead).
use kgraph::{Device, MappedBuffer, PinnedMutPtr};

fn launch(_out: PinnedMutPtr<'_, f32>) {}

fn main() {
    let dev = Device::new(0).unwrap();
    let mut buf = MappedBuffer::<f32>::new(&dev, 16).unwrap();
    let out = buf.device_ptr_mut();
    launch(out);
    launch(out);
}
