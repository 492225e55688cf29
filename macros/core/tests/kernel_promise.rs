//! What the `unsafe(extents)` promise cannot cover, checked (issue #32, item 4): block bounds
//! and raw handles. `max_block = <threads>` in `#[kernel]` parses (1 to 1024), `graph!` holds a
//! node's `block` and every `tune` candidate to it at compile time, and the record rule asks
//! for it where the compiled kernel has static shared memory and no `__launch_bounds__` (read
//! from a hand-written record fixture); a kernel taking texture/surface objects or structs
//! holding pointers gets no checked launch. Kernel declarations are given inline.

use kgraph_codegen::graph::{analyze, Analysis, GraphRequest};
use kgraph_codegen::{expand_kernel, Config};
use quote::quote;

mod expansion_support;
use expansion_support::errors;

const DECLS: &str = r#"
#[kernel("k.cu", unsafe(extents), max_block = 128)] pub fn k_tile(x: &[f32; n], y: &mut [f32; n], n: i32);
"#;

const HEAD: &str = "[kernels]\nsource = \"decls.rs\"\nmodule = \"crate::decls\"\n\
    [buffers.x]\ndtype = \"f32\"\nlen = 4096\nrole = \"input\"\n\
    [buffers.y]\ndtype = \"f32\"\nlen = 4096\nrole = \"output\"\n";

fn run(launch: &str) -> Result<Analysis, Vec<String>> {
    let text = format!("{HEAD}[[node]]\nkernel = \"k_tile\"\n{launch}\nargs = {{ x = \"x\", y = \"y\", n = 4096 }}\n");
    let read_file = |_: &str| Ok(DECLS.to_string());
    let req =
        GraphRequest { spec_path: "g.toml", spec_text: &text, struct_name: None, root: "", read_file: &read_file };
    analyze(&req)
}

#[test]
fn a_node_block_within_max_block_validates_and_a_bigger_one_is_an_error() {
    run("grid = 32\nblock = 128").unwrap_or_else(|e| panic!("{}", e.join("\n")));
    run("grid = 32\nblock = [32, 4, 1]").unwrap_or_else(|e| panic!("{}", e.join("\n")));
    for block in ["256", "[64, 4, 1]", "[32, 2, 4]"] {
        let e = run(&format!("grid = 16\nblock = {block}")).unwrap_err();
        assert_eq!(e.len(), 1, "{}", e.join("\n"));
        assert!(e[0].contains("node `k_tile`") && e[0].contains("max_block = 128"), "{}", e[0]);
        assert!(e[0].contains("256 threads per block"), "{}", e[0]);
    }
}

#[test]
fn every_tune_candidate_is_held_to_max_block() {
    run("grid = 32\nblock = 128\ntune = [32, 64, 128]").unwrap_or_else(|e| panic!("{}", e.join("\n")));
    let e = run("grid = 32\nblock = 128\ntune = [64, 256, 512]").unwrap_err();
    assert_eq!(e.len(), 2, "{}", e.join("\n"));
    assert!(e[0].contains("`tune` candidate 256") && e[1].contains("`tune` candidate 512"), "{}", e.join("\n"));
}

/// A kernel file and a hand-written record of it: `tiled` has a static shared array and no
/// bounds, `bounded` the same with `.maxntid 128`, `plain` no shared memory.
const CU: &str = r#"
extern "C" __global__ void tiled(float* out, int n) { }
extern "C" __global__ void __launch_bounds__(128) bounded(float* out, int n) { }
extern "C" __global__ void plain(float* out, int n) { }
"#;

