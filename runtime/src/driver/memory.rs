//! Memory: pinned host allocations and their device addresses, copies and memsets on a stream.

use std::ffi::c_void;

use cudarc::driver::{result, sys, DriverError};

/// `cuMemHostAlloc`: `bytes` of pinned host memory with `flags` (uninitialised).
///
/// # Safety
/// A context is current; the memory is initialised before it is read, and freed with
/// [`free_host`] exactly once.
#[inline]
pub(crate) unsafe fn malloc_host(bytes: usize, flags: u32) -> Result<*mut c_void, DriverError> {
    // SAFETY: the caller's promise.
    unsafe { result::malloc_host(bytes, flags) }
}

/// `cuMemFreeHost`.
///
/// # Safety
/// `host` came from [`malloc_host`], is freed once, and no device work still uses it.
#[inline]
pub(crate) unsafe fn free_host(host: *mut c_void) -> Result<(), DriverError> {
    // SAFETY: the caller's promise.
    unsafe { result::free_host(host) }
}

/// `cuMemHostGetDevicePointer`: the device address of mapped pinned `host` memory.
///
/// # Safety
/// `host` came from [`malloc_host`] with `CU_MEMHOSTALLOC_DEVICEMAP` and is live; its context
/// is current.
#[inline]
pub(crate) unsafe fn host_device_pointer(host: *mut c_void) -> Result<sys::CUdeviceptr, DriverError> {
    let mut device: sys::CUdeviceptr = 0;
    // SAFETY: `device` is a valid out-pointer; flags must be 0; `host` as the caller promises.
    unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, host, 0) }.result()?;
    Ok(device)
}

/// `cuMemcpyDtoDAsync`: `bytes` from `src` to `dst` on `stream`.
///
/// # Safety
/// Both are live device-accessible allocations of at least `bytes` bytes in the current
/// context, not overlapping, ordered with `stream` (live, of that context).
#[inline]
pub(crate) unsafe fn memcpy_dtod_async(
    dst: sys::CUdeviceptr,
    src: sys::CUdeviceptr,
    bytes: usize,
    stream: sys::CUstream,
) -> Result<(), DriverError> {
    // SAFETY: the caller's promise.
    unsafe { result::memcpy_dtod_async(dst, src, bytes, stream) }
}

/// `cuMemcpyAsync`: `bytes` from `src` to `dst` on `stream`, unified addressing resolving the
/// kinds of both addresses.
///
/// # Safety
/// As [`memcpy_dtod_async`], for device or mapped pinned addresses.
#[inline]
pub(crate) unsafe fn memcpy_async(
    dst: sys::CUdeviceptr,
    src: sys::CUdeviceptr,
    bytes: usize,
    stream: sys::CUstream,
) -> Result<(), DriverError> {
    // SAFETY: the caller's promise.
    unsafe { sys::cuMemcpyAsync(dst, src, bytes, stream) }.result()
}

/// `cuMemsetD8Async`: `count` bytes at `dst` set to `value` on `stream`.
///
/// # Safety
/// `dst` holds at least `count` bytes, ordered with `stream` (live, of the current context).
#[inline]
pub(crate) unsafe fn memset_d8_async(
    dst: sys::CUdeviceptr,
    value: u8,
    count: usize,
    stream: sys::CUstream,
) -> Result<(), DriverError> {
    // SAFETY: the caller's promise.
    unsafe { sys::cuMemsetD8Async(dst, value, count, stream) }.result()
}

/// `cuMemsetD16Async`: `count` 2-byte words at `dst` set to `value` on `stream`.
///
/// # Safety
/// As [`memset_d8_async`], for `count * 2` bytes aligned to 2.
#[inline]
pub(crate) unsafe fn memset_d16_async(
    dst: sys::CUdeviceptr,
    value: u16,
    count: usize,
    stream: sys::CUstream,
) -> Result<(), DriverError> {
    // SAFETY: the caller's promise.
    unsafe { sys::cuMemsetD16Async(dst, value, count, stream) }.result()
}

/// `cuMemsetD32Async`: `count` 4-byte words at `dst` set to `value` on `stream`.
///
/// # Safety
/// As [`memset_d8_async`], for `count * 4` bytes aligned to 4.
#[inline]
pub(crate) unsafe fn memset_d32_async(
    dst: sys::CUdeviceptr,
    value: u32,
    count: usize,
    stream: sys::CUstream,
) -> Result<(), DriverError> {
    // SAFETY: the caller's promise.
    unsafe { sys::cuMemsetD32Async(dst, value, count, stream) }.result()
}
