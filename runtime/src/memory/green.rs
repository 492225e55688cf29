//! SM partitions through green contexts (CUDA 12.4+): [`Device::split_sms`] splits a device's
//! SMs into a reserved set and the rest, each a green context behind a full [`Device`], so work
//! issued on one cannot run on the other's SMs (a resident kernel on the reserved set keeps its
//! SMs while a training graph fills the rest).
//!
//! # Lifetime: a split lasts for the process
//! cudarc wraps a green context's `CUcontext` as a non-primary `CudaContext`, whose `Drop`
//! calls `cuCtxDestroy`, which is not how a green context ends (`cuGreenCtxDestroy` is). So
//! kgraph keeps one strong reference to each such `CudaContext` forever (leaked on purpose):
//! its `Drop` never runs, and neither the green context nor anything made in it (streams,
//! memory, modules) can outlive the context they belong to. Green contexts are never destroyed:
//! each split creates two more, which live until the process exits. Memory is shared with the
//! device's primary context (a green context retains it), so a buffer allocated through either
//! Device of a split is device memory of the same GPU; kgraph's stream checks still refuse a
//! buffer owned by another Device's stream, as between any two Devices.

use std::sync::{Arc, Mutex};

use cudarc::driver::{sys, CudaContext, DriverError};

use crate::context::Stream;
use crate::driver;
use crate::driver::green::SmResource;
use crate::error::{Error, Result, SetupError};
use crate::memory::device::{require_memory_pools, Device};
use crate::memory::transfer::Staging;

/// A device split into two green contexts by [`Device::split_sms`]: `reserved` holds the SMs
/// asked for (rounded up to the hardware's granularity), `rest` every other SM.
///
/// Both are full [`Device`]s: their main streams, and every stream made by
/// [`Device::new_stream`] on them (a [`Resident`](crate::resident::Resident)'s included), run
/// only on their own SMs. Work issued through the original Device (the primary context) is not
/// confined: it can use every SM, the reserved ones included.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SmSplit {
    /// The green context holding the reserved SMs.
    pub reserved: Device,
    /// The green context holding every SM not reserved.
    pub rest: Device,
    /// How many SMs `reserved` holds: at least the number asked for.
    pub reserved_sms: u32,
    /// How many SMs `rest` holds; `reserved_sms + rest_sms` is the device's SM count.
    pub rest_sms: u32,
}

/// The device's SM resource and the rule partitions follow, checked against a request before
/// the driver is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SmGranularity {
    pub(crate) device_sms: u32,
    pub(crate) min_partition: u32,
    pub(crate) alignment: u32,
}

impl SmGranularity {
    /// The SMs a request of `asked` becomes: at least `min_partition`, then rounded up to a
    /// multiple of `alignment` (the rule `cuDevSmResourceSplitByCount` documents).
    pub(crate) fn rounded(&self, asked: u32) -> u64 {
        let at_least = u64::from(asked.max(self.min_partition));
        let align = u64::from(self.alignment.max(1));
        at_least.div_ceil(align) * align
    }

    /// The largest request whose rounded size leaves at least one SM for the rest (0: none).
    pub(crate) fn max_reservable(&self) -> u32 {
        (1..self.device_sms).rev().find(|&n| self.rounded(n) < u64::from(self.device_sms)).unwrap_or(0)
    }

    /// Whether `asked` is at least 1 and its rounded size leaves SMs for the rest.
    pub(crate) fn allows(&self, asked: u32) -> bool {
        asked != 0 && self.rounded(asked) < u64::from(self.device_sms)
    }

    fn refusal(&self, ordinal: usize, asked: u32, max_reservable: u32) -> Error {
        Error::Setup(SetupError::SmSplit {
            ordinal,
            asked,
            device_sms: self.device_sms,
            min_partition: self.min_partition,
            alignment: self.alignment,
            max_reservable,
        })
    }
}

