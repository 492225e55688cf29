// PDL: a kernel that waits on its grid dependency, one that does not, and one that waits but
// also calls an external function (printf), so its wait is not proven.
extern "C" __global__ void waits(float* x, int n) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if ((int)threadIdx.x < n) x[threadIdx.x] = 1.0f;
}
extern "C" __global__ void no_wait(float* x, int n) {
  if ((int)threadIdx.x < n) x[threadIdx.x] = 1.0f;
}
extern "C" __global__ void waits_and_prints(float* x, int n) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (threadIdx.x == 0) printf("n = %d\n", n);
  if ((int)threadIdx.x < n) x[threadIdx.x] = 1.0f;
}
