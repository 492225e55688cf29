// Shared constants and device helpers of the model kernels (snap_features.cu, cfc_step.cu,
// heads.cu, projection.cu, bce.cu, adamw.cu). Self-contained (no system headers) so the NVRTC
// fallback compiles it as-is. The Rust constants in src/model.rs mirror the #defines below and a
// unit test there checks they agree.
#pragma once

// ---- Sizes --------------------------------------------------------------------------------
#define N_LEVELS 10   // MBP-10: levels per side, level 0 = best
#define SNAP_LEN 40   // bid_px[10], bid_sz[10], ask_px[10], ask_sz[10]
#define N_FEAT 45     // features per snapshot, layout below
#define N_HORIZONS 5  // multi-horizon heads
#define N_PROJ 8      // projection outputs

// ---- Snapshot layout (offsets into one SNAP_LEN row) -----------------------------------------
#define SNAP_BID_PX 0
#define SNAP_BID_SZ 10
#define SNAP_ASK_PX 20
#define SNAP_ASK_SZ 30

// ---- Feature layout (offsets into one N_FEAT row) ------------------------------------------
#define FEAT_BID_OFFSET 0    // [10] (bid_px[i] - mid) / spread
#define FEAT_ASK_OFFSET 10   // [10] (ask_px[i] - mid) / spread
#define FEAT_BID_LOGSZ 20    // [10] log1p(bid_sz[i])
#define FEAT_ASK_LOGSZ 30    // [10] log1p(ask_sz[i])
#define FEAT_IMBALANCE 40    // [3]  (sum bid - sum ask) / (sum bid + sum ask) at depth 1, 5, 10
#define FEAT_REL_SPREAD 43   // [1]  spread / mid
#define FEAT_VALID 44        // [1]  1 = valid book, 0 = invalid (then every feature is 0)

#define KG_WARP 32
#define KG_FULL_MASK 0xffffffffu
#define KG_FLT_MAX 3.402823466e+38f

// Programmatic dependent launch (sm_90+): every model kernel calls this first. It lets the next
// kernel on the stream start launching at once, then waits until the previous kernel has
// finished and its writes are visible (both are no-ops when the kernel was launched without the
// PDL attribute). Triggering before waiting is safe: the next kernel runs its own wait, which
// blocks until this whole grid has completed; it only overlaps launch latency. On the H200 the
// anchors measured a 64-kernel PDL chain at 39.3 us triggering at entry vs 47.8 us at exit.
__device__ __forceinline__ void kg_pdl_enter() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// True when the block is not 1-D whole warps. The kernels built on warp shuffles and votes
// (full mask: every lane must be present) return at once for such a block, writing nothing:
// a launch shape the safe API accepts can then not reach undefined behaviour.
__device__ __forceinline__ bool kg_not_whole_warps() {
    return (blockDim.x & (KG_WARP - 1)) != 0 || blockDim.y != 1 || blockDim.z != 1;
}

// True for finite x; false for +-Inf and NaN (every comparison with NaN is false).
__device__ __forceinline__ bool kg_finite(float x) { return fabsf(x) <= KG_FLT_MAX; }

// softplus(x) = log(1 + e^x) in the stable form max(x, 0) + log1p(e^-|x|): exp never overflows.
__device__ __forceinline__ float kg_softplus(float x) {
    return fmaxf(x, 0.f) + log1pf(expf(-fabsf(x)));
}

// sigmoid(x) without overflow: e = e^-|x| <= 1, so 1 / (1 + e) and e / (1 + e) are both safe.
__device__ __forceinline__ float kg_sigmoid(float x) {
    const float e = expf(-fabsf(x));
    const float r = 1.f / (1.f + e);
    return x >= 0.f ? r : e * r;
}

// Sum over the warp by an xor butterfly. Every lane ends with the same bits: each step adds the
// same two partial sums (in swapped order, and float addition is commutative), so the result is
// deterministic and identical on all lanes.
__device__ __forceinline__ float kg_warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(KG_FULL_MASK, v, o);
    return v;
}

__device__ __forceinline__ double kg_warp_sum_f64(double v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(KG_FULL_MASK, v, o);
    return v;
}

