//! What a collective is, independent of any communicator: [`Collective`] (the operation and its
//! length rules), [`ReduceOp`], [`DataType`] (NCCL's element types) and [`NcclType`] (the Rust
//! types that map to them). No NCCL call happens here, so a graph spec can be validated with it
//! on any machine.

use crate::error::{Error, MemoryError, NcclError, Result};
use crate::memory::pod::Pod;

/// A reduction, as NCCL applies it element-wise across ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The sum over ranks.
    Sum,
    /// The product over ranks.
    Prod,
    /// The largest value over ranks.
    Max,
    /// The smallest value over ranks.
    Min,
    /// The sum divided by the world size (`ncclAvg`; integer types divide as integers).
    Avg,
}

impl ReduceOp {
    /// The op's name in specs and messages: `sum`, `prod`, `max`, `min`, `avg`.
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::Avg => "avg",
        }
    }

    /// The op named `name` (see [`ReduceOp::name`]), if any.
    pub fn from_name(name: &str) -> Option<Self> {
        [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min, ReduceOp::Avg]
            .into_iter()
            .find(|op| op.name() == name)
    }

    pub(crate) fn to_nccl(self) -> cudarc::nccl::sys::ncclRedOp_t {
        use cudarc::nccl::sys::ncclRedOp_t as R;
        match self {
            ReduceOp::Sum => R::ncclSum,
            ReduceOp::Prod => R::ncclProd,
            ReduceOp::Max => R::ncclMax,
            ReduceOp::Min => R::ncclMin,
            ReduceOp::Avg => R::ncclAvg,
        }
    }
}

/// An element type NCCL reduces and moves. Graph specs name them as kgraph's buffers do
/// (`f32`, `bf16`, ...); of the buffer dtypes, `i16` and `u16` have no NCCL type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum DataType {
    I8,
    U8,
    I32,
    U32,
    I64,
    U64,
    F16,
    Bf16,
    F32,
    F64,
}

impl DataType {
    /// Every type, in NCCL's order.
    pub const ALL: [DataType; 10] = [
        DataType::I8,
        DataType::U8,
        DataType::I32,
        DataType::U32,
        DataType::I64,
        DataType::U64,
        DataType::F16,
        DataType::F32,
        DataType::F64,
        DataType::Bf16,
    ];

    /// The Rust (and graph-spec) name: `i8`, `u8`, `i32`, `u32`, `i64`, `u64`, `f16`, `bf16`,
    /// `f32`, `f64`.
    pub fn name(self) -> &'static str {
        match self {
            DataType::I8 => "i8",
            DataType::U8 => "u8",
            DataType::I32 => "i32",
            DataType::U32 => "u32",
            DataType::I64 => "i64",
            DataType::U64 => "u64",
            DataType::F16 => "f16",
            DataType::Bf16 => "bf16",
            DataType::F32 => "f32",
            DataType::F64 => "f64",
        }
    }

    /// The type named `name` (see [`DataType::name`]), or `None` for a name NCCL has no type
    /// for (`i16`, `bool`, ...).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Bytes per element.
    pub fn size_bytes(self) -> usize {
        match self {
            DataType::I8 | DataType::U8 => 1,
            DataType::F16 | DataType::Bf16 => 2,
            DataType::I32 | DataType::U32 | DataType::F32 => 4,
            DataType::I64 | DataType::U64 | DataType::F64 => 8,
        }
    }

    pub(crate) fn to_nccl(self) -> cudarc::nccl::sys::ncclDataType_t {
        use cudarc::nccl::sys::ncclDataType_t as D;
        match self {
            DataType::I8 => D::ncclInt8,
            DataType::U8 => D::ncclUint8,
            DataType::I32 => D::ncclInt32,
            DataType::U32 => D::ncclUint32,
            DataType::I64 => D::ncclInt64,
            DataType::U64 => D::ncclUint64,
            DataType::F16 => D::ncclFloat16,
            DataType::Bf16 => D::ncclBfloat16,
            DataType::F32 => D::ncclFloat32,
            DataType::F64 => D::ncclFloat64,
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust element type with an NCCL [`DataType`] (sealed: the ten of [`DataType::ALL`]).
pub trait NcclType: Pod + sealed::Sealed {
    /// Its NCCL type.
    const DATA_TYPE: DataType;
}

macro_rules! nccl_types {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl NcclType for $t {
            const DATA_TYPE: DataType = DataType::$d;
        }
    )*};
}
nccl_types!(i8 => I8, u8 => U8, i32 => I32, u32 => U32, i64 => I64, u64 => U64,
    half::f16 => F16, half::bf16 => Bf16, f32 => F32, f64 => F64);

