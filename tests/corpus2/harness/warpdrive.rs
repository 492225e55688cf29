//! salesforce/warp-drive's core reset and log kernels (`warpdrive__reset.cu`,
//! `warpdrive__log.cu`): RL environments launched one block per environment (`env_id =
//! blockIdx.x`, agent or feature `threadIdx.x`), so the per-environment buffers are sized by
//! `grid.x`. Each kernel runs at the manifest's three shapes with buffers of exactly its
//! extents, and the whole set is one graph (`tests/corpus2/graphs/warpdrive.toml`).
//!
//! The prototypes in the project's `reset.h`/`log.h` have a default argument
//! (`int force_reset = 0`), which `#[kernel]` reads past (#28 item 5). `ref` is a Rust keyword:
//! the parameter is declared `r#ref`. The `.cu` stores `env_id * feature_dim` in `int`; the
//! extents are computed in `int` too (grid terms and `int` scalars), so a product the kernel
//! would overflow is refused rather than accepted.

use kgraph::DeviceValue;

use super::common::{assert_extent_refused, device, download, filled, upload, Shape};

#[kgraph::kernels]
pub(crate) mod kernels {
    /// `data[e][t] = ref[e][t]` for `t < feature_dim` where environment `e` is done (or
    /// `force_reset`): one block per environment, one thread per feature.
    #[kernel("warpdrive__reset.cu", unsafe(extents))]
    pub fn reset_in_float_when_done_2d(
        data: &mut [f32; grid.x * feature_dim],
        r#ref: &[f32; grid.x * feature_dim],
        done: &mut [i32; grid.x],
        feature_dim: i32,
        force_reset: i32,
    );

    /// The `int` twin of `reset_in_float_when_done_2d`.
    #[kernel("warpdrive__reset.cu", unsafe(extents))]
    pub fn reset_in_int_when_done_2d(
        data: &mut [i32; grid.x * feature_dim],
        r#ref: &[i32; grid.x * feature_dim],
        done: &mut [i32; grid.x],
        feature_dim: i32,
        force_reset: i32,
    );

    /// `data[e][a][..] = ref[e][a][..]` for agents `a < agent_dim` of each done environment:
    /// one thread per agent copies its `feature_dim` features.
    #[kernel("warpdrive__reset.cu", unsafe(extents))]
    pub fn reset_in_float_when_done_3d(
        data: &mut [f32; grid.x * agent_dim * feature_dim],
        r#ref: &[f32; grid.x * agent_dim * feature_dim],
        done: &mut [i32; grid.x],
        agent_dim: i32,
        feature_dim: i32,
        force_reset: i32,
    );

    /// The `int` twin of `reset_in_float_when_done_3d`.
    #[kernel("warpdrive__reset.cu", unsafe(extents))]
    pub fn reset_in_int_when_done_3d(
        data: &mut [i32; grid.x * agent_dim * feature_dim],
        r#ref: &[i32; grid.x * agent_dim * feature_dim],
        done: &mut [i32; grid.x],
        agent_dim: i32,
        feature_dim: i32,
        force_reset: i32,
    );

    /// Thread 0 of each done (or forced) environment clears its done flag and time step.
    #[kernel("warpdrive__reset.cu", unsafe(extents))]
    pub fn undo_done_flag_and_reset_timestep(done: &mut [i32; grid.x], timestep: &mut [i32; grid.x], force_reset: i32);

    /// Thread 0 of every block zeroes the whole mask, `episode_length + 1` entries (blocks
    /// beyond the first write the same zeros).
    #[kernel("warpdrive__log.cu", unsafe(extents))]
    pub fn reset_log_mask(log_mask: &mut [i32; episode_length + 1], episode_length: i32);
}
use kernels::Kernels;

kgraph::graph!("tests/corpus2/graphs/warpdrive.toml");

/// What an element the kernels must not write keeps.
const POISON_F: f32 = -1.0;
const POISON_I: i32 = -1;

