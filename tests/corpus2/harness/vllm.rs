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

use kgraph::{f16, Device, Error, LaunchError};

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

    /// RMSNorm of token `blockIdx.x`, its row read at `input_stride` (any stride from 0: rows
    /// may overlap, read-only). True under `requires`: a negative stride reads below `input`,
    /// and `int idx += blockDim.x` up to `hidden_size` must not wrap. cub's BlockReduce<float,
    /// 1024> (static shared) serves blocks of up to 1024 threads.
    #[kernel(
        "vllm__layernorm.cu",
        name = "vllm::rms_norm_kernel<float>",
        unsafe(extents),
        max_block = 1024,
        requires(input_stride >= 0, hidden_size <= i32::MAX - block.x)
    )]
    pub fn rms_norm_kernel(
        out: &mut [f32; grid.x * hidden_size],
        input: &[f32; (grid.x - 1) * input_stride + hidden_size],
        input_stride: i64,
        weight: &[f32; hidden_size],
        epsilon: f32,
        num_tokens: i32,
        hidden_size: i32,
    );

    /// `residual += input`, then `input = rms_norm(residual) * weight`, in place per token:
    /// rows of `input` at `input_stride`, which must not overlap (each block writes its row).
    #[kernel(
        "vllm__layernorm.cu",
        name = "vllm::fused_add_rms_norm_kernel<float, 0>",
        unsafe(extents),
        max_block = 1024,
        requires(input_stride >= hidden_size, hidden_size <= i32::MAX - block.x)
    )]
    pub fn fused_add_rms_norm_kernel(
        input: &mut [f32; (grid.x - 1) * input_stride + hidden_size],
        input_stride: i64,
        residual: &mut [f32; grid.x * hidden_size],
        weight: &[f32; hidden_size],
        epsilon: f32,
        num_tokens: i32,
        hidden_size: i32,
    );

    /// The f16 form reads and writes whole 16-byte vectors of 8 halves: the three pointers must
    /// be 16-byte aligned (`align`); rows as the float form.
    #[kernel(
        "vllm__layernorm.cu",
        name = "vllm::fused_add_rms_norm_kernel<__half, 8>",
        unsafe(extents),
        max_block = 1024,
        requires(input_stride >= hidden_size, hidden_size <= i32::MAX - block.x),
        align(input = 16, residual = 16, weight = 16)
    )]
    pub fn fused_add_rms_norm_kernel_f16x8(
        input: &mut [f16; (grid.x - 1) * input_stride + hidden_size],
        input_stride: i64,
        residual: &mut [f16; grid.x * hidden_size],
        weight: &[f16; hidden_size],
        epsilon: f32,
        num_tokens: i32,
        hidden_size: i32,
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
    assert_extent_refused(r, kernels::SiluAndMul::NAME, "out", (s.gx() as u64 + 1) * d as u64, s.gx() * d);
    assert!(download(&dev, &out).iter().all(|v| v.is_nan()), "a refused launch wrote");
}

/// The graph's activation inputs: token rows `[x | y]` of varied signs.
fn graph_x() -> Vec<f32> {
    gated_rows(Vllm::TOKENS, Vllm::D, wobble, |t, i| wobble(i, t))
}

/// The batched kernel's slot counts per batch: 0, past the grid, and between.
fn graph_valid() -> Vec<i32> {
    (0..Vllm::BATCH as i32).map(|b| b * 3 % (Vllm::SLOTS as i32 + 2)).collect()
}

