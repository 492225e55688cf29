// Kernels for the block-bound and raw-handle rules of #[kernel] (issue #32, item 4).

// A static shared array indexed by thread, no __launch_bounds__: safe only for blocks up to 128.
extern "C" __global__ void tile_sum(float* out, int n) {
    __shared__ float tile[128];
    tile[threadIdx.x] = threadIdx.x < n ? 1.0f : 0.0f;
    __syncthreads();
    if (threadIdx.x == 0 && n > 0) {
        float s = 0.0f;
        for (int i = 0; i < 128; ++i) s += tile[i];
        out[0] = s;
    }
}

// The same with __launch_bounds__: the kernel's own bound applies.
extern "C" __global__ void __launch_bounds__(128) tile_sum_bounded(float* out, int n) {
    __shared__ float tile[128];
    tile[threadIdx.x] = threadIdx.x < n ? 1.0f : 0.0f;
    __syncthreads();
    if (threadIdx.x == 0 && n > 0) out[0] = tile[0];
}

// Texture and surface objects: raw handles.
extern "C" __global__ void sample(float* out, cudaTextureObject_t tex, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(tex, i);
}

extern "C" __global__ void store(cudaSurfaceObject_t surf, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) surf1Dwrite(1.0f, surf, i * 4);
}

// A struct holding a device pointer.
struct GatherArgs {
    const float* source;
    int count;
};

extern "C" __global__ void gather(float* out, GatherArgs g, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && i < g.count) out[i] = g.source[i];
}
