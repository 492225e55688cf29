//! The PPO update (`graphs/ppo_update.toml`: one minibatch of 128 through the actor and critic
//! MLPs, the clipped loss, backward and AdamW) on a synthetic rollout: 32 replays of the
//! one-minibatch graph (one update: 4 epochs x 8 minibatches, one sync at the end), one launch of
//! the WHILE graph doing the same 32 iterations, and the per-node table of ONE iteration.
//!
//! `profile` shows a `[[while]]` as one row, so the table comes from `PpoUpdate`, the loop body
//! as its own graph: the same nodes, edges and PDL settings as one iteration of `PpoUpdateLoop`.
//! The PyTorch peer (`examples/bench/peers/ppo_update.py`) times the same update.

use kgraph::Device;
use kgraph_model::graphs::synthetic::Rng;
use kgraph_model::graphs::{PpoUpdate, PpoUpdateLoop};

use crate::report::{median_us, Report};

/// The PPO kernels' module at the path `graphs/ppo_update.toml` names (`crate::ppo::kernels`),
/// for the planned and unplanned structs `memplan` builds from that spec.
pub(crate) use kgraph_model::ppo::kernels;

/// Iterations (minibatches) of one PPO update.
const ITERATIONS: usize = PpoUpdate::N_PERM / PpoUpdate::MB;

/// A synthetic rollout of `N_ROLLOUT` samples: one-hot observations of 16 contexts, uniform
/// actions under a uniform old policy, unit-scale advantages and returns, and one shuffle of the
/// rollout per epoch. The kernels do the same work for any values; these keep every ratio and
/// gradient finite and non-trivial.
pub(crate) struct Rollout {
    pub(crate) obs: Vec<f32>,
    pub(crate) actions: Vec<i32>,
    pub(crate) old_log_probs: Vec<f32>,
    pub(crate) advantages: Vec<f32>,
    pub(crate) returns: Vec<f32>,
    pub(crate) perm: Vec<i32>,
}

impl Rollout {
    pub(crate) fn new(seed: u64) -> Self {
        let (n, n_obs, n_act) = (PpoUpdate::N_ROLLOUT, PpoUpdate::N_OBS, PpoUpdate::N_ACT);
        let mut rng = Rng::new(seed);
        let mut obs = vec![0.0f32; n * n_obs];
        for row in obs.chunks_mut(n_obs) {
            row[(rng.next_u64() % n_obs as u64) as usize] = 1.0;
        }
        let actions = (0..n).map(|_| (rng.next_u64() % n_act as u64) as i32).collect();
        let old_log_probs = vec![-(n_act as f32).ln(); n];
        let advantages = (0..n).map(|_| rng.normal() as f32).collect();
        let returns = (0..n).map(|_| rng.uniform(-1.0, 1.0) as f32).collect();
        let mut perm = Vec::with_capacity(PpoUpdate::N_PERM);
        for _ in 0..PpoUpdate::N_PERM / n {
            let mut p: Vec<i32> = (0..n as i32).collect();
            for i in (1..n).rev() {
                p.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
            }
            perm.extend(p);
        }
        Rollout { obs, actions, old_log_probs, advantages, returns, perm }
    }
}

/// Loads the same parameters and rollout into a PPO graph (`PpoUpdate`, `PpoUpdateLoop`, or
/// `memplan`'s structs of the same spec). Paths in full: `memplan` expands it too.
macro_rules! load_update {
    ($g:expr, $ro:expr) => {{
        use ::kgraph_model::{graphs::PpoUpdate, ppo::MlpLayout};
        let actor = MlpLayout::new(PpoUpdate::N_OBS, PpoUpdate::N_HID, PpoUpdate::N_ACT).init(11, 0.01);
        let critic = MlpLayout::new(PpoUpdate::N_OBS, PpoUpdate::N_HID, 1).init(12, 1.0);
        $g.load_actor(&actor)?;
        $g.load_critic(&critic)?;
        $g.upload_obs(&$ro.obs)?;
        $g.upload_actions(&$ro.actions)?;
        $g.upload_old_log_probs(&$ro.old_log_probs)?;
        $g.upload_advantages(&$ro.advantages)?;
        $g.upload_returns(&$ro.returns)?;
        $g.upload_perm(&$ro.perm)?;
        $g.load_counters(&[0, 1])?;
    }};
}
pub(crate) use load_update;

pub fn run(dev: &Device, iters: usize, report: &mut Report) -> anyhow::Result<()> {
    let ro = Rollout::new(5);
    let mut one = PpoUpdate::new(dev)?;
    load_update!(one, ro);
    one.capture()?;
    let rounds = (iters / 10).max(30);
    let t = median_us(rounds, || {
        one.load_counters(&[0, 1])?;
        for _ in 0..ITERATIONS {
            one.replay()?;
        }
        Ok(dev.synchronize()?)
    })?;
    report.add("kgraph_ppo_update_32_replays", t, "us");
    let graph = one.graph().ok_or_else(|| anyhow::anyhow!("the PPO minibatch graph is captured"))?;
    let mut gpu = Vec::with_capacity(iters);
    for _ in 0..iters {
        gpu.push(f64::from(graph.replay_timed()?) * 1e3);
    }
    gpu.sort_by(f64::total_cmp);
    report.add("kgraph_ppo_minibatch_graph_gpu_time", gpu[gpu.len() / 2], "us");
    // Per-node GPU times of one iteration (serialized, evented): where the update's time goes.
    let profile = one.profile(iters)?;
    print!("{profile}");
    for row in &profile.rows {
        report.add(format!("kgraph_ppo_node_{}_gpu_time", row.node), row.us, "us");
    }
    let stats = one.download_stats()?;
    anyhow::ensure!(stats.iter().all(|v| v.is_finite()), "PPO stats after the replays: {stats:?}");

    let mut lp = PpoUpdateLoop::new(dev)?;
    load_update!(lp, ro);
    lp.capture()?;
    let t = median_us(rounds, || {
        lp.load_counters(&[0, 1])?;
        lp.replay()?;
        Ok(dev.synchronize()?)
    })?;
    report.add("kgraph_ppo_update_one_while_launch", t, "us");
    report.ratio("ratio_ppo_while_vs_replays", "kgraph_ppo_update_one_while_launch", "kgraph_ppo_update_32_replays");
    Ok(())
}
