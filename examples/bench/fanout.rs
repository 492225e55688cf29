//! fanout8: one root, eight independent branches, one join (1 -> 8 -> 1) over 256 f32, generated
//! from `graphs/bench_fanout.toml`. The same graph struct is captured with its dataflow branches
//! (`capture`: the eight branches run concurrently) and serialized in file order
//! (`capture_serialized`: a path of ten kernels), for tiny branches (0 iterations: launch and
//! dependency overhead only) and working ones (2000 dependent FMAs per element).

use kgraph::Device;

use crate::report::{median_us, Report};

kgraph::graph!("graphs/bench_fanout.toml");

/// Work per branch (the spec's `iters` scalar), set between captures without re-declaring.
const WORK: [i32; 2] = [0, 2000];

pub fn run(dev: &Device, iters: usize, report: &mut Report) -> anyhow::Result<()> {
    let mut g = BenchFanout::new(dev)?;
    let x: Vec<f32> = (0..BenchFanout::N).map(|i| 0.5 + i as f32 * 1e-3).collect();
    g.upload_x(&x)?;
    for work in WORK {
        g.set_iters(work)?;
        let mut outs = Vec::new();
        for (mode, serialized) in [("branched", false), ("serial", true)] {
            if serialized {
                g.capture_serialized()?;
            } else {
                g.capture()?;
            }
            let t = median_us(iters, || {
                g.replay()?;
                Ok(dev.synchronize()?)
            })?;
            report.add(format!("kgraph_fanout8_w{work}_{mode}_graph"), t, "us");
            outs.push(g.download_out()?);
        }
        // Both captures compute the same thing; a difference would mean a missing dependency.
        let equal = outs[0].iter().zip(&outs[1]).all(|(a, b)| a.to_bits() == b.to_bits());
        anyhow::ensure!(equal, "fanout8 w{work}: the branched and serialized graphs disagree");
        report.ratio(
            &format!("ratio_fanout8_w{work}_branched_vs_serial"),
            &format!("kgraph_fanout8_w{work}_branched_graph"),
            &format!("kgraph_fanout8_w{work}_serial_graph"),
        );
    }
    Ok(())
}
