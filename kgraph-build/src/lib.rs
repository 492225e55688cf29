//! The kgraph kernel build pipeline, for a crate's `build.rs`.
//!
//! ```no_run
//! // in `fn main()` of the build.rs of any crate with a `kernels/` folder of `.cu` files:
//! kgraph_build::compile_kernels();
//! ```
//!
//! Every `kernels/*.cu` becomes `$OUT_DIR/kgraph/<stem>.cubin` (sm_90 by default; set
//! `KGRAPH_CUDA_ARCH=sm_80,sm_90` for a fatbin of several), compiled in parallel, and only when the
//! file, a header it includes, the arch list or nvcc itself changed. ptxas' resource report lands
//! beside each cubin as `<stem>.resources.txt`, and a spill or local-memory stack frame becomes a
//! `cargo:warning`. The `#[kernel]` macro embeds those cubins.
//!
//! # What nvcc compiled: `<stem>.kernels` and `<stem>.i`
//!
//! The same nvcc invocation that builds a cubin keeps its intermediate files (`-keep`), and the
//! build leaves three more files beside `<stem>.cubin`, all from the first arch of the list:
//!
//! - `<stem>.kernels`: the compiled-kernel record, one block per PTX `.entry`: its symbol
//!   (mangled for C++ linkage), each parameter's PTX type, size and alignment, launch bounds as
//!   compiled, whether it executes the PDL instructions, its calls and source line. The exact
//!   format is in [`record`]; [`parse_kernel_record`] reads it, [`records_from_ptx`] makes it.
//! - `<stem>.i`: the preprocessed device source (what cicc read, `__CUDA_ARCH__` defined as in
//!   the device compile), line markers kept; see [`preprocessed`].
//! - `<stem>.ptx`: the PTX ptxas assembled into the cubin.
//!
//! `#[kernel]` reads `<stem>.kernels` and `<stem>.i` from `$OUT_DIR/kgraph/` to check a
//! declaration against what was compiled, so preprocessor conditionals, macros, templates and
//! the build's [`KernelBuild::define`] / [`KernelBuild::include_dir`] flags are resolved as nvcc
//! resolved them. They are cached and rebuilt exactly with the cubin (a missing one makes the
//! cubin stale). The NVRTC fallback (no nvcc) writes none of them and removes old ones: a reader
//! then has only the `.cu` text.
//!
//! More folders compile into the same output folder with [`KernelBuild::add_kernel_dir`]; each
//! folder's files include headers from their own folder (`-I<folder>`), and the folders are
//! passed on to `#[kernel]` in `KGRAPH_KERNEL_DIRS` ([`KERNEL_DIRS_ENV`]).
//!
//! Graph specs of `graphs/` (and [`KernelBuild::add_graph_dir`] folders) that say
//! `resident = true` are lowered, after the kernels, to one resident kernel each,
//! `$OUT_DIR/kgraph/resident/kg_<stem>_resident.cu`, and compiled the same way; `graph!` checks
//! that file against its own lowering (the repository's `docs/resident.md`).
//!
//! Without nvcc the build still succeeds, loudly: the cubins are left empty and kgraph compiles
//! the embedded `.cu` source with NVRTC when the module is first loaded. `KGRAPH_REQUIRE_NVCC=1`
//! turns that fallback into a build error (use it for release builds).

mod compile;
mod error;
mod nvcc;
mod outputs;
pub use kgraph_record::preprocessed;
mod ptx;
pub mod record;
mod resident;
mod resources;
mod sources;

pub use error::{BuildError, IoOp};
pub use nvcc::{find as find_nvcc, Nvcc, HOW_TO_GET_NVCC};
pub use preprocessed::{original_line, SourceLine};
pub use ptx::{ptx_target, records_from_ptx};
pub use record::{
    format_kernel_record, parse_kernel_record, CallRecord, KernelRecord, ParamRecord, PtrSpace, SharedRecord,
    RECORD_HEADER,
};
pub use resources::{parse as parse_ptxas_report, KernelResources};

use std::path::{Path, PathBuf};

use outputs::output_name;
use sources::KernelFile;

