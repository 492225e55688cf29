// Smoke kernel: y[i] = a * x[i] + b. Used by the build-pipeline smoke test.
extern "C" __global__ void smoke_axpb(const float* __restrict__ x, float* __restrict__ y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
