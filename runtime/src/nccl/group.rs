//! [`Communicator::group`] and its [`Group`]: collectives launched together, whose buffers
//! must outlive the group's end, where NCCL enqueues them.

use std::cell::Cell;
use std::marker::PhantomData;

use cudarc::driver::sys;

use crate::capture_guard::check_stream;
use crate::context::Stream;
use crate::driver;
use crate::error::{Error, GraphError, NcclError, Result};
use crate::launch::args::{DeviceIn, DeviceOut};
use crate::nccl::collective::{Collective, DataType, NcclType, ReduceOp};
use crate::nccl::communicator::{bind, count_group, in_group, Communicator};

impl Communicator {
    /// Runs `f` between `ncclGroupStart` and `ncclGroupEnd`, so the collectives it issues
    /// through the [`Group`] are launched together (e.g. one all-reduce per gradient buffer);
    /// `ncclGroupEnd` runs even when `f` fails or panics. Capturable like the collectives
    /// themselves.
    ///
    /// NCCL enqueues a group's collectives at `ncclGroupEnd`, after `f` has returned, so every
    /// buffer they use must outlive the whole call: the [`Group`]'s collectives borrow their
    /// buffers for `'b`, a lifetime of this call and not of `f`'s body, so a buffer made (and
    /// dropped) inside `f` does not compile. The communicator's own collectives are refused
    /// inside a group on this thread ([`NcclError::Failed`]: they would borrow only until they
    /// return), and so are a nested `group`, a communicator's construction and the collective
    /// nodes of graph structs. `tests/ui/safety/h7_group_buffers_outlive_the_group.rs` is the
    /// case that must not compile. [`GraphError::Failed`] when a capture kgraph did not begin started
    /// on the device stream inside `f`: that capture is invalidated before `ncclGroupEnd`, so it
    /// records none of the group's collectives; with several ranks, the other ranks' halves of
    /// those collectives then wait for this rank's, which never come (the communicator is
    /// unusable, as after any collective one rank does not issue). The streams of
    /// [`Group::issue_raw`] are not checked: they are its caller's.
    pub fn group<'b, R>(&self, f: impl FnOnce(&Group<'_, 'b>) -> Result<R>) -> Result<R> {
        // NCCL starts nested groups' work at the outermost end, past an inner group's `'b`.
        if in_group() {
            return Err(Error::Nccl(NcclError::Failed {
                rank: self.rank(),
                op: "Communicator::group".to_string(),
                detail: "refused inside another Communicator::group on this thread (NCCL would start \
                         the inner group's collectives only at the outer group's end)"
                    .to_string(),
            }));
        }
        // SAFETY: ncclGroupStart only opens a (thread-local) group.
        let status = unsafe { self.api.group_start() };
        self.check(status, "ncclGroupStart")?;
        let open = OpenGroup::enter(self);
        let agreed_before = self.agreed_positions();
        let out = f(&Group::new(self));
        let foreign = self.refuse_foreign_capture_at_group_end();
        let ended = open.end();
        if (foreign.is_err() || ended.is_err()) && self.agreed_positions() != agreed_before {
            // The group's collectives were agreed on with the other ranks, which enqueue theirs;
            // this rank's never reach the stream (a refused capture records none; a failed
            // ncclGroupEnd launches none), so its next collective would pair with theirs.
            self.poison("the group's collectives were agreed on but did not reach the stream");
        }
        match (foreign, ended) {
            (Err(Error::Graph(GraphError::Failed { op, detail })), Err(e)) => {
                Err(Error::Graph(GraphError::Failed { op, detail: format!("{detail}; ncclGroupEnd then failed: {e}") }))
            }
            (Err(refused), _) => Err(refused),
            (Ok(()), ended) => {
                let out = out?;
                ended.map(|()| out)
            }
        }
    }

    /// The group's collectives are enqueued at `ncclGroupEnd`, on the device stream, which a
    /// capture kgraph did not begin may have started on inside the closure. Then that capture is
    /// invalidated first (a query of a capturing stream does that), so the driver refuses what
    /// NCCL enqueues and the capture's end yields no graph, and the refusal is returned.
    fn refuse_foreign_capture_at_group_end(&self) -> Result<()> {
        let stream = &self.device.stream;
        bind(&self.device, self.rank(), "Communicator::group")?;
        let checked = check_stream(stream, || format!("Communicator::group: ncclGroupEnd on rank {}", self.rank()));
        if checked.is_err() {
            // SAFETY: the stream is live; querying it has no effect but on its capture.
            let _ = unsafe { driver::stream::query(stream.cu_stream()) };
        }
        checked
    }
}

/// An open `ncclGroupStart` of this thread: counted by `count_group`, and closed with
/// `ncclGroupEnd` by [`OpenGroup::end`] or, on unwind, by its drop.
struct OpenGroup<'c> {
    comm: &'c Communicator,
    ended: bool,
}

