// AdamW (decoupled weight decay, bias-corrected), in place, float4-vectorised.
//
// Per element, with bc1 = 1 - beta1^t and bc2 = 1 - beta2^t given by the caller:
//   m = beta1 m + (1 - beta1) g;   v = beta2 v + (1 - beta2) g^2
//   p = p (1 - lr wd) - (lr / bc1) m / (sqrt(v) / sqrt(bc2) + eps)
// (PyTorch's AdamW). eps must be > 0. Zero g, m, v leave m = v = 0 and only decay p.
//
// Layout (f32): param, grad, m, v [n], flat (run once per tensor, or once over an arena).
// Two entry points with one body:
//   adamw            lr, bc1, bc2 as scalars (eager use; a captured graph would freeze them)
//   adamw_scheduled  lr, bc1, bc2 read from schedule[0..3] in device memory, so a captured
//                    train graph picks up the step's values on every replay (write them through
//                    a SlotBus or an upload before the replay).
//
// Vectorisation: when param, grad, m and v are all 16-byte aligned, elements [0, 4 floor(n/4))
// go through float4 loads/stores and the n % 4 tail through a scalar loop; otherwise (views at
// odd offsets) everything takes the scalar loop. Both paths run the same per-element code, so
// results are bitwise identical either way. Grid-stride loops: any grid works.
// Launch: block 256, grid = clamp(ceil(n / 1024), 1, 2112) (16 blocks per H100/H200 SM).
//
// adamw_scheduled_group: adamw_scheduled over up to ADAMW_GROUP = 6 tensors in ONE launch (the
// train step's six trained tensors: one node instead of six). Each tensor i (grad_i, param_i,
// m_i, v_i, n_i elements; n_i <= 0 for an unused slot) is cut into chunks of 4 * blockDim.x
// elements; chunk c of the concatenated chunk list goes to block c (grid-stride over chunks, so
// any grid works; grid = sum_i ceil(n_i / 1024) gives one chunk per block). In a chunk each
// thread takes 4 consecutive elements: one float4 when the tensor's four arrays are 16-byte
// aligned and all four are in range, otherwise element by element. Every element runs the same
// adamw_elem as adamw_scheduled: the results are bitwise those of six adamw_scheduled launches.
#include "model_common.cuh"

#define ADAMW_GROUP 6

struct AdamWCoeffs {
    float beta1, beta2, eps, decay /* 1 - lr wd */, step /* lr / bc1 */, inv_sqrt_bc2;
};

__device__ __forceinline__ AdamWCoeffs adamw_coeffs(float lr, float beta1, float beta2, float eps,
                                                    float weight_decay, float bc1, float bc2) {
    AdamWCoeffs c;
    c.beta1 = beta1;
    c.beta2 = beta2;
    c.eps = eps;
    c.decay = 1.f - lr * weight_decay;
    c.step = lr / bc1;
    c.inv_sqrt_bc2 = 1.f / sqrtf(bc2);
    return c;
}

__device__ __forceinline__ void adamw_elem(const AdamWCoeffs& c, float& p, float g, float& m,
                                           float& v) {
    m = fmaf(c.beta1, m, (1.f - c.beta1) * g);
    v = fmaf(c.beta2, v, (1.f - c.beta2) * (g * g));
    const float denom = fmaf(sqrtf(v), c.inv_sqrt_bc2, c.eps);
    p = fmaf(p, c.decay, -c.step * (m / denom));
}

__device__ __forceinline__ void adamw_body(const AdamWCoeffs& c, const float* __restrict__ grad,
                                           int n, float* __restrict__ param, float* __restrict__ m,
                                           float* __restrict__ v) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long addr_bits =
        (unsigned long long)param | (unsigned long long)grad | (unsigned long long)m |
        (unsigned long long)v;
    long long scalar_from = 0;
    if ((addr_bits & 15ull) == 0) {
        const long long n4 = n >> 2;
        float4* p4 = reinterpret_cast<float4*>(param);
        const float4* g4 = reinterpret_cast<const float4*>(grad);
        float4* m4 = reinterpret_cast<float4*>(m);
        float4* v4 = reinterpret_cast<float4*>(v);
        for (long long i = tid; i < n4; i += stride) {
            float4 p = p4[i], mm = m4[i], vv = v4[i];
            const float4 g = g4[i];
            adamw_elem(c, p.x, g.x, mm.x, vv.x);
            adamw_elem(c, p.y, g.y, mm.y, vv.y);
            adamw_elem(c, p.z, g.z, mm.z, vv.z);
            adamw_elem(c, p.w, g.w, mm.w, vv.w);
            p4[i] = p;
            m4[i] = mm;
            v4[i] = vv;
        }
        scalar_from = n4 << 2;
    }
    for (long long i = scalar_from + tid; i < n; i += stride) {
        float p = param[i], mm = m[i], vv = v[i];
        adamw_elem(c, p, grad[i], mm, vv);
        param[i] = p;
        m[i] = mm;
        v[i] = vv;
    }
}

extern "C" __global__ void __launch_bounds__(256)
    adamw(const float* __restrict__ grad, float lr, float beta1, float beta2, float eps,
          float weight_decay, float bias_correction1, float bias_correction2, int n,
          float* __restrict__ param, float* __restrict__ m, float* __restrict__ v) {
    kg_pdl_enter();
    const AdamWCoeffs c =
        adamw_coeffs(lr, beta1, beta2, eps, weight_decay, bias_correction1, bias_correction2);
    adamw_body(c, grad, n, param, m, v);
}

