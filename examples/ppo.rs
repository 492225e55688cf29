//! PPO on a contextual bandit with a known optimum, trained by the captured minibatch-update graph.
//!
//!     cargo run --release --example ppo [-- --updates N (150)] [--lr LR] [--seed S] [--out DIR] [--bench]
//!
//! The environment: at every step each of 64 environments shows one of 16 contexts (uniformly
//! at random, as a one-hot observation); the agent picks one of 4 actions and gets the reward
//! `r(c, a)` plus uniform noise in ±0.1, and the episode ends (a one-step episode). Each
//! context has one best action with reward 1.0; the others pay 0.1, 0.3 or 0.5. So the optimal
//! policy is known (the best action in every context) and its expected return is exactly 1.0;
//! a uniformly random policy gets about 0.47.
//!
//! Each PPO update collects a rollout of 16 steps × 64 environments = 1024 samples
//! (`PpoUpdate::N_ROLLOUT`): the actor and critic kernels of `kgraph_model::ppo` run eagerly on
//! the GPU over the rollout's observations (the graph's own parameter buffers), the host samples
//! actions and rewards, `ppo_gae` computes the advantages and returns on the GPU (γ = 0.99,
//! λ = 0.95; every step is terminal here, so they reduce to r − V and r). Then the update runs
//! as ONE launch of `PpoUpdateLoop` (`graphs/ppo_update.toml` inside a conditional WHILE node
//! of 32 iterations): 4 epochs × 8 minibatches of 128, each iteration one minibatch (gather,
//! advantage normalisation, forward, clipped loss, backward, AdamW), with its minibatch counter
//! and AdamW schedule advanced on the device.
//!
//! Prints one line per update (mean return, the policy's mean probability of the best action,
//! and the last minibatch's loss statistics), an ASCII plot of the return per update, and writes
//! `ppo_return.csv` into the output folder (default `out/`). Exits non-zero when the mean
//! return of the last 10 updates is below 90% of the optimum, or without a GPU (one line).
//!
//! `--bench` then times the update (the figure the PyTorch peer
//! `examples/bench/peers/ppo_update.py` is compared with): one WHILE launch and one stream
//! synchronisation, against 32 replays of the one-minibatch `PpoUpdate` (PDL on and off), and
//! the GPU time of one minibatch replay, printed as `name value unit` lines.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use kgraph::rng::SplitMix64;
use kgraph::{Device, DeviceBuffer};
use kgraph_model::graphs::{PpoUpdate, PpoUpdateLoop};
use kgraph_model::ppo::{launch, Kernels, MlpLayout, ACT_IDENTITY, ACT_TANH};

const N_OBS: usize = PpoUpdate::N_OBS;
const N_ACT: usize = PpoUpdate::N_ACT;
const N_HID: usize = PpoUpdate::N_HID;
/// Environments stepped in parallel.
const N_ENVS: usize = 64;
/// Steps per environment and rollout.
const T_STEPS: usize = PpoUpdate::N_ROLLOUT / N_ENVS;
/// Replays of the minibatch graph per PPO update (epochs × minibatches).
const REPLAYS: usize = PpoUpdate::N_PERM / PpoUpdate::MB;
const EPOCHS: usize = PpoUpdate::N_PERM / PpoUpdate::N_ROLLOUT;
const GAMMA: f32 = 0.99;
const LAMBDA: f32 = 0.95;
/// The expected return of the optimal policy (the best action's reward; the noise has mean 0).
const OPTIMUM: f64 = 1.0;
/// The share of the optimum the mean return of the last `WINDOW` updates must reach.
const TARGET: f64 = 0.9;
const WINDOW: usize = 10;
const NOISE: f64 = 0.1;

const _: () = assert!(N_ENVS * T_STEPS == PpoUpdate::N_ROLLOUT && N_OBS == 16 && N_ACT == 4);

struct Options {
    updates: usize,
    lr: f32,
    seed: u64,
    out: PathBuf,
    bench: bool,
}

