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
__device__ __forceinline__ long long kg_global_warp_in(unsigned block) {
    return (long long)block * (blockDim.x >> 5) + (threadIdx.x >> 5);
}
__device__ __forceinline__ long long kg_global_warp() { return kg_global_warp_in(blockIdx.x); }

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
// contiguous row of W and of h (coalesced), then a butterfly reduction. `block` is the block's
// index (`blockIdx.x` in a kernel; the virtual block in a resident step).
template <int N_OUT>
__device__ __forceinline__ bool kg_linear_forward_warp(unsigned block, const float* __restrict__ h,
                                                       const float* __restrict__ w,
                                                       const float* __restrict__ c, int batch,
                                                       int n_hid, int* out_index,
                                                       float* out_value) {
    const long long gw = kg_global_warp_in(block);
    if (gw >= (long long)batch * N_OUT) return false;
    const int b = (int)gw / N_OUT;
    const int o = (int)gw - b * N_OUT;
    *out_index = (int)gw;
    *out_value = kg_dot_warp(h + b * n_hid, w + o * n_hid, n_hid) + c[o];
    return true;
}

// Scratch of kg_block_column_sums: N sums per (warp, lane), a row padded to 33 so that a warp
// reading one column across the rows hits 32 different banks.
template <int N>
struct KgColumnScratch {
    float v[N][KG_WARP][KG_WARP + 1];
};

// Sums over the block's warps, lane column by lane column, in a fixed order: lane l of warp w
// holds part[i], its share of column l of sum i. Then write(c, sums) runs once per column
// c < 32, on lane 0 of warp c % n_warps, where sums[i] is the butterfly (kg_warp_sum) over w of
// warp w's part[i] for lane c. The order depends on the block size only: deterministic for a
// launch shape. Every thread of the block must call it (it synchronizes); the block is 1-D whole
// warps (kg_not_whole_warps), at most 32 of them (CUDA's 1024-thread limit).
template <int N, typename Write>
__device__ __forceinline__ void kg_block_column_sums(KgColumnScratch<N>& scratch,
                                                     const float (&part)[N], Write write) {
    const int lane = threadIdx.x & (KG_WARP - 1);
    const int warp = threadIdx.x >> 5;
    const int n_warps = blockDim.x >> 5;
#pragma unroll
    for (int i = 0; i < N; ++i) scratch.v[i][warp][lane] = part[i];
    __syncthreads();
    for (int c = warp; c < KG_WARP; c += n_warps) {
        float sums[N];
#pragma unroll
        for (int i = 0; i < N; ++i) sums[i] = kg_warp_sum(lane < n_warps ? scratch.v[i][lane][c] : 0.f);
        if (lane == 0) write(c, sums);
    }
}

// Rows per chunk of kg_for_warp_rows.
#define KG_ROW_CHUNK 8

// The rows of the batch that the calling warp takes when the block's warps split the batch:
// b = warp, warp + n_warps, ..., each passed to add(load(b)) in increasing order. KG_ROW_CHUNK
// rows at a time where possible, all loaded before the first is added: a loop with a runtime
// stride is otherwise unrolled with an exit test after every row, which keeps the next row's
// loads waiting for the previous row's (one memory latency per row instead of per chunk).
// The row counter is unsigned: b + KG_ROW_CHUNK * n_warps stays below 2^32 for any int batch.
template <typename Row, typename Load, typename Add>
__device__ __forceinline__ void kg_for_warp_rows(int batch, Load load, Add add) {
    const unsigned n = batch > 0 ? (unsigned)batch : 0u;
    const unsigned step = blockDim.x >> 5;
    unsigned b = threadIdx.x >> 5;
    for (; b + (KG_ROW_CHUNK - 1) * step < n; b += KG_ROW_CHUNK * step) {
        Row rows[KG_ROW_CHUNK];
#pragma unroll
        for (int u = 0; u < KG_ROW_CHUNK; ++u) rows[u] = load((int)(b + u * step));
#pragma unroll
        for (int u = 0; u < KG_ROW_CHUNK; ++u) add(rows[u]);
    }
    for (; b < n; b += step) add(load((int)b));
}

