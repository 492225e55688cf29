//! ggml-org/llama.cpp's ggml-cuda training kernels: cross-entropy loss and its gradient (both
//! instantiations: the logits row cached in dynamic shared memory or not), the RMSNorm
//! backward pass and AdamW (`llamacpp__cross_entropy_loss.cu`, `llamacpp__norm.cu`,
//! `llamacpp__opt_step_adamw.cu`). All are `static` (internal linkage): kgraph binds them by
//! their C++ names and loads the symbol the build's record holds. The loss kernels run one
//! block per row (`grid.x` rows); the RMSNorm backward one row per `threadIdx.y` of each block
//! (`grid.x * block.y` rows). Each kernel runs at the manifest's three shapes with buffers of
//! exactly its extents, and all six are one graph (`tests/corpus2/graphs/llamacpp.toml`).
//!
//! Shapes keep `block.x` at 32 (or a multiple of it, for AdamW, which has no shuffle): the loss
//! and norm kernels reduce with full-mask warp shuffles and step their loops by `WARP_SIZE`.
//! Those loops count in `int` (`for (int i = threadIdx.x; i < nclasses; i += WARP_SIZE)`), so
//! the declarations require the bound to leave room for the last step (`requires(nclasses <=
//! i32::MAX - 32)`): an `int` counter would otherwise wrap below the row.

use kgraph::{Device, DeviceBuffer, Result};

use super::common::{assert_extent_refused, bits, device, download, filled, random, upload, Shape};

#[kgraph::kernels]
pub(crate) mod kernels {
    /// `dst[r] = -sum_i labels[r][i] * log_softmax(logits[r])[i] / k`, the row cached in
    /// dynamic shared memory (`nclasses` floats).
    #[kernel(
        "llamacpp__cross_entropy_loss.cu",
        name = "cross_entropy_loss_f32<true>",
        unsafe(extents),
        shared = nclasses * 4,
        requires(nclasses <= i32::MAX - 32)
    )]
    pub fn cross_entropy_loss_f32(
        logits: &[f32; grid.x * nclasses],
        labels: &[f32; grid.x * nclasses],
        dst: &mut [f32; grid.x],
        nclasses: i32,
        k: i32,
    );

    /// The same loss reading the row from global memory each pass (no shared memory).
    #[kernel(
        "llamacpp__cross_entropy_loss.cu",
        name = "cross_entropy_loss_f32<false>",
        unsafe(extents),
        shared = 0,
        requires(nclasses <= i32::MAX - 32)
    )]
    pub fn cross_entropy_loss_f32_noshared(
        logits: &[f32; grid.x * nclasses],
        labels: &[f32; grid.x * nclasses],
        dst: &mut [f32; grid.x],
        nclasses: i32,
        k: i32,
    );

    /// `dst[r] = (softmax(logits[r]) - labels[r]) * grad[0] / grid.x`, the row's exponentials
    /// kept in dynamic shared memory.
    #[kernel(
        "llamacpp__cross_entropy_loss.cu",
        name = "cross_entropy_loss_back_f32<true>",
        unsafe(extents),
        shared = nclasses * 4,
        requires(nclasses <= i32::MAX - 32)
    )]
    pub fn cross_entropy_loss_back_f32(
        grad: &[f32; 1],
        logits: &[f32; grid.x * nclasses],
        labels: &[f32; grid.x * nclasses],
        dst: &mut [f32; grid.x * nclasses],
        nclasses: i32,
    );

    /// The same gradient using `dst`'s row as its scratch.
    #[kernel(
        "llamacpp__cross_entropy_loss.cu",
        name = "cross_entropy_loss_back_f32<false>",
        unsafe(extents),
        shared = 0,
        requires(nclasses <= i32::MAX - 32)
    )]
    pub fn cross_entropy_loss_back_f32_noshared(
        grad: &[f32; 1],
        logits: &[f32; grid.x * nclasses],
        labels: &[f32; grid.x * nclasses],
        dst: &mut [f32; grid.x * nclasses],
        nclasses: i32,
    );

    /// RMSNorm's input gradient for row `blockIdx.x * blockDim.y + threadIdx.y`.
    #[kernel("llamacpp__norm.cu", name = "rms_norm_back_f32<32>", unsafe(extents), requires(ncols <= i32::MAX - 32))]
    pub fn rms_norm_back_f32(
        grad: &[f32; grid.x * block.y * ncols],
        xf: &[f32; grid.x * block.y * ncols],
        dst: &mut [f32; grid.x * block.y * ncols],
        ncols: i32,
        eps: f32,
    );

    /// One AdamW step over `k` weights; `pars` = alpha, beta1, beta2, eps, weight decay and the
    /// two bias corrections.
    #[kernel("llamacpp__opt_step_adamw.cu", unsafe(extents))]
    pub fn opt_step_adamw_f32(
        x: &mut [f32; k],
        g: &[f32; k],
        g_m: &mut [f32; k],
        g_v: &mut [f32; k],
        pars: &[f32; 7],
        k: i64,
    );
}
use kernels::{CrossEntropyLossBackF32, CrossEntropyLossF32Noshared, Kernels};

