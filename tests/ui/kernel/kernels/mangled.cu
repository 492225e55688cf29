// A kernel without extern "C": nvcc mangles its symbol; kgraph binds it through the record.
__global__ void mangled(float* out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = 1.0f;
}
