//! kgraph: typed Rust bindings and CUDA Graphs for your own CUDA kernels.
//!
//! `#[kernel("x.cu")]` binds one kernel of your crate's `kernels/` folder, `#[kernels]` makes a
//! registry module of them, and `graph!("graphs/x.toml")` turns a TOML graph spec into a graph
//! struct. Your crate's `build.rs` compiles its kernels with `kgraph_build`; this crate
//! compiles none.
//!
//! # What is where
//!
//! - At the root, what a program using bindings and graphs holds: the macros, [`Device`],
//!   [`Stream`], [`Context`], device buffers ([`DeviceBuffer`] and its views), mapped pinned
//!   memory ([`MappedBuffer`], [`PinnedSlot`] and the [`PinnedPtr`]/[`PinnedMutPtr`] kernels
//!   read through), [`SlotBus`], [`Graph`], [`SmSplit`] (a device's SMs split into two green
//!   contexts by [`Device::split_sms`]), kernel arguments ([`DeviceIn`], [`DeviceOut`],
//!   [`Pod`], [`DeviceStruct`], the element types [`f16`](struct@f16), [`bf16`] and CUDA's
//!   vector types), launch settings ([`LaunchConfig`], [`LaunchOptions`]), and [`Error`] with its nested
//!   enums ([`LaunchError`], [`GraphError`], ...).
//! - [`expert`]: building and editing graphs node by node ([`expert::GraphBuilder`],
//!   [`expert::Conditional`], [`expert::CapturedGraph`], ...), loading kernel modules yourself
//!   ([`expert::ModuleCache`], [`expert::KernelSource`]), per-node timings ([`expert::Profile`]),
//!   block-size tuning, NVTX ranges and hot reload.
//! - `nccl` (cargo feature `nccl`): multi-GPU collectives over NCCL, loaded at run time.
//! - `gemm` (cargo feature `gemm`): dense matrix products through cuBLAS, loaded at run time
//!   (graph specs' `gemm` nodes).
//! - [`gradcheck`], [`rng`]: helpers for testing kernels on a GPU.
//! - [`cudarc`]: the driver bindings kgraph is built on, for `unsafe` interop only (kgraph's
//!   API does not hand out cudarc's types; their safe API assumes the event tracking kgraph
//!   turns off). [`bytemuck`]: for deriving `Pod` on a [`DeviceStruct`] twin without a
//!   dependency of your own.
//!
//! What the generated code needs and nothing else (argument-extent checks, launch checks,
//! layout assertions, node issuing) lives in a hidden module that is not part of the API.
//!
//! # The runtime, in brief
//! A [`Device`] holds one GPU's context and stream; allocations are [`DeviceBuffer`]s, and
//! transfers go through mapped pinned staging. Compiled by `cargo test --doc`; it needs a GPU to
//! run:
//!
//! ```no_run
//! # fn main() -> kgraph::Result<()> {
//! let dev = kgraph::Device::new(0)?;
//! let x: kgraph::DeviceBuffer<f32> = dev.upload(&[1.0, 2.0, 3.0])?;
//! let mut y = dev.alloc_zeros::<f32>(3)?;
//! dev.upload_into(&[4.0, 5.0, 6.0], &mut y)?; // lengths must match, else a typed error
//! assert_eq!(dev.download(&x)?, [1.0, 2.0, 3.0]);
//! # Ok(()) }
//! ```
//!
//! # A C struct as a kernel argument
//! The Rust twin of a C struct is `#[repr(C)]` with the same fields in the same order, C's
//! implicit padding spelled out (bytemuck refuses padding), and derives
//! [`DeviceStruct`](derive@DeviceStruct); `#[kernel]` then checks its size, alignment and every
//! field's offset against the C struct (the repository's `docs/kernels.md` has the type table):
//!
//! ```
//! // C: struct __align__(16) Params { float a; int flags; double b; float w[4]; short tag; };
//! #[derive(Clone, Copy, kgraph::bytemuck::Pod, kgraph::bytemuck::Zeroable, kgraph::DeviceStruct)]
//! #[bytemuck(crate = "kgraph::bytemuck")] // no bytemuck dependency of your own
//! #[repr(C, align(16))]
//! pub struct Params {
//!     pub a: f32,
//!     pub flags: i32,
//!     pub b: f64,
//!     pub w: [f32; 4],
//!     pub tag: i16,
//!     pub _pad: [u8; 14],
//! }
//! assert_eq!(std::mem::size_of::<Params>(), 48);
//! ```

