//! Resident kernels (`kgraph::resident::Resident`) and the done-word wait of graph replays:
//! Graph A fused as a resident kernel gives the fused graph's bits at every step; a step that
//! outlasts the wait's timeout is a typed error and the drop still returns; submit after stop
//! is refused; a drop with a step in flight stops the kernel; an idle exit is relaunched by the
//! next submit; a stop that timed out and then succeeds hands the body out; the done-word wait
//! gives the stream wait's results, an eager run behind a replay included.

use std::time::{Duration, Instant};

use kgraph::cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use kgraph::resident::{Resident, ResidentOptions, SpinPolicy};
use kgraph::{Device, DeviceBuffer, DeviceIn, Error, WaitError};
use kgraph_model::graphs::synthetic::BookStream;
use kgraph_model::graphs::{ModelWeights, Perception, PerceptionFused};
use kgraph_model::model::SNAP_LEN;
use kgraph_model::resident::{PerceptionIn, PerceptionResident};

use super::common::{device, steps};

/// `SpinStep::In` of tests/kernels/test_resident.cu.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct SpinIn {
    value: u32,
    spin_ns: u32,
}

/// `SpinStep::Out`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct SpinOut {
    echo: u32,
    steps: u32,
}

// SAFETY (each): repr(C) pairs of u32, no padding, any bits valid; the .cu declares the same.
unsafe impl DeviceRepr for SpinIn {}
unsafe impl ValidAsZeroBits for SpinIn {}
unsafe impl kgraph::Pod for SpinIn {}
unsafe impl DeviceRepr for SpinOut {}
unsafe impl ValidAsZeroBits for SpinOut {}
unsafe impl kgraph::Pod for SpinOut {}

type SpinResident = Resident<SpinIn, SpinOut, u64, DeviceBuffer<u32>>;

