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
#include "model_common.cuh"

extern "C" __global__ void __launch_bounds__(128)
    snap_feature_assemble(const float* __restrict__ snap, int batch, float* __restrict__ feat) {
    kg_pdl_enter();
    const long long row = kg_global_warp();
    if (row >= batch) return;  // warp-uniform: the whole warp leaves together
    const int lane = threadIdx.x & 31;
    const float* s = snap + row * SNAP_LEN;
    float* f = feat + row * N_FEAT;

    const bool level = lane < N_LEVELS;
    // Lanes >= N_LEVELS carry neutral values (valid, zero size) so the warp votes stay simple.
    const float bid_px = level ? s[SNAP_BID_PX + lane] : 1.f;
    const float bid_sz = level ? s[SNAP_BID_SZ + lane] : 0.f;
    const float ask_px = level ? s[SNAP_ASK_PX + lane] : 1.f;
    const float ask_sz = level ? s[SNAP_ASK_SZ + lane] : 0.f;

    const bool lane_ok = kg_finite(bid_px) && kg_finite(bid_sz) && kg_finite(ask_px) &&
                         kg_finite(ask_sz) && bid_px > 0.f && ask_px > 0.f && bid_sz >= 0.f &&
                         ask_sz >= 0.f;
    const bool inputs_ok = __all_sync(KG_FULL_MASK, lane_ok);

    const float best_bid = __shfl_sync(KG_FULL_MASK, bid_px, 0);
    const float best_ask = __shfl_sync(KG_FULL_MASK, ask_px, 0);

    // Inclusive prefix sums of the sizes over levels (lanes >= 10 add zeros).
    float cum_bid = bid_sz, cum_ask = ask_sz;
#pragma unroll
    for (int o = 1; o < 16; o <<= 1) {
        const float tb = __shfl_up_sync(KG_FULL_MASK, cum_bid, o);
        const float ta = __shfl_up_sync(KG_FULL_MASK, cum_ask, o);
        if (lane >= o) {
            cum_bid += tb;
            cum_ask += ta;
        }
    }
    const float total = __shfl_sync(KG_FULL_MASK, cum_bid + cum_ask, N_LEVELS - 1);
    const bool valid = inputs_ok && best_ask > best_bid && total > 0.f;

    // mid without overflow for prices near FLT_MAX; spread > 0 when valid.
    const float mid = 0.5f * best_bid + 0.5f * best_ask;
    const float spread = best_ask - best_bid;

    // Lanes 10, 11, 12 take the depth-1, 5, 10 imbalance (source lanes 0, 4, 9).
    const int depth_lane = lane == 10 ? 0 : (lane == 11 ? 4 : N_LEVELS - 1);
    const float db = __shfl_sync(KG_FULL_MASK, cum_bid, depth_lane);
    const float da = __shfl_sync(KG_FULL_MASK, cum_ask, depth_lane);

    // Each lane computes up to 4 outputs; non-level lanes use v0 only.
    float v0 = 0.f, v1 = 0.f, v2 = 0.f, v3 = 0.f;
    if (level) {
        v0 = (bid_px - mid) / spread;
        v1 = (ask_px - mid) / spread;
        v2 = log1pf(bid_sz);
        v3 = log1pf(ask_sz);
    } else if (lane < 13) {
        const float den = db + da;
        // |db - da| <= db + da holds exactly and rounding is monotone, so the quotient is in [-1, 1].
        v0 = den > 0.f ? (db - da) / den : 0.f;
    } else if (lane == 13) {
        v0 = spread / mid;
    } else if (lane == 14) {
        v0 = 1.f;
    }
    const bool out_ok = kg_finite(v0) && kg_finite(v1) && kg_finite(v2) && kg_finite(v3);
    const bool ok = __all_sync(KG_FULL_MASK, out_ok) && valid;
    // Select, never multiply: 0 * NaN would be NaN.
    if (level) {
        f[FEAT_BID_OFFSET + lane] = ok ? v0 : 0.f;
        f[FEAT_ASK_OFFSET + lane] = ok ? v1 : 0.f;
        f[FEAT_BID_LOGSZ + lane] = ok ? v2 : 0.f;
        f[FEAT_ASK_LOGSZ + lane] = ok ? v3 : 0.f;
    } else if (lane < 15) {
        f[FEAT_IMBALANCE + (lane - N_LEVELS)] = ok ? v0 : 0.f;
    }
}