// schedule[0] = lr, schedule[1] = bias_correction1, schedule[2] = bias_correction2.
extern "C" __global__ void __launch_bounds__(256)
    adamw_scheduled(const float* __restrict__ grad, const float* __restrict__ schedule,
                    float beta1, float beta2, float eps, float weight_decay, int n,
                    float* __restrict__ param, float* __restrict__ m, float* __restrict__ v) {
    kg_pdl_enter();
    const AdamWCoeffs c = adamw_coeffs(schedule[0], beta1, beta2, eps, weight_decay, schedule[1],
                                       schedule[2]);
    adamw_body(c, grad, n, param, m, v);
}

// Elements [4 q, 4 q + 4) of one tensor, q = chunk * blockDim.x + threadIdx.x (see the top).
// n < 2^31 and chunk < ceil(n / (4 blockDim.x)), so 4 q < n + 4 blockDim.x fits 32 bits.
__device__ __forceinline__ void adamw_quad(const AdamWCoeffs& c, const float* __restrict__ grad,
                                           unsigned n, float* __restrict__ param,
                                           float* __restrict__ m, float* __restrict__ v,
                                           unsigned chunk) {
    const unsigned first = 4u * (chunk * blockDim.x + threadIdx.x);
    if (first >= n) return;
    const unsigned long long addr_bits =
        (unsigned long long)param | (unsigned long long)grad | (unsigned long long)m |
        (unsigned long long)v;
    if ((addr_bits & 15ull) == 0 && n - first >= 4u) {
        const unsigned q = first >> 2;
        float4 p = reinterpret_cast<float4*>(param)[q], mm = reinterpret_cast<float4*>(m)[q],
               vv = reinterpret_cast<float4*>(v)[q];
        const float4 g = reinterpret_cast<const float4*>(grad)[q];
        adamw_elem(c, p.x, g.x, mm.x, vv.x);
        adamw_elem(c, p.y, g.y, mm.y, vv.y);
        adamw_elem(c, p.z, g.z, mm.z, vv.z);
        adamw_elem(c, p.w, g.w, mm.w, vv.w);
        reinterpret_cast<float4*>(param)[q] = p;
        reinterpret_cast<float4*>(m)[q] = mm;
        reinterpret_cast<float4*>(v)[q] = vv;
        return;
    }
    const unsigned end = n - first >= 4u ? first + 4u : n;
    for (unsigned i = first; i < end; ++i) {
        float p = param[i], mm = m[i], vv = v[i];
        adamw_elem(c, p, grad[i], mm, vv);
        param[i] = p;
        m[i] = mm;
        v[i] = vv;
    }
}

struct AdamWTensor {
    const float* __restrict__ grad;
    float* __restrict__ param;
    float* __restrict__ m;
    float* __restrict__ v;
    unsigned n;  // 0 for n <= 0
};

extern "C" __global__ void __launch_bounds__(256) adamw_scheduled_group(
    const float* __restrict__ schedule, float beta1, float beta2, float eps, float weight_decay,
    const float* __restrict__ grad0, int n0, float* __restrict__ param0, float* __restrict__ m0,
    float* __restrict__ v0, const float* __restrict__ grad1, int n1, float* __restrict__ param1,
    float* __restrict__ m1, float* __restrict__ v1, const float* __restrict__ grad2, int n2,
    float* __restrict__ param2, float* __restrict__ m2, float* __restrict__ v2,
    const float* __restrict__ grad3, int n3, float* __restrict__ param3, float* __restrict__ m3,
    float* __restrict__ v3, const float* __restrict__ grad4, int n4, float* __restrict__ param4,
    float* __restrict__ m4, float* __restrict__ v4, const float* __restrict__ grad5, int n5,
    float* __restrict__ param5, float* __restrict__ m5, float* __restrict__ v5) {
    kg_pdl_enter();
    const auto size = [](int n) { return n > 0 ? (unsigned)n : 0u; };
    const AdamWTensor t[ADAMW_GROUP] = {
        {grad0, param0, m0, v0, size(n0)}, {grad1, param1, m1, v1, size(n1)},
        {grad2, param2, m2, v2, size(n2)}, {grad3, param3, m3, v3, size(n3)},
        {grad4, param4, m4, v4, size(n4)}, {grad5, param5, m5, v5, size(n5)},
    };
    const AdamWCoeffs c = adamw_coeffs(schedule[0], beta1, beta2, eps, weight_decay, schedule[1],
                                       schedule[2]);
    const unsigned per_chunk = 4u * blockDim.x;
    unsigned first_chunk[ADAMW_GROUP + 1];  // tensor i owns chunks [first_chunk[i], first_chunk[i + 1])
    first_chunk[0] = 0;
#pragma unroll
    for (int i = 0; i < ADAMW_GROUP; ++i) first_chunk[i + 1] = first_chunk[i] + kg_blocks_for(t[i].n, per_chunk);
    for (unsigned chunk = blockIdx.x; chunk < first_chunk[ADAMW_GROUP]; chunk += gridDim.x) {
#pragma unroll
        for (int i = 0; i < ADAMW_GROUP; ++i) {
            if (chunk >= first_chunk[i] && chunk < first_chunk[i + 1])
                adamw_quad(c, t[i].grad, t[i].n, t[i].param, t[i].m, t[i].v, chunk - first_chunk[i]);
        }
    }
}
