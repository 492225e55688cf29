//! A tanh MLP policy/value network (`n_in → n_hid → n_hid → n_out`, 64 → 512 → 512 → 8 at batch
//! 4096) trained in one CUDA graph: cuBLAS GEMM nodes for the matrix products and the kernels of
//! `examples/mlp/kernels/mlp.cu` for the rest (bias + tanh, the loss, the tanh backward with the
//! bias gradients as fixed-order column sums, the AdamW schedule), with `kernels/adamw.cu`'s
//! six-tensor AdamW declared again here so one module holds every kernel of the spec.
//!
//! The spec is `examples/mlp/mlp_train.toml` ([`MlpTrain`]; [`MlpTrainSmall`] is the same spec at
//! a small size for the finite-difference checks), driven by `cargo run --release --example mlp`.
//! The regression target is [`TargetLaw`], an analytic function of the inputs, so the loss can
//! fall; [`MlpWeights`] is the initialisation (uniform ±1/√fan_in weights, zero biases).

/// The kernels' declarations (checked against `examples/mlp/kernels/mlp.cu` and
/// `kernels/adamw.cu` at compile time). Re-exported by [`crate::mlp`].
#[kgraph::kernels]
pub mod kernels {
    /// `h = tanh(h + bias[c])` in place over a row-major `[rows x cols]` matrix.
    /// Launch: [`super::launch::bias_tanh`].
    #[kernel("mlp.cu", unsafe(extents))]
    pub fn bias_tanh(bias: &[f32; cols], rows: i32, cols: i32, h: &mut [f32; rows * cols]);

    /// `out = z + bias[c]`; `loss[0] = 0.5 Σ (out − targets)² / rows` and
    /// `g = (out − targets) / rows` (both overwritten). One block, sums in f64 in a fixed order.
    /// Launch: [`super::launch::mse_loss`]. (Not `target`: that name breaks the generated code.)
    #[kernel("mlp.cu", unsafe(extents))]
    pub fn mse_loss(
        z: &[f32; rows * cols],
        bias: &[f32; cols],
        targets: &[f32; rows * cols],
        rows: i32,
        cols: i32,
        loss: &mut [f32; 1],
        g: &mut [f32; rows * cols],
    );

    /// `g = g (1 − h²)` in place (dL/dh to dL/dz through `h = tanh(z)`) and
    /// `partial[k cols + c]` = the sum of the new `g` over chunk `k`'s rows in column `c`
    /// (chunk `k`: rows `[k ⌈rows/chunks⌉, (k + 1) ⌈rows/chunks⌉)`).
    /// Launch: [`super::launch::col_partials`].
    #[kernel("mlp.cu", unsafe(extents))]
    pub fn tanh_backward(
        h: &[f32; rows * cols],
        rows: i32,
        cols: i32,
        chunks: i32,
        g: &mut [f32; rows * cols],
        partial: &mut [f32; chunks * cols],
    );

    /// `partial[k cols + c]` = the sum of `g` over chunk `k`'s rows in column `c` (as
    /// [`TanhBackward`], `g` only read). Launch: [`super::launch::col_partials`].
    #[kernel("mlp.cu", unsafe(extents))]
    pub fn col_partial_sums(
        g: &[f32; rows * cols],
        rows: i32,
        cols: i32,
        chunks: i32,
        partial: &mut [f32; chunks * cols],
    );

    /// `db[c] = partial[c] + partial[cols + c] + …` over the `chunks` rows of `partial`, in
    /// order (overwritten). Launch: [`super::launch::col_sum_finish`].
    #[kernel("mlp.cu", unsafe(extents))]
    pub fn col_sum_finish(partial: &[f32; chunks * cols], chunks: i32, cols: i32, db: &mut [f32; cols]);

