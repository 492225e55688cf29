// Kernels sized by their launch grid, as kernels copied from public projects are: an RMSNorm
// launched one block per row (the row is blockIdx.x, the row count is gridDim.x) and a bias add
// whose batch is gridDim.y (as LSTM-cell kernels are launched). Their declarations say so with
// extents over `grid.x` / `grid.y` (tests/gpu/rows.rs).

// out[r, j] = x[r, j] * weight[j] / sqrt(mean_j(x[r, j]^2) + eps) for row r = blockIdx.x. Any
// block shape up to 1024 threads: the threads of a block are flattened, and the sum of squares is
// reduced in a fixed order (deterministic).
extern "C" __global__ void __launch_bounds__(1024)
kr_rms_norm(float* __restrict__ out, const float* __restrict__ x, const float* __restrict__ weight, float eps,
            int hidden) {
  __shared__ float partial[1024];
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  const float* row = x + (size_t)blockIdx.x * hidden;
  float sum = 0.0f;
  for (int j = t; j < hidden; j += threads) sum += row[j] * row[j];
  partial[t] = sum;
  __syncthreads();
  for (unsigned stride = 512; stride > 0; stride >>= 1) {
    if (t < stride && t + stride < threads) partial[t] += partial[t + stride];
    __syncthreads();
  }
  const float inv = rsqrtf(partial[0] / (float)hidden + eps);
  float* out_row = out + (size_t)blockIdx.x * hidden;
  for (int j = t; j < hidden; j += threads) out_row[j] = row[j] * inv * weight[j];
}

// out[b, i] = a[b, i] + bias[i] for batch row b = blockIdx.y and i < n.
extern "C" __global__ void kr_add_bias_rows(const float* __restrict__ a, const float* __restrict__ bias,
                                            float* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[(size_t)blockIdx.y * n + i] = a[(size_t)blockIdx.y * n + i] + bias[i];
}
