//! kgraph's benchmark: the same workloads as the CUDA C++ anchors (`shared/anchors`), timed in one
//! program on one GPU, side by side with hand-written cudarc. Prints one `name value unit` line
//! per figure and writes them all as JSON (`--json PATH`, default `bench.json`).
//!
//!     cargo run --release --example bench -- [--json out.json] [--quick]
//!
//! Latencies are medians of host-timed (launch + stream sync) iterations after a warm-up.

mod adamw;
mod chain;
mod fanout;
mod report;
mod roundtrip;
mod train;

/// The benchmark kernels (`examples/bench/kernels/bench.cu`), the same device code as the C++ anchors.
#[kgraph::kernels]
pub mod k {
    #[kernel("bench.cu", unsafe(extents))]
    pub fn bench_axpb(x: &[f32; n], y: &mut [f32; n], a: f32, b: f32, n: i32);
    #[kernel("bench.cu", unsafe(extents))]
    pub fn bench_axpb_pdl(x: &[f32; n], y: &mut [f32; n], a: f32, b: f32, n: i32);
    #[kernel("bench.cu", unsafe(extents))]
    pub fn bench_work(x: &[f32; n], y: &mut [f32; n], n: i32, iters: i32);
    #[kernel("bench.cu", unsafe(extents))]
    #[allow(clippy::too_many_arguments)]
    pub fn bench_join8(
        y0: &[f32; n],
        y1: &[f32; n],
        y2: &[f32; n],
        y3: &[f32; n],
        y4: &[f32; n],
        y5: &[f32; n],
        y6: &[f32; n],
        y7: &[f32; n],
        out: &mut [f32; n],
        n: i32,
    );
    #[kernel("bench.cu", unsafe(extents))]
    pub fn bench_work_pdl(x: &[f32; n], y: &mut [f32; n], n: i32, iters: i32);
    #[kernel("bench.cu", unsafe(extents))]
    #[allow(clippy::too_many_arguments)]
    pub fn bench_join8_pdl(
        y0: &[f32; n],
        y1: &[f32; n],
        y2: &[f32; n],
        y3: &[f32; n],
        y4: &[f32; n],
        y5: &[f32; n],
        y6: &[f32; n],
        y7: &[f32; n],
        out: &mut [f32; n],
        n: i32,
    );
    #[kernel("bench.cu", unsafe(extents))]
    pub fn bench_fill(x: &mut [f32; n], n: i64, base: f32);
}

use std::process::ExitCode;

use report::Report;

fn main() -> ExitCode {
    let mut json = String::from("bench.json");
    let mut quick = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--json" => json = args.next().unwrap_or(json),
            "--quick" => quick = true,
            other => {
                eprintln!("bench: unknown argument `{other}` (use --json PATH, --quick)");
                return ExitCode::FAILURE;
            }
        }
    }
    match run(quick) {
        Ok(report) => match report.write_json(&json) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("bench: cannot write {json}: {e}");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(quick: bool) -> anyhow::Result<Report> {
    let dev = kgraph::Device::new(0)?;
    let iters = if quick { 300 } else { 3000 };
    let mut report = Report::new(&dev.name()?);
    let kernels = k::Kernels::load(&dev)?;
    // Order matters: everything before `chain::run` runs in a process with one stream; the
    // tracked-context comparison there, and `capture_streamed` last, create further streams.
    chain::floor(&dev, &kernels, iters, &mut report)?;
    fanout::run(&dev, iters, &mut report)?;
    roundtrip::run(&dev, iters.max(3000), &mut report)?;
    roundtrip::copy_nodes(&dev, iters, &mut report)?;
    train::run(&dev, iters, &mut report)?;
    adamw::run(&dev, &kernels, &mut report)?;
    chain::run(&dev, &kernels, iters, &mut report)?;
    roundtrip::streamed(&dev, iters.max(3000), &mut report)?;
    Ok(report)
}
