//! The grid-wide resident loop (`Resident::new_grid`, `kg_resident_grid.cuh`): a step of three
//! kernels' device functions separated by grid barriers on a cooperative grid gives the
//! invariants of tests/kernels/test_resident_grid.cu at every step, on grids of one block, one
//! per multiprocessor, every block the device keeps resident and a green context's SMs; the
//! state carries across an idle exit and its relaunch; a block no multiprocessor can hold is a
//! typed error.

use std::time::Duration;

use kgraph::cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use kgraph::resident::{GridShape, Resident, ResidentOptions, SpinPolicy};
use kgraph::{Device, DeviceBuffer, DeviceIn, Error, LaunchError};

use super::common::device;

/// `GridStep::In` of tests/kernels/test_resident_grid.cu.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct GridIn {
    delta: u32,
}

/// `GridStep::Out`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct GridOut {
    sum: u32,
    min: u32,
    max: u32,
    blocks: u32,
    parts: u32,
    steps: u32,
}

/// `GridStep::Params`: three addresses, `n`, `max_parts` (32 bytes, no padding).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct GridParams {
    x: u64,
    partial: u64,
    steps: u64,
    n: u32,
    max_parts: u32,
}

// SAFETY (each): repr(C) structs of u32s, no padding, any bits valid; the .cu declares the same.
unsafe impl DeviceRepr for GridIn {}
unsafe impl ValidAsZeroBits for GridIn {}
unsafe impl kgraph::Pod for GridIn {}
unsafe impl DeviceRepr for GridOut {}
unsafe impl ValidAsZeroBits for GridOut {}
unsafe impl kgraph::Pod for GridOut {}

/// What the body's addresses point into.
struct GridBuffers {
    x: DeviceBuffer<u32>,
    _partial: DeviceBuffer<u32>,
    _steps: DeviceBuffer<u32>,
}

type GridResident = Resident<GridIn, GridOut, GridParams, GridBuffers>;

