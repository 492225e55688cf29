//! The build pipeline end to end on temporary kernel folders: real nvcc, real ptxas reports.
//! nvcc comes from the same search the build uses (`scripts/install-nvcc` provides one).

use std::path::{Path, PathBuf};

use kgraph_build::KernelBuild;

fn nvcc() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    kgraph_build::find_nvcc(here)
        .unwrap_or_else(|| panic!("these tests need nvcc: {}", kgraph_build::HOW_TO_GET_NVCC))
        .path
}

fn scratch(name: &str) -> (PathBuf, PathBuf) {
    let root = std::env::temp_dir().join(format!("kgraph-build-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (src, out) = (root.join("kernels"), root.join("out"));
    std::fs::create_dir_all(&src).unwrap();
    (src, out)
}

const A: &str = "#include \"common.cuh\"\nextern \"C\" __global__ void a(float* y) { y[threadIdx.x] = SCALE; }\n";
const B: &str = "extern \"C\" __global__ void b(float* y, int n) { if (threadIdx.x < n) y[threadIdx.x] = 2.0f; }\n";
// A run-time-indexed local array lives in local memory: a stack frame ptxas reports.
const SPILLY: &str = "extern \"C\" __global__ void spilly(const int* i, float* y) {\n  float t[64];\n  for (int k = 0; k < 64; ++k) t[k] = y[(threadIdx.x + k) & 63];\n  y[threadIdx.x] = t[i[threadIdx.x] & 63];\n}\n";

fn build(src: &Path, out: &Path) -> kgraph_build::BuildReport {
    KernelBuild::new()
        .kernel_dir(src)
        .out_dir(out)
        .archs(["sm_90"])
        .nvcc(nvcc())
        .emit_cargo_directives(false)
        .run()
        .unwrap()
}

fn names(paths: &[PathBuf]) -> Vec<String> {
    let mut v: Vec<String> = paths.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[test]
fn only_changed_kernels_are_recompiled() {
    let (src, out) = scratch("incremental");
    std::fs::write(src.join("common.cuh"), "#define SCALE 1.0f\n").unwrap();
    std::fs::write(src.join("a.cu"), A).unwrap();
    std::fs::write(src.join("b.cu"), B).unwrap();

    let first = build(&src, &out);
    assert_eq!(names(&first.compiled), ["a.cu", "b.cu"]);
    assert!(std::fs::metadata(out.join("a.cubin")).unwrap().len() > 0);
    assert!(std::fs::read_to_string(out.join("b.resources.txt")).unwrap().contains("b sm_90:"));

    let again = build(&src, &out);
    assert!(again.compiled.is_empty(), "nothing changed, yet {:?} rebuilt", again.compiled);
    assert_eq!(again.resources.len(), 2, "cached kernels keep their resource report");

    std::fs::write(src.join("b.cu"), B.replace("2.0f", "3.0f")).unwrap();
    assert_eq!(names(&build(&src, &out).compiled), ["b.cu"]);

    std::fs::write(src.join("common.cuh"), "#define SCALE 4.0f\n").unwrap();
    assert_eq!(names(&build(&src, &out).compiled), ["a.cu"], "a header edit rebuilds its includers only");
}

#[test]
fn local_memory_use_is_reported() {
    let (src, out) = scratch("spill");
    std::fs::write(src.join("spilly.cu"), SPILLY).unwrap();
    let report = build(&src, &out);
    let k = report.resources.iter().find(|k| k.kernel == "spilly").expect("ptxas reported spilly");
    assert!(k.stack_frame > 0 && k.uses_local_memory(), "{k:?}");
}

#[test]
fn compile_errors_name_the_file() {
    let (src, out) = scratch("error");
    std::fs::write(src.join("broken.cu"), "extern \"C\" __global__ void broken( { }\n").unwrap();
    let err =
        KernelBuild::new().kernel_dir(&src).out_dir(&out).nvcc(nvcc()).emit_cargo_directives(false).run().unwrap_err();
    assert!(err.contains("broken.cu") && err.contains("error"), "{err}");
}

#[test]
fn without_nvcc_the_build_falls_back_to_nvrtc_unless_required() {
    let (src, out) = scratch("fallback");
    std::fs::write(src.join("b.cu"), B).unwrap();
    let report = KernelBuild::new().kernel_dir(&src).out_dir(&out).without_nvcc().require_nvcc(false);
    let report = report.emit_cargo_directives(false).run().unwrap();
    assert!(report.nvrtc_fallback);
    assert_eq!(std::fs::metadata(out.join("b.cubin")).unwrap().len(), 0, "empty image = compile with NVRTC at load");

    let required = KernelBuild::new().kernel_dir(&src).out_dir(&out).without_nvcc().require_nvcc(true);
    let err = required.emit_cargo_directives(false).run().unwrap_err();
    assert!(err.contains("KGRAPH_REQUIRE_NVCC") && err.contains("install-nvcc"), "{err}");
}
