//! A resident step's input or output in mapped pinned memory, as pairs: one 8-byte word per
//! 4-byte word of the record, `data | seq << 32`, each written and read as one 8-byte access.
//! A reader that sees every pair carry the same sequence number holds the whole record of that
//! step, whatever order the writes landed in, so no flag, fence or second bus round trip is
//! needed (the LL protocol of NCCL; `kg_resident.cuh` is the device side).

use std::marker::PhantomData;
use std::mem::{size_of, MaybeUninit};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, MemoryError, Result};
use crate::memory::device::Device;
use crate::memory::mapped::MappedBuffer;
use crate::memory::pod::Pod;

/// The record `T` as pairs (see the module docs).
pub(crate) struct Pairs<T: Pod> {
    pairs: MappedBuffer<u64>,
    _record: PhantomData<fn() -> T>,
}

impl<T: Pod> Pairs<T> {
    /// Words of `T` (its size over 4).
    pub(crate) const WORDS: usize = size_of::<T>() / 4;

    /// Zeroed pairs for one `T` (sequence number 0: no step). `what` names the record in the
    /// error for a size that is not a positive multiple of 4 bytes.
    pub(crate) fn new(device: &Device, what: &str) -> Result<Self> {
        if size_of::<T>() == 0 || size_of::<T>() % 4 != 0 {
            return Err(Error::Memory(MemoryError::RecordSize {
                what: what.to_string(),
                record: std::any::type_name::<T>(),
                bytes: size_of::<T>(),
            }));
        }
        Ok(Pairs { pairs: MappedBuffer::new(device, Self::WORDS)?, _record: PhantomData })
    }

    fn pair(&self, k: usize) -> &AtomicU64 {
        assert!(k < Self::WORDS);
        // SAFETY: `k < WORDS`, the length of the live, page-aligned buffer; the memory is only
        // ever accessed atomically by the host (here) and by the device's 8-byte accesses,
        // never through a Rust reference to `u64`.
        unsafe { AtomicU64::from_ptr(self.pairs.host_ptr().add(k)) }
    }

    /// Writes `value` as the record of step `seq`.
    ///
    /// # Safety
    /// Every byte of `T` belongs to a field (no padding: its words are read as initialised
    /// `u32`s).
    pub(crate) unsafe fn write(&self, value: &T, seq: u32) {
        let base = (value as *const T).cast::<u8>();
        for k in 0..Self::WORDS {
            // SAFETY: bytes [4k, 4k + 4) lie inside `*value` (k < size / 4) and are initialised
            // (no padding, the caller's promise); read unaligned (T may be aligned to less).
            let word = unsafe { base.add(4 * k).cast::<u32>().read_unaligned() };
            self.pair(k).store(u64::from(word) | (u64::from(seq) << 32), Ordering::Relaxed);
        }
    }

    /// Whether every pair carries `seq` (the device wrote the whole record of that step).
    pub(crate) fn complete(&self, seq: u32) -> bool {
        (0..Self::WORDS).all(|k| (self.pair(k).load(Ordering::Acquire) >> 32) as u32 == seq)
    }

    /// The sequence number of the first pair (for error messages: the step last written).
    pub(crate) fn first_seq(&self) -> u32 {
        (self.pair(0).load(Ordering::Acquire) >> 32) as u32
    }

    /// The record's data halves as a `T`. Read once [`Self::complete`] held and before the
    /// device can write the record again (the next step's submit), every half is that step's.
    pub(crate) fn read(&self) -> T {
        let mut out = MaybeUninit::<T>::uninit();
        let base = out.as_mut_ptr().cast::<u8>();
        for k in 0..Self::WORDS {
            let word = self.pair(k).load(Ordering::Acquire) as u32;
            // SAFETY: bytes [4k, 4k + 4) lie inside `out`; written unaligned.
            unsafe { base.add(4 * k).cast::<u32>().write_unaligned(word) };
        }
        // SAFETY: every byte of `out` was written above (WORDS * 4 == size_of::<T>()), and any
        // bit pattern is a valid `T` (`Pod`).
        unsafe { out.assume_init() }
    }

    /// The device address of pair 0 (the kernel's `KgResidentPair*`), unlent (see
    /// [`MappedBuffer::device_addr_unlent`]): the owner keeps the buffer alive until the kernel
    /// has exited.
    pub(crate) fn device_addr(&self) -> u64 {
        self.pairs.device_addr_unlent()
    }
}
