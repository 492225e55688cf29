//! kgraph's benchmark: the same workloads as the CUDA C++ anchors (`shared/anchors`), timed in one
//! program on one GPU, side by side with hand-written cudarc. Prints one `name value unit` line
//! per figure and writes them all as JSON (`--json PATH`, default `bench.json`).
//!
//!     cargo run --release --example bench -- [--json out.json] [--quick] [--only SECTION,..]
//!         [--resident-steps N] [--soak N] [--soak-window N]
//!
//! Latencies are medians of host-timed (launch + stream sync) iterations after a warm-up.

mod adamw;
mod chain;
mod fanout;
mod host;
mod memplan;
mod ppo;
mod report;
mod resident;
mod resident_grid;
mod roundtrip;
mod train;

/// The model's kernel module at the path its specs name (`crate::model::kernels`), so `memplan`
/// can build its own structs from the model's specs (`ppo` re-exports the PPO one).
mod model {
    pub use kgraph_model::model::kernels;
}

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

/// The bench's sections, in the order they run (`--only` picks some).
const SECTIONS: [&str; 13] = [
    "host",
    "floor",
    "fanout",
    "roundtrip",
    "copy_nodes",
    "train",
    "ppo",
    "memplan",
    "adamw",
    "chain",
    "resident",
    "resident_grid",
    "streamed",
];

/// The `resident` section's step counts.
#[derive(Clone, Copy)]
struct ResidentSteps {
    /// Timed round trips per configuration (`--resident-steps`).
    steps: usize,
    /// Soak steps (`--soak`; 0: no soak) and the window its figures are taken over.
    soak: usize,
    window: usize,
}

/// A positive count from the command line.
fn count(flag: &str, value: Option<String>) -> Result<usize, String> {
    let v = value.ok_or(format!("{flag} needs a count"))?;
    v.parse().ok().filter(|&n: &usize| n > 0).ok_or(format!("{flag}: `{v}` is not a positive count"))
}

fn main() -> ExitCode {
    let mut json = String::from("bench.json");
    let mut quick = false;
    let mut only: Option<Vec<String>> = None;
    let mut resident = ResidentSteps { steps: 1_000_000, soak: 0, window: 1_000_000 };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--json" => json = args.next().unwrap_or(json),
            "--quick" => quick = true,
            "--resident-steps" | "--soak" | "--soak-window" => {
                let n = match count(&a, args.next()) {
                    Ok(n) => n,
                    Err(msg) => {
                        eprintln!("bench: {msg}");
                        return ExitCode::FAILURE;
                    }
                };
                match a.as_str() {
                    "--resident-steps" => resident.steps = n,
                    "--soak" => resident.soak = n,
                    _ => resident.window = n,
                }
            }
            "--only" => {
                let Some(value) = args.next() else {
                    eprintln!("bench: --only needs a section list (sections: {})", SECTIONS.join(", "));
                    return ExitCode::FAILURE;
                };
                let list: Vec<String> = value.split(',').filter(|s| !s.is_empty()).map(str::to_string).collect();
                if let Some(bad) = list.iter().find(|s| !SECTIONS.contains(&s.as_str())) {
                    eprintln!("bench: unknown section `{bad}` in --only (sections: {})", SECTIONS.join(", "));
                    return ExitCode::FAILURE;
                }
                only.get_or_insert_with(Vec::new).extend(list);
            }
            other => {
                eprintln!("bench: unknown argument `{other}` (use --json PATH, --quick, --only SECTION[,SECTION], --resident-steps N, --soak N, --soak-window N)");
                return ExitCode::FAILURE;
            }
        }
    }
    let wanted = |section: &str| only.as_ref().map_or(true, |l| l.iter().any(|s| s == section));
    match run(quick, &resident, &wanted) {
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

/// Runs the sections `wanted` accepts, in the order of [`SECTIONS`].
fn run(quick: bool, resident_steps: &ResidentSteps, wanted: &dyn Fn(&str) -> bool) -> anyhow::Result<Report> {
    let dev = kgraph::Device::new(0)?;
    let iters = if quick { 300 } else { 3000 };
    let mut report = Report::new(&dev.name()?);
    let kernels = k::Kernels::load(&dev)?;
    // Order matters: everything before `chain` runs in a process with one stream; the
    // tracked-context comparison there, and `streamed` last, create further streams.
    for section in SECTIONS.into_iter().filter(|s| wanted(s)) {
        match section {
            "host" => host::jitter(&mut report),
            "floor" => chain::floor(&dev, &kernels, iters, &mut report)?,
            "fanout" => fanout::run(&dev, iters, &mut report)?,
            "roundtrip" => roundtrip::run(&dev, iters.max(3000), &mut report)?,
            "copy_nodes" => roundtrip::copy_nodes(&dev, iters, &mut report)?,
            "train" => train::run(&dev, iters, &mut report)?,
            "ppo" => ppo::run(&dev, iters, &mut report)?,
            "memplan" => memplan::run(&dev, iters, &mut report)?,
            "adamw" => adamw::run(&dev, &kernels, &mut report)?,
            "chain" => chain::run(&dev, &kernels, iters, &mut report)?,
            "resident" => {
                let ResidentSteps { steps, soak, window } = *resident_steps;
                resident::run(&dev, if quick { steps.min(100_000) } else { steps }, soak, window, &mut report)?
            }
            "resident_grid" => resident_grid::run(&dev, if quick { 20_000 } else { 100_000 }, &mut report)?,
            "streamed" => roundtrip::streamed(&dev, iters.max(3000), &mut report)?,
            other => unreachable!("section `{other}` is in SECTIONS but has no arm"),
        }
    }
    Ok(report)
}
