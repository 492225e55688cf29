// The H2 program: a declaration without extents, launched from safe code with one-element
// buffers and n = 1 << 20. Without extents `launch` is an `unsafe fn`, so this does not compile.
// (`saxpy.cu` is the crate's own `kernels/saxpy.cu`, whose cubin the build script embeds.)
use kgraph::{DeviceBuffer, LaunchConfig, Stream};

#[kgraph::kernel("saxpy.cu")]
pub fn saxpy(a: f32, x: &[f32], y: &mut [f32], n: i32);

pub fn h2(k: &Saxpy, s: &Stream, x1: &DeviceBuffer<f32>, y1: &mut DeviceBuffer<f32>) -> kgraph::Result<()> {
    k.launch(s, LaunchConfig::for_num_elems(1 << 20), 2.0, x1, y1, 1 << 20)
}

fn main() {}
