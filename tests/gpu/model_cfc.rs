//! `cfc_step` forward invariants (fixed point at dt = 0, range, monotone approach to the
//! target, batch independence) and its two backward kernels against finite differences.

use kgraph::gradcheck::{assert_all_passed, weighted_sum, GradCheck};
use kgraph::{Device, DeviceBuffer, Result};
use kgraph_model::model::{launch, Kernels, N_FEAT};

use super::common::device;
use super::model_util::{assert_all_finite, assert_bitwise_eq, down, kernels, up, weights, zeros, Lcg};

/// One CfC problem on the host: `[x, h_old, w_g, b_g, w_t, b_t]` and `dt`.
struct Cfc {
    batch: usize,
    n_in: usize,
    n_hid: usize,
    params: [Vec<f32>; 6],
    dt: Vec<f32>,
}

const NAMES: [&str; 6] = ["x", "h_old", "w_g", "b_g", "w_t", "b_t"];

impl Cfc {
    fn random(rng: &mut Lcg, batch: usize, n_in: usize, n_hid: usize, weight_scale: f32) -> Cfc {
        let k = n_in + n_hid;
        let params = [
            rng.vec(batch * n_in, -1.0, 1.0),
            rng.vec(batch * n_hid, -1.0, 1.0),
            weights(rng, n_hid, k, weight_scale),
            rng.vec(n_hid, -0.5, 0.5),
            weights(rng, n_hid, k, weight_scale),
            rng.vec(n_hid, -0.5, 0.5),
        ];
        let dt = rng.vec(batch, 0.1, 1.5);
        Cfc { batch, n_in, n_hid, params, dt }
    }

    fn upload(&self, dev: &Device) -> Vec<DeviceBuffer<f32>> {
        self.params.iter().map(|p| up(dev, p)).collect()
    }
}

/// Runs the forward on device buffers `p = [x, h_old, w_g, b_g, w_t, b_t]`.
fn forward_dev(
    dev: &Device,
    k: &Kernels,
    c: &Cfc,
    p: &[&DeviceBuffer<f32>],
    dt: &DeviceBuffer<f32>,
    h_new: &mut DeviceBuffer<f32>,
) -> Result<()> {
    let cfg = launch::cfc_step(c.batch, c.n_hid);
    let (b, ni, nh) = (c.batch as i32, c.n_in as i32, c.n_hid as i32);
    k.cfc_step.launch(dev.stream(), cfg, p[0], p[1], p[2], p[3], p[4], p[5], dt, b, ni, nh, h_new)
}

fn forward(dev: &Device, k: &Kernels, c: &Cfc) -> Vec<f32> {
    let bufs = c.upload(dev);
    let refs: Vec<&DeviceBuffer<f32>> = bufs.iter().collect();
    let mut h_new = zeros(dev, c.batch * c.n_hid);
    forward_dev(dev, k, c, &refs, &up(dev, &c.dt), &mut h_new).unwrap();
    down(dev, &h_new)
}

/// Both backward kernels into `grads` (accumulating), in the order of `NAMES`.
fn backward_into(
    dev: &Device,
    k: &Kernels,
    c: &Cfc,
    p: &[&DeviceBuffer<f32>],
    dt: &DeviceBuffer<f32>,
    g_h_new: &DeviceBuffer<f32>,
    grads: &mut [DeviceBuffer<f32>],
) {
    let (b, ni, nh) = (c.batch as i32, c.n_in as i32, c.n_hid as i32);
    let mut d_pre_g = zeros(dev, c.batch * c.n_hid);
    let mut d_pre_t = zeros(dev, c.batch * c.n_hid);
    let [g_x, g_h, g_wg, g_bg, g_wt, g_bt] = grads else { panic!("six gradient buffers") };
    let cfg = launch::cfc_step_backward_gates(c.batch, c.n_hid);
    k.cfc_step_backward_gates
        .launch(
            dev.stream(),
            cfg,
            p[0],
            p[1],
            p[2],
            p[3],
            p[4],
            p[5],
            dt,
            g_h_new,
            b,
            ni,
            nh,
            &mut d_pre_g,
            &mut d_pre_t,
            g_h,
        )
        .unwrap();
    let cfg = launch::cfc_step_backward_params(c.batch, c.n_in, c.n_hid);
    k.cfc_step_backward_params
        .launch(
            dev.stream(),
            cfg,
            p[0],
            p[1],
            p[2],
            p[4],
            &d_pre_g,
            &d_pre_t,
            b,
            ni,
            nh,
            g_x,
            g_h,
            g_wg,
            g_bg,
            g_wt,
            g_bt,
        )
        .unwrap();
}

