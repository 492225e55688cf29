//! Perception round trip: a 160-byte MBP-10 snapshot (and dt) written into mapped pinned memory
//! → Graph A replay (features, CfC step, heads + projection, state carry) → the 5 horizon
//! probabilities read on the host (the heads write them straight into mapped pinned memory, so
//! the read is one stream sync and five loads: no download copy). p50 / p99 of the whole step,
//! PDL on and off. Graph A fused waited for by the stream and by the done word its last node
//! writes (`set_done_word_wait`), Graph A as a resident kernel (`PerceptionResident`: no
//! launch per step) and Graph A's spec as the resident kernel the build generated from it
//! (`Perception::into_resident`), interleaved (`wait_modes`).

use kgraph::Device;
use kgraph_model::graphs::synthetic::BookStream;
use kgraph_model::graphs::{ModelWeights, Perception, PerceptionFused, PerceptionResidentIn};
use kgraph_model::model::SNAP_LEN;
use kgraph_model::resident::{PerceptionIn, PerceptionResident};

use crate::report::{median_us, percentiles_us, Report};

/// Snapshots and their `dt`, drawn from the synthetic book before any timing: the round trip is
/// timed from the host's write of the inputs, as the C++ anchor times it, not from the book's
/// random draws (which the first runs of this bench timed too, adding them to every figure).
struct Ticks {
    ticks: Vec<([f32; SNAP_LEN], f32)>,
    next: usize,
}

impl Ticks {
    fn new(seed: u64) -> Ticks {
        let mut books = BookStream::new(seed);
        let ticks = (0..4096)
            .map(|_| {
                let mut snap = [0.0f32; SNAP_LEN];
                let tick = books.next_into(&mut snap);
                (snap, tick.dt)
            })
            .collect();
        Ticks { ticks, next: 0 }
    }

    /// The next snapshot and `dt`, cycling.
    fn next(&mut self) -> &([f32; SNAP_LEN], f32) {
        self.next = (self.next + 1) % self.ticks.len();
        &self.ticks[self.next]
    }
}

/// How Graph A is turned into a graph for one measurement.
#[derive(Clone, Copy, PartialEq)]
enum Build<'c> {
    Plain,
    Pdl,
    PdlSerialized,
    /// Stream capture (the previous engine: PDL only on same-stream edges; side streams).
    PdlStreamed,
    /// Built with the block sizes of an autotune cache applied.
    PdlTuned(&'c std::path::Path),
}

pub fn run(dev: &Device, iters: usize, report: &mut Report) -> anyhow::Result<()> {
    measure(dev, iters, report, &[Build::Plain, Build::Pdl, Build::PdlSerialized])?;
    fused(dev, iters, report)?;
    wait_modes(dev, iters, report)?;
    let mut g = Perception::new(dev)?;
    g.load_weights(&ModelWeights::init(7))?;
    g.capture()?;
    let profile = g.profile(iters)?;
    print!("{profile}");
    for row in &profile.rows {
        report.add(format!("kgraph_perception_node_{}_gpu_time", row.node), row.us, "us");
    }
    // Autotuned against the hand-picked block 128: per-node GPU time before and after, through
    // a cache file that a fresh struct then applies; the round trip with the tuned shapes.
    let cache = std::env::temp_dir().join("kgraph_bench_tune.txt");
    let _ = std::fs::remove_file(&cache);
    let tuned = g.autotune(&cache, iters.min(300))?;
    print!("{}", kgraph::expert::tune::report_table("Perception", &tuned));
    for t in &tuned {
        report.add(format!("kgraph_perception_tune_{}_spec_block{}", t.node, t.default.0), t.default.1, "us");
        report.add(format!("kgraph_perception_tune_{}_tuned_block{}", t.node, t.chosen.0), t.chosen.1, "us");
    }
    let mut fresh = Perception::new(dev)?;
    fresh.load_weights(&ModelWeights::init(7))?;
    anyhow::ensure!(fresh.apply_tuning(&cache)? == tuned.len(), "the tune cache round-trips");
    drop(fresh);
    measure(dev, iters, report, &[Build::PdlTuned(&cache)])
}

