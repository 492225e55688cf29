//! [`Gemm`]: one row-major matrix product `C = alpha * op(A) * op(B) + beta * C` (or a strided
//! batch of them), the lengths it touches, and its mapping onto column-major cuBLAS.

use std::ffi::{c_int, c_longlong, c_void};

use cudarc::driver::sys::CUdeviceptr;

use crate::error::{Error, GemmError, Result};
use crate::gemm::sys::{self, ColMajor};

/// The element type of a GEMM's three matrices (the same for A, B and C).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GemmType {
    /// `f32`, accumulated as [`Compute`] says.
    F32,
    /// `f16` (`half::f16`), accumulated in f32.
    F16,
    /// `bf16` (`half::bf16`), accumulated in f32.
    Bf16,
}

impl GemmType {
    /// `cudaDataType`.
    fn data_type(self) -> c_int {
        match self {
            GemmType::F32 => sys::R_32F,
            GemmType::F16 => sys::R_16F,
            GemmType::Bf16 => sys::R_16BF,
        }
    }

    /// The Rust name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            GemmType::F32 => "f32",
            GemmType::F16 => "f16",
            GemmType::Bf16 => "bf16",
        }
    }
}

/// How the products are accumulated. f16 and bf16 GEMMs accumulate in f32 either way (`F32`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compute {
    /// IEEE f32 products and sums (`CUBLAS_COMPUTE_32F`, with reduced-precision reductions
    /// disallowed), whatever `NVIDIA_TF32_OVERRIDE` or the handle's defaults say.
    F32,
    /// TF32 products (10-bit mantissas, on tensor cores) summed in f32
    /// (`CUBLAS_COMPUTE_32F_FAST_TF32`): f32 GEMMs only, chosen explicitly.
    Tf32,
}

/// A strided batch: `count` products, matrix `i` of A at element `i * stride_a`, and so on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Batch {
    /// Number of products (at least 1).
    pub count: usize,
    /// Elements between consecutive A matrices (0 reuses one A for every product).
    pub stride_a: usize,
    /// Elements between consecutive B matrices (0 reuses one B).
    pub stride_b: usize,
    /// Elements between consecutive C matrices: at least one C matrix's span, so no two
    /// products write the same element.
    pub stride_c: usize,
}

/// One row-major GEMM, `C[m x n] = alpha * op(A) * op(B) + beta * C`, in Rust's layout:
/// `A` is `m x k` row-major (`k x m` when `trans_a`), `B` is `k x n` (`n x k` when `trans_b`),
/// row `r` of a matrix starts at element `r * ld`. cuBLAS is column-major, so it runs the
/// transposed product `C^T = op(B)^T * op(A)^T` with the operands and `m`, `n` swapped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gemm {
    /// The element type of A, B and C.
    pub dtype: GemmType,
    /// The accumulation.
    pub compute: Compute,
    /// `op(A) = A^T`.
    pub trans_a: bool,
    /// `op(B) = B^T`.
    pub trans_b: bool,
    /// Rows of C and of op(A).
    pub m: usize,
    /// Columns of C and of op(B).
    pub n: usize,
    /// Columns of op(A), rows of op(B).
    pub k: usize,
    /// Elements between consecutive rows of A (at least its row length: `k`, or `m` when
    /// `trans_a`).
    pub lda: usize,
    /// Elements between consecutive rows of B (at least `n`, or `k` when `trans_b`).
    pub ldb: usize,
    /// Elements between consecutive rows of C (at least `n`).
    pub ldc: usize,
    /// A strided batch, or one product.
    pub batch: Option<Batch>,
    /// The product's factor.
    pub alpha: f32,
    /// C's factor: `0.0` writes C without reading it (its old values, NaN included, do not
    /// matter), anything else reads C.
    pub beta: f32,
}

/// The fewest elements a buffer holding `rows` rows of `row` elements `ld` apart needs, plus
/// `count - 1` more matrices `stride` apart: the last element touched, plus one.
fn span(rows: usize, row: usize, ld: usize, count: usize, stride: usize) -> Option<usize> {
    let one = (rows - 1).checked_mul(ld)?.checked_add(row)?;
    (count - 1).checked_mul(stride)?.checked_add(one)
}

