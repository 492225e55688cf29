//! The memory plan (`docs/graph-spec.md`, "Memory plan") on the model's three graphs: the train
//! step (`graphs/train_step.toml`), the PPO minibatch update (`graphs/ppo_update.toml`) and
//! Graph A (`graphs/perception.toml`), each built twice from its spec, planned (scratch buffers
//! sharing one arena) and with `plan_memory = false`. Per graph: the bytes the generated consts
//! report, the GPU time of one replay (`replay_timed`) and the host-visible replay + stream sync,
//! both forms in alternating blocks (ABAB: a drift of the machine's state hits both alike), and
//! planned / unplanned ratios. The plan should cost nothing: same kernels, other addresses.

use kgraph::Device;
use kgraph_model::graphs::synthetic::BookStream;
use kgraph_model::graphs::{ModelWeights, TrainBatch};
use kgraph_model::model::SNAP_LEN;

use crate::ppo::{load_update, Rollout};
use crate::report::{median_us, Report};

// SAFETY (each `unsafe(pdl_waits_first)` below): every kernel these three specs launch begins
// with `kg_pdl_enter()` (kernels/model_common.cuh: `griddepcontrol.launch_dependents`, then
// `griddepcontrol.wait`) before it reads or writes any buffer. Checked for each: train_forward
// (train_forward.cu), multi_horizon_heads_bce_cfc_backward (heads.cu),
// cfc_step_backward_weights_adamw and cfc_step (cfc_step.cu), snap_feature_assemble_dt
// (snap_features.cu), multi_horizon_heads (heads.cu), projection (projection.cu),
// adamw_scheduled (adamw.cu), and ppo.cu's ppo_minibatch_begin, ppo_gather_minibatch,
// ppo_normalize_advantages, ppo_linear_forward, ppo_heads_loss_backward, ppo_loss_forward,
// ppo_linear_backward and ppo_linear_backward_params. (Graph A's `carry` is a memcpy node.)
kgraph::graph!("graphs/train_step.toml", name = TrainStepPlanned, unsafe(pdl_waits_first));
kgraph::graph!("graphs/train_step.toml", name = TrainStepUnplanned, plan_memory = false);
kgraph::graph!("graphs/ppo_update.toml", name = PpoUpdatePlanned, unsafe(pdl_waits_first));
kgraph::graph!("graphs/ppo_update.toml", name = PpoUpdateUnplanned, plan_memory = false);
kgraph::graph!("graphs/perception.toml", name = PerceptionPlanned, unsafe(pdl_waits_first));
kgraph::graph!("graphs/perception.toml", name = PerceptionUnplanned, plan_memory = false);

/// Alternating blocks per measurement (each form runs one block per round).
const ROUNDS: usize = 10;

/// One captured form of a graph, as the comparison times it.
trait Timed {
    /// One replay and a device synchronize.
    fn replay_sync(&mut self, dev: &Device) -> anyhow::Result<()>;
    /// One replay between timing events: its GPU time in us.
    fn gpu_us(&self) -> anyhow::Result<f64>;
}

macro_rules! timed {
    ($($g:ident),*) => {$(
        impl Timed for $g {
            fn replay_sync(&mut self, dev: &Device) -> anyhow::Result<()> {
                self.replay()?;
                Ok(dev.synchronize()?)
            }
            fn gpu_us(&self) -> anyhow::Result<f64> {
                let graph = self.graph().ok_or_else(|| anyhow::anyhow!("{} is captured", stringify!($g)))?;
                Ok(f64::from(graph.replay_timed()?) * 1e3)
            }
        }
    )*};
}
timed!(
    TrainStepPlanned,
    TrainStepUnplanned,
    PpoUpdatePlanned,
    PpoUpdateUnplanned,
    PerceptionPlanned,
    PerceptionUnplanned
);

