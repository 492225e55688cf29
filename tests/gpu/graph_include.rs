//! `[[include]]` on the GPU (`tests/graphs/test_include.toml`): `tests/graphs/test_affine.toml` included
//! twice in a chain (x -> mid -> y, the second with `a` the literal 3.0 and `b` the parent's
//! `b2`), then an own `tg_mul` node. The expected values are the standalone `TestAffine`
//! struct run twice (bit for bit), never a CPU re-implementation of the kernel.

use super::common::{device, random};

kgraph::graph!("tests/graphs/test_affine.toml");
kgraph::graph!("tests/graphs/test_include.toml");

fn assert_same_bits(what: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len()).find(|&i| got[i].to_bits() != want[i].to_bits()) {
        panic!("{what}: element {i} differs: got {} want {}", got[i], want[i]);
    }
}

/// `TestAffine` with scalars `a`, `b` run eagerly on `x`: its `y`.
fn affine(dev: &kgraph::Device, x: &[f32], a: f32, b: f32) -> Vec<f32> {
    let mut g = TestAffine::new(dev).unwrap();
    g.set_a(a).unwrap();
    g.set_b(b).unwrap();
    g.upload_x(x).unwrap();
    g.run_eager().unwrap();
    g.download_y().unwrap()
}

/// The standalone struct twice: the first include's scalars (`a`, `first_b`), then the
/// second's (3.0, `b2`).
fn expected(dev: &kgraph::Device, x: &[f32], a: f32, first_b: f32, b2: f32) -> Vec<f32> {
    let mid = affine(dev, x, a, first_b);
    affine(dev, &mid, 3.0, b2)
}

