//! Data-parallel training of the reference model: one process per GPU, each training
//! `kgraph_model::graphs::TrainStepDdp` (`graphs/train_step_ddp.toml`: the train step with its
//! gradients averaged over the ranks by NCCL all-reduces inside the graph) on its own shard of
//! the global batch (256 snapshots per rank).
//!
//!     scripts/launch-ranks target/release/examples/train_ddp [--steps N] [--lr LR]
//!     RANK=0 WORLD_SIZE=1 cargo run --release --example train_ddp      # one process
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
use kgraph_model::graphs::{ModelWeights, TrainBatch, TrainStepDdp};

/// Timed replays for the step-time figure.
const STEP_TIMES: usize = 500;

fn main() -> ExitCode {
    let mut steps = 1000u32;
    let mut lr = 1e-3f32;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let value = args.next();
        match (a.as_str(), value.as_deref().map(str::parse::<f64>)) {
            ("--steps", Some(Ok(v))) if v >= 100.0 => steps = v as u32,
            ("--lr", Some(Ok(v))) if v > 0.0 => lr = v as f32,
            _ => {
                eprintln!("train_ddp: unknown or bad argument `{a}` (use --steps N >= 100, --lr LR > 0)");
                return ExitCode::FAILURE;
            }
        }
    }
    match run(steps, lr) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("train_ddp: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(steps: u32, lr: f32) -> kgraph::Result<bool> {
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
    for step in 1..=steps {
        batch.fill(&mut stream)?;
        g.upload_batch(&batch)?;
        g.upload_schedule_for(step, lr)?;
        g.replay()?;
        let loss = g.download_loss()?[0];
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
    Ok(last / first <= 0.9)
}
