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
//   multi_horizon_heads_bce_backward  BCE with logits against `targets` fused into the backward
//       (the train step): the same two roles with g_logit = (sigmoid(z) - y) / (batch * 5) read
//       from logits and targets (bce.cu's gradient, never stored), and one more block after
//       them that writes the mean loss (bce.cu's loss, summed over this block instead of
//       bce.cu's): grid = ceil(batch * n_hid / 1024) + ceil(5 * (n_hid + 1) / 32) + 1.
//       Its gradients are OVERWRITTEN (=): the train step has one producer per gradient, so it
//       zeroes nothing. Bit-equal to bce_with_logits (block 256) then
//       multi_horizon_heads_backward with g_probs = 0 into zeroed buffers (up to the sign of a
//       zero), the loss included (the loss block sums in bce_with_logits' order).
//   multi_horizon_heads_bce_cfc_backward  the same with the CfC's gate step folded into the g_h
//       role (d_pre_g, d_pre_t from the coefficients cfc_step_save stored; see below): the train
//       step's one kernel between the forward and the CfC weight gradients. Same grid and block.
// Deterministic (reductions in an order fixed by the launch shape, no atomics).
#include "model_common.cuh"

// Block `block` of `multi_horizon_heads`: what a resident step runs (`unsafe(device_fn)`).
__device__ __forceinline__ void multi_horizon_heads_block(unsigned block, unsigned blocks,
                                                          const float* __restrict__ h,
                                                          const float* __restrict__ w_h,
                                                          const float* __restrict__ b_h, int batch,
                                                          int n_hid, float* __restrict__ logits,
                                                          float* __restrict__ probs) {
    (void)blocks;
    if (kg_not_whole_warps()) return;
    int i;
    float logit;
    if (!kg_linear_forward_warp<N_HORIZONS>(block, h, w_h, b_h, batch, n_hid, &i, &logit)) return;
    if ((threadIdx.x & 31) != 0) return;
    logits[i] = logit;
    probs[i] = kg_sigmoid(logit);
}

extern "C" __global__ void __launch_bounds__(128)
    multi_horizon_heads(const float* __restrict__ h, const float* __restrict__ w_h,
                        const float* __restrict__ b_h, int batch, int n_hid,
                        float* __restrict__ logits, float* __restrict__ probs) {
    kg_pdl_enter();
    multi_horizon_heads_block(blockIdx.x, gridDim.x, h, w_h, b_h, batch, n_hid, logits, probs);
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

// Threads of the loss block that sum (bce_with_logits' block in the model's launches).
#define HEADS_BCE_LOSS_THREADS 256

// The loss block of the fused kernels: loss[0] = mean BCE of logits against targets. The first
// HEADS_BCE_LOSS_THREADS threads sum, the others add zeros: with a block of at least 256 this is
// bce_with_logits' summation at its block of 256, bit for bit (the extra warps' partials are +0
// where bce's warp 0 reads 0 past its warps). Every thread of the block calls it.
__device__ __forceinline__ void heads_bce_loss_block(const float* __restrict__ logits,
                                                     const float* __restrict__ targets, int count,
                                                     float* __restrict__ loss) {
    const int threads = blockDim.x < HEADS_BCE_LOSS_THREADS ? (int)blockDim.x : HEADS_BCE_LOSS_THREADS;
    __shared__ double warp_partial[KG_WARP];
    double acc = 0.0;
    if ((int)threadIdx.x < threads) {
        for (int i = threadIdx.x; i < count; i += threads) acc += (double)kg_bce_term(logits[i], targets[i]);
    }
    const double total = kg_block_sum_f64_to_first(acc, warp_partial);
    if (threadIdx.x == 0) loss[0] = count > 0 ? (float)(total / (double)count) : 0.f;
}

// The logit gradient of the mean BCE-with-logits loss (bce.cu's, recomputed per use).
struct BceLogitGrad {
    const float* __restrict__ logits;
    const float* __restrict__ targets;
    float inv_count;
    __device__ __forceinline__ float operator()(int i) const {
        return kg_bce_grad(logits[i], targets[i], inv_count);
    }
};

extern "C" __global__ void __launch_bounds__(1024)
    multi_horizon_heads_bce_backward(const float* __restrict__ h, const float* __restrict__ w_h,
                                     const float* __restrict__ logits,
                                     const float* __restrict__ targets, int batch, int n_hid,
                                     float* __restrict__ loss, float* __restrict__ g_h,
                                     float* __restrict__ g_w_h, float* __restrict__ g_b_h) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    if (batch < 0 || n_hid < 0) return;  // no such tensors (the unsigned sizes below would wrap)
    const int count = batch * N_HORIZONS;  // the length of logits: below 2^31
    const unsigned nb_in = kg_blocks_for((unsigned)batch * (unsigned)n_hid, blockDim.x);
    const unsigned nb_w = kg_blocks_for((unsigned)N_HORIZONS * ((unsigned)n_hid + 1u), KG_WARP);
    if (blockIdx.x == nb_in + nb_w) {  // the loss block (block-uniform)
        heads_bce_loss_block(logits, targets, count, loss);
        return;
    }
    const BceLogitGrad g{logits, targets, kg_bce_inv_count(count)};
    kg_linear_backward<N_HORIZONS, BceLogitGrad, false>(h, w_h, g, batch, n_hid, g_h, g_w_h, g_b_h);
}

