//! Perception round trip: a 160-byte MBP-10 snapshot (and dt) written into mapped pinned memory
//! → Graph A replay (features, CfC step, heads + projection, state carry) → the 5 horizon
//! probabilities read on the host (the heads write them straight into mapped pinned memory, so
//! the read is one stream sync and five loads: no download copy). p50 / p99 of the whole step,
//! PDL on and off.

use kgraph::Device;
use kgraph_model::graphs::synthetic::BookStream;
use kgraph_model::graphs::{ModelWeights, Perception};
use kgraph_model::model::SNAP_LEN;

use crate::report::{median_us, percentiles_us, Report};

/// How Graph A is turned into a graph for one measurement.
#[derive(Clone, Copy, PartialEq)]
enum Build {
    Plain,
    Pdl,
    PdlSerialized,
    /// Stream capture (the previous engine: PDL only on same-stream edges; side streams).
    PdlStreamed,
}

pub fn run(dev: &Device, iters: usize, report: &mut Report) -> anyhow::Result<()> {
    measure(dev, iters, report, &[Build::Plain, Build::Pdl, Build::PdlSerialized])?;
    let mut g = Perception::new(dev)?;
    g.load_weights(&ModelWeights::init(7))?;
    g.capture()?;
    let profile = g.profile(iters)?;
    print!("{profile}");
    for row in &profile.rows {
        report.add(format!("kgraph_perception_node_{}_gpu_time", row.node), row.us, "us");
    }
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

fn measure(dev: &Device, iters: usize, report: &mut Report, builds: &[Build]) -> anyhow::Result<()> {
    let mut g = Perception::new(dev)?;
    g.load_weights(&ModelWeights::init(7))?;
    let mut books = BookStream::new(2024);
    let mut snap = [0.0f32; SNAP_LEN];
    let mut probs = [0.0f32; Perception::PROBS_LEN];
    for &build in builds {
        g.set_pdl_enabled(build != Build::Plain);
        match build {
            Build::Plain | Build::Pdl => g.capture()?,
            Build::PdlSerialized => g.capture_serialized()?,
            Build::PdlStreamed => g.capture_streamed()?,
        }
        let mut finite = true;
        let p = percentiles_us(iters, &[50.0, 99.0], || {
            let tick = books.next_into(&mut snap);
            g.write_snap(&snap)?;
            g.write_dt(&[tick.dt])?;
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
