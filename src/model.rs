//! The reference model's CUDA kernels: order-book features, a closed-form continuous-time (CfC)
//! cell, multi-horizon heads, a projection, BCE-with-logits and AdamW, with the backward
//! kernels of the trainable parts, plus the zero and copy kernels the graphs of
//! [`crate::graphs`] need (their format has kernel nodes only).
//!
//! The kernels live in `kernels/*.cu` (one header comment per file gives the math, the buffer
//! layouts and the launch shapes); [`kernels`] declares them, and everything it generates is
//! re-exported here: `kgraph_model::model::Kernels::load(&device)` loads them all, and each handle
//! (e.g. [`CfcStep`]) launches one with typed arguments. [`launch`] has the launch
//! configurations.
//!
//! # Conventions
//! - Every tensor is `f32`, row-major, with a leading batch dimension `batch` (B = 1 is the
//!   latency path, B = 256 and up the training path). Sizes are `i32`, and every tensor must
//!   stay below 2^31 elements.
//! - **Gradients accumulate.** Every gradient output (`g_*`) is added to (`+=`), never
//!   overwritten, so the heads and the projection can both add into one `g_h`, and unrolled
//!   time steps into shared weight gradients: zero gradient buffers before each step. Scratch
//!   outputs (`d_pre_g`, `d_pre_t`) and forward outputs are overwritten. No output may alias an
//!   input.
//! - Every pointer parameter is declared with its extent, the buffer layout of the kernel's
//!   `.cu` header (`h_new: &mut [f32; batch * n_hid]`), under `unsafe(extents)`: each handle's
//!   `launch` checks every buffer against it before launching (`docs/safety.md`).
//! - Every reduction runs in an order fixed by the launch configuration (no atomics): results
//!   are bitwise reproducible. The backward kernels' weight gradients split the batch over a
//!   block's warps and add the warps' partial sums in shared memory, so a different block size
//!   gives the same gradients up to rounding.
//! - Every kernel begins with a programmatic-dependent-launch wait, so it may be launched with
//!   [`kgraph::LaunchOptions::PDL`] after any other model kernel.
//! - Values that change on every replay of a captured graph (`dt`, AdamW's learning rate and
//!   bias corrections) are read from device buffers, not scalar arguments, because a CUDA graph
//!   freezes scalar arguments at capture.
//!
//! # Snapshots from pinned memory
//! [`SnapFeatureAssemble`] reads a device buffer; [`SnapFeatureAssemblePinned`] is the same
//! kernel reading mapped pinned host memory (a [`kgraph::MappedBuffer`] / [`kgraph::PinnedSlot`]
//! address) directly, so the latency graph needs no host-to-device copy node: the host writes
//! the snapshot, the replay reads it over PCIe/C2C (4 coalesced requests per snapshot).
//!
//! # Results into pinned memory
//! [`MultiHorizonHeadsPinned`] and [`ProjectionPinned`] are the heads and the projection writing
//! `probs` and `y` straight into mapped pinned host memory (`PinnedMut<f32>`): the latency graph
//! ends with its results already in host memory, and the host reads them after synchronizing the
//! stream, with no download copy.
//!
//! # Example
//! One CfC step launched through its handle (compiled by `cargo test --doc`; it needs a GPU to
//! run). A buffer shorter than its extent is refused before the launch:
//! `Err(Error::Launch(LaunchError::Extent { kernel: "cfc_step", param: .., .. }))`.
//!
//! ```no_run
//! use kgraph_model::model::{launch, Kernels};
//! # fn main() -> kgraph::Result<()> {
//! let (batch, n_in, n_hid) = (1usize, 45usize, 32usize);
//! let dev = kgraph::Device::new(0)?;
//! let k = Kernels::load(&dev)?; // every model kernel, each .cu module loaded once
//! let x = dev.upload(&vec![0.5f32; batch * n_in])?;
//! let h = dev.alloc_zeros::<f32>(batch * n_hid)?;
//! let w = dev.upload(&vec![0.01f32; n_hid * (n_in + n_hid)])?;
//! let b = dev.alloc_zeros::<f32>(n_hid)?;
//! let dt = dev.upload(&vec![1.0f32; batch])?;
//! let mut h_new = dev.alloc_zeros::<f32>(batch * n_hid)?;
//! let cfg = launch::cfc_step(batch, n_hid);
//! let (b32, i32_in, i32_hid) = (batch as i32, n_in as i32, n_hid as i32);
//! k.cfc_step.launch(dev.stream(), cfg, &x, &h, &w, &b, &w, &b, &dt, b32, i32_in, i32_hid, &mut h_new)?;
//! let h_next: Vec<f32> = dev.download(&h_new)?; // waits for the launch
//! # let _ = h_next;
//! # Ok(()) }
//! ```

