//! The raw mapped pinned allocation under [`crate::MappedBuffer`] and the transfer staging: bytes
//! of page-locked host memory mapped into a context's address space, owned and freed by one
//! value. Below `device` in the module order, so the staging a `Device` holds can own one.

use std::ptr::NonNull;
use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, DriverError};

use crate::driver;
use crate::error::{Error, Result};

/// The alignment `cuMemHostAlloc` gives in practice (whole pages). CUDA documents no alignment
/// for it, so [`crate::MappedBuffer`] checks the one its element type needs on every allocation.
pub(crate) const PAGE_ALIGN: usize = 4096;

/// `bytes` (> 0) zeroed bytes from `cuMemHostAlloc` with `DEVICEMAP | PORTABLE`, with their
/// device address; freed on drop.
pub(crate) struct PinnedAlloc {
    host: NonNull<u8>,
    device: sys::CUdeviceptr,
    bytes: usize,
    /// Keeps the context alive and current for `cuMemFreeHost`.
    ctx: Arc<CudaContext>,
}

// SAFETY: the value uniquely owns its allocation (no aliasing handle exists besides the device
// address, which its owners only hand to the device under their own contracts). PORTABLE pinned
// memory is valid in every context and on every thread, and `Drop` makes the context current on
// whichever thread drops it, so moving the owner to another thread is sound.
unsafe impl Send for PinnedAlloc {}
// SAFETY: through `&PinnedAlloc` only the addresses can be read; writing through them is up to
// the owner's own (documented) synchronisation.
unsafe impl Sync for PinnedAlloc {}

impl PinnedAlloc {
    /// Allocates `bytes` (> 0) zeroed bytes in `ctx`; errors name `what`.
    pub(crate) fn new(ctx: &Arc<CudaContext>, what: &str, bytes: usize) -> Result<Self> {
        debug_assert!(bytes > 0, "{what}: a pinned allocation of zero bytes");
        ctx.bind_to_thread().map_err(|e| Error::driver(format!("{what}: bind context"), e))?;
        let flags = sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE;
        // SAFETY: the context is current; the memory is zeroed below before anything reads it.
        let raw = unsafe { driver::memory::malloc_host(bytes, flags) }
            .map_err(|e| Error::driver(format!("{what}: cuMemHostAlloc of {bytes} bytes"), e))?;
        let Some(host) = NonNull::new(raw.cast::<u8>()) else {
            let oom = DriverError(sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY);
            return Err(Error::driver(format!("{what}: cuMemHostAlloc of {bytes} bytes gave null"), oom));
        };
        // Owns the allocation from here on, so every early return below frees it.
        let mut alloc = PinnedAlloc { host, device: 0, bytes, ctx: ctx.clone() };
        // SAFETY: `host` points to `bytes` writable bytes just allocated.
        unsafe { std::ptr::write_bytes(host.as_ptr(), 0, bytes) };
        // SAFETY: `raw` came from cuMemHostAlloc with DEVICEMAP in the current context.
        alloc.device = unsafe { driver::memory::host_device_pointer(raw) }
            .map_err(|e| Error::driver(format!("{what}: cuMemHostGetDevicePointer"), e))?;
        Ok(alloc)
    }

    /// Size in bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The host address of byte 0 (page-aligned).
    pub(crate) fn host_ptr(&self) -> NonNull<u8> {
        self.host
    }

    /// The device address of byte 0.
    pub(crate) fn device_addr(&self) -> sys::CUdeviceptr {
        self.device
    }

    /// The context the memory was allocated in (and is freed in).
    pub(crate) fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }
}

impl Drop for PinnedAlloc {
    fn drop(&mut self) {
        // Made current through the driver: cudarc's `bind_to_thread` first returns (and clears)
        // an error an unrelated drop stored, without binding, and `cuMemFreeHost` would then run
        // in whatever context this thread has current (none on a thread the owner was sent to).
        // SAFETY: the context is live (`self.ctx` holds it); making it current has no other effect.
        self.ctx.record_err(unsafe { driver::ctx_set_current(self.ctx.cu_ctx()) });
        // SAFETY: `host` came from cuMemHostAlloc and is freed exactly once, here; the owners
        // waited for every device use of it before dropping it (the staging for its last copy,
        // `MappedBuffer`'s `Drop` for the context's work once a device pointer was lent).
        self.ctx.record_err(unsafe { driver::memory::free_host(self.host.as_ptr().cast()) });
    }
}

impl std::fmt::Debug for PinnedAlloc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedAlloc")
            .field("bytes", &self.bytes)
            .field("device", &format_args!("{:#x}", self.device))
            .finish()
    }
}
