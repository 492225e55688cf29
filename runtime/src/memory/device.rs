//! One GPU and the stream kgraph works on: its context, allocation, and the host <-> device
//! transfers (through the staging of [`crate::memory::transfer`]).

use std::sync::{Arc, Mutex};

use cudarc::driver::{sys, CudaContext, CudaSlice, CudaStream, DriverError};

use crate::context::{wait_stream_raw, Context, Stream};
use crate::driver;
use crate::error::{driver_library_loads, Error, Result, SetupError};
use crate::launch::args::{check_same_stream, DeviceIn, DeviceOut};
use crate::memory::buffer::DeviceBuffer;
use crate::memory::green::SmSplit;
use crate::memory::pod::{Bool, DeviceValue, Pod};
use crate::memory::transfer::Staging;

/// The oldest driver kgraph runs on (`1000 * major + 10 * minor`): cudarc is built for the
/// CUDA 13.0 driver API, and its loader panics on a symbol an older driver lacks, so older
/// drivers are refused up front with [`SetupError::DriverTooOld`].
const REQUIRED_DRIVER_VERSION: i32 = 13000;

/// A CUDA context with kgraph's settings, plus its main (non-blocking) stream.
///
/// Clones share the context, the stream and the transfer staging buffer. [`Device::new`] opens
/// the device's primary context; [`Device::split_sms`] makes two Devices that each stand for a
/// green context holding part of the device's SMs.
///
/// # Event tracking is off
/// cudarc records a read and a write `CudaEvent` on every slice at every launch, to order
/// multi-stream use automatically. That costs about 1 us per launch and makes stream capture
/// fail with `CUDA_ERROR_STREAM_CAPTURE_ISOLATION` (the events belong to no capture). kgraph
/// turns it off before any allocation, so every slice allocated through a `Device` is untracked:
/// work is ordered by the stream it is issued on, and kgraph's own multi-stream code (graph
/// branches) orders itself with explicit events. A second stream therefore comes only through
/// the `unsafe` [`Device::new_stream`], whose caller orders its cross-stream uses with events,
/// as in CUDA C++; kgraph's transfers and [`crate::check_same_stream`] refuse a slice owned by
/// another stream than the one the work is issued on. The context and stream are handed out as
/// kgraph's [`Context`] and [`Stream`], and allocations as [`DeviceBuffer`]s, none of which
/// leads safe code to cudarc's API (which assumes tracking on).
#[derive(Debug, Clone)]
pub struct Device {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    /// Mapped pinned staging for [`Device::upload`]/[`Device::download`], shared by clones
    /// (they share the stream the staging copies are ordered on).
    pub(crate) staging: Arc<Mutex<Staging>>,
}

impl Device {
    /// Opens device `ordinal`. Fails with [`SetupError::NoDriver`] when libcuda cannot be loaded or
    /// initialised, [`SetupError::DriverTooOld`] when it predates CUDA 13.0, and [`SetupError::NoDevice`]
    /// when the ordinal does not exist; never panics.
    pub fn new(ordinal: usize) -> Result<Self> {
        if !driver_library_loads() {
            return Err(Error::Setup(SetupError::NoDriver {
                detail: "libcuda.so could not be loaded (no NVIDIA driver on this machine?)".into(),
            }));
        }
        // SAFETY: libcuda loads (checked above) and every driver exports cuDriverGetVersion.
        let version = match unsafe { driver::driver_version() } {
            Ok(version) => version,
            Err(DriverError(status)) => {
                return Err(Error::Setup(SetupError::NoDriver {
                    detail: format!("cuDriverGetVersion failed: {status:?}"),
                }))
            }
        };
        if version < REQUIRED_DRIVER_VERSION {
            return Err(Error::Setup(SetupError::DriverTooOld { found: version, required: REQUIRED_DRIVER_VERSION }));
        }
        let count = match CudaContext::device_count() {
            Ok(n) => n.max(0) as usize,
            Err(DriverError(sys::CUresult::CUDA_ERROR_NO_DEVICE)) => 0,
            Err(DriverError(
                code @ (sys::CUresult::CUDA_ERROR_STUB_LIBRARY
                | sys::CUresult::CUDA_ERROR_SYSTEM_NOT_READY
                | sys::CUresult::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
                | sys::CUresult::CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE),
            )) => {
                return Err(Error::Setup(SetupError::NoDriver { detail: format!("cuInit failed: {code:?}") }));
            }
            Err(e) => return Err(Error::driver("count CUDA devices", e)),
        };
        if ordinal >= count {
            return Err(Error::Setup(SetupError::NoDevice { ordinal, count }));
        }
        let ctx =
            CudaContext::new(ordinal).map_err(|e| Error::driver(format!("create context on device {ordinal}"), e))?;
        require_memory_pools(&ctx, ordinal)?;
        // SAFETY: called before this context allocates anything through kgraph, so no slice
        // mixes tracked and untracked use; kgraph orders all work by stream (see the type docs).
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().map_err(|e| Error::driver("create stream", e))?;
        Ok(Device { ctx, stream, staging: Arc::new(Mutex::new(Staging::default())) })
    }

