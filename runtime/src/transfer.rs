//! Host <-> device transfers through mapped pinned staging.
//!
//! The one path: the host copies into mapped pinned staging memory, then an asynchronous
//! device-to-device copy (`cuMemcpyDtoDAsync`) reads the staging's device address into the
//! destination; downloads run the other way and wait. There is deliberately no plain
//! host-to-device copy in kgraph: pageable HtoD copies stage through a hidden driver buffer and
//! synchronise, and the mapped path is the one graphs and slots use anyway.

use cudarc::driver::{result, sys, CudaEvent, CudaSlice, DriverError};

use crate::device::Device;
use crate::error::{Error, Result};
use crate::kernel::{DeviceIn, DeviceOut};
use crate::mapped::MappedBuffer;
use crate::pod::Pod;

/// Smallest staging allocation, so small transfers do not reallocate as they grow.
const MIN_STAGING_BYTES: usize = 64 * 1024;

/// A device's staging buffer: grow-only mapped pinned bytes, and the event of the last copy
/// that read or wrote them (waited for before the bytes are overwritten or freed).
#[derive(Debug, Default)]
pub(crate) struct Staging {
    buffer: Option<MappedBuffer<u8>>,
    last_copy: Option<CudaEvent>,
    /// True while a recorded copy may still be using `buffer`.
    in_flight: bool,
}

impl Staging {
    /// Waits until no queued copy uses the staging bytes any more.
    fn wait_idle(&mut self, op: &str) -> Result<()> {
        if let (true, Some(event)) = (self.in_flight, self.last_copy.as_ref()) {
            event.synchronize().map_err(|e| Error::driver(format!("{op}: wait for the previous staging copy"), e))?;
        }
        self.in_flight = false;
        Ok(())
    }

    /// Idle staging of at least `bytes` bytes (grown, never shrunk), plus its event.
    fn prepare(&mut self, device: &Device, op: &str, bytes: usize) -> Result<(&mut MappedBuffer<u8>, &CudaEvent)> {
        self.wait_idle(op)?;
        let buffer = match self.buffer.take() {
            Some(buffer) if buffer.len() >= bytes => buffer,
            old => {
                // The old buffer is idle (waited above), so freeing it now is safe.
                drop(old);
                let size = bytes.checked_next_power_of_two().unwrap_or(bytes).max(MIN_STAGING_BYTES);
                MappedBuffer::new(device, size)?
            }
        };
        let event = match self.last_copy.take() {
            Some(event) => event,
            None => device.ctx.new_event(None).map_err(|e| Error::driver(format!("{op}: create staging event"), e))?,
        };
        Ok((self.buffer.insert(buffer), self.last_copy.insert(event)))
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // The staging bytes must outlive the copy that uses them; nothing to report to here.
        let _best_effort = self.wait_idle("drop staging");
    }
}

impl Device {
    /// Copies `src` into new device memory: host -> mapped pinned staging -> async DtoD copy on
    /// the main stream. Returns once `src` has been copied into staging (so `src` may be reused
    /// at once); the device copy completes in stream order.
    pub fn upload<T: Pod>(&self, src: &[T]) -> Result<CudaSlice<T>> {
        // Checked before allocating too: an allocation on a capturing stream becomes a graph node.
        self.ensure_not_capturing("upload")?;
        let mut dst = self.alloc_unset::<T>("upload", src.len())?;
        self.upload_into(src, &mut dst)?;
        Ok(dst)
    }

    /// Copies `src` into `dst` (same length) like [`Device::upload`]. Ordered on the main stream:
    /// if `dst` is used on another stream, order that stream after this one yourself.
    pub fn upload_into<T: Pod>(&self, src: &[T], dst: &mut impl DeviceOut<T>) -> Result<()> {
        check_len("upload_into", dst.elem_len(), src.len())?;
        let bytes = Error::byte_len::<T>("upload_into", src.len())?;
        if bytes == 0 {
            return Ok(());
        }
        self.ensure_not_capturing("upload_into")?;
        let mut staging = self.staging.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (buffer, event) = staging.prepare(self, "upload_into", bytes)?;
        // SAFETY: `src` holds `bytes` readable bytes; the staging buffer holds at least `bytes`
        // writable bytes, is idle (no queued copy reads it) and is a separate allocation.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr().cast::<u8>(), buffer.host_ptr(), bytes) };
        let staged = buffer.device_ptr().addr();
        self.copy_dtod("upload_into", dst.device_addr(), staged, bytes)?;
        record(event, self, "upload_into")?;
        staging.in_flight = true;
        Ok(())
    }