/// Default target when `KGRAPH_CUDA_ARCH` is unset: Hopper (H100/H200).
pub const DEFAULT_ARCH: &str = "sm_90";

/// The variable a successful build sets for the crate's compilation (`cargo:rustc-env`): every
/// kernel folder of the build, absolute, joined by [`std::env::join_paths`], so `#[kernel]` finds
/// the `.cu` files of each.
pub const KERNEL_DIRS_ENV: &str = "KGRAPH_KERNEL_DIRS";

/// Configures a build of one or more kernel folders into one output folder. [`compile_kernels`]
/// is `KernelBuild::new().run_or_exit()`.
#[derive(Debug, Clone)]
pub struct KernelBuild {
    /// `$CARGO_MANIFEST_DIR` (empty outside cargo): what relative extra folders are resolved against.
    manifest_dir: PathBuf,
    /// The primary folder, `kernels/` by default; it may be absent (then it has no kernels).
    kernel_dir: PathBuf,
    /// Folders added with [`KernelBuild::add_kernel_dir`], which must exist.
    extra_kernel_dirs: Vec<PathBuf>,
    out_dir: Option<PathBuf>,
    archs: Option<Vec<String>>,
    extra_nvcc_args: Vec<String>,
    /// `-D` macros: name and optional value.
    defines: Vec<(String, Option<String>)>,
    /// `-I` folders after the kernel folder's own (absolute, or relative to `manifest_dir`).
    include_dirs: Vec<PathBuf>,
    /// Folders of graph specs whose `resident = true` specs are lowered to resident kernels
    /// (`graphs/` by default; absent folders have none).
    graph_dirs: Vec<PathBuf>,
    emit_cargo: bool,
    nvcc: NvccChoice,
    require_nvcc: Option<bool>,
}

#[derive(Debug, Clone)]
enum NvccChoice {
    Search,
    Path(PathBuf),
    Absent,
}

/// What one build did, per kernel file.
#[derive(Debug, Clone, Default)]
pub struct BuildReport {
    /// `.cu` files compiled this time.
    pub compiled: Vec<PathBuf>,
    /// `.cu` files whose cubin was already up to date.
    pub up_to_date: Vec<PathBuf>,
    /// Resource report of every kernel compiled or cached.
    pub resources: Vec<KernelResources>,
    /// The output files and compiled-kernel records of every file compiled or cached, in
    /// source order (none for the NVRTC fallback).
    pub outputs: Vec<KernelOutputs>,
    /// True when no nvcc was found and the NVRTC fallback is in use.
    pub nvrtc_fallback: bool,
    /// Every kernel folder of the build, absolute (the primary one first, whether or not it
    /// exists): what [`KERNEL_DIRS_ENV`] is set to.
    pub kernel_dirs: Vec<PathBuf>,
}

/// The files one `.cu` file compiled to, and what its record says.
#[derive(Debug, Clone, Default)]
pub struct KernelOutputs {
    /// The `.cu` file.
    pub source: PathBuf,
    /// `<stem>.cubin` (a fatbin for several archs).
    pub cubin: PathBuf,
    /// `<stem>.kernels`, the compiled-kernel record ([`record`]).
    pub record: PathBuf,
    /// `<stem>.i`, the preprocessed device source ([`preprocessed`]).
    pub preprocessed: PathBuf,
    /// `<stem>.ptx`, the PTX of the first arch.
    pub ptx: PathBuf,
    /// The record parsed: one entry per compiled kernel.
    pub kernels: Vec<KernelRecord>,
    /// Compiled this time, rather than up to date.
    pub compiled: bool,
}

/// Compiles `kernels/*.cu` of the crate being built; on error prints the compiler output and
/// exits the build script with status 1. The one call a downstream `build.rs` needs.
pub fn compile_kernels() -> BuildReport {
    KernelBuild::new().run_or_exit()
}

impl Default for KernelBuild {
    fn default() -> Self {
        Self::new()
    }
}

