// Test kernels for the #[kernel] argument-passing GPU tests (tests/gpu/kernel_args.rs).
// Each one moves bits without arithmetic, so every expected value is exact: a wrong argument
// order, width, signedness or pointer shows up as a different value.

// y[n-1-i] = x[i]: a read slice and a write slice (reversed, so swapped pointers or a wrong
// `n` cannot look right).
extern "C" __global__ void ka_reverse(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[n - 1 - i] = x[i];
}

// target[i] = source[i]: parameters named like locals a binding might generate (`target`,
// `source`, `function`, `args`), which the generated code must not collide with.
extern "C" __global__ void ka_copy_named(const float* source, float* target, int function, int args) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < function) target[i] = source[i] + (float)args;
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
// (`LaunchError::PdlWithoutWait`), before anything is written.
extern "C" __global__ void ka_copy_no_wait_f32(const float* src, int n, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = src[i];
}
