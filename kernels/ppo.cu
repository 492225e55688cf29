// PPO (proximal policy optimisation) kernels: a small tanh MLP over a parameter arena, a softmax
// policy head over discrete actions, the clipped surrogate loss with value loss and entropy
// bonus (forward and backward), generalised advantage estimation (GAE), advantage
// normalisation, the minibatch gather and the per-minibatch bookkeeping of the update graph
// (graphs/ppo_update.toml). Declared in src/ppo.rs.
//
// ---- Conventions --------------------------------------------------------------------------
// - f32 row-major tensors, int sizes; every tensor stays below 2^31 elements (the extents are
//   computed in int, and a checked launch refuses an overflow), so element indices are 32-bit.
// - Negative sizes or offsets make a kernel do nothing (an extent like batch * n_out can be
//   positive for two negative sizes; the kernels refuse those instead of indexing with them).
// - Parameter ARENA: every weight and bias lives in one flat buffer `params`; a linear layer
//   with n_in inputs and n_out outputs at offset `w_off` owns
//       W [n_out, n_in] at params[w_off ...],  b [n_out] at params[w_off + n_out * n_in ...],
//   n_out * (n_in + 1) floats. Its gradient lives at the same offsets of `grads`. One AdamW
//   launch then updates every tensor (adamw.cu over the whole arena).
// - Gradients are OVERWRITTEN (=), not accumulated: in the PPO update each gradient has exactly
//   one producer (actor and critic are separate networks), so no zeroing kernels are needed.
//   (The reference model's kernels accumulate; these do not.)
// - Every reduction runs in a fixed order (no atomics): results are bitwise reproducible.
// - Every kernel begins with the programmatic-dependent-launch trigger + wait of
//   model_common.cuh, so any of them may be launched with PDL after any other kernel.
//
// ---- Kernels and launch shapes ------------------------------------------------------------
//   ppo_linear_forward            y = act(W x + b); one thread per (b, o):
//                                 block 256, grid ceil(batch * n_out / 256)
//   ppo_linear_backward           g_x = W^T g_pre, g_W = sum_b g_pre x^T, g_b = sum_b g_pre,
//                                 g_pre = g_y * act'(y); two block-uniform roles (g_x one
//                                 thread per element; the weights 32 per block, the block's
//                                 warps splitting the batch): block 256 (whole warps, at most
//                                 1024), grid ceil(batch * n_in / 256) + ceil(n_out * (n_in + 1) / 32)
//   ppo_linear_backward_params    the same without g_x (the first layer):
//                                 block 256, grid ceil(n_out * (n_in + 1) / 32)
//   ppo_policy_head               log-softmax, softmax and entropy per row; one warp per row:
//                                 block 128, grid ceil(batch / 4)
//   ppo_loss_forward              per-sample loss + the 8 means of `stats`; ONE block:
//                                 grid 1, block 256 (any multiple of 32 up to 1024)
//   ppo_loss_backward             d mean-loss / d logits and / d values; one warp per row:
//                                 block 128, grid ceil(batch / 4)
//   ppo_gae                       reverse scan over T steps, one thread per environment:
//                                 block 256, grid ceil(n_envs / 256)
//   ppo_normalize_advantages      (a - mean) / (std + eps) over the batch; ONE block:
//                                 grid 1, block 256 (any multiple of 32 up to 1024)
//   ppo_gather_minibatch          rows perm[mb * mb_size + i] of the rollout; one thread per
//                                 (i, column), n_obs + 1 columns:
//                                 block 256, grid ceil(mb_size * (n_obs + 1) / 256)
//   ppo_minibatch_begin           counters and the AdamW schedule; grid 1, block 32
//   ppo_heads_loss_backward       the actor's and the critic's last layers, the policy head and
//                                 the loss backward of a row in one warp (the update graph's
//                                 fused node): block 128, grid ceil(batch / 4)
// The one-block kernels leave every block but block 0 idle; the per-item kernels return for
// items past the end, so a larger grid is harmless, a smaller one leaves items unwritten.
#include "model_common.cuh"

#define PPO_ACT_TANH 1   // act argument of the linear kernels: 1 = tanh, anything else = identity
#define PPO_N_STATS 8    // ppo_loss_forward's stats: see below

// ---- helpers -------------------------------------------------------------------------------

__device__ __forceinline__ float ppo_activate(float v, int act) {
    return act == PPO_ACT_TANH ? tanhf(v) : v;
}

