// perception_fused's row computation as a device function (perception_fused_row), with the
// pieces it is built from: the kernel (perception_fused.cu) and the resident loop's body
// (perception_resident.cu) both call it, so the two compute the same bits. The math, the
// layouts and the launch shape are described in perception_fused.cu.
#pragma once
#include "cfc.cuh"
#include "snap_features.cuh"

#define FUSED_MAX_HID 1024

// A probe's hook (scripts/probes/fused_latency.cu defines it to record clock64 per level);
// empty in every build of kgraph.
#ifndef KG_FUSED_STAMP
#define KG_FUSED_STAMP(i)
#endif

// The weights one warp needs after the features are ready, loaded while the snapshot's PCIe
// read is in flight. Why: at B = 1 every global load after the first __syncthreads is an L2
// round trip on the critical path. clock64 stamps (scripts/probes/fused_latency.cu, means over
// 13800 replays): with the strided loads, the CfC pre-activations, the new state and the
// outputs took 2200, 1010 and 1350 cycles after 3800 cycles of features; preloaded, 730, 880
// and 790. Only for the shape where every warp has at most one hidden unit and one output, and
// each lane at most one state element (n_hid <= 32 <= warps): the registers then hold exactly
// the elements the strided loops below would load, and the same fmaf chains run on them.
struct FusedWarpWeights {
    float wg0, wg1, wgh, wt0, wt1, wth;  // unit j = warp: W_g, W_t row at k = lane, lane + 32, n_in + lane
    float wo, bo;                        // output o = warp: its head or projection row at k = lane, its bias
    float bgl, btl;                      // warp 0: unit j = lane's biases (level 2 adds them there)
};

__device__ __forceinline__ bool fused_preloads(int n_hid, int warps) {
    return n_hid <= KG_WARP && n_hid <= warps && N_HORIZONS + N_PROJ <= warps;
}

__device__ __forceinline__ FusedWarpWeights fused_load_weights(
    int warp, int lane, int n_hid, const float* __restrict__ w_g, const float* __restrict__ b_g,
    const float* __restrict__ w_t, const float* __restrict__ b_t, const float* __restrict__ w_h,
    const float* __restrict__ b_h, const float* __restrict__ p, const float* __restrict__ c) {
    static_assert(N_FEAT > KG_WARP && N_FEAT <= 2 * KG_WARP, "two feature elements per lane");
    FusedWarpWeights r = {};
    if (warp == 0 && lane < n_hid) {
        r.bgl = b_g[lane];
        r.btl = b_t[lane];
    }
    if (warp < n_hid) {
        const float* wg = w_g + warp * (N_FEAT + n_hid);
        const float* wt = w_t + warp * (N_FEAT + n_hid);
        r.wg0 = wg[lane];
        r.wt0 = wt[lane];
        if (lane + KG_WARP < N_FEAT) {
            r.wg1 = wg[lane + KG_WARP];
            r.wt1 = wt[lane + KG_WARP];
        }
        if (lane < n_hid) {
            r.wgh = wg[N_FEAT + lane];
            r.wth = wt[N_FEAT + lane];
        }
    }
    if (warp < N_HORIZONS + N_PROJ) {
        const bool head = warp < N_HORIZONS;
        const int q = warp - N_HORIZONS;
        if (lane < n_hid) r.wo = head ? w_h[warp * n_hid + lane] : p[q * n_hid + lane];
        r.bo = head ? b_h[warp] : c[q];
    }
    return r;
}

// This lane's terms of cfc_preacts for unit j = warp from preloaded weights: the same fmaf chain
// in the same order (k = lane, lane + 32 over the features, then k = lane over the state).
__device__ __forceinline__ void fused_partials(const FusedWarpWeights& w, const float* feat,
                                               const float* h_old, int lane, int n_hid,
                                               float* part_g, float* part_t) {
    const float v0 = feat[lane];
    float sg = fmaf(w.wg0, v0, 0.f), st = fmaf(w.wt0, v0, 0.f);
    if (lane + KG_WARP < N_FEAT) {
        const float v1 = feat[lane + KG_WARP];
        sg = fmaf(w.wg1, v1, sg);
        st = fmaf(w.wt1, v1, st);
    }
    if (lane < n_hid) {
        const float v = h_old[lane];
        sg = fmaf(w.wgh, v, sg);
        st = fmaf(w.wth, v, st);
    }
    *part_g = sg;
    *part_t = st;
}