/// One collective operation over a communicator's ranks, on a send and a receive buffer.
///
/// | collective | send | receive | receive holds |
/// |---|---|---|---|
/// | `AllReduce(op)` | n | n | `op` over ranks of every element |
/// | `ReduceScatter(op)` | `world_size * n` | n | block `rank` of the reduction |
/// | `AllGather` | n | `world_size * n` | every rank's send, in rank order |
/// | `Broadcast { root }` | n | n | rank `root`'s send |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Collective {
    /// `ncclAllReduce`.
    AllReduce(ReduceOp),
    /// `ncclReduceScatter`.
    ReduceScatter(ReduceOp),
    /// `ncclAllGather`.
    AllGather,
    /// `ncclBroadcast` from rank `root`.
    Broadcast {
        /// The rank whose send buffer every rank receives.
        root: usize,
    },
}

impl Collective {
    /// `all_reduce`, `reduce_scatter`, `all_gather` or `broadcast`.
    pub fn name(&self) -> &'static str {
        match self {
            Collective::AllReduce(_) => "all_reduce",
            Collective::ReduceScatter(_) => "reduce_scatter",
            Collective::AllGather => "all_gather",
            Collective::Broadcast { .. } => "broadcast",
        }
    }

    /// Checks the send and receive lengths (in elements) against the table of [`Collective`]
    /// for `world_size` ranks and returns the `count` NCCL is called with (all-reduce and
    /// broadcast: the length; reduce-scatter: the receive length; all-gather: the send
    /// length). [`NcclError::CollectiveLength`] (with `rank: None`) when they do not fit,
    /// [`MemoryError::OutOfRange`] for a broadcast root outside the world, [`NcclError::Bootstrap`] for a
    /// world size of 0. The rules are the same on every rank, so a graph spec can be checked
    /// with this before any process starts, for each world size it is meant for.
    ///
    /// ```
    /// use kgraph_runtime::nccl::{Collective, ReduceOp};
    /// assert_eq!(Collective::ReduceScatter(ReduceOp::Sum).check_lengths(4, 1024, 256).unwrap(), 256);
    /// assert!(Collective::ReduceScatter(ReduceOp::Sum).check_lengths(4, 1022, 255).is_err());
    /// ```
    pub fn check_lengths(&self, world_size: usize, send_len: usize, recv_len: usize) -> Result<usize> {
        if world_size == 0 {
            return Err(Error::Nccl(NcclError::Bootstrap { rank: None, detail: "a world size of 0".into() }));
        }
        let fail = |rule| {
            Error::Nccl(NcclError::CollectiveLength {
                collective: self.name(),
                rank: None,
                world_size,
                send_len,
                recv_len,
                rule,
            })
        };
        match *self {
            Collective::AllReduce(_) | Collective::Broadcast { .. } => {
                if let Collective::Broadcast { root } = *self {
                    if root >= world_size {
                        return Err(Error::Memory(MemoryError::OutOfRange {
                            what: "broadcast root rank".into(),
                            index: root,
                            len: world_size,
                        }));
                    }
                }
                if send_len == recv_len {
                    Ok(send_len)
                } else {
                    Err(fail("send and receive lengths must be equal"))
                }
            }
            Collective::ReduceScatter(_) => {
                if send_len % world_size != 0 {
                    Err(fail("send length must be divisible by world_size"))
                } else if recv_len.checked_mul(world_size) != Some(send_len) {
                    Err(fail("send length must be world_size x receive length"))
                } else {
                    Ok(recv_len)
                }
            }
            Collective::AllGather => {
                if recv_len % world_size != 0 {
                    Err(fail("receive length must be divisible by world_size"))
                } else if send_len.checked_mul(world_size) != Some(recv_len) {
                    Err(fail("receive length must be world_size x send length"))
                } else {
                    Ok(send_len)
                }
            }
        }
    }
}

impl std::fmt::Display for Collective {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Collective::AllReduce(op) | Collective::ReduceScatter(op) => write!(f, "{} ({})", self.name(), op.name()),
            Collective::AllGather => write!(f, "all_gather"),
            Collective::Broadcast { root } => write!(f, "broadcast (root {root})"),
        }
    }
}
