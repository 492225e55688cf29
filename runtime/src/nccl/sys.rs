//! NCCL's C API, loaded at run time: the `sys`/`result` layer under [`crate::nccl`].
//!
//! cudarc 0.19.10's NCCL loader searches `libnccl.so`, `libnccl.so.13`, `.12`, ... `.9` and
//! `.1`, but not `libnccl.so.2`, the name (SONAME) NCCL installs as: the `libnccl2` package
//! and the `nvidia-nccl-cu13` wheel ship `libnccl.so.2` alone (`libnccl.so` comes with the
//! `-dev` package), and cudarc panics when no candidate loads. kgraph therefore opens the
//! library itself with `libloading` (the crate cudarc loads with) and keeps cudarc's
//! bindgen'd types (`ncclUniqueId`, `ncclComm_t`, `ncclDataType_t`, `ncclRedOp_t`) for the ABI.
//! Every symbol is resolved once, up front: a missing library, a too-old one or a missing
//! symbol is one [`NcclError::Missing`], never a panic.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

pub use cudarc::nccl::sys::{ncclComm_t, ncclDataType_t, ncclRedOp_t, ncclUniqueId};

use crate::error::{Error, NcclError, Result};

mod calls;

/// The library names tried, in order, after `KGRAPH_NCCL_LIB` (a path or name) when it is set.
pub const LIBRARY_CANDIDATES: &[&str] = &["libnccl.so.2", "libnccl.so"];

/// The environment variable that names the NCCL library to load (a path, or a name the
/// dynamic loader searches for), tried before [`LIBRARY_CANDIDATES`].
pub const LIBRARY_ENV: &str = "KGRAPH_NCCL_LIB";

/// The oldest NCCL kgraph loads, as `ncclGetVersion` encodes it (`10000 * major + 100 * minor
/// + patch`): every function kgraph calls exists by 2.13 (`ncclGetLastError` is the newest),
/// stream capture by 2.9, `ncclAvg` and `bfloat16` by 2.10; 2.14 is a round floor above them.
pub const MIN_VERSION: c_int = 21400;

/// `ncclResult_t` as the C ABI returns it (an `int`-sized enum): read as an integer, so a code
/// this build does not know is never an invalid Rust enum value.
pub type RawResult = c_int;

/// `ncclSuccess`.
pub const SUCCESS: RawResult = 0;

/// The NCCL functions kgraph calls, resolved from one loaded library.
#[allow(missing_docs)]
pub struct Api {
    /// Where it was loaded from (the name that `dlopen` accepted).
    pub library: String,
    /// `ncclGetVersion`'s code.
    pub version: c_int,
    get_unique_id: unsafe extern "C" fn(*mut ncclUniqueId) -> RawResult,
    comm_init_rank: unsafe extern "C" fn(*mut ncclComm_t, c_int, ncclUniqueId, c_int) -> RawResult,
    comm_init_all: unsafe extern "C" fn(*mut ncclComm_t, c_int, *const c_int) -> RawResult,
    comm_destroy: unsafe extern "C" fn(ncclComm_t) -> RawResult,
    comm_abort: unsafe extern "C" fn(ncclComm_t) -> RawResult,
    comm_get_async_error: unsafe extern "C" fn(ncclComm_t, *mut RawResult) -> RawResult,
    comm_count: unsafe extern "C" fn(ncclComm_t, *mut c_int) -> RawResult,
    comm_user_rank: unsafe extern "C" fn(ncclComm_t, *mut c_int) -> RawResult,
    pub get_error_string: unsafe extern "C" fn(RawResult) -> *const c_char,
    pub get_last_error: unsafe extern "C" fn(ncclComm_t) -> *const c_char,
    all_reduce: unsafe extern "C" fn(
        *const c_void,
        *mut c_void,
        usize,
        ncclDataType_t,
        ncclRedOp_t,
        ncclComm_t,
        *mut c_void,
    ) -> RawResult,
    reduce_scatter: unsafe extern "C" fn(
        *const c_void,
        *mut c_void,
        usize,
        ncclDataType_t,
        ncclRedOp_t,
        ncclComm_t,
        *mut c_void,
    ) -> RawResult,
    all_gather:
        unsafe extern "C" fn(*const c_void, *mut c_void, usize, ncclDataType_t, ncclComm_t, *mut c_void) -> RawResult,
    broadcast: unsafe extern "C" fn(
        *const c_void,
        *mut c_void,
        usize,
        ncclDataType_t,
        c_int,
        ncclComm_t,
        *mut c_void,
    ) -> RawResult,
    group_start: unsafe extern "C" fn() -> RawResult,
    group_end: unsafe extern "C" fn() -> RawResult,
}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("nccl::Api").field("library", &self.library).field("version", &self.version).finish()
    }
}

