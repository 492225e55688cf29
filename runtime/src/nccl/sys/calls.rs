//! The calls into NCCL's C API: one thin `unsafe fn` per function kgraph uses, each with the
//! contract NCCL states for it. Nothing else calls the loaded function pointers (they are
//! private to `nccl::sys`); the communicator and groups call these inside `unsafe {}`.

use std::ffi::{c_int, c_void};

use super::{ncclComm_t, ncclDataType_t, ncclRedOp_t, ncclUniqueId, Api, RawResult};

impl Api {
    /// `ncclGetUniqueId`.
    ///
    /// # Safety
    /// `id` is a valid out-pointer.
    #[inline]
    pub(crate) unsafe fn get_unique_id(&self, id: *mut ncclUniqueId) -> RawResult {
        // SAFETY: the caller's promise; the pointer was resolved from the loaded library.
        unsafe { (self.get_unique_id)(id) }
    }

    /// `ncclCommInitRank`.
    ///
    /// # Safety
    /// `comm` is a valid out-pointer; the device of the communicator is current; every rank of
    /// `world_size` calls it with the same `id` (or it blocks).
    #[inline]
    pub(crate) unsafe fn comm_init_rank(
        &self,
        comm: *mut ncclComm_t,
        world_size: c_int,
        id: ncclUniqueId,
        rank: c_int,
    ) -> RawResult {
        // SAFETY: the caller's promise; the pointer was resolved from the loaded library.
        unsafe { (self.comm_init_rank)(comm, world_size, id, rank) }
    }

    /// `ncclCommInitAll`.
    ///
    /// # Safety
    /// `comm` holds `count` writable entries and `devices` `count` device ordinals.
    #[inline]
    pub(crate) unsafe fn comm_init_all(&self, comm: *mut ncclComm_t, count: c_int, devices: *const c_int) -> RawResult {
        // SAFETY: the caller's promise; the pointer was resolved from the loaded library.
        unsafe { (self.comm_init_all)(comm, count, devices) }
    }

    /// `ncclCommDestroy`.
    ///
    /// # Safety
    /// `comm` is live, owned by the caller and never used again.
    #[inline]
    pub(crate) unsafe fn comm_destroy(&self, comm: ncclComm_t) -> RawResult {
        // SAFETY: the caller's promise; the pointer was resolved from the loaded library.
        unsafe { (self.comm_destroy)(comm) }
    }

    /// `ncclCommAbort`.
    ///
    /// # Safety
    /// As [`Api::comm_destroy`].
    #[inline]
    pub(crate) unsafe fn comm_abort(&self, comm: ncclComm_t) -> RawResult {
        // SAFETY: the caller's promise; the pointer was resolved from the loaded library.
        unsafe { (self.comm_abort)(comm) }
    }

    /// `ncclCommGetAsyncError`.
    ///
    /// # Safety
    /// `comm` is live; `state` is a valid out-pointer.
    #[inline]
    pub(crate) unsafe fn comm_get_async_error(&self, comm: ncclComm_t, state: *mut RawResult) -> RawResult {
        // SAFETY: the caller's promise; the pointer was resolved from the loaded library.
        unsafe { (self.comm_get_async_error)(comm, state) }
    }

    /// `ncclCommCount`.
    ///
    /// # Safety
    /// `comm` is live; `count` is a valid out-pointer.
    #[inline]
    pub(crate) unsafe fn comm_count(&self, comm: ncclComm_t, count: *mut c_int) -> RawResult {
        // SAFETY: the caller's promise; the pointer was resolved from the loaded library.
        unsafe { (self.comm_count)(comm, count) }
    }

    /// `ncclCommUserRank`.
    ///
    /// # Safety
    /// `comm` is live; `rank` is a valid out-pointer.
    #[inline]
    pub(crate) unsafe fn comm_user_rank(&self, comm: ncclComm_t, rank: *mut c_int) -> RawResult {
        // SAFETY: the caller's promise; the pointer was resolved from the loaded library.
        unsafe { (self.comm_user_rank)(comm, rank) }
    }

