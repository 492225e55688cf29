//! Mapped pinned host memory: host memory the GPU reads (and copies from) directly.

use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{fence, Ordering};

use cudarc::driver::sys;

use crate::device::Device;
use crate::error::{Error, Result};
use crate::kernel::{PinnedMutPtr, PinnedPtr};
use crate::pinned::{PinnedAlloc, PAGE_ALIGN};
use crate::pod::Pod;

/// `len` elements of page-locked host memory mapped into the device's address space
/// (`cuMemHostAlloc` with `DEVICEMAP | PORTABLE`): the host reads and writes it as a slice,
/// kernels read it through [`MappedBuffer::device_ptr`] and write it through
/// [`MappedBuffer::device_ptr_mut`] with no copy, and it is the source and target of kgraph's
/// staging copies. Zeroed on creation; freed on drop.
///
/// The device reads and writes this memory when a kernel or copy that uses it runs, not when it
/// is enqueued: do not change elements a queued launch still has to read (synchronise first, or
/// use one [`PinnedSlot`] per value handed over), and read what a kernel writes only after
/// synchronising the stream that ran it ([`MappedBuffer::read_volatile_into`]).
pub struct MappedBuffer<T: Pod> {
    host: NonNull<T>,
    device: sys::CUdeviceptr,
    len: usize,
    /// The allocation `host` and `device` point into, freed on drop; `None` for an empty
    /// buffer, which owns no allocation.
    _alloc: Option<PinnedAlloc>,
}

// SAFETY: the buffer uniquely owns its allocation (no aliasing handle exists besides the device
// address, which kernels only read while the owner says so). PORTABLE pinned memory is valid
// in every context and on every thread, and dropping the `PinnedAlloc` makes the context
// current on whichever thread drops it, so moving the owner to another thread is sound. `T: Pod` is `Send`.
unsafe impl<T: Pod> Send for MappedBuffer<T> {}
// SAFETY: through `&MappedBuffer` the host can only read (`as_slice`, the volatile readers), and
// `T: Pod` is `Sync`; host mutation needs `&mut`, so shared references on several threads never
// race on the host. (Kernels writing through a `PinnedMutPtr` are ordered by stream
// synchronisation, which the documented contract requires before any host read.)
unsafe impl<T: Pod> Sync for MappedBuffer<T> {}

impl<T: Pod> MappedBuffer<T> {
    /// Allocates `len` zeroed elements on `device`. `len == 0` allocates nothing.
    pub fn new(device: &Device, len: usize) -> Result<Self> {
        // Pinned allocations are page-aligned; a `T` aligned beyond that is a compile error.
        const { assert!(std::mem::align_of::<T>() <= PAGE_ALIGN, "MappedBuffer: T is aligned beyond 4096 bytes") };
        let bytes = Error::byte_len::<T>("MappedBuffer::new", len)?;
        if bytes == 0 {
            return Ok(MappedBuffer { host: NonNull::dangling(), device: 0, len, _alloc: None });
        }
        let alloc = PinnedAlloc::new(device.context(), "MappedBuffer::new", bytes)?;
        // Page-aligned (so aligned for `T`, checked against `PAGE_ALIGN` above) and zeroed, and
        // all-zero bytes are a valid `T` (`T: Pod` implies `ValidAsZeroBits`).
        let host = alloc.host_ptr().cast::<T>();
        Ok(MappedBuffer { host, device: alloc.device_addr(), len, _alloc: Some(alloc) })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The host view. Values a kernel wrote through the device address are visible once that
    /// kernel's stream has been synchronised.
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: `host` is valid for `len` initialised `T`s (zeroed at creation, then only
        // written as `T`s or as bytes, and any bytes are a valid `T`) for as long as `self`.
        unsafe { std::slice::from_raw_parts(self.host.as_ptr(), self.len) }
    }

    /// The mutable host view.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as in `as_slice`; `&mut self` makes this the only host reference.
        unsafe { std::slice::from_raw_parts_mut(self.host.as_ptr(), self.len) }
    }

    /// The device address of element 0 and the buffer's length, for zero-copy kernel arguments
    /// (`const T*`). Null for an empty buffer.
    pub fn device_ptr(&self) -> PinnedPtr<T> {
        // SAFETY: the address maps this buffer's `len` elements and stays valid while `self`
        // lives; callers of the kernel keep `self` alive until the launch has finished.
        unsafe { PinnedPtr::from_raw(self.device, self.len) }
    }

    /// The device address of element 0 and the buffer's length, for kernels that **write** this
    /// buffer (a `T*` parameter declared `PinnedMut<T>`): their results land in host memory with no download copy. Null
    /// for an empty buffer.
    ///
    /// The kernel writes host memory while it runs, after this call has returned: read the
    /// buffer on the host ([`Self::read_volatile_into`], [`Self::to_vec_volatile`],
    /// [`Self::as_slice`]) only after synchronising the stream that ran the kernel, and keep
    /// the buffer alive until then. `&mut self` ensures no host borrow of the elements is alive
    /// when the pointer is handed out.
    pub fn device_ptr_mut(&mut self) -> PinnedMutPtr<T> {
        // SAFETY: the address maps this buffer's `len` elements and stays valid while `self`
        // lives; callers of the kernel keep `self` alive until the launch has finished and read
        // it on the host only after synchronising (the documented contract above).
        unsafe { PinnedMutPtr::from_raw(self.device, self.len) }
    }

