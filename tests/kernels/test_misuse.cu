// Test kernel for the runtime-misuse GPU tests (tests/gpu/misuse.rs): a launch whose output shows
// whether it ran (and with which `base`), so a refused or aborted launch cannot look like a run.

// out[i] = base + i.
extern "C" __global__ void mu_iota_u32(unsigned int* out, int n, unsigned int base) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = base + (unsigned int)i;
}
