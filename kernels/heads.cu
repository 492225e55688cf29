// Multi-horizon heads: logits = W_h h + b_h (N_HORIZONS = 5 horizons), probs = sigmoid(logits).
//
// Layout (row-major, f32): h [batch, n_hid], w_h [5, n_hid], b_h [5],
//   logits/probs [batch, 5], g_logits/g_probs [batch, 5], g_h [batch, n_hid], g_w_h [5, n_hid],
//   g_b_h [5].
//
// Backward takes the gradient of both outputs (pass zeros for an unused one; a BCE-with-logits
// loss only feeds g_logits) and the forward's probs (saved activation):
//   g_logit = g_logits + g_probs p (1 - p)
//   g_h += W_h^T g_logit,  g_w_h += sum_b g_logit h^T,  g_b_h += sum_b g_logit
// Gradient outputs are ACCUMULATED (+=): zero them before a step (see cfc_step.cu). No output
// may alias an input.
//
// Launches:
//   multi_horizon_heads           one warp per (b, o): block 128, grid = ceil(batch * 5 / 4)
//   multi_horizon_heads_backward  block 1024, two block-uniform roles (kg_linear_backward in
//       model_common.cuh: g_h one thread per element; g_w_h, g_b_h 32 outputs per block, the
//       block's 32 warps splitting the batch):
//       grid = ceil(batch * n_hid / 1024) + ceil(5 * (n_hid + 1) / 32)
// Deterministic (reductions in an order fixed by the launch shape, no atomics).
#include "model_common.cuh"

extern "C" __global__ void __launch_bounds__(128)
    multi_horizon_heads(const float* __restrict__ h, const float* __restrict__ w_h,
                        const float* __restrict__ b_h, int batch, int n_hid,
                        float* __restrict__ logits, float* __restrict__ probs) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    int i;
    float logit;
    if (!kg_linear_forward_warp<N_HORIZONS>(h, w_h, b_h, batch, n_hid, &i, &logit)) return;
    if ((threadIdx.x & 31) != 0) return;
    logits[i] = logit;
    probs[i] = kg_sigmoid(logit);
}

// The effective logit gradient, folding the probs path in.
struct HeadsGrad {
    const float* __restrict__ g_logits;
    const float* __restrict__ g_probs;
    const float* __restrict__ probs;
    __device__ __forceinline__ float operator()(int i) const {
        const float p = probs[i];
        return fmaf(g_probs[i], p * (1.f - p), g_logits[i]);
    }
};

extern "C" __global__ void __launch_bounds__(1024)
    multi_horizon_heads_backward(const float* __restrict__ h, const float* __restrict__ w_h,
                                 const float* __restrict__ probs,
                                 const float* __restrict__ g_logits,
                                 const float* __restrict__ g_probs, int batch, int n_hid,
                                 float* __restrict__ g_h, float* __restrict__ g_w_h,
                                 float* __restrict__ g_b_h) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    const HeadsGrad g{g_logits, g_probs, probs};
    kg_linear_backward<N_HORIZONS>(h, w_h, g, batch, n_hid, g_h, g_w_h, g_b_h);
}
