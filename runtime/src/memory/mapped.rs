//! Mapped pinned host memory: host memory the GPU reads (and copies from) directly.

use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicU8, Ordering};

use cudarc::driver::{sys, CudaContext, DriverError};

use crate::driver;
use crate::error::{Error, Result};
use crate::launch::pinned_ptr::{PinnedMutPtr, PinnedPtr};
use crate::memory::device::Device;
use crate::memory::pinned::{PinnedAlloc, PAGE_ALIGN};
use crate::memory::pod::Pod;

/// `len` elements of page-locked host memory mapped into the device's address space
/// (`cuMemHostAlloc` with `DEVICEMAP | PORTABLE`): the host reads and writes it as a slice,
/// kernels read it through [`MappedBuffer::device_ptr`] and write it through
/// [`MappedBuffer::device_ptr_mut`] with no copy (kgraph's slot bus stages through one, and a
/// graph struct's done word is one). Zeroed on creation; freed on drop.
///
/// The device reads and writes this memory when a kernel or copy that uses it runs, not when it
/// is enqueued, and a captured graph does so at every replay without lending a pointer again.
/// So safe code never holds a Rust reference to the elements while the device may write them:
/// the host reads them by copying ([`MappedBuffer::read_into`], [`MappedBuffer::to_vec`], and
/// the non-waiting volatile readers), and the only reference-forming view is
/// [`MappedBuffer::as_mut_slice`], which needs `&mut self` (no pointer can be lent while it
/// lives) and first waits for every pointer lent before. The buffer remembers whether it lent a
/// device pointer, and:
/// - [`MappedBuffer::read_into`] and [`MappedBuffer::to_vec`] wait for the context's queued work
///   first if a [`PinnedMutPtr`] was lent since the last wait (a kernel may still be writing),
///   then copy with volatile loads;
/// - [`MappedBuffer::as_mut_slice`] and [`MappedBuffer::write_from`] wait if any device pointer
///   was lent since the last wait (a kernel may still be reading or writing);
/// - `Drop` waits if a device pointer was ever lent, before `cuMemFreeHost`.
///
/// The wait is a `cuCtxSynchronize` of the buffer's context (every stream of it), paid only
/// when a pointer was lent since the last one; launches in another context must be refused with
/// [`crate::check_same_context`]. The volatile readers ([`MappedBuffer::read_volatile_into`],
/// [`MappedBuffer::to_vec_volatile`]) never wait: they see the values as they are (stale, or
/// torn mid-write, but always a valid `T`); synchronise the stream of the kernels that write
/// the buffer first to see their results. See `docs/safety.md` ("Mapped pinned memory").
pub struct MappedBuffer<T: Pod> {
    host: NonNull<T>,
    device: sys::CUdeviceptr,
    len: usize,
    /// The allocation `host` and `device` point into, freed on drop; `None` for an empty
    /// buffer, which owns no allocation.
    alloc: Option<PinnedAlloc>,
    /// [`LENT_EVER`], [`LENT_READ`], [`LENT_WRITE`]: which device pointers were handed out.
    lent: AtomicU8,
}

/// A device pointer was lent at some point: `Drop` waits before freeing.
const LENT_EVER: u8 = 1;
/// A [`PinnedPtr`] was lent since the last wait: `as_mut_slice` waits.
const LENT_READ: u8 = 2;
/// A [`PinnedMutPtr`] was lent since the last wait: `read_into`, `to_vec` and `as_mut_slice` wait.
const LENT_WRITE: u8 = 4;

