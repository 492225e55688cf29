//! Graph capture and replay on slices allocated through `Device` (event tracking off).

use std::panic::{catch_unwind, AssertUnwindSafe};

use kgraph::cudarc::driver::sys::CUstreamCaptureStatus;
use kgraph::{Device, DeviceBuffer, Error, Graph, GraphError, Result, Stream};

use super::{assert_same_bits, splitmix, TestKernels};

/// `n` floats in [-2, 2), deterministic.
fn inputs(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed;
    (0..n).map(|_| (splitmix(&mut state) >> 40) as f32 / (1u64 << 24) as f32 * 4.0 - 2.0).collect()
}

/// Three buffers of one length, uploaded through the device.
struct Buffers {
    x: DeviceBuffer<f32>,
    y: DeviceBuffer<f32>,
    z: DeviceBuffer<f32>,
}

impl Buffers {
    fn new(dev: &Device, n: usize) -> Self {
        Buffers {
            x: dev.upload(&inputs(n, 1)).unwrap(),
            y: dev.upload(&inputs(n, 2)).unwrap(),
            z: dev.alloc_zeros(n).unwrap(),
        }
    }

    /// A stateful sequence of dependent launches (each reads what the previous wrote).
    fn step(&mut self, k: &TestKernels, s: &Stream) -> Result<()> {
        k.affine(s, &mut self.x, 1.0001, 0.25)?;
        k.mix(s, &self.x, &self.y, &mut self.z)?;
        k.affine(s, &mut self.z, -0.5, 1.0)?;
        k.mix(s, &self.z, &self.x, &mut self.y)?;
        Ok(())
    }

    fn download(&self, dev: &Device) -> [Vec<f32>; 3] {
        [dev.download(&self.x).unwrap(), dev.download(&self.y).unwrap(), dev.download(&self.z).unwrap()]
    }
}

