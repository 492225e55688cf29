// Closed-form continuous-time (CfC) cell step, forward and backward.
//
// Math (per batch row b, hidden unit j; z = [x; h_old]):
//   target = tanh(W_g z + b_g),  lambda = softplus(W_t z + b_t),  a = 1 - exp(-lambda dt)
//   h_new  = h_old + a (target - h_old)
//
// Layout (row-major, f32):
//   x [batch, n_in], h_old/h_new [batch, n_hid], dt [batch] (elapsed time of each row),
//   w_g, w_t [n_hid, n_in + n_hid] (columns 0..n_in act on x, n_in.. on h_old), b_g, b_t [n_hid].
//   dt is clamped to [0, FLT_MAX] (NaN -> 0), so dt = 0 gives h_new == h_old exactly.
//   dt is a buffer, not a scalar, so a captured CUDA graph can take a new dt on every replay.
//
// Gradient convention (all kgraph model backward kernels): every gradient output g_* is
// ACCUMULATED (+=), never overwritten; zero them (memset) before a step. This lets heads and
// projection both add into one g_h, and unrolled time steps add into shared weight gradients.
// Scratch buffers (d_pre_g, d_pre_t) are overwritten. No output may alias an input.
//
// Launches (any 1-D block of whole warps works, with the grid formulas below written for it):
//   cfc_step                   one warp per (b, j), block 128:  grid = ceil(batch * n_hid / 4)
//   cfc_step_backward_gates    one warp per (b, j), block 128:  grid = ceil(batch * n_hid / 4)
//   cfc_step_backward_params   block 1024, two block-uniform roles (below): g_x/g_h_old one
//       thread per element; the weight gradients 32 outputs per block, the block's 32 warps
//       splitting the batch: grid = ceil(batch * K / 1024) + ceil(n_hid * (K + 1) / 32),
//       K = n_in + n_hid
//   The train step's forms (graphs/train_step.toml), which need no gradient of x or h_old:
//   cfc_step_save              cfc_step that also stores the backward's per-unit coefficients
//                              (coeffs [4, batch, n_hid]), same launch as cfc_step
//   cfc_step_backward_pre      the gates without g_h_old, same launch as the gates
//   cfc_step_backward_weights  the weight-gradient role alone, OVERWRITING g_w_*, g_b_* (the
//       step has one producer per gradient, so nothing is zeroed first): block 1024,
//       grid = ceil(n_hid * (K + 1) / 32)
//   cfc_step_backward_weights_adamw  the same, each finished gradient element then updating its
//       parameter by AdamW at once, and two more blocks running AdamW on the heads' w_h, b_h:
//       block 1024, grid = ceil(n_hid * (K + 1) / 32) + 2
// Backward order: gates, then params (params reads d_pre_*). All reductions run in an order
// fixed by the launch shape (no atomics): results are bitwise reproducible. Sizes are ints:
// every tensor (and batch * (K + 1), n_hid * (K + 1)) must stay below 2^31 elements; indices
// are 32-bit (no 64-bit division).
#include "adamw.cuh"
#include "cfc.cuh"

// Block `block` of `cfc_step`: what a resident step runs (`unsafe(device_fn)`).
__device__ __forceinline__ void cfc_step_block(unsigned block, unsigned blocks, const float* __restrict__ x,
                                               const float* __restrict__ h_old, const float* __restrict__ w_g,
                                               const float* __restrict__ b_g, const float* __restrict__ w_t,
                                               const float* __restrict__ b_t, const float* __restrict__ dt,
                                               int batch, int n_in, int n_hid, float* __restrict__ h_new) {
    (void)blocks;
    if (kg_not_whole_warps()) return;
    const long long gw = kg_global_warp_in(block);
    if (gw >= (long long)batch * n_hid) return;  // warp-uniform
    const int b = (int)((unsigned)gw / (unsigned)n_hid);
    const int j = (int)gw - b * n_hid;
    float pg, pt;
    cfc_preacts(x, h_old, w_g, w_t, b, j, n_in, n_hid, &pg, &pt);
    if ((threadIdx.x & 31) != 0) return;
    const int i = b * n_hid + j;
    h_new[i] = cfc_new_state(pg + b_g[j], pt + b_t[j], dt[b], h_old[i]);
}

