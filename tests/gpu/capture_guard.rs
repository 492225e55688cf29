//! kgraph's stream work is recorded only into captures kgraph began (docs/safety.md, "Stream
//! captures"). Safe code cannot reach cudarc's capture API on kgraph's stream (`Stream::cuda` is
//! `unsafe`); code that begins a capture there anyway (through it, or the driver API) would
//! otherwise record checked launches and graph replays into a graph kgraph knows nothing of,
//! replayable after the buffers are freed: they are refused with a typed error and record
//! nothing (not even a timed replay's events). Inside kgraph's own capture, a launch another thread issues onto the
//! capture stream is refused too. Kernel: `tests/kernels/test_args.cu`'s `ka_reverse`.

use kgraph::cudarc::driver::{result, sys};
use kgraph::{Error, Graph, GraphError, LaunchConfig};

use super::common::device;

#[kgraph::kernels]
mod checked {
    /// `y[n-1-i] = x[i]` for `i < n`.
    #[kernel("test_args.cu", unsafe(extents))]
    pub fn ka_reverse(x: &[f32; n], y: &mut [f32; n], n: i32);
}

const N: usize = 256;
const CFG: LaunchConfig = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };

fn assert_refused(what: &str, outcome: kgraph::Result<()>) {
    match outcome {
        Err(Error::Graph(GraphError::Failed { detail, .. })) if detail.contains("kgraph did not begin") => {}
        other => panic!("{what}: expected a refusal naming the foreign capture, got {other:?}"),
    }
}

fn input() -> (Vec<f32>, Vec<f32>) {
    let x: Vec<f32> = (0..N).map(|i| i as f32 * 0.5 + 1.0).collect();
    let reversed = x.iter().rev().copied().collect();
    (x, reversed)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn work_for_a_capture_kgraph_did_not_begin_is_refused_and_records_nothing() {
    let dev = device();
    let k = checked::Kernels::load(&dev).unwrap();
    let (x, reversed) = input();
    let x = dev.upload(&x).unwrap();
    let mut y = dev.alloc_zeros::<f32>(N).unwrap();
    // SAFETY: `x` and `y` are declared before `g` (outlive it) and never reallocated.
    let g = unsafe { Graph::capture(dev.stream(), |s| k.ka_reverse.launch(s, CFG, &x, &mut y, N as i32)) }.unwrap();
    let s = dev.stream();
    // cudarc's capture API on kgraph's stream: a capture kgraph did not begin.
    // SAFETY: breaks `Stream::cuda`'s contract on purpose, to show kgraph's guard refusing
    // what would be recorded; the capture is ended below before any other use of the stream.
    unsafe { s.cuda() }.begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL).unwrap();
    let launched = k.ka_reverse.launch(s, CFG, &x, &mut y, N as i32);
    let replayed = g.replay();
    let timed = g.replay_timed().map(drop);
    let allocated = dev.alloc_zeros::<f32>(N).map(drop);
    // SAFETY: the stream is capturing, begun on this thread just above.
    let recorded = unsafe { result::stream::end_capture(s.cu_stream()) }.unwrap();
    let mut nodes = 0usize;
    if !recorded.is_null() {
        // SAFETY: `recorded` is a live graph (the capture ended without error); a null node
        // array asks for the count only.
        let counted = unsafe { sys::cuGraphGetNodes(recorded, std::ptr::null_mut(), &mut nodes) }.result();
        // SAFETY: `recorded` is ours, destroyed once.
        unsafe { result::graph::destroy(recorded) }.unwrap();
        counted.unwrap();
    }
    assert_refused("a checked launch into cudarc's capture", launched);
    assert_refused("a graph replay into cudarc's capture", replayed);
    assert_refused("a timed replay into cudarc's capture (its events not recorded either)", timed);
    assert!(
        matches!(allocated, Err(Error::Graph(GraphError::Failed { .. }))),
        "alloc_zeros under capture: {allocated:?}"
    );
    assert_eq!(nodes, 0, "nothing was recorded into the foreign capture");
    assert_eq!(dev.download(&y).unwrap(), vec![0.0; N], "the refused work never ran");
    // After the capture the same launch and replay run.
    g.replay().unwrap();
    assert_eq!(dev.download(&y).unwrap(), reversed);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn inside_kgraphs_capture_another_threads_launch_is_refused() {
    let dev = device();
    let k = checked::Kernels::load(&dev).unwrap();
    let (x, reversed) = input();
    let x = dev.upload(&x).unwrap();
    let (mut mine, mut theirs) = (dev.alloc_zeros::<f32>(N).unwrap(), dev.alloc_zeros::<f32>(N).unwrap());
    // SAFETY: the three slices are declared before `g` (outlive it) and never reallocated.
    let g = unsafe {
        Graph::capture(dev.stream(), |s| {
            let other = std::thread::scope(|t| {
                t.spawn(|| k.ka_reverse.launch(s, CFG, &x, &mut theirs, N as i32)).join().unwrap()
            });
            assert_refused("another thread's launch into kgraph's capture", other);
            k.ka_reverse.launch(s, CFG, &x, &mut mine, N as i32)
        })
    }
    .unwrap();
    assert_eq!(g.node_count().unwrap(), 1, "only the capturing thread's launch was recorded");
    g.replay().unwrap();
    assert_eq!(dev.download(&mine).unwrap(), reversed);
    assert_eq!(dev.download(&theirs).unwrap(), vec![0.0; N], "the refused launch never ran");
}
