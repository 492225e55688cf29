// Test kernels that use dynamic shared memory (tests/gpu/extents.rs, the `shared = <bytes>`
// requirement). In a file of their own: without nvcc's record (the NVRTC fallback) kgraph reads
// dynamic shared memory use from the source file by file, and every checked declaration of a
// kernel of a file declaring an `extern __shared__` array must then say `shared`.

// out[b] = the sum of x over block b (for b < n_blocks), through `extern __shared__` memory of
// blockDim.x floats: the dynamic shared memory a launch must give it (`shared = block.x * 4`).
// Only blockDim.x threads index the array, so a 1-D block is what it expects; it returns for others.
extern __shared__ float ka_block_partials[];
extern "C" __global__ void ka_block_sum_f32(const float* x, int n, int n_blocks, float* out) {
  if (blockDim.y != 1 || blockDim.z != 1) return;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  ka_block_partials[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (threadIdx.x == 0 && (int)blockIdx.x < n_blocks) {
    float t = 0.0f;
    for (unsigned j = 0; j < blockDim.x; ++j) t += ka_block_partials[j];
    out[blockIdx.x] = t;
  }
}

// ka_block_sum_f32 with 16 KiB of static shared memory beside the dynamic array: the kernel's
// default dynamic limit is 48 KiB less those 16 (so 40 KiB of dynamic memory needs the opt-in).
extern "C" __global__ void ka_block_sum_static_f32(const float* x, int n, int n_blocks, float* out) {
  __shared__ float ka_static_tile[4096];
  if (blockDim.y != 1 || blockDim.z != 1) return;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  ka_static_tile[threadIdx.x % 4096] = 0.0f;
  ka_block_partials[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (threadIdx.x == 0 && (int)blockIdx.x < n_blocks) {
    float t = ka_static_tile[0];
    for (unsigned j = 0; j < blockDim.x; ++j) t += ka_block_partials[j];
    out[blockIdx.x] = t;
  }
}
