//! Streams: capture status and id, ending a capture, query and synchronize.

use cudarc::driver::{result, sys, DriverError};

/// `cuStreamIsCapturing`: the capture status of `stream` (the one query of a launch's capture
/// check when the stream is not capturing).
///
/// # Safety
/// `stream` is a live stream of the current context (or the null stream).
#[inline]
pub(crate) unsafe fn is_capturing(stream: sys::CUstream) -> Result<sys::CUstreamCaptureStatus, DriverError> {
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    // SAFETY: `status` is a valid out-pointer; `stream` as the caller promises.
    unsafe { sys::cuStreamIsCapturing(stream, &mut status) }.result()?;
    Ok(status)
}

/// `cuStreamGetCaptureInfo` (CUDA 12.3's `_v3`): the capture status of `stream` and its capture
/// id (defined only while the capture is active). The graph, dependency, edge-data and count
/// outputs are not asked for.
///
/// # Safety
/// As [`is_capturing`].
#[inline]
pub(crate) unsafe fn capture_info(stream: sys::CUstream) -> Result<(sys::CUstreamCaptureStatus, u64), DriverError> {
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    let mut id: sys::cuuint64_t = 0;
    // SAFETY: `status` and `id` are valid out-pointers; the optional outputs are null;
    // `stream` as the caller promises.
    unsafe {
        sys::cuStreamGetCaptureInfo_v3(
            stream,
            &mut status,
            &mut id,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    }
    .result()?;
    Ok((status, id))
}

/// `cuStreamEndCapture`: the captured graph (null when the driver hands back none), owned by the
/// caller from here on.
///
/// # Safety
/// `stream` is a live stream of the current context; a capture this thread began on it, if any,
/// is ended (an invalidated or absent capture is an error, with no other effect).
#[inline]
pub(crate) unsafe fn end_capture(stream: sys::CUstream) -> Result<sys::CUgraph, DriverError> {
    // SAFETY: the caller's promise on `stream`.
    unsafe { result::stream::end_capture(stream) }
}

/// `cuStreamQuery`: whether `stream`'s work is done (`CUDA_ERROR_NOT_READY` when not); on a
/// capturing stream the query invalidates the capture.
///
/// # Safety
/// `stream` is a live stream of the current context.
#[inline]
pub(crate) unsafe fn query(stream: sys::CUstream) -> Result<(), DriverError> {
    // SAFETY: the caller's promise on `stream`.
    unsafe { sys::cuStreamQuery(stream) }.result()
}

/// `cuStreamSynchronize`: waits for `stream`'s work.
///
/// # Safety
/// `stream` is a live stream of the current context.
#[inline]
pub(crate) unsafe fn synchronize(stream: sys::CUstream) -> Result<(), DriverError> {
    // SAFETY: the caller's promise on `stream`.
    unsafe { result::stream::synchronize(stream) }
}