/// The contextual bandit: `reward[c][a]`, with one best action per context.
struct Bandit {
    reward: [[f32; N_ACT]; N_OBS],
    best: [usize; N_OBS],
}

impl Bandit {
    fn new() -> Self {
        let (mut reward, mut best) = ([[0.0; N_ACT]; N_OBS], [0; N_OBS]);
        for c in 0..N_OBS {
            best[c] = (7 * c + 3) % N_ACT; // every action is the best one in 4 contexts
            for a in 0..N_ACT {
                reward[c][a] = if a == best[c] { OPTIMUM as f32 } else { [0.1, 0.3, 0.5][(c + 2 * a) % 3] };
            }
        }
        Bandit { reward, best }
    }

    /// The expected return of the uniformly random policy.
    fn random_return(&self) -> f64 {
        self.reward.iter().flatten().map(|&r| f64::from(r)).sum::<f64>() / (N_OBS * N_ACT) as f64
    }

    fn step(&self, c: usize, a: usize, rng: &mut SplitMix64) -> f32 {
        (f64::from(self.reward[c][a]) + NOISE * (2.0 * rng.unit() - 1.0)) as f32
    }
}

/// Device buffers of the rollout forward over `(T + 1) * N_ENVS` observations.
struct Rollout {
    rows: usize,
    obs: DeviceBuffer<f32>,
    h0: DeviceBuffer<f32>,
    h1: DeviceBuffer<f32>,
    logits: DeviceBuffer<f32>,
    log_probs: DeviceBuffer<f32>,
    probs: DeviceBuffer<f32>,
    entropy: DeviceBuffer<f32>,
    values: DeviceBuffer<f32>,
    rewards: DeviceBuffer<f32>,
    dones: DeviceBuffer<f32>,
    advantages: DeviceBuffer<f32>,
    returns: DeviceBuffer<f32>,
}

impl Rollout {
    fn new(dev: &Device) -> kgraph::Result<Self> {
        let rows = (T_STEPS + 1) * N_ENVS;
        let n = T_STEPS * N_ENVS;
        Ok(Rollout {
            rows,
            obs: dev.alloc_zeros(rows * N_OBS)?,
            h0: dev.alloc_zeros(rows * N_HID)?,
            h1: dev.alloc_zeros(rows * N_HID)?,
            logits: dev.alloc_zeros(rows * N_ACT)?,
            log_probs: dev.alloc_zeros(rows * N_ACT)?,
            probs: dev.alloc_zeros(rows * N_ACT)?,
            entropy: dev.alloc_zeros(rows)?,
            values: dev.alloc_zeros(rows)?,
            rewards: dev.alloc_zeros(n)?,
            dones: dev.alloc_zeros(n)?,
            advantages: dev.alloc_zeros(n)?,
            returns: dev.alloc_zeros(n)?,
        })
    }

    /// One MLP (`params`, layout `net`) over `self.obs`: hidden layers into h0, h1, the output
    /// layer into `out`.
    fn mlp(
        &mut self,
        dev: &Device,
        k: &Kernels,
        params: &DeviceBuffer<f32>,
        net: &MlpLayout,
        out_is_values: bool,
    ) -> kgraph::Result<()> {
        let s = dev.stream();
        let rows = self.rows as i32;
        let [l0, l1, l2] = net.layers;
        let (n_in, n_hid) = (l0.n_in as i32, l0.n_out as i32);
        let (n_out, rows_u) = (l2.n_out, self.rows);
        k.ppo_linear_forward.launch(
            s,
            launch::linear_forward(rows_u, l0.n_out),
            params,
            &self.obs,
            l0.w_off(),
            rows,
            n_in,
            n_hid,
            ACT_TANH,
            &mut self.h0,
        )?;
        k.ppo_linear_forward.launch(
            s,
            launch::linear_forward(rows_u, l1.n_out),
            params,
            &self.h0,
            l1.w_off(),
            rows,
            n_hid,
            n_hid,
            ACT_TANH,
            &mut self.h1,
        )?;
        let y = if out_is_values { &mut self.values } else { &mut self.logits };
        k.ppo_linear_forward.launch(
            s,
            launch::linear_forward(rows_u, n_out),
            params,
            &self.h1,
            l2.w_off(),
            rows,
            n_hid,
            n_out as i32,
            ACT_IDENTITY,
            y,
        )
    }
}

