//! cuBLAS's C API, loaded at run time: the `sys` layer under [`crate::gemm`].
//!
//! cudarc 0.19.10's cuBLAS bindings load `libcublas` on their first call and panic when no
//! candidate name loads (or a symbol is missing). kgraph therefore opens the library itself with
//! `libloading` (as it does NCCL, `crate::nccl`), from more places than the loader's path (the
//! CUDA toolkit's `lib64`, Python wheels), resolves every function it calls once, up front, and
//! keeps cudarc's bindgen'd types for the ABI (`cublasHandle_t`, the enums' values). A missing
//! library or symbol is one [`GemmError::Missing`](crate::GemmError::Missing), never a panic.

use std::ffi::{c_char, c_int, c_longlong, c_void, CStr};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub use cudarc::cublas::sys::cublasHandle_t;

use crate::error::{Error, GemmError, Result};

/// The environment variable that names the cuBLAS library to load (a path, or a name the
/// dynamic loader searches for), tried first.
pub const LIBRARY_ENV: &str = "KGRAPH_CUBLAS_LIB";

/// The file names tried in each directory kgraph searches (after the loader's own path): CUDA
/// 13's, then CUDA 12's, then the unversioned development link.
pub const LIBRARY_NAMES: &[&str] = &["libcublas.so.13", "libcublas.so.12", "libcublas.so"];

/// `cublasStatus_t` as the C ABI returns it, read as an integer (a code this build does not
/// know is never an invalid Rust enum value).
pub type Status = c_int;

/// `CUBLAS_STATUS_SUCCESS`.
pub const SUCCESS: Status = 0;

/// `cudaDataType` values (library_types.h).
pub const R_32F: c_int = 0;
/// `CUDA_R_16F`.
pub const R_16F: c_int = 2;
/// `CUDA_R_16BF`.
pub const R_16BF: c_int = 14;
/// `cublasComputeType_t`: `CUBLAS_COMPUTE_32F` (IEEE f32 accumulation).
pub const COMPUTE_32F: c_int = 68;
/// `CUBLAS_COMPUTE_32F_FAST_TF32`: f32 accumulation over TF32 products (tensor cores).
pub const COMPUTE_32F_FAST_TF32: c_int = 77;
/// `cublasMath_t`: `CUBLAS_DEFAULT_MATH`.
pub const DEFAULT_MATH: c_int = 0;
/// `CUBLAS_TF32_TENSOR_OP_MATH`.
pub const TF32_TENSOR_OP_MATH: c_int = 3;
/// `CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION`: split-K partial sums stay in the compute
/// type (f32), never the output's f16/bf16.
pub const DISALLOW_REDUCED_PRECISION_REDUCTION: c_int = 16;
/// `CUBLAS_POINTER_MODE_HOST`: alpha and beta are read from host memory at the call (so a
/// captured call holds their values).
pub const POINTER_MODE_HOST: c_int = 0;
/// `CUBLAS_GEMM_DEFAULT`: cuBLAS's heuristics choose the kernel.
pub const GEMM_DEFAULT: c_int = -1;
/// `CUBLAS_OP_N`, `CUBLAS_OP_T`.
pub const OP_N: c_int = 0;
/// `CUBLAS_OP_T`.
pub const OP_T: c_int = 1;

type GemmExFn = unsafe extern "C" fn(
    cublasHandle_t,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const c_void,
    *const c_void,
    c_int,
    c_int,
    *const c_void,
    c_int,
    c_int,
    *const c_void,
    *mut c_void,
    c_int,
    c_int,
    c_int,
    c_int,
) -> Status;

type GemmStridedBatchedExFn = unsafe extern "C" fn(
    cublasHandle_t,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const c_void,
    *const c_void,
    c_int,
    c_int,
    c_longlong,
    *const c_void,
    c_int,
    c_int,
    c_longlong,
    *const c_void,
    *mut c_void,
    c_int,
    c_int,
    c_longlong,
    c_int,
    c_int,
    c_int,
) -> Status;