    /// `step[0] += 1` (saturating), then `schedule = [lr, 1 − beta1^t, 1 − beta2^t]` with the
    /// new `t`. Launch: grid 1, block 32.
    #[kernel("mlp.cu", unsafe(extents))]
    pub fn adamw_schedule(lr: f32, beta1: f32, beta2: f32, step: &mut [i32; 1], schedule: &mut [f32; 3]);

    /// AdamW over six tensors in one launch, `schedule = [lr, 1 − β1^t, 1 − β2^t]` read from
    /// device memory (`kernels/adamw.cu`; `crate::model::AdamwScheduledGroup` is the same
    /// kernel). Grid `Σ ⌈n_i / 1024⌉`, block 256.
    #[kernel("adamw.cu", unsafe(extents))]
    pub fn adamw_scheduled_group(
        schedule: &[f32; 3],
        beta1: f32,
        beta2: f32,
        eps: f32,
        weight_decay: f32,
        grad0: &[f32; n0],
        n0: i32,
        param0: &mut [f32; n0],
        m0: &mut [f32; n0],
        v0: &mut [f32; n0],
        grad1: &[f32; n1],
        n1: i32,
        param1: &mut [f32; n1],
        m1: &mut [f32; n1],
        v1: &mut [f32; n1],
        grad2: &[f32; n2],
        n2: i32,
        param2: &mut [f32; n2],
        m2: &mut [f32; n2],
        v2: &mut [f32; n2],
        grad3: &[f32; n3],
        n3: i32,
        param3: &mut [f32; n3],
        m3: &mut [f32; n3],
        v3: &mut [f32; n3],
        grad4: &[f32; n4],
        n4: i32,
        param4: &mut [f32; n4],
        m4: &mut [f32; n4],
        v4: &mut [f32; n4],
        grad5: &[f32; n5],
        n5: i32,
        param5: &mut [f32; n5],
        m5: &mut [f32; n5],
        v5: &mut [f32; n5],
    );
}

pub use kernels::*;

kgraph::graph!("examples/mlp/mlp_train.toml", name = MlpTrain);
// The same step at a small size: the finite-difference checks run its forward many times.
kgraph::graph!("examples/mlp/mlp_train.toml", name = MlpTrainSmall, dims = { batch = 96, n_hid = 48, chunks = 5 });

// The spec's launch shapes assume these (bias_tanh's grid.y is the batch).
const _: () = {
    assert!(MlpTrain::BATCH <= 65535 && MlpTrainSmall::BATCH <= 65535);
    assert!(MlpTrain::N_IN == MlpTrainSmall::N_IN && MlpTrain::N_OUT == MlpTrainSmall::N_OUT);
};

/// Launch configurations for the kernels when launched by hand (the spec writes the same).
pub mod launch {
    use kgraph::LaunchConfig;

    /// Block size of every kernel but the loss.
    pub const BLOCK: u32 = 256;
    /// Columns per block of the column sums.
    pub const TILE: usize = 32;

