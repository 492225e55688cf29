// H11: cudarc's safe API assumes event tracking, which kgraph's context runs without, so safe
// code must not reach a cudarc stream or context of kgraph's: with one it could make a second
// stream (`new_stream`, `fork`), memset a kgraph buffer there and drop the buffer while the
// memset runs. kgraph's `Context`, `Stream` and `DeviceBuffer` hand cudarc's objects out only
// through `unsafe fn`s.
use kgraph::Device;

fn main() {
    let dev = Device::new(0).unwrap();
    let mut buf = dev.alloc_zeros::<f32>(256).unwrap();
    let side = dev.context().cuda().new_stream().unwrap();
    let forked = dev.stream().cuda().fork().unwrap();
    side.memset_zeros(buf.as_cuda_mut()).unwrap();
    drop((buf, forked));
}
