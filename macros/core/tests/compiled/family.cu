// Three kernels from one macro, with `##` pasting (the style of candle's unary.cu).
#define UNARY_OP(TYPENAME, NAME, SUFFIX, FUNC)                                            \
  extern "C" __global__ void NAME##_##SUFFIX(const int numel, const TYPENAME* inp,       \
                                             TYPENAME* out) {                            \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                        \
    if (i < numel) out[i] = FUNC(inp[i]);                                                 \
  }
UNARY_OP(float, uexp, f32, expf)
UNARY_OP(double, uexp, f64, exp)
UNARY_OP(float, usqrt, f32, sqrtf)
