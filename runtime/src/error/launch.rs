//! Kernel modules that would not load ([`ModuleError`]) and launches kgraph refused before
//! issuing them ([`LaunchError`]).

use cudarc::driver::DriverError;
use std::fmt;

use super::DriverErrorText;

/// Loading a kernel module or function failed ([`Error::Module`](super::Error::Module)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModuleError {
    /// Loading a kernel module (cubin, or NVRTC-compiled source) failed.
    #[error("loading kernel module {file}: {detail}")]
    Load {
        /// The `.cu` file the module was built from.
        file: &'static str,
        /// Why.
        detail: String,
    },
    /// A kernel was not found in its module.
    #[error("kernel `{kernel}` not found in module {file}: {}", DriverErrorText(.source))]
    FunctionNotFound {
        /// The kernel's name.
        kernel: &'static str,
        /// The `.cu` file it should be in.
        file: &'static str,
        /// The driver's error.
        source: DriverError,
    },
    /// A loaded kernel's parameters differ from its declaration's: parameter `index` (from 0)
    /// takes `found` bytes in the loaded module, the declaration passes `expected` (`found` is
    /// `None` when the module's kernel has fewer parameters). Checked at load, before any launch,
    /// where the driver reports parameters (`cuFuncGetParamInfo`, CUDA 12.4+): the check that
    /// stands in for the compile-time one when the build had no nvcc (NVRTC fallback).
    #[error(
        "loading kernel `{kernel}`: parameter {index} is {} in the loaded module, {} in the declaration",
        ParamBytes(*.found),
        ParamBytes(*.expected)
    )]
    ParamMismatch {
        /// The kernel's name.
        kernel: &'static str,
        /// The parameter, from 0.
        index: usize,
        /// Bytes the declaration passes (`None`: the declaration has fewer parameters).
        expected: Option<u32>,
        /// Bytes the loaded kernel takes (`None`: it has fewer parameters).
        found: Option<u32>,
    },
}

