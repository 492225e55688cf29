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
#include "adamw.cuh"

#define ADAMW_GROUP 6

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
    const AdamWTensor t[ADAMW_GROUP] = {
        {grad0, param0, m0, v0, adamw_size(n0)}, {grad1, param1, m1, v1, adamw_size(n1)},
        {grad2, param2, m2, v2, adamw_size(n2)}, {grad3, param3, m3, v3, adamw_size(n3)},
        {grad4, param4, m4, v4, adamw_size(n4)}, {grad5, param5, m5, v5, adamw_size(n5)},
    };
    const AdamWCoeffs c = adamw_coeffs(schedule[0], beta1, beta2, eps, weight_decay, schedule[1],
                                       schedule[2]);
    adamw_chunks(c, t, blockIdx.x, gridDim.x);
}
