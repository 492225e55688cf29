// H8: a module cache that compiles the `.cu` files on disk is `unsafe`: its handles'
// `PDL_WAITS` (which lets `launch_with` grant PDL) describes the build's code, not the file's.
use kgraph::{expert::ModuleCache, Device};

fn main() {
    let dev = Device::new(0).unwrap();
    let cache = ModuleCache::from_disk(dev.context());
    drop(cache);
}
