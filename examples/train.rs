//! Trains the reference model's trunk (CfC cell) and heads with the captured train-step graph.
//!
//!     cargo run --release --example train [-- --out DIR] [--steps N] [--lr LR] [--while]
//!
//! `--while` runs 100 steps per launch instead: `kgraph_model::graphs::TrainSteps100`, the same
//! spec inside one conditional WHILE node (`graph!(..., repeat = 100)`), each launch on one
//! batch with the schedule of its first step; the loss is then recorded once per launch (the
//! last step's), the last window shrinks to a quarter of the launches, and the first is replaced
//! by ln 2, the untrained model's loss (each recorded loss already ends 100 steps).
//!
//! `graphs/train_step.toml` becomes `kgraph_model::graphs::TrainStep`: one replay runs the forward of
//! a batch of 256 snapshots, BCE-with-logits against the labels, the backward into gradient
//! buffers it zeroes first, and AdamW on every trained tensor (the learning rate and bias
//! corrections come from a small device buffer uploaded before each replay, so the graph is
//! captured once). The data is the deterministic synthetic stream of
//! `kgraph_model::graphs::synthetic`, whose labels follow a known logistic law of the order-flow
//! pressure that the book's depth imbalance reveals: the loss can fall from ln 2 ≈ 0.69 towards
//! the law's own noise (≈ 0.40).
//!
//! Prints the loss every 100 steps, writes `loss.csv` and `loss.svg` (hand-written SVG) into the
//! output folder (default `out/`), and prints `mean loss first 50: X, last 50: Y, ratio: Y/X`.
//! Exits non-zero if the ratio is above 0.9, or without a GPU (one line saying why).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use kgraph_model::graphs::synthetic::BookStream;
use kgraph_model::graphs::{ModelWeights, TrainBatch, TrainStep, TrainSteps100};

/// The ratio of the mean loss of the last 50 steps to the first 50 this example must reach.
const TARGET_RATIO: f64 = 0.9;
/// Steps averaged at each end of the run.
const WINDOW: usize = 50;

struct Options {
    out: PathBuf,
    steps: u32,
    lr: f32,
    /// 100 steps per launch (`TrainSteps100`).
    k_steps: bool,
}

fn main() -> ExitCode {
    let opts = match parse_args() {
        Ok(opts) => opts,
        Err(msg) => {
            eprintln!("train: {msg}");
            return ExitCode::FAILURE;
        }
    };
    let trained = if opts.k_steps { train_k(&opts) } else { train(&opts) };
    let losses = match trained {
        Ok(losses) => losses,
        Err(e) => {
            eprintln!("train: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = write_outputs(&opts.out, &losses) {
        eprintln!("train: cannot write into {}: {e}", opts.out.display());
        return ExitCode::FAILURE;
    }
    let mean = |v: &[f32]| v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64;
    let window = WINDOW.min(losses.len() / 4).max(1);
    // With --while each recorded loss ends 100 steps on its batch, so even the first is trained:
    // the baseline is then the untrained model's BCE, ln 2 (it predicts 1/2 at initialisation).
    let first = if opts.k_steps { std::f64::consts::LN_2 } else { mean(&losses[..window]) };
    let last = mean(&losses[losses.len() - window..]);
    let ratio = last / first;
    println!("mean loss first {window}: {first:.4}, last {window}: {last:.4}, ratio: {ratio:.3}");
    println!("wrote {} and {}", opts.out.join("loss.csv").display(), opts.out.join("loss.svg").display());
    if ratio.is_finite() && ratio <= TARGET_RATIO {
        ExitCode::SUCCESS
    } else {
        eprintln!("train: the loss did not fall enough (ratio {ratio:.3} > {TARGET_RATIO})");
        ExitCode::FAILURE
    }
}

fn parse_args() -> Result<Options, String> {
    let mut opts = Options { out: PathBuf::from("out"), steps: 1000, lr: 1e-3, k_steps: false };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--out" => opts.out = PathBuf::from(value()?),
            "--steps" => {
                let v = value()?;
                opts.steps = v
                    .parse()
                    .ok()
                    .filter(|&n| n as usize >= 2 * WINDOW)
                    .ok_or(format!("--steps: `{v}` is not a count of at least {}", 2 * WINDOW))?;
            }
            "--lr" => {
                let v = value()?;
                opts.lr = v
                    .parse()
                    .ok()
                    .filter(|&x: &f32| x > 0.0 && x.is_finite())
                    .ok_or(format!("--lr: `{v}` is not a positive rate"))?;
            }
            "--while" => opts.k_steps = true,
            other => return Err(format!("unknown argument `{other}` (use --out DIR, --steps N, --lr LR, --while)")),
        }
    }
    Ok(opts)
}

/// Runs `opts.steps` captured train steps; returns the loss of each (before its update).
fn train(opts: &Options) -> kgraph::Result<Vec<f32>> {
    let dev = kgraph::Device::new(0)?;
    let mut g = TrainStep::new(&dev)?;
    g.load_weights(&ModelWeights::init(7))?;
    g.capture()?;
    println!(
        "train: {} | TrainStep captured: {} kernel nodes, batch {}, {} steps at lr {}",
        dev.name()?,
        TrainStep::NODES.len(),
        TrainStep::BATCH,
        opts.steps,
        opts.lr
    );
    let (mut stream, mut batch) = (BookStream::independent(1), TrainBatch::new());
    let mut losses = Vec::with_capacity(opts.steps as usize);
    for step in 1..=opts.steps {
        batch.fill(&mut stream)?;
        g.upload_batch(&batch)?;
        g.upload_schedule_for(step, opts.lr)?;
        g.replay()?;
        let loss = g.download_loss()?[0];
        if !loss.is_finite() {
            return Err(kgraph::Error::graph("TrainStep::replay", format!("step {step}: the loss is {loss}")));
        }
        losses.push(loss);
        if step == 1 || step % 100 == 0 {
            println!("step {step:>5}  loss {loss:.4}");
        }
    }
    Ok(losses)
}

