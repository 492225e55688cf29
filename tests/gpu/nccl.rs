//! NCCL on one GPU: a one-rank communicator, on which all-reduce and broadcast are identities
//! and reduce-scatter and all-gather copies, eagerly and captured into CUDA graphs. Needs a
//! GPU and NCCL (`libnccl.so.2`, or `KGRAPH_NCCL_LIB`); the two-rank checks are the
//! `nccl_allreduce` example under `scripts/launch-ranks`.

use kgraph::cudarc::driver::sys;
use kgraph::nccl::{Bootstrap, Collective, Communicator, DataType, NcclType, ReduceOp};
use kgraph::{bf16, f16, Device, Error, Graph, GraphError, LaunchError, MemoryError, NcclError, Pod};

use crate::common::device;

fn single(dev: &Device) -> Communicator {
    Communicator::single(dev).unwrap_or_else(|e| panic!("one-rank communicator: {e}"))
}

/// Every collective on one rank, for one element type: identities and copies.
fn one_rank_identities<T: NcclType + PartialEq + std::fmt::Debug>(values: Vec<T>) {
    let dev = device();
    let comm = single(&dev);
    assert_eq!((comm.rank(), comm.world_size()), (0, 1));
    let send = dev.upload(&values).unwrap();
    for op in [ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod] {
        // Measured with NCCL 2.28.3 on one H200: a one-rank ncclAvg of an odd number of 8-byte
        // elements (f64, 4099) leaves the last element unwritten; kgraph passes ncclAvg straight
        // through, so that case is checked on an even length (docs/multi-gpu.md, known issues).
        let values = if op == ReduceOp::Avg && T::DATA_TYPE.size_bytes() == 8 && values.len() % 2 == 1 {
            values[..values.len() - 1].to_vec()
        } else {
            values.clone()
        };
        let send = dev.upload(&values).unwrap();
        let mut recv = dev.alloc_zeros::<T>(values.len()).unwrap();
        comm.all_reduce(&send, &mut recv, op).unwrap();
        let got = dev.download(&recv).unwrap();
        let bad = got.iter().zip(&values).position(|(a, b)| a != b);
        assert!(
            bad.is_none(),
            "all_reduce {op:?} of {}: element {bad:?}: {:?} vs {:?}",
            T::DATA_TYPE.name(),
            bad.map(|i| got[i]),
            bad.map(|i| values[i])
        );
        let mut recv = dev.alloc_zeros::<T>(values.len()).unwrap();
        comm.reduce_scatter(&send, &mut recv, op).unwrap();
        assert_eq!(dev.download(&recv).unwrap(), values, "reduce_scatter {op:?}");
    }
    let mut recv = dev.alloc_zeros::<T>(values.len()).unwrap();
    comm.all_gather(&send, &mut recv).unwrap();
    assert_eq!(dev.download(&recv).unwrap(), values, "all_gather");
    let mut recv = dev.alloc_zeros::<T>(values.len()).unwrap();
    comm.broadcast(&send, &mut recv, 0).unwrap();
    assert_eq!(dev.download(&recv).unwrap(), values, "broadcast");
    let mut buf = dev.upload(&values).unwrap();
    comm.all_reduce_in_place(&mut buf, ReduceOp::Sum).unwrap();
    comm.broadcast_in_place(&mut buf, 0).unwrap();
    assert_eq!(dev.download(&buf).unwrap(), values, "in place");
    comm.async_error().unwrap();
}

