//! What generated `#[kernel]` bindings stand on to load code: a kernel module loaded once per
//! context (cubin, or the NVRTC fallback), its functions found, and their parameters checked
//! against the declaration.

use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, CudaFunction, CudaModule, DriverError};
use cudarc::nvrtc::{CompileOptions, Ptx};

use crate::context::Context;
use crate::driver;
use crate::error::{Error, ModuleError, Result};
use crate::launch::image::checked_image;
use crate::launch::module_registry::{load_once, ModuleCode};

/// One kernel source file as compiled into the binary by `kgraph-build` and `#[kernel]`: the
/// code a handle's checked declaration was checked against. Its fields are private and its
/// constructor `unsafe`, so safe code cannot pair a declared kernel's file with other code.
#[derive(Debug, Clone, Copy)]
pub struct KernelSource {
    /// The `.cu` file, relative to the crate root (e.g. `kernels/cfc_step.cu`), for messages.
    file: &'static str,
    /// The device image built by nvcc; empty when the build fell back to NVRTC.
    image: &'static [u8],
    /// The `.cu` source, compiled with NVRTC when `image` is empty.
    source: &'static str,
    /// The folder of local headers (`#include "x.cuh"`), for the NVRTC fallback.
    include_dir: &'static str,
}

impl KernelSource {
    /// The source of `file`: the device `image` nvcc built (empty for the NVRTC fallback), the
    /// `.cu` text `source`, and the folder of its local headers `include_dir`. `#[kernel]`'s
    /// generated `SOURCE` is made with this.
    ///
    /// # Safety
    /// A kernel handle whose `SOURCE` this is launches this code under its declaration, so:
    /// `image` is empty, or the complete cubin, fatbin or PTX that was built from `source` (the
    /// file the declarations using it were checked against); and `source` is that file's text,
    /// compiled as it is with `include_dir` on the include path. kgraph checks the image's
    /// framing before the driver reads it (a truncated or oversized image is refused), not what
    /// the code does. A value for hand-written loads (`ModuleCache::function`, launched through
    /// cudarc's `unsafe` launch) makes no promise to any handle, only this one.
    pub const unsafe fn new(
        file: &'static str,
        image: &'static [u8],
        source: &'static str,
        include_dir: &'static str,
    ) -> Self {
        KernelSource { file, image, source, include_dir }
    }

