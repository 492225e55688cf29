//! GEMM nodes (cuBLAS) in graph specs, on analytic inputs whose products have closed forms:
//! identities (C = A * I = A), permutation matrices (rows or columns of A moved), transposes,
//! rank-one products u v^T, strided batches, alpha/beta accumulation, in every dtype (f32 IEEE
//! and TF32, f16, bf16 with f32 accumulation). Tolerances, where not exact, are stated at each
//! assertion. Every kind of built graph replays bit for bit what `run_eager` computes.
//!
//! Specs: `tests/graphs/test_gemm.toml` (f32 shapes), `test_gemm_batched.toml`,
//! `test_gemm_types.toml`.

use kgraph::{bf16, f16};

use super::common::{device, random};

kgraph::graph!("tests/graphs/test_gemm.toml");
kgraph::graph!("tests/graphs/test_gemm_batched.toml");
kgraph::graph!("tests/graphs/test_gemm_types.toml");
// Every node in one `[[while]] repeat = 3` loop: GEMM child graphs inside a conditional body.
kgraph::graph!("tests/graphs/test_gemm.toml", name = TestGemmLoop, repeat = 3);

/// The `n x n` identity, row-major.
fn identity(n: usize) -> Vec<f32> {
    (0..n * n).map(|i| if i / n == i % n { 1.0 } else { 0.0 }).collect()
}

/// The permutation `i -> (p * i + q) % n` (`p` coprime to `n`).
fn sigma(n: usize, p: usize, q: usize) -> impl Fn(usize) -> usize {
    move |i| (p * i + q) % n
}

/// The `n x n` matrix with a 1 at `(i, s(i))` for every row `i`.
fn permutation(n: usize, s: &dyn Fn(usize) -> usize) -> Vec<f32> {
    let mut m = vec![0.0; n * n];
    for i in 0..n {
        m[i * n + s(i)] = 1.0;
    }
    m
}

/// Small integers in [-8, 8]: exact in f32, TF32, f16 and bf16, and so are their small sums.
fn integers(n: usize, seed: u64) -> Vec<f32> {
    random(n, seed).into_iter().map(|v| (v * 4.0).round()).collect()
}

/// `rows x cols` row-major, transposed (`cols x rows`).
fn transpose(x: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    (0..rows * cols).map(|i| x[(i % rows) * cols + i / rows]).collect()
}

fn bits(x: &[f32]) -> Vec<u32> {
    x.iter().map(|v| v.to_bits()).collect()
}

