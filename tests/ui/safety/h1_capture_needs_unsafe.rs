// H1: a `Graph` keeps the raw addresses of what its capture touched, but no borrow of it, so
// `Graph::capture` is `unsafe`: without the caller's promise, capturing a launch on `y`,
// dropping `y` and replaying would make the GPU write freed (or reused) memory.
use kgraph::{Device, Graph};

fn main() {
    let dev = Device::new(0).unwrap();
    let y = dev.alloc_zeros::<f32>(16).unwrap();
    let graph = Graph::capture(dev.stream(), |_s| {
        let _ = &y;
        Ok(())
    })
    .unwrap();
    drop(y);
    graph.replay().unwrap();
}