// SAFETY: the cubin kgraph-build compiled from this file (or empty: NVRTC), its text and header
// folder; no `#[kernel]` handle uses it.
const GRID_SOURCE: kgraph::expert::KernelSource = unsafe {
    kgraph::expert::KernelSource::new(
        "tests/kernels/test_resident_grid.cu",
        include_bytes!(concat!(env!("OUT_DIR"), "/kgraph/test_resident_grid.cubin")),
        include_str!("../kernels/test_resident_grid.cu"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kernels"),
    )
};

/// Parts the partial sums have room for (more than any grid of 256-thread blocks on a GPU of
/// up to 512 multiprocessors at full occupancy).
const MAX_PARTS: u32 = 4096;

/// `test_resident_grid` (five parameters: three pointers, then the 32-byte `Params`).
fn grid_function(dev: &Device) -> kgraph::cudarc::driver::CudaFunction {
    kgraph::expert::ModuleCache::new(dev.context())
        .kernel_function(&GRID_SOURCE, "test_resident_grid", "test_resident_grid", &[8, 8, 8, 8, 32])
        .unwrap()
}

fn grid_resident(dev: &Device, n: u32, shape: GridShape, options: ResidentOptions) -> GridResident {
    let function = grid_function(dev);
    let bufs = GridBuffers {
        x: dev.alloc_zeros::<u32>(n as usize).unwrap(),
        _partial: dev.alloc_zeros::<u32>(3 * MAX_PARTS as usize).unwrap(),
        _steps: dev.alloc_zeros::<u32>(1).unwrap(),
    };
    dev.synchronize().unwrap();
    let params = GridParams {
        x: bufs.x.device_addr(),
        partial: bufs._partial.device_addr(),
        steps: bufs._steps.device_addr(),
        n,
        max_parts: MAX_PARTS,
    };
    // SAFETY: test_resident_grid takes (bell, const KgResidentPair*, KgResidentPair*, unsigned*
    // scratch, GridStep::Params) and runs kg_resident_grid_loop<GridStep>; GridIn / GridOut /
    // GridParams have the layouts of In / Out / Params (u32 words; three addresses and two u32s);
    // `x` holds n words, `partial` 3 * MAX_PARTS (the body uses at most min(blocks, max_parts)
    // parts), `steps` one, all moved into the Resident; the body writes only them and `out`,
    // returns, reaches its two grid barriers in every thread, and strides its work over any
    // grid; every block shape the tests use is at most its __launch_bounds__ (1024).
    unsafe { Resident::new_grid("GridResident", dev, function, shape, params, bufs, options) }.unwrap()
}

fn quick() -> ResidentOptions {
    ResidentOptions { wait: SpinPolicy::with_timeout(Duration::from_secs(5)), ..ResidentOptions::default() }
}

/// `steps` more steps (after `first_step` steps whose deltas add up to `total`) with deltas
/// 1..=13 in turn, each output checked against the invariant: every element is the sum of every
/// delta so far (min = max = that), the sum is n times it, and the output names the grid it ran
/// on. Returns the new sum of the deltas.
fn run_steps(r: &mut GridResident, n: u32, steps: u32, first_step: u32, mut total: u32) -> u32 {
    for k in 0..steps {
        let delta = 1 + k % 13;
        total += delta;
        let out = r.step(&GridIn { delta }).unwrap();
        let want = GridOut {
            sum: n.wrapping_mul(total),
            min: total,
            max: total,
            blocks: r.grid_blocks(),
            parts: r.grid_blocks().min(MAX_PARTS),
            steps: first_step + k + 1,
        };
        assert_eq!(out, want, "step {} on {} blocks", first_step + k + 1, r.grid_blocks());
    }
    total
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_grid_step_of_three_device_functions_keeps_its_invariants_on_every_grid() {
    let dev = device();
    let sms = dev.stream().sm_count().unwrap();
    let n = 1 << 20; // 4096 virtual blocks of 256: many per resident block
    let shapes = [
        GridShape::per_sm(256),
        GridShape { block: (256, 1, 1), max_blocks: Some(1) },
        GridShape { block: (128, 2, 1), max_blocks: Some(u32::MAX) },
        GridShape { block: (1024, 1, 1), max_blocks: Some(3) },
    ];
    for shape in shapes {
        let mut r = grid_resident(&dev, n, shape, quick());
        match shape.max_blocks {
            None => assert_eq!(r.grid_blocks(), sms, "one block per multiprocessor"),
            Some(u32::MAX) => {
                let blocks = r.grid_blocks();
                assert!(blocks >= sms && blocks % sms == 0, "every resident block: {blocks} on {sms} SMs");
            }
            Some(asked) => assert_eq!(r.grid_blocks(), asked),
        }
        let total = run_steps(&mut r, n, 300, 0, 0);
        r.stop().unwrap();
        // The state itself, read back once the kernel has exited: every element the same.
        let x = dev.download(&r.body().expect("stopped").x).unwrap();
        assert!(x.iter().all(|&v| v == total), "state on {} blocks", r.grid_blocks());
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_grid_resident_carries_its_state_across_an_idle_exit() {
    let dev = device();
    let n = 100_003; // not a multiple of the block
    let options = ResidentOptions { idle_exit: Duration::from_millis(5), ..quick() };
    let mut r = grid_resident(&dev, n, GridShape::per_sm(256), options);
    let mut total = 0;
    for round in 0..4 {
        total = run_steps(&mut r, n, 50, round * 50, total);
        std::thread::sleep(Duration::from_millis(30)); // the kernel exits meanwhile
    }
    r.stop().unwrap();
    let x = dev.download(&r.body().expect("stopped").x).unwrap();
    assert!(x.iter().all(|&v| v == total));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_grid_resident_on_reserved_sms_stays_within_them() {
    let dev = device();
    // SAFETY: both parts are used from this test's thread only.
    let split = unsafe { dev.split_sms(8) }.unwrap();
    let n = 1 << 18;
    let mut r = grid_resident(&split.reserved, n, GridShape::per_sm(256), quick());
    assert_eq!(r.grid_blocks(), split.reserved_sms, "one block per reserved multiprocessor");
    run_steps(&mut r, n, 300, 0, 0);
    // Stopped first: a resident grid counts on its multiprocessors being free of other resident
    // kernels (one that never exits would hold the blocks of the next).
    drop(r);
    let every = GridShape { block: (256, 1, 1), max_blocks: Some(u32::MAX) };
    let mut all = grid_resident(&split.reserved, n, every, quick());
    let blocks = all.grid_blocks();
    assert!(
        blocks >= split.reserved_sms && blocks % split.reserved_sms == 0,
        "{blocks} blocks: whole SMs of the split"
    );
    let whole = grid_resident(&dev, n, every, quick()).grid_blocks();
    assert!(blocks < whole, "{blocks} blocks on the reserved SMs, {whole} on the whole GPU");
    run_steps(&mut all, n, 100, 0, 0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_block_no_multiprocessor_holds_is_refused_before_any_launch() {
    let dev = device();
    let function = grid_function(&dev);
    let params = GridParams { x: 0, partial: 0, steps: 0, n: 0, max_parts: 0 };
    // SAFETY: the kernel's contract as in `grid_resident` (n = 0: the body touches no memory);
    // the shape is refused before any launch (2048 threads exceed the kernel's bound of 1024).
    let made = unsafe {
        Resident::<GridIn, GridOut, GridParams, ()>::new_grid(
            "GridResident",
            &dev,
            function,
            GridShape::per_sm(2048),
            params,
            (),
            quick(),
        )
    };
    match made {
        Err(Error::Launch(LaunchError::NotCoResident { kernel: "GridResident", block: 2048 })) => {}
        Err(other) => panic!("wrong error: {other}"),
        Ok(_) => panic!("a block of 2048 threads was accepted"),
    }
}
