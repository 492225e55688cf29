// Kernels of the resident graph spec (tests/graphs/test_resident_spec.toml, resident = true):
// each one's block is a device function `<kernel>_block(block, blocks, params...)` that the
// `__global__` kernel calls with `blockIdx.x, gridDim.x`, so the same code runs as a graph node
// and inside the generated resident step (tests/gpu/resident_spec.rs compares the two).
#include <cuda_runtime.h>

#define RS_MAX_THREADS 1024

// z[j] = tanh(sum_i w[j * n_in + i] * x[i] + h[j]): one thread per output.
__device__ void rs_mix_block(unsigned block, unsigned blocks, const float* w, const float* x, const float* h,
                             float* z, int n_in, int n_hid) {
    (void)blocks;
    const int j = (int)(block * blockDim.x + threadIdx.x);
    if (j >= n_hid) return;
    float acc = h[j];
    for (int i = 0; i < n_in; ++i) acc = fmaf(w[j * n_in + i], x[i], acc);
    z[j] = tanhf(acc);
}

extern "C" __global__ void rs_mix(const float* w, const float* x, const float* h, float* z, int n_in, int n_hid) {
    rs_mix_block(blockIdx.x, gridDim.x, w, x, h, z, n_in, n_hid);
}

// y[j] = scale * z[j]; h_next[j] = 0.75 h[j] + 0.25 z[j]: the published output and the next state.
__device__ void rs_out_block(unsigned block, unsigned blocks, const float* z, const float* h, float* y, float* h_next,
                             float scale, int n) {
    (void)blocks;
    const int j = (int)(block * blockDim.x + threadIdx.x);
    if (j >= n) return;
    y[j] = scale * z[j];
    h_next[j] = 0.75f * h[j] + 0.25f * z[j];
}

extern "C" __global__ void rs_out(const float* z, const float* h, float* y, float* h_next, float scale, int n) {
    rs_out_block(blockIdx.x, gridDim.x, z, h, y, h_next, scale, n);
}

// One block reduces z to (sum, min, max, n) in a fixed order (warp shuffles, then the warps'
// partials in order): the same bits on any grid. Shared memory, read again by the next call.
__device__ void rs_stats_block(unsigned block, unsigned blocks, const float* z, float* stats, int n) {
    (void)blocks;
    __shared__ float s_sum[RS_MAX_THREADS / 32], s_min[RS_MAX_THREADS / 32], s_max[RS_MAX_THREADS / 32];
    if (block != 0u) return;
    const unsigned tid = threadIdx.x, threads = blockDim.x;
    float sum = 0.0f, lo = 3.0e38f, hi = -3.0e38f;
    for (int i = (int)tid; i < n; i += (int)threads) {
        sum += z[i];
        lo = fminf(lo, z[i]);
        hi = fmaxf(hi, z[i]);
    }
    for (int off = 16; off > 0; off >>= 1) {
        sum += __shfl_xor_sync(0xffffffffu, sum, off);
        lo = fminf(lo, __shfl_xor_sync(0xffffffffu, lo, off));
        hi = fmaxf(hi, __shfl_xor_sync(0xffffffffu, hi, off));
    }
    if (tid % 32u == 0u) {
        s_sum[tid / 32u] = sum;
        s_min[tid / 32u] = lo;
        s_max[tid / 32u] = hi;
    }
    __syncthreads();
    if (tid == 0u) {
        for (unsigned w = 1; w < threads / 32u; ++w) {
            sum += s_sum[w];
            lo = fminf(lo, s_min[w]);
            hi = fmaxf(hi, s_max[w]);
        }
        stats[0] = sum;
        stats[1] = lo;
        stats[2] = hi;
        stats[3] = (float)n;
    }
}

extern "C" __global__ void __launch_bounds__(RS_MAX_THREADS) rs_stats(const float* z, float* stats, int n) { rs_stats_block(blockIdx.x, gridDim.x, z, stats, n); }

// hist[b] counts the z[j] in bin b of [-1, 1) over n_bins bins (after a fill to zero): the
// counts add up to n whatever order the atomics land in.
__device__ void rs_hist_block(unsigned block, unsigned blocks, const float* z, unsigned* hist, int n, int n_bins) {
    (void)blocks;
    const int j = (int)(block * blockDim.x + threadIdx.x);
    if (j >= n) return;
    int b = (int)floorf((z[j] + 1.0f) * 0.5f * (float)n_bins);
    b = b < 0 ? 0 : (b >= n_bins ? n_bins - 1 : b);
    atomicAdd(&hist[b], 1u);
}

extern "C" __global__ void rs_hist(const float* z, unsigned* hist, int n, int n_bins) {
    rs_hist_block(blockIdx.x, gridDim.x, z, hist, n, n_bins);
}