/// [`Device::split_sms`]'s work: query the SMs, check the request, split, and make one green
/// Device per part.
pub(crate) fn split(device: &Device, reserved: u32) -> Result<SmSplit> {
    let ordinal = device.ctx.ordinal();
    let cu_device = device.ctx.cu_device();
    // SAFETY: `cu_device` is the handle cudarc got from the driver for this live context.
    let all = unsafe { driver::green::device_sm_resource(cu_device) }
        .map_err(|e| refused(ordinal, "cuDeviceGetDevResource(SM)", e))?;
    let rule =
        SmGranularity { device_sms: all.sm_count(), min_partition: all.min_partition(), alignment: all.alignment() };
    let refusal = || rule.refusal(ordinal, reserved, largest_split(&all, &rule));
    if !rule.allows(reserved) {
        return Err(refusal());
    }
    // SAFETY: `all` is the resource the driver just wrote for this device.
    let (group, remainder) = match unsafe { driver::green::split_sm_by_count(&all, reserved) } {
        Ok(parts) => parts,
        Err(DriverError(sys::CUresult::CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION)) => return Err(refusal()),
        Err(e) => return Err(refused(ordinal, "cuDevSmResourceSplitByCount", e)),
    };
    // The driver's rounding is the one that counts; a group short of the request, or no SMs left
    // over, is the same refusal as the rule's (which the driver then did not follow).
    let group = group.filter(|g| g.sm_count() >= reserved && remainder.sm_count() > 0);
    let Some(group) = group else { return Err(refusal()) };
    let made = green_device(device, &group, "reserved")
        .and_then(|reserved| Ok((reserved, green_device(device, &remainder, "rest")?)));
    // `green_device` leaves a green context current on this thread; the Device's own context
    // goes back (a green context is meant to be current on one thread at a time).
    // SAFETY: the parent's context is live (`device` holds it).
    unsafe { driver::ctx_set_current(device.ctx.cu_ctx()) }
        .map_err(|e| Error::driver("split_sms: make the device's context current again", e))?;
    let (reserved_dev, rest_dev) = made?;
    Ok(SmSplit {
        reserved: reserved_dev,
        rest: rest_dev,
        reserved_sms: group.sm_count(),
        rest_sms: remainder.sm_count(),
    })
}

/// The largest request the driver splits leaving SMs for the rest, for a refusal's message:
/// searched down from the rule's largest, since the driver's rounding is the one that counts
/// (a split by count only computes resources: nothing is created). 0 when there is none.
fn largest_split(all: &SmResource, rule: &SmGranularity) -> u32 {
    (1..=rule.max_reservable())
        .rev()
        .find(|&n| {
            // SAFETY: `all` is the resource the driver wrote for this device.
            let split = unsafe { driver::green::split_sm_by_count(all, n) };
            matches!(split, Ok((Some(group), rest)) if group.sm_count() >= n && rest.sm_count() > 0)
        })
        .unwrap_or(0)
}

/// A driver refusal during a split: the device cannot do green contexts when the driver says
/// so (`NOT_SUPPORTED`, `INVALID_RESOURCE_TYPE`), otherwise the driver's error as it is.
fn refused(ordinal: usize, op: &'static str, source: DriverError) -> Error {
    use sys::CUresult::{CUDA_ERROR_INVALID_RESOURCE_TYPE, CUDA_ERROR_NOT_SUPPORTED};
    match source.0 {
        CUDA_ERROR_NOT_SUPPORTED | CUDA_ERROR_INVALID_RESOURCE_TYPE => {
            Error::Setup(SetupError::NoGreenContexts { ordinal, op, source })
        }
        _ => Error::driver(format!("split_sms on device {ordinal}: {op}"), source),
    }
}

