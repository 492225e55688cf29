//! Soundness review of mapped pinned memory, the part the types decide (CPU only): which values
//! may cross or be shared between threads, and which may be copied. A `MappedBuffer` is shared
//! across threads only because no `&self` method writes host memory or forms a reference to it
//! (reads are volatile copies); a `PinnedSlot` is not `Sync` because its `write` takes `&self`;
//! a `PinnedMutPtr` is not `Copy` (two would let one launch hold two writers of one buffer, or
//! a copy outlive a reborrow).

use std::marker::PhantomData;

use kgraph_runtime::{MappedBuffer, PinnedMutPtr, PinnedPtr, PinnedSlot};

/// `SyncProbe::<T>(PhantomData).is_sync()` and the like: true where `T` has the trait (the
/// inherent method, bounded, wins), false otherwise (the trait's default); concrete types only.
/// (`SendProbe` has no fallback: every type here is `Send`, and one that is not fails to build.)
trait Fallback {
    fn is_sync(&self) -> bool {
        false
    }
    fn is_copy(&self) -> bool {
        false
    }
    fn is_clone(&self) -> bool {
        false
    }
}
struct SyncProbe<T>(PhantomData<T>);
impl<T: Sync> SyncProbe<T> {
    fn is_sync(&self) -> bool {
        true
    }
}
impl<T> Fallback for SyncProbe<T> {}

struct SendProbe<T>(PhantomData<T>);
impl<T: Send> SendProbe<T> {
    fn is_send(&self) -> bool {
        true
    }
}

struct CopyProbe<T>(PhantomData<T>);
impl<T: Copy> CopyProbe<T> {
    fn is_copy(&self) -> bool {
        true
    }
}
impl<T> Fallback for CopyProbe<T> {}

struct CloneProbe<T>(PhantomData<T>);
impl<T: Clone> CloneProbe<T> {
    fn is_clone(&self) -> bool {
        true
    }
}
impl<T> Fallback for CloneProbe<T> {}

macro_rules! has {
    ($probe:ident, $method:ident, $t:ty) => {
        $probe::<$t>(PhantomData).$method()
    };
}

#[test]
fn a_mapped_buffer_moves_and_is_shared_but_a_slot_is_not_shared() {
    assert!(has!(SendProbe, is_send, MappedBuffer<f32>));
    assert!(has!(SyncProbe, is_sync, MappedBuffer<f32>), "&self reads are volatile copies, never views");
    assert!(has!(SendProbe, is_send, PinnedSlot<[f64; 4]>));
    assert!(!has!(SyncProbe, is_sync, PinnedSlot<f32>), "two threads writing one slot through &self would race");
    // Neither is `Clone`: a clone would be a second owner of one allocation, freed twice.
    assert!(!has!(CloneProbe, is_clone, MappedBuffer<f32>));
    assert!(!has!(CloneProbe, is_clone, PinnedSlot<f32>));
}

#[test]
fn a_read_pointer_is_copied_a_written_one_only_reborrowed() {
    assert!(has!(CopyProbe, is_copy, PinnedPtr<'static, f32>));
    assert!(!has!(CopyProbe, is_copy, PinnedMutPtr<'static, f32>));
    assert!(has!(CloneProbe, is_clone, PinnedPtr<'static, f32>));
    assert!(!has!(CloneProbe, is_clone, PinnedMutPtr<'static, f32>));
    // Both are plain addresses behind a borrow: sending one moves no access to the memory.
    assert!(has!(SendProbe, is_send, PinnedPtr<'static, u8>) && has!(SyncProbe, is_sync, PinnedPtr<'static, u8>));
    assert!(has!(SendProbe, is_send, PinnedMutPtr<'static, u8>) && has!(SyncProbe, is_sync, PinnedMutPtr<'static, u8>));
}

#[test]
fn a_raw_pointer_carries_no_context_and_its_length() {
    // SAFETY: the addresses are only stored and compared, never launched or dereferenced.
    let mut w = unsafe { PinnedMutPtr::<u32>::from_raw(0x7f00_0000_2000, 3) };
    // SAFETY: as above.
    let r = unsafe { PinnedPtr::<u32>::from_raw(0x7f00_0000_1000, 0) };
    let again = w.reborrow();
    assert_eq!((again.addr(), again.len()), (0x7f00_0000_2000, 3));
    assert!(again.context().is_null(), "from_raw: the caller took on the lifetime and context contract");
    assert!(r.is_empty() && r.context().is_null());
}
