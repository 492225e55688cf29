// Projection: y = P h + c (N_PROJ = 8 outputs).
//
// Layout (row-major, f32): h [batch, n_hid], p [8, n_hid], c [8], y [batch, 8],
//   g_y [batch, 8], g_h [batch, n_hid], g_p [8, n_hid], g_c [8].
//
// Backward: g_h += P^T g_y, g_p += sum_b g_y h^T, g_c += sum_b g_y. Gradient outputs are
// ACCUMULATED (+=): zero them before a step (see cfc_step.cu). No output may alias an input.
//
// Launches:
//   projection           one warp per (b, o): block 128, grid = ceil(batch * 8 / 4)
//   projection_backward  block 1024, two block-uniform roles (kg_linear_backward in
//       model_common.cuh): grid = ceil(batch * n_hid / 1024) + ceil(8 * (n_hid + 1) / 32)
// Deterministic (reductions in an order fixed by the launch shape, no atomics).
#include "model_common.cuh"

// Block `block` of `projection` (of any number of blocks): what a resident step runs
// (`unsafe(device_fn = "projection_block")`, docs/resident.md).
__device__ __forceinline__ void projection_block(unsigned block, unsigned blocks, const float* __restrict__ h,
                                                 const float* __restrict__ p, const float* __restrict__ c,
                                                 int batch, int n_hid, float* __restrict__ y) {
    (void)blocks;
    if (kg_not_whole_warps()) return;
    int i;
    float v;
    if (!kg_linear_forward_warp<N_PROJ>(block, h, p, c, batch, n_hid, &i, &v)) return;
    if ((threadIdx.x & 31) == 0) y[i] = v;
}

extern "C" __global__ void __launch_bounds__(128)
    projection(const float* __restrict__ h, const float* __restrict__ p,
               const float* __restrict__ c, int batch, int n_hid, float* __restrict__ y) {
    kg_pdl_enter();
    projection_block(blockIdx.x, gridDim.x, h, p, c, batch, n_hid, y);
}

struct ProjectionGrad {
    const float* __restrict__ g_y;
    __device__ __forceinline__ float operator()(int i) const { return g_y[i]; }
};

extern "C" __global__ void __launch_bounds__(1024)
    projection_backward(const float* __restrict__ h, const float* __restrict__ p,
                        const float* __restrict__ g_y, int batch, int n_hid,
                        float* __restrict__ g_h, float* __restrict__ g_p,
                        float* __restrict__ g_c) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    const ProjectionGrad g{g_y};
    kg_linear_backward<N_PROJ>(h, p, g, batch, n_hid, g_h, g_p, g_c);
}
