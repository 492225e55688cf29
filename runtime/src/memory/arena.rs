//! The memory arena of a graph spec's memory plan: one zeroed allocation that the planned
//! buffers of a generated graph struct share, each an [`ArenaSlice`] at the offset the plan
//! gave it. Generated code only (`kgraph::__private`): which slices may overlap is the plan's
//! proof, stated at [`ArenaSlice::new`].

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::sys;

use crate::context::Stream;
use crate::error::{Error, MemoryError, Result};
use crate::launch::args::{DeviceIn, DeviceOut};
use crate::memory::buffer::DeviceBuffer;

/// One allocation shared by the planned buffers of a graph struct; every [`ArenaSlice`] holds a
/// reference, so the memory lives while any slice does and is freed on its stream's order.
#[derive(Clone)]
pub struct Arena {
    bytes: Arc<DeviceBuffer<u8>>,
}

impl Arena {
    /// The arena over `bytes` (allocated by [`crate::Device::alloc_zeros`]).
    pub fn new(bytes: DeviceBuffer<u8>) -> Self {
        Arena { bytes: Arc::new(bytes) }
    }

    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether it holds no byte.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// `len` elements of `T` at a byte offset of an [`Arena`]: a planned buffer. Kernels take it
/// where they take a [`DeviceBuffer`] (`&impl DeviceIn<T>`, `&mut impl DeviceOut<T>`).
pub struct ArenaSlice<T> {
    arena: Arena,
    addr: sys::CUdeviceptr,
    len: usize,
    _elem: PhantomData<fn() -> T>,
}

impl<T> ArenaSlice<T> {
    /// Elements `[0, len)` of `T` starting `offset` bytes into `arena`; [`MemoryError::OutOfRange`]
    /// when they do not fit, or the offset is not a multiple of `T`'s alignment.
    ///
    /// # Safety
    /// Slices of one arena may overlap. The caller promises that no two overlapping slices are
    /// passed to one launch, and that no work touching one can run at the same time as work
    /// touching another that overlaps it (the memory plan's rule: every use of the one is
    /// ordered before every use of the other), and that every read of a slice's elements is
    /// preceded, in the same run, by a write of them (its bytes hold another slice's values
    /// otherwise).
    pub unsafe fn new(arena: &Arena, offset: usize, len: usize) -> Result<Self> {
        let bytes = len.checked_mul(std::mem::size_of::<T>());
        let end = bytes.and_then(|b| b.checked_add(offset));
        let misaligned = offset % std::mem::align_of::<T>() != 0;
        match end {
            Some(end) if end <= arena.len() && !misaligned => {}
            _ => {
                return Err(Error::Memory(MemoryError::OutOfRange {
                    what: format!(
                        "ArenaSlice::new: {len} elements of {} bytes at byte offset {offset} (aligned to {})",
                        std::mem::size_of::<T>(),
                        std::mem::align_of::<T>()
                    ),
                    index: end.unwrap_or(usize::MAX),
                    len: arena.len(),
                }))
            }
        }
        let addr = DeviceIn::<u8>::device_addr(&*arena.bytes) + offset as sys::CUdeviceptr;
        Ok(ArenaSlice { arena: arena.clone(), addr, len, _elem: PhantomData })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the slice holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

// SAFETY: the address is `len` elements inside the arena (checked by `new`), whose allocation
// the slice's `Arc` keeps alive; it is freed on the arena's stream, after the work issued there
// before the last reference drops.
unsafe impl<T> DeviceIn<T> for ArenaSlice<T> {
    #[inline]
    fn device_addr(&self) -> sys::CUdeviceptr {
        self.addr
    }
    #[inline]
    fn elem_len(&self) -> usize {
        self.len
    }
    #[inline]
    fn stream(&self) -> &Stream {
        DeviceIn::<u8>::stream(&*self.arena.bytes)
    }
}

// SAFETY: as for `DeviceIn`; which overlapping slices may be written when is `new`'s contract.
unsafe impl<T> DeviceOut<T> for ArenaSlice<T> {}