/// The cuBLAS functions kgraph calls, resolved from one loaded library.
pub struct Api {
    /// Where it was loaded from (the name or path that `dlopen` accepted).
    pub library: String,
    create: unsafe extern "C" fn(*mut cublasHandle_t) -> Status,
    destroy: unsafe extern "C" fn(cublasHandle_t) -> Status,
    get_version: unsafe extern "C" fn(cublasHandle_t, *mut c_int) -> Status,
    set_stream: unsafe extern "C" fn(cublasHandle_t, *mut c_void) -> Status,
    set_workspace: unsafe extern "C" fn(cublasHandle_t, *mut c_void, usize) -> Status,
    set_math_mode: unsafe extern "C" fn(cublasHandle_t, c_int) -> Status,
    set_pointer_mode: unsafe extern "C" fn(cublasHandle_t, c_int) -> Status,
    get_status_name: unsafe extern "C" fn(Status) -> *const c_char,
    gemm_ex: GemmExFn,
    gemm_strided_batched_ex: GemmStridedBatchedExFn,
}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("gemm::Api").field("library", &self.library).finish()
    }
}

/// The loaded library, or why none loads; loaded once per process, on first use.
pub fn api() -> Result<&'static Api> {
    static API: OnceLock<std::result::Result<Api, String>> = OnceLock::new();
    API.get_or_init(|| {
        let explicit = std::env::var(LIBRARY_ENV).ok().filter(|s| !s.is_empty());
        load(explicit.as_deref(), &search_dirs())
    })
    .as_ref()
    .map_err(|detail| Error::Gemm(GemmError::Missing { detail: detail.clone() }))
}

/// The directories searched after the loader's own path: `$CUDA_HOME/lib64`, `$CUDA_PATH/lib64`,
/// `/usr/local/cuda/lib64`, and the `nvidia/cublas/lib` and `nvidia/cu13/lib` folders of the
/// Python environments kgraph can see (`$VIRTUAL_ENV`, `$CONDA_PREFIX`, `~/.local`,
/// `/usr/local`, `/usr`, `/opt/conda`), where `pip install nvidia-cublas` (and PyTorch's wheels) put it.
pub fn search_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            dirs.push(Path::new(&root).join("lib64"));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    let mut prefixes: Vec<PathBuf> = ["VIRTUAL_ENV", "CONDA_PREFIX"]
        .iter()
        .filter_map(|v| std::env::var_os(v).filter(|v| !v.is_empty()).map(PathBuf::from))
        .collect();
    if let Some(home) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        prefixes.push(Path::new(&home).join(".local"));
    }
    prefixes.extend(["/usr/local", "/usr", "/opt/conda"].map(PathBuf::from));
    for prefix in prefixes {
        let Ok(entries) = std::fs::read_dir(prefix.join("lib")) else { continue };
        let mut pythons: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
            .map(|e| e.path())
            .collect();
        pythons.sort();
        for python in pythons.iter().rev() {
            for packages in ["site-packages", "dist-packages"] {
                for lib in ["nvidia/cublas/lib", "nvidia/cu13/lib"] {
                    let dir = python.join(packages).join(lib);
                    if dir.is_dir() {
                        dirs.push(dir);
                    }
                }
            }
        }
    }
    dirs
}

