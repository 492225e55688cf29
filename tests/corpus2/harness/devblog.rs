//! NVIDIA developer-blog samples: the LSTM cell's pointwise kernels and its fused forward kernel
//! (`devblog__lstm.cu`), and the shuffle reductions (`devblog__reduce.cu`, `in` declared `r#in`).
//! Each is launched at the manifest's three shapes with buffers of exactly the declared extents
//! and checked by an invariant of its output (sigmoid(0) = 0.5, tanh(0) = 0, a sum of ones is
//! the count, `x * 1 == x`), never by a CPU re-implementation. `tests/corpus2/graphs/devblog.toml`
//! chains the pointwise kernels and runs the reductions (the stable one in two passes on distinct
//! buffers), bit-equal to `run_eager`. `elementWise_fp` takes a `bool` (`training`), which a
//! graph spec cannot give, so it runs eagerly only. The finite-difference kernels need a declared
//! block shape, `pw_biasAdd` a nonzero `nBias`, the vector loads an aligned `in` (MANIFEST.toml).

use kgraph::{Device, DeviceBuffer, Error, LaunchError};

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
    /// `__shared__ int shared[32]` holds one slot per warp: any block up to 1024 threads. The
    /// grid-stride counter is an `int` (`i += blockDim.x * gridDim.x`): `n` plus one stride must
    /// fit, or it wraps negative below `in` (the same for every reduction here).
    #[kernel(
        "devblog__reduce.cu",
        name = "device_reduce_stable_kernel",
        unsafe(extents),
        max_block = 1024,
        requires(n + grid.x * block.x <= i32::MAX)
    )]
    pub fn device_reduce_stable_kernel(r#in: &mut [i32; n], out: &mut [i32; grid.x], n: i32);

    /// Warp sums added atomically into `out[0]`.
    #[kernel(
        "devblog__reduce.cu",
        name = "device_reduce_warp_atomic_kernel",
        unsafe(extents),
        requires(n + grid.x * block.x <= i32::MAX)
    )]
    pub fn device_reduce_warp_atomic_kernel(r#in: &mut [i32; n], out: &mut [i32; 1], n: i32);

    /// Block sums added atomically into `out[0]`.
    #[kernel(
        "devblog__reduce.cu",
        name = "device_reduce_block_atomic_kernel",
        unsafe(extents),
        max_block = 1024,
        requires(n + grid.x * block.x <= i32::MAX)
    )]
    pub fn device_reduce_block_atomic_kernel(r#in: &mut [i32; n], out: &mut [i32; 1], n: i32);

    /// `y[i] += bias[i % nBias]`: true only for `nBias > 0` (`i % 0` is undefined, and its result
    /// indexes `bias`, whose extent 0 would accept an empty buffer).
    #[kernel("devblog__lstm.cu", name = "pw_biasAdd", unsafe(extents), requires(n_bias > 0))]
    pub fn pw_bias_add(y: &mut [f32; n], bias: &mut [f32; n_bias], n: i32, n_bias: i32);

    /// The stable reduction reading `in` as `int2`: `in` must be 8-byte aligned.
    #[kernel(
        "devblog__reduce.cu",
        name = "device_reduce_stable_kernel_vector2",
        unsafe(extents),
        max_block = 1024,
        requires(n + grid.x * block.x <= i32::MAX),
        align(r#in = 8)
    )]
    pub fn device_reduce_stable_kernel_vector2(r#in: &mut [i32; n], out: &mut [i32; grid.x], n: i32);

    /// The block-atomic reduction reading `in` as `int4`: `in` must be 16-byte aligned.
    #[kernel(
        "devblog__reduce.cu",
        name = "device_reduce_block_atomic_kernel_vector4",
        unsafe(extents),
        max_block = 1024,
        requires(n + grid.x * block.x <= i32::MAX),
        align(r#in = 16)
    )]
    pub fn device_reduce_block_atomic_kernel_vector4(r#in: &mut [i32; n], out: &mut [i32; 1], n: i32);

    /// d/dx on the sample's fixed 64^3 grid: a shared tile `[4][72]` indexed by `threadIdx.y`
    /// and `threadIdx.x + 8`, so the block must be the sample's 64 x 4.
    #[kernel(
        "devblog__finite_difference.cu",
        name = "derivative_x",
        unsafe(extents),
        max_block = 256,
        requires(block.x == 64, block.y == 4, block.z == 1)
    )]
    pub fn derivative_x(
        f: &mut [f32; (grid.y - 1) * 4096 + (grid.x * block.y - 1) * 64 + block.x],
        df: &mut [f32; (grid.y - 1) * 4096 + (grid.x * block.y - 1) * 64 + block.x],
    );

    /// d/dy: a shared tile `[72][4]`: blocks of 4 x 64.
    #[kernel(
        "devblog__finite_difference.cu",
        name = "derivative_y",
        unsafe(extents),
        max_block = 256,
        requires(block.x == 4, block.y == 64, block.z == 1)
    )]
    pub fn derivative_y(
        f: &mut [f32; (grid.y - 1) * 4096 + (block.y - 1) * 64 + grid.x * block.x],
        df: &mut [f32; (grid.y - 1) * 4096 + (block.y - 1) * 64 + grid.x * block.x],
    );

    /// d/dz: `k = threadIdx.y` is the z index, a shared tile `[72][4]`: blocks of 4 x 64.
    #[kernel(
        "devblog__finite_difference.cu",
        name = "derivative_z",
        unsafe(extents),
        max_block = 256,
        requires(block.x == 4, block.y == 64, block.z == 1)
    )]
    pub fn derivative_z(
        f: &mut [f32; (block.y - 1) * 4096 + (grid.y - 1) * 64 + grid.x * block.x],
        df: &mut [f32; (block.y - 1) * 4096 + (grid.y - 1) * 64 + grid.x * block.x],
    );
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
    assert_extent_refused(r, kernels::DeviceReduceStableKernel::NAME, "out", s.gx() as u64 + 1, s.gx());
    assert!(download(&dev, &out).iter().all(|v| *v == -1), "a refused launch wrote");
}

