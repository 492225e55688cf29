//! `adamw` / `adamw_scheduled`: the decay-only fixed point, first-step sign descent, gradient
//! scale invariance, the float4 and scalar paths (large n with a tail, misaligned views), and
//! huge gradients never giving NaN.

use kgraph::{Device, DeviceBuffer};
use kgraph_model::model::{launch, Kernels};

use super::common::device;
use super::model_util::{assert_bitwise_eq, down, kernels, up, zeros, Lcg};

/// Hyper-parameters of one call.
#[derive(Clone, Copy)]
struct Hyper {
    lr: f32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    wd: f32,
    bc1: f32,
    bc2: f32,
}

impl Hyper {
    /// Step t of Adam with the usual betas.
    fn step(t: i32, lr: f32, eps: f32, wd: f32) -> Hyper {
        let (beta1, beta2) = (0.9f32, 0.999f32);
        Hyper { lr, beta1, beta2, eps, wd, bc1: 1.0 - beta1.powi(t), bc2: 1.0 - beta2.powi(t) }
    }
}

/// The optimiser state on the host.
#[derive(Clone)]
struct State {
    p: Vec<f32>,
    m: Vec<f32>,
    v: Vec<f32>,
}

/// Runs `adamw` once on device copies; returns the new state.
fn adamw(dev: &Device, k: &Kernels, h: Hyper, g: &[f32], s: &State) -> State {
    let n = g.len();
    let (mut p, mut m, mut v) = (up(dev, &s.p), up(dev, &s.m), up(dev, &s.v));
    k.adamw
        .launch(
            dev.stream(),
            launch::adamw(n),
            &up(dev, g),
            h.lr,
            h.beta1,
            h.beta2,
            h.eps,
            h.wd,
            h.bc1,
            h.bc2,
            n as i32,
            &mut p,
            &mut m,
            &mut v,
        )
        .unwrap();
    State { p: down(dev, &p), m: down(dev, &m), v: down(dev, &v) }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn adamw_zero_gradient_and_moments_only_decay_the_weights() {
    let dev = device();
    let k = kernels(&dev);
    let n = 1_000_003; // float4 body + a 3-element tail
    let mut rng = Lcg::new(1);
    let s = State { p: rng.vec(n, -2.0, 2.0), m: vec![0.0; n], v: vec![0.0; n] };
    let g = vec![0.0; n];
    let out = adamw(&dev, &k, Hyper::step(3, 1e-2, 1e-8, 0.1), &g, &s);
    assert!(out.m.iter().chain(&out.v).all(|&x| x == 0.0), "moments must stay 0");
    // Every weight shrinks by one common factor in (0, 1), keeping its sign.
    let ratios: Vec<f64> =
        out.p.iter().zip(&s.p).filter(|(_, &p)| p.abs() > 1e-3).map(|(&a, &b)| f64::from(a) / f64::from(b)).collect();
    let (lo, hi) = ratios.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &r| (lo.min(r), hi.max(r)));
    assert!(lo > 0.0 && hi < 1.0, "decay factor range [{lo}, {hi}]");
    assert!(hi - lo <= 2.5e-7, "one common factor up to f32 rounding: [{lo}, {hi}]");
    // Without weight decay the same step is the identity.
    let out = adamw(&dev, &k, Hyper::step(3, 1e-2, 1e-8, 0.0), &g, &s);
    assert_bitwise_eq("p with wd = 0", &out.p, &s.p);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn adamw_first_step_is_sign_descent_of_size_lr() {
    let dev = device();
    let k = kernels(&dev);
    for n in [1usize, 7, 256 * 5, 65_537] {
        let mut rng = Lcg::new(n as u64);
        let g: Vec<f32> = (0..n).map(|_| if rng.unit() < 0.5 { -1.0 } else { 1.0 } * rng.uniform(1e-2, 10.0)).collect();
        let s = State { p: rng.vec(n, -1.0, 1.0), m: vec![0.0; n], v: vec![0.0; n] };
        let lr = 1e-3;
        let out = adamw(&dev, &k, Hyper::step(1, lr, 1e-8, 0.0), &g, &s);
        for (i, &gi) in g.iter().enumerate() {
            let step = f64::from(out.p[i]) - f64::from(s.p[i]);
            assert!(step * f64::from(gi) < 0.0, "[{i}]: step {step} not against g {gi}");
            let rel = (step.abs() / f64::from(lr) - 1.0).abs();
            assert!(rel < 1e-3, "[{i}]: |step| = {} but lr = {lr}", step.abs());
            assert!(out.m[i] * gi > 0.0 && out.v[i] > 0.0, "[{i}]: moments");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn adamw_update_is_invariant_to_the_gradient_scale() {
    let dev = device();
    let k = kernels(&dev);
    let n = 100_003;
    let mut rng = Lcg::new(5);
    let g = rng.vec(n, -1.0, 1.0);
    let s = State { p: rng.vec(n, -1.0, 1.0), m: rng.vec(n, -0.1, 0.1), v: rng.vec(n, 1e-4, 1.0) };
    // eps far below every sqrt(v) ulp, so it cannot tip a rounding: the update is m / sqrt(v),
    // and scaling (g, m, v) by (4, 4, 16) scales every intermediate by a power of two.
    let h = Hyper::step(7, 1e-2, 1e-30, 0.01);
    let a = adamw(&dev, &k, h, &g, &s);
    let scaled =
        State { p: s.p.clone(), m: s.m.iter().map(|x| 4.0 * x).collect(), v: s.v.iter().map(|x| 16.0 * x).collect() };
    let b = adamw(&dev, &k, h, &g.iter().map(|x| 4.0 * x).collect::<Vec<_>>(), &scaled);
    assert_bitwise_eq("p", &a.p, &b.p);
    assert_bitwise_eq("m x4", &a.m.iter().map(|x| 4.0 * x).collect::<Vec<_>>(), &b.m);
    assert_bitwise_eq("v x16", &a.v.iter().map(|x| 16.0 * x).collect::<Vec<_>>(), &b.v);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn adamw_vector_scalar_and_scheduled_paths_agree_bitwise_on_large_n_with_tail() {
    let dev = device();
    let k = kernels(&dev);
    let n = (1usize << 22) + 3;
    let mut rng = Lcg::new(9);
    let g: Vec<f32> = (0..n).map(|_| if rng.unit() < 0.5 { -1.0 } else { 1.0 } * rng.uniform(0.1, 1.0)).collect();
    // m has the sign of g, so every update is far above an ulp of p: every element must move.
    let m: Vec<f32> = g.iter().map(|x| x.signum() * 0.5).collect();
    let s = State { p: rng.vec(n, -1.0, 1.0), m, v: rng.vec(n, 0.0, 1.0) };
    let h = Hyper::step(10, 1e-2, 1e-8, 0.01);
    // Aligned buffers: float4 body + scalar tail.
    let aligned = adamw(&dev, &k, h, &g, &s);
    for (i, (a, b)) in aligned.p.iter().zip(&s.p).enumerate() {
        assert_ne!(a, b, "p[{i}] was not updated (tail: {})", i >= n - 3);
    }
    // Views at an odd offset: not 16-byte aligned, so every element takes the scalar loop.
    let at_offset = |v: &[f32]| -> DeviceBuffer<f32> {
        let mut b = zeros(&dev, n + 1);
        dev.upload_into(v, &mut b.slice_mut(1..).unwrap()).unwrap();
        b
    };
    let (gb, mut pb, mut mb, mut vb) = (at_offset(&g), at_offset(&s.p), at_offset(&s.m), at_offset(&s.v));
    k.adamw
        .launch(
            dev.stream(),
            launch::adamw(n),
            &gb.slice(1..).unwrap(),
            h.lr,
            h.beta1,
            h.beta2,
            h.eps,
            h.wd,
            h.bc1,
            h.bc2,
            n as i32,
            &mut pb.slice_mut(1..).unwrap(),
            &mut mb.slice_mut(1..).unwrap(),
            &mut vb.slice_mut(1..).unwrap(),
        )
        .unwrap();
    assert_bitwise_eq("p misaligned", &aligned.p, &down(&dev, &pb)[1..]);
    assert_bitwise_eq("m misaligned", &aligned.m, &down(&dev, &mb)[1..]);
    assert_bitwise_eq("v misaligned", &aligned.v, &down(&dev, &vb)[1..]);
    // The scheduled entry point reads lr and the bias corrections from device memory.
    let (mut p, mut m, mut v) = (up(&dev, &s.p), up(&dev, &s.m), up(&dev, &s.v));
    let schedule = up(&dev, &[h.lr, h.bc1, h.bc2]);
    k.adamw_scheduled
        .launch(
            dev.stream(),
            launch::adamw(n),
            &up(&dev, &g),
            &schedule,
            h.beta1,
            h.beta2,
            h.eps,
            h.wd,
            n as i32,
            &mut p,
            &mut m,
            &mut v,
        )
        .unwrap();
    assert_bitwise_eq("p scheduled", &aligned.p, &down(&dev, &p));
    assert_bitwise_eq("m scheduled", &aligned.m, &down(&dev, &m));
    assert_bitwise_eq("v scheduled", &aligned.v, &down(&dev, &v));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn adamw_huge_gradients_never_give_nan() {
    let dev = device();
    let k = kernels(&dev);
    let n = 4099;
    let mut rng = Lcg::new(13);
    let mags = [1e30f32, 1e20, 1e18, 1e-30, 0.0];
    let g: Vec<f32> = (0..n).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 } * mags[i % mags.len()]).collect();
    let s = State { p: rng.vec(n, -1.0, 1.0), m: rng.vec(n, -1.0, 1.0), v: rng.vec(n, 0.0, 1.0) };
    let out = adamw(&dev, &k, Hyper::step(2, 1e-3, 1e-8, 0.01), &g, &s);
    for (i, gi) in g.iter().enumerate() {
        assert!(out.p[i].is_finite() && out.m[i].is_finite(), "[{i}] g = {gi}: p {}, m {}", out.p[i], out.m[i]);
        assert!(out.v[i] >= 0.0, "[{i}] v = {} (NaN or negative)", out.v[i]);
    }
}
