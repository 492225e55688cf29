//! fanout8: one root, eight independent branches, one join (1 -> 8 -> 1) over 256 f32, generated
//! from `examples/bench/graphs/bench_fanout.toml`. The same graph struct is captured with its dataflow branches
//! (`capture`: the eight branches run concurrently) and serialized in file order
//! (`capture_serialized`: a path of ten kernels), for tiny branches (0 iterations: launch and
//! dependency overhead only) and working ones (2000 dependent FMAs per element).
//!
//! `fanout8pdl`: the same graph over PDL-aware kernels (`examples/bench/graphs/bench_fanout_pdl.toml`), timed
//! with PDL on (programmatic edges on the fan-out, the join and the serialized chain) and off.

use kgraph::Device;

use crate::report::{median_us, Report};

kgraph::graph!("examples/bench/graphs/bench_fanout.toml");
kgraph::graph!("examples/bench/graphs/bench_fanout_pdl.toml");

/// Work per branch (the spec's `iters` scalar), set between captures without re-declaring.
const WORK: [i32; 2] = [0, 2000];

/// The [`FanoutOps`] of a generated fan-out struct type.
macro_rules! fanout_ops {
    ($t:ident) => {
        FanoutOps {
            capture: $t::capture,
            capture_serialized: $t::capture_serialized,
            replay: $t::replay,
            download_out: $t::download_out,
        }
    };
}

pub fn run(dev: &Device, iters: usize, report: &mut Report) -> anyhow::Result<()> {
    let x: Vec<f32> = (0..BenchFanout::N).map(|i| 0.5 + i as f32 * 1e-3).collect();
    let mut plain = BenchFanout::new(dev)?;
    plain.upload_x(&x)?;
    let ops = fanout_ops!(BenchFanout);
    let mut plain_out = Vec::new();
    for work in WORK {
        plain.set_iters(work)?;
        let name = format!("fanout8_w{work}");
        let branched = ops.capture_and_time(&mut plain, dev, iters, false)?;
        let serial = ops.capture_and_time(&mut plain, dev, iters, true)?;
        plain_out.push(check_and_report(report, &name, branched, serial, None)?);
    }
    let mut pdl = BenchFanoutPdl::new(dev)?;
    pdl.upload_x(&x)?;
    let ops = fanout_ops!(BenchFanoutPdl);
    for (work, want) in WORK.into_iter().zip(&plain_out) {
        pdl.set_iters(work)?;
        for enabled in [true, false] {
            pdl.set_pdl_enabled(enabled);
            let name = format!("fanout8pdl_w{work}_{}", if enabled { "on" } else { "off" });
            let branched = ops.capture_and_time(&mut pdl, dev, iters, false)?;
            let serial = ops.capture_and_time(&mut pdl, dev, iters, true)?;
            check_and_report(report, &name, branched, serial, Some(want))?;
        }
        report.ratio(
            &format!("ratio_fanout8pdl_w{work}_branched_on_vs_off"),
            &format!("kgraph_fanout8pdl_w{work}_on_branched_graph"),
            &format!("kgraph_fanout8pdl_w{work}_off_branched_graph"),
        );
    }
    Ok(())
}

/// The methods of a fan-out struct the timing uses (the two specs make two struct types).
struct FanoutOps<G> {
    capture: fn(&mut G) -> kgraph::Result<()>,
    capture_serialized: fn(&mut G) -> kgraph::Result<()>,
    replay: fn(&G) -> kgraph::Result<()>,
    download_out: fn(&G) -> kgraph::Result<Vec<f32>>,
}

impl<G> FanoutOps<G> {
    /// Captures `g` (branched or serialized), then its median replay time and its output.
    fn capture_and_time(
        &self,
        g: &mut G,
        dev: &Device,
        iters: usize,
        serialized: bool,
    ) -> anyhow::Result<(f64, Vec<f32>)> {
        if serialized {
            (self.capture_serialized)(g)?;
        } else {
            (self.capture)(g)?;
        }
        let t = median_us(iters, || {
            (self.replay)(g)?;
            Ok(dev.synchronize()?)
        })?;
        Ok((t, (self.download_out)(g)?))
    }
}

/// Checks that one fan-out's branched and serialized graphs computed the same bits (a
/// difference would mean a missing dependency), and the same as `want` (the plain fan-out's
/// output, for the PDL variant: a PDL ordering fault would differ), then reports both replay
/// times and their ratio. Returns the output.
fn check_and_report(
    report: &mut Report,
    name: &str,
    branched: (f64, Vec<f32>),
    serial: (f64, Vec<f32>),
    want: Option<&Vec<f32>>,
) -> anyhow::Result<Vec<f32>> {
    let same = |a: &[f32], b: &[f32]| a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.to_bits() == b.to_bits());
    anyhow::ensure!(same(&branched.1, &serial.1), "{name}: the branched and serialized graphs disagree");
    if let Some(want) = want {
        anyhow::ensure!(same(&branched.1, want), "{name}: the output differs from the plain fan-out's");
    }
    report.add(format!("kgraph_{name}_branched_graph"), branched.0, "us");
    report.add(format!("kgraph_{name}_serial_graph"), serial.0, "us");
    report.ratio(
        &format!("ratio_{name}_branched_vs_serial"),
        &format!("kgraph_{name}_branched_graph"),
        &format!("kgraph_{name}_serial_graph"),
    );
    Ok(branched.1)
}
