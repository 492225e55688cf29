//! The done-word wait of a graph struct's replays: a last node (`kgraph_done_word`, one thread,
//! after every sink of the graph) counts the replays in device memory and publishes the count
//! into a word of mapped pinned memory; the host waits for a replay by spinning on that word
//! instead of synchronizing the stream. The probe (`shared/anchors/doorbell_probe.cu`) measured a
//! launched 1-node graph with the host spinning on a mapped done word at 5.8 us p50 against
//! 7.6-8.0 us p50 (and 12.8-15 us p99) waiting with `cudaStreamSynchronize`.
//!
//! A graph struct (`graph!`) holds one [`DoneWait`]: off after `new`;
//! `set_done_word_wait(Some(policy))` turns it on for the graph built by the next `capture`,
//! whose read methods then spin. The stream wait stays what eager runs, stream-captured graphs
//! and a struct with the done word off use.

use std::cell::Cell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};

use cudarc::driver::{CudaFunction, LaunchConfig};

use crate::context::Stream;
use crate::driver;
use crate::error::{Error, ModuleError, Result, WaitError};
use crate::graph::build::{EdgeKind, GraphBuilder};
use crate::graph::control::ControlKernels;
use crate::launch::args::DeviceIn;
use crate::memory::buffer::DeviceBuffer;
use crate::memory::device::Device;
use crate::memory::mapped::MappedBuffer;
use crate::resident::spin::{reached, spin_until, SpinEnd, SpinPolicy, StreamState};

/// The device side of the done word: the kernel, its replay counter and the mapped word.
struct DoneWord {
    kernel: CudaFunction,
    /// Replays of a graph ending in the done node, counted by that node (only it touches it).
    count: DeviceBuffer<u32>,
    /// The count, published after every other node of the replay has finished.
    word: MappedBuffer<u32>,
}

impl DoneWord {
    fn new(device: &Device) -> Result<Self> {
        let kernel = ControlKernels::load_done_word(device.context())?;
        Ok(DoneWord { kernel, count: device.alloc_zeros(1)?, word: MappedBuffer::new(device, 1)? })
    }

    /// The last published count: an acquire load of host memory (no driver call).
    fn published(&self) -> u32 {
        // SAFETY: the word is a live, 4-byte aligned `u32` of mapped host memory for as long
        // as `self`; the device writes it with plain stores, the host only loads it atomically
        // here and never forms a reference to it elsewhere.
        unsafe { AtomicU32::from_ptr(self.word.host_ptr()) }.load(Ordering::Acquire)
    }
}

/// A graph struct's choice of how its reads wait for a replay: stream synchronize, or a spin
/// on the done word its graph's last node writes (see the module docs).
pub struct DoneWait {
    word: Option<DoneWord>,
    /// The next build appends the done node (and waits spin), with this policy.
    policy: Option<SpinPolicy>,
    /// The graph built last ends with the done node.
    armed: bool,
    /// The count the last replay of the armed graph publishes, until a wait has seen it.
    pending: Cell<Option<u32>>,
    /// Work was issued on the stream after the last armed replay, outside a replay (an eager
    /// run): the next wait synchronizes the stream.
    stream_work: Cell<bool>,
}

impl std::fmt::Debug for DoneWait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DoneWait").field("policy", &self.policy).field("armed", &self.armed).finish()
    }
}

impl Default for DoneWait {
    fn default() -> Self {
        DoneWait::off()
    }
}

impl DoneWait {
    /// The stream wait; nothing allocated.
    pub fn off() -> Self {
        DoneWait { word: None, policy: None, armed: false, pending: Cell::new(None), stream_work: Cell::new(false) }
    }

    /// `Some(policy)`: graphs built from now on end with the done node and reads spin on it
    /// with `policy` (allocating the word and loading the kernel the first time); `None`: back
    /// to the stream wait for graphs built from now on. A graph already built keeps its nodes
    /// until the next build.
    pub fn set(&mut self, device: &Device, policy: Option<SpinPolicy>) -> Result<()> {
        if policy.is_some() && self.word.is_none() {
            self.word = Some(DoneWord::new(device)?);
        }
        self.policy = policy;
        Ok(())
    }

