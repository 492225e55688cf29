//! [`Resident`]: the host side of a persistent kernel running `kg_resident_loop` (see the module
//! docs of [`crate::resident`] and `kg_resident.cuh` for the protocol and the body contract).

use std::ffi::c_void;
use std::fmt;
use std::mem::ManuallyDrop;
use std::time::Duration;

use cudarc::driver::{CudaFunction, LaunchConfig};

use crate::context::Stream;
use crate::error::{Result, WaitError};
use crate::launch::args::DeviceIn;
use crate::launch::config::{launch_cooperative, launch_ex, LaunchOptions};
use crate::memory::buffer::DeviceBuffer;
use crate::memory::device::Device;
use crate::memory::pod::Pod;
use crate::resident::bell::{next_seq, Bell, Exit, DONE, EXIT, STOP};
use crate::resident::done_word::query;
use crate::resident::grid::{co_resident_blocks, scratch_words, GridShape};
use crate::resident::pairs::Pairs;
use crate::resident::spin::{spin_until, SpinEnd, SpinPolicy};

/// How a [`Resident`] waits, idles and stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResidentOptions {
    /// The back-off and timeout of [`Resident::wait`].
    pub wait: SpinPolicy,
    /// The kernel exits after this long without a doorbell (and is launched again by the next
    /// submit): a context-wide synchronize elsewhere on the host then waits at most this long
    /// after the last step (while steps keep coming, for as long as they do).
    /// At most [`ResidentOptions::MAX_IDLE_EXIT`]: a longer one is taken as that, so a resident
    /// that is never stopped (leaked with `mem::forget`) cannot hold a synchronize forever.
    pub idle_exit: Duration,
    /// How long [`Resident::stop`] (and the drop) waits for the kernel to exit.
    pub stop_timeout: Duration,
}

impl ResidentOptions {
    /// The longest idle exit (60 s): see [`ResidentOptions::idle_exit`].
    pub const MAX_IDLE_EXIT: Duration = Duration::from_secs(60);
}

impl Default for ResidentOptions {
    /// [`SpinPolicy::default`] (10 s timeout), a 1 s idle exit, a 10 s stop timeout.
    fn default() -> Self {
        ResidentOptions {
            wait: SpinPolicy::default(),
            idle_exit: Duration::from_secs(1),
            stop_timeout: Duration::from_secs(10),
        }
    }
}

/// Whether the resident kernel can take work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Live,
    /// Stopped by [`Resident::stop`]: `stuck` when it had not exited by the stop timeout (its
    /// memory is then leaked, never freed under it).
    Stopped {
        stuck: bool,
    },
    /// A device fault ended it.
    Faulted,
}

/// The memory the kernel touches: dropped only once the kernel is known to have exited.
struct Owned<I: Pod, O: Pod, B> {
    bell: Bell,
    input: Pairs<I>,
    output: Pairs<O>,
    /// The grid-wide loop's step words (`kg_resident_grid.cuh`); `None` for the one-block loop.
    scratch: Option<DeviceBuffer<u32>>,
    body: B,
}

/// A persistent kernel that runs one step per doorbell: the host [`Resident::submit`]s an
/// input `I`, the kernel (`kg_resident_loop<Body>`, one block) runs `Body::run` on it and
/// sends the output `O` back, the host [`Resident::wait`]s for it (both travel through mapped
/// pinned memory as pairs carrying the step's sequence number: no launch, no copy, no fence and
/// no doorbell word per step). `P` is the body's
/// parameter struct (device addresses into `B`), `B` what owns the memory they point to.
///
/// Soundness: the host writes the input only while no step is in flight (`submit` first waits
/// for the step before, with `&mut self`), takes the output only once every pair of it carries
/// the sequence number of the step it submitted, and hands `B` out only once the kernel has
/// exited. Every buffer the kernel touches is owned here and dropped after the kernel exited;
/// when it cannot be stopped in time they are leaked instead. See `docs/safety.md`
/// ("Resident kernels").
pub struct Resident<I: Pod, O: Pod, P: Copy + Send + 'static, B: Send> {
    name: &'static str,
    stream: Stream,
    function: CudaFunction,
    block: (u32, u32, u32),
    /// Blocks per launch: 1 for the one-block loop, the co-resident grid for the grid-wide one.
    blocks: u32,
    params: P,
    mem: ManuallyDrop<Owned<I, O, B>>,
    options: ResidentOptions,
    /// The sequence number of the last step submitted, and of the last one seen done.
    submitted: u32,
    completed: u32,
    /// A launch of the kernel may be running.
    launched: bool,
    state: State,
    /// [`Self::into_body`] took `mem` (after the kernel exited).
    body_taken: bool,
}