fn capture_status(s: &Stream) -> CUstreamCaptureStatus {
    s.capture_status().unwrap()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn captured_graph_on_device_slices_replays_bitwise_like_eager_execution() {
    let dev = super::super::common::device();
    let k = TestKernels::load(&dev);
    let n = 4099;
    let rounds = 3;
    let mut eager = Buffers::new(&dev, n);
    for _ in 0..rounds {
        eager.step(&k, dev.stream()).unwrap();
    }
    let want = eager.download(&dev);

    let mut graphed = Buffers::new(&dev, n);
    let before = graphed.download(&dev);
    // SAFETY: `graphed` is declared before `graph`, so it outlives it, and is never reallocated;
    // the host reads it only through `download`, ordered on the stream after each replay.
    let graph = unsafe { Graph::capture(dev.stream(), |s| graphed.step(&k, s)) }.unwrap();
    assert_eq!(graph.node_count().unwrap(), 4);
    assert!(!graph.is_empty());
    let after_capture = graphed.download(&dev);
    for (b, a) in before.iter().zip(&after_capture) {
        assert_same_bits("capture must not execute the work", a, b);
    }
    graph.upload().unwrap();
    for _ in 0..rounds - 1 {
        graph.replay().unwrap();
    }
    let ms = graph.replay_timed().unwrap();
    assert!(ms.is_finite() && ms > 0.0, "replay_timed gave {ms} ms");
    let got = graphed.download(&dev);
    for (name, (g, w)) in ["x", "y", "z"].iter().zip(got.iter().zip(&want)) {
        assert_same_bits(&format!("graph vs eager, buffer {name}"), g, w);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn failing_capture_closure_leaves_the_stream_usable() {
    let dev = super::super::common::device();
    let k = TestKernels::load(&dev);
    let s = dev.stream();
    let initial = inputs(1000, 5);
    let mut buf = dev.upload(&initial).unwrap();
    let mut out = dev.alloc_zeros::<u32>(3000).unwrap();

    // 1. The closure returns Err after a launch: that error comes back, the capture is gone.
    // SAFETY: the capture fails, so no graph keeps `buf`'s address.
    let failed = unsafe {
        Graph::capture(s, |s| {
            k.affine(s, &mut buf, 2.0, 1.0)?;
            Err(Error::Graph(GraphError::Failed { op: "test closure".into(), detail: "deliberate failure".into() }))
        })
    };
    match failed {
        Err(Error::Graph(GraphError::Failed { op, .. })) => assert_eq!(op, "test closure"),
        other => panic!("expected the closure's error, got {other:?}"),
    }
    assert_eq!(capture_status(s), CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE);
    k.iota(s, &mut out, 17).unwrap();
    let want: Vec<u32> = (0..3000).map(|i| 17 + i).collect();
    assert_eq!(dev.download(&out).unwrap(), want, "eager launch after a failed capture");
    assert_same_bits("the aborted capture's launch never ran", &dev.download(&buf).unwrap(), &initial);

    // 2. The closure panics: the panic propagates, the stream is out of capture mode.
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the closure panics, so no graph is made.
        unsafe {
            Graph::capture(s, |s| {
                k.affine(s, &mut buf, 2.0, 1.0)?;
                panic!("deliberate panic inside capture");
            })
        }
    }));
    assert!(panicked.is_err(), "the closure's panic must propagate");
    assert_eq!(capture_status(s), CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE);
    k.iota(s, &mut out, 40_000).unwrap();
    let want: Vec<u32> = (0..3000).map(|i| 40_000 + i).collect();
    assert_eq!(dev.download(&out).unwrap(), want, "eager launch after a panicking capture");

    // 3. The closure invalidates the capture (a stream sync) but returns Ok: a typed error.
    // SAFETY: the capture is invalidated, so no graph keeps `buf`'s address.
    let invalidated = unsafe {
        Graph::capture(s, |s| {
            k.affine(s, &mut buf, 2.0, 1.0)?;
            let _ = s.synchronize();
            Ok(())
        })
    };
    match invalidated {
        Err(Error::Graph(GraphError::Failed { op, .. })) => assert_eq!(op, "end capture"),
        other => panic!("expected an invalidated capture, got {other:?}"),
    }
    assert_eq!(capture_status(s), CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE);
    k.iota(s, &mut out, 7).unwrap();
    let want: Vec<u32> = (0..3000).map(|i| 7 + i).collect();
    assert_eq!(dev.download(&out).unwrap(), want, "eager launch after an invalidated capture");
    assert_same_bits("no aborted launch ran", &dev.download(&buf).unwrap(), &initial);

    // 4. A later capture works.
    // SAFETY: `out` is declared before `graph` (outlives it) and read only by `download` after
    // the replay, in stream order.
    let graph = unsafe { Graph::capture(s, |s| k.iota(s, &mut out, 99)) }.unwrap();
    graph.replay().unwrap();
    let want: Vec<u32> = (0..3000).map(|i| 99 + i).collect();
    assert_eq!(dev.download(&out).unwrap(), want);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn eager_calls_inside_a_capture_are_refused_without_touching_the_graph() {
    let dev = super::super::common::device();
    let k = TestKernels::load(&dev);
    let mut out = dev.alloc_zeros::<u32>(256).unwrap();
    // SAFETY: `out` is declared before `graph` (outlives it) and read only by `download` after
    // the replay, in stream order; the nested capture is refused and captures nothing.
    let graph = unsafe {
        Graph::capture(dev.stream(), |s| {
            assert!(
                matches!(dev.upload(&[1.0f32, 2.0]), Err(Error::Graph(GraphError::Failed { .. }))),
                "upload during capture"
            );
            assert!(
                matches!(dev.download(&out), Err(Error::Graph(GraphError::Failed { .. }))),
                "download during capture"
            );
            match Graph::capture(s, |_| Ok(())) {
                Err(Error::Graph(GraphError::Failed { op, .. })) => assert_eq!(op, "begin capture"),
                other => panic!("nested capture must be refused, got {other:?}"),
            }
            k.iota(s, &mut out, 5)
        })
    }
    .unwrap();
    assert_eq!(graph.node_count().unwrap(), 1, "the refused calls added no nodes");
    graph.replay().unwrap();
    let want: Vec<u32> = (0..256).map(|i| 5 + i).collect();
    assert_eq!(dev.download(&out).unwrap(), want);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn empty_graph_cannot_be_replayed() {
    let dev = super::super::common::device();
    // SAFETY: the capture touches no memory.
    let graph = unsafe { Graph::capture(dev.stream(), |_| Ok(())) }.unwrap();
    assert!(graph.is_empty());
    assert_eq!(graph.node_count().unwrap(), 0);
    assert!(graph.edges().unwrap().is_empty());
    for (op, r) in
        [("replay", graph.replay()), ("upload", graph.upload()), ("replay_timed", graph.replay_timed().map(drop))]
    {
        match r {
            Err(Error::Graph(GraphError::Failed { op: got, .. })) => assert_eq!(got, op),
            other => panic!("{op} of an empty graph must fail, got {other:?}"),
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn hundred_thousand_replays_leave_device_memory_unchanged() {
    const REPLAYS: usize = 100_000;
    let dev = super::super::common::device();
    let k = TestKernels::load(&dev);
    // 0.5 is a fixed point of both x -> 0.5x + 0.25 and x -> 2x - 0.5, exactly in f32.
    let mut x = dev.upload(&vec![0.5f32; 1024]).unwrap();
    // SAFETY: `x` is declared before `graph` (outlives it), never reallocated, and read only by
    // `download` after the replays, in stream order.
    let graph = unsafe {
        Graph::capture(dev.stream(), |s| {
            k.affine(s, &mut x, 0.5, 0.25)?;
            k.affine(s, &mut x, 2.0, -0.5)
        })
    }
    .unwrap();
    graph.upload().unwrap();
    graph.replay().unwrap();
    dev.synchronize().unwrap();
    let (free_before, _) = dev.mem_info().unwrap();
    for _ in 0..REPLAYS {
        graph.replay().unwrap();
    }
    dev.synchronize().unwrap();
    let (free_after, _) = dev.mem_info().unwrap();
    // Any per-replay allocation (>= 256 bytes each) would cost >= 25 MB over 100k replays;
    // the 4 MiB allowance only absorbs the driver's page-granular bookkeeping.
    assert!(
        free_after + (4 << 20) >= free_before,
        "free device memory fell from {free_before} to {free_after} bytes over {REPLAYS} replays"
    );
    assert!(dev.download(&x).unwrap().iter().all(|&v| v == 0.5), "the fixed point must survive every replay");
}

/// (in-degree, out-degree) per node.
fn degrees(nodes: usize, edges: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut d = vec![(0, 0); nodes];
    for &(from, to) in edges {
        assert!(from < nodes && to < nodes && from != to, "bad edge {from}->{to}");
        d[from].1 += 1;
        d[to].0 += 1;
    }
    d
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn chain_of_launches_captures_as_a_path() {
    let dev = super::super::common::device();
    let k = TestKernels::load(&dev);
    let mut x = dev.upload(&inputs(512, 3)).unwrap();
    // SAFETY: `x` is declared before `graph` (outlives it); the graph is never replayed.
    let graph = unsafe {
        Graph::capture(dev.stream(), |s| {
            k.affine(s, &mut x, 1.5, 0.0)?;
            k.affine(s, &mut x, 0.5, 1.0)?;
            k.affine(s, &mut x, -1.0, 0.0)
        })
    }
    .unwrap();
    let edges = graph.edges().unwrap();
    let n = graph.node_count().unwrap();
    assert_eq!((n, edges.len()), (3, 2));
    let mut d = degrees(n, &edges);
    d.sort();
    assert_eq!(d, vec![(0, 1), (1, 0), (1, 1)], "a path: one source, one middle, one sink");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn fork_join_across_streams_captures_as_a_diamond_and_matches_eager() {
    let dev = super::super::common::device();
    let k = TestKernels::load(&dev);
    // SAFETY: the side stream is used only inside the capture below, forked from and joined
    // back into the main stream with `fork`/`join`, so every use of `gb` on it is ordered
    // between the main stream's allocation of `gb` and its free (both on the main stream).
    let side = unsafe { dev.new_stream() }.unwrap();
    // SAFETY: cudarc's context only makes the two events of the fork and the join.
    let ctx = unsafe { dev.context().cuda() };
    let (fork, join) = (ctx.new_event(None).unwrap(), ctx.new_event(None).unwrap());
    let n = 2048;
    let make =
        || (dev.upload(&inputs(n, 8)).unwrap(), dev.upload(&inputs(n, 9)).unwrap(), dev.alloc_zeros::<f32>(n).unwrap());

    let (mut a, mut b, mut c) = make();
    k.affine(dev.stream(), &mut a, 0.75, 0.125).unwrap();
    k.affine(dev.stream(), &mut b, -1.25, 0.5).unwrap();
    k.affine(dev.stream(), &mut a, 1.0, 0.0).unwrap();
    k.mix(dev.stream(), &a, &b, &mut c).unwrap();
    let want = dev.download(&c).unwrap();

    let (mut ga, mut gb, mut gc) = make();
    // SAFETY: `ga`, `gb`, `gc` are declared before `graph` (outlive it) and read only by
    // `download` after the replay, in stream order; the side branch is joined back with events.
    let graph = unsafe {
        Graph::capture(dev.stream(), |s| {
            k.affine(s, &mut ga, 0.75, 0.125)?; // source
                                                // cudarc's streams record and wait for the fork and join events (the SAFETY above).
            let (main, branch) = (s.cuda(), side.cuda());
            fork.record(main).map_err(|e| Error::driver("record fork", e))?;
            branch.wait(&fork).map_err(|e| Error::driver("side waits", e))?;
            k.affine(&side, &mut gb, -1.25, 0.5)?; // branch on the side stream
            k.affine(s, &mut ga, 1.0, 0.0)?; // branch on the main stream
            join.record(branch).map_err(|e| Error::driver("record join", e))?;
            main.wait(&join).map_err(|e| Error::driver("main waits", e))?;
            k.mix(s, &ga, &gb, &mut gc) // sink
        })
    }
    .unwrap();
    let edges = graph.edges().unwrap();
    let n_nodes = graph.node_count().unwrap();
    assert_eq!((n_nodes, edges.len()), (4, 4));
    let d = degrees(n_nodes, &edges);
    let source = d.iter().position(|&x| x == (0, 2)).expect("one source with two successors");
    let sink = d.iter().position(|&x| x == (2, 0)).expect("one sink with two predecessors");
    for &(from, to) in &edges {
        assert!(from == source || to == sink, "edge {from}->{to} bypasses the diamond");
        assert!(!(from == source && to == sink), "no direct source->sink edge");
    }
    graph.replay().unwrap();
    assert_same_bits("diamond graph vs eager", &dev.download(&gc).unwrap(), &want);
}

/// What the host node of `host_nodes_run_once_per_launch_after_their_dependencies` saw: how
/// often it ran, and the bits of the first float it read from mapped memory.
struct HostSeen {
    calls: std::sync::atomic::AtomicU32,
    first_bits: std::sync::atomic::AtomicU32,
    src: *const f32,
}

unsafe extern "C" fn record_first(data: *mut std::ffi::c_void) {
    use std::sync::atomic::Ordering::SeqCst;
    // SAFETY: `data` is the test's `HostSeen`, alive for every launch; `src` points into the
    // mapped buffer that the node's dependency (a copy node) finished writing.
    let seen = unsafe { &*(data as *const HostSeen) };
    // SAFETY: as above; volatile because the device wrote the memory.
    let v = unsafe { std::ptr::read_volatile(seen.src) };
    seen.first_bits.store(v.to_bits(), SeqCst);
    seen.calls.fetch_add(1, SeqCst);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn host_nodes_run_once_per_launch_after_their_dependencies() {
    use kgraph::expert::{EdgeKind, GraphBuilder};
    use kgraph::{DeviceIn, MappedBuffer};
    use std::sync::atomic::Ordering::SeqCst;
    let dev = super::super::common::device();
    let mut x = dev.upload(&[0.0f32; 64]).unwrap();
    let mut mapped = MappedBuffer::<f32>::new(&dev, 64).unwrap();
    // SAFETY: only the pointer is kept; the host reads it in the callback, after the copy.
    let src = unsafe { mapped.as_slice_unsynchronized() }.as_ptr();
    let seen = HostSeen { calls: 0.into(), first_bits: 0.into(), src };
    let mut b = GraphBuilder::new(dev.context()).unwrap();
    // SAFETY: `x` and `mapped` hold 64 floats and outlive the graph (declared before it).
    let copy = unsafe { b.add_memcpy(&[], mapped.device_ptr_mut().addr(), x.device_addr(), 256) }.unwrap();
    let data = &seen as *const HostSeen as *mut std::ffi::c_void;
    // A programmatic edge must end at a kernel: refused, nothing added.
    // SAFETY: `record_first` makes no CUDA call and does not unwind; `seen` outlives the graph.
    let refused = unsafe { b.add_host(&[(copy, EdgeKind::Programmatic)], record_first, data) };
    assert!(matches!(refused, Err(Error::Graph(GraphError::Failed { .. }))), "{refused:?}");
    // SAFETY: as above.
    unsafe { b.add_host(&[(copy, EdgeKind::Full)], record_first, data) }.unwrap();
    assert_eq!(b.node_count(), 2);
    let g = b.instantiate(dev.stream()).unwrap();
    for (i, v) in [1.5f32, -2.25, 7.0].into_iter().enumerate() {
        dev.upload_into(&[v; 64], &mut x).unwrap();
        g.replay().unwrap();
        dev.synchronize().unwrap();
        assert_eq!(seen.calls.load(SeqCst), i as u32 + 1, "one call per launch");
        assert_eq!(f32::from_bits(seen.first_bits.load(SeqCst)), v, "the callback ran after the copy landed");
    }
    drop(g);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn builders_refuse_nodes_and_conditions_of_other_builders() {
    use kgraph::expert::{Conditional, EdgeKind, GraphBuilder};
    let dev = super::super::common::device();
    let x = dev.alloc_zeros::<u32>(16).unwrap();
    let mut first = GraphBuilder::new(dev.context()).unwrap();
    // SAFETY: `x` holds 16 u32s and outlives both builders (declared before them).
    let node = unsafe { first.add_memset(&[], kgraph::DeviceIn::<u32>::device_addr(&x), 7, 4, 16) }.unwrap();
    let cond = first.create_condition(false).unwrap();
    let mut second = GraphBuilder::new(dev.context()).unwrap();
    // A node and a condition of `first` are refused by `second`, and so is a node of a
    // builder that no longer exists (its graph handle would dangle).
    // (`.map(|_| ())` drops the body builder a success would hold.)
    let foreign = second.add_conditional(&[(node, EdgeKind::Full)], Conditional::If, cond).map(|_| ());
    assert!(
        matches!(&foreign, Err(Error::Graph(GraphError::Failed { detail, .. })) if detail.contains("another graph builder")),
        "{foreign:?}"
    );
    let own = second.create_condition(false).unwrap();
    let foreign_cond = second.add_conditional(&[], Conditional::If, cond).map(|_| ());
    assert!(
        matches!(&foreign_cond, Err(Error::Graph(GraphError::Failed { detail, .. })) if detail.contains("create_condition")),
        "{foreign_cond:?}"
    );
    drop(first);
    // SAFETY: as above.
    let dangling =
        unsafe { second.add_memset(&[(node, EdgeKind::Full)], kgraph::DeviceIn::<u32>::device_addr(&x), 1, 4, 16) };
    assert!(matches!(dangling, Err(Error::Graph(GraphError::Failed { .. }))), "{dangling:?}");
    assert_eq!(second.node_count(), 0, "nothing was added");
    // Its own condition is accepted.
    let (_, body) = second.add_conditional(&[], Conditional::If, own).unwrap();
    drop(body);
    assert_eq!(second.node_count(), 1);
}