// SAFETY: the buffer uniquely owns its allocation (no aliasing handle exists besides the device
// address, which is only lent through borrows of the buffer). PORTABLE pinned memory is valid
// in every context and on every thread, and dropping the `PinnedAlloc` makes the context
// current on whichever thread drops it, so moving the owner to another thread is sound. `T: Pod` is `Send`.
unsafe impl<T: Pod> Send for MappedBuffer<T> {}
// SAFETY: through `&MappedBuffer` the host can only read (volatile copies), and `T: Pod` is
// `Sync`; host mutation needs `&mut`, so shared references on several threads never race on the
// host. The lend flags are atomic; the only flag cleared through `&self` (`LENT_WRITE`, by
// `read_into`/`to_vec`) can only be set through `&mut self`, so clearing it never loses a
// concurrent lend.
unsafe impl<T: Pod> Sync for MappedBuffer<T> {}

impl<T: Pod> MappedBuffer<T> {
    /// Allocates `len` zeroed elements on `device`. `len == 0` allocates nothing.
    pub fn new(device: &Device, len: usize) -> Result<Self> {
        // Pinned allocations are whole pages (checked below for `T`'s alignment); a `T` aligned
        // beyond a page is a compile error.
        const { assert!(std::mem::align_of::<T>() <= PAGE_ALIGN, "MappedBuffer: T is aligned beyond 4096 bytes") };
        let bytes = Error::byte_len::<T>("MappedBuffer::new", len)?;
        if bytes == 0 {
            return Ok(Self::unallocated(len));
        }
        let alloc = PinnedAlloc::new(&device.ctx, "MappedBuffer::new", bytes)?;
        // Whole pages in practice, but CUDA documents no alignment for `cuMemHostAlloc`, and
        // every view and volatile load below needs `T`'s: checked, not assumed (the allocation is
        // freed on the error's return).
        if !aligned_for::<T>(alloc.host_ptr()) {
            let refused = DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE);
            let what = format!(
                "MappedBuffer::new: cuMemHostAlloc returned {:p}, not aligned to the {} bytes of `{}`",
                alloc.host_ptr(),
                std::mem::align_of::<T>(),
                std::any::type_name::<T>()
            );
            return Err(Error::driver(what, refused));
        }
        // Aligned for `T` (checked above) and zeroed, and all-zero bytes are a valid `T`
        // (`T: Pod` implies `ValidAsZeroBits`).
        let host = alloc.host_ptr().cast::<T>();
        Ok(MappedBuffer { host, device: alloc.device_addr(), len, alloc: Some(alloc), lent: AtomicU8::new(0) })
    }

    /// A buffer of `len` elements and zero bytes (`len == 0`, or a zero-sized `T`): no
    /// allocation, a dangling (aligned) host pointer that is never read, a null device address
    /// and no context.
    fn unallocated(len: usize) -> Self {
        debug_assert!(len == 0 || std::mem::size_of::<T>() == 0, "MappedBuffer: an unallocated buffer holds no bytes");
        MappedBuffer { host: NonNull::dangling(), device: 0, len, alloc: None, lent: AtomicU8::new(0) }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies the buffer into `dst`, after waiting for the device work of the buffer's context
    /// if a [`PinnedMutPtr`] was lent since the last wait (so what kernels wrote through it is
    /// complete and visible; no wait otherwise). A copy, not a view: a `&[T]` over this memory
    /// would be a data race the moment device work wrote it while the slice lived (a graph
    /// replay, or a kernel given a [`PinnedPtr`] meanwhile through `&self`), and nothing
    /// borrowed from `&self` can keep those away. The loads are volatile, as in
    /// [`Self::read_volatile_into`].
    ///
    /// # Errors
    /// `MemoryError::LengthMismatch` when `dst.len() != self.len()`; [`Error::Driver`] when the wait
    /// fails (e.g. inside a stream capture, or after a device fault), and the buffer then still
    /// counts as lent.
    pub fn read_into(&self, dst: &mut [T]) -> Result<()> {
        Error::check_len("MappedBuffer::read_into", self.len, dst.len())?;
        self.wait_for_writers("MappedBuffer::read_into")?;
        self.read_volatile_into(dst)
    }

    /// The buffer's elements as a new `Vec`, after the wait of [`Self::read_into`].
    ///
    /// # Errors
    /// As [`Self::read_into`].
    pub fn to_vec(&self) -> Result<Vec<T>> {
        self.wait_for_writers("MappedBuffer::to_vec")?;
        Ok(self.to_vec_volatile())
    }

    /// Copies `src` into the buffer, after the wait of [`Self::as_mut_slice`].
    ///
    /// # Errors
    /// `MemoryError::LengthMismatch` when `src.len() != self.len()`; as [`Self::as_mut_slice`].
    pub fn write_from(&mut self, src: &[T]) -> Result<()> {
        Error::check_len("MappedBuffer::write_from", self.len, src.len())?;
        self.as_mut_slice()?.copy_from_slice(src);
        Ok(())
    }

    /// Waits for the context's work if a [`PinnedMutPtr`] was lent since the last wait.
    fn wait_for_writers(&self, op: &str) -> Result<()> {
        if self.lent.load(Ordering::Acquire) & LENT_WRITE != 0 {
            self.wait_device(op)?;
            // Release: a thread that then sees the flag clear also sees the wait as done.
            self.lent.fetch_and(!LENT_WRITE, Ordering::Release);
        }
        Ok(())
    }

    /// The mutable host view, after waiting for the device work of the buffer's context if any
    /// device pointer was lent since the last wait (so no queued kernel still reads or writes
    /// the memory; no wait otherwise). Sound as a reference because `&mut self` lends no
    /// pointer while the slice lives, and every pointer lent before was waited for; the one
    /// other writer, a graph captured with a pointer into the buffer, is `Graph::capture`'s
    /// `unsafe` promise (kgraph's graph structs hand out no `&mut` to their mapped buffers).
    ///
    /// # Errors
    /// [`Error::Driver`] when the wait fails (e.g. inside a stream capture, or after a device
    /// fault); the buffer then still counts as lent.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        if *self.lent.get_mut() & (LENT_READ | LENT_WRITE) != 0 {
            self.wait_device("MappedBuffer::as_mut_slice")?;
            *self.lent.get_mut() &= !(LENT_READ | LENT_WRITE);
        }
        // SAFETY: no device work reads or writes the memory: every lent pointer's work was
        // waited for, and no pointer can be lent until this borrow ends.
        Ok(unsafe { self.as_mut_slice_unsynchronized() })
    }

    /// The host view without waiting.
    ///
    /// # Safety
    /// No device work (kernel, copy, graph replay) may write the buffer while the returned
    /// slice is alive: every launch that writes it must have finished (its stream or the
    /// context synchronised), and none may be issued or replayed until the slice is dropped.
    pub unsafe fn as_slice_unsynchronized(&self) -> &[T] {
        // SAFETY: `host` is valid for `len` initialised `T`s (zeroed at creation, then only
        // written as `T`s or as bytes, and any bytes are a valid `T`) for as long as `self`;
        // the caller promises no device write while the slice lives, so it is not mutated.
        unsafe { std::slice::from_raw_parts(self.host.as_ptr(), self.len) }
    }

    /// The mutable host view without waiting.
    ///
    /// # Safety
    /// No device work may read or write the buffer while the returned slice is alive: every
    /// launch that uses it must have finished, and none may be issued or replayed until the
    /// slice is dropped.
    pub unsafe fn as_mut_slice_unsynchronized(&mut self) -> &mut [T] {
        // SAFETY: as in `as_slice_unsynchronized`; `&mut self` makes this the only host
        // reference, and the caller promises the device does not access the memory meanwhile.
        unsafe { std::slice::from_raw_parts_mut(self.host.as_ptr(), self.len) }
    }

    /// The device address of element 0 and the buffer's length, for zero-copy kernel arguments
    /// (`const T*`), borrowing the buffer. Null for an empty buffer. Marks the buffer lent for reading: the next
    /// [`Self::as_mut_slice`] and the drop wait for the device first.
    pub fn device_ptr(&self) -> PinnedPtr<'_, T> {
        self.mark_lent(LENT_EVER | LENT_READ);
        PinnedPtr::lend(self.device, self.cu_context(), self.len)
    }

    /// The device address of element 0 and the buffer's length, for kernels that **write** this
    /// buffer (a `T*` parameter declared `PinnedMut<T>`): their results land in host memory with
    /// no download copy. Null for an empty buffer.
    ///
    /// The pointer mutably borrows the buffer, so no host view exists while it does. The kernel
    /// writes host memory while it runs, after the launch has returned: [`Self::read_into`] and
    /// [`Self::to_vec`] wait for it, and so does the buffer's drop; the volatile readers do not (synchronise
    /// the stream that ran the kernel first to see its results).
    pub fn device_ptr_mut(&mut self) -> PinnedMutPtr<'_, T> {
        *self.lent.get_mut() |= LENT_EVER | LENT_WRITE;
        PinnedMutPtr::lend(self.device, self.cu_context(), self.len)
    }

    /// Copies the buffer into `dst` with volatile loads, one per element: every value is read
    /// from memory now (never a value the compiler kept from an earlier read), and no Rust
    /// reference to the elements is formed, so a kernel may be writing the buffer meanwhile
    /// (the values are then stale or torn, but valid `T`s). Does not wait: call it after
    /// synchronising the stream of the kernels that write the buffer to see their results.
    ///
    /// # Errors
    ///
    /// `MemoryError::LengthMismatch` when `dst.len() != self.len()`.
    pub fn read_volatile_into(&self, dst: &mut [T]) -> Result<()> {
        Error::check_len("MappedBuffer::read_volatile_into", self.len, dst.len())?;
        let host = self.host.as_ptr();
        for (i, slot) in dst.iter_mut().enumerate() {
            // SAFETY: `i < len`, so `host.add(i)` is in bounds of the allocation and aligned for
            // `T` (page-aligned start, `T`-sized steps); any bits are a valid `T` (`T: Pod`).
            // The memory is driver-allocated, shared with the device (another agent, as with
            // MMIO), and accessed here only by volatile loads, never through a reference
            // (docs/safety.md). An empty buffer's dangling pointer is never read (no iterations).
            *slot = unsafe { std::ptr::read_volatile(host.add(i)) };
        }
        Ok(())
    }

    /// The buffer's elements as a new `Vec`, read with volatile loads as
    /// [`Self::read_volatile_into`] does (no wait, no reference formed). Call it after
    /// synchronising the stream of the kernels that write the buffer.
    pub fn to_vec_volatile(&self) -> Vec<T> {
        let host = self.host.as_ptr();
        (0..self.len)
            .map(|i| {
                // SAFETY: as in `read_volatile_into`: `i < len`, in bounds and aligned; any bits
                // are a valid `T`; volatile loads of memory shared with the device.
                unsafe { std::ptr::read_volatile(host.add(i)) }
            })
            .collect()
    }

    /// The host address of element 0 (for kgraph's volatile and atomic accesses: slots, the slot
    /// bus's staging cells, done words, a resident kernel's pairs).
    pub(crate) fn host_ptr(&self) -> *mut T {
        self.host.as_ptr()
    }

    /// The device address of element 0 without marking the buffer lent, for kgraph's own copies
    /// that wait for themselves (the slot bus).
    pub(crate) fn device_addr_unlent(&self) -> sys::CUdeviceptr {
        self.device
    }

    /// Marks the buffer as used by device work kgraph issued itself without lending a pointer,
    /// so its drop waits for the context (the slot bus, when waiting for its own copy failed).
    pub(crate) fn mark_device_use(&self) {
        self.mark_lent(LENT_EVER);
    }

    /// The raw context the buffer was allocated in (null for an empty buffer).
    fn cu_context(&self) -> sys::CUcontext {
        self.alloc.as_ref().map_or(std::ptr::null_mut(), |a| a.context().cu_ctx())
    }

    fn mark_lent(&self, bits: u8) {
        // A load first, so the common case (already marked) writes nothing.
        if self.lent.load(Ordering::Relaxed) & bits != bits {
            self.lent.fetch_or(bits, Ordering::Relaxed);
        }
    }

    /// Waits for all device work of the buffer's context (nothing for an empty buffer).
    fn wait_device(&self, op: &str) -> Result<()> {
        match &self.alloc {
            Some(alloc) => synchronize_context(alloc.context())
                .map_err(|e| Error::driver(format!("{op}: wait for the device work that may use the buffer"), e)),
            None => Ok(()),
        }
    }
}

