//! PPO (proximal policy optimisation) kernels for discrete actions: a small tanh MLP over a
//! parameter arena, a softmax policy head, the clipped surrogate loss with value loss and
//! entropy bonus (forward and backward), generalised advantage estimation, advantage
//! normalisation and the minibatch bookkeeping of `graphs/ppo_update.toml`
//! ([`crate::graphs::PpoUpdate`]).
//!
//! The kernels live in `kernels/ppo.cu` (its header gives the math, the layouts and the launch
//! shapes); [`kernels`] declares them, with AdamW (`kernels/adamw.cu`) declared again here so
//! one module holds every kernel the update graph uses. Everything is re-exported:
//! `kgraph_model::ppo::Kernels::load(&device)` loads them, [`launch`] has the configurations.
//!
//! # Conventions (where they differ from [`crate::model`])
//! - **Gradients are overwritten**, not accumulated: in the PPO update every gradient has
//!   exactly one producer (actor and critic are separate networks), so the graph needs no
//!   zeroing nodes.
//! - **Parameter arena**: all weights and biases live in one flat buffer; layer `l` with `n_in`
//!   inputs and `n_out` outputs at offset `w_off` holds `W [n_out, n_in]` then `b [n_out]`
//!   ([`Layer`]); its gradient sits at the same offsets of the gradient arena, and one AdamW
//!   launch updates a whole arena. [`MlpLayout`] is the layout of the actor's and the critic's
//!   arenas in the update graph.
//! - Every reduction runs in a fixed order (no atomics); every kernel begins with the PDL
//!   trigger + wait, so the graph launches them with programmatic dependent launch.

/// The kernels' declarations (checked against `kernels/ppo.cu` and `kernels/adamw.cu` at
/// compile time). Everything here is re-exported by [`crate::ppo`].
#[kgraph::kernels]
pub mod kernels {
    /// `y = act(W x + b)`, `W`, `b` at `params[w_off..]`; `x [batch, n_in]`, `y [batch, n_out]`;
    /// `act` = 1 ([`super::ACT_TANH`]) for tanh, anything else identity.
    /// Launch: [`super::launch::linear_forward`].
    #[kernel("ppo.cu", unsafe(extents))]
    pub fn ppo_linear_forward(
        params: &[f32; w_off + n_out * (n_in + 1)],
        x: &[f32; batch * n_in],
        w_off: i32,
        batch: i32,
        n_in: i32,
        n_out: i32,
        act: i32,
        y: &mut [f32; batch * n_out],
    );

    /// Backward of [`PpoLinearForward`] from `g_y` (gradient w.r.t. its output `y`) and the
    /// forward's `y`: `g_x [batch, n_in]` and the layer's `W`, `b` gradients at
    /// `grads[w_off..]` (all overwritten). Launch: [`super::launch::linear_backward`].
    #[kernel("ppo.cu", unsafe(extents))]
    pub fn ppo_linear_backward(
        params: &[f32; w_off + n_out * (n_in + 1)],
        x: &[f32; batch * n_in],
        y: &[f32; batch * n_out],
        g_y: &[f32; batch * n_out],
        w_off: i32,
        batch: i32,
        n_in: i32,
        n_out: i32,
        act: i32,
        g_x: &mut [f32; batch * n_in],
        grads: &mut [f32; w_off + n_out * (n_in + 1)],
    );

    /// [`PpoLinearBackward`] without `g_x` (a first layer). Launch:
    /// [`super::launch::linear_backward_params`].
    #[kernel("ppo.cu", unsafe(extents))]
    pub fn ppo_linear_backward_params(
        x: &[f32; batch * n_in],
        y: &[f32; batch * n_out],
        g_y: &[f32; batch * n_out],
        w_off: i32,
        batch: i32,
        n_in: i32,
        n_out: i32,
        act: i32,
        grads: &mut [f32; w_off + n_out * (n_in + 1)],
    );