impl KernelBuild {
    /// `$CARGO_MANIFEST_DIR/kernels`, output in `$OUT_DIR/kgraph`, arch from `KGRAPH_CUDA_ARCH`.
    pub fn new() -> Self {
        let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from).unwrap_or_default();
        let graphs_dir = manifest_dir.join("graphs");
        KernelBuild {
            kernel_dir: manifest_dir.join("kernels"),
            manifest_dir,
            extra_kernel_dirs: Vec::new(),
            out_dir: None,
            archs: None,
            extra_nvcc_args: Vec::new(),
            defines: Vec::new(),
            include_dirs: Vec::new(),
            graph_dirs: vec![graphs_dir],
            emit_cargo: true,
            nvcc: NvccChoice::Search,
            require_nvcc: None,
        }
    }

    /// Replaces the primary kernel folder (absolute, or relative to the current directory).
    pub fn kernel_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.kernel_dir = dir.into();
        self
    }

    /// One more kernel folder, compiled into the same output folder (absolute, or relative to
    /// `CARGO_MANIFEST_DIR`). Unlike the primary folder it must exist
    /// ([`BuildError::MissingKernelDir`]); no two `.cu` files of the build may share a stem
    /// ([`BuildError::DuplicateStem`]), since the cubin is named by it. Its files include headers
    /// from their own folder. Adding a folder twice adds it once.
    pub fn add_kernel_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.extra_kernel_dirs.push(self.manifest_dir.join(dir));
        self
    }

    /// One more folder of graph specs (absolute, or relative to `CARGO_MANIFEST_DIR`): each
    /// spec in it that says `resident = true` is lowered to one resident kernel,
    /// `<out>/resident/kg_<stem>_resident.cu`, compiled with the kernels (`graphs/` is always
    /// searched). A spec that does not check is skipped with a warning; `graph!` reports it.
    pub fn add_graph_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.graph_dirs.push(self.manifest_dir.join(dir));
        self
    }

    /// Where the images go (default `$OUT_DIR/kgraph`).
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// Target archs such as `["sm_90"]`, overriding `KGRAPH_CUDA_ARCH`.
    pub fn archs<S: Into<String>>(mut self, archs: impl IntoIterator<Item = S>) -> Self {
        self.archs = Some(archs.into_iter().map(Into::into).collect());
        self
    }

    /// Extra nvcc flags (e.g. `--use_fast_math`), part of the cache key. They reach every step
    /// of the compile, preprocessing included (the `.i` and `.kernels` files follow them).
    pub fn nvcc_arg(mut self, arg: impl Into<String>) -> Self {
        self.extra_nvcc_args.push(arg.into());
        self
    }

    /// Defines the macro `name` for every kernel file (`-D<name>`), as `#define name 1` would.
    /// `name` must be a C identifier ([`BuildError::BadDefine`] from [`KernelBuild::run`]).
    pub fn define(mut self, name: impl Into<String>) -> Self {
        self.defines.push((name.into(), None));
        self
    }

    /// Defines the macro `name` as `value` for every kernel file (`-D<name>=<value>`). Commas in
    /// `value` are escaped for nvcc (which would otherwise split the option at them).
    pub fn define_value(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.defines.push((name.into(), Some(value.into())));
        self
    }

    /// One more include folder for every kernel file (`-I<dir>`, after the file's own kernel
    /// folder), absolute or relative to `CARGO_MANIFEST_DIR`; it must exist
    /// ([`BuildError::MissingIncludeDir`]). Headers found there (`#include "x.h"` or `<x.h>`)
    /// are part of the cache key, and the folder is watched (`rerun-if-changed`).
    pub fn include_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.include_dirs.push(self.manifest_dir.join(dir));
        self
    }

    /// Use this nvcc instead of searching `NVCC`, `CUDA_HOME`, `PATH` and `.toolchain/`.
    pub fn nvcc(mut self, path: impl Into<PathBuf>) -> Self {
        self.nvcc = NvccChoice::Path(path.into());
        self
    }

    /// Behave as if no nvcc existed (the NVRTC fallback), e.g. to test that path.
    pub fn without_nvcc(mut self) -> Self {
        self.nvcc = NvccChoice::Absent;
        self
    }

    /// Whether a missing nvcc is an error (default: `KGRAPH_REQUIRE_NVCC=1`).
    pub fn require_nvcc(mut self, on: bool) -> Self {
        self.require_nvcc = Some(on);
        self
    }

    /// Whether to print `cargo:` directives (on by default; off for use outside build scripts).
    pub fn emit_cargo_directives(mut self, on: bool) -> Self {
        self.emit_cargo = on;
        self
    }

    /// [`KernelBuild::run`], printing the error and exiting with status 1 on failure.
    pub fn run_or_exit(self) -> BuildReport {
        match self.run() {
            Ok(report) => report,
            Err(error) => {
                eprintln!("error: kgraph kernel build failed\n{error}");
                std::process::exit(1);
            }
        }
    }

    /// Compiles every stale kernel of every folder, in parallel, then sets [`KERNEL_DIRS_ENV`].
    /// A failure of one file does not stop the others; all failures are returned.
    pub fn run(self) -> Result<BuildReport, BuildError> {
        let out_dir = self.create_out_dir()?;
        for var in ["NVCC", "CUDA_HOME", "CUDA_PATH", "KGRAPH_CUDA_ARCH", "KGRAPH_REQUIRE_NVCC"] {
            self.cargo(&format!("rerun-if-env-changed={var}"));
        }
        let dirs = self.kernel_dirs()?;
        self.check_flags()?;
        let sources = self.collect_sources(&dirs)?;
        let archs = match &self.archs {
            Some(a) => a.clone(),
            None => parse_archs(&std::env::var("KGRAPH_CUDA_ARCH").unwrap_or_default())?,
        };
        let nvcc = self.find_nvcc();
        let mut report = match &nvcc {
            Some(nvcc) => self.compile_stale(&sources, &out_dir, nvcc, &archs)?,
            None => self.fall_back_to_nvrtc(&dirs, &sources, &out_dir)?,
        };
        report.kernel_dirs = dirs.iter().map(|d| std::path::absolute(d).unwrap_or_else(|_| d.clone())).collect();
        let version = match &nvcc {
            Some(n) => Some(nvcc::version(n)?),
            None => None,
        };
        let with = nvcc.as_ref().zip(version.as_deref()).map(|(n, v)| (n, v, archs.as_slice()));
        self.build_residents(&out_dir, &report.kernel_dirs, with)?;
        let directive = kernel_dirs_directive(&report.kernel_dirs)?;
        if self.emit_cargo {
            println!("{directive}");
        }
        Ok(report)
    }

    fn cargo(&self, line: &str) {
        if self.emit_cargo {
            println!("cargo:{line}");
        }
    }

    /// The configured output folder or `$OUT_DIR/kgraph`, created.
    fn create_out_dir(&self) -> Result<PathBuf, BuildError> {
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => PathBuf::from(std::env::var_os("OUT_DIR").ok_or(BuildError::NoOutDir)?).join("kgraph"),
        };
        std::fs::create_dir_all(&out_dir).map_err(|e| BuildError::io(IoOp::Create, &out_dir, e))?;
        Ok(out_dir)
    }

    /// The primary folder, then each extra one that is not already listed; an extra folder
    /// that does not exist is an error.
    fn kernel_dirs(&self) -> Result<Vec<PathBuf>, BuildError> {
        let same = |a: &Path, b: &Path| a == b || std::path::absolute(a).ok() == std::path::absolute(b).ok();
        let mut dirs = vec![self.kernel_dir.clone()];
        for dir in &self.extra_kernel_dirs {
            if !dir.is_dir() {
                return Err(BuildError::MissingKernelDir { dir: dir.clone() });
            }
            if !dirs.iter().any(|d| same(d, dir)) {
                dirs.push(dir.clone());
            }
        }
        Ok(dirs)
    }

    /// [`BuildError::BadDefine`] for a macro name that is not an identifier,
    /// [`BuildError::MissingIncludeDir`] for an include folder that does not exist; a
    /// `rerun-if-changed` for each include folder.
    fn check_flags(&self) -> Result<(), BuildError> {
        for (name, _) in &self.defines {
            let mut chars = name.chars();
            let ident = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ident {
                return Err(BuildError::BadDefine { name: name.clone() });
            }
        }
        for dir in &self.include_dirs {
            if !dir.is_dir() {
                return Err(BuildError::MissingIncludeDir { dir: dir.clone() });
            }
            self.cargo(&format!("rerun-if-changed={}", dir.display()));
        }
        Ok(())
    }

    /// The flags of every compile of a file of kernel folder `dir`: `-I<dir>`, the include
    /// folders, the defines, then [`KernelBuild::nvcc_arg`]s.
    fn flags(&self, dir: &Path) -> Vec<String> {
        let mut flags = vec![format!("-I{}", dir.display())];
        flags.extend(self.include_dirs.iter().map(|d| format!("-I{}", d.display())));
        for (name, value) in &self.defines {
            flags.push(match value {
                None => format!("-D{name}"),
                Some(v) => format!("-D{name}={}", v.replace(',', "\\,")),
            });
        }
        flags.extend(self.extra_nvcc_args.iter().cloned());
        flags
    }

    /// The `.cu` files of `dirs`, with a `rerun-if-changed` for each folder, header and file.
    fn collect_sources(&self, dirs: &[PathBuf]) -> Result<Vec<KernelFile>, BuildError> {
        for dir in dirs {
            self.cargo(&format!("rerun-if-changed={}", dir.display()));
        }
        let sources = sources::collect(dirs)?;
        for header in dirs.iter().flat_map(|dir| sources::headers(dir)) {
            self.cargo(&format!("rerun-if-changed={}", header.display()));
        }
        for src in &sources {
            self.cargo(&format!("rerun-if-changed={}", src.path.display()));
        }
        Ok(sources)
    }

    /// The nvcc to use, if any.
    fn find_nvcc(&self) -> Option<Nvcc> {
        match &self.nvcc {
            NvccChoice::Search => nvcc::find(&self.kernel_dir),
            NvccChoice::Path(p) => Some(Nvcc { path: p.clone(), found_via: "KernelBuild::nvcc" }),
            NvccChoice::Absent => None,
        }
    }
}

