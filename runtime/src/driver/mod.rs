//! The driver layer: every call into the CUDA driver (`cudarc::driver::sys`'s functions and
//! cudarc's `result` wrappers of them) and the NVRTC/driver library probes, each a thin
//! `pub(crate) unsafe fn` with a `# Safety` section, as cudarc's own `result.rs` is. Safe code
//! elsewhere calls these inside `unsafe {}` with a `// SAFETY:` comment that discharges the
//! section; nothing outside this folder calls a driver function (NCCL's C API has its own
//! layer, `nccl::sys`).
//!
//! The rule (checked by `tests/module_layers.rs`): outside `driver/`, code may *name* `sys`
//! types, enums and constants (`sys::CUdeviceptr`, `sys::CUgraph`, ...: the public API hands
//! them out), but never call a `sys::cu*` function or a `cudarc::driver::result` function.
//! The wrappers add no work: each is `#[inline]`, converts the status with `CUresult::result`
//! and returns the out-parameters it was given, as the call sites did before.

use cudarc::driver::{result, sys, DriverError};

pub(crate) mod graph;
pub(crate) mod green;
pub(crate) mod launch;
pub(crate) mod memory;
pub(crate) mod stream;

/// Whether libcuda can be loaded (the loader is asked; nothing in it is called).
///
/// # Safety
/// None beyond cudarc's: the probe may run any time. `unsafe` because cudarc declares it so.
#[inline]
pub(crate) unsafe fn cuda_library_present() -> bool {
    // SAFETY: as the function's section: only the dynamic loader is asked.
    unsafe { sys::is_culib_present() }
}

/// Whether libnvrtc can be loaded (the loader is asked; nothing in it is called).
///
/// # Safety
/// As [`cuda_library_present`].
#[inline]
pub(crate) unsafe fn nvrtc_library_present() -> bool {
    // SAFETY: as the function's section: only the dynamic loader is asked.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// `cuDriverGetVersion`: the driver's CUDA version (e.g. 12040). Needs no `cuInit`.
///
/// # Safety
/// libcuda loads ([`cuda_library_present`]); cudarc's loader panics otherwise.
#[inline]
pub(crate) unsafe fn driver_version() -> Result<i32, DriverError> {
    let mut version = 0i32;
    // SAFETY: `version` is a valid out-pointer; the library loads (the caller's promise).
    unsafe { sys::cuDriverGetVersion(&mut version) }.result()?;
    Ok(version)
}

/// `cuCtxSetCurrent`: makes `ctx` current on this thread, directly (cudarc's `bind_to_thread`
/// would first return and clear an error stored by an earlier `Drop`).
///
/// # Safety
/// `ctx` is a live context (or null, to unbind).
#[inline]
pub(crate) unsafe fn ctx_set_current(ctx: sys::CUcontext) -> Result<(), DriverError> {
    // SAFETY: the caller's promise on `ctx`.
    unsafe { result::ctx::set_current(ctx) }
}

/// `cuCtxSynchronize` of the current context.
///
/// # Safety
/// A context is current on this thread (made so by the caller).
#[inline]
pub(crate) unsafe fn ctx_synchronize() -> Result<(), DriverError> {
    result::ctx::synchronize()
}

/// `cuCtxGetDevice`: the device of the current context.
///
/// # Safety
/// A context is current on this thread.
#[inline]
pub(crate) unsafe fn ctx_device() -> Result<sys::CUdevice, DriverError> {
    let mut device: sys::CUdevice = 0;
    // SAFETY: `device` is a valid out-pointer; a context is current (the caller's promise).
    unsafe { sys::cuCtxGetDevice(&mut device) }.result()?;
    Ok(device)
}

/// `cuDeviceGetAttribute`: one integer attribute of `device`.
///
/// # Safety
/// `device` is a handle the driver returned (e.g. by [`ctx_device`]).
#[inline]
pub(crate) unsafe fn device_attribute(
    device: sys::CUdevice,
    attribute: sys::CUdevice_attribute,
) -> Result<i32, DriverError> {
    let mut value = 0i32;
    // SAFETY: `value` is a valid out-pointer; `device` as the caller promises.
    unsafe { sys::cuDeviceGetAttribute(&mut value, attribute, device) }.result()?;
    Ok(value)
}
