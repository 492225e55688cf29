// snap_feature_assemble: MBP-10 order-book snapshots -> N_FEAT (45) model features.
//
// Layout (row-major, f32):
//   snap [batch, 40]: per row bid_px[10], bid_sz[10], ask_px[10], ask_sz[10]; level 0 = best.
//   feat [batch, 45]: per row
//     [ 0..10) (bid_px[i] - mid) / spread      [10..20) (ask_px[i] - mid) / spread
//     [20..30) log1p(bid_sz[i])                [30..40) log1p(ask_sz[i])
//     [40..43) (sum bid_sz - sum ask_sz) / (sum bid_sz + sum ask_sz) over levels [0, d),
//              d = 1, 5, 10 (0 when that depth holds no size at all)
//     43       spread / mid                    44       validity flag (1 valid, 0 invalid)
//   mid = (bid_px[0] + ask_px[0]) / 2, spread = ask_px[0] - bid_px[0].
//
// Validity: a row is valid when all 40 inputs are finite, every price is > 0, every size is
// >= 0, the book is not crossed (ask_px[0] > bid_px[0]) and not empty (total size over all
// levels > 0), and every computed feature is finite (e.g. a sub-ulp spread under a far level
// would overflow an offset). An invalid row is written as 45 zeros (flag 0): never NaN/Inf.
// Missing levels must be sent with a positive price (e.g. the previous level's) and size 0.
// Level prices are not checked for monotonicity.
//
// Launch: one warp per snapshot. block = 128 (4 snapshots per block), grid = ceil(batch / 4);
// any block size that is a multiple of 32 works (grid = ceil(batch / (block / 32))). No shared
// memory. B = 1 (latency path): grid 1. Lanes 0..9 each load one level (4 coalesced 40-byte
// segments per row), so a snapshot read from mapped pinned memory costs 4 PCIe/C2C requests.
//
// `snap` may be device memory or the device address of mapped pinned host memory (the latency
// graph passes a PinnedSlot/MappedBuffer address; Rust declares both variants). Deterministic.
#include "snap_features.cuh"

extern "C" __global__ void __launch_bounds__(128)
    snap_feature_assemble(const float* __restrict__ snap, int batch, float* __restrict__ feat) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    const long long row = kg_global_warp();
    if (row >= batch) return;  // warp-uniform: the whole warp leaves together
    kg_snap_features_row(snap + row * SNAP_LEN, feat + row * N_FEAT);
}

// snap_feature_assemble that also copies the per-row elapsed time `dt_src [batch]` into
// `dt_dst [batch]`: on the latency path both inputs are host-written mapped memory, and reading
// them in one kernel costs one bus round trip instead of a separate copy node before cfc_step.
// Same launch; thread t < batch of the grid copies row t (`dt_src` may be mapped pinned memory).
// Block `block` of `snap_feature_assemble_dt`: what a resident step runs (`unsafe(device_fn)`).
__device__ __forceinline__ void snap_feature_assemble_dt_block(unsigned block, unsigned blocks,
                                                               const float* __restrict__ snap,
                                                               const float* __restrict__ dt_src, int batch,
                                                               float* __restrict__ feat,
                                                               float* __restrict__ dt_dst) {
    (void)blocks;
    if (kg_not_whole_warps()) return;
    const long long t = (long long)block * blockDim.x + threadIdx.x;
    // Issued before the features so the two reads of host memory overlap.
    const float dt = t < batch ? dt_src[t] : 0.f;
    const long long row = kg_global_warp_in(block);
    if (row < batch) kg_snap_features_row(snap + row * SNAP_LEN, feat + row * N_FEAT);
    if (t < batch) dt_dst[t] = dt;
}

extern "C" __global__ void __launch_bounds__(128)
    snap_feature_assemble_dt(const float* __restrict__ snap, const float* __restrict__ dt_src,
                             int batch, float* __restrict__ feat, float* __restrict__ dt_dst) {
    kg_pdl_enter();
    snap_feature_assemble_dt_block(blockIdx.x, gridDim.x, snap, dt_src, batch, feat, dt_dst);
}
