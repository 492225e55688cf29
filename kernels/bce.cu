// Binary cross-entropy with logits, loss and gradient fused in one kernel.
//
//   loss      = mean_i softplus(z_i) - y_i z_i   (stable: max(z, 0) - y z + log1p(exp(-|z|)))
//   g_logits += (sigmoid(z_i) - y_i) / count
//
// Layout (f32): logits, targets, g_logits [count] (e.g. [batch, 5] flattened), loss [1].
// Targets must lie in [0, 1]; then every term is >= 0 exactly (the fma forms max(z,0) - y z
// with one rounding), so loss >= 0.
// g_logits is ACCUMULATED (+=), like every kgraph gradient output; loss is overwritten.
//
// Launch: exactly ONE block (grid = 1), block = 256 (any multiple of 32 up to 1024); blocks other
// than block 0 do nothing. Determinism: each thread sums its strided elements in a fixed order
// in f64, then a fixed-shape warp butterfly and a fixed-order pass over the warp partials: the
// loss is bitwise reproducible for a given count and block size. Uses 256 bytes of static
// shared memory.
#include "model_common.cuh"

extern "C" __global__ void __launch_bounds__(1024)
    bce_with_logits(const float* __restrict__ logits, const float* __restrict__ targets,
                    int count, float* __restrict__ loss, float* __restrict__ g_logits) {
    kg_pdl_enter();
    if (kg_not_whole_warps()) return;
    __shared__ double warp_partial[KG_WARP];
    if (blockIdx.x != 0) return;
    const float inv_count = kg_bce_inv_count(count);
    double acc = 0.0;
    for (int i = threadIdx.x; i < count; i += blockDim.x) {
        const float z = logits[i];
        const float y = targets[i];
        acc += (double)kg_bce_term(z, y);
        g_logits[i] += kg_bce_grad(z, y, inv_count);
    }
    const double total = kg_block_sum_f64_to_first(acc, warp_partial);
    if (threadIdx.x == 0) loss[0] = count > 0 ? (float)(total / (double)count) : 0.f;
}