    /// Softmax policy head per row of `logits [batch, n_act]`: `log_probs`, `probs`
    /// `[batch, n_act]` and `entropy [batch]`. Launch: [`super::launch::per_row`].
    #[kernel("ppo.cu", unsafe(extents))]
    pub fn ppo_policy_head(
        logits: &[f32; batch * n_act],
        batch: i32,
        n_act: i32,
        log_probs: &mut [f32; batch * n_act],
        probs: &mut [f32; batch * n_act],
        entropy: &mut [f32; batch],
    );

    /// PPO loss forward: per-sample `sample_loss [batch]` and the batch means
    /// `stats = [loss, policy, value, entropy, approx_kl, clip_fraction, ratio, advantage]`
    /// ([`super::STAT_NAMES`]). One block. Launch: [`super::launch::one_block`].
    #[kernel("ppo.cu", unsafe(extents))]
    pub fn ppo_loss_forward(
        log_probs: &[f32; batch * n_act],
        entropy: &[f32; batch],
        values: &[f32; batch],
        actions: &[i32; batch],
        old_log_probs: &[f32; batch],
        advantages: &[f32; batch],
        returns: &[f32; batch],
        clip_eps: f32,
        vf_coef: f32,
        ent_coef: f32,
        batch: i32,
        n_act: i32,
        sample_loss: &mut [f32; batch],
        stats: &mut [f32; 8],
    );

    /// PPO loss backward: the gradient of the batch-mean loss w.r.t. the logits
    /// `g_logits [batch, n_act]` and the values `g_values [batch]` (overwritten).
    /// Launch: [`super::launch::per_row`].
    #[kernel("ppo.cu", unsafe(extents))]
    pub fn ppo_loss_backward(
        log_probs: &[f32; batch * n_act],
        probs: &[f32; batch * n_act],
        entropy: &[f32; batch],
        values: &[f32; batch],
        actions: &[i32; batch],
        old_log_probs: &[f32; batch],
        advantages: &[f32; batch],
        returns: &[f32; batch],
        clip_eps: f32,
        vf_coef: f32,
        ent_coef: f32,
        batch: i32,
        n_act: i32,
        g_logits: &mut [f32; batch * n_act],
        g_values: &mut [f32; batch],
    );

    /// The update graph's fused node, one warp per row: the actor's last layer (`logits`, identity,
    /// at `actor[a_off..]`), the critic's (`values`, at `critic[c_off..]`), the policy head
    /// (`log_probs`, `probs`, `entropy`) and the loss backward (`g_logits`, `g_values`): bit for
    /// bit [`PpoLinearForward`] twice, [`PpoPolicyHead`] and [`PpoLossBackward`].
    /// `1 <= n_act <= 31`, otherwise it writes nothing. Launch: [`super::launch::per_row`].
    #[kernel("ppo.cu", unsafe(extents))]
    pub fn ppo_heads_loss_backward(
        actor: &[f32; a_off + n_act * (n_hid + 1)],
        a_h1: &[f32; batch * n_hid],
        a_off: i32,
        critic: &[f32; c_off + n_hid + 1],
        c_h1: &[f32; batch * n_hid],
        c_off: i32,
        actions: &[i32; batch],
        old_log_probs: &[f32; batch],
        advantages: &[f32; batch],
        returns: &[f32; batch],
        clip_eps: f32,
        vf_coef: f32,
        ent_coef: f32,
        batch: i32,
        n_hid: i32,
        n_act: i32,
        logits: &mut [f32; batch * n_act],
        log_probs: &mut [f32; batch * n_act],
        probs: &mut [f32; batch * n_act],
        entropy: &mut [f32; batch],
        values: &mut [f32; batch],
        g_logits: &mut [f32; batch * n_act],
        g_values: &mut [f32; batch],
    );