// A gradient output: dst += v where gradients accumulate (every model backward kernel), dst = v
// in the overwriting forms of the train step (each gradient there has one producer, so no
// zeroing node is needed in front of it).
template <bool ACCUMULATE>
__device__ __forceinline__ void kg_store_grad(float& dst, float v) {
    if (ACCUMULATE) dst += v;
    else dst = v;
}

// Blocks of a role that hands out `items` items, `per_block` to a block, without the overflow of
// (items + per_block - 1) near 2^32.
__device__ __forceinline__ unsigned kg_blocks_for(unsigned items, unsigned per_block) {
    return items / per_block + (items % per_block != 0u);
}

// The weight role of the linear backward (below) for one tile of 32 outputs t = o (n_hid + 1) + k,
// one per lane, of y = W h + c with W [n_out, n_hid] (n_out at run time: the PPO layers; the
// model's heads and projection pass their constant):
//   k <  n_hid: g_w[o, k] (+)= sum_b g_y[b, o] h[b, k]
//   k == n_hid: g_c[o]    (+)= sum_b g_y[b, o]
// the block's warps split the batch (warp w takes rows w, w + n_warps, ...), then
// kg_block_column_sums adds the warps' partial sums in a fixed order (deterministic for a block
// size). A tile past the last returns at once (block-uniform). Sizes >= 0 (callers check).
template <bool ACCUMULATE, typename GradOut>
__device__ __forceinline__ void kg_linear_weight_tile(unsigned tile, const float* __restrict__ h,
                                                      GradOut g_y, int batch, int n_hid,
                                                      int n_out, float* __restrict__ g_w,
                                                      float* __restrict__ g_c) {
    __shared__ KgColumnScratch<1> scratch;
    const unsigned row = (unsigned)n_hid + 1u;  // n_hid weights and the bias
    const unsigned n_w = (unsigned)n_out * row;
    if (tile >= kg_blocks_for(n_w, KG_WARP)) return;  // block-uniform
    const unsigned first = tile * KG_WARP;           // < n_w: no overflow
    const unsigned n_cols = n_w - first < KG_WARP ? n_w - first : KG_WARP;
    const unsigned lane = threadIdx.x & (KG_WARP - 1);
    float part[1] = {0.f};
    if (lane < n_cols) {
        const unsigned t = first + lane;
        const int o = (int)(t / row);
        const int k = (int)(t - (unsigned)o * row);
        struct Row {
            float g, h;
        };
        float s = 0.f;
        const auto add = [&](Row r) { s = fmaf(r.g, r.h, s); };
        if (n_hid > 0) {
            // The bias column (k == n_hid, h = 1) reads h[b, 0] (in bounds) and discards it, so
            // a chunk's loads have no branch between them.
            const bool weight = k < n_hid;
            const float* hc = h + (weight ? k : 0);
            kg_for_warp_rows<Row>(
                batch,
                [&](int b) {
                    const float hv = hc[b * n_hid];
                    return Row{g_y(b * n_out + o), weight ? hv : 1.f};
                },
                add);
        } else {  // no weights and h is empty: only the bias columns
            kg_for_warp_rows<Row>(batch, [&](int b) { return Row{g_y(b * n_out + o), 1.f}; }, add);
        }
        part[0] = s;
    }
    kg_block_column_sums(scratch, part, [&](int c, const float (&sums)[1]) {
        if ((unsigned)c >= n_cols) return;
        const unsigned t = first + (unsigned)c;
        const int o = (int)(t / row);
        const int k = (int)(t - (unsigned)o * row);
        if (k < n_hid) kg_store_grad<ACCUMULATE>(g_w[o * n_hid + k], sums[0]);
        else kg_store_grad<ACCUMULATE>(g_c[o], sums[0]);
    });
}