/// The bytes of both forms of `$planned`/`$unplanned` as figures, and the planned buffers.
macro_rules! bytes {
    ($report:expr, $tag:expr, $planned:ident, $unplanned:ident) => {{
        let (report, tag): (&mut Report, &str) = ($report, $tag);
        report.add(format!("kgraph_memplan_{tag}_planned_bytes"), $planned::PLANNED_BYTES as f64, "B");
        report.add(format!("kgraph_memplan_{tag}_unplanned_bytes"), $planned::UNPLANNED_BYTES as f64, "B");
        report.add(format!("kgraph_memplan_{tag}_bytes_without_plan"), $planned::BYTES_WITHOUT_PLAN as f64, "B");
        // The opted-out form: no arena, every buffer its own allocation.
        report.add(format!("kgraph_memplan_{tag}_opted_out_planned_bytes"), $unplanned::PLANNED_BYTES as f64, "B");
        report.add(format!("kgraph_memplan_{tag}_opted_out_unplanned_bytes"), $unplanned::UNPLANNED_BYTES as f64, "B");
        report.add(format!("kgraph_memplan_{tag}_planned_buffers"), $planned::MEMORY_PLAN.len() as f64, "buffers");
        for (name, offset, size) in $planned::MEMORY_PLAN {
            println!("  {tag} arena: {name} at {offset} ({size} B)");
        }
        let device_bytes = ($planned::PLANNED_BYTES + $planned::UNPLANNED_BYTES) as f64;
        let opted_out = ($unplanned::PLANNED_BYTES + $unplanned::UNPLANNED_BYTES) as f64;
        report.add(format!("ratio_memplan_{tag}_device_bytes_planned_vs_unplanned"), device_bytes / opted_out, "x");
    }};
}

pub fn run(dev: &Device, iters: usize, report: &mut Report) -> anyhow::Result<()> {
    train_step(dev, iters, report)?;
    ppo_minibatch(dev, iters, report)?;
    perception(dev, iters, report)
}

/// The train step on one batch at schedule step 1 (as `train`'s K-step comparison feeds it).
fn train_step(dev: &Device, iters: usize, report: &mut Report) -> anyhow::Result<()> {
    bytes!(report, "train_step", TrainStepPlanned, TrainStepUnplanned);
    let w = ModelWeights::init(7);
    let (mut books, mut batch) = (BookStream::independent(3), TrainBatch::new());
    batch.fill(&mut books)?;
    macro_rules! setup {
        ($g:ident) => {{
            let mut g = $g::new(dev)?;
            g.load_w_g(&w.w_g)?;
            g.load_b_g(&w.b_g)?;
            g.load_w_t(&w.w_t)?;
            g.load_b_t(&w.b_t)?;
            g.load_w_h(&w.w_h)?;
            g.load_b_h(&w.b_h)?;
            g.upload_snap(&batch.snap)?;
            g.upload_dt(&batch.dt)?;
            g.upload_targets(&batch.targets)?;
            let correction = |beta: f32| (1.0 - f64::from(beta)) as f32;
            g.upload_schedule(&[1e-3, correction(g.beta1()), correction(g.beta2())])?;
            g.capture()?;
            g
        }};
    }
    let (mut planned, mut unplanned) = (setup!(TrainStepPlanned), setup!(TrainStepUnplanned));
    compare(dev, "train_step", iters, &mut planned, &mut unplanned, report)?;
    // Both ran the same replays on the same data: the same loss, bit for bit.
    let (a, b) = (planned.download_loss()?[0], unplanned.download_loss()?[0]);
    anyhow::ensure!(a.is_finite() && a.to_bits() == b.to_bits(), "train step loss: planned {a}, unplanned {b}");
    Ok(())
}