    /// Generalised advantage estimation over a time-major rollout: `rewards`, `dones`,
    /// `advantages`, `returns [t_steps, n_envs]`, `values [t_steps + 1, n_envs]` (the last row
    /// bootstraps). Launch: [`super::launch::gae`].
    #[kernel("ppo.cu", unsafe(extents))]
    pub fn ppo_gae(
        rewards: &[f32; t_steps * n_envs],
        values: &[f32; (t_steps + 1) * n_envs],
        dones: &[f32; t_steps * n_envs],
        gamma: f32,
        lambda: f32,
        t_steps: i32,
        n_envs: i32,
        advantages: &mut [f32; t_steps * n_envs],
        returns: &mut [f32; t_steps * n_envs],
    );

    /// `out = (adv − mean) / (std + eps)` over `n` values (unbiased std). One block.
    /// Launch: [`super::launch::one_block`].
    #[kernel("ppo.cu", unsafe(extents))]
    pub fn ppo_normalize_advantages(adv: &[f32; n], n: i32, eps: f32, out: &mut [f32; n]);

    /// Minibatch `mb_sel[0]` of a rollout of `n` rows: rows `perm[(k mb_size + i) mod n_perm]`.
    /// Launch: [`super::launch::gather_minibatch`].
    #[kernel("ppo.cu", unsafe(extents))]
    pub fn ppo_gather_minibatch(
        perm: &[i32; n_perm],
        mb_sel: &[i32; 1],
        obs: &[f32; n * n_obs],
        actions: &[i32; n],
        old_log_probs: &[f32; n],
        advantages: &[f32; n],
        returns: &[f32; n],
        n: i32,
        n_obs: i32,
        n_perm: i32,
        mb_size: i32,
        mb_obs: &mut [f32; mb_size * n_obs],
        mb_actions: &mut [i32; mb_size],
        mb_old_log_probs: &mut [f32; mb_size],
        mb_advantages: &mut [f32; mb_size],
        mb_returns: &mut [f32; mb_size],
    );

    /// `counters = [minibatch k, AdamW step t]`: `mb_sel[0] = k`, both advanced, and
    /// `schedule = [lr, 1 − beta1^t, 1 − beta2^t]` for the new `t`. Launch:
    /// [`super::launch::single_thread`].
    #[kernel("ppo.cu", unsafe(extents))]
    pub fn ppo_minibatch_begin(
        lr: f32,
        beta1: f32,
        beta2: f32,
        counters: &mut [i32; 2],
        mb_sel: &mut [i32; 1],
        schedule: &mut [f32; 3],
    );

    /// AdamW (`kernels/adamw.cu`, as [`crate::model::AdamwScheduled`]) over the whole arena,
    /// reading `schedule = [lr, 1 − beta1^t, 1 − beta2^t]` from device memory.
    /// Launch: [`crate::model::launch::adamw`].
    #[kernel("adamw.cu", unsafe(extents))]
    pub fn adamw_scheduled(
        grad: &[f32; n],
        schedule: &[f32; 3],
        beta1: f32,
        beta2: f32,
        eps: f32,
        weight_decay: f32,
        n: i32,
        param: &mut [f32; n],
        m: &mut [f32; n],
        v: &mut [f32; n],
    );
}

pub use kernels::*;

/// The `act` argument of the linear kernels for tanh (`#define PPO_ACT_TANH` in `ppo.cu`).
pub const ACT_TANH: i32 = 1;
/// The `act` argument of the linear kernels for the identity.
pub const ACT_IDENTITY: i32 = 0;
/// What each entry of [`PpoLossForward`]'s `stats` is the batch mean of.
pub const STAT_NAMES: [&str; 8] =
    ["loss", "policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction", "ratio", "advantage"];

/// One linear layer of a parameter arena: `W [n_out, n_in]` at `offset`, then `b [n_out]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layer {
    /// Offset of `W` in the arena (the `w_off` argument).
    pub offset: usize,
    /// Inputs.
    pub n_in: usize,
    /// Outputs.
    pub n_out: usize,
}

impl Layer {
    /// Floats the layer owns: `n_out * (n_in + 1)`.
    pub const fn len(&self) -> usize {
        self.n_out * (self.n_in + 1)
    }

