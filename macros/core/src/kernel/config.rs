//! Where `#[kernel("x.cu")]` files are found, reading them once per expansion, and where a
//! verified kernel lives (`Resolved`).

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::compiled::{read_record, Compiled};
use crate::cuda::preprocessed::Preprocessed;
use crate::cuda::signature::CuKernel;

/// Where the macros find kernel files, and whether generated code can embed cubins.
#[derive(Debug, Clone)]
pub struct Config {
    /// The folders `#[kernel("x.cu")]` files are looked up in, in order.
    pub kernel_dirs: Vec<PathBuf>,
    /// The crate root: paths inside it are shown relative to it.
    pub manifest_dir: PathBuf,
    /// Whether `OUT_DIR` is set (the crate has a build script that compiles the kernels).
    pub has_out_dir: bool,
    /// Where the build left what nvcc compiled, beside the cubins: `<stem>.kernels` (the
    /// compiled-kernel record) and `<stem>.i` (the preprocessed source). `None`, or a folder
    /// without them (the NVRTC fallback), leaves only the `.cu` text to check against.
    pub record_dir: Option<PathBuf>,
}

impl Config {
    /// From the compiler's environment: the folders of [`Config::kernel_dirs_from`] over
    /// `$CARGO_MANIFEST_DIR`, `$KGRAPH_KERNEL_DIR` and `$KGRAPH_KERNEL_DIRS`; `OUT_DIR` as
    /// cargo sets it for crates with a build script.
    pub fn from_env() -> Config {
        let manifest_dir =
            std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
        let kernel_dir = std::env::var_os("KGRAPH_KERNEL_DIR");
        let kernel_dirs = std::env::var_os("KGRAPH_KERNEL_DIRS");
        let out_dir = std::env::var_os("OUT_DIR");
        Config {
            record_dir: Config::record_dir_from(std::env::var_os("KGRAPH_RECORD_DIR").as_deref(), out_dir.as_deref()),
            kernel_dirs: Config::kernel_dirs_from(&manifest_dir, kernel_dir.as_deref(), kernel_dirs.as_deref()),
            manifest_dir,
            has_out_dir: out_dir.is_some(),
        }
    }

    /// The record folder: `$KGRAPH_RECORD_DIR` when set and not empty (for crates compiled
    /// without the build script that compiled their kernels, such as trybuild's), else
    /// `$OUT_DIR/kgraph`, where `kgraph-build` writes.
    pub fn record_dir_from(record_dir: Option<&OsStr>, out_dir: Option<&OsStr>) -> Option<PathBuf> {
        crate::compiled::record_dir_from(record_dir, out_dir)
    }

    /// This configuration reading records and preprocessed sources from `dir`.
    pub fn with_record_dir(mut self, dir: impl Into<PathBuf>) -> Config {
        self.record_dir = Some(dir.into());
        self
    }

    /// The kernel folders to search, in order and each once: `kernel_dir` (the value of
    /// `$KGRAPH_KERNEL_DIR`), then every folder of `kernel_dirs` (`$KGRAPH_KERNEL_DIRS`, a
    /// path list as `std::env::join_paths` writes it: kgraph-build sets it to every folder it
    /// compiled), then `<manifest_dir>/kernels`. Relative folders are relative to
    /// `manifest_dir`; unset or empty values add nothing.
    ///
    /// `$KGRAPH_KERNEL_DIR` is searched first rather than instead, because the variable reaches
    /// every crate of a build: kgraph's own kernels must still be found while compile-fail
    /// fixtures elsewhere are being compiled.
    pub fn kernel_dirs_from(
        manifest_dir: &Path,
        kernel_dir: Option<&OsStr>,
        kernel_dirs: Option<&OsStr>,
    ) -> Vec<PathBuf> {
        let listed = kernel_dirs.map(|dirs| std::env::split_paths(dirs).collect::<Vec<_>>()).unwrap_or_default();
        let candidates = kernel_dir
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .into_iter()
            .chain(listed.into_iter().filter(|d| !d.as_os_str().is_empty()))
            .chain([PathBuf::from("kernels")]);
        let mut dirs: Vec<PathBuf> = Vec::new();
        for dir in candidates.map(|d| manifest_dir.join(d)) {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        dirs
    }

    /// Kernels in `kernel_dir`, paths shown relative to `manifest_dir`, `OUT_DIR` assumed set.
    pub fn new(kernel_dir: impl Into<PathBuf>, manifest_dir: impl Into<PathBuf>) -> Config {
        Config {
            kernel_dirs: vec![kernel_dir.into()],
            manifest_dir: manifest_dir.into(),
            has_out_dir: true,
            record_dir: None,
        }
    }

    /// `path` relative to the crate root when inside it, else as is.
    pub(crate) fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.manifest_dir) {
            Ok(rel) => rel.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }
}

/// A `.cu` file as read once per expansion.
pub(crate) struct CuFile {
    /// The path for messages and docs.
    pub display: String,
    /// Absolute path, for `include_str!`.
    pub source_path: String,
    /// The folder it was found in, for `#include` under NVRTC.
    pub include_dir: String,
    /// Its text ([`cu_text`]).
    pub text: String,
    /// Whether the file is UTF-8 (else `include_str!` cannot embed it: see [`Resolved::source_literal`]).
    pub utf8: bool,
}

