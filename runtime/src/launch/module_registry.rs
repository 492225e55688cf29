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

/// One loaded module: the context it was loaded into, as an address (`CUcontext` is not
/// `Send`), and its code.
struct Loaded<M> {
    ctx: usize,
    code: ModuleCode,
    module: M,
}

/// What was loaded, in which context, from which code: a list that only grows (an entry, once
/// pushed, is never replaced or removed, so a module a graph or a running kernel may use stays
/// loaded). Generic over the module so that its keying is tested without a GPU.
pub(crate) struct Registry<M> {
    entries: Vec<Loaded<M>>,
}

impl<M: Clone> Registry<M> {
    pub(crate) const fn new() -> Self {
        Registry { entries: Vec::new() }
    }

    /// The module of `code` in context `ctx`: the one loaded before, else `load()`'s, recorded
    /// for good. Both parts of the key must match: a module of one context is never handed to
    /// another, nor one code's module for other code. A failed `load` records nothing.
    pub(crate) fn get_or_load(&mut self, ctx: usize, code: ModuleCode, load: impl FnOnce() -> Result<M>) -> Result<M> {
        if let Some(entry) = self.entries.iter().find(|e| e.ctx == ctx && e.code == code) {
            return Ok(entry.module.clone());
        }
        let module = load()?;
        self.entries.push(Loaded { ctx, code, module: module.clone() });
        Ok(module)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }
}

/// Every module loaded through [`load_once`], never dropped. The `Arc<CudaContext>` each module
/// holds keeps its context alive too, so the `CUcontext` address a key names is never destroyed
/// and handed to another context while its entry exists (the entry exists for good).
static LOADED: Mutex<Registry<Arc<CudaModule>>> = Mutex::new(Registry::new());

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
    loaded.get_or_load(key, code, load)
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::{ModuleCode, Registry};
    use crate::error::{Error, ModuleError, Result};

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

    /// A registry of module numbers that counts the loads it asks for.
    fn load_counting<'a>(loads: &'a Cell<u32>, module: u32) -> impl FnOnce() -> Result<u32> + 'a {
        move || {
            loads.set(loads.get() + 1);
            Ok(module)
        }
    }

    #[test]
    fn a_module_is_keyed_by_context_and_code() {
        let mut registry = Registry::<u32>::new();
        let loads = Cell::new(0);
        let code = || ModuleCode::Compiled("ptx A".into());
        assert_eq!(registry.get_or_load(0x1000, code(), load_counting(&loads, 1)).unwrap(), 1);
        // The same code in another context is another module: never the first context's.
        assert_eq!(registry.get_or_load(0x2000, code(), load_counting(&loads, 2)).unwrap(), 2);
        // Other code in the first context is another module.
        let other = ModuleCode::Compiled("ptx B".into());
        assert_eq!(registry.get_or_load(0x1000, other, load_counting(&loads, 3)).unwrap(), 3);
        // An embedded image whose bytes equal nothing loaded is other code again.
        static IMAGE: [u8; 3] = *b"ptx";
        assert_eq!(registry.get_or_load(0x1000, ModuleCode::Embedded(&IMAGE), load_counting(&loads, 4)).unwrap(), 4);
        assert_eq!(loads.get(), 4);
        // Asked again, each key gets its own module back without a load.
        assert_eq!(registry.get_or_load(0x2000, code(), load_counting(&loads, 9)).unwrap(), 2);
        assert_eq!(registry.get_or_load(0x1000, code(), load_counting(&loads, 9)).unwrap(), 1);
        assert_eq!(loads.get(), 4);
        assert_eq!(registry.len(), 4);
    }

    #[test]
    fn a_loaded_module_is_never_replaced_and_a_failed_load_records_nothing() {
        let mut registry = Registry::<u32>::new();
        let loads = Cell::new(0);
        // Hot reload: code A, then B, then A again (the file edited back) gets A's first module,
        // which graphs built before may still launch; nothing is replaced or dropped.
        let a = || ModuleCode::Compiled("A".into());
        let b = || ModuleCode::Compiled("B".into());
        assert_eq!(registry.get_or_load(7, a(), load_counting(&loads, 10)).unwrap(), 10);
        assert_eq!(registry.get_or_load(7, b(), load_counting(&loads, 11)).unwrap(), 11);
        assert_eq!(registry.get_or_load(7, a(), load_counting(&loads, 12)).unwrap(), 10);
        assert_eq!(registry.len(), 2);
        // A load that fails is not recorded: the next request loads again.
        let failed = registry.get_or_load(7, ModuleCode::Compiled("C".into()), || {
            Err(Error::Module(ModuleError::Load { file: "c.cu", detail: "refused".into() }))
        });
        assert!(failed.is_err());
        assert_eq!(registry.len(), 2);
        assert_eq!(registry.get_or_load(7, ModuleCode::Compiled("C".into()), load_counting(&loads, 13)).unwrap(), 13);
        assert_eq!(loads.get(), 3);
    }
}