    /// True for a layer with no outputs.
    pub const fn is_empty(&self) -> bool {
        self.n_out == 0
    }

    /// The offset just past the layer.
    pub const fn end(&self) -> usize {
        self.offset + self.len()
    }

    /// The offset of the bias in the arena.
    pub const fn bias_offset(&self) -> usize {
        self.offset + self.n_out * self.n_in
    }

    /// `offset` as the kernels' `w_off` argument.
    pub fn w_off(&self) -> i32 {
        i32::try_from(self.offset).expect("arena offsets stay below 2^31")
    }
}

/// A tanh MLP with two hidden layers in one parameter arena: `n_in → n_hid → n_hid → n_out`,
/// layers 0, 1 (tanh) and 2 (identity) in this order. The PPO update has two of them, as in
/// CleanRL's `ppo.py` (the usual PPO baseline for discrete actions): the actor
/// (`n_out = n_act` logits) and the critic (`n_out = 1`, the value), each in its own arena so
/// their backward passes and AdamW updates are independent branches of the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MlpLayout {
    /// The three layers in arena order.
    pub layers: [Layer; 3],
}

impl MlpLayout {
    /// The layout of an `n_in → n_hid → n_hid → n_out` MLP.
    pub const fn new(n_in: usize, n_hid: usize, n_out: usize) -> Self {
        let l0 = Layer { offset: 0, n_in, n_out: n_hid };
        let l1 = Layer { offset: l0.end(), n_in: n_hid, n_out: n_hid };
        let l2 = Layer { offset: l1.end(), n_in: n_hid, n_out };
        MlpLayout { layers: [l0, l1, l2] }
    }

    /// Floats of the whole arena.
    pub const fn len(&self) -> usize {
        self.layers[2].end()
    }

    /// True for an empty arena (never, for a layout from [`MlpLayout::new`]).
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Deterministic initial parameters: the hidden layers uniform in `±1/√n_in`, the output
    /// layer in `±out_gain/√n_in`, biases zero. The actor uses `out_gain = 0.01` (the policy
    /// starts near uniform, as CleanRL's orthogonal init with gain 0.01 does), the critic 1.
    pub fn init(&self, seed: u64, out_gain: f64) -> Vec<f32> {
        let mut rng = kgraph::rng::SplitMix64::new(seed);
        let mut params = vec![0.0f32; self.len()];
        for (l, layer) in self.layers.iter().enumerate() {
            let gain = if l == 2 { out_gain } else { 1.0 };
            let a = gain / (layer.n_in.max(1) as f64).sqrt();
            for w in &mut params[layer.offset..layer.bias_offset()] {
                *w = ((2.0 * rng.unit() - 1.0) * a) as f32;
            }
        }
        params
    }
}

/// Launch configurations of the PPO kernels (the shapes of `kernels/ppo.cu`'s header); every
/// grid has at least one block.
pub mod launch {
    use kgraph::LaunchConfig;

    /// Block size of the thread-per-item kernels.
    pub const ITEM_BLOCK: u32 = 256;
    /// Block size of the warp-per-row kernels (4 warps).
    pub const ROW_BLOCK: u32 = 128;
    /// Block size of the single-block reductions.
    pub const REDUCE_BLOCK: u32 = 256;

