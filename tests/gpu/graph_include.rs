//! `[[include]]` on the GPU (`graphs/test_include.toml`): `graphs/test_affine.toml` included
//! twice in a chain (x -> mid -> y, the second with `a` the literal 3.0 and `b` the parent's
//! `b2`), then an own `tg_mul` node. The expected values are the standalone `TestAffine`
//! struct run twice (bit for bit), never a CPU re-implementation of the kernel.

use super::common::{device, random};

kgraph::graph!("graphs/test_affine.toml");
kgraph::graph!("graphs/test_include.toml");

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
