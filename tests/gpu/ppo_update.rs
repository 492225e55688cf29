//! The rest of the PPO suite (`ppo` has the policy head and the loss): finite-difference checks of
//! the linear backward through its GPU forward, GAE against its closed forms for λ = 0, γ = 0 and
//! γ = λ = 1, advantage normalisation (mean 0, std 1, order kept), and the update graph
//! (`graphs/ppo_update.toml`) against its eager run and its one-launch WHILE form.

use kgraph::gradcheck::{sample_coords, weighted_sum, GradCheck};
use kgraph::{Device, DeviceBuffer, Result};
use kgraph_model::graphs::{PpoUpdate, PpoUpdateLoop};
use kgraph_model::ppo::{launch, Kernels, MlpLayout, ACT_IDENTITY, ACT_TANH};

use super::common::device;
use super::model_util::{assert_all_finite, assert_bitwise_eq, down, up, zeros, Lcg};
use super::ppo::kernels;

// ---- linear layers --------------------------------------------------------------------------

/// One layer at offset 5 of an arena with 7 padding floats after it.
struct LinearCase {
    batch: usize,
    n_in: usize,
    n_out: usize,
    act: i32,
    off: usize,
    arena: usize,
}

impl LinearCase {
    fn new(batch: usize, n_in: usize, n_out: usize, act: i32) -> Self {
        let off = 5;
        LinearCase { batch, n_in, n_out, act, off, arena: off + n_out * (n_in + 1) + 7 }
    }

    fn forward(
        &self,
        dev: &Device,
        k: &Kernels,
        p: &DeviceBuffer<f32>,
        x: &DeviceBuffer<f32>,
        y: &mut DeviceBuffer<f32>,
    ) -> Result<()> {
        let cfg = launch::linear_forward(self.batch, self.n_out);
        let (b, i, o) = (self.batch as i32, self.n_in as i32, self.n_out as i32);
        k.ppo_linear_forward.launch(dev.stream(), cfg, p, x, self.off as i32, b, i, o, self.act, y)
    }
}