/// A `.cu` file's text from its bytes, and whether they were UTF-8. Bytes that are not UTF-8
/// (Latin-1 in a comment, which nvcc accepts) are read as Latin-1, one character per byte: every
/// ASCII byte, all kgraph parses (names, types, punctuation), and every line break stay where
/// they are, so lines in messages are the file's.
pub(crate) fn cu_text(bytes: Vec<u8>) -> (String, bool) {
    match String::from_utf8(bytes) {
        Ok(text) => (text, true),
        Err(e) => (e.into_bytes().into_iter().map(char::from).collect(), false),
    }
}

/// Reads each `.cu` once per macro expansion (a registry often has several kernels per file).
#[derive(Default)]
pub(crate) struct Files {
    read: HashMap<String, Result<Rc<CuFile>, String>>,
    records: HashMap<String, Option<Result<Rc<Compiled>, String>>>,
    preprocessed: HashMap<String, Option<Rc<Preprocessed>>>,
    /// The files whose failure (unreadable `.cu`, bad record) was reported already.
    reported: HashSet<String>,
}

impl Files {
    /// True the first time it is asked about `file`: a file that cannot be read is one error,
    /// however many declarations of a module name it (the others are stubbed silently).
    pub fn first_failure(&mut self, file: &str) -> bool {
        self.reported.insert(file.to_string())
    }

    /// `file` from the first kernel folder that has it, or why it could not be read.
    pub fn get(&mut self, file: &str, config: &Config) -> Result<Rc<CuFile>, String> {
        self.read.entry(file.to_string()).or_insert_with(|| read_cu(file, config).map(Rc::new)).clone()
    }

    /// The compiled-kernel record of `<stem>.cu`, if the build left one.
    pub fn record(&mut self, stem: &str, config: &Config) -> Option<Result<Rc<Compiled>, String>> {
        self.records
            .entry(stem.to_string())
            .or_insert_with(|| read_record(config.record_dir.as_deref(), stem).map(|r| r.map(Rc::new)))
            .clone()
    }

    /// The preprocessed source `<stem>.i`, if the build left one, reading the lines of `cu`'s
    /// own files (the `.cu` and headers in the kernel folders).
    pub fn preprocessed(&mut self, stem: &str, cu: &CuFile, config: &Config) -> Option<Rc<Preprocessed>> {
        self.preprocessed
            .entry(stem.to_string())
            .or_insert_with(|| {
                let path = config.record_dir.as_ref()?.join(format!("{stem}.i"));
                let (text, _) = cu_text(std::fs::read(path).ok()?);
                let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
                let cu_dir = canon(Path::new(&cu.include_dir));
                let mut roots: Vec<PathBuf> = config.kernel_dirs.iter().map(|d| canon(d)).collect();
                roots.push(cu_dir.clone());
                let local = |file: &str| {
                    let path = Path::new(file);
                    let path = if path.is_absolute() { path.to_path_buf() } else { cu_dir.join(path) };
                    let path = canon(&path);
                    roots.iter().any(|r| path.starts_with(r))
                };
                Some(Rc::new(Preprocessed::new(&text, local)))
            })
            .clone()
    }
}

fn path_text(path: &Path) -> Result<String, String> {
    path.to_str().map(str::to_string).ok_or_else(|| format!("kernel path {} is not UTF-8", path.display()))
}

fn read_cu(file: &str, config: &Config) -> Result<CuFile, String> {
    let mut looked = Vec::new();
    for dir in &config.kernel_dirs {
        let path = dir.join(file);
        match std::fs::read(&path) {
            Ok(bytes) => {
                let (text, utf8) = cu_text(bytes);
                return Ok(CuFile {
                    display: config.display(&path),
                    source_path: path_text(&path)?,
                    include_dir: path_text(dir)?,
                    text,
                    utf8,
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => looked.push(config.display(&path)),
            Err(e) => return Err(format!("cannot read kernel file {}: {e}", config.display(&path))),
        }
    }
    Err(format!(
        "kernel file `{file}` not found (looked for {}): kernel files live in the crate's `kernels/` folder",
        looked.join(", ")
    ))
}

/// Where a verified kernel lives, as the generated code needs it.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    /// The `.cu` path for messages and docs (relative to the crate root when inside it).
    pub display: String,
    /// Absolute path of the `.cu`, for `include_str!`.
    pub source_path: String,
    /// The `.cu` text to embed as a string literal where `include_str!` cannot read the file (not
    /// UTF-8: [`cu_text`]); `None` for a UTF-8 file.
    pub source_literal: Option<String>,
    /// Absolute kernel folder, for `#include "x.cuh"` under NVRTC.
    pub include_dir: String,
    /// File stem: the cubin is `$OUT_DIR/kgraph/<stem>.cubin`.
    pub stem: String,
    /// The kernel's signature as read from the `.cu` (lines of the original file).
    pub kernel: CuKernel,
    /// The symbol the module is searched for: the `extern "C"` name, or the mangled symbol of
    /// a C++ kernel.
    pub symbol: String,
    /// The compiled-kernel record file the check read, when the build left one.
    pub record_path: Option<String>,
    /// A PDL launch is proven to wait on its grid dependency (`crate::compiled::pdl_waits`).
    pub pdl_waits: bool,
}