// Backward of y = W h + c given the effective output gradient g_y (a functor, so the heads can
// fold their probs path in). Two block-uniform roles in one launch (no dependency between them):
//   blocks [0, nb_in): one thread per (b, k):  g_h[b, k] += sum_o W[o, k] g_y[b, o]
//   blocks [nb_in, nb_in + nb_w): 32 outputs t = o (n_hid + 1) + k per block, one per lane:
//        k <  n_hid: g_w[o, k] += sum_b g_y[b, o] h[b, k]
//        k == n_hid: g_c[o]    += sum_b g_y[b, o]
//     the block's warps split the batch (warp w takes rows w, w + n_warps, ...), then
//     kg_block_column_sums adds the warps' partial sums.
// nb_in = ceil(batch * n_hid / blockDim.x), nb_w = ceil(N_OUT * (n_hid + 1) / 32). The caller
// returns first for a block that is not whole warps. Every sum runs in an order fixed by the
// launch shape (deterministic). ACCUMULATE = false overwrites g_h, g_w and g_c instead of adding.
template <int N_OUT, typename GradOut, bool ACCUMULATE = true>
__device__ __forceinline__ void kg_linear_backward(const float* __restrict__ h,
                                                   const float* __restrict__ w, GradOut g_y,
                                                   int batch, int n_hid, float* __restrict__ g_h,
                                                   float* __restrict__ g_w,
                                                   float* __restrict__ g_c) {
    if (batch < 0 || n_hid < 0) return;  // no such tensors (the unsigned sizes below would wrap)
    const unsigned n_in_threads = (unsigned)batch * (unsigned)n_hid;
    const unsigned nb_in = kg_blocks_for(n_in_threads, blockDim.x);
    if (blockIdx.x < nb_in) {
        const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
        if (t >= n_in_threads) return;
        const int b = (int)(t / (unsigned)n_hid);
        const int k = (int)t - b * n_hid;
        float s = 0.f;
#pragma unroll
        for (int o = 0; o < N_OUT; ++o) s = fmaf(w[o * n_hid + k], g_y(b * N_OUT + o), s);
        kg_store_grad<ACCUMULATE>(g_h[t], s);
        return;
    }
    kg_linear_weight_tile<ACCUMULATE>(blockIdx.x - nb_in, h, g_y, batch, n_hid, N_OUT, g_w, g_c);
}

// ---- BCE with logits (bce.cu; fused into the heads' backward in heads.cu) -------------------
// Per element z (logit), y (target in [0, 1]):
//   term = softplus(z) - y z  in the stable form max(z, 0) - y z + log1p(exp(-|z|)) (>= 0)
//   grad = (sigmoid(z) - y) / count
__device__ __forceinline__ float kg_bce_term(float z, float y) {
    return fmaf(-y, z, fmaxf(z, 0.f)) + log1pf(expf(-fabsf(z)));
}

__device__ __forceinline__ float kg_bce_inv_count(int count) { return count > 0 ? 1.f / (float)count : 0.f; }

__device__ __forceinline__ float kg_bce_grad(float z, float y, float inv_count) {
    return (kg_sigmoid(z) - y) * inv_count;
}

// The block's sum of per-thread f64 partials, complete on thread 0 (lane 0 of warp 0): a
// fixed-shape warp butterfly, then warp 0 adds the warp partials in a fixed order, so the result
// is bitwise reproducible for a block size. Every thread of the block must call it (it
// synchronizes once); the block is 1-D whole warps.
__device__ __forceinline__ double kg_block_sum_f64_to_first(double v, double (&warp_partial)[KG_WARP]) {
    v = kg_warp_sum_f64(v);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_partial[warp] = v;
    __syncthreads();
    double r = 0.0;
    if (warp == 0) {
        const int n_warps = (blockDim.x + 31) >> 5;
        r = kg_warp_sum_f64(lane < n_warps ? warp_partial[lane] : 0.0);
    }
    return r;
}