/// One update's rollout on the host: what the graph takes, plus what the example reports.
struct Batch {
    obs: Vec<f32>,
    actions: Vec<i32>,
    old_log_probs: Vec<f32>,
    rewards: Vec<f32>,
    best_prob: f64,
}

fn main() -> ExitCode {
    let opts = match parse_args() {
        Ok(opts) => opts,
        Err(msg) => {
            eprintln!("ppo: {msg}");
            return ExitCode::FAILURE;
        }
    };
    match run(&opts) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("ppo: {e}");
            ExitCode::FAILURE
        }
    }
}

fn parse_args() -> Result<Options, String> {
    let mut opts = Options { updates: 150, lr: 1e-3, seed: 1, out: PathBuf::from("out"), bench: false };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--updates" => {
                let v = value()?;
                opts.updates = v
                    .parse()
                    .ok()
                    .filter(|&n| n >= WINDOW)
                    .ok_or(format!("--updates: `{v}` is not a count of at least {WINDOW}"))?;
            }
            "--lr" => {
                let v = value()?;
                opts.lr = v
                    .parse()
                    .ok()
                    .filter(|&x: &f32| x > 0.0 && x.is_finite())
                    .ok_or(format!("--lr: `{v}` is not a positive rate"))?;
            }
            "--seed" => {
                let v = value()?;
                opts.seed = v.parse().map_err(|_| format!("--seed: `{v}` is not an integer"))?;
            }
            "--out" => opts.out = PathBuf::from(value()?),
            "--bench" => opts.bench = true,
            other => {
                return Err(format!(
                    "unknown argument `{other}` (use --updates N, --lr LR, --seed S, --out DIR, --bench)"
                ))
            }
        }
    }
    Ok(opts)
}

