//! Host <-> device copies through mapped pinned staging: the byte-level engine under
//! [`crate::Device::upload`] and [`crate::Device::download`].
//!
//! The one path: the host copies into mapped pinned staging memory, then an asynchronous
//! device-to-device copy (`cuMemcpyDtoDAsync`) reads the staging's device address into the
//! destination; downloads run the other way and wait. There is deliberately no plain
//! host-to-device copy in kgraph: pageable HtoD copies stage through a hidden driver buffer and
//! synchronise, and the mapped path is the one graphs and slots use anyway.
//!
//! This module sits below `device`: it works on a stream and raw device addresses, so a `Device`
//! can own a [`Staging`] without the two modules importing each other.

use cudarc::driver::{sys, CudaContext, CudaEvent, CudaStream, DriverError};

use crate::context::wait_stream_raw;
use crate::driver;
use crate::error::{Error, Result};
use crate::memory::pinned::PinnedAlloc;

/// Smallest staging allocation, so small transfers do not reallocate as they grow.
const MIN_STAGING_BYTES: usize = 64 * 1024;

/// A device's staging buffer: grow-only mapped pinned bytes, and the event of the last copy
/// that read or wrote them (waited for before the bytes are overwritten or freed).
#[derive(Debug, Default)]
pub(crate) struct Staging {
    buffer: Option<PinnedAlloc>,
    last_copy: Option<CudaEvent>,
    /// True while a recorded copy may still be using `buffer`.
    in_flight: bool,
}

impl Staging {
    /// Copies `bytes` (> 0) bytes from host `src` to device address `dst`: into staging, then a
    /// `cuMemcpyDtoDAsync` on `stream`. Returns once `src` has been read; the device copy
    /// completes in stream order.
    ///
    /// # Safety
    /// `src` must be valid for `bytes` reads and `dst` must be a live device-accessible
    /// allocation of at least `bytes` bytes in the stream's context, not read or written by
    /// anything the copy could race with.
    pub(crate) unsafe fn upload(
        &mut self,
        stream: &CudaStream,
        op: &str,
        src: *const u8,
        dst: sys::CUdeviceptr,
        bytes: usize,
    ) -> Result<()> {
        let (staged_host, staged) = self.prepare(stream, op, bytes)?;
        // SAFETY: `src` holds `bytes` readable bytes (caller's contract); the staging buffer
        // holds at least `bytes` writable bytes, is idle (no queued copy reads it) and is a
        // separate allocation.
        unsafe { std::ptr::copy_nonoverlapping(src, staged_host, bytes) };
        // SAFETY: `dst` is valid for `bytes` (caller's contract), `staged` for at least `bytes`
        // (sized by `prepare`).
        unsafe { copy_dtod(stream, op, dst, staged, bytes) }?;
        self.record(stream, op)
    }

    /// Copies `bytes` (> 0) bytes from device address `src` to host `dst`: a
    /// `cuMemcpyDtoDAsync` into staging on `stream`, a wait for it (and so for all work queued
    /// before it), then a copy out.
    ///
    /// # Safety
    /// `src` must be a live device-accessible allocation of at least `bytes` bytes in the
    /// stream's context, and `dst` must be valid for `bytes` writes.
    pub(crate) unsafe fn download(
        &mut self,
        stream: &CudaStream,
        op: &str,
        src: sys::CUdeviceptr,
        dst: *mut u8,
        bytes: usize,
    ) -> Result<()> {
        let (staged_host, staged) = self.prepare(stream, op, bytes)?;
        // SAFETY: `src` is valid for `bytes` (caller's contract), `staged` for at least `bytes`
        // (sized by `prepare`).
        unsafe { copy_dtod(stream, op, staged, src, bytes) }?;
        self.record(stream, op)?;
        self.wait_idle(op)?;
        // SAFETY: the copy into staging has completed (event waited), so its `bytes` bytes are
        // written and no device work touches them; `dst` is valid for `bytes` bytes (caller's
        // contract) and does not overlap the staging allocation.
        unsafe { std::ptr::copy_nonoverlapping(staged_host, dst, bytes) };
        Ok(())
    }

    /// Frees the buffer after waiting for its last copy; the next transfer allocates anew.
    pub(crate) fn release(&mut self, op: &str) -> Result<()> {
        self.wait_idle(op)?;
        self.buffer = None;
        Ok(())
    }

    /// Waits until no queued copy uses the staging bytes any more.
    fn wait_idle(&mut self, op: &str) -> Result<()> {
        if let (true, Some(event)) = (self.in_flight, self.last_copy.as_ref()) {
            keeping_stored_err(event.context(), || event.synchronize())
                .map_err(|e| Error::driver(format!("{op}: wait for the previous staging copy"), e))?;
        }
        self.in_flight = false;
        Ok(())
    }

