// perception_fused: Graph A's whole latency step in one kernel. For each row b: the features of
// snapshot `snap [b]`, one CfC step of the state `h [b]` with elapsed time `dt [b]`, then the
// multi-horizon heads (`probs [b, 5]`) and the projection (`y [b, 8]`) of the new state, which
// replaces `h [b]` in place.
//
// Why: at B = 1 the multi-node Graph A (graphs/perception.toml) is latency-bound: each level
// waits for the previous kernel's grid to finish and its writes to land. One block holds the
// whole row here (features in shared memory, the old and new state in shared memory), so the
// levels are __syncthreads apart, and the state needs no carry copy: the block has read all of
// `h [b]` before it overwrites it.
//
// Same math, same bits: the pieces are the multi-node kernels' own device functions
// (snap_features.cuh, cfc.cuh, kg_dot_warp), called with the same lane layout, so probs, y and
// the new state equal the multi-node graph's bit for bit (a GPU test checks it).
//
// Layout (row-major, f32): snap [batch, 40], dt [batch], h [batch, n_hid],
//   w_g, w_t [n_hid, 45 + n_hid], b_g, b_t [n_hid], w_h [5, n_hid], b_h [5], p [8, n_hid],
//   c [8], probs [batch, 5], y [batch, 8]. `snap`, `dt`, `probs` and `y` may be mapped pinned
//   host memory (the latency graph's zero-copy buffers). `h` must not alias any other buffer.
// Launch: one block per row, grid = batch, block = 1024 (any 1-D multiple of 32 works: warps
//   stride over the hidden units and the 13 outputs). 1 <= n_hid <= FUSED_MAX_HID; for any
//   other n_hid, or another block shape, the kernel writes nothing (it never reads or writes
//   out of bounds, and never loops forever).
#include "cfc.cuh"
#include "snap_features.cuh"

#define FUSED_MAX_HID 1024

extern "C" __global__ void __launch_bounds__(1024)
    perception_fused(const float* __restrict__ snap, const float* __restrict__ dt,
                     float* __restrict__ h, const float* __restrict__ w_g,
                     const float* __restrict__ b_g, const float* __restrict__ w_t,
                     const float* __restrict__ b_t, const float* __restrict__ w_h,
                     const float* __restrict__ b_h, const float* __restrict__ p,
                     const float* __restrict__ c, int batch, int n_hid,
                     float* __restrict__ probs, float* __restrict__ y) {
    kg_pdl_enter();
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

    // Level 1: warp 0 computes the features while the other warps load the old state and the
    // last thread dt (with one warp, warp 0 does all three), so the reads of host memory are in
    // flight together.
    const int helper0 = warps > 1 ? KG_WARP : 0;
    if (threadIdx.x == blockDim.x - 1) dt_row = dt[b];
    if ((int)threadIdx.x >= helper0)
        for (int k = threadIdx.x - helper0; k < n_hid; k += blockDim.x - helper0)
            h_old[k] = h[b * n_hid + k];
    if (warp == 0) kg_snap_features_row(snap + b * SNAP_LEN, feat);
    __syncthreads();

    // Level 2: one warp per hidden unit, as cfc_step.
    for (int j = warp; j < n_hid; j += warps) {
        float pg, pt;
        cfc_preacts(feat, h_old, w_g, w_t, 0, j, N_FEAT, n_hid, &pg, &pt);
        if (lane == 0) h_new[j] = cfc_new_state(pg + b_g[j], pt + b_t[j], dt_row, h_old[j]);
    }
    __syncthreads();

    // Level 3: the state in place, and one warp per head / projection output.
    for (int k = threadIdx.x; k < n_hid; k += blockDim.x) h[b * n_hid + k] = h_new[k];
    for (int o = warp; o < N_HORIZONS + N_PROJ; o += warps) {
        if (o < N_HORIZONS) {
            const float logit = kg_dot_warp(h_new, w_h + o * n_hid, n_hid) + b_h[o];
            if (lane == 0) probs[b * N_HORIZONS + o] = kg_sigmoid(logit);
        } else {
            const int q = o - N_HORIZONS;
            const float v = kg_dot_warp(h_new, p + q * n_hid, n_hid) + c[q];
            if (lane == 0) y[b * N_PROJ + q] = v;
        }
    }
}
