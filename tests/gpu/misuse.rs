//! Runtime misuse: every mistake below is a typed `kgraph::Error` whose message names what was
//! misused (the operation, buffer, slot bus, graph or kernel), and leaves the device usable.
//! One place for all five: wrong transfer lengths, an out-of-range slot, replay before capture,
//! a capture begun while the stream is already capturing, and a launch the driver rejects.

use kgraph::cudarc::driver::sys::CUstreamCaptureStatus;
use kgraph::{Device, Error, Graph, GraphError, LaunchConfig, LaunchOptions, MemoryError, SlotBus, Stream};

use super::common::device;
use super::graph::TestAffine;

/// `out[i] = base + i` for `i < n` (tests/kernels/test_misuse.cu), bound outside any registry.
#[kgraph::kernel("test_misuse.cu", unsafe(extents))]
fn mu_iota_u32(out: &mut [u32; n], n: i32, base: u32);

const N: usize = 1000;

fn cfg(n: usize) -> LaunchConfig {
    LaunchConfig::for_num_elems(u32::try_from(n).expect("test sizes fit in u32"))
}

fn capture_status(s: &Stream) -> CUstreamCaptureStatus {
    s.capture_status().expect("query capture status")
}

/// Launches `mu_iota_u32` eagerly and checks the output's invariants (starts at `base`, steps
/// by one): the stream and context still work.
fn assert_device_usable(dev: &Device, iota: &MuIotaU32, base: u32, what: &str) {
    assert_eq!(capture_status(dev.stream()), CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE, "{what}");
    let mut out = dev.alloc_zeros::<u32>(N).unwrap();
    iota.launch(dev.stream(), cfg(N), &mut out, N as i32, base).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_iota(&dev.download(&out).unwrap(), base, what);
}

