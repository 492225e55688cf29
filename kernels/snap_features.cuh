// The per-snapshot feature computation of snap_features.cu (layout and validity rules there),
// shared with perception_fused.cu so both compute the same bits.
#pragma once
#include "model_common.cuh"

// A probe's hook (scripts/probes/resident_latency.cu records clock64 at its points); empty in
// every build of kgraph.
#ifndef KG_SNAP_STAMP
#define KG_SNAP_STAMP(i)
#endif

// One lane's level of a snapshot: lane i < N_LEVELS holds level i; the other lanes carry
// neutral values (valid, zero size) so the warp votes stay simple.
struct KgSnapLevel {
    float bid_px, bid_sz, ask_px, ask_sz;
};

__device__ __forceinline__ KgSnapLevel kg_snap_load_level(const float* __restrict__ s) {
    const int lane = threadIdx.x & 31;
    const bool level = lane < N_LEVELS;
    KgSnapLevel v;
    v.bid_px = level ? s[SNAP_BID_PX + lane] : 1.f;
    v.bid_sz = level ? s[SNAP_BID_SZ + lane] : 0.f;
    v.ask_px = level ? s[SNAP_ASK_PX + lane] : 1.f;
    v.ask_sz = level ? s[SNAP_ASK_SZ + lane] : 0.f;
    return v;
}

// The features `f [45]` of one snapshot from its levels (kg_snap_load_level), computed by the
// whole calling warp. Split from the load so perception_fused.cu can issue other loads between
// the two while the snapshot's read of host memory is in flight.
__device__ __forceinline__ void kg_snap_features_from(KgSnapLevel v, float* __restrict__ f) {
    const int lane = threadIdx.x & 31;

    const bool level = lane < N_LEVELS;
    const float bid_px = v.bid_px, bid_sz = v.bid_sz, ask_px = v.ask_px, ask_sz = v.ask_sz;

    const bool lane_ok = kg_finite(bid_px) && kg_finite(bid_sz) && kg_finite(ask_px) &&
                         kg_finite(ask_sz) && bid_px > 0.f && ask_px > 0.f && bid_sz >= 0.f &&
                         ask_sz >= 0.f;
    const bool inputs_ok = __all_sync(KG_FULL_MASK, lane_ok);
    KG_SNAP_STAMP(0)

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
    KG_SNAP_STAMP(1)
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
    KG_SNAP_STAMP(2)
    const bool out_ok = kg_finite(v0) && kg_finite(v1) && kg_finite(v2) && kg_finite(v3);
    const bool ok = __all_sync(KG_FULL_MASK, out_ok) && valid;
    KG_SNAP_STAMP(3)
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

// The features `f [45]` of one snapshot `s [40]`, computed by the whole calling warp (shared by
// the kernels below and by perception_fused.cu, so they agree bit for bit).
__device__ __forceinline__ void kg_snap_features_row(const float* __restrict__ s,
                                                     float* __restrict__ f) {
    kg_snap_features_from(kg_snap_load_level(s), f);
}
