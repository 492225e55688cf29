//! The PPO kernels (`kernels/ppo.cu`, `kgraph_model::ppo`) and the update graph
//! (`graphs/ppo_update.toml`): invariants with analytic inputs (softmax rows sum to 1 and are
//! positive, the entropy of a uniform policy is ln A, the clipped loss equals the unclipped one
//! inside the clip range and has no policy gradient on the clipped side, GAE with λ = 0 is the
//! one-step TD error, with γ = 0 the reward minus the value, with γ = λ = 1 the Monte Carlo
//! return minus the value; normalised advantages have mean 0 and std 1) and finite-difference
//! checks of the loss backward and the linear backward through their GPU forwards. No kernel is
//! re-implemented on the host: the host side only states the invariants.

use kgraph::gradcheck::{sample_coords, weighted_sum, GradCheck};
use kgraph::{CudaSlice, Device, Result};
use kgraph_model::graphs::{PpoUpdate, PpoUpdateLoop};
use kgraph_model::ppo::{launch, Kernels, MlpLayout, ACT_IDENTITY, ACT_TANH, STAT_NAMES};

use super::common::device;
use super::model_util::{assert_all_finite, assert_bitwise_eq, down, up, zeros, Lcg};

fn kernels(dev: &Device) -> Kernels {
    Kernels::load(dev).unwrap_or_else(|e| panic!("loading the PPO kernels failed: {e}"))
}

fn up_i32(dev: &Device, v: &[i32]) -> CudaSlice<i32> {
    dev.upload(v).unwrap()
}

/// (log_probs, probs, entropy) of the policy head on device logits `[batch, n_act]`.
fn head_dev(
    dev: &Device,
    k: &Kernels,
    logits: &CudaSlice<f32>,
    batch: usize,
    n_act: usize,
    out: &mut [CudaSlice<f32>; 3],
) -> Result<()> {
    let [lp, p, h] = out;
    k.ppo_policy_head.launch(dev.stream(), launch::per_row(batch), logits, batch as i32, n_act as i32, lp, p, h)
}

fn head_bufs(dev: &Device, batch: usize, n_act: usize) -> [CudaSlice<f32>; 3] {
    [zeros(dev, batch * n_act), zeros(dev, batch * n_act), zeros(dev, batch)]
}

/// Host logits → (log_probs, probs, entropy) on the host.
fn head(dev: &Device, k: &Kernels, logits: &[f32], n_act: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let batch = logits.len() / n_act;
    let mut out = head_bufs(dev, batch, n_act);
    head_dev(dev, k, &up(dev, logits), batch, n_act, &mut out).unwrap();
    (down(dev, &out[0]), down(dev, &out[1]), down(dev, &out[2]))
}

// ---- softmax policy head --------------------------------------------------------------------

/// Tolerance of `|Σ_j p_j − 1|` for up to 100 actions: each `p_j = exp(lp_j)` is within a few
/// ulps (expf ≤ 2 ulp, plus the rounding of `lp_j = (z_j − m) − log s`, whose `log s` error of
/// 1 ulp scales every `p_j` alike by ≤ 5e-7 relative); summing in f64 on the host adds nothing,
/// so the sum is within ≈ 4 · 6e-8 + 5e-7 ≈ 8e-7 of 1. 4e-6 leaves a factor 5; a wrong
/// normaliser (a missing `− m`, a lane's partial sum dropped) is off by far more.
const SOFTMAX_SUM_TOL: f64 = 4e-6;

