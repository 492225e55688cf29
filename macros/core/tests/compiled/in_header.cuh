// A kernel defined in a local header, with a typedef'd parameter type.
typedef float real;
extern "C" __global__ void from_header(const real* x, real* y, int n) {
  int i = threadIdx.x;
  if (i < n) y[i] = x[i];
}