/// Opens the first library that loads (`explicit` first, then [`LIBRARY_NAMES`] through the
/// loader's path, then in each of `dirs`) and resolves every symbol of [`Api`]; the error says
/// what was tried and where cuBLAS comes from.
pub fn load(explicit: Option<&str>, dirs: &[PathBuf]) -> std::result::Result<Api, String> {
    let mut names: Vec<String> = explicit.into_iter().map(str::to_string).collect();
    names.extend(LIBRARY_NAMES.iter().map(|n| n.to_string()));
    for dir in dirs {
        names.extend(LIBRARY_NAMES.iter().map(|n| dir.join(n).to_string_lossy().into_owned()));
    }
    let mut tried = Vec::new();
    for name in &names {
        if name.contains('/') && !Path::new(name).exists() {
            continue;
        }
        preload_lt(name);
        // SAFETY: loading cuBLAS runs its library constructors, which only set up cuBLAS's own
        // state (it is designed to be dlopen'ed, as PyTorch and cudarc do).
        match unsafe { libloading::Library::new(name) } {
            Ok(lib) => return resolve(lib, name),
            Err(e) => tried.push(format!("{name}: {}", chain(&e))),
        }
    }
    let searched: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    Err(format!(
        "no cuBLAS library could be loaded (tried {}; searched {}); install cuBLAS 12 or newer: the CUDA \
         toolkit's libcublas (add its lib64 directory to LD_LIBRARY_PATH), or `pip install nvidia-cublas`, or set \
         {LIBRARY_ENV} to the library's path (docs/graph-spec.md, GEMM nodes)",
        if tried.is_empty() { "nothing".to_string() } else { tried.join("; ") },
        if searched.is_empty() { "no directory".to_string() } else { searched.join(", ") }
    ))
}

/// Loads `libcublasLt` from the folder of a `libcublas` given by path, so that `libcublas`'s
/// dependency on it resolves when the folder is not on the loader's path (a toolkit's `lib64`
/// or a wheel's folder). Best effort: a failure shows when `libcublas` itself fails to load.
fn preload_lt(name: &str) {
    let path = Path::new(name);
    let (Some(dir), Some(file)) = (path.parent(), path.file_name()) else { return };
    if dir.as_os_str().is_empty() {
        return;
    }
    let lt = dir.join(file.to_string_lossy().replacen("libcublas", "libcublasLt", 1));
    if lt.exists() {
        // SAFETY: as for libcublas: cuBLASLt's constructors set up its own state only. The
        // library stays loaded for the process (cuBLAS needs it for as long as it is loaded).
        if let Ok(lib) = unsafe { libloading::Library::new(&lt) } {
            std::mem::forget(lib);
        }
    }
}

/// Resolves [`Api`] from `lib` (loaded as `name`); the library is then kept loaded for the life
/// of the process, so the function pointers stay valid.
fn resolve(lib: libloading::Library, name: &str) -> std::result::Result<Api, String> {
    macro_rules! sym {
        ($sym:literal) => {
            // SAFETY: the pointer types of `Api` are cuBLAS's C prototypes (cublas_api.h, 12+)
            // for these symbols, with enums and `cublasStatus_t` read as C `int`s.
            match unsafe { lib.get($sym.as_bytes()) } {
                Ok(f) => *f,
                Err(e) => {
                    return Err(format!(
                        "{name} loaded but has no `{}` ({}); kgraph needs cuBLAS 12 or newer",
                        $sym,
                        chain(&e)
                    ))
                }
            }
        };
    }
    let api = Api {
        library: name.to_string(),
        create: sym!("cublasCreate_v2"),
        destroy: sym!("cublasDestroy_v2"),
        get_version: sym!("cublasGetVersion_v2"),
        set_stream: sym!("cublasSetStream_v2"),
        set_workspace: sym!("cublasSetWorkspace_v2"),
        set_math_mode: sym!("cublasSetMathMode"),
        set_pointer_mode: sym!("cublasSetPointerMode_v2"),
        get_status_name: sym!("cublasGetStatusName"),
        gemm_ex: sym!("cublasGemmEx"),
        gemm_strided_batched_ex: sym!("cublasGemmStridedBatchedEx"),
    };
    // The function pointers borrow from the library: keep it loaded forever.
    std::mem::forget(lib);
    Ok(api)
}

/// An error and its sources, `: `-separated (libloading keeps `dlerror`'s text in the source).
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