/// The loaded library, or why none loads; loaded once per process, on first use.
pub fn api() -> Result<&'static Api> {
    static API: OnceLock<std::result::Result<Api, String>> = OnceLock::new();
    API.get_or_init(|| {
        let explicit = std::env::var(LIBRARY_ENV).ok().filter(|s| !s.is_empty());
        load(explicit.as_deref())
    })
    .as_ref()
    .map_err(|detail| Error::Nccl(NcclError::Missing { detail: detail.clone() }))
}

/// `major.minor.patch` of a `ncclGetVersion` code.
pub fn version_string(code: c_int) -> String {
    format!("{}.{}.{}", code / 10000, (code % 10000) / 100, code % 100)
}

/// Opens the first library that loads (`explicit` first, then [`LIBRARY_CANDIDATES`]) and
/// resolves every symbol of [`Api`]; the error says what was tried and where NCCL comes from.
pub fn load(explicit: Option<&str>) -> std::result::Result<Api, String> {
    let names: Vec<&str> = explicit.into_iter().chain(LIBRARY_CANDIDATES.iter().copied()).collect();
    let mut tried = Vec::new();
    for name in &names {
        // SAFETY: loading NCCL runs its library constructors, which only set up NCCL's own
        // state (NCCL is designed to be dlopen'ed, as PyTorch and cudarc do).
        match unsafe { libloading::Library::new(*name) } {
            Ok(lib) => return resolve(lib, name),
            Err(e) => tried.push(format!("{name}: {}", chain(&e))),
        }
    }
    Err(format!(
        "no NCCL library could be loaded (tried {}); install NCCL 2.14 or newer: the system package \
         `libnccl2` (libnccl.so.2 in the loader's path), or `pip install nvidia-nccl-cu13` and add its \
         `nvidia/nccl/lib` directory to LD_LIBRARY_PATH, or set {LIBRARY_ENV} to the library's path \
         (docs/multi-gpu.md)",
        tried.join("; ")
    ))
}

