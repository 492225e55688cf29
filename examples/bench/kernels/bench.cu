// Benchmark kernels: the same workloads as the CUDA C++ anchors (shared/anchors), so kgraph's
// figures and the hand-written floor come from identical device code.
//
// PDL (programmatic dependent launch, sm_90): `griddepcontrol.launch_dependents` lets the next
// kernel on the stream launch now; `griddepcontrol.wait` blocks until the previous grid has
// completed and its writes are visible. Both are no-ops when the launch has no programmatic
// dependency, so these kernels compute the same values with PDL on or off.

__device__ __forceinline__ void pdl_trigger() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }
__device__ __forceinline__ void pdl_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

// y = a*x + b (chain8/chain64 node).
extern "C" __global__ void bench_axpb(const float* __restrict__ x, float* __restrict__ y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}

// y = a*x + b, PDL-aware: triggers the dependent launch at entry, waits before reading x.
extern "C" __global__ void bench_axpb_pdl(const float* __restrict__ x, float* __restrict__ y, float a, float b,
                                          int n) {
  pdl_trigger();
  pdl_wait();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}

// A branch with real work: `iters` dependent FMAs per element (the body of bench_work and
// bench_work_pdl).
__device__ __forceinline__ void work_body(const float* __restrict__ x, float* __restrict__ y, int n, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int k = 0; k < iters; ++k) v = v * 0.999f + 0.001f;
  y[i] = v;
}

extern "C" __global__ void bench_work(const float* __restrict__ x, float* __restrict__ y, int n, int iters) {
  work_body(x, y, n, iters);
}

// Join of the 1 -> 8 -> 1 fan-out: out = sum of the eight branch outputs (the body of
// bench_join8 and bench_join8_pdl).
__device__ __forceinline__ void join8_body(const float* __restrict__ y0, const float* __restrict__ y1,
                                           const float* __restrict__ y2, const float* __restrict__ y3,
                                           const float* __restrict__ y4, const float* __restrict__ y5,
                                           const float* __restrict__ y6, const float* __restrict__ y7,
                                           float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = ((y0[i] + y1[i]) + (y2[i] + y3[i])) + ((y4[i] + y5[i]) + (y6[i] + y7[i]));
}

extern "C" __global__ void bench_join8(const float* __restrict__ y0, const float* __restrict__ y1,
                                       const float* __restrict__ y2, const float* __restrict__ y3,
                                       const float* __restrict__ y4, const float* __restrict__ y5,
                                       const float* __restrict__ y6, const float* __restrict__ y7,
                                       float* __restrict__ out, int n) {
  join8_body(y0, y1, y2, y3, y4, y5, y6, y7, out, n);
}

// Fills x with a deterministic, non-constant pattern (benchmarks never time zeros).
extern "C" __global__ void bench_fill(float* __restrict__ x, long long n, float base) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
    x[i] = base + (float)((i * 2654435761ll) % 1000) * 1e-3f;
}

// bench_work, PDL-aware (examples/bench/graphs/bench_fanout_pdl.toml): triggers at entry, waits before reading x.
extern "C" __global__ void bench_work_pdl(const float* __restrict__ x, float* __restrict__ y, int n, int iters) {
  pdl_trigger();
  pdl_wait();
  work_body(x, y, n, iters);
}

// bench_join8, PDL-aware: triggers at entry, waits before reading the branches' outputs.
extern "C" __global__ void bench_join8_pdl(const float* __restrict__ y0, const float* __restrict__ y1,
                                           const float* __restrict__ y2, const float* __restrict__ y3,
                                           const float* __restrict__ y4, const float* __restrict__ y5,
                                           const float* __restrict__ y6, const float* __restrict__ y7,
                                           float* __restrict__ out, int n) {
  pdl_trigger();
  pdl_wait();
  join8_body(y0, y1, y2, y3, y4, y5, y6, y7, out, n);
}