fn run(opts: &Options) -> anyhow::Result<bool> {
    let dev = Device::new(0)?;
    let k = Kernels::load(&dev)?;
    let (actor_net, critic_net) = (MlpLayout::new(N_OBS, N_HID, N_ACT), MlpLayout::new(N_OBS, N_HID, 1));
    let mut g = PpoUpdateLoop::new(&dev)?;
    g.load_actor(&actor_net.init(opts.seed, 0.01))?;
    g.load_critic(&critic_net.init(opts.seed + 1, 1.0))?;
    g.set_lr(opts.lr)?;
    g.capture()?;
    let bandit = Bandit::new();
    println!(
        "ppo: {} | PpoUpdateLoop built: {} kernel nodes in one WHILE node; {} updates of {} samples ({} envs x {} steps), \
         {} epochs x {} minibatches of {} = {} iterations in one launch each, lr {}",
        dev.name()?,
        PpoUpdate::NODES.len(),
        opts.updates,
        PpoUpdate::N_ROLLOUT,
        N_ENVS,
        T_STEPS,
        EPOCHS,
        PpoUpdate::N_ROLLOUT / PpoUpdate::MB,
        PpoUpdate::MB,
        REPLAYS,
        opts.lr
    );
    println!(
        "bandit: {N_OBS} contexts x {N_ACT} actions, optimal return {OPTIMUM:.3}, uniform policy {:.3}, target {:.3}",
        bandit.random_return(),
        TARGET * OPTIMUM
    );
    println!("update  return  p(best)  entropy  approx_kl  clip_frac  loss");
    let mut rng = SplitMix64::new(opts.seed ^ 0x5EED);
    let mut ro = Rollout::new(&dev)?;
    let mut contexts: Vec<usize> = (0..N_ENVS).map(|_| (rng.next_u64() % N_OBS as u64) as usize).collect();
    let mut rows = Vec::with_capacity(opts.updates);
    let mut adam_step = 0i32;
    for update in 1..=opts.updates {
        let batch = collect(
            &dev,
            &k,
            (g.actor(), g.critic()),
            &mut ro,
            &bandit,
            &mut contexts,
            &mut rng,
            &actor_net,
            &critic_net,
        )?;
        let ret = batch.rewards.iter().map(|&r| f64::from(r)).sum::<f64>() / batch.rewards.len() as f64;
        g.upload_obs(&batch.obs)?;
        g.upload_actions(&batch.actions)?;
        g.upload_old_log_probs(&batch.old_log_probs)?;
        g.upload_advantages(&dev.download(&ro.advantages)?)?;
        g.upload_returns(&dev.download(&ro.returns)?)?;
        g.upload_perm(&shuffles(&mut rng))?;
        g.load_counters(&[0, adam_step])?;
        g.replay()?;
        adam_step += REPLAYS as i32;
        let stats = g.download_stats()?;
        let counters = g.download_counters()?;
        anyhow::ensure!(
            counters == [REPLAYS as i32, adam_step],
            "update {update}: counters {counters:?} after one launch of {REPLAYS} iterations"
        );
        anyhow::ensure!(
            stats.iter().all(|v| v.is_finite()) && ret.is_finite(),
            "update {update}: return {ret}, stats {stats:?}"
        );
        println!(
            "{update:>6}  {ret:.4}  {:.4}   {:.4}   {:.5}    {:.4}     {:+.4}",
            batch.best_prob, stats[3], stats[4], stats[5], stats[0]
        );
        rows.push((ret, batch.best_prob, stats));
    }
    let returns: Vec<f64> = rows.iter().map(|r| r.0).collect();
    println!("{}", ascii_plot(&returns, bandit.random_return()));
    std::fs::create_dir_all(&opts.out)?;
    let mut csv =
        String::from("update,return,best_action_prob,entropy,approx_kl,clip_fraction,loss,policy_loss,value_loss\n");
    for (i, (ret, p, s)) in rows.iter().enumerate() {
        let _ = writeln!(csv, "{},{ret},{p},{},{},{},{},{},{}", i + 1, s[3], s[4], s[5], s[0], s[1], s[2]);
    }
    let path = opts.out.join("ppo_return.csv");
    std::fs::write(&path, csv)?;
    let last = returns[returns.len() - WINDOW..].iter().sum::<f64>() / WINDOW as f64;
    let first = returns[..WINDOW].iter().sum::<f64>() / WINDOW as f64;
    println!(
        "mean return first {WINDOW}: {first:.4}, last {WINDOW}: {last:.4} = {:.1}% of the optimum {OPTIMUM:.3} (target {:.0}%)",
        100.0 * last / OPTIMUM,
        100.0 * TARGET
    );
    println!("wrote {}", path.display());
    if opts.bench {
        bench(&dev, &g)?;
    }
    let ok = last >= TARGET * OPTIMUM;
    if !ok {
        eprintln!(
            "ppo: the return did not reach {:.0}% of the optimum ({last:.4} < {:.4})",
            100.0 * TARGET,
            TARGET * OPTIMUM
        );
    }
    Ok(ok)
}