mod constants;

pub use constants::{
    FEAT_ASK_LOGSZ, FEAT_ASK_OFFSET, FEAT_BID_LOGSZ, FEAT_BID_OFFSET, FEAT_IMBALANCE, FEAT_REL_SPREAD, FEAT_VALID,
    N_FEAT, N_HORIZONS, N_LEVELS, N_PROJ, SNAP_LEN,
};

/// The model kernels' declarations (checked against the `.cu` sources at compile time).
/// Everything here is re-exported by [`crate::model`].
#[kgraph::kernels]
pub mod kernels {
    /// MBP-10 snapshots `snap [batch, 40]` (device memory) to features `feat [batch, 45]`.
    /// Crossed, empty, non-positive-price, negative-size or non-finite books give 45 zeros
    /// (flag 0), never NaN/Inf. Launch: [`super::launch::snap_feature_assemble`].
    #[kernel("snap_features.cu", unsafe(extents))]
    pub fn snap_feature_assemble(snap: &[f32; batch * 40], batch: i32, feat: &mut [f32; batch * 45]);

    /// [`SnapFeatureAssemble`] reading the snapshots from mapped pinned host memory (zero-copy).
    #[kernel("snap_features.cu", name = "snap_feature_assemble", unsafe(extents))]
    pub fn snap_feature_assemble_pinned(snap: Pinned<[f32; batch * 40]>, batch: i32, feat: &mut [f32; batch * 45]);

