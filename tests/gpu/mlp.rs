//! The MLP example's kernels (`examples/mlp/kernels/mlp.cu`) and its train-step graph
//! (`examples/mlp/mlp_train.toml`, GEMM nodes + those kernels): kernel invariants (ranges,
//! fixed points, exact column sums, the schedule's powers), the tanh and loss backward against
//! finite differences of their forward kernels, the whole network's gradients against finite
//! differences of the graph's loss, replay against `run_eager`, and training.

use kgraph::gradcheck::{sample_coords, weighted_sum, GradCheck, GradCheckReport};
use kgraph::{Device, DeviceBuffer};
use kgraph_model::mlp::{launch, MlpTrain, MlpTrainSmall, MlpWeights, TargetLaw};
use kgraph_model::mlp::{AdamwSchedule, BiasTanh, ColPartialSums, ColSumFinish, MseLoss, TanhBackward};

use super::common::{device, random};
use super::model_util::{assert_all_finite, assert_bitwise_eq, down, up, zeros};

/// `tanh(h + bias)` in place, on the device.
fn bias_tanh(dev: &Device, rows: usize, cols: usize, h: &mut DeviceBuffer<f32>, bias: &DeviceBuffer<f32>) {
    let k = BiasTanh::new(dev).unwrap();
    k.launch(dev.stream(), launch::bias_tanh(rows, cols), bias, rows as i32, cols as i32, h).unwrap();
}

/// The column sums of `g [rows x cols]` through the two kernels (partials over `chunks`, then in order).
fn col_sums(dev: &Device, g: &[f32], rows: usize, cols: usize, chunks: usize) -> Vec<f32> {
    let (partial_k, finish_k) = (ColPartialSums::new(dev).unwrap(), ColSumFinish::new(dev).unwrap());
    let g = up(dev, g);
    let mut partial = zeros(dev, chunks * cols);
    let mut db = zeros(dev, cols);
    let (r, c, k) = (rows as i32, cols as i32, chunks as i32);
    partial_k.launch(dev.stream(), launch::col_partials(cols, chunks), &g, r, c, k, &mut partial).unwrap();
    finish_k.launch(dev.stream(), launch::col_sum_finish(cols), &partial, k, c, &mut db).unwrap();
    down(dev, &db)
}

/// (new g, column sums of it) from `tanh_backward` then `col_sum_finish`.
fn tanh_backward(dev: &Device, h: &[f32], g: &[f32], rows: usize, cols: usize, chunks: usize) -> (Vec<f32>, Vec<f32>) {
    let (back_k, finish_k) = (TanhBackward::new(dev).unwrap(), ColSumFinish::new(dev).unwrap());
    let (h, mut g) = (up(dev, h), up(dev, g));
    let mut partial = zeros(dev, chunks * cols);
    let mut db = zeros(dev, cols);
    let (r, c, k) = (rows as i32, cols as i32, chunks as i32);
    back_k.launch(dev.stream(), launch::col_partials(cols, chunks), &h, r, c, k, &mut g, &mut partial).unwrap();
    finish_k.launch(dev.stream(), launch::col_sum_finish(cols), &partial, k, c, &mut db).unwrap();
    (down(dev, &g), down(dev, &db))
}