/// `#[kernel]` binds one CUDA kernel; `#[kernels]` makes a registry module of them;
/// `graph!` turns a TOML graph spec into a graph struct; `#[derive(DeviceStruct)]` makes a
/// `#[repr(C)]` struct a kernel argument.
pub use kgraph_macros::{graph, kernel, kernels, DeviceStruct};

// Devices, streams, memory and graphs.
pub use kgraph_runtime::{
    Context, Device, DeviceBuffer, DeviceView, DeviceViewMut, Graph, MappedBuffer, PinnedMutPtr, PinnedPtr, PinnedSlot,
    SlotBus, SmSplit, Stream,
};
// Kernel arguments and launches.
pub use kgraph_runtime::{
    config_rows, Bool, DeviceIn, DeviceOut, DeviceStruct, DeviceValue, LaunchConfig, LaunchOptions, Pod,
};
// Element types: `half`'s 16-bit floats and CUDA's vector types, with CUDA's alignment.
pub use kgraph_runtime::{
    bf16, f16, Bf16x2, Char2, Char4, Double2, Double3, Float2, Float3, Float4, Half2, Int2, Int3, Int4, LongLong2,
    Short2, Short4, UChar2, UChar4, UInt2, UInt3, UInt4, ULongLong2, UShort2, UShort4,
};
// Errors: `Error` and the nested enum of each of its domains.
#[cfg(feature = "gemm")]
pub use kgraph_runtime::GemmError;
#[cfg(feature = "nccl")]
pub use kgraph_runtime::NcclError;
pub use kgraph_runtime::{Error, GraphError, LaunchError, MemoryError, ModuleError, Result, SetupError, WaitError};

#[cfg(feature = "gemm")]
pub use kgraph_runtime::gemm;
#[cfg(feature = "nccl")]
pub use kgraph_runtime::nccl;

pub use kgraph_runtime::{bytemuck, cudarc};

/// Resident kernels (a persistent kernel taking one step per doorbell) and the done-word wait
/// of graph replays: [`resident::Resident`], [`resident::DoneWait`], [`resident::SpinPolicy`].
pub use kgraph_runtime::resident;

pub mod gradcheck;
pub mod rng;

/// APIs for when the generated bindings and graph structs are not enough: graphs built or
/// edited node by node, kernel modules loaded by hand, profiling, block-size tuning, NVTX
/// ranges and hot reload.
pub mod expert {
    #[cfg(feature = "nccl")]
    pub use kgraph_runtime::NcclGroup;
    pub use kgraph_runtime::{check_param_sizes, KernelSource, ModuleCache};
    pub use kgraph_runtime::{nvtx, reload, tune};
    pub use kgraph_runtime::{
        CapturedGraph, ConditionHandle, Conditional, Dep, EdgeKind, GraphBuilder, Issue, Issued, NodeRef,
    };
    pub use kgraph_runtime::{Profile, ProfileRow};
}

/// What code generated by kgraph's macros names and nothing else; not part of the API (no
/// semver promise). Generated code names public items by their public path and these through
/// `::kgraph::__private`.
#[doc(hidden)]
pub mod __private {
    pub use kgraph_runtime::zeroed;
    pub use kgraph_runtime::{__Arena as Arena, __ArenaSlice as ArenaSlice};
    pub use kgraph_runtime::{
        __check_capture, check_block, check_pdl, check_same_context, check_same_stream, config_for, launch_ex,
        DynamicSharedLimit, DEFAULT_BLOCK,
    };
    pub use kgraph_runtime::{control, extent, layout, requires};
    pub use kgraph_runtime::{issue_kernel, memcpy_async, memset_async};
}