/// Whether `host` is aligned for `T` (an address check; nothing is read).
fn aligned_for<T>(host: NonNull<u8>) -> bool {
    (host.as_ptr() as usize) % std::mem::align_of::<T>() == 0
}

/// `cuCtxSynchronize` of `ctx`, made current directly: cudarc's `bind_to_thread` would first
/// return (and clear) an error stored by an unrelated earlier `Drop`.
fn synchronize_context(ctx: &CudaContext) -> std::result::Result<(), DriverError> {
    // SAFETY: the context is live (the allocation holds it); making it current has no other effect.
    unsafe { driver::ctx_set_current(ctx.cu_ctx()) }?;
    // SAFETY: `ctx` was made current just above.
    unsafe { driver::ctx_synchronize() }
}

impl<T: Pod> Drop for MappedBuffer<T> {
    fn drop(&mut self) {
        if *self.lent.get_mut() & LENT_EVER == 0 {
            return;
        }
        let Some(alloc) = &self.alloc else { return };
        // A lent pointer may still be used by queued device work: wait for it before the
        // `PinnedAlloc` is freed. Should the wait fail, the memory is leaked, not freed under
        // a kernel that may still run.
        if let Err(e) = synchronize_context(alloc.context()) {
            alloc.context().record_err(Err::<(), _>(e));
            std::mem::forget(self.alloc.take());
        }
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
    /// may see the old or the new value; a `T` wider than 8 bytes may then be seen torn (still
    /// a valid `T`, `T: Pod`). Never waits, and sound while kernels read the slot: the memory is
    /// shared with the device and only ever accessed by the host with volatile operations, never
    /// through a reference (see `docs/safety.md`).
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

    /// The slot's device address, for zero-copy kernel arguments (`const T*`), borrowing the
    /// slot; its drop then waits for the device work of its context before freeing.
    pub fn device_ptr(&self) -> PinnedPtr<'_, T> {
        self.buffer.device_ptr()
    }
}

