//! salesforce/warp-drive's kernels whose extents hold only for some scalars or launch shapes
//! (`warpdrive__log.cu`, `warpdrive__dummy_env_step.cu`), declared with `requires(...)`: the
//! checked launch refuses a launch where a condition is false (`LaunchError::Requirement`).
//! Each runs at the manifest's three shapes with buffers of exactly its extents, and all four
//! are one graph (`tests/corpus2/graphs/warpdrive_requires.toml`).

use kgraph::{Error, LaunchError};

use super::common::{assert_requirement_refused, device, download, filled, upload, Shape};

#[kgraph::kernels]
pub(crate) mod kernels {
    /// Thread 0 sets `log_mask[timestep]` (asserting `log_mask[timestep - 1] == 1`) when
    /// `timestep <= episode_length`: a negative `timestep` would write below the mask.
    #[kernel("warpdrive__log.cu", unsafe(extents), requires(timestep >= 0))]
    pub fn update_log_mask(log_mask: &mut [i32; timestep + 1], timestep: i32, episode_length: i32);

    /// The first five global threads (the agents) copy their `feature_dim` features of
    /// environment `env_id` into time step `timestep` of the log.
    #[kernel("warpdrive__log.cu", unsafe(extents), requires(timestep >= 0, env_id >= 0))]
    pub fn log_one_step_in_float(
        log: &mut [f32; (timestep + 1) * 5 * feature_dim],
        data: &mut [f32; (env_id + 1) * 5 * feature_dim],
        feature_dim: i32,
        timestep: i32,
        episode_length: i32,
        env_id: i32,
    );

    /// The `int` twin of `log_one_step_in_float`.
    #[kernel("warpdrive__log.cu", unsafe(extents), requires(timestep >= 0, env_id >= 0))]
    pub fn log_one_step_in_int(
        log: &mut [i32; (timestep + 1) * 5 * feature_dim],
        data: &mut [i32; (env_id + 1) * 5 * feature_dim],
        feature_dim: i32,
        timestep: i32,
        episode_length: i32,
        env_id: i32,
    );

    /// A dummy RL step, one block per environment, one thread per agent (5 agents compiled
    /// in). Every thread must reach the `__syncthreads` inside `if (agent_id < 5)`, so the
    /// block has at most 5 threads (`max_block`, which its static `__shared__` flag needs
    /// anyway); each agent read-modify-writes its own `x` and `y`, so no two threads or blocks
    /// may share an agent index (a 1-D block and grid). `target_` is the `.cu`'s `target`
    /// (underscores do not count): the generated `__issue` has a parameter of that name.
    #[kernel(
        "warpdrive__dummy_env_step.cu",
        unsafe(extents),
        max_block = 5,
        requires(block.y == 1, block.z == 1, grid.y == 1, grid.z == 1)
    )]
    pub fn testkernel(
        x: &mut [f32; grid.x * 5],
        y: &mut [i32; grid.x * 5],
        done: &mut [i32; grid.x],
        actions: &mut [i32; grid.x * 15],
        multiplier: f32,
        target_: i32,
        step: i32,
        episode_length: i32,
    );
}
use kernels::{Kernels, LogOneStepInFloat, Testkernel, UpdateLogMask};

kgraph::graph!("tests/corpus2/graphs/warpdrive_requires.toml");

const POISON_F: f32 = -1.0;
const POISON_I: i32 = -1;

#[test]
#[ignore = "needs a CUDA GPU"]
fn update_log_mask_sets_exactly_the_current_step_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().update_log_mask;
    for (shape, timestep, episode_length) in
        [(Shape::x(1, 1), 0, 10), (Shape::x(1, 32), 5, 10), (Shape::x(2, 32), 10, 10)]
    {
        // Steps before `timestep` already logged (the kernel asserts the previous one is).
        let before: Vec<i32> = (0..=timestep).map(|t| i32::from(t < timestep)).collect();
        let mut mask = upload(&dev, &before);
        k.launch(dev.stream(), shape.cfg(), &mut mask, timestep, episode_length).unwrap();
        assert!(download(&dev, &mask).iter().all(|&m| m == 1), "{shape:?} timestep {timestep}: {before:?}");
    }
    // Past the episode nothing is written.
    let mut mask = filled(&dev, 12, 0i32);
    k.launch(dev.stream(), Shape::x(1, 32).cfg(), &mut mask, 11, 10).unwrap();
    assert!(download(&dev, &mask).iter().all(|&m| m == 0), "timestep past the episode wrote");
}

