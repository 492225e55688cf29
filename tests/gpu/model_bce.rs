//! `bce_with_logits`: bounds (loss >= 0, |grad| <= 1/count), the zero-gradient fixed point at
//! y = sigmoid(z), label/logit symmetry, bitwise determinism, and the fused gradient against
//! finite differences of the kernel's own loss.

use kgraph::gradcheck::GradCheck;
use kgraph::{Device, DeviceBuffer, Result};
use kgraph_model::model::{launch, Kernels, N_HORIZONS};

use super::common::device;
use super::model_util::{assert_all_finite, down, kernels, up, weights, zeros, Lcg};

fn bce_dev(
    dev: &Device,
    k: &Kernels,
    z: &DeviceBuffer<f32>,
    y: &DeviceBuffer<f32>,
    loss: &mut DeviceBuffer<f32>,
    g: &mut DeviceBuffer<f32>,
) -> Result<()> {
    let count = z.len() as i32;
    k.bce_with_logits.launch(dev.stream(), launch::bce_with_logits(), z, y, count, loss, g)
}

/// (loss, gradient) for host logits and targets, gradient accumulated into zeros.
fn bce(dev: &Device, k: &Kernels, z: &[f32], y: &[f32]) -> (f32, Vec<f32>) {
    let (zb, yb) = (up(dev, z), up(dev, y));
    let (mut loss, mut g) = (zeros(dev, 1), zeros(dev, z.len()));
    bce_dev(dev, k, &zb, &yb, &mut loss, &mut g).unwrap();
    (down(dev, &loss)[0], down(dev, &g))
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bce_loss_is_nonnegative_and_gradient_bounded_even_for_huge_logits() {
    let dev = device();
    let k = kernels(&dev);
    for count in [N_HORIZONS, 256 * N_HORIZONS] {
        let mut rng = Lcg::new(count as u64);
        let mut z = rng.vec(count, -6.0, 6.0);
        let specials = [1e30f32, -1e30, 1e4, -1e4, 88.0, -88.0, 0.0];
        z.iter_mut().step_by(3).zip(specials.iter().cycle()).for_each(|(v, s)| *v = *s);
        for y in [rng.vec(count, 0.0, 1.0), vec![0.0; count], vec![1.0; count]] {
            let (loss, g) = bce(&dev, &k, &z, &y);
            assert!(loss.is_finite() && loss >= 0.0, "loss = {loss}");
            assert_all_finite("g_logits", &g);
            let bound = 1.0 / count as f32 * (1.0 + 1e-6);
            assert!(g.iter().all(|v| v.abs() <= bound), "|(sigmoid(z) - y) / count| must be <= 1 / count");
        }
    }
    // softplus(z) - y z >= max(z, 0) - y z: a confident mistake costs at least its logit, and
    // neither overflows nor turns into NaN.
    let (l, g) = bce(&dev, &k, &[1e4, -1e30], &[0.0, 1.0]);
    assert!(l >= 0.5 * (1e4 + 1e30) * (1.0 - 1e-6) && l.is_finite(), "loss {l}");
    assert_eq!(g, vec![0.5, -0.5], "saturated sigmoid: (1 - 0) / 2 and (0 - 1) / 2");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bce_gradient_vanishes_at_sigmoid_targets_where_the_loss_is_minimal() {
    let dev = device();
    let k = kernels(&dev);
    let n_hid = 32;
    for batch in [1usize, 256] {
        let mut rng = Lcg::new(50 + batch as u64);
        // Targets = the heads kernel's own sigmoid of the logits (same device function).
        let h = up(&dev, &rng.vec(batch * n_hid, -1.0, 1.0));
        let w = up(&dev, &weights(&mut rng, N_HORIZONS, n_hid, 4.0));
        let b = up(&dev, &rng.vec(N_HORIZONS, -1.0, 1.0));
        let n = batch * N_HORIZONS;
        let (mut z, mut p) = (zeros(&dev, n), zeros(&dev, n));
        k.multi_horizon_heads
            .launch(
                dev.stream(),
                launch::multi_horizon_heads(batch),
                &h,
                &w,
                &b,
                batch as i32,
                n_hid as i32,
                &mut z,
                &mut p,
            )
            .unwrap();
        let (z, y) = (down(&dev, &z), down(&dev, &p));
        let (loss, g) = bce(&dev, &k, &z, &y);
        assert!(g.iter().all(|&v| v == 0.0), "gradient at y = sigmoid(z) must be exactly 0: {g:?}");
        assert!(loss > 0.0, "the minimum is the binary entropy of y, > 0 for y in (0, 1)");
        for delta in [-0.25f32, 0.25] {
            let moved: Vec<f32> = z.iter().map(|v| v + delta).collect();
            let (l, _) = bce(&dev, &k, &moved, &y);
            assert!(l > loss, "moving every logit by {delta} must raise the loss ({l} <= {loss})");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bce_is_symmetric_under_flipping_labels_and_logits() {
    let dev = device();
    let k = kernels(&dev);
    for count in [N_HORIZONS, 256 * N_HORIZONS] {
        let mut rng = Lcg::new(60 + count as u64);
        let z = rng.vec(count, -8.0, 8.0);
        // Quarter steps: 1 - y is exact.
        let y: Vec<f32> = (0..count).map(|_| 0.25 * (rng.next_u32() % 5) as f32).collect();
        let (l1, g1) = bce(&dev, &k, &z, &y);
        let zf: Vec<f32> = z.iter().map(|v| -v).collect();
        let yf: Vec<f32> = y.iter().map(|v| 1.0 - v).collect();
        let (l2, g2) = bce(&dev, &k, &zf, &yf);
        assert_eq!(l1.to_bits(), l2.to_bits(), "loss(z, y) and loss(-z, 1 - y): every term is bitwise equal");
        let tol = 1e-6 / count as f32;
        for i in 0..count {
            assert!((g1[i] + g2[i]).abs() <= tol, "g[{i}]: {} vs {}", g1[i], g2[i]);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bce_loss_and_gradient_are_bitwise_deterministic() {
    let dev = device();
    let k = kernels(&dev);
    for count in [N_HORIZONS, 256 * N_HORIZONS, 1_000_003] {
        let mut rng = Lcg::new(70 + count as u64);
        let (z, y) = (rng.vec(count, -5.0, 5.0), rng.vec(count, 0.0, 1.0));
        let (l1, g1) = bce(&dev, &k, &z, &y);
        let (l2, g2) = bce(&dev, &k, &z, &y);
        assert_eq!(l1.to_bits(), l2.to_bits());
        assert!(g1.iter().zip(&g2).all(|(a, b)| a.to_bits() == b.to_bits()));
        assert!(l1 > 0.0 && l1.is_finite());
    }
}

fn gradcheck_bce(batch: usize, seed: u64) {
    let dev = device();
    let k = kernels(&dev);
    let count = batch * N_HORIZONS;
    let mut rng = Lcg::new(seed);
    let (z, y) = (rng.vec(count, -4.0, 4.0), rng.vec(count, 0.0, 1.0));
    let (_, g) = bce(&dev, &k, &z, &y);
    // The loss is a mean: scale it (and the gradient) by count so each coordinate's gradient is
    // O(1), as GradCheck's absolute tolerance assumes. The loss is rounded to f32 as a whole, so
    // its noise is |L| count 6e-8: eps = 0.1 keeps that / 2 eps below 1e-3 at count = 1280,
    // while the truncation error eps^2 |sigmoid''| / 6 <= 2e-4.
    let analytic: Vec<f32> = g.iter().map(|v| v * count as f32).collect();
    let mut zb = up(&dev, &z);
    let yb = up(&dev, &y);
    let (mut loss, mut scratch) = (zeros(&dev, 1), zeros(&dev, count));
    let coords = kgraph::gradcheck::sample_coords(count, 24, seed);
    let report = GradCheck::default()
        .with_eps(0.1)
        .check(&dev, "logits", &mut zb, &analytic, &coords, |z| {
            bce_dev(&dev, &k, z, &yb, &mut loss, &mut scratch)?;
            Ok(f64::from(dev.download(&loss)?[0]) * count as f64)
        })
        .unwrap();
    report.assert_passed();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bce_gradient_matches_finite_differences_b1() {
    gradcheck_bce(1, 501);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bce_gradient_matches_finite_differences_b256() {
    gradcheck_bce(256, 502);
}