    /// The CUDA context.
    pub fn context(&self) -> &Context {
        Context::wrap(&self.ctx)
    }

    /// kgraph's main stream on this device.
    pub fn stream(&self) -> &Stream {
        Stream::wrap(&self.stream)
    }

    /// A further stream of this device's context (for your own overlap).
    ///
    /// # Safety
    /// Event tracking is off in kgraph's context (see the type docs), so nothing orders work on
    /// this stream against other streams. The caller orders every cross-stream use of an
    /// allocation with events (`CudaEvent::record` / `CudaStream::wait`), as in CUDA C++: no
    /// allocation is used on this stream before the work that allocates or writes it on its own
    /// stream has completed, none is freed (dropped) before the work using it here has
    /// completed, and no two streams access one allocation concurrently where either writes.
    /// kgraph's checked paths ([`check_same_stream`](crate::check_same_stream), the transfers)
    /// refuse slices of another stream; the contract covers everything issued on this stream
    /// through unchecked paths (cudarc's own API, hand-written launches, graph branches).
    pub unsafe fn new_stream(&self) -> Result<Stream> {
        self.ctx.new_stream().map(Stream::own).map_err(|e| Error::driver("create stream", e))
    }

    /// Splits this device's SMs into two green contexts (CUDA 12.4+): [`SmSplit::reserved`]
    /// holds `reserved` SMs, rounded up to the hardware's partition size (8 SMs, in steps of 8,
    /// on Hopper; [`SmSplit::reserved_sms`] says how many), and [`SmSplit::rest`] every other
    /// SM. Each is a full `Device` (its own main stream and staging) whose work runs only on its
    /// SMs; so does a stream made by [`Device::new_stream`] on it, and so a
    /// [`Resident`](crate::resident::Resident) made on `reserved` keeps its SMs while work on
    /// `rest` fills the others. Work through `self` (the primary context) is not confined.
    ///
    /// Memory is the device's either way, but each Device's transfers and checked launches take
    /// only buffers of its own stream ([`LaunchError::ForeignStream`](crate::LaunchError::ForeignStream)
    /// otherwise), as between any two Devices. A split lasts for the process: each call creates
    /// two more green contexts, never destroyed (`docs/safety.md`, "SM splits").
    ///
    /// Fails with [`SetupError::SmSplit`] for `reserved == 0` or a request that, rounded up,
    /// leaves no SM for the rest (naming the largest valid request), and with
    /// [`SetupError::NoGreenContexts`] when the device or driver cannot make green contexts.
    ///
    /// # Safety
    /// The driver documents that a green context is current on one thread at a time, with no
    /// internal synchronization for calls on one green context from several threads, and every
    /// kgraph call on a Device makes its context current. So each of the two Devices, with its
    /// clones and everything made from it (streams, buffers, graphs, resident kernels, module
    /// caches), is used by one thread at a time: no two threads call into the same one
    /// concurrently (a drop is a call). The two Devices of a split, and `self`, may be used from
    /// different threads at once. A kgraph call leaves its context current on the calling
    /// thread; the driver's wording ("current to only one thread at a time") is read here as
    /// no concurrent calls. To keep it to the letter when a split Device moves to another
    /// thread, make another context current on the thread it leaves first (any kgraph call on
    /// another Device does).
    pub unsafe fn split_sms(&self, reserved: u32) -> Result<SmSplit> {
        crate::memory::green::split(self, reserved)
    }

