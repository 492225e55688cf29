// #32.1: `KernelSource::new` is `unsafe`: its caller promises the image is the code built from
// the file (what a handle's checked declaration was checked against), and a complete image.
use kgraph::expert::KernelSource;

static OTHER_IMAGE: [u8; 4] = [0x7f, b'E', b'L', b'F'];

fn main() {
    let _forged = KernelSource::new("kernels/ops.cu", &OTHER_IMAGE, "", "");
}
