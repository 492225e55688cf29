//! Stream captures while another thread launches on the device stream: `capture_streamed` and
//! the collective nodes' captures (`Communicator::capture_graph`) record on streams of their
//! own, so the other thread's launches run when it issues them and none lands in a graph.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use kgraph::nccl::Bootstrap;
use kgraph::{Device, LaunchConfig};

use super::common::{device, random};
use crate::graph::kernels::TgAccumulate;

kgraph::graph!("tests/graphs/test_branches.toml");
kgraph::graph!("tests/graphs/test_collective.toml");

/// Runs `round` `rounds` times while a second thread adds 1 to a counter on the device stream
/// as fast as it can; returns how many launches that thread made and the counter's final value.
/// The two are equal when no launch was recorded into a graph instead of running, provided each
/// round replays what it captured more than once (a recorded launch then adds 2 or more). The
/// rounds start once the thread has launched; each gets `during`, which runs its argument (the
/// capture) and says whether the thread launched meanwhile, and that must hold in some round.
fn with_a_launching_thread(
    dev: &Device,
    rounds: usize,
    mut round: impl FnMut(usize, &mut dyn FnMut(&mut dyn FnMut())),
) -> (usize, f32) {
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
        let mut overlapped = 0usize;
        for r in 0..rounds {
            round(r, &mut |capture: &mut dyn FnMut()| {
                let before = launched.load(Ordering::Relaxed);
                capture();
                overlapped += usize::from(launched.load(Ordering::Relaxed) > before);
            });
        }
        drop(stopper);
        let result = other.join().unwrap();
        assert!(overlapped > 0, "the other thread launched during none of the {rounds} captures");
        result
    })
}

/// Two inputs, alternated by round, so that each round's output comes from that round's replay.
fn two_inputs(len: usize, seed: u64) -> [Vec<f32>; 2] {
    [random(len, seed), random(len, seed + 100)]
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_streamed_capture_records_no_launch_of_another_thread() {
    let dev = device();
    let xs = two_inputs(TestBranches::N, 71);
    let mut eager = TestBranches::new(&dev).unwrap();
    let want: Vec<Vec<f32>> = xs
        .iter()
        .map(|x| {
            eager.upload_x(x).unwrap();
            eager.run_eager().unwrap();
            eager.download_out().unwrap()
        })
        .collect();
    // One struct captured 40 times (a struct per round would spend the rounds, under
    // compute-sanitizer, loading modules rather than capturing).
    let mut g = TestBranches::new(&dev).unwrap();
    let (launches, counter) = with_a_launching_thread(&dev, 40, |round, during| {
        during(&mut || g.capture_streamed().unwrap());
        let count = g.graph().unwrap().node_count().unwrap();
        assert_eq!(count, TestBranches::NODES.len(), "round {round}: one graph node per spec node, no other");
        g.upload_x(&xs[round % 2]).unwrap();
        g.replay().unwrap();
        g.replay().unwrap();
        assert_eq!(g.download_out().unwrap(), want[round % 2], "round {round}: the replay equals run_eager");
    });
    assert_eq!(counter, launches as f32, "every launch of the other thread ran once, none was captured");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn collective_captures_record_no_launch_of_another_thread() {
    let dev = device();
    let xs = two_inputs(TestCollective::N, 72);
    let mut g = TestCollective::new(&dev, &Bootstrap::single()).unwrap();
    let (launches, counter) = with_a_launching_thread(&dev, 20, |round, during| {
        // `capture` records each collective node by a capture on the communicator's stream;
        // `capture_streamed` records the whole graph on a stream of the struct's.
        for (streamed, x) in [(false, &xs[round % 2]), (true, &xs[(round + 1) % 2])] {
            if streamed {
                during(&mut || g.capture_streamed().unwrap());
            } else {
                during(&mut || g.capture().unwrap());
            }
            g.upload_x(x).unwrap();
            g.replay().unwrap();
            g.replay().unwrap();
            assert_eq!(&g.download_gathered().unwrap(), x, "round {round}: streamed {streamed}");
        }
    });
    assert_eq!(counter, launches as f32, "every launch of the other thread ran once, none was captured");
}