    fn cfg(grid: (usize, usize), block: u32) -> LaunchConfig {
        let dim = |n: usize| u32::try_from(n.max(1)).unwrap_or(u32::MAX);
        LaunchConfig { grid_dim: (dim(grid.0), dim(grid.1), 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 }
    }

    /// [`super::BiasTanh`]: block 256, grid `(⌈cols / 256⌉, min(rows, 65535))`.
    pub fn bias_tanh(rows: usize, cols: usize) -> LaunchConfig {
        cfg((cols.div_ceil(BLOCK as usize), rows.min(65535)), BLOCK)
    }

    /// [`super::MseLoss`]: one block of 1024 threads.
    pub fn mse_loss() -> LaunchConfig {
        cfg((1, 1), 1024)
    }

    /// [`super::TanhBackward`] and [`super::ColPartialSums`]: block 256, grid
    /// `(⌈cols / 32⌉, chunks)`.
    pub fn col_partials(cols: usize, chunks: usize) -> LaunchConfig {
        cfg((cols.div_ceil(TILE), chunks.min(65535)), BLOCK)
    }

    /// [`super::ColSumFinish`]: block 256, grid `⌈cols / 256⌉`.
    pub fn col_sum_finish(cols: usize) -> LaunchConfig {
        cfg((cols.div_ceil(BLOCK as usize), 1), BLOCK)
    }
}

/// The regression target: output `j` of sample `x` is `sin(2 ⟨u_j, x⟩)`, with `u_j`'s entries
/// uniform in `±√(3 / n_in)` (so `⟨u_j, x⟩` has variance 1/3 for `x` uniform in `[-1, 1]^n_in`).
/// Output 0 plays the value, outputs 1.. the policy's logits. A smooth function of the inputs
/// that the network can fit: the loss falls from about 2 towards 0.
#[derive(Debug, Clone)]
pub struct TargetLaw {
    n_in: usize,
    n_out: usize,
    u: Vec<f64>,
}

impl TargetLaw {
    /// The law for `n_in` inputs and `n_out` outputs, its directions drawn from `seed`.
    pub fn new(n_in: usize, n_out: usize, seed: u64) -> Self {
        let mut rng = kgraph::rng::SplitMix64::new(seed);
        let bound = (3.0 / n_in as f64).sqrt();
        let u = (0..n_out * n_in).map(|_| bound * (2.0 * rng.unit() - 1.0)).collect();
        TargetLaw { n_in, n_out, u }
    }

    /// `batch` samples drawn from `seed`: inputs `[batch x n_in]` uniform in `[-1, 1]` and their
    /// targets `[batch x n_out]`.
    pub fn batch(&self, batch: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
        let mut rng = kgraph::rng::SplitMix64::new(seed);
        let x: Vec<f32> = (0..batch * self.n_in).map(|_| (2.0 * rng.unit() - 1.0) as f32).collect();
        let mut target = Vec::with_capacity(batch * self.n_out);
        for row in x.chunks(self.n_in) {
            for u in self.u.chunks(self.n_in) {
                let dot: f64 = u.iter().zip(row).map(|(&u, &x)| u * x as f64).sum();
                target.push((2.0 * dot).sin() as f32);
            }
        }
        (x, target)
    }
}

/// The network's parameters, host side, row-major like the spec (`w [out x in]`).
#[derive(Debug, Clone, PartialEq)]
pub struct MlpWeights {
    pub w1: Vec<f32>,
    pub b1: Vec<f32>,
    pub w2: Vec<f32>,
    pub b2: Vec<f32>,
    pub w3: Vec<f32>,
    pub b3: Vec<f32>,
}

impl MlpWeights {
    /// Weights uniform in `±1/√fan_in` (torch.nn.Linear's law), biases zero, drawn from `seed`.
    pub fn init(n_in: usize, n_hid: usize, n_out: usize, seed: u64) -> Self {
        let mut rng = kgraph::rng::SplitMix64::new(seed);
        let mut uniform = |n: usize, fan_in: usize| -> Vec<f32> {
            let bound = 1.0 / (fan_in as f64).sqrt();
            (0..n).map(|_| (bound * (2.0 * rng.unit() - 1.0)) as f32).collect()
        };
        MlpWeights {
            w1: uniform(n_hid * n_in, n_in),
            b1: vec![0.0; n_hid],
            w2: uniform(n_hid * n_hid, n_hid),
            b2: vec![0.0; n_hid],
            w3: uniform(n_out * n_hid, n_hid),
            b3: vec![0.0; n_out],
        }
    }
}

macro_rules! train_graph_methods {
    ($graph:ident) => {
        impl $graph {
            /// Loads `w`, zeroes the AdamW moments and the step counter: training starts over.
            pub fn start(&mut self, w: &MlpWeights) -> kgraph::Result<()> {
                self.load_w1(&w.w1)?;
                self.load_b1(&w.b1)?;
                self.load_w2(&w.w2)?;
                self.load_b2(&w.b2)?;
                self.load_w3(&w.w3)?;
                self.load_b3(&w.b3)?;
                let zeros = |n: usize| vec![0.0f32; n];
                self.load_m_w1(&zeros(Self::W1_LEN))?;
                self.load_v_w1(&zeros(Self::W1_LEN))?;
                self.load_m_b1(&zeros(Self::B1_LEN))?;
                self.load_v_b1(&zeros(Self::B1_LEN))?;
                self.load_m_w2(&zeros(Self::W2_LEN))?;
                self.load_v_w2(&zeros(Self::W2_LEN))?;
                self.load_m_b2(&zeros(Self::B2_LEN))?;
                self.load_v_b2(&zeros(Self::B2_LEN))?;
                self.load_m_w3(&zeros(Self::W3_LEN))?;
                self.load_v_w3(&zeros(Self::W3_LEN))?;
                self.load_m_b3(&zeros(Self::B3_LEN))?;
                self.load_v_b3(&zeros(Self::B3_LEN))?;
                self.load_step(&[0])
            }

            /// The current parameters.
            pub fn weights(&self) -> kgraph::Result<MlpWeights> {
                Ok(MlpWeights {
                    w1: self.download_w1()?,
                    b1: self.download_b1()?,
                    w2: self.download_w2()?,
                    b2: self.download_b2()?,
                    w3: self.download_w3()?,
                    b3: self.download_b3()?,
                })
            }

            /// Fresh weights of this graph's sizes (see [`MlpWeights::init`]).
            pub fn init_weights(seed: u64) -> MlpWeights {
                MlpWeights::init(Self::N_IN, Self::N_HID, Self::N_OUT, seed)
            }
        }
    };
}

train_graph_methods!(MlpTrain);
train_graph_methods!(MlpTrainSmall);

#[cfg(test)]
mod tests {
    use super::MlpTrain;

