//! vllm-project/vllm activation kernels (`vllm__activation.cu`): the fused act-and-mul family and
//! the element-wise GELUs, one block per token (`grid.x` = tokens, any block), bound by their C++
//! names with a function template argument (`vllm::act_and_mul_kernel<float,
//! vllm::silu_kernel<float>, true>`). Each is launched at the manifest's three shapes with buffers
//! of exactly the declared extents and checked by an invariant of its output (analytic values on
//! analytic inputs: silu(0) = gelu(0) = 0, the gate's threshold), never by a CPU re-implementation;
//! `tests/corpus2/graphs/vllm.toml` runs all six in one graph, bit-equal to `run_eager`.
//! RMSNorm (`vllm__layernorm.cu`) waits for launch-time scalar conditions (a negative
//! `input_stride` reads below the buffer) and the rotary kernels index by positions read from
//! memory: MANIFEST.toml says why; neither is declared here.

use super::common::{assert_extent_refused, bits, device, download, filled, upload, Shape};

#[kgraph::kernels]
pub(crate) mod kernels {
    /// `out[t][i] = silu(x) * y` for the token's row `[x (d) | y (d)]` of `input`.
    #[kernel(
        "vllm__activation.cu",
        name = "vllm::act_and_mul_kernel<float, vllm::silu_kernel<float>, true>",
        unsafe(extents)
    )]
    pub fn silu_and_mul(out: &mut [f32; grid.x * d], input: &[f32; grid.x * 2 * d], d: i32);

    /// `out[t][i] = gelu_tanh(x) * y`.
    #[kernel(
        "vllm__activation.cu",
        name = "vllm::act_and_mul_kernel<float, vllm::gelu_tanh_kernel<float>, true>",
        unsafe(extents)
    )]
    pub fn gelu_tanh_and_mul(out: &mut [f32; grid.x * d], input: &[f32; grid.x * 2 * d], d: i32);

    /// `out[t][i] = (x > param ? x : 0) * y`.
    #[kernel(
        "vllm__activation.cu",
        name = "vllm::act_and_mul_kernel_with_param<float, vllm::fatrelu_kernel<float>>",
        unsafe(extents)
    )]
    pub fn fatrelu_and_mul(out: &mut [f32; grid.x * d], input: &[f32; grid.x * 2 * d], d: i32, param: f32);

    /// `out = gelu_new(input)`, element-wise over `grid.x` rows of `d`.
    #[kernel(
        "vllm__activation.cu",
        name = "vllm::activation_kernel<float, vllm::gelu_new_kernel<float>>",
        unsafe(extents)
    )]
    pub fn gelu_new(out: &mut [f32; grid.x * d], input: &[f32; grid.x * d], d: i32);

    /// `out = x * sigmoid(1.702 x)`.
    #[kernel(
        "vllm__activation.cu",
        name = "vllm::activation_kernel<float, vllm::gelu_quick_kernel<float>>",
        unsafe(extents)
    )]
    pub fn gelu_quick(out: &mut [f32; grid.x * d], input: &[f32; grid.x * d], d: i32);

    /// silu-and-mul over `grid.x` batches of `grid.y` token slots; batch `b` computes its first
    /// `valid_tokens_array[b]` slots (the value only filters, it never indexes).
    #[kernel(
        "vllm__activation.cu",
        name = "vllm::batched_act_and_mul_kernel<float, vllm::silu_kernel<float>, true>",
        unsafe(extents)
    )]
    pub fn batched_silu_and_mul(
        out: &mut [f32; grid.x * grid.y * d],
        input: &[f32; grid.x * grid.y * 2 * d],
        valid_tokens_array: &[i32; grid.x],
        d: i32,
    );
}
use kernels::Kernels;

kgraph::graph!("tests/corpus2/graphs/vllm.toml");

/// The manifest's shapes for the one-block-per-token kernels: (launch, d).
const TOKEN_SHAPES: [(Shape, usize); 3] = [(Shape::x(1, 32), 1), (Shape::x(7, 1024), 4096), (Shape::x(4096, 128), 11)];

/// `tokens` rows of `[x half (d) | y half (d)]`, each half from its own function of (token, i).
fn gated_rows(tokens: usize, d: usize, x: impl Fn(usize, usize) -> f32, y: impl Fn(usize, usize) -> f32) -> Vec<f32> {
    let mut v = Vec::with_capacity(tokens * 2 * d);
    for t in 0..tokens {
        v.extend((0..d).map(|i| x(t, i)));
        v.extend((0..d).map(|i| y(t, i)));
    }
    v
}

/// A value in [-2, 2) that differs per (token, i), without a generator.
fn wobble(t: usize, i: usize) -> f32 {
    ((t * 31 + i * 17) % 64) as f32 / 16.0 - 2.0
}

/// Asserts every element of `out` is exactly 0 (so every element was written: the poison is NaN).
fn assert_all_zero(out: &[f32], what: &str) {
    if let Some((i, v)) = out.iter().enumerate().find(|(_, v)| **v != 0.0) {
        panic!("{what}: out[{i}] = {v}, want exactly 0 everywhere");
    }
}

