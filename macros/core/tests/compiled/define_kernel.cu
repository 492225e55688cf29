// The kernel's linkage and `__global__` come from a macro.
#define KERNEL extern "C" __global__
KERNEL void defined_kernel(float* x, int n) {
  if ((int)threadIdx.x < n) x[threadIdx.x] = 1.0f;
}
