// Origin: coreylowman/cudarc examples/07-build-workflow/src/cuda/kernels/my_struct_kernel.cu, examples/07-build-workflow/src/cuda/includes/my_struct.h @ 8995648e2ea73689c3ce4351ab6f110302255c5f
// License: MIT OR Apache-2.0 (LICENSE-MIT has no copyright line; Cargo.toml authors: Chelsea Lowman)
// Modified: #include "../includes/my_struct.h" replaced by that header's text (verbatim); kernel verbatim

// --- inlined from examples/07-build-workflow/src/cuda/includes/my_struct.h ---
// my_struct.h
#ifndef MY_STRUCT_H
#define MY_STRUCT_H

struct MyStruct
{
    /// example data containing fixed length array of floats
    float data[4];
};

#endif // MY_STRUCT_H
// --- end of my_struct.h ---

extern "C" __global__ void my_struct_kernel(MyStruct *my_structs, const size_t n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n)
    {
        my_structs[i].data[0] += 1;
        my_structs[i].data[1] += 1;
        my_structs[i].data[2] += 1;
        my_structs[i].data[3] += 1;
    }
}
