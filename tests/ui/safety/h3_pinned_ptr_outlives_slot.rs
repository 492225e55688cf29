// H3: a `PinnedPtr` borrows the slot (or buffer) it points into: it cannot outlive it.
use kgraph::{Device, PinnedPtr, PinnedSlot};

fn launch(_x: PinnedPtr<'_, f32>) {}

fn main() {
    let dev = Device::new(0).unwrap();
    let x = {
        let slot = PinnedSlot::new(&dev, 1.0f32).unwrap();
        slot.device_ptr()
    };
    launch(x);
}
