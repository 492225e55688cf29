//! The train-step chain x -> cfc_step -> {heads -> bce, projection}: the backward kernels
//! composed through the accumulate-into-g_h convention match finite differences of the whole
//! GPU forward, for every input and weight.

use kgraph::gradcheck::{assert_all_passed, weighted_sum, GradCheck};
use kgraph::{Device, DeviceBuffer, Result};
use kgraph_model::model::{launch, Kernels, N_FEAT, N_HORIZONS, N_PROJ};

use super::common::device;
use super::model_util::{assert_all_finite, down, kernels, up, weights, zeros, Lcg};

const NAMES: [&str; 10] = ["x", "h_old", "w_g", "b_g", "w_t", "b_t", "w_h", "b_h", "p", "c"];

/// Sizes and the inputs no gradient is taken for.
struct Dims {
    batch: usize,
    n_in: usize,
    n_hid: usize,
    dt: DeviceBuffer<f32>,
    targets: DeviceBuffer<f32>,
}

/// Forward buffers reused across evaluations.
struct Acts {
    h_new: DeviceBuffer<f32>,
    logits: DeviceBuffer<f32>,
    probs: DeviceBuffer<f32>,
    loss: DeviceBuffer<f32>,
    g_scratch: DeviceBuffer<f32>,
    y: DeviceBuffer<f32>,
}

impl Acts {
    fn new(dev: &Device, d: &Dims) -> Acts {
        let n_out = d.batch * N_HORIZONS;
        Acts {
            h_new: zeros(dev, d.batch * d.n_hid),
            logits: zeros(dev, n_out),
            probs: zeros(dev, n_out),
            loss: zeros(dev, 1),
            g_scratch: zeros(dev, n_out),
            y: zeros(dev, d.batch * N_PROJ),
        }
    }
}

/// The whole forward; BCE's gradient goes to `g_logits` (the caller decides whether it is kept).
fn forward(
    dev: &Device,
    k: &Kernels,
    d: &Dims,
    p: &[&DeviceBuffer<f32>],
    a: &mut Acts,
    g_logits: Option<&mut DeviceBuffer<f32>>,
) -> Result<()> {
    let (b, ni, nh) = (d.batch as i32, d.n_in as i32, d.n_hid as i32);
    let s = dev.stream();
    k.cfc_step.launch(
        s,
        launch::cfc_step(d.batch, d.n_hid),
        p[0],
        p[1],
        p[2],
        p[3],
        p[4],
        p[5],
        &d.dt,
        b,
        ni,
        nh,
        &mut a.h_new,
    )?;
    k.multi_horizon_heads.launch(
        s,
        launch::multi_horizon_heads(d.batch),
        &a.h_new,
        p[6],
        p[7],
        b,
        nh,
        &mut a.logits,
        &mut a.probs,
    )?;
    let count = (d.batch * N_HORIZONS) as i32;
    let g = g_logits.unwrap_or(&mut a.g_scratch);
    k.bce_with_logits.launch(s, launch::bce_with_logits(), &a.logits, &d.targets, count, &mut a.loss, g)?;
    k.projection.launch(s, launch::projection(d.batch), &a.h_new, p[8], p[9], b, nh, &mut a.y)
}