/// One minibatch of the PPO update on `ppo`'s synthetic rollout (the counters wrap around the
/// permutation, so any number of replays is valid).
fn ppo_minibatch(dev: &Device, iters: usize, report: &mut Report) -> anyhow::Result<()> {
    bytes!(report, "ppo_minibatch", PpoUpdatePlanned, PpoUpdateUnplanned);
    let ro = Rollout::new(5);
    let (mut planned, mut unplanned) = (PpoUpdatePlanned::new(dev)?, PpoUpdateUnplanned::new(dev)?);
    load_update!(planned, ro);
    load_update!(unplanned, ro);
    planned.capture()?;
    unplanned.capture()?;
    compare(dev, "ppo_minibatch", iters, &mut planned, &mut unplanned, report)?;
    let (a, b) = (planned.download_stats()?, unplanned.download_stats()?);
    let same = a.iter().zip(&b).all(|(x, y)| x.is_finite() && x.to_bits() == y.to_bits());
    anyhow::ensure!(same, "PPO stats: planned {a:?}, unplanned {b:?}");
    Ok(())
}

/// Graph A on one snapshot written once into its mapped pinned inputs (the state carries on).
fn perception(dev: &Device, iters: usize, report: &mut Report) -> anyhow::Result<()> {
    bytes!(report, "perception", PerceptionPlanned, PerceptionUnplanned);
    let w = ModelWeights::init(7);
    let mut snap = [0.0f32; SNAP_LEN];
    let tick = BookStream::new(2024).next_into(&mut snap);
    macro_rules! setup {
        ($g:ident) => {{
            let mut g = $g::new(dev)?;
            g.load_w_g(&w.w_g)?;
            g.load_b_g(&w.b_g)?;
            g.load_w_t(&w.w_t)?;
            g.load_b_t(&w.b_t)?;
            g.load_w_h(&w.w_h)?;
            g.load_b_h(&w.b_h)?;
            g.load_p(&w.p)?;
            g.load_c(&w.c)?;
            g.write_snap(&snap)?;
            g.write_dt(&[tick.dt])?;
            g.capture()?;
            g
        }};
    }
    let (mut planned, mut unplanned) = (setup!(PerceptionPlanned), setup!(PerceptionUnplanned));
    compare(dev, "perception", iters, &mut planned, &mut unplanned, report)?;
    let (a, b) = (planned.read_probs()?, unplanned.read_probs()?);
    let same = a.iter().zip(&b).all(|(x, y)| x.is_finite() && x.to_bits() == y.to_bits());
    anyhow::ensure!(same, "Graph A probs: planned {a:?}, unplanned {b:?}");
    Ok(())
}

/// GPU time and replay + sync of both forms, in `ROUNDS` rounds of one block each (planned,
/// then unplanned); each figure is the median of the blocks' medians. Both forms run the same
/// number of replays, so their states stay equal.
fn compare(
    dev: &Device,
    tag: &str,
    iters: usize,
    planned: &mut dyn Timed,
    unplanned: &mut dyn Timed,
    report: &mut Report,
) -> anyhow::Result<()> {
    let per_block = (iters / ROUNDS).max(50);
    let mut forms: [&mut dyn Timed; 2] = [planned, unplanned];
    for g in forms.iter_mut() {
        for _ in 0..per_block {
            g.replay_sync(dev)?;
        }
    }
    let (mut gpu, mut host): ([Vec<f64>; 2], [Vec<f64>; 2]) = Default::default();
    for _ in 0..ROUNDS {
        for (g, blocks) in forms.iter_mut().zip(gpu.iter_mut()) {
            let mut block = (0..per_block).map(|_| g.gpu_us()).collect::<anyhow::Result<Vec<_>>>()?;
            blocks.push(median(&mut block));
        }
        for (g, blocks) in forms.iter_mut().zip(host.iter_mut()) {
            blocks.push(median_us(per_block, || g.replay_sync(dev))?);
        }
    }
    for (what, mut blocks) in [("graph_gpu_time", gpu), ("replay_sync", host)] {
        let (p, u) = (median(&mut blocks[0]), median(&mut blocks[1]));
        report.add(format!("kgraph_memplan_{tag}_planned_{what}"), p, "us");
        report.add(format!("kgraph_memplan_{tag}_unplanned_{what}"), u, "us");
        report.add(format!("ratio_memplan_{tag}_{what}_planned_vs_unplanned"), p / u, "x");
    }
    Ok(())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
