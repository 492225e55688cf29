//! What nvcc compiled, as `#[kernel]` and `graph!` see it: the compiled-kernel record
//! `<stem>.kernels` that `kgraph-build` writes beside each cubin (format and parser in the
//! `kgraph-record` crate), read from the record folder, and a kernel's entry found in it by
//! its C name, its mangled symbol, or its C++ name with template arguments ([`demangle`](mod@demangle)).
//!
//! Uses nothing else of this crate, so both the kernel binding and the graph checks may use it.

pub mod demangle;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

pub use kgraph_record::{KernelRecord, ParamRecord};

use demangle::{demangle, normalize, Demangled};

/// The record folder: `record_dir` (the value of `$KGRAPH_RECORD_DIR`) when set and not empty
/// (for crates compiled without the build script that compiled their kernels, such as
/// trybuild's), else `<out_dir>/kgraph` (`$OUT_DIR/kgraph`, where `kgraph-build` writes).
pub fn record_dir_from(record_dir: Option<&OsStr>, out_dir: Option<&OsStr>) -> Option<PathBuf> {
    match record_dir.filter(|d| !d.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => out_dir.filter(|d| !d.is_empty()).map(|d| Path::new(d).join("kgraph")),
    }
}

/// [`record_dir_from`] over the compiler's environment.
pub fn record_dir_from_env() -> Option<PathBuf> {
    record_dir_from(std::env::var_os("KGRAPH_RECORD_DIR").as_deref(), std::env::var_os("OUT_DIR").as_deref())
}

/// A `.cu` file's record as read from the record folder.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// Absolute path of the `.kernels` file (the generated code `include_bytes!` it, so an
    /// edit of the record re-runs the macro).
    pub path: String,
    /// Its entries, in PTX order.
    pub kernels: Vec<KernelRecord>,
}

/// The record of `<stem>.cu` in `record_dir`: `None` when there is none (no record folder,
/// or a build without nvcc, whose NVRTC fallback writes no records), else the record or why
/// it cannot be read.
pub fn read_record(record_dir: Option<&Path>, stem: &str) -> Option<Result<Compiled, String>> {
    let path: PathBuf = record_dir?.join(format!("{stem}.kernels"));
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return Some(Err(format!("cannot read the compiled-kernel record {}: {e}", path.display()))),
    };
    let shown = path.display().to_string();
    Some(match kgraph_record::parse_kernel_record(&text) {
        Ok(kernels) => Ok(Compiled { path: shown, kernels }),
        Err(e) => Err(format!(
            "the compiled-kernel record {shown} is malformed ({e}); rebuild (`cargo clean -p` the crate) so kgraph-build writes it again"
        )),
    })
}

/// How a kernel name was looked up in a record.
#[derive(Debug, Clone)]
pub enum Lookup<'r> {
    /// One entry.
    Found(&'r KernelRecord),
    /// No entry of that name.
    Missing,
    /// Several C++ entries fit (overloads, or a template named without its arguments): each
    /// with its demangled name.
    Ambiguous(Vec<(&'r KernelRecord, String)>),
    /// A C++ template of that name is compiled, but not with these template arguments (the
    /// ones compiled, demangled).
    OtherInstantiations(Vec<String>),
}

impl Compiled {
    /// The entry for `name`: an entry whose symbol is exactly `name` (an `extern "C"` kernel,
    /// or a mangled symbol written out), else the C++ entries whose demangled name is `name`
    /// (`gemm<float, 128>`, or `scale` for a function that is not a template; namespaces may be
    /// left out), compared after [`normalize`].
    pub fn lookup(&self, name: &str) -> Lookup<'_> {
        if let Some(k) = self.kernels.iter().find(|k| k.name == name) {
            return Lookup::Found(k);
        }
        let wanted = normalize(name);
        let (wanted_name, wanted_args) = match wanted.split_once('<') {
            Some((n, _)) => (n.to_string(), Some(wanted.clone())),
            None => (wanted.clone(), None),
        };
        let cpp: Vec<(&KernelRecord, Demangled)> =
            self.kernels.iter().filter_map(|k| demangle(&k.name).map(|d| (k, d))).collect();
        let same_name: Vec<&(&KernelRecord, Demangled)> = cpp
            .iter()
            .filter(|(_, d)| {
                let n = normalize(&d.name);
                n == wanted_name || n.rsplit("::").next() == Some(wanted_name.as_str())
            })
            .collect();
        let fits: Vec<&(&KernelRecord, Demangled)> = same_name
            .iter()
            .copied()
            .filter(|(_, d)| match &wanted_args {
                Some(w) => d.template_args.is_some() && strip_scope(&normalize(&d.display())) == strip_scope(w),
                None => true,
            })
            .collect();
        match fits.as_slice() {
            [] if same_name.is_empty() => Lookup::Missing,
            [] => Lookup::OtherInstantiations(same_name.iter().map(|(_, d)| d.display()).collect()),
            [(k, _)] => Lookup::Found(k),
            many => Lookup::Ambiguous(many.iter().map(|(k, d)| (*k, d.display())).collect()),
        }
    }

    /// Every entry's name as a person would write it (demangled where kgraph can), for messages.
    pub fn names(&self) -> Vec<String> {
        self.kernels.iter().map(|k| display_name(&k.name)).collect()
    }
}

/// `ops::gemm<float,8>` → `gemm<float,8>` (namespaces may be left out when naming a kernel).
fn strip_scope(text: &str) -> &str {
    let head = text.split('<').next().unwrap_or(text);
    match head.rfind("::") {
        Some(k) => &text[k + 2..],
        None => text,
    }
}

/// An entry's symbol as a person would write the kernel: demangled (`gemm<float, 128>`) for
/// C++ linkage where kgraph can read it, the symbol itself otherwise.
pub fn display_name(symbol: &str) -> String {
    demangle(symbol).map_or_else(|| symbol.to_string(), |d| d.display())
}

/// True when the entry is a C++ (mangled) symbol rather than an `extern "C"` name.
pub fn is_mangled(symbol: &str) -> bool {
    symbol.starts_with("_Z")
}

/// Whether a PDL launch of the entry is proven to wait on its grid dependency: it executes
/// `griddepcontrol.wait` and calls no function whose body the PTX lacks (an external or
/// indirect call could do anything, so it proves nothing either way). No record proves nothing.
pub fn pdl_waits(record: Option<&KernelRecord>) -> bool {
    record.is_some_and(|k| k.pdl_wait && k.callees.iter().all(|c| c.defined && c.name.is_some()))
}