/// y = 0, bias = iota: `y[i] == i % nBias` exactly; `nBias = 0` is refused by `requires`.
#[test]
#[ignore = "needs a CUDA GPU"]
fn bias_add_repeats_the_bias_at_three_shapes_and_refuses_no_bias() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().pw_bias_add;
    for ((s, n), n_bias) in PW_SHAPES.into_iter().zip([1usize, 512, 7]) {
        let mut y = filled(&dev, n, 0.0f32);
        let mut bias = upload(&dev, &(0..n_bias).map(|i| i as f32).collect::<Vec<_>>());
        k.launch(dev.stream(), s.cfg(), &mut y, &mut bias, n as i32, n_bias as i32).unwrap();
        let got = download(&dev, &y);
        assert!(got.iter().enumerate().all(|(i, v)| *v == (i % n_bias) as f32), "{s:?} n={n} nBias={n_bias}");
    }
    let mut y = filled(&dev, 300, 0.0f32);
    let mut empty = filled(&dev, 0, 0.0f32);
    let r = k.launch(dev.stream(), Shape::x(3, 100).cfg(), &mut y, &mut empty, 300, 0);
    assert!(
        matches!(
            &r,
            Err(Error::Launch(LaunchError::Requirement {
                kernel: kernels::PwBiasAdd::NAME,
                condition: "n_bias > 0",
                ..
            }))
        ),
        "{r:?}"
    );
}

/// The vector-load reductions of ones sum to N at three shapes (whole allocations: aligned);
/// a view one `int` into its allocation is refused (`align(in = 8)` / `align(in = 16)`).
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_vector_reductions_sum_to_n_and_refuse_a_misaligned_view() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap();
    for (s, n) in [(Shape::x(1, 1024), 1usize), (Shape::x(977, 512), 1_000_001), (Shape::x(7, 96), 5000)] {
        let mut ones = filled(&dev, n, 1i32);
        let mut out = filled(&dev, s.gx(), -1i32);
        k.device_reduce_stable_kernel_vector2.launch(dev.stream(), s.cfg(), &mut ones, &mut out, n as i32).unwrap();
        let partial = download(&dev, &out);
        assert!(partial.iter().all(|v| *v >= 0), "vector2 {s:?}: a partial left unwritten");
        assert_eq!(partial.iter().map(|v| i64::from(*v)).sum::<i64>(), n as i64, "vector2 {s:?}");
    }
    for (s, n) in [(Shape::x(1, 32), 3usize), (Shape::x(977, 256), 1_000_003), (Shape::x(5, 64), 777)] {
        let mut ones = filled(&dev, n, 1i32);
        let mut out = filled(&dev, 1, 0i32);
        k.device_reduce_block_atomic_kernel_vector4
            .launch(dev.stream(), s.cfg(), &mut ones, &mut out, n as i32)
            .unwrap();
        assert_eq!(download(&dev, &out), [n as i32], "vector4 {s:?}");
    }
    let mut whole = filled(&dev, 101, 1i32);
    let mut view = whole.slice_mut(1..).unwrap();
    let mut out = filled(&dev, 1, 0i32);
    let r = k.device_reduce_block_atomic_kernel_vector4.launch(
        dev.stream(),
        Shape::x(1, 32).cfg(),
        &mut view,
        &mut out,
        100,
    );
    assert!(matches!(r, Err(Error::Launch(LaunchError::Misaligned { param: "in", align: 16, .. }))), "{r:?}");
}