/// The log's last time step (`5 * fd` elements) equals environment `env_id`'s slice of `data`
/// exactly; every earlier element still holds `poison`.
fn assert_logged<T: PartialEq + Copy + std::fmt::Debug>(what: &str, log: &[T], data: &[T], fd: usize, poison: T) {
    let slice = 5 * fd;
    let (earlier, last) = log.split_at(log.len() - slice);
    assert!(earlier.iter().all(|&v| v == poison), "{what}: an earlier step was written");
    assert_eq!(last, &data[data.len() - slice..], "{what}: the logged step");
}

/// The manifest's shapes: (shape, feature_dim, timestep, episode_length, env_id).
const LOG_SHAPES: [(Shape, i32, i32, i32, i32); 3] =
    [(Shape::x(1, 5), 3, 0, 10, 0), (Shape::x(1, 32), 8, 4, 10, 3), (Shape::x(2, 4), 1, 10, 10, 63)];

#[test]
#[ignore = "needs a CUDA GPU"]
fn log_one_step_copies_one_environment_into_one_step_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap();
    for (shape, fd, timestep, episode_length, env_id) in LOG_SHAPES {
        let (log_len, data_len) = (((timestep + 1) * 5 * fd) as usize, ((env_id + 1) * 5 * fd) as usize);
        let what = format!("{shape:?} feature_dim {fd} timestep {timestep} env_id {env_id}");

        let data_h: Vec<f32> = (0..data_len).map(|i| i as f32).collect();
        let mut data = upload(&dev, &data_h);
        let mut log = filled(&dev, log_len, POISON_F);
        k.log_one_step_in_float
            .launch(dev.stream(), shape.cfg(), &mut log, &mut data, fd, timestep, episode_length, env_id)
            .unwrap();
        assert_logged(&format!("float {what}"), &download(&dev, &log), &data_h, fd as usize, POISON_F);

        let data_h: Vec<i32> = (0..data_len as i32).collect();
        let mut data = upload(&dev, &data_h);
        let mut log = filled(&dev, log_len, POISON_I);
        k.log_one_step_in_int
            .launch(dev.stream(), shape.cfg(), &mut log, &mut data, fd, timestep, episode_length, env_id)
            .unwrap();
        assert_logged(&format!("int {what}"), &download(&dev, &log), &data_h, fd as usize, POISON_I);
    }
}

