//! NVIDIA developer-blog samples: the LSTM cell's pointwise kernels and its fused forward kernel
//! (`devblog__lstm.cu`), and the shuffle reductions (`devblog__reduce.cu`, `in` declared `r#in`).
//! Each is launched at the manifest's three shapes with buffers of exactly the declared extents
//! and checked by an invariant of its output (sigmoid(0) = 0.5, tanh(0) = 0, a sum of ones is
//! the count, `x * 1 == x`), never by a CPU re-implementation. `tests/corpus2/graphs/devblog.toml`
//! chains the pointwise kernels and runs the reductions (the stable one in two passes on distinct
//! buffers), bit-equal to `run_eager`. `elementWise_fp` takes a `bool` (`training`), which a
//! graph spec cannot give, so it runs eagerly only. The finite-difference kernels need a declared
//! block shape, `pw_biasAdd` a nonzero `nBias`, the vector loads an aligned `in` (MANIFEST.toml).

use super::common::{assert_extent_refused, bits, device, download, filled, upload, Shape};

#[kgraph::kernels]
pub(crate) mod kernels {
    /// `y = a + b` (every pointer a non-const `float*`: `&mut`, and so never aliased here).
    #[kernel("devblog__lstm.cu", name = "pw_vecAdd", unsafe(extents))]
    pub fn pw_vec_add(y: &mut [f32; n], a: &mut [f32; n], b: &mut [f32; n], n: i32);

    /// `y = a * b`.
    #[kernel("devblog__lstm.cu", name = "pw_vecMul", unsafe(extents))]
    pub fn pw_vec_mul(y: &mut [f32; n], a: &mut [f32; n], b: &mut [f32; n], n: i32);

    /// `y = tanh(a)`.
    #[kernel("devblog__lstm.cu", name = "pw_tanh", unsafe(extents))]
    pub fn pw_tanh(y: &mut [f32; n], a: &mut [f32; n], n: i32);

    /// `y = sigmoid(a)`.
    #[kernel("devblog__lstm.cu", name = "pw_sigmoid", unsafe(extents))]
    pub fn pw_sigmoid(y: &mut [f32; n], a: &mut [f32; n], n: i32);

    /// The fused LSTM cell: gates `[batch][4][hidden]`, `linear_gates` written when `training`
    /// (the project passes NULL otherwise: declared non-optional, a bool decides).
    #[kernel("devblog__lstm.cu", name = "elementWise_fp", unsafe(extents))]
    pub fn element_wise_fp(
        hidden_size: i32,
        mini_batch: i32,
        tmp_h: &mut [f32; 4 * mini_batch * hidden_size],
        tmp_i: &mut [f32; 4 * mini_batch * hidden_size],
        bias: &mut [f32; 8 * hidden_size],
        linear_gates: &mut [f32; 4 * mini_batch * hidden_size],
        h_out: &mut [f32; mini_batch * hidden_size],
        i_out: &mut [f32; mini_batch * hidden_size],
        c_in: &mut [f32; mini_batch * hidden_size],
        c_out: &mut [f32; mini_batch * hidden_size],
        training: bool,
    );

