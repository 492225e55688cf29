// The CfC step's per-unit pieces (math in cfc_step.cu), shared with perception_fused.cu so both
// compute the same bits.
#pragma once
#include "model_common.cuh"

// Pre-activations W_g z and W_t z (without bias) for row b, unit j, summed over the warp.
// Shared by forward and backward so the backward sees bit-identical pre-activations.
__device__ __forceinline__ void cfc_preacts(const float* __restrict__ x,
                                            const float* __restrict__ h_old,
                                            const float* __restrict__ w_g,
                                            const float* __restrict__ w_t, int b, int j,
                                            int n_in, int n_hid, float* pre_g, float* pre_t) {
    const int lane = threadIdx.x & 31;
    const int k_all = n_in + n_hid;
    const float* xr = x + b * n_in;
    const float* hr = h_old + b * n_hid;
    const float* wg = w_g + j * k_all;
    const float* wt = w_t + j * k_all;
    float sg = 0.f, st = 0.f;
    for (int k = lane; k < n_in; k += KG_WARP) {
        const float v = xr[k];
        sg = fmaf(wg[k], v, sg);
        st = fmaf(wt[k], v, st);
    }
    for (int k = lane; k < n_hid; k += KG_WARP) {
        const float v = hr[k];
        sg = fmaf(wg[n_in + k], v, sg);
        st = fmaf(wt[n_in + k], v, st);
    }
    *pre_g = kg_warp_sum(sg);
    *pre_t = kg_warp_sum(st);
}

__device__ __forceinline__ float cfc_clamp_dt(float dt) { return fminf(fmaxf(dt, 0.f), KG_FLT_MAX); }

// The new state of one unit from its gate pre-activations (biases added) and the old state.
__device__ __forceinline__ float cfc_new_state(float pre_g, float pre_t, float dt, float h) {
    const float target = tanhf(pre_g);
    const float lambda = kg_softplus(pre_t);
    // a = 1 - exp(-lambda dt) via expm1 (accurate for small lambda dt; exactly 0 at dt = 0).
    const float a = -expm1f(-lambda * cfc_clamp_dt(dt));
    return fmaf(a, target - h, h);
}
