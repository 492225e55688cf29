//! The resident executor's round trip (`PerceptionResident`: Graph A's fused step in a
//! persistent kernel, no launch per step; the host writes the snapshot into mapped memory,
//! rings the doorbell and spins on the done sequence number) over many steps:
//! - alone;
//! - while the train step replays in a loop on the same GPU (a thread of its own, a `Device` of
//!   its own), without an SM partition and with one (green contexts: the resident kernel on a
//!   few reserved SMs, the train loop on the rest, `Device::split_sms`);
//! - a soak: percentiles and the host's resident set size per window of steps.
//!
//! Each figure is over every step of its run (no warm-up dropped beyond the first 1000 steps).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use kgraph::Device;
use kgraph_model::graphs::synthetic::BookStream;
use kgraph_model::graphs::{ModelWeights, TrainBatch, TrainStep};
use kgraph_model::model::SNAP_LEN;
use kgraph_model::resident::{PerceptionIn, PerceptionResident};

use crate::host::Realtime;
use crate::report::Report;

/// SMs asked for the resident kernel's partition (it runs one block; the hardware rounds the
/// count up to its granularity).
const RESERVED_SMS: u32 = 8;

/// Steps dropped before timing (the first launches the kernel).
const WARMUP: usize = 1000;

/// `steps` timed resident round trips in every configuration, each with the timing thread
/// placed by the system and again pinned under `SCHED_FIFO` (`_rt` figures, where allowed), then
/// `soak` steps in windows of `window` (no soak when 0).
pub fn run(dev: &Device, steps: usize, soak: usize, window: usize, report: &mut Report) -> anyhow::Result<()> {
    let inputs = Inputs::new(2024);
    let weights = ModelWeights::init(7);
    let new = |d: &Device| PerceptionResident::new(d, &weights, Default::default());
    for (placement, suffix) in [(Placement::Default, ""), (Placement::Realtime, "_rt")] {
        let alone = timed(&mut new(dev)?, &inputs, steps, placement)?;
        add(report, &format!("resident_alone{suffix}"), alone.as_deref());
        // The train loop beside it on the primary context: it may take any SM, the resident's too.
        let shared = with_train_load(&Device::new(0)?, || timed(&mut new(dev)?, &inputs, steps, placement))?;
        add(report, &format!("resident_under_train{suffix}"), shared.0.as_deref());
        report.add(format!("resident_under_train{suffix}_train_steps_per_s"), shared.1, "1/s");
        // SAFETY: each part is used by one thread at a time: `reserved` (the residents) by this
        // thread, `rest` by the train loop's thread only, from its spawn until it is joined.
        match unsafe { dev.split_sms(RESERVED_SMS) } {
            Ok(split) => {
                if placement == Placement::Default {
                    report.add("resident_partition_reserved_sms", f64::from(split.reserved_sms), "SMs");
                    report.add("resident_partition_rest_sms", f64::from(split.rest_sms), "SMs");
                }
                let reserved = &split.reserved;
                let green_alone = timed(&mut new(reserved)?, &inputs, steps, placement)?;
                add(report, &format!("resident_green_alone{suffix}"), green_alone.as_deref());
                let green = with_train_load(&split.rest, || timed(&mut new(reserved)?, &inputs, steps, placement))?;
                add(report, &format!("resident_green_under_train{suffix}"), green.0.as_deref());
                report.add(format!("resident_green_under_train{suffix}_train_steps_per_s"), green.1, "1/s");
            }
            Err(e) => {
                println!("resident: no SM partition on this device ({e}); the green-context figures are missing")
            }
        }
    }
    if soak > 0 {
        soak_windows(dev, &weights, &inputs, soak, window.max(1), report)?;
    }
    Ok(())
}

/// Snapshots and their `dt`, drawn before timing and cycled.
struct Inputs(Vec<PerceptionIn>);

impl Inputs {
    fn new(seed: u64) -> Inputs {
        let mut books = BookStream::new(seed);
        Inputs(
            (0..4096)
                .map(|_| {
                    let mut snap = [0.0f32; SNAP_LEN];
                    let tick = books.next_into(&mut snap);
                    PerceptionIn { snap, dt: tick.dt }
                })
                .collect(),
        )
    }

    fn get(&self, step: usize) -> &PerceptionIn {
        &self.0[step % self.0.len()]
    }
}

/// Where the timing thread runs: as the system places it, or pinned under `SCHED_FIFO`.
#[derive(Clone, Copy, PartialEq)]
enum Placement {
    Default,
    Realtime,
}

/// Round-trip times of `steps` steps (after the warm-up), sorted, in us; every output finite.
/// With [`Placement::Realtime`], `None` when the system refuses it.
fn timed(
    r: &mut PerceptionResident,
    inputs: &Inputs,
    steps: usize,
    placement: Placement,
) -> anyhow::Result<Option<Vec<f64>>> {
    let _rt = match placement {
        Placement::Default => None,
        Placement::Realtime => match Realtime::enter() {
            Ok(rt) => Some(rt),
            Err(e) => {
                println!("resident: no real-time placement ({e}); its figures are missing");
                return Ok(None);
            }
        },
    };
    for s in 0..WARMUP {
        r.step(inputs.get(s))?;
    }
    let mut t = Vec::with_capacity(steps);
    let mut bad = 0usize;
    for s in 0..steps {
        let t0 = Instant::now();
        let out = r.step(inputs.get(s))?;
        t.push(t0.elapsed().as_secs_f64() * 1e6);
        bad += usize::from(!out.probs.iter().all(|p| p.is_finite()));
    }
    anyhow::ensure!(bad == 0, "{bad} resident steps gave non-finite probabilities");
    t.sort_by(f64::total_cmp);
    Ok(Some(t))
}

