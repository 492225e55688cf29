//! Device addresses of mapped pinned host memory as kernel arguments ([`PinnedPtr`],
//! [`PinnedMutPtr`]): the zero-copy argument, borrowing the buffer it points into.

use std::marker::PhantomData;

use cudarc::driver::sys;

/// A device address of mapped pinned host memory (a [`crate::PinnedSlot`] or
/// [`crate::MappedBuffer`]): the zero-copy kernel argument. The kernel reads host memory over
/// PCIe/C2C directly, so the host's latest write is what the kernel sees.
///
/// It borrows the buffer it points into (`'a`), so the buffer cannot be dropped, or mutably
/// borrowed, while the pointer exists; the launch itself is asynchronous, and the buffer's
/// `Drop` and mutable host view wait for the device work still queued (see
/// [`crate::MappedBuffer`]).
#[repr(C)]
pub struct PinnedPtr<'a, T> {
    /// First field: what the kernel receives (see the `DeviceRepr` impl).
    addr: sys::CUdeviceptr,
    /// The context the buffer was allocated in; null when made by `from_raw`.
    ctx: sys::CUcontext,
    /// Elements of `T` the memory holds, for a checked launch's extent check.
    len: usize,
    _borrow: PhantomData<&'a [T]>,
}

impl<T> Clone for PinnedPtr<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for PinnedPtr<'_, T> {}
impl<T> std::fmt::Debug for PinnedPtr<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PinnedPtr({:#x}, len {})", self.addr, self.len)
    }
}
// SAFETY: `PinnedPtr` is `repr(C)` with the `CUdeviceptr` (u64) first: `launch_builder().arg(&ptr)`
// passes a pointer to that field, and the driver reads exactly the kernel parameter's size (8
// bytes, a `const T*`) from it, i.e. the address.
unsafe impl<T> cudarc::driver::DeviceRepr for PinnedPtr<'_, T> {}
// SAFETY: a device address and a context handle are plain values; sending them does not touch
// the memory, and the borrow `'a` is what keeps the buffer alive, wherever the pointer goes.
unsafe impl<T: Sync> Send for PinnedPtr<'_, T> {}
// SAFETY: as above; shared references only copy the integers.
unsafe impl<T: Sync> Sync for PinnedPtr<'_, T> {}

impl<T> PinnedPtr<'_, T> {
    /// Wraps a mapped device address, with an unbounded lifetime and no context (so
    /// [`check_same_context`](crate::check_same_context) passes it).
    ///
    /// # Safety
    /// `addr` must be the device address of mapped pinned host memory holding at least `len`
    /// elements of `T`, alive until every launch that uses it has finished, and not written by
    /// the host through a reference while such a launch may be running.
    pub unsafe fn from_raw(addr: sys::CUdeviceptr, len: usize) -> Self {
        PinnedPtr { addr, ctx: std::ptr::null_mut(), len, _borrow: PhantomData }
    }

    /// A pointer to `len` elements in memory of `ctx`, borrowing for `'a` what keeps it alive.
    pub(crate) fn lend(addr: sys::CUdeviceptr, ctx: sys::CUcontext, len: usize) -> Self {
        PinnedPtr { addr, ctx, len, _borrow: PhantomData }
    }

    /// The raw device address (what the kernel receives).
    pub fn addr(&self) -> sys::CUdeviceptr {
        self.addr
    }

    /// The context the buffer was allocated in (null for a pointer made with `from_raw`), for
    /// [`check_same_context`](crate::check_same_context).
    pub fn context(&self) -> sys::CUcontext {
        self.ctx
    }

    /// The number of `T` the memory holds (a checked launch compares it with the extent).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the memory holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A device address of mapped pinned host memory that a kernel **writes** (a
