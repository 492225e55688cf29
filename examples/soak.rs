//! Soak run of Graph A: the captured latency graph replayed many times with a fresh snapshot
//! each step, reporting whether memory stays flat and outputs stay finite.
//!
//!     cargo run --release --example soak [-- --steps N]      (default 1 000 000)
//!
//! Each step writes a snapshot and its elapsed time into pinned memory, replays the graph and
//! reads both outputs (probs and y, which the graph writes straight into mapped pinned memory). At step 1 000 (after warm-up) and at the end it reads
//! the device memory in use (`cuMemGetInfo` through `Device::mem_info`: total − free, so other
//! processes on the GPU count too) and the process's resident set (`VmRSS` in
//! `/proc/self/status`, which is in kB, so no page size is assumed), and prints their growth in
//! MiB, whether every output stayed finite, and the replay rate. A reported figure, not a test:
//! it exits non-zero only on an error or a non-finite output.

use std::process::ExitCode;
use std::time::Instant;

use kgraph_model::graphs::synthetic::BookStream;
use kgraph_model::graphs::{ModelWeights, Perception};
use kgraph_model::model::SNAP_LEN;

/// Replays by default.
const DEFAULT_STEPS: u64 = 1_000_000;
/// The step after which the baseline is taken (allocations of the first steps are warm-up).
const BASELINE_STEP: u64 = 1_000;
const MIB: f64 = 1024.0 * 1024.0;

fn main() -> ExitCode {
    let steps = match parse_steps() {
        Ok(steps) => steps,
        Err(msg) => {
            eprintln!("soak: {msg}");
            return ExitCode::FAILURE;
        }
    };
    match run(steps) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("soak: {e}");
            ExitCode::FAILURE
        }
    }
}

fn parse_steps() -> Result<u64, String> {
    let mut steps = DEFAULT_STEPS;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--steps" => {
                let v = args.next().ok_or("--steps needs a value")?;
                steps = v
                    .parse()
                    .ok()
                    .filter(|&n| n >= BASELINE_STEP)
                    .ok_or(format!("--steps: `{v}` is not a count of at least {BASELINE_STEP}"))?;
            }
            other => return Err(format!("unknown argument `{other}` (use --steps N)")),
        }
    }
    Ok(steps)
}

/// Memory in use at one point of the run.
#[derive(Debug, Clone, Copy)]
struct Usage {
    device_bytes: usize,
    rss_bytes: Option<u64>,
}

fn usage(dev: &kgraph::Device) -> kgraph::Result<Usage> {
    dev.synchronize()?;
    let (free, total) = dev.mem_info()?;
    Ok(Usage { device_bytes: total.saturating_sub(free), rss_bytes: resident_set_bytes() })
}

/// `VmRSS` of `/proc/self/status` in bytes (None where there is no procfs).
fn resident_set_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn fmt_rss(rss: Option<u64>) -> String {
    rss.map_or_else(|| "n/a".to_string(), |b| format!("{:.1} MiB", b as f64 / MIB))
}

fn run(steps: u64) -> kgraph::Result<bool> {
    let dev = kgraph::Device::new(0)?;
    let mut g = Perception::new(&dev)?;
    g.load_weights(&ModelWeights::init(7))?;
    g.capture()?;
    println!("soak: {} | Graph A, {steps} replays, a fresh snapshot each", dev.name()?);

    let mut stream = BookStream::new(99);
    let mut snap = [0.0f32; SNAP_LEN];
    let mut probs = [0.0f32; Perception::PROBS_LEN];
    let mut y = [0.0f32; Perception::Y_LEN];
    let mut first_bad: Option<u64> = None;
    let mut baseline: Option<(Usage, Instant)> = None;
    for step in 1..=steps {
        let tick = stream.next_into(&mut snap);
        g.write_snap(&snap)?;
        g.write_dt(&[tick.dt])?;
        g.replay()?;
        g.read_probs_into(&mut probs)?;
        g.read_y_into(&mut y)?;
        if first_bad.is_none() && !(probs.iter().chain(&y).all(|v| v.is_finite())) {
            first_bad = Some(step);
        }
        if step == BASELINE_STEP {
            let u = usage(&dev)?;
            println!(
                "step {step:>9}: device memory used {:.1} MiB, host RSS {}",
                u.device_bytes as f64 / MIB,
                fmt_rss(u.rss_bytes)
            );
            baseline = Some((u, Instant::now()));
        } else if step % (steps / 10).max(1) == 0 {
            println!("step {step:>9}");
        }
    }
    let end = usage(&dev)?;
    let (base, since) = baseline.expect("steps >= BASELINE_STEP, checked when parsing");
    let seconds = since.elapsed().as_secs_f64();
    let timed = steps - BASELINE_STEP;
    println!(
        "step {steps:>9}: device memory used {:.1} MiB, host RSS {}",
        end.device_bytes as f64 / MIB,
        fmt_rss(end.rss_bytes)
    );
    let device_growth = (end.device_bytes as f64 - base.device_bytes as f64) / MIB;
    let rss_growth = match (base.rss_bytes, end.rss_bytes) {
        (Some(a), Some(b)) => format!("{:+.2} MiB", (b as f64 - a as f64) / MIB),
        _ => "n/a".to_string(),
    };
    println!("growth since step {BASELINE_STEP}: device memory {device_growth:+.2} MiB, host RSS {rss_growth}");
    match first_bad {
        None => println!("all outputs finite: yes"),
        Some(step) => println!("all outputs finite: NO (first non-finite output at step {step})"),
    }
    if timed > 0 && seconds > 0.0 {
        println!(
            "replay rate: {:.0} steps/s ({:.2} us per step: write snapshot + dt, replay, read probs and y)",
            timed as f64 / seconds,
            seconds * 1e6 / timed as f64
        );
    }
    Ok(first_bad.is_none())
}
