//! Launch configurations of the model kernels (grid/block formulas of the `.cu` headers).
//! Sizes are element counts; every grid has at least one block.

use kgraph::LaunchConfig;

/// Warps per block of the warp-per-output kernels (block = 128 threads).
pub const WARPS_PER_BLOCK: usize = 4;
/// Block size of the thread-per-item kernels and AdamW.
pub const ITEM_BLOCK: u32 = 256;
/// Block size of the backward kernels whose weight gradients split the batch over the
/// block's warps (32 warps: 8 rows each at B = 256), reduced in shared memory in a fixed order.
pub const REDUCE_BLOCK: u32 = 1024;
/// Weight-gradient outputs per block of those kernels (one per lane).
pub const REDUCE_OUTPUTS: usize = 32;
/// Block size of the single-block BCE kernel.
pub const BCE_BLOCK: u32 = 256;
/// AdamW's grid cap (16 blocks per SM of a 132-SM H100/H200; the loops are grid-stride).
pub const ADAMW_MAX_BLOCKS: usize = 2112;

fn ceil_div(n: usize, d: usize) -> usize {
    n.div_ceil(d)
}

fn grid(blocks: usize, block: u32) -> LaunchConfig {
    let blocks = u32::try_from(blocks.max(1)).unwrap_or(u32::MAX);
    LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 }
}

fn warp_per_item(items: usize) -> LaunchConfig {
    grid(ceil_div(items, WARPS_PER_BLOCK), 32 * WARPS_PER_BLOCK as u32)
}

/// One warp per snapshot: grid `ceil(batch / 4)`, block 128.
pub fn snap_feature_assemble(batch: usize) -> LaunchConfig {
    warp_per_item(batch)
}

/// Threads per block of [`crate::graphs::PerceptionFused`] (one warp per hidden unit at n_hid = 32).
pub const FUSED_BLOCK: u32 = 1024;
/// The largest `n_hid` [`crate::graphs::PerceptionFused`] takes (its shared-memory state).
pub const FUSED_MAX_HID: usize = 1024;

/// One block per row: grid `batch`, block [`FUSED_BLOCK`].
pub fn perception_fused(batch: usize) -> LaunchConfig {
    grid(batch, FUSED_BLOCK)
}

/// One block of 1024 per row: grid `batch`, block 1024.
pub fn train_forward(batch: usize) -> LaunchConfig {
    grid(batch, REDUCE_BLOCK)
}

/// One warp per `(b, j)`: grid `ceil(batch * n_hid / 4)`, block 128.
pub fn cfc_step(batch: usize, n_hid: usize) -> LaunchConfig {
    warp_per_item(batch * n_hid)
}

/// Same shape as [`cfc_step`].
pub fn cfc_step_backward_gates(batch: usize, n_hid: usize) -> LaunchConfig {
    warp_per_item(batch * n_hid)
}

/// Block 1024, grid `ceil(batch * K / 1024) + ceil(n_hid * (K + 1) / 32)`, `K = n_in + n_hid`.
pub fn cfc_step_backward_params(batch: usize, n_in: usize, n_hid: usize) -> LaunchConfig {
    let k = n_in + n_hid;
    grid(ceil_div(batch * k, REDUCE_BLOCK as usize) + ceil_div(n_hid * (k + 1), REDUCE_OUTPUTS), REDUCE_BLOCK)
}

/// Block 1024, grid `ceil(n_hid * (K + 1) / 32)`, `K = n_in + n_hid`.
pub fn cfc_step_backward_weights(n_in: usize, n_hid: usize) -> LaunchConfig {
    grid(ceil_div(n_hid * (n_in + n_hid + 1), REDUCE_OUTPUTS), REDUCE_BLOCK)
}

/// [`cfc_step_backward_weights`]' grid and two blocks more (AdamW on the heads).
pub fn cfc_step_backward_weights_adamw(n_in: usize, n_hid: usize) -> LaunchConfig {
    let mut cfg = cfc_step_backward_weights(n_in, n_hid);
    cfg.grid_dim.0 += 2;
    cfg
}

/// One warp per `(b, o)`: grid `ceil(batch * 5 / 4)`, block 128.
pub fn multi_horizon_heads(batch: usize) -> LaunchConfig {
    warp_per_item(batch * super::N_HORIZONS)
}

/// Block 1024, grid `ceil(batch * n_hid / 1024) + ceil(5 * (n_hid + 1) / 32)`.
pub fn multi_horizon_heads_backward(batch: usize, n_hid: usize) -> LaunchConfig {
    linear_backward(batch, n_hid, super::N_HORIZONS)
}

/// [`multi_horizon_heads_backward`]'s grid and one block more (the loss).
pub fn multi_horizon_heads_bce_backward(batch: usize, n_hid: usize) -> LaunchConfig {
    let mut cfg = linear_backward(batch, n_hid, super::N_HORIZONS);
    cfg.grid_dim.0 += 1;
    cfg
}

/// One warp per `(b, o)`: grid `ceil(batch * 8 / 4)`, block 128.
pub fn projection(batch: usize) -> LaunchConfig {
    warp_per_item(batch * super::N_PROJ)
}

/// Block 1024, grid `ceil(batch * n_hid / 1024) + ceil(8 * (n_hid + 1) / 32)`.
pub fn projection_backward(batch: usize, n_hid: usize) -> LaunchConfig {
    linear_backward(batch, n_hid, super::N_PROJ)
}

fn linear_backward(batch: usize, n_hid: usize, n_out: usize) -> LaunchConfig {
    grid(ceil_div(batch * n_hid, REDUCE_BLOCK as usize) + ceil_div(n_out * (n_hid + 1), REDUCE_OUTPUTS), REDUCE_BLOCK)
}

/// Exactly one block of 256 threads (the loss reduction is single-block).
pub fn bce_with_logits() -> LaunchConfig {
    grid(1, BCE_BLOCK)
}

/// One thread per element: block 256, grid `ceil(n / 256)`; for [`super::ZeroF32`],
/// [`super::CopyF32`] and [`super::CopyF32Pinned`].
pub fn elementwise(n: usize) -> LaunchConfig {
    grid(ceil_div(n, ITEM_BLOCK as usize), ITEM_BLOCK)
}

/// Block 256, grid `clamp(ceil(n / 1024), 1, 2112)` (grid-stride, 4 elements per thread
/// per iteration); also for [`super::AdamwScheduled`].
pub fn adamw(n: usize) -> LaunchConfig {
    grid(ceil_div(n, 4 * ITEM_BLOCK as usize).min(ADAMW_MAX_BLOCKS), ITEM_BLOCK)
}

/// [`super::AdamwScheduledGroup`] over tensors of `lens` elements: block 256, one chunk of
/// 1024 elements per block, grid `sum_i ceil(n_i / 1024)` (at most 2112 blocks: any grid works).
pub fn adamw_group(lens: &[usize]) -> LaunchConfig {
    let chunks: usize = lens.iter().map(|&n| ceil_div(n, 4 * ITEM_BLOCK as usize)).sum();
    grid(chunks.min(ADAMW_MAX_BLOCKS), ITEM_BLOCK)
}