fn included(dev: &kgraph::Device, x: &[f32]) -> TestInclude {
    let mut g = TestInclude::new(dev).unwrap();
    g.upload_x(x).unwrap();
    g.load_w(&vec![1.0; TestInclude::M]).unwrap(); // z = y * 1 = y exactly
    g
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn included_nodes_are_prefixed_and_chained_across_the_includes() {
    assert_eq!(TestInclude::NODES, ["first_affine", "second_affine", "scale"]);
    assert_eq!(TestInclude::EDGES, [(0, 1), (1, 2)]);
    assert_eq!(TestInclude::M, TestAffine::N);
    let dev = device();
    let mut g = included(&dev, &random(TestInclude::M, 61));
    g.capture().unwrap();
    let graph = g.graph().expect("captured");
    assert_eq!(graph.node_count().unwrap(), 3, "one graph node per spliced or own node, no child graph");
    assert_eq!(graph.edges().unwrap().len(), 2, "the chain's two edges, across the include boundary");
    assert_eq!(g.graph_nodes().len(), 3);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn replay_serialized_replay_and_run_eager_equal_the_standalone_spec_run_twice() {
    let dev = device();
    let x = random(TestInclude::M, 62);
    let want = expected(&dev, &x, 2.0, -0.25, 0.5); // the defaults of a, first_b, b2
    for mode in ["capture", "capture_serialized", "run_eager"] {
        let mut g = included(&dev, &x);
        match mode {
            "capture" => g.capture().unwrap(),
            "capture_serialized" => g.capture_serialized().unwrap(),
            _ => {}
        }
        for step in 0..2 {
            if mode == "run_eager" {
                g.run_eager().unwrap();
            } else {
                g.replay().unwrap();
            }
            let y = g.download_y().unwrap();
            assert_same_bits(&format!("{mode}, step {step}: y"), &y, &want);
            assert_same_bits(&format!("{mode}, step {step}: z = y * 1"), &g.download_z().unwrap(), &y);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn scalars_of_both_includes_update_the_captured_graph_in_place() {
    let dev = device();
    let x = random(TestInclude::M, 63);
    let mut g = included(&dev, &x);
    g.capture().unwrap();
    g.replay().unwrap();
    g.set_a(0.75).unwrap(); // bound: the first include's `a`
    g.set_first_b(1.5).unwrap(); // unbound: the first include's `b`, prefixed
    g.set_b2(-2.0).unwrap(); // bound: the second include's `b`
    g.replay().unwrap();
    assert_same_bits("replay after the setters", &g.download_y().unwrap(), &expected(&dev, &x, 0.75, 1.5, -2.0));
    let mut eager = included(&dev, &x);
    eager.set_a(0.75).unwrap();
    eager.set_first_b(1.5).unwrap();
    eager.set_b2(-2.0).unwrap();
    eager.run_eager().unwrap();
    assert_same_bits("run_eager after the setters", &eager.download_y().unwrap(), &g.download_y().unwrap());
}

// `graph!(.., repeat = K)` over an 18-level `[[include]]` chain (`tests/graphs/nest/`): level
// `i` adds 1 to its own counter `c<i>`, so after one launch every counter is the number of times
// its level's node ran. The loop must wrap all 18 levels (it once stopped 16 levels down, and the
// deeper nodes ran once, before the loop).
kgraph::graph!("tests/graphs/nest/level_00.toml", name = Nest18Repeat5, repeat = 5);

/// A `download_c<i>` method of the nest's struct.
type CounterDownload = fn(&Nest18Repeat5) -> kgraph::Result<Vec<f32>>;

/// Every counter of `g`, level 0 first.
fn nest_counters(g: &Nest18Repeat5) -> Vec<f32> {
    let downloads: [CounterDownload; 18] = [
        Nest18Repeat5::download_c0,
        Nest18Repeat5::download_c1,
        Nest18Repeat5::download_c2,
        Nest18Repeat5::download_c3,
        Nest18Repeat5::download_c4,
        Nest18Repeat5::download_c5,
        Nest18Repeat5::download_c6,
        Nest18Repeat5::download_c7,
        Nest18Repeat5::download_c8,
        Nest18Repeat5::download_c9,
        Nest18Repeat5::download_c10,
        Nest18Repeat5::download_c11,
        Nest18Repeat5::download_c12,
        Nest18Repeat5::download_c13,
        Nest18Repeat5::download_c14,
        Nest18Repeat5::download_c15,
        Nest18Repeat5::download_c16,
        Nest18Repeat5::download_c17,
    ];
    downloads.iter().map(|download| download(g).unwrap()[0]).collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn repeat_runs_every_node_of_an_18_level_include_chain_k_times_per_launch() {
    assert_eq!(Nest18Repeat5::NODES.len(), 18, "one node per level");
    assert_eq!(Nest18Repeat5::NODES[17], format!("{}count", "d_".repeat(17)), "the deepest level's node");
    let dev = device();
    for mode in ["capture", "capture_serialized", "run_eager"] {
        let mut g = Nest18Repeat5::new(&dev).unwrap();
        g.load_one(&[1.0]).unwrap();
        match mode {
            "capture" => g.capture().unwrap(),
            "capture_serialized" => g.capture_serialized().unwrap(),
            _ => {}
        }
        for launch in 1..=2u8 {
            if mode == "run_eager" {
                g.run_eager().unwrap();
            } else {
                g.replay().unwrap();
            }
            let want = 5.0 * f32::from(launch);
            assert_eq!(
                nest_counters(&g),
                vec![want; 18],
                "{mode}: after launch {launch}, every level ran 5 times per launch"
            );
        }
    }
}

// `tests/graphs/test_short.toml`: three nodes in 30 lines, every argument but one bound by name
// (#28.7): `s = prep(x)`, `y = k s`, `acc += y`. The reference is the struct's own `run_eager`
// (file order, one stream) against its captured graph; `acc`, a state, gains `y` per launch.
kgraph::graph!("tests/graphs/test_short.toml");

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_spec_with_arguments_bound_by_name_runs_as_written() {
    assert_eq!(TestShort::NODES, ["tg_prep", "tg_branch", "tg_accumulate"]);
    assert_eq!(TestShort::EDGES, [(0, 1), (1, 2)]);
    let dev = device();
    let x = random(TestShort::N, 64);
    let mut eager = TestShort::new(&dev).unwrap();
    eager.upload_x(&x).unwrap();
    eager.run_eager().unwrap();
    let y = eager.download_y().unwrap();
    assert_same_bits("acc after one step = y", &eager.download_acc().unwrap(), &y);
    let mut g = TestShort::new(&dev).unwrap();
    g.upload_x(&x).unwrap();
    g.capture().unwrap();
    g.replay().unwrap();
    g.replay().unwrap();
    assert_same_bits("replayed y = eager y", &g.download_y().unwrap(), &y);
    let twice: Vec<f32> = y.iter().map(|v| v + v).collect();
    assert_same_bits("acc after two replays = y + y", &g.download_acc().unwrap(), &twice);
}