/// Which (i, j, k) of the 64^3 grid a launch computes, per derivative: the extent spans the
/// last one, and the elements between that it does not compute keep their poison.
type Covered = fn(Shape, usize, usize, usize) -> bool;

/// A derivative kernel's launch on `(f, df)`.
type StencilLaunch<'a> = dyn Fn(Shape, &mut DeviceBuffer<f32>, &mut DeviceBuffer<f32>) -> Result<(), Error> + 'a;

/// One derivative kernel at its three shapes: the declared extent (as the declaration writes it)
/// and the points it covers.
fn derivative_case(
    dev: &Device,
    name: &str,
    shapes: [Shape; 3],
    extent: fn(Shape) -> usize,
    covered: Covered,
    launch: &StencilLaunch,
) {
    for s in shapes {
        let n = extent(s);
        let mut f = filled(dev, n, 3.25f32);
        let mut df = filled(dev, n, f32::NAN);
        launch(s, &mut f, &mut df).unwrap();
        for (e, v) in download(dev, &df).iter().enumerate() {
            let ok = if covered(s, e % 64, e / 64 % 64, e / 4096) { *v == 0.0 } else { v.is_nan() };
            assert!(ok, "d/d{name} {s:?}: df[{e}] = {v}");
        }
        assert!(download(dev, &f).iter().all(|v| *v == 3.25), "d/d{name} {s:?}: f changed");
    }
}

/// Constant `f`: every stencil difference is 0, so `df` is exactly 0 at every point the launch
/// covers and keeps its NaN poison elsewhere in the extent; `f` unchanged. (The coefficients
/// are `__constant__`s the sample's host sets with cudaMemcpyToSymbol; they stay 0 here, and
/// the invariant holds for any.) A block of another shape is refused by `requires`.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_derivatives_of_a_constant_field_are_zero_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap();
    let shape = |grid, block| Shape { grid, block };
    let xs = [shape((16, 64, 1), (64, 4, 1)), shape((16, 1, 1), (64, 4, 1)), shape((1, 64, 1), (64, 4, 1))];
    let yz = [shape((16, 64, 1), (4, 64, 1)), shape((1, 64, 1), (4, 64, 1)), shape((16, 1, 1), (4, 64, 1))];
    let x_len: fn(Shape) -> usize = |s| ((s.grid.1 - 1) * 4096 + (s.grid.0 * s.block.1 - 1) * 64 + s.block.0) as usize;
    let y_len: fn(Shape) -> usize = |s| ((s.grid.1 - 1) * 4096 + (s.block.1 - 1) * 64 + s.grid.0 * s.block.0) as usize;
    let z_len: fn(Shape) -> usize = |s| ((s.block.1 - 1) * 4096 + (s.grid.1 - 1) * 64 + s.grid.0 * s.block.0) as usize;
    let x_cov: Covered = |s, i, j, k| i < s.bx() && j < s.gx() * s.block.1 as usize && k < s.grid.1 as usize;
    let y_cov: Covered = |s, i, j, k| i < s.gx() * s.bx() && j < s.block.1 as usize && k < s.grid.1 as usize;
    let z_cov: Covered = |s, i, j, k| i < s.gx() * s.bx() && j < s.grid.1 as usize && k < s.block.1 as usize;
    derivative_case(&dev, "x", xs, x_len, x_cov, &|s, f, df| k.derivative_x.launch(dev.stream(), s.cfg(), f, df));
    derivative_case(&dev, "y", yz, y_len, y_cov, &|s, f, df| k.derivative_y.launch(dev.stream(), s.cfg(), f, df));
    derivative_case(&dev, "z", yz, z_len, z_cov, &|s, f, df| k.derivative_z.launch(dev.stream(), s.cfg(), f, df));
    let s = Shape { grid: (1, 1, 1), block: (32, 8, 1) };
    let (mut f, mut df) = (filled(&dev, x_len(s), 1.0f32), filled(&dev, x_len(s), f32::NAN));
    let r = k.derivative_x.launch(dev.stream(), s.cfg(), &mut f, &mut df);
    assert!(
        matches!(&r, Err(Error::Launch(LaunchError::Requirement { kernel: kernels::DerivativeX::NAME, .. }))),
        "{r:?}"
    );
}