fn values<T: Pod>(n: usize, f: impl Fn(usize) -> T) -> Vec<T> {
    (0..n).map(f).collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn one_rank_all_reduce_is_the_identity_for_every_type() {
    let n = 4099; // not a multiple of anything NCCL likes
    one_rank_identities(values(n, |i| i as f32 * 0.25 - 100.0));
    one_rank_identities(values(n, |i| i as f64 * -1.5));
    one_rank_identities(values(n, |i| f16::from_f32((i % 512) as f32 / 8.0)));
    one_rank_identities(values(n, |i| bf16::from_f32((i % 256) as f32 - 128.0)));
    one_rank_identities(values(n, |i| i as i32 - 2000));
    one_rank_identities(values(n, |i| (i % 251) as u8));
    one_rank_identities(values(n, |i| (i as i64) << 33));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn one_rank_communicator_from_a_bootstrap() {
    let dev = device();
    let comm = Communicator::new(&dev, &Bootstrap::single()).unwrap();
    let send = dev.upload(&[1.0f32, 2.0, 3.0]).unwrap();
    let mut recv = dev.alloc_zeros::<f32>(3).unwrap();
    comm.all_reduce(&send, &mut recv, ReduceOp::Avg).unwrap();
    assert_eq!(dev.download(&recv).unwrap(), [1.0, 2.0, 3.0]);
    let info = kgraph::nccl::probe().unwrap();
    eprintln!("nccl {:?} from {}", info.version, info.library);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_group_issues_through_its_handle_and_refuses_the_communicators_own_collectives() {
    let dev = device();
    let comm = single(&dev);
    let (a, b) = (dev.upload(&[1.0f32, -2.0, 3.5]).unwrap(), dev.upload(&[7i32, 8]).unwrap());
    let (mut ra, mut rb) = (dev.alloc_zeros::<f32>(3).unwrap(), dev.alloc_zeros::<i32>(2).unwrap());
    let mut refused = None;
    comm.group(|g| {
        g.all_reduce(&a, &mut ra, ReduceOp::Sum)?;
        g.all_gather(&b, &mut rb)?;
        // The communicator's own collective borrows only until it returns: refused here.
        refused = Some(comm.all_reduce_in_place(&mut dev.alloc_zeros::<f32>(3)?, ReduceOp::Sum));
        // So are a nested group (NCCL would start its work at this group's end, past its
        // borrows) and a communicator made inside the group.
        let nested = comm.group(|_| Ok(()));
        assert!(
            matches!(&nested, Err(Error::Nccl(NcclError::Failed { op, .. })) if op == "Communicator::group"),
            "{nested:?}"
        );
        let made = Communicator::single(&dev).map(|_| ());
        assert!(matches!(&made, Err(Error::Nccl(NcclError::Failed { op, .. })) if op == "ncclCommInitAll"), "{made:?}");
        Ok(())
    })
    .unwrap();
    match refused {
        Some(Err(Error::Nccl(NcclError::Failed { rank: 0, op, detail }))) => {
            assert_eq!(op, "Communicator::all_reduce_in_place");
            assert!(detail.contains("inside Communicator::group"), "{detail}");
        }
        other => panic!("expected a refusal inside the group, got {other:?}"),
    }
    // After the group the communicator's collectives work again, and the group's ran.
    comm.all_reduce_in_place(&mut ra, ReduceOp::Avg).unwrap();
    assert_eq!(dev.download(&ra).unwrap(), [1.0, -2.0, 3.5]);
    assert_eq!(dev.download(&rb).unwrap(), [7, 8]);
    // A failing closure still closes the group.
    let mut short = dev.alloc_zeros::<f32>(2).unwrap();
    let failed: kgraph::Result<()> = comm.group(|g| g.all_reduce(&a, &mut short, ReduceOp::Sum));
    assert!(matches!(failed, Err(Error::Nccl(NcclError::CollectiveLength { .. }))), "{failed:?}");
    comm.all_reduce(&a, &mut ra, ReduceOp::Sum).unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bad_lengths_and_foreign_streams_are_refused_before_nccl() {
    let dev = device();
    let comm = single(&dev);
    let send = dev.upload(&[1.0f32; 8]).unwrap();
    let mut short = dev.alloc_zeros::<f32>(7).unwrap();
    match comm.all_reduce(&send, &mut short, ReduceOp::Sum) {
        Err(Error::Nccl(NcclError::CollectiveLength {
            collective: "all_reduce",
            rank: Some(0),
            send_len: 8,
            recv_len: 7,
            ..
        })) => {}
        other => panic!("expected CollectiveLength, got {other:?}"),
    }
    assert!(matches!(
        comm.broadcast(&send, &mut dev.alloc_zeros::<f32>(8).unwrap(), 1),
        Err(Error::Memory(MemoryError::OutOfRange { .. }))
    ));
    // SAFETY: the slice below is only handed to a checked call, which refuses it.
    let other = unsafe { dev.new_stream() }.unwrap();
    // SAFETY: as above.
    let foreign = unsafe { other.cuda() }.alloc_zeros::<f32>(8).unwrap();
    let mut recv = dev.alloc_zeros::<f32>(8).unwrap();
    assert!(matches!(
        comm.all_reduce(&foreign, &mut recv, ReduceOp::Sum),
        Err(Error::Launch(LaunchError::ForeignStream { param: "send", .. }))
            | Err(Error::Launch(LaunchError::TrackedContext { .. }))
    ));
    other.synchronize().unwrap();
    comm.async_error().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn collectives_capture_into_a_graph_and_replay() {
    let dev = device();
    let comm = single(&dev);
    let n = 1 << 20;
    let host: Vec<f32> = values(n, |i| (i % 1000) as f32);
    let a = dev.upload(&host).unwrap();
    let mut b = dev.alloc_zeros::<f32>(n).unwrap();
    let c = dev.alloc_zeros::<f32>(n).unwrap();
    // NCCL connects lazily on a communicator's first collective: warm up eagerly, as
    // docs/multi-gpu.md asks before any capture.
    comm.all_reduce(&a, &mut b, ReduceOp::Sum).unwrap();
    dev.synchronize().unwrap();
    // SAFETY: `a`, `b`, `c` outlive the graph (dropped after it, below) and the host does not
    // touch them while it replays (downloads come after a synchronising replay).
    let graph = unsafe {
        Graph::capture(dev.stream(), |s| {
            comm.group(|g| {
                g.issue_raw(
                    Collective::AllReduce(ReduceOp::Avg),
                    DataType::F32,
                    kgraph::DeviceIn::<f32>::device_addr(&a),
                    n,
                    kgraph::DeviceIn::<f32>::device_addr(&b),
                    n,
                    s,
                )
            })?;
            comm.issue_raw(
                Collective::AllGather,
                DataType::F32,
                kgraph::DeviceIn::<f32>::device_addr(&b),
                n,
                kgraph::DeviceIn::<f32>::device_addr(&c),
                n,
                s,
            )
        })
    }
    .unwrap();
    assert!(graph.node_count().unwrap() >= 1);
    for _ in 0..3 {
        graph.replay().unwrap();
    }
    dev.synchronize().unwrap();
    assert_eq!(dev.download(&c).unwrap(), host);
    drop(graph);

    // The constructed-graph path: one collective as an uninstantiated child graph.
    // SAFETY: `a` and `b` outlive `child`, which is never instantiated here.
    let child = unsafe {
        comm.capture_graph(
            Collective::Broadcast { root: 0 },
            DataType::F32,
            kgraph::DeviceIn::<f32>::device_addr(&a),
            n,
            kgraph::DeviceIn::<f32>::device_addr(&b),
            n,
        )
    }
    .unwrap();
    let mut count = 0usize;
    // SAFETY: a live graph; a null array asks for the count only.
    unsafe { sys::cuGraphGetNodes(child.as_raw(), std::ptr::null_mut(), &mut count) }.result().unwrap();
    assert!(count >= 1, "the captured broadcast has no nodes");
    drop(child);
    // Capture mistakes leave the stream usable: a length error inside capture_graph.
    // SAFETY: nothing is issued (the lengths are refused).
    let refused = unsafe {
        comm.capture_graph(
            Collective::ReduceScatter(ReduceOp::Sum),
            DataType::F32,
            kgraph::DeviceIn::<f32>::device_addr(&a),
            n,
            kgraph::DeviceIn::<f32>::device_addr(&b),
            n - 1,
        )
    };
    assert!(matches!(refused, Err(Error::Nccl(NcclError::CollectiveLength { .. }))), "{refused:?}");
    comm.all_reduce(&a, &mut b, ReduceOp::Sum).unwrap();
    assert_eq!(dev.download(&b).unwrap(), host);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_group_ending_inside_a_foreign_capture_is_refused_and_invalidates_it() {
    let dev = device();
    let comm = single(&dev);
    let send = dev.upload(&[1.5f32; 1024]).unwrap();
    let mut recv = dev.alloc_zeros::<f32>(1024).unwrap();
    let stream = dev.stream().clone();
    // NCCL enqueues a group's collectives at ncclGroupEnd, after the closure has begun cudarc's
    // capture on the device stream: the end is refused and the capture invalidated.
    let out = comm.group(|g| {
        g.all_reduce(&send, &mut recv, ReduceOp::Sum)?;
        // SAFETY: breaks `Stream::cuda`'s contract on purpose, to show the refusal; the
        // capture is ended below before any other use of the stream.
        unsafe { stream.cuda() }
            .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(|e| Error::driver("begin a foreign capture", e))
    });
    match out {
        Err(Error::Graph(GraphError::Failed { detail, .. })) if detail.contains("kgraph did not begin") => {}
        other => panic!("a group ending inside a foreign capture: expected a refusal, got {other:?}"),
    }
    // The capture was invalidated before NCCL enqueued anything: its end yields no graph.
    // SAFETY: the stream is capturing (invalidated), begun on this thread above.
    match unsafe { kgraph::cudarc::driver::result::stream::end_capture(stream.cu_stream()) } {
        Err(_) => {}
        Ok(graph) => assert!(graph.is_null(), "the foreign capture recorded a graph"),
    }
    // A one-rank all-reduce is a copy NCCL issues at the call, before the capture began (the
    // per-collective check saw none); the deferred enqueue at ncclGroupEnd needs two ranks.
    assert_eq!(dev.download(&recv).unwrap(), vec![1.5; 1024]);
    comm.async_error().unwrap();
}
