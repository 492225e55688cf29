//! The grid-wide resident loop's own cost (`Resident::new_grid`,
//! `examples/bench/kernels/bench_resident_grid.cu`): round trips of a step that only runs grid
//! barriers, on grids of 1, 8 and one block per multiprocessor, with the loop's two barriers
//! alone and with 8 more; the difference over 8 is the price of one grid barrier. First the same
//! step in the one-block loop (`Resident::new`), the floor the grid loop on one block is held to.

use std::time::Instant;

use kgraph::cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use kgraph::resident::{GridShape, Resident};
use kgraph::Device;

use crate::report::Report;
use crate::resident::pct;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct BarrierIn {
    value: u32,
    syncs: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct BarrierOut {
    answer: u32,
}

// SAFETY (each): repr(C) u32 words, no padding, any bits valid; the .cu declares the same.
unsafe impl DeviceRepr for BarrierIn {}
unsafe impl ValidAsZeroBits for BarrierIn {}
unsafe impl kgraph::Pod for BarrierIn {}
unsafe impl DeviceRepr for BarrierOut {}
unsafe impl ValidAsZeroBits for BarrierOut {}
unsafe impl kgraph::Pod for BarrierOut {}

// SAFETY: the cubin kgraph-build compiled from this file (or empty: NVRTC), its text and header
// folder; no `#[kernel]` handle uses it.
const SOURCE: kgraph::expert::KernelSource = unsafe {
    kgraph::expert::KernelSource::new(
        "examples/bench/kernels/bench_resident_grid.cu",
        include_bytes!(concat!(env!("OUT_DIR"), "/kgraph/bench_resident_grid.cubin")),
        include_str!("kernels/bench_resident_grid.cu"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/examples/bench/kernels"),
    )
};

/// Extra barriers per step in the second measurement of each grid.
const EXTRA_SYNCS: u32 = 8;

/// `steps` timed round trips of the step in the one-block loop, then per grid and barrier count.
pub fn run(dev: &Device, steps: usize, report: &mut Report) -> anyhow::Result<()> {
    let function = kgraph::expert::ModuleCache::new(dev.context()).kernel_function(
        &SOURCE,
        "bench_resident_block",
        "bench_resident_block",
        &[8, 8, 8, 4],
    )?;
    // SAFETY: bench_resident_block takes (bell, const KgResidentPair*, KgResidentPair*,
    // Params { unsigned }) and runs kg_resident_loop<BlockBarrierStep>; BarrierIn / BarrierOut /
    // u32 have those layouts. The body touches no device memory, returns, reaches `syncs` block
    // barriers in every thread, and fits 256 threads.
    let mut r: Resident<BarrierIn, BarrierOut, u32, ()> =
        unsafe { Resident::new("bench_resident_block", dev, function, (256, 1, 1), 0u32, (), Default::default()) }?;
    for syncs in [0, EXTRA_SYNCS] {
        let t = timed(&mut r, steps, syncs, 1)?;
        let name = format!("kgraph_resident_block_syncs{}", 2 + syncs);
        report.add(format!("{name}_roundtrip_p50"), pct(&t, 50.0), "us");
        report.add(format!("{name}_roundtrip_p99"), pct(&t, 99.0), "us");
    }
    drop(r);
    let sms = dev.stream().sm_count()?;
    for (tag, blocks) in [("1", 1), ("8", 8), ("per_sm", sms)] {
        let function = kgraph::expert::ModuleCache::new(dev.context()).kernel_function(
            &SOURCE,
            "bench_resident_grid",
            "bench_resident_grid",
            &[8, 8, 8, 8, 4],
        )?;
        let shape = GridShape { block: (256, 1, 1), max_blocks: Some(blocks) };
        // SAFETY: bench_resident_grid takes (bell, const KgResidentPair*, KgResidentPair*,
        // unsigned* scratch, Params { unsigned }) and runs kg_resident_grid_loop<BarrierStep>;
        // BarrierIn / BarrierOut / u32 have those layouts. The body touches no device memory,
        // returns, reaches `syncs` barriers in every thread of every block, and fits 256 threads.
        let mut r: Resident<BarrierIn, BarrierOut, u32, ()> =
            unsafe { Resident::new_grid("bench_resident_grid", dev, function, shape, 0u32, (), Default::default()) }?;
        let grid = r.grid_blocks();
        let mut p50 = [0.0; 2];
        for (i, syncs) in [0, EXTRA_SYNCS].into_iter().enumerate() {
            let t = timed(&mut r, steps, syncs, grid)?;
            p50[i] = pct(&t, 50.0);
            let name = format!("kgraph_resident_grid_{tag}_syncs{}", 2 + syncs);
            report.add(format!("{name}_roundtrip_p50"), pct(&t, 50.0), "us");
            report.add(format!("{name}_roundtrip_p99"), pct(&t, 99.0), "us");
        }
        report.add(format!("kgraph_resident_grid_{tag}_blocks"), f64::from(grid), "blocks");
        report.add(format!("kgraph_resident_grid_{tag}_barrier"), (p50[1] - p50[0]) / f64::from(EXTRA_SYNCS), "us");
    }
    Ok(())
}

/// `steps` round trips (after 1000 untimed) of a step of `syncs` extra barriers, each answer
/// checked (`value + blocks`), sorted, in us.
fn timed(
    r: &mut Resident<BarrierIn, BarrierOut, u32, ()>,
    steps: usize,
    syncs: u32,
    blocks: u32,
) -> anyhow::Result<Vec<f64>> {
    let mut t = Vec::with_capacity(steps);
    for s in 0..steps + 1000 {
        let value = s as u32;
        let t0 = Instant::now();
        let out = r.step(&BarrierIn { value, syncs })?;
        let dt = t0.elapsed().as_secs_f64() * 1e6;
        anyhow::ensure!(out.answer == value.wrapping_add(blocks), "resident step {s}: wrong answer");
        if s >= 1000 {
            t.push(dt);
        }
    }
    t.sort_by(f64::total_cmp);
    Ok(t)
}