// kg_warp_sum's result for the 32 values part[0..32][c], by one thread: its xor butterfly adds
// lane l and lane l + h for h = 16, 8, 4, 2, 1 (lane 0's view; every lane holds the same bits),
// so this adds the same pairs in the same order and gives the same bits, without 5 shuffles per
// warp (a block's shuffles share one unit per multiprocessor: 32 warps' 10 shuffles each took
// longer than this thread's loads and adds).
__device__ __forceinline__ float fused_column_sum(const float (*part)[KG_WARP + 1], int c) {
    float v[KG_WARP / 2];
#pragma unroll
    for (int l = 0; l < KG_WARP / 2; ++l) v[l] = part[l][c] + part[l + KG_WARP / 2][c];
#pragma unroll
    for (int l = 0; l < 8; ++l) v[l] = v[l] + v[l + 8];
#pragma unroll
    for (int l = 0; l < 4; ++l) v[l] = v[l] + v[l + 4];
    v[0] = v[0] + v[2];
    v[1] = v[1] + v[3];
    return v[0] + v[1];
}

// kg_dot_warp(h, row, n_hid) for n_hid <= 32 from the preloaded row: its one tail term, then
// its `s0 + s1` with s1 = 0 (kept: -0 + 0 is +0), so the same bits.
__device__ __forceinline__ float fused_dot(const FusedWarpWeights& w, const float* h, int lane,
                                           int n_hid) {
    const float s0 = lane < n_hid ? fmaf(w.wo, h[lane], 0.f) : 0.f;
    return kg_warp_sum(s0 + 0.f);
}

// Level 3's output o of the new state: a head's probability or a projection value.
__device__ __forceinline__ void fused_write_output(int b, int o, float dot_plus_bias, int lane,
                                                   float* __restrict__ probs,
                                                   float* __restrict__ y) {
    if (lane != 0) return;
    if (o < N_HORIZONS)
        probs[b * N_HORIZONS + o] = kg_sigmoid(dot_plus_bias);
    else
        y[b * N_PROJ + (o - N_HORIZONS)] = dot_plus_bias;
}

// Whether a block of `warps` warps can keep every weight a step needs in registers, and those
// registers (what the resident body loads once per launch).
struct FusedCache {
    FusedWarpWeights w;
    bool preloaded;
    // The block's shared `h_new` holds the state the last step wrote (true after the first
    // step of a launch: shared memory does not outlive a launch).
    bool h_in_shared;
};

