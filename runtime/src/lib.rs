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
//! - [`KernelSource`], [`ModuleCache`], [`DeviceIn`]/[`DeviceOut`]: what `#[kernel]` bindings use
//!   to load modules once and take typed arguments.
//! - [`check_same_stream`], [`check_same_context`]: the launch-side checks that keep an
//!   argument's use ordered with its allocation's lifetime.
//! - [`extent`]: what a checked `#[kernel]` launch runs first (declared extents against the
//!   arguments' lengths, and no written argument overlapping another).
//! - `nccl` (cargo feature `nccl`): multi-GPU collectives over NCCL, loaded at run time: the
//!   torchrun-style `Bootstrap`, the `Communicator` and its capturable collectives.
//! - [`Error`]: one typed error for everything.
//!
//! `docs/safety.md` lists every `unsafe` contract of this API and how the safe part upholds
//! the rest.

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

// Layered like cudarc's sys -> result -> safe; a module uses only those above it in this list
// (tests/module_layers.rs checks there is no cycle):
// error, pod; context, capture_guard, extent (error); layout (pod); kernel (context, error);
// buffer (context, error, kernel); launch, graph (capture_guard, context, error); graph_build
// (context, error, graph); graph_update (error, graph, graph_build); pinned (error); transfer
// (context, error, pinned); device (buffer, context, error, kernel, pod, transfer); mapped
// (device, error, kernel, pinned, pod); slot_bus (buffer, context, device, error, kernel,
// mapped); with the `nccl` feature: bootstrap, collective, nccl_sys (error, pod); nccl
// (bootstrap, capture_guard, collective, context, device, error, kernel, nccl_sys).
#[cfg(feature = "nccl")]
mod bootstrap;
mod buffer;
mod capture_guard;
mod captured;
#[cfg(feature = "nccl")]
mod collective;
mod context;
pub mod control;
mod device;
mod error;
pub mod extent;
mod graph;
mod graph_build;
mod graph_update;
mod issue;
mod kernel;
mod launch;
pub mod layout;
mod mapped;
mod module_registry;
#[cfg(feature = "nccl")]
pub mod nccl;
#[cfg(feature = "nccl")]
mod nccl_capture;
#[cfg(feature = "nccl")]
mod nccl_group;
#[cfg(feature = "nccl")]
mod nccl_sys;
pub mod nvtx;
mod pinned;
mod pod;
mod profile;
pub mod reload;
mod slot_bus;
mod transfer;
pub mod tune;
mod vector;

pub use buffer::{DeviceBuffer, DeviceView, DeviceViewMut};
pub use captured::CapturedGraph;
pub use context::{Context, Stream};
pub use device::Device;
pub use error::{Error, Result};
pub use graph::Graph;
pub use graph_build::{ConditionHandle, Conditional, Dep, EdgeKind, GraphBuilder, NodeRef};
pub use issue::{issue_kernel, memcpy_async, memset_async, Issue, Issued};
pub use kernel::{
    check_param_sizes, check_same_context, check_same_stream, DeviceIn, DeviceOut, KernelSource, ModuleCache,
    PinnedMutPtr, PinnedPtr,
};
pub use launch::{
    __check_capture, check_block, check_pdl, config_for, launch_ex, DynamicSharedLimit, LaunchOptions, DEFAULT_BLOCK,
};
pub use layout::DeviceStruct;
pub use mapped::{MappedBuffer, PinnedSlot};
#[cfg(feature = "nccl")]
pub use nccl_group::Group as NcclGroup;
pub use pod::Pod;
pub use profile::{Profile, ProfileRow};
pub use slot_bus::SlotBus;
pub use vector::*;

/// `half::f16` and `half::bf16`, the Rust side of CUDA's `__half` and `__nv_bfloat16`.
pub use half::{self, bf16, f16};

pub use bytemuck;
pub use cudarc;
pub use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, CudaView, CudaViewMut, LaunchConfig,
};