extern "C" __global__ void __launch_bounds__(128)
    cfc_step(const float* __restrict__ x, const float* __restrict__ h_old,
             const float* __restrict__ w_g, const float* __restrict__ b_g,
             const float* __restrict__ w_t, const float* __restrict__ b_t,
             const float* __restrict__ dt, int batch, int n_in, int n_hid,
             float* __restrict__ h_new) {
    kg_pdl_enter();
    cfc_step_block(blockIdx.x, gridDim.x, x, h_old, w_g, b_g, w_t, b_t, dt, batch, n_in, n_hid, h_new);
}

// cfc_step that also stores what the backward needs of each unit (cfc_backward_coeffs, cfc.cuh),
// planar in coeffs [4, batch, n_hid]: a, 1 - target^2, target - h_old, dlambda. The train step's
// fused heads backward (heads.cu, multi_horizon_heads_bce_cfc_backward) then turns dL/dh_new into
// d_pre_g, d_pre_t with two products, without recomputing the pre-activations. h_new is
// cfc_step's, bit for bit.
extern "C" __global__ void __launch_bounds__(128)
    cfc_step_save(const float* __restrict__ x, const float* __restrict__ h_old,
                  const float* __restrict__ w_g, const float* __restrict__ b_g,
                  const float* __restrict__ w_t, const float* __restrict__ b_t,
                  const float* __restrict__ dt, int batch, int n_in, int n_hid,
                  float* __restrict__ h_new, float* __restrict__ coeffs) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    const long long gw = kg_global_warp();
    if (gw >= (long long)batch * n_hid) return;  // warp-uniform
    const int b = (int)((unsigned)gw / (unsigned)n_hid);
    const int j = (int)gw - b * n_hid;
    float pg, pt;
    cfc_preacts(x, h_old, w_g, w_t, b, j, n_in, n_hid, &pg, &pt);
    if ((threadIdx.x & 31) != 0) return;
    const int i = b * n_hid + j;
    const int plane = batch * n_hid;  // < 2^31: the length of h_new
    pg += b_g[j];
    pt += b_t[j];
    h_new[i] = cfc_new_state(pg, pt, dt[b], h_old[i]);
    const CfcBackwardCoeffs c = cfc_backward_coeffs(pg, pt, dt[b], h_old[i]);
    coeffs[i] = c.a;
    coeffs[plane + i] = c.omt2;
    coeffs[2 * plane + i] = c.tmh;
    coeffs[3 * plane + i] = c.dlambda;
}

// Backward, step 1: per (b, j) the pre-activation gradients, and the direct path into g_h_old.
//   d_pre_g = g a (1 - target^2)
//   d_pre_t = g (target - h_old) dt exp(-lambda dt) sigmoid(pre_t)
//   g_h_old += g (1 - a)          (only with G_H_OLD: cfc_step_backward_pre leaves it out)
template <bool G_H_OLD>
__device__ __forceinline__ void cfc_backward_gates(
    const float* __restrict__ x, const float* __restrict__ h_old, const float* __restrict__ w_g,
    const float* __restrict__ b_g, const float* __restrict__ w_t, const float* __restrict__ b_t,
    const float* __restrict__ dt, const float* __restrict__ g_h_new, int batch, int n_in,
    int n_hid, float* __restrict__ d_pre_g, float* __restrict__ d_pre_t,
    float* __restrict__ g_h_old) {
    if (kg_not_whole_warps()) return;
    const long long gw = kg_global_warp();
    if (gw >= (long long)batch * n_hid) return;
    const int b = (int)((unsigned)gw / (unsigned)n_hid);
    const int j = (int)gw - b * n_hid;
    float pg, pt;
    cfc_preacts(x, h_old, w_g, w_t, b, j, n_in, n_hid, &pg, &pt);
    if ((threadIdx.x & 31) != 0) return;
    const int i = b * n_hid + j;
    const CfcBackwardCoeffs c = cfc_backward_coeffs(pg + b_g[j], pt + b_t[j], dt[b], h_old[i]);
    const float g = g_h_new[i];
    d_pre_g[i] = g * c.a * c.omt2;
    d_pre_t[i] = g * c.tmh * c.dlambda;
    if (G_H_OLD) g_h_old[i] += g * (1.f - c.a);
}

