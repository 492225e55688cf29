//! The [`Communicator`]: one NCCL rank on one [`Device`], its collectives on the device's stream
//! (checked for stream and length), raw issue and capture for graph builders. This file makes,
//! inspects and drops it; its collectives and their checks are in `communicator/issue.rs`.

mod issue;

use std::cell::{Cell, OnceCell, RefCell};
use std::ffi::c_int;
use std::marker::PhantomData;

use cudarc::driver::sys;

use crate::context::Stream;
use crate::driver;
use crate::error::{Error, NcclError, Result};
use crate::memory::device::Device;
use crate::nccl::agree::{Disagreement, RankChannel};
use crate::nccl::bootstrap::{Bootstrap, UniqueId, UNIQUE_ID_BYTES};
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