/// kgraph refused a launch, or a copy, before issuing it ([`Error::Launch`](super::Error::Launch)): nothing was
/// launched. These are built on the launch path's `#[cold]` error branches only.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchError {
    /// A kernel argument is shorter than its declared extent (`x: &[f32; n]` in the
    /// `#[kernel]` declaration) for the scalar arguments of this launch.
    #[error("launching kernel `{kernel}`: argument `{param}` holds {actual} elements, its extent requires {required}")]
    Extent {
        /// The kernel's name.
        kernel: &'static str,
        /// The pointer parameter whose argument is too short.
        param: &'static str,
        /// The extent's value for this launch: the elements the kernel may access.
        required: u64,
        /// The elements the argument holds.
        actual: usize,
    },
    /// A declared extent could not be evaluated for the scalar arguments of this launch: it
    /// overflows the type it is computed in, divides by zero, or is negative.
    #[error("launching kernel `{kernel}`: the extent of `{param}` cannot be evaluated: {detail}")]
    ExtentArithmetic {
        /// The kernel's name.
        kernel: &'static str,
        /// The pointer parameter whose extent failed.
        param: &'static str,
        /// The extent as declared and what went wrong.
        detail: String,
    },
    /// An argument the kernel writes overlaps another pointer argument of the same launch
    /// (within their extents).
    #[error("launching kernel `{kernel}`: argument `{written}`, which the kernel writes, overlaps argument `{other}`")]
    Aliasing {
        /// The kernel's name.
        kernel: &'static str,
        /// The written parameter (`&mut [T]` or `PinnedMut<T>`).
        written: &'static str,
        /// The parameter it overlaps.
        other: &'static str,
    },
    /// A checked launch would start more threads than the `unsafe(extents)` promise covers
    /// (`kgraph::extent::MAX_THREADS_PER_LAUNCH`, 2^31: beyond it a thread index computed in
    /// C's `int` overflows).
    #[error(
        "launching kernel `{kernel}`: the launch configuration has {threads} threads, a checked launch at most {max}"
    )]
    TooManyThreads {
        /// The kernel's name.
        kernel: &'static str,
        /// Threads in the launch configuration (saturated at `u64::MAX`).
        threads: u64,
        /// The most a checked launch may start.
        max: u64,
    },
    /// The launch gives a kernel less dynamic shared memory (`cfg.shared_mem_bytes`) than its
    /// declaration's `shared = expr` requires for this launch's block and scalars.
    #[error(
        "launching kernel `{kernel}`: it needs {required} bytes of dynamic shared memory (`shared = {expr}`), the launch gives {given} (`cfg.shared_mem_bytes`)"
    )]
    SharedMemory {
        /// The kernel's name.
        kernel: &'static str,
        /// The declared requirement as written (`block.x * 4`).
        expr: &'static str,
        /// Its value for this launch, in bytes.
        required: u64,
        /// The bytes the launch configuration gives.
        given: u32,
    },
    /// The launch asks for more dynamic shared memory than the device grants one block of this
    /// kernel (its opt-in maximum less the kernel's static shared memory).
    #[error(
        "launching kernel `{kernel}`: {requested} bytes of dynamic shared memory asked, the device grants this kernel at most {limit}"
    )]
    SharedMemoryLimit {
        /// The kernel's name.
        kernel: &'static str,
        /// `cfg.shared_mem_bytes`.
        requested: u32,
        /// The most this kernel may have on this device.
        limit: u32,
    },
    /// A launch's block has more threads than the kernel's `__launch_bounds__` allows (the
    /// driver would refuse it with a less specific error), or than its declaration's
    /// `max_block` (the bound the kernel's `unsafe(extents)` promise is made for).
    #[error(
        "launching kernel `{kernel}`: blocks of {block} threads, but its block bound (`__launch_bounds__` or `max_block`, {file}:{line}) allows at most {bound}"
    )]
    BlockTooLarge {
        /// The kernel's name.
        kernel: &'static str,
        /// Threads per block in the launch configuration (saturated at `u32::MAX`).
        block: u32,
        /// The kernel's `__launch_bounds__` maximum, or the declaration's `max_block`.
        bound: u32,
        /// The `.cu` file of the kernel's `__launch_bounds__`, or the Rust file declaring
        /// `max_block`.
        file: &'static str,
        /// The line of its `__launch_bounds__`, or of the declaration's `max_block`.
        line: u32,
    },
    /// A condition of the kernel declaration's `requires(...)` is false for this launch's
    /// scalar arguments and shape (`requires(input_stride >= 0)`, `requires(block.x == 256)`):
    /// the author's `unsafe(extents)` promise is made only where every condition holds.
    #[error("launching kernel `{kernel}`: its requirement `{condition}` does not hold ({})", RequirementValues(.values))]
    Requirement {
        /// The kernel's name.
        kernel: &'static str,
        /// The condition as written in the declaration.
        condition: &'static str,
        /// The value of each name the condition uses in this launch (`("block.x", 128)`).
        values: Vec<(&'static str, i128)>,
    },
    /// A pointer argument's device address is not a multiple of the alignment its declaration
    /// requires (`align(x = 16)`: the kernel reads `x` as a wider vector type). A view or an
    /// offset slice of an allocation can be misaligned; whole allocations are 256-byte aligned.
    #[error(
        "launching kernel `{kernel}`: argument `{param}` is at device address {addr:#x}, which is not a multiple of {align} bytes (`align({param} = {align})`)"
    )]
    Misaligned {
        /// The kernel's name.
        kernel: &'static str,
        /// The pointer parameter.
        param: &'static str,
        /// The argument's device address.
        addr: u64,
        /// The alignment the declaration requires, in bytes.
        align: u64,
    },
    /// A launch asked for programmatic dependent launch (`LaunchOptions::PDL`) of a kernel not
    /// proven to execute `griddepcontrol.wait` (the handle's `PDL_WAITS` is `false`: the
    /// compiled kernel lacks the wait, calls a function kgraph cannot see, or the build left no
    /// record of what was compiled). Without the wait the kernel could read what the previous
    /// kernel is still writing.
    #[error(
        "launching kernel `{kernel}` with PDL: the kernel is not proven to execute `griddepcontrol.wait` (`cudaGridDependencySynchronize()`) before reading the previous kernel's output, so the launch is refused; add the wait, or launch without PDL"
    )]
    PdlWithoutWait {
        /// The kernel's name.
        kernel: &'static str,
    },
    /// A device-memory argument is owned by a stream other than the one the kernel (or copy)
    /// is issued on. kgraph contexts have cudarc's event tracking off, so an allocation is only
    /// ordered against work on its own stream (it is allocated and freed in that stream's order);
    /// work issued on another stream could run before the allocation exists or after it has been
    /// freed. Issue the work on the argument's stream, or order the streams yourself with events
    /// and use an unchecked (unsafe) path.
    #[error(
        "`{kernel}`: argument `{param}` lives on another stream than the one the work is issued on (its allocation is ordered only on its own stream); issue the work on that stream"
    )]
    ForeignStream {
        /// The kernel (or kgraph operation, e.g. `"Device::upload_into"`) being issued.
        kernel: &'static str,
        /// The parameter whose argument lives on another stream.
        param: &'static str,
    },
    /// A device-memory argument (or the launch stream) belongs to a cudarc context with event
    /// tracking on (a context made with plain cudarc rather than [`crate::Device`]). Such slices
    /// order themselves against other streams with per-slice events, which kgraph's launches
    /// neither wait for nor record, so cudarc's later uses and frees of the slice would not be
    /// ordered after kgraph's work. Allocate through a [`crate::Device`] instead.
    #[error(
        "`{kernel}`: argument `{param}` comes from a cudarc context with event tracking on; kgraph orders work by stream only, so allocate through `kgraph::Device`"
    )]
    TrackedContext {
        /// The kernel (or kgraph operation) being issued.
        kernel: &'static str,
        /// The parameter whose argument comes from the tracked context.
        param: &'static str,
    },
    /// A mapped pinned argument ([`crate::PinnedPtr`], [`crate::PinnedMutPtr`]) belongs to a
    /// context other than the launch stream's. The buffer's host views and its `Drop` wait for
    /// the device work of its own context only, so a launch in another context could still be
    /// using the memory when the host reads, writes or frees it.
    #[error("`{kernel}`: mapped pinned argument `{param}` belongs to another CUDA context than the launch stream")]
    ForeignContext {
        /// The kernel being launched.
        kernel: &'static str,
        /// The parameter whose argument comes from another context.
        param: &'static str,
    },
    /// A grid-wide resident loop's kernel cannot keep even one block of its shape on a
    /// multiprocessor (registers, shared memory or threads), so no grid of it can be resident
    /// at once, which its grid-wide barriers need.
    #[error(
        "`{kernel}`: not one block of {block} threads fits on a multiprocessor, so no grid of it can be resident at once (its grid-wide barriers need that); use a smaller block"
    )]
    NotCoResident {
        /// The kernel.
        kernel: &'static str,
        /// Threads per block.
        block: u32,
    },
}

/// A parameter's size in [`ModuleError::ParamMismatch`]: `N bytes`, or `no parameter`.
struct ParamBytes(Option<u32>);

impl fmt::Display for ParamBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(n) => write!(f, "{n} bytes"),
            None => f.write_str("no parameter"),
        }
    }
}

/// The values in [`LaunchError::Requirement`]'s message: `n = 5, block.x = 128`.
struct RequirementValues<'a>(&'a [(&'static str, i128)]);

impl fmt::Display for RequirementValues<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (name, value)) in self.0.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{name} = {value}")?;
        }
        Ok(())
    }
}
