//! What generated `#[kernel]` bindings stand on to load code: a kernel module loaded once per
//! context (cubin, or the NVRTC fallback), its functions found, and their parameters checked
//! against the declaration.

use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, CudaFunction, CudaModule, DriverError};
use cudarc::nvrtc::{CompileOptions, Ptx};

use crate::context::Context;
use crate::driver;
use crate::error::{Error, Result};
use crate::launch::module_registry::{load_once, ModuleCode};

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
        if !unsafe { driver::nvrtc_library_present() } {
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
    // SAFETY: the driver library is loaded (a context exists).
    match unsafe { driver::driver_version() } {
        Ok(version) if version >= PARAM_INFO_DRIVER => {}
        _ => return Ok(()),
    }
    ctx.inner().bind_to_thread().map_err(|e| Error::driver("bind the context to query kernel parameters", e))?;
    let func = function.cu_function();
    for (index, &want) in expected.iter().enumerate() {
        // SAFETY: `func` is a live function handle (borrowed from `function`); the driver is at
        // least CUDA 12.4 (checked above). Past the last parameter it answers
        // CUDA_ERROR_INVALID_VALUE.
        let found = match unsafe { driver::launch::func_param_info(func, index) } {
            Ok((_offset, size)) => Some(u32::try_from(size).unwrap_or(u32::MAX)),
            // The function has fewer parameters than declared.
            Err(DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE)) => None,
            // The driver cannot say for this function: nothing to check against.
            _ => return Ok(()),
        };
        if found != Some(want) {
            return Err(Error::ParamMismatch { kernel, index, expected: Some(want), found });
        }
    }
    Ok(())
}