impl<T: Pod> std::fmt::Debug for PinnedSlot<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedSlot").field("buffer", &self.buffer).finish()
    }
}

#[cfg(test)]
mod tests {
    //! The CPU half of the mapped-memory review: what the buffer decides before any driver call
    //! (its lend flags, an empty or zero-sized buffer, the alignment check). An unallocated buffer
    //! has no context, so its waits return at once and its drop frees nothing.

    use super::*;

    fn flags<T: Pod>(b: &MappedBuffer<T>) -> u8 {
        b.lent.load(Ordering::Relaxed)
    }

    #[test]
    fn an_empty_buffer_lends_a_null_pointer_of_no_context() {
        let mut b = MappedBuffer::<f32>::unallocated(0);
        let p = b.device_ptr();
        // A null address (a kernel dereferencing it faults; it never reaches host memory), no
        // context (so `check_same_context` passes it: there is nothing to wait for), len 0 (so
        // a checked launch refuses any extent above 0).
        assert_eq!((p.addr(), p.len()), (0, 0));
        assert!(p.context().is_null() && p.is_empty());
        let m = b.device_ptr_mut();
        assert_eq!((m.addr(), m.len()), (0, 0));
        assert!(m.context().is_null());
        assert_eq!(b.as_mut_slice().unwrap().len(), 0);
        assert_eq!(b.to_vec().unwrap(), Vec::<f32>::new());
        b.read_into(&mut []).unwrap();
        assert!(b.read_into(&mut [0.0]).is_err(), "a length mismatch is refused");
        // Lent, so the drop would wait; with no allocation it has nothing to wait for or free.
        assert_ne!(flags(&b) & LENT_EVER, 0);
    }

