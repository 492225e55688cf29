//! Collective nodes in a graph spec on one GPU (`tests/graphs/test_collective.toml`): a one-rank
//! communicator, on which the all-reduce is the identity and the all-gather a copy; the built,
//! serialized and stream-captured graphs and `run_eager` agree bit for bit, and rebinding a
//! buffer a collective node passes re-captures its child graph in place.

use kgraph::nccl::Bootstrap;

use super::common::{device, random};

kgraph::graph!("tests/graphs/test_collective.toml");

fn graph(dev: &kgraph::Device, x: &[f32]) -> TestCollective {
    let mut g = TestCollective::new(dev, &Bootstrap::single()).unwrap_or_else(|e| panic!("{e}"));
    g.upload_x(x).unwrap();
    g
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn one_rank_collective_nodes_are_identities_in_every_kind_of_graph() {
    let dev = device();
    let x = random(TestCollective::N, 61);
    let twice: Vec<f32> = x.iter().map(|v| 2.0 * v).collect();
    let mut eager = graph(&dev, &x);
    eager.run_eager().unwrap();
    assert_eq!(eager.download_gathered().unwrap(), x, "all-gather of one rank is a copy of the average, x");
    assert_eq!(eager.download_y().unwrap(), twice, "y = 2 * avg(x) = 2x on one rank");
    let mut built = graph(&dev, &x);
    built.capture().unwrap();
    let mut serial = graph(&dev, &x);
    serial.capture_serialized().unwrap();
    let mut streamed = graph(&dev, &x);
    streamed.capture_streamed().unwrap();
    for g in [&built, &serial, &streamed] {
        g.replay().unwrap();
        assert_eq!(g.download_y().unwrap(), twice);
        assert_eq!(g.download_gathered().unwrap(), x);
    }
    // The collectives are ordered one after the other (the communicator is a dependency).
    let (avg, gather) = (1, 2);
    assert!(TestCollective::EDGES.contains(&(avg, gather)));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn rebinding_a_collective_buffer_recaptures_its_node_in_place() {
    let dev = device();
    let (x1, x2) = (random(TestCollective::N, 62), random(TestCollective::N, 63));
    let mut g = graph(&dev, &x1);
    g.capture().unwrap();
    g.replay().unwrap();
    // `g` (scratch, passed by the memcpy, both collectives and the kernel) moves to a new slice.
    let fresh = dev.alloc_zeros::<f32>(TestCollective::G_LEN).unwrap();
    let _old = g.replace_g(fresh).unwrap();
    g.upload_x(&x2).unwrap();
    g.replay().unwrap();
    assert_eq!(g.download_gathered().unwrap(), x2, "the collectives read and write the new buffer");
    assert_eq!(g.download_y().unwrap(), x2.iter().map(|v| 2.0 * v).collect::<Vec<_>>());
}
