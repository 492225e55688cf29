//! The run-time half of kgraph's safety (docs/safety.md): host views of mapped memory wait for
//! kernels still using it (H5), dropping mapped memory waits for the kernels still using it
//! (H3), and work on a stream that does not own its argument is refused with a typed error
//! (H4). The compile-time half is the root package's `tests/ui/safety/`. Kernels:
//! `kernels/test_runtime.cu` (`rt_spin_then_fill_f32`, `rt_spin_then_copy_f32`: spin, then touch
//! mapped memory; `rt_iota_u32` through a generated registry).

use std::sync::Arc;
use std::time::Instant;

use kgraph::cudarc::driver::CudaContext;
// The launch-side checks generated code runs, tested directly.
use kgraph::__private::{check_same_context, check_same_stream};
use kgraph::{DeviceIn, DeviceOut, Error, LaunchError, PinnedPtr, Stream};
use kgraph::{MappedBuffer, PinnedSlot, Result};

use super::common::device;
use super::runtime::TestKernels;

/// About 0.1 s of SM clock on current GPUs (1.5-2 GHz): far longer than the host needs to
/// return from the launch and look at the memory.
const SPIN: i64 = 200_000_000;
const N: usize = 256;
const SENTINEL: f32 = -7.5;

#[test]
#[ignore = "needs a CUDA GPU"]
fn to_vec_waits_for_a_kernel_still_writing() {
    let dev = device();
    let k = TestKernels::load(&dev);
    let mut buf = MappedBuffer::<f32>::new(&dev, N).unwrap();
    buf.as_mut_slice().unwrap().fill(SENTINEL);
    k.spin_then_fill(dev.stream(), buf.device_ptr_mut(), N, 3.25, SPIN).unwrap();
    // The premise: the kernel is still spinning (volatile reads never wait).
    let early = buf.to_vec_volatile();
    assert!(early.contains(&SENTINEL), "the kernel finished before the host looked; lengthen SPIN");
    // No explicit synchronize: the host read waits for the kernel that was lent the pointer.
    let view = buf.to_vec().unwrap();
    assert!(view.iter().all(|&v| v == 3.25), "to_vec saw unfinished writes: {:?}", &view[..4]);
    // Nothing lent since: a second read (no wait) sees the same values.
    let mut again = vec![0.0; N];
    buf.read_into(&mut again).unwrap();
    assert!(again.iter().all(|&v| v == 3.25));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn as_mut_slice_waits_for_a_kernel_still_reading() {
    let dev = device();
    let k = TestKernels::load(&dev);
    let mut buf = MappedBuffer::<f32>::new(&dev, N).unwrap();
    let old: Vec<f32> = (0..N).map(|i| i as f32).collect();
    buf.as_mut_slice().unwrap().copy_from_slice(&old);
    let mut out = dev.alloc_zeros::<f32>(N).unwrap();
    k.spin_then_copy(dev.stream(), buf.device_ptr(), &mut out, SPIN).unwrap();
    // The kernel reads `buf` only after its spin: the mutable view must wait for it first.
    buf.as_mut_slice().unwrap().fill(SENTINEL);
    assert_eq!(dev.download(&out).unwrap(), old, "the kernel read values written after its launch");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dropping_a_mapped_buffer_waits_for_the_kernel_writing_it() {
    let dev = device();
    let k = TestKernels::load(&dev);
    for round in 0..4 {
        let mut buf = MappedBuffer::<f32>::new(&dev, N).unwrap();
        k.spin_then_fill(dev.stream(), buf.device_ptr_mut(), N, 1.0 + round as f32, SPIN / 4).unwrap();
        let t0 = Instant::now();
        drop(buf); // no synchronize before: the drop must wait for the kernel
        let waited = t0.elapsed();
        // A new allocation of the same size (often the very pages just freed) stays intact.
        let mut fresh = MappedBuffer::<f32>::new(&dev, N).unwrap();
        fresh.as_mut_slice().unwrap().fill(SENTINEL);
        dev.synchronize().unwrap();
        assert!(
            fresh.to_vec().unwrap().iter().all(|&v| v == SENTINEL),
            "round {round}: a kernel wrote into memory allocated after its buffer was dropped (drop waited {waited:?})"
        );
    }
    dev.context().check_err().expect("no error was recorded by a drop");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dropping_a_pinned_slot_waits_for_the_kernel_reading_it() {
    let dev = device();
    let k = TestKernels::load(&dev);
    let slot = PinnedSlot::new(&dev, 42.0f32).unwrap();
    let mut out = dev.alloc_zeros::<f32>(1).unwrap();
    k.spin_then_copy(dev.stream(), slot.device_ptr(), &mut out, SPIN).unwrap();
    drop(slot);
    let reused = PinnedSlot::new(&dev, 9.0f32).unwrap();
    assert_eq!(dev.download(&out).unwrap(), vec![42.0], "the kernel read the slot after it was freed");
    assert_eq!(reused.peek(), 9.0);
}

/// `out[i] = base + i` on `stream`, with the argument check generated launches will make.
fn checked_iota(k: &TestKernels, stream: &Stream, out: &mut impl DeviceOut<u32>, base: u32) -> Result<()> {
    check_same_stream("rt_iota_u32", "out", stream, DeviceIn::<u32>::stream(out))?;
    k.iota(stream, out, base)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn work_on_a_stream_that_does_not_own_the_argument_is_refused() {
    let dev = device();
    let k = TestKernels::load(&dev);
    // A second stream of kgraph's own context: its slices are untracked.
    // SAFETY: `foreign` is allocated, written, read and freed on `side` alone (every call below
    // that would use it on the main stream is refused before it touches it).
    let side = unsafe { dev.new_stream() }.unwrap();
    // SAFETY: as above; cudarc's stream allocates and reads `foreign` on `side` only.
    let side_raw = unsafe { side.cuda() }.clone();
    let mut foreign = side_raw.alloc_zeros::<u32>(N).unwrap();
    side.synchronize().unwrap();

    match checked_iota(&k, dev.stream(), &mut foreign, 5) {
        Err(Error::Launch(LaunchError::ForeignStream { kernel: "rt_iota_u32", param: "out" })) => {}
        other => panic!("launch on the main stream of a side-stream slice: expected ForeignStream, got {other:?}"),
    }
    match dev.upload_into(&[7u32; N], &mut foreign) {
        Err(e @ Error::Launch(LaunchError::ForeignStream { kernel: "Device::upload_into", param: "dst" })) => {
            assert!(e.to_string().contains("another stream"), "{e}");
        }
        other => panic!("upload_into a side-stream slice: expected ForeignStream, got {other:?}"),
    }
    assert!(matches!(dev.download(&foreign), Err(Error::Launch(LaunchError::ForeignStream { param: "src", .. }))));
    let mut host = vec![0u32; N];
    assert!(matches!(dev.download_into(&foreign, &mut host), Err(Error::Launch(LaunchError::ForeignStream { .. }))));
    assert_eq!(side_raw.clone_dtoh(&foreign).unwrap(), vec![0; N], "a refused launch or copy wrote nothing");

    // On its own stream the same launch is fine, and so is a main-stream slice on the main stream.
    checked_iota(&k, &side, &mut foreign, 5).unwrap();
    assert_eq!(side_raw.clone_dtoh(&foreign).unwrap()[..3], [5, 6, 7]);
    let mut own = dev.alloc_zeros::<u32>(N).unwrap();
    checked_iota(&k, dev.stream(), &mut own, 1).unwrap();
    assert_eq!(dev.download(&own).unwrap()[..3], [1, 2, 3]);
    drop(foreign);
    side.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn slices_of_a_tracked_cudarc_context_are_refused() {
    let dev = device();
    let k = TestKernels::load(&dev);
    // A plain cudarc context object: event tracking on (cudarc's default).
    let tracked = CudaContext::new(0).unwrap();
    assert!(tracked.is_event_tracking());
    let ts = tracked.new_stream().unwrap();
    let mut slice = ts.alloc_zeros::<u32>(N).unwrap();
    ts.synchronize().unwrap();
    // SAFETY: a stream of a tracked context: kgraph's checks refuse it before anything runs.
    let tracked_stream = unsafe { Stream::from_cuda(ts.clone()) };
    match checked_iota(&k, &tracked_stream, &mut slice, 3) {
        Err(Error::Launch(LaunchError::TrackedContext { kernel: "rt_iota_u32", param: "out" })) => {}
        other => panic!("launch with a tracked slice: expected TrackedContext, got {other:?}"),
    }
    match dev.upload_into(&[7u32; N], &mut slice) {
        Err(e @ Error::Launch(LaunchError::TrackedContext { .. })) => {
            assert!(e.to_string().contains("event tracking"), "{e}")
        }
        other => panic!("upload_into a tracked slice: expected TrackedContext, got {other:?}"),
    }
    assert!(matches!(dev.download(&slice), Err(Error::Launch(LaunchError::TrackedContext { .. }))));
    assert_eq!(ts.clone_dtoh(&slice).unwrap(), vec![0; N], "nothing was written");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pinned_pointers_carry_their_context() {
    let dev = device();
    let mut buf = MappedBuffer::<f32>::new(&dev, N).unwrap();
    let ctx = dev.context().cu_ctx();
    assert_eq!(buf.device_ptr().context(), ctx);
    assert_eq!(buf.device_ptr_mut().context(), ctx);
    check_same_context("k", "x", dev.stream(), buf.device_ptr().context()).unwrap();
    // SAFETY: the pointer is only checked, never launched.
    let raw = unsafe { PinnedPtr::<f32>::from_raw(buf.device_ptr().addr(), N) };
    check_same_context("k", "x", dev.stream(), raw.context()).unwrap();
    let bogus = 0x10 as kgraph::cudarc::driver::sys::CUcontext;
    assert!(matches!(
        check_same_context("k", "x", dev.stream(), bogus),
        Err(Error::Launch(LaunchError::ForeignContext { kernel: "k", param: "x" }))
    ));
}

#[kgraph::kernels]
mod iota {
    /// `out[i] = base + i` for `i < n` (`kernels/test_runtime.cu`).
    #[kernel("test_runtime.cu", unsafe(extents))]
    pub fn rt_iota_u32(out: &mut [u32; n], n: i32, base: u32);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dropping_every_handle_keeps_the_module_loaded_and_a_new_load_reuses_it() {
    let dev = device();
    let k = iota::Kernels::load(&dev).unwrap();
    let module = Arc::downgrade(k.rt_iota_u32.module());
    let function = k.rt_iota_u32.function().clone();
    drop(k);
    drop(function);
    // Every handle, cache and function clone is gone: the module is still loaded (kgraph holds it).
    let kept = module.upgrade().expect("the module was unloaded when its last handle was dropped");
    // A handle loaded again, through a cache of its own, gets the same module, and it runs.
    let again = iota::Kernels::load(&dev).unwrap();
    assert!(Arc::ptr_eq(&kept, again.rt_iota_u32.module()), "the same kernel was loaded a second time");
    let mut out = dev.alloc_zeros::<u32>(N).unwrap();
    again.rt_iota_u32.launch(dev.stream(), again.rt_iota_u32.cfg_for(N as u32), &mut out, N as i32, 7).unwrap();
    let out = dev.download(&out).unwrap();
    assert!(out.iter().enumerate().all(|(i, &v)| v == 7 + i as u32), "the reused module's kernel did not run");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dropping_the_handles_of_a_running_kernel_lets_it_finish() {
    let dev = device();
    let k = TestKernels::load(&dev);
    let mut buf = MappedBuffer::<f32>::new(&dev, N).unwrap();
    buf.as_mut_slice().unwrap().fill(SENTINEL);
    k.spin_then_fill(dev.stream(), buf.device_ptr_mut(), N, 6.5, SPIN).unwrap();
    // The kernel is still spinning when its functions and their cache go.
    drop(k);
    assert!(buf.to_vec_volatile().contains(&SENTINEL), "the kernel finished before its handles were dropped");
    assert!(buf.to_vec().unwrap().iter().all(|&v| v == 6.5), "the kernel did not finish its writes");
    dev.context().check_err().expect("no error was recorded");
}
