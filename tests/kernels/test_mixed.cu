// Element types beyond f32..u64 in one graph spec (tests/graphs/test_mixed.toml): half and
// bfloat16 buffers, a struct buffer, a half scalar, optional pointers and a grid-sized kernel.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

struct Body {
  float x;
  float v;
};

// One block per row (row = blockIdx.x): h = half(2 x), and b = bfloat16(3 x) unless b is NULL.
extern "C" __global__ void km_to_half(const float* __restrict__ x, __half* __restrict__ h,
                                      __nv_bfloat16* __restrict__ b, int n) {
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    const size_t i = (size_t)blockIdx.x * n + j;
    const float v = x[i];
    h[i] = __float2half(2.0f * v);
    if (b != nullptr) b[i] = __float2bfloat16(3.0f * v);
  }
}

// One explicit Euler step per body: v += h, x += dt * v; energy = v^2 / 2 unless energy is NULL.
extern "C" __global__ void km_step(const Body* __restrict__ bodies, const __half* __restrict__ h,
                                   Body* __restrict__ out, float* __restrict__ energy, __half dt, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Body q = bodies[i];
  q.v += __half2float(h[i]);
  q.x += __half2float(dt) * q.v;
  out[i] = q;
  if (energy != nullptr) energy[i] = 0.5f * q.v * q.v;
}
