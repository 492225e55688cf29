//! bitsandbytes' `kfunc` (fill, arange, multiply; `bitsandbytes__optimizer32bit.cu`), bound by
//! its C++ name with the enumerator the source instantiates it with (`kfunc<float, FILL>`): the
//! template parameter is an `int` (`template <typename T, int FUNC>`), so the symbol holds the
//! value (`Li0E`) and kgraph resolves `FILL` through the source's `Funcs_t`. Each is launched
//! at the manifest's three shapes with buffers of exactly the declared extents and checked by an
//! invariant (every element the fill value, `A[i] == i`, `x * 1 == x`), never by a CPU
//! re-implementation;
//! `tests/corpus2/graphs/bnb_apex.toml` chains the three (`B` passed `"null"` where unused),
//! bit-equal to `run_eager`. `kOptimizer32bit2State` (a block of exactly 1024 threads) and apex's
//! `adam_cuda_kernel` (an `int` counter against a `size_t` bound) need launch-time conditions
//! (MANIFEST.toml).

use kgraph::{f16, Device, Error, LaunchError};

use super::common::{assert_extent_refused, bits, device, download, filled, upload, Shape};

#[kgraph::kernels]
pub(crate) mod kernels {

    /// `A[i] = value` (grid-stride, `long` counter); `B` unused (the host passes NULL).
    #[kernel("bitsandbytes__optimizer32bit.cu", name = "kfunc<float, FILL>", unsafe(extents))]
    pub fn kfunc_fill(a: &mut [f32; n], b: Option<&mut [f32; 0]>, value: f32, n: i64);

    /// `A[i] = i`; `B` and `value` unused.
    #[kernel("bitsandbytes__optimizer32bit.cu", name = "kfunc<float, ARANGE>", unsafe(extents))]
    pub fn kfunc_arange(a: &mut [f32; n], b: Option<&mut [f32; 0]>, value: f32, n: i64);

    /// `A[i] *= B[i]`.
    #[kernel("bitsandbytes__optimizer32bit.cu", name = "kfunc<float, _MUL>", unsafe(extents))]
    pub fn kfunc_mul(a: &mut [f32; n], b: &mut [f32; n], value: f32, n: i64);

    /// bitsandbytes' 32-bit Adam: tiles of 4096 (`TH * NUM_PER_THREAD`) start at
    /// `blockIdx.x * blockDim.x * 4` but advance by `gridDim.x * 4096`, and `n - i` is unsigned:
    /// only blocks of exactly 1024 threads stay within `n` (`__launch_bounds__(1024)` caps it,
    /// `requires` pins it), and `n` rounded up to 4096 must fit an `int`. `unorm` is read only
    /// when `max_unorm > 0`, but always passed (one element).
    #[kernel(
        "bitsandbytes__optimizer32bit.cu",
        name = "kOptimizer32bit2State<float, ADAM>",
        unsafe(extents),
        requires(block.x == 1024, n <= i32::MAX - 4095)
    )]
    pub fn k_optimizer32bit_2state(
        g: &mut [f32; n],
        p: &mut [f32; n],
        state1: &mut [f32; n],
        state2: &mut [f32; n],
        unorm: &mut [f32; 1],
        max_unorm: f32,
        param_norm: f32,
        beta1: f32,
        beta2: f32,
        beta3: f32,
        alpha: f32,
        eps: f32,
        weight_decay: f32,
        step: i32,
        lr: f32,
        gnorm_scale: f32,
        skip_zeros: bool,
        n: i32,
    );

    /// The half instantiation: half gradients and parameters, float states.
    #[kernel(
        "bitsandbytes__optimizer32bit.cu",
        name = "kOptimizer32bit2State<half, ADAM>",
        unsafe(extents),
        requires(block.x == 1024, n <= i32::MAX - 4095)
    )]
    pub fn k_optimizer32bit_2state_f16(
        g: &mut [f16; n],
        p: &mut [f16; n],
        state1: &mut [f32; n],
        state2: &mut [f32; n],
        unorm: &mut [f32; 1],
        max_unorm: f32,
        param_norm: f32,
        beta1: f32,
        beta2: f32,
        beta3: f32,
        alpha: f32,
        eps: f32,
        weight_decay: f32,
        step: i32,
        lr: f32,
        gnorm_scale: f32,
        skip_zeros: bool,
        n: i32,
    );

    /// apex's fused Adam: `int j` steps by all the launch's threads up to a `size_t` bound, so
    /// `tsize` plus one stride must fit an `int`; the 2D grid and block are read as x and y only
    /// (a z extent would run threads twice: pinned to 1). `p_copy` may be NULL.
    #[kernel(
        "apex__fused_adam.cu",
        name = "adam_cuda_kernel<float, float>",
        unsafe(extents),
        requires(tsize + grid.x * grid.y * block.x * block.y <= i32::MAX, grid.z == 1, block.z == 1)
    )]
    pub fn adam_cuda_kernel(
        p: &mut [f32; tsize],
        p_copy: Option<&mut [f32; tsize]>,
        m: &mut [f32; tsize],
        v: &mut [f32; tsize],
        g: &[f32; tsize],
        b1: f32,
        b2: f32,
        eps: f32,
        grad_scale: f32,
        step_size: f32,
        tsize: u64,
        mode: i32,
        decay: f32,
    );
}
use kernels::Kernels;

