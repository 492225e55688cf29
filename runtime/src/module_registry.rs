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
//! What this costs is bounded: the key is the context and the code (an embedded image or NVRTC
//! source by its static address, text read from disk by its contents), so loading the same kernel
//! again, from any handle or cache, returns the module already loaded instead of a new one. Only
//! hot reloads of changed text add modules (one per distinct text).

use std::sync::{Arc, Mutex, PoisonError};

use cudarc::driver::{CudaContext, CudaModule};

use crate::error::Result;

/// The code a module was loaded from.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ModuleCode {
    /// Bytes with a static address (an embedded image or embedded source): their address and
    /// length name them.
    Static { addr: usize, len: usize },
    /// Text read at run time (hot reload): its contents name it.
    Text(String),
}

impl ModuleCode {
    /// The code of a `'static` byte string (an `include_bytes!` image or `include_str!` source).
    pub(crate) fn embedded(bytes: &'static [u8]) -> Self {
        ModuleCode::Static { addr: bytes.as_ptr() as usize, len: bytes.len() }
    }
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
/// The lock is held across `load`, so two threads loading the same code load it once.
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
    fn embedded_code_is_named_by_its_address_and_text_by_its_contents() {
        static A: [u8; 4] = [1, 2, 3, 4];
        static B: [u8; 4] = [1, 2, 3, 4];
        assert_eq!(ModuleCode::embedded(&A), ModuleCode::embedded(&A));
        // Same bytes at another address: another embedded file, kept apart.
        assert_ne!(ModuleCode::embedded(&A), ModuleCode::embedded(&B));
        assert_eq!(ModuleCode::Text("k".into()), ModuleCode::Text("k".into()));
        assert_ne!(ModuleCode::Text("k".into()), ModuleCode::Text("k2".into()));
    }
}