    /// [`SnapFeatureAssemblePinned`] that also copies the host-written elapsed times
    /// `dt_src [batch]` (mapped pinned) into the device buffer `dt_dst [batch]` that
    /// [`CfcStep`] reads: the latency graph's two host inputs in one kernel, one bus round trip.
    /// Launch: [`super::launch::snap_feature_assemble`].
    #[kernel(
        "snap_features.cu",
        name = "snap_feature_assemble_dt",
        unsafe(extents, device_fn = "snap_feature_assemble_dt_block")
    )]
    pub fn snap_feature_assemble_dt_pinned(
        snap: Pinned<[f32; batch * 40]>,
        dt_src: Pinned<[f32; batch]>,
        batch: i32,
        feat: &mut [f32; batch * 45],
        dt_dst: &mut [f32; batch],
    );

    /// CfC step: `h_new = h_old + (1 − e^(−softplus(W_t z + b_t)·dt)) (tanh(W_g z + b_g) − h_old)`,
    /// `z = [x; h_old]`. `x [batch, n_in]`, `h_old`, `h_new [batch, n_hid]`, `dt [batch]`,
    /// `w_g`, `w_t [n_hid, n_in + n_hid]`, `b_g`, `b_t [n_hid]`. `dt` is clamped to ≥ 0.
    /// Launch: [`super::launch::cfc_step`].
    #[kernel("cfc_step.cu", unsafe(extents, device_fn = "cfc_step_block"))]
    pub fn cfc_step(
        x: &[f32; batch * n_in],
        h_old: &[f32; batch * n_hid],
        w_g: &[f32; n_hid * (n_in + n_hid)],
        b_g: &[f32; n_hid],
        w_t: &[f32; n_hid * (n_in + n_hid)],
        b_t: &[f32; n_hid],
        dt: &[f32; batch],
        batch: i32,
        n_in: i32,
        n_hid: i32,
        h_new: &mut [f32; batch * n_hid],
    );

    /// [`CfcStep`] that also stores the backward's per-unit coefficients in
    /// `coeffs [4, batch, n_hid]` (`a`, `1 − target²`, `target − h_old`, `dλ`; `kernels/cfc.cuh`)
    /// for [`MultiHorizonHeadsBceCfcBackward`]; `h_new` is [`CfcStep`]'s, bit for bit.
    /// Launch: [`super::launch::cfc_step`].
    #[kernel("cfc_step.cu", unsafe(extents))]
    pub fn cfc_step_save(
        x: &[f32; batch * n_in],
        h_old: &[f32; batch * n_hid],
        w_g: &[f32; n_hid * (n_in + n_hid)],
        b_g: &[f32; n_hid],
        w_t: &[f32; n_hid * (n_in + n_hid)],
        b_t: &[f32; n_hid],
        dt: &[f32; batch],
        batch: i32,
        n_in: i32,
        n_hid: i32,
        h_new: &mut [f32; batch * n_hid],
        coeffs: &mut [f32; 4 * batch * n_hid],
    );

    /// The train step's forward in one launch, one block per row: [`SnapFeatureAssemble`],
    /// [`CfcStepSave`] from `h0` and [`MultiHorizonHeads`], bit for bit (`kernels/train_forward.cu`):
    /// `feat [batch, 45]`, `h1 [batch, n_hid]`, `coeffs [4, batch, n_hid]`, `logits`,
    /// `probs [batch, 5]`. `1 <= n_hid <= 1024`, otherwise it writes nothing.
    /// Launch: [`super::launch::train_forward`].
    #[kernel("train_forward.cu", unsafe(extents))]
    pub fn train_forward(
        snap: &[f32; batch * 40],
        h0: &[f32; batch * n_hid],
        w_g: &[f32; n_hid * (45 + n_hid)],
        b_g: &[f32; n_hid],
        w_t: &[f32; n_hid * (45 + n_hid)],
        b_t: &[f32; n_hid],
        dt: &[f32; batch],
        w_h: &[f32; 5 * n_hid],
        b_h: &[f32; 5],
        batch: i32,
        n_hid: i32,
        feat: &mut [f32; batch * 45],
        h1: &mut [f32; batch * n_hid],
        coeffs: &mut [f32; 4 * batch * n_hid],
        logits: &mut [f32; batch * 5],
        probs: &mut [f32; batch * 5],
    );

    /// CfC backward, step 1 of 2: pre-activation gradients `d_pre_g`, `d_pre_t [batch, n_hid]`
    /// (overwritten scratch) and the direct path `g_h_old += g_h_new (1 − a)`.
    /// Launch: [`super::launch::cfc_step_backward_gates`].
    #[kernel("cfc_step.cu", unsafe(extents))]
    pub fn cfc_step_backward_gates(
        x: &[f32; batch * n_in],
        h_old: &[f32; batch * n_hid],
        w_g: &[f32; n_hid * (n_in + n_hid)],
        b_g: &[f32; n_hid],
        w_t: &[f32; n_hid * (n_in + n_hid)],
        b_t: &[f32; n_hid],
        dt: &[f32; batch],
        g_h_new: &[f32; batch * n_hid],
        batch: i32,
        n_in: i32,
        n_hid: i32,
        d_pre_g: &mut [f32; batch * n_hid],
        d_pre_t: &mut [f32; batch * n_hid],
        g_h_old: &mut [f32; batch * n_hid],
    );

    /// CfC backward, step 2 of 2 (after the gates): `g_x`, `g_h_old += Wᵀ d_pre` and the
    /// weight/bias gradients `g_w_* += Σ_b d_pre zᵀ`, `g_b_* += Σ_b d_pre` (all accumulate).
    /// Launch: [`super::launch::cfc_step_backward_params`].
    #[kernel("cfc_step.cu", unsafe(extents))]
    pub fn cfc_step_backward_params(
        x: &[f32; batch * n_in],
        h_old: &[f32; batch * n_hid],
        w_g: &[f32; n_hid * (n_in + n_hid)],
        w_t: &[f32; n_hid * (n_in + n_hid)],
        d_pre_g: &[f32; batch * n_hid],
        d_pre_t: &[f32; batch * n_hid],
        batch: i32,
        n_in: i32,
        n_hid: i32,
        g_x: &mut [f32; batch * n_in],
        g_h_old: &mut [f32; batch * n_hid],
        g_w_g: &mut [f32; n_hid * (n_in + n_hid)],
        g_b_g: &mut [f32; n_hid],
        g_w_t: &mut [f32; n_hid * (n_in + n_hid)],
        g_b_t: &mut [f32; n_hid],
    );

    /// [`CfcStepBackwardGates`] without the `h_old` gradient: `d_pre_g`, `d_pre_t` only (the
    /// train step, whose `h0` needs none). Launch: [`super::launch::cfc_step_backward_gates`].
    #[kernel("cfc_step.cu", unsafe(extents))]
    pub fn cfc_step_backward_pre(
        x: &[f32; batch * n_in],
        h_old: &[f32; batch * n_hid],
        w_g: &[f32; n_hid * (n_in + n_hid)],
        b_g: &[f32; n_hid],
        w_t: &[f32; n_hid * (n_in + n_hid)],
        b_t: &[f32; n_hid],
        dt: &[f32; batch],
        g_h_new: &[f32; batch * n_hid],
        batch: i32,
        n_in: i32,
        n_hid: i32,
        d_pre_g: &mut [f32; batch * n_hid],
        d_pre_t: &mut [f32; batch * n_hid],
    );

    /// The weight gradients of [`CfcStepBackwardParams`] alone, **overwritten** (`=`, the one
    /// exception to the accumulate rule, for the train step: one producer per gradient, so no
    /// zeroing node): `g_w_* = Σ_b d_pre zᵀ`, `g_b_* = Σ_b d_pre`.
    /// Launch: [`super::launch::cfc_step_backward_weights`].
    #[kernel("cfc_step.cu", unsafe(extents))]
    pub fn cfc_step_backward_weights(
        x: &[f32; batch * n_in],
        h_old: &[f32; batch * n_hid],
        d_pre_g: &[f32; batch * n_hid],
        d_pre_t: &[f32; batch * n_hid],
        batch: i32,
        n_in: i32,
        n_hid: i32,
        g_w_g: &mut [f32; n_hid * (n_in + n_hid)],
        g_b_g: &mut [f32; n_hid],
        g_w_t: &mut [f32; n_hid * (n_in + n_hid)],
        g_b_t: &mut [f32; n_hid],
    );

    /// [`CfcStepBackwardWeights`] with AdamW fused in (the train step's last kernel): each
    /// finished gradient element (written to `g_*`) updates its parameter and moments at once,
    /// and two more blocks run AdamW on the heads' `w_h`, `b_h` from `g_w_h`, `g_b_h`; the
    /// schedule and hyper-parameters of [`AdamwScheduled`], whose bits it gives.
    /// Launch: [`super::launch::cfc_step_backward_weights_adamw`].
    #[kernel("cfc_step.cu", unsafe(extents))]
    pub fn cfc_step_backward_weights_adamw(
        x: &[f32; batch * n_in],
        h_old: &[f32; batch * n_hid],
        d_pre_g: &[f32; batch * n_hid],
        d_pre_t: &[f32; batch * n_hid],
        g_w_h: &[f32; 5 * n_hid],
        g_b_h: &[f32; 5],
        schedule: &[f32; 3],
        beta1: f32,
        beta2: f32,
        eps: f32,
        weight_decay: f32,
        batch: i32,
        n_in: i32,
        n_hid: i32,
        g_w_g: &mut [f32; n_hid * (n_in + n_hid)],
        g_b_g: &mut [f32; n_hid],
        g_w_t: &mut [f32; n_hid * (n_in + n_hid)],
        g_b_t: &mut [f32; n_hid],
        w_g: &mut [f32; n_hid * (n_in + n_hid)],
        m_w_g: &mut [f32; n_hid * (n_in + n_hid)],
        v_w_g: &mut [f32; n_hid * (n_in + n_hid)],
        b_g: &mut [f32; n_hid],
        m_b_g: &mut [f32; n_hid],
        v_b_g: &mut [f32; n_hid],
        w_t: &mut [f32; n_hid * (n_in + n_hid)],
        m_w_t: &mut [f32; n_hid * (n_in + n_hid)],
        v_w_t: &mut [f32; n_hid * (n_in + n_hid)],
        b_t: &mut [f32; n_hid],
        m_b_t: &mut [f32; n_hid],
        v_b_t: &mut [f32; n_hid],
        w_h: &mut [f32; 5 * n_hid],
        m_w_h: &mut [f32; 5 * n_hid],
        v_w_h: &mut [f32; 5 * n_hid],
        b_h: &mut [f32; 5],
        m_b_h: &mut [f32; 5],
        v_b_h: &mut [f32; 5],
    );

    /// Heads: `logits = W_h h + b_h`, `probs = sigmoid(logits)`; `h [batch, n_hid]`,
    /// `w_h [5, n_hid]`, `b_h [5]`, `logits`, `probs [batch, 5]`.
    /// Launch: [`super::launch::multi_horizon_heads`].
    #[kernel("heads.cu", unsafe(extents, device_fn = "multi_horizon_heads_block"))]
    pub fn multi_horizon_heads(
        h: &[f32; batch * n_hid],
        w_h: &[f32; 5 * n_hid],
        b_h: &[f32; 5],
        batch: i32,
        n_hid: i32,
        logits: &mut [f32; batch * 5],
        probs: &mut [f32; batch * 5],
    );

    /// [`MultiHorizonHeads`] writing `probs` straight into mapped pinned host memory (a
    /// [`kgraph::MappedBuffer`] lent through `device_ptr_mut`): a zero-copy output the host reads
    /// after synchronizing the stream, with no download copy. `logits` stay in device memory.
    /// Launch: [`super::launch::multi_horizon_heads`].
    #[kernel("heads.cu", name = "multi_horizon_heads", unsafe(extents, device_fn = "multi_horizon_heads_block"))]
    pub fn multi_horizon_heads_pinned(
        h: &[f32; batch * n_hid],
        w_h: &[f32; 5 * n_hid],
        b_h: &[f32; 5],
        batch: i32,
        n_hid: i32,
        logits: &mut [f32; batch * 5],
        probs: PinnedMut<[f32; batch * 5]>,
    );

    /// Heads backward from the gradients of both outputs (zeros for an unused one) and the
    /// forward's `probs`: `g_h`, `g_w_h`, `g_b_h` accumulate.
    /// Launch: [`super::launch::multi_horizon_heads_backward`].
    #[kernel("heads.cu", unsafe(extents))]
    pub fn multi_horizon_heads_backward(
        h: &[f32; batch * n_hid],
        w_h: &[f32; 5 * n_hid],
        probs: &[f32; batch * 5],
        g_logits: &[f32; batch * 5],
        g_probs: &[f32; batch * 5],
        batch: i32,
        n_hid: i32,
        g_h: &mut [f32; batch * n_hid],
        g_w_h: &mut [f32; 5 * n_hid],
        g_b_h: &mut [f32; 5],
    );

    /// [`BceWithLogits`] against `targets` fused into [`MultiHorizonHeadsBackward`] (the train
    /// step): `loss[0]` = the mean BCE of `logits`, and `g_h`, `g_w_h`, `g_b_h` of that loss,
    /// **overwritten** (`=`: one producer per gradient there, so no zeroing node).
    /// Launch: [`super::launch::multi_horizon_heads_bce_backward`].
    #[kernel("heads.cu", unsafe(extents))]
    pub fn multi_horizon_heads_bce_backward(
        h: &[f32; batch * n_hid],
        w_h: &[f32; 5 * n_hid],
        logits: &[f32; batch * 5],
        targets: &[f32; batch * 5],
        batch: i32,
        n_hid: i32,
        loss: &mut [f32; 1],
        g_h: &mut [f32; batch * n_hid],
        g_w_h: &mut [f32; 5 * n_hid],
        g_b_h: &mut [f32; 5],
    );

    /// [`MultiHorizonHeadsBceBackward`] with the CfC's gate step folded in (the train step): from
    /// the coefficients [`CfcStepSave`] stored, `d_pre_g`, `d_pre_t [batch, n_hid]` instead of
    /// `g_h` (bit-equal to that kernel then [`CfcStepBackwardPre`]); `loss`, `g_w_h`, `g_b_h` as
    /// there. All overwritten. Launch: [`super::launch::multi_horizon_heads_bce_backward`].
    #[kernel("heads.cu", unsafe(extents))]
    pub fn multi_horizon_heads_bce_cfc_backward(
        h: &[f32; batch * n_hid],
        w_h: &[f32; 5 * n_hid],
        logits: &[f32; batch * 5],
        targets: &[f32; batch * 5],
        coeffs: &[f32; 4 * batch * n_hid],
        batch: i32,
        n_hid: i32,
        loss: &mut [f32; 1],
        d_pre_g: &mut [f32; batch * n_hid],
        d_pre_t: &mut [f32; batch * n_hid],
        g_w_h: &mut [f32; 5 * n_hid],
        g_b_h: &mut [f32; 5],
    );

    /// Projection `y = P h + c`; `h [batch, n_hid]`, `p [8, n_hid]`, `c [8]`, `y [batch, 8]`.
    /// Launch: [`super::launch::projection`].
    #[kernel("projection.cu", unsafe(extents, device_fn = "projection_block"))]
    pub fn projection(
        h: &[f32; batch * n_hid],
        p: &[f32; 8 * n_hid],
        c: &[f32; 8],
        batch: i32,
        n_hid: i32,
        y: &mut [f32; batch * 8],
    );

    /// [`Projection`] writing `y` straight into mapped pinned host memory (zero-copy output,
    /// read by the host after synchronizing the stream). Launch: [`super::launch::projection`].
    #[kernel("projection.cu", name = "projection", unsafe(extents, device_fn = "projection_block"))]
    pub fn projection_pinned(
        h: &[f32; batch * n_hid],
        p: &[f32; 8 * n_hid],
        c: &[f32; 8],
        batch: i32,
        n_hid: i32,
        y: PinnedMut<[f32; batch * 8]>,
    );

    /// Graph A's whole latency step in one kernel, one block per row: the features of
    /// `snap [b]`, one CfC step of `h [b]` (updated in place) with `dt [b]`, the heads'
    /// `probs [b, 5]` and the projection's `y [b, 8]`, bit-equal to the multi-node kernels (it
    /// calls their device functions). Every input and output may be mapped pinned memory but
    /// `h` and the weights. `1 <= n_hid <= 1024`, otherwise it writes nothing.
    /// Launch: [`super::launch::perception_fused`].
    #[kernel("perception_fused.cu", unsafe(extents))]
    pub fn perception_fused(
        snap: Pinned<[f32; batch * 40]>,
        dt: Pinned<[f32; batch]>,
        h: &mut [f32; batch * n_hid],
        w_g: &[f32; n_hid * (45 + n_hid)],
        b_g: &[f32; n_hid],
        w_t: &[f32; n_hid * (45 + n_hid)],
        b_t: &[f32; n_hid],
        w_h: &[f32; 5 * n_hid],
        b_h: &[f32; 5],
        p: &[f32; 8 * n_hid],
        c: &[f32; 8],
        batch: i32,
        n_hid: i32,
        probs: PinnedMut<[f32; batch * 5]>,
        y: PinnedMut<[f32; batch * 8]>,
    );

    /// Projection backward: `g_h`, `g_p`, `g_c` accumulate.
    /// Launch: [`super::launch::projection_backward`].
    #[kernel("projection.cu", unsafe(extents))]
    pub fn projection_backward(
        h: &[f32; batch * n_hid],
        p: &[f32; 8 * n_hid],
        g_y: &[f32; batch * 8],
        batch: i32,
        n_hid: i32,
        g_h: &mut [f32; batch * n_hid],
        g_p: &mut [f32; 8 * n_hid],
        g_c: &mut [f32; 8],
    );

    /// BCE with logits, fused: `loss[0] = mean(softplus(z) − y z)` (overwritten) and
    /// `g_logits += (sigmoid(z) − y) / count`. Targets in [0, 1]. One block, deterministic.
    /// Launch: [`super::launch::bce_with_logits`].
    #[kernel("bce.cu", unsafe(extents))]
    pub fn bce_with_logits(
        logits: &[f32; count],
        targets: &[f32; count],
        count: i32,
        loss: &mut [f32; 1],
        g_logits: &mut [f32; count],
    );

    /// AdamW in place over `param`, `m`, `v [n]` (PyTorch's formula; `eps` > 0), with the
    /// learning rate and bias corrections `1 − β^t` as scalars (for eager use).
    /// Launch: [`super::launch::adamw`].
    #[kernel("adamw.cu", unsafe(extents))]
    pub fn adamw(
        grad: &[f32; n],
        lr: f32,
        beta1: f32,
        beta2: f32,
        eps: f32,
        weight_decay: f32,
        bias_correction1: f32,
        bias_correction2: f32,
        n: i32,
        param: &mut [f32; n],
        m: &mut [f32; n],
        v: &mut [f32; n],
    );

    /// [`Adamw`] reading `schedule = [lr, bias_correction1, bias_correction2]` from device
    /// memory, so a captured train graph takes each step's values on replay.
    /// Launch: [`super::launch::adamw`].
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

    /// [`AdamwScheduled`] over six tensors in one launch (`grad_i`, `param_i`, `m_i`, `v_i` of
    /// `n_i` elements; `n_i = 0` leaves a slot unused): bitwise the six separate launches.
    /// Launch: [`super::launch::adamw_group`].
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

    /// `x[i] = 0` for `i < n`: gradients accumulate, so a train graph zeroes its gradient buffers
    /// with this first (a `memset` node measured the same on the H200, `kgraph_node_zero_*`).
    /// Launch: [`super::launch::elementwise`].
    #[kernel("model_util.cu", unsafe(extents))]
    pub fn zero_f32(n: i32, x: &mut [f32; n]);

    /// `dst[i] = src[i]` for `i < n` (no overlap): carries state across replays of a graph
    /// whose kernel reads the old value and writes the new one into another buffer.
    /// Launch: [`super::launch::elementwise`].
    #[kernel("model_util.cu", unsafe(extents))]
    pub fn copy_f32(src: &[f32; n], n: i32, dst: &mut [f32; n]);

    /// [`CopyF32`] reading mapped pinned host memory: brings a host-written value (e.g. `dt`)
    /// into the device buffer a kernel takes as `&[f32]`, inside the graph, with no transfer.
    /// Launch: [`super::launch::elementwise`].
    #[kernel("model_util.cu", name = "copy_f32", unsafe(extents))]
    pub fn copy_f32_pinned(src: Pinned<[f32; n]>, n: i32, dst: &mut [f32; n]);
}

pub use kernels::*;

pub mod launch;
