//! kgraph's runtime: the small layer over cudarc that generated bindings and graphs stand on.
//!
//! - [`Device`]: context + stream, with cudarc's per-slice event tracking off (capture-safe);
//!   [`Device::upload`]/[`Device::download`] move data through mapped pinned staging and
//!   device-to-device copies (kgraph has no plain host-to-device copy).
//! - [`Pod`]: the element types that may be copied as raw bytes, including [`f16`](struct@f16), [`bf16`]
//!   and CUDA's vector types with CUDA's alignment ([`Float4`], [`Int2`], [`Half2`], ...).
//! - [`DeviceStruct`]: a `#[repr(C)]` twin of a kernel's C struct (`#[derive(kgraph::DeviceStruct)]`),
//!   whose layout `#[kernel]` checks against the `.cu` at compile time ([`layout`]).
//! - [`MappedBuffer`], [`PinnedSlot`]: mapped pinned host memory that kernels read directly
//!   through a [`PinnedPtr`] (and write, a [`MappedBuffer`] through a [`PinnedMutPtr`]).
//! - [`SlotBus`]: `f32` slots in device memory, written one at a time in stream order.
//! - [`Graph`]: stream capture, instantiation, replay and topology queries.
//! - [`resident`]: a persistent kernel taking one step per doorbell ([`resident::Resident`]),
//!   and the done-word wait of graph replays ([`resident::DoneWait`]).
//! - [`SmSplit`]: a device's SMs split into two green contexts ([`Device::split_sms`]), each a
//!   [`Device`] whose work runs only on its own SMs (a resident kernel kept apart from training).
//! - [`KernelSource`], [`ModuleCache`], [`DeviceIn`]/[`DeviceOut`]: what `#[kernel]` bindings use
//!   to load modules once and take typed arguments.
//! - [`check_same_stream`], [`check_same_context`]: the launch-side checks that keep an
//!   argument's use ordered with its allocation's lifetime.
//! - [`extent`], [`requires`]: what a checked `#[kernel]` launch runs first (declared extents against the
//!   arguments' lengths, and no written argument overlapping another).
//! - `gemm` (cargo feature `gemm`): dense matrix products through cuBLAS, loaded at run time:
//!   row-major `Gemm`s and the `Blas` handle that issues or captures them.
//! - `nccl` (cargo feature `nccl`): multi-GPU collectives over NCCL, loaded at run time: the
//!   torchrun-style `Bootstrap`, the `Communicator` and its capturable collectives.
//! - [`Error`]: one typed error for everything, its variants the domains, each a nested enum
//!   to match as a group: [`SetupError`] (no driver or device), [`ModuleError`] (loading
//!   kernels), [`LaunchError`] (a launch kgraph refused: nothing ran), [`MemoryError`]
//!   (lengths, sizes, indices), [`GraphError`] (capture, build, replay, update) and, with the
//!   `nccl` feature, `NcclError`; driver failures are [`Error::Driver`] and
//!   [`Error::LaunchFailed`] with the driver's error as their `source()`, and an error inside a
//!   graph struct's step is [`Error::InGraph`] wrapping the error that stopped it.
//!
//! `docs/safety.md` lists every `unsafe` contract of this API and how the safe part upholds
//! the rest.

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

// The crate is folders by domain over one driver layer; `tests/module_layers.rs` holds the
// table of which folder may use which and checks it against these sources and
// docs/architecture.md. Only `driver` (and `nccl::sys`, NCCL's C API) calls raw C functions.
mod capture_guard;
mod context;
mod driver;
mod error;
#[cfg(feature = "gemm")]
pub mod gemm;
mod graph;
mod launch;
mod memory;
#[cfg(feature = "nccl")]
pub mod nccl;
pub mod nvtx;
pub mod resident;

// Public paths predate the folders (generated code names them): kept as they were.
pub use graph::{control, tune};
pub use launch::{extent, reload, requires};
pub use memory::layout;

pub use context::{Context, Stream};
#[cfg(feature = "gemm")]
pub use error::GemmError;
#[cfg(feature = "nccl")]
pub use error::NcclError;
pub use error::{Error, GraphError, LaunchError, MemoryError, ModuleError, Result, SetupError, WaitError};
pub use graph::build::{ConditionHandle, Conditional, Dep, EdgeKind, GraphBuilder, NodeRef};
pub use graph::capture::Graph;
pub use graph::captured::CapturedGraph;
pub use graph::issue::{issue_kernel, memcpy_async, memset_async, Issue, Issued};
pub use graph::profile::{Profile, ProfileRow};
pub use launch::args::{check_same_context, check_same_stream, DeviceIn, DeviceOut};
pub use launch::config::{
    __check_capture, check_block, check_pdl, config_for, config_rows, launch_ex, DynamicSharedLimit, LaunchOptions,
    DEFAULT_BLOCK,
};
pub use launch::module::{check_param_sizes, KernelSource, ModuleCache};
pub use launch::pinned_ptr::{PinnedMutPtr, PinnedPtr};
pub use layout::DeviceStruct;
#[doc(hidden)]
pub use memory::arena::{Arena as __Arena, ArenaSlice as __ArenaSlice};
pub use memory::buffer::{DeviceBuffer, DeviceView, DeviceViewMut};
pub use memory::device::Device;
pub use memory::green::SmSplit;
pub use memory::mapped::{MappedBuffer, PinnedSlot};
pub use memory::pod::{zeroed, Bool, DeviceValue, Pod};
pub use memory::slot_bus::SlotBus;
pub use memory::vector::*;
#[cfg(feature = "nccl")]
pub use nccl::group::Group as NcclGroup;

/// `half::f16` and `half::bf16`, the Rust side of CUDA's `__half` and `__nv_bfloat16`.
pub use half::{self, bf16, f16};

pub use bytemuck;
pub use cudarc;
pub use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, CudaView, CudaViewMut, LaunchConfig,
};
