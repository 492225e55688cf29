//! Soundness review of `kgraph_runtime::gemm::Gemm`'s checks (the pure half of the safe API):
//! the extents of row-major operands as stored (transposes, padded rows, batches), refused
//! overlapping C batches, and sizes at cuBLAS's limits refused without overflow or panic.
#![cfg(feature = "gemm")]

use kgraph_runtime::gemm::{Batch, Compute, Gemm, GemmType};

const MAX: usize = i32::MAX as usize;

fn gemm(m: usize, n: usize, k: usize) -> Gemm {
    Gemm {
        dtype: GemmType::F32,
        compute: Compute::F32,
        trans_a: false,
        trans_b: false,
        m,
        n,
        k,
        lda: k,
        ldb: n,
        ldc: n,
        batch: None,
        alpha: 1.0,
        beta: 0.0,
    }
}

fn batch(count: usize, stride_a: usize, stride_b: usize, stride_c: usize) -> Option<Batch> {
    Some(Batch { count, stride_a, stride_b, stride_c })
}

#[test]
fn transposed_operands_are_measured_as_stored() {
    // trans_a: A stored k x m = 2 x 5, lda >= 5; lda = 2 (the used row length k) is refused.
    let g = Gemm { trans_a: true, lda: 2, ..gemm(5, 3, 2) };
    assert!(g.required_lens().is_err());
    let g = Gemm { trans_a: true, lda: 7, ..gemm(5, 3, 2) };
    // (2 - 1) * 7 + 5 = 12.
    assert_eq!(g.required_lens().unwrap()[0], 12);
    // trans_b: B stored n x k = 3 x 2 with ldb = 4: (3 - 1) * 4 + 2 = 10.
    let g = Gemm { trans_b: true, ldb: 4, ..gemm(5, 3, 2) };
    assert_eq!(g.required_lens().unwrap()[1], 10);
    assert!(g.check([10, 9, 15]).is_err(), "B one short");
    assert!(Gemm { trans_b: true, ldb: 1, ..gemm(5, 3, 2) }.required_lens().is_err(), "ldb below k");
}

#[test]
fn batches_that_write_one_element_twice_are_refused() {
    // C 2 x 2 with ldc 4 spans 6 elements: stride_c 0 (every product on one C) and 5 refused.
    for stride_c in [0, 1, 5] {
        let g = Gemm { ldc: 4, batch: batch(2, 0, 0, stride_c), ..gemm(2, 2, 2) };
        assert!(g.required_lens().is_err(), "stride_c = {stride_c}");
    }
    // 6 is the first that keeps them apart; A and B may be shared (stride 0).
    let g = Gemm { ldc: 4, batch: batch(2, 0, 0, 6), ..gemm(2, 2, 2) };
    assert_eq!(g.required_lens().unwrap(), [4, 4, 12]);
    // One product: the strides are not used (cublasGemmEx), whatever they are.
    let g = Gemm { batch: batch(1, usize::MAX, usize::MAX, 0), ..gemm(2, 2, 2) };
    assert_eq!(g.required_lens().unwrap(), [4, 4, 4]);
}

#[test]
fn sizes_at_and_past_cublas_limits_are_refused_without_overflow() {
    // The largest sizes cuBLAS takes: the extents (about 2^62) fit an i64, nothing overflows.
    let g = Gemm { lda: MAX, ldb: MAX, ldc: MAX, ..gemm(MAX, MAX, MAX) };
    let want = (MAX - 1) * MAX + MAX;
    assert_eq!(g.required_lens().unwrap(), [want; 3]);
    assert!(g.check([want, want, want - 1]).is_err());
    // One past an int, in every size, ld and the count.
    for g in [
        gemm(MAX + 1, 1, 1),
        gemm(1, MAX + 1, 1),
        gemm(1, 1, MAX + 1),
        Gemm { lda: MAX + 1, ..gemm(1, 1, 1) },
        Gemm { ldb: MAX + 1, ..gemm(1, 1, 1) },
        Gemm { ldc: MAX + 1, ..gemm(1, 1, 1) },
        Gemm { batch: batch(MAX + 1, 0, 0, 1), ..gemm(1, 1, 1) },
        gemm(0, 1, 1),
        Gemm { batch: batch(0, 0, 0, 1), ..gemm(1, 1, 1) },
    ] {
        assert!(g.required_lens().is_err(), "{g:?}");
    }
    // Batches whose extent passes i64 (cuBLAS's long long strides) or usize: refused.
    let big = Gemm { lda: MAX, ldb: MAX, ldc: MAX, batch: batch(MAX, MAX * MAX, 0, MAX * MAX), ..gemm(MAX, MAX, MAX) };
    assert!(big.required_lens().is_err());
    for stride in [usize::MAX, usize::MAX / 2, i64::MAX as usize] {
        let g = Gemm { batch: batch(2, stride, 0, 1), ..gemm(1, 1, 1) };
        assert!(g.required_lens().is_err(), "stride_a = {stride}");
        let g = Gemm { batch: batch(2, 0, 0, stride), ..gemm(1, 1, 1) };
        assert!(g.required_lens().is_err(), "stride_c = {stride}");
    }
    // The largest stride whose extent fits an i64 is taken.
    let s = i64::MAX as usize - 1;
    let g = Gemm { batch: batch(2, s, 0, s), ..gemm(1, 1, 1) };
    assert_eq!(g.required_lens().unwrap(), [s + 1, 1, s + 1]);
}

#[test]
fn tf32_is_refused_for_half_types() {
    for dtype in [GemmType::F16, GemmType::Bf16] {
        assert!(Gemm { dtype, compute: Compute::Tf32, ..gemm(2, 2, 2) }.required_lens().is_err());
        assert!(Gemm { dtype, ..gemm(2, 2, 2) }.required_lens().is_ok());
    }
}
