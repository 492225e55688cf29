//! The smallest complete kgraph story: one `.cu` file and one line of Rust.
//!
//!     cargo run --release --example add_kernel
//!
//! 1. The kernel: `kernels/saxpy.cu` (any `extern "C" __global__` function). `build.rs`
//!    compiles every `kernels/*.cu` into the binary (or NVRTC compiles it at load time).
//! 2. The one line: `#[kgraph::kernel("saxpy.cu", unsafe(extents))]` on a body-less `fn` with
//!    the kernel's parameters and how many elements each pointer covers (`x: &[f32; n]`). At
//!    compile time it is checked against the `.cu` source (a wrong type, order or constness is a
//!    compile error here) and becomes the typed handle `Saxpy`. `unsafe(extents)` is the one
//!    promise you make: the kernel touches `x` and `y` only in `[0, n)`. In exchange `launch` is
//!    safe: it refuses buffers shorter than `n`, or an `x` overlapping `y`, before launching.
//! 3. Upload, launch, download.

use std::process::ExitCode;

/// `y = a * x + y` over `n` elements (`kernels/saxpy.cu`).
#[kgraph::kernel("saxpy.cu", unsafe(extents))]
pub fn saxpy(a: f32, x: &[f32; n], y: &mut [f32; n], n: i32);

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("add_kernel: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> kgraph::Result<()> {
    let dev = kgraph::Device::new(0)?;
    let kernel = Saxpy::new(&dev)?;

    let n = 8usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let x_dev = dev.upload(&x)?;
    let mut y_dev = dev.upload(&vec![1.0f32; n])?;

    // `cfg_for`: one thread per element, in blocks within the kernel's `__launch_bounds__`.
    kernel.launch(dev.stream(), kernel.cfg_for(n as u32), 2.0, &x_dev, &mut y_dev, n as i32)?;

    let y = dev.download(&y_dev)?; // waits for the launch
    println!("x         = {x:?}");
    println!("2 * x + 1 = {y:?}");
    Ok(())
}
