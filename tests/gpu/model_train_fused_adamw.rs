//! The train step's fused AdamW kernels against the model kernels they replace, bit for bit:
//! `adamw_scheduled_group` = six `adamw_scheduled` launches, for any grid and for misaligned views;
//! `cfc_step_backward_weights_adamw` = `cfc_step_backward_weights` then `adamw_scheduled_group`.
//! The rest of the train step's fusions are in model_train_fused.rs. The overwriting kernels'
//! outputs start as NaN sentinels: every float must be written.

use kgraph::{DeviceBuffer, LaunchConfig};
use kgraph_model::model::{launch, N_HORIZONS};

use super::common::device;
use super::model_util::{assert_all_finite, assert_bitwise_eq, down, kernels, sentinels, up, zeros, Lcg};

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