/// The arguments of one column-major `cublasGemmStridedBatchedEx` call (a count of 1 is a plain
/// `cublasGemmEx`), as [`crate::gemm::Gemm`] maps a row-major product onto it.
#[derive(Debug, Clone, Copy)]
pub struct ColMajor {
    pub transa: c_int,
    pub transb: c_int,
    pub m: c_int,
    pub n: c_int,
    pub k: c_int,
    pub alpha: f32,
    pub a: *const c_void,
    pub lda: c_int,
    pub stride_a: c_longlong,
    pub b: *const c_void,
    pub ldb: c_int,
    pub stride_b: c_longlong,
    pub beta: f32,
    pub c: *mut c_void,
    pub ldc: c_int,
    pub stride_c: c_longlong,
    pub count: c_int,
    pub dtype: c_int,
    pub compute: c_int,
}

impl Api {
    /// The name of a status code, e.g. `CUBLAS_STATUS_INVALID_VALUE`.
    pub fn status_name(&self, status: Status) -> String {
        // SAFETY: cublasGetStatusName takes any code and returns a static string (or null).
        let name = unsafe { (self.get_status_name)(status) };
        if name.is_null() {
            return format!("cublasStatus_t {status}");
        }
        // SAFETY: a NUL-terminated static string of cuBLAS's.
        unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned()
    }

    fn check(&self, status: Status, op: &str) -> Result<()> {
        if status == SUCCESS {
            return Ok(());
        }
        Err(Error::Gemm(GemmError::Failed { op: op.to_string(), detail: self.status_name(status) }))
    }

    /// `cublasCreate_v2`.
    ///
    /// # Safety
    /// The CUDA context the handle is for is current on this thread.
    pub unsafe fn create(&self) -> Result<cublasHandle_t> {
        let mut handle: cublasHandle_t = std::ptr::null_mut();
        // SAFETY: `handle` is a valid out-pointer; the context as the caller promises.
        self.check(unsafe { (self.create)(&mut handle) }, "cublasCreate")?;
        Ok(handle)
    }

    /// `cublasDestroy_v2`.
    ///
    /// # Safety
    /// `handle` is live, made by [`Api::create`], and never used again.
    pub unsafe fn destroy(&self, handle: cublasHandle_t) -> Result<()> {
        // SAFETY: as the caller promises.
        self.check(unsafe { (self.destroy)(handle) }, "cublasDestroy")
    }

    /// `cublasGetVersion_v2`: `major * 10000 + minor * 100 + patch`.
    ///
    /// # Safety
    /// `handle` is live.
    pub unsafe fn version(&self, handle: cublasHandle_t) -> Result<c_int> {
        let mut v = 0;
        // SAFETY: `v` is a valid out-pointer; the handle as the caller promises.
        self.check(unsafe { (self.get_version)(handle, &mut v) }, "cublasGetVersion")?;
        Ok(v)
    }

    /// Binds `handle` to `stream` with `workspace` (`cublasSetStream` resets the workspace, so
    /// the two always go together), the math mode and host pointers for alpha and beta.
    ///
    /// # Safety
    /// `handle` is live and its context current; `stream` is a stream of that context;
    /// `workspace` is device memory of that context of `workspace_bytes` bytes that no other
    /// work uses while anything issued through the handle from now on runs, and outlives it.
    pub unsafe fn bind(
        &self,
        handle: cublasHandle_t,
        stream: *mut c_void,
        workspace: *mut c_void,
        workspace_bytes: usize,
        math_mode: c_int,
    ) -> Result<()> {
        // SAFETY: the caller's contract, as documented.
        unsafe {
            self.check((self.set_stream)(handle, stream), "cublasSetStream")?;
            self.check((self.set_workspace)(handle, workspace, workspace_bytes), "cublasSetWorkspace")?;
            self.check((self.set_math_mode)(handle, math_mode), "cublasSetMathMode")?;
            self.check((self.set_pointer_mode)(handle, POINTER_MODE_HOST), "cublasSetPointerMode")
        }
    }

