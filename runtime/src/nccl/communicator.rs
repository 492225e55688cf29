//! The [`Communicator`]: one NCCL rank on one [`Device`], its collectives on the device's stream
//! (checked for stream and length), raw issue and capture for graph builders.

use std::cell::{Cell, OnceCell, RefCell};
use std::ffi::{c_int, c_void};
use std::marker::PhantomData;

use cudarc::driver::sys;

use crate::context::Stream;
use crate::driver;
use crate::error::{Error, LaunchError, NcclError, Result};
use crate::launch::args::{check_same_stream, DeviceIn, DeviceOut};
use crate::memory::device::Device;
use crate::nccl::agree::{CallSignature, Disagreement, RankChannel};
use crate::nccl::bootstrap::{Bootstrap, UniqueId, UNIQUE_ID_BYTES};
use crate::nccl::collective::{Collective, DataType, NcclType, ReduceOp};
use crate::nccl::sys::{self as nccl_sys, ncclComm_t, ncclUniqueId, Api, SUCCESS};

thread_local! {
    /// How many [`Communicator::group`] calls are open on this thread (NCCL's groups are
    /// thread-local and nest).
    static GROUP_DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Counts a group opened (`+1`) or closed (`-1`) on this thread.
pub(crate) fn count_group(delta: i32) {
    GROUP_DEPTH.with(|d| d.set(d.get().saturating_add_signed(delta)));
}

/// Whether this thread is inside a [`Communicator::group`].
pub(crate) fn in_group() -> bool {
    GROUP_DEPTH.with(|d| d.get() > 0)
}

/// [`NcclError::Failed`] for a communicator made inside a group: NCCL would finish its
/// initialisation only at the group's end, and kgraph hands the communicator out at once.
fn refuse_init_in_group(rank: usize, op: &str) -> Result<()> {
    match in_group() {
        false => Ok(()),
        true => Err(Error::Nccl(NcclError::Failed {
            rank,
            op: op.to_string(),
            detail: "refused inside Communicator::group: make the communicator before the group".to_string(),
        })),
    }
}

/// The NCCL library this process loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NcclInfo {
    /// The name or path `dlopen` accepted (`libnccl.so.2`, or `KGRAPH_NCCL_LIB`'s value).
    pub library: String,
    /// Its version, `(major, minor, patch)`.
    pub version: (u32, u32, u32),
}

/// Loads NCCL (once per process) and says which; [`NcclError::Missing`] when none is usable.
/// Needs no GPU.
pub fn probe() -> Result<NcclInfo> {
    let api = nccl_sys::api()?;
    let v = api.version as u32;
    Ok(NcclInfo { library: api.library.clone(), version: (v / 10000, (v % 10000) / 100, v % 100) })
}

/// A new NCCL unique id (`ncclGetUniqueId`), as rank 0 makes it for [`Bootstrap::share_id`].
pub fn unique_id() -> Result<UniqueId> {
    let api = nccl_sys::api()?;
    let mut raw = ncclUniqueId { internal: [0; UNIQUE_ID_BYTES] };
    // SAFETY: `raw` is a valid out-pointer of NCCL's `ncclUniqueId` layout.
    let status = unsafe { api.get_unique_id(&mut raw) };
    if status != SUCCESS {
        return Err(Error::Nccl(NcclError::Failed {
            rank: 0,
            op: "ncclGetUniqueId".into(),
            detail: api.describe(status, None),
        }));
    }
    Ok(UniqueId::from_bytes(raw.internal.map(|c| c as u8)))
}

/// One rank's NCCL communicator, bound to one [`Device`]: collectives go on the device's main
/// stream (or, through [`Communicator::issue_raw`], any stream of its context).
///
/// # Ordering and capture
/// Collectives are asynchronous, like kernel launches: each call returns once NCCL has queued
/// the work; nothing here synchronises the host, so every call may be captured into a CUDA
/// graph (NCCL 2.9+). Every rank must issue the same collectives in the same order (eagerly,
/// or by replaying graphs captured the same way), or the ranks wait for each other forever.
/// A graph holding captured collectives must be dropped before its communicator.
///
/// # Threads
/// `Send` but not `Sync`: NCCL does not allow concurrent calls on one communicator.
///
/// ```compile_fail
/// fn shareable<T: Sync>() {}
/// shareable::<kgraph_runtime::nccl::Communicator>();
/// ```
#[derive(Debug)]
pub struct Communicator {
    comm: ncclComm_t,
    pub(crate) api: &'static Api,
    pub(crate) device: Device,
    pub(crate) rank: usize,
    world_size: usize,
    /// The stream [`Communicator::capture_graph`] records on, made on first use and kept, so
    /// rebinding a collective node does not create a stream each time.
    pub(crate) capture_stream: OnceCell<Stream>,
    /// The host channel each checked collective first agrees on its arguments through
    /// (`nccl/agree.rs`), and how many checked collectives this rank has made (their position).
    agreement: RefCell<RankChannel>,
    checked_calls: Cell<u64>,
    _not_sync: PhantomData<Cell<()>>,
}