/// `--while`: `opts.steps` (rounded up to 100s) steps, 100 per launch of the WHILE graph;
/// returns the loss of the last step of each launch.
fn train_k(opts: &Options) -> kgraph::Result<Vec<f32>> {
    const K: u32 = 100;
    let dev = kgraph::Device::new(0)?;
    let mut g = TrainSteps100::new(&dev)?;
    g.load_weights(&ModelWeights::init(7))?;
    g.capture()?;
    let launches = opts.steps.div_ceil(K).max(4);
    println!(
        "train: {} | TrainSteps100 built: {} kernel nodes in one WHILE node, batch {}, {} launches of {K} steps at lr {}",
        dev.name()?,
        TrainSteps100::NODES.len(),
        TrainSteps100::BATCH,
        launches,
        opts.lr
    );
    let (mut stream, mut batch) = (BookStream::independent(1), TrainBatch::new());
    let mut losses = Vec::with_capacity(launches as usize);
    for launch in 0..launches {
        batch.fill(&mut stream)?;
        g.upload_batch(&batch)?;
        g.upload_schedule_for(launch * K + 1, opts.lr)?;
        g.replay()?;
        let loss = g.download_loss()?[0];
        if !loss.is_finite() {
            return Err(kgraph::Error::graph("TrainSteps100::replay", format!("launch {launch}: the loss is {loss}")));
        }
        losses.push(loss);
        println!("steps {:>6}  loss {loss:.4}", (launch + 1) * K);
    }
    Ok(losses)
}

fn write_outputs(dir: &Path, losses: &[f32]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut csv = String::from("step,loss\n");
    for (i, loss) in losses.iter().enumerate() {
        let _ = writeln!(csv, "{},{loss}", i + 1);
    }
    std::fs::write(dir.join("loss.csv"), csv)?;
    std::fs::write(dir.join("loss.svg"), svg_plot(losses))
}

/// The loss curve as an SVG line plot: raw losses, their 25-step moving average, labelled axes.
fn svg_plot(losses: &[f32]) -> String {
    const W: f64 = 800.0;
    const H: f64 = 420.0;
    const LEFT: f64 = 70.0;
    const RIGHT: f64 = 20.0;
    const TOP: f64 = 40.0;
    const BOTTOM: f64 = 50.0;
    let (lo, hi) = losses
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &l| (lo.min(f64::from(l)), hi.max(f64::from(l))));
    let span = (hi - lo).max(1e-6);
    let (lo, hi) = (lo - 0.05 * span, hi + 0.05 * span);
    let n = losses.len().max(2);
    let x = |i: usize| LEFT + (W - LEFT - RIGHT) * i as f64 / (n - 1) as f64;
    let y = |l: f64| TOP + (H - TOP - BOTTOM) * (hi - l) / (hi - lo);
    let points = |values: &mut dyn Iterator<Item = f64>| -> String {
        values.enumerate().map(|(i, l)| format!("{:.1},{:.1}", x(i), y(l))).collect::<Vec<_>>().join(" ")
    };
    let raw = points(&mut losses.iter().map(|&l| f64::from(l)));
    let smooth = points(&mut (0..losses.len()).map(|i| {
        let from = i.saturating_sub(24);
        losses[from..=i].iter().map(|&l| f64::from(l)).sum::<f64>() / (i + 1 - from) as f64
    }));
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="13">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="16">kgraph TrainStep: BCE loss per step (batch {})</text>"#,
        W / 2.0,
        TrainStep::BATCH
    );
    // Axes, with horizontal grid lines at five loss levels.
    for k in 0..=4 {
        let l = lo + (hi - lo) * f64::from(k) / 4.0;
        let _ = writeln!(s, r##"<line x1="{LEFT}" y1="{0:.1}" x2="{1}" y2="{0:.1}" stroke="#ddd"/>"##, y(l), W - RIGHT);
        let _ = writeln!(s, r#"<text x="{}" y="{:.1}" text-anchor="end">{l:.3}</text>"#, LEFT - 6.0, y(l) + 4.0);
    }
    let _ = writeln!(s, r#"<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{0}" stroke="black"/>"#, H - BOTTOM);
    let _ = writeln!(s, r#"<line x1="{LEFT}" y1="{0}" x2="{1}" y2="{0}" stroke="black"/>"#, H - BOTTOM, W - RIGHT);
    for (i, anchor) in [(0, "start"), (n / 2, "middle"), (n - 1, "end")] {
        let _ =
            writeln!(s, r#"<text x="{:.1}" y="{}" text-anchor="{anchor}">{}</text>"#, x(i), H - BOTTOM + 18.0, i + 1);
    }
    let _ = writeln!(s, r#"<text x="{}" y="{}" text-anchor="middle">step</text>"#, W / 2.0, H - 10.0);
    let _ = writeln!(s, r##"<polyline fill="none" stroke="#9bc4e8" stroke-width="1" points="{raw}"/>"##);
    let _ = writeln!(s, r##"<polyline fill="none" stroke="#1f4e8c" stroke-width="2" points="{smooth}"/>"##);
    let _ = writeln!(
        s,
        r##"<text x="{}" y="{}" text-anchor="end" fill="#1f4e8c">loss (light), 25-step mean (dark)</text>"##,
        W - RIGHT,
        TOP + 14.0
    );
    s.push_str("</svg>\n");
    s
}