    /// `reach[a][b]`: a path of dependency edges leads from node `a` to node `b`.
    fn reach() -> Vec<Vec<bool>> {
        let n = MlpTrain::NODES.len();
        let mut reach = vec![vec![false; n]; n];
        for &(a, b) in MlpTrain::EDGES {
            reach[a][b] = true;
        }
        for k in 0..n {
            for a in 0..n {
                for b in 0..n {
                    reach[a][b] |= reach[a][k] && reach[k][b];
                }
            }
        }
        reach
    }

    fn node(name: &str) -> usize {
        MlpTrain::NODES.iter().position(|&n| n == name).unwrap_or_else(|| panic!("no node {name}"))
    }

    /// The dataflow the spec's comment draws: the update waits for every gradient and for every
    /// GEMM that reads a weight it overwrites; the two branches after the loss run in parallel.
    #[test]
    fn the_step_graph_orders_what_it_must_and_nothing_more() {
        let reach = reach();
        let before = |a: &str, b: &str| reach[node(a)][node(b)];
        for n in ["fc1", "fc2", "fc3", "mse", "db3", "dw3", "dh2", "db2", "dw2", "dh1", "db1", "dw1", "schedule"] {
            assert!(before(n, "adamw"), "{n} must precede adamw");
        }
        // Reads of w2 and w3 in the backward come before the update writes them.
        assert!(before("dh1", "adamw") && before("dh2", "adamw"));
        // The forward's chain, and the backward through each activation.
        assert!(before("fc1", "act1") && before("act1", "fc2") && before("act2", "fc3") && before("fc3", "mse"));
        assert!(before("dh2", "act2_backward") && before("act2_backward", "dw2") && before("act2_backward", "dh1"));
        assert!(before("dh1", "act1_backward") && before("act1_backward", "dw1"));
        // Independent work is not serialised: the schedule, the weight gradients and the input
        // gradients of a layer, the output layer's bias gradient.
        for (a, b) in [("schedule", "fc1"), ("dw3", "dh2"), ("dw2", "dh1"), ("db3", "dh2"), ("db2", "dw2")] {
            assert!(!before(a, b) && !before(b, a), "{a} and {b} are independent");
        }
    }
}
