//! The collectives of a [`Communicator`]: the checked ones on device buffers, the raw issue for
//! graph builders, and the path they share (this rank's checks, the cross-rank agreement of
//! `nccl/agree.rs`, then the NCCL call).

use std::ffi::{c_int, c_void};

use cudarc::driver::sys;

use super::{bind, Communicator};
use crate::context::Stream;
use crate::error::{Error, LaunchError, NcclError, Result};
use crate::launch::args::{check_same_stream, DeviceIn, DeviceOut};
use crate::nccl::agree::CallSignature;
use crate::nccl::collective::{Collective, DataType, NcclType, ReduceOp};

impl Communicator {
    /// `recv[i] = op over ranks of send[i]`; `send` and `recv` have the same length.
    pub fn all_reduce<T: NcclType>(
        &self,
        send: &impl DeviceIn<T>,
        recv: &mut impl DeviceOut<T>,
        op: ReduceOp,
    ) -> Result<()> {
        self.issue_checked("Communicator::all_reduce", Collective::AllReduce(op), send, recv)
    }

    /// [`Communicator::all_reduce`] with `buf` as both send and receive buffer.
    pub fn all_reduce_in_place<T: NcclType>(&self, buf: &mut impl DeviceOut<T>, op: ReduceOp) -> Result<()> {
        self.issue_in_place("Communicator::all_reduce_in_place", Collective::AllReduce(op), buf)
    }

    /// `recv` = block `rank` (of `recv.len()` elements) of `op` over ranks of `send`, whose
    /// length is `world_size * recv.len()`.
    pub fn reduce_scatter<T: NcclType>(
        &self,
        send: &impl DeviceIn<T>,
        recv: &mut impl DeviceOut<T>,
        op: ReduceOp,
    ) -> Result<()> {
        self.issue_checked("Communicator::reduce_scatter", Collective::ReduceScatter(op), send, recv)
    }

    /// `recv` = every rank's `send`, concatenated in rank order (`world_size * send.len()`).
    pub fn all_gather<T: NcclType>(&self, send: &impl DeviceIn<T>, recv: &mut impl DeviceOut<T>) -> Result<()> {
        self.issue_checked("Communicator::all_gather", Collective::AllGather, send, recv)
    }

    /// `recv` = rank `root`'s `send` (the same length), on every rank.
    pub fn broadcast<T: NcclType>(
        &self,
        send: &impl DeviceIn<T>,
        recv: &mut impl DeviceOut<T>,
        root: usize,
    ) -> Result<()> {
        self.issue_checked("Communicator::broadcast", Collective::Broadcast { root }, send, recv)
    }

    /// [`Communicator::broadcast`] with `buf` as both send and receive buffer.
    pub fn broadcast_in_place<T: NcclType>(&self, buf: &mut impl DeviceOut<T>, root: usize) -> Result<()> {
        self.issue_in_place("Communicator::broadcast_in_place", Collective::Broadcast { root }, buf)
    }