// SAFETY: an NCCL communicator may be used from any thread, one call at a time, which `!Sync`
// guarantees; `Device` is `Send`.
unsafe impl Send for Communicator {}

impl Communicator {
    /// Joins the job `bootstrap` describes on `device` (normally `Device::new(local_rank)`):
    /// shares the unique id ([`Bootstrap::share_id`]: rank 0 makes it) and runs
    /// `ncclCommInitRank`, which returns once every rank has joined. [`NcclError::Missing`]
    /// without NCCL, [`NcclError::Bootstrap`] when the exchange fails or times out, [`NcclError::Failed`]
    /// (naming this rank) when NCCL refuses.
    pub fn new(device: &Device, bootstrap: &Bootstrap) -> Result<Self> {
        nccl_sys::api()?;
        let id = bootstrap.share_id(unique_id)?;
        // SAFETY: `with_id`'s promise (matching arguments on every rank) is kept by checking:
        // the channel connected below makes every checked collective agree with the other
        // ranks before it is issued.
        let this = unsafe { Self::with_id(device, bootstrap.rank(), bootstrap.world_size(), id) }?;
        let channel =
            RankChannel::connect(bootstrap).map_err(|d| this.disagreement("connect the cross-rank check", d))?;
        *this.agreement.borrow_mut() = channel;
        Ok(this)
    }

    /// `ncclCommInitRank` for `rank` of `world_size` with an id shared by other means (MPI,
    /// your own store). Blocks until every rank has joined.
    ///
    /// # Safety
    /// Without a [`Bootstrap`] kgraph has no channel to the other ranks, so its collectives are
    /// not checked across ranks (as [`Communicator::new`]'s are): the caller promises that every
    /// rank passes the same collective, op, root, element type and count to each collective, in
    /// the same order. NCCL checks none of it, and with peer pointers the rank with the larger
    /// count writes past the smaller one's buffer.
    pub unsafe fn with_id(device: &Device, rank: usize, world_size: usize, id: UniqueId) -> Result<Self> {
        let api = nccl_sys::api()?;
        refuse_init_in_group(rank, "ncclCommInitRank")?;
        if world_size == 0 || world_size > c_int::MAX as usize || rank >= world_size {
            return Err(Error::Nccl(NcclError::Bootstrap {
                rank: Some(rank),
                detail: format!("rank {rank} of {world_size}: NCCL needs 0 <= rank < world size <= {}", c_int::MAX),
            }));
        }
        bind(device, rank, "ncclCommInitRank")?;
        let raw = ncclUniqueId { internal: id.as_bytes().map(|b| b as std::ffi::c_char) };
        let mut comm: ncclComm_t = std::ptr::null_mut();
        // SAFETY: `comm` is a valid out-pointer; rank and world size fit `c_int` (checked
        // above); the device's context is current on this thread, so NCCL
        // binds the communicator to that device.
        let status = unsafe { api.comm_init_rank(&mut comm, world_size as c_int, raw, rank as c_int) };
        if status != SUCCESS {
            return Err(Error::Nccl(NcclError::Failed {
                rank,
                op: format!("ncclCommInitRank (rank {rank} of {world_size}, device {})", device.context().ordinal()),
                detail: api.describe(status, None),
            }));
        }
        Self::adopt(api, comm, device, rank, world_size)
    }

    /// A world of one rank on `device` (`ncclCommInitAll` with one device): every collective
    /// is then an identity (all-reduce, broadcast) or a copy; for tests and one-GPU runs of
    /// multi-GPU code.
    pub fn single(device: &Device) -> Result<Self> {
        let api = nccl_sys::api()?;
        refuse_init_in_group(0, "ncclCommInitAll")?;
        bind(device, 0, "ncclCommInitAll")?;
        let ordinal = device.context().ordinal() as c_int;
        let mut comm: ncclComm_t = std::ptr::null_mut();
        // SAFETY: `comm` has room for one communicator and the device list holds one ordinal.
        let status = unsafe { api.comm_init_all(&mut comm, 1, &ordinal) };
        if status != SUCCESS {
            return Err(Error::Nccl(NcclError::Failed {
                rank: 0,
                op: format!("ncclCommInitAll (one rank, device {ordinal})"),
                detail: api.describe(status, None),
            }));
        }
        Self::adopt(api, comm, device, 0, 1)
    }