impl<I: Pod, O: Pod, P: Copy + Send + 'static, B: Send> Resident<I, O, P, B> {
    /// Allocates the doorbell, the input and the output in mapped pinned memory and a stream of
    /// its own; the kernel is launched by the first [`Self::submit`] (and again after an idle
    /// exit). `block` is the block shape (one block: the loop runs in one).
    ///
    /// # Safety
    /// - `function` takes `(KgResidentBell*, const KgResidentPair*, KgResidentPair*, Params)`
    ///   and runs `kg_resident_loop<Body>` on them and nothing after it, where `Body::In`,
    ///   `Body::Out` and `Body::Params` have the size, alignment and field layout of `I`, `O`
    ///   and `P`;
    /// - `I` and `O` have no padding bytes (every byte belongs to a field: the host reads `I`'s
    ///   bytes as words); their sizes are multiples of 4 bytes (else `new` returns an error);
    /// - every device address in `params` points into memory owned by `body` (allocations that
    ///   live as long as `body` does), and what the body accesses through it lies inside; nothing
    ///   outside this `Resident` reads or writes that memory while it lives (it never hands
    ///   `body` out while the kernel may run);
    /// - every allocation and write of that memory issued before `new` has completed (e.g.
    ///   `device.synchronize()` after uploading it): the kernel runs on a stream of its own,
    ///   not ordered after the device's main stream;
    /// - `Body::run` keeps the body contract of `kg_resident.cuh` (it returns, writes only its
    ///   outputs and the memory of `body`, uses no grid barrier) and fits `block` (its
    ///   `__launch_bounds__`, its shared memory; a multiple of 32 threads).
    pub unsafe fn new(
        name: &'static str,
        device: &Device,
        function: CudaFunction,
        block: (u32, u32, u32),
        params: P,
        body: B,
        options: ResidentOptions,
    ) -> Result<Self> {
        // SAFETY: the caller's promise, for the one-block loop.
        unsafe { Self::build(name, device, function, block, params, body, options) }
    }

    /// [`Self::new`] for a grid-wide body (`kg_resident_grid_loop<Body>` of
    /// `kg_resident_grid.cuh`): every launch is cooperative, with as many blocks of
    /// `shape.block` as `shape` asks and the device keeps resident at once
    /// ([`Self::grid_blocks`] says how many), so the body's grid barriers never wait for a block
    /// that cannot start. The step's words travel through a device buffer this allocates.
    ///
    /// # Errors
    /// [`LaunchError::NotCoResident`](crate::LaunchError::NotCoResident) when not one block of
    /// `shape.block` fits on a multiprocessor; the errors of [`Self::new`].
    ///
    /// # Safety
    /// As [`Self::new`], with these differences: `function` takes `(KgResidentBell*, const
    /// KgResidentPair*, KgResidentPair*, unsigned* scratch, Params)` and runs
    /// `kg_resident_grid_loop<Body>` on them and nothing after it; `Body::run` keeps the
    /// grid-wide body contract of `kg_resident_grid.cuh` (it returns; every thread of every block
    /// reaches the same grid barriers; it writes only `Out` and the memory of `body`) and makes no
    /// assumption about the number of blocks; `shape.block` fits its `__launch_bounds__` and
    /// shared memory.
    pub unsafe fn new_grid(
        name: &'static str,
        device: &Device,
        function: CudaFunction,
        shape: GridShape,
        params: P,
        body: B,
        options: ResidentOptions,
    ) -> Result<Self> {
        // SAFETY: the caller's promise; the grid launch is set up below, before any submit.
        let mut resident = unsafe { Self::build(name, device, function, shape.block, params, body, options) }?;
        resident.blocks = co_resident_blocks(&resident.stream, &resident.function, name, shape)?;
        let scratch = device.alloc_zeros::<u32>(scratch_words(Pairs::<I>::WORDS, Pairs::<O>::WORDS))?;
        // Allocated (and zeroed) on the device's stream; the kernel runs on the resident's own.
        device.synchronize()?;
        resident.mem.scratch = Some(scratch);
        Ok(resident)
    }

    /// The state both constructors start from: the mapped memory, a stream, one block.
    ///
    /// # Safety
    /// The promise of [`Self::new`] or [`Self::new_grid`], for the loop the caller then sets up.
    unsafe fn build(
        name: &'static str,
        device: &Device,
        function: CudaFunction,
        block: (u32, u32, u32),
        params: P,
        body: B,
        options: ResidentOptions,
    ) -> Result<Self> {
        let idle_ns =
            u64::try_from(options.idle_exit.min(ResidentOptions::MAX_IDLE_EXIT).as_nanos()).unwrap_or(u64::MAX);
        let mem = Owned {
            bell: Bell::new(device, idle_ns)?,
            input: Pairs::new(device, &format!("{name}: the input"))?,
            output: Pairs::new(device, &format!("{name}: the output"))?,
            scratch: None,
            body,
        };
        // SAFETY: the stream is used only for this kernel, which touches only `mem` (owned
        // here, dropped after the kernel exits) and what the caller promised of `params`.
        let stream = unsafe { device.new_stream() }?;
        Ok(Resident {
            name,
            stream,
            function,
            block,
            blocks: 1,
            params,
            mem: ManuallyDrop::new(mem),
            options,
            submitted: 0,
            completed: 0,
            launched: false,
            state: State::Live,
            body_taken: false,
        })
    }

    /// Writes `input` and rings the doorbell for one step. A step still in flight is waited
    /// for first (the kernel may be reading the input it wrote). [`WaitError::Stopped`] after
    /// [`Self::stop`] or a fault; the errors of [`Self::wait`] for the step before.
    pub fn submit(&mut self, input: &I) -> Result<()> {
        self.check_live("submit")?;
        if self.submitted != self.completed {
            self.wait()?;
        }
        let seq = next_seq(self.submitted);
        // SAFETY: `I` has no padding (`new`'s caller promised it). No step is in flight (just
        // checked): the kernel takes the record only once every pair carries `seq`.
        unsafe { self.mem.input.write(input, seq) };
        self.submitted = seq;
        if !self.launched || Exit::from_word(self.mem.bell.load(EXIT)) == Exit::Idle {
            self.launch()?;
        }
        Ok(())
    }

    /// Waits for the step submitted last (spinning, as `options.wait` says) and returns its
    /// output; with no step in flight, the last output again. [`WaitError::Timeout`] leaves the
    /// step in flight (the next wait or submit waits for it again); a device fault is
    /// [`Error::Driver`](crate::Error::Driver) and stops the resident kernel for good.
    pub fn wait(&mut self) -> Result<O> {
        // Formatted only on an error: `wait` is the latency path (no allocation per step).
        let what = Op(self.name, "wait");
        while self.submitted != self.completed {
            let target = self.submitted;
            let output = &self.mem.output;
            let stream = &self.stream;
            let end = spin_until(&self.options.wait, || output.complete(target), || query(stream, &what));
            match end {
                Ok(SpinEnd::Published) => self.completed = target,
                Ok(SpinEnd::StreamIdle) => self.relaunch_after_exit(what)?,
                Ok(SpinEnd::TimedOut(waited)) => {
                    let seen = output.first_seq();
                    return Err(WaitError::Timeout { what: what.to_string(), seq: target, seen, waited }.into());
                }
                Err(fault) => {
                    self.state = State::Faulted;
                    self.launched = false;
                    return Err(fault);
                }
            }
        }
        // Every pair carries the step's sequence number, and the kernel writes them again only
        // for the next step, which only a submit (`&mut self`) starts.
        Ok(self.mem.output.read())
    }

    /// [`Self::submit`] then [`Self::wait`].
    pub fn step(&mut self, input: &I) -> Result<O> {
        self.submit(input)?;
        self.wait()
    }

    /// Stops the kernel (a step in progress ends first) and waits up to `options.stop_timeout`
    /// for it to exit. Later submits are refused with [`WaitError::Stopped`]. When it does not
    /// exit in time: [`WaitError::Timeout`], and its memory is never freed.
    pub fn stop(&mut self) -> Result<()> {
        let what = Op(self.name, "stop");
        if self.state == State::Live {
            self.state = State::Stopped { stuck: false };
        }
        if !self.launched {
            return Ok(());
        }
        self.mem.bell.store(STOP, 1);
        let policy = SpinPolicy { timeout: self.options.stop_timeout, ..self.options.wait };
        let end = spin_until(&policy, || false, || query(&self.stream, &what));
        self.launched = false;
        match end {
            Ok(SpinEnd::StreamIdle | SpinEnd::Published) => {
                // A stop that timed out before and succeeded now: the kernel has exited.
                if self.state == (State::Stopped { stuck: true }) {
                    self.state = State::Stopped { stuck: false };
                }
                Ok(())
            }
            Ok(SpinEnd::TimedOut(waited)) => {
                self.launched = true;
                self.state = State::Stopped { stuck: true };
                let seen = self.mem.bell.load(DONE);
                Err(WaitError::Timeout { what: what.to_string(), seq: self.submitted, seen, waited }.into())
            }
            Err(fault) => {
                self.state = State::Faulted;
                Err(fault)
            }
        }
    }

    /// The body's memory (to read its state), once the kernel has been stopped and has exited
    /// (or a fault ended it); `None` while it may run.
    pub fn body(&self) -> Option<&B> {
        match self.state {
            State::Stopped { stuck: false } | State::Faulted if !self.launched => Some(&self.mem.body),
            _ => None,
        }
    }

    /// Stops the kernel ([`Self::stop`]) and hands back what the body owns (a generated
    /// resident's graph struct, to read its state, reload it or replay it as a graph again).
    ///
    /// # Errors
    /// Those of [`Self::stop`]: a kernel that did not exit keeps its memory (leaked).
    pub fn into_body(mut self) -> Result<B> {
        self.stop()?;
        // `stop` succeeded, so the kernel has exited (or never ran): nothing uses the memory.
        debug_assert!(!self.launched);
        self.body_taken = true;
        // SAFETY: taken once; `body_taken` keeps `Drop` from dropping it again.
        let Owned { body, .. } = unsafe { ManuallyDrop::take(&mut self.mem) };
        Ok(body)
    }

    /// The sequence number of the last step submitted (0 before the first).
    pub fn submitted(&self) -> u32 {
        self.submitted
    }

    /// Blocks per launch: 1 for a resident made by [`Self::new`], the co-resident grid
    /// [`Self::new_grid`] sized for one made by it.
    pub fn grid_blocks(&self) -> u32 {
        self.blocks
    }

    /// Whether a launch of the kernel may be running (false before the first submit, after an
    /// idle exit was noticed, and after stop).
    pub fn is_running(&self) -> bool {
        self.launched
    }

    fn check_live(&self, op: &str) -> Result<()> {
        match self.state {
            State::Live => Ok(()),
            State::Stopped { .. } => {
                Err(WaitError::Stopped { what: format!("{}::{op}", self.name), faulted: false }.into())
            }
            State::Faulted => Err(WaitError::Stopped { what: format!("{}::{op}", self.name), faulted: true }.into()),
        }
    }

    /// The kernel's stream went idle before the step was published: an idle exit that raced
    /// the doorbell is launched again while the resident is live; any other exit ends it, and
    /// after a stop or a fault nothing is launched again.
    fn relaunch_after_exit(&mut self, what: Op) -> Result<()> {
        self.launched = false;
        let (seq, seen) = (self.submitted, self.mem.bell.load(DONE));
        match (self.state, Exit::from_word(self.mem.bell.load(EXIT))) {
            (State::Live, Exit::Idle) => self.launch(),
            (State::Live, other) => {
                self.state = State::Stopped { stuck: false };
                let detail = format!("{what} (the kernel exited: {other:?})");
                Err(WaitError::NotPublished { what: detail, seq, seen }.into())
            }
            // Never after a stop (or a fault): the state `body()` handed out stays the last.
            _ => {
                let detail = format!("{what} (the resident was stopped before it ran the step)");
                Err(WaitError::NotPublished { what: detail, seq, seen }.into())
            }
        }
    }

    /// Launches the loop on the resident's stream: one block of `block`, or the co-resident grid
    /// of them, cooperatively, for the grid-wide loop.
    fn launch(&mut self) -> Result<()> {
        let cfg = LaunchConfig { grid_dim: (self.blocks, 1, 1), block_dim: self.block, shared_mem_bytes: 0 };
        let (mut bell, mut input, mut output) =
            (self.mem.bell.device_addr(), self.mem.input.device_addr(), self.mem.output.device_addr());
        let launched = match &self.mem.scratch {
            None => {
                let mut args = [ptr(&mut bell), ptr(&mut input), ptr(&mut output), ptr(&mut self.params)];
                // SAFETY: the argument list `new`'s caller promised for `function`; the three
                // mapped buffers are owned by `self.mem`, dropped only after the kernel exits.
                unsafe { launch_ex(&self.stream, &self.function, self.name, cfg, LaunchOptions::default(), &mut args) }
            }
            Some(scratch) => {
                let mut scratch = scratch.device_addr();
                let mut args =
                    [ptr(&mut bell), ptr(&mut input), ptr(&mut output), ptr(&mut scratch), ptr(&mut self.params)];
                // SAFETY: the argument list `new_grid`'s caller promised for `function`; the
                // mapped buffers and the scratch (`scratch_words` of the record sizes, the
                // layout `kg_resident_grid.cuh` reads) are owned by `self.mem`, dropped only
                // after the kernel exits. `blocks` is at most what the device keeps resident.
                unsafe { launch_cooperative(&self.stream, &self.function, self.name, cfg, &mut args) }
            }
        };
        launched?;
        self.launched = true;
        Ok(())
    }
}

/// `name::op`, for error messages (formatted only when one is made).
#[derive(Clone, Copy)]
struct Op(&'static str, &'static str);

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}::{}", self.0, self.1)
    }
}

fn ptr<T>(v: &mut T) -> *mut c_void {
    (v as *mut T).cast()
}

impl<I: Pod, O: Pod, P: Copy + Send + 'static, B: Send> Drop for Resident<I, O, P, B> {
    /// Stops the kernel and waits for it (up to `options.stop_timeout`), also while a panic
    /// unwinds; the memory is freed only when the kernel has exited, leaked otherwise.
    fn drop(&mut self) {
        if self.body_taken {
            return;
        }
        let _ = self.stop();
        if !self.launched {
            // SAFETY: the kernel has exited (or never ran, or a fault ended the context's
            // work): nothing uses the memory any more; dropped once, here.
            unsafe { ManuallyDrop::drop(&mut self.mem) };
        }
    }
}

impl<I: Pod, O: Pod, P: Copy + Send + 'static, B: Send> std::fmt::Debug for Resident<I, O, P, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resident")
            .field("name", &self.name)
            .field("submitted", &self.submitted)
            .field("completed", &self.completed)
            .field("launched", &self.launched)
            .field("state", &self.state)
            .finish()
    }
}
