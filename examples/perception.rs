//! kgraph's main example: Graph A, the latency path of the reference model, on a synthetic
//! MBP-10 stream.
//!
//!     cargo run --release --example perception [-- --steps N] [--resident] [--done-word]
//!
//! `graphs/perception.toml` becomes the struct `kgraph_model::graphs::Perception` (one `graph!` line
//! in `src/graphs.rs`). Each step writes a snapshot and its elapsed time into mapped pinned
//! memory (no upload: the replay reads them over the bus), replays the captured CUDA graph
//! (features → CfC step from the carried state → heads ∥ projection ∥ state carry) and reads
//! the five horizon probabilities, which the heads wrote straight into mapped pinned host
//! memory (no download copy: one stream sync, then five loads). The stream is deterministic
//! (random-walk mid, pressure-skewed sizes, one crossed book in ~500, which the feature kernel
//! turns into an invalid all-zero row). Prints a few steps and the per-step latency (write →
//! replay → read) percentiles. Beside it runs `PerceptionFused`
//! (`graphs/perception_fused.toml`: the same step in one kernel), checks that it gives the same
//! probabilities bit for bit at every step, and prints its latency too. `--done-word` adds the
//! fused graph replayed with the done-word wait (its last node publishes a replay count into
//! mapped memory, the host spins on it instead of synchronizing the stream); `--resident` adds
//! `PerceptionResident` (the same step as a resident kernel: no launch per step, written by hand
//! over the fused body) and Graph A's own spec as the resident kernel the build generated from it
//! (`resident = true`: `Perception::into_resident`, its five nodes in three levels separated by
//! grid barriers), each checked bit for bit against Graph A at every step (probabilities and
//! projection). The paths take the stream in blocks of 16 384 snapshots: Graph A runs a block
//! and keeps its outputs, then each other path runs the same block from its own carried state,
//! step by step against Graph A's, so each path's steps run back to back (a path's timing is its
//! own, not its neighbours'); a resident kernel exits after 1 ms without a step (relaunched by its
//! next one), so none polls mapped memory while another path runs.
//! Without a GPU it exits non-zero with one line saying why.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use kgraph::resident::ResidentOptions;
use kgraph_model::graphs::synthetic::{BookStream, Tick};
use kgraph_model::graphs::{ModelWeights, Perception, PerceptionFused, PerceptionResidentIn};
use kgraph_model::model::{FEAT_VALID, SNAP_LEN};
use kgraph_model::resident::{PerceptionIn, PerceptionResident};

/// Snapshots streamed by default.
const DEFAULT_STEPS: usize = 10_000;

/// Snapshots each path takes in a row before the next path takes the same ones.
const BLOCK: usize = 16_384;

/// The residents exit after 1 ms without a step (and are launched again by their next one), so
/// while one path runs its block no other resident kernel polls mapped memory beside it: two
/// polling kernels share the bus, which measured 4.32 us p50 for the hand-written resident
/// against 3.87-3.89 us alone (H200). One relaunch per block of 16 384 steps stays out of the
/// p99.9.
fn resident_options() -> ResidentOptions {
    ResidentOptions { idle_exit: Duration::from_millis(1), ..ResidentOptions::default() }
}

/// One snapshot of the stream and its tick (elapsed time, pressure, crossed or not).
struct Snapshot {
    snap: [f32; SNAP_LEN],
    tick: Tick,
}

impl Snapshot {
    fn next(stream: &mut BookStream) -> Snapshot {
        let mut snap = [0.0f32; SNAP_LEN];
        let tick = stream.next_into(&mut snap);
        Snapshot { snap, tick }
    }
}

/// Graph A's outputs of one step: what every other path must give bit for bit.
struct GraphAOut {
    probs: [f32; Perception::PROBS_LEN],
    y: [f32; Perception::Y_LEN],
}

/// What the command line asked for.
struct Args {
    steps: usize,
    /// Also run `PerceptionResident`.
    resident: bool,
    /// Also run the fused graph with the done-word wait.
    done_word: bool,
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(msg) => {
            eprintln!("perception: {msg}");
            return ExitCode::FAILURE;
        }
    };
    match run(&args) {
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

fn parse_args() -> Result<Args, String> {
    let mut out = Args { steps: DEFAULT_STEPS, resident: false, done_word: false };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--steps" => {
                let v = args.next().ok_or("--steps needs a value")?;
                out.steps =
                    v.parse().ok().filter(|&n| n > 0).ok_or(format!("--steps: `{v}` is not a positive count"))?;
            }
            "--resident" => out.resident = true,
            "--done-word" => out.done_word = true,
            other => return Err(format!("unknown argument `{other}` (use --steps N, --resident, --done-word)")),
        }
    }
    Ok(out)
}

