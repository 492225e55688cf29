//! The argument traits of a typed launch ([`DeviceIn`], [`DeviceOut`]) and the launch-side checks
//! that keep an argument's use ordered with its allocation's lifetime.

use cudarc::driver::{sys, CudaSlice, CudaView, CudaViewMut, DevicePtr, DeviceSlice};

use crate::context::Stream;
use crate::error::{Error, LaunchError, Result};

/// Device memory a kernel may read: a [`crate::DeviceBuffer`] or a view of one (and cudarc's
/// `CudaSlice`, `CudaView`, `CudaViewMut`, which safe code gets only from a cudarc context of
/// its own, with event tracking on: kgraph's launches refuse them).
///
/// kgraph contexts run without cudarc's per-slice event tracking (see [`crate::Device`]), so
/// taking the raw pointer records nothing and costs nothing. In exchange, an allocation is
/// ordered only against work on its own [`DeviceIn::stream`]: it is allocated and freed in that
/// stream's order. Work issued on any other stream must be checked with [`check_same_stream`]
/// (kgraph's own transfers are) or ordered by the caller under an `unsafe` contract.
///
/// # Safety
/// Kernels and kgraph's copies trust these numbers: implementors promise that
/// `device_addr()` is the address of a live device allocation (of this process's device) holding
/// at least `elem_len()` elements of `T`, valid while `self` is borrowed, and that the allocation
/// is freed (or reused) only in the order of `stream()`, after all work issued on that stream
/// before the free.
pub unsafe trait DeviceIn<T> {
    /// The device address of element 0.
    fn device_addr(&self) -> sys::CUdeviceptr;
    /// Number of elements.
    fn elem_len(&self) -> usize;
    /// The stream that owns the allocation: it was allocated, and will be freed, in this
    /// stream's order. Work on another stream is not ordered against the free.
    fn stream(&self) -> &Stream;
}

/// Device memory a kernel may write: a [`crate::DeviceBuffer`] or a [`crate::DeviceViewMut`]
/// (and cudarc's `CudaSlice` and `CudaViewMut`).
///
/// # Safety
/// As for [`DeviceIn`], and the memory may be written while `self` is mutably borrowed.
pub unsafe trait DeviceOut<T>: DeviceIn<T> {}

macro_rules! device_in {
    ($($ty:ty),*) => {$(
        // SAFETY: the address, length and stream are cudarc's own for this slice/view, whose
        // borrow keeps the allocation alive; cudarc frees a slice on its own stream
        // (`cuMemFreeAsync`, or a stream synchronize before `cuMemFree`).
        unsafe impl<T> DeviceIn<T> for $ty {
            #[inline]
            fn device_addr(&self) -> sys::CUdeviceptr {
                let (ptr, _no_event) = self.device_ptr(DeviceSlice::stream(self));
                ptr
            }
            #[inline]
            fn elem_len(&self) -> usize {
                DeviceSlice::len(self)
            }
            #[inline]
            fn stream(&self) -> &Stream {
                Stream::wrap(DeviceSlice::stream(self))
            }
        }
    )*};
}
device_in!(CudaSlice<T>, CudaView<'_, T>, CudaViewMut<'_, T>);
// SAFETY: an owned slice, mutably borrowed, may be written.
unsafe impl<T> DeviceOut<T> for CudaSlice<T> {}
// SAFETY: a mutable view, mutably borrowed, may be written.
unsafe impl<T> DeviceOut<T> for CudaViewMut<'_, T> {}

/// Checks that work issued on `launch` may use an argument owned by `arg_stream` (its
/// [`DeviceIn::stream`]): [`LaunchError::TrackedContext`] when the argument comes from a cudarc
/// context with event tracking on, [`LaunchError::ForeignStream`] when `arg_stream` is not `launch`
/// (another stream, or the same handle in another context). `kernel` and `param` name the
/// launch and the parameter in the error. Two handle comparisons and one relaxed load: cheap
/// enough for every launch.
///
/// ```no_run
/// # fn f(dev: &kgraph_runtime::Device, x: &kgraph_runtime::DeviceBuffer<f32>) -> kgraph_runtime::Result<()> {
/// use kgraph_runtime::{check_same_stream, DeviceIn};
/// check_same_stream("my_kernel", "x", dev.stream(), DeviceIn::<f32>::stream(x))?;
/// # Ok(()) }
/// ```
pub fn check_same_stream(
    kernel: &'static str,
    param: &'static str,
    launch: &Stream,
    arg_stream: &Stream,
) -> Result<()> {
    let (launch_ctx, arg_ctx) = (launch.context(), arg_stream.context());
    if arg_ctx.is_event_tracking() || launch_ctx.is_event_tracking() {
        return Err(Error::Launch(LaunchError::TrackedContext { kernel, param }));
    }
    if launch.cu_stream() != arg_stream.cu_stream() || launch_ctx.cu_ctx() != arg_ctx.cu_ctx() {
        return Err(Error::Launch(LaunchError::ForeignStream { kernel, param }));
    }
    Ok(())
}

/// Checks that a mapped pinned argument ([`PinnedPtr::context`](crate::PinnedPtr::context),
/// [`PinnedMutPtr::context`](crate::PinnedMutPtr::context)) belongs to the context of the `launch`
/// stream: [`LaunchError::ForeignContext`] otherwise. A null `arg_ctx` (a pointer made with `from_raw`,
/// whose caller took on the lifetime contract) passes. The buffer's host views and `Drop` wait for
/// its own context only, which is why a launch in another context must be refused.
pub fn check_same_context(
    kernel: &'static str,
    param: &'static str,
    launch: &Stream,
    arg_ctx: sys::CUcontext,
) -> Result<()> {
    if arg_ctx.is_null() || arg_ctx == launch.context().cu_ctx() {
        Ok(())
    } else {
        Err(Error::Launch(LaunchError::ForeignContext { kernel, param }))
    }
}