/// Resolves [`Api`] from `lib` (loaded as `name`) and checks its version; the library is then
/// kept loaded for the life of the process, so the function pointers stay valid.
fn resolve(lib: libloading::Library, name: &str) -> std::result::Result<Api, String> {
    macro_rules! sym {
        ($sym:literal) => {
            // SAFETY: the pointer types of `Api` are NCCL's C prototypes (nccl.h, 2.14+) for
            // these symbols; `ncclResult_t` is read as a C `int`.
            match unsafe { lib.get($sym.as_bytes()) } {
                Ok(f) => *f,
                Err(e) => {
                    return Err(format!(
                        "{name} loaded but has no `{}` ({}); kgraph needs NCCL 2.14 or newer",
                        $sym,
                        chain(&e)
                    ))
                }
            }
        };
    }
    let get_version: unsafe extern "C" fn(*mut c_int) -> RawResult = sym!("ncclGetVersion");
    let mut version = 0;
    // SAFETY: `version` is a valid out-pointer; ncclGetVersion needs no initialisation.
    let status = unsafe { get_version(&mut version) };
    if status != SUCCESS {
        return Err(format!("{name}: ncclGetVersion failed ({})", result_name(status)));
    }
    if version < MIN_VERSION {
        return Err(format!(
            "{name} is NCCL {}, kgraph needs {} or newer",
            version_string(version),
            version_string(MIN_VERSION)
        ));
    }
    let api = Api {
        library: name.to_string(),
        version,
        get_unique_id: sym!("ncclGetUniqueId"),
        comm_init_rank: sym!("ncclCommInitRank"),
        comm_init_all: sym!("ncclCommInitAll"),
        comm_destroy: sym!("ncclCommDestroy"),
        comm_abort: sym!("ncclCommAbort"),
        comm_get_async_error: sym!("ncclCommGetAsyncError"),
        comm_count: sym!("ncclCommCount"),
        comm_user_rank: sym!("ncclCommUserRank"),
        get_error_string: sym!("ncclGetErrorString"),
        get_last_error: sym!("ncclGetLastError"),
        all_reduce: sym!("ncclAllReduce"),
        reduce_scatter: sym!("ncclReduceScatter"),
        all_gather: sym!("ncclAllGather"),
        broadcast: sym!("ncclBroadcast"),
        group_start: sym!("ncclGroupStart"),
        group_end: sym!("ncclGroupEnd"),
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

/// The name of an `ncclResult_t` code, e.g. `ncclInvalidArgument`.
pub fn result_name(code: RawResult) -> String {
    match code {
        0 => "ncclSuccess".into(),
        1 => "ncclUnhandledCudaError".into(),
        2 => "ncclSystemError".into(),
        3 => "ncclInternalError".into(),
        4 => "ncclInvalidArgument".into(),
        5 => "ncclInvalidUsage".into(),
        6 => "ncclRemoteError".into(),
        7 => "ncclInProgress".into(),
        other => format!("ncclResult_t {other}"),
    }
}

impl Api {
    /// A failed call's text: the code's name, NCCL's description of it and, with a
    /// communicator, NCCL's last error message (`ncclGetLastError`).
    pub fn describe(&self, code: RawResult, comm: Option<ncclComm_t>) -> String {
        let mut text = result_name(code);
        // SAFETY: ncclGetErrorString takes any code and returns a static string (or null).
        let what = unsafe { (self.get_error_string)(code) };
        if let Some(what) = c_text(what) {
            text.push_str(&format!(" ({what})"));
        }
        // SAFETY: the communicator (or null, which asks for the thread's last error) is live:
        // callers pass only communicators they own; the returned string is NCCL's own buffer,
        // copied before the next NCCL call.
        let last = unsafe { (self.get_last_error)(comm.unwrap_or(std::ptr::null_mut())) };
        if let Some(last) = c_text(last) {
            text.push_str(&format!(": {last}"));
        }
        text
    }
}

/// A non-empty C string's text, or `None` for null or empty.
fn c_text(ptr: *const c_char) -> Option<String> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: NCCL returns NUL-terminated strings that live at least until its next call.
    let text = unsafe { CStr::from_ptr(ptr) }.to_string_lossy().trim().to_string();
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_that_does_not_exist_is_a_message_naming_what_was_tried() {
        let Err(detail) = load(Some("/nonexistent/libnccl-kgraph-test.so.2")) else {
            // The explicit name cannot load, so this only passes over it when a system NCCL
            // loads; the explicit-name part is checked on every machine below.
            assert!(LIBRARY_CANDIDATES.iter().any(|c| load(Some(c)).is_ok()));
            return;
        };
        assert!(detail.contains("/nonexistent/libnccl-kgraph-test.so.2"), "{detail}");
        assert!(detail.contains("libnccl.so.2") && detail.contains("nvidia-nccl-cu13"), "{detail}");
        assert!(detail.contains(LIBRARY_ENV), "{detail}");
    }

    #[test]
    fn a_library_without_nccl_symbols_is_refused_by_name() {
        // libc loads everywhere this test runs and has no ncclGetVersion.
        let Err(detail) = load(Some("libc.so.6")) else { panic!("libc loaded as NCCL") };
        assert!(detail.contains("libc.so.6 loaded but has no `ncclGetVersion`"), "{detail}");
    }

    #[test]
    fn versions_and_codes_read_as_nccl_writes_them() {
        assert_eq!(version_string(22803), "2.28.3");
        assert_eq!(version_string(MIN_VERSION), "2.14.0");
        assert_eq!(result_name(4), "ncclInvalidArgument");
        assert_eq!(result_name(42), "ncclResult_t 42");
    }
}