/// The optional runners beside Graph A and the fused graph, each checked against Graph A.
struct Extras {
    /// The fused graph with the done-word wait, and its latencies.
    done_word: Option<(PerceptionFused, Vec<Duration>)>,
    /// The resident kernel, and its latencies.
    resident: Option<(PerceptionResident, Vec<Duration>)>,
    /// Graph A's spec as the generated resident kernel, and its latencies.
    generated: Option<(kgraph_model::graphs::PerceptionResident, Vec<Duration>)>,
}

impl Extras {
    fn new(dev: &kgraph::Device, args: &Args) -> kgraph::Result<Extras> {
        let done_word = if args.done_word {
            let mut g = PerceptionFused::new(dev)?;
            g.load_weights(&ModelWeights::init(7))?;
            g.set_done_word_wait(Some(kgraph::resident::SpinPolicy::default()))?;
            g.capture()?;
            Some((g, Vec::with_capacity(args.steps)))
        } else {
            None
        };
        let resident = if args.resident {
            let r = PerceptionResident::new(dev, &ModelWeights::init(7), resident_options())?;
            Some((r, Vec::with_capacity(args.steps)))
        } else {
            None
        };
        let generated = if args.resident {
            let mut g = Perception::new(dev)?;
            g.load_weights(&ModelWeights::init(7))?;
            let r = g.into_resident(None, resident_options())?;
            Some((r, Vec::with_capacity(args.steps)))
        } else {
            None
        };
        Ok(Extras { done_word, resident, generated })
    }

    /// Each extra over the whole `block` in turn (its steps back to back); true when each gave
    /// Graph A's `probs` and `y` (`expected`, step by step) bit for bit.
    fn run_block(&mut self, block: &[Snapshot], expected: &[GraphAOut]) -> kgraph::Result<bool> {
        let bits = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
        let mut same = true;
        if let Some((g, latency)) = &mut self.done_word {
            for (s, want) in block.iter().zip(expected) {
                let (mut p, mut q) = ([0.0f32; PerceptionFused::PROBS_LEN], [0.0f32; PerceptionFused::Y_LEN]);
                let start = Instant::now();
                g.write_snap(&s.snap)?;
                g.write_dt(&[s.tick.dt])?;
                g.replay()?;
                g.read_probs_into(&mut p)?;
                latency.push(start.elapsed());
                g.read_y_into(&mut q)?;
                same &= bits(&p, &want.probs) && bits(&q, &want.y);
            }
        }
        if let Some((r, latency)) = &mut self.resident {
            for (s, want) in block.iter().zip(expected) {
                let start = Instant::now();
                let out = r.step(&PerceptionIn { snap: s.snap, dt: s.tick.dt })?;
                latency.push(start.elapsed());
                same &= bits(&out.probs, &want.probs) && bits(&out.y, &want.y);
            }
        }
        if let Some((r, latency)) = &mut self.generated {
            for (s, want) in block.iter().zip(expected) {
                let start = Instant::now();
                let out = r.step(&PerceptionResidentIn { snap: s.snap, dt: [s.tick.dt] })?;
                latency.push(start.elapsed());
                same &= bits(&out.probs, &want.probs) && bits(&out.y, &want.y);
            }
        }
        Ok(same)
    }

    fn into_latencies(self) -> Vec<(String, Vec<Duration>)> {
        let mut out = Vec::new();
        if let Some((_, l)) = self.done_word {
            out.push(("Graph A fused, done-word wait".into(), l));
        }
        if let Some((_, l)) = self.resident {
            out.push(("Graph A resident (no launch)".into(), l));
        }
        if let Some((r, l)) = self.generated {
            out.push((format!("Graph A resident, generated from the spec ({} blocks)", r.grid_blocks()), l));
        }
        out
    }
}

