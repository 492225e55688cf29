// A kernel whose safety depends on the block size (issue #32, item 4): a static shared array of
// 128 floats indexed by threadIdx.x, and no __launch_bounds__. Declared with `max_block = 128`,
// its checked launch refuses bigger blocks (a block of 1024 threads would write 896 floats past
// the array).

// out[b] = the number of threads of block b whose global index is below n.
extern "C" __global__ void kb_count_tile(int n, int n_blocks, float* out) {
    __shared__ float tile[128];
    int i = blockIdx.x * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x;
    int t = threadIdx.y * blockDim.x + threadIdx.x;
    tile[t] = i < n ? 1.0f : 0.0f;
    __syncthreads();
    if (t == 0 && (int)blockIdx.x < n_blocks) {
        float s = 0.0f;
        for (unsigned j = 0; j < blockDim.x * blockDim.y; ++j) s += tile[j];
        out[blockIdx.x] = s;
    }
}