// d act / d pre-activation, from the activation's OUTPUT y (tanh' = 1 - tanh^2).
__device__ __forceinline__ float ppo_activation_slope(float y, int act) {
    return act == PPO_ACT_TANH ? fmaf(-y, y, 1.f) : 1.f;
}

__device__ __forceinline__ float ppo_warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(KG_FULL_MASK, v, o));
    return v;
}

// Sum of v over the block, returned to EVERY thread (identical bits in all of them: each warp
// sums the same warp partials in the same order). All threads of the block must call it, the
// block size must be a multiple of 32, and `scratch` holds 32 doubles (reused across calls: the
// leading barrier keeps a previous call's readers ahead of this call's writers).
__device__ __forceinline__ double ppo_block_sum(double v, double* scratch) {
    v = kg_warp_sum_f64(v);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    const int n_warps = (int)(blockDim.x >> 5);
    double r = lane < n_warps ? scratch[lane] : 0.0;
    return kg_warp_sum_f64(r);
}

// ---- linear layers over the arena -----------------------------------------------------------
//
// Layout: x [batch, n_in], y [batch, n_out], params/grads: the arena (see the top).

// W[o] . x_row + b[o] of the layer at w_off (pre-activation of output o), by one thread: two
// chains for ILP, combined in a fixed order. Shared by ppo_linear_forward and the fused heads
// kernel (ppo_heads_loss_backward) so both compute the same bits.
__device__ __forceinline__ float ppo_linear_unit(const float* __restrict__ params,
                                                 const float* __restrict__ xr, int w_off, int n_in,
                                                 int n_out, int o) {
    const float* __restrict__ w = params + w_off + o * n_in;
    float s0 = 0.f, s1 = 0.f;
    int k = 0;
    for (; k + 1 < n_in; k += 2) {
        s0 = fmaf(w[k], xr[k], s0);
        s1 = fmaf(w[k + 1], xr[k + 1], s1);
    }
    if (k < n_in) s0 = fmaf(w[k], xr[k], s0);
    return (s0 + s1) + params[w_off + n_out * n_in + o];
}

extern "C" __global__ void __launch_bounds__(256)
    ppo_linear_forward(const float* __restrict__ params, const float* __restrict__ x, int w_off,
                       int batch, int n_in, int n_out, int act, float* __restrict__ y) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    if (w_off < 0 || batch < 0 || n_in < 0 || n_out <= 0) return;
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)batch * n_out) return;
    const int i = (int)t;  // < batch * n_out < 2^31
    const int b = i / n_out;
    const int o = i - b * n_out;
    y[i] = ppo_activate(ppo_linear_unit(params, x + b * n_in, w_off, n_in, n_out, o), act);
}

// The pre-activation gradient g_pre = g_y act'(y) of element i of [batch, n_out].
struct PpoPreGrad {
    const float* __restrict__ g_y;
    const float* __restrict__ y;
    int act;
    __device__ __forceinline__ float operator()(int i) const {
        return g_y[i] * ppo_activation_slope(y[i], act);
    }
};

// Role "weights" of the backward, from block `first_block` on: 32 outputs t = o (n_in + 1) + k
// per block, one per lane, (o, k < n_in) -> g_W[o, k], (o, k = n_in) -> g_b[o] (the arena's
// layout: W [n_out, n_in] then b [n_out]), each sum_b g_pre[b, o] x[b, k] (x = 1 for the bias);
// the block's warps split the batch and their partial sums are added in shared memory in a
// fixed order (kg_linear_weight_tile, model_common.cuh): deterministic for a block size, and no
// thread walks the whole batch alone. Overwritten.
__device__ __forceinline__ void ppo_linear_backward_weights(
    const float* __restrict__ x, const float* __restrict__ y, const float* __restrict__ g_y,
    int w_off, int batch, int n_in, int n_out, int act, float* __restrict__ grads,
    unsigned first_block) {
    const PpoPreGrad g{g_y, y, act};
    kg_linear_weight_tile<false>(blockIdx.x - first_block, x, g, batch, n_in, n_out,
                                 grads + w_off, grads + w_off + n_out * n_in);
}