// SAFETY: the cubin kgraph-build compiled from this file (or empty: NVRTC), its text and header
// folder; no `#[kernel]` handle uses it.
const SPIN_SOURCE: kgraph::expert::KernelSource = unsafe {
    kgraph::expert::KernelSource::new(
        "tests/kernels/test_resident.cu",
        include_bytes!(concat!(env!("OUT_DIR"), "/kgraph/test_resident.cubin")),
        include_str!("../kernels/test_resident.cu"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kernels"),
    )
};

fn spin_resident(dev: &Device, options: ResidentOptions) -> SpinResident {
    let function = kgraph::expert::ModuleCache::new(dev.context())
        .kernel_function(&SPIN_SOURCE, "test_resident_spin", "test_resident_spin", &[8, 8, 8, 8])
        .unwrap();
    let count = dev.alloc_zeros::<u32>(1).unwrap();
    dev.synchronize().unwrap();
    let params = count.device_addr();
    // SAFETY: test_resident_spin takes (bell, const KgResidentPair*, KgResidentPair*,
    // Params { unsigned* }) and runs kg_resident_loop<SpinStep>; SpinIn/SpinOut (two u32s
    // each, no padding)/u64 have those layouts; the one address is the
    // start of `count`, moved into the Resident; the body writes only `*count` and the output,
    // and returns after at most `spin_ns`.
    unsafe { Resident::new("SpinResident", dev, function, (32, 1, 1), params, count, options) }.unwrap()
}

fn quick(timeout: Duration) -> ResidentOptions {
    ResidentOptions { wait: SpinPolicy::with_timeout(timeout), ..ResidentOptions::default() }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn perception_resident_equals_the_fused_graph_bit_for_bit_at_every_step() {
    let dev = device();
    let w = ModelWeights::init(7);
    let mut fused = PerceptionFused::new(&dev).unwrap();
    fused.load_weights(&w).unwrap();
    fused.capture().unwrap();
    let mut resident = PerceptionResident::new(&dev, &w, ResidentOptions::default()).unwrap();
    let mut stream = BookStream::new(2024);
    let (mut snap, mut probs, mut y) = ([0f32; SNAP_LEN], [0f32; 5], [0f32; 8]);
    for step in 0..steps(3000) {
        let tick = stream.next_into(&mut snap);
        fused.write_snap(&snap).unwrap();
        fused.write_dt(&[tick.dt]).unwrap();
        fused.replay().unwrap();
        fused.read_probs_into(&mut probs).unwrap();
        fused.read_y_into(&mut y).unwrap();
        let out = resident.step(&PerceptionIn { snap, dt: tick.dt }).unwrap();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&out.probs), bits(&probs), "probs differ at step {step}");
        assert_eq!(bits(&out.y), bits(&y), "y differ at step {step}");
    }
    resident.stop().unwrap();
    let h = resident.download_h(&dev).expect("stopped").unwrap();
    let h_fused = fused.download_h().unwrap();
    assert_eq!(
        h.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        h_fused.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
}

/// Issue #30 item 3: the resident kernel on SMs of its own (`Device::split_sms`), Graph A's
/// fused graph captured and replayed on the rest at the same time; every step bit-equal.
#[test]
#[ignore = "needs a CUDA GPU"]
fn perception_resident_on_reserved_sms_equals_the_fused_graph_on_the_rest() {
    let dev = device();
    // SAFETY: both parts are used from this test's thread only.
    let split = unsafe { dev.split_sms(8) }.unwrap();
    let w = ModelWeights::init(7);
    let mut fused = PerceptionFused::new(&split.rest).unwrap();
    fused.load_weights(&w).unwrap();
    fused.capture().unwrap();
    let mut resident = PerceptionResident::new(&split.reserved, &w, ResidentOptions::default()).unwrap();
    let mut stream = BookStream::new(2025);
    let (mut snap, mut probs, mut y) = ([0f32; SNAP_LEN], [0f32; 5], [0f32; 8]);
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for step in 0..steps(500) {
        let tick = stream.next_into(&mut snap);
        fused.write_snap(&snap).unwrap();
        fused.write_dt(&[tick.dt]).unwrap();
        fused.replay().unwrap();
        fused.read_probs_into(&mut probs).unwrap();
        fused.read_y_into(&mut y).unwrap();
        let out = resident.step(&PerceptionIn { snap, dt: tick.dt }).unwrap();
        assert_eq!(bits(&out.probs), bits(&probs), "probs differ at step {step}");
        assert_eq!(bits(&out.y), bits(&y), "y differ at step {step}");
    }
    resident.stop().unwrap();
    let h = resident.download_h(&split.reserved).expect("stopped").unwrap();
    assert_eq!(bits(&h), bits(&fused.download_h().unwrap()));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn steps_echo_their_input_and_count_on_the_device() {
    let dev = device();
    let mut r = spin_resident(&dev, quick(Duration::from_secs(5)));
    assert!(!r.is_running());
    for k in 1..=10_000u32 {
        assert_eq!(r.step(&SpinIn { value: k * 3, spin_ns: 0 }).unwrap(), SpinOut { echo: k * 3, steps: k });
    }
    assert!(r.is_running());
    assert_eq!(r.submitted(), 10_000);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_step_past_the_timeout_is_a_typed_error_and_the_next_wait_gets_it() {
    let dev = device();
    let mut r = spin_resident(&dev, quick(Duration::from_millis(50)));
    r.submit(&SpinIn { value: 7, spin_ns: 300_000_000 }).unwrap();
    let start = Instant::now();
    let err = r.wait().unwrap_err();
    assert!(matches!(err, Error::Wait(WaitError::Timeout { seq: 1, seen: 0, .. })), "{err}");
    assert!(start.elapsed() < Duration::from_millis(250), "the wait ended near its timeout");
    // The step is still in flight: a later wait (or submit) waits for it again.
    let out = loop {
        match r.wait() {
            Ok(out) => break out,
            Err(Error::Wait(WaitError::Timeout { .. })) => continue,
            Err(e) => panic!("{e}"),
        }
    };
    assert_eq!(out, SpinOut { echo: 7, steps: 1 });
    assert_eq!(r.step(&SpinIn { value: 8, spin_ns: 0 }).unwrap(), SpinOut { echo: 8, steps: 2 });
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn drop_returns_while_a_step_outlasts_the_stop_timeout() {
    let dev = device();
    let options = ResidentOptions { stop_timeout: Duration::from_millis(100), ..quick(Duration::from_millis(20)) };
    let mut r = spin_resident(&dev, options);
    r.submit(&SpinIn { value: 1, spin_ns: 1_500_000_000 }).unwrap();
    assert!(r.wait().is_err());
    let start = Instant::now();
    drop(r); // stop times out: the memory is leaked, not freed under the kernel
    assert!(start.elapsed() < Duration::from_secs(1), "drop took {:?}", start.elapsed());
    // The kernel ends its step and exits on its own; the context is usable after it.
    dev.context().check_err().unwrap();
    let mut again = spin_resident(&dev, quick(Duration::from_secs(5)));
    assert_eq!(again.step(&SpinIn { value: 5, spin_ns: 0 }).unwrap(), SpinOut { echo: 5, steps: 1 });
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn submit_after_stop_is_refused() {
    let dev = device();
    let mut r = spin_resident(&dev, quick(Duration::from_secs(5)));
    r.step(&SpinIn { value: 1, spin_ns: 0 }).unwrap();
    r.stop().unwrap();
    assert!(!r.is_running());
    let err = r.submit(&SpinIn { value: 2, spin_ns: 0 }).unwrap_err();
    assert!(matches!(err, Error::Wait(WaitError::Stopped { faulted: false, .. })), "{err}");
    // The body's memory is readable once stopped: one step ran.
    assert_eq!(dev.download(r.body().expect("stopped")).unwrap(), vec![1u32]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn drop_with_a_step_in_flight_stops_the_kernel() {
    let dev = device();
    let mut r = spin_resident(&dev, quick(Duration::from_secs(5)));
    r.submit(&SpinIn { value: 1, spin_ns: 20_000_000 }).unwrap();
    // Let the kernel start and take the step (it spins for 20 ms from its start).
    std::thread::sleep(Duration::from_millis(5));
    let start = Instant::now();
    drop(r);
    // The drop waited for the rest of the step and the kernel's exit.
    assert!(start.elapsed() >= Duration::from_millis(8), "drop took {:?}", start.elapsed());
    // The device is usable: another resident runs.
    let mut again = spin_resident(&dev, quick(Duration::from_secs(5)));
    assert_eq!(again.step(&SpinIn { value: 2, spin_ns: 0 }).unwrap(), SpinOut { echo: 2, steps: 1 });
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn an_idle_exit_is_relaunched_by_the_next_submit() {
    let dev = device();
    let options = ResidentOptions { idle_exit: Duration::from_millis(5), ..quick(Duration::from_secs(5)) };
    let mut r = spin_resident(&dev, options);
    for k in 1..=5u32 {
        assert_eq!(r.step(&SpinIn { value: k, spin_ns: 0 }).unwrap(), SpinOut { echo: k, steps: k });
        std::thread::sleep(Duration::from_millis(30)); // the kernel exits meanwhile
    }
}

/// Graph A (the multi-node graph: three sinks) and Graph A fused, replayed with the done-word
/// wait, give the bits of the same graphs waited for by the stream, at every step.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_done_word_wait_gives_the_stream_waits_results() {
    let dev = device();
    let w = ModelWeights::init(7);
    let mut plain = Perception::new(&dev).unwrap();
    let mut spun = Perception::new(&dev).unwrap();
    let mut fused = PerceptionFused::new(&dev).unwrap();
    for g in [&mut plain, &mut spun] {
        g.load_weights(&w).unwrap();
    }
    fused.load_weights(&w).unwrap();
    spun.set_done_word_wait(Some(SpinPolicy::default())).unwrap();
    fused.set_done_word_wait(Some(SpinPolicy::default())).unwrap();
    plain.capture().unwrap();
    spun.capture().unwrap();
    fused.capture().unwrap();
    assert!(spun.done_word_armed() && fused.done_word_armed() && !plain.done_word_armed());
    assert_eq!(spun.graph().unwrap().node_count().unwrap(), plain.graph().unwrap().node_count().unwrap() + 1);
    let mut stream = BookStream::new(99);
    let mut snap = [0f32; SNAP_LEN];
    let (mut a, mut b, mut c) = ([0f32; 5], [0f32; 5], [0f32; 5]);
    for step in 0..2000 {
        let tick = stream.next_into(&mut snap);
        for g in [&mut plain, &mut spun] {
            g.write_snap(&snap).unwrap();
            g.write_dt(&[tick.dt]).unwrap();
            g.replay().unwrap();
        }
        fused.write_snap(&snap).unwrap();
        fused.write_dt(&[tick.dt]).unwrap();
        fused.replay().unwrap();
        plain.read_probs_into(&mut a).unwrap();
        spun.read_probs_into(&mut b).unwrap();
        fused.wait_replay().unwrap();
        fused.read_probs_into(&mut c).unwrap();
        assert_eq!(a.map(f32::to_bits), b.map(f32::to_bits), "step {step}");
        assert_eq!(a.map(f32::to_bits), c.map(f32::to_bits), "step {step}");
    }
    // Two replays in flight, then one wait: it waits for the second.
    for _ in 0..2 {
        spun.replay().unwrap();
    }
    spun.wait_replay().unwrap();
    // An eager run is waited for by the stream; timed replays outside `replay` keep the count.
    spun.run_eager().unwrap();
    spun.read_probs_into(&mut b).unwrap();
    spun.graph().unwrap().replay_timed().unwrap();
    spun.replay().unwrap();
    spun.read_probs_into(&mut b).unwrap();
    assert!(b.iter().all(|p| p.is_finite()));
    // Off again: the next capture has no done node.
    spun.set_done_word_wait(None).unwrap();
    spun.capture().unwrap();
    assert!(!spun.done_word_armed());
    assert_eq!(spun.graph().unwrap().node_count().unwrap(), plain.graph().unwrap().node_count().unwrap());
}

/// An eager run issued right behind a replay, with the done word on: the read after it waits
/// for the eager run (a stream synchronize), not only for the replay's count, so it gives what
/// the stream-waited twin gives, every time (it once returned when the replay's count landed,
/// while the eager kernel could still be writing the outputs).
#[test]
#[ignore = "needs a CUDA GPU"]
fn an_eager_run_behind_a_replay_is_waited_for_with_the_done_word_on() {
    let dev = device();
    let w = ModelWeights::init(11);
    let (mut spun, mut plain) = (PerceptionFused::new(&dev).unwrap(), PerceptionFused::new(&dev).unwrap());
    for g in [&mut spun, &mut plain] {
        g.load_weights(&w).unwrap();
    }
    spun.set_done_word_wait(Some(SpinPolicy::default())).unwrap();
    spun.capture().unwrap();
    plain.capture().unwrap();
    let mut stream = BookStream::new(13);
    let mut snap = [0f32; SNAP_LEN];
    let (mut a, mut b) = ([0f32; 5], [0f32; 5]);
    for step in 0..300 {
        let tick = stream.next_into(&mut snap);
        for g in [&mut spun, &mut plain] {
            g.write_snap(&snap).unwrap();
            g.write_dt(&[tick.dt]).unwrap();
            // The eager run reads the state the replay wrote: its outputs differ from the replay's.
            g.replay().unwrap();
            g.run_eager().unwrap();
        }
        plain.read_probs_into(&mut a).unwrap();
        spun.read_probs_into(&mut b).unwrap();
        assert_eq!(a.map(f32::to_bits), b.map(f32::to_bits), "step {step}");
        // And a replay after the eager run is again waited for by the word.
        spun.replay().unwrap();
        plain.replay().unwrap();
        plain.read_probs_into(&mut a).unwrap();
        spun.read_probs_into(&mut b).unwrap();
        assert_eq!(a.map(f32::to_bits), b.map(f32::to_bits), "step {step}, replay after eager");
    }
}

/// A stop that timed out (the step still running) and a later stop that succeeds: the kernel
/// has exited, so the body's memory is handed out (it stayed hidden after the first stop).
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_stop_that_timed_out_then_succeeds_hands_out_the_body() {
    let dev = device();
    let options = ResidentOptions { stop_timeout: Duration::from_millis(50), ..quick(Duration::from_millis(10)) };
    let mut r = spin_resident(&dev, options);
    r.submit(&SpinIn { value: 3, spin_ns: 300_000_000 }).unwrap();
    std::thread::sleep(Duration::from_millis(5));
    let err = r.stop().unwrap_err();
    assert!(matches!(err, Error::Wait(WaitError::Timeout { .. })), "{err}");
    assert!(r.body().is_none(), "the kernel may still run: no body");
    let start = Instant::now();
    loop {
        match r.stop() {
            Ok(()) => break,
            Err(Error::Wait(WaitError::Timeout { .. })) if start.elapsed() < Duration::from_secs(5) => continue,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(!r.is_running());
    // The step ran to its end before the kernel saw the stop: one step counted.
    assert_eq!(dev.download(r.body().expect("stopped and exited")).unwrap(), vec![1u32]);
}

/// 100 000 replays of the fused graph with the done-word wait, each read at once: the wait
/// never looks for a count the device does not publish. (The target count was once read after
/// the launch; a replay that had already ended by then was counted twice, and the wait failed
/// with `NotPublished` after about a thousand steps in the bench and the example.)
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_done_word_wait_holds_over_many_quick_replays() {
    let dev = device();
    let mut fused = PerceptionFused::new(&dev).unwrap();
    fused.load_weights(&ModelWeights::init(7)).unwrap();
    fused.set_done_word_wait(Some(SpinPolicy::default())).unwrap();
    fused.capture().unwrap();
    let mut stream = BookStream::new(5);
    let mut snap = [0f32; SNAP_LEN];
    let mut probs = [0f32; 5];
    for step in 0..100_000 {
        let tick = stream.next_into(&mut snap);
        fused.write_snap(&snap).unwrap();
        fused.write_dt(&[tick.dt]).unwrap();
        fused.replay().unwrap();
        if let Err(e) = fused.read_probs_into(&mut probs) {
            panic!("step {step}: {e}");
        }
        assert!(probs.iter().all(|p| (0.0..=1.0).contains(p)), "step {step}: {probs:?}");
    }
}
