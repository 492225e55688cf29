//! [`BuildError`]: why a kernel build failed, one variant per cause.

use std::path::PathBuf;

/// Why [`crate::KernelBuild::run`] failed. `Display` is the message the build script prints;
/// errors that belong to one kernel file start with a `--- file ---` header line.
#[derive(Debug)]
#[non_exhaustive]
pub enum BuildError {
    /// `OUT_DIR` is not set and no [`crate::KernelBuild::out_dir`] was given: not a build script.
    NoOutDir,
    /// No nvcc was found while one was required (`KGRAPH_REQUIRE_NVCC=1`, or
    /// [`crate::KernelBuild::require_nvcc`]).
    NvccRequired {
        /// How to get one ([`crate::HOW_TO_GET_NVCC`]).
        how_to: &'static str,
    },
    /// An entry of the arch list (`KGRAPH_CUDA_ARCH`) is not an arch like `sm_90`.
    BadArch {
        /// The entry as given.
        part: String,
    },
    /// nvcc could not be started to ask its version.
    NvccUnrunnable {
        /// The nvcc executable.
        nvcc: PathBuf,
        /// How it was found.
        found_via: &'static str,
        /// Why it did not start.
        source: std::io::Error,
    },
    /// `nvcc --version` ran and failed.
    NvccVersion {
        /// The nvcc executable.
        nvcc: PathBuf,
        /// What it printed on stderr.
        stderr: String,
    },
    /// nvcc failed on a kernel file.
    Compile {
        /// The `.cu` file.
        file: PathBuf,
        /// The nvcc command line.
        command: String,
        /// nvcc's stdout and stderr, or why it could not be started.
        output: String,
    },
    /// A file system operation failed.
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What was being done to it.
        op: IoOp,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A step of building one kernel file other than compiling it failed (reading it, writing
    /// its resource report, record, preprocessed source or cache stamp).
    Kernel {
        /// The `.cu` file.
        file: PathBuf,
        /// What failed.
        source: Box<BuildError>,
    },
    /// A folder given to [`crate::KernelBuild::add_kernel_dir`] does not exist.
    MissingKernelDir {
        /// The folder, as resolved.
        dir: PathBuf,
    },
    /// Two kernel files in different folders share a file stem: both would compile to
    /// `<stem>.cubin` in the one output folder.
    DuplicateStem {
        /// The shared stem.
        stem: String,
        /// The file found first (folders in the order they were added).
        first: PathBuf,
        /// The file found second.
        second: PathBuf,
    },
    /// Two resident specs of the graph folders share a file stem, so their resident kernels
    /// would share one file (`kg_<stem>_resident.cu`).
    DuplicateResident {
        /// The generated kernel's symbol, `kg_<stem>_resident`.
        symbol: String,
        /// The spec found first (folders in the order they were added).
        first: PathBuf,
        /// The spec found second.
        second: PathBuf,
    },
    /// The kernel folders cannot be joined into `KGRAPH_KERNEL_DIRS` (a folder name contains
    /// the platform's path separator).
    UnjoinableKernelDirs {
        /// The folders.
        dirs: Vec<PathBuf>,
        /// Why they cannot be joined.
        source: std::env::JoinPathsError,
    },
    /// nvcc compiled a kernel file but did not leave an intermediate file the build keeps (the
    /// PTX or the preprocessed source of `-keep`): an nvcc whose `-keep` names files otherwise.
    MissingIntermediate {
        /// The file that was expected.
        path: PathBuf,
        /// The files nvcc did leave in its keep folder.
        found: Vec<String>,
    },
    /// A compiled-kernel record (`<stem>.kernels`) is malformed.
    BadKernelRecord {
        /// 1-based line of the record text.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// A macro name given to [`crate::KernelBuild::define`] or
    /// [`crate::KernelBuild::define_value`] is not a C identifier.
    BadDefine {
        /// The name as given.
        name: String,
    },
    /// A folder given to [`crate::KernelBuild::include_dir`] does not exist.
    MissingIncludeDir {
        /// The folder, as resolved.
        dir: PathBuf,
    },
    /// Several kernel files failed; one error per file, in source order.
    Several(Vec<BuildError>),
}

/// The file system operation of a [`BuildError::Io`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoOp {
    /// Creating a folder (and its parents).
    Create,
    /// Reading a file.
    Read,
    /// Writing a file.
    Write,
}

impl BuildError {
    /// A [`BuildError::Io`] of `op` on `path`.
    pub(crate) fn io(op: IoOp, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        BuildError::Io { path: path.into(), op, source }
    }

