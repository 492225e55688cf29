//! What generated `#[kernel]` bindings stand on: loading a kernel module once (cubin, or the
//! NVRTC fallback), finding its functions, and the argument types a typed launch accepts.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, CudaFunction, CudaModule, CudaSlice, CudaView, CudaViewMut, DevicePtr};
use cudarc::nvrtc::{CompileOptions, Ptx};

use crate::error::{Error, Result};

/// One kernel source file as compiled into the binary by `kgraph-build` and `#[kernel]`.
#[derive(Debug, Clone, Copy)]
pub struct KernelSource {
    /// The `.cu` file, relative to the crate root (e.g. `kernels/cfc_step.cu`), for messages.
    pub file: &'static str,
    /// The device image built by nvcc; empty when the build fell back to NVRTC.
    pub image: &'static [u8],
    /// The `.cu` source, compiled with NVRTC when `image` is empty.
    pub source: &'static str,
    /// The folder of local headers (`#include "x.cuh"`), for the NVRTC fallback.
    pub include_dir: &'static str,
}

impl KernelSource {
    /// True when this binary carries an nvcc-built image (the production path).
    pub fn has_image(&self) -> bool {
        !self.image.is_empty()
    }

    /// Loads the module into `ctx`: the embedded image, or the source through NVRTC for the
    /// device's own compute capability.
    pub fn load(&self, ctx: &Arc<CudaContext>) -> Result<Arc<CudaModule>> {
        let ptx = if self.has_image() { Ptx::from_binary(self.image.to_vec()) } else { self.compile_with_nvrtc(ctx)? };
        ctx.load_module(ptx).map_err(|e| Error::ModuleLoad { file: self.file, detail: e.to_string() })
    }

    fn compile_with_nvrtc(&self, ctx: &Arc<CudaContext>) -> Result<Ptx> {
        // SAFETY: only asks the loader whether libnvrtc can be opened; nothing is called.
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            return Err(Error::ModuleLoad {
                file: self.file,
                detail: "built without nvcc (no cubin embedded) and libnvrtc is not available at run time; rebuild with nvcc (scripts/install-nvcc)".into(),
            });
        }
        let (major, minor) = ctx.compute_capability().map_err(|e| Error::driver("query compute capability", e))?;
        let opts = CompileOptions {
            include_paths: vec![self.include_dir.to_string()],
            options: vec![format!("--gpu-architecture=compute_{major}{minor}"), "-std=c++17".into()],
            name: Some(self.file.to_string()),
            ..Default::default()
        };
        cudarc::nvrtc::compile_ptx_with_opts(self.source, opts)
            .map_err(|e| Error::ModuleLoad { file: self.file, detail: format!("NVRTC: {e}") })
    }
}

/// Loads each kernel file once per context, so the handles of several kernels in one `.cu`
/// share one `CudaModule`.
#[derive(Debug)]
pub struct ModuleCache {
    ctx: Arc<CudaContext>,
    modules: Vec<(&'static str, Arc<CudaModule>)>,
}

impl ModuleCache {
    /// An empty cache for `ctx`.
    pub fn new(ctx: &Arc<CudaContext>) -> Self {
        ModuleCache { ctx: ctx.clone(), modules: Vec::new() }
    }

    /// The context modules are loaded into.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The module for `src`, loading it on first use.
    pub fn module(&mut self, src: &KernelSource) -> Result<Arc<CudaModule>> {
        if let Some((_, m)) = self.modules.iter().find(|(f, _)| *f == src.file) {
            return Ok(m.clone());
        }
        let m = src.load(&self.ctx)?;
        self.modules.push((src.file, m.clone()));
        Ok(m)
    }

