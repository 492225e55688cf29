//! Green contexts (CUDA 12.4+): a device's SM resource, its split by count, descriptors, green
//! contexts and the `CUcontext` standing for one, and which green context a stream runs in.
//!
//! `CUdevResource` is a C struct with a union; every one kgraph passes is zero-initialised and
//! written by the driver, and the union is read only through [`SmResource`], after checking
//! that the driver marked it an SM resource. (Its size is one ABI across CUDA 13.x: 13.1 moved
//! 8 of the union's 48 padding bytes into a `nextResource` pointer, which a zeroed struct sets
//! to null.)

use cudarc::driver::{sys, DriverError};

/// An SM resource (`CUdevResource` of type `CU_DEV_RESOURCE_TYPE_SM`) as the driver wrote it.
#[derive(Clone, Copy)]
pub(crate) struct SmResource {
    raw: sys::CUdevResource,
}

impl SmResource {
    /// A zeroed resource for the driver to write into (type `CU_DEV_RESOURCE_TYPE_INVALID`).
    fn empty() -> Self {
        // SAFETY: `CUdevResource` is plain C data (an enum whose 0 is `INVALID`, bytes, a union
        // of integers and bytes); all-zero is a valid value of each field.
        SmResource { raw: unsafe { std::mem::zeroed() } }
    }

    /// The SM fields, `None` unless the driver marked the resource an SM resource.
    fn sm(&self) -> Option<sys::CUdevSmResource> {
        if self.raw.type_ != sys::CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM {
            return None;
        }
        // SAFETY: the type is SM, so the driver wrote the union's `sm` member; every bit
        // pattern is a valid `CUdevSmResource` (three `c_uint`s).
        Some(unsafe { self.raw.__bindgen_anon_1.sm })
    }

    /// How many SMs the resource holds (0 for a resource the driver left empty).
    pub(crate) fn sm_count(&self) -> u32 {
        self.sm().map_or(0, |sm| sm.smCount)
    }

    /// The smallest partition the hardware makes (at least 1).
    pub(crate) fn min_partition(&self) -> u32 {
        self.sm().map_or(1, |sm| sm.minSmPartitionSize.max(1))
    }

    /// The granularity partitions are rounded up to (at least 1).
    pub(crate) fn alignment(&self) -> u32 {
        self.sm().map_or(1, |sm| sm.smCoscheduledAlignment.max(1))
    }
}

/// `cuDeviceGetDevResource(.., CU_DEV_RESOURCE_TYPE_SM)`: every SM of `device`.
///
/// # Safety
/// `device` is a handle the driver returned, after `cuInit`.
#[inline]
pub(crate) unsafe fn device_sm_resource(device: sys::CUdevice) -> Result<SmResource, DriverError> {
    let mut res = SmResource::empty();
    // SAFETY: `res.raw` is a valid out-pointer of the driver's struct size; `device` as the
    // caller promises.
    unsafe { sys::cuDeviceGetDevResource(device, &mut res.raw, sys::CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM) }
        .result()?;
    Ok(res)
}

/// `cuGreenCtxGetDevResource(.., CU_DEV_RESOURCE_TYPE_SM)`: the SMs of green context `green`.
///
/// # Safety
/// `green` is a live green context.
#[inline]
pub(crate) unsafe fn green_ctx_sm_resource(green: sys::CUgreenCtx) -> Result<SmResource, DriverError> {
    let mut res = SmResource::empty();
    // SAFETY: `res.raw` is a valid out-pointer; `green` as the caller promises.
    unsafe { sys::cuGreenCtxGetDevResource(green, &mut res.raw, sys::CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM) }
        .result()?;
    Ok(res)
}

/// `cuDevSmResourceSplitByCount` into one group of at least `min_count` SMs (rounded up by the
/// driver to the hardware's granularity) and the remainder: `(group, remainder)`, the group
/// `None` when the driver made no group (`min_count` cannot be met).
///
/// # Safety
/// `input` came from [`device_sm_resource`] (or another of the driver's resource queries).
#[inline]
pub(crate) unsafe fn split_sm_by_count(
    input: &SmResource,
    min_count: u32,
) -> Result<(Option<SmResource>, SmResource), DriverError> {
    let mut group = SmResource::empty();
    let mut remainder = SmResource::empty();
    let mut groups: std::ffi::c_uint = 1;
    // SAFETY: `group` is an array of one resource and `groups` says so; `input` is a resource
    // the driver wrote (the caller's promise) and is only read; `remainder` is a valid
    // out-pointer; no flags.
    unsafe {
        sys::cuDevSmResourceSplitByCount(&mut group.raw, &mut groups, &input.raw, &mut remainder.raw, 0, min_count)
    }
    .result()?;
    Ok(((groups == 1).then_some(group), remainder))
}

/// `cuDevResourceGenerateDesc` of one resource, then `cuGreenCtxCreate` with
/// `CU_GREEN_CTX_DEFAULT_STREAM` (required by CUDA 12.x, accepted by 13.x) on `device`.
/// The descriptor has no destroy call in the driver API.
///
/// # Safety
/// `resource` came from the driver's queries or splits of `device`'s resources; `device` is a
/// handle the driver returned. The green context is never destroyed by kgraph (see
/// `memory::green`), so the caller need not promise anything about its end.
#[inline]
pub(crate) unsafe fn green_ctx_create(
    resource: &SmResource,
    device: sys::CUdevice,
) -> Result<sys::CUgreenCtx, DriverError> {
    let mut resource = *resource;
    let mut desc: sys::CUdevResourceDesc = std::ptr::null_mut();
    // SAFETY: `desc` is a valid out-pointer; `resource` is an array of one resource the
    // driver wrote (a copy: the call takes a mutable pointer).
    unsafe { sys::cuDevResourceGenerateDesc(&mut desc, &mut resource.raw, 1) }.result()?;
    let mut green: sys::CUgreenCtx = std::ptr::null_mut();
    let flags = sys::CUgreenCtxCreate_flags::CU_GREEN_CTX_DEFAULT_STREAM as std::ffi::c_uint;
    // SAFETY: `green` is a valid out-pointer; `desc` was just generated; `device` as the
    // caller promises.
    unsafe { sys::cuGreenCtxCreate(&mut green, desc, device, flags) }.result()?;
    Ok(green)
}

/// `cuCtxFromGreenCtx`: the `CUcontext` standing for green context `green` (valid as long as
/// `green` is; it is not a context of its own and is never destroyed on its own).
///
/// # Safety
/// `green` is a live green context.
#[inline]
pub(crate) unsafe fn ctx_from_green_ctx(green: sys::CUgreenCtx) -> Result<sys::CUcontext, DriverError> {
    let mut ctx: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: `ctx` is a valid out-pointer; `green` as the caller promises.
    unsafe { sys::cuCtxFromGreenCtx(&mut ctx, green) }.result()?;
    Ok(ctx)
}

/// `cuStreamGetGreenCtx`: the green context `stream` runs in, null for a stream of a plain
/// context.
///
/// # Safety
/// `stream` is a live stream (not the null stream: its answer depends on the current context).
#[inline]
pub(crate) unsafe fn stream_green_ctx(stream: sys::CUstream) -> Result<sys::CUgreenCtx, DriverError> {
    let mut green: sys::CUgreenCtx = std::ptr::null_mut();
    // SAFETY: `green` is a valid out-pointer; `stream` as the caller promises.
    unsafe { sys::cuStreamGetGreenCtx(stream, &mut green) }.result()?;
    Ok(green)
}
