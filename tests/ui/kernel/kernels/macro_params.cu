// A kernel whose parameter list uses a macro: kgraph reads it from the preprocessed source.
#define REAL float
extern "C" __global__ void scale(REAL* x, REAL a, int n) {
  int i = threadIdx.x;
  if (i < n) x[i] *= a;
}
