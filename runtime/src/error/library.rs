//! The libraries kgraph loads at run time: cuBLAS (`GemmError`, feature `gemm`) and NCCL
//! (`NcclError`, feature `nccl`).

#[cfg(feature = "nccl")]
use std::fmt;

/// cuBLAS, for a GEMM ([`Error::Gemm`](super::Error::Gemm)).
#[cfg(feature = "gemm")]
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GemmError {
    /// No usable cuBLAS library: none could be loaded, or it lacks a function kgraph calls.
    /// `detail` says what was tried and where cuBLAS comes from (docs/graph-spec.md).
    #[error("cuBLAS is not available: {detail}")]
    Missing {
        /// What the loader reported, with the names and folders tried.
        detail: String,
    },
    /// A GEMM's shape is invalid or does not fit its buffers; nothing was issued.
    #[error("{gemm}: {detail}; nothing was issued")]
    Shape {
        /// The product, e.g. `"gemm 64x32x16 f16 (trans_b)"`.
        gemm: String,
        /// The rule that failed.
        detail: String,
    },
    /// A cuBLAS call failed.
    #[error("{op} failed: {detail}")]
    Failed {
        /// What kgraph was doing, e.g. `"gemm 64x32x16 f32"` or `"cublasCreate"`.
        op: String,
        /// cuBLAS's status name.
        detail: String,
    },
}

/// NCCL, a multi-rank job's bootstrap, or a collective's shape failed ([`Error::Nccl`](super::Error::Nccl)).
#[cfg(feature = "nccl")]
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NcclError {
    /// No usable NCCL library: none could be loaded, it is older than kgraph needs, or it lacks
    /// a function kgraph calls. `detail` says what was tried and where NCCL comes from
    /// (docs/multi-gpu.md).
    #[error("NCCL is not available: {detail}")]
    Missing {
        /// What the loader reported, with the names tried.
        detail: String,
    },
    /// An NCCL call failed on one rank.
    #[error("rank {rank}: {op} failed: {detail}")]
    Failed {
        /// The failing process's rank in its communicator.
        rank: usize,
        /// What kgraph was doing, e.g. `"ncclAllReduce (1048576 x f32, sum)"`.
        op: String,
        /// NCCL's result code, its description and NCCL's last error message.
        detail: String,
    },
    /// Setting up a multi-rank job failed before NCCL was involved: an environment variable
    /// is missing or invalid, or sharing the NCCL unique id (file or TCP) failed or timed out.
    #[error("{}bootstrap: {detail}", RankPrefix(*.rank))]
    Bootstrap {
        /// This process's rank, when it is known (not when `RANK` itself is what failed).
        rank: Option<usize>,
        /// What went wrong, naming the variable, file or address.
        detail: String,
    },
    /// A collective's buffer lengths do not fit its shape for this world size (reduce-scatter
    /// sends `world_size` times what it receives, all-gather receives `world_size` times what
    /// it sends, all-reduce and broadcast keep the length); nothing was issued.
    #[error(
        "{}{collective} over {world_size} ranks: {rule} (send buffer {send_len} elements, receive buffer {recv_len}); nothing was issued",
        RankPrefix(*.rank)
    )]
    CollectiveLength {
        /// The collective, e.g. `"reduce_scatter"`.
        collective: &'static str,
        /// The issuing rank, when known (`None` from the rank-independent check).
        rank: Option<usize>,
        /// The communicator's world size.
        world_size: usize,
        /// Elements in the send buffer.
        send_len: usize,
        /// Elements in the receive buffer.
        recv_len: usize,
        /// The rule that failed, e.g. `"send length must be world_size x receive length"`.
        rule: &'static str,
    },
}

/// `rank N: ` before an NCCL message when the rank is known, nothing otherwise.
#[cfg(feature = "nccl")]
struct RankPrefix(Option<usize>);

#[cfg(feature = "nccl")]
impl fmt::Display for RankPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(rank) => write!(f, "rank {rank}: "),
            None => Ok(()),
        }
    }
}
