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
//! Without nvcc the build still succeeds, loudly: the cubins are left empty and kgraph compiles
//! the embedded `.cu` source with NVRTC when the module is first loaded. `KGRAPH_REQUIRE_NVCC=1`
//! turns that fallback into a build error (use it for release builds).

mod nvcc;
mod resources;

pub use nvcc::{find as find_nvcc, Nvcc, HOW_TO_GET_NVCC};
pub use resources::{parse as parse_ptxas_report, KernelResources};

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Default target when `KGRAPH_CUDA_ARCH` is unset: Hopper (H100/H200).
pub const DEFAULT_ARCH: &str = "sm_90";

/// Configures one kernel folder's build. [`compile_kernels`] is `KernelBuild::new().run_or_exit()`.
#[derive(Debug, Clone)]
pub struct KernelBuild {
    kernel_dir: PathBuf,
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
        let manifest = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from).unwrap_or_default();
        KernelBuild {
            kernel_dir: manifest.join("kernels"),
            out_dir: None,
            archs: None,
            extra_nvcc_args: Vec::new(),
            emit_cargo: true,
            nvcc: NvccChoice::Search,
            require_nvcc: None,
        }
    }

    /// Another kernel folder (absolute, or relative to the current directory).
    pub fn kernel_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.kernel_dir = dir.into();
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
            Err(message) => {
                eprintln!("error: kgraph kernel build failed\n{message}");
                std::process::exit(1);
            }
        }
    }

    fn cargo(&self, line: &str) {
        if self.emit_cargo {
            println!("cargo:{line}");
        }
    }

    /// Compiles every stale kernel, in parallel. Errors are the compiler's own text, per file.
    pub fn run(self) -> Result<BuildReport, String> {
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => PathBuf::from(
                std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set: call kgraph_build from a build.rs")?,
            )
            .join("kgraph"),
        };
        std::fs::create_dir_all(&out_dir).map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
        for var in ["NVCC", "CUDA_HOME", "CUDA_PATH", "KGRAPH_CUDA_ARCH", "KGRAPH_REQUIRE_NVCC"] {
            self.cargo(&format!("rerun-if-env-changed={var}"));
        }
        self.cargo(&format!("rerun-if-changed={}", self.kernel_dir.display()));
        let sources = list_sources(&self.kernel_dir)?;
        for header in list_headers(&self.kernel_dir) {
            self.cargo(&format!("rerun-if-changed={}", header.display()));
        }
        for src in &sources {
            self.cargo(&format!("rerun-if-changed={}", src.display()));
        }
        let archs = match &self.archs {
            Some(a) => a.clone(),
            None => parse_archs(&std::env::var("KGRAPH_CUDA_ARCH").unwrap_or_default())?,
        };
        let mut report = BuildReport::default();
        let found = match &self.nvcc {
            NvccChoice::Search => nvcc::find(&self.kernel_dir),
            NvccChoice::Path(p) => Some(Nvcc { path: p.clone(), found_via: "KernelBuild::nvcc" }),
            NvccChoice::Absent => None,
        };
        let Some(nvcc) = found else {
            let require =
                self.require_nvcc.unwrap_or_else(|| std::env::var("KGRAPH_REQUIRE_NVCC").is_ok_and(|v| v == "1"));
            if require {
                return Err(format!("KGRAPH_REQUIRE_NVCC=1 but no nvcc was found (NVCC, CUDA_HOME, CUDA_PATH, PATH, .toolchain/): {HOW_TO_GET_NVCC}"));
            }
            self.cargo(&format!(
                "warning=kgraph: NO NVCC FOUND, kernels in {} will be compiled with NVRTC at run time (slower first load, no resource report). To build cubins, {HOW_TO_GET_NVCC}. Set KGRAPH_REQUIRE_NVCC=1 to make this an error.",
                self.kernel_dir.display()
            ));
            for src in &sources {
                let image = out_dir.join(image_name(src));
                std::fs::write(&image, b"").map_err(|e| format!("cannot write {}: {e}", image.display()))?;
                let _ = std::fs::remove_file(out_dir.join(stamp_name(src)));
            }
            report.nvrtc_fallback = true;
            return Ok(report);
        };
        let version = nvcc::version(&nvcc)?;
        let jobs = std::env::var("NUM_JOBS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
            .max(1);
        let results: Vec<(PathBuf, Result<Outcome, String>)> = {
            let queue = std::sync::Mutex::new(sources.iter());
            let done = std::sync::Mutex::new(Vec::new());
            std::thread::scope(|s| {
                for _ in 0..jobs.min(sources.len()) {
                    s.spawn(|| loop {
                        let next = queue.lock().unwrap().next();
                        let Some(src) = next else { break };
                        let r = self.build_one(src, &out_dir, &nvcc, &version, &archs);
                        done.lock().unwrap().push((src.clone(), r));
                    });
                }
            });
            done.into_inner().unwrap()
        };
        let mut errors = String::new();
        for (src, result) in results {
            match result {
                Ok(outcome) => {
                    for k in &outcome.resources {
                        if k.uses_local_memory() {
                            self.cargo(&format!(
                                "warning=kgraph: kernel `{}` ({}) uses local memory: {}",
                                k.kernel,
                                src.display(),
                                k.line()
                            ));
                        }
                    }
                    report.resources.extend(outcome.resources);
                    if outcome.compiled {
                        report.compiled.push(src)
                    } else {
                        report.up_to_date.push(src)
                    }
                }
                Err(e) => {
                    let _ = writeln!(errors, "--- {} ---\n{e}", src.display());
                }
            }
        }
        if errors.is_empty() {
            Ok(report)
        } else {
            Err(errors)
        }
    }

    fn build_one(
        &self,
        src: &Path,
        out_dir: &Path,
        nvcc: &Nvcc,
        version: &str,
        archs: &[String],
    ) -> Result<Outcome, String> {
        let image = out_dir.join(image_name(src));
        let stamp = out_dir.join(stamp_name(src));
        let report_path = out_dir.join(report_name(src));
        let args = nvcc::args(src, &image, &self.kernel_dir, archs, &self.extra_nvcc_args);
        let key = cache_key(src, &self.kernel_dir, version, &args)?;
        let cached = std::fs::read_to_string(&stamp).ok().is_some_and(|s| s == key)
            && std::fs::metadata(&image).is_ok_and(|m| m.len() > 0);
        if cached {
            let text = std::fs::read_to_string(&report_path).unwrap_or_default();
            return Ok(Outcome { compiled: false, resources: resources::parse(&text) });
        }
        let _ = std::fs::remove_file(&stamp);
        let stderr = nvcc::run(nvcc, &args).map_err(|e| format!("{} {}\n{e}", nvcc.path.display(), args.join(" ")))?;
        let resources = resources::parse(&stderr);
        let mut text = stderr.clone();
        text.push_str("\n# summary\n");
        for k in &resources {
            text.push_str(&k.line());
            text.push('\n');
        }
        std::fs::write(&report_path, text).map_err(|e| format!("cannot write {}: {e}", report_path.display()))?;
        std::fs::write(&stamp, key).map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
        Ok(Outcome { compiled: true, resources })
    }
}

