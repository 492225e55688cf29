//! `kgraph check` on specs that include others: the same depth limit as `graph!` (a chain of
//! 3000 includes is one located error, not a stack overflow), and an included spec's error
//! printed once, however many specs of `graphs/` include it.

use std::path::Path;
use std::process::Command;

/// The kernel declarations the specs use (outside `src/`, so `kgraph check` reads them only
/// through the specs and needs no `.cu` file).
const DECLS: &str =
    "#[kgraph::kernel(\"k.cu\", unsafe(extents))]\npub fn tg_prep(x: &[f32; n], s: &mut [f32; n], n: i32);\n";
const KERNELS: &str = "[kernels]\nsource = \"decls/kernels.rs\"\nmodule = \"crate::kernels\"\n";
const BUFFERS: &str = "[buffers.x]\ndtype = \"f32\"\nlen = 4\nrole = \"input\"\n[buffers.y]\ndtype = \"f32\"\nlen = 4\nrole = \"output\"\n";

fn include(name: &str, spec: &str) -> String {
    format!("[[include]]\nname = \"{name}\"\nspec = \"{spec}\"\nbuffers = {{ x = \"x\", y = \"y\" }}\n")
}

fn node(x: &str) -> String {
    format!("[[node]]\nname = \"prep\"\nkernel = \"tg_prep\"\ngrid = 1\nblock = 4\nargs = {{ x = \"{x}\", s = \"y\", n = 4 }}\n")
}

/// A crate with `files` (path, text) besides its `Cargo.toml` and declarations.
fn crate_with(files: &[(String, String)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut all = vec![
        ("Cargo.toml".to_string(), "[package]\nname = \"nest\"\nversion = \"0.1.0\"\nedition = \"2021\"\n".to_string()),
        ("decls/kernels.rs".to_string(), DECLS.to_string()),
    ];
    all.extend(files.iter().cloned());
    for (path, text) in all {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn check(dir: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kgraph"))
        .args(["check", "--no-records"])
        .current_dir(dir)
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .expect("run kgraph");
    (out.status.code().expect("exit code"), String::from_utf8(out.stdout).expect("utf-8"))
}

#[test]
fn a_chain_of_3000_includes_is_one_error_at_the_include_that_goes_too_deep() {
    let level = |i: usize| {
        let next = if i + 1 < 3000 { include("d", &format!("nest/l{}.toml", i + 1)) } else { String::new() };
        format!("{KERNELS}{BUFFERS}{}{next}", node("x"))
    };
    let mut files = vec![("graphs/top.toml".to_string(), level(0))];
    files.extend((1..3000).map(|i| (format!("nest/l{i}.toml"), level(i))));
    let dir = crate_with(&files);
    let (code, out) = check(dir.path());
    assert_eq!(code, 1, "{out}");
    let line = level(64).lines().position(|l| l.starts_with("spec =")).unwrap() + 1;
    let errors: Vec<&str> = out.split("\n\n").filter(|e| e.contains(".toml:")).collect();
    assert_eq!(errors.len(), 1, "one error:\n{out}");
    assert!(
        errors[0]
            .starts_with(&format!("nest/l64.toml:{line}:8: `[[include]]` of `nest/l65.toml` nests 65 levels deep")),
        "{out}"
    );
    assert!(out.contains("kgraph check: 1 error in 1 graph spec"), "{out}");
}

#[test]
fn an_included_error_is_printed_once() {
    let files = [
        ("graphs/a.toml".to_string(), format!("{KERNELS}{BUFFERS}{}", node("xx"))),
        (
            "graphs/b.toml".to_string(),
            format!("{KERNELS}{BUFFERS}{}{}", include("one", "graphs/a.toml"), include("two", "graphs/a.toml")),
        ),
        ("graphs/c.toml".to_string(), format!("{KERNELS}{BUFFERS}{}", include("b", "graphs/b.toml"))),
    ];
    let dir = crate_with(&files);
    let (code, out) = check(dir.path());
    assert_eq!(code, 1, "{out}");
    assert_eq!(out.matches("unknown buffer `xx`").count(), 1, "{out}");
    assert!(out.contains("kgraph check: 1 error in 3 graph specs"), "{out}");
}