/// Inputs of the dummy step: `x = 8`, `y = 0` but agent 0 of every odd environment at 100.
fn step_inputs(envs: usize) -> (Vec<f32>, Vec<i32>) {
    let y = (0..envs * 5).map(|i| if i % 5 == 0 && (i / 5) % 2 == 1 { 100 } else { 0 }).collect();
    (vec![8.0; envs * 5], y)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn testkernel_writes_every_agents_actions_and_flags_the_envs_that_reach_the_target_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().testkernel;
    // (shape, multiplier, target, step, episode_length), as in the manifest.
    let shapes =
        [(Shape::x(1, 5), 2.0f32, 10, 1, 10), (Shape::x(64, 5), 0.5, 3, 10, 10), (Shape::x(1000, 4), 1.0, 0, 2, 10)];
    for (shape, multiplier, target, step, episode_length) in shapes {
        let envs = shape.gx();
        let agents = shape.bx().min(5);
        let (x_h, y_h) = step_inputs(envs);
        let (mut x, mut y) = (upload(&dev, &x_h), upload(&dev, &y_h));
        let mut done = filled(&dev, envs, 0i32);
        let mut actions = filled(&dev, envs * 15, POISON_I);
        k.launch(
            dev.stream(),
            shape.cfg(),
            &mut x,
            &mut y,
            &mut done,
            &mut actions,
            multiplier,
            target,
            step,
            episode_length,
        )
        .unwrap();
        let what = format!("{shape:?} multiplier {multiplier} target {target} step {step}");
        for (i, a) in download(&dev, &actions).into_iter().enumerate() {
            let (agent, slot) = ((i % 15) / 3, i % 3);
            let want = if agent < agents { slot as i32 } else { POISON_I };
            assert_eq!(a, want, "{what}: actions[{i}]");
        }
        // y = 100 * multiplier >= target for agent 0 of odd envs; 0 >= target only for target 0.
        for (e, d) in download(&dev, &done).into_iter().enumerate() {
            let want = step == episode_length || target <= 0 || e % 2 == 1;
            assert_eq!(d, i32::from(want), "{what}: done[{e}]");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn launches_outside_the_requirements_are_refused_before_the_driver() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap();
    let mut mask = filled(&dev, 4, 7i32);
    // timestep = -1: extent 0, so only the requirement stops a write at log_mask[-1].
    let r = k.update_log_mask.launch(dev.stream(), Shape::x(1, 1).cfg(), &mut mask, -1, 10);
    assert_requirement_refused(r, UpdateLogMask::NAME, "timestep >= 0");
    assert!(download(&dev, &mask).iter().all(|&m| m == 7), "a refused launch wrote");

    let (mut log, mut data) = (filled(&dev, 15, POISON_F), filled(&dev, 15, 1.0f32));
    let r = k.log_one_step_in_float.launch(dev.stream(), Shape::x(1, 5).cfg(), &mut log, &mut data, 3, 0, 10, -1);
    assert_requirement_refused(r, LogOneStepInFloat::NAME, "env_id >= 0");

    let envs = 8;
    let (x_h, y_h) = step_inputs(envs);
    let (mut x, mut y) = (upload(&dev, &x_h), upload(&dev, &y_h));
    let mut done = filled(&dev, envs, 0i32);
    let mut actions = filled(&dev, envs * 15, POISON_I);
    // Six threads: the sixth would skip the barrier the first five wait at.
    let r = k.testkernel.launch(
        dev.stream(),
        Shape::x(envs as u32, 6).cfg(),
        &mut x,
        &mut y,
        &mut done,
        &mut actions,
        1.0,
        5,
        0,
        10,
    );
    assert!(matches!(r, Err(Error::Launch(LaunchError::BlockTooLarge { .. }))), "block of 6: {r:?}");
    // Two rows of two threads: agents 0 and 1 twice each, racing on x and y.
    let two_rows = Shape { grid: (envs as u32, 1, 1), block: (2, 2, 1) };
    let r = k.testkernel.launch(dev.stream(), two_rows.cfg(), &mut x, &mut y, &mut done, &mut actions, 1.0, 5, 0, 10);
    assert_requirement_refused(r, Testkernel::NAME, "block.y == 1");
    assert!(download(&dev, &actions).iter().all(|&a| a == POISON_I), "a refused launch wrote");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_logging_graph_matches_eager_and_logs_the_step() {
    let dev = device();
    let (ts, fd) = (WarpdriveRequires::TIMESTEP, WarpdriveRequires::FEATURE_DIM);
    let fill = |g: &mut WarpdriveRequires| {
        let mask: Vec<i32> = (0..=ts).map(|t| i32::from(t < ts)).collect();
        g.load_log_mask(&mask).unwrap();
        g.load_log_f(&vec![POISON_F; WarpdriveRequires::LOG_F_LEN]).unwrap();
        g.load_data_f(&(0..WarpdriveRequires::DATA_F_LEN).map(|i| i as f32).collect::<Vec<_>>()).unwrap();
        g.load_log_i(&vec![POISON_I; WarpdriveRequires::LOG_I_LEN]).unwrap();
        g.load_data_i(&(0..WarpdriveRequires::DATA_I_LEN as i32).collect::<Vec<_>>()).unwrap();
        let (x, y) = step_inputs(WarpdriveRequires::ENVS);
        g.load_x(&x).unwrap();
        g.load_y(&y).unwrap();
        g.load_done(&vec![0; WarpdriveRequires::ENVS]).unwrap();
        g.load_actions(&vec![POISON_I; WarpdriveRequires::ACTIONS_LEN]).unwrap();
    };
    let state = |g: &WarpdriveRequires| {
        let f = |v: Vec<f32>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let i = |v: Vec<i32>| v.iter().map(|x| *x as u32).collect::<Vec<_>>();
        vec![
            i(g.download_log_mask().unwrap()),
            f(g.download_log_f().unwrap()),
            i(g.download_log_i().unwrap()),
            f(g.download_x().unwrap()),
            i(g.download_y().unwrap()),
            i(g.download_done().unwrap()),
            i(g.download_actions().unwrap()),
        ]
    };
    let mut eager = WarpdriveRequires::new(&dev).unwrap();
    fill(&mut eager);
    eager.run_eager().unwrap();
    let mut graph = WarpdriveRequires::new(&dev).unwrap();
    fill(&mut graph);
    graph.capture().unwrap();
    graph.replay().unwrap();
    assert_eq!(state(&graph), state(&eager), "graph replay and run_eager differ");

    assert!(graph.download_log_mask().unwrap().iter().all(|&m| m == 1), "the step is marked logged");
    let data: Vec<i32> = (0..WarpdriveRequires::DATA_I_LEN as i32).collect();
    assert_logged("graph int", &graph.download_log_i().unwrap(), &data, fd, POISON_I);
    // multiplier 1, target 50: exactly the odd environments reach it.
    let done = graph.download_done().unwrap();
    assert!(done.iter().enumerate().all(|(e, &d)| d == i32::from(e % 2 == 1)), "{done:?}");
}
