// `#if (SWITCH)` around the last parameter, SWITCH 0: nvcc compiles 3 parameters.
#define SWITCH 0
extern "C" __global__ void if_switch(const float* x, float* y, int n
#if (SWITCH)
                                     , float extra
#endif
) {
  int i = threadIdx.x;
  if (i < n) y[i] = x[i];
}
