// Test kernels for the #[kernel] argument-passing GPU tests (tests/gpu/kernel_args.rs).
// Each one moves bits without arithmetic, so every expected value is exact: a wrong argument
// order, width, signedness or pointer shows up as a different value.

// y[n-1-i] = x[i]: a read slice and a write slice (reversed, so swapped pointers or a wrong
// `n` cannot look right).
extern "C" __global__ void ka_reverse(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[n - 1 - i] = x[i];
}

// out[i] = s for i < n: one kernel per scalar type, the scalar between an int and a pointer.
template <typename T>
__device__ void fill(int n, T s, T* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = s;
}

extern "C" __global__ void ka_fill_f32(int n, float s, float* out) { fill(n, s, out); }
extern "C" __global__ void ka_fill_f64(int n, double s, double* out) { fill(n, s, out); }
extern "C" __global__ void ka_fill_i8(int n, signed char s, signed char* out) { fill(n, s, out); }
extern "C" __global__ void ka_fill_u8(int n, unsigned char s, unsigned char* out) { fill(n, s, out); }
extern "C" __global__ void ka_fill_i16(int n, short s, short* out) { fill(n, s, out); }
extern "C" __global__ void ka_fill_u16(int n, unsigned short s, unsigned short* out) { fill(n, s, out); }
extern "C" __global__ void ka_fill_i32(int n, int s, int* out) { fill(n, s, out); }
extern "C" __global__ void ka_fill_u32(int n, unsigned int s, unsigned int* out) { fill(n, s, out); }
extern "C" __global__ void ka_fill_i64(int n, long long s, long long* out) { fill(n, s, out); }
extern "C" __global__ void ka_fill_u64(int n, unsigned long long s, unsigned long long* out) { fill(n, s, out); }

// out[i] = src[i] for i < n, where src is mapped pinned host memory (volatile: a fresh load
// over the bus on every launch).
extern "C" __global__ void ka_copy_pinned_f32(const float* src, int n, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = ((const volatile float*)src)[i];
}

extern "C" __global__ void ka_copy_pinned_u64(const unsigned long long* src, int n, unsigned long long* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = ((const volatile unsigned long long*)src)[i];
}

// out[i] = src[i] for i < n, where out is mapped pinned host memory the kernel writes directly
// (a zero-copy output: the host reads it after synchronizing the stream). It waits on its grid
// dependency first (a no-op without PDL), so the GPU tests may launch it with PDL.
extern "C" __global__ void ka_copy_to_pinned_f32(const float* src, int n, float* out) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = src[i];
}

// out[i] = base + i for i < n, out in mapped pinned host memory (64-bit: the full width arrives).
extern "C" __global__ void ka_iota_to_pinned_u64(unsigned long long base, int n, unsigned long long* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = base + (unsigned long long)i;
}

// The same copy without `griddepcontrol.wait`: a PDL launch of it is refused
// (`Error::PdlWithoutWait`), before anything is written.
extern "C" __global__ void ka_copy_no_wait_f32(const float* src, int n, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = src[i];
}

// out[b] = the sum of x over block b (for b < n_blocks), through `extern __shared__` memory of
// blockDim.x floats: the dynamic shared memory a launch must give it (`shared = block.x * 4`).
// Only blockDim.x threads index the array, so a 1-D block is what it expects; it returns for others.
extern __shared__ float ka_block_partials[];
extern "C" __global__ void ka_block_sum_f32(const float* x, int n, int n_blocks, float* out) {
  if (blockDim.y != 1 || blockDim.z != 1) return;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  ka_block_partials[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (threadIdx.x == 0 && (int)blockIdx.x < n_blocks) {
    float t = 0.0f;
    for (unsigned j = 0; j < blockDim.x; ++j) t += ka_block_partials[j];
    out[blockIdx.x] = t;
  }
}

// ka_block_sum_f32 with 16 KiB of static shared memory beside the dynamic array: the kernel's
// default dynamic limit is 48 KiB less those 16 (so 40 KiB of dynamic memory needs the opt-in).
extern "C" __global__ void ka_block_sum_static_f32(const float* x, int n, int n_blocks, float* out) {
  __shared__ float ka_static_tile[4096];
  if (blockDim.y != 1 || blockDim.z != 1) return;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  ka_static_tile[threadIdx.x % 4096] = 0.0f;
  ka_block_partials[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (threadIdx.x == 0 && (int)blockIdx.x < n_blocks) {
    float t = ka_static_tile[0];
    for (unsigned j = 0; j < blockDim.x; ++j) t += ka_block_partials[j];
    out[blockIdx.x] = t;
  }
}
