//! The memory plan on the GPU: every model graph built from its spec twice, planned (the
//! model's PDL kernels all enter through `kg_pdl_enter`, trigger then wait before touching any
//! buffer, so the calls make the `unsafe(pdl_waits_first)` promise; their compiled records prove
//! it as well, so the model's own structs plan exactly the same arenas by default, as
//! `tests/memory_plan_cpu.rs` checks) and with `plan_memory = false`, then fed the same data:
//! every output and state is bit-equal after several replays of the captured graph, of the
//! serialized graph and of eager runs. A wrong plan is a data race between buffers sharing
//! bytes, so these are also the graphs the sanitizers (racecheck, memcheck) run over.

use kgraph::Device;
use kgraph_model::graphs::synthetic::BookStream;
use kgraph_model::graphs::{ModelWeights, TrainBatch};
use kgraph_model::ppo::MlpLayout;

use super::common::device;
use super::model_util::{assert_all_finite, assert_bitwise_eq, Lcg};

// SAFETY (each `unsafe(pdl_waits_first)` below): every kernel of these specs begins with
// `kg_pdl_enter()` (kernels/model_common.cuh: `griddepcontrol.launch_dependents`, then
// `griddepcontrol.wait`) before it reads or writes any buffer.
kgraph::graph!("graphs/train_step.toml", name = TrainStepPlanned, unsafe(pdl_waits_first));
kgraph::graph!("graphs/train_step.toml", name = TrainStepUnplanned, plan_memory = false);
kgraph::graph!("graphs/train_step.toml", name = TrainSteps4Planned, repeat = 4, unsafe(pdl_waits_first));
kgraph::graph!("graphs/train_step.toml", name = TrainSteps4Unplanned, repeat = 4, plan_memory = false);
kgraph::graph!("graphs/train_step_ddp.toml", name = TrainStepDdpPlanned);
kgraph::graph!("graphs/train_step_ddp.toml", name = TrainStepDdpUnplanned, plan_memory = false);
kgraph::graph!("graphs/ppo_update.toml", name = PpoUpdatePlanned, unsafe(pdl_waits_first));
kgraph::graph!("graphs/ppo_update.toml", name = PpoUpdateUnplanned, plan_memory = false);
kgraph::graph!("graphs/ppo_update.toml", name = PpoLoopPlanned, repeat = 32, unsafe(pdl_waits_first));
kgraph::graph!("graphs/ppo_update.toml", name = PpoLoopUnplanned, repeat = 32, plan_memory = false);
kgraph::graph!("graphs/perception.toml", name = PerceptionPlanned, unsafe(pdl_waits_first));
kgraph::graph!("graphs/perception.toml", name = PerceptionUnplanned, plan_memory = false);

/// How a graph is run in one comparison.
#[derive(Debug, Clone, Copy)]
enum Mode {
    Replay,
    Serialized,
    Eager,
}

const MODES: [Mode; 3] = [Mode::Replay, Mode::Serialized, Mode::Eager];

/// Builds (`Replay`, `Serialized`) and runs `$g` once in `$mode`.
macro_rules! prepare {
    ($g:expr, $mode:expr) => {
        match $mode {
            Mode::Replay => $g.capture().unwrap(),
            Mode::Serialized => $g.capture_serialized().unwrap(),
            Mode::Eager => {}
        }
    };
}
macro_rules! step {
    ($g:expr, $mode:expr) => {
        match $mode {
            Mode::Replay | Mode::Serialized => $g.replay().unwrap(),
            Mode::Eager => $g.run_eager().unwrap(),
        }
    };
}

/// The planned and unplanned structs of one spec really differ (else the test proves nothing).
fn assert_planned(what: &str, planned: usize, unplanned: usize, without: usize) {
    assert!(planned > 0, "{what}: nothing planned");
    assert_eq!(unplanned, 0, "{what}: the opted-out form has an arena");
    assert!(planned < without, "{what}: the arena {planned} B holds everything ({without} B)");
}

fn compare(what: &str, planned: Vec<(&str, Vec<f32>)>, unplanned: Vec<(&str, Vec<f32>)>) {
    for ((name, got), (_, want)) in planned.iter().zip(&unplanned) {
        assert_all_finite(&format!("{what}: {name}"), got);
        assert_bitwise_eq(&format!("{what}: {name}, planned vs unplanned"), got, want);
    }
}

// ---- the train step ---------------------------------------------------------------------------

