//! The reference model's train graphs (`kgraph_model::graphs`): the train step (`TrainStep`,
//! B = 256), its batch-512 form, 100 steps in one WHILE launch and the data-parallel step on one
//! rank. Expected values come from the same spec run eagerly (`run_eager`: one stream, file
//! order, no graph) or from invariants (lr = 0 leaves the weights as they are, gradients are
//! overwritten at every step, learnable labels lower the loss); nothing is recomputed on the CPU.

use kgraph::DeviceBuffer;
use kgraph_model::graphs::synthetic::BookStream;
use kgraph_model::graphs::{ModelWeights, TrainBatch, TrainStep, TrainStepBatch512, TrainStepUnplanned, TrainSteps100};

use super::common::device;
use super::model_util::{assert_all_finite, assert_bitwise_eq, down};

/// The learning rate of the training tests and of `examples/train.rs` (Adam's usual default).
const LR: f32 = 1e-3;

fn train_step(dev: &kgraph::Device, w: &ModelWeights) -> TrainStep {
    let mut g = TrainStep::new(dev).unwrap();
    g.load_weights(w).unwrap();
    g
}

/// Uploads the same batch and schedule into every train graph.
fn feed_batch(stream: &mut BookStream, batch: &mut TrainBatch, step: u32, graphs: &mut [&mut TrainStep]) {
    batch.fill(stream).unwrap();
    for g in graphs.iter_mut() {
        g.upload_batch(batch).unwrap();
        g.upload_schedule_for(step, LR).unwrap();
    }
}