/// `done[e] = e % 2`: every other environment is done.
fn done_every_other(envs: usize) -> Vec<i32> {
    (0..envs).map(|e| (e % 2) as i32).collect()
}

/// The reset invariant: environment `e` owns `row` consecutive elements; where it was reset
/// (`force` or `done[e] > 0`) its first `copied` elements equal `reference` exactly, and every
/// other element still holds `poison`.
fn assert_reset<T: DeviceValue + PartialEq + Copy + std::fmt::Debug>(
    what: &str,
    data: &[T],
    reference: &[T],
    poison: T,
    done: &[i32],
    force: bool,
    (row, copied): (usize, usize),
) {
    assert_eq!(data.len(), done.len() * row, "{what}: buffer length");
    for (e, &d) in done.iter().enumerate() {
        let reset = force || d > 0;
        for j in 0..row {
            let i = e * row + j;
            let want = if reset && j < copied { reference[i] } else { poison };
            assert_eq!(data[i], want, "{what}: env {e} element {j} (reset {reset})");
        }
    }
}

/// The manifest's 2D shapes: (shape, feature_dim, force_reset).
const SHAPES_2D: [(Shape, i32, i32); 3] =
    [(Shape::x(1, 32), 7, 0), (Shape::x(64, 128), 100, 1), (Shape::x(1000, 8), 8, 0)];

/// The manifest's 3D shapes: (shape, agent_dim, feature_dim, force_reset).
const SHAPES_3D: [(Shape, i32, i32, i32); 3] =
    [(Shape::x(1, 5), 5, 3, 1), (Shape::x(64, 32), 20, 4, 0), (Shape::x(500, 64), 64, 1, 0)];

