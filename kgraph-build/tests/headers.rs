//! The pinned toolchain (`scripts/install-nvcc`) compiles kernels that include CUDA's own
//! headers: half and bfloat16 types, cooperative groups and libcu++ (`<cuda/std/...>`), which
//! all need CCCL's `nv/target`. One kernel per header, each built through the real pipeline.

use std::path::{Path, PathBuf};

use kgraph_build::KernelBuild;

fn nvcc() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    kgraph_build::find_nvcc(here)
        .unwrap_or_else(|| panic!("these tests need nvcc: {}", kgraph_build::HOW_TO_GET_NVCC))
        .path
}

/// Builds `source` as `kernels/<stem>.cu` in a scratch folder; the cubin must not be empty.
fn builds(stem: &str, source: &str) {
    let root = tempfile::Builder::new().prefix(&format!("kgraph-headers-{stem}-")).tempdir().unwrap();
    let (src, out) = (root.path().join("kernels"), root.path().join("out"));
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join(format!("{stem}.cu")), source).unwrap();
    let report = KernelBuild::new()
        .kernel_dir(&src)
        .out_dir(&out)
        .archs(["sm_90"])
        .nvcc(nvcc())
        .emit_cargo_directives(false)
        .run()
        .unwrap_or_else(|e| panic!("{stem}.cu did not build:\n{e}"));
    assert_eq!(report.compiled.len(), 1, "{stem}.cu compiled");
    let cubin = std::fs::metadata(out.join(format!("{stem}.cubin"))).unwrap();
    assert!(cubin.len() > 0, "{stem}.cubin is empty");
}

#[test]
fn cuda_fp16_h() {
    builds(
        "fp16",
        "#include <cuda_fp16.h>\n\
         extern \"C\" __global__ void twice(const __half* x, __half* y, int n) {\n\
           int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
           if (i < n) y[i] = __hadd(x[i], x[i]);\n\
         }\n",
    );
}

#[test]
fn cuda_bf16_h() {
    builds(
        "bf16",
        "#include <cuda_bf16.h>\n\
         extern \"C\" __global__ void widen(const __nv_bfloat16* x, float* y, int n) {\n\
           int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
           if (i < n) y[i] = __bfloat162float(x[i]);\n\
         }\n",
    );
}

#[test]
fn cooperative_groups_h() {
    builds(
        "coop",
        "#include <cooperative_groups.h>\n\
         namespace cg = cooperative_groups;\n\
         extern \"C\" __global__ void block_sum(const float* x, float* y) {\n\
           __shared__ float s[128];\n\
           cg::thread_block b = cg::this_thread_block();\n\
           s[b.thread_rank()] = x[b.thread_rank()];\n\
           b.sync();\n\
           if (b.thread_rank() == 0) { float t = 0; for (int i = 0; i < 128; ++i) t += s[i]; *y = t; }\n\
         }\n",
    );
}

#[test]
fn libcudacxx_cuda_std() {
    builds(
        "custd",
        "#include <cuda/std/limits>\n\
         #include <cuda/std/cstdint>\n\
         extern \"C\" __global__ void fill_max(cuda::std::int32_t* y, int n) {\n\
           int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
           if (i < n) y[i] = cuda::std::numeric_limits<cuda::std::int32_t>::max();\n\
         }\n",
    );
}