impl<'c> OpenGroup<'c> {
    /// Counts a group `ncclGroupStart` has just opened.
    fn enter(comm: &'c Communicator) -> Self {
        count_group(1);
        OpenGroup { comm, ended: false }
    }

    /// `ncclGroupEnd`: NCCL enqueues the group's collectives now.
    fn end(mut self) -> Result<()> {
        self.ended = true;
        self.close()
    }

    fn close(&self) -> Result<()> {
        count_group(-1);
        // SAFETY: closes the group this value counts, opened by `ncclGroupStart` on this thread.
        let status = unsafe { self.comm.api.group_end() };
        self.comm.check(status, "ncclGroupEnd")
    }
}

impl Drop for OpenGroup<'_> {
    fn drop(&mut self) {
        if !self.ended {
            // Unwinding out of the group's closure: close the group so the thread's NCCL state
            // is balanced again; the panic is what gets reported. Should NCCL refuse to launch
            // the collectives agreed on so far, no later one may be agreed on.
            if self.close().is_err() {
                self.comm.poison("ncclGroupEnd failed while unwinding out of the group");
            }
        }
    }
}

/// The collectives of one [`Communicator::group`], as its closure receives them. Each borrows
/// its buffers for `'b`, which outlives the whole `group` call, so they stay allocated (and
/// unused by the host) until `ncclGroupEnd` has enqueued the collective; their stream order
/// then covers the rest, as for [`Communicator`]'s own collectives, which the same checks
/// (stream, lengths) apply to.
pub struct Group<'c, 'b> {
    comm: &'c Communicator,
    /// Invariant in `'b`: a covariant `Group` would let the closure shrink `'b` to its own body.
    _buffers: PhantomData<Cell<&'b ()>>,
}

impl<'c, 'b> Group<'c, 'b> {
    fn new(comm: &'c Communicator) -> Self {
        Group { comm, _buffers: PhantomData }
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.comm.rank()
    }

    /// The number of ranks.
    pub fn world_size(&self) -> usize {
        self.comm.world_size()
    }

    /// As [`Communicator::all_reduce`], enqueued at the group's end.
    pub fn all_reduce<T: NcclType>(
        &self,
        send: &'b impl DeviceIn<T>,
        recv: &'b mut impl DeviceOut<T>,
        op: ReduceOp,
    ) -> Result<()> {
        self.comm.issue_buffers("Group::all_reduce", Collective::AllReduce(op), send, recv)
    }

    /// As [`Communicator::all_reduce_in_place`], enqueued at the group's end.
    pub fn all_reduce_in_place<T: NcclType>(&self, buf: &'b mut impl DeviceOut<T>, op: ReduceOp) -> Result<()> {
        self.comm.issue_buffer_in_place("Group::all_reduce_in_place", Collective::AllReduce(op), buf)
    }

    /// As [`Communicator::reduce_scatter`], enqueued at the group's end.
    pub fn reduce_scatter<T: NcclType>(
        &self,
        send: &'b impl DeviceIn<T>,
        recv: &'b mut impl DeviceOut<T>,
        op: ReduceOp,
    ) -> Result<()> {
        self.comm.issue_buffers("Group::reduce_scatter", Collective::ReduceScatter(op), send, recv)
    }

    /// As [`Communicator::all_gather`], enqueued at the group's end.
    pub fn all_gather<T: NcclType>(&self, send: &'b impl DeviceIn<T>, recv: &'b mut impl DeviceOut<T>) -> Result<()> {
        self.comm.issue_buffers("Group::all_gather", Collective::AllGather, send, recv)
    }

    /// As [`Communicator::broadcast`], enqueued at the group's end.
    pub fn broadcast<T: NcclType>(
        &self,
        send: &'b impl DeviceIn<T>,
        recv: &'b mut impl DeviceOut<T>,
        root: usize,
    ) -> Result<()> {
        self.comm.issue_buffers("Group::broadcast", Collective::Broadcast { root }, send, recv)
    }

    /// As [`Communicator::broadcast_in_place`], enqueued at the group's end.
    pub fn broadcast_in_place<T: NcclType>(&self, buf: &'b mut impl DeviceOut<T>, root: usize) -> Result<()> {
        self.comm.issue_buffer_in_place("Group::broadcast_in_place", Collective::Broadcast { root }, buf)
    }

    /// As [`Communicator::issue_raw`], enqueued at the group's end.
    ///
    /// # Safety
    /// As for [`Communicator::issue_raw`], with the memory's lifetime counted from the end of
    /// the `group` call (where NCCL enqueues the collective), not from this call's return.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn issue_raw(
        &self,
        collective: Collective,
        dtype: DataType,
        send: sys::CUdeviceptr,
        send_len: usize,
        recv: sys::CUdeviceptr,
        recv_len: usize,
        stream: &Stream,
    ) -> Result<()> {
        // SAFETY: the caller's contract, as documented.
        unsafe { self.comm.issue_raw_grouped(collective, dtype, send, send_len, recv, recv_len, stream) }
    }
}