    /// Idle staging of at least `bytes` bytes (grown, never shrunk) and an event to record
    /// after the copy: the buffer's host and device addresses.
    fn prepare(&mut self, stream: &CudaStream, op: &str, bytes: usize) -> Result<(*mut u8, sys::CUdeviceptr)> {
        self.wait_idle(op)?;
        let ctx = stream.context();
        let buffer = match self.buffer.take() {
            Some(buffer) if buffer.bytes() >= bytes => buffer,
            old => {
                // The old buffer is idle (waited above), so freeing it now is safe.
                drop(old);
                let size = bytes.checked_next_power_of_two().unwrap_or(bytes).max(MIN_STAGING_BYTES);
                let size = Error::byte_len::<u8>("MappedBuffer::new", size)?;
                keeping_stored_err(ctx, || PinnedAlloc::new(ctx, "MappedBuffer::new", size))?
            }
        };
        if self.last_copy.is_none() {
            let event = keeping_stored_err(ctx, || ctx.new_event(None))
                .map_err(|e| Error::driver(format!("{op}: create staging event"), e))?;
            self.last_copy = Some(event);
        }
        let buffer = self.buffer.insert(buffer);
        Ok((buffer.host_ptr().as_ptr(), buffer.device_addr()))
    }

    /// Records the staging event on `stream` after a staging copy, marking the buffer in use.
    /// Should that fail, waits for the stream instead, so the staging is idle when next used.
    fn record(&mut self, stream: &CudaStream, op: &str) -> Result<()> {
        let Some(event) = self.last_copy.as_ref() else {
            // `prepare` always leaves an event; without one, the stream wait is the fallback.
            return self.wait_or_leak(stream).map_err(|e| Error::driver(format!("{op}: synchronize"), e));
        };
        match keeping_stored_err(stream.context(), || event.record(stream)) {
            Ok(()) => {
                self.in_flight = true;
                Ok(())
            }
            Err(e) => {
                let _waited_or_leaked = self.wait_or_leak(stream);
                Err(Error::driver(format!("{op}: record staging event"), e))
            }
        }
    }

    /// Waits for `stream` ([`wait_stream_raw`]). Should the wait fail, the buffer is leaked:
    /// the copy just queued may still use it, so it is neither reused nor freed.
    fn wait_or_leak(&mut self, stream: &CudaStream) -> std::result::Result<(), DriverError> {
        let waited = wait_stream_raw(stream);
        if waited.is_err() {
            std::mem::forget(self.buffer.take());
        }
        waited
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // The staging bytes must outlive the copy that uses them: should the wait fail, they
        // are leaked rather than freed under a copy that may still run.
        if self.wait_idle("drop staging").is_err() {
            std::mem::forget(self.buffer.take());
        }
    }
}

/// Runs `f` (cudarc calls on `ctx`, whose `bind_to_thread` first takes the error a `Drop`
/// stored in the context and fails with it, without doing their work) with that stored error
/// set aside and put back after: a transfer neither fails with an unrelated drop's error nor
/// clears it before [`crate::Context::check_err`] reports it.
fn keeping_stored_err<R>(ctx: &CudaContext, f: impl FnOnce() -> R) -> R {
    let stored = ctx.check_err();
    let result = f();
    ctx.record_err(stored);
    result
}

/// `cuMemcpyDtoDAsync` of `bytes` (> 0) bytes on `stream`.
///
/// # Safety
/// Both addresses must be live device-accessible allocations of at least `bytes` bytes in the
/// stream's context.
unsafe fn copy_dtod(
    stream: &CudaStream,
    op: &str,
    dst: sys::CUdeviceptr,
    src: sys::CUdeviceptr,
    bytes: usize,
) -> Result<()> {
    // Straight to the driver: cudarc's `bind_to_thread` would first return (and clear) an error
    // an unrelated earlier `Drop` stored, failing this copy and hiding that error from
    // `Context::check_err`.
    // SAFETY: the context is live (the stream holds it); making it current has no other effect.
    unsafe { driver::ctx_set_current(stream.context().cu_ctx()) }
        .map_err(|e| Error::driver(format!("{op}: bind context"), e))?;
    // SAFETY: both addresses are valid for `bytes` bytes in this context (caller's contract);
    // the stream belongs to this context.
    unsafe { driver::memory::memcpy_dtod_async(dst, src, bytes, stream.cu_stream()) }
        .map_err(|e| Error::driver(format!("{op}: cuMemcpyDtoDAsync of {bytes} bytes"), e))
}
