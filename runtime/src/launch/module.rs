//! What generated `#[kernel]` bindings stand on: loading a kernel module once (cubin, or the
//! NVRTC fallback), finding its functions, and the argument types a typed launch accepts.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{
    sys, CudaContext, CudaFunction, CudaModule, CudaSlice, CudaView, CudaViewMut, DevicePtr, DeviceSlice,
};

use crate::context::{Context, Stream};
use cudarc::nvrtc::{CompileOptions, Ptx};

use crate::error::{Error, Result};
use crate::module_registry::{load_once, ModuleCode};

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
    ///
    /// The module stays loaded for the life of `ctx`, and loading the same code again returns
    /// it (see `module_registry`: nothing a program drops may unload code the GPU still runs).
    pub fn load(&self, ctx: &Context) -> Result<Arc<CudaModule>> {
        let ctx = ctx.inner();
        if self.has_image() {
            return load_once(ctx, ModuleCode::Embedded(self.image), || {
                self.load_ptx(ctx, Ptx::from_binary(self.image.to_vec()))
            });
        }
        self.load_compiled(ctx, self.compile_with_nvrtc(ctx)?)
    }

    /// Loads the module compiled with NVRTC from the `.cu` file on disk (hot reload). As with
    /// [`Self::load`] the module stays loaded; code compiled to the same PTX before returns its
    /// module.
    pub fn load_from_disk(&self, ctx: &Context) -> Result<Arc<CudaModule>> {
        let ctx = ctx.inner();
        let path = self.disk_path();
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::ModuleLoad { file: self.file, detail: format!("read {}: {e}", path.display()) })?;
        self.load_compiled(ctx, self.compile_text_with_nvrtc(ctx, &text)?)
    }

    /// The module of PTX NVRTC compiled, keyed by the PTX itself (which reflects the headers
    /// and options it was compiled with, not only the `.cu` text).
    fn load_compiled(&self, ctx: &Arc<CudaContext>, ptx: Ptx) -> Result<Arc<CudaModule>> {
        let text = ptx.to_src();
        load_once(ctx, ModuleCode::Compiled(text.clone()), || self.load_ptx(ctx, Ptx::from_src(text)))
    }

    fn load_ptx(&self, ctx: &Arc<CudaContext>, ptx: Ptx) -> Result<Arc<CudaModule>> {
        ctx.load_module(ptx).map_err(|e| Error::ModuleLoad { file: self.file, detail: e.to_string() })
    }

    fn compile_with_nvrtc(&self, ctx: &Arc<CudaContext>) -> Result<Ptx> {
        self.compile_text_with_nvrtc(ctx, self.source)
    }

    fn compile_text_with_nvrtc(&self, ctx: &Arc<CudaContext>, source: &str) -> Result<Ptx> {
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
        cudarc::nvrtc::compile_ptx_with_opts(source, opts)
            .map_err(|e| Error::ModuleLoad { file: self.file, detail: format!("NVRTC: {e}") })
    }
}

/// Loads each kernel file once per context, so the handles of several kernels in one `.cu`
/// share one `CudaModule`.
#[derive(Debug)]
pub struct ModuleCache {
    ctx: Context,
    modules: Vec<(&'static str, Arc<CudaModule>)>,
    /// Compile every module from its `.cu` file on disk (hot reload) instead of the embedded image.
    from_disk: bool,
}

impl ModuleCache {
    /// An empty cache for `ctx`.
    pub fn new(ctx: &Context) -> Self {
        ModuleCache { ctx: ctx.clone(), modules: Vec::new(), from_disk: false }
    }

    /// A cache that compiles each module from the `.cu` file on disk
    /// ([`KernelSource::disk_path`]) with NVRTC: what hot reload loads new kernels through.
    ///
    /// # Safety
    /// A handle loaded through this cache runs the code on disk, while its `PDL_WAITS` (which
    /// lets `launch_with` grant `LaunchOptions::PDL`) describes the code the build compiled. The
    /// caller launches none of these handles with PDL (no `LaunchOptions::PDL`, no programmatic
    /// graph edge into them) unless the code on disk executes `griddepcontrol.wait` before it
    /// touches memory an earlier kernel on the stream accesses. The generated `reload_kernels`
    /// turns the struct's PDL off before the reloaded kernels run.
    pub unsafe fn from_disk(ctx: &Context) -> Self {
        ModuleCache { ctx: ctx.clone(), modules: Vec::new(), from_disk: true }
    }

    /// The context modules are loaded into.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The module for `src`, loading it on first use.
    pub fn module(&mut self, src: &KernelSource) -> Result<Arc<CudaModule>> {
        if let Some((_, m)) = self.modules.iter().find(|(f, _)| *f == src.file) {
            return Ok(m.clone());
        }
        let m = if self.from_disk { src.load_from_disk(&self.ctx)? } else { src.load(&self.ctx)? };
        self.modules.push((src.file, m.clone()));
        Ok(m)
    }

