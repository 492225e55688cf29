//! The graph engine beyond kernel nodes, on the GPU (`tests/graphs/test_control.toml`): memset and
//! memcpy nodes, WHILE loops (`repeat`, `until`) and IF nodes built as conditional graph nodes,
//! buffer rebinding, launch-shape updates, the whole-graph update, per-node profiling and the
//! driver's DOT dump. Expected values are the same spec run eagerly (bit for bit) and closed
//! forms of the conditions (iteration counts, powers of two), never a CPU re-implementation.

use kgraph::{Error, GraphError, LaunchConfig, MemoryError};

use super::common::{device, random};

kgraph::graph!("tests/graphs/test_control.toml");

fn assert_same_bits(what: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len()).find(|&i| got[i].to_bits() != want[i].to_bits()) {
        panic!("{what}: element {i} differs: got {} want {}", got[i], want[i]);
    }
}

fn control(dev: &kgraph::Device, x: &[f32], flag: i32) -> TestControl {
    let mut g = TestControl::new(dev).unwrap();
    g.upload_x(x).unwrap();
    g.load_v(&[1.0]).unwrap();
    g.upload_flag(&[flag]).unwrap();
    g
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn conditional_nodes_run_their_bodies_as_often_as_their_conditions_say_and_equal_run_eager() {
    let dev = device();
    let x = random(TestControl::N, 41);
    for flag in [0, 1] {
        let mut built = control(&dev, &x, flag);
        built.capture().unwrap();
        let mut eager = control(&dev, &x, flag);
        for launch in 1..=3u32 {
            built.replay().unwrap();
            eager.run_eager().unwrap();
            let what = format!("flag {flag}, launch {launch}");
            let acc = built.download_acc().unwrap();
            assert_same_bits(&format!("{what}: acc"), &acc, &eager.download_acc().unwrap());
            // The repeat loop added x exactly k = 10 times after the memset zeroed acc.
            for (a, xi) in acc.iter().zip(&x) {
                assert!((a - 10.0 * xi).abs() <= 1e-5 * xi.abs().max(1.0), "{what}: acc {a} vs 10 x = {}", 10.0 * xi);
            }
            // The until loop halves v until below 0.01: 7 iterations from 1.0 on the first launch
            // (2^-7 = 0.0078), then one per launch (the body runs before the test).
            let v = built.download_v().unwrap()[0];
            assert_eq!(v, 2f32.powi(-(6 + launch as i32)), "{what}: v after the until loop");
            assert_eq!(v.to_bits(), eager.download_v().unwrap()[0].to_bits(), "{what}: v eager");
            let (y, y_copy) = (built.download_y().unwrap(), built.download_y_copy().unwrap());
            assert_same_bits(&format!("{what}: memcpy of y"), &y_copy, &y);
            assert_same_bits(&format!("{what}: y"), &y, &eager.download_y().unwrap());
            let scaled = y.iter().zip(&x).all(|(y, x)| *y == 3.0f32.mul_add(*x, 1.0));
            assert_eq!(scaled, flag != 0, "{what}: the if body ran exactly when the flag was set");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn until_loop_stops_at_max_and_the_flag_is_read_at_every_launch() {
    let dev = device();
    let x = random(TestControl::N, 42);
    let mut g = control(&dev, &x, 0);
    g.capture().unwrap();
    // v = 2^40: 46 halvings reach 2^-7 < 0.01, all within max = 100.
    g.load_v(&[2f32.powi(40)]).unwrap();
    g.replay().unwrap();
    assert_eq!(g.download_v().unwrap()[0], 2f32.powi(-7));
    // v = 2^120: 127 halvings needed, max = 100 stops at 2^20.
    g.load_v(&[2f32.powi(120)]).unwrap();
    g.replay().unwrap();
    assert_eq!(g.download_v().unwrap()[0], 2f32.powi(20), "capped at max = 100 iterations");
    // A NaN stops the loop after one iteration (the test is `value >= below`).
    g.load_v(&[f32::NAN]).unwrap();
    g.replay().unwrap();
    assert!(g.download_v().unwrap()[0].is_nan());
    // The if node reads the flag at each launch: no re-capture.
    assert!(g.download_y().unwrap().iter().all(|&y| y == 0.0), "flag 0: y untouched");
    g.upload_flag(&[7]).unwrap();
    g.replay().unwrap();
    assert!(g.download_y().unwrap().iter().zip(&x).all(|(y, x)| *y == 3.0f32.mul_add(*x, 1.0)));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn replacing_a_buffer_rebinds_every_node_that_passes_it_without_recapture() {
    let dev = device();
    let (x1, x2) = (random(TestControl::N, 43), random(TestControl::N, 44));
    let mut g = control(&dev, &x1, 1);
    g.capture().unwrap();
    g.replay().unwrap();
    let before = g.download_y().unwrap();
    // Ping-pong: a second input buffer is swapped in, then the first back.
    let other = dev.upload(&x2).unwrap();
    let first = g.replace_x(other).unwrap();
    g.replay().unwrap();
    let mut want = control(&dev, &x2, 1);
    want.run_eager().unwrap();
    assert_same_bits("y after replace_x", &g.download_y().unwrap(), &want.download_y().unwrap());
    assert_same_bits("acc after replace_x", &g.download_acc().unwrap(), &want.download_acc().unwrap());
    assert_eq!(dev.download(&first).unwrap(), x1, "the old slice is returned intact");
    let second = g.replace_x(first).unwrap();
    g.replay().unwrap();
    assert_same_bits("y after swapping back", &g.download_y().unwrap(), &before);
    // A slice of another length is refused and changes nothing.
    let short = dev.upload(&x2[..10]).unwrap();
    assert!(matches!(
        g.replace_x(short),
        Err(Error::Memory(MemoryError::LengthMismatch { expected: 1024, actual: 10, .. }))
    ));
    drop(second);
    g.replay().unwrap();
    assert_same_bits("after a refused replace", &g.download_y().unwrap(), &before);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn launch_shapes_update_in_place_and_a_refused_shape_changes_nothing() {
    let dev = device();
    let x = random(TestControl::N, 45);
    let scale = TestControl::NODES.iter().position(|&n| n == "scale").unwrap();
    let zero = TestControl::NODES.iter().position(|&n| n == "zero_acc").unwrap();
    let mut g = control(&dev, &x, 1);
    g.capture().unwrap();
    // The same coverage with twice the blocks of half the size: same result.
    let cfg = LaunchConfig { grid_dim: (8, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
    g.set_launch(scale, cfg).unwrap();
    g.replay().unwrap();
    assert!(g.download_y().unwrap().iter().zip(&x).all(|(y, x)| *y == 3.0f32.mul_add(*x, 1.0)));
    // Half the grid covers half the elements: the shape really changed in the graph.
    g.upload_flag(&[0]).unwrap();
    g.replay().unwrap();
    g.load_v(&[1.0]).unwrap();
    let half = LaunchConfig { grid_dim: (4, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
    let mut fresh = control(&dev, &x, 1);
    fresh.capture().unwrap();
    fresh.set_launch(scale, half).unwrap();
    fresh.replay().unwrap();
    let y = fresh.download_y().unwrap();
    assert!(y[..512].iter().zip(&x).all(|(y, x)| *y == 3.0f32.mul_add(*x, 1.0)) && y[512..].iter().all(|&y| y == 0.0));
    // 2048 threads per block exceed every device's limit: refused (a driver error), nothing changed.
    let too_big = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (2048, 1, 1), shared_mem_bytes: 0 };
    assert!(fresh.set_launch(scale, too_big).is_err());
    assert!(
        matches!(fresh.set_launch(zero, cfg), Err(Error::Graph(GraphError::Failed { .. }))),
        "a memset node has no launch shape"
    );
    fresh.replay().unwrap();
    // The whole-graph update rebuilds from the current state (the half shape) in place.
    fresh.update_graph().unwrap();
    fresh.replay().unwrap();
    assert_eq!(fresh.download_y().unwrap(), y);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn profile_times_every_unit_and_debug_dot_dumps_the_conditional_graph() {
    let dev = device();
    let mut g = control(&dev, &random(TestControl::N, 46), 1);
    assert!(matches!(g.debug_dot(std::path::Path::new("/tmp/none.dot")), Err(Error::Graph(GraphError::Failed { .. }))));
    g.capture().unwrap();
    let p = g.profile(20).unwrap();
    let names: Vec<&str> = p.rows.iter().map(|r| r.node.as_str()).collect();
    assert_eq!(names, ["zero_acc", "repeat_add", "halve_until", "maybe_scale", "copy_y"]);
    assert!(p.rows.iter().all(|r| r.us > 0.0 && r.us.is_finite()), "{p}");
    let sum: f64 = p.rows.iter().map(|r| r.us).sum();
    assert!((sum - p.serial_us).abs() <= 0.05 * p.serial_us + 1.0, "rows sum to the total: {p}");
    assert!(p.replay_us.is_some_and(|r| r > 0.0), "{p}");
    let row = |n: &str| p.rows.iter().find(|r| r.node == n).unwrap().us;
    assert!(row("repeat_add") > row("zero_acc"), "ten kernel launches take longer than one memset: {p}");
    println!("{p}");
    let path = std::env::temp_dir().join("kgraph_test_control.dot");
    g.debug_dot(&path).unwrap();
    let dot = std::fs::read_to_string(&path).unwrap();
    assert!(dot.contains("digraph"), "{dot}");
    assert!(dot.to_uppercase().contains("CONDITIONAL") || dot.contains("WHILE"), "conditional nodes in the dump");
}
