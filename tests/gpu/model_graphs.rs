//! The reference model's latency graphs (`kgraph_model::graphs`): Graph A (`Perception`, B = 1,
//! state carried across replays) and its one-kernel form, the launch shapes of Graph A and the
//! train step, autotuning, and the copy and zero kernels (the train graphs' own tests are in
//! `model_train_graphs.rs`). Expected values come from the same spec run eagerly (`run_eager`:
//! one stream, file order, no graph) or from invariants of the kernels (dt = 0 is a fixed point
//! of the CfC step, a copy reproduces its source bit for bit); nothing is recomputed on the CPU.

use std::collections::BTreeSet;

use kgraph::cudarc::driver::sys;
use kgraph::expert::CapturedGraph;
use kgraph::LaunchConfig;
use kgraph_model::graphs::synthetic::{BookStream, Tick};
use kgraph_model::graphs::{ModelWeights, Perception, PerceptionFused, PerceptionUnplanned, TrainStep};
use kgraph_model::model::{launch, CopyF32, MultiHorizonHeads, Projection, ZeroF32, FEAT_VALID, N_LEVELS, SNAP_LEN};

use super::common::{device, reachability};
use super::model_util::{assert_all_finite, assert_bitwise_eq, down, up, Lcg};

fn perception(dev: &kgraph::Device, w: &ModelWeights) -> Perception {
    let mut g = Perception::new(dev).unwrap();
    g.load_weights(w).unwrap();
    g
}

/// Graph A without its memory plan: every buffer keeps an accessor (`logits`).
fn perception_unplanned(dev: &kgraph::Device, w: &ModelWeights) -> PerceptionUnplanned {
    let mut g = PerceptionUnplanned::new(dev).unwrap();
    g.load_weights(w).unwrap();
    g
}

/// A form of Graph A that takes snapshots and their elapsed times.
trait TakesTicks {
    fn write_tick(&mut self, snap: &[f32; SNAP_LEN], dt: f32);
}

macro_rules! takes_ticks {
    ($($graph:ty),*) => {$(
        impl TakesTicks for $graph {
            fn write_tick(&mut self, snap: &[f32; SNAP_LEN], dt: f32) {
                self.write_snap(snap).unwrap();
                self.write_dt(&[dt]).unwrap();
            }
        }
    )*};
}
takes_ticks!(Perception, PerceptionUnplanned);

/// The captured graph's edges as spec node indices (`spec_nodes` = the struct's `graph_nodes()`).
fn captured_edges(graph: CapturedGraph<'_>, spec_nodes: &[sys::CUgraphNode]) -> BTreeSet<(usize, usize)> {
    assert_eq!(graph.node_count().unwrap(), spec_nodes.len(), "one graph node per spec node");
    let index = |node: sys::CUgraphNode| {
        spec_nodes.iter().position(|&n| n == node).unwrap_or_else(|| panic!("graph node {node:?} is no spec node"))
    };
    let none = std::ptr::null_mut();
    let mut n_edges = 0usize;
    // SAFETY: the graph is live (borrowed); null arrays ask for the edge count only.
    unsafe { sys::cuGraphGetEdges_v2(graph.cu_graph(), none, none, std::ptr::null_mut(), &mut n_edges) }
        .result()
        .unwrap();
    let mut from = vec![std::ptr::null_mut(); n_edges];
    let mut to = vec![std::ptr::null_mut(); n_edges];
    let blank = sys::CUgraphEdgeData { from_port: 0, to_port: 0, type_: 0, reserved: [0; 5] };
    let mut data = vec![blank; n_edges];
    // SAFETY: the three arrays hold `n_edges` entries each, as the driver is told.
    unsafe {
        sys::cuGraphGetEdges_v2(graph.cu_graph(), from.as_mut_ptr(), to.as_mut_ptr(), data.as_mut_ptr(), &mut n_edges)
    }
    .result()
    .unwrap();
    from.iter().zip(&to).take(n_edges).map(|(&f, &t)| (index(f), index(t))).collect()
}