extern "C" __global__ void __launch_bounds__(128)
    cfc_step_backward_gates(const float* __restrict__ x, const float* __restrict__ h_old,
                            const float* __restrict__ w_g, const float* __restrict__ b_g,
                            const float* __restrict__ w_t, const float* __restrict__ b_t,
                            const float* __restrict__ dt, const float* __restrict__ g_h_new,
                            int batch, int n_in, int n_hid, float* __restrict__ d_pre_g,
                            float* __restrict__ d_pre_t, float* __restrict__ g_h_old) {
    kg_pdl_enter();
    cfc_backward_gates<true>(x, h_old, w_g, b_g, w_t, b_t, dt, g_h_new, batch, n_in, n_hid,
                             d_pre_g, d_pre_t, g_h_old);
}

// cfc_step_backward_gates without the h_old gradient (the train step starts every row from a
// given h0 and needs no gradient for it): d_pre_g, d_pre_t only.
extern "C" __global__ void __launch_bounds__(128)
    cfc_step_backward_pre(const float* __restrict__ x, const float* __restrict__ h_old,
                          const float* __restrict__ w_g, const float* __restrict__ b_g,
                          const float* __restrict__ w_t, const float* __restrict__ b_t,
                          const float* __restrict__ dt, const float* __restrict__ g_h_new,
                          int batch, int n_in, int n_hid, float* __restrict__ d_pre_g,
                          float* __restrict__ d_pre_t) {
    kg_pdl_enter();
    cfc_backward_gates<false>(x, h_old, w_g, b_g, w_t, b_t, dt, g_h_new, batch, n_in, n_hid,
                              d_pre_g, d_pre_t, nullptr);
}

// The weight-gradient role of the backward (below): tile `tile` of 32 outputs t = j (K + 1) + k,
// one per lane, the block's warps splitting the batch, then kg_block_column_sums; each output's
// two sums (gate, time constant) go to write(j, k, sum_g, sum_t) once, k == K for the biases.
// Returns at once for a tile past the last (block-uniform).
template <typename Write>
__device__ __forceinline__ void cfc_backward_weight_tile(
    const float* __restrict__ x, const float* __restrict__ h_old, const float* __restrict__ d_pre_g,
    const float* __restrict__ d_pre_t, int batch, int n_in, int n_hid, unsigned tile, Write write) {
    const int k_all = n_in + n_hid;
    __shared__ KgColumnScratch<2> scratch;  // the gate and the time-constant sums
    const unsigned row = (unsigned)k_all + 1u;  // K weights and the bias
    const unsigned n_w = (unsigned)n_hid * row;
    if (tile >= kg_blocks_for(n_w, KG_WARP)) return;  // block-uniform
    const unsigned first = tile * KG_WARP;           // < n_w: no overflow
    const unsigned n_cols = n_w - first < KG_WARP ? n_w - first : KG_WARP;
    const unsigned lane = threadIdx.x & (KG_WARP - 1);
    float part[2] = {0.f, 0.f};
    if (lane < n_cols) {
        const unsigned t = first + lane;
        const int j = (int)(t / row);
        const int k = (int)(t - (unsigned)j * row);
        // z[b, k] = x[b, k] (k < n_in), h_old[b, k - n_in] (k < K), or 1 for the bias column:
        // one base pointer and stride per thread. The bias column reads d_pre_g[b, j] (in
        // bounds) and discards it, so the loop has no branch and its loads can be batched.
        const bool weight = k < k_all;
        const float* zc = k < n_in ? x + k : weight ? h_old + (k - n_in) : d_pre_g + j;
        const int zs = k < n_in ? n_in : n_hid;
        struct Row {
            float dg, dtau, z;
        };
        kg_for_warp_rows<Row>(
            batch,
            [&](int b) {
                const float zv = zc[b * zs];
                return Row{d_pre_g[b * n_hid + j], d_pre_t[b * n_hid + j], weight ? zv : 1.f};
            },
            [&](Row r) {
                part[0] = fmaf(r.dg, r.z, part[0]);
                part[1] = fmaf(r.dtau, r.z, part[1]);
            });
    }
    kg_block_column_sums(scratch, part, [&](int c, const float (&sums)[2]) {
        if ((unsigned)c >= n_cols) return;
        const unsigned t = first + (unsigned)c;
        const int j = (int)(t / row);
        write(j, (int)(t - (unsigned)j * row), sums[0], sums[1]);
    });
}

