// A C++ template kernel with one explicit instantiation.
template <typename T, int TILE>
__global__ void tile_copy(const T* src, T* dst, int n) {
  int i = blockIdx.x * TILE + threadIdx.x;
  if (i < n) dst[i] = src[i];
}
template __global__ void tile_copy<float, 128>(const float*, float*, int);
