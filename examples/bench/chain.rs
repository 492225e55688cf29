//! chain8 / chain64: dependent launches of y = a·x + b on 256 f32, ping-ponging two buffers.
//! (a) kgraph's generated binding, eager; (b) the same launches hand-written with cudarc's
//! `launch_builder`, event tracking off (kgraph's context) and on (a default cudarc context);
//! (c) captured and replayed: kgraph `Graph`, raw cudarc graph, and kgraph with PDL.

use std::sync::Arc;

use kgraph::cudarc::driver::{result, sys, CudaContext, CudaFunction, CudaSlice, CudaStream, PushKernelArg};
use kgraph::{Device, DeviceBuffer, Graph, LaunchConfig, LaunchOptions, Stream};

use crate::k::Kernels;
use crate::report::{median_us, Report};

const N: usize = 256;
const CFG: LaunchConfig = LaunchConfig { grid_dim: (2, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
const A: f32 = 1.0001;
const B: f32 = 0.5;

/// `nodes` launches through the generated binding; `pdl` selects the PDL kernel and attribute.
fn chain_kgraph(
    k: &Kernels,
    s: &Stream,
    x: &mut DeviceBuffer<f32>,
    y: &mut DeviceBuffer<f32>,
    nodes: usize,
    pdl: Option<LaunchOptions>,
) -> kgraph::Result<()> {
    for i in 0..nodes {
        let (src, dst) = if i % 2 == 0 { (&*x, &mut *y) } else { (&*y, &mut *x) };
        match pdl {
            None => k.bench_axpb.launch(s, CFG, src, dst, A, B, N as i32)?,
            Some(opts) => k.bench_axpb_pdl.launch_with(s, CFG, opts, src, dst, A, B, N as i32)?,
        }
    }
    Ok(())
}

/// The same launches written by hand with cudarc.
fn chain_raw(s: &CudaStream, f: &CudaFunction, x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>, nodes: usize) {
    let n = N as i32;
    for i in 0..nodes {
        let mut l = s.launch_builder(f);
        if i % 2 == 0 {
            l.arg(&*x).arg(&mut *y);
        } else {
            l.arg(&*y).arg(&mut *x);
        }
        l.arg(&A).arg(&B).arg(&n);
        // SAFETY: matches bench_axpb(const float*, float*, float, float, int); both buffers hold N.
        unsafe { l.launch(CFG) }.expect("raw launch");
    }
}

fn sync(s: &CudaStream) -> anyhow::Result<()> {
    Ok(s.synchronize()?)
}

/// cudarc's stream of kgraph's device, for the hand-written launches and captures.
fn raw_stream(dev: &Device) -> Arc<CudaStream> {
    // SAFETY: the hand-written cudarc work issues on kgraph's own stream only, on buffers that
    // stream owns, and captures nothing kgraph launches into: the order kgraph's launches keep.
    unsafe { dev.stream().cuda() }.clone()
}

/// cudarc's slices of two kgraph buffers, for the hand-written launches.
fn raw_pair<'a>(
    x: &'a mut DeviceBuffer<f32>,
    y: &'a mut DeviceBuffer<f32>,
) -> (&'a mut CudaSlice<f32>, &'a mut CudaSlice<f32>) {
    // SAFETY: they are used only on the stream that owns them (`raw_stream`).
    unsafe { (x.as_cuda_mut(), y.as_cuda_mut()) }
}

/// The chain64 graph floor: run first, while the process holds only the device stream (a
/// second stream slows every later replay, see the anchors' stream probe) and a branched graph
/// struct (`BenchFanout`, built from its DAG, which creates no stream). kgraph's chain64 graph
/// and the same launches captured by hand with cudarc, interleaved in rounds; the standalone
/// hand-cudarc program (`shared/anchors/rawcudarc`) is the reference run beside this binary.
pub fn floor(dev: &Device, k: &Kernels, iters: usize, report: &mut Report) -> anyhow::Result<()> {
    let init: Vec<f32> = (0..N).map(|i| i as f32 * 0.01).collect();
    let (mut x, mut y) = (dev.upload(&init)?, dev.upload(&init)?);
    let s = raw_stream(dev);
    let f = k.bench_axpb.function().clone();
    let mut fanout = crate::fanout::BenchFanout::new(dev)?;
    fanout.capture()?;
    fanout.replay()?;
    // SAFETY: `x` and `y` are declared before `g` (outlive it) and never reallocated.
    let g = unsafe { Graph::capture(dev.stream(), |cs| chain_kgraph(k, cs, &mut x, &mut y, 64, None)) }?;
    g.upload()?;
    s.begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
    {
        let (rx, ry) = raw_pair(&mut x, &mut y);
        chain_raw(&s, &f, rx, ry, 64);
    }
    let raw = s.end_capture(sys::CUgraphInstantiate_flags(0))?.expect("captured graph");
    raw.upload()?;
    let (mut kg, mut rc) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        kg.push(median_us(iters, || {
            g.replay()?;
            sync(&s)
        })?);
        rc.push(median_us(iters, || {
            raw.launch()?;
            sync(&s)
        })?);
    }
    kg.sort_by(f64::total_cmp);
    rc.sort_by(f64::total_cmp);
    report.add("kgraph_chain64_graph_floor", kg[2], "us");
    report.add("cudarc_chain64_graph_floor", rc[2], "us");
    report.ratio(
        "ratio_chain64_graph_floor_kgraph_vs_cudarc",
        "kgraph_chain64_graph_floor",
        "cudarc_chain64_graph_floor",
    );
    drop(fanout);
    Ok(())
}

