//! A crate that depends on `kgraph` compiles its own kernels and none of kgraph's: the facade has
//! no build script, and the reference model (this package) is not a dependency of anything.
//!
//! The test writes a fresh crate with one kernel (`kernels/scale.cu`), depending on this
//! checkout's `kgraph` and `kgraph-build` by path, builds it with cargo (its own target folder
//! under `target/`, so later runs are incremental), and lists every cubin and build script the
//! build produced.

use std::path::{Path, PathBuf};
use std::process::Command;

const MANIFEST: &str = r#"[package]
name = "downstream-probe"
version = "0.1.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
kgraph = { path = "@ROOT@/kgraph" }

[build-dependencies]
kgraph-build = { path = "@ROOT@/kgraph-build" }
"#;

const KERNEL: &str = r#"extern "C" __global__ void scale(const float* x, float a, int n, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
"#;

const LIB: &str = r#"#[kgraph::kernel("scale.cu")]
pub fn scale(x: &[f32], a: f32, n: i32, y: &mut [f32]);
"#;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Every file under `dir` whose name satisfies `pick`, as paths relative to `dir`.
fn files_under(dir: &Path, pick: &dyn Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else if path.file_name().and_then(|n| n.to_str()).is_some_and(pick) {
                found.push(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    found.sort();
    found
}

#[test]
fn a_downstream_crate_compiles_only_its_own_kernels() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let probe = root.join("target/downstream-probe");
    let _ = std::fs::remove_dir_all(probe.join("src"));
    write(&probe.join("Cargo.toml"), &MANIFEST.replace("@ROOT@", root.to_str().unwrap()));
    write(&probe.join("build.rs"), "fn main() {\n    kgraph_build::compile_kernels();\n}\n");
    write(&probe.join("kernels/scale.cu"), KERNEL);
    write(&probe.join("src/lib.rs"), LIB);
    // The workspace's lock file pins the same dependency versions (cargo drops what is unused).
    std::fs::copy(root.join("Cargo.lock"), probe.join("Cargo.lock")).unwrap();

    let target = probe.join("target");
    // Earlier runs (other dependency versions) leave their own build folders: start without them.
    if let Ok(old) = std::fs::read_dir(target.join("debug/build")) {
        for entry in old.flatten().filter(|e| e.file_name().to_string_lossy().starts_with("downstream-probe")) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    let mut cargo = Command::new(env!("CARGO"));
    cargo.arg("build").arg("--quiet").current_dir(&probe).env("CARGO_TARGET_DIR", &target);
    // kgraph-build searches the probe's own folder for `.toolchain/`: point it at this one's.
    let nvcc = root.join(".toolchain/cuda-13.0/nvidia/cu13/bin/nvcc");
    if std::env::var_os("NVCC").is_none() && nvcc.exists() {
        cargo.env("NVCC", &nvcc);
    }
    let out = cargo.output().expect("cargo runs");
    assert!(out.status.success(), "downstream build failed:\n{}", String::from_utf8_lossy(&out.stderr));

    let cubins = files_under(&target, &|name| name.ends_with(".cubin"));
    let names: Vec<_> = cubins.iter().map(|p| p.file_name().unwrap().to_str().unwrap()).collect();
    assert_eq!(names, ["scale.cubin"], "cubins built for the downstream crate: {cubins:?}");

    // Only the probe's own build script ran: no kgraph crate has one.
    let build_dirs: Vec<_> = std::fs::read_dir(target.join("debug/build"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("kgraph"))
        .collect();
    assert!(build_dirs.is_empty(), "kgraph crates with build scripts: {build_dirs:?}");
}
