//! Trains a tanh MLP policy/value network (64 → 512 → 512 → 8, batch 4096) with one captured CUDA
//! graph per step: cuBLAS GEMM nodes for the products and the example's own kernels for the rest
//! (`kgraph_model::mlp`, spec `examples/mlp/mlp_train.toml`, kernels
//! `examples/mlp/kernels/mlp.cu`).
//!
//!     cargo run --release --example mlp [-- --steps N] [--iters N] [--quick]
//!
//! One replay is a whole step: forward, the half squared error against an analytic target of the
//! inputs (`TargetLaw`: output j is sin(2 ⟨u_j, x⟩)), backward and AdamW (lr 1e-3, betas
//! (0.9, 0.999), eps 1e-8, weight decay 0.01) with its schedule advanced on the device, so the
//! host does nothing between replays. The batch is fixed (uploaded once), as in the PyTorch peer
//! `examples/bench/peers/mlp_step.py`.
//!
//! Prints the loss of the first and last step and their ratio, then the step time as
//! `name value unit` lines like the bench and the peer:
//! - `kgraph_mlp_step` (us): median host time of one replay + stream synchronize;
//! - `kgraph_mlp_step_gpu` (us): median GPU time of one replay (`CapturedGraph::replay_timed`);
//! - `kgraph_mlp_step_pipelined` (us): `--iters` replays back to back, then one synchronize,
//!   divided by `--iters`.
//!
//! `--quick`: 300 steps and 200 timed replays (default 1000 and 1000). Exits non-zero if the loss
//! ratio is above 0.1, or without a GPU (one line saying why).

use std::process::ExitCode;
use std::time::Instant;

use kgraph_model::mlp::{MlpTrain, TargetLaw};

/// The last step's loss over the first step's that this example must reach.
const TARGET_RATIO: f64 = 0.1;

struct Options {
    steps: usize,
    iters: usize,
}

fn main() -> ExitCode {
    let opts = match parse_args() {
        Ok(opts) => opts,
        Err(msg) => {
            eprintln!("mlp: {msg}");
            return ExitCode::FAILURE;
        }
    };
    match run(&opts) {
        Ok(ratio) if ratio.is_finite() && ratio <= TARGET_RATIO => ExitCode::SUCCESS,
        Ok(ratio) => {
            eprintln!("mlp: the loss did not fall enough (ratio {ratio:.4} > {TARGET_RATIO})");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("mlp: {e}");
            ExitCode::FAILURE
        }
    }
}

fn parse_args() -> Result<Options, String> {
    let mut opts = Options { steps: 1000, iters: 1000 };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut count = |name: &str| -> Result<usize, String> {
            let v = args.next().ok_or(format!("{name} needs a value"))?;
            v.parse().ok().filter(|&n| n >= 2).ok_or(format!("{name}: `{v}` is not a count of at least 2"))
        };
        match arg.as_str() {
            "--steps" => opts.steps = count("--steps")?,
            "--iters" => opts.iters = count("--iters")?,
            "--quick" => opts = Options { steps: 300, iters: 200 },
            other => return Err(format!("unknown argument `{other}` (use --steps N, --iters N, --quick)")),
        }
    }
    Ok(opts)
}

/// Median of `t` after dropping its first sixth (warm-up).
fn median(mut t: Vec<f64>) -> f64 {
    t.drain(..t.len() / 6);
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

/// Trains `opts.steps` steps, times `opts.iters` more; returns last loss / first loss.
fn run(opts: &Options) -> anyhow::Result<f64> {
    let dev = kgraph::Device::new(0)?;
    let mut g = MlpTrain::new(&dev)?;
    let law = TargetLaw::new(MlpTrain::N_IN, MlpTrain::N_OUT, 1);
    let (x, target) = law.batch(MlpTrain::BATCH, 2);
    g.upload_x(&x)?;
    g.upload_target(&target)?;
    g.start(&MlpTrain::init_weights(7))?;
    g.capture()?;
    let gemms =
        MlpTrain::NODES.iter().filter(|n| n.starts_with("fc") || n.starts_with("dw") || n.starts_with("dh")).count();
    println!(
        "mlp: {} | MlpTrain captured: {} nodes ({gemms} GEMMs), {} → {} → {} → {}, batch {}, {} steps",
        dev.name()?,
        MlpTrain::NODES.len(),
        MlpTrain::N_IN,
        MlpTrain::N_HID,
        MlpTrain::N_HID,
        MlpTrain::N_OUT,
        MlpTrain::BATCH,
        opts.steps
    );

    let mut losses = Vec::with_capacity(opts.steps);
    for step in 0..opts.steps {
        g.replay()?;
        // The loss of the step's forward, before its update; every 100th (and the first and
        // last) is read, so training runs replay after replay.
        if step == 0 || step + 1 == opts.steps || step % 100 == 99 {
            let loss = g.download_loss()?[0];
            anyhow::ensure!(loss.is_finite(), "step {}: loss {loss}", step + 1);
            losses.push((step + 1, loss));
            println!("step {:5}  loss {loss:.6}", step + 1);
        }
    }
    let (first, last) = (losses[0].1, losses[losses.len() - 1].1);
    let ratio = f64::from(last) / f64::from(first);
    println!("kgraph_mlp_loss_step1 {first:.6} loss");
    println!("kgraph_mlp_loss_last {last:.6} loss");
    println!("kgraph_mlp_loss_ratio {ratio:.5} ratio");

    // Timing: training goes on during it (the same replays), which changes nothing in the work.
    let mut host = Vec::with_capacity(opts.iters);
    for _ in 0..opts.iters {
        let t0 = Instant::now();
        g.replay()?;
        dev.synchronize()?;
        host.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    println!("kgraph_mlp_step {:.3} us", median(host));
    let t0 = Instant::now();
    for _ in 0..opts.iters {
        g.replay()?;
    }
    dev.synchronize()?;
    println!("kgraph_mlp_step_pipelined {:.3} us", t0.elapsed().as_secs_f64() * 1e6 / opts.iters as f64);
    let graph = g.graph().ok_or_else(|| anyhow::anyhow!("the step graph is captured"))?;
    let gpu =
        (0..opts.iters).map(|_| graph.replay_timed().map(|ms| f64::from(ms) * 1e3)).collect::<Result<Vec<_>, _>>()?;
    println!("kgraph_mlp_step_gpu {:.3} us", median(gpu));
    let loss = g.download_loss()?[0];
    anyhow::ensure!(loss.is_finite(), "loss after the timed replays: {loss}");
    println!("mlp: loss {first:.4} → {last:.4} in {} steps (ratio {ratio:.4}, target ≤ {TARGET_RATIO})", opts.steps);
    Ok(ratio)
}