// cfc_backward_weight_tile's writer into the four gradients, adding or overwriting.
template <bool ACCUMULATE>
struct CfcGradStore {
    int k_all;
    float* __restrict__ g_w_g;
    float* __restrict__ g_b_g;
    float* __restrict__ g_w_t;
    float* __restrict__ g_b_t;
    __device__ __forceinline__ void operator()(int j, int k, float sg, float st) const {
        if (k < k_all) {
            kg_store_grad<ACCUMULATE>(g_w_g[j * k_all + k], sg);
            kg_store_grad<ACCUMULATE>(g_w_t[j * k_all + k], st);
        } else {
            kg_store_grad<ACCUMULATE>(g_b_g[j], sg);
            kg_store_grad<ACCUMULATE>(g_b_t[j], st);
        }
    }
};

// Backward, step 2 (after gates). Two block-uniform roles in one launch:
//   blocks [0, nb_z): one thread per (b, k), k < K:
//       s = sum_j W_g[j, k] d_pre_g[b, j] + W_t[j, k] d_pre_t[b, j]
//       k < n_in: g_x[b, k] += s;  else g_h_old[b, k - n_in] += s
//   blocks [nb_z, nb_z + nb_w): 32 outputs t = j (K + 1) + k per block, one per lane:
//       k < K:  g_w_g[j, k] += sum_b d_pre_g[b, j] z[b, k];  g_w_t likewise with d_pre_t
//       k == K: g_b_g[j] += sum_b d_pre_g[b, j];            g_b_t likewise
//     the block's warps split the batch (warp w takes rows w, w + n_warps, ...), then
//     kg_block_column_sums adds the warps' partial sums in a fixed order.
//   nb_z = ceil(batch * K / blockDim.x), nb_w = ceil(n_hid * (K + 1) / 32).
extern "C" __global__ void __launch_bounds__(1024)
    cfc_step_backward_params(const float* __restrict__ x, const float* __restrict__ h_old,
                             const float* __restrict__ w_g, const float* __restrict__ w_t,
                             const float* __restrict__ d_pre_g, const float* __restrict__ d_pre_t,
                             int batch, int n_in, int n_hid, float* __restrict__ g_x,
                             float* __restrict__ g_h_old, float* __restrict__ g_w_g,
                             float* __restrict__ g_b_g, float* __restrict__ g_w_t,
                             float* __restrict__ g_b_t) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    // Negative sizes name no tensors; the unsigned products below would wrap (batch = -1,
    // n_in = -2, n_hid = 0 satisfies every extent with n_z = 2).
    if (batch < 0 || n_in < 0 || n_hid < 0) return;
    const int k_all = n_in + n_hid;
    const unsigned n_z = (unsigned)batch * (unsigned)k_all;
    const unsigned nb_z = kg_blocks_for(n_z, blockDim.x);
    if (blockIdx.x < nb_z) {
        const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
        if (t >= n_z) return;
        const int b = (int)(t / (unsigned)k_all);
        const int k = (int)t - b * k_all;
        const float* dg = d_pre_g + b * n_hid;
        const float* dtau = d_pre_t + b * n_hid;
        float s0 = 0.f, s1 = 0.f;  // gate and time-constant paths, combined in a fixed order
#pragma unroll 8
        for (int j = 0; j < n_hid; ++j) {
            s0 = fmaf(w_g[j * k_all + k], dg[j], s0);
            s1 = fmaf(w_t[j * k_all + k], dtau[j], s1);
        }
        if (k < n_in) g_x[b * n_in + k] += s0 + s1;
        else g_h_old[b * n_hid + (k - n_in)] += s0 + s1;
        return;
    }
    cfc_backward_weight_tile(x, h_old, d_pre_g, d_pre_t, batch, n_in, n_hid, blockIdx.x - nb_z,
                             CfcGradStore<true>{k_all, g_w_g, g_b_g, g_w_t, g_b_t});
}

// The weight-gradient role of cfc_step_backward_params alone, OVERWRITING its outputs (the train
// step: one producer per gradient, no zeroing, and no g_x / g_h_old, which it does not use):
//   g_w_g[j, k] = sum_b d_pre_g[b, j] z[b, k],  g_b_g[j] = sum_b d_pre_g[b, j]; g_w_t, g_b_t alike.
// Block 1024, grid = ceil(n_hid * (K + 1) / 32): bit-equal to cfc_step_backward_params' weight
// gradients into zeroed buffers with the same block size (up to the sign of a zero).
extern "C" __global__ void __launch_bounds__(1024)
    cfc_step_backward_weights(const float* __restrict__ x, const float* __restrict__ h_old,
                              const float* __restrict__ d_pre_g, const float* __restrict__ d_pre_t,
                              int batch, int n_in, int n_hid, float* __restrict__ g_w_g,
                              float* __restrict__ g_b_g, float* __restrict__ g_w_t,
                              float* __restrict__ g_b_t) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    if (batch < 0 || n_in < 0 || n_hid < 0) return;  // no such tensors (see params above)
    cfc_backward_weight_tile(x, h_old, d_pre_g, d_pre_t, batch, n_in, n_hid, blockIdx.x,
                             CfcGradStore<false>{n_in + n_hid, g_w_g, g_b_g, g_w_t, g_b_t});
}