// Backward of y = act(W x + b) given g_y (the gradient w.r.t. the OUTPUT y) and the forward's y.
// Blocks [0, nb_in), nb_in = ceil(batch * n_in / blockDim.x): one thread per (b, k),
//     g_x[b, k] = sum_o W[o, k] g_y[b, o] act'(y[b, o]);
// the following blocks: ppo_linear_backward_weights. All outputs overwritten.
extern "C" __global__ void __launch_bounds__(256)
    ppo_linear_backward(const float* __restrict__ params, const float* __restrict__ x,
                        const float* __restrict__ y, const float* __restrict__ g_y, int w_off,
                        int batch, int n_in, int n_out, int act, float* __restrict__ g_x,
                        float* __restrict__ grads) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    if (w_off < 0 || batch < 0 || n_in < 0 || n_out <= 0) return;
    const long long n_x = (long long)batch * n_in;
    const unsigned nb_in = (unsigned)((n_x + blockDim.x - 1) / blockDim.x);
    if (blockIdx.x < nb_in) {
        const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
        if (t >= n_x) return;
        const int i = (int)t;
        const int b = i / n_in;
        const int k = i - b * n_in;
        const float* __restrict__ w = params + w_off;
        float s = 0.f;
        for (int o = 0; o < n_out; ++o) {
            const int r = b * n_out + o;
            s = fmaf(w[o * n_in + k], g_y[r] * ppo_activation_slope(y[r], act), s);
        }
        g_x[i] = s;
        return;
    }
    ppo_linear_backward_weights(x, y, g_y, w_off, batch, n_in, n_out, act, grads, nb_in);
}

// ppo_linear_backward without g_x: for a first layer, whose input needs no gradient.
extern "C" __global__ void __launch_bounds__(256)
    ppo_linear_backward_params(const float* __restrict__ x, const float* __restrict__ y,
                               const float* __restrict__ g_y, int w_off, int batch, int n_in,
                               int n_out, int act, float* __restrict__ grads) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    if (w_off < 0 || batch < 0 || n_in < 0 || n_out <= 0) return;
    ppo_linear_backward_weights(x, y, g_y, w_off, batch, n_in, n_out, act, grads, 0u);
}

// ---- softmax policy head -------------------------------------------------------------------
//
// logits, log_probs, probs [batch, n_act], entropy [batch]. Per row, with m = max_j z_j and
// s = sum_j exp(z_j - m):  log_probs_j = (z_j - m) - log s,  probs_j = exp(log_probs_j),
// entropy = -sum_j probs_j log_probs_j (terms with probs_j = 0 count 0). One warp per row,
// lanes strided over the actions (any n_act >= 1), butterfly reductions: deterministic.
extern "C" __global__ void __launch_bounds__(128)
    ppo_policy_head(const float* __restrict__ logits, int batch, int n_act,
                    float* __restrict__ log_probs, float* __restrict__ probs,
                    float* __restrict__ entropy) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    if (batch < 0 || n_act <= 0) return;
    const long long gw = kg_global_warp();
    if (gw >= batch) return;
    const int row = (int)gw;
    const int lane = threadIdx.x & 31;
    const float* __restrict__ z = logits + row * n_act;
    float m = __int_as_float(0xff800000);  // -inf (no math.h: NVRTC compiles this as-is)
    for (int j = lane; j < n_act; j += KG_WARP) m = fmaxf(m, z[j]);
    m = ppo_warp_max(m);
    float s = 0.f;
    for (int j = lane; j < n_act; j += KG_WARP) s += expf(z[j] - m);
    const float log_s = logf(kg_warp_sum(s));
    float h = 0.f;
    for (int j = lane; j < n_act; j += KG_WARP) {
        const float lp = (z[j] - m) - log_s;
        const float p = expf(lp);
        log_probs[row * n_act + j] = lp;
        probs[row * n_act + j] = p;
        if (p > 0.f) h = fmaf(-p, lp, h);
    }
    h = kg_warp_sum(h);
    if (lane == 0) entropy[row] = h;
}