const RECORD: &str = "kgraph-kernels 1
entry tiled visible=1 pdl_wait=0 pdl_trigger=0 calls=0 dyn_smem=0 line=2
shared _ZZ5tiledE4tile size=512
shared _ZZ5tiledE5other size=64
param 0 u64 size=8 align=8
param 1 u32 size=4 align=4
end
entry bounded visible=1 pdl_wait=0 pdl_trigger=0 calls=0 dyn_smem=0 line=3 maxntid=128
shared _ZZ7boundedE4tile size=512
param 0 u64 size=8 align=8
param 1 u32 size=4 align=4
end
entry plain visible=1 pdl_wait=0 pdl_trigger=0 calls=0 dyn_smem=0 line=4
param 0 u64 size=8 align=8
param 1 u32 size=4 align=4
end
";

/// Expands `#[kernel(attr)] pub fn <name>(out: &mut [f32; n], n: i32);` against the fixture
/// (without the extent when `attr` makes no promise); returns the code and the errors.
fn expand_fixture(attr: proc_macro2::TokenStream, name: &str) -> (String, Vec<String>) {
    let checked = attr.to_string().contains("unsafe");
    let dir = tempfile::Builder::new().prefix("kgraph-block-bound-").tempdir().unwrap();
    std::fs::write(dir.path().join("k.cu"), CU).unwrap();
    std::fs::write(dir.path().join("k.kernels"), RECORD).unwrap();
    let config = Config::new(dir.path(), dir.path()).with_record_dir(dir.path());
    let name = proc_macro2::Ident::new(name, proc_macro2::Span::call_site());
    let item = match checked {
        true => quote!(pub fn #name(out: &mut [f32; n], n: i32);),
        false => quote!(pub fn #name(out: &mut [f32], n: i32);),
    };
    let out = expand_kernel(attr, item, &config);
    (out.to_string(), errors(&out))
}

#[test]
fn static_shared_memory_without_launch_bounds_needs_max_block() {
    let (_, e) = expand_fixture(quote!("k.cu", unsafe(extents)), "tiled");
    assert_eq!(e.len(), 1, "{e:#?}");
    for wanted in ["kernel `tiled` uses static shared memory", "`__shared__` array `tile` (512 bytes) and 1 more"] {
        assert!(e[0].contains(wanted), "`{wanted}` not in: {}", e[0]);
    }
    assert!(e[0].contains("max_block = ") && e[0].contains("__launch_bounds__("), "both fixes named: {}", e[0]);
    // Declared: the bound is the handle's and the launch checks it at the declaration's place.
    let (code, e) = expand_fixture(quote!("k.cu", unsafe(extents), max_block = 128), "tiled");
    assert!(e.is_empty(), "{e:#?}");
    assert!(
        code.contains(
            "MAX_THREADS : :: core :: option :: Option < u32 > = :: core :: option :: Option :: Some (128u32)"
        ),
        "{code}"
    );
    assert!(
        code.contains("check_block (Self :: NAME , & cfg , 128u32 , :: core :: file ! () , :: core :: line ! ())"),
        "{code}"
    );
    // `__launch_bounds__` in the record is a bound; no shared memory needs none; an unchecked
    // launch is the caller's promise.
    assert!(expand_fixture(quote!("k.cu", unsafe(extents)), "bounded").1.is_empty());
    assert!(expand_fixture(quote!("k.cu", unsafe(extents)), "plain").1.is_empty());
    let (code, e) = expand_fixture(quote!("k.cu"), "tiled");
    assert!(e.is_empty() && code.contains("unsafe fn launch"), "{e:#?}");
}

#[test]
fn the_lower_of_launch_bounds_and_max_block_applies() {
    let bound = |attr| {
        let (code, e) = expand_fixture(attr, "bounded");
        assert!(e.is_empty(), "{e:#?}");
        let at = code.find("check_block (Self :: NAME , & cfg , ").expect("a block check");
        code[at..].split(", ").nth(2).unwrap().trim().to_string()
    };
    assert_eq!(bound(quote!("k.cu", unsafe(extents))), "128u32");
    assert_eq!(bound(quote!("k.cu", unsafe(extents), max_block = 64)), "64u32");
    assert_eq!(bound(quote!("k.cu", unsafe(extents), max_block = 512)), "128u32");
}

#[test]
fn max_block_is_an_integer_from_1_to_1024_given_once() {
    for (attr, wanted) in [
        (quote!("k.cu", unsafe(extents), max_block = 0), "from 1 to 1024"),
        (quote!("k.cu", unsafe(extents), max_block = 1025), "from 1 to 1024"),
        (quote!("k.cu", unsafe(extents), max_block = 128u32), "without a suffix"),
        (quote!("k.cu", unsafe(extents), max_block = n), "an integer literal"),
        (quote!("k.cu", unsafe(extents), max_block = 64, max_block = 64), "`max_block` given twice"),
    ] {
        let (_, e) = expand_fixture(attr, "plain");
        assert_eq!(e.len(), 1, "{e:#?}");
        assert!(e[0].contains(wanted), "`{wanted}` not in: {}", e[0]);
    }
}

/// Raw handles in the `.cu` text (no record: the source rule alone).
const HANDLES_CU: &str = r#"
typedef cudaTextureObject_t Tex;
struct Inner { int count; float* data; };
struct Outer { float scale; Inner inner; };
struct Plain { float scale; int count; };
extern "C" __global__ void tex_k(float* out, cudaTextureObject_t t, int n) { }
extern "C" __global__ void surf_k(float* out, CUsurfObject s, int n) { }
extern "C" __global__ void nested_k(float* out, Outer o, int n) { }
extern "C" __global__ void by_pointer_k(float* out, const Outer* o, int n) { }
extern "C" __global__ void plain_k(float* out, Plain p, int n) { }
"#;

fn expand_handles(attr: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> Vec<String> {
    let dir = tempfile::Builder::new().prefix("kgraph-raw-handles-").tempdir().unwrap();
    std::fs::write(dir.path().join("h.cu"), HANDLES_CU).unwrap();
    let config = Config::new(dir.path(), dir.path()).with_record_dir(dir.path().join("none"));
    errors(&expand_kernel(attr, item, &config))
}

#[test]
fn raw_handles_refuse_the_promise_and_keep_the_unsafe_launch() {
    let cases = [
        (
            quote!(
                pub fn tex_k(out: &mut [f32; n], t: u64, n: i32);
            ),
            "parameter `t`",
            "`cudaTextureObject_t`",
        ),
        (
            quote!(
                pub fn surf_k(out: &mut [f32; n], s: u64, n: i32);
            ),
            "parameter `s`",
            "`CUsurfObject`",
        ),
        (
            quote!(
                pub fn nested_k(out: &mut [f32; n], o: Outer, n: i32);
            ),
            "parameter `o`",
            "`Outer.inner.data`",
        ),
        (
            quote!(
                pub fn by_pointer_k(out: &mut [f32; n], o: &[Outer; 1], n: i32);
            ),
            "parameter `o`",
            "`float*`",
        ),
    ];
    for (item, param, why) in cases {
        let e = expand_handles(quote!("h.cu", unsafe(extents)), item.clone());
        let handle = e.iter().filter(|m| m.contains("gets an `unsafe` launch only")).collect::<Vec<_>>();
        assert_eq!(handle.len(), 1, "{e:#?}");
        assert!(handle[0].contains(param) && handle[0].contains(why), "{}", handle[0]);
    }
    // Without the promise the same kernels bind (their launch is `unsafe`); a struct of numbers
    // keeps its checked launch.
    let e = expand_handles(
        quote!("h.cu"),
        quote!(
            pub fn tex_k(out: &mut [f32], t: u64, n: i32);
        ),
    );
    assert!(e.iter().all(|m| !m.contains("`unsafe` launch only")), "{e:#?}");
    let e = expand_handles(
        quote!("h.cu", unsafe(extents)),
        quote!(
            pub fn plain_k(out: &mut [f32; n], p: Plain, n: i32);
        ),
    );
    assert!(e.iter().all(|m| !m.contains("`unsafe` launch only")), "{e:#?}");
}
