// C++-linkage kernels: a plain function, a template with one instantiation, a template with
// none, and an overload pair.
__global__ void scale(float* x, float a, int n) {
  int i = threadIdx.x;
  if (i < n) x[i] *= a;
}

template <typename T, int TILE>
__global__ void gemm(const T* a, T* b, int n) {
  int i = threadIdx.x * TILE;
  if (i < n) b[i] = a[i];
}
template __global__ void gemm<float, 128>(const float*, float*, int);

template <typename T>
__global__ void uninstantiated(T* x, int n) {
  if ((int)threadIdx.x < n) x[threadIdx.x] = T(0);
}

__global__ void over(float* x, int n) {
  if ((int)threadIdx.x < n) x[threadIdx.x] = 0.0f;
}
__global__ void over(double* x, int n) {
  if ((int)threadIdx.x < n) x[threadIdx.x] = 0.0;
}

// A template with two instantiations: named without its arguments, a declaration must pick one.
template <typename T>
__global__ void twice(T* x, int n) {
  if ((int)threadIdx.x < n) x[threadIdx.x] = T(1);
}
template __global__ void twice<float>(float*, int);
template __global__ void twice<double>(double*, int);
