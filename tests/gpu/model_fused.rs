//! `perception_fused` at the block shapes that take its two code paths: the weights preloaded
//! into registers (every warp holds at most one hidden unit and one output: `n_hid <= 32`,
//! `n_hid <= warps`, `13 <= warps`; `PerceptionFused` launches block 1024 at n_hid = 32) and the
//! strided loops (fewer warps). Both must give the same bits, for state sizes that leave units,
//! lanes and output warps idle in the preloaded path; `model_graphs.rs` checks the preloaded path
//! against the multi-node graph.

use kgraph::{Device, DeviceBuffer, LaunchConfig, MappedBuffer};
use kgraph_model::graphs::synthetic::BookStream;
use kgraph_model::model::{Kernels, N_FEAT, N_HORIZONS, N_PROJ, SNAP_LEN};

use super::common::device;
use super::model_util::{assert_all_finite, assert_bitwise_eq, down, kernels, up, weights, Lcg};

/// One fused step's inputs for `batch` rows of state size `n_hid`.
struct Problem {
    batch: usize,
    n_hid: usize,
    params: Vec<DeviceBuffer<f32>>,
    h0: Vec<f32>,
    snap: MappedBuffer<f32>,
    dt: MappedBuffer<f32>,
}

impl Problem {
    fn new(dev: &Device, batch: usize, n_hid: usize, seed: u64) -> Problem {
        let mut rng = Lcg::new(seed);
        let host = [
            weights(&mut rng, n_hid, N_FEAT + n_hid, 1.5),
            rng.vec(n_hid, -0.5, 0.5),
            weights(&mut rng, n_hid, N_FEAT + n_hid, 1.5),
            rng.vec(n_hid, -0.5, 0.5),
            weights(&mut rng, N_HORIZONS, n_hid, 1.5),
            rng.vec(N_HORIZONS, -0.5, 0.5),
            weights(&mut rng, N_PROJ, n_hid, 1.5),
            rng.vec(N_PROJ, -0.5, 0.5),
        ];
        let params = host.iter().map(|v| up(dev, v)).collect();
        let h0 = rng.vec(batch * n_hid, -1.0, 1.0);
        let mut snap = MappedBuffer::<f32>::new(dev, batch * SNAP_LEN).unwrap();
        let mut dt = MappedBuffer::<f32>::new(dev, batch).unwrap();
        let mut books = BookStream::new(seed);
        for (b, row) in snap.as_mut_slice().unwrap().chunks_exact_mut(SNAP_LEN).enumerate() {
            let tick = books.next_into(row.try_into().unwrap());
            dt.as_mut_slice().unwrap()[b] = tick.dt;
        }
        Problem { batch, n_hid, params, h0, snap, dt }
    }

    /// `(probs, y, new h)` of one launch with `threads` per block.
    fn run(&self, dev: &Device, k: &Kernels, threads: u32) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let (p, batch) = (&self.params, self.batch);
        let mut h = up(dev, &self.h0);
        let mut probs = MappedBuffer::<f32>::new(dev, batch * N_HORIZONS).unwrap();
        let mut y = MappedBuffer::<f32>::new(dev, batch * N_PROJ).unwrap();
        let cfg = LaunchConfig { grid_dim: (batch as u32, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 };
        k.perception_fused
            .launch(
                dev.stream(),
                cfg,
                self.snap.device_ptr(),
                self.dt.device_ptr(),
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
                self.n_hid as i32,
                probs.device_ptr_mut(),
                y.device_ptr_mut(),
            )
            .unwrap_or_else(|e| panic!("n_hid {}, block {threads}: {e}", self.n_hid));
        dev.synchronize().unwrap();
        (probs.to_vec_volatile(), y.to_vec_volatile(), down(dev, &h))
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn perception_fused_gives_the_same_bits_with_preloaded_weights_and_with_strided_loops() {
    let dev = device();
    let k = kernels(&dev);
    // n_hid < 13 leaves output warps without a unit; n_hid < 32 leaves lanes without a state
    // element; block 512 (16 warps) takes the preloaded path only up to n_hid = 16.
    for (i, n_hid) in [1usize, 5, 12, 13, 16, 20, 31, 32].into_iter().enumerate() {
        let problem = Problem::new(&dev, 3, n_hid, 41 + i as u64);
        let (probs, y, h) = problem.run(&dev, &k, 1024);
        let what = |name: &str, threads: u32| format!("n_hid {n_hid}: {name}, block {threads} vs 1024");
        assert_all_finite(&what("probs", 1024), &probs);
        assert_all_finite(&what("y", 1024), &y);
        assert!(probs.iter().all(|p| (0.0..=1.0).contains(p)), "n_hid {n_hid}: probs {probs:?}");
        assert_ne!(h, problem.h0, "n_hid {n_hid}: the state moved (dt > 0)");
        // 512: preloaded up to n_hid 16, strided above; 256, 64, 32: strided (fewer than 13 warps).
        for threads in [512, 256, 64, 32] {
            let (p2, y2, h2) = problem.run(&dev, &k, threads);
            assert_bitwise_eq(&what("probs", threads), &p2, &probs);
            assert_bitwise_eq(&what("y", threads), &y2, &y);
            assert_bitwise_eq(&what("h", threads), &h2, &h);
        }
    }
}
