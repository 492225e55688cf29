// `#ifndef X` inside the parameter list, X defined: the text shows 7 parameters, nvcc compiles 5.
#define X
extern "C" __global__ void ifndef_params(const float* a, float* b,
#ifndef X
                                        const float* c, const float* d,
#endif
                                        int n, float s, float t) {
  int i = threadIdx.x;
  if (i < n) b[i] = a[i] * s + t;
}
