//! `multi_horizon_heads` and `projection`: forward invariants (ranges, monotonicity, symmetry,
//! linearity, fixed points) and their backward kernels against finite differences.

use kgraph::gradcheck::{assert_all_passed, weighted_sum, GradCheck};
use kgraph::{Device, DeviceBuffer, Result};
use kgraph_model::model::{launch, Kernels, N_HORIZONS, N_PROJ};

use super::common::device;
use super::model_util::{assert_all_finite, assert_bitwise_eq, down, kernels, up, weights, zeros, Lcg};

fn heads_dev(
    dev: &Device,
    k: &Kernels,
    batch: usize,
    n_hid: usize,
    p: &[&DeviceBuffer<f32>],
    logits: &mut DeviceBuffer<f32>,
    probs: &mut DeviceBuffer<f32>,
) -> Result<()> {
    let cfg = launch::multi_horizon_heads(batch);
    k.multi_horizon_heads.launch(dev.stream(), cfg, p[0], p[1], p[2], batch as i32, n_hid as i32, logits, probs)
}

/// (logits, probs) of the heads for host `h [batch, n_hid]`, `w [5, n_hid]`, `b [5]`.
fn heads(dev: &Device, k: &Kernels, n_hid: usize, h: &[f32], w: &[f32], b: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let batch = h.len() / n_hid;
    let bufs = [up(dev, h), up(dev, w), up(dev, b)];
    let (mut logits, mut probs) = (zeros(dev, batch * N_HORIZONS), zeros(dev, batch * N_HORIZONS));
    heads_dev(dev, k, batch, n_hid, &[&bufs[0], &bufs[1], &bufs[2]], &mut logits, &mut probs).unwrap();
    (down(dev, &logits), down(dev, &probs))
}

fn projection_dev(
    dev: &Device,
    k: &Kernels,
    batch: usize,
    n_hid: usize,
    p: &[&DeviceBuffer<f32>],
    y: &mut DeviceBuffer<f32>,
) -> Result<()> {
    k.projection.launch(dev.stream(), launch::projection(batch), p[0], p[1], p[2], batch as i32, n_hid as i32, y)
}