    /// Waits for all work on the main stream ([`Stream::synchronize`]: it always waits).
    pub fn synchronize(&self) -> Result<()> {
        self.stream().synchronize()
    }

    /// Waits for the main stream through the driver directly (`cuCtxSetCurrent`, then
    /// `cuStreamSynchronize`). cudarc's `CudaStream::synchronize` first returns (and clears) an
    /// error that an unrelated `Drop` stored in the context, without waiting: a drop that must
    /// not run before the stream's work has ended (a graph struct's) waits here instead.
    #[doc(hidden)]
    pub fn __wait_stream_for_drop(&self) -> std::result::Result<(), DriverError> {
        wait_stream_raw(&self.stream)
    }

    /// (free, total) device memory in bytes, from `cuMemGetInfo`.
    pub fn mem_info(&self) -> Result<(usize, usize)> {
        self.ctx.mem_get_info().map_err(|e| Error::driver("cuMemGetInfo", e))
    }

    /// The device's name, e.g. `NVIDIA H200`.
    pub fn name(&self) -> Result<String> {
        self.ctx.name().map_err(|e| Error::driver("query device name", e))
    }

    /// `len` zeroed elements of device memory, allocated (and zeroed) in order on the main
    /// stream. `len == 0` gives an empty slice. [`GraphError::Failed`](crate::GraphError::Failed) while the stream is capturing.
    pub fn alloc_zeros<T: DeviceValue>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let bytes = Error::byte_len::<T>("alloc_zeros", len)?;
        // Under capture the allocation and the zeroing would become graph nodes, and the
        // slice's memory would exist only while the graph runs.
        self.ensure_not_capturing("alloc_zeros")?;
        if bytes == 0 {
            return self.empty_slice(len).map(DeviceBuffer::own);
        }
        self.stream
            .alloc_zeros(len)
            .map(DeviceBuffer::own)
            .map_err(|e| Error::driver(format!("alloc_zeros: allocate {bytes} bytes ({len} elements)"), e))
    }

    /// Copies `src` into new device memory: host -> mapped pinned staging -> async DtoD copy on
    /// the main stream. Returns once `src` has been copied into staging (so `src` may be reused
    /// at once); the device copy completes in stream order.
    pub fn upload<T: DeviceValue>(&self, src: &[T]) -> Result<DeviceBuffer<T>> {
        // Checked before allocating too: an allocation on a capturing stream becomes a graph node.
        self.ensure_not_capturing("upload")?;
        let mut dst = DeviceBuffer::own(self.alloc_unset::<T>("upload", src.len())?);
        self.upload_into(src, &mut dst)?;
        Ok(dst)
    }

    /// Copies `src` into `dst` (same length) like [`Device::upload`]. Ordered on the main
    /// stream, so `dst` must be owned by it: [`LaunchError::ForeignStream`](crate::LaunchError::ForeignStream) for a slice of another
    /// stream, [`LaunchError::TrackedContext`](crate::LaunchError::TrackedContext) for one of a plain cudarc context.
    pub fn upload_into<T: DeviceValue>(&self, src: &[T], dst: &mut impl DeviceOut<T>) -> Result<()> {
        check_same_stream("Device::upload_into", "dst", self.stream(), dst.stream())?;
        Error::check_len("upload_into", dst.elem_len(), src.len())?;
        let bytes = Error::byte_len::<T>("upload_into", src.len())?;
        if bytes == 0 {
            return Ok(());
        }
        self.ensure_not_capturing("upload_into")?;
        // SAFETY: `src` holds `bytes` readable bytes; `dst` is a live device allocation of this
        // context holding `src.len()` `T`s = `bytes` bytes (`DeviceOut`'s contract, length
        // checked above), mutably borrowed, so nothing else writes it meanwhile, and owned by
        // the main stream (checked above), so the copy is ordered before its free.
        unsafe {
            self.lock_staging().upload(&self.stream, "upload_into", src.as_ptr().cast(), dst.device_addr(), bytes)
        }
    }

    /// Copies device memory into a new `Vec`: async DtoD copy into mapped pinned staging on the
    /// main stream, wait for it (and so for all work queued before it), copy out. `src` must be
    /// owned by the main stream: [`LaunchError::ForeignStream`](crate::LaunchError::ForeignStream) otherwise, [`LaunchError::TrackedContext`](crate::LaunchError::TrackedContext)
    /// for a slice of a plain cudarc context.
    pub fn download<T: Pod>(&self, src: &impl DeviceIn<T>) -> Result<Vec<T>> {
        let len = src.elem_len();
        let mut out = Vec::with_capacity(len);
        // SAFETY: `out` has capacity for `len` `T`s.
        unsafe { self.download_raw("Device::download", src, out.as_mut_ptr(), len) }?;
        // SAFETY: `download_raw` wrote all `len` elements (any bytes are a valid `T`, `T: Pod`),
        // within the capacity reserved above.
        unsafe { out.set_len(len) };
        Ok(out)
    }

    /// Copies a buffer of C `bool`s ([`Bool`]) into a new `Vec<bool>` like [`Device::download`],
    /// each byte read as `byte != 0`: a kernel may store any byte through a `bool*`, so device
    /// memory comes back as Rust `bool`s, never as `Bool`s holding another byte (which safe code
    /// could upload again where a kernel reads `bool`).
    pub fn download_bools(&self, src: &impl DeviceIn<Bool>) -> Result<Vec<bool>> {
        let bytes = self.download(&BoolBytes(src))?;
        Ok(bytes.into_iter().map(|b| b != 0).collect())
    }

    /// Copies `src` into `dst` (same length) like [`Device::download`]; `src` must be owned by
    /// the main stream, as there.
    pub fn download_into<T: Pod>(&self, src: &impl DeviceIn<T>, dst: &mut [T]) -> Result<()> {
        Error::check_len("download_into", src.elem_len(), dst.len())?;
        // SAFETY: `dst` is a live `&mut [T]` of `dst.len()` elements.
        unsafe { self.download_raw("Device::download_into", src, dst.as_mut_ptr(), dst.len()) }
    }

    /// Frees the staging buffer (after waiting for its last copy); the next transfer allocates
    /// a new one. Useful after a one-off huge transfer, since staging only grows.
    pub fn release_staging(&self) -> Result<()> {
        self.lock_staging().release("release_staging")
    }

    /// Downloads `len` elements of `src` to `dst`.
    ///
    /// # Safety
    /// `dst` must be valid for `len` writes of `T`.
    unsafe fn download_raw<T: Pod>(
        &self,
        op: &'static str,
        src: &impl DeviceIn<T>,
        dst: *mut T,
        len: usize,
    ) -> Result<()> {
        check_same_stream(op, "src", self.stream(), src.stream())?;
        Error::check_len(op, src.elem_len(), len)?;
        let bytes = Error::byte_len::<T>(op, len)?;
        if bytes == 0 {
            return Ok(());
        }
        self.ensure_not_capturing(op)?;
        // SAFETY: `src` is a live device allocation of this context holding `len` `T`s = `bytes`
        // bytes (`DeviceIn`'s contract, length checked above), owned by the main stream
        // (checked above), so the copy is ordered after its allocation and before its free;
        // `dst` is valid for `len` `T`s (caller's contract).
        unsafe { self.lock_staging().download(&self.stream, op, src.device_addr(), dst.cast(), bytes) }
    }

    /// The staging, shared by clones; a poisoned lock is taken over rather than failing every
    /// later transfer.
    fn lock_staging(&self) -> std::sync::MutexGuard<'_, Staging> {
        self.staging.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `len` elements of device memory with unspecified contents, for a destination that is
    /// overwritten before anything reads it (`upload`, which hands the buffer out only once the
    /// copy into it is issued in its stream's order, and drops it unread on an error).
    pub(crate) fn alloc_unset<T: DeviceValue>(&self, what: &str, len: usize) -> Result<CudaSlice<T>> {
        let bytes = Error::byte_len::<T>(what, len)?;
        if bytes == 0 {
            return self.empty_slice(len);
        }
        // SAFETY: the memory is device memory, never read by the host except through a copy,
        // and the caller overwrites it (in stream order) before any kernel or copy reads it.
        unsafe { self.stream.alloc::<T>(len) }
            .map_err(|e| Error::driver(format!("{what}: allocate {bytes} bytes ({len} elements)"), e))
    }

    /// A slice of `len` elements occupying zero bytes (`len == 0`, or `T` of size zero). The
    /// driver rejects zero-byte allocations on some devices, so it is backed by a one-byte
    /// allocation that the slice's `Drop` frees the way it was allocated.
    fn empty_slice<T>(&self, len: usize) -> Result<CudaSlice<T>> {
        // SAFETY: the byte is never read or written: the slice built from it has no bytes.
        let backing = unsafe { self.stream.alloc::<u8>(1) }
            .map_err(|e| Error::driver("allocate backing for an empty slice", e))?;
        let ptr = backing.leak();
        // SAFETY: `ptr` is a live allocation made by this stream's allocator (leaked above, so
        // owned by nobody else); the slice covers zero bytes of it; event tracking is off for
        // this context (`Device::new`), so no event is created (and none can fail).
        Ok(unsafe { self.stream.upgrade_device_ptr::<T>(ptr, len) })
    }

    /// Fails with [`GraphError::Failed`](crate::GraphError::Failed) when the main stream is capturing: `op` would be recorded
    /// into the graph (or would invalidate the capture) instead of running now.
    pub(crate) fn ensure_not_capturing(&self, op: &str) -> Result<()> {
        let status =
            self.stream.capture_status().map_err(|e| Error::driver(format!("{op}: query capture status"), e))?;
        if status == sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE {
            Ok(())
        } else {
            Err(Error::graph(
                op,
                format!(
                    "the device's main stream is capturing ({status:?}); transfers run eagerly, so do them before or after capture"
                ),
            ))
        }
    }
}