fn gradcheck_linear(case: LinearCase, seed: u64) {
    let dev = device();
    let k = kernels(&dev);
    let mut rng = Lcg::new(seed);
    let LinearCase { batch, n_in, n_out, act, off, arena } = case;
    let scale = 2.0 / (n_in as f32).sqrt();
    let mut params = up(&dev, &rng.vec(arena, -scale, scale));
    let mut x = up(&dev, &rng.vec(batch * n_in, -1.0, 1.0));
    let cot = rng.vec(batch * n_out, -1.0, 1.0);
    let mut y = zeros(&dev, batch * n_out);
    case.forward(&dev, &k, &params, &x, &mut y).unwrap();
    // NaN sentinels: the kernels must write every float of the layer and nothing else.
    let mut grads = up(&dev, &vec![f32::NAN; arena]);
    let mut g_x = up(&dev, &vec![f32::NAN; batch * n_in]);
    let g_y = up(&dev, &cot);
    let (b, i, o) = (batch as i32, n_in as i32, n_out as i32);
    k.ppo_linear_backward
        .launch(
            dev.stream(),
            launch::linear_backward(batch, n_in, n_out),
            &params,
            &x,
            &y,
            &g_y,
            off as i32,
            b,
            i,
            o,
            act,
            &mut g_x,
            &mut grads,
        )
        .unwrap();
    let (g_p, g_xh) = (down(&dev, &grads), down(&dev, &g_x));
    let layer = off..off + n_out * (n_in + 1);
    assert_all_finite("g_x", &g_xh);
    assert_all_finite("the layer's gradient", &g_p[layer.clone()]);
    assert!(g_p[..off].iter().chain(&g_p[layer.end..]).all(|v| v.is_nan()), "written outside the layer");
    // The params-only kernel computes the same weight gradient (the same code) and no g_x.
    let mut grads2 = up(&dev, &vec![f32::NAN; arena]);
    k.ppo_linear_backward_params
        .launch(
            dev.stream(),
            launch::linear_backward_params(n_in, n_out),
            &x,
            &y,
            &g_y,
            off as i32,
            b,
            i,
            o,
            act,
            &mut grads2,
        )
        .unwrap();
    assert_bitwise_eq("params-only backward", &down(&dev, &grads2), &g_p);
    // Loss Σ cot ⊙ y; GradCheck's defaults as in the heads' check (tests/gpu/model_heads.rs):
    // a weight moves `batch` outputs, whose f32 rounding (√batch · 6e-8 · |c y|) over 2ε stays
    // near 1e-5, and tanh''' ≤ 2 gives a truncation ≤ 1e-4 · 2 √batch / 6 ≈ 2e-4 (random-sign
    // cotangents), 10× below abs_tol.
    let coords: Vec<usize> = sample_coords(layer.len(), 24, seed).into_iter().map(|c| c + off).collect();
    let report = GradCheck::default()
        .check(&dev, "params", &mut params, &g_p, &coords, |p| {
            case.forward(&dev, &k, p, &x, &mut y)?;
            weighted_sum(&dev, &y, &cot)
        })
        .unwrap();
    report.assert_passed();
    let coords = sample_coords(batch * n_in, 24, seed + 1);
    let report = GradCheck::default()
        .check(&dev, "x", &mut x, &g_xh, &coords, |x| {
            case.forward(&dev, &k, &params, x, &mut y)?;
            weighted_sum(&dev, &y, &cot)
        })
        .unwrap();
    report.assert_passed();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn ppo_linear_backward_matches_finite_differences_tanh() {
    gradcheck_linear(LinearCase::new(37, 19, 23, ACT_TANH), 801);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn ppo_linear_backward_matches_finite_differences_identity() {
    // 300 rows × 64 inputs: the g_x role spans 75 blocks, the weight role 1 block of 65 threads.
    gradcheck_linear(LinearCase::new(300, 64, 1, ACT_IDENTITY), 802);
}

// ---- GAE ------------------------------------------------------------------------------------

/// A rollout with dyadic values (multiples of 1/16): every sum and product the scan and the
/// invariants form is exact in f32, so the comparisons are exact.
struct Rollout {
    t: usize,
    b: usize,
    rewards: Vec<f32>,
    values: Vec<f32>,
    dones: Vec<f32>,
}

impl Rollout {
    fn new(t: usize, b: usize, done_every: u32, seed: u64) -> Self {
        let mut rng = Lcg::new(seed);
        let mut dyadic = |n: usize, span: i32| -> Vec<f32> {
            (0..n).map(|_| ((rng.next_u32() % (2 * span as u32 + 1)) as i32 - span) as f32 / 16.0).collect()
        };
        let rewards = dyadic(t * b, 32); // [-2, 2]
        let values = dyadic((t + 1) * b, 64); // [-4, 4]
        let mut rng = Lcg::new(seed + 1);
        let dones =
            (0..t * b).map(|_| if done_every > 0 && rng.next_u32() % done_every == 0 { 1.0 } else { 0.0 }).collect();
        Rollout { t, b, rewards, values, dones }
    }

    /// (advantages, returns) from the kernel.
    fn gae(&self, dev: &Device, k: &Kernels, gamma: f32, lambda: f32) -> (Vec<f32>, Vec<f32>) {
        let (r, v, d) = (up(dev, &self.rewards), up(dev, &self.values), up(dev, &self.dones));
        let (mut adv, mut ret) = (zeros(dev, self.t * self.b), zeros(dev, self.t * self.b));
        k.ppo_gae
            .launch(
                dev.stream(),
                launch::gae(self.b),
                &r,
                &v,
                &d,
                gamma,
                lambda,
                self.t as i32,
                self.b as i32,
                &mut adv,
                &mut ret,
            )
            .unwrap();
        (down(dev, &adv), down(dev, &ret))
    }

    /// The one-step TD target r_t + γ (1 − d_t) V_{t+1} (an invariant's statement, exact here).
    fn td_target(&self, i: usize, gamma: f64) -> f64 {
        f64::from(self.rewards[i]) + gamma * (1.0 - f64::from(self.dones[i])) * f64::from(self.values[i + self.b])
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn ppo_gae_with_lambda_zero_is_the_one_step_td_error() {
    let dev = device();
    let k = kernels(&dev);
    // 300 environments: two blocks, the second partial.
    let ro = Rollout::new(16, 300, 5, 31);
    for gamma in [0.75f32, 1.0, 0.5] {
        let (adv, ret) = ro.gae(&dev, &k, gamma, 0.0);
        for i in 0..ro.t * ro.b {
            let target = ro.td_target(i, f64::from(gamma));
            let delta = target - f64::from(ro.values[i]);
            assert_eq!(f64::from(adv[i]), delta, "γ {gamma}, λ 0: A[{i}] = {} vs δ = {delta}", adv[i]);
            assert_eq!(f64::from(ret[i]), target, "γ {gamma}, λ 0: returns[{i}] = {} vs r + γV' = {target}", ret[i]);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn ppo_gae_with_gamma_zero_is_the_reward_minus_the_value() {
    let dev = device();
    let k = kernels(&dev);
    let ro = Rollout::new(16, 300, 5, 32);
    for lambda in [0.0f32, 0.95, 1.0] {
        let (adv, ret) = ro.gae(&dev, &k, 0.0, lambda);
        for i in 0..ro.t * ro.b {
            assert_eq!(adv[i], ro.rewards[i] - ro.values[i], "γ 0, λ {lambda}: A[{i}]");
            assert_eq!(ret[i], ro.rewards[i], "γ 0, λ {lambda}: returns[{i}]");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn ppo_gae_with_gamma_and_lambda_one_is_the_monte_carlo_return_minus_the_value() {
    let dev = device();
    let k = kernels(&dev);
    let ro = Rollout::new(12, 70, 4, 33);
    let (adv, ret) = ro.gae(&dev, &k, 1.0, 1.0);
    for e in 0..ro.b {
        // Undiscounted return from t to the end of its episode, bootstrapped by V_T when the
        // rollout ends first (dyadic: exact).
        let mut g = f64::from(ro.values[ro.t * ro.b + e]);
        for t in (0..ro.t).rev() {
            let i = t * ro.b + e;
            if ro.dones[i] == 1.0 {
                g = 0.0;
            }
            g += f64::from(ro.rewards[i]);
            assert_eq!(f64::from(ret[i]), g, "returns[t {t}, env {e}]");
            assert_eq!(f64::from(adv[i]), g - f64::from(ro.values[i]), "A[t {t}, env {e}]");
        }
    }
}

// ---- advantage normalisation ----------------------------------------------------------------

fn normalize(dev: &Device, k: &Kernels, a: &[f32]) -> Vec<f32> {
    let mut out = up(dev, &vec![f32::NAN; a.len()]);
    k.ppo_normalize_advantages
        .launch(dev.stream(), launch::one_block(), &up(dev, a), a.len() as i32, 1e-8, &mut out)
        .unwrap();
    down(dev, &out)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn ppo_normalized_advantages_have_mean_zero_unit_std_and_keep_their_order() {
    let dev = device();
    let k = kernels(&dev);
    for n in [2usize, 128, 1000, 5000] {
        let mut rng = Lcg::new(40 + n as u64);
        let a = rng.vec(n, -3.0, 5.0);
        let out = normalize(&dev, &k, &a);
        assert_all_finite("normalised", &out);
        let mean = out.iter().map(|&v| f64::from(v)).sum::<f64>() / n as f64;
        let var = out.iter().map(|&v| (f64::from(v) - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        // The kernel works in f64 and rounds each output once (≤ 6e-8 relative, |out| ≲ 3), so
        // mean and std are within ~1e-7 of 0 and 1 (eps = 1e-8 shifts the std by 1e-8 / std).
        assert!(mean.abs() <= 1e-6, "n {n}: mean {mean}");
        assert!((var.sqrt() - 1.0).abs() <= 1e-6, "n {n}: std {}", var.sqrt());
        // A positive affine map keeps the order (rounding may only make close values equal).
        for i in 1..n {
            let (da, d_out) = (a[i] - a[i - 1], out[i] - out[i - 1]);
            assert!(da * d_out >= 0.0, "n {n}: order of {} and {} changed", i - 1, i);
        }
        // Invariant under a positive affine map of the input (up to the input's own rounding).
        let moved: Vec<f32> = a.iter().map(|v| 4.0 * v + 7.0).collect();
        let out2 = normalize(&dev, &k, &moved);
        for i in 0..n {
            assert!((out2[i] - out[i]).abs() <= 2e-6 * (1.0 + out[i].abs()), "n {n}: {} vs {}", out2[i], out[i]);
        }
    }
    assert_eq!(normalize(&dev, &k, &[3.25]), vec![0.0], "one value: 0 (std 0, divided by eps)");
    assert!(normalize(&dev, &k, &[2.5; 300]).iter().all(|&v| v == 0.0), "constant advantages: all 0");
}

// ---- the update graph -----------------------------------------------------------------------

/// Loads initial weights and a random rollout into `g` (a PpoUpdate or PpoUpdateLoop).
macro_rules! fill_ppo_graph {
    ($g:ident, $seed:expr) => {{
        let (g, seed) = (&mut $g, $seed);
        let (n, n_obs, n_act) = (PpoUpdate::N_ROLLOUT, PpoUpdate::N_OBS, PpoUpdate::N_ACT);
        g.load_actor(&MlpLayout::new(n_obs, PpoUpdate::N_HID, n_act).init(1, 0.01)).unwrap();
        g.load_critic(&MlpLayout::new(n_obs, PpoUpdate::N_HID, 1).init(2, 1.0)).unwrap();
        let mut rng = Lcg::new(seed);
        let mut obs = vec![0.0f32; n * n_obs];
        for row in obs.chunks_mut(n_obs) {
            row[(rng.next_u32() % n_obs as u32) as usize] = 1.0;
        }
        g.upload_obs(&obs).unwrap();
        g.upload_actions(&(0..n).map(|_| (rng.next_u32() % n_act as u32) as i32).collect::<Vec<_>>()).unwrap();
        // The initial policy is within 1% of uniform (gain 0.01), so ln(1/A) is its log-prob.
        g.upload_old_log_probs(&vec![-(n_act as f32).ln(); n]).unwrap();
        g.upload_advantages(&rng.vec(n, -1.0, 1.0)).unwrap();
        g.upload_returns(&rng.vec(n, -1.0, 1.0)).unwrap();
        let mut perm = Vec::with_capacity(PpoUpdate::N_PERM);
        for _ in 0..PpoUpdate::N_PERM / n {
            let mut p: Vec<i32> = (0..n as i32).collect();
            for i in (1..n).rev() {
                p.swap(i, (rng.next_u32() as usize) % (i + 1));
            }
            perm.extend(p);
        }
        g.upload_perm(&perm).unwrap();
        g.set_lr(1e-3).unwrap();
    }};
}

/// A PpoUpdate with initial weights and a random rollout uploaded.
fn ppo_graph(dev: &Device, seed: u64) -> PpoUpdate {
    let mut g = PpoUpdate::new(dev).unwrap();
    fill_ppo_graph!(g, seed);
    g
}

/// The same for the 32-iteration WHILE graph.
fn ppo_loop_graph(dev: &Device, seed: u64) -> PpoUpdateLoop {
    let mut g = PpoUpdateLoop::new(dev).unwrap();
    fill_ppo_graph!(g, seed);
    g
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn one_while_launch_of_the_update_equals_32_minibatch_replays_bit_for_bit() {
    let dev = device();
    let (mut one, mut many) = (ppo_graph(&dev, 6), ppo_loop_graph(&dev, 6));
    one.capture().unwrap();
    many.capture().unwrap();
    let steps = PpoUpdate::N_PERM / PpoUpdate::MB;
    for update in 1..=2 {
        one.load_counters(&[0, 32 * (update - 1)]).unwrap();
        many.load_counters(&[0, 32 * (update - 1)]).unwrap();
        for _ in 0..steps {
            one.replay().unwrap();
        }
        many.replay().unwrap();
        assert_eq!(
            many.download_counters().unwrap(),
            vec![32, 32 * update],
            "update {update}: one launch, 32 minibatches"
        );
        for (name, a, b) in [
            ("actor", many.download_actor().unwrap(), one.download_actor().unwrap()),
            ("critic", many.download_critic().unwrap(), one.download_critic().unwrap()),
            ("stats", many.download_stats().unwrap(), one.download_stats().unwrap()),
        ] {
            assert_all_finite(name, &a);
            assert_bitwise_eq(&format!("update {update}: {name}, WHILE vs replays"), &a, &b);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn ppo_update_graph_replays_like_its_eager_run_and_advances_its_counters() {
    let dev = device();
    let (mut graph, mut eager) = (ppo_graph(&dev, 5), ppo_graph(&dev, 5));
    graph.capture().unwrap();
    let steps = PpoUpdate::N_PERM / PpoUpdate::MB;
    let actor0 = graph.download_actor().unwrap();
    for s in 0..steps {
        graph.replay().unwrap();
        eager.run_eager().unwrap();
        if s == 0 {
            // The first minibatch sees the initial (near-uniform) policy: ratios ≈ 1, nothing
            // clipped, entropy ≈ ln A; the gather and the head worked.
            let stats = graph.download_stats().unwrap();
            assert_all_finite("stats", &stats);
            let ln_a = (PpoUpdate::N_ACT as f32).ln();
            assert!((stats[6] - 1.0).abs() < 0.05 && stats[5] == 0.0, "ratio {}, clip fraction {}", stats[6], stats[5]);
            assert!((stats[3] - ln_a).abs() < 1e-2, "entropy {} vs ln A {ln_a}", stats[3]);
            assert!(stats[7].abs() < 1e-5, "normalised advantages have mean 0, got {}", stats[7]);
        }
    }
    let s = steps as i32;
    assert_eq!(graph.download_counters().unwrap(), vec![s, s], "minibatch and AdamW step counters");
    assert_eq!(eager.download_counters().unwrap(), vec![s, s]);
    for (name, a, b) in [
        ("actor", graph.download_actor().unwrap(), eager.download_actor().unwrap()),
        ("critic", graph.download_critic().unwrap(), eager.download_critic().unwrap()),
        ("stats", graph.download_stats().unwrap(), eager.download_stats().unwrap()),
    ] {
        assert_all_finite(name, &a);
        assert_bitwise_eq(&format!("{name}: replay vs eager"), &a, &b);
    }
    let actor = graph.download_actor().unwrap();
    assert!(actor.iter().zip(&actor0).filter(|(a, b)| a != b).count() > actor.len() / 2, "AdamW moved the actor");
}
