// An old version under `#if 0` above the live one.
#if 0
extern "C" __global__ void live(float* x, int n, int stride) {
  x[threadIdx.x * stride] = 0.0f;
}
#endif
extern "C" __global__ void live(float* x, int n) {
  if ((int)threadIdx.x < n) x[threadIdx.x] = 0.0f;
}