// multi_horizon_heads_bce_backward with the CfC's gate step folded into its g_h role (the train
// step): the heads' input h is the CfC's h_new, and instead of g_h = dL/dh_new that role writes
// the CfC pre-activation gradients from the coefficients cfc_step_save stored (coeffs
// [4, batch, n_hid]: a, 1 - target^2, target - h_old, dlambda; cfc.cuh):
//   g = sum_o W_h[o, k] g_logit[b, o];  d_pre_g = (g a) omt2;  d_pre_t = (g tmh) dlambda
// the same products as cfc_step_backward_gates, so the result is bit-equal to
// multi_horizon_heads_bce_backward then cfc_step_backward_pre. The weight role and the loss
// block are multi_horizon_heads_bce_backward's; grid and block too. Everything overwritten.
extern "C" __global__ void __launch_bounds__(1024)
    multi_horizon_heads_bce_cfc_backward(const float* __restrict__ h, const float* __restrict__ w_h,
                                         const float* __restrict__ logits,
                                         const float* __restrict__ targets,
                                         const float* __restrict__ coeffs, int batch, int n_hid,
                                         float* __restrict__ loss, float* __restrict__ d_pre_g,
                                         float* __restrict__ d_pre_t, float* __restrict__ g_w_h,
                                         float* __restrict__ g_b_h) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    if (batch < 0 || n_hid < 0) return;  // no such tensors (the unsigned sizes below would wrap)
    const int count = batch * N_HORIZONS;  // the length of logits: below 2^31
    const unsigned plane = (unsigned)batch * (unsigned)n_hid;
    const unsigned nb_in = kg_blocks_for(plane, blockDim.x);
    const unsigned nb_w = kg_blocks_for((unsigned)N_HORIZONS * ((unsigned)n_hid + 1u), KG_WARP);
    const BceLogitGrad g_logit{logits, targets, kg_bce_inv_count(count)};
    if (blockIdx.x < nb_in) {  // one thread per (b, k): the heads' g_h, then the CfC's gate step
        const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
        if (t >= plane) return;
        const int b = (int)(t / (unsigned)n_hid);
        const int k = (int)t - b * n_hid;
        float g = 0.f;
#pragma unroll
        for (int o = 0; o < N_HORIZONS; ++o) g = fmaf(w_h[o * n_hid + k], g_logit(b * N_HORIZONS + o), g);
        d_pre_g[t] = g * coeffs[t] * coeffs[plane + t];
        d_pre_t[t] = g * coeffs[2u * plane + t] * coeffs[3u * plane + t];
        return;
    }
    if (blockIdx.x == nb_in + nb_w) {
        heads_bce_loss_block(logits, targets, count, loss);
        return;
    }
    kg_linear_weight_tile<false>(blockIdx.x - nb_in, h, g_logit, batch, n_hid, N_HORIZONS, g_w_h, g_b_h);
}