    /// Wraps a new communicator after checking NCCL agrees on its rank and size.
    fn adopt(api: &'static Api, comm: ncclComm_t, device: &Device, rank: usize, world_size: usize) -> Result<Self> {
        let this = Communicator {
            comm,
            api,
            device: device.clone(),
            rank,
            world_size,
            capture_stream: OnceCell::new(),
            // `new` connects the real channel; `with_id`'s caller promised; a world of one
            // has no one to disagree with.
            agreement: RefCell::new(RankChannel::promised(rank)),
            checked_calls: Cell::new(0),
            _not_sync: PhantomData,
        };
        let (mut count, mut user_rank) = (0, 0);
        // SAFETY: `comm` is the live communicator just created; valid out-pointers.
        let status = unsafe { api.comm_count(comm, &mut count) };
        this.check(status, "ncclCommCount")?;
        // SAFETY: as above.
        let status = unsafe { api.comm_user_rank(comm, &mut user_rank) };
        this.check(status, "ncclCommUserRank")?;
        if count as usize != world_size || user_rank as usize != rank {
            return Err(Error::Nccl(NcclError::Failed {
                rank,
                op: "ncclCommInitRank".into(),
                detail: format!("NCCL made rank {user_rank} of {count}, asked for rank {rank} of {world_size}"),
            }));
        }
        Ok(this)
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    pub fn world_size(&self) -> usize {
        self.world_size
    }

    /// The device the communicator runs on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The raw `ncclComm_t`, for NCCL calls kgraph does not wrap; it stays owned by `self`.
    pub fn as_raw(&self) -> ncclComm_t {
        self.comm
    }

    /// An error NCCL hit asynchronously (a peer failed, a network error) since the last check,
    /// as [`NcclError::Failed`]; `Ok` when there is none. Cheap and non-blocking.
    pub fn async_error(&self) -> Result<()> {
        let mut state = SUCCESS;
        // SAFETY: `self.comm` is live; `state` is a valid out-pointer.
        let status = unsafe { self.api.comm_get_async_error(self.comm, &mut state) };
        self.check(status, "ncclCommGetAsyncError")?;
        self.check(state, "an earlier collective (ncclCommGetAsyncError)")
    }

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

    /// The error of a failed cross-rank check of `op`.
    fn disagreement(&self, op: &str, Disagreement(detail): Disagreement) -> Error {
        // The error names the rank already.
        let prefix = format!("rank {}: ", self.rank);
        let detail = detail.strip_prefix(&prefix).map(str::to_string).unwrap_or(detail);
        Error::Nccl(NcclError::Failed { rank: self.rank, op: format!("cross-rank check of {op}"), detail })
    }

    /// [`NcclError::Failed`] when this thread is inside a [`Communicator::group`]: a collective
    /// borrowing its buffers only until it returns would be enqueued after they may be freed.
    pub(crate) fn refuse_in_group(&self, op: &str) -> Result<()> {
        if !in_group() {
            return Ok(());
        }
        Err(Error::Nccl(NcclError::Failed {
            rank: self.rank,
            op: op.to_string(),
            detail: "refused inside Communicator::group, where NCCL enqueues the collective only at \
                     ncclGroupEnd: issue it through the closure's Group, which borrows the buffers for \
                     the whole group"
                .to_string(),
        }))
    }

    /// `Ok` for `ncclSuccess`, else [`NcclError::Failed`] naming this rank and `op`.
    pub(crate) fn check(&self, status: nccl_sys::RawResult, op: &str) -> Result<()> {
        if status == SUCCESS {
            Ok(())
        } else {
            Err(Error::Nccl(NcclError::Failed {
                rank: self.rank,
                op: op.to_string(),
                detail: self.api.describe(status, Some(self.comm)),
            }))
        }
    }
}

impl Drop for Communicator {
    /// `ncclCommDestroy`, which waits for the communicator's queued work; `ncclCommAbort`
    /// instead when NCCL has reported an asynchronous error (a peer is gone, so waiting could
    /// block forever). Errors are dropped: there is no one to report them to.
    fn drop(&mut self) {
        let _ = bind(&self.device, self.rank, "destroy the communicator");
        let mut state = SUCCESS;
        // SAFETY: `self.comm` is live (destroyed only here); `state` is a valid out-pointer.
        let status = unsafe { self.api.comm_get_async_error(self.comm, &mut state) };
        // SAFETY: `self.comm` is live and never used again.
        unsafe {
            if status == SUCCESS && state == SUCCESS {
                self.api.comm_destroy(self.comm);
            } else {
                self.api.comm_abort(self.comm);
            }
        }
    }
}

/// One collective captured into an uninstantiated CUDA graph ([`Communicator::capture_graph`]);
/// destroyed on drop.
#[derive(Debug)]
pub struct CollectiveGraph {
    pub(crate) graph: sys::CUgraph,
}

// SAFETY: a graph handle is not tied to a thread; `CollectiveGraph` is not `Sync`, so calls on
// it are serialised by its single owner.
unsafe impl Send for CollectiveGraph {}

impl CollectiveGraph {
    /// The `CUgraph`, still owned by `self` (for `cuGraphAddChildGraphNode`, which copies it).
    pub fn as_raw(&self) -> sys::CUgraph {
        self.graph
    }
}

impl Drop for CollectiveGraph {
    fn drop(&mut self) {
        // SAFETY: `self.graph` is a live graph owned by `self`, never used again.
        let _ = unsafe { driver::graph::destroy(self.graph) };
    }
}

/// Makes `device`'s context current on this thread: NCCL picks its device from the CUDA
/// runtime's current device, which follows the current driver context.
pub(crate) fn bind(device: &Device, rank: usize, op: &str) -> Result<()> {
    device.ctx.bind_to_thread().map_err(|e| {
        Error::Nccl(NcclError::Failed {
            rank,
            op: op.to_string(),
            detail: format!("make the device's context current: {e:?}"),
        })
    })
}