macro_rules! load_train {
    ($g:expr, $w:expr) => {{
        let (g, w) = (&mut $g, $w);
        g.load_w_g(&w.w_g).unwrap();
        g.load_b_g(&w.b_g).unwrap();
        g.load_w_t(&w.w_t).unwrap();
        g.load_b_t(&w.b_t).unwrap();
        g.load_w_h(&w.w_h).unwrap();
        g.load_b_h(&w.b_h).unwrap();
    }};
}

macro_rules! feed_train {
    ($g:expr, $batch:expr, $step:expr) => {{
        let (g, batch, step): (_, &TrainBatch, u32) = (&mut $g, $batch, $step);
        g.upload_snap(&batch.snap).unwrap();
        g.upload_dt(&batch.dt).unwrap();
        g.upload_targets(&batch.targets).unwrap();
        let correction = |beta: f32| (1.0 - f64::from(beta).powi(step as i32)) as f32;
        g.upload_schedule(&[1e-3, correction(g.beta1()), correction(g.beta2())]).unwrap();
    }};
}

macro_rules! train_results {
    ($g:expr) => {{
        let g = &$g;
        vec![
            ("loss", g.download_loss().unwrap()),
            ("probs", g.download_probs().unwrap()),
            ("w_g", g.download_w_g().unwrap()),
            ("b_g", g.download_b_g().unwrap()),
            ("w_t", g.download_w_t().unwrap()),
            ("b_t", g.download_b_t().unwrap()),
            ("w_h", g.download_w_h().unwrap()),
            ("b_h", g.download_b_h().unwrap()),
            ("m_w_g", g.download_m_w_g().unwrap()),
            ("v_w_t", g.download_v_w_t().unwrap()),
            ("v_b_h", g.download_v_b_h().unwrap()),
        ]
    }};
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_planned_train_step_equals_the_unplanned_one_bit_for_bit() {
    assert_planned(
        "TrainStep",
        TrainStepPlanned::PLANNED_BYTES,
        TrainStepUnplanned::PLANNED_BYTES,
        TrainStepPlanned::BYTES_WITHOUT_PLAN,
    );
    let dev = device();
    let w = ModelWeights::init(41);
    for mode in MODES {
        let (mut planned, mut unplanned) =
            (TrainStepPlanned::new(&dev).unwrap(), TrainStepUnplanned::new(&dev).unwrap());
        load_train!(planned, &w);
        load_train!(unplanned, &w);
        prepare!(planned, mode);
        prepare!(unplanned, mode);
        let (mut stream, mut batch) = (BookStream::independent(42), TrainBatch::new());
        for step in 1..=5 {
            batch.fill(&mut stream).unwrap();
            feed_train!(planned, &batch, step);
            feed_train!(unplanned, &batch, step);
            step!(planned, mode);
            step!(unplanned, mode);
            compare(&format!("{mode:?} step {step}"), train_results!(planned), train_results!(unplanned));
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_planned_train_loop_equals_the_unplanned_one_bit_for_bit() {
    // Every node in one [[while]] body: the plan shares bytes by the body's own order.
    assert_planned(
        "TrainSteps4",
        TrainSteps4Planned::PLANNED_BYTES,
        TrainSteps4Unplanned::PLANNED_BYTES,
        TrainSteps4Planned::BYTES_WITHOUT_PLAN,
    );
    let dev = device();
    let w = ModelWeights::init(43);
    for mode in MODES {
        let mut planned = TrainSteps4Planned::new(&dev).unwrap();
        let mut unplanned = TrainSteps4Unplanned::new(&dev).unwrap();
        load_train!(planned, &w);
        load_train!(unplanned, &w);
        prepare!(planned, mode);
        prepare!(unplanned, mode);
        let (mut stream, mut batch) = (BookStream::independent(44), TrainBatch::new());
        for launch in 1..=3 {
            batch.fill(&mut stream).unwrap();
            feed_train!(planned, &batch, launch);
            feed_train!(unplanned, &batch, launch);
            step!(planned, mode);
            step!(unplanned, mode);
            compare(&format!("{mode:?} launch {launch}"), train_results!(planned), train_results!(unplanned));
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_planned_data_parallel_step_equals_the_unplanned_one_bit_for_bit() {
    // No PDL in this spec: planned as `graph!` plans it by default.
    assert_planned(
        "TrainStepDdp",
        TrainStepDdpPlanned::PLANNED_BYTES,
        TrainStepDdpUnplanned::PLANNED_BYTES,
        TrainStepDdpPlanned::BYTES_WITHOUT_PLAN,
    );
    let dev = device();
    let w = ModelWeights::init(45);
    let boot = kgraph::nccl::Bootstrap::single();
    for mode in MODES {
        let mut planned = TrainStepDdpPlanned::new(&dev, &boot).unwrap_or_else(|e| panic!("{e}"));
        let mut unplanned = TrainStepDdpUnplanned::new(&dev, &boot).unwrap_or_else(|e| panic!("{e}"));
        load_train!(planned, &w);
        load_train!(unplanned, &w);
        prepare!(planned, mode);
        prepare!(unplanned, mode);
        let (mut stream, mut batch) = (BookStream::independent(46), TrainBatch::new());
        for step in 1..=4 {
            batch.fill(&mut stream).unwrap();
            feed_train!(planned, &batch, step);
            feed_train!(unplanned, &batch, step);
            step!(planned, mode);
            step!(unplanned, mode);
            compare(&format!("{mode:?} step {step}"), train_results!(planned), train_results!(unplanned));
        }
    }
}

// ---- the PPO update ---------------------------------------------------------------------------

/// Initial weights and a random rollout (as `tests/gpu/ppo_update.rs` fills its graphs).
macro_rules! fill_ppo {
    ($g:expr, $ty:ident, $seed:expr) => {{
        let (g, seed) = (&mut $g, $seed);
        let (n, n_obs, n_act) = ($ty::N_ROLLOUT, $ty::N_OBS, $ty::N_ACT);
        g.load_actor(&MlpLayout::new(n_obs, $ty::N_HID, n_act).init(1, 0.01)).unwrap();
        g.load_critic(&MlpLayout::new(n_obs, $ty::N_HID, 1).init(2, 1.0)).unwrap();
        let mut rng = Lcg::new(seed);
        let mut obs = vec![0.0f32; n * n_obs];
        for row in obs.chunks_mut(n_obs) {
            row[(rng.next_u32() % n_obs as u32) as usize] = 1.0;
        }
        g.upload_obs(&obs).unwrap();
        g.upload_actions(&(0..n).map(|_| (rng.next_u32() % n_act as u32) as i32).collect::<Vec<_>>()).unwrap();
        g.upload_old_log_probs(&vec![-(n_act as f32).ln(); n]).unwrap();
        g.upload_advantages(&rng.vec(n, -1.0, 1.0)).unwrap();
        g.upload_returns(&rng.vec(n, -1.0, 1.0)).unwrap();
        let mut perm = Vec::with_capacity($ty::N_PERM);
        for _ in 0..$ty::N_PERM / n {
            let mut p: Vec<i32> = (0..n as i32).collect();
            for i in (1..n).rev() {
                p.swap(i, (rng.next_u32() as usize) % (i + 1));
            }
            perm.extend(p);
        }
        g.upload_perm(&perm).unwrap();
        g.set_lr(1e-3).unwrap();
    }};
}

macro_rules! ppo_results {
    ($g:expr) => {{
        let g = &$g;
        let counters: Vec<f32> = g.download_counters().unwrap().iter().map(|&c| c as f32).collect();
        vec![
            ("sample_loss", g.download_sample_loss().unwrap()),
            ("stats", g.download_stats().unwrap()),
            ("actor", g.download_actor().unwrap()),
            ("m_actor", g.download_m_actor().unwrap()),
            ("v_actor", g.download_v_actor().unwrap()),
            ("critic", g.download_critic().unwrap()),
            ("v_critic", g.download_v_critic().unwrap()),
            ("counters", counters),
        ]
    }};
}

/// `$planned` and `$unplanned` (structs of one spec) run `$runs` times in every mode, each run
/// `$per_run` minibatch updates: besides agreeing bit for bit, both advance `counters` =
/// `[minibatch, AdamW step]` (zero at `new`) by exactly `$per_run` per run, so a node reading or
/// writing any memory but the live struct's own `counters` fails here in both at once. Each
/// struct's `counters` address is printed (`--nocapture`) for comparison with a sanitizer's
/// report.
macro_rules! compare_ppo {
    ($planned:ident, $unplanned:ident, $runs:expr, $per_run:expr, $seed:expr) => {{
        assert_planned(
            stringify!($planned),
            $planned::PLANNED_BYTES,
            $unplanned::PLANNED_BYTES,
            $planned::BYTES_WITHOUT_PLAN,
        );
        let dev: Device = device();
        for mode in MODES {
            let (mut planned, mut unplanned) = ($planned::new(&dev).unwrap(), $unplanned::new(&dev).unwrap());
            fill_ppo!(planned, $planned, $seed);
            fill_ppo!(unplanned, $unplanned, $seed);
            prepare!(planned, mode);
            prepare!(unplanned, mode);
            eprintln!(
                "{}, {mode:?}: counters at {:#x} (planned), {:#x} (unplanned)",
                stringify!($planned),
                kgraph::DeviceIn::<i32>::device_addr(planned.counters()),
                kgraph::DeviceIn::<i32>::device_addr(unplanned.counters()),
            );
            for run in 1..=$runs {
                step!(planned, mode);
                step!(unplanned, mode);
                let want = ($per_run * run) as i32;
                for (what, got) in [
                    ("planned", planned.download_counters().unwrap()),
                    ("unplanned", unplanned.download_counters().unwrap()),
                ] {
                    assert_eq!(got, [want, want], "{mode:?} run {run}: {what} counters after {want} minibatch updates");
                }
                compare(&format!("{mode:?} run {run}"), ppo_results!(planned), ppo_results!(unplanned));
            }
        }
    }};
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_planned_ppo_minibatch_equals_the_unplanned_one_bit_for_bit() {
    compare_ppo!(PpoUpdatePlanned, PpoUpdateUnplanned, 8, 1, 51);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_planned_ppo_update_loop_equals_the_unplanned_one_bit_for_bit() {
    compare_ppo!(PpoLoopPlanned, PpoLoopUnplanned, 2, 32, 52);
}

// ---- Graph A ------------------------------------------------------------------------------------

macro_rules! load_perception {
    ($g:expr, $w:expr) => {{
        let (g, w) = (&mut $g, $w);
        g.load_w_g(&w.w_g).unwrap();
        g.load_b_g(&w.b_g).unwrap();
        g.load_w_t(&w.w_t).unwrap();
        g.load_b_t(&w.b_t).unwrap();
        g.load_w_h(&w.w_h).unwrap();
        g.load_b_h(&w.b_h).unwrap();
        g.load_p(&w.p).unwrap();
        g.load_c(&w.c).unwrap();
    }};
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_planned_perception_graph_equals_the_unplanned_one_bit_for_bit() {
    assert_planned(
        "Perception",
        PerceptionPlanned::PLANNED_BYTES,
        PerceptionUnplanned::PLANNED_BYTES,
        PerceptionPlanned::BYTES_WITHOUT_PLAN,
    );
    let dev = device();
    let w = ModelWeights::init(61);
    for mode in MODES {
        let (mut planned, mut unplanned) =
            (PerceptionPlanned::new(&dev).unwrap(), PerceptionUnplanned::new(&dev).unwrap());
        load_perception!(planned, &w);
        load_perception!(unplanned, &w);
        prepare!(planned, mode);
        prepare!(unplanned, mode);
        let mut stream = BookStream::new(62);
        let mut snap = [0.0f32; kgraph_model::model::SNAP_LEN];
        for step in 1..=20 {
            let tick = stream.next_into(&mut snap);
            planned.feed(&snap, tick.dt);
            unplanned.feed(&snap, tick.dt);
            step!(planned, mode);
            step!(unplanned, mode);
            compare(&format!("{mode:?} step {step}"), planned.results(), unplanned.results());
        }
    }
}

/// Graph A's host side, for both structs.
trait PerceptionIo {
    fn feed(&mut self, snap: &[f32], dt: f32);
    fn results(&self) -> Vec<(&'static str, Vec<f32>)>;
}

macro_rules! perception_io {
    ($($g:ident),*) => {$(
        impl PerceptionIo for $g {
            fn feed(&mut self, snap: &[f32], dt: f32) {
                self.write_snap(snap).unwrap();
                self.write_dt(&[dt]).unwrap();
            }
            fn results(&self) -> Vec<(&'static str, Vec<f32>)> {
                vec![
                    ("probs", self.read_probs().unwrap()),
                    ("y", self.read_y().unwrap()),
                    ("h", self.download_h().unwrap()),
                ]
            }
        }
    )*};
}
perception_io!(PerceptionPlanned, PerceptionUnplanned);
