//! Finding nvcc and running it on one kernel file.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::BuildError;

/// Where an nvcc was found, for the build log.
#[derive(Debug, Clone)]
pub struct Nvcc {
    /// The nvcc executable.
    pub path: PathBuf,
    /// How it was found (`NVCC`, `CUDA_HOME`, `PATH`, project toolchain).
    pub found_via: &'static str,
}

/// The folder `scripts/install-nvcc` installs into, relative to a project root.
pub const TOOLCHAIN_NVCC: &str = ".toolchain/cuda-13.0/nvidia/cu13/bin/nvcc";

/// How to get an nvcc, for messages.
pub const HOW_TO_GET_NVCC: &str = "install one with `scripts/install-nvcc` (nvcc 13.0 from PyPI into \
.toolchain/, no root needed), or point NVCC=/path/to/nvcc or CUDA_HOME=/usr/local/cuda at an existing CUDA toolkit";

/// Looks for nvcc: `NVCC`, `CUDA_HOME`/`CUDA_PATH`, `PATH`, then `.toolchain/` in `start` or any
/// folder above it.
pub fn find(start: &Path) -> Option<Nvcc> {
    if let Some(p) = std::env::var_os("NVCC").filter(|p| !p.is_empty()) {
        return Some(Nvcc { path: PathBuf::from(p), found_via: "NVCC" });
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(home) = std::env::var_os(var).filter(|p| !p.is_empty()) {
            let p = Path::new(&home).join("bin").join("nvcc");
            if p.is_file() {
                return Some(Nvcc { path: p, found_via: var });
            }
        }
    }
    if let Some(paths) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&paths) {
            let p = dir.join("nvcc");
            if p.is_file() {
                return Some(Nvcc { path: p, found_via: "PATH" });
            }
        }
    }
    start
        .ancestors()
        .map(|dir| dir.join(TOOLCHAIN_NVCC))
        .find(|p| p.is_file())
        .map(|path| Nvcc { path, found_via: "project toolchain (.toolchain/)" })
}

/// nvcc's version line, part of every cubin's cache key.
pub fn version(nvcc: &Nvcc) -> Result<String, BuildError> {
    let out = Command::new(&nvcc.path).arg("--version").output().map_err(|source| BuildError::NvccUnrunnable {
        nvcc: nvcc.path.clone(),
        found_via: nvcc.found_via,
        source,
    })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        return Err(BuildError::NvccVersion { nvcc: nvcc.path.clone(), stderr });
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text.lines().filter(|l| l.contains("release") || l.starts_with("Build")).collect::<Vec<_>>().join(" "))
}

/// The nvcc arguments that turn `src` into a device image at `out` for `archs` (`sm_90`, ...),
/// with `flags` (`-I`, `-D` and extra flags) before the output. One arch gives a cubin; several
/// give a fatbin (also loadable with cuModuleLoadData).
///
/// `-keep -keep-dir <keep_dir>` keeps the intermediate files of the same compile: the PTX
/// ptxas assembled and the preprocessed device source cicc read ([`kept_files`]). Keeping them
/// costs nothing measurable and does not change the image (same bytes).
pub fn args(src: &Path, out: &Path, keep_dir: &Path, archs: &[String], flags: &[String]) -> Vec<String> {
    let mut a = Vec::new();
    if let [arch] = archs {
        a.extend(["-cubin".to_string(), format!("-arch={arch}")]);
    } else {
        a.push("-fatbin".into());
        for arch in archs {
            let num = arch.trim_start_matches("sm_");
            a.push(format!("-gencode=arch=compute_{num},code={arch}"));
        }
    }
    a.extend(["-O3".into(), "-lineinfo".into(), "-std=c++17".into(), "-Xptxas=-v".into()]);
    a.extend(["-keep".into(), "-keep-dir".into(), keep_dir.display().to_string()]);
    a.extend(flags.iter().cloned());
    a.extend(["-o".into(), out.display().to_string(), src.display().to_string()]);
    a
}

/// The PTX and the preprocessed source of the first arch that `-keep` left in `keep_dir` for
/// `src`: `<stem>.ptx` and `<stem>.cpp1.ii` for one arch, `<stem>.compute_<n>.ptx` and
/// `<stem>.compute_<n>.cpp1.ii` per arch for several (nvcc 12 and 13 name them so).
pub fn kept_files(keep_dir: &Path, src: &Path, archs: &[String]) -> Result<(PathBuf, PathBuf), BuildError> {
    let stem = src.file_stem().unwrap_or_default().to_string_lossy();
    let base = match archs {
        [_] | [] => stem.to_string(),
        [first, ..] => format!("{stem}.compute_{}", first.trim_start_matches("sm_")),
    };
    let (ptx, ii) = (keep_dir.join(format!("{base}.ptx")), keep_dir.join(format!("{base}.cpp1.ii")));
    for path in [&ptx, &ii] {
        if !path.is_file() {
            let mut found: Vec<String> = std::fs::read_dir(keep_dir)
                .into_iter()
                .flatten()
                .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
                .collect();
            found.sort();
            return Err(BuildError::MissingIntermediate { path: path.clone(), found });
        }
    }
    Ok((ptx, ii))
}

/// The PTX `-keep` left in `keep_dir` for each arch after the first (empty for one arch): the
/// record is read from the first arch's, and facts that must hold for the image the driver
/// picks (whichever arch the GPU is) are checked against these too.
pub fn other_arch_ptx(keep_dir: &Path, src: &Path, archs: &[String]) -> Result<Vec<PathBuf>, BuildError> {
    let stem = src.file_stem().unwrap_or_default().to_string_lossy();
    let mut out = Vec::new();
    for arch in archs.iter().skip(1) {
        let path = keep_dir.join(format!("{stem}.compute_{}.ptx", arch.trim_start_matches("sm_")));
        if !path.is_file() {
            return Err(BuildError::MissingIntermediate { path, found: Vec::new() });
        }
        out.push(path);
    }
    Ok(out)
}

/// Runs nvcc on `file` with `args` and `scratch_dir` as its `TMPDIR`; returns its stderr (ptxas'
/// resource report), or [`BuildError::Compile`] with the compiler's output. cicc leaves an empty
/// `broken-*.lgenfe.bc` in `TMPDIR` for each file that fails to compile: in the build's own
/// scratch folder, which the build removes, they do not pile up in the system's.
pub fn run(nvcc: &Nvcc, file: &Path, args: &[String], scratch_dir: &Path) -> Result<String, BuildError> {
    let failed = |output: String| BuildError::Compile {
        file: file.to_path_buf(),
        command: format!("{} {}", nvcc.path.display(), args.join(" ")),
        output,
    };
    let out = Command::new(&nvcc.path)
        .args(args)
        .env("TMPDIR", scratch_dir)
        .output()
        .map_err(|e| failed(format!("cannot run {}: {e}", nvcc.path.display())))?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        Ok(stderr)
    } else {
        Err(failed(format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr)))
    }
}
