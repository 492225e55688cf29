//! Data-parallel training of the reference model: one process per GPU, each training
//! `kgraph_model::graphs::TrainStepDdp` (`graphs/train_step_ddp.toml`: the train step with its
//! gradients averaged over the ranks by NCCL all-reduces inside the graph) on its own shard of
//! the global batch (256 snapshots per rank).
//!
//!     scripts/launch-ranks target/release/examples/train_ddp [--steps N] [--lr LR]
//!     RANK=0 WORLD_SIZE=1 cargo run --release --example train_ddp      # one process
//!
//! `--check`: rank 0 also trains the plain single-GPU step on the whole global batch (every
//! rank's shard, from the same seeded streams; `TrainStepBatch512` for two ranks) and checks
//! that the data-parallel loss (averaged over the ranks in the graph) follows it step by step
//! (bit for bit on one rank; the two-rank tolerance is justified at `CHECK_TOLERANCE`).
//!
//! Rank, world size and the NCCL id come from the torchrun-style environment
//! (`kgraph::nccl::Bootstrap::from_env`, docs/multi-gpu.md). Every rank prints its loss every 100
//! steps and, at the end, its step time (`kgraph_ddp_step_w<W>_rank<r>`: replay + sync, median;
//! the peer is `examples/bench/peers/ddp_train_step.py`) and a checksum of its trained weights:
//! the ranks apply the same averaged update, so the checksums agree. Needs NCCL (`libnccl.so.2`) and a GPU per rank; exits
//! non-zero with one line otherwise, or when the mean loss of the last 50 steps is not below 0.9
//! of the first 50.

use std::process::ExitCode;

use kgraph::nccl::Bootstrap;
use kgraph_model::graphs::synthetic::BookStream;
use kgraph_model::graphs::{ModelWeights, TrainBatch, TrainStep, TrainStepBatch512, TrainStepDdp};

/// Timed replays for the step-time figure.
const STEP_TIMES: usize = 500;