pub fn run(dev: &Device, k: &Kernels, iters: usize, report: &mut Report) -> anyhow::Result<()> {
    let init: Vec<f32> = (0..N).map(|i| i as f32 * 0.01).collect();
    let (mut x, mut y) = (dev.upload(&init)?, dev.upload(&init)?);
    let s = raw_stream(dev);
    let f = k.bench_axpb.function().clone();

    // A default cudarc context object: event tracking on, and a second stream so it is active.
    let tracked_ctx = CudaContext::new(0)?;
    let ts = tracked_ctx.new_stream()?;
    let (mut tx, mut ty) = (ts.clone_htod(&init)?, ts.clone_htod(&init)?);

    for nodes in [8usize, 64] {
        let t = median_us(iters, || {
            chain_kgraph(k, dev.stream(), &mut x, &mut y, nodes, None)?;
            sync(&s)
        })?;
        report.add(format!("kgraph_chain{nodes}_eager"), t, "us");
        let t = median_us(iters, || {
            {
                let (rx, ry) = raw_pair(&mut x, &mut y);
                chain_raw(&s, &f, rx, ry, nodes);
            }
            sync(&s)
        })?;
        report.add(format!("cudarc_chain{nodes}_eager_events_off"), t, "us");
        let t = median_us(iters, || {
            chain_raw(&ts, &f, &mut tx, &mut ty, nodes);
            sync(&ts)
        })?;
        report.add(format!("cudarc_chain{nodes}_eager_events_on"), t, "us");
        report.ratio(
            &format!("ratio_chain{nodes}_eager_kgraph_vs_cudarc"),
            &format!("kgraph_chain{nodes}_eager"),
            &format!("cudarc_chain{nodes}_eager_events_off"),
        );

        // SAFETY: `x` and `y` are declared before `g` (outlive it) and never reallocated; the
        // host touches them only through stream-ordered transfers between replays.
        let g = unsafe { Graph::capture(dev.stream(), |cs| chain_kgraph(k, cs, &mut x, &mut y, nodes, None)) }?;
        g.upload()?;
        let t = median_us(iters, || {
            g.replay()?;
            sync(&s)
        })?;
        report.add(format!("kgraph_chain{nodes}_graph"), t, "us");
        // Attribution: GPU time of one replay (events) and back-to-back replays per replay.
        let mut gpu =
            (0..iters).map(|_| g.replay_timed().map(|ms| f64::from(ms) * 1e3)).collect::<Result<Vec<_>, _>>()?;
        gpu.sort_by(f64::total_cmp);
        report.add(format!("kgraph_chain{nodes}_graph_gpu_time"), gpu[gpu.len() / 2], "us");
        let t0 = std::time::Instant::now();
        for _ in 0..iters {
            g.replay()?;
        }
        sync(&s)?;
        report.add(
            format!("kgraph_chain{nodes}_graph_throughput"),
            t0.elapsed().as_secs_f64() * 1e6 / iters as f64,
            "us/replay",
        );

        s.begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
        {
            let (rx, ry) = raw_pair(&mut x, &mut y);
            chain_raw(&s, &f, rx, ry, nodes);
        }
        let raw = s.end_capture(sys::CUgraphInstantiate_flags(0))?.expect("captured graph");
        raw.upload()?;
        let t = median_us(iters, || {
            raw.launch()?;
            sync(&s)
        })?;
        report.add(format!("cudarc_chain{nodes}_graph"), t, "us");
        report.ratio(
            &format!("ratio_chain{nodes}_graph_kgraph_vs_cudarc"),
            &format!("kgraph_chain{nodes}_graph"),
            &format!("cudarc_chain{nodes}_graph"),
        );

        // SAFETY: as for `g`.
        let pdl = unsafe {
            Graph::capture(dev.stream(), |cs| chain_kgraph(k, cs, &mut x, &mut y, nodes, Some(LaunchOptions::PDL)))
        }?;
        pdl.upload()?;
        let t = median_us(iters, || {
            pdl.replay()?;
            sync(&s)
        })?;
        report.add(format!("kgraph_chain{nodes}_graph_pdl"), t, "us");
        report.ratio(
            &format!("ratio_chain{nodes}_graph_pdl_vs_plain"),
            &format!("kgraph_chain{nodes}_graph_pdl"),
            &format!("kgraph_chain{nodes}_graph"),
        );

        if nodes == 64 {
            let t = raw_graph_on_cumemalloc(&s, &f, &init, iters)?;
            report.add("cudarc_chain64_graph_cumemalloc", t, "us");
        }

        // Same start, with and without PDL: the results must agree bit for bit.
        let mut outs = Vec::new();
        for g in [&g, &pdl] {
            dev.upload_into(&init, &mut x)?;
            g.replay()?;
            outs.push(dev.download(&x)?);
        }
        let equal = outs[0].iter().zip(&outs[1]).all(|(a, b)| a.to_bits() == b.to_bits());
        report.add(format!("kgraph_chain{nodes}_pdl_bit_equal"), f64::from(u8::from(equal)), "bool");
    }
    Ok(())
}