#[test]
#[ignore = "needs a CUDA GPU"]
fn ppo_softmax_rows_sum_to_one_and_are_positive() {
    let dev = device();
    let k = kernels(&dev);
    // 257 rows: the last block of 4 warps is partial. 37 and 100 actions: lanes stride past 32.
    for n_act in [1usize, 2, 4, 37, 100] {
        let batch = 257;
        let mut rng = Lcg::new(10 + n_act as u64);
        // Logits within a spread of 40 (e^-40 / 100 ≈ 4e-20 is far above f32's smallest normal,
        // so every probability is representable and positive), some rows shifted by ±1e4 (the
        // max subtraction keeps them finite).
        let mut logits = rng.vec(batch * n_act, -20.0, 20.0);
        for row in (0..batch).step_by(5) {
            let shift = if row % 2 == 0 { 1e4 } else { -1e4 };
            logits[row * n_act..(row + 1) * n_act].iter_mut().for_each(|z| *z += shift);
        }
        let (lp, p, h) = head(&dev, &k, &logits, n_act);
        assert_all_finite("log_probs", &lp);
        assert_all_finite("entropy", &h);
        for row in 0..batch {
            let ps = &p[row * n_act..(row + 1) * n_act];
            for (j, &pj) in ps.iter().enumerate() {
                assert!(pj > 0.0 && pj <= 1.0, "n_act {n_act}: probs[{row}, {j}] = {pj}");
                assert!(lp[row * n_act + j] <= 0.0, "log_probs[{row}, {j}] = {}", lp[row * n_act + j]);
            }
            let sum: f64 = ps.iter().map(|&v| f64::from(v)).sum();
            assert!((sum - 1.0).abs() <= SOFTMAX_SUM_TOL, "n_act {n_act}: row {row} sums to {sum}");
            // 0 <= H <= ln A (up to the same rounding).
            let bound = (n_act as f64).ln() + 1e-5;
            assert!(h[row] >= 0.0 && f64::from(h[row]) <= bound, "n_act {n_act}: entropy[{row}] = {}", h[row]);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn ppo_entropy_of_a_uniform_policy_is_log_of_the_action_count() {
    let dev = device();
    let k = kernels(&dev);
    for n_act in [1usize, 2, 4, 37, 100] {
        for level in [0.0f32, 3.5, -1e3] {
            let batch = 9;
            let (_, p, h) = head(&dev, &k, &vec![level; batch * n_act], n_act);
            let ln_a = (n_act as f64).ln();
            for row in 0..batch {
                // Equal logits give z - m = 0 and s = A exactly; then each -p lp is within ≈ 4
                // ulps (logf 1, expf 2, the product 1) and the sum of A ≤ 100 terms adds ≤ 8
                // roundings: ≤ 12 · 6e-8 ≈ 7e-7 relative. 1e-5 relative leaves a wide margin and
                // still fails for a wrong log base or a missed lane (off by ≥ 1/A relative).
                let err = (f64::from(h[row]) - ln_a).abs();
                assert!(
                    err <= 1e-5 * ln_a.max(1e-3),
                    "n_act {n_act}, level {level}: entropy {} vs ln A = {ln_a}",
                    h[row]
                );
                for &pj in &p[row * n_act..(row + 1) * n_act] {
                    let rel = (f64::from(pj) * n_act as f64 - 1.0).abs();
                    assert!(rel <= 2e-6, "n_act {n_act}: uniform probability {pj} vs 1/{n_act}");
                }
            }
            if n_act == 1 {
                assert!(h.iter().all(|&v| v == 0.0), "one action: entropy exactly 0, got {h:?}");
            }
        }
    }
}

// ---- the PPO loss ---------------------------------------------------------------------------

/// Everything the loss kernels read besides the policy head's outputs, on the device.
struct LossInputs {
    values: CudaSlice<f32>,
    actions: CudaSlice<i32>,
    old_log_probs: CudaSlice<f32>,
    advantages: CudaSlice<f32>,
    returns: CudaSlice<f32>,
}

#[derive(Clone, Copy)]
struct Coefs {
    clip: f32,
    vf: f32,
    ent: f32,
}

/// Old log-probabilities that give sample `i` the ratio `ratios[i]` under the current policy
/// (`lp` from the GPU policy head): `old = lp[a] − ln ratio` (input construction, not an oracle).
fn old_for_ratios(lp: &[f32], actions: &[i32], n_act: usize, ratios: &[f64]) -> Vec<f32> {
    (0..actions.len()).map(|i| (f64::from(lp[i * n_act + actions[i] as usize]) - ratios[i].ln()) as f32).collect()
}

#[allow(clippy::too_many_arguments)]
fn loss_forward_dev(
    dev: &Device,
    k: &Kernels,
    head: &[CudaSlice<f32>; 3],
    inp: &LossInputs,
    values: &CudaSlice<f32>,
    c: Coefs,
    n_act: usize,
    sample_loss: &mut CudaSlice<f32>,
    stats: &mut CudaSlice<f32>,
) -> Result<()> {
    let batch = values.len();
    k.ppo_loss_forward.launch(
        dev.stream(),
        launch::one_block(),
        &head[0],
        &head[2],
        values,
        &inp.actions,
        &inp.old_log_probs,
        &inp.advantages,
        &inp.returns,
        c.clip,
        c.vf,
        c.ent,
        batch as i32,
        n_act as i32,
        sample_loss,
        stats,
    )
}

/// (per-sample loss, stats).
fn loss_forward(
    dev: &Device,
    k: &Kernels,
    head: &[CudaSlice<f32>; 3],
    inp: &LossInputs,
    c: Coefs,
    n_act: usize,
) -> (Vec<f32>, Vec<f32>) {
    let (mut sample, mut stats) = (zeros(dev, inp.values.len()), zeros(dev, 8));
    loss_forward_dev(dev, k, head, inp, &inp.values, c, n_act, &mut sample, &mut stats).unwrap();
    (down(dev, &sample), down(dev, &stats))
}

/// (g_logits, g_values) of the batch-mean loss.
fn loss_backward(
    dev: &Device,
    k: &Kernels,
    head: &[CudaSlice<f32>; 3],
    inp: &LossInputs,
    c: Coefs,
    n_act: usize,
) -> (Vec<f32>, Vec<f32>) {
    let batch = inp.values.len();
    // NaN-filled: the kernel must overwrite every element.
    let (mut g_logits, mut g_values) = (up(dev, &vec![f32::NAN; batch * n_act]), up(dev, &vec![f32::NAN; batch]));
    k.ppo_loss_backward
        .launch(
            dev.stream(),
            launch::per_row(batch),
            &head[0],
            &head[1],
            &head[2],
            &inp.values,
            &inp.actions,
            &inp.old_log_probs,
            &inp.advantages,
            &inp.returns,
            c.clip,
            c.vf,
            c.ent,
            batch as i32,
            n_act as i32,
            &mut g_logits,
            &mut g_values,
        )
        .unwrap();
    (down(dev, &g_logits), down(dev, &g_values))
}

/// Where a sample's ratio and advantage put it relative to the clip range [0.8, 1.2].
#[derive(Clone, Copy, PartialEq, Debug)]
enum Side {
    /// Ratio inside the range: clipped and unclipped objectives coincide.
    Inside,
    /// Ratio outside on the side the clip binds (ratio > 1 + ε with A > 0, < 1 − ε with A < 0).
    Clipped,
    /// Ratio outside on the other side: the min picks the unclipped term.
    Unclipped,
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn ppo_clipped_loss_equals_unclipped_inside_the_range_and_has_no_policy_gradient_on_the_clipped_side() {
    let dev = device();
    let k = kernels(&dev);
    let n_act = 5;
    // (ratio, sign of A, side) for clip ε = 0.2; every ratio ≥ 5% from 0.8 and 1.2 (the
    // kernel's ratio exp(lp − old) is within ~1e-6 of the one asked for).
    let cases: [(f64, f32, Side); 14] = [
        (0.85, 1.0, Side::Inside),
        (0.95, -1.0, Side::Inside),
        (1.0, 1.0, Side::Inside),
        (1.0, -1.0, Side::Inside),
        (1.05, 1.0, Side::Inside),
        (1.15, -1.0, Side::Inside),
        (1.26, 1.0, Side::Clipped),
        (2.5, 1.0, Side::Clipped),
        (0.74, -1.0, Side::Clipped),
        (0.3, -1.0, Side::Clipped),
        (0.6, 1.0, Side::Unclipped),
        (0.2, 1.0, Side::Unclipped),
        (1.4, -1.0, Side::Unclipped),
        (3.0, -1.0, Side::Unclipped),
    ];
    let batch = cases.len() * 19; // 266 rows: several strides of the 256-thread block
    let mut rng = Lcg::new(77);
    let logits = rng.vec(batch * n_act, -2.0, 2.0);
    let mut heads = head_bufs(&dev, batch, n_act);
    head_dev(&dev, &k, &up(&dev, &logits), batch, n_act, &mut heads).unwrap();
    let lp = down(&dev, &heads[0]);
    let actions: Vec<i32> = (0..batch).map(|_| (rng.next_u32() % n_act as u32) as i32).collect();
    let side: Vec<Side> = (0..batch).map(|i| cases[i % cases.len()].2).collect();
    let ratios: Vec<f64> = (0..batch).map(|i| cases[i % cases.len()].0).collect();
    let adv: Vec<f32> = (0..batch).map(|i| cases[i % cases.len()].1 * rng.uniform(0.2, 2.0)).collect();
    let inp = LossInputs {
        values: up(&dev, &rng.vec(batch, -1.0, 1.0)),
        actions: up_i32(&dev, &actions),
        old_log_probs: up(&dev, &old_for_ratios(&lp, &actions, n_act, &ratios)),
        advantages: up(&dev, &adv),
        returns: up(&dev, &rng.vec(batch, -1.0, 1.0)),
    };
    // vf = ent = 0: the per-sample loss is the policy term alone.
    let clipped = Coefs { clip: 0.2, vf: 0.0, ent: 0.0 };
    let unclipped = Coefs { clip: 1e30, ..clipped }; // clip(ratio, −1e30, 1e30) = ratio
    let (l_clip, s_clip) = loss_forward(&dev, &k, &heads, &inp, clipped, n_act);
    let (l_free, s_free) = loss_forward(&dev, &k, &heads, &inp, unclipped, n_act);
    assert_all_finite("sample_loss", &l_clip);
    for i in 0..batch {
        match side[i] {
            Side::Inside | Side::Unclipped => assert_eq!(
                l_clip[i].to_bits(),
                l_free[i].to_bits(),
                "sample {i} ({:?}, ratio {}): clipped {} vs unclipped {}",
                side[i],
                ratios[i],
                l_clip[i],
                l_free[i]
            ),
            // The clipped term is the smaller objective there, so the loss (its negation) is larger.
            Side::Clipped => {
                assert!(
                    l_clip[i] > l_free[i],
                    "sample {i} (ratio {}): clipped {} <= unclipped {}",
                    ratios[i],
                    l_clip[i],
                    l_free[i]
                )
            }
        }
    }
    let clip_fraction = side.iter().filter(|&&s| s != Side::Inside).count() as f32 / batch as f32;
    assert!((s_clip[5] - clip_fraction).abs() <= 1e-6, "clip fraction {} vs {clip_fraction}", s_clip[5]);
    assert!(s_clip[0] > s_free[0], "the clipped mean loss is larger ({} vs {})", s_clip[0], s_free[0]);

    // The gradient: exactly zero rows on the clipped side, nonzero elsewhere (the taken action's
    // entry is coef (1 − p_a), p_a < 1). The value gradient is there regardless.
    let with_value = Coefs { vf: 0.5, ..clipped };
    let (g, gv) = loss_backward(&dev, &k, &heads, &inp, with_value, n_act);
    assert_all_finite("g_logits", &g);
    assert_all_finite("g_values", &gv);
    for i in 0..batch {
        let row = &g[i * n_act..(i + 1) * n_act];
        if side[i] == Side::Clipped {
            assert!(row.iter().all(|&v| v == 0.0), "sample {i} (ratio {}): clipped side, gradient {row:?}", ratios[i]);
        } else {
            assert!(row[actions[i] as usize] != 0.0, "sample {i} ({:?}): zero gradient {row:?}", side[i]);
            // Σ_j g_j = coef Σ_j ([j = a] − p_j) = 0 up to rounding: the gradient stays on the simplex.
            let sum: f64 = row.iter().map(|&v| f64::from(v)).sum();
            let scale: f64 = row.iter().map(|&v| f64::from(v.abs())).sum();
            assert!(sum.abs() <= 1e-5 * scale, "sample {i}: row sums to {sum} (scale {scale})");
        }
    }
    // Without clipping no row is zero.
    let (g_free, _) = loss_backward(&dev, &k, &heads, &inp, Coefs { vf: 0.5, ..unclipped }, n_act);
    for i in 0..batch {
        assert!(g_free[i * n_act + actions[i] as usize] != 0.0, "unclipped: sample {i} has a zero gradient");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn ppo_loss_reduction_is_the_mean_of_the_samples_and_bitwise_deterministic() {
    let dev = device();
    let k = kernels(&dev);
    let n_act = 6;
    for batch in [1usize, 128, 1000, 4099] {
        let mut rng = Lcg::new(90 + batch as u64);
        let mut heads = head_bufs(&dev, batch, n_act);
        head_dev(&dev, &k, &up(&dev, &rng.vec(batch * n_act, -3.0, 3.0)), batch, n_act, &mut heads).unwrap();
        let actions: Vec<i32> = (0..batch).map(|_| (rng.next_u32() % n_act as u32) as i32).collect();
        let inp = LossInputs {
            values: up(&dev, &rng.vec(batch, -1.0, 1.0)),
            actions: up_i32(&dev, &actions),
            old_log_probs: up(&dev, &rng.vec(batch, -3.0, -0.5)),
            advantages: up(&dev, &rng.vec(batch, -2.0, 2.0)),
            returns: up(&dev, &rng.vec(batch, -1.0, 1.0)),
        };
        let c = Coefs { clip: 0.2, vf: 0.5, ent: 0.01 };
        let (l1, s1) = loss_forward(&dev, &k, &heads, &inp, c, n_act);
        let (l2, s2) = loss_forward(&dev, &k, &heads, &inp, c, n_act);
        assert_bitwise_eq("sample_loss", &l1, &l2);
        assert_bitwise_eq("stats", &s1, &s2);
        assert_all_finite("stats", &s1);
        // stats[0] is the f64 mean of these very f32 values, rounded once to f32 (≤ 6e-8
        // relative); the two f64 sums differ only in order (≤ 1e-15 of Σ|l_i|).
        let mean = l1.iter().map(|&v| f64::from(v)).sum::<f64>() / batch as f64;
        let abs_mean = l1.iter().map(|&v| f64::from(v.abs())).sum::<f64>() / batch as f64;
        let tol = 1.2e-7 * mean.abs() + 1e-12 * abs_mean;
        assert!((f64::from(s1[0]) - mean).abs() <= tol, "{}: {} vs mean {mean}", STAT_NAMES[0], s1[0]);
        assert!(s1[4] >= 0.0, "approx KL = (r − 1) − ln r ≥ 0, got {}", s1[4]);
        assert!((0.0..=1.0).contains(&s1[5]), "clip fraction {}", s1[5]);
        let (g1, v1) = loss_backward(&dev, &k, &heads, &inp, c, n_act);
        let (g2, v2) = loss_backward(&dev, &k, &heads, &inp, c, n_act);
        assert_bitwise_eq("g_logits", &g1, &g2);
        assert_bitwise_eq("g_values", &v1, &v2);
    }
}

/// Ratios for the finite-difference checks: all at least 9% from the kinks at 0.8 and 1.2
/// (clip ε = 0.2), on every side of them.
const FD_RATIOS: [f64; 7] = [0.5, 0.65, 0.9, 1.0, 1.1, 1.35, 1.6];

fn gradcheck_loss(batch: usize, n_act: usize, c: Coefs, seed: u64) {
    let dev = device();
    let k = kernels(&dev);
    let mut rng = Lcg::new(seed);
    let logits_host = rng.vec(batch * n_act, -2.0, 2.0);
    let mut logits = up(&dev, &logits_host);
    let mut heads = head_bufs(&dev, batch, n_act);
    head_dev(&dev, &k, &logits, batch, n_act, &mut heads).unwrap();
    let lp = down(&dev, &heads[0]);
    let actions: Vec<i32> = (0..batch).map(|_| (rng.next_u32() % n_act as u32) as i32).collect();
    let ratios: Vec<f64> = (0..batch).map(|i| FD_RATIOS[i % FD_RATIOS.len()]).collect();
    let inp = LossInputs {
        values: up(&dev, &rng.vec(batch, -1.0, 1.0)),
        actions: up_i32(&dev, &actions),
        old_log_probs: up(&dev, &old_for_ratios(&lp, &actions, n_act, &ratios)),
        advantages: up(&dev, &rng.vec(batch, -2.0, 2.0)),
        returns: up(&dev, &rng.vec(batch, -1.0, 1.0)),
    };
    let (g_logits, g_values) = loss_backward(&dev, &k, &heads, &inp, c, n_act);
    // The kernels give the gradient of the batch MEAN; the checked loss is the SUM of the
    // per-sample losses (f64 on the host over the kernel's f32 outputs), so scale by batch.
    let scale = |g: &[f32]| g.iter().map(|v| v * batch as f32).collect::<Vec<f32>>();
    let (g_logits, g_values) = (scale(&g_logits), scale(&g_values));
    let ones = vec![1.0f32; batch];
    let (mut sample, mut stats) = (zeros(&dev, batch), zeros(&dev, 8));
    // Tolerances (GradCheck's defaults: ε = 1e-2, abs 2e-3, rel 1e-2), justified here:
    // - a logit of row i moves only row i's loss (the kernels are deterministic, so every other
    //   row is bitwise identical in both evaluations and cancels exactly). That row's f32 loss
    //   (|loss_i| ≤ ~6) is rounded to a few ulps, ≈ 2e-6, so the rounding error of the central
    //   difference is ≈ 2e-6 / 2ε = 1e-4;
    // - truncation ε² |∂³loss_i| / 6: the policy term ratio·A (ratio ≤ 1.6, |A| ≤ 2) has third
    //   derivatives in z of order ratio |A| ≤ 3.2, the entropy and value terms of order 1:
    //   ≤ 1e-4 · 5 / 6 ≈ 1e-4;
    // - kinks: every ratio is ≥ 9% from 1 ± ε, and moving a logit by ε moves log π(a) by at most
    //   ε |[j = a] − p_j| ≤ 1e-2, the ratio by ≤ 1%: no evaluation crosses a kink.
    // Both errors are ≥ 10× below abs_tol; a wrong backward (a sign, a missing p_j, the entropy
    // term's H, the 1/batch) is off by O(1) relative.
    let coords = sample_coords(batch * n_act, 32, seed);
    let report = GradCheck::default()
        .check(&dev, "logits", &mut logits, &g_logits, &coords, |z| {
            head_dev(&dev, &k, z, batch, n_act, &mut heads)?;
            loss_forward_dev(&dev, &k, &heads, &inp, &inp.values, c, n_act, &mut sample, &mut stats)?;
            weighted_sum(&dev, &sample, &ones)
        })
        .unwrap();
    report.assert_passed();
    // The values enter only 0.5 vf (V − R)², quadratic: the central difference is exact up to
    // the same rounding. The head is unperturbed now (restored logits, recomputed).
    head_dev(&dev, &k, &logits, batch, n_act, &mut heads).unwrap();
    let mut values = up(&dev, &down(&dev, &inp.values));
    let coords = sample_coords(batch, 16, seed + 1);
    let report = GradCheck::default()
        .check(&dev, "values", &mut values, &g_values, &coords, |v| {
            loss_forward_dev(&dev, &k, &heads, &inp, v, c, n_act, &mut sample, &mut stats)?;
            weighted_sum(&dev, &sample, &ones)
        })
        .unwrap();
    report.assert_passed();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn ppo_loss_backward_matches_finite_differences_4_actions() {
    gradcheck_loss(128, 4, Coefs { clip: 0.2, vf: 0.5, ent: 0.01 }, 701);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn ppo_loss_backward_matches_finite_differences_37_actions_strong_entropy() {
    // ent = 0.5 makes the entropy gradient as large as the policy one, so an error in it shows.
    gradcheck_loss(64, 37, Coefs { clip: 0.2, vf: 1.0, ent: 0.5 }, 702);
}

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
        p: &CudaSlice<f32>,
        x: &CudaSlice<f32>,
        y: &mut CudaSlice<f32>,
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