/// `tests/corpus2/graphs/vllm.toml` with its inputs (the batched rows' y halves 0 and their
/// output poisoned with NaN; constant RMSNorm rows with NaN gaps, weights 1), run eagerly or
/// captured and replayed.
fn run_vllm_graph(dev: &Device, capture: bool) -> Vllm {
    let (tokens, d, h16) = (Vllm::TOKENS, Vllm::D, Vllm::H16);
    let mut g = Vllm::new(dev).unwrap();
    g.upload_x(&graph_x()).unwrap();
    g.upload_xb(&gated_rows(Vllm::BATCH * Vllm::SLOTS, d, wobble, |_, _| 0.0)).unwrap();
    g.upload_valid(&graph_valid()).unwrap();
    g.load_batched(&vec![f32::NAN; Vllm::BATCHED_LEN]).unwrap();
    g.upload_xs(&strided_rows(tokens, d, Vllm::STRIDE, f32::NAN, row_constant)).unwrap();
    g.upload_w(&vec![1.0; d]).unwrap();
    g.load_fin(&strided_rows(tokens, d, Vllm::STRIDE, f32::NAN, |_| 1.0)).unwrap();
    g.load_res(&vec![1.0; tokens * d]).unwrap();
    let one = f16::from_f32(1.0);
    g.load_hin(&strided_rows(tokens, h16, Vllm::STRIDE16, f16::NAN, |_| one)).unwrap();
    g.load_hres(&vec![one; tokens * h16]).unwrap();
    g.upload_hw(&vec![one; h16]).unwrap();
    if capture {
        g.capture().unwrap();
        g.replay().unwrap();
    } else {
        g.run_eager().unwrap();
    }
    g
}

/// The six activations in one graph: the replay is bit-equal to `run_eager`, and the outputs
/// keep the kernels' invariants (signs of silu, the fatrelu gate, the GELUs between 0 and their
/// input, the batched kernel's untouched slots still hold the poison the state was loaded with).
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_activation_graph_matches_eager_and_keeps_the_invariants() {
    let dev = device();
    let (tokens, d, batch, slots) = (Vllm::TOKENS, Vllm::D, Vllm::BATCH, Vllm::SLOTS);
    let (x, valid) = (graph_x(), graph_valid());
    let outs = |g: &Vllm| {
        [
            g.download_silu().unwrap(),
            g.download_tanh_mul().unwrap(),
            g.download_fat().unwrap(),
            g.download_gnew().unwrap(),
            g.download_quick().unwrap(),
            g.download_batched().unwrap(),
        ]
    };
    let graph = run_vllm_graph(&dev, true);
    let param = graph.param();
    let [silu, tanh_mul, fat, gnew, quick, batched] = outs(&graph);
    for (i, (e, g)) in
        outs(&run_vllm_graph(&dev, false)).iter().zip([&silu, &tanh_mul, &fat, &gnew, &quick, &batched]).enumerate()
    {
        assert_eq!(bits(g), bits(e), "output {i}: replay vs run_eager");
    }
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

/// The three RMSNorms in the same graph: bit-equal to `run_eager`; constant rows normalise to
/// their sign, the fused ones double the residual exactly and leave the input's stride gaps.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_norm_nodes_of_the_graph_match_eager_and_keep_the_invariants() {
    let dev = device();
    let (tokens, d, h16) = (Vllm::TOKENS, Vllm::D, Vllm::H16);
    let floats = |g: &Vllm| [g.download_normed().unwrap(), g.download_fin().unwrap(), g.download_res().unwrap()];
    let halves = |g: &Vllm| -> [Vec<f16>; 2] { [g.download_hin().unwrap(), g.download_hres().unwrap()] };
    let half_bits = |v: &[f16]| v.iter().map(|h| h.to_bits()).collect::<Vec<_>>();
    let (graph, eager) = (run_vllm_graph(&dev, true), run_vllm_graph(&dev, false));
    let [normed, fin, res] = floats(&graph);
    for (e, g) in floats(&eager).iter().zip([&normed, &fin, &res]) {
        assert_eq!(bits(g), bits(e), "replay vs run_eager");
    }
    let [hin, hres] = halves(&graph);
    for (e, g) in halves(&eager).iter().zip([&hin, &hres]) {
        assert_eq!(half_bits(g), half_bits(e), "replay vs run_eager (f16)");
    }
    for t in 0..tokens {
        let c = row_constant(t);
        let want = c / (c * c + 1e-6).sqrt();
        assert!(normed[t * d..(t + 1) * d].iter().all(|v| (v - want).abs() <= 1e-5 * want.abs()), "row {t}");
    }
    assert!(res.iter().all(|v| *v == 2.0) && hres.iter().all(|v| v.to_f32() == 2.0), "residual + input");
    let in_row = |e: usize, stride: usize, hidden: usize| e % stride < hidden;
    for (e, v) in fin.iter().enumerate() {
        assert!(if in_row(e, Vllm::STRIDE, d) { (v - 1.0).abs() <= 1e-5 } else { v.is_nan() }, "fin[{e}] = {v}");
    }
    for (e, v) in hin.iter().enumerate() {
        let ok = if in_row(e, Vllm::STRIDE16, h16) { (v.to_f32() - 1.0).abs() <= 1e-3 } else { v.is_nan() };
        assert!(ok, "hin[{e}] = {v}");
    }
}

