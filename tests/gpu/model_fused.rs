//! `perception_fused` at the block shapes that take its two code paths: the weights preloaded
//! into registers (every warp holds at most one hidden unit and one output: block 1024 at
//! n_hid = 32, as `PerceptionFused` launches it) and the strided loops (fewer warps than units).
//! Both must give the same bits; `model_graphs.rs` checks the first against the multi-node graph.

use kgraph::{LaunchConfig, MappedBuffer};
use kgraph_model::graphs::synthetic::BookStream;
use kgraph_model::model::{N_FEAT, SNAP_LEN};

use super::common::device;
use super::model_util::{assert_all_finite, assert_bitwise_eq, down, kernels, up, weights, Lcg};

const N_HORIZONS: usize = 5;
const N_PROJ: usize = 8;

#[test]
#[ignore = "needs a CUDA GPU"]
fn perception_fused_gives_the_same_bits_with_preloaded_weights_and_with_strided_loops() {
    let dev = device();
    let k = kernels(&dev);
    let (batch, n_hid) = (3usize, 32usize);
    let mut rng = Lcg::new(41);
    let params = [
        weights(&mut rng, n_hid, N_FEAT + n_hid, 1.5),
        rng.vec(n_hid, -0.5, 0.5),
        weights(&mut rng, n_hid, N_FEAT + n_hid, 1.5),
        rng.vec(n_hid, -0.5, 0.5),
        weights(&mut rng, N_HORIZONS, n_hid, 1.5),
        rng.vec(N_HORIZONS, -0.5, 0.5),
        weights(&mut rng, N_PROJ, n_hid, 1.5),
        rng.vec(N_PROJ, -0.5, 0.5),
    ];
    let p: Vec<_> = params.iter().map(|v| up(&dev, v)).collect();
    let h0 = rng.vec(batch * n_hid, -1.0, 1.0);
    let mut snap = MappedBuffer::<f32>::new(&dev, batch * SNAP_LEN).unwrap();
    let mut dt = MappedBuffer::<f32>::new(&dev, batch).unwrap();
    let mut books = BookStream::new(5);
    {
        let rows = snap.as_mut_slice().unwrap();
        for (b, row) in rows.chunks_exact_mut(SNAP_LEN).enumerate() {
            let row: &mut [f32; SNAP_LEN] = row.try_into().unwrap();
            let tick = books.next_into(row);
            dt.as_mut_slice().unwrap()[b] = tick.dt;
        }
    }
    // One run per block shape: 1024 threads (32 warps: preloaded), 256 and 64 (8 and 2 warps:
    // strided), 32 (one warp doing every level).
    let run = |threads: u32| {
        let mut h = up(&dev, &h0);
        let mut probs = MappedBuffer::<f32>::new(&dev, batch * N_HORIZONS).unwrap();
        let mut y = MappedBuffer::<f32>::new(&dev, batch * N_PROJ).unwrap();
        let cfg = LaunchConfig { grid_dim: (batch as u32, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 };
        k.perception_fused
            .launch(
                dev.stream(),
                cfg,
                snap.device_ptr(),
                dt.device_ptr(),
                &mut h,
                &p[0],
                &p[1],
                &p[2],
                &p[3],
                &p[4],
                &p[5],
                &p[6],
                &p[7],
                batch as i32,
                n_hid as i32,
                probs.device_ptr_mut(),
                y.device_ptr_mut(),
            )
            .unwrap_or_else(|e| panic!("block {threads}: {e}"));
        dev.synchronize().unwrap();
        (probs.to_vec_volatile(), y.to_vec_volatile(), down(&dev, &h))
    };
    let (probs, y, h) = run(1024);
    assert_all_finite("probs", &probs);
    assert_all_finite("y", &y);
    assert!(probs.iter().all(|p| (0.0..=1.0).contains(p)), "probs {probs:?}");
    assert_ne!(h, h0, "the state moved (dt > 0)");
    for threads in [256, 64, 32] {
        let (p2, y2, h2) = run(threads);
        assert_bitwise_eq(&format!("probs, block {threads} vs 1024"), &p2, &probs);
        assert_bitwise_eq(&format!("y, block {threads} vs 1024"), &y2, &y);
        assert_bitwise_eq(&format!("h, block {threads} vs 1024"), &h2, &h);
    }
}