// ---- the PPO loss --------------------------------------------------------------------------
//
// Per sample i, with a = actions[i], ratio = exp(log_probs[i, a] - old_log_probs[i]),
// A = advantages[i], eps = clip_eps:
//   policy  = -min(ratio A, clip(ratio, 1 - eps, 1 + eps) A)
//   value   = 0.5 (values[i] - returns[i])^2
//   loss_i  = policy + vf_coef value - ent_coef entropy[i]
// The reduced loss is the batch mean. Its gradient, per sample (1/batch of the per-sample one):
//   d policy / d log pi(a) = -ratio A when the unclipped term is the minimum (inside the clip
//                            range both are equal), 0 when the clipped one is strictly smaller
//                            (the clipped side: ratio > 1 + eps with A > 0, ratio < 1 - eps
//                            with A < 0);
//   d log pi(a) / d z_j = [j = a] - p_j;   d entropy / d z_j = -p_j (log p_j + entropy);
//   d loss_i / d values[i] = vf_coef (values[i] - returns[i]).
// An action outside [0, n_act) makes the sample's loss and gradient NaN (never an
// out-of-bounds read). NaN inputs propagate (the min and the clip are written so they do).
struct PpoTerms {
    float ratio, log_ratio, policy, coef /* d policy / d log pi(a) */, vdiff, value, total;
    bool clipped;  // |ratio - 1| > eps
};

// The terms of one sample from its values: lp = log pi(a) (NaN for an action out of range),
// its entropy, value, old log-prob, advantage and return.
__device__ __forceinline__ PpoTerms ppo_terms_of(float lp, float entropy, float value,
                                                 float old_log_prob, float adv, float ret,
                                                 float clip_eps, float vf_coef, float ent_coef) {
    PpoTerms t;
    t.log_ratio = lp - old_log_prob;
    t.ratio = expf(t.log_ratio);
    const float lo = 1.f - clip_eps, hi = 1.f + clip_eps;
    const float c = t.ratio < lo ? lo : (t.ratio > hi ? hi : t.ratio);  // NaN stays NaN
    const float unclipped = t.ratio * adv;
    const float clipped = c * adv;
    const bool clipped_side = clipped < unclipped;  // the min is the clipped term (strictly)
    t.policy = clipped_side ? -clipped : -unclipped;
    t.coef = clipped_side ? 0.f : -unclipped;
    t.vdiff = value - ret;
    t.value = 0.5f * t.vdiff * t.vdiff;
    t.total = fmaf(-ent_coef, entropy, fmaf(vf_coef, t.value, t.policy));
    t.clipped = fabsf(t.ratio - 1.f) > clip_eps;
    return t;
}

__device__ __forceinline__ PpoTerms ppo_terms(const float* __restrict__ log_probs,
                                              const float* __restrict__ entropy,
                                              const float* __restrict__ values,
                                              const int* __restrict__ actions,
                                              const float* __restrict__ old_log_probs,
                                              const float* __restrict__ advantages,
                                              const float* __restrict__ returns, float clip_eps,
                                              float vf_coef, float ent_coef, int n_act, int i) {
    const int a = actions[i];
    const float lp = (a >= 0 && a < n_act) ? log_probs[i * n_act + a] : __int_as_float(0x7fc00000);
    return ppo_terms_of(lp, entropy[i], values[i], old_log_probs[i], advantages[i], returns[i],
                        clip_eps, vf_coef, ent_coef);
}

// Forward: sample_loss[i] = loss_i (overwritten) and the batch means, in f64, of
//   stats = [loss, policy, value (without vf_coef), entropy, approx_kl, clip_fraction,
//            ratio, advantage]
// approx_kl = (ratio - 1) - log ratio (>= 0), clip_fraction = share of |ratio - 1| > eps.
// Layout: log_probs [batch, n_act]; entropy, values, actions, old_log_probs, advantages,
// returns, sample_loss [batch]; stats [8]. ONE block (see the top); each thread sums its
// strided samples in order, then ppo_block_sum: bitwise reproducible for a given block size.
extern "C" __global__ void __launch_bounds__(1024)
    ppo_loss_forward(const float* __restrict__ log_probs, const float* __restrict__ entropy,
                     const float* __restrict__ values, const int* __restrict__ actions,
                     const float* __restrict__ old_log_probs,
                     const float* __restrict__ advantages, const float* __restrict__ returns,
                     float clip_eps, float vf_coef, float ent_coef, int batch, int n_act,
                     float* __restrict__ sample_loss, float* __restrict__ stats) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    __shared__ double scratch[32];
    if (blockIdx.x != 0 || batch < 0 || n_act <= 0) return;
    double acc[PPO_N_STATS];