#[test]
#[ignore = "needs a CUDA GPU"]
fn reset_2d_float_and_int_copy_exactly_the_done_rows_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap();
    for (shape, fd, force) in SHAPES_2D {
        let len = shape.gx() * fd as usize;
        let copied = shape.bx().min(fd as usize);
        let done_host = done_every_other(shape.gx());
        let what = format!("{shape:?} feature_dim {fd} force {force}");

        let reference: Vec<f32> = (0..len).map(|i| i as f32).collect();
        let (r, mut done) = (upload(&dev, &reference), upload(&dev, &done_host));
        let mut data = filled(&dev, len, POISON_F);
        k.reset_in_float_when_done_2d.launch(dev.stream(), shape.cfg(), &mut data, &r, &mut done, fd, force).unwrap();
        let f = download(&dev, &data);
        assert_reset(
            &format!("float 2d {what}"),
            &f,
            &reference,
            POISON_F,
            &done_host,
            force != 0,
            (fd as usize, copied),
        );

        let reference: Vec<i32> = (0..len as i32).collect();
        let r = upload(&dev, &reference);
        let mut data = filled(&dev, len, POISON_I);
        k.reset_in_int_when_done_2d.launch(dev.stream(), shape.cfg(), &mut data, &r, &mut done, fd, force).unwrap();
        let got = download(&dev, &data);
        assert_reset(
            &format!("int 2d {what}"),
            &got,
            &reference,
            POISON_I,
            &done_host,
            force != 0,
            (fd as usize, copied),
        );
        assert_eq!(download(&dev, &done), done_host, "{what}: done is only read");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn reset_3d_float_and_int_copy_exactly_the_done_agents_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap();
    for (shape, ad, fd, force) in SHAPES_3D {
        let row = (ad * fd) as usize;
        let len = shape.gx() * row;
        let copied = shape.bx().min(ad as usize) * fd as usize;
        let done_host = done_every_other(shape.gx());
        let what = format!("{shape:?} agent_dim {ad} feature_dim {fd} force {force}");

        let reference: Vec<f32> = (0..len).map(|i| i as f32).collect();
        let (r, mut done) = (upload(&dev, &reference), upload(&dev, &done_host));
        let mut data = filled(&dev, len, POISON_F);
        k.reset_in_float_when_done_3d
            .launch(dev.stream(), shape.cfg(), &mut data, &r, &mut done, ad, fd, force)
            .unwrap();
        let got = download(&dev, &data);
        assert_reset(&format!("float 3d {what}"), &got, &reference, POISON_F, &done_host, force != 0, (row, copied));

        let reference: Vec<i32> = (0..len as i32).collect();
        let r = upload(&dev, &reference);
        let mut data = filled(&dev, len, POISON_I);
        k.reset_in_int_when_done_3d.launch(dev.stream(), shape.cfg(), &mut data, &r, &mut done, ad, fd, force).unwrap();
        let got = download(&dev, &data);
        assert_reset(&format!("int 3d {what}"), &got, &reference, POISON_I, &done_host, force != 0, (row, copied));
        assert_eq!(download(&dev, &done), done_host, "{what}: done is only read");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn undo_done_clears_every_flag_and_the_done_time_steps_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().undo_done_flag_and_reset_timestep;
    for (shape, force) in [(Shape::x(1, 1), 1), (Shape::x(64, 32), 0), (Shape::x(4096, 5), 0)] {
        let envs = shape.gx();
        let done_host: Vec<i32> = (0..envs).map(|e| (e % 3) as i32).collect();
        let mut done = upload(&dev, &done_host);
        let mut timestep = filled(&dev, envs, 7i32);
        k.launch(dev.stream(), shape.cfg(), &mut done, &mut timestep, force).unwrap();
        assert!(download(&dev, &done).iter().all(|&d| d == 0), "{shape:?}: a done flag survived");
        for (e, t) in download(&dev, &timestep).into_iter().enumerate() {
            let want = if force != 0 || done_host[e] > 0 { 0 } else { 7 };
            assert_eq!(t, want, "{shape:?} force {force}: env {e} (done was {})", done_host[e]);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn reset_log_mask_zeroes_all_episode_length_plus_one_entries_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().reset_log_mask;
    for (shape, episode_length) in [(Shape::x(1, 1), 0), (Shape::x(1, 32), 100), (Shape::x(4, 64), 1000)] {
        let mut mask = filled(&dev, episode_length as usize + 1, 1i32);
        k.launch(dev.stream(), shape.cfg(), &mut mask, episode_length).unwrap();
        assert!(download(&dev, &mask).iter().all(|&m| m == 0), "{shape:?} episode_length {episode_length}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn one_environment_more_than_the_buffers_hold_is_refused() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap();
    let (shape, fd) = (Shape::x(64, 32), 10i32);
    let len = shape.gx() * fd as usize;
    let r = upload(&dev, &vec![3.0f32; len]);
    let mut done = filled(&dev, shape.gx(), 1i32);
    let mut data = filled(&dev, len, POISON_F);
    // Environment 64 would copy ref[640..650] into data[640..650], past both buffers.
    let refused = k.reset_in_float_when_done_2d.launch(
        dev.stream(),
        shape.one_more_block().cfg(),
        &mut data,
        &r,
        &mut done,
        fd,
        1,
    );
    assert_extent_refused(refused, "reset_in_float_when_done_2d", "data", (len + fd as usize) as u64, len);
    assert!(download(&dev, &data).iter().all(|&v| v == POISON_F), "a refused launch wrote");
    let mut timestep = filled(&dev, shape.gx(), 7i32);
    let refused = k.undo_done_flag_and_reset_timestep.launch(
        dev.stream(),
        shape.one_more_block().cfg(),
        &mut done,
        &mut timestep,
        1,
    );
    assert_extent_refused(refused, "undo_done_flag_and_reset_timestep", "done", shape.gx() as u64 + 1, shape.gx());
    assert!(download(&dev, &done).iter().all(|&d| d == 1), "a refused launch wrote");
}

/// Fills a fresh graph struct: references `iota`, data poisoned, every other env done, time
/// steps 7, the log mask 1.
fn fill_graph(g: &mut Warpdrive) {
    let iota_f = |n: usize| (0..n).map(|i| i as f32).collect::<Vec<_>>();
    let iota_i = |n: usize| (0..n as i32).collect::<Vec<_>>();
    g.upload_ref_f2(&iota_f(Warpdrive::REF_F2_LEN)).unwrap();
    g.upload_ref_i2(&iota_i(Warpdrive::REF_I2_LEN)).unwrap();
    g.upload_ref_f3(&iota_f(Warpdrive::REF_F3_LEN)).unwrap();
    g.upload_ref_i3(&iota_i(Warpdrive::REF_I3_LEN)).unwrap();
    g.load_data_f2(&vec![POISON_F; Warpdrive::DATA_F2_LEN]).unwrap();
    g.load_data_i2(&vec![POISON_I; Warpdrive::DATA_I2_LEN]).unwrap();
    g.load_data_f3(&vec![POISON_F; Warpdrive::DATA_F3_LEN]).unwrap();
    g.load_data_i3(&vec![POISON_I; Warpdrive::DATA_I3_LEN]).unwrap();
    g.load_done(&done_every_other(Warpdrive::ENVS)).unwrap();
    g.load_timestep(&vec![7; Warpdrive::ENVS]).unwrap();
}

/// Every state buffer of the struct, as bits, for bit-for-bit comparison.
fn graph_state(g: &Warpdrive) -> Vec<Vec<u32>> {
    let f = |v: Vec<f32>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let i = |v: Vec<i32>| v.iter().map(|x| *x as u32).collect::<Vec<_>>();
    vec![
        f(g.download_data_f2().unwrap()),
        i(g.download_data_i2().unwrap()),
        f(g.download_data_f3().unwrap()),
        i(g.download_data_i3().unwrap()),
        i(g.download_done().unwrap()),
        i(g.download_timestep().unwrap()),
        i(g.download_log_mask().unwrap()),
    ]
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_reset_graph_matches_eager_and_resets_exactly_the_done_envs() {
    let dev = device();
    let mut eager = Warpdrive::new(&dev).unwrap();
    fill_graph(&mut eager);
    eager.run_eager().unwrap();
    let mut graph = Warpdrive::new(&dev).unwrap();
    fill_graph(&mut graph);
    graph.capture().unwrap();
    graph.replay().unwrap();
    assert_eq!(graph_state(&graph), graph_state(&eager), "graph replay and run_eager differ");

    let (envs, fd, ad) = (Warpdrive::ENVS, Warpdrive::FEATURE_DIM, Warpdrive::AGENT_DIM);
    let done = done_every_other(envs);
    let ref_f2: Vec<f32> = (0..Warpdrive::REF_F2_LEN).map(|i| i as f32).collect();
    let ref_i3: Vec<i32> = (0..Warpdrive::REF_I3_LEN as i32).collect();
    // The 2D nodes run one thread per feature (block 32 > feature_dim), the 3D ones one per agent.
    assert_reset("graph float 2d", &graph.download_data_f2().unwrap(), &ref_f2, POISON_F, &done, false, (fd, fd));
    let i3 = graph.download_data_i3().unwrap();
    assert_reset("graph int 3d", &i3, &ref_i3, POISON_I, &done, false, (ad * fd, ad * fd));
    assert!(graph.download_done().unwrap().iter().all(|&d| d == 0), "undo cleared every flag");
    let steps = graph.download_timestep().unwrap();
    assert!(steps.iter().enumerate().all(|(e, &t)| t == if done[e] > 0 { 0 } else { 7 }), "{steps:?}");
    assert!(graph.download_log_mask().unwrap().iter().all(|&m| m == 0));

    // force_reset patched into the instantiated graph: now every env is reset, done or not.
    graph.set_force_reset(1).unwrap();
    graph.replay().unwrap();
    let f2 = graph.download_data_f2().unwrap();
    assert_reset("graph float 2d forced", &f2, &ref_f2, POISON_F, &vec![0; envs], true, (fd, fd));
}
