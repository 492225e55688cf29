//! `kgraph declare` on C++ kernels: with the record of what nvcc compiled (built here with the
//! real pipeline, nvcc required, into a scratch folder) every template instantiation is printed
//! with `name = "<C++ name>"` and binds as printed; without one, each C++ kernel gets a comment
//! saying why; a kernel indexing by data it reads gets the comment pointing at the unsafe launch.

use std::path::{Path, PathBuf};
use std::process::Command;

fn crate_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cpp")
}

/// The record folder of `kernels/` of the fixture crate, built once per test run.
fn records() -> PathBuf {
    static OUT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    OUT.get_or_init(|| {
        let nvcc = kgraph_build::find_nvcc(Path::new(env!("CARGO_MANIFEST_DIR")))
            .unwrap_or_else(|| panic!("this test needs nvcc: {}", kgraph_build::HOW_TO_GET_NVCC))
            .path;
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("declare-cpp");
        kgraph_build::KernelBuild::new()
            .kernel_dir(crate_dir().join("kernels"))
            .out_dir(&out)
            .archs(["sm_90"])
            .nvcc(nvcc)
            .emit_cargo_directives(false)
            .run()
            .unwrap_or_else(|e| panic!("the fixture's kernels did not build:\n{e}"));
        out
    })
    .clone()
}

fn declare(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kgraph"))
        .arg("declare")
        .args(args)
        .current_dir(crate_dir())
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .expect("run kgraph");
    (out.status.code().expect("exit code"), String::from_utf8(out.stdout).expect("utf-8"))
}

#[test]
fn template_instantiations_are_declared_by_their_cpp_names() {
    let records = records();
    let (code, out) = declare(&["--records", records.to_str().unwrap(), "kernels/templates.cu"]);
    assert_eq!(code, 0, "{out}");
    for line in [
        "#[kernel(\"templates.cu\", name = \"apply<float, relu<float>, true>\")] pub fn apply_float_relu_float_true(y: &mut [f32], x: &[f32], n: i32);",
        "#[kernel(\"templates.cu\", name = \"apply<double, relu<double>, false>\")] pub fn apply_double_relu_double_false(y: &mut [f64], x: &[f64], n: i32);",
        "#[kernel(\"templates.cu\", name = \"norm_rows<Norm::L2, 32>\")] pub fn norm_rows_norm_l2_32(out: &mut [f32], x: &[f32], rows: i32);",
        "#[kernel(\"templates.cu\")] pub fn bump(counter: &mut [i32], n: i32);",
        "#[kernel(\"templates.cu\")] pub fn csr_spmv(y: &mut [f32], row_ptr: &[i32], col_idx: &[i32], vals: &[f32], x: &[f32], rows: i32);",
    ] {
        assert!(out.lines().any(|l| l == line), "missing\n{line}\nin\n{out}");
    }
    assert!(out.contains("`bump` (kernels/templates.cu:28) has internal linkage"), "{out}");
    assert!(
        out.contains(
            "write `#[kernel(\"templates.cu\", name = \"apply<float, relu<float>, true>\", unsafe(extents))]`"
        ),
        "the extents hint keeps the name: {out}"
    );
    let csr = out.lines().find(|l| l.starts_with("// `csr_spmv`")).expect("a comment above csr_spmv");
    assert!(csr.contains("read-only integer arrays `row_ptr`, `col_idx`"), "{csr}");
    assert!(csr.contains("keep the `unsafe fn launch`") && csr.contains("docs/safety.md"), "{csr}");
    assert!(!out.contains("unsafe(extents))] pub fn"), "never a declaration with the promise: {out}");
}

#[test]
fn without_records_each_cpp_kernel_says_why() {
    let (code, out) = declare(&["--no-records", "kernels/templates.cu"]);
    assert_eq!(code, 0, "{out}");
    for kernel in ["apply", "norm_rows", "bump", "csr_spmv"] {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("// not declared: `{kernel}`")))
            .unwrap_or_else(|| panic!("no reason for `{kernel}` in\n{out}"));
        assert!(line.contains("C++ linkage") && line.contains("`cargo build`"), "{line}");
    }
}
