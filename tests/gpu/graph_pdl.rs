//! Programmatic dependent launch (PDL) in graph specs, and `capture_serialized`, on the GPU.
//! Specs: `tests/graphs/test_pdl_chain.toml`, `tests/graphs/test_pdl_branches.toml` (PDL-aware kernels
//! `tg_pdl_*` in `tests/kernels/test_graph.cu`) and `tests/graphs/test_branches.toml` (no PDL). Expected
//! values always come from the same spec run another way (PDL off, eager, the other capture),
//! never from a CPU formula; edge types are read back through `cuGraphGetEdges_v2`.

// The test kernels' declarations, compiled here a second time: `graph.rs` keeps its `kernels`
// module private, and this module's specs name `crate::graph_pdl::kernels`. The other specs'
// kernels come along unused.
#[allow(dead_code, clippy::duplicate_mod)]
#[path = "graph/kernels.rs"]
mod kernels;

use std::collections::{BTreeMap, BTreeSet};

use kgraph::cudarc::driver::sys;
use kgraph::expert::CapturedGraph;

use super::common::{device, random};
use super::graph::TestBranches;

kgraph::graph!("tests/graphs/test_pdl_chain.toml");
kgraph::graph!("tests/graphs/test_pdl_branches.toml");

fn assert_same_bits(what: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len()).find(|&i| got[i].to_bits() != want[i].to_bits()) {
        panic!("{what}: element {i} differs: got {} want {}", got[i], want[i]);
    }
}

fn assert_meaningful(what: &str, v: &[f32]) {
    assert!(v.iter().all(|x| x.is_finite()), "{what}: not finite");
    let first = v[0].to_bits();
    assert!(v.iter().any(|x| x.to_bits() != first), "{what}: constant output, the test would prove nothing");
}

/// The captured graph's edges over spec node indices (`spec_nodes[i]` = graph node of spec node
/// `i`), each with whether it is programmatic. Fails on any other edge type, and unless the graph
/// holds exactly one node per spec node.
fn spec_edges(graph: CapturedGraph<'_>, spec_nodes: &[sys::CUgraphNode]) -> BTreeMap<(usize, usize), bool> {
    let cu_graph = graph.cu_graph();
    let mut count = 0usize;
    // SAFETY: `cu_graph` is live (owned by `graph`); a null array asks for the count only.
    unsafe { sys::cuGraphGetNodes(cu_graph, std::ptr::null_mut(), &mut count) }.result().unwrap();
    let mut all = vec![std::ptr::null_mut(); count];
    // SAFETY: `all` holds `count` entries, as the driver is told. The order is the one
    // `Graph::edges_typed` indexes into (the graph is not modified in between).
    unsafe { sys::cuGraphGetNodes(cu_graph, all.as_mut_ptr(), &mut count) }.result().unwrap();
    assert_eq!(count, spec_nodes.len(), "one graph node per spec node, no extra (event/empty) nodes");
    let spec_index = |i: usize| {
        spec_nodes.iter().position(|&n| n == all[i]).unwrap_or_else(|| panic!("graph node {i} is no spec node"))
    };
    let (default, programmatic) = (
        sys::CUgraphDependencyType::CU_GRAPH_DEPENDENCY_TYPE_DEFAULT as u8,
        sys::CUgraphDependencyType::CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC as u8,
    );
    let typed = graph.edges_typed().unwrap();
    assert_eq!(typed.len(), graph.edges().unwrap().len(), "edges and edges_typed list the same edges");
    typed
        .into_iter()
        .map(|(from, to, data)| {
            let is_programmatic = match data.type_ {
                t if t == default => false,
                t if t == programmatic => true,
                other => panic!("edge {from} -> {to}: unexpected dependency type {other}"),
            };
            ((spec_index(from), spec_index(to)), is_programmatic)
        })
        .collect()
}

fn programmatic_of(edges: &BTreeMap<(usize, usize), bool>) -> BTreeSet<(usize, usize)> {
    edges.iter().filter(|(_, &p)| p).map(|(&e, _)| e).collect()
}

