// C++-linkage kernels for the GPU suite (`tests/gpu/verified.rs`): bound by their C++ names,
// loaded by the mangled symbols nvcc compiled (from `test_cpp.kernels`).

// x[i] = x[i] * a + i for i < n (C++ linkage, not a template).
__global__ void kc_scale_add_index(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * a + (float)i;
}

// dst[i] = src[i] * SCALE for i < n, in T.
template <typename T, int SCALE>
__global__ void kc_times(const T* src, T* dst, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i] * (T)SCALE;
}
template __global__ void kc_times<float, 3>(const float*, float*, int);
template __global__ void kc_times<double, 5>(const double*, double*, int);