impl Gemm {
    /// `(rows, row length, ld)` of A, B and C as stored.
    fn stored(&self) -> [(&'static str, usize, usize, usize); 3] {
        let a = if self.trans_a { (self.k, self.m) } else { (self.m, self.k) };
        let b = if self.trans_b { (self.n, self.k) } else { (self.k, self.n) };
        [("A", a.0, a.1, self.lda), ("B", b.0, b.1, self.ldb), ("C", self.m, self.n, self.ldc)]
    }

    fn shape_error(&self, detail: String) -> Error {
        Error::Gemm(GemmError::Shape { gemm: self.describe(), detail })
    }

    /// The product as messages show it, e.g. `gemm 64x32x16 f16 (trans_b)`.
    pub fn describe(&self) -> String {
        let mut text = format!("gemm {}x{}x{} {}", self.m, self.n, self.k, self.dtype.name());
        if self.compute == Compute::Tf32 {
            text.push_str(" tf32");
        }
        let flags: Vec<&str> =
            [(self.trans_a, "trans_a"), (self.trans_b, "trans_b")].iter().filter(|f| f.0).map(|f| f.1).collect();
        if !flags.is_empty() {
            text.push_str(&format!(" ({})", flags.join(", ")));
        }
        if let Some(b) = self.batch {
            text.push_str(&format!(" x {} batches", b.count));
        }
        text
    }

    /// The fewest elements A, B and C must hold, after checking the shape: every size at least
    /// 1 and within cuBLAS's `int`s, each `ld` at least its row length, TF32 only for f32, and
    /// C's batches disjoint. [`GemmError::Shape`] says which rule failed.
    pub fn required_lens(&self) -> Result<[usize; 3]> {
        let batch = self.batch.unwrap_or(Batch { count: 1, stride_a: 0, stride_b: 0, stride_c: 0 });
        let int = |v: usize| c_int::try_from(v).is_ok();
        if [self.m, self.n, self.k, batch.count].contains(&0) {
            return Err(self.shape_error("m, n, k and the batch count must be at least 1".into()));
        }
        if ![self.m, self.n, self.k, self.lda, self.ldb, self.ldc, batch.count].into_iter().all(int) {
            return Err(self.shape_error("a size or ld does not fit cuBLAS's 32-bit int".into()));
        }
        if self.compute == Compute::Tf32 && self.dtype != GemmType::F32 {
            return Err(self.shape_error("TF32 compute is for f32 matrices only".into()));
        }
        let strides = [batch.stride_a, batch.stride_b, batch.stride_c];
        let mut lens = [0; 3];
        for (i, (name, rows, row, ld)) in self.stored().into_iter().enumerate() {
            if ld < row {
                return Err(self
                    .shape_error(format!("ld{} = {ld} is less than {name}'s row length {row}", name.to_lowercase())));
            }
            lens[i] = span(rows, row, ld, batch.count, strides[i])
                .filter(|&l| c_longlong::try_from(l).is_ok())
                .ok_or_else(|| self.shape_error(format!("{name}'s extent overflows")))?;
        }
        let c_span = (self.m - 1) * self.ldc + self.n;
        if batch.count > 1 && batch.stride_c < c_span {
            return Err(self.shape_error(format!(
                "stride_c = {} is less than one C matrix's span ({c_span} elements): two products would write the same elements",
                batch.stride_c
            )));
        }
        Ok(lens)
    }

    /// Checks the shape and that A, B and C hold `lens` elements each, at least
    /// [`Self::required_lens`].
    pub fn check(&self, lens: [usize; 3]) -> Result<()> {
        let need = self.required_lens()?;
        for ((name, have), need) in ["A", "B", "C"].into_iter().zip(lens).zip(need) {
            if have < need {
                return Err(self.shape_error(format!("{name} holds {have} elements, the product touches {need}")));
            }
        }
        Ok(())
    }

    /// Whether the call reads C (beta is not 0).
    pub fn reads_c(&self) -> bool {
        self.beta != 0.0
    }

    /// The handle's math mode for this product.
    pub(crate) fn math_mode(&self) -> c_int {
        match self.compute {
            Compute::Tf32 => sys::TF32_TENSOR_OP_MATH,
            Compute::F32 => sys::DEFAULT_MATH | sys::DISALLOW_REDUCED_PRECISION_REDUCTION,
        }
    }

    /// The column-major call: `C^T (n x m) = op(B)^T * op(A)^T`, B's and A's row-major storage
    /// read column-major as their transposes. Assumes [`Self::required_lens`] passed (sizes fit).
    pub(crate) fn col_major(&self, a: CUdeviceptr, b: CUdeviceptr, c: CUdeviceptr) -> ColMajor {
        let batch = self.batch.unwrap_or(Batch { count: 1, stride_a: 0, stride_b: 0, stride_c: 0 });
        let op = |t: bool| if t { sys::OP_T } else { sys::OP_N };
        ColMajor {
            transa: op(self.trans_b),
            transb: op(self.trans_a),
            m: self.n as c_int,
            n: self.m as c_int,
            k: self.k as c_int,
            alpha: self.alpha,
            a: b as *const c_void,
            lda: self.ldb as c_int,
            stride_a: batch.stride_b as c_longlong,
            b: a as *const c_void,
            ldb: self.lda as c_int,
            stride_b: batch.stride_a as c_longlong,
            beta: self.beta,
            c: c as *mut c_void,
            ldc: self.ldc as c_int,
            stride_c: batch.stride_c as c_longlong,
            count: batch.count as c_int,
            dtype: self.dtype.data_type(),
            compute: match self.compute {
                Compute::Tf32 => sys::COMPUTE_32F_FAST_TF32,
                Compute::F32 => sys::COMPUTE_32F,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn packed_lengths_are_the_matrix_sizes() {
        assert_eq!(gemm(4, 3, 2).required_lens().unwrap(), [8, 6, 12]);
        let t = Gemm { trans_a: true, trans_b: true, lda: 4, ldb: 2, ..gemm(4, 3, 2) };
        assert_eq!(t.required_lens().unwrap(), [8, 6, 12]);
    }

    #[test]
    fn padded_rows_and_batches_count_to_the_last_element() {
        // C: rows 0..4 of 3 elements 5 apart: (4-1)*5+3 = 18; 2 batches 20 apart: 38.
        let g =
            Gemm { ldc: 5, batch: Some(Batch { count: 2, stride_a: 0, stride_b: 6, stride_c: 20 }), ..gemm(4, 3, 2) };
        assert_eq!(g.required_lens().unwrap(), [8, 12, 38]);
        assert!(g.check([8, 12, 38]).is_ok());
        let e = g.check([8, 12, 37]).unwrap_err().to_string();
        assert!(e.contains("C holds 37 elements, the product touches 38"), "{e}");
    }

    #[test]
    fn short_ld_overlapping_batches_and_tf32_halves_are_refused() {
        let e = Gemm { lda: 1, ..gemm(4, 3, 2) }.required_lens().unwrap_err().to_string();
        assert!(e.contains("lda = 1 is less than A's row length 2"), "{e}");
        let b = Some(Batch { count: 2, stride_a: 0, stride_b: 0, stride_c: 11 });
        let e = Gemm { batch: b, ..gemm(4, 3, 2) }.required_lens().unwrap_err().to_string();
        assert!(e.contains("stride_c = 11 is less than one C matrix's span (12 elements)"), "{e}");
        let e = Gemm { dtype: GemmType::F16, compute: Compute::Tf32, ..gemm(4, 3, 2) }.required_lens();
        assert!(e.unwrap_err().to_string().contains("TF32 compute is for f32 matrices only"));
        assert!(gemm(0, 3, 2).required_lens().is_err());
    }

    #[test]
    fn the_column_major_call_swaps_operands_and_sizes() {
        let g = Gemm { trans_b: true, ldb: 2, ..gemm(4, 3, 2) };
        let c = g.col_major(0x100, 0x200, 0x300);
        assert_eq!((c.transa, c.transb), (sys::OP_T, sys::OP_N));
        assert_eq!((c.m, c.n, c.k), (3, 4, 2));
        assert_eq!((c.a as usize, c.lda, c.b as usize, c.ldb, c.c as usize, c.ldc), (0x200, 2, 0x100, 2, 0x300, 3));
        assert_eq!((c.dtype, c.compute, c.count), (sys::R_32F, sys::COMPUTE_32F, 1));
    }
}