// The whole step for row b = blockIdx.x, called by every thread of the block (the kernel's
// body; the resident loop calls it once per step with `snap` and `dt` in shared memory).
// `cache` (the resident body's, or null): the weights come from its registers when it has them,
// and the old state from shared memory when the last step left it there; the same values as
// the loads they replace, so the same bits.
__device__ __forceinline__ void perception_fused_row(
    const float* __restrict__ snap, const float* __restrict__ dt, float* __restrict__ h,
    const float* __restrict__ w_g, const float* __restrict__ b_g, const float* __restrict__ w_t,
    const float* __restrict__ b_t, const float* __restrict__ w_h, const float* __restrict__ b_h,
    const float* __restrict__ p, const float* __restrict__ c, int batch, int n_hid,
    float* __restrict__ probs, float* __restrict__ y, const FusedCache* cache = nullptr) {
    KG_FUSED_STAMP(0)
    __shared__ float feat[N_FEAT];
    __shared__ float h_old[FUSED_MAX_HID];
    __shared__ float h_new[FUSED_MAX_HID];
    __shared__ float dt_row;
    const int b = blockIdx.x;
    // The warps stride (a block of fewer than 32 threads would loop forever) and every lane of
    // a warp takes part in its shuffles.
    if (kg_not_whole_warps()) return;
    if (b >= batch || n_hid < 1 || n_hid > FUSED_MAX_HID) return;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = blockDim.x >> 5;
    const bool preloaded = fused_preloads(n_hid, warps);

    // Level 1: warp 0 computes the features while the other warps load the old state and the
    // last thread dt (with one warp, warp 0 does all three), so the reads of host memory are in
    // flight together; every warp's weights load meanwhile when they fit in registers.
    // Warp 0 issues the snapshot's loads before its weights' (the probe measured the features
    // level 600-800 cycles longer the other way round).
    KgSnapLevel level = {0.f, 0.f, 0.f, 0.f};
    if (warp == 0) level = kg_snap_load_level(snap + b * SNAP_LEN);
    FusedWarpWeights wr = {};
    if (cache != nullptr && cache->preloaded && preloaded)
        wr = cache->w;
    else if (preloaded)
        wr = fused_load_weights(warp, lane, n_hid, w_g, b_g, w_t, b_t, w_h, b_h, p, c);
    const bool h_shared = cache != nullptr && cache->h_in_shared;
    const int helper0 = warps > 1 ? KG_WARP : 0;
    if (threadIdx.x == blockDim.x - 1) dt_row = dt[b];
    if ((int)threadIdx.x >= helper0)
        for (int k = threadIdx.x - helper0; k < n_hid; k += blockDim.x - helper0)
            h_old[k] = h_shared ? h_new[k] : h[b * n_hid + k];
    if (warp == 0) kg_snap_features_from(level, feat);
    KG_FUSED_STAMP(1)
    __syncthreads();
    KG_FUSED_STAMP(2)

    // Level 2: one warp per hidden unit, as cfc_step.
    if (preloaded) {
        // Each warp's partial sums of its unit's two pre-activations go to shared memory
        // ([lane][unit], padded: conflict-free both ways), and lane j of warp 0 sums unit j's
        // (fused_column_sum: kg_warp_sum's bits) and computes its new state: one warp runs the
        // transcendentals (430 cycles instead of 880 as lane 0 of 32 warps) and the sums take
        // 32 warps' shuffles off the multiprocessor's one shuffle unit (about 400 cycles less
        // than a kg_warp_sum per warp; scripts/probes/resident_latency.cu).
        __shared__ float part_g[KG_WARP][KG_WARP + 1], part_t[KG_WARP][KG_WARP + 1];
        if (warp < n_hid) fused_partials(wr, feat, h_old, lane, n_hid, &part_g[lane][warp], &part_t[lane][warp]);
        __syncthreads();
        KG_FUSED_STAMP(3)
        if (warp == 0 && lane < n_hid)
            h_new[lane] = cfc_new_state(fused_column_sum(part_g, lane) + wr.bgl,
                                        fused_column_sum(part_t, lane) + wr.btl, dt_row, h_old[lane]);
    } else {
        for (int j = warp; j < n_hid; j += warps) {
            float pg, pt;
            cfc_preacts(feat, h_old, w_g, w_t, 0, j, N_FEAT, n_hid, &pg, &pt);
            if (lane == 0) h_new[j] = cfc_new_state(pg + b_g[j], pt + b_t[j], dt_row, h_old[j]);
        }
    }
    KG_FUSED_STAMP(4)
    __syncthreads();
    KG_FUSED_STAMP(5)

    // Level 3: the state in place, and one warp per head / projection output.
    for (int k = threadIdx.x; k < n_hid; k += blockDim.x) h[b * n_hid + k] = h_new[k];
    if (preloaded) {
        if (warp < N_HORIZONS + N_PROJ)
            fused_write_output(b, warp, fused_dot(wr, h_new, lane, n_hid) + wr.bo, lane, probs, y);
        KG_FUSED_STAMP(6)
        return;
    }
    for (int o = warp; o < N_HORIZONS + N_PROJ; o += warps) {
        const float* row = o < N_HORIZONS ? w_h + o * n_hid : p + (o - N_HORIZONS) * n_hid;
        const float bias = o < N_HORIZONS ? b_h[o] : c[o - N_HORIZONS];
        fused_write_output(b, o, kg_dot_warp(h_new, row, n_hid) + bias, lane, probs, y);
    }
}
