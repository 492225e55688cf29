//! `pdl_wait_first` against what nvcc writes for inline asm and calls that a `;`-split reading of
//! the PTX could misread (a `.loc` or `.pragma` in asm text, two instructions on a line, a label
//! on the wait, a wait in a callee), against device memory reached in every other way before
//! the wait, and across entries of one module; each must read "not proven". Real nvcc, as in
//! `records.rs`.

use std::path::{Path, PathBuf};

use kgraph_build::{KernelBuild, KernelRecord};

fn nvcc() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    kgraph_build::find_nvcc(here)
        .unwrap_or_else(|| panic!("these tests need nvcc: {}", kgraph_build::HOW_TO_GET_NVCC))
        .path
}

/// The records of `<name>.cu` (`source`) built for `archs`.
fn compile(name: &str, source: &str, archs: &[&str]) -> Vec<KernelRecord> {
    let root = tempfile::Builder::new().prefix(&format!("kgraph-wait-first-{name}-")).tempdir().unwrap();
    let (src, out) = (root.path().join("kernels"), root.path().join("out"));
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join(format!("{name}.cu")), source).unwrap();
    let report = KernelBuild::new()
        .kernel_dir(&src)
        .out_dir(&out)
        .archs(archs.iter().copied())
        .nvcc(nvcc())
        .emit_cargo_directives(false)
        .run()
        .unwrap_or_else(|e| panic!("{name}.cu did not build:\n{e}"));
    report.outputs[0].kernels.clone()
}

/// `(pdl_wait, pdl_wait_first)` of entry `name`.
fn first(records: &[KernelRecord], name: &str) -> (bool, bool) {
    let k = records.iter().find(|k| k.name == name).unwrap_or_else(|| panic!("no entry {name}"));
    (k.pdl_wait, k.pdl_wait_first)
}

const HEAD: &str = "#define WAIT() asm volatile(\"griddepcontrol.wait;\" ::: \"memory\")
__device__ __noinline__ void waits() { WAIT(); }
extern \"C\" __global__ void first(float* x) { WAIT(); x[0] = 1; }
";

const KERNELS: &str = "
extern \"C\" __global__ void loc_after_brace(float* x) {
  float v;
  asm volatile(\"{ .loc 1 1 1\\n\\tld.global.f32 %0, [%1];\\n\\t}\" : \"=f\"(v) : \"l\"(x) : \"memory\");
  WAIT();
  x[1] = v;
}
extern \"C\" __global__ void pragma_semicolon(float* x) {
  asm volatile(\".pragma \\\"nounroll; griddepcontrol.wait \\\";\" ::: \"memory\");
  x[0] = 1;
  WAIT();
}
extern \"C\" __global__ void two_on_a_line(unsigned* x) {
  unsigned v;
  asm volatile(\"mov.u32 %0, 1; st.global.u32 [%1], %0;\" : \"=r\"(v) : \"l\"(x) : \"memory\");
  WAIT();
}
extern \"C\" __global__ void labelled_wait(float* x) {
  asm volatile(\"{\\n$Lwait_target:\\n\\tgriddepcontrol.wait;\\n\\t}\" ::: \"memory\");
  x[0] = 1;
}
extern \"C\" __global__ void ldg_first(const float* __restrict__ x, float* y) {
  float v = __ldg(x);
  WAIT();
  y[0] = v;
}
extern \"C\" __global__ void bulk_prefetch_first(float* x) {
  asm volatile(\"cp.async.bulk.prefetch.L2.global [%0], 128;\" :: \"l\"(x) : \"memory\");
  WAIT();
  x[0] = 1;
}
extern \"C\" __global__ void exit_first(float* x, int n) {
  if (n > 3) return;
  WAIT();
  x[0] = 1;
}
extern \"C\" __global__ void wait_in_callee(float* x) { waits(); x[0] = 1; }
";

#[test]
fn inline_asm_and_calls_that_may_touch_memory_first_are_not_proven() {
    let records = compile("asm", &format!("{HEAD}{KERNELS}"), &["sm_90"]);
    assert_eq!(first(&records, "first"), (true, true));
    for name in [
        "loc_after_brace",
        "pragma_semicolon",
        "two_on_a_line",
        "labelled_wait",
        "ldg_first",
        "bulk_prefetch_first",
        "exit_first",
        "wait_in_callee",
    ] {
        assert_eq!(first(&records, name), (true, false), "{name}");
    }
}

/// ptxas assembles an instruction after `.loc`'s operands on the same line: `body` keeps it
/// as code, so this store (or a call, for `pdl_wait`) is seen.
#[test]
fn an_instruction_after_loc_on_its_line_is_seen() {
    let source = format!(
        "{HEAD}extern \"C\" __global__ void loc_line(float* x) {{
  asm volatile(\".loc 1 1 1 st.global.f32 [%0], %1;\" :: \"l\"(x), \"f\"(1.0f) : \"memory\");
  WAIT();
  x[1] = 2;
}}
"
    );
    assert_eq!(first(&compile("loc_line", &source, &["sm_90"]), "loc_line"), (true, false));
}

/// With several archs the driver runs the image of the GPU's arch, which `__CUDA_ARCH__` may
/// make store before it waits: the record proves a wait first only if every arch's PTX does.
#[test]
fn every_arch_must_wait_first() {
    let source = format!(
        "{HEAD}extern \"C\" __global__ void per_arch(float* x) {{
#if __CUDA_ARCH__ >= 1000
  x[0] = 1;
#endif
  WAIT();
  x[1] = 2;
}}
"
    );
    assert_eq!(first(&compile("per_arch", &source, &["sm_90", "sm_100"]), "per_arch"), (true, false));
}