    /// Copies device memory into a new `Vec`: async DtoD copy into mapped pinned staging on the
    /// main stream, wait for it (and so for all work queued before it), copy out.
    pub fn download<T: Pod>(&self, src: &impl DeviceIn<T>) -> Result<Vec<T>> {
        let len = src.elem_len();
        let mut out = Vec::with_capacity(len);
        self.download_raw("download", src, out.as_mut_ptr(), len)?;
        // SAFETY: `download_raw` wrote all `len` elements (any bytes are a valid `T`, `T: Pod`),
        // within the capacity reserved above.
        unsafe { out.set_len(len) };
        Ok(out)
    }

    /// Copies `src` into `dst` (same length) like [`Device::download`]. Ordered on the main
    /// stream: if `src` is written on another stream, order this one after it yourself.
    pub fn download_into<T: Pod>(&self, src: &impl DeviceIn<T>, dst: &mut [T]) -> Result<()> {
        check_len("download_into", src.elem_len(), dst.len())?;
        self.download_raw("download_into", src, dst.as_mut_ptr(), dst.len())
    }

    /// Frees the staging buffer (after waiting for its last copy); the next transfer allocates
    /// a new one. Useful after a one-off huge transfer, since staging only grows.
    pub fn release_staging(&self) -> Result<()> {
        let mut staging = self.staging.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        staging.wait_idle("release_staging")?;
        staging.buffer = None;
        Ok(())
    }

    /// Downloads `len` elements of `src` to `dst`, which must be valid for `len` writes.
    fn download_raw<T: Pod>(&self, op: &str, src: &impl DeviceIn<T>, dst: *mut T, len: usize) -> Result<()> {
        check_len(op, src.elem_len(), len)?;
        let bytes = Error::byte_len::<T>(op, len)?;
        if bytes == 0 {
            return Ok(());
        }
        self.ensure_not_capturing(op)?;
        let mut staging = self.staging.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (buffer, event) = staging.prepare(self, op, bytes)?;
        let staged = buffer.device_ptr().addr();
        let staged_host = buffer.host_ptr();
        self.copy_dtod(op, staged, src.device_addr(), bytes)?;
        record(event, self, op)?;
        staging.in_flight = true;
        staging.wait_idle(op)?;
        // SAFETY: the copy into staging has completed (event waited), so its `bytes` bytes are
        // written and no device work touches them; `dst` is valid for `len` `T`s = `bytes` bytes
        // (caller's contract) and does not overlap the staging allocation.
        unsafe { std::ptr::copy_nonoverlapping(staged_host, dst.cast::<u8>(), bytes) };
        Ok(())
    }

    /// `cuMemcpyDtoDAsync` of `bytes` (> 0) bytes on the main stream.
    fn copy_dtod(&self, op: &str, dst: sys::CUdeviceptr, src: sys::CUdeviceptr, bytes: usize) -> Result<()> {
        self.ctx.bind_to_thread().map_err(|e| Error::driver(format!("{op}: bind context"), e))?;
        // SAFETY: both addresses are live device-accessible allocations of at least `bytes`
        // bytes in this context (a `DeviceIn`/`DeviceOut` of matching length, and the staging
        // buffer, sized by `prepare`); the stream belongs to this context.
        unsafe { result::memcpy_dtod_async(dst, src, bytes, self.stream.cu_stream()) }
            .map_err(|e| Error::driver(format!("{op}: cuMemcpyDtoDAsync of {bytes} bytes"), e))
    }
}

/// Records `event` on the device's main stream after the staging copy. Should that fail, waits
/// for the stream instead, so the staging is idle when the caller next looks at it.
fn record(event: &CudaEvent, device: &Device, op: &str) -> Result<()> {
    event.record(&device.stream).map_err(|e: DriverError| {
        let _best_effort = device.stream.synchronize();
        Error::driver(format!("{op}: record staging event"), e)
    })
}

/// [`Error::LengthMismatch`] naming `op` unless `actual == expected`.
fn check_len(op: &str, expected: usize, actual: usize) -> Result<()> {
    if expected == actual {
        Ok(())
    } else {
        Err(Error::LengthMismatch { what: op.to_string(), expected, actual })
    }
}
