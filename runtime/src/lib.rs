//! kgraph's runtime: the small layer over cudarc that generated bindings and graphs stand on.
//!
//! - [`Device`]: context + stream, with cudarc's per-slice event tracking off (capture-safe).
//! - [`KernelSource`], [`ModuleCache`], [`DeviceIn`]/[`DeviceOut`], [`PinnedPtr`]: what
//!   `#[kernel]` bindings use to load modules once and take typed arguments.
//! - [`Error`]: one typed error for everything.

mod device;
mod error;
mod kernel;

pub use device::Device;
pub use error::{Error, Result};
pub use kernel::{DeviceIn, DeviceOut, KernelSource, ModuleCache, PinnedPtr};

pub use cudarc;
pub use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, CudaView, CudaViewMut, LaunchConfig};
