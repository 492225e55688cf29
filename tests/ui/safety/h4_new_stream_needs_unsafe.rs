// H4: kgraph's context has event tracking off, so nothing orders a slice's use on a second
// stream against its free on its own: `Device::new_stream` is `unsafe` (the caller orders
// every cross-stream use with events).
use kgraph::Device;

fn main() {
    let dev = Device::new(0).unwrap();
    let side = dev.new_stream().unwrap();
    drop(side);
}
