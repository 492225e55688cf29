//! The train step's fused and overwriting kernels against the model kernels they replace, bit for
//! bit: `multi_horizon_heads_bce_backward` = `bce_with_logits` then `multi_horizon_heads_backward`
//! (g_probs = 0) into zeroed buffers; `cfc_step_backward_pre` + `cfc_step_backward_weights` =
//! `cfc_step_backward_gates` + `cfc_step_backward_params` (their weight gradients) into zeroed
//! buffers; `adamw_scheduled_group` = six `adamw_scheduled` launches, for any grid and for
//! misaligned views; `cfc_step_save` = `cfc_step` (h_new), and with its stored coefficients
//! `multi_horizon_heads_bce_cfc_backward` = `multi_horizon_heads_bce_backward` then
//! `cfc_step_backward_pre`; `cfc_step_backward_weights_adamw` = `cfc_step_backward_weights` then
//! `adamw_scheduled_group`; `train_forward` = `snap_feature_assemble`, `cfc_step_save` and
//! `multi_horizon_heads`. The replaced kernels are checked against finite differences in
//! model_bce.rs, model_heads.rs and model_cfc.rs, so equality carries those checks over. The
//! overwriting kernels' outputs start as NaN sentinels: every float must be written.

use kgraph::{DeviceBuffer, LaunchConfig};
use kgraph_model::model::{launch, N_HORIZONS};

use super::common::device;
use super::model_util::{assert_all_finite, assert_bitwise_eq, down, kernels, up, weights, zeros, Lcg};

