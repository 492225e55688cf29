// train_forward: the train step's whole forward in one launch, one block per row b (the structure
// of perception_fused.cu, for the training batch):
//   1. warp 0: the features of snap [b] (kg_snap_features_row) into shared memory;
//   2. every warp, units j = warp, warp + n_warps, ...: cfc_step_save's unit from those features
//      and h0 [b]: h1 [b, j] (also kept in shared memory) and the four backward coefficients;
//      the block's threads copy the features to feat [b] (the backward reads them);
//   3. warps o = warp, warp + n_warps, ... < 5: the heads' logit and prob of horizon o.
// Two block barriers separate the phases, a third guards the shared rows before the next row.
//
// Same math, same bits: the pieces are the multi-node kernels' device functions called on the
// same values in the same lane layout (kg_snap_features_row; cfc_preacts, cfc_new_state,
// cfc_backward_coeffs; kg_dot_warp + bias, kg_sigmoid), so feat, h1, coeffs, logits and probs
// equal snap_feature_assemble, cfc_step_save and multi_horizon_heads bit for bit
// (tests/gpu/model_train_fused.rs). The rows a block reads back come from shared memory, never
// from a global buffer this launch writes.
//
// Layout (row-major, f32): snap [batch, 40], h0, h1 [batch, n_hid], w_g, w_t [n_hid, 45 + n_hid],
//   b_g, b_t [n_hid], dt [batch], w_h [5, n_hid], b_h [5], feat [batch, 45],
//   coeffs [4, batch, n_hid] (cfc_step_save's), logits, probs [batch, 5].
// Launch: grid = batch (blocks stride over the rows, so any grid works), block 1024 (any 1-D
//   block of whole warps: warps stride over the units and the horizons). 1 <= n_hid <=
//   TRAIN_FORWARD_MAX_HID, otherwise it writes nothing.
#include "cfc.cuh"
#include "snap_features.cuh"

#define TRAIN_FORWARD_MAX_HID 1024

extern "C" __global__ void __launch_bounds__(1024)
    train_forward(const float* __restrict__ snap, const float* __restrict__ h0,
                  const float* __restrict__ w_g, const float* __restrict__ b_g,
                  const float* __restrict__ w_t, const float* __restrict__ b_t,
                  const float* __restrict__ dt, const float* __restrict__ w_h,
                  const float* __restrict__ b_h, int batch, int n_hid, float* __restrict__ feat,
                  float* __restrict__ h1, float* __restrict__ coeffs, float* __restrict__ logits,
                  float* __restrict__ probs) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    if (batch < 0 || n_hid <= 0 || n_hid > TRAIN_FORWARD_MAX_HID) return;  // block-uniform
    __shared__ float x_row[N_FEAT];
    __shared__ float h_row[TRAIN_FORWARD_MAX_HID];
    const int warp = threadIdx.x >> 5;
    const int lane = threadIdx.x & 31;
    const int n_warps = blockDim.x >> 5;
    const int plane = batch * n_hid;  // < 2^31: the length of h1
    for (int b = blockIdx.x; b < batch; b += gridDim.x) {  // block-uniform
        if (warp == 0) kg_snap_features_row(snap + b * SNAP_LEN, x_row);
        __syncthreads();
        for (int f = threadIdx.x; f < N_FEAT; f += blockDim.x) feat[b * N_FEAT + f] = x_row[f];
        const float* h_old = h0 + b * n_hid;
        for (int j = warp; j < n_hid; j += n_warps) {  // warp-uniform
            float pg, pt;
            cfc_preacts(x_row, h_old, w_g, w_t, 0, j, N_FEAT, n_hid, &pg, &pt);
            if (lane == 0) {
                const int i = b * n_hid + j;
                pg += b_g[j];
                pt += b_t[j];
                const float h = h_old[j];
                const float h_new = cfc_new_state(pg, pt, dt[b], h);
                const CfcBackwardCoeffs c = cfc_backward_coeffs(pg, pt, dt[b], h);
                h_row[j] = h_new;
                h1[i] = h_new;
                coeffs[i] = c.a;
                coeffs[plane + i] = c.omt2;
                coeffs[2 * plane + i] = c.tmh;
                coeffs[3 * plane + i] = c.dlambda;
            }
        }
        __syncthreads();
        for (int o = warp; o < N_HORIZONS; o += n_warps) {  // warp-uniform
            const float logit = kg_dot_warp(h_row, w_h + o * n_hid, n_hid) + b_h[o];
            if (lane == 0) {
                logits[b * N_HORIZONS + o] = logit;
                probs[b * N_HORIZONS + o] = kg_sigmoid(logit);
            }
        }
        __syncthreads();  // every warp is done with x_row and h_row before the next row
    }
}