#pragma unroll
    for (int s = 0; s < PPO_N_STATS; ++s) acc[s] = 0.0;
    for (int i = threadIdx.x; i < batch; i += blockDim.x) {
        const PpoTerms t = ppo_terms(log_probs, entropy, values, actions, old_log_probs, advantages,
                                     returns, clip_eps, vf_coef, ent_coef, n_act, i);
        sample_loss[i] = t.total;
        acc[0] += (double)t.total;
        acc[1] += (double)t.policy;
        acc[2] += (double)t.value;
        acc[3] += (double)entropy[i];
        acc[4] += (double)((t.ratio - 1.f) - t.log_ratio);
        acc[5] += t.clipped ? 1.0 : 0.0;
        acc[6] += (double)t.ratio;
        acc[7] += (double)advantages[i];
    }
    const double inv = batch > 0 ? 1.0 / (double)batch : 0.0;
#pragma unroll
    for (int s = 0; s < PPO_N_STATS; ++s) {
        const double total = ppo_block_sum(acc[s], scratch);
        if (threadIdx.x == 0) stats[s] = (float)(total * inv);
    }
}

// Backward of the batch-mean loss: g_logits [batch, n_act], g_values [batch] (overwritten).
// Takes the policy head's log_probs, probs and entropy. One warp per row.
extern "C" __global__ void __launch_bounds__(128)
    ppo_loss_backward(const float* __restrict__ log_probs, const float* __restrict__ probs,
                      const float* __restrict__ entropy, const float* __restrict__ values,
                      const int* __restrict__ actions, const float* __restrict__ old_log_probs,
                      const float* __restrict__ advantages, const float* __restrict__ returns,
                      float clip_eps, float vf_coef, float ent_coef, int batch, int n_act,
                      float* __restrict__ g_logits, float* __restrict__ g_values) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    if (batch <= 0 || n_act <= 0) return;
    const long long gw = kg_global_warp();
    if (gw >= batch) return;
    const int row = (int)gw;
    const int lane = threadIdx.x & 31;
    const PpoTerms t = ppo_terms(log_probs, entropy, values, actions, old_log_probs, advantages,
                                 returns, clip_eps, vf_coef, ent_coef, n_act, row);
    const float inv_b = 1.f / (float)batch;
    const int a = actions[row];
    const float h = entropy[row];
    for (int j = lane; j < n_act; j += KG_WARP) {
        const float p = probs[row * n_act + j];
        const float lp = log_probs[row * n_act + j];
        const float g_policy = t.coef * ((j == a ? 1.f : 0.f) - p);
        const float g_entropy = p > 0.f ? p * (lp + h) : 0.f;  // = -d entropy / d z_j
        g_logits[row * n_act + j] = inv_b * fmaf(ent_coef, g_entropy, g_policy);
    }
    if (lane == 0) g_values[row] = inv_b * (vf_coef * t.vdiff);
}