    /// The errors one per failed file: the members of [`BuildError::Several`], else `self`.
    pub fn per_file(&self) -> &[BuildError] {
        match self {
            BuildError::Several(errors) => errors,
            one => std::slice::from_ref(one),
        }
    }
}

impl std::fmt::Display for IoOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            IoOp::Create => "create",
            IoOp::Read => "read",
            IoOp::Write => "write",
        })
    }
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::NoOutDir => f.write_str("OUT_DIR is not set: call kgraph_build from a build.rs"),
            BuildError::NvccRequired { how_to } => write!(
                f,
                "KGRAPH_REQUIRE_NVCC=1 but no nvcc was found (NVCC, CUDA_HOME, CUDA_PATH, PATH, .toolchain/): {how_to}"
            ),
            BuildError::BadArch { part } => write!(f, "KGRAPH_CUDA_ARCH: `{part}` is not an arch like sm_90"),
            BuildError::NvccUnrunnable { nvcc, found_via, source } => {
                write!(f, "cannot run {} (found via {found_via}): {source}", nvcc.display())
            }
            BuildError::NvccVersion { nvcc, stderr } => write!(f, "{} --version failed: {stderr}", nvcc.display()),
            BuildError::Compile { file, command, output } => {
                writeln!(f, "--- {} ---\n{command}\n{output}", file.display())
            }
            BuildError::Io { path, op, source } => write!(f, "cannot {op} {}: {source}", path.display()),
            BuildError::Kernel { file, source } => writeln!(f, "--- {} ---\n{source}", file.display()),
            BuildError::MissingKernelDir { dir } => {
                write!(f, "kernel folder {} does not exist (added with KernelBuild::add_kernel_dir)", dir.display())
            }
            BuildError::DuplicateStem { stem, first, second } => write!(
                f,
                "kernel files {} and {} both compile to {stem}.cubin: rename one (cubins are named by file stem)",
                first.display(),
                second.display()
            ),
            BuildError::DuplicateResident { symbol, first, second } => write!(
                f,
                "resident specs {} and {} both lower to {symbol}.cu: rename one (resident kernels are named by the spec's file stem)",
                first.display(),
                second.display()
            ),
            BuildError::UnjoinableKernelDirs { dirs, source } => {
                write!(f, "cannot pass the kernel folders {dirs:?} to #[kernel] in KGRAPH_KERNEL_DIRS: {source}")
            }
            BuildError::MissingIntermediate { path, found } => write!(
                f,
                "nvcc -keep left no {} (it left: {}); kgraph-build keeps the PTX and preprocessed source of each compile",
                path.display(),
                found.join(", ")
            ),
            BuildError::BadKernelRecord { line, message } => write!(f, "kernel record, line {line}: {message}"),
            BuildError::BadDefine { name } => {
                write!(f, "KernelBuild::define: `{name}` is not a macro name (a C identifier)")
            }
            BuildError::MissingIncludeDir { dir } => {
                write!(f, "include folder {} does not exist (added with KernelBuild::include_dir)", dir.display())
            }
            BuildError::Several(errors) => errors.iter().try_for_each(|e| write!(f, "{e}")),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::NvccUnrunnable { source, .. } | BuildError::Io { source, .. } => Some(source),
            BuildError::Kernel { source, .. } => Some(source.as_ref()),
            BuildError::UnjoinableKernelDirs { source, .. } => Some(source),
            _ => None,
        }
    }
}
