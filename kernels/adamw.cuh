// AdamW's per-element update and the chunked multi-tensor loop, shared by adamw.cu and the train
// step's fused CfC weight-gradient kernel (cfc_step.cu): one formula, so every caller gives the
// same bits (the math is in adamw.cu's header).
#pragma once
#include "model_common.cuh"

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

// The chunks of a list of tensors (adamw.cu's header: chunks of 4 * blockDim.x elements, tensor
// after tensor), chunk `first`, first + stride, ... taken by this block. Block-uniform; any
// first/stride covers every chunk once when the callers' blocks take first = 0 .. stride - 1.
template <int N>
__device__ __forceinline__ void adamw_chunks(const AdamWCoeffs& c, const AdamWTensor (&t)[N],
                                             unsigned first, unsigned stride) {
    const unsigned per_chunk = 4u * blockDim.x;
    unsigned first_chunk[N + 1];  // tensor i owns chunks [first_chunk[i], first_chunk[i + 1])
    first_chunk[0] = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) first_chunk[i + 1] = first_chunk[i] + kg_blocks_for(t[i].n, per_chunk);
    for (unsigned chunk = first; chunk < first_chunk[N]; chunk += stride) {
#pragma unroll
        for (int i = 0; i < N; ++i) {
            if (chunk >= first_chunk[i] && chunk < first_chunk[i + 1])
                adamw_quad(c, t[i].grad, t[i].n, t[i].param, t[i].m, t[i].v, chunk - first_chunk[i]);
        }
    }
}

// n as a tensor size (0 for n <= 0).
__device__ __forceinline__ unsigned adamw_size(int n) { return n > 0 ? (unsigned)n : 0u; }
