// Test kernels for kgraph-runtime's GPU tests (tests/gpu/runtime.rs, tests/gpu/safety.rs). Small
// and deterministic: no atomics, no reductions, so a graph replay and an eager run compute
// identical bits.

// out[idx] = *slot, read through a mapped pinned pointer (volatile: always a fresh load).
extern "C" __global__ void rt_read_slot_u64(const unsigned long long* slot, unsigned long long* out, int idx) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    out[idx] = *(const volatile unsigned long long*)slot;
  }
}

// dst[dst_idx] = src[src_idx] (one thread).
extern "C" __global__ void rt_copy_one_f32(const float* src, int src_idx, float* dst, int dst_idx) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    dst[dst_idx] = src[src_idx];
  }
}

// x[i] = a * x[i] + b, in place (fused multiply-add).
extern "C" __global__ void rt_affine_f32(float* x, int n, float a, float b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = fmaf(a, x[i], b);
}

// z[i] = x[i] * y[(i + 1) % n] + sinf(x[i]): mixes neighbours, so ordering mistakes show.
extern "C" __global__ void rt_mix_f32(const float* x, const float* y, float* z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = x[i] * y[(i + 1) % n] + sinf(x[i]);
}

// out[i] = base + i.
extern "C" __global__ void rt_iota_u32(unsigned int* out, int n, unsigned int base) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = base + (unsigned int)i;
}

// Spins for `cycles` SM clock cycles, then out[i] = v (i < n): a kernel still running well
// after the host's launch call has returned (tests/gpu/safety.rs: host views and drops wait).
extern "C" __global__ void rt_spin_then_fill_f32(float* out, int n, float v, long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) *(volatile float*)&out[i] = v;
}

// Spins for `cycles` SM clock cycles, then dst[i] = src[i] (i < n), reading `src` only after
// the spin (volatile: a fresh load of mapped host memory).
extern "C" __global__ void rt_spin_then_copy_f32(const float* src, float* dst, int n, long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = *(const volatile float*)&src[i];
}

// out[i] = !input[i] (i < n): C `bool` in and out (issue #32.3).
extern "C" __global__ void rt_not_bool(const bool* input, bool* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = !input[i];
}

// Stores the raw `byte` into out[i] (i < n), as a kernel writing a `bool` buffer through
// `unsigned char*` may: what a download of `bool`s must not hand back as a `kgraph::Bool`.
extern "C" __global__ void rt_store_byte(bool* out, int n, unsigned char byte) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) reinterpret_cast<unsigned char*>(out)[i] = byte;
}
