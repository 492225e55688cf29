// Small buffer kernels the model graphs need besides the model's math: the graph format has
// kernel nodes only (no memset or memcpy nodes), so zeroing and copying are kernels too.
//
//   zero_f32(n, x)          x[i] = 0 for i < n. Gradients ACCUMULATE (+=, see cfc_step.cu), so
//                           a train graph zeroes every gradient buffer at the start of a step.
//   copy_f32(src, n, dst)   dst[i] = src[i] for i < n. `src` may be device memory or the device
//                           address of mapped pinned host memory (Rust declares both variants):
//                           the latency graph copies its pinned `dt` into the device buffer
//                           cfc_step reads, and carries the CfC state h_new -> h across replays
//                           (cfc_step's output may not alias its input).
//
// Layout: flat f32 arrays of n elements; src and dst must not overlap.
// Launch: one thread per element, block 256, grid = ceil(n / 256) (any grid works: grid-stride).
// Like every model kernel they begin with the PDL wait, so they may follow any model kernel
// with a programmatic-dependent launch.
#include "model_common.cuh"

extern "C" __global__ void __launch_bounds__(256) zero_f32(int n, float* __restrict__ x) {
    kg_pdl_enter();
    // 64-bit loop index: i + stride cannot overflow for any grid.
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) x[i] = 0.f;
}

extern "C" __global__ void __launch_bounds__(256)
    copy_f32(const float* __restrict__ src, int n, float* __restrict__ dst) {
    kg_pdl_enter();
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) dst[i] = src[i];
}