// Index of the calling warp among all warps of the grid (64-bit: the thread count can exceed
// 2^31 when B * n does not). Element indices are 32-bit: sizes are ints and every tensor must
// stay below 2^31 elements, which also keeps every division 32-bit (no call, no stack frame).
__device__ __forceinline__ long long kg_global_warp() {
    return (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
}

// sum_k w[k] h[k] over k < n by the whole calling warp (every lane gets the same bits): lanes
// stride over k (coalesced), two chains for ILP combined in a fixed order, then a butterfly.
__device__ __forceinline__ float kg_dot_warp(const float* __restrict__ h,
                                             const float* __restrict__ w, int n) {
    const int lane = threadIdx.x & 31;
    float s0 = 0.f, s1 = 0.f;
    int k = lane;
    for (; k + KG_WARP < n; k += 2 * KG_WARP) {
        s0 = fmaf(w[k], h[k], s0);
        s1 = fmaf(w[k + KG_WARP], h[k + KG_WARP], s1);
    }
    if (k < n) s0 = fmaf(w[k], h[k], s0);
    return kg_warp_sum(s0 + s1);
}

// The linear-layer pieces shared by heads.cu and projection.cu (y = W h + c, W [n_out, n_hid]).
//
// Forward: one warp per output element (b, o): lanes stride over k, so a warp reads one
// contiguous row of W and of h (coalesced), then a butterfly reduction.
template <int N_OUT>
__device__ __forceinline__ bool kg_linear_forward_warp(const float* __restrict__ h,
                                                       const float* __restrict__ w,
                                                       const float* __restrict__ c, int batch,
                                                       int n_hid, int* out_index,
                                                       float* out_value) {
    const long long gw = kg_global_warp();
    if (gw >= (long long)batch * N_OUT) return false;
    const int b = (int)gw / N_OUT;
    const int o = (int)gw - b * N_OUT;
    *out_index = (int)gw;
    *out_value = kg_dot_warp(h + b * n_hid, w + o * n_hid, n_hid) + c[o];
    return true;
}

// Backward of y = W h + c given the effective output gradient g_y (a functor, so the heads can
// fold their probs path in). Two block-uniform roles in one launch (no dependency between them):
//   blocks [0, nb_in):        one thread per (b, k):  g_h[b, k] += sum_o W[o, k] g_y[b, o]
//   blocks [nb_in, nb_in+nb_w): one thread per (o, k), k <= n_hid:
//        k <  n_hid: g_w[o, k] += sum_b g_y[b, o] h[b, k]
//        k == n_hid: g_c[o]    += sum_b g_y[b, o]
// nb_in = ceil(batch * n_hid / blockDim.x). Every sum runs in a fixed order (deterministic).
template <int N_OUT, typename GradOut>
__device__ __forceinline__ void kg_linear_backward(const float* __restrict__ h,
                                                   const float* __restrict__ w, GradOut g_y,
                                                   int batch, int n_hid, float* __restrict__ g_h,
                                                   float* __restrict__ g_w,
                                                   float* __restrict__ g_c) {
    const unsigned n_in_threads = (unsigned)batch * (unsigned)n_hid;
    const unsigned nb_in = (n_in_threads + blockDim.x - 1) / blockDim.x;
    if (blockIdx.x < nb_in) {
        const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
        if (t >= n_in_threads) return;
        const int b = (int)(t / (unsigned)n_hid);
        const int k = (int)t - b * n_hid;
        float s = 0.f;
#pragma unroll
        for (int o = 0; o < N_OUT; ++o) s = fmaf(w[o * n_hid + k], g_y(b * N_OUT + o), s);
        g_h[t] += s;
        return;
    }
    const unsigned t = (blockIdx.x - nb_in) * blockDim.x + threadIdx.x;
    if (t >= (unsigned)N_OUT * (unsigned)(n_hid + 1)) return;
    const int o = (int)(t / (unsigned)(n_hid + 1));
    const int k = (int)t - o * (n_hid + 1);
    float s0 = 0.f, s1 = 0.f;  // two chains for ILP, combined in a fixed order
    int b = 0;
    if (k < n_hid) {
        for (; b + 1 < batch; b += 2) {
            s0 = fmaf(g_y(b * N_OUT + o), h[b * n_hid + k], s0);
            s1 = fmaf(g_y((b + 1) * N_OUT + o), h[(b + 1) * n_hid + k], s1);
        }
        if (b < batch) s0 = fmaf(g_y(b * N_OUT + o), h[b * n_hid + k], s0);
        g_w[o * n_hid + k] += s0 + s1;
    } else {
        for (; b + 1 < batch; b += 2) {
            s0 += g_y(b * N_OUT + o);
            s1 += g_y((b + 1) * N_OUT + o);
        }
        if (b < batch) s0 += g_y(b * N_OUT + o);
        g_c[o] += s0 + s1;
    }
}
