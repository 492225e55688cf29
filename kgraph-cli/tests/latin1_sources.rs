//! `kgraph check` and `kgraph declare` read a `.cu` that is not UTF-8 (a Latin-1 byte in a
//! comment, which nvcc accepts) as `#[kernel]` does, and `kgraph check` reports a swapped pair
//! of parameters of such a file as the macro would.

use std::path::Path;
use std::process::Command;

/// `kernels/latin1.cu`: Latin-1 bytes in comments, before and inside the kernel.
const KERNEL: &[u8] = b"// caf\xe9 \xa9 2024\nextern \"C\" __global__ void scale_rows(float* out, int rows, int cols) {\n  // r\xe9sum\xe9\n}\n";

/// A crate with `src/lib.rs` declaring the kernel as `decl`.
fn crate_with(decl: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let files: [(&str, &[u8]); 3] = [
        ("Cargo.toml", b"[package]\nname = \"latin\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        ("kernels/latin1.cu", KERNEL),
        ("src/lib.rs", decl.as_bytes()),
    ];
    for (path, bytes) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    dir
}

fn kgraph(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kgraph"))
        .args(args)
        .current_dir(dir)
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .expect("run kgraph");
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().expect("exit code"), text)
}

#[test]
fn a_latin1_cu_is_checked_and_declared() {
    let good = crate_with(
        "#[kgraph::kernel(\"latin1.cu\", unsafe(extents))]\npub fn scale_rows(out: &mut [f32; rows * cols], rows: i32, cols: i32);\n",
    );
    let (code, out) = kgraph(good.path(), &["check", "--no-records"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = kgraph(good.path(), &["declare", "kernels/latin1.cu"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("pub fn scale_rows(out: &mut [f32], rows: i32, cols: i32);"), "{out}");

    let swapped = crate_with(
        "#[kgraph::kernel(\"latin1.cu\", unsafe(extents))]\npub fn scale_rows(out: &mut [f32; rows * cols], cols: i32, rows: i32);\n",
    );
    let (code, out) = kgraph(swapped.path(), &["check", "--no-records"]);
    assert_ne!(code, 0, "{out}");
    assert_eq!(out.matches("did you swap `cols` and `rows`?").count(), 1, "{out}");
}
