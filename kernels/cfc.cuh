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

// What the backward needs of one unit besides the incoming gradient g = dL/dh_new, from its gate
// pre-activations (biases added), dt and the old state:
//   d_pre_g = g a (1 - target^2)                              = (g a) omt2
//   d_pre_t = g (target - h_old) dt exp(-lambda dt) sigmoid(pre_t) = (g tmh) dlambda
// One function for cfc_step_backward_gates (which recomputes the pre-activations) and
// cfc_step_save (which stores these four for the train step's fused backward), so both give the
// same bits.
struct CfcBackwardCoeffs {
    float a, omt2 /* 1 - target^2 */, tmh /* target - h_old */, dlambda;
};

__device__ __forceinline__ CfcBackwardCoeffs cfc_backward_coeffs(float pre_g, float pre_t, float dt,
                                                                 float h) {
    const float target = tanhf(pre_g);
    const float lambda = kg_softplus(pre_t);
    const float t = cfc_clamp_dt(dt);
    CfcBackwardCoeffs c;
    c.a = -expm1f(-lambda * t);
    c.omt2 = 1.f - target * target;
    c.tmh = target - h;
    // t * decay <= FLT_MAX (decay = exp(-lambda t) = 0 whenever lambda t overflows) and
    // sigmoid <= 1, so the time-constant factor is finite: the products using it can saturate
    // but never reach 0 * Inf.
    const float decay = expf(-lambda * t);  // da/dlambda = dt exp(-lambda dt)
    c.dlambda = (t * decay) * kg_sigmoid(pre_t);
    return c;
}
