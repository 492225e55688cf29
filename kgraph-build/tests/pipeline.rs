//! The build pipeline end to end on temporary kernel folders: real nvcc, real ptxas reports.
//! nvcc comes from the same search the build uses (`scripts/install-nvcc` provides one).

use std::path::{Path, PathBuf};

use kgraph_build::{BuildError, KernelBuild};

fn nvcc() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    kgraph_build::find_nvcc(here)
        .unwrap_or_else(|| panic!("these tests need nvcc: {}", kgraph_build::HOW_TO_GET_NVCC))
        .path
}

/// A fresh scratch root (removed when the guard drops) with its `kernels/` and `out/`.
fn scratch(name: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let root = tempfile::Builder::new().prefix(&format!("kgraph-build-{name}-")).tempdir().unwrap();
    let (src, out) = (root.path().join("kernels"), root.path().join("out"));
    std::fs::create_dir_all(&src).unwrap();
    (root, src, out)
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
    let (_root, src, out) = scratch("incremental");
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
    let (_root, src, out) = scratch("spill");
    std::fs::write(src.join("spilly.cu"), SPILLY).unwrap();
    let report = build(&src, &out);
    let k = report.resources.iter().find(|k| k.kernel == "spilly").expect("ptxas reported spilly");
    assert!(k.stack_frame > 0 && k.uses_local_memory(), "{k:?}");
}

#[test]
fn compile_errors_name_the_file() {
    let (_root, src, out) = scratch("error");
    std::fs::write(src.join("broken.cu"), "extern \"C\" __global__ void broken( { }\n").unwrap();
    let err =
        KernelBuild::new().kernel_dir(&src).out_dir(&out).nvcc(nvcc()).emit_cargo_directives(false).run().unwrap_err();
    let BuildError::Compile { file, output, .. } = &err else { panic!("expected BuildError::Compile, got {err:?}") };
    assert_eq!(file, &src.join("broken.cu"));
    assert!(output.contains("error"), "{output}");
    let message = err.to_string();
    assert!(message.starts_with(&format!("--- {} ---\n", file.display())), "{message}");
}

