//! The corpus: real kernels from public CUDA projects (`tests/corpus/`, origin and license in each
//! file), each bound by the declaration a user would write from the README
//! (`tests/corpus/MANIFEST.toml`). Every file is built with the real pipeline (nvcc, records,
//! preprocessed sources), then every declaration is expanded by `#[kernel]` against that build.
//! The test prints each kernel that does not bind with the first reason, the tally per category,
//! and holds the share that binds at 90% or more.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kgraph_build::KernelBuild;
use kgraph_codegen::{expand_kernel, Config};
use proc_macro2::TokenStream;

mod expansion_support;
use expansion_support::errors;

const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");

#[derive(serde::Deserialize)]
struct Manifest {
    kernel: Vec<Entry>,
}

#[derive(serde::Deserialize)]
struct Entry {
    file: String,
    kernel: String,
    category: String,
    decl: String,
    attr: String,
}

fn corpus_dir() -> PathBuf {
    Path::new(MANIFEST_DIR).join("../../tests/corpus")
}

fn build() -> PathBuf {
    let nvcc = kgraph_build::find_nvcc(Path::new(MANIFEST_DIR))
        .unwrap_or_else(|| panic!("this test needs nvcc: {}", kgraph_build::HOW_TO_GET_NVCC))
        .path;
    // A stable folder: the build is incremental, so later runs only check.
    let out = Path::new(MANIFEST_DIR).join("../../target/kgraph-corpus");
    KernelBuild::new()
        .kernel_dir(corpus_dir())
        .out_dir(&out)
        .archs(["sm_90"])
        .nvcc(nvcc)
        .emit_cargo_directives(false)
        .run()
        .unwrap_or_else(|e| panic!("tests/corpus did not build:\n{e}"));
    out
}

#[test]
fn at_least_nine_in_ten_corpus_kernels_bind() {
    let text = std::fs::read_to_string(corpus_dir().join("MANIFEST.toml")).unwrap();
    let manifest: Manifest = toml::from_str(&text).unwrap();
    let config = Config::new(corpus_dir(), corpus_dir()).with_record_dir(build());
    let mut tally: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for e in &manifest.kernel {
        let attr_text = if e.attr.is_empty() { format!("{:?}", e.file) } else { format!("{:?}, {}", e.file, e.attr) };
        let attr: TokenStream = attr_text.parse().unwrap();
        let item: TokenStream = e.decl.parse().unwrap_or_else(|err| panic!("{}: {err}", e.decl));
        let errs = errors(&expand_kernel(attr, item, &config));
        let t = tally.entry(e.category.as_str()).or_default();
        t.1 += 1;
        if errs.is_empty() {
            t.0 += 1;
        } else {
            failures.push(format!("{} `{}` [{}]: {}", e.file, e.kernel, e.category, errs[0]));
        }
    }
    let (bound, total) = tally.values().fold((0, 0), |(b, t), (x, y)| (b + x, t + y));
    for f in &failures {
        println!("does not bind: {f}");
    }
    for (category, (b, t)) in &tally {
        println!("{category:<12} {b:>3} / {t:<3} bind");
    }
    println!("corpus: {bound} of {total} kernels bind ({:.1}%)", 100.0 * bound as f64 / total as f64);
    assert!(bound * 10 >= total * 9, "{bound} of {total} bind, under 90%:\n{}", failures.join("\n"));
}
