// Test kernels for parameter types beyond plain numbers (tests/gpu/types.rs): half and
// bfloat16 values and pointers, CUDA vector types, structs by value, by pointer and as
// `__grid_constant__`, untyped `void*` memory, and one half-precision forward/backward pair
// for a finite-difference check.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

// y[i] = x[i] * a, in half precision (one rounding: __hmul is correctly rounded).
extern "C" __global__ void ty_scale_half(const __half* x, __half a, int n, __half* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __hmul(x[i], a);
}

// y[i] = x[i] * a, in bfloat16.
extern "C" __global__ void ty_scale_bf16(const __nv_bfloat16* x, nv_bfloat16 a, int n, __nv_bfloat16* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __hmul(x[i], a);
}

// y[i] = (x[i].y, x[i].x): a half2 by pointer, components swapped.
extern "C" __global__ void ty_swap_half2(const half2* x, int n, half2* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __lowhigh2highlow(x[i]);
}

// y[i] = x[i] * s per component: float4 by pointer and by value.
extern "C" __global__ void ty_scale_float4(const float4* x, float4 s, int n, float4* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float4 v = x[i];
    y[i] = make_float4(v.x * s.x, v.y * s.y, v.z * s.z, v.w * s.w);
  }
}

// A struct by value with an alignment, a double, an array and C padding at its end
// (size 48, align 16).
struct __align__(16) Params {
  float a;      // 0
  int flags;    // 4
  double b;     // 8
  float w[4];   // 16
  short tag;    // 32; then 14 bytes of padding
};

// y[i] = p.a * x[i] + p.b + flags * w[i % 4] + tag: every field drives the output.
extern "C" __global__ void ty_affine(__grid_constant__ const Params p, const float* x, int n, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = p.a * x[i] + (float)p.b + (float)p.flags * p.w[i % 4] + (float)p.tag;
}

// A nested struct and a typedef'd struct holding vector fields (size 32, align 8).
struct Tag {
  int id;
  int kind;
};
typedef struct {
  float2 pos;
  float2 vel;
  float mass;
  Tag tag;      // 20; then 4 bytes of padding
} Particle;

// out[i] = in[i] advanced by dt: each output depends on its own struct only.
extern "C" __global__ void ty_particles_step(const Particle* in, float dt, int n, Particle* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    Particle p = in[i];
    p.pos.x += dt * p.vel.x;
    p.pos.y += dt * p.vel.y;
    p.mass *= 2.0f;
    p.tag.id += 1;
    p.tag.kind = p.tag.id * 10;
    out[i] = p;
  }
}

// out[i] = ~in[i] over untyped memory of `bytes` bytes.
extern "C" __global__ void ty_not_bytes(const void* in, int bytes, void* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < bytes) ((unsigned char*)out)[i] = ~((const unsigned char*)in)[i];
}

typedef float dfloat;
enum class Mode : unsigned char { Add = 0, Mul = 1 };
enum Sign { Plus = 1, Minus = -1 };

// y[i] = mode == Mul ? x[i] * s * sign : x[i] + s * sign, with a char and a bool scalar:
// a typedef, a scoped enum with an underlying type and a plain enum by value.
extern "C" __global__ void ty_mode(const dfloat* x, dfloat s, Mode mode, Sign sign, bool negate, char offset,
                                   int n, dfloat* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = mode == Mode::Mul ? x[i] * s * (float)sign : x[i] + s * (float)sign;
    y[i] = (negate ? -v : v) + (float)offset;
  }
}

// y = tanh(w * x), computed in half precision from f32 inputs: w and x rounded to __half,
// multiplied in half, tanh in float of that half product, the result rounded to half.
__device__ __half tanh_half(__half v) { return __float2half(tanhf(__half2float(v))); }

extern "C" __global__ void ty_tanh_half_fwd(const float* w, const float* x, int n, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __half2float(tanh_half(__hmul(__float2half(w[i]), __float2half(x[i]))));
}

// gw[i] = gy[i] * (1 - y^2) * x, in half precision (y recomputed as the forward does).
extern "C" __global__ void ty_tanh_half_bwd(const float* w, const float* x, const float* gy, int n, float* gw) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    __half xh = __float2half(x[i]);
    __half y = tanh_half(__hmul(__float2half(w[i]), xh));
    __half one = __float2half(1.0f);
    __half d = __hmul(__hsub(one, __hmul(y, y)), xh);
    gw[i] = __half2float(__hmul(__float2half(gy[i]), d));
  }
}