#[test]
fn without_nvcc_the_build_falls_back_to_nvrtc_unless_required() {
    let (_root, src, out) = scratch("fallback");
    std::fs::write(src.join("b.cu"), B).unwrap();
    let report = KernelBuild::new().kernel_dir(&src).out_dir(&out).without_nvcc().require_nvcc(false);
    let report = report.emit_cargo_directives(false).run().unwrap();
    assert!(report.nvrtc_fallback);
    assert_eq!(std::fs::metadata(out.join("b.cubin")).unwrap().len(), 0, "empty image = compile with NVRTC at load");

    let required = KernelBuild::new().kernel_dir(&src).out_dir(&out).without_nvcc().require_nvcc(true);
    let err = required.emit_cargo_directives(false).run().unwrap_err();
    assert!(matches!(err, BuildError::NvccRequired { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("KGRAPH_REQUIRE_NVCC") && message.contains("install-nvcc"), "{message}");
}

/// A second kernel folder beside `kernels/` in the scratch root of `src`.
fn second_folder(src: &Path, name: &str) -> PathBuf {
    let dir = src.parent().unwrap().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn several_folders_compile_into_one_output_each_with_its_own_includes() {
    let (_root, src, out) = scratch("folders");
    std::fs::write(src.join("common.cuh"), "#define SCALE 1.0f\n").unwrap();
    std::fs::write(src.join("a.cu"), A).unwrap();
    // `inc/helper.cuh` includes "common.cuh", which only `-I<its folder>` resolves (nvcc looks
    // beside the includer first, in `inc/`), and only the second folder's defines TWO_SCALE.
    let two = second_folder(&src, "more-kernels");
    std::fs::create_dir_all(two.join("inc")).unwrap();
    std::fs::write(two.join("common.cuh"), "#define TWO_SCALE 2.0f\n").unwrap();
    std::fs::write(two.join("inc/helper.cuh"), "#include \"common.cuh\"\n").unwrap();
    let c = "#include \"inc/helper.cuh\"\nextern \"C\" __global__ void c(float* y) { y[0] = TWO_SCALE; }\n";
    std::fs::write(two.join("c.cu"), c).unwrap();
    let build = || {
        KernelBuild::new()
            .kernel_dir(&src)
            .add_kernel_dir(&two)
            .add_kernel_dir(&two)
            .out_dir(&out)
            .archs(["sm_90"])
            .nvcc(nvcc())
            .emit_cargo_directives(false)
            .run()
            .unwrap()
    };

    let first = build();
    assert_eq!(names(&first.compiled), ["a.cu", "c.cu"]);
    assert!(std::fs::metadata(out.join("c.cubin")).unwrap().len() > 0);
    assert_eq!(first.kernel_dirs, [src.clone(), two.clone()], "each folder once, absolute, primary first");

    std::fs::write(two.join("common.cuh"), "#define TWO_SCALE 3.0f\n").unwrap();
    assert_eq!(names(&build().compiled), ["c.cu"], "a header edit in one folder rebuilds that folder's includers");
}

#[test]
fn the_same_stem_in_two_folders_is_rejected() {
    let (_root, src, out) = scratch("stems");
    std::fs::write(src.join("b.cu"), B).unwrap();
    let two = second_folder(&src, "more-kernels");
    std::fs::write(two.join("b.cu"), B).unwrap();
    let err = KernelBuild::new()
        .kernel_dir(&src)
        .add_kernel_dir(&two)
        .out_dir(&out)
        .without_nvcc()
        .require_nvcc(false)
        .emit_cargo_directives(false)
        .run()
        .unwrap_err();
    match err {
        BuildError::DuplicateStem { stem, first, second } => {
            assert_eq!((stem.as_str(), first, second), ("b", src.join("b.cu"), two.join("b.cu")));
        }
        other => panic!("expected BuildError::DuplicateStem, got {other:?}"),
    }
}

#[test]
fn a_missing_extra_folder_is_rejected_but_a_missing_primary_is_not() {
    let (_root, src, out) = scratch("missing");
    let absent = src.parent().unwrap().join("no-such-kernels");
    let build = || KernelBuild::new().out_dir(&out).without_nvcc().require_nvcc(false).emit_cargo_directives(false);
    let err = build().kernel_dir(&src).add_kernel_dir(&absent).run().unwrap_err();
    assert!(matches!(&err, BuildError::MissingKernelDir { dir } if dir == &absent), "{err:?}");

    let report = build().kernel_dir(&absent).run().unwrap();
    assert!(report.compiled.is_empty() && report.up_to_date.is_empty());
    assert_eq!(report.kernel_dirs, [absent]);
}

#[test]
fn the_kernel_dirs_directive_joins_the_folders() {
    let dirs = [PathBuf::from("/crate/kernels"), PathBuf::from("/crate/examples/bench/kernels")];
    let line = kgraph_build::kernel_dirs_directive(&dirs).unwrap();
    let joined = std::env::join_paths(&dirs).unwrap();
    assert_eq!(line, format!("cargo:rustc-env=KGRAPH_KERNEL_DIRS={}", joined.to_string_lossy()));
    assert_eq!(std::env::split_paths(line.split_once("DIRS=").unwrap().1).collect::<Vec<_>>(), dirs);
    #[cfg(unix)]
    assert!(matches!(
        kgraph_build::kernel_dirs_directive(&[PathBuf::from("/a:b")]),
        Err(BuildError::UnjoinableKernelDirs { .. })
    ));
}

#[test]
fn relative_extra_folders_are_resolved_against_the_manifest_dir() {
    // Cargo sets CARGO_MANIFEST_DIR for test binaries too: kgraph-build/ here.
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let report = KernelBuild::new()
        .kernel_dir(manifest.join("no-kernels-here"))
        .add_kernel_dir("tests")
        .out_dir(scratch("relative").2)
        .without_nvcc()
        .require_nvcc(false)
        .emit_cargo_directives(false)
        .run()
        .unwrap();
    assert_eq!(report.kernel_dirs[1], manifest.join("tests"));
}
