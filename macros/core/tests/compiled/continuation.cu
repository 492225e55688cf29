// A backslash line continuation inside the parameter list (splicing `long long`).
extern "C" __global__ void spliced(const float* x, float* y, long \
                                    long n) {
  long long i = threadIdx.x;
  if (i < n) y[i] = x[i];
}