/// The manifest's RMSNorm shapes: (launch, hidden_size, input_stride).
const NORM_SHAPES: [(Shape, usize, usize); 3] =
    [(Shape::x(1, 32), 1, 1), (Shape::x(13, 1024), 4096, 4096), (Shape::x(3000, 256), 100, 160)];

/// The strided input of `rows` rows: row `t` holds `value(t)` in its first `hidden` elements,
/// the gaps between rows NaN (a kernel reading them would spread NaN into its output).
fn strided_rows<T: Copy>(rows: usize, hidden: usize, stride: usize, gap: T, value: impl Fn(usize) -> T) -> Vec<T> {
    let mut v = vec![gap; (rows - 1) * stride + hidden];
    for t in 0..rows {
        v[t * stride..t * stride + hidden].fill(value(t));
    }
    v
}

/// A nonzero constant per row, of both signs.
fn row_constant(t: usize) -> f32 {
    let c = (t % 7 + 1) as f32 * 0.375;
    if t % 2 == 0 {
        c
    } else {
        -c
    }
}

/// Weight 1 and constant rows c: every output is c / sqrt(c^2 + eps), that is sign(c) to within
/// eps / (2 c^2); the NaN gaps of the strided input are never read.
#[test]
#[ignore = "needs a CUDA GPU"]
fn rms_norm_of_constant_rows_is_their_sign_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().rms_norm_kernel;
    let eps = 1e-6f32;
    for (s, hidden, stride) in NORM_SHAPES {
        let rows = s.gx();
        let input = upload(&dev, &strided_rows(rows, hidden, stride, f32::NAN, row_constant));
        let weight = filled(&dev, hidden, 1.0f32);
        let mut out = filled(&dev, rows * hidden, f32::NAN);
        let (h, st) = (hidden as i32, stride as i64);
        k.launch(dev.stream(), s.cfg(), &mut out, &input, st, &weight, eps, rows as i32, h).unwrap();
        let got = download(&dev, &out);
        for t in 0..rows {
            let c = row_constant(t);
            let want = c / (c * c + eps).sqrt();
            let row = &got[t * hidden..(t + 1) * hidden];
            assert!(row.iter().all(|v| (v - want).abs() <= 1e-5 * want.abs()), "{s:?} row {t}: {:?}", &row[..1]);
        }
    }
}

/// A negative stride reads below `input`, although the extent `(grid.x - 1) * input_stride +
/// hidden_size` is then small and accepted (4 rows at stride -1: 61 elements): the declaration's
/// `requires` refuses it before the driver, naming the condition and the value.
#[test]
#[ignore = "needs a CUDA GPU"]
fn rms_norm_refuses_a_negative_stride_and_a_grid_past_the_rows() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().rms_norm_kernel;
    let (s, hidden) = (Shape::x(4, 64), 64usize);
    let input = filled(&dev, 3 * hidden + hidden, 1.0f32);
    let short = filled(&dev, hidden - 3, 1.0f32);
    let weight = filled(&dev, hidden, 1.0f32);
    let mut out = filled(&dev, 4 * hidden, f32::NAN);
    let r = k.launch(dev.stream(), s.cfg(), &mut out, &short, -1, &weight, 1e-6, 4, hidden as i32);
    match r {
        Err(Error::Launch(LaunchError::Requirement { kernel, condition, values })) => {
            assert_eq!(kernel, kernels::RmsNormKernel::NAME);
            assert_eq!(condition, "input_stride >= 0");
            assert_eq!(values, [("input_stride", -1i128)]);
        }
        other => panic!("expected LaunchError::Requirement, got {other:?}"),
    }
    let r = k.launch(dev.stream(), s.one_more_block().cfg(), &mut out, &input, hidden as i64, &weight, 1e-6, 5, 64);
    assert_extent_refused(r, kernels::RmsNormKernel::NAME, "out", 5 * hidden as u64, 4 * hidden);
    assert!(download(&dev, &out).iter().all(|v| v.is_nan()), "a refused launch wrote");
}