/// Grid and block of a captured kernel node.
fn node_launch(node: sys::CUgraphNode) -> ((u32, u32, u32), (u32, u32, u32), u32) {
    // SAFETY: CUDA_KERNEL_NODE_PARAMS is a plain C struct of integers and pointers (all-zero is
    // valid); the driver fills it below.
    let mut p: sys::CUDA_KERNEL_NODE_PARAMS = unsafe { std::mem::zeroed() };
    // SAFETY: `node` is a kernel node of a live captured graph; `p` is a live out-parameter.
    unsafe { sys::cuGraphKernelNodeGetParams_v2(node, &mut p) }.result().unwrap();
    ((p.gridDimX, p.gridDimY, p.gridDimZ), (p.blockDimX, p.blockDimY, p.blockDimZ), p.sharedMemBytes)
}

fn assert_launch(what: &str, node: sys::CUgraphNode, want: LaunchConfig) {
    let got = node_launch(node);
    assert_eq!(got, (want.grid_dim, want.block_dim, want.shared_mem_bytes), "{what}: launch shape");
}

/// Writes the next snapshot of `stream` (with its `dt`) into every graph.
fn feed(stream: &mut BookStream, graphs: &mut [&mut dyn TakesTicks]) -> ([f32; SNAP_LEN], Tick) {
    let mut snap = [0.0; SNAP_LEN];
    let tick = stream.next_into(&mut snap);
    for g in graphs.iter_mut() {
        g.write_tick(&snap, tick.dt);
    }
    (snap, tick)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn perception_replay_matches_eager_bit_for_bit_with_the_state_carried() {
    let dev = device();
    let w = ModelWeights::init(11);
    let (mut graph, mut eager) = (perception(&dev, &w), perception(&dev, &w));
    graph.capture().unwrap();
    let exec = graph.graph().unwrap().cu_graph_exec();
    let mut stream = BookStream::new(5);
    let mut previous_h = graph.download_h().unwrap();
    assert!(previous_h.iter().all(|&v| v == 0.0), "the state starts at zero");
    for step in 0..40 {
        let (mut snap, tick) = feed(&mut stream, &mut [&mut graph, &mut eager]);
        let crossed = tick.crossed || step == 7;
        if step == 7 {
            // A crossed book: the features are the invalid all-zero row, the state still moves.
            snap[2 * N_LEVELS] = snap[0];
            graph.write_snap(&snap).unwrap();
            eager.write_snap(&snap).unwrap();
        }
        graph.replay().unwrap();
        eager.run_eager().unwrap();
        let feat = down(&dev, graph.feat());
        assert_eq!(feat[FEAT_VALID], if crossed { 0.0 } else { 1.0 }, "step {step}: validity flag");
        // `probs` and `y` are pinned_out: the heads and the projection wrote them straight into
        // mapped host memory, read back after the stream sync.
        for (name, got, want) in [
            ("probs", graph.read_probs().unwrap(), eager.read_probs().unwrap()),
            ("y", graph.read_y().unwrap(), eager.read_y().unwrap()),
            ("h", graph.download_h().unwrap(), eager.download_h().unwrap()),
        ] {
            assert_all_finite(&format!("step {step}: {name}"), &got);
            assert_bitwise_eq(&format!("step {step}: {name}, replay vs eager"), &got, &want);
        }
        let mut probs = [f32::NAN; Perception::PROBS_LEN];
        graph.read_probs_into(&mut probs).unwrap();
        assert!(probs.iter().all(|p| (0.0..=1.0).contains(p)), "step {step}: probs {probs:?}");
        let h = graph.download_h().unwrap();
        assert_ne!(h, previous_h, "step {step}: the state must move (it is carried across replays)");
        // `carry` copied the new state into `h`: both hold the same bits after the replay.
        assert_bitwise_eq(&format!("step {step}: h vs h_next"), &h, &down(&dev, graph.h_next()));
        previous_h = h;
    }
    assert_eq!(graph.graph().unwrap().cu_graph_exec(), exec, "pinned writes need no re-capture");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn perception_fused_equals_the_multi_node_graph_bit_for_bit_with_the_state_carried() {
    let dev = device();
    let w = ModelWeights::init(17);
    let mut multi = perception(&dev, &w);
    let mut fused = PerceptionFused::new(&dev).unwrap();
    fused.load_weights(&w).unwrap();
    multi.capture().unwrap();
    fused.capture().unwrap();
    assert_eq!(PerceptionFused::NODES, ["step"], "one kernel node");
    let nodes = fused.graph_nodes();
    assert_launch("PerceptionFused::step", nodes[0], launch::perception_fused(PerceptionFused::BATCH));
    let mut stream = BookStream::new(9);
    let mut previous_h = fused.download_h().unwrap();
    for step in 0..40 {
        let mut snap = [0.0; SNAP_LEN];
        let tick = stream.next_into(&mut snap);
        if step == 5 {
            snap[2 * N_LEVELS] = snap[0]; // crossed: the all-zero feature row, the state still moves
        }
        // dt = 0 at step 9: the CfC step's fixed point, in both forms.
        let dt = if step == 9 { 0.0 } else { tick.dt };
        multi.write_snap(&snap).unwrap();
        multi.write_dt(&[dt]).unwrap();
        fused.write_snap(&snap).unwrap();
        fused.write_dt(&[dt]).unwrap();
        multi.replay().unwrap();
        fused.replay().unwrap();
        for (name, got, want) in [
            ("probs", fused.read_probs().unwrap(), multi.read_probs().unwrap()),
            ("y", fused.read_y().unwrap(), multi.read_y().unwrap()),
            ("h", fused.download_h().unwrap(), multi.download_h().unwrap()),
        ] {
            assert_all_finite(&format!("step {step}: {name}"), &got);
            assert_bitwise_eq(&format!("step {step}: {name}, fused vs multi-node"), &got, &want);
        }
        let h = fused.download_h().unwrap();
        if step == 9 {
            assert_bitwise_eq("dt = 0 leaves the state as it was", &h, &previous_h);
        } else {
            assert_ne!(h, previous_h, "step {step}: the state moves (updated in place)");
        }
        previous_h = h;
    }
    fused.reset_state().unwrap();
    assert!(fused.download_h().unwrap().iter().all(|&v| v == 0.0), "reset_state zeroes h");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn perception_pinned_outputs_are_the_device_kernels_outputs_bit_for_bit() {
    let dev = device();
    // Unplanned: the test reads the logits, a scratch buffer.
    let mut g = perception_unplanned(&dev, &ModelWeights::init(14));
    g.capture().unwrap();
    let (heads, projection) = (MultiHorizonHeads::new(&dev).unwrap(), Projection::new(&dev).unwrap());
    let (b, n_hid) = (Perception::BATCH as i32, Perception::N_HID as i32);
    let mut stream = BookStream::new(7);
    let mut previous: Option<Vec<f32>> = None;
    for step in 0..6 {
        feed(&mut stream, &mut [&mut g]);
        g.replay().unwrap();
        let (probs, y) = (g.read_probs().unwrap(), g.read_y().unwrap());
        // The same kernels writing device memory, from the replay's own `h_next`: the zero-copy
        // outputs must hold exactly their bits (only the destination memory differs).
        let mut logits = dev.alloc_zeros::<f32>(Perception::LOGITS_LEN).unwrap();
        let mut probs_dev = dev.alloc_zeros::<f32>(Perception::PROBS_LEN).unwrap();
        let mut y_dev = dev.alloc_zeros::<f32>(Perception::Y_LEN).unwrap();
        let cfg = launch::multi_horizon_heads(Perception::BATCH);
        heads.launch(dev.stream(), cfg, g.h_next(), g.w_h(), g.b_h(), b, n_hid, &mut logits, &mut probs_dev).unwrap();
        let cfg = launch::projection(Perception::BATCH);
        projection.launch(dev.stream(), cfg, g.h_next(), g.p(), g.c(), b, n_hid, &mut y_dev).unwrap();
        assert_bitwise_eq(&format!("step {step}: probs, pinned vs device"), &probs, &down(&dev, &probs_dev));
        assert_bitwise_eq(&format!("step {step}: y, pinned vs device"), &y, &down(&dev, &y_dev));
        assert_bitwise_eq(&format!("step {step}: logits"), &down(&dev, g.logits()), &down(&dev, &logits));
        // A new snapshot moves the state, so the host must see new values at every step (a
        // stale read of mapped memory would repeat the previous step's).
        if let Some(prev) = &previous {
            assert_ne!(prev, &probs, "step {step}: probs did not change");
        }
        previous = Some(probs);
    }
    let mut short = [0.0f32; Perception::PROBS_LEN - 1];
    match g.read_probs_into(&mut short) {
        Err(kgraph::Error::Memory(kgraph::MemoryError::LengthMismatch { what, expected, actual })) => {
            assert!(what.contains("read_probs_into") && what.contains("`probs`"), "{what}");
            assert_eq!((expected, actual), (Perception::PROBS_LEN, Perception::PROBS_LEN - 1));
        }
        other => panic!("a short read must fail, got {other:?}"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn perception_takes_dt_from_pinned_memory_at_every_replay() {
    let dev = device();
    let mut g = perception(&dev, &ModelWeights::init(12));
    g.capture().unwrap();
    let mut stream = BookStream::new(6);
    for _ in 0..5 {
        feed(&mut stream, &mut [&mut g]);
        g.replay().unwrap();
    }
    let h = g.download_h().unwrap();
    assert!(h.iter().any(|&v| v != 0.0), "five steps with dt > 0 move the state");
    // dt = 0 (and a negative dt, clamped to 0) is an exact fixed point of the CfC step: the
    // replay must see the new dt, or the state would move.
    for dt in [0.0, -3.0] {
        g.write_dt(&[dt]).unwrap();
        g.replay().unwrap();
        assert_bitwise_eq(&format!("h after a replay with dt = {dt}"), &g.download_h().unwrap(), &h);
    }
    g.write_dt(&[2.0]).unwrap();
    g.replay().unwrap();
    assert_ne!(g.download_h().unwrap(), h, "dt = 2 moves the state again");
    g.reset_state().unwrap();
    assert!(g.download_h().unwrap().iter().all(|&v| v == 0.0), "reset_state zeroes h");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn perception_heads_projection_and_carry_are_parallel_branches() {
    let dev = device();
    let mut g = perception(&dev, &ModelWeights::init(13));
    g.capture().unwrap();
    let edges = captured_edges(g.graph().unwrap(), &g.graph_nodes());
    let want: BTreeSet<(usize, usize)> = Perception::EDGES.iter().copied().collect();
    assert_eq!(edges, want, "the captured graph's edges are exactly the spec's dependencies");
    let reach = reachability(Perception::NODES.len(), &edges);
    let index = |name: &str| Perception::NODES.iter().position(|&n| n == name).unwrap();
    let (features, cfc) = (index("features"), index("cfc"));
    assert!(reach[features][cfc], "cfc follows features (which also brings dt into device memory)");
    let branches = [index("heads"), index("projection"), index("carry")];
    for &a in &branches {
        assert!(reach[cfc][a], "{} follows cfc", Perception::NODES[a]);
        for &b in &branches {
            assert!(a == b || !reach[a][b], "{} and {} must be parallel", Perception::NODES[a], Perception::NODES[b]);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn graph_launch_shapes_follow_the_model_launch_configs() {
    let dev = device();
    let mut a = Perception::new(&dev).unwrap();
    a.capture().unwrap();
    let (b, h) = (Perception::BATCH, Perception::N_HID);
    let nodes = a.graph_nodes();
    let want_a = [
        ("features", launch::snap_feature_assemble(b)),
        ("cfc", launch::cfc_step(b, h)),
        ("heads", launch::multi_horizon_heads(b)),
        ("projection", launch::projection(b)),
    ];
    assert_eq!(want_a.len() + 1, Perception::NODES.len(), "four kernels and one copy");
    for (name, cfg) in want_a {
        let i = Perception::NODES.iter().position(|&n| n == name).unwrap();
        assert_launch(&format!("Perception::{name}"), nodes[i], cfg);
    }
    let i = Perception::NODES.iter().position(|&n| n == "carry").unwrap();
    let mut ty = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL;
    // SAFETY: a node of `a`'s live graph; `ty` is a valid out-pointer.
    unsafe { sys::cuGraphNodeGetType(nodes[i], &mut ty) }.result().unwrap();
    assert_eq!(ty, sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEMCPY, "carry is a memcpy node");

    let mut t = TrainStep::new(&dev).unwrap();
    t.capture().unwrap();
    let (b, n_in, h) = (TrainStep::BATCH, TrainStep::N_IN, TrainStep::N_HID);
    let nodes = t.graph_nodes();
    for (i, &name) in TrainStep::NODES.iter().enumerate() {
        let cfg = match name {
            "forward" => launch::train_forward(b),
            "heads_backward" => launch::multi_horizon_heads_bce_backward(b, h),
            "cfc_weights" => launch::cfc_step_backward_weights_adamw(n_in, h),
            other => panic!("unexpected train step node {other}"),
        };
        assert_launch(&format!("TrainStep::{name}"), nodes[i], cfg);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn zero_and_copy_kernels_touch_exactly_n_elements() {
    let dev = device();
    let (zero, copy) = (ZeroF32::new(&dev).unwrap(), CopyF32::new(&dev).unwrap());
    let mut rng = Lcg::new(51);
    let (n, len) = (1000usize, 1003usize); // n not a multiple of the block; 3 guard elements
    let src = up(&dev, &rng.vec(len, -5.0, 5.0));
    let guard = f32::from_bits(0x7FC0_1234); // a NaN payload no kernel produces
    for cfg in
        [launch::elementwise(n), LaunchConfig { grid_dim: (1, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }]
    {
        // Both the formula's grid and a single block (grid-stride loop) must cover all n.
        let mut dst = up(&dev, &vec![guard; len]);
        copy.launch(dev.stream(), cfg, &src, n as i32, &mut dst).unwrap();
        let (got, want) = (down(&dev, &dst), down(&dev, &src));
        assert_bitwise_eq("copy_f32: the first n elements", &got[..n], &want[..n]);
        assert!(got[n..].iter().all(|v| v.to_bits() == guard.to_bits()), "copy_f32 wrote past n");
        zero.launch(dev.stream(), cfg, n as i32, &mut dst).unwrap();
        let got = down(&dev, &dst);
        assert!(got[..n].iter().all(|v| v.to_bits() == 0), "zero_f32 leaves +0.0 in the first n");
        assert!(got[n..].iter().all(|v| v.to_bits() == guard.to_bits()), "zero_f32 wrote past n");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn autotune_picks_block_sizes_caches_them_and_keeps_the_results_bit_for_bit() {
    let dev = device();
    let w = ModelWeights::init(25);
    let scratch = tempfile::tempdir().unwrap();
    let cache = scratch.path().join("kgraph_tune.txt");
    let mut tuned = perception(&dev, &w);
    let report = tuned.autotune(&cache, 20).unwrap();
    let names: Vec<&str> = report.iter().map(|r| r.node.as_str()).collect();
    assert_eq!(names, ["features", "cfc", "heads", "projection"]);
    for r in &report {
        assert!(!r.cached && [32, 64, 128, 256].contains(&r.chosen.0), "{r:?}");
        assert!(r.chosen.1 <= r.default.1, "the choice is at least as fast as the spec's block: {r:?}");
    }
    println!("{}", kgraph::expert::tune::report_table("Perception", &report));
    // The cache round-trips: a second autotune and a fresh struct take the same shapes untimed.
    let again = tuned.autotune(&cache, 20).unwrap();
    assert!(again.iter().all(|r| r.cached));
    assert_eq!(
        again.iter().map(|r| r.chosen.0).collect::<Vec<_>>(),
        report.iter().map(|r| r.chosen.0).collect::<Vec<_>>()
    );
    let mut fresh = perception(&dev, &w);
    assert_eq!(fresh.apply_tuning(&cache).unwrap(), 4);
    let mut plain = perception(&dev, &w);
    let mut stream = BookStream::new(26);
    tuned.capture().unwrap();
    fresh.capture().unwrap();
    plain.capture().unwrap();
    for _ in 0..3 {
        feed(&mut stream, &mut [&mut tuned, &mut fresh, &mut plain]);
        for g in [&tuned, &fresh, &plain] {
            g.replay().unwrap();
        }
        let want = plain.read_probs().unwrap();
        assert_bitwise_eq("tuned probs", &tuned.read_probs().unwrap(), &want);
        assert_bitwise_eq("cache-applied probs", &fresh.read_probs().unwrap(), &want);
    }
}
