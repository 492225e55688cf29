//! Where `#[kernel("x.cu")]` files are found, reading them once per expansion, and where a
//! verified kernel lives (`Resolved`).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::rc::Rc;

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
        Config {
            kernel_dirs: Config::kernel_dirs_from(&manifest_dir, kernel_dir.as_deref(), kernel_dirs.as_deref()),
            manifest_dir,
            has_out_dir: std::env::var_os("OUT_DIR").is_some(),
        }
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
        Config { kernel_dirs: vec![kernel_dir.into()], manifest_dir: manifest_dir.into(), has_out_dir: true }
    }

    /// `path` relative to the crate root when inside it, else as is.
    fn display(&self, path: &Path) -> String {
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
    /// Its text.
    pub text: String,
}

/// Reads each `.cu` once per macro expansion (a registry often has several kernels per file).
#[derive(Default)]
pub(crate) struct Files {
    read: HashMap<String, Result<Rc<CuFile>, String>>,
}

impl Files {
    /// `file` from the first kernel folder that has it, or why it could not be read.
    pub fn get(&mut self, file: &str, config: &Config) -> Result<Rc<CuFile>, String> {
        self.read.entry(file.to_string()).or_insert_with(|| read_cu(file, config).map(Rc::new)).clone()
    }
}

fn path_text(path: &Path) -> Result<String, String> {
    path.to_str().map(str::to_string).ok_or_else(|| format!("kernel path {} is not UTF-8", path.display()))
}

fn read_cu(file: &str, config: &Config) -> Result<CuFile, String> {
    let mut looked = Vec::new();
    for dir in &config.kernel_dirs {
        let path = dir.join(file);
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                return Ok(CuFile {
                    display: config.display(&path),
                    source_path: path_text(&path)?,
                    include_dir: path_text(dir)?,
                    text,
                })
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
    /// Absolute kernel folder, for `#include "x.cuh"` under NVRTC.
    pub include_dir: String,
    /// File stem: the cubin is `$OUT_DIR/kgraph/<stem>.cubin`.
    pub stem: String,
    /// The kernel's signature as read from the `.cu`.
    pub kernel: CuKernel,
}
