//! Device memory as kgraph hands it out: [`DeviceBuffer`] owns an allocation, [`DeviceView`]
//! and [`DeviceViewMut`] borrow a range of one.
//!
//! They wrap cudarc's `CudaSlice`, `CudaView` and `CudaViewMut` without their methods: cudarc's
//! slices lead to their stream (`stream()`, `context()`) and so to cudarc's safe API, which
//! assumes event tracking kgraph turns off (see [`crate::Context`]). What a buffer offers is its
//! length, its stream as a [`Stream`], sub-views, and the kgraph traits [`DeviceIn`] /
//! [`DeviceOut`] that launches, transfers and collectives take; the cudarc slice is one
//! `unsafe fn` away for code that keeps the ordering contract itself.

use std::fmt;
use std::ops::{Bound, RangeBounds};

use cudarc::driver::{sys, CudaSlice, CudaView, CudaViewMut};

use crate::context::Stream;
use crate::error::{Error, MemoryError, Result};
use crate::launch::args::{DeviceIn, DeviceOut};

/// An allocation of `len` elements of `T` in device memory, owned by the stream it was
/// allocated on ([`crate::Device::alloc_zeros`], [`crate::Device::upload`]): dropping it frees
/// the memory in that stream's order, after the work issued there before.
pub struct DeviceBuffer<T> {
    slice: CudaSlice<T>,
}

/// A range of a [`DeviceBuffer`], read-only (`&[T]` on the device).
pub struct DeviceView<'a, T> {
    view: CudaView<'a, T>,
}

/// A range of a [`DeviceBuffer`], writable (`&mut [T]` on the device).
pub struct DeviceViewMut<'a, T> {
    view: CudaViewMut<'a, T>,
}

/// `start..end` of `bounds` within `len`, or [`MemoryError::OutOfRange`] naming `what`.
fn range(what: &str, bounds: impl RangeBounds<usize>, len: usize) -> Result<(usize, usize)> {
    let past = |index| Error::Memory(MemoryError::OutOfRange { what: format!("{what}: range bound"), index, len });
    let start = match bounds.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.checked_add(1).ok_or_else(|| past(s))?,
        Bound::Unbounded => 0,
    };
    let end = match bounds.end_bound() {
        Bound::Included(&e) => e.checked_add(1).ok_or_else(|| past(e))?,
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    if end > len {
        return Err(Error::Memory(MemoryError::OutOfRange { what: format!("{what}: range end"), index: end, len }));
    }
    if start > end {
        return Err(Error::Memory(MemoryError::OutOfRange {
            what: format!("{what}: range start (past its end {end})"),
            index: start,
            len,
        }));
    }
    Ok((start, end))
}

impl<T> DeviceBuffer<T> {
    /// kgraph's own allocations: a slice of a kgraph context, owned by its stream.
    pub(crate) fn own(slice: CudaSlice<T>) -> Self {
        DeviceBuffer { slice }
    }

    /// A buffer of a cudarc slice.
    ///
    /// # Safety
    /// When event tracking is off in the slice's context (as in kgraph's), every use of the
    /// slice so far on a stream other than its own has completed, or is ordered before the
    /// slice's later uses and its free under the contract of [`crate::Device::new_stream`].
    pub unsafe fn from_cuda(slice: CudaSlice<T>) -> Self {
        DeviceBuffer { slice }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.slice.len()
    }

    /// Whether the buffer holds no element.
    pub fn is_empty(&self) -> bool {
        self.slice.len() == 0
    }

    /// The stream that owns the allocation.
    pub fn stream(&self) -> &Stream {
        DeviceIn::<T>::stream(self)
    }

    /// Elements `bounds` as a read-only view; [`MemoryError::OutOfRange`] past the end.
    pub fn slice(&self, bounds: impl RangeBounds<usize>) -> Result<DeviceView<'_, T>> {
        let (s, e) = range("DeviceBuffer::slice", bounds, self.len())?;
        Ok(DeviceView { view: self.slice.slice(s..e) })
    }

    /// Elements `bounds` as a writable view; [`MemoryError::OutOfRange`] past the end.
    pub fn slice_mut(&mut self, bounds: impl RangeBounds<usize>) -> Result<DeviceViewMut<'_, T>> {
        let (s, e) = range("DeviceBuffer::slice_mut", bounds, self.len())?;
        Ok(DeviceViewMut { view: self.slice.slice_mut(s..e) })
    }

    /// The whole buffer as a read-only view.
    pub fn as_view(&self) -> DeviceView<'_, T> {
        DeviceView { view: self.slice.as_view() }
    }

    /// The whole buffer as a writable view.
    pub fn as_view_mut(&mut self) -> DeviceViewMut<'_, T> {
        DeviceViewMut { view: self.slice.as_view_mut() }
    }

    /// `[0, mid)` and `[mid, len)` as two writable views (disjoint, so both may be written at
    /// once); [`MemoryError::OutOfRange`] when `mid > len`.
    pub fn split_at_mut(&mut self, mid: usize) -> Result<(DeviceViewMut<'_, T>, DeviceViewMut<'_, T>)> {
        range("DeviceBuffer::split_at_mut", ..mid, self.len())?;
        let (lo, hi) = self.slice.split_at_mut(mid);
        Ok((DeviceViewMut { view: lo }, DeviceViewMut { view: hi }))
    }

    /// The cudarc slice.
    ///
    /// # Safety
    /// cudarc's API on it assumes event tracking, which kgraph's contexts run without: the
    /// caller keeps the contract of [`crate::Context::cuda`] for everything issued through it.
    pub unsafe fn as_cuda(&self) -> &CudaSlice<T> {
        &self.slice
    }

    /// The cudarc slice, mutably.
    ///
    /// # Safety
    /// As for [`DeviceBuffer::as_cuda`], and whatever the caller leaves in it (a slice it
    /// swapped in) keeps the contract of [`DeviceBuffer::from_cuda`].
    pub unsafe fn as_cuda_mut(&mut self) -> &mut CudaSlice<T> {
        &mut self.slice
    }

    /// The cudarc slice, owned (its drop frees the memory on its stream).
    ///
    /// # Safety
    /// As for [`DeviceBuffer::as_cuda`].
    pub unsafe fn into_cuda(self) -> CudaSlice<T> {
        self.slice
    }
}

