//! The train step (B = 256: features, CfC, heads, BCE, backward, AdamW; `graphs/train_step.toml`)
//! as one replay of its captured graph: GPU time of the graph alone, and the host-visible step
//! (replay + stream sync) with the batch and schedule already on the device. The figure the
//! PyTorch peer (`examples/bench/peers/train_step.py`) is compared with.

use kgraph::Device;
use kgraph_model::graphs::synthetic::BookStream;
use kgraph_model::graphs::{ModelWeights, TrainBatch, TrainStep, TrainSteps100};

use crate::report::{median_us, Report};

/// The steps per launch of `TrainSteps100` (the train step spec inside `[[while]] repeat = 100`).
const K: usize = 100;

pub fn run(dev: &Device, iters: usize, report: &mut Report) -> anyhow::Result<()> {
    let mut g = TrainStep::new(dev)?;
    g.load_weights(&ModelWeights::init(7))?;
    g.capture()?;
    let (mut books, mut batch) = (BookStream::independent(3), TrainBatch::new());
    batch.fill(&mut books)?;
    g.upload_batch(&batch)?;
    let mut step = 0u32;
    let t = median_us(iters, || {
        step += 1;
        g.upload_schedule_for(step, 1e-3)?;
        g.replay()?;
        Ok(dev.synchronize()?)
    })?;
    report.add("kgraph_train_step_replay_sync", t, "us");
    let graph = g.graph().ok_or_else(|| anyhow::anyhow!("the train step is captured"))?;
    let mut gpu = Vec::with_capacity(iters);
    for _ in 0..iters {
        gpu.push(f64::from(graph.replay_timed()?) * 1e3);
    }
    gpu.sort_by(f64::total_cmp);
    report.add("kgraph_train_step_graph_gpu_time", gpu[gpu.len() / 2], "us");
    // Per-node GPU times (serialized, evented): where the step's time goes.
    let profile = g.profile(iters)?;
    print!("{profile}");
    for row in &profile.rows {
        report.add(format!("kgraph_train_node_{}_gpu_time", row.node), row.us, "us");
    }
    let loss = g.download_loss()?[0];
    anyhow::ensure!(loss.is_finite(), "the train step's loss is {loss}");
    k_steps(dev, iters, report)
}

/// K = 100 steps: 100 replays of the one-step graph (one sync at the end) against one launch of
/// the WHILE graph, on the same batch and schedule (the schedule buffer is read by every step,
/// so both run the same 100 identical-schedule steps).
fn k_steps(dev: &Device, iters: usize, report: &mut Report) -> anyhow::Result<()> {
    let weights = ModelWeights::init(7);
    let (mut books, mut batch) = (BookStream::independent(3), TrainBatch::new());
    batch.fill(&mut books)?;
    let mut one = TrainStep::new(dev)?;
    one.load_weights(&weights)?;
    one.upload_batch(&batch)?;
    one.upload_schedule_for(1, 1e-3)?;
    one.capture()?;
    let mut many = TrainSteps100::new(dev)?;
    many.load_weights(&weights)?;
    many.upload_batch(&batch)?;
    many.upload_schedule_for(1, 1e-3)?;
    many.capture()?;
    let rounds = (iters / 30).max(10);
    let t = median_us(rounds, || {
        for _ in 0..K {
            one.replay()?;
        }
        Ok(dev.synchronize()?)
    })?;
    report.add("kgraph_train_100_steps_100_replays", t, "us");
    let t = median_us(rounds, || {
        many.replay()?;
        Ok(dev.synchronize()?)
    })?;
    report.add("kgraph_train_100_steps_one_while_launch", t, "us");
    report.ratio(
        "ratio_train_100_steps_while_vs_replays",
        "kgraph_train_100_steps_one_while_launch",
        "kgraph_train_100_steps_100_replays",
    );
    Ok(())
}