fn zero_grads(dev: &Device, c: &Cfc) -> Vec<DeviceBuffer<f32>> {
    c.params.iter().map(|p| zeros(dev, p.len())).collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cfc_dt_zero_negative_or_nan_is_an_exact_fixed_point() {
    let dev = device();
    let k = kernels(&dev);
    for batch in [1usize, 256] {
        let mut rng = Lcg::new(1 + batch as u64);
        let mut c = Cfc::random(&mut rng, batch, N_FEAT, 64, 3.0);
        let specials = [0.0f32, -0.0, -1.0, f32::NAN, f32::NEG_INFINITY];
        c.dt = (0..batch).map(|r| specials[r % specials.len()]).collect();
        let h_new = forward(&dev, &k, &c);
        for (i, (&a, &b)) in h_new.iter().zip(&c.params[1]).enumerate() {
            assert!(a == b, "h_new[{i}] = {a} but h_old = {b} at dt = {}", c.dt[i / c.n_hid]);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cfc_h_new_stays_within_max_of_abs_h_old_and_one_even_saturated() {
    let dev = device();
    let k = kernels(&dev);
    for (batch, scale, x_range, h_range) in
        [(1usize, 2.0f32, 1.0f32, 3.0f32), (256, 2.0, 1.0, 3.0), (256, 50.0, 1e4, 5.0)]
    {
        let mut rng = Lcg::new(7 + batch as u64 + scale as u64);
        let mut c = Cfc::random(&mut rng, batch, N_FEAT, 32, scale);
        c.params[0] = rng.vec(batch * c.n_in, -x_range, x_range);
        c.params[1] = rng.vec(batch * c.n_hid, -h_range, h_range);
        c.dt = rng.vec(batch, 0.0, 1e3);
        let h_new = forward(&dev, &k, &c);
        assert_all_finite("h_new", &h_new);
        for (i, (&hn, &ho)) in h_new.iter().zip(&c.params[1]).enumerate() {
            // h_new is a convex combination of h_old and tanh(.) in [-1, 1]; f32 rounding of
            // fma(a, t - h, h) can add at most ~3 ulp.
            let bound = ho.abs().max(1.0) * (1.0 + 1e-6);
            assert!(hn.abs() <= bound, "|h_new[{i}]| = {} > {bound}", hn.abs());
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cfc_h_new_moves_monotonically_toward_the_target_as_dt_grows() {
    let dev = device();
    let k = kernels(&dev);
    let mut rng = Lcg::new(13);
    let one = Cfc::random(&mut rng, 1, N_FEAT, 48, 3.0);
    // 256 copies of one row; dt grows along the batch, the last rows saturate (a = 1).
    let batch = 256;
    let mut c = Cfc::random(&mut rng, batch, N_FEAT, 48, 3.0);
    c.params[0] = one.params[0].repeat(batch);
    c.params[1] = one.params[1].repeat(batch);
    c.params[2..].clone_from_slice(&one.params[2..]);
    let huge = [1e30f32, 1e38, f32::MAX, f32::INFINITY];
    c.dt = (0..batch)
        .map(|r| if r < batch - huge.len() { 0.02 * r as f32 } else { huge[r + huge.len() - batch] })
        .collect();
    let h = forward(&dev, &k, &c);
    let n = c.n_hid;
    let row = |r: usize| &h[r * n..(r + 1) * n];
    let h_old = &one.params[1];
    let target = row(batch - 1);
    for r in batch - huge.len()..batch {
        assert_bitwise_eq(&format!("saturated row {r}"), row(r), target);
    }
    assert_eq!(row(0), &h_old[..], "dt = 0 row");
    for j in 0..n {
        assert!(target[j].abs() <= 1.0 + 1e-6, "target[{j}] = {} is not a tanh value", target[j]);
        let toward = (target[j] - h_old[j]).signum();
        let mut prev = 0.0f32;
        for r in 0..batch {
            let step = (row(r)[j] - h_old[j]) * toward; // distance travelled toward the target
            assert!(step >= -1e-6, "unit {j}, row {r}: moved away from the target ({step})");
            assert!(step >= prev - 1e-6, "unit {j}, row {r}: moved back ({step} < {prev})");
            assert!(step <= (target[j] - h_old[j]).abs() + 1e-6, "unit {j}, row {r}: overshot the target");
            prev = step;
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cfc_batch_rows_match_single_row_launches_and_repeat_bitwise() {
    let dev = device();
    let k = kernels(&dev);
    let mut rng = Lcg::new(17);
    let c = Cfc::random(&mut rng, 256, N_FEAT, 40, 2.0);
    let h = forward(&dev, &k, &c);
    assert_bitwise_eq("repeat", &h, &forward(&dev, &k, &c));
    for r in [0usize, 100, 255] {
        let mut one = Cfc { batch: 1, n_in: c.n_in, n_hid: c.n_hid, params: c.params.clone(), dt: vec![c.dt[r]] };
        one.params[0] = c.params[0][r * c.n_in..(r + 1) * c.n_in].to_vec();
        one.params[1] = c.params[1][r * c.n_hid..(r + 1) * c.n_hid].to_vec();
        assert_bitwise_eq(&format!("row {r}"), &h[r * c.n_hid..(r + 1) * c.n_hid], &forward(&dev, &k, &one));
    }
}

fn gradcheck_cfc(batch: usize, n_hid: usize, seed: u64) {
    let dev = device();
    let k = kernels(&dev);
    let mut rng = Lcg::new(seed);
    let c = Cfc::random(&mut rng, batch, N_FEAT, n_hid, 2.0);
    let dt = up(&dev, &c.dt);
    let cot = rng.vec(batch * n_hid, -1.0, 1.0);
    let g_h_new = up(&dev, &cot);
    let mut params = c.upload(&dev);
    let mut grads = zero_grads(&dev, &c);
    let refs: Vec<&DeviceBuffer<f32>> = params.iter().collect();
    backward_into(&dev, &k, &c, &refs, &dt, &g_h_new, &mut grads);
    let analytic: Vec<Vec<f32>> = grads.iter().map(|g| down(&dev, g)).collect();
    for (name, g) in NAMES.iter().zip(&analytic) {
        assert_all_finite(name, g);
        assert!(g.iter().any(|&v| v != 0.0), "gradient of {name} is all zero");
    }
    let mut h_new = zeros(&dev, batch * n_hid);
    let reports = GradCheck::default()
        .with_samples(16, seed)
        .check_all(&dev, &NAMES, &mut params, &analytic, |p| {
            forward_dev(&dev, &k, &c, p, &dt, &mut h_new)?;
            weighted_sum(&dev, &h_new, &cot)
        })
        .unwrap();
    assert_all_passed(&reports);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cfc_backward_matches_finite_differences_b1() {
    gradcheck_cfc(1, 64, 101);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cfc_backward_matches_finite_differences_b256() {
    gradcheck_cfc(256, 32, 202);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cfc_backward_at_dt_zero_passes_the_gradient_straight_through() {
    let dev = device();
    let k = kernels(&dev);
    let mut rng = Lcg::new(31);
    let mut c = Cfc::random(&mut rng, 256, N_FEAT, 32, 2.0);
    c.dt = vec![0.0; c.batch];
    let cot = rng.vec(c.batch * c.n_hid, -1.0, 1.0);
    let params = c.upload(&dev);
    let refs: Vec<&DeviceBuffer<f32>> = params.iter().collect();
    let mut grads = zero_grads(&dev, &c);
    backward_into(&dev, &k, &c, &refs, &up(&dev, &c.dt), &up(&dev, &cot), &mut grads);
    let g: Vec<Vec<f32>> = grads.iter().map(|b| down(&dev, b)).collect();
    assert_eq!(g[1], cot, "h_new = h_old at dt = 0, so g_h_old = g_h_new");
    for (name, grad) in NAMES.iter().zip(&g).filter(|(n, _)| **n != "h_old") {
        assert!(grad.iter().all(|&v| v == 0.0), "{name}: no influence at dt = 0, gradient must be 0");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cfc_backward_accumulates_into_gradient_buffers() {
    let dev = device();
    let k = kernels(&dev);
    let mut rng = Lcg::new(37);
    let c = Cfc::random(&mut rng, 256, N_FEAT, 32, 2.0);
    let (dt, g_h_new) = (up(&dev, &c.dt), up(&dev, &rng.vec(c.batch * c.n_hid, -1.0, 1.0)));
    let params = c.upload(&dev);
    let refs: Vec<&DeviceBuffer<f32>> = params.iter().collect();
    let mut grads = zero_grads(&dev, &c);
    backward_into(&dev, &k, &c, &refs, &dt, &g_h_new, &mut grads);
    let once: Vec<Vec<f32>> = grads.iter().map(|b| down(&dev, b)).collect();
    backward_into(&dev, &k, &c, &refs, &dt, &g_h_new, &mut grads);
    let twice: Vec<Vec<f32>> = grads.iter().map(|b| down(&dev, b)).collect();
    for (p, name) in NAMES.iter().enumerate() {
        for (i, (&a, &b)) in once[p].iter().zip(&twice[p]).enumerate() {
            if p == 1 {
                // g_h_old takes two += per call (direct path, then W^T d_pre): equal up to the
                // rounding of O(1) partial sums.
                assert!((b - 2.0 * a).abs() <= 8.0 * f32::EPSILON * b.abs().max(1.0), "{name}[{i}]: {b} vs 2 x {a}");
            } else {
                assert_eq!(b, 2.0 * a, "{name}[{i}]: one += per call, so exactly twice");
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cfc_backward_matches_finite_differences_b300() {
    // 300 rows over the 32 warps of a block: each warp takes one chunk of 8 rows and a remainder.
    gradcheck_cfc(300, 32, 303);
}

/// `[g_x, g_h_old, g_w_g, g_b_g, g_w_t, g_b_t]` of one `cfc_step_backward_params` launch with
/// `block` (and the header's grid for a 1-D block of that width), added into buffers that start
/// at `init`. `inputs = [x, h_old, w_g, w_t, d_pre_g, d_pre_t]`.
fn params_with_block(
    dev: &Device,
    k: &Kernels,
    c: &Cfc,
    inputs: &[DeviceBuffer<f32>; 6],
    block: (u32, u32, u32),
    init: f32,
) -> Vec<Vec<f32>> {
    let k_all = c.n_in + c.n_hid;
    let grid = (c.batch * k_all).div_ceil(block.0 as usize) + (c.n_hid * (k_all + 1)).div_ceil(32);
    let cfg = kgraph::LaunchConfig { grid_dim: (grid as u32, 1, 1), block_dim: block, shared_mem_bytes: 0 };
    let [x, h_old, w_g, w_t, d_pre_g, d_pre_t] = inputs;
    let mut out: Vec<DeviceBuffer<f32>> = c.params.iter().map(|p| up(dev, &vec![init; p.len()])).collect();
    let [g_x, g_h, g_wg, g_bg, g_wt, g_bt] = &mut out[..] else { panic!("six gradient buffers") };
    let (b, ni, nh) = (c.batch as i32, c.n_in as i32, c.n_hid as i32);
    k.cfc_step_backward_params
        .launch(dev.stream(), cfg, x, h_old, w_g, w_t, d_pre_g, d_pre_t, b, ni, nh, g_x, g_h, g_wg, g_bg, g_wt, g_bt)
        .unwrap();
    out.iter().map(|g| down(dev, g)).collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cfc_params_backward_is_reproducible_and_any_block_of_whole_warps_agrees() {
    // The weight and bias gradients split the batch over the block's warps, so their summation
    // order depends on the block: bit-identical run to run for one block, equal within rounding
    // across blocks. g_x and g_h_old sum over the units in one thread: bit-identical for every
    // block.
    let dev = device();
    let k = kernels(&dev);
    let mut rng = Lcg::new(313);
    let c = Cfc::random(&mut rng, 300, N_FEAT, 24, 2.0);
    let n = c.batch * c.n_hid;
    let inputs = [0, 1, 2, 4].map(|i| up(&dev, &c.params[i]));
    let [x, h_old, w_g, w_t] = inputs;
    let inputs = [x, h_old, w_g, w_t, up(&dev, &rng.vec(n, -1.0, 1.0)), up(&dev, &rng.vec(n, -1.0, 1.0))];
    let default = launch::cfc_step_backward_params(c.batch, c.n_in, c.n_hid).block_dim;
    let want = params_with_block(&dev, &k, &c, &inputs, default, 0.0);
    for (name, g) in NAMES.iter().zip(&want) {
        assert_all_finite(name, g);
        assert!(g.iter().all(|&v| v != 0.0), "{name}: every element takes a nonzero sum");
    }
    for _ in 0..3 {
        let again = params_with_block(&dev, &k, &c, &inputs, default, 0.0);
        for ((name, a), b) in NAMES.iter().zip(&again).zip(&want) {
            assert_bitwise_eq(&format!("{name}, repeated"), a, b);
        }
    }
    for block in [512, 256, 96, 32] {
        let got = params_with_block(&dev, &k, &c, &inputs, (block, 1, 1), 0.0);
        for ((name, a), b) in NAMES.iter().zip(&got).zip(&want) {
            if matches!(*name, "x" | "h_old") {
                assert_bitwise_eq(&format!("{name}, block {block}"), a, b);
                continue;
            }
            for (i, (&x, &y)) in a.iter().zip(b).enumerate() {
                assert!((x - y).abs() <= 1e-4 * (1.0 + y.abs()), "{name}[{i}], block {block}: {x} vs {y}");
            }
        }
    }
    // A block that is not 1-D whole warps writes nothing (the reduction's shuffles need every lane).
    for block in [(48, 1, 1), (32, 2, 1)] {
        let got = params_with_block(&dev, &k, &c, &inputs, block, 7.0);
        for (name, g) in NAMES.iter().zip(&got) {
            assert!(g.iter().all(|&v| v == 7.0), "gradient of {name}, block {block:?}: untouched");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cfc_params_backward_with_negative_sizes_writes_nothing() {
    // batch = -1, n_in = -2, n_hid = 0 satisfies every extent (batch * n_in = 2, the rest 0), and
    // the kernel's unsigned batch * (n_in + n_hid) is 2: without its size guard it would add
    // into g_h_old[2] and g_h_old[3] of a buffer whose extent is 0. Each buffer holds -0.0, which
    // any += 0.0 would turn into +0.0.
    let dev = device();
    let k = kernels(&dev);
    let neg = |n: usize| up(&dev, &vec![-0.0f32; n]);
    let (x, h_old, w_g, w_t, d_pre_g, d_pre_t) = (neg(2), neg(4), neg(1), neg(1), neg(1), neg(1));
    let mut out: Vec<DeviceBuffer<f32>> = [2, 4, 1, 1, 1, 1].iter().map(|&n| neg(n)).collect();
    let [g_x, g_h, g_wg, g_bg, g_wt, g_bt] = &mut out[..] else { panic!("six gradient buffers") };
    let cfg = kgraph::LaunchConfig { grid_dim: (4, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
    k.cfc_step_backward_params
        .launch(
            dev.stream(),
            cfg,
            &x,
            &h_old,
            &w_g,
            &w_t,
            &d_pre_g,
            &d_pre_t,
            -1,
            -2,
            0,
            g_x,
            g_h,
            g_wg,
            g_bg,
            g_wt,
            g_bt,
        )
        .unwrap();
    for (name, g) in NAMES.iter().zip(&out) {
        let got = down(&dev, g);
        assert_bitwise_eq(&format!("gradient of {name}"), &got, &vec![-0.0; got.len()]);
    }
}