    /// Copies the buffer into `dst` with volatile loads, one per element: every value is read
    /// from memory now (never a value the compiler kept from an earlier read), and no Rust
    /// reference to the elements is formed while the device might write them. Call it after
    /// synchronising the stream of the kernels that write the buffer.
    ///
    /// # Errors
    ///
    /// `Error::LengthMismatch` when `dst.len() != self.len()`.
    pub fn read_volatile_into(&self, dst: &mut [T]) -> Result<()> {
        Error::check_len("MappedBuffer::read_volatile_into", self.len, dst.len())?;
        let host = self.host.as_ptr();
        for (i, slot) in dst.iter_mut().enumerate() {
            // SAFETY: `i < len`, so `host.add(i)` is in bounds of the allocation and aligned for
            // `T` (page-aligned start, `T`-sized steps); any bits are a valid `T` (`T: Pod`).
            // An empty buffer's dangling pointer is never read (no iterations).
            *slot = unsafe { std::ptr::read_volatile(host.add(i)) };
        }
        Ok(())
    }

    /// The buffer's elements as a new `Vec`, read with volatile loads as
    /// [`Self::read_volatile_into`] does. Call it after synchronising the stream of the kernels
    /// that write the buffer.
    pub fn to_vec_volatile(&self) -> Vec<T> {
        let host = self.host.as_ptr();
        (0..self.len)
            .map(|i| {
                // SAFETY: as in `read_volatile_into`: `i < len`, in bounds and aligned; any bits
                // are a valid `T`.
                unsafe { std::ptr::read_volatile(host.add(i)) }
            })
            .collect()
    }

    /// The host address of element 0 (for kgraph's volatile slot access and staging copies).
    pub(crate) fn host_ptr(&self) -> *mut T {
        self.host.as_ptr()
    }
}

impl<T: Pod> std::fmt::Debug for MappedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MappedBuffer")
            .field("len", &self.len)
            .field("elem", &std::any::type_name::<T>())
            .field("device", &format_args!("{:#x}", self.device))
            .finish()
    }
}

/// One `T` in mapped pinned memory: the host writes it, kernels read it through
/// [`PinnedSlot::device_ptr`] with no copy (a zero-copy kernel argument that a captured graph
/// re-reads on every replay).
///
/// `PinnedSlot` is `Send` but not `Sync`: [`PinnedSlot::write`] takes `&self`, and two threads
/// writing at once would race.
///
/// ```
/// fn movable<T: Send>() {}
/// movable::<kgraph_runtime::PinnedSlot<f32>>();
/// movable::<kgraph_runtime::MappedBuffer<f32>>();
/// ```
/// ```compile_fail
/// fn shareable<T: Sync>() {}
/// shareable::<kgraph_runtime::PinnedSlot<f32>>();
/// ```
pub struct PinnedSlot<T: Pod> {
    buffer: MappedBuffer<T>,
    _not_sync: PhantomData<Cell<()>>,
}

impl<T: Pod> PinnedSlot<T> {
    /// A slot holding `init`.
    pub fn new(device: &Device, init: T) -> Result<Self> {
        let buffer = MappedBuffer::<T>::new(device, 1)?;
        let slot = PinnedSlot { buffer, _not_sync: PhantomData };
        slot.write(init);
        Ok(slot)
    }

    /// Stores `v` for the next kernel that reads the slot. A volatile store (so it is never
    /// elided or merged with the next one), then a release fence (so it is ordered before
    /// whatever this thread does next, e.g. the launch that reads it). A kernel already running
    /// may see the old or the new value; a `T` wider than 8 bytes may then be seen torn.
    pub fn write(&self, v: T) {
        // SAFETY: the pointer is valid and aligned for one `T` while `self` lives (a size-zero
        // `T` writes nothing); `PinnedSlot` is not `Sync`, so no other host thread writes or
        // reads it concurrently.
        unsafe { std::ptr::write_volatile(self.buffer.host_ptr(), v) };
        fence(Ordering::Release);
    }

    /// The value last written (a volatile load, so a value a kernel stored through the device
    /// address is seen once that kernel has finished).
    pub fn peek(&self) -> T {
        // SAFETY: as in `write`; any bits are a valid `T` (`T: Pod`).
        unsafe { std::ptr::read_volatile(self.buffer.host_ptr()) }
    }

    /// The slot's device address, for zero-copy kernel arguments (`const T*`).
    pub fn device_ptr(&self) -> PinnedPtr<T> {
        self.buffer.device_ptr()
    }
}

impl<T: Pod> std::fmt::Debug for PinnedSlot<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedSlot").field("buffer", &self.buffer).finish()
    }
}
