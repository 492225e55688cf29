// Origin: coreylowman/cudarc examples/sin.cu @ 8995648e2ea73689c3ce4351ab6f110302255c5f
// License: MIT OR Apache-2.0 (LICENSE-MIT has no copyright line; Cargo.toml authors: Chelsea Lowman)
// Modified: verbatim

extern "C" __global__ void sin_kernel(float *out, const float *inp, int numel) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < numel) {
        out[i] = sin(inp[i]);
    }
}