// The last layers, the policy head and the loss backward of one row in one warp (the PPO
// update's fused node; 1 <= n_act <= 31, otherwise it writes nothing):
//   lanes o < n_act: logits[row, o] = the actor's last layer (identity; ppo_linear_unit);
//   lane n_act:      values[row]    = the critic's last layer (identity);
//   then ppo_policy_head's softmax, log-softmax and entropy on the lanes' logits, and
//   ppo_loss_backward's g_logits, g_values from them.
// Every value the warp reuses stays in registers (shuffled between lanes): nothing written by
// this launch is read back. Same operations in the same order as ppo_linear_forward (act 0),
// ppo_policy_head and ppo_loss_backward, so the outputs are theirs bit for bit
// (tests/gpu/ppo_update.rs). Layout: actor/critic arenas with the last layers at a_off / c_off
// (n_act x n_hid and 1 x n_hid), a_h1, c_h1 [batch, n_hid]; logits, log_probs, probs, g_logits
// [batch, n_act]; entropy, values, g_values and the per-sample inputs [batch].
// Launch: one warp per row, block 128, grid ceil(batch / 4).
extern "C" __global__ void __launch_bounds__(128)
    ppo_heads_loss_backward(const float* __restrict__ actor, const float* __restrict__ a_h1,
                            int a_off, const float* __restrict__ critic,
                            const float* __restrict__ c_h1, int c_off,
                            const int* __restrict__ actions,
                            const float* __restrict__ old_log_probs,
                            const float* __restrict__ advantages,
                            const float* __restrict__ returns, float clip_eps, float vf_coef,
                            float ent_coef, int batch, int n_hid, int n_act,
                            float* __restrict__ logits, float* __restrict__ log_probs,
                            float* __restrict__ probs, float* __restrict__ entropy,
                            float* __restrict__ values, float* __restrict__ g_logits,
                            float* __restrict__ g_values) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    if (batch <= 0 || n_hid < 0 || n_act <= 0 || n_act >= KG_WARP || a_off < 0 || c_off < 0) return;
    const long long gw = kg_global_warp();
    if (gw >= batch) return;  // warp-uniform
    const int row = (int)gw;
    const int lane = threadIdx.x & 31;
    const bool act_lane = lane < n_act;
    // The layers: lane o < n_act an actor logit, lane n_act the critic's value.
    float z = 0.f;
    if (act_lane) z = ppo_linear_unit(actor, a_h1 + row * n_hid, a_off, n_hid, n_act, lane);
    else if (lane == n_act) z = ppo_linear_unit(critic, c_h1 + row * n_hid, c_off, n_hid, 1, 0);
    const float value = __shfl_sync(KG_FULL_MASK, z, n_act);
    if (act_lane) logits[row * n_act + lane] = z;
    if (lane == 0) values[row] = value;
    // ppo_policy_head's row (one action per lane).
    float m = __int_as_float(0xff800000);  // -inf
    if (act_lane) m = fmaxf(m, z);
    m = ppo_warp_max(m);
    float s = 0.f;
    if (act_lane) s += expf(z - m);
    const float log_s = logf(kg_warp_sum(s));
    float h = 0.f, lp = 0.f, p = 0.f;
    if (act_lane) {
        lp = (z - m) - log_s;
        p = expf(lp);
        log_probs[row * n_act + lane] = lp;
        probs[row * n_act + lane] = p;
        if (p > 0.f) h = fmaf(-p, lp, h);
    }
    h = kg_warp_sum(h);
    if (lane == 0) entropy[row] = h;
    // ppo_loss_backward's row.
    const int a = actions[row];
    const float lp_a = __shfl_sync(KG_FULL_MASK, lp, (a >= 0 && a < n_act) ? a : 0);
    const PpoTerms t = ppo_terms_of((a >= 0 && a < n_act) ? lp_a : __int_as_float(0x7fc00000), h,
                                    value, old_log_probs[row], advantages[row], returns[row],
                                    clip_eps, vf_coef, ent_coef);
    const float inv_b = 1.f / (float)batch;
    if (act_lane) {
        const float g_policy = t.coef * ((lane == a ? 1.f : 0.f) - p);
        const float g_entropy = p > 0.f ? p * (lp + h) : 0.f;  // = -d entropy / d z_j
        g_logits[row * n_act + lane] = inv_b * fmaf(ent_coef, g_entropy, g_policy);
    }
    if (lane == 0) g_values[row] = inv_b * (vf_coef * t.vdiff);
}

// ---- generalised advantage estimation ----------------------------------------------------
//
// Rollout of t_steps steps for n_envs environments, time-major: rewards, dones, advantages,
// returns [t_steps, n_envs]; values [t_steps + 1, n_envs] (row t_steps: the value of the state
// after the last step, the bootstrap). dones[t, e] = 1 when the episode ended with step t (then
// nothing after it is bootstrapped), 0 otherwise. Per environment, for t = T-1 down to 0:
//   nonterminal = 1 - dones[t]
//   delta_t = rewards[t] + gamma nonterminal values[t + 1] - values[t]
//   A_t     = delta_t + gamma lambda nonterminal A_{t+1}      (A_T = 0)
//   returns_t = A_t + values[t]
// lambda = 0 gives the one-step TD error, gamma = 0 gives rewards - values. No backward.
// One thread per environment (a sequential scan: deterministic).
extern "C" __global__ void __launch_bounds__(256)
    ppo_gae(const float* __restrict__ rewards, const float* __restrict__ values,
            const float* __restrict__ dones, float gamma, float lambda, int t_steps, int n_envs,
            float* __restrict__ advantages, float* __restrict__ returns) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    if (t_steps < 0 || n_envs < 0) return;
    const long long e64 = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e64 >= n_envs) return;
    const int e = (int)e64;
    const float gl = gamma * lambda;
    float last = 0.f;
    for (int t = t_steps - 1; t >= 0; --t) {
        const int i = t * n_envs + e;
        const float nonterminal = 1.f - dones[i];
        const float v = values[i];
        const float delta = fmaf(gamma, nonterminal * values[i + n_envs], rewards[i]) - v;
        last = fmaf(gl * nonterminal, last, delta);
        advantages[i] = last;
        returns[i] = last + v;
    }
}