/// [`crate::MappedBuffer`], lent through [`crate::MappedBuffer::device_ptr_mut`]): the
/// zero-copy kernel output, for a `T*` parameter declared `PinnedMut<T>`. The kernel stores
/// straight into host memory over PCIe/C2C, so its results need no download copy.
///
/// It mutably borrows the buffer (`'a`) and is not `Copy` (use [`PinnedMutPtr::reborrow`] to
/// pass it to several launches), so no host view of the buffer exists while it does. The launch
/// is asynchronous: the buffer's host reads ([`crate::MappedBuffer::read_into`],
/// [`crate::MappedBuffer::to_vec`]) and its `Drop` wait for the device work queued in its context
/// before touching or freeing the memory.
#[repr(C)]
pub struct PinnedMutPtr<'a, T> {
    /// First field: what the kernel receives (see the `DeviceRepr` impl).
    addr: sys::CUdeviceptr,
    /// The context the buffer was allocated in; null when made by `from_raw`.
    ctx: sys::CUcontext,
    /// Elements of `T` the memory holds, for a checked launch's extent check.
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<T> std::fmt::Debug for PinnedMutPtr<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PinnedMutPtr({:#x}, len {})", self.addr, self.len)
    }
}
// SAFETY: `PinnedMutPtr` is `repr(C)` with the `CUdeviceptr` (u64) first: `launch_builder().arg(&ptr)`
// passes a pointer to that field, and the driver reads exactly the kernel parameter's size (8
// bytes, a `T*`) from it, i.e. the address.
unsafe impl<T> cudarc::driver::DeviceRepr for PinnedMutPtr<'_, T> {}
// SAFETY: a device address and a context handle are plain values; the host never accesses the
// memory through this type, and the borrow `'a` keeps the buffer alive and exclusively lent.
unsafe impl<T: Send> Send for PinnedMutPtr<'_, T> {}
// SAFETY: through `&PinnedMutPtr` only the integers can be read.
unsafe impl<T: Sync> Sync for PinnedMutPtr<'_, T> {}

impl<T> PinnedMutPtr<'_, T> {
    /// Wraps a mapped device address that kernels may write, with an unbounded lifetime and no
    /// context (so [`check_same_context`](crate::check_same_context) passes it).
    ///
    /// # Safety
    /// `addr` must be the device address of mapped pinned host memory holding at least `len`
    /// elements of `T`, alive until every launch that uses it has finished, and not read or
    /// written by the host (except with volatile accesses) while such a launch may be running.
    pub unsafe fn from_raw(addr: sys::CUdeviceptr, len: usize) -> Self {
        PinnedMutPtr { addr, ctx: std::ptr::null_mut(), len, _borrow: PhantomData }
    }

    /// A pointer to `len` elements in memory of `ctx`, mutably borrowing for `'a` what keeps
    /// it alive.
    pub(crate) fn lend(addr: sys::CUdeviceptr, ctx: sys::CUcontext, len: usize) -> Self {
        PinnedMutPtr { addr, ctx, len, _borrow: PhantomData }
    }

    /// A second pointer to the same memory for a shorter borrow, e.g. for one launch of
    /// several: `k.launch(s, cfg, out.reborrow())`.
    pub fn reborrow(&mut self) -> PinnedMutPtr<'_, T> {
        PinnedMutPtr { addr: self.addr, ctx: self.ctx, len: self.len, _borrow: PhantomData }
    }

    /// The raw device address (what the kernel receives).
    pub fn addr(&self) -> sys::CUdeviceptr {
        self.addr
    }

    /// The context the buffer was allocated in (null for a pointer made with `from_raw`), for
    /// [`check_same_context`](crate::check_same_context).
    pub fn context(&self) -> sys::CUcontext {
        self.ctx
    }

    /// The number of `T` the memory holds (a checked launch compares it with the extent).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the memory holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send_sync<T: Send + Sync>() {}
    fn copy<T: Copy>() {}

    #[test]
    fn pinned_pointers_pass_the_address_first() {
        send_sync::<PinnedPtr<'static, f32>>();
        send_sync::<PinnedMutPtr<'static, u64>>();
        copy::<PinnedPtr<'static, f32>>();
        // The kernel receives the first 8 bytes (the driver reads the parameter's size).
        assert_eq!(std::mem::offset_of!(PinnedMutPtr<'static, [f64; 4]>, addr), 0);
        assert_eq!(std::mem::offset_of!(PinnedPtr<'static, u8>, addr), 0);
        // SAFETY: the address is only stored and printed, never dereferenced or launched.
        let mut out = unsafe { PinnedMutPtr::<f32>::from_raw(0x7f00_1000, 40) };
        let again = out.reborrow();
        assert_eq!(again.addr(), 0x7f00_1000);
        assert!(again.context().is_null(), "from_raw carries no context");
        assert_eq!(format!("{out:?}"), "PinnedMutPtr(0x7f001000, len 40)");
        assert_eq!(out.len(), 40);
        // SAFETY: as above.
        let read = unsafe { PinnedPtr::<f32>::from_raw(0x10, 0) };
        let copied = read;
        assert_eq!((read.addr(), copied.addr()), (0x10, 0x10));
        assert!(read.is_empty());
    }
}
