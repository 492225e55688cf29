//! Kernel hot reload in development (`KGRAPH_HOT_RELOAD=1`): a graph struct's `reload_kernels`
//! polls the modification times of its kernels' `.cu` files and, when one changed, recompiles
//! every kernel of the struct from the files on disk (NVRTC, for the device's compute
//! capability) through a [`ModuleCache::from_disk`](crate::ModuleCache::from_disk), swaps the
//! handles only when all loaded, turns the struct's PDL off for good, and rebuilds the graph. A
//! failure (a compile error, a changed signature) is returned and the old kernels keep running.
//! Off (the variable unset), `reload_kernels` returns after one cached flag test.
//!
//! What is checked of the code on disk: each declared parameter's size, and that there is no
//! parameter past them (the driver's `cuFuncGetParamInfo`; a driver that cannot report them
//! refuses the reload rather than load unchecked code). Everything else a checked launch rests
//! on is the `unsafe` promise of `reload_kernels` and `ModuleCache::from_disk`: parameter types
//! and constness, the extents under the declaration's `requires`, correctness for every block up
//! to the build's `MAX_THREADS`, dynamic shared memory within the declaration's `shared`. PDL is
//! not a promise: it is off once a reload happened. The launch checks themselves (block bound,
//! extents, `requires`, shared memory) keep running with the declaration's constants, and the
//! driver still refuses a launch beyond the new code's own `__launch_bounds__` or shared memory.
//!
//! Old code stays loaded: every module goes through the process-wide registry
//! (`module_registry`), which never unloads one, so a graph or a launch of the code before the
//! reload can finish (the struct also waits for its stream before it drops the old graph).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::SystemTime;

use crate::launch::module::KernelSource;

/// The variable that turns hot reload on (`1`, `true` or `yes`).
pub const HOT_RELOAD_ENV: &str = "KGRAPH_HOT_RELOAD";

/// 0: not read yet; 1: off; 2: on.
static STATE: AtomicU8 = AtomicU8::new(0);

/// Whether hot reload is on for this process: [`set_enabled`]'s last word, else the variable
/// (read once).
pub fn enabled() -> bool {
    match STATE.load(Ordering::Relaxed) {
        0 => {
            let on = std::env::var(HOT_RELOAD_ENV)
                .is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes"));
            STATE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
            on
        }
        s => s == 2,
    }
}

/// Turns hot reload on or off for this process (overrides the variable), e.g. from a
/// development flag; structs created afterwards watch their files.
pub fn set_enabled(on: bool) {
    STATE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
}

impl KernelSource {
    /// The `.cu` file on disk: the kernel folder the build compiled it from, and its name.
    pub fn disk_path(&self) -> PathBuf {
        let name = Path::new(self.file()).file_name().map(PathBuf::from).unwrap_or_else(|| PathBuf::from(self.file()));
        Path::new(self.include_dir()).join(name)
    }
}

/// The modification times of a set of kernel files, polled by [`KernelWatch::changed`].
#[derive(Debug, Default)]
pub struct KernelWatch {
    files: Vec<(PathBuf, Option<SystemTime>)>,
}

fn stamp(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

impl KernelWatch {
    /// Watches the files of `sources` (nothing when hot reload is off: no file is touched).
    pub fn new(sources: &[&KernelSource]) -> Self {
        if !enabled() {
            return KernelWatch::default();
        }
        let mut files: Vec<(PathBuf, Option<SystemTime>)> = Vec::new();
        for s in sources {
            let p = s.disk_path();
            if !files.iter().any(|(f, _)| *f == p) {
                let t = stamp(&p);
                files.push((p, t));
            }
        }
        KernelWatch { files }
    }

    /// Whether any watched file changed (or appeared, or vanished) since the last call; the
    /// new times become the reference either way.
    pub fn changed(&mut self) -> bool {
        let mut any = false;
        for (path, last) in &mut self.files {
            let now = stamp(path);
            if now != *last {
                *last = now;
                any = true;
            }
        }
        any
    }

    /// The watched files.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        self.files.iter().map(|(p, _)| p.as_path())
    }
}
