// The MLP example's own kernels (examples/mlp.rs, examples/mlp/*.toml): everything of a
// tanh MLP's training step that is not a matrix product (the products are the spec's gemm
// nodes, through cuBLAS).
//
// Layout: activations are row-major [rows x cols], one row per sample, one column per unit, as
// the gemm nodes read and write them (C[m x n] with m = rows).
//
//   bias_tanh           h = tanh(h + bias[col]), in place over the GEMM's output
//   mse_loss            out = z + bias[col]; loss[0] = 0.5 sum (out - targets)^2 / rows and
//                       g = (out - targets) / rows (one block, sums in double, fixed order)
//   tanh_backward       g = g (1 - h^2) in place, and the per-chunk column sums of the new g
//   col_partial_sums    the per-chunk column sums of g alone (the output layer's bias gradient)
//   col_sum_finish      db[c] = sum over chunks k of partial[k cols + c], in k order
//   adamw_schedule      step[0] += 1; schedule = [lr, 1 - beta1^t, 1 - beta2^t] for
//                       kernels/adamw.cu's adamw_scheduled_group, so a replay needs no upload
//
// Every reduction runs in an order fixed by the arguments and the block size, never by timing,
// so a replay gives the same bits as the last (the FD checks and run_eager rely on it). The
// column sums are two launches (per-chunk partials, then the chunks in order) so the gradient
// of a 4096-row batch is spread over many blocks instead of one block per 32 columns.

#define MLP_BLOCK 256
// Columns per block of the column sums: one warp's width, so a warp reads 32 consecutive floats
// of a row.
#define MLP_TILE 32
#define MLP_LANES (MLP_BLOCK / MLP_TILE)
#define MLP_LOSS_BLOCK 1024

// h = tanh(h + bias[c]) for rows x cols, in place. Grid-stride over rows (y) and columns (x):
// any grid works; launch block 256, grid (ceil(cols / 256), min(rows, 65535)).
extern "C" __global__ void __launch_bounds__(MLP_BLOCK)
    bias_tanh(const float* __restrict__ bias, int rows, int cols, float* __restrict__ h) {
    const long long stride_c = (long long)gridDim.x * blockDim.x;
    for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += stride_c) {
        const float b = bias[c];
        for (long long r = blockIdx.y; r < rows; r += gridDim.y) h[r * cols + c] = tanhf(h[r * cols + c] + b);
    }
}