/// The raw cudarc chain64 graph again, on buffers from `cuMemAlloc` instead of the stream-ordered
/// pool that cudarc (and so kgraph) allocates from: isolates what the allocation kind costs a
/// graph replay (the C++ variant experiment, graph_variants.cu, measures the same in CUDA C++).
fn raw_graph_on_cumemalloc(s: &Arc<CudaStream>, f: &CudaFunction, init: &[f32], iters: usize) -> anyhow::Result<f64> {
    let bytes = std::mem::size_of_val(init);
    // SAFETY: plain allocations of `bytes`, freed below after the stream is idle.
    let (pa, pb) = unsafe { (result::malloc_sync(bytes)?, result::malloc_sync(bytes)?) };
    // SAFETY: both allocations hold `bytes`; the stream is live.
    unsafe {
        result::memset_d8_async(pa, 0, bytes, s.cu_stream())?;
        result::memset_d8_async(pb, 0, bytes, s.cu_stream())?;
    }
    // SAFETY: each pointer is a live allocation of N f32; the slices are leaked back below, so
    // cudarc never frees them (it would use the stream-ordered free).
    let (mut x, mut y) = unsafe { (s.upgrade_device_ptr::<f32>(pa, N), s.upgrade_device_ptr::<f32>(pb, N)) };
    s.begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
    chain_raw(s, f, &mut x, &mut y, 64);
    let g = s.end_capture(sys::CUgraphInstantiate_flags(0))?.expect("captured graph");
    g.upload()?;
    let t = median_us(iters, || {
        g.launch()?;
        sync(s)
    })?;
    drop(g);
    let (pa, pb) = (x.leak(), y.leak());
    s.synchronize()?;
    // SAFETY: the stream is idle and nothing refers to the allocations any more.
    unsafe {
        result::free_sync(pa)?;
        result::free_sync(pb)?;
    }
    Ok(t)
}