    /// The policy set for the next build (`None`: stream wait).
    pub fn policy(&self) -> Option<SpinPolicy> {
        self.policy
    }

    /// Whether the graph built last ends with the done node (its replays are waited for by
    /// spinning).
    pub fn is_armed(&self) -> bool {
        self.armed
    }

    /// Appends the done node after every other node of `builder` when the done word is on
    /// (the graph is then armed), and records whether it did. Call it last, on the whole graph,
    /// before it is instantiated.
    ///
    /// # Safety
    /// Every graph instantiated from `builder` is dropped before `self` is, and only after its
    /// last launch has ended (a graph struct holds both and waits for its stream before its
    /// fields drop): the node writes the device counter and the mapped word `self` owns.
    pub unsafe fn append(&mut self, builder: &mut GraphBuilder<'_>) -> Result<()> {
        self.armed = false;
        if self.policy.is_some() {
            // SAFETY: the caller's promise.
            unsafe { self.add_node(builder) }?;
            self.armed = true;
        }
        Ok(())
    }

    /// Appends the done node when the graph built last has it (a rebuild for an in-place
    /// update must have the instantiated graph's topology).
    ///
    /// # Safety
    /// As [`Self::append`].
    pub unsafe fn append_if_armed(&mut self, builder: &mut GraphBuilder<'_>) -> Result<()> {
        if self.armed {
            // SAFETY: the caller's promise.
            unsafe { self.add_node(builder) }?;
        }
        Ok(())
    }

    /// # Safety
    /// As [`Self::append`].
    unsafe fn add_node(&self, builder: &mut GraphBuilder<'_>) -> Result<()> {
        let Some(word) = &self.word else { return Err(Error::graph("append the done-word node", "no done word")) };
        // Full edges from every node whose end is the graph's (its sinks, and the upstream of
        // each programmatic edge, which may still run after its dependent ended).
        let deps: Vec<_> = builder.completion_nodes().into_iter().map(|n| (n, EdgeKind::Full)).collect();
        // The node stores into the word without a lent pointer: marked, its drop waits for the
        // context (or leaks it when that wait fails), never frees it under a replay.
        word.word.mark_device_use();
        let (mut count, mut done) = (word.count.device_addr(), word.word.device_addr_unlent());
        let mut params = [(&mut count as *mut u64).cast::<c_void>(), (&mut done as *mut u64).cast::<c_void>()];
        let one = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: (unsigned*, volatile unsigned*) as `kgraph_done_word` declares; the counter is
        // a device `u32` only this node touches and the word a mapped `u32`, both owned by
        // `self`, which outlives every launch of the graph (the caller's promise); full edges
        // only.
        unsafe { builder.add_kernel(&deps, &word.kernel, "kgraph_done_word", one, &mut params) }?;
        Ok(())
    }

    /// Marks the graph built last as not armed (a graph built without [`Self::append`]:
    /// stream capture).
    pub fn disarm(&mut self) {
        self.armed = false;
    }

    /// Launches a replay of the graph built last through `launch` and records it: an armed
    /// graph publishes one more than the later of the count this struct is still waiting for
    /// and the count published before the launch. The count is read before `launch` runs: read
    /// after it, a replay that had already ended would be counted twice and the wait would
    /// look for a count the device never publishes. Replays outside the struct's `replay`
    /// (`replay_timed`, a profile's reference replays) were waited for and moved the published
    /// count past every replay before them; the count is one device counter across rebuilds,
    /// so a replay of an earlier armed graph still in flight publishes the count before.
    pub fn replay(&self, launch: impl FnOnce() -> Result<()>) -> Result<()> {
        let next = match (self.armed, &self.word) {
            (true, Some(word)) => Some(next_target(self.pending.get(), word.published())),
            _ => None,
        };
        launch()?;
        if next.is_some() {
            self.pending.set(next);
            // This replay starts after the stream's earlier work has ended, so its done word
            // also says that work (an eager run before it) has ended.
            self.stream_work.set(false);
        }
        Ok(())
    }

    /// Records work issued on the stream outside a replay (an eager run): the next wait
    /// synchronizes the stream, since the done word says nothing of it until a later armed
    /// replay.
    pub fn mark_stream_work(&self) {
        self.stream_work.set(true);
    }