kgraph::graph!("tests/corpus2/graphs/bnb_apex.toml");

/// The manifest's shapes for `kfunc<float, ARANGE>` and `<float, _MUL>`: (launch, n).
const KFUNC_SHAPES: [(Shape, usize); 3] =
    [(Shape::x(1, 32), 1), (Shape::x(80, 512), 1_000_000), (Shape::x(3, 7), 5000)];

#[test]
#[ignore = "needs a CUDA GPU"]
fn kfunc_fill_writes_the_value_everywhere_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().kfunc_fill;
    let shapes = [
        (Shape::x(1, 32), 1usize, 3.5f32, false),
        (Shape::x(80, 512), 1_000_000, -1.0, false),
        (Shape::x(1, 1024), 5000, 0.0, true),
    ];
    for (s, n, value, some_b) in shapes {
        let mut a = filled(&dev, n, f32::NAN);
        // `Some` of an empty buffer is the declared extent 0 exactly.
        let mut empty = filled(&dev, 0, 0.0f32);
        let b: Option<&mut dyn kgraph::DeviceOut<f32>> = if some_b { Some(&mut empty) } else { None };
        k.launch(dev.stream(), s.cfg(), &mut a, b, value, n as i64).unwrap();
        assert!(download(&dev, &a).iter().all(|v| *v == value), "{s:?} n={n}: not every element is {value}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn kfunc_arange_writes_the_index_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().kfunc_arange;
    for (s, n) in KFUNC_SHAPES {
        let mut a = filled(&dev, n, f32::NAN);
        k.launch(dev.stream(), s.cfg(), &mut a, None, 0.0, n as i64).unwrap();
        // Exact: every index is below 2^24.
        let got = download(&dev, &a);
        assert!(got.iter().enumerate().all(|(i, v)| *v == i as f32), "{s:?} n={n}: A[i] != i");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn kfunc_mul_by_one_keeps_and_by_zero_clears_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().kfunc_mul;
    for (s, n) in KFUNC_SHAPES {
        let host: Vec<f32> = (0..n).map(|i| ((i * 37) % 128) as f32 / 8.0 - 8.0).collect();
        let mut a = upload(&dev, &host);
        let mut ones = filled(&dev, n, 1.0f32);
        k.launch(dev.stream(), s.cfg(), &mut a, &mut ones, 0.0, n as i64).unwrap();
        assert_eq!(bits(&download(&dev, &a)), bits(&host), "{s:?} n={n}: A * 1 != A");
        let mut zeros = filled(&dev, n, 0.0f32);
        k.launch(dev.stream(), s.cfg(), &mut a, &mut zeros, 0.0, n as i64).unwrap();
        assert!(download(&dev, &a).iter().all(|v| *v == 0.0), "{s:?} n={n}: A * 0 != 0");
    }
}

/// No kernel of this file is sized by its grid (kfunc is grid-stride up to `n`), so the refusal
/// shown is of a buffer one element shorter than `n`, before the driver: nothing written.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_buffer_one_element_short_of_n_is_refused() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().kfunc_fill;
    let n = 5000usize;
    let mut a = filled(&dev, n - 1, f32::NAN);
    let r = k.launch(dev.stream(), Shape::x(3, 7).cfg(), &mut a, None, 1.0, n as i64);
    assert_extent_refused(r, kernels::KfuncFill::NAME, "a", n as u64, n - 1);
    assert!(download(&dev, &a).iter().all(|v| v.is_nan()), "a refused launch wrote");
}

/// `tests/corpus2/graphs/bnb_apex.toml` with apex's Adam state (`p` varied, zero moments,
/// gradients of both signs), run eagerly or captured and replayed.
fn run_bnb_apex_graph(dev: &Device, capture: bool) -> BnbApex {
    let mut g = BnbApex::new(dev).unwrap();
    let t = BnbApex::TSIZE;
    g.load_p(&(0..t).map(|i| ((i * 37) % 128) as f32 / 8.0 - 7.9).collect::<Vec<_>>()).unwrap();
    g.load_m(&vec![0.0; t]).unwrap();
    g.load_v(&vec![0.0; t]).unwrap();
    g.upload_g(&(0..t).map(|i| ((i * 11) % 64) as f32 / 16.0 - 2.0).collect::<Vec<_>>()).unwrap();
    if capture {
        g.capture().unwrap();
        g.replay().unwrap();
    } else {
        g.run_eager().unwrap();
    }
    g
}

/// fill, arange and mul in one graph (`B` passed `"null"` to the first two): `r[i] = i * value`
/// exactly; and apex's Adam: `p_copy` equals the updated `p` bit for bit, the first moment has
/// the gradient's sign, the second is not negative. All bit-equal to `run_eager`.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_kfunc_and_adam_graph_matches_eager_and_keeps_the_invariants() {
    let dev = device();
    let outs = |g: &BnbApex| {
        [
            g.download_filled().unwrap(),
            g.download_scaled().unwrap(),
            g.download_p().unwrap(),
            g.download_p_copy().unwrap(),
            g.download_m().unwrap(),
            g.download_v().unwrap(),
        ]
    };
    let graph = run_bnb_apex_graph(&dev, true);
    let value = graph.value();
    let [filled_v, scaled, p, p_copy, m, v] = outs(&graph);
    for (e, g) in outs(&run_bnb_apex_graph(&dev, false)).iter().zip([&filled_v, &scaled, &p, &p_copy, &m, &v]) {
        assert_eq!(bits(g), bits(e), "replay vs run_eager");
    }
    assert!(filled_v.iter().all(|x| *x == value), "fill");
    // value = 2: i * 2 is exact below 2^24.
    assert!(scaled.iter().enumerate().all(|(i, x)| *x == i as f32 * value), "arange * fill");
    assert_eq!(bits(&p_copy), bits(&p), "p_copy == p");
    let g: Vec<f32> = (0..BnbApex::TSIZE).map(|i| ((i * 11) % 64) as f32 / 16.0 - 2.0).collect();
    assert!(m.iter().zip(&g).all(|(m, g)| m * g >= 0.0 && (*g == 0.0) == (*m == 0.0)), "m has the sign of g");
    assert!(v.iter().all(|x| *x >= 0.0), "v >= 0");
}

