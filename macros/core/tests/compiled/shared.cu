// Dynamic shared memory: a block sum through an `extern __shared__` array of blockDim.x floats,
// the same through a device function that takes the array, and a kernel with a static array only.
extern __shared__ float kg_dynamic_smem[];

extern "C" __global__ void block_sum(const float* x, int n, float* out) {
  float* s = kg_dynamic_smem;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (threadIdx.x == 0 && (int)blockIdx.x < n) {
    float t = 0.0f;
    for (unsigned j = 0; j < blockDim.x; ++j) t += s[j];
    out[blockIdx.x] = t;
  }
}

__device__ __noinline__ float* smem_base() { return kg_dynamic_smem; }

extern "C" __global__ void through_function(float* out, int n) {
  float* s = smem_base();
  s[threadIdx.x] = 1.0f;
  __syncthreads();
  if ((int)threadIdx.x < n) out[threadIdx.x] = s[threadIdx.x];
}

extern "C" __global__ void static_tile(float* out, int n) {
  __shared__ float tile[128];
  tile[threadIdx.x % 128] = 2.0f;
  __syncthreads();
  if ((int)threadIdx.x < n) out[threadIdx.x] = tile[threadIdx.x % 128];
}