    /// `cublasGemmEx` (count 1) or `cublasGemmStridedBatchedEx`.
    ///
    /// # Safety
    /// `handle` is bound ([`Api::bind`]); every element the call reads (A, B, and C when beta
    /// is not 0) and writes (C) lies inside live device allocations of the handle's context that
    /// outlive the work, and C overlaps neither A nor B nor itself across batches.
    pub unsafe fn gemm(&self, handle: cublasHandle_t, g: &ColMajor, op: &str) -> Result<()> {
        let (alpha, beta) = (&g.alpha as *const f32 as *const c_void, &g.beta as *const f32 as *const c_void);
        // SAFETY: the caller's contract; alpha and beta are host f32s (pointer mode host,
        // compute type 32F) read during the call.
        let status = unsafe {
            if g.count == 1 {
                (self.gemm_ex)(
                    handle,
                    g.transa,
                    g.transb,
                    g.m,
                    g.n,
                    g.k,
                    alpha,
                    g.a,
                    g.dtype,
                    g.lda,
                    g.b,
                    g.dtype,
                    g.ldb,
                    beta,
                    g.c,
                    g.dtype,
                    g.ldc,
                    g.compute,
                    GEMM_DEFAULT,
                )
            } else {
                (self.gemm_strided_batched_ex)(
                    handle,
                    g.transa,
                    g.transb,
                    g.m,
                    g.n,
                    g.k,
                    alpha,
                    g.a,
                    g.dtype,
                    g.lda,
                    g.stride_a,
                    g.b,
                    g.dtype,
                    g.ldb,
                    g.stride_b,
                    beta,
                    g.c,
                    g.dtype,
                    g.ldc,
                    g.stride_c,
                    g.count,
                    g.compute,
                    GEMM_DEFAULT,
                )
            }
        };
        self.check(status, op)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_that_does_not_exist_is_a_message_naming_what_was_tried() {
        let dirs = [PathBuf::from("/nonexistent/kgraph-test-dir")];
        let Err(detail) = load(Some("libcublas-kgraph-test.so.13"), &dirs) else {
            // The explicit name cannot load, so this passes over it only when a system cuBLAS
            // loads; the message is checked on every machine without one.
            assert!(load(None, &[]).is_ok());
            return;
        };
        assert!(detail.contains("libcublas-kgraph-test.so.13"), "{detail}");
        assert!(detail.contains("/nonexistent/kgraph-test-dir"), "{detail}");
        assert!(detail.contains(LIBRARY_ENV) && detail.contains("nvidia-cublas"), "{detail}");
    }

    #[test]
    fn a_library_without_cublas_symbols_is_refused_by_name() {
        // libc loads everywhere this test runs and has no cublasCreate_v2.
        let Err(detail) = load(Some("libc.so.6"), &[]) else { panic!("libc loaded as cuBLAS") };
        assert!(detail.contains("libc.so.6 loaded but has no `cublasCreate_v2`"), "{detail}");
    }

    #[test]
    fn python_environments_are_searched_for_wheels() {
        let root = std::env::temp_dir().join(format!("kgraph-cublas-search-{}", std::process::id()));
        let lib = root.join("lib/python3.12/site-packages/nvidia/cublas/lib");
        std::fs::create_dir_all(&lib).unwrap();
        // Only this test of the binary sets VIRTUAL_ENV.
        std::env::set_var("VIRTUAL_ENV", &root);
        let dirs = search_dirs();
        std::env::remove_var("VIRTUAL_ENV");
        std::fs::remove_dir_all(&root).unwrap();
        assert!(dirs.contains(&lib), "{dirs:?}");
        assert!(dirs.contains(&PathBuf::from("/usr/local/cuda/lib64")), "{dirs:?}");
    }
}