    /// One partial sum per block (`out[blockIdx.x]`): `out` is grid-sized. blockReduceSum's
    /// `__shared__ int shared[32]` holds one slot per warp: any block up to 1024 threads.
    #[kernel("devblog__reduce.cu", name = "device_reduce_stable_kernel", unsafe(extents), max_block = 1024)]
    pub fn device_reduce_stable_kernel(r#in: &mut [i32; n], out: &mut [i32; grid.x], n: i32);

    /// Warp sums added atomically into `out[0]`.
    #[kernel("devblog__reduce.cu", name = "device_reduce_warp_atomic_kernel", unsafe(extents))]
    pub fn device_reduce_warp_atomic_kernel(r#in: &mut [i32; n], out: &mut [i32; 1], n: i32);

    /// Block sums added atomically into `out[0]`.
    #[kernel("devblog__reduce.cu", name = "device_reduce_block_atomic_kernel", unsafe(extents), max_block = 1024)]
    pub fn device_reduce_block_atomic_kernel(r#in: &mut [i32; n], out: &mut [i32; 1], n: i32);
}
use kernels::Kernels;

kgraph::graph!("tests/corpus2/graphs/devblog.toml");

/// The manifest's shapes for the pointwise kernels: (launch, n).
const PW_SHAPES: [(Shape, usize); 3] = [(Shape::x(1, 128), 1), (Shape::x(256, 128), 32768), (Shape::x(3, 100), 300)];

/// A value in [-8, 8) that differs per index, without a generator.
fn wobble(i: usize) -> f32 {
    ((i * 37) % 128) as f32 / 8.0 - 8.0
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pointwise_add_and_mul_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap();
    for (s, n) in PW_SHAPES {
        // a + (-a) == 0 exactly.
        let mut a = upload(&dev, &(0..n).map(|i| i as f32).collect::<Vec<_>>());
        let mut b = upload(&dev, &(0..n).map(|i| -(i as f32)).collect::<Vec<_>>());
        let mut y = filled(&dev, n, f32::NAN);
        k.pw_vec_add.launch(dev.stream(), s.cfg(), &mut y, &mut a, &mut b, n as i32).unwrap();
        assert!(download(&dev, &y).iter().all(|v| *v == 0.0), "pw_vecAdd {s:?} n={n}: a + (-a) != 0");
        // a * 1 == a bit for bit.
        let host: Vec<f32> = (0..n).map(wobble).collect();
        let mut a = upload(&dev, &host);
        let mut ones = filled(&dev, n, 1.0f32);
        let mut y = filled(&dev, n, f32::NAN);
        k.pw_vec_mul.launch(dev.stream(), s.cfg(), &mut y, &mut a, &mut ones, n as i32).unwrap();
        assert_eq!(bits(&download(&dev, &y)), bits(&host), "pw_vecMul {s:?} n={n}: a * 1 != a");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pointwise_tanh_and_sigmoid_fix_zero_and_stay_in_range_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap();
    for (s, n) in PW_SHAPES {
        let host: Vec<f32> = (0..n).map(|i| if i % 2 == 0 { 0.0 } else { wobble(i) }).collect();
        let mut a = upload(&dev, &host);
        let mut y = filled(&dev, n, f32::NAN);
        k.pw_tanh.launch(dev.stream(), s.cfg(), &mut y, &mut a, n as i32).unwrap();
        for (i, (v, x)) in download(&dev, &y).iter().zip(&host).enumerate() {
            let ok = if *x == 0.0 { *v == 0.0 } else { (-1.0..=1.0).contains(v) };
            assert!(ok, "pw_tanh {s:?}: tanh({x}) = {v} at {i}");
        }
        let mut y = filled(&dev, n, f32::NAN);
        k.pw_sigmoid.launch(dev.stream(), s.cfg(), &mut y, &mut a, n as i32).unwrap();
        for (i, (v, x)) in download(&dev, &y).iter().zip(&host).enumerate() {
            let ok = if *x == 0.0 { *v == 0.5 } else { (0.0..=1.0).contains(v) };
            assert!(ok, "pw_sigmoid {s:?}: sigmoid({x}) = {v} at {i}");
        }
    }
}

/// All gates 0 (tmp_h = tmp_i = bias = 0) and c_in = 1: c_out = sigmoid(0) * 1 + sigmoid(0) *
/// tanh(0) = 0.5 exactly, h = sigmoid(0) * tanh(0.5); the linear gates are 0 when training and
/// keep their poison when not.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_fused_lstm_cell_at_zero_gates_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().element_wise_fp;
    let shapes = [
        (Shape::x(1, 256), 1usize, 1usize, true),
        (Shape::x(128, 256), 512, 64, false),
        (Shape::x(300, 100), 100, 300, true),
    ];
    let h_want = 0.5 * 0.5f32.tanh();
    for (s, hidden, batch, training) in shapes {
        let cells = hidden * batch;
        let mut tmp_h = filled(&dev, 4 * cells, 0.0f32);
        let mut tmp_i = filled(&dev, 4 * cells, 0.0f32);
        let mut bias = filled(&dev, 8 * hidden, 0.0f32);
        let mut gates = filled(&dev, 4 * cells, f32::NAN);
        let (mut h_out, mut i_out) = (filled(&dev, cells, f32::NAN), filled(&dev, cells, f32::NAN));
        let (mut c_in, mut c_out) = (filled(&dev, cells, 1.0f32), filled(&dev, cells, f32::NAN));
        k.launch(
            dev.stream(),
            s.cfg(),
            hidden as i32,
            batch as i32,
            &mut tmp_h,
            &mut tmp_i,
            &mut bias,
            &mut gates,
            &mut h_out,
            &mut i_out,
            &mut c_in,
            &mut c_out,
            training,
        )
        .unwrap();
        let what = format!("{s:?} hidden={hidden} batch={batch} training={training}");
        assert!(download(&dev, &c_out).iter().all(|v| *v == 0.5), "{what}: c_out != 0.5");
        for (name, out) in [("h_out", &h_out), ("i_out", &i_out)] {
            let got = download(&dev, out);
            assert!(got.iter().all(|v| (v - h_want).abs() <= 1e-6), "{what}: {name} != 0.5 tanh(0.5)");
        }
        let g = download(&dev, &gates);
        assert!(g.iter().all(|v| if training { *v == 0.0 } else { v.is_nan() }), "{what}: linear gates");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_stable_reduction_of_ones_sums_to_n_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().device_reduce_stable_kernel;
    for (s, n) in [(Shape::x(1, 1024), 1usize), (Shape::x(1024, 512), 1_000_000), (Shape::x(7, 96), 5000)] {
        let mut ones = filled(&dev, n, 1i32);
        let mut out = filled(&dev, s.gx(), -1i32);
        k.launch(dev.stream(), s.cfg(), &mut ones, &mut out, n as i32).unwrap();
        let partial = download(&dev, &out);
        assert!(partial.iter().all(|v| *v >= 0), "{s:?} n={n}: a block left its partial unwritten: {partial:?}");
        assert_eq!(partial.iter().map(|v| i64::from(*v)).sum::<i64>(), n as i64, "{s:?}: sum of the partials");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_atomic_reductions_of_ones_sum_to_n_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap();
    for (s, n) in [(Shape::x(1, 32), 1usize), (Shape::x(2048, 256), 1_000_000), (Shape::x(5, 64), 777)] {
        let mut ones = filled(&dev, n, 1i32);
        let mut out = filled(&dev, 1, 0i32);
        k.device_reduce_warp_atomic_kernel.launch(dev.stream(), s.cfg(), &mut ones, &mut out, n as i32).unwrap();
        assert_eq!(download(&dev, &out), [n as i32], "warp atomic {s:?}");
    }
    for (s, n) in [(Shape::x(1, 32), 1usize), (Shape::x(2048, 256), 1_000_000), (Shape::x(5, 1024), 777)] {
        let mut ones = filled(&dev, n, 1i32);
        let mut out = filled(&dev, 1, 0i32);
        k.device_reduce_block_atomic_kernel.launch(dev.stream(), s.cfg(), &mut ones, &mut out, n as i32).unwrap();
        assert_eq!(download(&dev, &out), [n as i32], "block atomic {s:?}");
    }
}

/// The stable reduction writes `out[blockIdx.x]`: one block more than `out` holds is refused.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_grid_one_block_larger_than_the_partials_is_refused() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().device_reduce_stable_kernel;
    let (s, n) = (Shape::x(7, 96), 5000usize);
    let mut ones = filled(&dev, n, 1i32);
    let mut out = filled(&dev, s.gx(), -1i32);
    let r = k.launch(dev.stream(), s.one_more_block().cfg(), &mut ones, &mut out, n as i32);
    assert_extent_refused(r, "device_reduce_stable_kernel", "out", s.gx() as u64 + 1, s.gx());
    assert!(download(&dev, &out).iter().all(|v| *v == -1), "a refused launch wrote");
}

/// The pointwise chain and the reductions in one graph: bit-equal to `run_eager`, with the
/// invariants (`a + (-a) == 0`, sigmoid(0) = 0.5 and tanh(0) = 0 so their product is 0; every
/// reduction of the ones is `n`, the stable one in two passes).
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_devblog_graph_matches_eager_and_keeps_the_invariants() {
    let dev = device();
    let n = Devblog::N;
    let a: Vec<f32> = (0..n).map(wobble).collect();
    let neg: Vec<f32> = a.iter().map(|v| -v).collect();
    let run = |capture: bool| {
        let mut g = Devblog::new(&dev).unwrap();
        g.load_a(&a).unwrap();
        g.load_neg(&neg).unwrap();
        g.load_ones(&vec![1; Devblog::M]).unwrap();
        if capture {
            g.capture().unwrap();
            g.replay().unwrap();
        } else {
            g.run_eager().unwrap();
        }
        let floats = [
            g.download_zero().unwrap(),
            g.download_sg().unwrap(),
            g.download_th().unwrap(),
            g.download_prod().unwrap(),
        ];
        let ints = [g.download_total().unwrap(), g.download_wsum().unwrap(), g.download_bsum().unwrap()];
        (floats, ints)
    };
    let (ef, ei) = run(false);
    let (gf, gi) = run(true);
    for (e, g) in ef.iter().zip(&gf) {
        assert_eq!(bits(g), bits(e), "replay vs run_eager");
    }
    assert_eq!(gi, ei, "replay vs run_eager (sums)");
    let [zero, sg, th, prod] = gf;
    assert!(zero.iter().all(|v| *v == 0.0), "a + (-a)");
    assert!(sg.iter().all(|v| *v == 0.5) && th.iter().all(|v| *v == 0.0), "sigmoid(0), tanh(0)");
    assert!(prod.iter().all(|v| *v == 0.0), "0.5 * 0");
    for (name, sum) in ["two-pass stable", "warp atomic", "block atomic"].iter().zip(gi) {
        assert_eq!(sum, [Devblog::M as i32], "{name} reduction of {} ones", Devblog::M);
    }
}
