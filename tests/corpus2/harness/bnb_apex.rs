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
    assert_extent_refused(r, "kfunc_fill", "a", n as u64, n - 1);
    assert!(download(&dev, &a).iter().all(|v| v.is_nan()), "a refused launch wrote");
}

/// fill, arange and mul in one graph (`B` passed `"null"` to the first two): `r[i] = i * value`
/// exactly, bit-equal to `run_eager`.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_kfunc_graph_matches_eager_and_scales_the_index() {
    let dev = device();
    let run = |capture: bool| {
        let mut g = BnbApex::new(&dev).unwrap();
        if capture {
            g.capture().unwrap();
            g.replay().unwrap();
        } else {
            g.run_eager().unwrap();
        }
        (g.download_filled().unwrap(), g.download_scaled().unwrap(), g.value())
    };
    let (e_filled, e_scaled, _) = run(false);
    let (filled_v, scaled, value) = run(true);
    assert_eq!(bits(&filled_v), bits(&e_filled), "replay vs run_eager (fill)");
    assert_eq!(bits(&scaled), bits(&e_scaled), "replay vs run_eager (arange * fill)");
    assert!(filled_v.iter().all(|v| *v == value), "fill");
    // value = 2: i * 2 is exact below 2^24.
    assert!(scaled.iter().enumerate().all(|(i, v)| *v == i as f32 * value), "arange * fill");
}