/// Steps the environments for one rollout with the current policy; leaves the GAE advantages
/// and returns in `ro.advantages` / `ro.returns`.
#[allow(clippy::too_many_arguments)]
fn collect(
    dev: &Device,
    k: &Kernels,
    (actor, critic): (&kgraph::DeviceBuffer<f32>, &kgraph::DeviceBuffer<f32>),
    ro: &mut Rollout,
    bandit: &Bandit,
    contexts: &mut [usize],
    rng: &mut SplitMix64,
    actor_net: &MlpLayout,
    critic_net: &MlpLayout,
) -> anyhow::Result<Batch> {
    // Observations of steps 0..=T (step T's are the next rollout's first: the bootstrap row).
    let mut ctx = Vec::with_capacity(ro.rows);
    ctx.extend_from_slice(contexts);
    while ctx.len() < ro.rows {
        ctx.push((rng.next_u64() % N_OBS as u64) as usize);
    }
    contexts.copy_from_slice(&ctx[T_STEPS * N_ENVS..]);
    let mut obs = vec![0.0f32; ro.rows * N_OBS];
    for (row, &c) in ctx.iter().enumerate() {
        obs[row * N_OBS + c] = 1.0;
    }
    dev.upload_into(&obs, &mut ro.obs)?;
    ro.mlp(dev, k, actor, actor_net, false)?;
    let rows = ro.rows;
    k.ppo_policy_head.launch(
        dev.stream(),
        launch::per_row(rows),
        &ro.logits,
        rows as i32,
        N_ACT as i32,
        &mut ro.log_probs,
        &mut ro.probs,
        &mut ro.entropy,
    )?;
    ro.mlp(dev, k, critic, critic_net, true)?;
    let (probs, log_probs) = (dev.download(&ro.probs)?, dev.download(&ro.log_probs)?);
    let n = T_STEPS * N_ENVS;
    let (mut actions, mut old, mut rewards) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let mut best_prob = 0.0;
    for (i, &c) in ctx.iter().enumerate().take(n) {
        let p = &probs[i * N_ACT..(i + 1) * N_ACT];
        let a = sample(p, rng.unit());
        actions.push(a as i32);
        old.push(log_probs[i * N_ACT + a]);
        rewards.push(bandit.step(c, a, rng));
        best_prob += f64::from(p[bandit.best[c]]);
    }
    // A bandit step ends its episode: every step is terminal.
    dev.upload_into(&rewards, &mut ro.rewards)?;
    dev.upload_into(&vec![1.0f32; n], &mut ro.dones)?;
    k.ppo_gae.launch(
        dev.stream(),
        launch::gae(N_ENVS),
        &ro.rewards,
        &ro.values,
        &ro.dones,
        GAMMA,
        LAMBDA,
        T_STEPS as i32,
        N_ENVS as i32,
        &mut ro.advantages,
        &mut ro.returns,
    )?;
    obs.truncate(n * N_OBS);
    Ok(Batch { obs, actions, old_log_probs: old, rewards, best_prob: best_prob / n as f64 })
}

/// An action drawn from `p` with the uniform number `u` (the last action if rounding leaves
/// the cumulative sum below `u`).
fn sample(p: &[f32], u: f64) -> usize {
    let mut acc = 0.0;
    for (a, &pa) in p.iter().enumerate() {
        acc += f64::from(pa);
        if u < acc {
            return a;
        }
    }
    p.len() - 1
}

/// `EPOCHS` independent shuffles of `0..N_ROLLOUT` (Fisher–Yates), one after the other.
fn shuffles(rng: &mut SplitMix64) -> Vec<i32> {
    let n = PpoUpdate::N_ROLLOUT;
    let mut perm = Vec::with_capacity(PpoUpdate::N_PERM);
    for _ in 0..EPOCHS {
        let mut p: Vec<i32> = (0..n as i32).collect();
        for i in (1..n).rev() {
            p.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
        }
        perm.extend(p);
    }
    perm
}

/// The return per update as a 16-row ASCII plot from 0 to the optimum, with the target and the
/// uniform policy's return marked; updates are bucketed (mean) to at most 100 columns.
fn ascii_plot(returns: &[f64], random: f64) -> String {
    const ROWS: usize = 16;
    let cols = returns.len().min(100);
    let bucket = |c: usize| {
        let (from, to) = (c * returns.len() / cols, ((c + 1) * returns.len() / cols).max(c * returns.len() / cols + 1));
        returns[from..to].iter().sum::<f64>() / (to - from) as f64
    };
    let level = |v: f64| ((v / OPTIMUM).clamp(0.0, 1.0) * ROWS as f64).round() as usize;
    let (target_row, random_row) = (level(TARGET * OPTIMUM), level(random));
    let per = returns.len() as f64 / cols as f64;
    let mut s = format!("return per update (0 .. optimum {OPTIMUM:.2}; {per:.1} updates per column, mean)\n");
    for r in (0..=ROWS).rev() {
        let label = r as f64 / ROWS as f64 * OPTIMUM;
        let _ = write!(s, "{label:5.2} |");
        for c in 0..cols {
            let v = level(bucket(c));
            s.push(if v == r {
                '*'
            } else if r == target_row {
                '-'
            } else if r == random_row {
                '.'
            } else {
                ' '
            });
        }
        let note = if r == target_row {
            " target (90%)"
        } else if r == random_row {
            " uniform policy"
        } else {
            ""
        };
        let _ = writeln!(s, "{note}");
    }
    let _ = write!(s, "      +{}\n       update 1 .. {}", "-".repeat(cols), returns.len());
    s
}