    #[test]
    fn a_wait_clears_the_lends_it_covered_but_never_that_one_was_lent() {
        let mut b = MappedBuffer::<u32>::unallocated(0);
        assert_eq!(flags(&b), 0, "a new buffer lent nothing: its drop does not wait");
        let _ = b.device_ptr_mut();
        assert_eq!(flags(&b), LENT_EVER | LENT_WRITE);
        // The waiting reads wait for writers and clear only that flag.
        b.to_vec().unwrap();
        assert_eq!(flags(&b), LENT_EVER);
        let _ = b.device_ptr();
        assert_eq!(flags(&b), LENT_EVER | LENT_READ);
        // A reader lent through `&self` is not cleared by a read (it may write through a
        // `const_cast`), only by the mutable view, which waits for it.
        b.read_into(&mut []).unwrap();
        assert_eq!(flags(&b), LENT_EVER | LENT_READ);
        b.write_from(&[]).unwrap();
        assert_eq!(flags(&b), LENT_EVER);
        // Nothing resets `LENT_EVER`: a graph captured with the pointer may replay until the
        // buffer goes, and its drop then still waits.
        let _ = b.as_mut_slice().unwrap();
        b.to_vec().unwrap();
        assert_eq!(flags(&b), LENT_EVER);
        b.mark_device_use();
        assert_eq!(flags(&b), LENT_EVER);
    }