/// Streams `args.steps` snapshots through Graph A, the fused graph and the extras asked for;
/// true when every output stayed finite and all agreed.
fn run(args: &Args) -> kgraph::Result<bool> {
    let steps = args.steps;
    let dev = kgraph::Device::new(0)?;
    let mut g = Perception::new(&dev)?;
    g.load_weights(&ModelWeights::init(7))?;
    g.capture()?;
    let mut fused = PerceptionFused::new(&dev)?;
    fused.load_weights(&ModelWeights::init(7))?;
    fused.capture()?;
    let mut extras = Extras::new(&dev, args)?;
    println!(
        "perception: {} | Graph A built: {} nodes (4 kernels, 1 memcpy), {} edges; heads, projection and carry run in parallel",
        dev.name()?,
        Perception::NODES.len(),
        Perception::EDGES.len()
    );

    let mut stream = BookStream::new(2024);
    let (mut latency, mut fused_latency) = (Vec::with_capacity(steps), Vec::with_capacity(steps));
    let (mut crossed, mut all_finite, mut shown_crossed, mut same, mut extras_same) = (0usize, true, false, true, true);
    let (mut block, mut expected) = (Vec::with_capacity(BLOCK), Vec::with_capacity(BLOCK));
    for first in (0..steps).step_by(BLOCK) {
        block.clear();
        block.extend((first..steps.min(first + BLOCK)).map(|_| Snapshot::next(&mut stream)));
        expected.clear();
        for (i, s) in block.iter().enumerate() {
            let mut out = GraphAOut { probs: [0.0; Perception::PROBS_LEN], y: [0.0; Perception::Y_LEN] };
            let start = Instant::now();
            g.write_snap(&s.snap)?;
            g.write_dt(&[s.tick.dt])?;
            g.replay()?;
            g.read_probs_into(&mut out.probs)?;
            latency.push(start.elapsed());
            g.read_y_into(&mut out.y)?;
            all_finite &= out.probs.iter().chain(&out.y).all(|p| p.is_finite());
            crossed += usize::from(s.tick.crossed);
            let step = first + i;
            let show_crossed = s.tick.crossed && !std::mem::replace(&mut shown_crossed, true);
            if step < 3 || step % (steps / 4).max(1) == 0 || show_crossed {
                let valid = dev.download(g.feat())?[FEAT_VALID] == 1.0;
                println!(
                    "step {step:>6}  dt {:.3}  pressure {:+.3}  book {}  probs [{}]  y[..4] [{}]",
                    s.tick.dt,
                    s.tick.pressure,
                    if valid { "valid  " } else { "INVALID" },
                    fmt_list(&out.probs, 4, false),
                    fmt_list(&out.y[..4], 3, true),
                );
            }
            expected.push(out);
        }
        for (s, want) in block.iter().zip(&expected) {
            let mut fused_probs = [0.0f32; PerceptionFused::PROBS_LEN];
            let start = Instant::now();
            fused.write_snap(&s.snap)?;
            fused.write_dt(&[s.tick.dt])?;
            fused.replay()?;
            fused.read_probs_into(&mut fused_probs)?;
            fused_latency.push(start.elapsed());
            same &= want.probs.iter().zip(&fused_probs).all(|(a, b)| a.to_bits() == b.to_bits());
        }
        extras_same &= extras.run_block(&block, &expected)?;
    }

    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    let mut rows = vec![("Graph A".to_string(), latency), ("Graph A fused (one kernel)".to_string(), fused_latency)];
    rows.extend(extras.into_latencies());
    for (name, mut latency) in rows {
        latency.sort_unstable();
        let pct = |q: f64| micros(latency[((latency.len() - 1) as f64 * q).round() as usize]);
        let mean = latency.iter().map(|&d| micros(d)).sum::<f64>() / latency.len() as f64;
        println!(
            "{name}: {steps} snapshots, latency per step (write snapshot + dt -> run -> read probs): \
             p50 {:.2} us, p99 {:.2} us, p99.9 {:.2} us, max {:.1} us, mean {:.2} us",
            pct(0.50),
            pct(0.99),
            pct(0.999),
            micros(latency[latency.len() - 1]),
            mean
        );
    }
    println!("fused probabilities equal Graph A's bit for bit at every step: {}", if same { "yes" } else { "NO" });
    if args.done_word || args.resident {
        let yes = if extras_same { "yes" } else { "NO" };
        println!("done-word / resident probabilities and projection equal Graph A's bit for bit at every step: {yes}");
    }
    println!("crossed books: {crossed}; all outputs finite: {}", if all_finite { "yes" } else { "NO" });
    Ok(all_finite && same && extras_same)
}

fn fmt_list(v: &[f32], decimals: usize, signed: bool) -> String {
    let item = |x: &f32| if signed { format!("{x:+.decimals$}") } else { format!("{x:.decimals$}") };
    v.iter().map(item).collect::<Vec<_>>().join(" ")
}