    /// Looks `kernel` up in the module of `src`.
    pub fn function(&mut self, src: &KernelSource, kernel: &'static str) -> Result<CudaFunction> {
        let module = self.module(src)?;
        module.load_function(kernel).map_err(|source| Error::FunctionNotFound { kernel, file: src.file, source })
    }
}

/// Device memory a kernel may read: `CudaSlice<T>`, `CudaView<T>` or `CudaViewMut<T>`.
///
/// kgraph contexts run without cudarc's per-slice event tracking (see [`crate::Device`]), so
/// taking the raw pointer records nothing and costs nothing.
///
/// # Safety
/// Kernels and kgraph's copies trust these two numbers: implementors promise that
/// `device_addr()` is the address of a live device allocation (of this process's device) holding
/// at least `elem_len()` elements of `T`, valid while `self` is borrowed.
pub unsafe trait DeviceIn<T> {
    /// The device address of element 0.
    fn device_addr(&self) -> sys::CUdeviceptr;
    /// Number of elements.
    fn elem_len(&self) -> usize;
}

/// Device memory a kernel may write: `CudaSlice<T>` or `CudaViewMut<T>`.
///
/// # Safety
/// As for [`DeviceIn`], and the memory may be written while `self` is mutably borrowed.
pub unsafe trait DeviceOut<T>: DeviceIn<T> {}

macro_rules! device_in {
    ($($ty:ty),*) => {$(
        // SAFETY: the address and length are cudarc's own for this slice/view, whose borrow
        // keeps the allocation alive.
        unsafe impl<T> DeviceIn<T> for $ty {
            #[inline]
            fn device_addr(&self) -> sys::CUdeviceptr {
                let (ptr, _no_event) = self.device_ptr(self.stream());
                ptr
            }
            #[inline]
            fn elem_len(&self) -> usize {
                cudarc::driver::DeviceSlice::len(self)
            }
        }
    )*};
}
use cudarc::driver::DeviceSlice as _;
device_in!(CudaSlice<T>, CudaView<'_, T>, CudaViewMut<'_, T>);
// SAFETY: an owned slice, mutably borrowed, may be written.
unsafe impl<T> DeviceOut<T> for CudaSlice<T> {}
// SAFETY: a mutable view, mutably borrowed, may be written.
unsafe impl<T> DeviceOut<T> for CudaViewMut<'_, T> {}

/// A device address of mapped pinned host memory (a [`crate::PinnedSlot`] or
/// [`crate::MappedBuffer`]) with the number of elements there: the zero-copy kernel argument.
/// The kernel reads host memory over PCIe/C2C directly, so the host's latest write is what the
/// kernel sees. A checked launch compares [`PinnedPtr::len`] with the parameter's extent; the
/// kernel receives [`PinnedPtr::addr`] only.
pub struct PinnedPtr<T> {
    addr: sys::CUdeviceptr,
    len: usize,
    _elem: PhantomData<*const T>,
}

impl<T> Clone for PinnedPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for PinnedPtr<T> {}
impl<T> std::fmt::Debug for PinnedPtr<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PinnedPtr({:#x}, len {})", self.addr, self.len)
    }
}
// SAFETY: a device address and a length are plain integers; sending them touches no memory.
unsafe impl<T> Send for PinnedPtr<T> {}
// SAFETY: as above; shared references only copy the integers.
unsafe impl<T> Sync for PinnedPtr<T> {}

impl<T> PinnedPtr<T> {
    /// Wraps a mapped device address of `len` elements.
    ///
    /// # Safety
    /// `addr` must be the device address of mapped pinned host memory holding at least `len`
    /// elements of `T`, alive until every launch that uses it has finished.
    pub unsafe fn from_raw(addr: sys::CUdeviceptr, len: usize) -> Self {
        PinnedPtr { addr, len, _elem: PhantomData }
    }

    /// The raw device address (what the kernel receives).
    pub fn addr(&self) -> sys::CUdeviceptr {
        self.addr
    }

    /// The number of `T` the memory holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the memory holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A device address of mapped pinned host memory that a kernel **writes** (a
/// [`crate::MappedBuffer`], lent through [`crate::MappedBuffer::device_ptr_mut`]), with the
/// number of elements there: the zero-copy kernel output, for a `T*` parameter declared
/// `PinnedMut<T>`. The kernel stores straight into host memory over PCIe/C2C, so its results
/// need no download copy; the host may read them only after synchronizing the stream that ran
/// the kernel (before that they may be stale, or half written). A checked launch compares
/// [`PinnedMutPtr::len`] with the parameter's extent and checks it overlaps no other argument.
pub struct PinnedMutPtr<T> {
    addr: sys::CUdeviceptr,
    len: usize,
    _elem: PhantomData<*mut T>,
}

impl<T> Clone for PinnedMutPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for PinnedMutPtr<T> {}
impl<T> std::fmt::Debug for PinnedMutPtr<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PinnedMutPtr({:#x}, len {})", self.addr, self.len)
    }
}
// SAFETY: a device address and a length are plain integers; sending them touches no memory.
unsafe impl<T> Send for PinnedMutPtr<T> {}
// SAFETY: as above; shared references only copy the integers.
unsafe impl<T> Sync for PinnedMutPtr<T> {}

impl<T> PinnedMutPtr<T> {
    /// Wraps a mapped device address of `len` elements that kernels may write.
    ///
    /// # Safety
    /// `addr` must be the device address of mapped pinned host memory holding at least `len`
    /// elements of `T`, alive until every launch that uses it has finished, and not read or
    /// written by the host while such a launch may be running.
    pub unsafe fn from_raw(addr: sys::CUdeviceptr, len: usize) -> Self {
        PinnedMutPtr { addr, len, _elem: PhantomData }
    }

    /// The raw device address (what the kernel receives).
    pub fn addr(&self) -> sys::CUdeviceptr {
        self.addr
    }

    /// The number of `T` the memory holds.
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

    fn send_sync<T: Send + Sync + Copy>() {}

    #[test]
    fn pinned_pointers_are_copyable_addresses_with_lengths() {
        send_sync::<PinnedPtr<f32>>();
        send_sync::<PinnedMutPtr<u64>>();
        // SAFETY: the address is only stored and printed, never dereferenced or launched.
        let out = unsafe { PinnedMutPtr::<f32>::from_raw(0x7f00_1000, 40) };
        let copy = out;
        assert_eq!((out.addr(), copy.addr(), copy.len()), (0x7f00_1000, 0x7f00_1000, 40));
        assert_eq!(format!("{out:?}"), "PinnedMutPtr(0x7f001000, len 40)");
        // SAFETY: as above.
        let empty = unsafe { PinnedPtr::<f32>::from_raw(0, 0) };
        assert!(empty.is_empty());
    }
}