    #[test]
    fn a_shared_lend_from_another_thread_is_not_lost_by_a_read() {
        // `to_vec` clears `LENT_WRITE` through `&self`; a `device_ptr` on another thread at the
        // same time sets `LENT_READ`, and the atomic `fetch_and` keeps it.
        let mut b = MappedBuffer::<f32>::unallocated(0);
        let _ = b.device_ptr_mut();
        std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..1000 {
                    let _ = b.device_ptr();
                }
            });
            for _ in 0..1000 {
                b.to_vec().unwrap();
            }
        });
        assert_eq!(flags(&b), LENT_EVER | LENT_READ);
    }

    #[test]
    fn a_zero_sized_element_allocates_nothing_whatever_its_length() {
        // `[f32; 0]` is `Pod` (arrays of Pod): zero bytes for any length, so no allocation and
        // no device memory; the views and reads touch no byte.
        let mut b = MappedBuffer::<[f32; 0]>::unallocated(1 << 20);
        assert_eq!(b.as_mut_slice().unwrap().len(), 1 << 20);
        assert_eq!(b.to_vec().unwrap().len(), 1 << 20);
        let p = b.device_ptr();
        assert_eq!((p.addr(), p.len()), (0, 1 << 20));
        assert!(p.context().is_null());
    }

    #[test]
    fn the_host_address_is_checked_against_the_elements_alignment() {
        let at = |addr: usize| NonNull::new(addr as *mut u8).unwrap();
        // A page: aligned for every `T` (`new` refuses any aligned beyond it at compile time).
        assert!(aligned_for::<[u8; 4096]>(at(0x7f00_0000_1000)));
        assert!(aligned_for::<f64>(at(0x7f00_0000_1000)));
        // 4-byte aligned: fine for `u32` (a done word), not for `u64` (a resident pair) or a
        // 16-byte vector.
        assert!(aligned_for::<u32>(at(0x1004)));
        assert!(!aligned_for::<u64>(at(0x1004)));
        #[repr(C, align(16))]
        struct V([f32; 4]);
        assert!(!aligned_for::<V>(at(0x1008)));
        assert!(aligned_for::<V>(at(0x1010)));
        // A dangling pointer of an unallocated buffer is aligned for its `T`.
        assert!(aligned_for::<f64>(NonNull::<f64>::dangling().cast()));
    }
}
