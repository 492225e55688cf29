//! A resident spec whose generated kernel nvcc refuses (two kernel files that compile alone but
//! define the same file-scope function differently, which one translation unit cannot hold)
//! does not fail the build: the kernels still compile, and nvcc's message waits beside the
//! generated source (`<stem>.failed`) for `graph!` to report at the spec.

use std::path::Path;

use kgraph_build::KernelBuild;

const A: &str = "__device__ float kg_test_shift(float v) { return v + 1.0f; }\n\
__device__ void a_block(unsigned block, unsigned blocks, const float* x, float* y, int n) {\n\
    int i = block * blockDim.x + threadIdx.x; if (i < n) y[i] = kg_test_shift(x[i]);\n}\n\
extern \"C\" __global__ void a(const float* x, float* y, int n) { a_block(blockIdx.x, gridDim.x, x, y, n); }\n";
const B: &str = "__device__ float kg_test_shift(float v) { return v + 2.0f; }\n\
__device__ void b_block(unsigned block, unsigned blocks, const float* x, float* y, int n) {\n\
    int i = block * blockDim.x + threadIdx.x; if (i < n) y[i] = kg_test_shift(x[i]);\n}\n\
extern \"C\" __global__ void b(const float* x, float* y, int n) { b_block(blockIdx.x, gridDim.x, x, y, n); }\n";
const DECLS: &str = "#[kernel(\"a.cu\", unsafe(extents, device_fn = \"a_block\"))]\n\
pub fn a(x: Pinned<[f32; n]>, y: &mut [f32; n], n: i32);\n\
#[kernel(\"b.cu\", unsafe(extents, device_fn = \"b_block\"))]\n\
pub fn b(x: &[f32; n], y: PinnedMut<[f32; n]>, n: i32);\n";

fn spec(decls: &Path) -> String {
    format!(
        "resident = true\n[kernels]\nsource = \"{}\"\nmodule = \"crate::decls\"\n[dims]\nn = 64\n\
         [buffers.x]\ndtype = \"f32\"\nlen = \"n\"\nrole = \"pinned\"\n\
         [buffers.t]\ndtype = \"f32\"\nlen = \"n\"\nrole = \"scratch\"\n\
         [buffers.y]\ndtype = \"f32\"\nlen = \"n\"\nrole = \"pinned_out\"\n\
         [[node]]\nname = \"first\"\nkernel = \"a\"\ngrid = 1\nblock = 64\nargs = {{ x = \"x\", y = \"t\", n = \"n\" }}\n\
         [[node]]\nname = \"second\"\nkernel = \"b\"\ngrid = 1\nblock = 64\nargs = {{ x = \"t\", y = \"y\", n = \"n\" }}\n",
        decls.display().to_string().replace('\\', "/")
    )
}

#[test]
fn a_generated_kernel_nvcc_refuses_leaves_its_message_for_graph_and_the_build_goes_on() {
    let nvcc = kgraph_build::find_nvcc(Path::new(env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|| panic!("this test needs nvcc: {}", kgraph_build::HOW_TO_GET_NVCC))
        .path;
    let root = tempfile::Builder::new().prefix("kgraph-build-resident-").tempdir().unwrap();
    let (kernels, graphs, out) = (root.path().join("kernels"), root.path().join("graphs"), root.path().join("out"));
    std::fs::create_dir_all(&kernels).unwrap();
    std::fs::create_dir_all(&graphs).unwrap();
    std::fs::write(kernels.join("a.cu"), A).unwrap();
    std::fs::write(kernels.join("b.cu"), B).unwrap();
    let decls = root.path().join("decls.rs");
    std::fs::write(&decls, DECLS).unwrap();
    std::fs::write(graphs.join("clash.toml"), spec(&decls)).unwrap();
    let report = KernelBuild::new()
        .kernel_dir(&kernels)
        .add_graph_dir(&graphs)
        .out_dir(&out)
        .archs(["sm_90"])
        .nvcc(nvcc)
        .emit_cargo_directives(false)
        .run()
        .expect("the kernels build; the refused resident kernel does not fail the build");
    assert_eq!(report.compiled.len(), 2, "both kernel files compiled: {:?}", report.compiled);
    let resident = out.join("resident");
    assert!(resident.join("kg_clash_resident.cu").is_file(), "the spec was lowered");
    let failed = std::fs::read_to_string(resident.join("kg_clash_resident.failed")).expect("nvcc's message kept");
    assert!(failed.contains("kg_test_shift"), "the message names the clash: {failed}");
}