/// `$OUT_DIR/kgraph/<stem>.cubin`: the file name `#[kernel]` embeds for `src`.
pub fn image_name(src: &Path) -> String {
    output_name(src, "cubin")
}

/// The directive that sets [`KERNEL_DIRS_ENV`] for the crate's compilation:
/// `cargo:rustc-env=KGRAPH_KERNEL_DIRS=<dirs joined by std::env::join_paths>`. `dirs` should be
/// absolute ([`BuildReport::kernel_dirs`] is), since the macro runs in another directory.
pub fn kernel_dirs_directive(dirs: &[PathBuf]) -> Result<String, BuildError> {
    let joined = std::env::join_paths(dirs)
        .map_err(|source| BuildError::UnjoinableKernelDirs { dirs: dirs.to_vec(), source })?;
    Ok(format!("cargo:rustc-env={KERNEL_DIRS_ENV}={}", joined.to_string_lossy()))
}

/// `"sm_90"` by default; `"sm_80, sm_90"` or `"90"` accepted.
pub fn parse_archs(spec: &str) -> Result<Vec<String>, BuildError> {
    let mut archs = Vec::new();
    for part in spec.split([',', ' ', ';']).map(str::trim).filter(|s| !s.is_empty()) {
        let num = part.trim_start_matches("sm_").trim_start_matches("compute_");
        if num.is_empty()
            || !num.chars().all(|c| c.is_ascii_alphanumeric())
            || !num.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(BuildError::BadArch { part: part.to_string() });
        }
        archs.push(format!("sm_{num}"));
    }
    if archs.is_empty() {
        archs.push(DEFAULT_ARCH.to_string());
    }
    Ok(archs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_lists() {
        assert_eq!(parse_archs("").unwrap(), vec!["sm_90"]);
        assert_eq!(parse_archs("sm_80, 90").unwrap(), vec!["sm_80", "sm_90"]);
        assert!(matches!(parse_archs("sm_$"), Err(BuildError::BadArch { part }) if part == "sm_$"));
    }
}