/// The `p` percentile of `sorted` (nearest rank).
pub fn pct(sorted: &[f64], p: f64) -> f64 {
    sorted[((p / 100.0) * (sorted.len() - 1) as f64).round() as usize]
}

/// p50, p99, p99.9, max and p99.9 / p50 of one run (nothing for a run that did not happen).
fn add(report: &mut Report, tag: &str, sorted: Option<&[f64]>) {
    let Some(sorted) = sorted else { return };
    let (p50, p999) = (pct(sorted, 50.0), pct(sorted, 99.9));
    report.add(format!("kgraph_{tag}_roundtrip_p50"), p50, "us");
    report.add(format!("kgraph_{tag}_roundtrip_p99"), pct(sorted, 99.0), "us");
    report.add(format!("kgraph_{tag}_roundtrip_p999"), p999, "us");
    report.add(format!("kgraph_{tag}_roundtrip_max"), sorted[sorted.len() - 1], "us");
    report.add(format!("ratio_{tag}_p999_vs_p50"), p999 / p50, "x");
    report.add(format!("kgraph_{tag}_steps"), sorted.len() as f64, "steps");
}

/// Runs `measure` while a thread replays the train step (B = 256) in a loop on `load`'s stream
/// (a synchronize every 16 replays keeps the queue short); returns what `measure` returned and
/// the train steps per second the loop ran meanwhile.
fn with_train_load<T>(load: &Device, measure: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<(T, f64)> {
    let (stop, ready) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let (dev, stop_flag, ready_flag) = (load.clone(), stop.clone(), ready.clone());
    let worker = std::thread::spawn(move || -> anyhow::Result<(u64, f64)> {
        let mut g = TrainStep::new(&dev)?;
        g.load_weights(&ModelWeights::init(7))?;
        let (mut books, mut batch) = (BookStream::independent(3), TrainBatch::new());
        batch.fill(&mut books)?;
        g.upload_batch(&batch)?;
        g.upload_schedule_for(1, 1e-4)?;
        g.capture()?;
        ready_flag.store(true, Ordering::Release);
        let (t0, mut n) = (Instant::now(), 0u64);
        while !stop_flag.load(Ordering::Acquire) {
            g.replay()?;
            n += 1;
            if n % 16 == 0 {
                dev.synchronize()?;
            }
        }
        dev.synchronize()?;
        Ok((n, t0.elapsed().as_secs_f64()))
    });
    while !ready.load(Ordering::Acquire) && !worker.is_finished() {
        std::thread::yield_now();
    }
    let measured = measure();
    stop.store(true, Ordering::Release);
    let (n, secs) = worker.join().map_err(|_| anyhow::anyhow!("the train loop panicked"))??;
    Ok((measured?, n as f64 / secs))
}

/// `total` steps of one resident in windows of `window`: each window's p50 / p99 / p99.9 / max
/// and the host's resident set size after it; then the last window's p50 and RSS against the
/// first's.
fn soak_windows(
    dev: &Device,
    weights: &ModelWeights,
    inputs: &Inputs,
    total: usize,
    window: usize,
    report: &mut Report,
) -> anyhow::Result<()> {
    let mut r = PerceptionResident::new(dev, weights, Default::default())?;
    let windows = total.div_ceil(window);
    let mut first: Option<(f64, f64)> = None;
    let mut last = (0.0, 0.0);
    let mut t = Vec::with_capacity(window);
    for w in 0..windows {
        t.clear();
        for s in 0..window.min(total - w * window) {
            let t0 = Instant::now();
            let out = r.step(inputs.get(w * window + s))?;
            t.push(t0.elapsed().as_secs_f64() * 1e6);
            anyhow::ensure!(out.probs.iter().all(|p| p.is_finite()), "soak step {}: not finite", w * window + s);
        }
        t.sort_by(f64::total_cmp);
        let rss = rss_kib()?;
        println!(
            "soak window {w}: p50 {:.2} p99 {:.2} p99.9 {:.2} max {:.1} us, rss {rss} KiB",
            pct(&t, 50.0),
            pct(&t, 99.0),
            pct(&t, 99.9),
            t[t.len() - 1]
        );
        last = (pct(&t, 50.0), rss as f64);
        first.get_or_insert(last);
    }
    let first = first.unwrap_or(last);
    report.add("kgraph_resident_soak_steps", total as f64, "steps");
    report.add("kgraph_resident_soak_first_window_p50", first.0, "us");
    report.add("kgraph_resident_soak_last_window_p50", last.0, "us");
    report.add("kgraph_resident_soak_first_window_rss", first.1, "KiB");
    report.add("kgraph_resident_soak_last_window_rss", last.1, "KiB");
    Ok(())
}

/// The process's resident set size (`VmRSS` of /proc/self/status), in KiB.
fn rss_kib() -> anyhow::Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).ok_or_else(|| anyhow::anyhow!("no VmRSS"))?;
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).ok_or_else(|| anyhow::anyhow!("bad VmRSS"))
}
