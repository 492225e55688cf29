// #32.3: safe code cannot make a `kgraph::Bool` holding a byte other than 0 or 1: it is not
// `Pod` (no cast from bytes), and device memory of `Bool`s comes back as Rust `bool`s
// (`download_bools`), never as `Bool`s holding what a kernel stored.
use kgraph::{Bool, Device};

fn main() {
    let forged: Bool = kgraph::bytemuck::cast(0x7fu8);
    let dev = Device::new(0).unwrap();
    let flags = dev.upload(&[forged; 4]).unwrap();
    let back: Vec<Bool> = dev.download(&flags).unwrap();
    drop(back);
}