    fn grid(blocks: usize, block: u32) -> LaunchConfig {
        let blocks = u32::try_from(blocks.max(1)).unwrap_or(u32::MAX);
        LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 }
    }

    fn items(n: usize) -> usize {
        n.div_ceil(ITEM_BLOCK as usize)
    }

    /// One thread per output: block 256, grid `ceil(batch * n_out / 256)`.
    pub fn linear_forward(batch: usize, n_out: usize) -> LaunchConfig {
        grid(items(batch * n_out), ITEM_BLOCK)
    }

    /// Weight-gradient outputs per block of the linear backward (one per lane; the block's
    /// warps split the batch).
    pub const WEIGHT_TILE: usize = 32;

    /// Block 256, grid `ceil(batch * n_in / 256) + ceil(n_out * (n_in + 1) / 32)`.
    pub fn linear_backward(batch: usize, n_in: usize, n_out: usize) -> LaunchConfig {
        grid(items(batch * n_in) + (n_out * (n_in + 1)).div_ceil(WEIGHT_TILE), ITEM_BLOCK)
    }

    /// Block 256, grid `ceil(n_out * (n_in + 1) / 32)`.
    pub fn linear_backward_params(n_in: usize, n_out: usize) -> LaunchConfig {
        grid((n_out * (n_in + 1)).div_ceil(WEIGHT_TILE), ITEM_BLOCK)
    }

    /// One warp per row: block 128, grid `ceil(batch / 4)` ([`super::PpoPolicyHead`],
    /// [`super::PpoLossBackward`], [`super::PpoHeadsLossBackward`]).
    pub fn per_row(batch: usize) -> LaunchConfig {
        grid(batch.div_ceil((ROW_BLOCK / 32) as usize), ROW_BLOCK)
    }

    /// Exactly one block of 256 threads ([`super::PpoLossForward`],
    /// [`super::PpoNormalizeAdvantages`]).
    pub fn one_block() -> LaunchConfig {
        grid(1, REDUCE_BLOCK)
    }

    /// One thread per environment: block 256, grid `ceil(n_envs / 256)`.
    pub fn gae(n_envs: usize) -> LaunchConfig {
        grid(items(n_envs), ITEM_BLOCK)
    }

    /// One thread per (row, column), `n_obs + 1` columns: block 256,
    /// grid `ceil(mb_size * (n_obs + 1) / 256)`.
    pub fn gather_minibatch(mb_size: usize, n_obs: usize) -> LaunchConfig {
        grid(items(mb_size * (n_obs + 1)), ITEM_BLOCK)
    }

    /// One block of 32 threads ([`super::PpoMinibatchBegin`]; thread 0 does the work).
    pub fn single_thread() -> LaunchConfig {
        grid(1, 32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arena_layout_is_contiguous_and_the_init_is_deterministic() {
        let l = MlpLayout::new(16, 64, 4);
        assert_eq!(l.layers[0], Layer { offset: 0, n_in: 16, n_out: 64 });
        for w in l.layers.windows(2) {
            assert_eq!(w[0].end(), w[1].offset, "no gaps: every gradient float is written");
        }
        assert_eq!(l.len(), 64 * 17 + 64 * 65 + 4 * 65);
        let p = l.init(3, 0.01);
        assert_eq!(p, l.init(3, 0.01));
        assert_ne!(p, l.init(4, 0.01));
        for layer in l.layers {
            assert!(p[layer.bias_offset()..layer.end()].iter().all(|&b| b == 0.0), "biases start at 0");
        }
        let out = l.layers[2];
        assert!(p[out.offset..out.bias_offset()].iter().all(|w| w.abs() <= 0.01 / 8.0));
        assert!(p[0..l.layers[0].bias_offset()].iter().any(|w| w.abs() > 0.125));
    }

    /// The Rust constants must match the `#define`s of `kernels/ppo.cu`.
    #[test]
    fn constants_match_the_cuda_source() {
        let src = include_str!("../kernels/ppo.cu");
        let define = |name: &str| -> i64 {
            let line = src
                .lines()
                .find(|l| l.split_whitespace().take(2).eq(["#define", name]))
                .unwrap_or_else(|| panic!("ppo.cu has no #define {name}"));
            line.split_whitespace().nth(2).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("bad #define {name}"))
        };
        assert_eq!(define("PPO_ACT_TANH"), i64::from(ACT_TANH));
        assert_ne!(define("PPO_ACT_TANH"), i64::from(ACT_IDENTITY));
        assert_eq!(define("PPO_N_STATS"), STAT_NAMES.len() as i64);
    }
}
