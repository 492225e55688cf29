//! kgraph's main example: Graph A, the latency path of the reference model, on a synthetic
//! MBP-10 stream.
//!
//!     cargo run --release --example perception [-- --steps N]
//!
//! `graphs/perception.toml` becomes the struct `kgraph_model::graphs::Perception` (one `graph!` line
//! in `src/graphs.rs`). Each step writes a snapshot and its elapsed time into mapped pinned
//! memory (no upload: the replay reads them over the bus), replays the captured CUDA graph
//! (features → CfC step from the carried state → heads ∥ projection ∥ state carry) and reads
//! the five horizon probabilities, which the heads wrote straight into mapped pinned host
//! memory (no download copy: one stream sync, then five loads). The stream is deterministic
//! (random-walk mid, pressure-skewed sizes, one crossed book in ~500, which the feature kernel
//! turns into an invalid all-zero row). Prints a few steps and the per-step latency (write →
//! replay → read) percentiles. Beside it, in lockstep, runs `PerceptionFused`
//! (`graphs/perception_fused.toml`: the same step in one kernel), checks that it gives the same
//! probabilities bit for bit at every step, and prints its latency too. Without a GPU it exits
//! non-zero with one line saying why.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use kgraph_model::graphs::synthetic::BookStream;
use kgraph_model::graphs::{ModelWeights, Perception, PerceptionFused};
use kgraph_model::model::{FEAT_VALID, SNAP_LEN};

/// Snapshots streamed by default.
const DEFAULT_STEPS: usize = 10_000;

fn main() -> ExitCode {
    let steps = match parse_steps() {
        Ok(steps) => steps,
        Err(msg) => {
            eprintln!("perception: {msg}");
            return ExitCode::FAILURE;
        }
    };
    match run(steps) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("perception: some outputs were not finite, or the fused graph disagreed");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("perception: {e}");
            ExitCode::FAILURE
        }
    }
}

fn parse_steps() -> Result<usize, String> {
    let mut steps = DEFAULT_STEPS;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--steps" => {
                let v = args.next().ok_or("--steps needs a value")?;
                steps = v.parse().ok().filter(|&n| n > 0).ok_or(format!("--steps: `{v}` is not a positive count"))?;
            }
            other => return Err(format!("unknown argument `{other}` (use --steps N)")),
        }
    }
    Ok(steps)
}

/// Streams `steps` snapshots through Graph A and the fused graph; true when every output stayed
/// finite and the two agreed.
fn run(steps: usize) -> kgraph::Result<bool> {
    let dev = kgraph::Device::new(0)?;
    let mut g = Perception::new(&dev)?;
    g.load_weights(&ModelWeights::init(7))?;
    g.capture()?;
    let mut fused = PerceptionFused::new(&dev)?;
    fused.load_weights(&ModelWeights::init(7))?;
    fused.capture()?;
    println!(
        "perception: {} | Graph A built: {} nodes (4 kernels, 1 memcpy), {} edges; heads, projection and carry run in parallel",
        dev.name()?,
        Perception::NODES.len(),
        Perception::EDGES.len()
    );

    let mut stream = BookStream::new(2024);
    let mut snap = [0.0f32; SNAP_LEN];
    let mut probs = [0.0f32; Perception::PROBS_LEN];
    let mut y = [0.0f32; Perception::Y_LEN];
    let mut fused_probs = [0.0f32; PerceptionFused::PROBS_LEN];
    let (mut latency, mut fused_latency) = (Vec::with_capacity(steps), Vec::with_capacity(steps));
    let (mut crossed, mut all_finite, mut shown_crossed, mut same) = (0usize, true, false, true);
    for step in 0..steps {
        let tick = stream.next_into(&mut snap);
        let start = Instant::now();
        g.write_snap(&snap)?;
        g.write_dt(&[tick.dt])?;
        g.replay()?;
        g.read_probs_into(&mut probs)?;
        latency.push(start.elapsed());
        let start = Instant::now();
        fused.write_snap(&snap)?;
        fused.write_dt(&[tick.dt])?;
        fused.replay()?;
        fused.read_probs_into(&mut fused_probs)?;
        fused_latency.push(start.elapsed());
        same &= probs.iter().zip(&fused_probs).all(|(a, b)| a.to_bits() == b.to_bits());

        all_finite &= probs.iter().all(|p| p.is_finite());
        crossed += usize::from(tick.crossed);
        let show_crossed = tick.crossed && !std::mem::replace(&mut shown_crossed, true);
        if step < 3 || step % (steps / 4).max(1) == 0 || show_crossed {
            g.read_y_into(&mut y)?;
            all_finite &= y.iter().all(|v| v.is_finite());
            let valid = dev.download(g.feat())?[FEAT_VALID] == 1.0;
            println!(
                "step {step:>6}  dt {:.3}  pressure {:+.3}  book {}  probs [{}]  y[..4] [{}]",
                tick.dt,
                tick.pressure,
                if valid { "valid  " } else { "INVALID" },
                fmt_list(&probs, 4, false),
                fmt_list(&y[..4], 3, true),
            );
        }
    }

    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    for (name, latency) in [("Graph A", &mut latency), ("Graph A fused (one kernel)", &mut fused_latency)] {
        latency.sort_unstable();
        let pct = |q: f64| micros(latency[((latency.len() - 1) as f64 * q).round() as usize]);
        let mean = latency.iter().map(|&d| micros(d)).sum::<f64>() / latency.len() as f64;
        println!(
            "{name}: {steps} snapshots, latency per step (write snapshot + dt -> replay -> read probs): \
             p50 {:.1} us, p99 {:.1} us, max {:.1} us, mean {:.1} us",
            pct(0.50),
            pct(0.99),
            micros(latency[latency.len() - 1]),
            mean
        );
    }
    println!("fused probabilities equal Graph A's bit for bit at every step: {}", if same { "yes" } else { "NO" });
    println!("crossed books: {crossed}; all outputs finite: {}", if all_finite { "yes" } else { "NO" });
    Ok(all_finite && same)
}

fn fmt_list(v: &[f32], decimals: usize, signed: bool) -> String {
    let item = |x: &f32| if signed { format!("{x:+.decimals$}") } else { format!("{x:.decimals$}") };
    v.iter().map(item).collect::<Vec<_>>().join(" ")
}