    /// The `.cu` file, relative to the crate root (e.g. `kernels/cfc_step.cu`), for messages.
    pub fn file(&self) -> &'static str {
        self.file
    }

    /// The device image nvcc built; empty when the build fell back to NVRTC.
    pub fn image(&self) -> &'static [u8] {
        self.image
    }

    /// The `.cu` source text (what NVRTC compiles when the image is empty).
    pub fn source(&self) -> &'static str {
        self.source
    }

    /// The folder of the file's local headers.
    pub fn include_dir(&self) -> &'static str {
        self.include_dir
    }

    /// True when this binary carries an nvcc-built image (the production path).
    pub fn has_image(&self) -> bool {
        !self.image.is_empty()
    }

    /// Whether `other` is the same code: the same image, text, header folder and file. The
    /// identity [`ModuleCache`] keys modules by (so two crates' `kernels/ops.cu`, or a file
    /// name paired with other code, never share a module). Compares addresses first: a handle's
    /// `SOURCE` points at one embedded image.
    pub fn same_code(&self, other: &KernelSource) -> bool {
        let bytes_eq = |a: &[u8], b: &[u8]| std::ptr::eq(a, b) || a == b;
        bytes_eq(self.image, other.image)
            && bytes_eq(self.source.as_bytes(), other.source.as_bytes())
            && self.include_dir == other.include_dir
            && self.file == other.file
    }

    /// Loads the module into `ctx`: the embedded image, or the source through NVRTC for the
    /// device's own compute capability.
    ///
    /// The module stays loaded for the life of `ctx`, and loading the same code again returns
    /// it (see `module_registry`: nothing a program drops may unload code the GPU still runs).
    ///
    /// The image's framing is checked first (`launch/image.rs`): a cubin or fatbin whose
    /// header announces more bytes than the image holds is refused with [`ModuleError::Load`],
    /// and PTX is handed over NUL-terminated, so the driver never reads past it.
    pub fn load(&self, ctx: &Context) -> Result<Arc<CudaModule>> {
        let ctx = ctx.inner();
        if self.has_image() {
            return load_once(ctx, ModuleCode::Embedded(self.image), || {
                let image = checked_image(self.image)
                    .map_err(|e| Error::Module(ModuleError::Load { file: self.file, detail: e.0 }))?;
                self.load_ptx(ctx, Ptx::from_binary(image))
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
        let bytes = std::fs::read(&path).map_err(|e| {
            Error::Module(ModuleError::Load { file: self.file, detail: format!("read {}: {e}", path.display()) })
        })?;
        // A `.cu` need not be UTF-8 (Latin-1 in a comment, which nvcc accepts): read as `#[kernel]`
        // reads it, one character per byte.
        let text = String::from_utf8(bytes).unwrap_or_else(|e| e.into_bytes().into_iter().map(char::from).collect());
        self.load_compiled(ctx, self.compile_text_with_nvrtc(ctx, &text)?)
    }

    /// The module of PTX NVRTC compiled, keyed by the PTX itself (which reflects the headers
    /// and options it was compiled with, not only the `.cu` text).
    fn load_compiled(&self, ctx: &Arc<CudaContext>, ptx: Ptx) -> Result<Arc<CudaModule>> {
        let text = ptx.to_src();
        load_once(ctx, ModuleCode::Compiled(text.clone()), || self.load_ptx(ctx, Ptx::from_src(text)))
    }

    fn load_ptx(&self, ctx: &Arc<CudaContext>, ptx: Ptx) -> Result<Arc<CudaModule>> {
        ctx.load_module(ptx).map_err(|e| Error::Module(ModuleError::Load { file: self.file, detail: e.to_string() }))
    }

    fn compile_with_nvrtc(&self, ctx: &Arc<CudaContext>) -> Result<Ptx> {
        self.compile_text_with_nvrtc(ctx, self.source)
    }

    fn compile_text_with_nvrtc(&self, ctx: &Arc<CudaContext>, source: &str) -> Result<Ptx> {
        // SAFETY: only asks the loader whether libnvrtc can be opened; nothing is called.
        if !unsafe { driver::nvrtc_library_present() } {
            return Err(Error::Module(ModuleError::Load {
                file: self.file,
                detail: "built without nvcc (no cubin embedded) and libnvrtc is not available at run time; rebuild with nvcc (scripts/install-nvcc)".into(),
            }));
        }
        let (major, minor) = ctx.compute_capability().map_err(|e| Error::driver("query compute capability", e))?;
        let opts = CompileOptions {
            include_paths: vec![self.include_dir.to_string()],
            options: vec![format!("--gpu-architecture=compute_{major}{minor}"), "-std=c++17".into()],
            name: Some(self.file.to_string()),
            ..Default::default()
        };
        cudarc::nvrtc::compile_ptx_with_opts(source, opts)
            .map_err(|e| Error::Module(ModuleError::Load { file: self.file, detail: format!("NVRTC: {e}") }))
    }
}

/// Loads each kernel source once per context, so the handles of several kernels in one `.cu`
/// share one `CudaModule`. Modules are keyed by the code's identity ([`KernelSource::same_code`]),
/// not the file name: a handle's `load` asks for its own `SOURCE` and gets the module of exactly
/// that code, whatever else the cache holds.
#[derive(Debug)]
pub struct ModuleCache {
    ctx: Context,
    modules: Vec<(KernelSource, Arc<CudaModule>)>,
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
    /// What a load through this cache checks of the code on disk is each declared parameter's
    /// size and that the kernel has no parameter past the declared ones (`cuFuncGetParamInfo`;
    /// a driver that cannot report them, older than CUDA 12.4, refuses the load with
    /// [`ModuleError::Load`] instead of loading unchecked code). Nothing else of the declaration
    /// is checked again: the handle keeps the constants the build derived from the code it
    /// compiled (`MAX_THREADS`, `PDL_WAITS`, its extents, `requires` and `shared`).
    ///
    /// # Safety
    /// A handle loaded through this cache has the same safe `launch` as one loaded from the
    /// build, and runs the code on disk under it. So, for every kernel loaded through this cache
    /// and as long as any of these handles (or a graph built with them) may launch it:
    ///
    /// - its parameters are the declaration's in count, order, type (a pointer's element type;
    ///   a `bool` only where the declaration passes `bool`, which is 0 or 1) and constness (it
    ///   writes through no pointer declared `const`, i.e. passed as `DeviceIn`);
    /// - it accesses each pointer argument only within the extent its declaration's
    ///   `unsafe(extents)` promises, for every launch the declaration's `requires` allow;
    /// - it is correct for every block of up to `MAX_THREADS` threads (the build's
    ///   `__launch_bounds__` or `max_block`): e.g. a static `__shared__` array indexed by thread
    ///   holds that many elements (a smaller `__launch_bounds__` on disk only makes launches
    ///   fail);
    /// - it uses no more dynamic shared memory than the declaration's `shared` gives it (none
    ///   without one);
    /// - it is launched with PDL (`LaunchOptions::PDL`, or a programmatic graph edge into it)
    ///   only if it executes `griddepcontrol.wait` before it touches memory an earlier kernel on
    ///   the stream accesses: `PDL_WAITS` describes the code the build compiled, not this. The
    ///   generated `reload_kernels` turns the struct's PDL off for good before the reloaded
    ///   kernels run.
    ///
    /// A kernel that differs from its declaration in a declared parameter's size, by missing one
    /// or by an extra one is refused at load ([`ModuleError::ParamMismatch`]), which needs no
    /// promise.
    pub unsafe fn from_disk(ctx: &Context) -> Self {
        ModuleCache { ctx: ctx.clone(), modules: Vec::new(), from_disk: true }
    }

    /// The context modules are loaded into.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The module of `src`'s code, loading it on first use.
    pub fn module(&mut self, src: &KernelSource) -> Result<Arc<CudaModule>> {
        if let Some((_, m)) = self.modules.iter().find(|(code, _)| code.same_code(src)) {
            return Ok(m.clone());
        }
        let m = if self.from_disk { src.load_from_disk(&self.ctx)? } else { src.load(&self.ctx)? };
        self.modules.push((*src, m.clone()));
        Ok(m)
    }

    /// Looks `kernel` up in the module of `src`.
    pub fn function(&mut self, src: &KernelSource, kernel: &'static str) -> Result<CudaFunction> {
        let module = self.module(src)?;
        module
            .load_function(kernel)
            .map_err(|source| Error::Module(ModuleError::FunctionNotFound { kernel, file: src.file, source }))
    }

    /// Looks up the function of symbol `symbol` (the `extern "C"` name, or a C++ kernel's
    /// mangled symbol) in the module of `src`, and checks its parameters against `param_sizes`
    /// (the bytes the generated launch passes, in order) where the driver reports them
    /// ([`check_param_sizes`]); `kernel` names it in errors. In a [`Self::from_disk`] cache the
    /// check is exact: the driver must report every parameter (else [`ModuleError::Load`]), and
    /// a parameter past the declared ones is refused too ([`ModuleError::ParamMismatch`] with
    /// `expected: None`): no record of the code on disk catches it.
    pub fn kernel_function(
        &mut self,
        src: &KernelSource,
        symbol: &'static str,
        kernel: &'static str,
        param_sizes: &[u32],
    ) -> Result<CudaFunction> {
        let module = self.module(src)?;
        let function = module
            .load_function(symbol)
            .map_err(|source| Error::Module(ModuleError::FunctionNotFound { kernel, file: src.file, source }))?;
        let exact = if self.from_disk { Exactness::Exact { file: src.file } } else { Exactness::WhereReported };
        check_params(&self.ctx, &function, kernel, param_sizes, exact)?;
        Ok(function)
    }
}

/// How [`check_params`] treats what the driver cannot tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Exactness {
    /// Checks what the driver reports, and passes what it cannot (a build-checked kernel: the
    /// compile-time record check stands behind it).
    WhereReported,
    /// Code no record describes (hot reload from `file`): refused unless every declared
    /// parameter is reported with its size and the driver confirms there is none past them.
    Exact { file: &'static str },
}

/// The first CUDA version whose driver has `cuFuncGetParamInfo` (12.4).
const PARAM_INFO_DRIVER: i32 = 12040;

/// Checks the parameters of the loaded `function` against `expected` (bytes per parameter, in
/// order) with the driver's `cuFuncGetParamInfo`: [`ModuleError::ParamMismatch`] for the first that
/// differs, or when the function has fewer. On a driver older than CUDA 12.4, which cannot
/// report parameters, it checks nothing. This is the load-time stand-in for the compile-time
/// record check when the build had no nvcc (the NVRTC fallback); with a record it confirms it.
///
/// Only the declared indices are asked for: asking past the last parameter is how the driver
/// would reveal extra ones, but it answers with an error that sanitizers report on every load
/// (the driver of kgraph's CUDA 13.0 bindings has no `cuFuncGetParamCount`). A kernel with more
/// parameters than declared is caught at compile time by the record, and by the source check.
/// (A hot reload's loads, through [`ModuleCache::from_disk`], do ask past the last parameter, and
/// refuse what the driver cannot report: no record stands behind code compiled from disk.)
pub fn check_param_sizes(ctx: &Context, function: &CudaFunction, kernel: &'static str, expected: &[u32]) -> Result<()> {
    check_params(ctx, function, kernel, expected, Exactness::WhereReported)
}

fn check_params(
    ctx: &Context,
    function: &CudaFunction,
    kernel: &'static str,
    expected: &[u32],
    exact: Exactness,
) -> Result<()> {
    // SAFETY: the driver library is loaded (a context exists).
    let version = unsafe { driver::driver_version() };
    if !matches!(version, Ok(v) if v >= PARAM_INFO_DRIVER) {
        let why = match version {
            Ok(v) => format!("the driver is CUDA {}.{}", v / 1000, v % 1000 / 10),
            Err(e) => format!("the driver version is unknown: {:?}", e.0),
        };
        return unchecked(kernel, exact, why);
    }
    ctx.inner().bind_to_thread().map_err(|e| Error::driver("bind the context to query kernel parameters", e))?;
    let func = function.cu_function();
    param_verdict(kernel, expected, exact, |index| {
        // SAFETY: `func` is a live function handle (borrowed from `function`); the driver is at
        // least CUDA 12.4 (checked above). Past the last parameter it answers
        // CUDA_ERROR_INVALID_VALUE.
        unsafe { driver::launch::func_param_info(func, index) }.map(|(_, size)| size)
    })
}

/// What [`check_params`] answers when the driver cannot report the parameters (`why`).
fn unchecked(kernel: &'static str, exact: Exactness, why: String) -> Result<()> {
    match exact {
        Exactness::WhereReported => Ok(()),
        Exactness::Exact { file } => Err(Error::Module(ModuleError::Load {
            file,
            detail: format!(
                "kernel `{kernel}` compiled from disk: its parameters cannot be checked against its declaration \
                 ({why}); hot reload needs a driver that reports them (cuFuncGetParamInfo, CUDA 12.4+)"
            ),
        })),
    }
}

/// The parameter check over `size_of(index)` (the driver's `cuFuncGetParamInfo` size of
/// parameter `index`): each declared size in order, then, when exact, that there is no
/// parameter past them.
fn param_verdict(
    kernel: &'static str,
    expected: &[u32],
    exact: Exactness,
    mut size_of: impl FnMut(usize) -> std::result::Result<usize, DriverError>,
) -> Result<()> {
    const PAST_THE_LAST: sys::CUresult = sys::CUresult::CUDA_ERROR_INVALID_VALUE;
    let bytes = |size: usize| u32::try_from(size).unwrap_or(u32::MAX);
    for (index, &want) in expected.iter().enumerate() {
        let found = match size_of(index) {
            Ok(size) => Some(bytes(size)),
            // The function has fewer parameters than declared.
            Err(DriverError(e)) if e == PAST_THE_LAST => None,
            // The driver cannot say for this function: nothing to check against.
            Err(e) => return unchecked(kernel, exact, format!("parameter {index}: {:?}", e.0)),
        };
        if found != Some(want) {
            return Err(Error::Module(ModuleError::ParamMismatch { kernel, index, expected: Some(want), found }));
        }
    }
    if let Exactness::Exact { .. } = exact {
        let index = expected.len();
        match size_of(index) {
            Err(DriverError(e)) if e == PAST_THE_LAST => {}
            Ok(size) => {
                return Err(Error::Module(ModuleError::ParamMismatch {
                    kernel,
                    index,
                    expected: None,
                    found: Some(bytes(size)),
                }))
            }
            Err(e) => return unchecked(kernel, exact, format!("parameter {index}: {:?}", e.0)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use cudarc::driver::{sys, DriverError};

    use super::{param_verdict, Exactness, KernelSource};
    use crate::error::{Error, ModuleError};

    static OPS_A: [u8; 4] = [1, 2, 3, 4];
    static OPS_A_AGAIN: [u8; 4] = [1, 2, 3, 4];
    static OPS_B: [u8; 4] = [9, 9, 9, 9];

    fn source(image: &'static [u8], include_dir: &'static str) -> KernelSource {
        // SAFETY: a test value, only compared, never loaded.
        unsafe { KernelSource::new("kernels/ops.cu", image, "", include_dir) }
    }

    #[test]
    fn the_cache_key_is_the_code_not_the_file_name() {
        // Two crates' `kernels/ops.cu`: the same file name, other code, other folders.
        assert!(!source(&OPS_A, "/crate_a/kernels").same_code(&source(&OPS_B, "/crate_b/kernels")));
        // A declared file name paired with another kernel's image is other code.
        assert!(!source(&OPS_A, "/crate_a/kernels").same_code(&source(&OPS_B, "/crate_a/kernels")));
        // The same code, wherever the image is embedded, is one module.
        assert!(source(&OPS_A, "/crate_a/kernels").same_code(&source(&OPS_A_AGAIN, "/crate_a/kernels")));
    }

    /// The driver's answers for a kernel whose parameters take `sizes` bytes: past the last one,
    /// `CUDA_ERROR_INVALID_VALUE`.
    fn kernel_of(sizes: &'static [usize]) -> impl FnMut(usize) -> Result<usize, DriverError> {
        move |i| sizes.get(i).copied().ok_or(DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE))
    }

    const RELOAD: Exactness = Exactness::Exact { file: "kernels/k.cu" };

    fn mismatch(r: crate::error::Result<()>) -> (usize, Option<u32>, Option<u32>) {
        match r {
            Err(Error::Module(ModuleError::ParamMismatch { index, expected, found, .. })) => (index, expected, found),
            other => panic!("expected a parameter mismatch, got {other:?}"),
        }
    }

    #[test]
    fn a_reloaded_kernel_with_an_extra_parameter_is_refused() {
        // `k(const float* x, float* y, int n)` on disk gained `int m`: every declared size
        // matches, so only the question past the last declared parameter sees it.
        let declared = [8, 8, 4];
        assert!(param_verdict("k", &declared, Exactness::WhereReported, kernel_of(&[8, 8, 4, 4])).is_ok());
        assert_eq!(mismatch(param_verdict("k", &declared, RELOAD, kernel_of(&[8, 8, 4, 4]))), (3, None, Some(4)));
        // The same parameters as declared pass either way.
        assert!(param_verdict("k", &declared, RELOAD, kernel_of(&[8, 8, 4])).is_ok());
        // A changed size or a missing parameter is refused either way.
        assert_eq!(mismatch(param_verdict("k", &declared, RELOAD, kernel_of(&[8, 8, 8]))), (2, Some(4), Some(8)));
        assert_eq!(
            mismatch(param_verdict("k", &declared, Exactness::WhereReported, kernel_of(&[8, 8]))),
            (2, Some(4), None)
        );
    }

    #[test]
    fn a_reloaded_kernel_whose_parameters_the_driver_cannot_report_is_refused() {
        let cannot = |_| Err(DriverError(sys::CUresult::CUDA_ERROR_NOT_SUPPORTED));
        // A build-checked kernel: the compile-time record stands behind it.
        assert!(param_verdict("k", &[8, 4], Exactness::WhereReported, cannot).is_ok());
        // Code from disk is never loaded unchecked.
        match param_verdict("k", &[8, 4], RELOAD, cannot) {
            Err(Error::Module(ModuleError::Load { file, detail })) => {
                assert_eq!(file, "kernels/k.cu");
                assert!(detail.contains("cannot be checked") && detail.contains("hot reload"), "{detail}");
            }
            other => panic!("expected a refused load, got {other:?}"),
        }
        // Nor when the driver answers for the declared parameters but not past them.
        let mut answers = kernel_of(&[8, 4]);
        let partly = move |i| if i < 2 { answers(i) } else { Err(DriverError(sys::CUresult::CUDA_ERROR_UNKNOWN)) };
        assert!(matches!(param_verdict("k", &[8, 4], RELOAD, partly), Err(Error::Module(ModuleError::Load { .. }))));
        // An old driver (no cuFuncGetParamInfo): refused for disk code, passed for built code.
        assert!(super::unchecked("k", Exactness::WhereReported, "old".into()).is_ok());
        assert!(super::unchecked("k", RELOAD, "the driver is CUDA 12.2".into()).is_err());
    }
}
