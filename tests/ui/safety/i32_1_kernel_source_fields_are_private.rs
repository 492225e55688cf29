// #32.1: safe code cannot pair a declared kernel's file with another kernel's image: the
// fields of `KernelSource` are private (the module cache would otherwise hand a handle other code).
use kgraph::expert::KernelSource;

static OTHER_IMAGE: [u8; 4] = [0x7f, b'E', b'L', b'F'];

fn main() {
    let _forged = KernelSource { file: "kernels/ops.cu", image: &OTHER_IMAGE, source: "", include_dir: "" };
}