fn main() -> ExitCode {
    let (mut steps, mut lr, mut check) = (1000u32, 1e-3f32, false);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--check" {
            check = true;
            continue;
        }
        let value = args.next();
        match (a.as_str(), value.as_deref().map(str::parse::<f64>)) {
            ("--steps", Some(Ok(v))) if v >= 100.0 => steps = v as u32,
            ("--lr", Some(Ok(v))) if v > 0.0 => lr = v as f32,
            _ => {
                eprintln!("train_ddp: unknown or bad argument `{a}` (use --steps N >= 100, --lr LR > 0, --check)");
                return ExitCode::FAILURE;
            }
        }
    }
    match run(steps, lr, check) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("train_ddp: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--check`'s single-GPU reference on rank 0: the same model trained on the whole global batch
/// (every rank's shard, drawn from the same seeded streams) by the plain train step: `TrainStep`
/// for one rank, `TrainStepBatch512` (the same spec at batch 512) for two.
enum Reference {
    One(TrainStep),
    Two(TrainStepBatch512),
}

/// The step's inputs and one replay, for either reference struct.
macro_rules! reference_step {
    ($g:expr, $global:expr, $step:expr, $lr:expr) => {{
        $g.upload_snap(&$global.snap)?;
        $g.upload_dt(&$global.dt)?;
        $g.upload_targets(&$global.targets)?;
        $g.upload_schedule_for($step, $lr)?;
        $g.replay()?;
        $g.download_loss()?[0]
    }};
}

impl Reference {
    fn new(dev: &kgraph::Device, world: usize) -> kgraph::Result<Self> {
        let w = ModelWeights::init(7);
        let mut r = match world {
            1 => Reference::One(TrainStep::new(dev)?),
            2 => Reference::Two(TrainStepBatch512::new(dev)?),
            _ => return Err(kgraph::Error::graph("train_ddp --check", format!("checks 1 or 2 ranks, not {world}"))),
        };
        match &mut r {
            Reference::One(g) => {
                g.load_weights(&w)?;
                g.capture()?;
            }
            Reference::Two(g) => {
                g.load_weights(&w)?;
                g.capture()?;
            }
        }
        Ok(r)
    }

    /// One step on the global batch (the rows of every shard, in rank order); its loss.
    fn step(&mut self, global: &TrainBatch, step: u32, lr: f32) -> kgraph::Result<f32> {
        Ok(match self {
            Reference::One(g) => reference_step!(g, global, step, lr),
            Reference::Two(g) => reference_step!(g, global, step, lr),
        })
    }
}

/// The global batch of one step: shard r from `streams[r]`, rows in rank order.
fn global_batch(streams: &mut [BookStream]) -> kgraph::Result<TrainBatch> {
    let mut global = TrainBatch { snap: Vec::new(), dt: Vec::new(), targets: Vec::new() };
    for stream in streams {
        let mut shard = TrainBatch::new();
        shard.fill(stream)?;
        global.snap.extend(shard.snap);
        global.dt.extend(shard.dt);
        global.targets.extend(shard.targets);
    }
    Ok(global)
}

/// `--check`'s tolerance on |DDP loss - single-GPU loss| per step, two ranks. Why this bound:
/// both losses are fp32 means over the same 512 samples with weights that start equal; the
/// data-parallel gradient is the average of two shard means, the reference's one mean over 512,
/// which differ by rounding (a few ulps, ~1e-7 relative). AdamW turns a gradient into a step of
/// at most ~lr = 1e-3 per weight whatever its scale, so a rounding-level difference moves the
/// weights apart by far less than one step each time; over 500 steps of a smooth model the
/// losses stay within ~1e-5 of each other (measured for the same kind of difference, a
/// 512-batch holding each sample twice against the 256-batch: 6e-8 at most over 100 steps,
/// `model_graphs::the_batch_512_step_on_a_doubled_batch_follows_the_batch_256_step`). 1e-3 is
/// far above that and two orders below the
/// loss's own fall over training (0.6 -> 0.4), so a wrong average (a sum, a missing rank, a
/// stale gradient) fails it from the first steps. With one rank the check is bit for bit.
const CHECK_TOLERANCE: f32 = 1e-3;

fn run(steps: u32, lr: f32, check: bool) -> kgraph::Result<bool> {
    let boot = Bootstrap::from_env()?;
    let (rank, world) = (boot.rank(), boot.world_size());
    let dev = kgraph::Device::new(boot.local_rank())?;
    let mut g = TrainStepDdp::new(&dev, &boot)?;
    g.load_weights(&ModelWeights::init(7))?;
    g.capture()?;
    println!(
        "train_ddp rank {rank}/{world}: {} | {} nodes ({} all-reduces), global batch {}",
        dev.name()?,
        TrainStepDdp::NODES.len(),
        TrainStepDdp::NODES.iter().filter(|n| n.starts_with("allreduce_")).count(),
        world * TrainStepDdp::BATCH
    );
    // Rank r's shard: an independent stream of its own seed (the global batch is their union).
    let (mut stream, mut batch) = (BookStream::independent(1 + rank as u64), TrainBatch::new());
    let mut losses = Vec::with_capacity(steps as usize);
    // `--check` on rank 0: the single-GPU reference, fed every rank's shard from its own copy
    // of the seeded streams.
    let mut reference = if check && rank == 0 {
        let streams: Vec<BookStream> = (0..world as u64).map(|r| BookStream::independent(1 + r)).collect();
        Some((Reference::new(&dev, world)?, streams))
    } else {
        None
    };
    let mut max_dev = 0.0f32;
    for step in 1..=steps {
        batch.fill(&mut stream)?;
        g.upload_batch(&batch)?;
        g.upload_schedule_for(step, lr)?;
        g.replay()?;
        let loss = g.download_loss()?[0];
        if let Some((r, streams)) = &mut reference {
            let single = r.step(&global_batch(streams)?, step, lr)?;
            max_dev = max_dev.max((loss - single).abs());
            if world == 1 && loss.to_bits() != single.to_bits() {
                println!("check: step {step}: one-rank loss {loss} differs from the single-GPU {single}");
                return Ok(false);
            }
        }
        if !loss.is_finite() {
            return Err(kgraph::Error::graph("TrainStepDdp::replay", format!("rank {rank}, step {step}: loss {loss}")));
        }
        losses.push(f64::from(loss));
        if step == 1 || step % 100 == 0 {
            println!("rank {rank} step {step:>5}  loss {loss:.4}");
        }
    }
    // Step time: more replays of the last batch, each followed by a stream sync (the all-reduces
    // keep the ranks in lockstep), median after a warm-up; `world` = 1 is the baseline of the
    // scaling efficiency t(1) / t(W) at the same per-rank batch.
    let mut times = Vec::with_capacity(STEP_TIMES);
    for i in 0..STEP_TIMES + 50 {
        let start = std::time::Instant::now();
        g.replay()?;
        dev.synchronize()?;
        if i >= 50 {
            times.push(start.elapsed().as_secs_f64() * 1e6);
        }
    }
    times.sort_by(f64::total_cmp);
    println!("kgraph_ddp_step_w{world}_rank{rank} {:.2} us", times[times.len() / 2]);
    let checksum: f64 = g.download_w_g()?.iter().chain(&g.download_b_h()?).map(|&v| f64::from(v)).sum();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (first, last) = (mean(&losses[..50]), mean(&losses[losses.len() - 50..]));
    println!(
        "rank {rank}: mean loss first 50 {first:.4}, last 50 {last:.4}, ratio {:.3}; weights checksum {checksum:.9e}",
        last / first
    );
    let mut checked = true;
    if reference.is_some() {
        checked = max_dev <= CHECK_TOLERANCE;
        println!(
            "check: max |global-batch loss, {world} rank(s) - single GPU| over {steps} steps = {max_dev:.3e} \
             (tolerance {CHECK_TOLERANCE:e}{}): {}",
            if world == 1 { ", and bit for bit" } else { "" },
            if checked { "ok" } else { "FAILED" }
        );
    }
    Ok(last / first <= 0.9 && checked)
}