/// Graph A fused (`PerceptionFused`: the whole step in one kernel, bit-equal to Graph A), the
/// same round trip, interleaved with the multi-node graph so the two come from the same minutes.
fn fused(dev: &Device, iters: usize, report: &mut Report) -> anyhow::Result<()> {
    let mut multi = Perception::new(dev)?;
    let mut one = PerceptionFused::new(dev)?;
    multi.load_weights(&ModelWeights::init(7))?;
    one.load_weights(&ModelWeights::init(7))?;
    multi.capture()?;
    one.capture()?;
    let mut ticks = Ticks::new(2024);
    let mut probs = [0.0f32; Perception::PROBS_LEN];
    let (mut t_multi, mut t_fused) = (Vec::new(), Vec::new());
    // Rounds of alternating blocks: a drift in the machine's state hits both alike.
    for _ in 0..5 {
        macro_rules! block {
            ($g:expr) => {
                percentiles_us(iters, &[50.0], || {
                    let (snap, dt) = ticks.next();
                    $g.write_snap(snap)?;
                    $g.write_dt(&[*dt])?;
                    $g.replay()?;
                    $g.read_probs_into(&mut probs)?;
                    Ok(())
                })?[0]
            };
        }
        t_multi.push(block!(multi));
        t_fused.push(block!(one));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    report.add("kgraph_perception_roundtrip_pdl_interleaved_p50", median(&mut t_multi), "us");
    report.add("kgraph_perception_fused_roundtrip_p50", median(&mut t_fused), "us");
    let graph = one.graph().ok_or_else(|| anyhow::anyhow!("the fused graph is captured"))?;
    let mut gpu =
        (0..iters).map(|_| graph.replay_timed().map(|ms| f64::from(ms) * 1e3)).collect::<Result<Vec<_>, _>>()?;
    report.add("kgraph_perception_fused_graph_gpu_time", median(&mut gpu), "us");
    Ok(())
}

/// Graph A fused's round trip three ways, in alternating blocks (a drift in the machine's state
/// hits all alike): the replay waited for by a stream synchronize, the replay waited for by a
/// spin on its done word, the resident kernel (no launch), and Graph A's spec lowered to one
/// resident kernel (on 8, 1, 2 and 4 blocks). p50, p99 and p99.9 of each are the medians over
/// the blocks.
fn wait_modes(dev: &Device, iters: usize, report: &mut Report) -> anyhow::Result<()> {
    let weights = ModelWeights::init(7);
    let mut synced = PerceptionFused::new(dev)?;
    let mut spun = PerceptionFused::new(dev)?;
    synced.load_weights(&weights)?;
    spun.load_weights(&weights)?;
    spun.set_done_word_wait(Some(kgraph::resident::SpinPolicy::default()))?;
    synced.capture()?;
    spun.capture()?;
    anyhow::ensure!(spun.done_word_armed(), "the done-word graph ends with its done node");
    let mut ticks = Ticks::new(2024);
    let mut probs = [0.0f32; PerceptionFused::PROBS_LEN];
    let ps = [50.0, 99.0, 99.9];
    let mut blocks: [Vec<Vec<f64>>; 7] = Default::default();
    for _ in 0..5 {
        macro_rules! replayed {
            ($g:expr) => {
                percentiles_us(iters, &ps, || {
                    let (snap, dt) = ticks.next();
                    $g.write_snap(snap)?;
                    $g.write_dt(&[*dt])?;
                    $g.replay()?;
                    $g.read_probs_into(&mut probs)?;
                    Ok(())
                })?
            };
        }
        blocks[0].push(replayed!(synced));
        blocks[1].push(replayed!(spun));
        // A resident of its own per block: its thread 0 polls mapped memory between steps, which
        // the other two blocks should not run beside (its first, launching step is a warm-up).
        let mut resident = PerceptionResident::new(dev, &weights, Default::default())?;
        blocks[2].push(percentiles_us(iters, &ps, || {
            let (snap, dt) = ticks.next();
            probs = resident.step(&PerceptionIn { snap: *snap, dt: *dt })?.probs;
            Ok(())
        })?);
        drop(resident);
        // Graph A's own spec as the resident kernel the build generated from it (its five nodes,
        // three levels, grid barriers between them).
        // On its widest node's grid (8 blocks: the CfC step's), on one block (the barriers are
        // the block's own), and between: fewer blocks make each barrier cheaper and run more of
        // a level's virtual blocks one after another.
        for (slot, max_blocks) in [(3, None), (4, Some(1)), (5, Some(2)), (6, Some(4))] {
            let mut graph_a = Perception::new(dev)?;
            graph_a.load_weights(&weights)?;
            let mut generated = graph_a.into_resident(max_blocks, Default::default())?;
            blocks[slot].push(percentiles_us(iters, &ps, || {
                let (snap, dt) = ticks.next();
                probs = generated.step(&PerceptionResidentIn { snap: *snap, dt: [*dt] })?.probs;
                Ok(())
            })?);
        }
    }
    let tags = [
        "fused_stream_sync",
        "fused_done_word",
        "resident",
        "generated_resident",
        "generated_resident_1block",
        "generated_resident_2blocks",
        "generated_resident_4blocks",
    ];
    for (tag, runs) in tags.iter().zip(&blocks) {
        for (i, p) in ["p50", "p99", "p999"].iter().enumerate() {
            let mut v: Vec<f64> = runs.iter().map(|r| r[i]).collect();
            v.sort_by(f64::total_cmp);
            report.add(format!("kgraph_perception_{tag}_roundtrip_{p}"), v[v.len() / 2], "us");
        }
    }
    report.ratio(
        "ratio_perception_fused_done_word_vs_stream_sync_p50",
        "kgraph_perception_fused_done_word_roundtrip_p50",
        "kgraph_perception_fused_stream_sync_roundtrip_p50",
    );
    Ok(())
}

/// Graph A stream-captured (side streams: run last, it slows every later replay).
pub fn streamed(dev: &Device, iters: usize, report: &mut Report) -> anyhow::Result<()> {
    measure(dev, iters, report, &[Build::PdlStreamed])?;
    report.ratio(
        "ratio_perception_roundtrip_built_vs_streamed",
        "kgraph_perception_roundtrip_pdl_p50",
        "kgraph_perception_roundtrip_pdl_streamed_p50",
    );
    Ok(())
}

fn measure(dev: &Device, iters: usize, report: &mut Report, builds: &[Build<'_>]) -> anyhow::Result<()> {
    let mut g = Perception::new(dev)?;
    g.load_weights(&ModelWeights::init(7))?;
    let mut ticks = Ticks::new(2024);
    let mut probs = [0.0f32; Perception::PROBS_LEN];
    for &build in builds {
        g.set_pdl_enabled(build != Build::Plain);
        match build {
            Build::Plain | Build::Pdl => g.capture()?,
            Build::PdlSerialized => g.capture_serialized()?,
            Build::PdlStreamed => g.capture_streamed()?,
            Build::PdlTuned(cache) => {
                g.apply_tuning(cache)?;
                g.capture()?
            }
        }
        let mut finite = true;
        let p = percentiles_us(iters, &[50.0, 99.0], || {
            let (snap, dt) = ticks.next();
            g.write_snap(snap)?;
            g.write_dt(&[*dt])?;
            g.replay()?;
            g.read_probs_into(&mut probs)?;
            finite &= probs.iter().all(|p| p.is_finite());
            Ok(())
        })?;
        anyhow::ensure!(finite, "Graph A produced non-finite probabilities");
        let tag = match build {
            Build::Plain => "plain",
            Build::Pdl => "pdl",
            Build::PdlSerialized => "pdl_serialized",
            Build::PdlStreamed => "pdl_streamed",
            Build::PdlTuned(_) => "pdl_tuned",
        };
        report.add(format!("kgraph_perception_roundtrip_{tag}_p50"), p[0], "us");
        report.add(format!("kgraph_perception_roundtrip_{tag}_p99"), p[1], "us");
        // Attribution: the same replay with nothing written or read on the host, and a bare
        // stream sync — what is left of the round trip is host-side writes and reads.
        let t = median_us(iters, || {
            g.replay()?;
            Ok(dev.synchronize()?)
        })?;
        report.add(format!("kgraph_perception_replay_sync_{tag}"), t, "us");
        let mut gpu = Vec::with_capacity(iters);
        for _ in 0..iters {
            let graph = g.graph().ok_or_else(|| anyhow::anyhow!("Graph A is captured"))?;
            gpu.push(f64::from(graph.replay_timed()?) * 1e3);
        }
        gpu.sort_by(f64::total_cmp);
        report.add(format!("kgraph_perception_graph_gpu_time_{tag}"), gpu[gpu.len() / 2], "us");
    }
    Ok(())
}

/// Copy and fill nodes against the kernels they can replace in Graph A and the train step: one
/// node per graph, replay + sync and GPU time, for a 4-byte pinned → device copy (Graph A's `dt`,
/// now copied by its features kernel), a 32-float device copy (`carry`) and a 2464-float zero
/// fill (a gradient buffer).
pub fn copy_nodes(dev: &Device, iters: usize, report: &mut Report) -> anyhow::Result<()> {
    use kgraph::expert::{GraphBuilder, Issue};
    use kgraph::{DeviceIn, LaunchOptions};
    use kgraph_model::model::{launch, CopyF32, CopyF32Pinned, ZeroF32};
    let mut cache = kgraph::expert::ModuleCache::new(dev.context());
    let (copy, copy_pinned, zero) =
        (CopyF32::load(&mut cache)?, CopyF32Pinned::load(&mut cache)?, ZeroF32::load(&mut cache)?);
    let dt = kgraph::MappedBuffer::<f32>::new(dev, 1)?;
    let mut dt_dev = dev.alloc_zeros::<f32>(1)?;
    let h_next = dev.upload(&[0.5f32; 32])?;
    let mut h = dev.alloc_zeros::<f32>(32)?;
    let mut grad = dev.upload(&vec![1.0f32; 2464])?;
    let mut time = |name: &str, g: kgraph::Graph| -> anyhow::Result<()> {
        let t = median_us(iters, || {
            g.replay()?;
            Ok(dev.synchronize()?)
        })?;
        report.add(format!("kgraph_node_{name}_replay_sync"), t, "us");
        let mut gpu =
            (0..iters).map(|_| g.replay_timed().map(|ms| f64::from(ms) * 1e3)).collect::<Result<Vec<_>, _>>()?;
        gpu.sort_by(f64::total_cmp);
        report.add(format!("kgraph_node_{name}_gpu_time"), gpu[gpu.len() / 2], "us");
        Ok(())
    };
    let s = dev.stream();
    let none = LaunchOptions::default();
    // SAFETY (every block below): the buffers outlive the graphs (declared before them, dropped
    // after), hold the sizes given, and are used only on the device stream.
    let mut b = GraphBuilder::new(dev.context())?;
    unsafe {
        copy_pinned.__issue(
            Issue::AddNode { builder: &mut b, deps: &[] },
            launch::elementwise(1),
            none,
            dt.device_ptr(),
            1,
            &mut dt_dev,
        )
    }?;
    time("dt_in_kernel", b.instantiate(s)?)?;
    let mut b = GraphBuilder::new(dev.context())?;
    unsafe { b.add_memcpy(&[], dt_dev.device_addr(), dt.device_ptr().addr(), 4) }?;
    time("dt_in_memcpy", b.instantiate(s)?)?;
    let mut b = GraphBuilder::new(dev.context())?;
    unsafe {
        copy.__issue(Issue::AddNode { builder: &mut b, deps: &[] }, launch::elementwise(32), none, &h_next, 32, &mut h)
    }?;
    time("carry_kernel", b.instantiate(s)?)?;
    let mut b = GraphBuilder::new(dev.context())?;
    unsafe { b.add_memcpy(&[], h.device_addr(), h_next.device_addr(), 128) }?;
    time("carry_memcpy", b.instantiate(s)?)?;
    let mut b = GraphBuilder::new(dev.context())?;
    unsafe {
        zero.__issue(Issue::AddNode { builder: &mut b, deps: &[] }, launch::elementwise(2464), none, 2464, &mut grad)
    }?;
    time("zero_kernel", b.instantiate(s)?)?;
    let mut b = GraphBuilder::new(dev.context())?;
    unsafe { b.add_memset(&[], grad.device_addr(), 0, 4, 2464) }?;
    time("zero_memset", b.instantiate(s)?)?;
    Ok(())
}