/// The manifest's shapes for kOptimizer32bit2State (blocks of 1024): (launch, n, step).
const ADAM_SHAPES: [(Shape, usize, i32); 3] =
    [(Shape::x(1, 1024), 1, 1), (Shape::x(25, 1024), 100_000, 3), (Shape::x(2, 1024), 4096, 10)];

/// Adam at a fixed point: g = 0 with zero moments, no weight decay and no update clipping
/// (max_unorm = 0) leaves p bit for bit and both states exactly 0.
#[test]
#[ignore = "needs a CUDA GPU"]
fn bnb_adam_with_zero_gradients_keeps_p_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().k_optimizer32bit_2state;
    for (s, n, step) in ADAM_SHAPES {
        let p0: Vec<f32> = (0..n).map(|i| ((i * 37) % 128) as f32 / 8.0 - 7.9).collect();
        let mut g = filled(&dev, n, 0.0f32);
        let mut p = upload(&dev, &p0);
        let (mut s1, mut s2) = (filled(&dev, n, 0.0f32), filled(&dev, n, 0.0f32));
        let mut unorm = filled(&dev, 1, 0.0f32);
        k.launch(
            dev.stream(),
            s.cfg(),
            &mut g,
            &mut p,
            &mut s1,
            &mut s2,
            &mut unorm,
            0.0,
            1.0,
            0.9,
            0.999,
            0.0,
            0.0,
            1e-8,
            0.0,
            step,
            1e-3,
            1.0,
            false,
            n as i32,
        )
        .unwrap();
        assert_eq!(bits(&download(&dev, &p)), bits(&p0), "{s:?} n={n}: p moved");
        assert!(download(&dev, &s1).iter().chain(&download(&dev, &s2)).all(|v| *v == 0.0), "{s:?}: states");
    }
    let (mut g, mut p) = (filled(&dev, 4096, 0.0f32), filled(&dev, 4096, 1.0f32));
    let (mut s1, mut s2, mut unorm) = (filled(&dev, 4096, 0.0f32), filled(&dev, 4096, 0.0f32), filled(&dev, 1, 0.0f32));
    let r = k.launch(
        dev.stream(),
        Shape::x(8, 512).cfg(),
        &mut g,
        &mut p,
        &mut s1,
        &mut s2,
        &mut unorm,
        0.0,
        1.0,
        0.9,
        0.999,
        0.0,
        0.0,
        1e-8,
        0.0,
        1,
        1e-3,
        1.0,
        false,
        4096,
    );
    assert!(matches!(&r, Err(Error::Launch(LaunchError::Requirement { condition: "block.x == 1024", .. }))), "{r:?}");
}

