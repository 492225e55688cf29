// Kernels for the #[kernel] compile-fail tests (tests/ui/kernel/*.rs).
extern "C" __global__ void axpb(const float* __restrict__ x, float* __restrict__ y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}

extern "C" __global__ void count(const int* keys, unsigned int* hist, long long n) {}

extern "C" __global__ void flags(bool enabled, float* out) {}

__device__ float helper(float v) { return v * 2.0f; }

extern "C" __global__ void grid_dims(dim3 d, float* out) {}
