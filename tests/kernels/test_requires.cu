// Kernels whose extents are true only under launch-time requirements (`requires(...)`,
// `align(...)` in the declaration: tests/gpu/requires.rs), one per kind of requirement.

// Scalar range, after vLLM's rms_norm: one block per row, row r read at `input + r * input_stride`.
// The extent of `input`, `(grid.x - 1) * input_stride + hidden`, bounds every read only when
// `input_stride >= 0` (a negative stride walks below `input`). out[r * hidden + i] = 2 * input[...].
extern "C" __global__ void rq_scale_rows(float* __restrict__ out, const float* __restrict__ input,
                                         long long input_stride, int hidden) {
  const float* row = input + blockIdx.x * input_stride;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) out[blockIdx.x * hidden + i] = 2.0f * row[i];
}

// Block shape: a tile of exactly 256 floats in shared memory, summed by thread 0 over all 256
// slots. Only a block of 256 threads (x only) fills every slot; a larger one writes past the
// tile. out[b] = sum of x[b * 256 .. b * 256 + 256).
extern "C" __global__ void rq_tile_sum(const float* __restrict__ x, float* __restrict__ out) {
  __shared__ float tile[256];
  tile[threadIdx.x] = x[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.0f;
    for (int j = 0; j < 256; ++j) s += tile[j];
    out[blockIdx.x] = s;
  }
}

// Alignment: reads and writes `float4`s through `float*` (16-byte accesses), so both pointers
// must be 16-byte aligned. y[i] = x[i] + 1 for i < 4 * n4.
extern "C" __global__ void rq_add_one4(const float* __restrict__ x, float* __restrict__ y, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) {
    float4 v = reinterpret_cast<const float4*>(x)[i];
    v.x += 1.0f; v.y += 1.0f; v.z += 1.0f; v.w += 1.0f;
    reinterpret_cast<float4*>(y)[i] = v;
  }
}