kgraph::graph!("tests/corpus2/graphs/llamacpp.toml");

/// One-hot labels, row `r`'s class at `(r * 7) % nclasses`.
fn one_hot(rows: usize, nclasses: usize) -> Vec<f32> {
    let mut labels = vec![0.0f32; rows * nclasses];
    for r in 0..rows {
        labels[r * nclasses + (r * 7) % nclasses] = 1.0;
    }
    labels
}

/// A loss launch: shape, logits, labels, dst, nclasses, k.
type LossLaunch<'a> =
    dyn Fn(Shape, &DeviceBuffer<f32>, &DeviceBuffer<f32>, &mut DeviceBuffer<f32>, i32, i32) -> Result<()> + 'a;

/// Uniform logits (all 0) against one-hot labels: every row's loss is `ln(nclasses) / k`.
fn check_loss_of_uniform_logits(dev: &Device, what: &str, shapes: [(Shape, i32, i32); 3], launch: &LossLaunch<'_>) {
    for (shape, nclasses, k) in shapes {
        let (rows, n) = (shape.gx(), nclasses as usize);
        let logits = filled(dev, rows * n, 0.0f32);
        let labels = upload(dev, &one_hot(rows, n));
        let mut dst = filled(dev, rows, f32::NAN);
        launch(shape, &logits, &labels, &mut dst, nclasses, k).unwrap();
        let want = (f64::from(nclasses)).ln() / f64::from(k);
        for (r, loss) in download(dev, &dst).into_iter().enumerate() {
            let err = (f64::from(loss) - want).abs();
            assert!(
                err <= 1e-6 * want + 1e-12,
                "{what} {shape:?} nclasses {nclasses}: row {r} loss {loss}, want {want}"
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cross_entropy_of_uniform_logits_is_ln_nclasses_over_k_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap();
    let shared = [(Shape::x(1, 32), 1, 1), (Shape::x(64, 32), 1000, 64), (Shape::x(4096, 32), 10, 4096)];
    check_loss_of_uniform_logits(&dev, "shared", shared, &|s, lo, la, d, n, kk| {
        k.cross_entropy_loss_f32.launch(dev.stream(), s.cfg_shared(n as u32 * 4), lo, la, d, n, kk)
    });
    let global = [(Shape::x(1, 32), 1, 1), (Shape::x(64, 32), 100_000, 64), (Shape::x(4096, 32), 10, 4096)];
    check_loss_of_uniform_logits(&dev, "noshared", global, &|s, lo, la, d, n, kk| {
        k.cross_entropy_loss_f32_noshared.launch(dev.stream(), s.cfg(), lo, la, d, n, kk)
    });
}

/// A gradient launch: shape, grad, logits, labels, dst, nclasses.
type BackLaunch<'a> = dyn Fn(Shape, &DeviceBuffer<f32>, &DeviceBuffer<f32>, &DeviceBuffer<f32>, &mut DeviceBuffer<f32>, i32) -> Result<()>
    + 'a;

/// With `grad = grid.x` (so the scale `grad / grid.x` is 1) each row of `dst` is
/// `softmax - onehot`: the label's entry in [-1, 0], the others in [0, 1], the row summing to 0.
fn assert_softmax_minus_onehot(what: &str, dst: &[f32], labels: &[f32], n: usize, tol: f64) {
    for (r, (row, lab)) in dst.chunks(n).zip(labels.chunks(n)).enumerate() {
        for (i, (&d, &l)) in row.iter().zip(lab).enumerate() {
            let range = if l == 1.0 { -1.0..=0.0 } else { 0.0..=1.0 };
            assert!(range.contains(&d), "{what}: row {r} class {i} is {d} (label {l})");
        }
        let sum: f64 = row.iter().map(|&d| f64::from(d)).sum();
        assert!(sum.abs() <= tol, "{what}: row {r} sums to {sum}");
    }
}

fn check_gradient_rows(dev: &Device, what: &str, shapes: [(Shape, i32); 3], launch: &BackLaunch<'_>) {
    for (seed, (shape, nclasses)) in shapes.into_iter().enumerate() {
        let (rows, n) = (shape.gx(), nclasses as usize);
        let grad = upload(dev, &[rows as f32]);
        let logits = upload(dev, &random(rows * n, 40 + seed as u64));
        let labels_host = one_hot(rows, n);
        let labels = upload(dev, &labels_host);
        let mut dst = filled(dev, rows * n, f32::NAN);
        launch(shape, &grad, &logits, &labels, &mut dst, nclasses).unwrap();
        let got = download(dev, &dst);
        assert_softmax_minus_onehot(&format!("{what} {shape:?} nclasses {nclasses}"), &got, &labels_host, n, 2e-4);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cross_entropy_gradient_rows_are_softmax_minus_onehot_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap();
    let shared = [(Shape::x(1, 32), 1), (Shape::x(64, 32), 1000), (Shape::x(4096, 32), 10)];
    check_gradient_rows(&dev, "shared", shared, &|s, g, lo, la, d, n| {
        k.cross_entropy_loss_back_f32.launch(dev.stream(), s.cfg_shared(n as u32 * 4), g, lo, la, d, n)
    });
    let global = [(Shape::x(1, 32), 1), (Shape::x(64, 32), 100_000), (Shape::x(4096, 32), 10)];
    check_gradient_rows(&dev, "noshared", global, &|s, g, lo, la, d, n| {
        k.cross_entropy_loss_back_f32_noshared.launch(dev.stream(), s.cfg(), g, lo, la, d, n)
    });
}

/// RMSNorm output is scale invariant (`f(c x) = f(x)`), so its Jacobian maps `x` to 0 and,
/// being symmetric, every input gradient is orthogonal to `x` (up to the `eps` term): each
/// row's `dst . x` is 0 relative to `|grad| |x| / rms(x)`. Every element is finite (NaN poison).
fn assert_rows_orthogonal(what: &str, dst: &[f32], xf: &[f32], grad: &[f32], ncols: usize) {
    assert!(dst.iter().all(|v| v.is_finite()), "{what}: an element is not finite (unwritten?)");
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(p, q)| f64::from(*p) * f64::from(*q)).sum::<f64>();
    for (r, ((d, x), g)) in dst.chunks(ncols).zip(xf.chunks(ncols)).zip(grad.chunks(ncols)).enumerate() {
        let (xx, gg) = (dot(x, x), dot(g, g));
        let rms = (xx / ncols as f64).sqrt();
        let bound = 1e-4 * gg.sqrt() * xx.sqrt() / rms;
        assert!(dot(d, x).abs() <= bound, "{what}: row {r}: dst . x = {} (bound {bound})", dot(d, x));
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn rms_norm_backward_is_orthogonal_to_its_input_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().rms_norm_back_f32;
    let shapes = [
        (Shape { grid: (1, 1, 1), block: (32, 1, 1) }, 1),
        (Shape { grid: (100, 1, 1), block: (32, 4, 1) }, 768),
        (Shape { grid: (3, 1, 1), block: (32, 2, 1) }, 1000),
    ];
    for (seed, (shape, ncols)) in shapes.into_iter().enumerate() {
        let len = shape.gx() * shape.block.1 as usize * ncols as usize;
        let (grad_h, xf_h) = (random(len, 50 + seed as u64), random(len, 60 + seed as u64));
        let (grad, xf) = (upload(&dev, &grad_h), upload(&dev, &xf_h));
        let mut dst = filled(&dev, len, f32::NAN);
        // eps tiny: with one column the eps term is the whole of dst . x (eps / x^2 of it).
        k.launch(dev.stream(), shape.cfg(), &grad, &xf, &mut dst, ncols, 1e-12).unwrap();
        assert_rows_orthogonal(
            &format!("{shape:?} ncols {ncols}"),
            &download(&dev, &dst),
            &xf_h,
            &grad_h,
            ncols as usize,
        );
    }
}

/// AdamW's parameters: alpha, beta1, beta2, eps, weight decay 0, and the first step's bias
/// corrections `1 / (1 - beta)`.
fn first_step_pars() -> Vec<f32> {
    let (b1, b2) = (0.9f32, 0.999f32);
    vec![1e-3, b1, b2, 1e-8, 0.0, 1.0 / (1.0 - b1), 1.0 / (1.0 - b2)]
}

/// Adam's first bias-corrected step from zero moments moves each weight by about `alpha`
/// against its gradient (`m / sqrt(v) = g / |g|`); never by more, nor with it.
fn assert_first_step(what: &str, before: &[f32], after: &[f32], g: &[f32], alpha: f32) {
    for (i, ((&x0, &x1), &gi)) in before.iter().zip(after).zip(g).enumerate() {
        let step = f64::from(x1) - f64::from(x0);
        let a = f64::from(alpha);
        assert!(step.abs() <= a * 1.001, "{what}: weight {i} moved {step} (alpha {a})");
        if gi.abs() > 1e-3 {
            let want = -a * f64::from(gi.signum());
            assert!((step - want).abs() <= a * 1e-3, "{what}: weight {i} moved {step}, gradient {gi}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn adamw_keeps_weights_at_zero_gradient_and_steps_alpha_against_it_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().opt_step_adamw_f32;
    let pars = upload(&dev, &first_step_pars());
    for (shape, n) in [(Shape::x(1, 256), 1i64), (Shape::x(4, 256), 1000), (Shape::x(40_000, 256), 10_000_000)] {
        let len = n as usize;
        let x_h = random(len, 70);
        let mut x = upload(&dev, &x_h);
        let (mut g_m, mut g_v) = (filled(&dev, len, 0.0f32), filled(&dev, len, 0.0f32));
        // A zero gradient from zero moments is a fixed point: x bit for bit, the moments 0.
        let zero = filled(&dev, len, 0.0f32);
        k.launch(dev.stream(), shape.cfg(), &mut x, &zero, &mut g_m, &mut g_v, &pars, n).unwrap();
        assert_eq!(bits(&download(&dev, &x)), bits(&x_h), "{shape:?} k {n}: x moved at g = 0");
        assert!(download(&dev, &g_m).iter().chain(&download(&dev, &g_v)).all(|&m| m == 0.0), "{shape:?}");
        // The first step with a gradient.
        let g_h = random(len, 71);
        let g = upload(&dev, &g_h);
        k.launch(dev.stream(), shape.cfg(), &mut x, &g, &mut g_m, &mut g_v, &pars, n).unwrap();
        assert_first_step(&format!("{shape:?} k {n}"), &x_h, &download(&dev, &x), &g_h, 1e-3);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn one_row_more_than_the_buffers_hold_is_refused() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap();
    let (shape, nclasses) = (Shape::x(64, 32), 100i32);
    let len = shape.gx() * nclasses as usize;
    let grad = upload(&dev, &[1.0f32]);
    let (logits, labels) = (filled(&dev, len, 0.0f32), upload(&dev, &one_hot(shape.gx(), nclasses as usize)));
    let mut dst = filled(&dev, len, f32::NAN);
    // Row 64 would read logits[6400..6500] and write dst[6400..6500], past every buffer.
    let refused = k.cross_entropy_loss_back_f32.launch(
        dev.stream(),
        shape.one_more_block().cfg_shared(nclasses as u32 * 4),
        &grad,
        &logits,
        &labels,
        &mut dst,
        nclasses,
    );
    // A C++ kernel is named by its C++ name with the template arguments in errors.
    assert_extent_refused(refused, CrossEntropyLossBackF32::NAME, "logits", (len + nclasses as usize) as u64, len);
    assert!(download(&dev, &dst).iter().all(|v| v.is_nan()), "a refused launch wrote");
    let mut loss = filled(&dev, shape.gx(), f32::NAN);
    let refused = k.cross_entropy_loss_f32_noshared.launch(
        dev.stream(),
        shape.one_more_block().cfg(),
        &logits,
        &labels,
        &mut loss,
        nclasses,
        1,
    );
    assert_extent_refused(refused, CrossEntropyLossF32Noshared::NAME, "logits", (len + nclasses as usize) as u64, len);
    assert!(download(&dev, &loss).iter().all(|v| v.is_nan()), "a refused launch wrote");
}

/// Fills a fresh graph struct: constant logits per row (`0.37 r`, so each row's softmax is
/// uniform), one-hot labels, `loss_grad = rows`, random RMSNorm inputs, random weights and
/// gradient with zero moments.
fn fill_graph(g: &mut Llamacpp) {
    let (rows, n) = (Llamacpp::ROWS, Llamacpp::NCLASSES);
    let logits: Vec<f32> = (0..rows * n).map(|i| 0.37 * (i / n) as f32).collect();
    g.upload_logits(&logits).unwrap();
    g.upload_labels(&one_hot(rows, n)).unwrap();
    g.upload_loss_grad(&[rows as f32]).unwrap();
    g.upload_rb_grad(&random(Llamacpp::RB_GRAD_LEN, 80)).unwrap();
    g.upload_rb_xf(&random(Llamacpp::RB_XF_LEN, 81)).unwrap();
    g.load_w(&random(Llamacpp::PARAMS, 82)).unwrap();
    g.upload_g(&random(Llamacpp::PARAMS, 83)).unwrap();
    g.load_g_m(&vec![0.0; Llamacpp::PARAMS]).unwrap();
    g.load_g_v(&vec![0.0; Llamacpp::PARAMS]).unwrap();
    g.load_pars(&first_step_pars()).unwrap();
}

/// Every buffer a node writes, as bits.
fn graph_results(g: &Llamacpp) -> Vec<Vec<u32>> {
    [
        g.download_loss(),
        g.download_loss_ns(),
        g.download_dlogits(),
        g.download_dlogits_ns(),
        g.download_rb_dst(),
        g.download_w(),
        g.download_g_m(),
        g.download_g_v(),
    ]
    .into_iter()
    .map(|v| bits(&v.unwrap()))
    .collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_training_kernels_graph_matches_eager_and_keeps_the_invariants() {
    let dev = device();
    let mut eager = Llamacpp::new(&dev).unwrap();
    fill_graph(&mut eager);
    eager.run_eager().unwrap();
    let mut graph = Llamacpp::new(&dev).unwrap();
    fill_graph(&mut graph);
    graph.capture().unwrap();
    graph.replay().unwrap();
    assert_eq!(graph_results(&graph), graph_results(&eager), "graph replay and run_eager differ");

    let (rows, n) = (Llamacpp::ROWS, Llamacpp::NCLASSES);
    // Uniform softmax per row: the loss is ln(n) / rows, the gradient 1/n off the label and
    // 1/n - 1 on it, from both instantiations.
    let want = (n as f64).ln() / rows as f64;
    for loss in graph.download_loss().unwrap().into_iter().chain(graph.download_loss_ns().unwrap()) {
        assert!((f64::from(loss) - want).abs() <= 1e-6 * want, "loss {loss}, want {want}");
    }
    let labels = one_hot(rows, n);
    for (what, d) in
        [("dlogits", graph.download_dlogits().unwrap()), ("dlogits_ns", graph.download_dlogits_ns().unwrap())]
    {
        assert_softmax_minus_onehot(what, &d, &labels, n, 1e-5);
        let inv = 1.0 / n as f32;
        assert!(d.iter().zip(&labels).all(|(&v, &l)| v == if l == 1.0 { inv - 1.0 } else { inv }), "{what}");
    }
    let ncols = Llamacpp::NCOLS;
    let (rb_grad, rb_xf) = (random(Llamacpp::RB_GRAD_LEN, 80), random(Llamacpp::RB_XF_LEN, 81));
    assert_rows_orthogonal("graph rms_norm_back", &graph.download_rb_dst().unwrap(), &rb_xf, &rb_grad, ncols);
    let w0 = random(Llamacpp::PARAMS, 82);
    assert_first_step("graph adamw", &w0, &graph.download_w().unwrap(), &random(Llamacpp::PARAMS, 83), 1e-3);
}
