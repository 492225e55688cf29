// A C++ template kernel with one explicit instantiation.
template <typename T, int TILE>
__global__ void tile_copy(const T* src, T* dst, int n) {
  int i = blockIdx.x * TILE + threadIdx.x;
  if (i < n) dst[i] = src[i];
}
template __global__ void tile_copy<float, 128>(const float*, float*, int);

// A template with two instantiations (template_without_arguments.rs): named without its
// arguments, a declaration must say which.
template <typename T>
__global__ void fill(T* x, T value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = value;
}
template __global__ void fill<float>(float*, float, int);
template __global__ void fill<int>(int*, int, int);