/// The trained tensors of a train-step form, with a few optimizer moments.
trait Trained {
    fn trained(&self) -> Vec<(&'static str, Vec<f32>)>;
}

macro_rules! trained {
    ($($graph:ty),*) => {$(
        impl Trained for $graph {
            fn trained(&self) -> Vec<(&'static str, Vec<f32>)> {
                vec![
                    ("w_g", self.download_w_g().unwrap()),
                    ("b_g", self.download_b_g().unwrap()),
                    ("w_t", self.download_w_t().unwrap()),
                    ("b_t", self.download_b_t().unwrap()),
                    ("w_h", self.download_w_h().unwrap()),
                    ("b_h", self.download_b_h().unwrap()),
                    ("m_w_g", self.download_m_w_g().unwrap()),
                    ("v_w_t", self.download_v_w_t().unwrap()),
                ]
            }
        }
    )*};
}
trained!(TrainStep, TrainStepUnplanned);

fn trained(g: &dyn Trained) -> Vec<(&'static str, Vec<f32>)> {
    g.trained()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn train_step_replay_matches_eager_bit_for_bit() {
    let dev = device();
    let w = ModelWeights::init(21);
    let (mut graph, mut eager) = (train_step(&dev, &w), train_step(&dev, &w));
    graph.capture().unwrap();
    let (mut stream, mut batch) = (BookStream::independent(22), TrainBatch::new());
    let mut before = trained(&graph);
    for step in 1..=4 {
        feed_batch(&mut stream, &mut batch, step, &mut [&mut graph, &mut eager]);
        graph.replay().unwrap();
        eager.run_eager().unwrap();
        let loss = graph.download_loss().unwrap();
        assert_all_finite("loss", &loss);
        assert!(loss[0] > 0.0, "step {step}: BCE of random labels is positive");
        assert_bitwise_eq(&format!("step {step}: loss"), &loss, &eager.download_loss().unwrap());
        let after = trained(&graph);
        for ((name, got), (_, want)) in after.iter().zip(trained(&eager)) {
            assert_all_finite(name, got);
            assert_bitwise_eq(&format!("step {step}: {name}, replay vs eager"), got, &want);
        }
        for ((name, now), (_, was)) in after.iter().zip(&before) {
            assert_ne!(now, was, "step {step}: AdamW must update {name}");
        }
        before = after;
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_batch_512_step_on_a_doubled_batch_follows_the_batch_256_step() {
    // `graph!(.., dims = { batch = 512 })` of the same spec: fed each 256-sample batch twice, the
    // mean loss and the gradient are the same numbers (each sample counted twice over twice the
    // count), so both steps train alike. Step 1 (equal weights) agrees to rounding; later steps
    // may drift by rounding only (the gradient sums run over 512 halved terms instead of 256):
    // the bound is `train_ddp --check`'s, whose reasoning holds here as well.
    let dev = device();
    let w = ModelWeights::init(3);
    let mut small = train_step(&dev, &w);
    let mut big = TrainStepBatch512::new(&dev).unwrap();
    big.load_weights(&w).unwrap();
    small.capture().unwrap();
    big.capture().unwrap();
    let (mut stream, mut batch) = (BookStream::independent(5), TrainBatch::new());
    let (mut max_dev, mut first, mut last) = (0.0f32, 0.0f32, 0.0f32);
    for step in 1..=100u32 {
        batch.fill(&mut stream).unwrap();
        let doubled = TrainBatch {
            snap: [batch.snap.as_slice(), &batch.snap].concat(),
            dt: [batch.dt.as_slice(), &batch.dt].concat(),
            targets: [batch.targets.as_slice(), &batch.targets].concat(),
        };
        small.upload_batch(&batch).unwrap();
        big.upload_batch(&doubled).unwrap();
        small.upload_schedule_for(step, LR).unwrap();
        big.upload_schedule_for(step, LR).unwrap();
        small.replay().unwrap();
        big.replay().unwrap();
        let (a, b) = (small.download_loss().unwrap()[0], big.download_loss().unwrap()[0]);
        if step == 1 {
            assert!((a - b).abs() <= 1e-6 * a, "step 1, equal weights: {a} vs {b}");
            first = a;
        }
        last = b;
        max_dev = max_dev.max((a - b).abs());
    }
    assert!(max_dev <= 1e-3, "the two steps drifted apart: max |loss difference| {max_dev}");
    assert!(last < first, "and they train: loss {first} -> {last}");
    println!("batch 512 doubled vs batch 256: max |loss difference| over 100 steps {max_dev:e}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn train_step_overwrites_its_gradients_at_every_step() {
    let dev = device();
    // Unplanned: the test reads the gradients, scratch buffers.
    let mut g = TrainStepUnplanned::new(&dev).unwrap();
    g.load_weights(&ModelWeights::init(31)).unwrap();
    g.capture().unwrap();
    let (mut stream, mut batch) = (BookStream::independent(32), TrainBatch::new());
    batch.fill(&mut stream).unwrap();
    g.upload_batch(&batch).unwrap();
    // lr = 0 keeps every weight, so two replays on one batch see the same forward: their
    // gradients are equal only if each step overwrites them (accumulating would double them).
    // Nothing zeroes them: every gradient has one producer, which writes it.
    let [_, bc1, bc2] = g.schedule_for(1, LR);
    g.upload_schedule(&[0.0, bc1, bc2]).unwrap();
    let grads = |g: &TrainStepUnplanned| -> Vec<(&'static str, Vec<f32>)> {
        let d = |b: &DeviceBuffer<f32>| down(&dev, b);
        vec![
            ("d_pre_g", d(g.d_pre_g())),
            ("d_pre_t", d(g.d_pre_t())),
            ("g_w_g", d(g.g_w_g())),
            ("g_b_g", d(g.g_b_g())),
            ("g_w_t", d(g.g_w_t())),
            ("g_b_t", d(g.g_b_t())),
            ("g_w_h", d(g.g_w_h())),
            ("g_b_h", d(g.g_b_h())),
        ]
    };
    let weights_before = trained(&g);
    g.replay().unwrap();
    let first = grads(&g);
    let loss = g.download_loss().unwrap();
    g.replay().unwrap();
    for ((name, now), (_, was)) in trained(&g).iter().zip(&weights_before).take(6) {
        assert_eq!(now, was, "lr = 0 must leave {name} unchanged");
    }
    assert_bitwise_eq("loss, second replay", &g.download_loss().unwrap(), &loss);
    for ((name, again), (_, once)) in grads(&g).iter().zip(&first) {
        assert_all_finite(name, once);
        assert!(once.iter().any(|&v| v != 0.0), "{name} is all zero: the backward did not reach it");
        assert_bitwise_eq(&format!("{name}, second replay vs first"), again, once);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn training_on_learnable_labels_lowers_the_loss() {
    const STEPS: u32 = 300;
    let dev = device();
    let mut g = train_step(&dev, &ModelWeights::init(41));
    g.capture().unwrap();
    let (mut stream, mut batch) = (BookStream::independent(42), TrainBatch::new());
    let mut losses = Vec::new();
    for step in 1..=STEPS {
        feed_batch(&mut stream, &mut batch, step, &mut [&mut g]);
        g.replay().unwrap();
        losses.push(g.download_loss().unwrap()[0]);
    }
    assert_all_finite("losses", &losses);
    let mean = |v: &[f32]| v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64;
    let (first, last) = (mean(&losses[..50]), mean(&losses[losses.len() - 50..]));
    assert!(
        last <= 0.9 * first,
        "mean loss of the last 50 steps {last:.4} is not <= 0.9 x the first 50 {first:.4} (ratio {:.3})",
        last / first
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn one_while_launch_of_100_steps_equals_100_replays_bit_for_bit() {
    let dev = device();
    let w = ModelWeights::init(23);
    let mut one = train_step(&dev, &w);
    let mut many = TrainSteps100::new(&dev).unwrap();
    many.load_weights(&w).unwrap();
    let (mut stream, mut batch) = (BookStream::independent(24), TrainBatch::new());
    batch.fill(&mut stream).unwrap();
    one.upload_batch(&batch).unwrap();
    many.upload_batch(&batch).unwrap();
    one.upload_schedule_for(5, LR).unwrap();
    many.upload_schedule_for(5, LR).unwrap();
    one.capture().unwrap();
    many.capture().unwrap();
    for launch in 1..=2 {
        for _ in 0..100 {
            one.replay().unwrap();
        }
        many.replay().unwrap();
        let loss = many.download_loss().unwrap();
        assert_all_finite("loss", &loss);
        assert_bitwise_eq(&format!("launch {launch}: loss"), &loss, &one.download_loss().unwrap());
        for (name, got, want) in [
            ("w_g", many.download_w_g().unwrap(), one.download_w_g().unwrap()),
            ("b_t", many.download_b_t().unwrap(), one.download_b_t().unwrap()),
            ("w_h", many.download_w_h().unwrap(), one.download_w_h().unwrap()),
            ("v_w_t", many.download_v_w_t().unwrap(), one.download_v_w_t().unwrap()),
        ] {
            assert_bitwise_eq(&format!("launch {launch}: {name} after 100 steps"), &got, &want);
        }
    }
    // Eager: the while runs its body 100 times on the host.
    let mut eager = TrainSteps100::new(&dev).unwrap();
    eager.load_weights(&w).unwrap();
    eager.upload_batch(&batch).unwrap();
    eager.upload_schedule_for(5, LR).unwrap();
    eager.run_eager().unwrap();
    eager.run_eager().unwrap();
    assert_bitwise_eq("eager 2 x 100 steps: w_g", &eager.download_w_g().unwrap(), &many.download_w_g().unwrap());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_data_parallel_step_on_one_rank_equals_the_single_gpu_step_bit_for_bit() {
    use kgraph_model::graphs::TrainStepDdp;
    let dev = device();
    let w = ModelWeights::init(27);
    let mut one = train_step(&dev, &w);
    let mut ddp = TrainStepDdp::new(&dev, &kgraph::nccl::Bootstrap::single()).unwrap_or_else(|e| panic!("{e}"));
    ddp.load_weights(&w).unwrap();
    // The all-reduces sit between the backward and AdamW: the gradients' consumers follow them.
    let index = |name: &str| TrainStepDdp::NODES.iter().position(|&n| n == name).unwrap();
    assert!(TrainStepDdp::EDGES.contains(&(index("allreduce_g_w_g"), index("adamw_w_g"))));
    one.capture().unwrap();
    ddp.capture().unwrap();
    let (mut stream, mut batch) = (BookStream::independent(28), TrainBatch::new());
    for step in 1..=3 {
        batch.fill(&mut stream).unwrap();
        one.upload_batch(&batch).unwrap();
        ddp.upload_batch(&batch).unwrap();
        one.upload_schedule_for(step, LR).unwrap();
        ddp.upload_schedule_for(step, LR).unwrap();
        one.replay().unwrap();
        ddp.replay().unwrap();
        assert_bitwise_eq(&format!("step {step}: loss"), &ddp.download_loss().unwrap(), &one.download_loss().unwrap());
        assert_bitwise_eq(&format!("step {step}: w_g"), &ddp.download_w_g().unwrap(), &one.download_w_g().unwrap());
        assert_bitwise_eq(&format!("step {step}: b_h"), &ddp.download_b_h().unwrap(), &one.download_b_h().unwrap());
    }
}