    /// Looks `kernel` up in the module of `src`.
    pub fn function(&mut self, src: &KernelSource, kernel: &'static str) -> Result<CudaFunction> {
        let module = self.module(src)?;
        module.load_function(kernel).map_err(|source| Error::FunctionNotFound { kernel, file: src.file, source })
    }

    /// Looks up the function of symbol `symbol` (the `extern "C"` name, or a C++ kernel's
    /// mangled symbol) in the module of `src`, and checks its parameters against `param_sizes`
    /// (the bytes the generated launch passes, in order) where the driver reports them
    /// ([`check_param_sizes`]); `kernel` names it in errors.
    pub fn kernel_function(
        &mut self,
        src: &KernelSource,
        symbol: &'static str,
        kernel: &'static str,
        param_sizes: &[u32],
    ) -> Result<CudaFunction> {
        let module = self.module(src)?;
        let function = module.load_function(symbol).map_err(|source| Error::FunctionNotFound {
            kernel,
            file: src.file,
            source,
        })?;
        check_param_sizes(&self.ctx, &function, kernel, param_sizes)?;
        Ok(function)
    }
}

/// The first CUDA version whose driver has `cuFuncGetParamInfo` (12.4).
const PARAM_INFO_DRIVER: i32 = 12040;

/// Checks the parameters of the loaded `function` against `expected` (bytes per parameter, in
/// order) with the driver's `cuFuncGetParamInfo`: [`Error::ParamMismatch`] for the first that
/// differs, or when the function has fewer. On a driver older than CUDA 12.4, which cannot
/// report parameters, it checks nothing. This is the load-time stand-in for the compile-time
/// record check when the build had no nvcc (the NVRTC fallback); with a record it confirms it.
///
/// Only the declared indices are asked for: asking past the last parameter is how the driver
/// would reveal extra ones, but it answers with an error that sanitizers report on every load
/// (the driver of kgraph's CUDA 13.0 bindings has no `cuFuncGetParamCount`). A kernel with more
/// parameters than declared is caught at compile time by the record, and by the source check.
pub fn check_param_sizes(ctx: &Context, function: &CudaFunction, kernel: &'static str, expected: &[u32]) -> Result<()> {
    let mut version = 0i32;
    // SAFETY: writes one int; the driver library is loaded (a context exists).
    let queried = unsafe { sys::cuDriverGetVersion(&mut version) };
    if queried != sys::CUresult::CUDA_SUCCESS || version < PARAM_INFO_DRIVER {
        return Ok(());
    }
    ctx.inner().bind_to_thread().map_err(|e| Error::driver("bind the context to query kernel parameters", e))?;
    let func = function.cu_function();
    for (index, &want) in expected.iter().enumerate() {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: `func` is a live function handle (borrowed from `function`); the driver writes
        // the two out-parameters or returns an error (CUDA_ERROR_INVALID_VALUE past the last
        // parameter).
        let status = unsafe { sys::cuFuncGetParamInfo(func, index, &mut offset, &mut size) };
        let found = match status {
            sys::CUresult::CUDA_SUCCESS => Some(u32::try_from(size).unwrap_or(u32::MAX)),
            // The function has fewer parameters than declared.
            sys::CUresult::CUDA_ERROR_INVALID_VALUE => None,
            // The driver cannot say for this function: nothing to check against.
            _ => return Ok(()),
        };
        if found != Some(want) {
            return Err(Error::ParamMismatch { kernel, index, expected: Some(want), found });
        }
    }
    Ok(())
}

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
/// [`DeviceIn::stream`]): [`Error::TrackedContext`] when the argument comes from a cudarc
/// context with event tracking on, [`Error::ForeignStream`] when `arg_stream` is not `launch`
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
        return Err(Error::TrackedContext { kernel, param });
    }
    if launch.cu_stream() != arg_stream.cu_stream() || launch_ctx.cu_ctx() != arg_ctx.cu_ctx() {
        return Err(Error::ForeignStream { kernel, param });
    }
    Ok(())
}

/// Checks that a mapped pinned argument ([`PinnedPtr::context`], [`PinnedMutPtr::context`])
/// belongs to the context of the `launch` stream: [`Error::ForeignContext`] otherwise. A null
/// `arg_ctx` (a pointer made with `from_raw`, whose caller took on the lifetime contract)
/// passes. The buffer's host views and `Drop` wait for its own context only, which is why a
/// launch in another context must be refused.
pub fn check_same_context(
    kernel: &'static str,
    param: &'static str,
    launch: &Stream,
    arg_ctx: sys::CUcontext,
) -> Result<()> {
    if arg_ctx.is_null() || arg_ctx == launch.context().cu_ctx() {
        Ok(())
    } else {
        Err(Error::ForeignContext { kernel, param })
    }
}

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
    /// [`check_same_context`] passes it).
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
    /// [`check_same_context`].
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
/// is asynchronous: the buffer's host views ([`crate::MappedBuffer::as_slice`]) and its `Drop`
/// wait for the device work queued in its context before touching or freeing the memory.
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
    /// context (so [`check_same_context`] passes it).
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
    /// [`check_same_context`].
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