    /// `ncclAllReduce` of `count` elements on `stream` (a `CUstream`).
    ///
    /// # Safety
    /// `send` and `recv` are device buffers of the communicator's device, large enough for the
    /// collective's counts, live until the stream's work is done; `comm` is live and `stream`
    /// belongs to its device's context; every rank issues the matching call.
    #[inline]
    #[allow(clippy::too_many_arguments)] // NCCL's C signature, argument for argument
    pub(crate) unsafe fn all_reduce(
        &self,
        send: *const c_void,
        recv: *mut c_void,
        count: usize,
        ty: ncclDataType_t,
        op: ncclRedOp_t,
        comm: ncclComm_t,
        stream: *mut c_void,
    ) -> RawResult {
        // SAFETY: the caller's promise; the pointer was resolved from the loaded library.
        unsafe { (self.all_reduce)(send, recv, count, ty, op, comm, stream) }
    }

    /// `ncclReduceScatter` of `count` elements on `stream` (a `CUstream`).
    ///
    /// # Safety
    /// `send` and `recv` are device buffers of the communicator's device, large enough for the
    /// collective's counts, live until the stream's work is done; `comm` is live and `stream`
    /// belongs to its device's context; every rank issues the matching call.
    #[inline]
    #[allow(clippy::too_many_arguments)] // NCCL's C signature, argument for argument
    pub(crate) unsafe fn reduce_scatter(
        &self,
        send: *const c_void,
        recv: *mut c_void,
        count: usize,
        ty: ncclDataType_t,
        op: ncclRedOp_t,
        comm: ncclComm_t,
        stream: *mut c_void,
    ) -> RawResult {
        // SAFETY: the caller's promise; the pointer was resolved from the loaded library.
        unsafe { (self.reduce_scatter)(send, recv, count, ty, op, comm, stream) }
    }

    /// `ncclAllGather` of `count` elements on `stream` (a `CUstream`).
    ///
    /// # Safety
    /// `send` and `recv` are device buffers of the communicator's device, large enough for the
    /// collective's counts, live until the stream's work is done; `comm` is live and `stream`
    /// belongs to its device's context; every rank issues the matching call.
    #[inline]
    pub(crate) unsafe fn all_gather(
        &self,
        send: *const c_void,
        recv: *mut c_void,
        count: usize,
        ty: ncclDataType_t,
        comm: ncclComm_t,
        stream: *mut c_void,
    ) -> RawResult {
        // SAFETY: the caller's promise; the pointer was resolved from the loaded library.
        unsafe { (self.all_gather)(send, recv, count, ty, comm, stream) }
    }

    /// `ncclBroadcast` of `count` elements on `stream` (a `CUstream`).
    ///
    /// # Safety
    /// `send` and `recv` are device buffers of the communicator's device, large enough for the
    /// collective's counts, live until the stream's work is done; `comm` is live and `stream`
    /// belongs to its device's context; every rank issues the matching call.
    #[inline]
    #[allow(clippy::too_many_arguments)] // NCCL's C signature, argument for argument
    pub(crate) unsafe fn broadcast(
        &self,
        send: *const c_void,
        recv: *mut c_void,
        count: usize,
        ty: ncclDataType_t,
        root: c_int,
        comm: ncclComm_t,
        stream: *mut c_void,
    ) -> RawResult {
        // SAFETY: the caller's promise; the pointer was resolved from the loaded library.
        unsafe { (self.broadcast)(send, recv, count, ty, root, comm, stream) }
    }

    /// `ncclGroupStart`.
    ///
    /// # Safety
    /// Groups are balanced on this thread: every `ncclGroupStart` is followed by one
    /// `ncclGroupEnd`, the collectives between them issued for the same set of communicators.
    #[inline]
    pub(crate) unsafe fn group_start(&self) -> RawResult {
        // SAFETY: the caller's promise; the pointer was resolved from the loaded library.
        unsafe { (self.group_start)() }
    }

    /// `ncclGroupEnd`.
    ///
    /// # Safety
    /// Groups are balanced on this thread: every `ncclGroupStart` is followed by one
    /// `ncclGroupEnd`, the collectives between them issued for the same set of communicators.
    #[inline]
    pub(crate) unsafe fn group_end(&self) -> RawResult {
        // SAFETY: the caller's promise; the pointer was resolved from the loaded library.
        unsafe { (self.group_end)() }
    }
}