fn assert_iota(v: &[u32], base: u32, what: &str) {
    assert_eq!(v.first(), Some(&base), "{what}: first element");
    assert!(v.windows(2).all(|w| w[1] == w[0].wrapping_add(1)), "{what}: not a unit-step sequence");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn wrong_transfer_lengths_name_the_operation_and_buffer_and_write_nothing() {
    let dev = device();
    let mut d = dev.upload(&[7.0f32; 4]).unwrap();
    let err = dev.upload_into(&[1.0f32; 5], &mut d).unwrap_err();
    match &err {
        Error::Memory(MemoryError::LengthMismatch { what, expected: 4, actual: 5 }) => {
            assert!(what.contains("upload_into"), "{what}")
        }
        other => panic!("expected LengthMismatch, got {other:?}"),
    }
    let text = err.to_string();
    assert!(text.contains("upload_into") && text.contains("expected 4") && text.contains("got 5"), "{text}");

    let mut host = [0.0f32; 3];
    let err = dev.download_into(&d, &mut host).unwrap_err();
    assert!(matches!(err, Error::Memory(MemoryError::LengthMismatch { expected: 4, actual: 3, .. })), "{err:?}");
    assert!(err.to_string().contains("download_into"), "{err}");
    assert_eq!(host, [0.0; 3], "a refused download writes nothing");
    assert_eq!(dev.download(&d).unwrap(), vec![7.0; 4], "a refused upload writes nothing");

    // A generated graph struct names its buffer.
    let mut g = TestAffine::new(&dev).unwrap();
    let short = vec![1.0f32; TestAffine::X_LEN - 1];
    let err = g.upload_x(&short).unwrap_err();
    match &err {
        Error::Memory(MemoryError::LengthMismatch { what, expected, actual }) => {
            assert_eq!((*expected, *actual), (TestAffine::X_LEN, TestAffine::X_LEN - 1));
            assert!(what.contains("upload_x") && what.contains("`x`"), "{what}");
        }
        other => panic!("expected LengthMismatch, got {other:?}"),
    }
    assert!(err.to_string().contains("`x`"), "the message names the buffer: {err}");
    let mut long = vec![0.0f32; TestAffine::Y_LEN + 1];
    let err = g.download_y_into(&mut long).unwrap_err();
    assert!(
        matches!(err, Error::Memory(MemoryError::LengthMismatch { .. })) && err.to_string().contains("`y`"),
        "{err}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn out_of_range_slot_names_the_bus_slot_and_length() {
    let dev = device();
    let mut bus = SlotBus::with_name(&dev, "controls", 4).unwrap();
    bus.write(3, 2.5).unwrap();
    for slot in [4, 5, usize::MAX] {
        let err = bus.write(slot, 1.0).unwrap_err();
        match &err {
            Error::Memory(MemoryError::OutOfRange { what, index, len }) => {
                assert_eq!((*index, *len), (slot, 4));
                assert!(what.contains("controls"), "{what}");
            }
            other => panic!("slot {slot}: expected OutOfRange, got {other:?}"),
        }
        let text = err.to_string();
        assert!(text.contains("controls") && text.contains(&slot.to_string()) && text.contains("len 4"), "{text}");
    }
    assert_eq!(bus.snapshot().unwrap(), vec![0.0, 0.0, 0.0, 2.5], "refused writes change no slot");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn replay_before_capture_names_the_graph_and_capture_then_works() {
    let dev = device();
    let mut g = TestAffine::new(&dev).unwrap();
    assert!(!g.is_captured());
    let err = g.replay().unwrap_err();
    match &err {
        Error::Graph(GraphError::Failed { op, detail }) => {
            assert_eq!(op, "TestAffine::replay");
            assert!(detail.contains("capture"), "the message says what to do: {detail}");
        }
        other => panic!("expected GraphError::Failed, got {other:?}"),
    }
    assert!(err.to_string().contains("TestAffine::replay"), "{err}");

    // Nothing was left half-done: the same struct captures and replays, matching an eager run
    // of a second instance bit for bit (its output starts zeroed, so the replay must write it).
    let x: Vec<f32> = (0..TestAffine::X_LEN).map(|i| (i % 17) as f32 * 0.25 - 2.0).collect();
    let mut eager = TestAffine::new(&dev).unwrap();
    eager.upload_x(&x).unwrap();
    eager.run_eager().unwrap();
    let want = eager.download_y().unwrap();
    assert!(want.iter().all(|&v| v != 0.0), "the eager output must differ from the zeroed buffer");
    g.upload_x(&x).unwrap();
    g.capture().unwrap();
    g.replay().unwrap();
    let got = g.download_y().unwrap();
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
    assert_eq!(bits(&got), bits(&want), "replay after the refused replay");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn capture_while_capturing_is_refused_and_the_outer_capture_still_works() {
    let dev = device();
    let iota = MuIotaU32::new(&dev).unwrap();
    let s: &Stream = dev.stream();
    let mut out = dev.alloc_zeros::<u32>(N).unwrap();

    // 1. The inner capture is refused; the outer one ignores that and completes.
    let mut inner_error = None;
    // SAFETY: `out` is declared before `graph` (outlives it), never reallocated, and read only
    // by `download` between replays, in stream order; the inner capture touches no memory.
    let graph = unsafe {
        Graph::capture(s, |s| {
            inner_error = Some(Graph::capture(s, |_| Ok(())).map(drop));
            assert_eq!(
                capture_status(s),
                CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE,
                "outer still capturing"
            );
            iota.launch(s, cfg(N), &mut out, N as i32, 11)
        })
    }
    .unwrap();
    let err = inner_error.expect("the closure ran").unwrap_err();
    match &err {
        Error::Graph(GraphError::Failed { op, detail }) => {
            assert_eq!(op, "begin capture");
            assert!(detail.contains("already capturing"), "{detail}");
        }
        other => panic!("nested capture: expected GraphError::Failed, got {other:?}"),
    }
    assert!(err.to_string().contains("begin capture"), "{err}");
    assert_eq!(graph.node_count().unwrap(), 1, "the refused capture added no node");
    assert_eq!(dev.download(&out).unwrap(), vec![0; N], "captured work does not run until replayed");
    graph.replay().unwrap();
    assert_iota(&dev.download(&out).unwrap(), 11, "replay of the outer capture");
    assert_device_usable(&dev, &iota, 5, "after a refused nested capture");

    // 2. The outer closure passes the inner error on: the outer capture fails with it, cleanly.
    // SAFETY: the capture fails, so no graph keeps `out`'s address; the inner one touches nothing.
    let failed = unsafe {
        Graph::capture(s, |s| {
            iota.launch(s, cfg(N), &mut out, N as i32, 99)?;
            Graph::capture(s, |_| Ok(())).map(drop)
        })
    };
    match failed {
        Err(Error::Graph(GraphError::Failed { op, .. })) => assert_eq!(op, "begin capture"),
        other => panic!("the inner error must come back from the outer capture, got {other:?}"),
    }
    assert_iota(&dev.download(&out).unwrap(), 11, "the aborted capture's launch never ran");
    assert_device_usable(&dev, &iota, 23, "after an outer capture failed on a nested one");
    graph.replay().unwrap();
    assert_iota(&dev.download(&out).unwrap(), 11, "the first graph still replays");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn rejected_launch_is_a_launch_error_naming_the_kernel() {
    let dev = device();
    let iota = MuIotaU32::new(&dev).unwrap();
    let mut out = dev.alloc_zeros::<u32>(N).unwrap();
    // More threads per block than any GPU allows (1024): the driver refuses the launch itself.
    let too_big = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (4096, 1, 1), shared_mem_bytes: 0 };
    let plain = iota.launch(dev.stream(), too_big, &mut out, N as i32, 1).unwrap_err();
    // (`mu_iota_u32` has no grid-dependency wait, so a PDL launch of it is refused before the
    // driver sees it: `verified.rs` tests that; here the driver's own refusal.)
    let with_opts =
        iota.launch_with(dev.stream(), too_big, LaunchOptions::default(), &mut out, N as i32, 1).unwrap_err();
    assert_eq!(MuIotaU32::NAME, "mu_iota_u32");
    for (how, err) in [("launch", plain), ("launch_with", with_opts)] {
        assert!(matches!(err, Error::LaunchFailed { kernel: "mu_iota_u32", .. }), "{how}: {err:?}");
        let text = err.to_string();
        assert!(text.contains("mu_iota_u32"), "{how}: the message names the kernel: {text}");
        assert!(std::error::Error::source(&err).is_some(), "{how}: the driver error is the source");
    }
    assert_eq!(dev.download(&out).unwrap(), vec![0; N], "a refused launch writes nothing");

    // Inside a capture, the launch error comes back from `Graph::capture`, the capture is ended.
    // SAFETY: the capture fails, so no graph keeps `out`'s address.
    let failed = unsafe { Graph::capture(dev.stream(), |s| iota.launch(s, too_big, &mut out, N as i32, 1)) };
    match failed {
        Err(err @ Error::LaunchFailed { kernel: "mu_iota_u32", .. }) => {
            assert!(err.to_string().contains("mu_iota_u32"))
        }
        other => panic!("expected the launch error from the capture, got {other:?}"),
    }
    assert_device_usable(&dev, &iota, 1000, "after rejected launches");
}