/// The act-and-mul kernels with one half of the input 0: the product is exactly 0 at every
/// element of `out`, so every element was written, and none outside (the extent is the buffer).
#[test]
#[ignore = "needs a CUDA GPU"]
fn act_and_mul_with_a_zero_half_gives_zero_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap();
    for (s, d) in TOKEN_SHAPES {
        let what = format!("{s:?} d={d}");
        // silu(x) * 0 == 0 for finite x.
        let input = upload(&dev, &gated_rows(s.gx(), d, wobble, |_, _| 0.0));
        let mut out = filled(&dev, s.gx() * d, f32::NAN);
        k.silu_and_mul.launch(dev.stream(), s.cfg(), &mut out, &input, d as i32).unwrap();
        assert_all_zero(&download(&dev, &out), &format!("silu_and_mul {what}"));
        // gelu_tanh(0) == 0, times any finite y.
        let input = upload(&dev, &gated_rows(s.gx(), d, |_, _| 0.0, wobble));
        let mut out = filled(&dev, s.gx() * d, f32::NAN);
        k.gelu_tanh_and_mul.launch(dev.stream(), s.cfg(), &mut out, &input, d as i32).unwrap();
        assert_all_zero(&download(&dev, &out), &format!("gelu_tanh_and_mul {what}"));
    }
}

/// fatrelu's gate: x = 0.25, y = 3 gives exactly 0 below the threshold and 0.75 above it.
#[test]
#[ignore = "needs a CUDA GPU"]
fn fatrelu_and_mul_gates_at_its_threshold_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().fatrelu_and_mul;
    for ((s, d), param) in TOKEN_SHAPES.into_iter().zip([0.5f32, 0.0, 2.0]) {
        let input = upload(&dev, &gated_rows(s.gx(), d, |_, _| 0.25, |_, _| 3.0));
        let mut out = filled(&dev, s.gx() * d, f32::NAN);
        k.launch(dev.stream(), s.cfg(), &mut out, &input, d as i32, param).unwrap();
        let want = if 0.25 > param { 0.75 } else { 0.0 };
        let got = download(&dev, &out);
        assert!(got.iter().all(|v| *v == want), "{s:?} d={d} param={param}: want {want} everywhere");
    }
}

/// gelu_new: exactly 0 at 0, within 1e-3 of x at x = 10 (tanh saturates); alternate tokens hold
/// each value.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gelu_new_fixes_zero_and_passes_large_inputs_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().gelu_new;
    for (s, d) in TOKEN_SHAPES {
        let host: Vec<f32> = (0..s.gx() * d).map(|e| if (e / d) % 2 == 0 { 0.0 } else { 10.0 }).collect();
        let input = upload(&dev, &host);
        let mut out = filled(&dev, host.len(), f32::NAN);
        k.launch(dev.stream(), s.cfg(), &mut out, &input, d as i32).unwrap();
        for (e, (o, x)) in download(&dev, &out).iter().zip(&host).enumerate() {
            let ok = if *x == 0.0 { *o == 0.0 } else { (o - x).abs() <= 1e-3 };
            assert!(ok, "{s:?} d={d}: gelu_new({x}) = {o} at {e}");
        }
    }
}

/// gelu_quick: exactly 0 at 0, and `0 <= out <= x` for x >= 0 (x times a sigmoid).
#[test]
#[ignore = "needs a CUDA GPU"]
fn gelu_quick_fixes_zero_and_stays_below_positive_inputs_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().gelu_quick;
    for (s, d) in TOKEN_SHAPES {
        let host: Vec<f32> = (0..s.gx() * d).map(|e| if e % 3 == 0 { 0.0 } else { wobble(e / d, e % d) }).collect();
        let input = upload(&dev, &host);
        let mut out = filled(&dev, host.len(), f32::NAN);
        k.launch(dev.stream(), s.cfg(), &mut out, &input, d as i32).unwrap();
        for (e, (o, x)) in download(&dev, &out).iter().zip(&host).enumerate() {
            let ok = if *x == 0.0 {
                *o == 0.0
            } else if *x > 0.0 {
                (0.0..=*x).contains(o)
            } else {
                (*x..=0.0).contains(o)
            };
            assert!(ok, "{s:?} d={d}: gelu_quick({x}) = {o} at {e}");
        }
    }
}

