//! AdamW on 256 Mi f32 parameters (28 bytes moved per element: read p, g, m, v; write p, m, v)
//! next to a device-to-device copy of the same size (read + write) in the same run.

use kgraph::cudarc::driver::sys;
use kgraph::{Device, LaunchConfig};
use kgraph_model::model::{launch, Adamw};

use crate::k::Kernels;
use crate::report::Report;

const N: usize = 256 << 20;

/// Median of `reps` event-timed runs of `f` on the main stream, in ms (first 3 dropped).
fn event_median_ms(dev: &Device, reps: usize, mut f: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<f64> {
    // SAFETY: cudarc's context and stream only make and record the two timing events.
    let (ctx, stream) = unsafe { (dev.context().cuda(), dev.stream().cuda()) };
    let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
    let (start, end) = (ctx.new_event(flags)?, ctx.new_event(flags)?);
    let mut t = Vec::new();
    for i in 0..reps + 3 {
        start.record(stream)?;
        f()?;
        end.record(stream)?;
        end.synchronize()?;
        if i >= 3 {
            t.push(f64::from(start.elapsed_ms(&end)?));
        }
    }
    t.sort_by(f64::total_cmp);
    Ok(t[t.len() / 2])
}

pub fn run(dev: &Device, k: &Kernels, report: &mut Report) -> anyhow::Result<()> {
    let s = dev.stream();
    let fill_cfg = LaunchConfig { grid_dim: (1024, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let mut bufs = Vec::new();
    for base in [0.1f32, -0.2, 0.0, 0.01] {
        let mut b = dev.alloc_zeros::<f32>(N)?;
        k.bench_fill.launch(s, fill_cfg, &mut b, N as i64, base)?;
        bufs.push(b);
    }
    let [mut p, g, mut m, mut v]: [_; 4] = bufs.try_into().map_err(|_| anyhow::anyhow!("four buffers"))?;
    dev.synchronize()?;

    // SAFETY: cudarc copies between two buffers of kgraph's stream, on that stream.
    let copy_ms = event_median_ms(dev, 20, || Ok(unsafe { s.cuda().memcpy_dtod(g.as_cuda(), m.as_cuda_mut()) }?))?;
    let copy_gbs = 2.0 * N as f64 * 4.0 / (copy_ms * 1e-3) / 1e9;
    report.add("copy_256M_bw", copy_gbs, "GB/s");

    let adamw = Adamw::new(dev)?;
    let cfg = launch::adamw(N);
    let (lr, b1, b2, eps, wd) = (1e-3f32, 0.9f32, 0.999f32, 1e-8f32, 0.01f32);
    let ms = event_median_ms(dev, 20, || {
        Ok(adamw.launch(s, cfg, &g, lr, b1, b2, eps, wd, 0.1, 0.001, N as i32, &mut p, &mut m, &mut v)?)
    })?;
    report.add("kgraph_adamw_256M", ms, "ms");
    let gbs = 28.0 * N as f64 / (ms * 1e-3) / 1e9;
    report.add("kgraph_adamw_bw", gbs, "GB/s");
    report.add("ratio_adamw_vs_copy_bw", gbs / copy_gbs, "x");
    let sample = dev.download(&p.slice(0..1024)?)?;
    anyhow::ensure!(sample.iter().all(|x| x.is_finite()), "AdamW produced non-finite parameters");
    Ok(())
}