/// A green context holding `resource`'s SMs, as a kgraph [`Device`] with its own staging and a
/// main stream made in the green context.
fn green_device(parent: &Device, resource: &SmResource, role: &str) -> Result<Device> {
    let ordinal = parent.ctx.ordinal();
    let cu_device = parent.ctx.cu_device();
    let sms = resource.sm_count();
    let what = |step: &str| format!("split_sms: {step} for the {role} SMs ({sms}) of device {ordinal}");
    // SAFETY: `resource` is the driver's split of this device's SM resource; `cu_device` is
    // its handle. The green context is never destroyed (module docs).
    let green = unsafe { driver::green::green_ctx_create(resource, cu_device) }
        .map_err(|e| refused(ordinal, "cuGreenCtxCreate", e))?;
    // SAFETY: `green` was just created and is never destroyed.
    let cu_ctx =
        unsafe { driver::green::ctx_from_green_ctx(green) }.map_err(|e| Error::driver(what("cuCtxFromGreenCtx"), e))?;
    // cudarc's constructor makes the context current and would drop (so `cuCtxDestroy`) its
    // `Arc` if that failed; made current here first, its bind finds it current already.
    // SAFETY: `cu_ctx` stands for the live green context.
    unsafe { driver::ctx_set_current(cu_ctx) }.map_err(|e| Error::driver(what("cuCtxSetCurrent"), e))?;
    // SAFETY: `cu_ctx` is a valid context of `cu_device` (the green context's), never destroyed
    // or released by kgraph; the strong reference forgotten below keeps cudarc's `Drop` (its
    // `cuCtxDestroy`) from ever running.
    let ctx = unsafe { CudaContext::from_raw_context(ordinal, cu_device, cu_ctx) }
        .map_err(|e| Error::driver(what("wrap the green context"), e))?;
    std::mem::forget(Arc::clone(&ctx));
    require_memory_pools(&ctx, ordinal)?;
    // SAFETY: nothing has been allocated in this context yet (as in `Device::new`).
    unsafe { ctx.disable_event_tracking() };
    // `cuStreamCreate` with the green context current makes a stream of the green context
    // (`cuStreamGetGreenCtx` returns it), owned and destroyed by cudarc like any other stream;
    // `Device::new_stream` makes its further streams the same way.
    let stream = ctx.new_stream().map_err(|e| Error::driver(what("create the main stream"), e))?;
    Ok(Device { ctx, stream, staging: Arc::new(Mutex::new(Staging::default())) })
}

impl Stream {
    /// How many SMs work issued on this stream can run on: the SMs of its green context for a
    /// stream of a [`SmSplit`]'s Device (`cuStreamGetGreenCtx`), every SM of the device
    /// otherwise.
    pub fn sm_count(&self) -> Result<u32> {
        let ctx = self.context().inner();
        // SAFETY: the context is live (the stream holds it); made current so that the answer
        // for a null stream is the stream's context's.
        unsafe { driver::ctx_set_current(ctx.cu_ctx()) }.map_err(|e| Error::driver("Stream::sm_count", e))?;
        // SAFETY: the stream is live (`self` holds it).
        let green = unsafe { driver::green::stream_green_ctx(self.cu_stream()) }
            .map_err(|e| Error::driver("Stream::sm_count: cuStreamGetGreenCtx", e))?;
        let resource = if green.is_null() {
            // SAFETY: the device handle of a live context.
            unsafe { driver::green::device_sm_resource(ctx.cu_device()) }
        } else {
            // SAFETY: the stream's green context is live while the stream is (kgraph never
            // destroys one).
            unsafe { driver::green::green_ctx_sm_resource(green) }
        };
        resource.map(|r| r.sm_count()).map_err(|e| Error::driver("Stream::sm_count: query the SM resource", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H200: SmGranularity = SmGranularity { device_sms: 132, min_partition: 8, alignment: 8 };

    #[test]
    fn requests_round_up_to_the_partition_rule() {
        assert_eq!(H200.rounded(1), 8);
        assert_eq!(H200.rounded(8), 8);
        assert_eq!(H200.rounded(9), 16);
        let ampere = SmGranularity { device_sms: 108, min_partition: 4, alignment: 2 };
        assert_eq!(ampere.rounded(5), 6);
        assert_eq!(ampere.rounded(3), 4);
    }

    #[test]
    fn zero_and_too_many_are_refused_with_the_largest_valid_request() {
        assert_eq!(H200.max_reservable(), 128);
        for asked in [0, 129, 132, 133, u32::MAX] {
            assert!(!H200.allows(asked), "{asked}");
        }
        for asked in [1, 8, 9, 127, 128] {
            assert!(H200.allows(asked), "{asked}");
        }
        match H200.refusal(3, 129, H200.max_reservable()) {
            Error::Setup(SetupError::SmSplit {
                ordinal: 3, asked: 129, device_sms: 132, max_reservable: 128, ..
            }) => {}
            other => panic!("{other:?}"),
        }
        let text = H200.refusal(0, 0, 128).to_string();
        assert!(text.contains("cannot reserve 0 of device 0's 132 SMs") && text.contains("ask for 1 to 128"), "{text}");
    }

    #[test]
    fn a_device_too_small_to_split_says_so() {
        let tiny = SmGranularity { device_sms: 8, min_partition: 8, alignment: 8 };
        assert_eq!(tiny.max_reservable(), 0);
        assert!(!tiny.allows(1));
    }
}
