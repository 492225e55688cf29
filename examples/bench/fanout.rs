//! fanout8: one root, eight independent branches, one join (1 -> 8 -> 1) over 256 f32, generated
//! from `graphs/bench_fanout.toml`. The same graph struct is captured with its dataflow branches
//! (`capture`: the eight branches run concurrently) and serialized in file order
//! (`capture_serialized`: a path of ten kernels), for tiny branches (0 iterations: launch and
//! dependency overhead only) and working ones (2000 dependent FMAs per element).
//!
//! `fanout8pdl`: the same graph over PDL-aware kernels (`graphs/bench_fanout_pdl.toml`), timed
//! with PDL on (programmatic edges on the fan-out, the join and the serialized chain) and off.

use kgraph::Device;

use crate::report::{median_us, Report};

kgraph::graph!("graphs/bench_fanout.toml");
kgraph::graph!("graphs/bench_fanout_pdl.toml");

/// Work per branch (the spec's `iters` scalar), set between captures without re-declaring.
const WORK: [i32; 2] = [0, 2000];

pub fn run(dev: &Device, iters: usize, report: &mut Report) -> anyhow::Result<()> {
    let mut g = BenchFanout::new(dev)?;
    let x: Vec<f32> = (0..BenchFanout::N).map(|i| 0.5 + i as f32 * 1e-3).collect();
    g.upload_x(&x)?;
    for work in WORK {
        g.set_iters(work)?;
        let ops = FanoutOps {
            capture: BenchFanout::capture,
            capture_serialized: BenchFanout::capture_serialized,
            replay: BenchFanout::replay,
            out: BenchFanout::download_out,
        };
        record(
            report,
            &format!("fanout8_w{work}"),
            ops.time(&mut g, dev, iters, false)?,
            ops.time(&mut g, dev, iters, true)?,
        )?;
    }
    let mut g = BenchFanoutPdl::new(dev)?;
    g.upload_x(&x)?;
    for work in WORK {
        g.set_iters(work)?;
        for pdl in [true, false] {
            g.set_pdl_enabled(pdl);
            let ops = FanoutOps {
                capture: BenchFanoutPdl::capture,
                capture_serialized: BenchFanoutPdl::capture_serialized,
                replay: BenchFanoutPdl::replay,
                out: BenchFanoutPdl::download_out,
            };
            let name = format!("fanout8pdl_w{work}_{}", if pdl { "on" } else { "off" });
            record(report, &name, ops.time(&mut g, dev, iters, false)?, ops.time(&mut g, dev, iters, true)?)?;
        }
    }
    Ok(())
}

/// The methods of a fan-out struct the timing uses (the two specs make two struct types).
struct FanoutOps<G> {
    capture: fn(&mut G) -> kgraph::Result<()>,
    capture_serialized: fn(&mut G) -> kgraph::Result<()>,
    replay: fn(&G) -> kgraph::Result<()>,
    out: fn(&G) -> kgraph::Result<Vec<f32>>,
}

impl<G> FanoutOps<G> {
    /// Captures `g` (branched or serialized), then its median replay time and its output.
    fn time(&self, g: &mut G, dev: &Device, iters: usize, serialized: bool) -> anyhow::Result<(f64, Vec<f32>)> {
        if serialized {
            (self.capture_serialized)(g)?;
        } else {
            (self.capture)(g)?;
        }
        let t = median_us(iters, || {
            (self.replay)(g)?;
            Ok(dev.synchronize()?)
        })?;
        Ok((t, (self.out)(g)?))
    }
}

/// Reports one fan-out's branched and serialized replay times and their ratio, after checking
/// both computed the same thing (a difference would mean a missing dependency).
fn record(report: &mut Report, name: &str, branched: (f64, Vec<f32>), serial: (f64, Vec<f32>)) -> anyhow::Result<()> {
    let equal = branched.1.iter().zip(&serial.1).all(|(a, b)| a.to_bits() == b.to_bits());
    anyhow::ensure!(equal, "{name}: the branched and serialized graphs disagree");
    report.add(format!("kgraph_{name}_branched_graph"), branched.0, "us");
    report.add(format!("kgraph_{name}_serial_graph"), serial.0, "us");
    report.ratio(
        &format!("ratio_{name}_branched_vs_serial"),
        &format!("kgraph_{name}_branched_graph"),
        &format!("kgraph_{name}_serial_graph"),
    );
    Ok(())
}