/// `tests/corpus2/graphs/devblog.toml` with its states loaded (`a` and `-a`, the ones, zeros to
/// add the bias `0, 1, ..` to, a constant field), run eagerly or captured and replayed.
fn run_devblog_graph(dev: &Device, capture: bool) -> Devblog {
    let a: Vec<f32> = (0..Devblog::N).map(wobble).collect();
    let mut g = Devblog::new(dev).unwrap();
    g.load_neg(&a.iter().map(|v| -v).collect::<Vec<_>>()).unwrap();
    g.load_a(&a).unwrap();
    g.load_ones(&vec![1; Devblog::M]).unwrap();
    g.load_biased(&vec![0.0; Devblog::N]).unwrap();
    g.load_bias(&(0..Devblog::NB).map(|i| i as f32).collect::<Vec<_>>()).unwrap();
    g.load_field(&vec![3.25; Devblog::CUBE]).unwrap();
    if capture {
        g.capture().unwrap();
        g.replay().unwrap();
    } else {
        g.run_eager().unwrap();
    }
    g
}

/// The pointwise chain and the reductions in one graph: bit-equal to `run_eager`, with the
/// invariants (`a + (-a) == 0`, sigmoid(0) = 0.5 and tanh(0) = 0 so their product is 0; every
/// reduction of the ones is `m`, the stable one in two passes).
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_devblog_graph_matches_eager_and_keeps_the_invariants() {
    let dev = device();
    let floats = |g: &Devblog| {
        [g.download_zero().unwrap(), g.download_sg().unwrap(), g.download_th().unwrap(), g.download_prod().unwrap()]
    };
    let ints = |g: &Devblog| [g.download_total().unwrap(), g.download_wsum().unwrap(), g.download_bsum().unwrap()];
    let (graph, eager) = (run_devblog_graph(&dev, true), run_devblog_graph(&dev, false));
    let [zero, sg, th, prod] = floats(&graph);
    for (e, g) in floats(&eager).iter().zip([&zero, &sg, &th, &prod]) {
        assert_eq!(bits(g), bits(e), "replay vs run_eager");
    }
    let sums = ints(&graph);
    assert_eq!(sums, ints(&eager), "replay vs run_eager (sums)");
    assert!(zero.iter().all(|v| *v == 0.0), "a + (-a)");
    assert!(sg.iter().all(|v| *v == 0.5) && th.iter().all(|v| *v == 0.0), "sigmoid(0), tanh(0)");
    assert!(prod.iter().all(|v| *v == 0.0), "0.5 * 0");
    for (name, sum) in ["two-pass stable", "warp atomic", "block atomic"].iter().zip(sums) {
        assert_eq!(sum, [Devblog::M as i32], "{name} reduction of {} ones", Devblog::M);
    }
}

/// The nodes whose kernels carry `requires`/`align` (checked by graph! against the nodes): the
/// bias repeated exactly, the int2/int4 reductions of the ones equal to `m`, the derivatives
/// of the constant field 0 everywhere (the 16 x 64 grids cover the 64^3 cube); bit-equal to
/// `run_eager`.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_requirement_nodes_of_the_graph_match_eager_and_keep_the_invariants() {
    let dev = device();
    let floats = |g: &Devblog| {
        [g.download_biased().unwrap(), g.download_dfx().unwrap(), g.download_dfy().unwrap(), g.download_dfz().unwrap()]
    };
    let ints = |g: &Devblog| [g.download_partials2().unwrap(), g.download_v4sum().unwrap()];
    let (graph, eager) = (run_devblog_graph(&dev, true), run_devblog_graph(&dev, false));
    let [biased, dfx, dfy, dfz] = floats(&graph);
    for (e, g) in floats(&eager).iter().zip([&biased, &dfx, &dfy, &dfz]) {
        assert_eq!(bits(g), bits(e), "replay vs run_eager");
    }
    let [partials2, v4sum] = ints(&graph);
    assert_eq!([partials2.clone(), v4sum.clone()], ints(&eager), "replay vs run_eager (sums)");
    assert!(biased.iter().enumerate().all(|(i, v)| *v == (i % Devblog::NB) as f32), "bias repeated");
    assert_eq!(partials2.iter().map(|v| i64::from(*v)).sum::<i64>(), Devblog::M as i64, "int2 reduction");
    assert_eq!(v4sum, [Devblog::M as i32], "int4 reduction");
    for (name, df) in [("x", &dfx), ("y", &dfy), ("z", &dfz)] {
        assert!(df.iter().all(|v| *v == 0.0), "d/d{name} of a constant field");
    }
}