// cfc_step_backward_weights with AdamW fused in: the train step's last kernel. Each weight-gradient
// output is complete in the one block that sums it, so that block writes the gradient and at once
// updates its parameter and moments (adamw.cuh's adamw_elem, with the schedule of adamw_scheduled:
// the same bits as adamw_scheduled over the finished gradient). Blocks [nb_w, grid) run AdamW on
// the heads' w_h [5, n_hid] and b_h [5] from g_w_h, g_b_h (the heads' backward, an earlier node):
// chunks of 4 * blockDim.x elements, w_h's then b_h's, grid-strided over those blocks.
// Nothing else in this launch reads a tensor it updates (the gradient sums read x, h_old and
// d_pre_*), and the PDL wait at entry orders it after every earlier reader of the weights.
// Block 1024, grid = ceil(n_hid * (K + 1) / 32) + 2 (one chunk each for 5 n_hid <= 4096; any
// count >= 1 of extra blocks covers the heads).
extern "C" __global__ void __launch_bounds__(1024) cfc_step_backward_weights_adamw(
    const float* __restrict__ x, const float* __restrict__ h_old,
    const float* __restrict__ d_pre_g, const float* __restrict__ d_pre_t,
    const float* __restrict__ g_w_h, const float* __restrict__ g_b_h,
    const float* __restrict__ schedule, float beta1, float beta2, float eps, float weight_decay,
    int batch, int n_in, int n_hid, float* __restrict__ g_w_g, float* __restrict__ g_b_g,
    float* __restrict__ g_w_t, float* __restrict__ g_b_t, float* __restrict__ w_g,
    float* __restrict__ m_w_g, float* __restrict__ v_w_g, float* __restrict__ b_g,
    float* __restrict__ m_b_g, float* __restrict__ v_b_g, float* __restrict__ w_t,
    float* __restrict__ m_w_t, float* __restrict__ v_w_t, float* __restrict__ b_t,
    float* __restrict__ m_b_t, float* __restrict__ v_b_t, float* __restrict__ w_h,
    float* __restrict__ m_w_h, float* __restrict__ v_w_h, float* __restrict__ b_h,
    float* __restrict__ m_b_h, float* __restrict__ v_b_h) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    if (batch < 0 || n_in < 0 || n_hid < 0) return;  // no such tensors (see params above)
    const AdamWCoeffs c = adamw_coeffs(schedule[0], beta1, beta2, eps, weight_decay, schedule[1],
                                       schedule[2]);
    const int k_all = n_in + n_hid;
    const unsigned nb_w = kg_blocks_for((unsigned)n_hid * ((unsigned)k_all + 1u), KG_WARP);
    if (blockIdx.x >= nb_w) {  // the heads' AdamW (block-uniform)
        const AdamWTensor heads[2] = {
            {g_w_h, w_h, m_w_h, v_w_h, (unsigned)N_HORIZONS * (unsigned)n_hid},
            {g_b_h, b_h, m_b_h, v_b_h, (unsigned)N_HORIZONS},
        };
        adamw_chunks(c, heads, blockIdx.x - nb_w, gridDim.x - nb_w);
        return;
    }
    cfc_backward_weight_tile(x, h_old, d_pre_g, d_pre_t, batch, n_in, n_hid, blockIdx.x,
                             [&](int j, int k, float sg, float st) {
                                 if (k < k_all) {
                                     const int i = j * k_all + k;
                                     g_w_g[i] = sg;
                                     g_w_t[i] = st;
                                     adamw_elem(c, w_g[i], sg, m_w_g[i], v_w_g[i]);
                                     adamw_elem(c, w_t[i], st, m_w_t[i], v_w_t[i]);
                                 } else {
                                     g_b_g[j] = sg;
                                     g_b_t[j] = st;
                                     adamw_elem(c, b_g[j], sg, m_b_g[j], v_b_g[j]);
                                     adamw_elem(c, b_t[j], st, m_b_t[j], v_b_t[j]);
                                 }
                             });
}