impl<'a, T> DeviceView<'a, T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.view.len()
    }

    /// Whether the view holds no element.
    pub fn is_empty(&self) -> bool {
        self.view.is_empty()
    }

    /// Elements `bounds` of this view; [`MemoryError::OutOfRange`] past its end.
    pub fn slice(&self, bounds: impl RangeBounds<usize>) -> Result<DeviceView<'a, T>> {
        let (s, e) = range("DeviceView::slice", bounds, self.len())?;
        Ok(DeviceView { view: self.view.slice(s..e) })
    }
}

impl<T> DeviceViewMut<'_, T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.view.len()
    }

    /// Whether the view holds no element.
    pub fn is_empty(&self) -> bool {
        self.view.is_empty()
    }

    /// Elements `bounds` of this view, read-only; [`MemoryError::OutOfRange`] past its end.
    pub fn slice(&self, bounds: impl RangeBounds<usize>) -> Result<DeviceView<'_, T>> {
        let (s, e) = range("DeviceViewMut::slice", bounds, self.len())?;
        Ok(DeviceView { view: self.view.slice(s..e) })
    }

    /// Elements `bounds` of this view, writable; [`MemoryError::OutOfRange`] past its end.
    pub fn slice_mut(&mut self, bounds: impl RangeBounds<usize>) -> Result<DeviceViewMut<'_, T>> {
        let (s, e) = range("DeviceViewMut::slice_mut", bounds, self.len())?;
        Ok(DeviceViewMut { view: self.view.slice_mut(s..e) })
    }
}

macro_rules! device_in_via {
    ($($ty:ty => $field:ident),*) => {$(
        // SAFETY: forwards to the `DeviceIn` impl of the cudarc slice or view inside, whose
        // borrow (held by `self`) keeps the allocation alive.
        unsafe impl<T> DeviceIn<T> for $ty {
            #[inline]
            fn device_addr(&self) -> sys::CUdeviceptr {
                self.$field.device_addr()
            }
            #[inline]
            fn elem_len(&self) -> usize {
                DeviceIn::<T>::elem_len(&self.$field)
            }
            #[inline]
            fn stream(&self) -> &Stream {
                DeviceIn::<T>::stream(&self.$field)
            }
        }
    )*};
}
device_in_via!(DeviceBuffer<T> => slice, DeviceView<'_, T> => view, DeviceViewMut<'_, T> => view);
// SAFETY: an owned buffer, mutably borrowed, may be written.
unsafe impl<T> DeviceOut<T> for DeviceBuffer<T> {}
// SAFETY: a writable view, mutably borrowed, may be written.
unsafe impl<T> DeviceOut<T> for DeviceViewMut<'_, T> {}

impl<T> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceBuffer").field("addr", &self.device_addr()).field("len", &self.len()).finish()
    }
}

impl<T> fmt::Debug for DeviceView<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceView").field("addr", &self.device_addr()).field("len", &self.len()).finish()
    }
}

impl<T> fmt::Debug for DeviceViewMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceViewMut").field("addr", &self.device_addr()).field("len", &self.len()).finish()
    }
}

#[cfg(test)]
mod tests {
    use std::ops::Bound;

    use super::range;

    #[test]
    fn ranges_within_the_length_pass_and_past_it_are_refused() {
        assert_eq!(range("t", 2..5, 8).unwrap(), (2, 5));
        assert_eq!(range("t", ..=7, 8).unwrap(), (0, 8));
        assert_eq!(range("t", 3.., 8).unwrap(), (3, 8));
        assert_eq!(range("t", 8..8, 8).unwrap(), (8, 8));
        let past = range("t", 4..9, 8).unwrap_err().to_string();
        assert!(past.contains("range end") && past.contains('9'), "{past}");
        let reversed = range("t", (Bound::Included(6), Bound::Excluded(4)), 8).unwrap_err().to_string();
        assert!(reversed.contains("range start"), "{reversed}");
    }
}