// ---- advantage normalisation ---------------------------------------------------------------
//
// out[i] = (adv[i] - mean) / (std + eps) over the n values, std the unbiased (n - 1) standard
// deviation (PyTorch's Tensor.std; 0 when n = 1), two passes in f64. ONE block (see the top).
extern "C" __global__ void __launch_bounds__(1024)
    ppo_normalize_advantages(const float* __restrict__ adv, int n, float eps,
                             float* __restrict__ out) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    __shared__ double scratch[32];
    if (blockIdx.x != 0 || n <= 0) return;
    double s = 0.0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) s += (double)adv[i];
    const double mean = ppo_block_sum(s, scratch) / (double)n;
    double q = 0.0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const double d = (double)adv[i] - mean;
        q = fma(d, d, q);
    }
    const double var = n > 1 ? ppo_block_sum(q, scratch) / (double)(n - 1) : 0.0;
    const double inv = 1.0 / (sqrt(var) + (double)eps);
    for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = (float)(((double)adv[i] - mean) * inv);
}

// ---- minibatches ---------------------------------------------------------------------------
//
// Row i of minibatch k = mb_sel[0] is rollout row perm[(k * mb_size + i) mod n_perm]: obs
// [n, n_obs] -> mb_obs [mb_size, n_obs]; actions, old_log_probs, advantages, returns [n] ->
// mb_* [mb_size]. perm holds epochs * n indices (one shuffle of 0..n per epoch). An index
// outside [0, n) gives a zero row (action 0, advantage 0). One thread per (i, c), c <= n_obs:
// c < n_obs copies obs, c = n_obs copies the four per-sample values.
extern "C" __global__ void __launch_bounds__(256)
    ppo_gather_minibatch(const int* __restrict__ perm, const int* __restrict__ mb_sel,
                         const float* __restrict__ obs, const int* __restrict__ actions,
                         const float* __restrict__ old_log_probs,
                         const float* __restrict__ advantages, const float* __restrict__ returns,
                         int n, int n_obs, int n_perm, int mb_size, float* __restrict__ mb_obs,
                         int* __restrict__ mb_actions, float* __restrict__ mb_old_log_probs,
                         float* __restrict__ mb_advantages, float* __restrict__ mb_returns) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    if (n < 0 || n_obs < 0 || n_perm <= 0 || mb_size < 0) return;
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)mb_size * (n_obs + 1)) return;
    const int i = (int)(t / (n_obs + 1));
    const int c = (int)(t - (long long)i * (n_obs + 1));
    long long pos = ((long long)mb_sel[0] * mb_size + i) % n_perm;
    if (pos < 0) pos += n_perm;
    const int src = perm[pos];
    const bool valid = src >= 0 && src < n;
    if (c < n_obs) {
        mb_obs[i * n_obs + c] = valid ? obs[src * n_obs + c] : 0.f;
    } else {
        mb_actions[i] = valid ? actions[src] : 0;
        mb_old_log_probs[i] = valid ? old_log_probs[src] : 0.f;
        mb_advantages[i] = valid ? advantages[src] : 0.f;
        mb_returns[i] = valid ? returns[src] : 0.f;
    }
}

// The first node of a minibatch update: counters = [minibatch k, AdamW step t] (state kept across
// replays). Reads k into mb_sel[0] and advances it, advances t, and writes the AdamW schedule
// [lr, 1 - beta1^t, 1 - beta2^t] (adamw.cu's adamw_scheduled reads it). One thread does it.
extern "C" __global__ void __launch_bounds__(32)
    ppo_minibatch_begin(float lr, float beta1, float beta2, int* __restrict__ counters,
                        int* __restrict__ mb_sel, float* __restrict__ schedule) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const int k = counters[0];
    const int t = (int)((unsigned)counters[1] + 1u);
    counters[0] = (int)((unsigned)k + 1u);
    counters[1] = t;
    mb_sel[0] = k;
    const double td = t > 0 ? (double)t : 1.0;
    schedule[0] = lr;
    schedule[1] = (float)(1.0 - pow((double)beta1, td));
    schedule[2] = (float)(1.0 - pow((double)beta2, td));
}
