//! Stream captures while another thread launches on the device stream: `capture_streamed` and
//! the collective nodes' captures (`Communicator::capture_graph`) record on streams of their
//! own, so the other thread's launches run when it issues them and none lands in a graph.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use kgraph::nccl::Bootstrap;
use kgraph::{Device, LaunchConfig};

use super::common::{device, random};
use crate::graph::kernels::TgAccumulate;

kgraph::graph!("graphs/test_branches.toml");
kgraph::graph!("graphs/test_collective.toml");

/// Runs `capture` `rounds` times while a second thread adds 1 to a counter on the device stream
/// as fast as it can; returns how many launches that thread made and the counter's final value
/// (equal when no launch was recorded into a graph instead of running). The rounds start once
/// the thread has launched, and the thread must launch again while they run.
fn with_a_launching_thread(dev: &Device, rounds: usize, mut capture: impl FnMut(usize)) -> (usize, f32) {
    /// Stops the launching thread when dropped, so a failed round (a panic) cannot leave the
    /// scope waiting for a thread that never stops.
    struct StopOnDrop<'a>(&'a AtomicBool);
    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    // The counter is an f32: exact up to 2^24, so the thread stops launching well before.
    const MAX_LAUNCHES: usize = 1 << 23;
    const QUEUE_DEPTH: usize = 64;
    let stop = AtomicBool::new(false);
    let launched = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let stopper = StopOnDrop(&stop);
        let other = s.spawn(|| {
            let dev = dev.clone();
            let add = TgAccumulate::new(&dev).unwrap();
            let one = dev.upload(&[1.0f32]).unwrap();
            let mut counter = dev.alloc_zeros::<f32>(1).unwrap();
            let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
            let mut launches = 0usize;
            while !stop.load(Ordering::Relaxed) && launches < MAX_LAUNCHES {
                add.launch(dev.stream(), cfg, &mut counter, &one, 1).unwrap();
                launches += 1;
                launched.store(launches, Ordering::Relaxed);
                // A bounded queue: the rounds' syncs wait for at most this many launches, which
                // keeps the test short under compute-sanitizer (each launch is slow there).
                if launches % QUEUE_DEPTH == 0 {
                    dev.synchronize().unwrap();
                }
            }
            dev.synchronize().unwrap();
            (launches, dev.download(&counter).unwrap()[0])
        });
        while launched.load(Ordering::Relaxed) == 0 && !other.is_finished() {
            std::hint::spin_loop();
        }
        let before = launched.load(Ordering::Relaxed);
        for round in 0..rounds {
            capture(round);
        }
        let after = launched.load(Ordering::Relaxed);
        drop(stopper);
        let result = other.join().unwrap();
        assert!(before > 0 && after > before, "the other thread launched while the captures ran ({before} -> {after})");
        result
    })
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_streamed_capture_records_no_launch_of_another_thread() {
    let dev = device();
    let x = random(TestBranches::N, 71);
    let mut eager = TestBranches::new(&dev).unwrap();
    eager.upload_x(&x).unwrap();
    eager.run_eager().unwrap();
    let want = eager.download_out().unwrap();
    // One struct captured 40 times (a struct per round would spend the rounds, under
    // compute-sanitizer, loading modules rather than capturing).
    let mut g = TestBranches::new(&dev).unwrap();
    g.upload_x(&x).unwrap();
    let (launches, counter) = with_a_launching_thread(&dev, 40, |round| {
        g.capture_streamed().unwrap();
        let count = g.graph().unwrap().node_count().unwrap();
        assert_eq!(count, TestBranches::NODES.len(), "round {round}: one graph node per spec node, no other");
        g.replay().unwrap();
        assert_eq!(g.download_out().unwrap(), want, "round {round}: the replay equals run_eager");
    });
    assert_eq!(counter, launches as f32, "every launch of the other thread ran, none was captured");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn collective_captures_record_no_launch_of_another_thread() {
    let dev = device();
    let x = random(TestCollective::N, 72);
    let mut g = TestCollective::new(&dev, &Bootstrap::single()).unwrap();
    g.upload_x(&x).unwrap();
    let (launches, counter) = with_a_launching_thread(&dev, 20, |round| {
        // `capture` records each collective node by a capture on a stream of its own;
        // `capture_streamed` records the whole graph so.
        g.capture().unwrap();
        g.replay().unwrap();
        assert_eq!(g.download_gathered().unwrap(), x, "round {round}: built graph");
        g.capture_streamed().unwrap();
        g.replay().unwrap();
        assert_eq!(g.download_gathered().unwrap(), x, "round {round}: streamed graph");
    });
    assert_eq!(counter, launches as f32, "every launch of the other thread ran, none was captured");
}
