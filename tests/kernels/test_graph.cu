// Test kernels for the graph-spec GPU tests (tests/gpu/graph.rs) and specs (tests/graphs/test_*.toml).
// Element-wise and deterministic (no atomics, no reductions), so a replay of the captured graph
// and an eager run of the same spec compute identical bits.

// y[i] = a * x[i] + b (fused multiply-add).
extern "C" __global__ void tg_affine(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaf(a, x[i], b);
}

// s[i] = x[i] * x[(i + 1) % n] + 0.5: mixes neighbours, so a missing dependency shows up as
// different values rather than a coincidentally equal element.
extern "C" __global__ void tg_prep(const float* x, float* s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) s[i] = fmaf(x[i], x[(i + 1) % n], 0.5f);
}

// y[i] = sin(k * s[i]) + k.
extern "C" __global__ void tg_branch(const float* s, float* y, float k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = sinf(k * s[i]) + k;
}

// out[i] = a[i] + 2 b[i] + 3 c[i] + 4 d[i], always summed in this order.
extern "C" __global__ void tg_join4(const float* a, const float* b, const float* c, const float* d,
                                    float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = ((a[i] + 2.0f * b[i]) + 3.0f * c[i]) + 4.0f * d[i];
}

// y[i] = frame[i] + bias[0]; frame and bias are mapped pinned host memory (volatile: a fresh
// load at every launch, never a cached value).
extern "C" __global__ void tg_read_pinned(const float* frame, const float* bias, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = ((const volatile float*)frame)[i] + *(const volatile float*)bias;
  }
}

// host[i] = x[i] * k, where host is mapped pinned host memory the kernel writes directly (a
// zero-copy output, read by the host after synchronizing, or by a later kernel as `const`).
extern "C" __global__ void tg_publish(const float* x, float k, float* host, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) host[i] = x[i] * k;
}

// y[i] = x[i] * w[i].
extern "C" __global__ void tg_mul(const float* x, const float* w, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * w[i];
}

// acc[i] += x[i] (in place: acc is read and written).
extern "C" __global__ void tg_accumulate(float* acc, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) acc[i] += x[i];
}

// ---- PDL-aware kernels (graphs/test_pdl_*.toml, tests/gpu/graph_pdl.rs) ----
// Every thread first lets the next kernel on the stream launch (`griddepcontrol.launch_dependents`)
// and then waits until the kernels it depends on have completed and their writes are visible
// (`griddepcontrol.wait`), before touching any buffer and before any early return: the contract
// of a node launched with PDL. Without a programmatic dependency both instructions are no-ops, so
// these kernels compute the same bits with PDL on or off.

__device__ __forceinline__ void tg_pdl_enter() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
}

// y[i] = a * x[i] + b (fused multiply-add).
extern "C" __global__ void tg_pdl_affine(const float* x, float* y, float a, float b, int n) {
  tg_pdl_enter();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaf(a, x[i], b);
}

// y[i] = x[i] * x[(i + 1) % n] + 0.5: the last thread of a block reads an element another block
// of the previous kernel wrote, so an early read would show up as a different value.
extern "C" __global__ void tg_pdl_mix(const float* x, float* y, int n) {
  tg_pdl_enter();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaf(x[i], x[(i + 1) % n], 0.5f);
}

// y[i] = sin(k * s[i]) + k.
extern "C" __global__ void tg_pdl_branch(const float* s, float* y, float k, int n) {
  tg_pdl_enter();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = sinf(k * s[i]) + k;
}

// out[i] = a[i] + 2 b[i] + 3 c[i] + 4 d[i], always summed in this order.
extern "C" __global__ void tg_pdl_join4(const float* a, const float* b, const float* c, const float* d,
                                        float* out, int n) {
  tg_pdl_enter();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = ((a[i] + 2.0f * b[i]) + 3.0f * c[i]) + 4.0f * d[i];
}

// acc[i] += x[i] (in place: acc is read and written).
extern "C" __global__ void tg_pdl_accumulate(float* acc, const float* x, int n) {
  tg_pdl_enter();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) acc[i] += x[i];
}
