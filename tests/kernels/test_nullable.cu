// A kernel that takes a NULL-able pointer, as fused optimizers do for their optional copy of the
// parameters in another precision: `y += a * x`, and when `copy` is not NULL, `copy = y` too.
extern "C" __global__ void kn_axpy_copy(float* __restrict__ y, const float* __restrict__ x, float a,
                                        float* __restrict__ copy, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float v = y[i] + a * x[i];
  y[i] = v;
  if (copy != nullptr) copy[i] = v;
}
