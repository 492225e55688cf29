// saxpy: y = a * x + y, one thread per element. The kernel of examples/add_kernel.rs, the
// smallest complete "a .cu file + one line of Rust" example.
extern "C" __global__ void saxpy(float a, const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
