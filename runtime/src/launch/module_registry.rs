//! Every module kgraph loads stays loaded for the life of its context, and each is loaded once.
//!
//! cudarc unloads a module (`cuModuleUnload`) when the last `Arc<CudaModule>` goes, and the
//! driver documents no wait for kernels of that module still running, nor for instantiated
//! graphs whose kernel nodes name its functions. A kernel handle hands out clones of its
//! function (`function()`, a cudarc `CudaFunction` that holds the module), so no handle can know
//! when the last reference goes: `handle.launch(..)` then `drop(handle)` would unload code the GPU
//! is running, from safe code. So kgraph holds one reference to each module it loads, here, and
//! never lets it go; nothing a program drops can unload a kernel's code.
//!
//! What this costs is bounded: the key is the context and the code the driver loads, by its
//! contents (an embedded cubin, or the PTX NVRTC compiled: so files whose headers differ, or a
//! header changed between hot reloads, never share a key; the same code shares one), so loading
//! the same kernel again, from any handle or cache, returns the module already loaded instead of
//! a new one. Only hot reloads of changed code add modules (one per distinct PTX).

use std::sync::{Arc, Mutex, PoisonError};

use cudarc::driver::{CudaContext, CudaModule};

use crate::error::Result;

/// The code a module is loaded from, compared by contents (an embedded image may sit at several
/// addresses: the generated `KernelSource` is a `const`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ModuleCode {
    /// An image embedded in the binary (a cubin, or PTX shipped as text).
    Embedded(&'static [u8]),
    /// PTX compiled at run time (NVRTC: the fallback without nvcc, hot reload).
    Compiled(String),
}

struct Loaded {
    /// The driver's context handle, as an address (`CUcontext` is not `Send`).
    ctx: usize,
    code: ModuleCode,
    module: Arc<CudaModule>,
}

/// Every module loaded through [`load_once`], never dropped. The `Arc<CudaContext>` each module
/// holds keeps its context (and so the handle's meaning) alive too.
static LOADED: Mutex<Vec<Loaded>> = Mutex::new(Vec::new());

/// The module of `code` in `ctx`: the one loaded before, or `load()`'s, kept for good.
///
/// The lock is held across `load` (the driver's load, not a compile), so two threads loading
/// the same code load it once.
pub(crate) fn load_once(
    ctx: &Arc<CudaContext>,
    code: ModuleCode,
    load: impl FnOnce() -> Result<Arc<CudaModule>>,
) -> Result<Arc<CudaModule>> {
    let key = ctx.cu_ctx() as usize;
    // A panic while holding the lock leaves the list whole (entries are pushed complete).
    let mut loaded = LOADED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(entry) = loaded.iter().find(|e| e.ctx == key && e.code == code) {
        return Ok(entry.module.clone());
    }
    let module = load()?;
    loaded.push(Loaded { ctx: key, code, module: module.clone() });
    Ok(module)
}

#[cfg(test)]
mod tests {
    use super::ModuleCode;

    #[test]
    fn code_is_named_by_its_contents() {
        static A: [u8; 4] = [1, 2, 3, 4];
        static B: [u8; 4] = [1, 2, 3, 4];
        static C: [u8; 4] = [1, 2, 3, 5];
        // The same image at two addresses is one module's code; other bytes are other code.
        assert_eq!(ModuleCode::Embedded(&A), ModuleCode::Embedded(&B));
        assert_ne!(ModuleCode::Embedded(&A), ModuleCode::Embedded(&C));
        assert_eq!(ModuleCode::Compiled("k".into()), ModuleCode::Compiled("k".into()));
        assert_ne!(ModuleCode::Compiled("k".into()), ModuleCode::Compiled("k2".into()));
    }
}