/// (loss, g) of `mse_loss`.
fn mse(dev: &Device, z: &[f32], bias: &[f32], target: &[f32], rows: usize) -> (f32, Vec<f32>) {
    let k = MseLoss::new(dev).unwrap();
    let cols = bias.len();
    let (z, bias, target) = (up(dev, z), up(dev, bias), up(dev, target));
    let (mut loss, mut g) = (zeros(dev, 1), zeros(dev, rows * cols));
    k.launch(dev.stream(), launch::mse_loss(), &z, &bias, &target, rows as i32, cols as i32, &mut loss, &mut g)
        .unwrap();
    (down(dev, &loss)[0], down(dev, &g))
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mlp_bias_tanh_stays_in_the_unit_interval_is_odd_and_rises_with_the_bias() {
    let dev = device();
    // 300 columns: not a multiple of the block, so the last block's tail is exercised.
    let (rows, cols) = (70, 300);
    let z: Vec<f32> = random(rows * cols, 1).iter().map(|v| 20.0 * v).collect(); // [-40, 40): saturates
    let b = random(cols, 2);
    let run = |z: &[f32], b: &[f32]| {
        let mut h = up(&dev, z);
        bias_tanh(&dev, rows, cols, &mut h, &up(&dev, b));
        down(&dev, &h)
    };
    let h = run(&z, &b);
    assert_all_finite("h", &h);
    assert!(h.iter().all(|v| (-1.0..=1.0).contains(v)), "tanh left [-1, 1]");
    let neg = |v: &[f32]| v.iter().map(|x| -x).collect::<Vec<f32>>();
    let h_neg = run(&neg(&z), &neg(&b));
    for (i, (a, b)) in h.iter().zip(&h_neg).enumerate() {
        assert!((a + b).abs() <= 1e-7, "tanh(-z - b)[{i}] = {b}, not -{a}");
    }
    let b_up: Vec<f32> = b.iter().map(|v| v + 0.25).collect();
    let h_up = run(&z, &b_up);
    for (i, (lo, hi)) in h.iter().zip(&h_up).enumerate() {
        assert!(hi >= lo, "h[{i}] fell from {lo} to {hi} as its bias rose");
    }
    // Zero in, zero bias: exactly zero out.
    assert!(run(&vec![0.0; rows * cols], &vec![0.0; cols]).iter().all(|&v| v == 0.0));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mlp_column_sums_of_ones_are_the_row_count_for_any_chunking() {
    let dev = device();
    // Rows not a multiple of the chunks, columns not of the 32-wide tile.
    for (rows, cols, chunks) in [(4096, 512, 64), (1000, 40, 7), (5, 3, 8), (1, 1, 1)] {
        let sums = col_sums(&dev, &vec![1.0; rows * cols], rows, cols, chunks);
        assert!(sums.iter().all(|&s| s == rows as f32), "ones over {rows} rows summed to {sums:?}");
        // g[r][c] = r + c: integer sums below 2^24 are exact in any order.
        let g: Vec<f32> = (0..rows * cols).map(|i| (i / cols + i % cols) as f32).collect();
        let sums = col_sums(&dev, &g, rows, cols, chunks);
        for (c, &s) in sums.iter().enumerate() {
            let want = (rows * (rows - 1) / 2 + rows * c) as f32;
            assert_eq!(s, want, "column {c} of r + c over {rows} rows, {chunks} chunks");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mlp_tanh_backward_passes_the_gradient_at_zero_and_stops_it_at_saturation() {
    let dev = device();
    let (rows, cols, chunks) = (333, 45, 6);
    let g = random(rows * cols, 3);
    // h = 0: tanh' = 1, the gradient passes unchanged and its column sums are g's.
    let (through, sums) = tanh_backward(&dev, &vec![0.0; rows * cols], &g, rows, cols, chunks);
    assert_bitwise_eq("g through h = 0", &through, &g);
    assert_bitwise_eq("column sums through h = 0", &sums, &col_sums(&dev, &g, rows, cols, chunks));
    // h = ±1: tanh' = 0.
    let h: Vec<f32> = (0..rows * cols).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
    let (stopped, sums) = tanh_backward(&dev, &h, &g, rows, cols, chunks);
    assert!(stopped.iter().chain(&sums).all(|&v| v == 0.0), "a saturated tanh passed a gradient");
}

/// d/dz and d/dbias of Σ c ⊙ tanh(z + bias): tanh_backward (with its column sums) against
/// central differences of bias_tanh.
#[test]
#[ignore = "needs a CUDA GPU"]
fn mlp_tanh_backward_and_bias_gradient_match_finite_differences() {
    let dev = device();
    let (rows, cols, chunks) = (64, 40, 3);
    let (z, b, cot) = (random(rows * cols, 5), random(cols, 6), random(rows * cols, 7));
    let h = {
        let mut h = up(&dev, &z);
        bias_tanh(&dev, rows, cols, &mut h, &up(&dev, &b));
        down(&dev, &h)
    };
    let (g_z, g_b) = tanh_backward(&dev, &h, &cot, rows, cols, chunks);
    let forward = |z: &DeviceBuffer<f32>, b: &DeviceBuffer<f32>| {
        let mut h = up(&dev, &down(&dev, z));
        bias_tanh(&dev, rows, cols, &mut h, b);
        weighted_sum(&dev, &h, &cot)
    };
    let (mut z_dev, mut b_dev) = (up(&dev, &z), up(&dev, &b));
    let fd = GradCheck::default();
    let b_fixed = up(&dev, &b);
    let report = fd.check(&dev, "z", &mut z_dev, &g_z, &sample_coords(rows * cols, 24, 1), |z| forward(z, &b_fixed));
    report.unwrap().assert_passed();
    let report = fd.check(&dev, "bias", &mut b_dev, &g_b, &sample_coords(cols, 24, 2), |b| forward(&z_dev, b));
    report.unwrap().assert_passed();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mlp_mse_loss_is_zero_at_the_target_and_half_the_squared_error_off_it() {
    let dev = device();
    let (rows, cols) = (4096, 8);
    // Small integers and halves: every sum below is exact in f32.
    let target: Vec<f32> = (0..rows * cols).map(|i| (i % 7) as f32 - 3.0).collect();
    let bias: Vec<f32> = (0..cols).map(|c| c as f32 * 0.5).collect();
    let z_at: Vec<f32> = (0..rows * cols).map(|i| target[i] - bias[i % cols]).collect();
    let (loss, g) = mse(&dev, &z_at, &bias, &target, rows);
    assert_eq!(loss, 0.0);
    assert!(g.iter().all(|&v| v == 0.0));
    // Off by 1 everywhere: each row's half squared error is cols / 2, and so is the mean.
    let z_off: Vec<f32> = z_at.iter().map(|v| v + 1.0).collect();
    let (loss, g) = mse(&dev, &z_off, &bias, &target, rows);
    assert_eq!(loss, 0.5 * cols as f32);
    assert!(g.iter().all(|&v| v == 1.0 / rows as f32), "g = (out - target) / rows");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mlp_mse_loss_gradient_matches_finite_differences() {
    let dev = device();
    let (rows, cols) = (50, 8);
    let (z, bias, target) = (random(rows * cols, 11), random(cols, 12), random(rows * cols, 13));
    let (_, g) = mse(&dev, &z, &bias, &target, rows);
    let mut z_dev = up(&dev, &z);
    // Quadratic in z: a wide step costs no truncation and shrinks the rounding noise.
    let report = GradCheck::default()
        .with_eps(5e-2)
        .with_tol(1e-4, 1e-2)
        .check(&dev, "z", &mut z_dev, &g, &sample_coords(rows * cols, 32, 3), |z| {
            Ok(f64::from(mse(&dev, &down(&dev, z), &bias, &target, rows).0))
        })
        .unwrap();
    report.assert_passed();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mlp_adamw_schedule_counts_steps_and_raises_the_betas_to_them() {
    let dev = device();
    let k = AdamwSchedule::new(&dev).unwrap();
    let cfg = kgraph::LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
    let mut step = dev.upload(&[0i32]).unwrap();
    let mut schedule = zeros(&dev, 3);
    let (lr, b1, b2) = (3e-4f32, 0.9f32, 0.999f32);
    for t in 1..=3 {
        k.launch(dev.stream(), cfg, lr, b1, b2, &mut step, &mut schedule).unwrap();
        assert_eq!(dev.download(&step).unwrap(), [t]);
        let s = down(&dev, &schedule);
        assert_eq!(s[0], lr);
        let want = [1.0 - f64::from(b1).powi(t), 1.0 - f64::from(b2).powi(t)];
        for (got, want) in s[1..].iter().zip(want) {
            assert!((f64::from(*got) - want).abs() <= 1e-7 * want, "step {t}: {got} for {want}");
        }
    }
    // Saturates instead of wrapping to a negative step.
    let mut step = dev.upload(&[i32::MAX]).unwrap();
    k.launch(dev.stream(), cfg, lr, b1, b2, &mut step, &mut schedule).unwrap();
    assert_eq!(dev.download(&step).unwrap(), [i32::MAX]);
}

/// The small graph after one eager step with lr = 0 (parameters unchanged): its loss and the
/// six gradients, each against central differences of the graph's own loss.
#[test]
#[ignore = "needs a CUDA GPU"]
fn mlp_graph_gradients_match_finite_differences_of_its_loss() {
    let dev = device();
    let mut g = MlpTrainSmall::new(&dev).unwrap();
    let law = TargetLaw::new(MlpTrainSmall::N_IN, MlpTrainSmall::N_OUT, 3);
    let (x, target) = law.batch(MlpTrainSmall::BATCH, 4);
    g.upload_x(&x).unwrap();
    g.upload_target(&target).unwrap();
    let w = MlpTrainSmall::init_weights(5);
    g.start(&w).unwrap();
    g.set_lr(0.0).unwrap();
    g.run_eager().unwrap();
    assert_eq!(g.weights().unwrap(), w, "lr = 0 must leave the parameters as they were");
    let grads = [g.gw1(), g.gb1(), g.gw2(), g.gb2(), g.gw3(), g.gb3()].map(|b| down(&dev, b));
    let loss0 = g.download_loss().unwrap()[0];
    assert!(loss0 > 0.1, "the untrained loss {loss0} should be of order 1");
    // The loss is averaged over the batch, so gradients are small: a tight absolute tolerance,
    // well above the noise of a loss of order 1 rounded to f32 (1e-7 / 2ε = 5e-6).
    let fd = GradCheck::default().with_tol(1e-4, 1e-2);
    let names = ["w1", "b1", "w2", "b2", "w3", "b3"];
    let params = [&w.w1, &w.b1, &w.w2, &w.b2, &w.w3, &w.b3];
    let mut reports: Vec<GradCheckReport> = Vec::new();
    for (p, ((name, host), grad)) in names.iter().zip(params).zip(&grads).enumerate() {
        let mut param = up(&dev, host);
        let coords = sample_coords(host.len(), 16, 10 + p as u64);
        let report = fd
            .check(&dev, name, &mut param, grad, &coords, |perturbed| {
                let values = down(&dev, perturbed);
                match p {
                    0 => g.load_w1(&values)?,
                    1 => g.load_b1(&values)?,
                    2 => g.load_w2(&values)?,
                    3 => g.load_b2(&values)?,
                    4 => g.load_w3(&values)?,
                    _ => g.load_b3(&values)?,
                }
                g.run_eager()?;
                Ok(f64::from(g.download_loss()?[0]))
            })
            .unwrap();
        // Not vacuous: some sampled gradient is well above the tolerance.
        let largest = report.coords.iter().map(|c| c.analytic.abs()).fold(0.0, f64::max);
        assert!(largest > 5e-4, "{name}: sampled gradients up to {largest:e} only");
        reports.push(report);
        g.start(&w).unwrap(); // the last closure call left a perturbed value loaded
        g.set_lr(0.0).unwrap();
    }
    kgraph::gradcheck::assert_all_passed(&reports);
}

/// Three steps from `w` (run eagerly or replayed): the loss of each and the weights after.
fn three_steps(g: &mut MlpTrainSmall, w: &MlpWeights, replay: bool) -> (Vec<f32>, MlpWeights) {
    g.start(w).unwrap();
    let mut losses = Vec::new();
    for _ in 0..3 {
        if replay {
            g.replay().unwrap();
        } else {
            g.run_eager().unwrap();
        }
        losses.push(g.download_loss().unwrap()[0]);
    }
    (losses, g.weights().unwrap())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mlp_graph_replays_bit_for_bit_like_its_eager_run() {
    let dev = device();
    let mut g = MlpTrainSmall::new(&dev).unwrap();
    let (x, target) = TargetLaw::new(MlpTrainSmall::N_IN, MlpTrainSmall::N_OUT, 3).batch(MlpTrainSmall::BATCH, 8);
    g.upload_x(&x).unwrap();
    g.upload_target(&target).unwrap();
    let w = MlpTrainSmall::init_weights(9);
    let eager = three_steps(&mut g, &w, false);
    g.capture().unwrap();
    let replayed = three_steps(&mut g, &w, true);
    assert_bitwise_eq("losses", &eager.0, &replayed.0);
    assert_bitwise_eq("w1", &eager.1.w1, &replayed.1.w1);
    assert_bitwise_eq("w2", &eager.1.w2, &replayed.1.w2);
    assert_bitwise_eq("b3", &eager.1.b3, &replayed.1.b3);
    assert!(eager.0[2] < eager.0[0], "three steps did not lower the loss: {:?}", eager.0);
}

/// The example's network at full size: 500 captured steps on one batch take the loss below 5 %
/// of its first value (a float32 CPU simulation of the same law and sizes reached 0.5 % at 300).
#[test]
#[ignore = "needs a CUDA GPU"]
fn mlp_training_takes_the_loss_below_five_percent_in_500_steps() {
    let dev = device();
    let mut g = MlpTrain::new(&dev).unwrap();
    let (x, target) = TargetLaw::new(MlpTrain::N_IN, MlpTrain::N_OUT, 1).batch(MlpTrain::BATCH, 2);
    g.upload_x(&x).unwrap();
    g.upload_target(&target).unwrap();
    g.start(&MlpTrain::init_weights(7)).unwrap();
    g.capture().unwrap();
    g.replay().unwrap();
    let first = g.download_loss().unwrap()[0];
    for _ in 1..500 {
        g.replay().unwrap();
    }
    let last = g.download_loss().unwrap()[0];
    let ratio = last / first;
    assert!(first.is_finite() && first > 0.5, "first loss {first}");
    assert!(ratio < 0.05, "loss {first} -> {last} after 500 steps (ratio {ratio})");
    let w = g.weights().unwrap();
    for (name, v) in [("w1", &w.w1), ("w2", &w.w2), ("w3", &w.w3), ("b1", &w.b1), ("b2", &w.b2), ("b3", &w.b3)] {
        assert_all_finite(name, v);
    }
}
