// perception_fused: Graph A's whole latency step in one kernel. For each row b: the features of
// snapshot `snap [b]`, one CfC step of the state `h [b]` with elapsed time `dt [b]`, then the
// multi-horizon heads (`probs [b, 5]`) and the projection (`y [b, 8]`) of the new state, which
// replaces `h [b]` in place.
//
// Why: at B = 1 the multi-node Graph A (graphs/perception.toml) is latency-bound: each level
// waits for the previous kernel's grid to finish and its writes to land. One block holds the
// whole row here (features in shared memory, the old and new state in shared memory), so the
// levels are __syncthreads apart, and the state needs no carry copy: the block has read all of
// `h [b]` before it overwrites it.
//
// Same math, same bits: the pieces are the multi-node kernels' own device functions
// (snap_features.cuh, cfc.cuh, kg_dot_warp), called with the same lane layout, so probs, y and
// the new state equal the multi-node graph's bit for bit (tests/gpu/model_graphs.rs checks it).
// With n_hid <= 32, n_hid <= warps and 13 <= warps (block 1024 at n_hid 32) the weights sit in
// registers and the same fmaf chains run on them (fused_partials, fused_dot); model_fused.rs
// checks this path against the strided loops of smaller blocks, bit for bit.
//
// Layout (row-major, f32): snap [batch, 40], dt [batch], h [batch, n_hid],
//   w_g, w_t [n_hid, 45 + n_hid], b_g, b_t [n_hid], w_h [5, n_hid], b_h [5], p [8, n_hid],
//   c [8], probs [batch, 5], y [batch, 8]. `snap`, `dt`, `probs` and `y` may be mapped pinned
//   host memory (the latency graph's zero-copy buffers). `h` must not alias any other buffer.
// Launch: one block per row, grid = batch, block = 1024 (any 1-D multiple of 32 works: warps
//   stride over the hidden units and the 13 outputs). 1 <= n_hid <= FUSED_MAX_HID; for any
//   other n_hid, or another block shape, the kernel writes nothing (it never reads or writes
//   out of bounds, and never loops forever).
#include "perception_fused.cuh"

extern "C" __global__ void __launch_bounds__(1024)
    perception_fused(const float* __restrict__ snap, const float* __restrict__ dt,
                     float* __restrict__ h, const float* __restrict__ w_g,
                     const float* __restrict__ b_g, const float* __restrict__ w_t,
                     const float* __restrict__ b_t, const float* __restrict__ w_h,
                     const float* __restrict__ b_h, const float* __restrict__ p,
                     const float* __restrict__ c, int batch, int n_hid,
                     float* __restrict__ probs, float* __restrict__ y) {
    kg_pdl_enter();
    perception_fused_row(snap, dt, h, w_g, b_g, w_t, b_t, w_h, b_h, p, c, batch, n_hid, probs, y);
}