/// The half instantiation at the same fixed point: p bit for bit (as halves), states 0.
#[test]
#[ignore = "needs a CUDA GPU"]
fn bnb_adam_f16_with_zero_gradients_keeps_p_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().k_optimizer32bit_2state_f16;
    for (s, n, step) in ADAM_SHAPES {
        let p0: Vec<f16> = (0..n).map(|i| f16::from_f32(((i * 37) % 128) as f32 / 8.0 - 7.9)).collect();
        let mut g = filled(&dev, n, f16::ZERO);
        let mut p = upload(&dev, &p0);
        let (mut s1, mut s2) = (filled(&dev, n, 0.0f32), filled(&dev, n, 0.0f32));
        let mut unorm = filled(&dev, 1, 0.0f32);
        k.launch(
            dev.stream(),
            s.cfg(),
            &mut g,
            &mut p,
            &mut s1,
            &mut s2,
            &mut unorm,
            0.0,
            1.0,
            0.9,
            0.999,
            0.0,
            0.0,
            1e-8,
            0.0,
            step,
            1e-3,
            1.0,
            false,
            n as i32,
        )
        .unwrap();
        let got = download(&dev, &p);
        assert!(got.iter().zip(&p0).all(|(a, b)| a.to_bits() == b.to_bits()), "{s:?} n={n}: p moved");
        assert!(download(&dev, &s1).iter().chain(&download(&dev, &s2)).all(|v| *v == 0.0), "{s:?}: states");
    }
}

/// apex's Adam at the same fixed point (g = 0, m = v = 0, decay = 0): p bit for bit, and with
/// `p_copy` the copy equals p exactly; m and v stay 0. A 2D grid of 2D blocks is one shape.
#[test]
#[ignore = "needs a CUDA GPU"]
fn apex_adam_with_zero_gradients_keeps_p_and_copies_it_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().adam_cuda_kernel;
    let shapes = [
        (Shape::x(1, 512), 1usize, 0, false),
        (Shape::x(20, 512), 10_000, 1, true),
        (Shape { grid: (4, 2, 1), block: (16, 16, 1) }, 100_000, 0, false),
    ];
    for (s, n, mode, copy) in shapes {
        let p0: Vec<f32> = (0..n).map(|i| ((i * 37) % 128) as f32 / 8.0 - 7.9).collect();
        let mut p = upload(&dev, &p0);
        let mut p_copy = filled(&dev, n, f32::NAN);
        let (mut m, mut v) = (filled(&dev, n, 0.0f32), filled(&dev, n, 0.0f32));
        let g = filled(&dev, n, 0.0f32);
        let pc: Option<&mut dyn kgraph::DeviceOut<f32>> = if copy { Some(&mut p_copy) } else { None };
        k.launch(
            dev.stream(),
            s.cfg(),
            &mut p,
            pc,
            &mut m,
            &mut v,
            &g,
            0.9,
            0.999,
            1e-8,
            1.0,
            1e-3,
            n as u64,
            mode,
            0.0,
        )
        .unwrap();
        let got = download(&dev, &p);
        assert_eq!(bits(&got), bits(&p0), "{s:?} n={n}: p moved");
        let c = download(&dev, &p_copy);
        assert!(if copy { bits(&c) == bits(&got) } else { c.iter().all(|x| x.is_nan()) }, "{s:?}: p_copy");
        assert!(download(&dev, &m).iter().chain(&download(&dev, &v)).all(|x| *x == 0.0), "{s:?}: m, v");
    }
}
