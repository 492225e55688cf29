// Test kernel for kgraph-runtime's SM-split tests (tests/gpu/runtime/green.rs).

// out[b] = the SM block b ran on (%smid), for b < n. Each block first spins `cycles` SM clock
// cycles, so that a launch of many blocks stays on the GPU long enough to spread over every SM
// its stream may use.
extern "C" __global__ void rt_record_smid(unsigned int* out, int n, long long cycles) {
  if (threadIdx.x != 0 || (int)blockIdx.x >= n) return;
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
  unsigned int smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  out[blockIdx.x] = smid;
}
