//! Multi-GPU collectives over NCCL (cargo feature `nccl`): one process per GPU, a
//! [`Communicator`] per process, collectives issued on the [`Device`](crate::Device)'s stream so they order
//! with kernels and can be captured into CUDA graphs.
//!
//! - [`Bootstrap`]: rank, world size and local rank from the torchrun-style environment, and the
//!   sharing of NCCL's unique id (a file, or TCP on `MASTER_ADDR:MASTER_PORT`), with timeouts.
//! - [`Communicator`]: `ncclCommInitRank` for one device; [`Communicator::single`] for a world
//!   of one; the collectives of [`Collective`] on device buffers, checked for stream and length
//!   and, before NCCL sees them, across ranks (every rank passes the same call: `agree.rs`);
//!   [`Communicator::issue_raw`] and [`Communicator::capture_graph`] for graph builders.
//! - [`probe`]: whether NCCL loads here, and which. NCCL is loaded at run time (`libnccl.so.2`,
//!   or `KGRAPH_NCCL_LIB`); when it is missing, every entry point returns one
//!   [`NcclError::Missing`](crate::NcclError::Missing) saying where to get it (docs/multi-gpu.md).
//!
//! ```no_run
//! use kgraph_runtime::{nccl::{Bootstrap, Communicator, ReduceOp}, Device};
//! let boot = Bootstrap::from_env()?;                  // RANK, WORLD_SIZE, MASTER_ADDR, ...
//! let dev = Device::new(boot.local_rank())?;
//! let comm = Communicator::new(&dev, &boot)?;
//! let mut grad = dev.upload(&vec![comm.rank() as f32; 1024])?;
//! comm.all_reduce_in_place(&mut grad, ReduceOp::Avg)?;
//! # Ok::<(), kgraph_runtime::Error>(())
//! ```

mod agree;
mod bootstrap;
mod capture;
mod collective;
mod communicator;
pub(crate) mod group;
pub(crate) mod sys;

pub use bootstrap::{env, Bootstrap, IdExchange, UniqueId, DEFAULT_TIMEOUT, UNIQUE_ID_BYTES};
pub use collective::{Collective, DataType, NcclType, ReduceOp};
pub use communicator::{probe, unique_id, CollectiveGraph, Communicator, NcclInfo};
pub use sys::{LIBRARY_CANDIDATES, LIBRARY_ENV};