    /// Issues `collective` on `stream` for raw device addresses: the entry point for graph
    /// builders, which call it inside a stream capture ([`crate::Graph::capture`]) to record
    /// the collective as graph nodes, exactly like a kernel launch. Checked: `stream` belongs
    /// to this communicator's context ([`LaunchError::ForeignContext`]), the lengths fit
    /// ([`Collective::check_lengths`], [`NcclError::CollectiveLength`] naming this rank), and,
    /// for a communicator of [`Communicator::new`], the other ranks pass the same collective,
    /// op, root, type and count at this position (`nccl/agree.rs`, one host round trip, as the
    /// checked collectives); nothing is issued when a check fails. No host synchronisation.
    /// Refused inside a [`Communicator::group`] on this thread ([`NcclError::Failed`]): there
    /// NCCL enqueues the work only at the group's end, which this call's promise does not
    /// cover; the group's own `issue_raw` takes that promise.
    ///
    /// # Safety
    /// - `send` is the address of device memory of this context readable for `send_len`
    ///   elements of `dtype`, and `recv` writable for `recv_len`; they do not overlap, except
    ///   exactly in place (`send == recv` for all-reduce and broadcast; `send == recv + rank *
    ///   send_len` elements for all-gather, `recv == send + rank * recv_len` for
    ///   reduce-scatter), as NCCL defines;
    /// - the memory stays allocated, and is not used by other streams or the host, until the
    ///   collective has completed in `stream`'s order (eagerly), or for as long as a graph
    ///   capturing it may be replayed (captured);
    /// - the other ranks issue the matching collective (same kind, count, type, op, root) in
    ///   the same position of their sequence, else the ranks wait for each other forever (the
    ///   cross-rank check covers the issue or the recording, not a graph's replays); in a
    ///   graph, all collectives of one communicator are totally ordered (one stream, or joined
    ///   by edges), since the driver may run parallel branches in either order.
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
        self.refuse_in_group("Communicator::issue_raw")?;
        // SAFETY: the caller's contract, as documented; not inside a group (checked above).
        unsafe { self.issue_raw_grouped(collective, dtype, send, send_len, recv, recv_len, stream) }
    }

    /// [`Communicator::issue_raw`] without the group check: for [`crate::NcclGroup`], whose
    /// callers promise (or whose borrows ensure) that the memory outlives the group's end.
    /// Every local check runs before the cross-rank one, so a collective the other ranks were
    /// told this rank passes is refused afterwards only by NCCL itself (which poisons the
    /// channel: [`Communicator::poison`]).
    ///
    /// # Safety
    /// As for [`Communicator::issue_raw`], with the memory's lifetime counted from the end of
    /// the enclosing group when there is one.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn issue_raw_grouped(
        &self,
        collective: Collective,
        dtype: DataType,
        send: sys::CUdeviceptr,
        send_len: usize,
        recv: sys::CUdeviceptr,
        recv_len: usize,
        stream: &Stream,
    ) -> Result<()> {
        let count = self.check_local(collective, send_len, recv_len, stream)?;
        self.agree(collective, dtype, count)?;
        // SAFETY: the caller's contract, as documented; the local checks passed just above.
        unsafe { self.enqueue(collective, dtype, send, recv, count, stream) }
    }

    /// The checks of a collective on `stream` that involve only this rank: `stream` belongs to
    /// this communicator's context, the lengths fit (the count NCCL gets), the device's context
    /// is current, and no capture kgraph did not begin on this thread would record it.
    pub(crate) fn check_local(
        &self,
        collective: Collective,
        send_len: usize,
        recv_len: usize,
        stream: &Stream,
    ) -> Result<usize> {
        if stream.context().cu_ctx() != self.device.context().cu_ctx() {
            return Err(Error::Launch(LaunchError::ForeignContext {
                kernel: "Communicator::issue_raw",
                param: "stream",
            }));
        }
        let count = self.check_lengths(collective, send_len, recv_len)?;
        bind(&self.device, self.rank, collective.name())?;
        crate::capture_guard::check_stream(stream.inner(), || format!("{collective} on rank {}", self.rank))?;
        Ok(count)
    }

    /// [`Collective::check_lengths`] for this world, the error naming this rank.
    pub(crate) fn check_lengths(&self, collective: Collective, send_len: usize, recv_len: usize) -> Result<usize> {
        collective.check_lengths(self.world_size, send_len, recv_len).map_err(|e| match e {
            Error::Nccl(NcclError::CollectiveLength { collective, world_size, send_len, recv_len, rule, .. }) => {
                Error::Nccl(NcclError::CollectiveLength {
                    collective,
                    rank: Some(self.rank),
                    world_size,
                    send_len,
                    recv_len,
                    rule,
                })
            }
            other => other,
        })
    }

    /// The NCCL call itself, after [`Communicator::check_local`] (and the cross-rank check)
    /// passed. A failure poisons the cross-rank channel: the other ranks may have issued this
    /// position's collective, which this rank has not.
    ///
    /// # Safety
    /// As for [`Communicator::issue_raw`]; `count` is what `check_local` returned for these
    /// buffers' lengths, and `stream` passed it.
    pub(crate) unsafe fn enqueue(
        &self,
        collective: Collective,
        dtype: DataType,
        send: sys::CUdeviceptr,
        recv: sys::CUdeviceptr,
        count: usize,
        stream: &Stream,
    ) -> Result<()> {
        let (src, dst, ty, st) =
            (send as *const c_void, recv as *mut c_void, dtype.to_nccl(), stream.cu_stream().cast());
        // SAFETY: the buffers, their lifetimes and the matching calls on other ranks are the
        // caller's contract; the counts fit the buffers and `stream` belongs to the device's
        // context (`check_local`, the caller's promise); `self.comm` is live.
        let status = unsafe {
            match collective {
                Collective::AllReduce(op) => self.api.all_reduce(src, dst, count, ty, op.to_nccl(), self.comm, st),
                Collective::ReduceScatter(op) => {
                    self.api.reduce_scatter(src, dst, count, ty, op.to_nccl(), self.comm, st)
                }
                Collective::AllGather => self.api.all_gather(src, dst, count, ty, self.comm, st),
                Collective::Broadcast { root } => self.api.broadcast(src, dst, count, ty, root as c_int, self.comm, st),
            }
        };
        let op = format!("nccl {collective} of {count} x {}", dtype.name());
        let checked = self.check(status, &op);
        if checked.is_err() {
            self.poison(&format!("{op} failed after the cross-rank check"));
        }
        checked
    }

    /// The shared path of the checked collectives.
    fn issue_checked<T: NcclType>(
        &self,
        op: &'static str,
        collective: Collective,
        send: &impl DeviceIn<T>,
        recv: &mut impl DeviceOut<T>,
    ) -> Result<()> {
        self.refuse_in_group(op)?;
        self.issue_buffers(op, collective, send, recv)
    }

    /// A checked collective over `send` and `recv`, inside a group or not.
    pub(crate) fn issue_buffers<T: NcclType>(
        &self,
        op: &'static str,
        collective: Collective,
        send: &impl DeviceIn<T>,
        recv: &mut impl DeviceOut<T>,
    ) -> Result<()> {
        let stream = self.device.stream();
        check_same_stream(op, "send", stream, send.stream())?;
        check_same_stream(op, "recv", stream, recv.stream())?;
        // SAFETY: `send` and `recv` are live allocations of at least these lengths (`DeviceIn`'s
        // contract) on the main stream (checked above), so they outlive the collective in stream
        // order; `recv` is mutably borrowed and `send` shared, so they do not overlap.
        unsafe {
            self.issue_raw_grouped(
                collective,
                T::DATA_TYPE,
                send.device_addr(),
                send.elem_len(),
                recv.device_addr(),
                recv.elem_len(),
                stream,
            )
        }
    }

    fn issue_in_place<T: NcclType>(
        &self,
        op: &'static str,
        collective: Collective,
        buf: &mut impl DeviceOut<T>,
    ) -> Result<()> {
        self.refuse_in_group(op)?;
        self.issue_buffer_in_place(op, collective, buf)
    }

    /// A checked in-place collective over `buf`, inside a group or not.
    pub(crate) fn issue_buffer_in_place<T: NcclType>(
        &self,
        op: &'static str,
        collective: Collective,
        buf: &mut impl DeviceOut<T>,
    ) -> Result<()> {
        let stream = self.device.stream();
        check_same_stream(op, "buf", stream, buf.stream())?;
        let (addr, len) = (buf.device_addr(), buf.elem_len());
        // SAFETY: `buf` is a live allocation of `len` elements on the main stream (checked
        // above), mutably borrowed; all-reduce and broadcast may run exactly in place.
        unsafe { self.issue_raw_grouped(collective, T::DATA_TYPE, addr, len, addr, len, stream) }
    }

    /// Agrees with the other ranks that they pass this collective with the same arguments
    /// (`nccl/agree.rs`), before it is issued: the next position in this communicator's
    /// sequence of checked collectives. Called only once this rank's own checks passed
    /// ([`Communicator::check_local`]): a position agreed on is one every rank hands to NCCL,
    /// or one after which this rank poisons the channel ([`Communicator::poison`]).
    pub(crate) fn agree(&self, collective: Collective, dtype: DataType, count: usize) -> Result<()> {
        let seq = self.checked_calls.get();
        self.checked_calls.set(seq + 1);
        let call = CallSignature { seq, collective, dtype, count };
        self.agreement.borrow_mut().agree(&call).map_err(|d| self.disagreement(collective.name(), d))
    }

    /// How many positions this communicator has agreed on (or tried to), for a group to tell
    /// whether its end enqueues any.
    pub(crate) fn agreed_positions(&self) -> u64 {
        self.checked_calls.get()
    }

    /// After a collective this rank agreed on did not reach NCCL (or NCCL refused it): every
    /// later cross-rank check fails on every rank, so no rank issues a collective that NCCL
    /// would pair with another position's. The communicator stays usable only through the
    /// unchecked paths (`with_id`'s promise).
    pub(crate) fn poison(&self, why: &str) {
        self.agreement.borrow_mut().poison(why.to_string());
    }
}