// out = z + bias[c], d = out - targets; loss[0] = 0.5 sum(d^2) / rows (overwritten) and
// g[i] = d / rows (overwritten). Block 0 does all the work (any other block returns at once, so
// any grid is safe); each thread sums its elements (stride blockDim.x) in double, then a
// shared-memory tree in a fixed order. Launch: grid 1, block 1024.
extern "C" __global__ void __launch_bounds__(MLP_LOSS_BLOCK)
    mse_loss(const float* __restrict__ z, const float* __restrict__ bias,
             const float* __restrict__ targets, int rows, int cols, float* __restrict__ loss,
             float* __restrict__ g) {
    __shared__ double sums[MLP_LOSS_BLOCK];
    if (blockIdx.x != 0) return;
    if (rows <= 0 || cols <= 0) {
        if (threadIdx.x == 0) loss[0] = 0.f;
        return;
    }
    const long long n = (long long)rows * cols;
    const float inv_rows = 1.f / (float)rows;
    double acc = 0.0;
    // The column advances with the index (by blockDim.x mod cols), so no division per element.
    int c = (int)(threadIdx.x % cols);
    const int step_c = (int)(blockDim.x % cols);
    for (long long i = threadIdx.x; i < n; i += blockDim.x) {
        const float d = (z[i] + bias[c]) - targets[i];
        g[i] = d * inv_rows;
        acc += (double)d * (double)d;
        c += step_c;
        if (c >= cols) c -= cols;
    }
    sums[threadIdx.x] = acc;
    __syncthreads();
    int half = 1;
    while (half < (int)blockDim.x) half <<= 1;
    for (half >>= 1; half > 0; half >>= 1) {
        if ((int)threadIdx.x < half && threadIdx.x + half < blockDim.x)
            sums[threadIdx.x] += sums[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) loss[0] = (float)(0.5 * sums[0] / (double)rows);
}

// The column sums of one block's chunks: thread (lane = tid / 32, col = tid % 32 of the block's
// tile) sums rows lane, lane + 8, ... of each chunk it owns in order, then lane 0 adds the lanes
// in order. With TANH (G = float), g is first replaced by g (1 - h^2); without (G = const float)
// g is only read. A block size that is not a multiple of 32 returns without writing (partial
// keeps its old contents); __launch_bounds__ keeps it at most 256. Loop bounds depend on the
// block's index only, so every thread reaches each __syncthreads.
template <bool TANH, typename G>
__device__ __forceinline__ void col_partials(const float* __restrict__ h, int rows, int cols,
                                             int chunks, G* __restrict__ g,
                                             float* __restrict__ partial) {
    __shared__ float lane_sums[MLP_LANES][MLP_TILE];
    if (blockDim.x % MLP_TILE != 0 || chunks <= 0 || rows < 0) return;
    const int lanes = blockDim.x / MLP_TILE;
    const int tx = threadIdx.x % MLP_TILE, ty = threadIdx.x / MLP_TILE;
    const long long chunk_rows = ((long long)rows + chunks - 1) / chunks;
    for (long long tile = blockIdx.x; tile * MLP_TILE < cols; tile += gridDim.x) {
        const long long c = tile * MLP_TILE + tx;
        for (long long k = blockIdx.y; k < chunks; k += gridDim.y) {
            const long long r0 = min(k * chunk_rows, (long long)rows);
            const long long r1 = min(r0 + chunk_rows, (long long)rows);
            float acc = 0.f;
            if (c < cols) {
                for (long long r = r0 + ty; r < r1; r += lanes) {
                    const long long i = r * cols + c;
                    float v = g[i];
                    if constexpr (TANH) {
                        const float y = h[i];
                        v *= 1.f - y * y;
                        g[i] = v;
                    }
                    acc += v;
                }
            }
            lane_sums[ty][tx] = acc;
            __syncthreads();
            if (ty == 0 && c < cols) {
                float s = 0.f;
                for (int l = 0; l < lanes; ++l) s += lane_sums[l][tx];
                partial[k * cols + c] = s;
            }
            __syncthreads();
        }
    }
}

// g = g (1 - h^2) in place (the gradient through h = tanh(z): g holds dL/dh on entry, dL/dz on
// exit) and partial[k cols + c] = sum of the new g over the rows of chunk k in column c, chunk
// k = rows [k ceil(rows / chunks), (k + 1) ceil(rows / chunks)). Launch: block 256, grid
// (ceil(cols / 32), chunks); any grid is correct.
extern "C" __global__ void __launch_bounds__(MLP_BLOCK)
    tanh_backward(const float* __restrict__ h, int rows, int cols, int chunks,
                  float* __restrict__ g, float* __restrict__ partial) {
    col_partials<true, float>(h, rows, cols, chunks, g, partial);
}

// partial[k cols + c] = sum of g over the rows of chunk k in column c (as tanh_backward, g read
// only). Launch: block 256, grid (ceil(cols / 32), chunks).
extern "C" __global__ void __launch_bounds__(MLP_BLOCK)
    col_partial_sums(const float* __restrict__ g, int rows, int cols, int chunks,
                     float* __restrict__ partial) {
    col_partials<false, const float>(nullptr, rows, cols, chunks, g, partial);
}

// db[c] = partial[c] + partial[cols + c] + ... + partial[(chunks - 1) cols + c], in that order
// (overwritten). Launch: block 256, grid ceil(cols / 256); grid-stride, any grid works.
extern "C" __global__ void __launch_bounds__(MLP_BLOCK)
    col_sum_finish(const float* __restrict__ partial, int chunks, int cols, float* __restrict__ db) {
    const long long stride_c = (long long)gridDim.x * blockDim.x;
    for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += stride_c) {
        float s = 0.f;
        for (int k = 0; k < chunks; ++k) s += partial[(long long)k * cols + c];
        db[c] = s;
    }
}

// t = step[0] + 1 (saturating at INT_MAX), step[0] = t, schedule = [lr, 1 - beta1^t, 1 - beta2^t]
// (the powers in double). One thread does it; any other returns. Launch: grid 1, block 32.
extern "C" __global__ void __launch_bounds__(32)
    adamw_schedule(float lr, float beta1, float beta2, int* __restrict__ step,
                   float* __restrict__ schedule) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const int t = step[0] < 0x7fffffff ? step[0] + 1 : step[0];
    step[0] = t;
    schedule[0] = lr;
    schedule[1] = (float)(1.0 - pow((double)beta1, (double)t));
    schedule[2] = (float)(1.0 - pow((double)beta2, (double)t));
}