fn chain_with(dev: &kgraph::Device, pdl: bool) -> TestPdlChain {
    let mut g = TestPdlChain::new(dev).unwrap();
    g.set_pdl_enabled(pdl);
    g
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pdl_chain_equals_the_same_spec_without_pdl_bit_for_bit() {
    let dev = device();
    assert!(TestPdlChain::new(&dev).unwrap().pdl_enabled(), "PDL is on after new()");
    let mut on = chain_with(&dev, true);
    let mut off = chain_with(&dev, false);
    let mut eager_on = chain_with(&dev, true);
    on.capture().unwrap();
    off.capture().unwrap();
    let exec = on.graph().unwrap().cu_graph_exec();
    let mut previous_acc: Option<Vec<f32>> = None;
    for seed in 1..=6u64 {
        let x = random(TestPdlChain::N, seed);
        if seed == 4 {
            // `shift` is a PDL node with a programmatic incoming edge: its parameters are patched
            // in the instantiated graph (cuGraphExecKernelNodeSetParams), no re-capture.
            for g in [&mut on, &mut off, &mut eager_on] {
                g.set_gain(1.25).unwrap();
            }
        }
        for g in [&mut on, &mut off, &mut eager_on] {
            g.upload_x(&x).unwrap();
        }
        on.replay().unwrap();
        off.replay().unwrap();
        eager_on.run_eager().unwrap();
        let want_out = off.download_out().unwrap();
        let want_acc = off.download_acc().unwrap();
        assert_meaningful(&format!("seed {seed}: out without PDL"), &want_out);
        assert_same_bits(&format!("seed {seed}: out, PDL graph"), &on.download_out().unwrap(), &want_out);
        assert_same_bits(&format!("seed {seed}: acc, PDL graph"), &on.download_acc().unwrap(), &want_acc);
        assert_same_bits(&format!("seed {seed}: out, PDL eager"), &eager_on.download_out().unwrap(), &want_out);
        assert_same_bits(&format!("seed {seed}: acc, PDL eager"), &eager_on.download_acc().unwrap(), &want_acc);
        if let Some(prev) = &previous_acc {
            assert_ne!(prev, &want_acc, "seed {seed}: the state must accumulate across replays");
        }
        previous_acc = Some(want_acc);
    }
    assert_eq!(on.graph().unwrap().cu_graph_exec(), exec, "set_gain must not re-capture");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pdl_chain_graph_has_programmatic_edges_where_the_spec_says() {
    let dev = device();
    let index = |name: &str| TestPdlChain::NODES.iter().position(|&n| n == name).unwrap();
    // A chain captures on one stream: every node continues its sole predecessor, so an edge is
    // programmatic exactly when its target is a PDL node; `mix_again` opts out in the spec.
    let want_pdl: BTreeSet<(usize, usize)> =
        TestPdlChain::EDGES.iter().copied().filter(|&(_, to)| TestPdlChain::NODE_PDL[to]).collect();
    assert!(!TestPdlChain::NODE_PDL[index("mix_again")] && TestPdlChain::NODE_PDL[index("mix")]);
    assert_eq!(want_pdl.len(), TestPdlChain::EDGES.len() - 1, "all chained edges but the opted-out one");
    assert_eq!(TestPdlChain::PDL_EDGES.iter().copied().collect::<BTreeSet<_>>(), want_pdl);
    let all: BTreeSet<(usize, usize)> = TestPdlChain::EDGES.iter().copied().collect();

    let mut g = chain_with(&dev, true);
    for serialized in [false, true] {
        if serialized {
            g.capture_serialized().unwrap();
        } else {
            g.capture().unwrap();
        }
        let edges = spec_edges(g.graph().unwrap(), &g.graph_nodes());
        assert_eq!(edges.keys().copied().collect::<BTreeSet<_>>(), all, "serialized {serialized}: edge set");
        assert_eq!(programmatic_of(&edges), want_pdl, "serialized {serialized}: programmatic edges");
        assert!(!edges[&(index("shift"), index("mix_again"))], "the opted-out node keeps a full edge");
    }

    let mut plain = chain_with(&dev, false);
    plain.capture().unwrap();
    let edges = spec_edges(plain.graph().unwrap(), &plain.graph_nodes());
    assert_eq!(edges.keys().copied().collect::<BTreeSet<_>>(), all);
    assert!(programmatic_of(&edges).is_empty(), "PDL disabled: every edge is a full dependency");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pdl_branches_are_programmatic_on_every_edge_when_built_and_only_on_stream_edges_when_captured() {
    let dev = device();
    let index = |name: &str| TestPdlBranches::NODES.iter().position(|&n| n == name).unwrap();
    let (prep, join) = (index("prep"), index("join"));
    let x = random(TestPdlBranches::N, 21);
    let new = |pdl: bool| {
        let mut g = TestPdlBranches::new(&dev).unwrap();
        g.set_pdl_enabled(pdl);
        g.upload_x(&x).unwrap();
        g
    };

    let mut branched = new(true);
    branched.capture().unwrap();
    let edges = spec_edges(branched.graph().unwrap(), &branched.graph_nodes());
    let all: BTreeSet<(usize, usize)> = TestPdlBranches::EDGES.iter().copied().collect();
    assert_eq!(edges.keys().copied().collect::<BTreeSet<_>>(), all);
    let programmatic = programmatic_of(&edges);
    let into_pdl: BTreeSet<(usize, usize)> =
        all.iter().copied().filter(|&(_, to)| TestPdlBranches::NODE_PDL[to]).collect();
    assert_eq!(programmatic, into_pdl, "built: every edge into a PDL kernel is programmatic");
    assert!(programmatic.iter().filter(|e| e.1 == join).count() > 1, "the join's edges are programmatic too");
    assert!(programmatic.iter().filter(|e| e.0 == prep).count() > 1, "so are the fan-out's");
    assert_eq!(programmatic, TestPdlBranches::PDL_EDGES.iter().copied().collect::<BTreeSet<_>>());

    // Stream capture, kept for comparison: PDL only where a node continues its predecessor's stream.
    let mut streamed = new(true);
    streamed.capture_streamed().unwrap();
    let edges = spec_edges(streamed.graph().unwrap(), &streamed.graph_nodes());
    assert_eq!(edges.keys().copied().collect::<BTreeSet<_>>(), all);
    assert_eq!(programmatic_of(&edges), BTreeSet::from([(prep, index("branch0"))]), "only the stream edge");
    for (&(from, to), &p) in &edges {
        if to == join || (from == prep && to != index("branch0")) {
            assert!(!p, "cross-stream edge {from} -> {to} must stay a full dependency");
        }
    }

    let mut serial = new(true);
    serial.capture_serialized().unwrap();
    let path = spec_edges(serial.graph().unwrap(), &serial.graph_nodes());
    let n = TestPdlBranches::NODES.len();
    let want_path: BTreeMap<(usize, usize), bool> = (1..n).map(|i| ((i - 1, i), true)).collect();
    assert_eq!(path, want_path, "serialized with PDL: a path of programmatic edges in file order");

    let mut plain = new(false);
    plain.capture().unwrap();
    let mut eager = new(false);
    for k0 in [None, Some(-0.625f32)] {
        if let Some(k0) = k0 {
            // k0 feeds `branch0`, whose incoming edge is programmatic: updated in place.
            for g in [&mut branched, &mut serial, &mut plain, &mut eager] {
                g.set_k0(k0).unwrap();
            }
        }
        streamed.set_k0(k0.unwrap_or(TestPdlBranches::new(&dev).unwrap().k0())).unwrap();
        for g in [&branched, &serial, &plain, &streamed] {
            g.replay().unwrap();
        }
        eager.run_eager().unwrap();
        let want = eager.download_out().unwrap();
        assert_meaningful("branches without PDL", &want);
        let what = format!("k0 {k0:?}");
        assert_same_bits(&format!("{what}: branched PDL graph"), &branched.download_out().unwrap(), &want);
        assert_same_bits(&format!("{what}: serialized PDL graph"), &serial.download_out().unwrap(), &want);
        assert_same_bits(&format!("{what}: branched plain graph"), &plain.download_out().unwrap(), &want);
        assert_same_bits(&format!("{what}: stream-captured PDL graph"), &streamed.download_out().unwrap(), &want);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn capture_serialized_is_a_path_in_file_order_and_equals_capture() {
    let dev = device();
    let n = TestBranches::NODES.len();
    let path: BTreeSet<(usize, usize)> = (1..n).map(|i| (i - 1, i)).collect();
    let branched_edges: BTreeSet<(usize, usize)> = TestBranches::EDGES.iter().copied().collect();
    let edge_set = |g: &TestBranches| -> BTreeSet<(usize, usize)> {
        let edges = spec_edges(g.graph().unwrap(), &g.graph_nodes());
        assert!(programmatic_of(&edges).is_empty(), "test_branches has no PDL node");
        edges.into_keys().collect()
    };

    // One struct, captured both ways in turn: replay uses whichever was captured last.
    let mut g = TestBranches::new(&dev).unwrap();
    g.capture_serialized().unwrap();
    assert_eq!(edge_set(&g), path, "serialized: a total order, N-1 edges forming a path");
    g.capture().unwrap();
    assert_eq!(edge_set(&g), branched_edges, "capture() again: the dataflow branches");
    assert_ne!(path, branched_edges);

    let mut branched = TestBranches::new(&dev).unwrap();
    let mut serial = TestBranches::new(&dev).unwrap();
    branched.capture().unwrap();
    serial.capture_serialized().unwrap();
    for seed in 1..=4u64 {
        let x = random(TestBranches::N, 30 + seed);
        if seed == 3 {
            // A scalar update patches the serialized graph's node in place too.
            branched.set_k1(-2.25).unwrap();
            serial.set_k1(-2.25).unwrap();
        }
        branched.upload_x(&x).unwrap();
        serial.upload_x(&x).unwrap();
        branched.replay().unwrap();
        serial.replay().unwrap();
        let want = branched.download_out().unwrap();
        assert_meaningful(&format!("seed {seed}: branched"), &want);
        assert_same_bits(&format!("seed {seed}: serialized vs branched"), &serial.download_out().unwrap(), &want);
    }
    assert_eq!(edge_set(&serial), path, "set_k1 leaves the serialized topology alone");
}