/// input = residual = weight = 1: residual becomes 2 exactly, each input row 2 / sqrt(4 + eps)
/// (1 within 1e-5), the gaps between input rows keep their NaN.
#[test]
#[ignore = "needs a CUDA GPU"]
fn fused_add_rms_norm_doubles_the_residual_and_normalises_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().fused_add_rms_norm_kernel;
    let shapes = [(Shape::x(1, 32), 1usize, 1usize), (Shape::x(13, 1024), 4096, 4096), (Shape::x(300, 256), 100, 128)];
    for (s, hidden, stride) in shapes {
        let rows = s.gx();
        let host = strided_rows(rows, hidden, stride, f32::NAN, |_| 1.0f32);
        let mut input = upload(&dev, &host);
        let mut residual = filled(&dev, rows * hidden, 1.0f32);
        let weight = filled(&dev, hidden, 1.0f32);
        let (h, st) = (hidden as i32, stride as i64);
        k.launch(dev.stream(), s.cfg(), &mut input, st, &mut residual, &weight, 1e-6, rows as i32, h).unwrap();
        assert!(download(&dev, &residual).iter().all(|v| *v == 2.0), "{s:?}: residual != 2");
        for (e, (v, before)) in download(&dev, &input).iter().zip(&host).enumerate() {
            let ok = if before.is_nan() { v.is_nan() } else { (v - 1.0).abs() <= 1e-5 };
            assert!(ok, "{s:?}: input[{e}] = {v}");
        }
    }
}

/// The f16 form on whole (256-byte aligned) allocations, as the float form; a view one half
/// into its allocation is refused (`align(input = 16)`).
#[test]
#[ignore = "needs a CUDA GPU"]
fn fused_add_rms_norm_f16x8_at_three_shapes_and_refuses_a_misaligned_view() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().fused_add_rms_norm_kernel_f16x8;
    let (one, two, nan) = (f16::from_f32(1.0), f16::from_f32(2.0), f16::NAN);
    let shapes = [(Shape::x(1, 32), 8usize, 8usize), (Shape::x(13, 1024), 4096, 4096), (Shape::x(300, 256), 96, 128)];
    for (s, hidden, stride) in shapes {
        let rows = s.gx();
        let host = strided_rows(rows, hidden, stride, nan, |_| one);
        let mut input = upload(&dev, &host);
        let mut residual = filled(&dev, rows * hidden, one);
        let weight = filled(&dev, hidden, one);
        let (h, st) = (hidden as i32, stride as i64);
        k.launch(dev.stream(), s.cfg(), &mut input, st, &mut residual, &weight, 1e-6, rows as i32, h).unwrap();
        assert!(download(&dev, &residual).iter().all(|v| *v == two), "{s:?}: residual != 2");
        for (e, (v, before)) in download(&dev, &input).iter().zip(&host).enumerate() {
            let ok = if before.is_nan() { v.is_nan() } else { (v.to_f32() - 1.0).abs() <= 1e-3 };
            assert!(ok, "{s:?}: input[{e}] = {v}");
        }
    }
    let (s, hidden) = (Shape::x(2, 32), 8usize);
    let mut whole = filled(&dev, 2 * hidden + 1, one);
    let mut input = whole.slice_mut(1..).unwrap();
    let mut residual = filled(&dev, 2 * hidden, one);
    let weight = filled(&dev, hidden, one);
    let r = k.launch(dev.stream(), s.cfg(), &mut input, hidden as i64, &mut residual, &weight, 1e-6, 2, hidden as i32);
    assert!(
        matches!(r, Err(Error::Launch(LaunchError::Misaligned { param: "input", align: 16, .. }))),
        "expected LaunchError::Misaligned for `input`, got {r:?}"
    );
}
