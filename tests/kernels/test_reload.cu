// Hot-reload test kernel (tests/gpu/graph_reload.rs rewrites this file while a graph runs and
// restores it): y = 2 x.
extern "C" __global__ void hr_scale(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}
