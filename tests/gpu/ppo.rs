//! The PPO kernels (`kernels/ppo.cu`, `kgraph_model::ppo`), first part: the policy head and the
//! loss, through invariants with analytic inputs (softmax rows sum to 1 and are positive, the
//! entropy of a uniform policy is ln A, the clipped loss equals the unclipped one inside the clip
//! range and has no policy gradient on the clipped side, the reduction is the samples' mean) and
//! finite-difference checks of the loss backward through its GPU forward. The linear layers,
//! GAE, advantage normalisation and the update graph are in `ppo_update`. No kernel is
//! re-implemented on the host: the host side only states the invariants.

use kgraph::gradcheck::{sample_coords, weighted_sum, GradCheck};
use kgraph::{Device, DeviceBuffer, Result};
/// The PPO kernels' module at the path `graphs/ppo_update.toml` names (`crate::ppo::kernels`),
/// for the structs `memory_plan` builds from it (a module: no clash with `fn kernels`).
pub(crate) use kgraph_model::ppo::kernels;
use kgraph_model::ppo::{launch, Kernels, STAT_NAMES};

use super::common::device;
use super::model_util::{assert_all_finite, assert_bitwise_eq, down, up, zeros, Lcg};

pub(super) fn kernels(dev: &Device) -> Kernels {
    Kernels::load(dev).unwrap_or_else(|e| panic!("loading the PPO kernels failed: {e}"))
}

fn up_i32(dev: &Device, v: &[i32]) -> DeviceBuffer<i32> {
    dev.upload(v).unwrap()
}

/// (log_probs, probs, entropy) of the policy head on device logits `[batch, n_act]`.
fn head_dev(
    dev: &Device,
    k: &Kernels,
    logits: &DeviceBuffer<f32>,
    batch: usize,
    n_act: usize,
    out: &mut [DeviceBuffer<f32>; 3],
) -> Result<()> {
    let [lp, p, h] = out;
    k.ppo_policy_head.launch(dev.stream(), launch::per_row(batch), logits, batch as i32, n_act as i32, lp, p, h)
}

fn head_bufs(dev: &Device, batch: usize, n_act: usize) -> [DeviceBuffer<f32>; 3] {
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
    values: DeviceBuffer<f32>,
    actions: DeviceBuffer<i32>,
    old_log_probs: DeviceBuffer<f32>,
    advantages: DeviceBuffer<f32>,
    returns: DeviceBuffer<f32>,
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
    head: &[DeviceBuffer<f32>; 3],
    inp: &LossInputs,
    values: &DeviceBuffer<f32>,
    c: Coefs,
    n_act: usize,
    sample_loss: &mut DeviceBuffer<f32>,
    stats: &mut DeviceBuffer<f32>,
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
    head: &[DeviceBuffer<f32>; 3],
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
    head: &[DeviceBuffer<f32>; 3],
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