fn gradcheck_chain(batch: usize, seed: u64) {
    let dev = device();
    let k = kernels(&dev);
    let (n_in, n_hid) = (N_FEAT, 32);
    let kk = n_in + n_hid;
    let mut rng = Lcg::new(seed);
    let host: Vec<Vec<f32>> = vec![
        rng.vec(batch * n_in, -1.0, 1.0),
        rng.vec(batch * n_hid, -1.0, 1.0),
        weights(&mut rng, n_hid, kk, 2.0),
        rng.vec(n_hid, -0.5, 0.5),
        weights(&mut rng, n_hid, kk, 2.0),
        rng.vec(n_hid, -0.5, 0.5),
        weights(&mut rng, N_HORIZONS, n_hid, 3.0),
        rng.vec(N_HORIZONS, -1.0, 1.0),
        weights(&mut rng, N_PROJ, n_hid, 1.0),
        rng.vec(N_PROJ, -1.0, 1.0),
    ];
    let mut params: Vec<DeviceBuffer<f32>> = host.iter().map(|v| up(&dev, v)).collect();
    let count = batch * N_HORIZONS;
    let dt = up(&dev, &rng.vec(batch, 0.1, 1.5));
    let targets = up(&dev, &rng.vec(count, 0.0, 1.0));
    let d = Dims { batch, n_in, n_hid, dt, targets };
    // L = count (bce + sum cq y): each path's gradients are O(1) per coordinate.
    let cq: Vec<f32> = rng.vec(batch * N_PROJ, -1.0, 1.0).iter().map(|c| c / count as f32).collect();
    let g_y = up(&dev, &cq);

    // Analytic: forward, then every backward accumulating into zeroed gradients.
    let mut grads: Vec<DeviceBuffer<f32>> = host.iter().map(|v| zeros(&dev, v.len())).collect();
    let mut acts = Acts::new(&dev, &d);
    let mut g_logits = zeros(&dev, count);
    let refs: Vec<&DeviceBuffer<f32>> = params.iter().collect();
    forward(&dev, &k, &d, &refs, &mut acts, Some(&mut g_logits)).unwrap();
    let (b, ni, nh) = (batch as i32, d.n_in as i32, d.n_hid as i32);
    let s = dev.stream();
    let mut g_h_new = zeros(&dev, batch * d.n_hid);
    {
        let [g_x, g_h_old, g_wg, g_bg, g_wt, g_bt, g_wh, g_bh, g_p, g_c] = &mut grads[..] else {
            panic!("10 gradients")
        };
        let g_probs = zeros(&dev, count);
        let cfg = launch::multi_horizon_heads_backward(batch, d.n_hid);
        k.multi_horizon_heads_backward
            .launch(s, cfg, &acts.h_new, refs[6], &acts.probs, &g_logits, &g_probs, b, nh, &mut g_h_new, g_wh, g_bh)
            .unwrap();
        let cfg = launch::projection_backward(batch, d.n_hid);
        k.projection_backward.launch(s, cfg, &acts.h_new, refs[8], &g_y, b, nh, &mut g_h_new, g_p, g_c).unwrap();
        let (mut d_pre_g, mut d_pre_t) = (zeros(&dev, batch * d.n_hid), zeros(&dev, batch * d.n_hid));
        let cfg = launch::cfc_step_backward_gates(batch, d.n_hid);
        let p = &refs;
        k.cfc_step_backward_gates
            .launch(
                s,
                cfg,
                p[0],
                p[1],
                p[2],
                p[3],
                p[4],
                p[5],
                &d.dt,
                &g_h_new,
                b,
                ni,
                nh,
                &mut d_pre_g,
                &mut d_pre_t,
                g_h_old,
            )
            .unwrap();
        let cfg = launch::cfc_step_backward_params(batch, d.n_in, d.n_hid);
        k.cfc_step_backward_params
            .launch(s, cfg, p[0], p[1], p[2], p[4], &d_pre_g, &d_pre_t, b, ni, nh, g_x, g_h_old, g_wg, g_bg, g_wt, g_bt)
            .unwrap();
    }
    let analytic: Vec<Vec<f32>> =
        grads.iter().map(|g| down(&dev, g).iter().map(|v| v * count as f32).collect()).collect();
    for (name, g) in NAMES.iter().zip(&analytic) {
        assert_all_finite(name, g);
    }
    let reports = GradCheck::default()
        .with_samples(8, seed)
        .check_all(&dev, &NAMES, &mut params, &analytic, |p| {
            forward(&dev, &k, &d, p, &mut acts, None)?;
            let loss = f64::from(dev.download(&acts.loss)?[0]);
            Ok(count as f64 * (loss + weighted_sum(&dev, &acts.y, &cq)?))
        })
        .unwrap();
    assert_all_passed(&reports);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn chain_backward_matches_finite_differences_b1() {
    gradcheck_chain(1, 601);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn chain_backward_matches_finite_differences_b8() {
    gradcheck_chain(8, 602);
}
