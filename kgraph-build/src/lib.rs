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
//! More folders compile into the same output folder with [`KernelBuild::add_kernel_dir`]; each
//! folder's files include headers from their own folder (`-I<folder>`), and the folders are
//! passed on to `#[kernel]` in `KGRAPH_KERNEL_DIRS` ([`KERNEL_DIRS_ENV`]).
//!
//! Without nvcc the build still succeeds, loudly: the cubins are left empty and kgraph compiles
//! the embedded `.cu` source with NVRTC when the module is first loaded. `KGRAPH_REQUIRE_NVCC=1`
//! turns that fallback into a build error (use it for release builds).

mod error;
mod nvcc;
pub mod preprocessed;
mod ptx;
pub mod record;
mod resources;
mod sources;

pub use error::{BuildError, IoOp};
pub use nvcc::{find as find_nvcc, Nvcc, HOW_TO_GET_NVCC};
pub use preprocessed::{original_line, SourceLine};
pub use ptx::{ptx_target, records_from_ptx};
pub use record::{
    format_kernel_record, parse_kernel_record, CallRecord, KernelRecord, ParamRecord, PtrSpace, RECORD_HEADER,
};
pub use resources::{parse as parse_ptxas_report, KernelResources};

use std::path::{Path, PathBuf};

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
    /// True when no nvcc was found and the NVRTC fallback is in use.
    pub nvrtc_fallback: bool,
    /// Every kernel folder of the build, absolute (the primary one first, whether or not it
    /// exists): what [`KERNEL_DIRS_ENV`] is set to.
    pub kernel_dirs: Vec<PathBuf>,
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
        KernelBuild {
            kernel_dir: manifest_dir.join("kernels"),
            manifest_dir,
            extra_kernel_dirs: Vec::new(),
            out_dir: None,
            archs: None,
            extra_nvcc_args: Vec::new(),
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

    /// Extra nvcc flags (e.g. `-DUSE_FAST_MATH`), part of the cache key.
    pub fn nvcc_arg(mut self, arg: impl Into<String>) -> Self {
        self.extra_nvcc_args.push(arg.into());
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
        let sources = self.collect_sources(&dirs)?;
        let archs = match &self.archs {
            Some(a) => a.clone(),
            None => parse_archs(&std::env::var("KGRAPH_CUDA_ARCH").unwrap_or_default())?,
        };
        let mut report = match self.find_nvcc() {
            Some(nvcc) => self.compile_stale(&sources, &out_dir, &nvcc, &archs)?,
            None => self.fall_back_to_nvrtc(&dirs, &sources, &out_dir)?,
        };
        report.kernel_dirs = dirs.iter().map(|d| std::path::absolute(d).unwrap_or_else(|_| d.clone())).collect();
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

    /// No nvcc: leaves an empty image per kernel (so `#[kernel]` compiles the source with NVRTC
    /// at load), with a loud warning, unless nvcc is required.
    fn fall_back_to_nvrtc(
        &self,
        dirs: &[PathBuf],
        sources: &[KernelFile],
        out_dir: &Path,
    ) -> Result<BuildReport, BuildError> {
        let require = self.require_nvcc.unwrap_or_else(|| std::env::var("KGRAPH_REQUIRE_NVCC").is_ok_and(|v| v == "1"));
        if require {
            return Err(BuildError::NvccRequired { how_to: HOW_TO_GET_NVCC });
        }
        let folders: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        self.cargo(&format!(
            "warning=kgraph: NO NVCC FOUND, kernels in {} will be compiled with NVRTC at run time (slower first load, no resource report). To build cubins, {HOW_TO_GET_NVCC}. Set KGRAPH_REQUIRE_NVCC=1 to make this an error.",
            folders.join(", ")
        ));
        for src in sources {
            let image = out_dir.join(image_name(&src.path));
            std::fs::write(&image, b"").map_err(|e| BuildError::io(IoOp::Write, &image, e))?;
            let _ = std::fs::remove_file(out_dir.join(output_name(&src.path, "stamp")));
        }
        Ok(BuildReport { nvrtc_fallback: true, ..BuildReport::default() })
    }

    /// Compiles the kernels whose cubin is stale on `NUM_JOBS` threads, and reports on all.
    fn compile_stale(
        &self,
        sources: &[KernelFile],
        out_dir: &Path,
        nvcc: &Nvcc,
        archs: &[String],
    ) -> Result<BuildReport, BuildError> {
        let version = nvcc::version(nvcc)?;
        let jobs = std::env::var("NUM_JOBS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
            .max(1);
        let queue = std::sync::Mutex::new(sources.iter().enumerate());
        let done = std::sync::Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for _ in 0..jobs.min(sources.len()) {
                s.spawn(|| loop {
                    let next = queue.lock().unwrap().next();
                    let Some((index, src)) = next else { break };
                    let result = self.build_one(src, out_dir, nvcc, &version, archs);
                    done.lock().unwrap().push((index, result));
                });
            }
        });
        let mut results = done.into_inner().unwrap();
        // Threads finish in any order; report in source order, so messages are reproducible.
        results.sort_by_key(|(index, _)| *index);
        self.report(results.into_iter().map(|(index, result)| (&sources[index], result)))
    }

    /// Gathers per-file outcomes into a report (warning about local memory use), or the errors
    /// of the files that failed.
    fn report<'a>(
        &self,
        results: impl Iterator<Item = (&'a KernelFile, Result<Outcome, BuildError>)>,
    ) -> Result<BuildReport, BuildError> {
        let mut report = BuildReport::default();
        let mut errors = Vec::new();
        for (src, result) in results {
            let outcome = match result {
                Ok(outcome) => outcome,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            for k in outcome.resources.iter().filter(|k| k.uses_local_memory()) {
                self.cargo(&format!(
                    "warning=kgraph: kernel `{}` ({}) uses local memory: {}",
                    k.kernel,
                    src.path.display(),
                    k.line()
                ));
            }
            report.resources.extend(outcome.resources);
            if outcome.compiled {
                report.compiled.push(src.path.clone())
            } else {
                report.up_to_date.push(src.path.clone())
            }
        }
        if errors.len() > 1 {
            Err(BuildError::Several(errors))
        } else if let Some(error) = errors.pop() {
            Err(error)
        } else {
            Ok(report)
        }
    }

    /// Compiles `src` unless its cubin's stamp matches the cache key.
    fn build_one(
        &self,
        src: &KernelFile,
        out_dir: &Path,
        nvcc: &Nvcc,
        version: &str,
        archs: &[String],
    ) -> Result<Outcome, BuildError> {
        let in_kernel = |source| BuildError::Kernel { file: src.path.clone(), source: Box::new(source) };
        let image = out_dir.join(image_name(&src.path));
        let stamp = out_dir.join(output_name(&src.path, "stamp"));
        let report_path = out_dir.join(output_name(&src.path, "resources.txt"));
        let args = nvcc::args(&src.path, &image, &src.dir, archs, &self.extra_nvcc_args);
        let key = sources::cache_key(&src.path, &src.dir, version, &args).map_err(in_kernel)?;
        let cached = std::fs::read_to_string(&stamp).ok().is_some_and(|s| s == key)
            && std::fs::metadata(&image).is_ok_and(|m| m.len() > 0);
        if cached {
            let text = std::fs::read_to_string(&report_path).unwrap_or_default();
            return Ok(Outcome { compiled: false, resources: resources::parse(&text) });
        }
        let _ = std::fs::remove_file(&stamp);
        let stderr = nvcc::run(nvcc, &src.path, &args)?;
        let resources = resources::parse(&stderr);
        let mut text = stderr.clone();
        text.push_str("\n# summary\n");
        for k in &resources {
            text.push_str(&k.line());
            text.push('\n');
        }
        std::fs::write(&report_path, text).map_err(|e| in_kernel(BuildError::io(IoOp::Write, &report_path, e)))?;
        std::fs::write(&stamp, key).map_err(|e| in_kernel(BuildError::io(IoOp::Write, &stamp, e)))?;
        Ok(Outcome { compiled: true, resources })
    }
}

/// One kernel file's result: whether it was compiled (or cached), and ptxas' report.
struct Outcome {
    compiled: bool,
    resources: Vec<KernelResources>,
}

/// `$OUT_DIR/kgraph/<stem>.cubin`: the file name `#[kernel]` embeds for `src`.
pub fn image_name(src: &Path) -> String {
    output_name(src, "cubin")
}

/// `<stem>.<suffix>`: the name of one of `src`'s files in the output folder.
fn output_name(src: &Path, suffix: &str) -> String {
    format!("{}.{suffix}", src.file_stem().unwrap_or_default().to_string_lossy())
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