/// Times the update as the example runs it: `REPLAYS` replays of the captured minibatch graph
/// and one stream synchronisation (the rollout already uploaded), PDL on and off, and the GPU
/// time of one minibatch replay. The counters are not reset between timed updates (the gather
/// takes minibatch k modulo N_PERM / MB, so every update covers the same 32 minibatches).
/// Times one PPO update (32 minibatches) on the trained parameters: one launch of the WHILE
/// graph against 32 replays of the one-minibatch graph (PDL on and off), plus the GPU time of one
/// minibatch replay. The counters are reset before each timed update, so every run does the same
/// work.
fn bench(dev: &Device, lp: &PpoUpdateLoop) -> anyhow::Result<()> {
    let iters = 300;
    println!("device {}", dev.name()?);
    let mut one = PpoUpdate::new(dev)?;
    // The trained parameters, the last rollout and its shuffles, copied from `lp` into `$g`.
    macro_rules! copy_update_state {
        ($g:ident) => {
            $g.load_actor(&dev.download(lp.actor())?)?;
            $g.load_critic(&dev.download(lp.critic())?)?;
            $g.upload_obs(&dev.download(lp.obs())?)?;
            $g.upload_actions(&dev.download(lp.actions())?)?;
            $g.upload_old_log_probs(&dev.download(lp.old_log_probs())?)?;
            $g.upload_advantages(&dev.download(lp.advantages())?)?;
            $g.upload_returns(&dev.download(lp.returns())?)?;
            $g.upload_perm(&dev.download(lp.perm())?)?;
            $g.set_lr(lp.lr())?;
        };
    }
    copy_update_state!(one);
    let median = |mut t: Vec<f64>| {
        t.drain(..t.len() / 6);
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    };
    for pdl in [true, false] {
        one.set_pdl_enabled(pdl);
        one.capture()?;
        let mut t = Vec::with_capacity(iters);
        for _ in 0..iters {
            one.load_counters(&[0, 1])?;
            let t0 = Instant::now();
            for _ in 0..REPLAYS {
                one.replay()?;
            }
            dev.synchronize()?;
            t.push(t0.elapsed().as_secs_f64() * 1e6);
        }
        let suffix = if pdl { "" } else { "_no_pdl" };
        println!("kgraph_ppo_update_replay_loop{suffix} {:.3} us", median(t));
        let graph = one.graph().ok_or_else(|| anyhow::anyhow!("the update graph is captured"))?;
        let gpu =
            (0..iters).map(|_| graph.replay_timed().map(|ms| f64::from(ms) * 1e3)).collect::<Result<Vec<_>, _>>()?;
        println!("kgraph_ppo_minibatch_graph_gpu_time{suffix} {:.3} us", median(gpu));
    }
    let mut lp2 = PpoUpdateLoop::new(dev)?;
    copy_update_state!(lp2);
    lp2.capture()?;
    let mut t = Vec::with_capacity(iters);
    for _ in 0..iters {
        lp2.load_counters(&[0, 1])?;
        let t0 = Instant::now();
        lp2.replay()?;
        dev.synchronize()?;
        t.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    println!("kgraph_ppo_update_one_while_launch {:.3} us", median(t));
    let stats = lp2.download_stats()?;
    anyhow::ensure!(stats.iter().all(|v| v.is_finite()), "stats after the bench: {stats:?}");
    println!("kgraph_ppo_update_kernels {} count", PpoUpdate::NODES.len() * REPLAYS);
    Ok(())
}
