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

pub fn run(dev: &Device, iters: usize, report: &mut Report) -> anyhow::Result<()> {
    let mut g = Perception::new(dev)?;
    g.load_weights(&ModelWeights::init(7))?;
    let mut books = BookStream::new(2024);
    let mut snap = [0.0f32; SNAP_LEN];
    let mut probs = [0.0f32; Perception::PROBS_LEN];
    for (pdl, serial) in [(false, false), (true, false), (true, true)] {
        g.set_pdl_enabled(pdl);
        if serial {
            g.capture_serialized()?;
        } else {
            g.capture()?;
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
        let tag = match (pdl, serial) {
            (false, _) => "plain",
            (true, false) => "pdl",
            (true, true) => "pdl_serialized",
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