/// A [`Bool`] buffer's memory as bytes, for [`Device::download_bools`]: whatever byte a kernel
/// stored, read as a `u8` (every byte is one).
struct BoolBytes<'a, S>(&'a S);

// SAFETY: the allocation, address and stream of `S`'s `DeviceIn<Bool>`, whose promise holds;
// a `Bool` is one byte (`repr(transparent)` over `u8`), so it holds `elem_len()` `u8`s.
unsafe impl<S: DeviceIn<Bool>> DeviceIn<u8> for BoolBytes<'_, S> {
    fn device_addr(&self) -> sys::CUdeviceptr {
        self.0.device_addr()
    }
    fn elem_len(&self) -> usize {
        self.0.elem_len()
    }
    fn stream(&self) -> &Stream {
        self.0.stream()
    }
}

/// [`SetupError::NoMemoryPools`] for a device without stream-ordered memory pools: cudarc then
/// allocates with `cuMemAlloc` and frees with `cuMemFree` after a `synchronize` that returns early
/// on an error an unrelated drop stored, so a buffer could be freed under work still using it.
/// kgraph's ordering rule (every free in its stream's order) needs `cuMemFreeAsync`.
pub(crate) fn require_memory_pools(ctx: &CudaContext, ordinal: usize) -> Result<()> {
    let attribute = sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED;
    let pools = ctx.attribute(attribute).map_err(|e| Error::driver("query memory pool support", e))?;
    if pools == 0 {
        return Err(Error::Setup(SetupError::NoMemoryPools { ordinal }));
    }
    Ok(())
}