/// A buffer of `n` NaN sentinels (a payload no kernel produces).
fn sentinels(dev: &kgraph::Device, n: usize) -> DeviceBuffer<f32> {
    up(dev, &vec![f32::from_bits(0x7FC0_1234); n])
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn heads_bce_backward_equals_bce_then_heads_backward_bit_for_bit() {
    let dev = device();
    let k = kernels(&dev);
    for (batch, n_hid) in [(1usize, 32usize), (256, 32), (300, 64)] {
        let mut rng = Lcg::new(7 + batch as u64);
        let count = batch * N_HORIZONS;
        let h = up(&dev, &rng.vec(batch * n_hid, -1.0, 1.0));
        let w_h = up(&dev, &weights(&mut rng, N_HORIZONS, n_hid, 2.0));
        let logits = up(&dev, &rng.vec(count, -6.0, 6.0));
        let targets = up(&dev, &(0..count).map(|_| if rng.unit() < 0.5 { 0.0 } else { 1.0 }).collect::<Vec<f32>>());
        let (b, nh) = (batch as i32, n_hid as i32);
        // The replaced pair: BCE into a zeroed g_logits, then the heads' backward (g_probs = 0,
        // probs irrelevant) into zeroed gradients.
        let (mut loss_ref, mut g_logits) = (zeros(&dev, 1), zeros(&dev, count));
        k.bce_with_logits
            .launch(
                dev.stream(),
                launch::bce_with_logits(),
                &logits,
                &targets,
                count as i32,
                &mut loss_ref,
                &mut g_logits,
            )
            .unwrap();
        let (probs, g_probs) = (zeros(&dev, count), zeros(&dev, count));
        let (mut g_h_ref, mut g_w_ref, mut g_b_ref) =
            (zeros(&dev, batch * n_hid), zeros(&dev, N_HORIZONS * n_hid), zeros(&dev, N_HORIZONS));
        k.multi_horizon_heads_backward
            .launch(
                dev.stream(),
                launch::multi_horizon_heads_backward(batch, n_hid),
                &h,
                &w_h,
                &probs,
                &g_logits,
                &g_probs,
                b,
                nh,
                &mut g_h_ref,
                &mut g_w_ref,
                &mut g_b_ref,
            )
            .unwrap();
        // The fused kernel, into sentinels.
        let (mut loss, mut g_h, mut g_w, mut g_b) = (
            sentinels(&dev, 1),
            sentinels(&dev, batch * n_hid),
            sentinels(&dev, N_HORIZONS * n_hid),
            sentinels(&dev, N_HORIZONS),
        );
        k.multi_horizon_heads_bce_backward
            .launch(
                dev.stream(),
                launch::multi_horizon_heads_bce_backward(batch, n_hid),
                &h,
                &w_h,
                &logits,
                &targets,
                b,
                nh,
                &mut loss,
                &mut g_h,
                &mut g_w,
                &mut g_b,
            )
            .unwrap();
        let what = |name: &str| format!("batch {batch}, n_hid {n_hid}: {name}");
        for (name, got, want) in
            [("loss", &loss, &loss_ref), ("g_h", &g_h, &g_h_ref), ("g_w_h", &g_w, &g_w_ref), ("g_b_h", &g_b, &g_b_ref)]
        {
            let got = down(&dev, got);
            assert_all_finite(&what(name), &got);
            assert_bitwise_eq(&what(name), &got, &down(&dev, want));
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cfc_backward_pre_and_weights_equal_gates_and_params_bit_for_bit() {
    let dev = device();
    let k = kernels(&dev);
    let n_in = kgraph_model::model::N_FEAT;
    for (batch, n_hid) in [(1usize, 32usize), (256, 32), (300, 48)] {
        let mut rng = Lcg::new(17 + batch as u64);
        let kk = n_in + n_hid;
        let x = up(&dev, &rng.vec(batch * n_in, -1.0, 1.0));
        let h_old = up(&dev, &rng.vec(batch * n_hid, -1.0, 1.0));
        let (w_g, w_t) = (up(&dev, &weights(&mut rng, n_hid, kk, 1.5)), up(&dev, &weights(&mut rng, n_hid, kk, 1.5)));
        let (b_g, b_t) = (up(&dev, &rng.vec(n_hid, -0.5, 0.5)), up(&dev, &rng.vec(n_hid, -0.5, 0.5)));
        let dt = up(&dev, &rng.vec(batch, 0.1, 1.5));
        let g_h_new = up(&dev, &rng.vec(batch * n_hid, -1.0, 1.0));
        let (b, ni, nh) = (batch as i32, n_in as i32, n_hid as i32);
        let nw = n_hid * kk;
        // The replaced pair, accumulating into zeroed buffers.
        let (mut dg_ref, mut dt_ref) = (zeros(&dev, batch * n_hid), zeros(&dev, batch * n_hid));
        let (mut g_x, mut g_h_old) = (zeros(&dev, batch * n_in), zeros(&dev, batch * n_hid));
        let mut refs = [zeros(&dev, nw), zeros(&dev, n_hid), zeros(&dev, nw), zeros(&dev, n_hid)];
        let s = dev.stream();
        k.cfc_step_backward_gates
            .launch(
                s,
                launch::cfc_step_backward_gates(batch, n_hid),
                &x,
                &h_old,
                &w_g,
                &b_g,
                &w_t,
                &b_t,
                &dt,
                &g_h_new,
                b,
                ni,
                nh,
                &mut dg_ref,
                &mut dt_ref,
                &mut g_h_old,
            )
            .unwrap();
        let [r_wg, r_bg, r_wt, r_bt] = &mut refs;
        k.cfc_step_backward_params
            .launch(
                s,
                launch::cfc_step_backward_params(batch, n_in, n_hid),
                &x,
                &h_old,
                &w_g,
                &w_t,
                &dg_ref,
                &dt_ref,
                b,
                ni,
                nh,
                &mut g_x,
                &mut g_h_old,
                r_wg,
                r_bg,
                r_wt,
                r_bt,
            )
            .unwrap();
        // The train step's forms, into sentinels.
        let (mut dg, mut dtau) = (sentinels(&dev, batch * n_hid), sentinels(&dev, batch * n_hid));
        k.cfc_step_backward_pre
            .launch(
                s,
                launch::cfc_step_backward_gates(batch, n_hid),
                &x,
                &h_old,
                &w_g,
                &b_g,
                &w_t,
                &b_t,
                &dt,
                &g_h_new,
                b,
                ni,
                nh,
                &mut dg,
                &mut dtau,
            )
            .unwrap();
        let mut got = [sentinels(&dev, nw), sentinels(&dev, n_hid), sentinels(&dev, nw), sentinels(&dev, n_hid)];
        let [g_wg, g_bg, g_wt, g_bt] = &mut got;
        k.cfc_step_backward_weights
            .launch(
                s,
                launch::cfc_step_backward_weights(n_in, n_hid),
                &x,
                &h_old,
                &dg,
                &dtau,
                b,
                ni,
                nh,
                g_wg,
                g_bg,
                g_wt,
                g_bt,
            )
            .unwrap();
        let what = |name: &str| format!("batch {batch}, n_hid {n_hid}: {name}");
        assert_bitwise_eq(&what("d_pre_g"), &down(&dev, &dg), &down(&dev, &dg_ref));
        assert_bitwise_eq(&what("d_pre_t"), &down(&dev, &dtau), &down(&dev, &dt_ref));
        for (name, (g, r)) in ["g_w_g", "g_b_g", "g_w_t", "g_b_t"].iter().zip(got.iter().zip(&refs)) {
            let g = down(&dev, g);
            assert_all_finite(&what(name), &g);
            assert_bitwise_eq(&what(name), &g, &down(&dev, r));
        }
    }
}

/// One AdamW tensor on the host: grad, param, m, v.
struct Tensor {
    g: Vec<f32>,
    p: Vec<f32>,
    m: Vec<f32>,
    v: Vec<f32>,
}

impl Tensor {
    fn random(rng: &mut Lcg, n: usize) -> Tensor {
        Tensor { g: rng.vec(n, -1.0, 1.0), p: rng.vec(n, -1.0, 1.0), m: rng.vec(n, -0.5, 0.5), v: rng.vec(n, 0.0, 1.0) }
    }
}

/// `v` in a device buffer one element longer, starting at element `offset` (0 or 1: 1 makes a
/// view that is not 16-byte aligned).
fn placed(dev: &kgraph::Device, v: &[f32], offset: usize) -> DeviceBuffer<f32> {
    let mut b = zeros(dev, v.len() + 1);
    dev.upload_into(v, &mut b.slice_mut(offset..offset + v.len()).unwrap()).unwrap();
    b
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn adamw_group_equals_six_scheduled_launches_for_any_grid_and_alignment() {
    let dev = device();
    let k = kernels(&dev);
    let mut rng = Lcg::new(29);
    // Sizes with float4 tails, a tensor under one float4, and more than one chunk of 1024.
    let lens = [2464usize, 32, 1001, 5, 3000, 1];
    let tensors: Vec<Tensor> = lens.iter().map(|&n| Tensor::random(&mut rng, n)).collect();
    let (lr, beta1, beta2, eps, wd) = (1e-2f32, 0.9f32, 0.999f32, 1e-8f32, 0.01f32);
    let schedule = up(&dev, &[lr, 1.0 - beta1.powi(3), 1.0 - beta2.powi(3)]);
    // The reference: one adamw_scheduled launch per tensor.
    let want: Vec<[Vec<f32>; 3]> = tensors
        .iter()
        .map(|t| {
            let n = t.g.len();
            let (mut p, mut m, mut v) = (up(&dev, &t.p), up(&dev, &t.m), up(&dev, &t.v));
            k.adamw_scheduled
                .launch(
                    dev.stream(),
                    launch::adamw(n),
                    &up(&dev, &t.g),
                    &schedule,
                    beta1,
                    beta2,
                    eps,
                    wd,
                    n as i32,
                    &mut p,
                    &mut m,
                    &mut v,
                )
                .unwrap();
            [down(&dev, &p), down(&dev, &m), down(&dev, &v)]
        })
        .collect();
    let block = |grid: u32, threads: u32| LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    };
    // The formula's grid, one block (grid-stride over the chunks) and a smaller block; tensor 2
    // misaligned in the last case (element by element there, the same bits).
    for (case, cfg, misaligned) in [
        ("formula", launch::adamw_group(&lens), false),
        ("one block", block(1, 256), false),
        ("block 64", block(7, 64), true),
    ] {
        let offset = |i: usize| usize::from(misaligned && i == 2);
        let mut bufs: Vec<[DeviceBuffer<f32>; 4]> = tensors
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let o = offset(i);
                [placed(&dev, &t.g, o), placed(&dev, &t.p, o), placed(&dev, &t.m, o), placed(&dev, &t.v, o)]
            })
            .collect();
        {
            let mut views = bufs.iter_mut().enumerate().map(|(i, [g, p, m, v])| {
                let r = offset(i)..offset(i) + lens[i];
                (
                    g.slice(r.clone()).unwrap(),
                    p.slice_mut(r.clone()).unwrap(),
                    m.slice_mut(r.clone()).unwrap(),
                    v.slice_mut(r).unwrap(),
                )
            });
            let mut next = || views.next().unwrap();
            let (g0, mut p0, mut m0, mut v0) = next();
            let (g1, mut p1, mut m1, mut v1) = next();
            let (g2, mut p2, mut m2, mut v2) = next();
            let (g3, mut p3, mut m3, mut v3) = next();
            let (g4, mut p4, mut m4, mut v4) = next();
            let (g5, mut p5, mut m5, mut v5) = next();
            let n = |i: usize| lens[i] as i32;
            k.adamw_scheduled_group
                .launch(
                    dev.stream(),
                    cfg,
                    &schedule,
                    beta1,
                    beta2,
                    eps,
                    wd,
                    &g0,
                    n(0),
                    &mut p0,
                    &mut m0,
                    &mut v0,
                    &g1,
                    n(1),
                    &mut p1,
                    &mut m1,
                    &mut v1,
                    &g2,
                    n(2),
                    &mut p2,
                    &mut m2,
                    &mut v2,
                    &g3,
                    n(3),
                    &mut p3,
                    &mut m3,
                    &mut v3,
                    &g4,
                    n(4),
                    &mut p4,
                    &mut m4,
                    &mut v4,
                    &g5,
                    n(5),
                    &mut p5,
                    &mut m5,
                    &mut v5,
                )
                .unwrap();
        }
        for (i, (b, w)) in bufs.iter().zip(&want).enumerate() {
            let r = offset(i)..offset(i) + lens[i];
            for (j, name) in ["param", "m", "v"].iter().enumerate() {
                let got = down(&dev, &b[j + 1]);
                assert_bitwise_eq(&format!("{case}: tensor {i} {name}"), &got[r.clone()], &w[j]);
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cfc_step_save_then_the_gate_folding_heads_backward_equal_the_unfused_kernels_bit_for_bit() {
    let dev = device();
    let k = kernels(&dev);
    let n_in = kgraph_model::model::N_FEAT;
    for (batch, n_hid) in [(1usize, 32usize), (256, 32), (300, 48)] {
        let mut rng = Lcg::new(41 + batch as u64);
        let kk = n_in + n_hid;
        let x = up(&dev, &rng.vec(batch * n_in, -1.0, 1.0));
        let h_old = up(&dev, &rng.vec(batch * n_hid, -1.0, 1.0));
        let (w_g, w_t) = (up(&dev, &weights(&mut rng, n_hid, kk, 1.5)), up(&dev, &weights(&mut rng, n_hid, kk, 1.5)));
        let (b_g, b_t) = (up(&dev, &rng.vec(n_hid, -0.5, 0.5)), up(&dev, &rng.vec(n_hid, -0.5, 0.5)));
        let dt = up(&dev, &rng.vec(batch, 0.1, 1.5));
        let w_h = up(&dev, &weights(&mut rng, N_HORIZONS, n_hid, 2.0));
        let b_h = up(&dev, &rng.vec(N_HORIZONS, -0.5, 0.5));
        let count = batch * N_HORIZONS;
        let targets = up(&dev, &(0..count).map(|_| if rng.unit() < 0.5 { 0.0 } else { 1.0 }).collect::<Vec<f32>>());
        let (b, ni, nh) = (batch as i32, n_in as i32, n_hid as i32);
        let s = dev.stream();
        let what = |name: &str| format!("batch {batch}, n_hid {n_hid}: {name}");
        // Forward: cfc_step_save's h_new is cfc_step's.
        let (mut h1_ref, mut h1, mut coeffs) =
            (zeros(&dev, batch * n_hid), sentinels(&dev, batch * n_hid), sentinels(&dev, 4 * batch * n_hid));
        let cfg = launch::cfc_step(batch, n_hid);
        k.cfc_step.launch(s, cfg, &x, &h_old, &w_g, &b_g, &w_t, &b_t, &dt, b, ni, nh, &mut h1_ref).unwrap();
        k.cfc_step_save
            .launch(s, cfg, &x, &h_old, &w_g, &b_g, &w_t, &b_t, &dt, b, ni, nh, &mut h1, &mut coeffs)
            .unwrap();
        assert_bitwise_eq(&what("h_new"), &down(&dev, &h1), &down(&dev, &h1_ref));
        assert_all_finite(&what("coeffs"), &down(&dev, &coeffs));
        let (mut logits, mut probs) = (zeros(&dev, count), zeros(&dev, count));
        k.multi_horizon_heads
            .launch(s, launch::multi_horizon_heads(batch), &h1, &w_h, &b_h, b, nh, &mut logits, &mut probs)
            .unwrap();
        // The unfused pair: the BCE heads backward (g_h), then the gate step from it.
        let cfg = launch::multi_horizon_heads_bce_backward(batch, n_hid);
        let (mut loss_ref, mut g_h, mut g_w_ref, mut g_b_ref) =
            (zeros(&dev, 1), zeros(&dev, batch * n_hid), zeros(&dev, N_HORIZONS * n_hid), zeros(&dev, N_HORIZONS));
        k.multi_horizon_heads_bce_backward
            .launch(s, cfg, &h1, &w_h, &logits, &targets, b, nh, &mut loss_ref, &mut g_h, &mut g_w_ref, &mut g_b_ref)
            .unwrap();
        let (mut dg_ref, mut dt_ref) = (zeros(&dev, batch * n_hid), zeros(&dev, batch * n_hid));
        k.cfc_step_backward_pre
            .launch(
                s,
                launch::cfc_step_backward_gates(batch, n_hid),
                &x,
                &h_old,
                &w_g,
                &b_g,
                &w_t,
                &b_t,
                &dt,
                &g_h,
                b,
                ni,
                nh,
                &mut dg_ref,
                &mut dt_ref,
            )
            .unwrap();
        // The fused kernel, into sentinels.
        let (mut loss, mut dg, mut dtau, mut g_w, mut g_b) = (
            sentinels(&dev, 1),
            sentinels(&dev, batch * n_hid),
            sentinels(&dev, batch * n_hid),
            sentinels(&dev, N_HORIZONS * n_hid),
            sentinels(&dev, N_HORIZONS),
        );
        k.multi_horizon_heads_bce_cfc_backward
            .launch(
                s, cfg, &h1, &w_h, &logits, &targets, &coeffs, b, nh, &mut loss, &mut dg, &mut dtau, &mut g_w, &mut g_b,
            )
            .unwrap();
        for (name, got, want) in [
            ("loss", &loss, &loss_ref),
            ("d_pre_g", &dg, &dg_ref),
            ("d_pre_t", &dtau, &dt_ref),
            ("g_w_h", &g_w, &g_w_ref),
            ("g_b_h", &g_b, &g_b_ref),
        ] {
            let got = down(&dev, got);
            assert_all_finite(&what(name), &got);
            assert_bitwise_eq(&what(name), &got, &down(&dev, want));
        }
    }
}

/// `adamw_scheduled_group` over six whole tensors `[grad, param, m, v]`.
fn adamw_group(
    dev: &kgraph::Device,
    k: &kgraph_model::model::Kernels,
    schedule: &DeviceBuffer<f32>,
    (beta1, beta2, eps, wd): (f32, f32, f32, f32),
    t: &mut [[DeviceBuffer<f32>; 4]; 6],
) {
    let lens: Vec<usize> = t.iter().map(|b| b[0].len()).collect();
    let n = |i: usize| lens[i] as i32;
    let [[g0, p0, m0, v0], [g1, p1, m1, v1], [g2, p2, m2, v2], [g3, p3, m3, v3], [g4, p4, m4, v4], [g5, p5, m5, v5]] =
        t;
    k.adamw_scheduled_group
        .launch(
            dev.stream(),
            launch::adamw_group(&lens),
            schedule,
            beta1,
            beta2,
            eps,
            wd,
            &*g0,
            n(0),
            p0,
            m0,
            v0,
            &*g1,
            n(1),
            p1,
            m1,
            v1,
            &*g2,
            n(2),
            p2,
            m2,
            v2,
            &*g3,
            n(3),
            p3,
            m3,
            v3,
            &*g4,
            n(4),
            p4,
            m4,
            v4,
            &*g5,
            n(5),
            p5,
            m5,
            v5,
        )
        .unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cfc_weights_with_fused_adamw_equal_the_weights_kernel_then_the_adamw_group_bit_for_bit() {
    let dev = device();
    let k = kernels(&dev);
    let n_in = kgraph_model::model::N_FEAT;
    let hyper = (0.9f32, 0.999f32, 1e-8f32, 0.01f32);
    let schedule = up(&dev, &[1e-2, 1.0 - 0.9f32.powi(4), 1.0 - 0.999f32.powi(4)]);
    for (batch, n_hid) in [(1usize, 32usize), (256, 32), (300, 48)] {
        let mut rng = Lcg::new(53 + batch as u64);
        let (nw, nh5) = (n_hid * (n_in + n_hid), N_HORIZONS * n_hid);
        let x = up(&dev, &rng.vec(batch * n_in, -1.0, 1.0));
        let h_old = up(&dev, &rng.vec(batch * n_hid, -1.0, 1.0));
        let d_pre_g = up(&dev, &rng.vec(batch * n_hid, -0.1, 0.1));
        let d_pre_t = up(&dev, &rng.vec(batch * n_hid, -0.1, 0.1));
        let g_w_h = rng.vec(nh5, -0.1, 0.1);
        let g_b_h = rng.vec(N_HORIZONS, -0.1, 0.1);
        // [param, m, v] of w_g, b_g, w_t, b_t, w_h, b_h.
        let lens = [nw, n_hid, nw, n_hid, nh5, N_HORIZONS];
        let state: Vec<[Vec<f32>; 3]> =
            lens.iter().map(|&n| [rng.vec(n, -1.0, 1.0), rng.vec(n, -0.5, 0.5), rng.vec(n, 0.0, 1.0)]).collect();
        let (b, ni, nh) = (batch as i32, n_in as i32, n_hid as i32);
        let s = dev.stream();
        // The reference: the weights kernel, then the AdamW group over its gradients.
        let mut refs: [[DeviceBuffer<f32>; 4]; 6] = std::array::from_fn(|i| {
            let grad = match i {
                4 => up(&dev, &g_w_h),
                5 => up(&dev, &g_b_h),
                _ => zeros(&dev, lens[i]),
            };
            [grad, up(&dev, &state[i][0]), up(&dev, &state[i][1]), up(&dev, &state[i][2])]
        });
        {
            let [[g_wg, ..], [g_bg, ..], [g_wt, ..], [g_bt, ..], ..] = &mut refs;
            k.cfc_step_backward_weights
                .launch(
                    s,
                    launch::cfc_step_backward_weights(n_in, n_hid),
                    &x,
                    &h_old,
                    &d_pre_g,
                    &d_pre_t,
                    b,
                    ni,
                    nh,
                    g_wg,
                    g_bg,
                    g_wt,
                    g_bt,
                )
                .unwrap();
        }
        adamw_group(&dev, &k, &schedule, hyper, &mut refs);
        // The fused kernel: gradients into sentinels, the same starting state.
        let mut grads = [sentinels(&dev, nw), sentinels(&dev, n_hid), sentinels(&dev, nw), sentinels(&dev, n_hid)];
        let mut st: Vec<[DeviceBuffer<f32>; 3]> =
            state.iter().map(|[p, m, v]| [up(&dev, p), up(&dev, m), up(&dev, v)]).collect();
        let (g_w_h, g_b_h) = (up(&dev, &g_w_h), up(&dev, &g_b_h));
        {
            let [g_wg, g_bg, g_wt, g_bt] = &mut grads;
            let [[w_g, m_w_g, v_w_g], [b_g, m_b_g, v_b_g], [w_t, m_w_t, v_w_t], [b_t, m_b_t, v_b_t], [w_h, m_w_h, v_w_h], [b_h, m_b_h, v_b_h]] =
                &mut st[..]
            else {
                unreachable!("six tensors")
            };
            k.cfc_step_backward_weights_adamw
                .launch(
                    s,
                    launch::cfc_step_backward_weights_adamw(n_in, n_hid),
                    &x,
                    &h_old,
                    &d_pre_g,
                    &d_pre_t,
                    &g_w_h,
                    &g_b_h,
                    &schedule,
                    hyper.0,
                    hyper.1,
                    hyper.2,
                    hyper.3,
                    b,
                    ni,
                    nh,
                    g_wg,
                    g_bg,
                    g_wt,
                    g_bt,
                    w_g,
                    m_w_g,
                    v_w_g,
                    b_g,
                    m_b_g,
                    v_b_g,
                    w_t,
                    m_w_t,
                    v_w_t,
                    b_t,
                    m_b_t,
                    v_b_t,
                    w_h,
                    m_w_h,
                    v_w_h,
                    b_h,
                    m_b_h,
                    v_b_h,
                )
                .unwrap();
        }
        let names = ["w_g", "b_g", "w_t", "b_t", "w_h", "b_h"];
        let what = |name: &str| format!("batch {batch}, n_hid {n_hid}: {name}");
        for (i, g) in grads.iter().enumerate() {
            assert_bitwise_eq(&what(&format!("g_{}", names[i])), &down(&dev, g), &down(&dev, &refs[i][0]));
        }
        for (i, name) in names.iter().enumerate() {
            for (j, part) in ["param", "m", "v"].iter().enumerate() {
                let got = down(&dev, &st[i][j]);
                assert_all_finite(&what(&format!("{name} {part}")), &got);
                assert_ne!(got, state[i][j], "{}: AdamW must move it", what(&format!("{name} {part}")));
                assert_bitwise_eq(&what(&format!("{name} {part}")), &got, &down(&dev, &refs[i][j + 1]));
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn train_forward_equals_features_cfc_step_save_and_heads_bit_for_bit() {
    use kgraph_model::graphs::synthetic::BookStream;
    use kgraph_model::model::{N_FEAT, SNAP_LEN};
    let dev = device();
    let k = kernels(&dev);
    // The formula's launch, fewer blocks than rows, and blocks of one and two warps (the warps
    // then stride over the units, the horizons and the feature copy).
    for (batch, n_hid, grid, block) in
        [(1usize, 32usize, 1u32, 1024u32), (256, 32, 256, 1024), (300, 48, 7, 64), (5, 32, 5, 32)]
    {
        let mut rng = Lcg::new(61 + batch as u64);
        let kk = N_FEAT + n_hid;
        let (mut snap, mut dt, mut targets) = (vec![0.0; batch * SNAP_LEN], vec![0.0; batch], vec![0.0; batch * 5]);
        BookStream::independent(batch as u64).fill_batch(&mut snap, &mut dt, &mut targets).unwrap();
        // Every third row a crossed or garbage book: the all-zero feature rows too.
        for row in snap.chunks_mut(SNAP_LEN).step_by(3) {
            row.copy_from_slice(&rng.vec(SNAP_LEN, -5.0, 5.0));
        }
        let (snap, dt) = (up(&dev, &snap), up(&dev, &dt));
        let h0 = up(&dev, &rng.vec(batch * n_hid, -1.0, 1.0));
        let (w_g, w_t) = (up(&dev, &weights(&mut rng, n_hid, kk, 1.5)), up(&dev, &weights(&mut rng, n_hid, kk, 1.5)));
        let (b_g, b_t) = (up(&dev, &rng.vec(n_hid, -0.5, 0.5)), up(&dev, &rng.vec(n_hid, -0.5, 0.5)));
        let w_h = up(&dev, &weights(&mut rng, N_HORIZONS, n_hid, 2.0));
        let b_h = up(&dev, &rng.vec(N_HORIZONS, -0.5, 0.5));
        let (b, nh) = (batch as i32, n_hid as i32);
        let s = dev.stream();
        // The three multi-node kernels.
        let count = batch * N_HORIZONS;
        let (mut feat_ref, mut h1_ref, mut coeffs_ref) =
            (zeros(&dev, batch * N_FEAT), zeros(&dev, batch * n_hid), zeros(&dev, 4 * batch * n_hid));
        let (mut logits_ref, mut probs_ref) = (zeros(&dev, count), zeros(&dev, count));
        k.snap_feature_assemble.launch(s, launch::snap_feature_assemble(batch), &snap, b, &mut feat_ref).unwrap();
        k.cfc_step_save
            .launch(
                s,
                launch::cfc_step(batch, n_hid),
                &feat_ref,
                &h0,
                &w_g,
                &b_g,
                &w_t,
                &b_t,
                &dt,
                b,
                N_FEAT as i32,
                nh,
                &mut h1_ref,
                &mut coeffs_ref,
            )
            .unwrap();
        k.multi_horizon_heads
            .launch(s, launch::multi_horizon_heads(batch), &h1_ref, &w_h, &b_h, b, nh, &mut logits_ref, &mut probs_ref)
            .unwrap();
        // The fused forward, into sentinels, with the formula's grid or fewer blocks.
        let (mut feat, mut h1, mut coeffs, mut logits, mut probs) = (
            sentinels(&dev, batch * N_FEAT),
            sentinels(&dev, batch * n_hid),
            sentinels(&dev, 4 * batch * n_hid),
            sentinels(&dev, count),
            sentinels(&dev, count),
        );
        let mut cfg = launch::train_forward(batch);
        (cfg.grid_dim.0, cfg.block_dim.0) = (grid, block);
        k.train_forward
            .launch(
                s,
                cfg,
                &snap,
                &h0,
                &w_g,
                &b_g,
                &w_t,
                &b_t,
                &dt,
                &w_h,
                &b_h,
                b,
                nh,
                &mut feat,
                &mut h1,
                &mut coeffs,
                &mut logits,
                &mut probs,
            )
            .unwrap();
        let what = |name: &str| format!("batch {batch}, n_hid {n_hid}, grid {grid} x {block}: {name}");
        for (name, got, want) in [
            ("feat", &feat, &feat_ref),
            ("h1", &h1, &h1_ref),
            ("coeffs", &coeffs, &coeffs_ref),
            ("logits", &logits, &logits_ref),
            ("probs", &probs, &probs_ref),
        ] {
            let got = down(&dev, got);
            assert_all_finite(&what(name), &got);
            assert_bitwise_eq(&what(name), &got, &down(&dev, want));
        }
    }
}