/// A `TestGemm` with `a` (and its transpose), the identity, the two permutations and `u`, `v`.
fn test_gemm(dev: &kgraph::Device, a: &[f32], eye: &[f32], u: &[f32], v: &[f32]) -> TestGemm {
    let (m, k) = (TestGemm::M, TestGemm::K);
    let mut g = TestGemm::new(dev).unwrap_or_else(|e| panic!("{e}"));
    g.upload_a(a).unwrap();
    g.upload_at(&transpose(a, m, k)).unwrap();
    g.load_eye(eye).unwrap();
    g.load_perm_m(&permutation(m, &sigma(m, 5, 7))).unwrap();
    g.load_perm_k(&permutation(k, &sigma(k, 7, 3))).unwrap();
    g.upload_u(u).unwrap();
    g.upload_v(v).unwrap();
    g
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn identity_permutation_transpose_and_rank_one_products_are_exact() {
    let dev = device();
    let (m, n, k) = (TestGemm::M, TestGemm::N, TestGemm::K);
    let a = random(m * k, 71);
    let (u, v) = (integers(m, 72), integers(n, 73));
    let mut g = test_gemm(&dev, &a, &identity(k), &u, &v);
    g.run_eager().unwrap();
    // Tolerance 0 throughout: each output element is one input times 1.0 plus exact zeros
    // (IEEE f32), or a product of small integers.
    assert_eq!(g.download_ident().unwrap(), a, "A * I = A");
    assert_eq!(g.download_doubled().unwrap(), a.iter().map(|x| 2.0 * x).collect::<Vec<_>>(), "the kernel after");
    let (s, t) = (sigma(m, 5, 7), sigma(k, 7, 3));
    let rows = g.download_rows().unwrap();
    let cols = g.download_cols().unwrap();
    for i in 0..m {
        for j in 0..k {
            assert_eq!(rows[i * k + j], a[s(i) * k + j], "(P A)[{i}][{j}] = A[s(i)][{j}]");
            assert_eq!(cols[i * k + j], a[i * k + t(j)], "(A Q^T)[{i}][{j}] = A[{i}][t(j)] (trans_b)");
        }
    }
    assert_eq!(g.download_transposed().unwrap(), a, "(A^T stored)^T * I = A (trans_a)");
    let outer = g.download_outer().unwrap();
    for i in 0..m {
        for j in 0..n {
            assert_eq!(outer[i * n + j], u[i] * v[j], "u v^T at ({i}, {j})");
        }
    }
    let padded = g.download_padded().unwrap();
    let ldc = k + 8;
    for i in 0..m {
        assert_eq!(&padded[i * ldc..i * ldc + k], &a[i * k..(i + 1) * k], "row {i} at ldc = k + 8");
        if i + 1 < m {
            assert!(padded[i * ldc + k..(i + 1) * ldc].iter().all(|&x| x == 0.0), "padding of row {i} untouched");
        }
    }
    assert_eq!(g.download_acc().unwrap(), a.iter().map(|x| 2.0 * x).collect::<Vec<_>>(), "2 A I + 1 * 0");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_built_graph_replays_run_eager_bit_for_bit() {
    let dev = device();
    let (m, n, k) = (TestGemm::M, TestGemm::N, TestGemm::K);
    // A dense random B instead of the identity: real sums of rounded products.
    let (a, eye, u, v) = (random(m * k, 81), random(k * k, 82), random(m, 83), random(n, 84));
    let outputs = |g: &TestGemm| {
        let mut all = Vec::new();
        for x in [
            g.download_ident().unwrap(),
            g.download_doubled().unwrap(),
            g.download_rows().unwrap(),
            g.download_cols().unwrap(),
            g.download_transposed().unwrap(),
            g.download_outer().unwrap(),
            g.download_padded().unwrap(),
            g.download_acc().unwrap(),
        ] {
            all.extend(bits(&x));
        }
        all
    };
    let mut eager = test_gemm(&dev, &a, &eye, &u, &v);
    eager.run_eager().unwrap();
    eager.run_eager().unwrap();
    let want = outputs(&eager);
    for kind in ["capture", "capture_serialized", "capture_streamed"] {
        let mut g = test_gemm(&dev, &a, &eye, &u, &v);
        match kind {
            "capture" => g.capture().unwrap(),
            "capture_serialized" => g.capture_serialized().unwrap(),
            _ => g.capture_streamed().unwrap(),
        }
        g.replay().unwrap();
        g.replay().unwrap();
        assert!(outputs(&g) == want, "{kind}: two replays differ from two eager runs");
    }
    // The GEMM nodes are independent of each other: parallel branches of the built graph.
    let ident = TestGemm::NODES.iter().position(|n| *n == "ident").unwrap();
    let rows = TestGemm::NODES.iter().position(|n| *n == "permute_rows").unwrap();
    assert!(!TestGemm::EDGES.contains(&(ident, rows)));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn beta_accumulates_and_scalar_and_buffer_changes_reach_the_captured_gemms() {
    let dev = device();
    let (m, n, k) = (TestGemm::M, TestGemm::N, TestGemm::K);
    // Small integers, so every sum is exact (tolerance 0).
    let (a, u, v) = (integers(m * k, 91), integers(m, 92), integers(n, 93));
    let times = |c: f32| a.iter().map(|x| c * x).collect::<Vec<_>>();
    let mut g = test_gemm(&dev, &a, &identity(k), &u, &v);
    g.capture().unwrap();
    for _ in 0..3 {
        g.replay().unwrap();
    }
    assert_eq!(g.download_acc().unwrap(), times(6.0), "beta = 1: acc += 2 A each replay");
    g.set_beta(0.0).unwrap();
    g.replay().unwrap();
    assert_eq!(g.download_acc().unwrap(), times(2.0), "beta = 0 (set in the captured graph): acc = 2 A");
    g.set_beta(0.5).unwrap();
    g.replay().unwrap();
    assert_eq!(g.download_acc().unwrap(), times(3.0), "beta = 0.5: acc = 2 A + A");
    g.set_gain(3.0).unwrap();
    g.replay().unwrap();
    let outer = g.download_outer().unwrap();
    assert!((0..m * n).all(|i| outer[i] == 3.0 * u[i / n] * v[i % n]), "alpha = gain = 3");
    // A new allocation for A: every GEMM node reading it is captured again in place.
    let a2 = integers(m * k, 94);
    let old = g.replace_a(dev.upload(&a2).unwrap()).unwrap();
    g.replay().unwrap();
    assert_eq!(g.download_ident().unwrap(), a2, "the captured GEMM reads the new A");
    let (cols, t) = (g.download_cols().unwrap(), sigma(k, 7, 3));
    assert!((0..m * k).all(|i| cols[i] == a2[i - i % k + t(i % k)]), "and so does the trans_b GEMM");
    drop(old);
    // Eager runs take the same scalars.
    let mut e = test_gemm(&dev, &a, &identity(k), &u, &v);
    e.set_gain(3.0).unwrap();
    e.run_eager().unwrap();
    assert_eq!(bits(&e.download_outer().unwrap()), bits(&outer));
}

/// `capture_streamed` records a GEMM as cuBLAS's last kernel node, not a child graph, so it
/// cannot be updated in place: `set_<scalar>` is a clear error naming that, the value and the
/// graph stay as they were, and the graph still replays.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_streamed_capture_refuses_in_place_gemm_updates_and_keeps_replaying() {
    let dev = device();
    let (m, k) = (TestGemm::M, TestGemm::K);
    let (a, u, v) = (integers(m * k, 95), integers(m, 96), integers(TestGemm::N, 97));
    let times = |c: f32| a.iter().map(|x| c * x).collect::<Vec<_>>();
    let mut g = test_gemm(&dev, &a, &identity(k), &u, &v);
    g.capture_streamed().unwrap();
    g.replay().unwrap();
    let err = g.set_beta(0.0).unwrap_err();
    assert!(err.to_string().contains("not a child graph"), "{err}");
    g.replay().unwrap();
    assert_eq!(g.download_acc().unwrap(), times(4.0), "beta still 1: acc += 2 A each replay");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn strided_batches_scale_share_and_space_their_products() {
    let dev = device();
    let (count, m, k, gap) = (TestGemmBatched::COUNT, TestGemmBatched::M, TestGemmBatched::K, TestGemmBatched::GAP);
    let a = integers(count * m * k, 101);
    let scales = [1.0f32, 2.0, -4.0];
    let scaled: Vec<f32> = (0..count).flat_map(|i| identity(k).into_iter().map(move |x| x * scales[i])).collect();
    let build = |dev: &kgraph::Device| {
        let mut g = TestGemmBatched::new(dev).unwrap_or_else(|e| panic!("{e}"));
        g.upload_a(&a).unwrap();
        g.load_scaled(&scaled).unwrap();
        g.load_eye(&identity(k)).unwrap();
        g
    };
    let mut eager = build(&dev);
    eager.run_eager().unwrap();
    let mut built = build(&dev);
    built.capture().unwrap();
    built.replay().unwrap();
    for g in [&eager, &built] {
        let (out, shared, spaced) =
            (g.download_scaled_out().unwrap(), g.download_shared_out().unwrap(), g.download_spaced_out().unwrap());
        let mk = m * k;
        for i in 0..count {
            let ai = &a[i * mk..(i + 1) * mk];
            let want: Vec<f32> = ai.iter().map(|x| scales[i] * x).collect();
            assert_eq!(&out[i * mk..(i + 1) * mk], &want[..], "C_{i} = s_{i} A_{i} (exact)");
            assert_eq!(&shared[i * mk..(i + 1) * mk], ai, "C_{i} = A_{i} I (stride_b = 0)");
            let at = i * (mk + gap);
            assert_eq!(&spaced[at..at + mk], ai, "C_{i} at stride_c = m k + gap");
            assert!(spaced[at + mk..at + mk + gap].iter().all(|&x| x == 0.0), "the gap after C_{i} is untouched");
        }
    }
    assert_eq!(bits(&eager.download_scaled_out().unwrap()), bits(&built.download_scaled_out().unwrap()));
}

fn types_graph(dev: &kgraph::Device) -> TestGemmTypes {
    let (s, k, kk) = (TestGemmTypes::S, TestGemmTypes::K, TestGemmTypes::KK);
    let mut g = TestGemmTypes::new(dev).unwrap_or_else(|e| panic!("{e}"));
    g.load_eye32(&identity(s)).unwrap();
    g.load_eyeh(&identity(k).into_iter().map(f16::from_f32).collect::<Vec<_>>()).unwrap();
    g.load_eyeb(&identity(k).into_iter().map(bf16::from_f32).collect::<Vec<_>>()).unwrap();
    g.load_ones_h(&vec![f16::ONE; kk]).unwrap();
    g.load_ones_b(&vec![bf16::ONE; kk]).unwrap();
    g
}

/// Uploads every input of `g` from `x` (f32 values, rounded to each buffer's dtype by `half`).
fn upload_types(g: &mut TestGemmTypes, x32: &[f32], xm: &[f32], u: &[f32], v: &[f32]) {
    let kk = TestGemmTypes::KK;
    let h = |x: &[f32]| x.iter().map(|&v| f16::from_f32(v)).collect::<Vec<_>>();
    let b = |x: &[f32]| x.iter().map(|&v| bf16::from_f32(v)).collect::<Vec<_>>();
    g.upload_x32(x32).unwrap();
    g.upload_xh(&h(xm)).unwrap();
    g.upload_xb(&b(xm)).unwrap();
    g.upload_uh(&h(u)).unwrap();
    g.upload_vh(&h(v)).unwrap();
    g.upload_ub(&b(u)).unwrap();
    g.upload_vb(&b(v)).unwrap();
    // Large terms that cancel around kk - 2 ones: 62 when summed in f32 whatever the order;
    // an f16 (bf16) accumulator loses each 1 next to 2048 (256), where its spacing is 2.
    let mut row = vec![1.0f32; kk];
    row[0] = 2048.0;
    row[kk - 1] = -2048.0;
    g.upload_row_h(&h(&row)).unwrap();
    row[0] = 256.0;
    row[kk - 1] = -256.0;
    g.upload_row_b(&b(&row)).unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn f32_is_exact_in_ieee_and_within_tf32_precision_in_tf32() {
    let dev = device();
    let (s, m, n, k) = (TestGemmTypes::S, TestGemmTypes::M, TestGemmTypes::N, TestGemmTypes::K);
    let mut g = types_graph(&dev);
    let x = random(s * s, 111);
    upload_types(&mut g, &x, &integers(m * k, 112), &integers(m, 113), &integers(n, 114));
    g.run_eager().unwrap();
    assert_eq!(g.download_ieee_out().unwrap(), x, "IEEE f32: x * 1 + exact zeros, tolerance 0");
    let tf32 = g.download_tf32_out().unwrap();
    // Stated tolerance: TF32 keeps 10 of f32's 23 mantissa bits, so x * 1 is x rounded (or
    // truncated) to 10 bits: relative error at most 2^-10.
    let worst = x.iter().zip(&tf32).map(|(a, b)| ((a - b) / a).abs()).fold(0.0f32, f32::max);
    assert!(worst <= 2f32.powi(-10), "TF32 relative error {worst}");
    assert!(tf32 != x, "compute = \"tf32\" really uses TF32: some of 65536 random 23-bit mantissas are rounded");
    // Values TF32 holds exactly come back exactly.
    let ints = integers(s * s, 115);
    upload_types(&mut g, &ints, &integers(m * k, 112), &integers(m, 113), &integers(n, 114));
    g.run_eager().unwrap();
    assert_eq!(g.download_tf32_out().unwrap(), ints, "TF32, small integers: tolerance 0");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn f16_and_bf16_products_are_exact_or_one_rounding_off_and_accumulate_in_f32() {
    let dev = device();
    let (s, m, n, k) = (TestGemmTypes::S, TestGemmTypes::M, TestGemmTypes::N, TestGemmTypes::K);
    let mut g = types_graph(&dev);
    // Small integers: every product and sum is exact in f16 and bf16 (tolerance 0).
    let (xm, u, v) = (integers(m * k, 121), integers(m, 122), integers(n, 123));
    upload_types(&mut g, &random(s * s, 120), &xm, &u, &v);
    g.run_eager().unwrap();
    let to32h = |x: Vec<f16>| x.into_iter().map(f16::to_f32).collect::<Vec<_>>();
    let to32b = |x: Vec<bf16>| x.into_iter().map(bf16::to_f32).collect::<Vec<_>>();
    let uv: Vec<f32> = (0..m * n).map(|i| u[i / n] * v[i % n]).collect();
    assert_eq!(to32h(g.download_ident_h().unwrap()), xm, "f16 A * I");
    assert_eq!(to32b(g.download_ident_b().unwrap()), xm, "bf16 A * I");
    assert_eq!(to32h(g.download_outer_h().unwrap()), uv, "f16 u v^T, small integers");
    assert_eq!(to32b(g.download_outer_b().unwrap()), uv, "bf16 u v^T, small integers");
    assert_eq!(to32h(g.download_sum_h().unwrap()), [62.0], "f16 inputs accumulate in f32");
    assert_eq!(to32b(g.download_sum_b().unwrap()), [62.0], "bf16 inputs accumulate in f32");
    // Random halves of magnitude [0.5, 2): the identity is still exact (every value is an f16 or
    // bf16 already); a rank-one product is the exact f32 product (11 + 11 bits < 24) rounded
    // once to the output: stated tolerance, relative 2^-10 in f16 and 2^-7 in bf16 (one unit in
    // the last place of their 10- and 7-bit mantissas; no subnormals at these magnitudes).
    let halves = |n: usize, seed: u64| random(n, seed).into_iter().map(|x| x.signum() * (0.5 + x.abs() * 0.75));
    let xm: Vec<f32> = halves(m * k, 124).collect();
    let (u, v): (Vec<f32>, Vec<f32>) = (halves(m, 125).collect(), halves(n, 126).collect());
    upload_types(&mut g, &random(s * s, 120), &xm, &u, &v);
    g.run_eager().unwrap();
    let round_h: Vec<f32> = xm.iter().map(|&x| f16::from_f32(x).to_f32()).collect();
    let round_b: Vec<f32> = xm.iter().map(|&x| bf16::from_f32(x).to_f32()).collect();
    assert_eq!(to32h(g.download_ident_h().unwrap()), round_h, "f16 A * I, tolerance 0");
    assert_eq!(to32b(g.download_ident_b().unwrap()), round_b, "bf16 A * I, tolerance 0");
    let check = |got: Vec<f32>, round: &dyn Fn(f32) -> f32, tol: f32, what: &str| {
        for i in 0..m * n {
            let exact = round(u[i / n]) * round(v[i % n]);
            let err = ((got[i] - exact) / exact).abs();
            assert!(err <= tol, "{what} ({}, {}): {} vs {exact}, relative {err}", i / n, i % n, got[i]);
        }
    };
    check(to32h(g.download_outer_h().unwrap()), &|x| f16::from_f32(x).to_f32(), 2f32.powi(-10), "f16 u v^T");
    check(to32b(g.download_outer_b().unwrap()), &|x| bf16::from_f32(x).to_f32(), 2f32.powi(-7), "bf16 u v^T");
    // And the built graph replays the eager results bit for bit.
    let eager_h = g.download_outer_h().unwrap();
    let eager_tf32 = bits(&g.download_tf32_out().unwrap());
    g.capture().unwrap();
    g.replay().unwrap();
    assert!(g.download_outer_h().unwrap() == eager_h);
    assert_eq!(bits(&g.download_tf32_out().unwrap()), eager_tf32);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gemm_nodes_run_in_a_device_side_loop() {
    let dev = device();
    let (m, n, k) = (TestGemmLoop::M, TestGemmLoop::N, TestGemmLoop::K);
    let (a, u, v) = (integers(m * k, 131), integers(m, 132), integers(n, 133));
    let build = |dev: &kgraph::Device| {
        let mut g = TestGemmLoop::new(dev).unwrap_or_else(|e| panic!("{e}"));
        g.upload_a(&a).unwrap();
        g.upload_at(&transpose(&a, m, k)).unwrap();
        g.load_eye(&identity(k)).unwrap();
        g.load_perm_m(&permutation(m, &sigma(m, 5, 7))).unwrap();
        g.load_perm_k(&permutation(k, &sigma(k, 7, 3))).unwrap();
        g.upload_u(&u).unwrap();
        g.upload_v(&v).unwrap();
        g
    };
    let mut eager = build(&dev);
    eager.run_eager().unwrap();
    let mut looped = build(&dev);
    looped.capture().unwrap();
    looped.replay().unwrap();
    // Small integers: acc = 3 iterations of acc += 2 A, exact (tolerance 0).
    let six: Vec<f32> = a.iter().map(|x| 6.0 * x).collect();
    for g in [&eager, &looped] {
        assert_eq!(g.download_acc().unwrap(), six, "three iterations of beta = 1 accumulation");
        assert_eq!(g.download_ident().unwrap(), a);
    }
    assert_eq!(bits(&looped.download_outer().unwrap()), bits(&eager.download_outer().unwrap()));
}