fn projection(dev: &Device, k: &Kernels, n_hid: usize, h: &[f32], p: &[f32], c: &[f32]) -> Vec<f32> {
    let batch = h.len() / n_hid;
    let bufs = [up(dev, h), up(dev, p), up(dev, c)];
    let mut y = zeros(dev, batch * N_PROJ);
    projection_dev(dev, k, batch, n_hid, &[&bufs[0], &bufs[1], &bufs[2]], &mut y).unwrap();
    down(dev, &y)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn heads_probs_stay_in_unit_interval_even_for_huge_logits() {
    let dev = device();
    let k = kernels(&dev);
    let n_hid = 64;
    for batch in [1usize, 256] {
        let mut rng = Lcg::new(3 + batch as u64);
        for (h_range, w_scale, b_range) in [(1.0f32, 2.0f32, 1.0f32), (1e3, 1e3, 1e4), (1.0, 1.0, 1e30)] {
            let h = rng.vec(batch * n_hid, -h_range, h_range);
            let w = weights(&mut rng, N_HORIZONS, n_hid, w_scale);
            let b = rng.vec(N_HORIZONS, -b_range, b_range);
            let (logits, probs) = heads(&dev, &k, n_hid, &h, &w, &b);
            assert_all_finite("logits", &logits);
            assert_all_finite("probs", &probs);
            for (i, (&z, &p)) in logits.iter().zip(&probs).enumerate() {
                assert!((0.0..=1.0).contains(&p), "probs[{i}] = {p}");
                // Saturation goes the right way.
                if z > 100.0 {
                    assert_eq!(p, 1.0, "logit {z}");
                }
                if z < -200.0 {
                    assert_eq!(p, 0.0, "logit {z}");
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn heads_logits_shift_with_bias_and_probs_rise_with_it() {
    let dev = device();
    let k = kernels(&dev);
    let n_hid = 64;
    for batch in [1usize, 256] {
        let mut rng = Lcg::new(5 + batch as u64);
        let h = rng.vec(batch * n_hid, -1.0, 1.0);
        let w = weights(&mut rng, N_HORIZONS, n_hid, 2.0);
        let b0 = rng.vec(N_HORIZONS, -1.0, 1.0);
        let mut prev: Option<(Vec<f32>, Vec<f32>)> = None;
        for step in 0..12 {
            let b: Vec<f32> = b0.iter().map(|v| v + 0.5 * step as f32 - 3.0).collect();
            let (logits, probs) = heads(&dev, &k, n_hid, &h, &w, &b);
            if let Some((pl, pp)) = &prev {
                for i in 0..logits.len() {
                    let shift = logits[i] - pl[i];
                    assert!((shift - 0.5).abs() < 1e-5, "logit[{i}] moved by {shift}, the bias by 0.5");
                    assert!(probs[i] >= pp[i], "probs[{i}] fell as the bias rose");
                }
            }
            prev = Some((logits, probs));
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn heads_negated_weights_mirror_probs_and_zero_weights_give_one_half() {
    let dev = device();
    let k = kernels(&dev);
    let n_hid = 64;
    for batch in [1usize, 256] {
        let mut rng = Lcg::new(9 + batch as u64);
        let h = rng.vec(batch * n_hid, -1.0, 1.0);
        let w = weights(&mut rng, N_HORIZONS, n_hid, 4.0);
        let b = rng.vec(N_HORIZONS, -2.0, 2.0);
        let neg = |v: &[f32]| v.iter().map(|x| -x).collect::<Vec<f32>>();
        let (z, p) = heads(&dev, &k, n_hid, &h, &w, &b);
        let (zn, pn) = heads(&dev, &k, n_hid, &h, &neg(&w), &neg(&b));
        for i in 0..z.len() {
            assert_eq!(zn[i], -z[i], "logit[{i}] not negated exactly");
            assert!((p[i] + pn[i] - 1.0).abs() <= 4e-7, "sigmoid(z) + sigmoid(-z) = {}", p[i] + pn[i]);
        }
        let (z0, p0) = heads(&dev, &k, n_hid, &h, &vec![0.0; w.len()], &[0.0; N_HORIZONS]);
        assert!(z0.iter().all(|&v| v == 0.0) && p0.iter().all(|&v| v == 0.5));
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn projection_of_a_sum_is_the_sum_of_projections_minus_c() {
    let dev = device();
    let k = kernels(&dev);
    let n_hid = 64;
    for batch in [1usize, 256] {
        let mut rng = Lcg::new(11 + batch as u64);
        let (h1, h2) = (rng.vec(batch * n_hid, -1.0, 1.0), rng.vec(batch * n_hid, -1.0, 1.0));
        let p = weights(&mut rng, N_PROJ, n_hid, 1.0);
        let c = rng.vec(N_PROJ, -1.0, 1.0);
        let sum: Vec<f32> = h1.iter().zip(&h2).map(|(a, b)| a + b).collect();
        let (y1, y2, ys) = (
            projection(&dev, &k, n_hid, &h1, &p, &c),
            projection(&dev, &k, n_hid, &h2, &p, &c),
            projection(&dev, &k, n_hid, &sum, &p, &c),
        );
        for i in 0..ys.len() {
            let expect = y1[i] + y2[i] - c[i % N_PROJ];
            assert!((ys[i] - expect).abs() <= 5e-5 * (1.0 + expect.abs()), "y(h1 + h2)[{i}] = {} vs {expect}", ys[i]);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn projection_of_zero_is_c_exactly_and_rows_are_independent() {
    let dev = device();
    let k = kernels(&dev);
    let n_hid = 96;
    let mut rng = Lcg::new(12);
    let p = weights(&mut rng, N_PROJ, n_hid, 1.0);
    let c = rng.vec(N_PROJ, -1.0, 1.0);
    let y0 = projection(&dev, &k, n_hid, &vec![0.0; 256 * n_hid], &p, &c);
    for row in y0.chunks(N_PROJ) {
        assert_eq!(row, &c[..], "P 0 + c must be c");
    }
    let h = rng.vec(256 * n_hid, -1.0, 1.0);
    let y = projection(&dev, &k, n_hid, &h, &p, &c);
    for r in [0usize, 77, 255] {
        let one = projection(&dev, &k, n_hid, &h[r * n_hid..(r + 1) * n_hid], &p, &c);
        assert_bitwise_eq(&format!("row {r}"), &y[r * N_PROJ..(r + 1) * N_PROJ], &one);
    }
}

fn gradcheck_heads(batch: usize, seed: u64) {
    let dev = device();
    let k = kernels(&dev);
    let n_hid = 64;
    let mut rng = Lcg::new(seed);
    let host =
        [rng.vec(batch * n_hid, -1.0, 1.0), weights(&mut rng, N_HORIZONS, n_hid, 3.0), rng.vec(N_HORIZONS, -1.0, 1.0)];
    let mut params: Vec<DeviceBuffer<f32>> = host.iter().map(|v| up(&dev, v)).collect();
    let n_out = batch * N_HORIZONS;
    let (cot_logits, cot_probs) = (rng.vec(n_out, -1.0, 1.0), rng.vec(n_out, -1.0, 1.0));
    let (mut logits, mut probs) = (zeros(&dev, n_out), zeros(&dev, n_out));
    let refs: Vec<&DeviceBuffer<f32>> = params.iter().collect();
    heads_dev(&dev, &k, batch, n_hid, &refs, &mut logits, &mut probs).unwrap();
    let mut grads = [zeros(&dev, host[0].len()), zeros(&dev, host[1].len()), zeros(&dev, N_HORIZONS)];
    let [g_h, g_w, g_b] = &mut grads;
    let cfg = launch::multi_horizon_heads_backward(batch, n_hid);
    let (gl, gp) = (up(&dev, &cot_logits), up(&dev, &cot_probs));
    k.multi_horizon_heads_backward
        .launch(dev.stream(), cfg, &params[0], &params[1], &probs, &gl, &gp, batch as i32, n_hid as i32, g_h, g_w, g_b)
        .unwrap();
    let analytic: Vec<Vec<f32>> = grads.iter().map(|g| down(&dev, g)).collect();
    let reports = GradCheck::default()
        .with_samples(16, seed)
        .check_all(&dev, &["h", "w_h", "b_h"], &mut params, &analytic, |p| {
            heads_dev(&dev, &k, batch, n_hid, p, &mut logits, &mut probs)?;
            Ok(weighted_sum(&dev, &logits, &cot_logits)? + weighted_sum(&dev, &probs, &cot_probs)?)
        })
        .unwrap();
    assert_all_passed(&reports);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn heads_backward_matches_finite_differences_b1() {
    gradcheck_heads(1, 301);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn heads_backward_matches_finite_differences_b256() {
    gradcheck_heads(256, 302);
}

fn gradcheck_projection(batch: usize, seed: u64) {
    let dev = device();
    let k = kernels(&dev);
    let n_hid = 64;
    let mut rng = Lcg::new(seed);
    let host = [rng.vec(batch * n_hid, -1.0, 1.0), weights(&mut rng, N_PROJ, n_hid, 1.0), rng.vec(N_PROJ, -1.0, 1.0)];
    let mut params: Vec<DeviceBuffer<f32>> = host.iter().map(|v| up(&dev, v)).collect();
    let cot = rng.vec(batch * N_PROJ, -1.0, 1.0);
    let mut grads = [zeros(&dev, host[0].len()), zeros(&dev, host[1].len()), zeros(&dev, N_PROJ)];
    let [g_h, g_p, g_c] = &mut grads;
    let g_y = up(&dev, &cot);
    let cfg = launch::projection_backward(batch, n_hid);
    k.projection_backward
        .launch(dev.stream(), cfg, &params[0], &params[1], &g_y, batch as i32, n_hid as i32, g_h, g_p, g_c)
        .unwrap();
    let analytic: Vec<Vec<f32>> = grads.iter().map(|g| down(&dev, g)).collect();
    let mut y = zeros(&dev, batch * N_PROJ);
    let reports = GradCheck::default()
        .with_samples(16, seed)
        .check_all(&dev, &["h", "p", "c"], &mut params, &analytic, |p| {
            projection_dev(&dev, &k, batch, n_hid, p, &mut y)?;
            weighted_sum(&dev, &y, &cot)
        })
        .unwrap();
    assert_all_passed(&reports);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn projection_backward_matches_finite_differences_b1() {
    gradcheck_projection(1, 401);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn projection_backward_matches_finite_differences_b256() {
    gradcheck_projection(256, 402);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn projection_backward_matches_finite_differences_b300() {
    gradcheck_projection(300, 403);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn heads_backward_matches_finite_differences_b300() {
    // 300 rows over the 32 warps of a block: each warp takes one chunk of 8 rows and a remainder.
    gradcheck_heads(300, 303);
}

/// `[g_h, g_w_h, g_b_h]` of one heads backward launch with `block` (and the header's grid for a
/// 1-D block of that width), added into buffers that start at `init`.
fn heads_backward_with_block(
    dev: &Device,
    k: &Kernels,
    inputs: &[DeviceBuffer<f32>; 5],
    batch: usize,
    n_hid: usize,
    block: (u32, u32, u32),
    init: f32,
) -> [Vec<f32>; 3] {
    let grid = (batch * n_hid).div_ceil(block.0 as usize) + (N_HORIZONS * (n_hid + 1)).div_ceil(32);
    let cfg = kgraph::LaunchConfig { grid_dim: (grid as u32, 1, 1), block_dim: block, shared_mem_bytes: 0 };
    let [h, w, probs, g_logits, g_probs] = inputs;
    let mut out = [batch * n_hid, N_HORIZONS * n_hid, N_HORIZONS].map(|n| up(dev, &vec![init; n]));
    let [g_h, g_w, g_b] = &mut out;
    let (b, nh) = (batch as i32, n_hid as i32);
    k.multi_horizon_heads_backward
        .launch(dev.stream(), cfg, h, w, probs, g_logits, g_probs, b, nh, g_h, g_w, g_b)
        .unwrap();
    out.map(|g| down(dev, &g))
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn heads_backward_is_reproducible_and_any_block_of_whole_warps_agrees() {
    // The weight gradients split the batch over the block's warps, so their summation order
    // depends on the block: bit-identical run to run for one block, equal within rounding across
    // blocks. g_h sums over the 5 heads in one thread: bit-identical for every block.
    let dev = device();
    let k = kernels(&dev);
    let (batch, n_hid) = (300, 40);
    let mut rng = Lcg::new(311);
    let n_out = batch * N_HORIZONS;
    let inputs = [
        up(&dev, &rng.vec(batch * n_hid, -1.0, 1.0)),
        up(&dev, &weights(&mut rng, N_HORIZONS, n_hid, 3.0)),
        up(&dev, &rng.vec(n_out, 0.01, 0.99)),
        up(&dev, &rng.vec(n_out, -1.0, 1.0)),
        up(&dev, &rng.vec(n_out, -1.0, 1.0)),
    ];
    let default = launch::multi_horizon_heads_backward(batch, n_hid).block_dim;
    let want = heads_backward_with_block(&dev, &k, &inputs, batch, n_hid, default, 0.0);
    let names = ["g_h", "g_w_h", "g_b_h"];
    for (name, g) in names.iter().zip(&want) {
        assert_all_finite(name, g);
        assert!(g.iter().all(|&v| v != 0.0), "{name}: every element takes a nonzero sum");
    }
    for _ in 0..3 {
        let again = heads_backward_with_block(&dev, &k, &inputs, batch, n_hid, default, 0.0);
        for ((name, a), b) in names.iter().zip(&again).zip(&want) {
            assert_bitwise_eq(&format!("{name}, repeated"), a, b);
        }
    }
    for block in [512, 256, 96, 32] {
        let got = heads_backward_with_block(&dev, &k, &inputs, batch, n_hid, (block, 1, 1), 0.0);
        assert_bitwise_eq(&format!("g_h, block {block}"), &got[0], &want[0]);
        for ((name, a), b) in names.iter().zip(&got).zip(&want).skip(1) {
            for (i, (&x, &y)) in a.iter().zip(b).enumerate() {
                assert!((x - y).abs() <= 1e-4 * (1.0 + y.abs()), "{name}[{i}], block {block}: {x} vs {y}");
            }
        }
    }
    // A block that is not 1-D whole warps writes nothing (the reduction's shuffles need every lane).
    for block in [(48, 1, 1), (32, 2, 1)] {
        let got = heads_backward_with_block(&dev, &k, &inputs, batch, n_hid, block, 7.0);
        for (name, g) in names.iter().zip(&got) {
            assert!(g.iter().all(|&v| v == 7.0), "{name}, block {block:?}: untouched");
        }
    }
}