    /// Waits for the work in flight on `stream`: spins on the done word when the graph built
    /// last is armed and one of its replays is pending (and no eager run came after it), else
    /// synchronizes the stream (eager runs, graphs without the node, a struct with the done
    /// word off). `what` names the wait
    /// in errors: [`WaitError::Timeout`] (the replay is still in flight: a later wait waits
    /// again), [`Error::Driver`] for a device fault the stream reported while spinning.
    pub fn wait(&self, stream: &Stream, what: &str) -> Result<()> {
        if self.stream_work.get() {
            // The stream's end is every replay's end too: nothing is left to spin for.
            stream.synchronize_as(what)?;
            self.stream_work.set(false);
            self.pending.set(None);
            return Ok(());
        }
        let (true, Some(target), Some(word), Some(policy)) = (self.armed, self.pending.get(), &self.word, self.policy)
        else {
            return stream.synchronize_as(what);
        };
        let end = spin_until(&policy, || reached(word.published(), target), || query(stream, &what))?;
        match end {
            SpinEnd::Published => {
                self.pending.set(None);
                Ok(())
            }
            SpinEnd::StreamIdle => {
                Err(WaitError::NotPublished { what: what.to_string(), seq: target, seen: word.published() }.into())
            }
            SpinEnd::TimedOut(waited) => {
                Err(WaitError::Timeout { what: what.to_string(), seq: target, seen: word.published(), waited }.into())
            }
        }
    }
}

/// The count a replay launched now publishes: one more than the later of the count still
/// waited for (`pending`) and the count `published` (wrapping).
fn next_target(pending: Option<u32>, published: u32) -> u32 {
    let base = match pending {
        Some(t) if !reached(published, t) => t,
        _ => published,
    };
    base.wrapping_add(1)
}

/// `cuStreamQuery` of `stream`: busy, idle, or the fault it reports.
pub(crate) fn query(stream: &Stream, what: &dyn std::fmt::Display) -> Result<StreamState> {
    let s = stream.inner();
    // SAFETY: the context is live (the stream holds it); making it current has no other effect.
    unsafe { driver::ctx_set_current(s.context().cu_ctx()) }.map_err(|e| Error::driver(what.to_string(), e))?;
    // SAFETY: a live stream of the context made current just above.
    match unsafe { driver::stream::query(s.cu_stream()) } {
        Ok(()) => Ok(StreamState::Idle),
        Err(cudarc::driver::DriverError(cudarc::driver::sys::CUresult::CUDA_ERROR_NOT_READY)) => Ok(StreamState::Busy),
        Err(e) => Err(Error::driver(format!("{what}: the device stream reported a fault"), e)),
    }
}

impl ControlKernels {
    /// The done-word kernel of the control module (`control.ptx`), loaded once per context.
    pub(crate) fn load_done_word(ctx: &crate::context::Context) -> Result<CudaFunction> {
        let module = ControlKernels::module(ctx)?;
        module.load_function("kgraph_done_word").map_err(|source| {
            Error::Module(ModuleError::FunctionNotFound {
                kernel: "kgraph_done_word",
                file: "kgraph control kernels (control.ptx)",
                source,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::next_target;

    #[test]
    fn a_replay_counts_after_the_one_still_waited_for() {
        // Nothing pending: one past what the device published.
        assert_eq!(next_target(None, 0), 1);
        assert_eq!(next_target(None, 41), 42);
        // Two replays in flight: the second publishes after the first.
        assert_eq!(next_target(Some(42), 41), 43);
        assert_eq!(next_target(Some(42), 42), 43);
    }

    #[test]
    fn replays_outside_the_struct_move_the_target_past_them() {
        // A replay pending at 42, then three timed replays that waited for themselves: the
        // device published 45, so the next replay publishes 46, never a count already seen.
        assert_eq!(next_target(Some(42), 45), 46);
    }

    #[test]
    fn counts_wrap() {
        assert_eq!(next_target(None, u32::MAX), 0);
        assert_eq!(next_target(Some(u32::MAX), u32::MAX - 1), 0);
        assert_eq!(next_target(Some(u32::MAX), 1), 2);
    }
}