struct Outcome {
    compiled: bool,
    resources: Vec<KernelResources>,
}

/// `$OUT_DIR/kgraph/<stem>.cubin`: the file name `#[kernel]` embeds for `src`.
pub fn image_name(src: &Path) -> String {
    format!("{}.cubin", src.file_stem().unwrap_or_default().to_string_lossy())
}

fn stamp_name(src: &Path) -> String {
    format!("{}.stamp", src.file_stem().unwrap_or_default().to_string_lossy())
}

fn report_name(src: &Path) -> String {
    format!("{}.resources.txt", src.file_stem().unwrap_or_default().to_string_lossy())
}

/// `"sm_90"` by default; `"sm_80, sm_90"` or `"90"` accepted.
pub fn parse_archs(spec: &str) -> Result<Vec<String>, String> {
    let mut archs = Vec::new();
    for part in spec.split([',', ' ', ';']).map(str::trim).filter(|s| !s.is_empty()) {
        let num = part.trim_start_matches("sm_").trim_start_matches("compute_");
        if num.is_empty()
            || !num.chars().all(|c| c.is_ascii_alphanumeric())
            || !num.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(format!("KGRAPH_CUDA_ARCH: `{part}` is not an arch like sm_90"));
        }
        archs.push(format!("sm_{num}"));
    }
    if archs.is_empty() {
        archs.push(DEFAULT_ARCH.to_string());
    }
    Ok(archs)
}

fn list_sources(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut v: Vec<PathBuf> =
        entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|e| e == "cu")).collect();
    v.sort();
    Ok(v)
}

fn list_headers(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cuh" || e == "h" || e == "hpp"))
        .collect();
    v.sort();
    v
}

/// Local headers `src` includes (`#include "x.cuh"`), transitively, relative to `dir`.
fn local_includes(src: &Path, dir: &Path) -> BTreeSet<PathBuf> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![src.to_path_buf()];
    while let Some(file) = todo.pop() {
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        for line in text.lines() {
            let line = line.trim_start();
            let Some(rest) = line.strip_prefix('#').map(str::trim_start).and_then(|l| l.strip_prefix("include")) else {
                continue;
            };
            let Some(name) = rest.trim().strip_prefix('"').and_then(|r| r.split('"').next()) else { continue };
            let base = file.parent().unwrap_or(dir);
            let candidate = [base.join(name), dir.join(name)].into_iter().find(|p| p.is_file());
            if let Some(p) = candidate {
                if seen.insert(p.clone()) {
                    todo.push(p);
                }
            }
        }
    }
    seen
}

/// FNV-1a over the source, its local headers, nvcc's version and the arguments.
fn cache_key(src: &Path, dir: &Path, version: &str, args: &[String]) -> Result<String, String> {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x100_0000_01b3);
        }
    };
    feed(&std::fs::read(src).map_err(|e| format!("cannot read {}: {e}", src.display()))?);
    for header in local_includes(src, dir) {
        feed(header.to_string_lossy().as_bytes());
        feed(&std::fs::read(&header).unwrap_or_default());
    }
    feed(version.as_bytes());
    for a in args {
        feed(a.as_bytes());
    }
    Ok(format!("{h:016x}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_lists() {
        assert_eq!(parse_archs("").unwrap(), vec!["sm_90"]);
        assert_eq!(parse_archs("sm_80, 90").unwrap(), vec!["sm_80", "sm_90"]);
        assert!(parse_archs("sm_$").is_err());
    }

    #[test]
    fn includes_are_followed_transitively_and_change_the_key() {
        let dir = std::env::temp_dir().join(format!("kgraph-build-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.cu"), "#include \"b.cuh\"\nextern \"C\" __global__ void a() {}\n").unwrap();
        std::fs::write(dir.join("b.cuh"), "#include \"c.cuh\"\n").unwrap();
        std::fs::write(dir.join("c.cuh"), "// v1\n").unwrap();
        let inc = local_includes(&dir.join("a.cu"), &dir);
        assert_eq!(inc.len(), 2);
        let k1 = cache_key(&dir.join("a.cu"), &dir, "v", &[]).unwrap();
        std::fs::write(dir.join("c.cuh"), "// v2\n").unwrap();
        let k2 = cache_key(&dir.join("a.cu"), &dir, "v", &[]).unwrap();
        assert_ne!(k1, k2);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