/// The batched kernel writes exactly the valid token slots of each batch: 0 there (y halves are
/// 0), the NaN poison everywhere else.
#[test]
#[ignore = "needs a CUDA GPU"]
fn batched_silu_and_mul_writes_only_valid_tokens_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().batched_silu_and_mul;
    let shapes: [(Shape, usize, Vec<i32>); 3] = [
        (Shape::x(1, 32), 16, vec![1]),
        (Shape { grid: (4, 8, 1), block: (256, 1, 1) }, 128, vec![0, 3, 8, 9]),
        (Shape { grid: (16, 64, 1), block: (64, 1, 1) }, 7, (0..16).map(|e| e % 65).collect()),
    ];
    for (s, d, valid) in shapes {
        let (batch, slots) = (s.grid.0 as usize, s.grid.1 as usize);
        let input = upload(&dev, &gated_rows(batch * slots, d, wobble, |_, _| 0.0));
        let valid_d = upload(&dev, &valid);
        let mut out = filled(&dev, batch * slots * d, f32::NAN);
        k.launch(dev.stream(), s.cfg(), &mut out, &input, &valid_d, d as i32).unwrap();
        let got = download(&dev, &out);
        for b in 0..batch {
            for t in 0..slots {
                let row = &got[(b * slots + t) * d..(b * slots + t + 1) * d];
                let written = t < (valid[b] as usize).min(slots);
                let ok = row.iter().all(|v| if written { *v == 0.0 } else { v.is_nan() });
                assert!(ok, "{s:?} d={d}: batch {b} slot {t} (valid {}): {row:?}", valid[b]);
            }
        }
    }
}

/// One block more than the buffers have rows: refused before the driver, nothing written.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_grid_one_token_larger_than_the_buffers_is_refused() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().silu_and_mul;
    let (s, d) = (Shape::x(7, 128), 33usize);
    let input = upload(&dev, &gated_rows(s.gx(), d, wobble, wobble));
    let mut out = filled(&dev, s.gx() * d, f32::NAN);
    let r = k.launch(dev.stream(), s.one_more_block().cfg(), &mut out, &input, d as i32);
    assert_extent_refused(r, "silu_and_mul", "out", (s.gx() as u64 + 1) * d as u64, s.gx() * d);
    assert!(download(&dev, &out).iter().all(|v| v.is_nan()), "a refused launch wrote");
}

/// All six in one graph: the replay is bit-equal to `run_eager`, and the outputs keep the
/// kernels' invariants (signs of silu, the fatrelu gate, the GELUs between 0 and their input,
/// the batched kernel's untouched slots still hold the poison the state was loaded with).
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_activation_graph_matches_eager_and_keeps_the_invariants() {
    let dev = device();
    let (tokens, d, batch, slots) = (Vllm::TOKENS, Vllm::D, Vllm::BATCH, Vllm::SLOTS);
    let x = gated_rows(tokens, d, wobble, |t, i| wobble(i, t));
    let xb = gated_rows(batch * slots, d, wobble, |_, _| 0.0);
    let valid: Vec<i32> = (0..batch as i32).map(|b| b * 3 % (slots as i32 + 2)).collect();
    let run = |capture: bool| {
        let mut g = Vllm::new(&dev).unwrap();
        g.upload_x(&x).unwrap();
        g.upload_xb(&xb).unwrap();
        g.upload_valid(&valid).unwrap();
        g.load_batched(&vec![f32::NAN; Vllm::BATCHED_LEN]).unwrap();
        if capture {
            g.capture().unwrap();
            g.replay().unwrap();
        } else {
            g.run_eager().unwrap();
        }
        let outs = [
            g.download_silu().unwrap(),
            g.download_tanh_mul().unwrap(),
            g.download_fat().unwrap(),
            g.download_gnew().unwrap(),
            g.download_quick().unwrap(),
            g.download_batched().unwrap(),
        ];
        (outs, g.param())
    };
    let (eager, _) = run(false);
    let (graph, param) = run(true);
    for (i, (e, g)) in eager.iter().zip(&graph).enumerate() {
        assert_eq!(bits(g), bits(e), "output {i}: replay vs run_eager");
    }
    let [silu, tanh_mul, fat, gnew, quick, batched] = graph;
    // GELU-like f(v) = v * (a factor in [0, 1]) lies between 0 and v.
    let between = |f: f32, v: f32| if v >= 0.0 { (0.0..=v).contains(&f) } else { (v..=0.0).contains(&f) };
    for t in 0..tokens {
        for i in 0..d {
            let (xv, yv, e) = (x[t * 2 * d + i], x[t * 2 * d + d + i], t * d + i);
            assert!(silu[e] * xv * yv >= 0.0, "silu(x) * y has the sign of x * y at {e}");
            if xv <= param {
                assert_eq!(fat[e], 0.0, "fatrelu below the threshold at {e}");
            }
            assert!(between(gnew[e], tanh_mul[e]), "gelu_new({}) = {} at {e}", tanh_mul[e], gnew[e]);
            assert!(between(quick[e], silu[e]), "gelu_quick({}) = {} at {e}", silu[e], quick[e]);
        }
    }
    for b in 0..batch {
        for t in 0..slots {
            let row = &batched[(b * slots + t) * d..(b * slots + t + 1) * d];
            let written = t < (valid[b] as usize).min(slots);
            assert!(row.iter().all(|v| if written { *v == 0.0 } else { v.is_nan() }), "batch {b} slot {t}");
        }
    }
}
