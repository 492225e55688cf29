//! `#[kernel]` against what nvcc compiled: the kernels in `tests/compiled/` are built with the
//! real pipeline (`kgraph_build::KernelBuild`, nvcc required, as for kgraph-build's own tests)
//! into a scratch folder, and each declaration is expanded with that folder as the record
//! folder, so the checks read `<stem>.kernels` and `<stem>.i`. For every preprocessor pattern the
//! right declaration expands cleanly and the one a reading of the `.cu` text would accept (or
//! could not read) fails; C++ kernels bind by name; PDL waits are read from the record.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use kgraph_build::KernelBuild;
use kgraph_codegen::{expand_kernel, Config};
use proc_macro2::TokenStream;

mod expansion_support;
use expansion_support::errors;
use quote::quote;

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

fn kernel_dir() -> PathBuf {
    Path::new(MANIFEST).join("tests/compiled")
}

fn build(tag: &str, configure: impl FnOnce(KernelBuild) -> KernelBuild) -> PathBuf {
    let nvcc = kgraph_build::find_nvcc(Path::new(MANIFEST))
        .unwrap_or_else(|| panic!("these tests need nvcc: {}", kgraph_build::HOW_TO_GET_NVCC))
        .path;
    // Cargo's scratch folder for integration tests, inside the target folder: a fixed name per
    // build, so a rerun reuses (and the build's cache checks) what the last run compiled.
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("compiled-checks-{tag}"));
    let b = KernelBuild::new()
        .kernel_dir(kernel_dir())
        .out_dir(&out)
        .archs(["sm_90"])
        .nvcc(nvcc)
        .emit_cargo_directives(false);
    configure(b).run().unwrap_or_else(|e| panic!("tests/compiled did not build:\n{e}"));
    out
}

/// The configuration reading the records of the default build.
fn config() -> Config {
    static OUT: OnceLock<PathBuf> = OnceLock::new();
    let out = OUT.get_or_init(|| build("plain", |b| b));
    Config::new(kernel_dir(), MANIFEST).with_record_dir(out)
}

/// The same with `-DUSE_DOUBLE`.
fn config_double() -> Config {
    static OUT: OnceLock<PathBuf> = OnceLock::new();
    let out = OUT.get_or_init(|| build("double", |b| b.define("USE_DOUBLE")));
    Config::new(kernel_dir(), MANIFEST).with_record_dir(out)
}

fn expand(config: &Config, attr: TokenStream, item: TokenStream) -> (String, Vec<String>) {
    let out = expand_kernel(attr, item, config);
    (out.to_string(), errors(&out))
}

#[track_caller]
fn clean(config: &Config, attr: TokenStream, item: TokenStream) -> String {
    let (code, errs) = expand(config, attr, item);
    assert!(errs.is_empty(), "expected a clean expansion, got {errs:#?}");
    assert!(code.contains("__KGRAPH_RECORD"), "the handle embeds the record it was checked against");
    code
}

/// The expansion fails; its first error contains every `wanted`.
#[track_caller]
fn fails(config: &Config, attr: TokenStream, item: TokenStream, wanted: &[&str]) -> String {
    let (_, errs) = expand(config, attr, item);
    assert!(!errs.is_empty(), "expected an error");
    for w in wanted {
        assert!(errs[0].contains(w), "`{w}` not in: {}", errs[0]);
    }
    errs[0].clone()
}

#[test]
fn ifndef_inside_the_parameter_list() {
    let c = config();
    clean(
        &c,
        quote!("ifndef_params.cu", unsafe(extents)),
        quote!(
            pub fn ifndef_params(a: &[f32; n], b: &mut [f32; n], n: i32, s: f32, t: f32);
        ),
    );
    // What the text shows: 7 parameters. nvcc compiled 5.
    let msg = fails(
        &c,
        quote!("ifndef_params.cu"),
        quote!(
            pub fn ifndef_params(a: &[f32], b: &mut [f32], c: &[f32], d: &[f32], n: i32, s: f32, t: f32);
        ),
        &["takes 5 parameters, declared 7", "ifndef_params.cu:3", "remove `s`, `t`"],
    );
    assert!(msg.contains("the kernel is `ifndef_params(const float* a, float* b, int n, float s, float t)`"), "{msg}");
}

#[test]
fn if_switch_around_the_last_parameter() {
    let c = config();
    clean(
        &c,
        quote!("if_switch.cu"),
        quote!(
            pub fn if_switch(x: &[f32], y: &mut [f32], n: i32);
        ),
    );
    fails(
        &c,
        quote!("if_switch.cu"),
        quote!(
            pub fn if_switch(x: &[f32], y: &mut [f32], n: i32, extra: f32);
        ),
        &["takes 3 parameters, declared 4"],
    );
}

#[test]
fn ifdef_twins_follow_the_build_defines() {
    let (plain, double) = (config(), config_double());
    let f32_decl = quote!(
        pub fn twin(x: &[f32], y: &mut [f32], n: i32);
    );
    let f64_decl = quote!(
        pub fn twin(x: &[f64], y: &mut [f64], n: i32);
    );
    clean(&plain, quote!("twins.cu"), f32_decl.clone());
    // The text reader would take the first (`double`) twin; nvcc compiled the `float` one.
    fails(
        &plain,
        quote!("twins.cu"),
        f64_decl.clone(),
        &["parameter `x`", "twins.cu:8", "`const float* x`", "declare `&[f32]`"],
    );
    clean(&double, quote!("twins.cu"), f64_decl);
    fails(&double, quote!("twins.cu"), f32_decl, &["parameter `x`", "twins.cu:3", "`const double* x`"]);
}

#[test]
fn if_zero_old_version_is_not_read() {
    let c = config();
    clean(
        &c,
        quote!("if0.cu"),
        quote!(
            pub fn live(x: &mut [f32], n: i32);
        ),
    );
    fails(
        &c,
        quote!("if0.cu"),
        quote!(
            pub fn live(x: &mut [f32], n: i32, stride: i32);
        ),
        &["takes 2 parameters, declared 3", "if0.cu:7"],
    );
}

#[test]
fn backslash_continuation_in_the_parameter_list() {
    let c = config();
    clean(
        &c,
        quote!("continuation.cu"),
        quote!(
            pub fn spliced(x: &[f32], y: &mut [f32], n: i64);
        ),
    );
    fails(
        &c,
        quote!("continuation.cu"),
        quote!(
            pub fn spliced(x: &[f32], y: &mut [f32], n: i32);
        ),
        &["parameter `n`", "continuation.cu:3", "takes `long long n`", "declare `i64`"],
    );
}

#[test]
fn defined_extern_c_global() {
    let c = config();
    clean(
        &c,
        quote!("define_kernel.cu"),
        quote!(
            pub fn defined_kernel(x: &mut [f32], n: i32);
        ),
    );
    fails(
        &c,
        quote!("define_kernel.cu"),
        quote!(
            pub fn defined_kernel(x: &[f32], n: i32);
        ),
        &["define_kernel.cu:3", "declare `&mut [f32]`"],
    );
}

#[test]
fn macro_generated_family() {
    let c = config();
    clean(
        &c,
        quote!("family.cu"),
        quote!(
            pub fn uexp_f32(numel: i32, inp: &[f32], out: &mut [f32]);
        ),
    );
    clean(
        &c,
        quote!("family.cu"),
        quote!(
            pub fn uexp_f64(numel: i32, inp: &[f64], out: &mut [f64]);
        ),
    );
    clean(
        &c,
        quote!("family.cu"),
        quote!(
            pub fn usqrt_f32(numel: i32, inp: &[f32], out: &mut [f32]);
        ),
    );
    // The line of the macro's use, in the original file.
    fails(
        &c,
        quote!("family.cu"),
        quote!(
            pub fn uexp_f64(numel: i32, inp: &[f32], out: &mut [f32]);
        ),
        &["family.cu:9", "`const double* inp`"],
    );
    fails(
        &c,
        quote!("family.cu"),
        quote!(
            pub fn usqrt_f64(numel: i32, inp: &[f64], out: &mut [f64]);
        ),
        &["no kernel `usqrt_f64`", "uexp_f32, uexp_f64, usqrt_f32"],
    );
}

#[test]
fn kernel_in_a_local_header_with_a_typedef() {
    let c = config();
    let code = clean(
        &c,
        quote!("header_user.cu"),
        quote!(
            pub fn from_header(x: &[f32], y: &mut [f32], n: i32);
        ),
    );
    assert!(code.contains("header_user.cubin"), "the module is the .cu's");
    fails(
        &c,
        quote!("header_user.cu"),
        quote!(
            pub fn from_header(x: &[f64], y: &mut [f32], n: i32);
        ),
        &["in_header.cuh:3", "`const float* x`"],
    );
}

#[test]
fn cpp_kernels_bind_by_name() {
    let c = config();
    let code = clean(
        &c,
        quote!("cpp.cu", unsafe(extents)),
        quote!(
            pub fn scale(x: &mut [f32; n], a: f32, n: i32);
        ),
    );
    assert!(code.contains("\"_Z5scalePffi\""), "loaded by its mangled symbol: {code}");
    let code = clean(
        &c,
        quote!("cpp.cu", name = "gemm<float, 128>"),
        quote!(
            pub fn gemm_f32(a: &[f32], b: &mut [f32], n: i32);
        ),
    );
    assert!(code.contains("\"_Z4gemmIfLi128EEvPKT_PS0_i\""), "{code}");
    assert!(code.contains("\"gemm<float, 128>\""), "NAME is the C++ name");
    // Spaces and an integer suffix do not matter.
    clean(
        &c,
        quote!("cpp.cu", name = "gemm<float,128u>"),
        quote!(
            pub fn gemm_f32(a: &[f32], b: &mut [f32], n: i32);
        ),
    );
    // The mangled symbol itself works too.
    clean(
        &c,
        quote!("cpp.cu", name = "_Z4gemmIfLi128EEvPKT_PS0_i"),
        quote!(
            pub fn gemm_f32(a: &[f32], b: &mut [f32], n: i32);
        ),
    );
    fails(
        &c,
        quote!("cpp.cu", name = "gemm<float, 128>"),
        quote!(
            pub fn gemm_f32(a: &[i32], b: &mut [f32], n: i32);
        ),
        &["parameter `a`", "`const float* a`", "cpp.cu:9"],
    );
}

#[test]
fn templates_without_the_instantiation_show_the_line_to_add() {
    let c = config();
    fails(
        &c,
        quote!("cpp.cu", name = "gemm<double, 64>"),
        quote!(
            pub fn gemm_f64(a: &[f64], b: &mut [f64], n: i32);
        ),
        &[
            "instantiations compiled: gemm<float, 128>",
            "`template __global__ void gemm<double, 64>(const double* a, double* b, int n);`",
        ],
    );
    fails(
        &c,
        quote!("cpp.cu", name = "uninstantiated<float>"),
        quote!(
            pub fn z(x: &mut [f32], n: i32);
        ),
        &[
            "cpp.cu:16 defines the template `uninstantiated`",
            "add `template __global__ void uninstantiated<float>(float* x, int n);`",
        ],
    );
}

/// A template kernel named without its template arguments: the message names the template and
/// what nvcc compiled of it, not "expected `extern \"C\"`".
#[test]
fn a_template_named_without_arguments_names_the_template_and_its_instantiations() {
    let c = config();
    let msg = fails(
        &c,
        quote!("cpp.cu"),
        quote!(
            pub fn uninstantiated(x: &mut [f32], n: i32);
        ),
        &[
            "`uninstantiated` is a template kernel (tests/compiled/cpp.cu:16, `template <typename T>`), named without its template arguments",
            "nvcc compiled no instantiation of it",
            "`template __global__ void uninstantiated<T>(T* x, int n);`",
            "`name = \"uninstantiated<...>\"`",
        ],
    );
    assert!(!msg.contains("extern"), "{msg}");
    let msg = fails(
        &c,
        quote!("cpp.cu"),
        quote!(
            pub fn twice(x: &mut [f32], n: i32);
        ),
        &[
            "`twice` is a template kernel (tests/compiled/cpp.cu:29",
            "nvcc compiled 2 instantiations of it; name one: `name = \"twice<float>\"`, `name = \"twice<double>\"`",
        ],
    );
    assert!(!msg.contains("extern"), "{msg}");
}

#[test]
fn overloads_are_ambiguous_and_list_the_candidates() {
    let c = config();
    let msg = fails(
        &c,
        quote!("cpp.cu"),
        quote!(
            pub fn over(x: &mut [f32], n: i32);
        ),
        &["is ambiguous", "`name = \"_Z4overPfi\"`", "`name = \"_Z4overPdi\"`"],
    );
    assert!(msg.contains("2 kernels"), "{msg}");
    clean(
        &c,
        quote!("cpp.cu", name = "_Z4overPdi"),
        quote!(
            pub fn over(x: &mut [f64], n: i32);
        ),
    );
}

#[test]
fn pdl_waits_come_from_the_record() {
    let c = config();
    let pdl = |code: &str| code.contains("PDL_WAITS : bool = true");
    let decl = |name: &str| {
        let ident = syn::Ident::new(name, proc_macro2::Span::call_site());
        quote!(pub fn #ident(x: &mut [f32], n: i32);)
    };
    assert!(pdl(&clean(&c, quote!("pdl.cu"), decl("waits"))));
    assert!(!pdl(&clean(&c, quote!("pdl.cu"), decl("no_wait"))));
    assert!(!pdl(&clean(&c, quote!("pdl.cu"), decl("waits_and_prints"))), "an external call leaves the wait unproven");
}

#[test]
fn dynamic_shared_memory_in_the_record_needs_a_shared_requirement() {
    let c = config();
    // The record shows the `extern __shared__` use, directly and through a device function.
    fails(
        &c,
        quote!("shared.cu", unsafe(extents)),
        quote!(
            pub fn block_sum(x: &[f32; n], n: i32, out: &mut [f32; n]);
        ),
        &["`block_sum` uses dynamic shared memory", "shared = block.x * 4"],
    );
    fails(
        &c,
        quote!("shared.cu", unsafe(extents)),
        quote!(
            pub fn through_function(out: &mut [f32; n], n: i32);
        ),
        &["`through_function` uses dynamic shared memory"],
    );
    // Declared: the checked launch compares it with the launch's shared memory.
    let code = clean(
        &c,
        quote!("shared.cu", unsafe(extents), shared = block.x * 4),
        quote!(
            pub fn block_sum(x: &[f32; n], n: i32, out: &mut [f32; n]);
        ),
    );
    assert!(code.contains("check_shared"), "no shared-memory check in {code}");
    assert!(code.contains("cfg . block_dim . 0"), "the requirement reads the launch's block: {code}");
    // A static `__shared__` array is not dynamic shared memory, but without `__launch_bounds__`
    // the declaration must bound the block (the array does not grow with it); an unchecked
    // launch is the caller's.
    fails(
        &c,
        quote!("shared.cu", unsafe(extents)),
        quote!(
            pub fn static_tile(out: &mut [f32; n], n: i32);
        ),
        &["`static_tile` uses static shared memory", "`__shared__` array `tile` (512 bytes)", "max_block = 256"],
    );
    let code = clean(
        &c,
        quote!("shared.cu", unsafe(extents), max_block = 1024),
        quote!(
            pub fn static_tile(out: &mut [f32; n], n: i32);
        ),
    );
    assert!(!code.contains("check_shared"), "no dynamic shared memory: {code}");
    assert!(code.contains("check_block (Self :: NAME , & cfg , 1024u32"), "the declared bound is checked: {code}");
    clean(
        &c,
        quote!("shared.cu"),
        quote!(
            pub fn block_sum(x: &[f32], n: i32, out: &mut [f32]);
        ),
    );
}

#[test]
fn a_kernel_nvcc_did_not_compile_is_named_so() {
    // The text reader finds `live` with 3 parameters under `#if 0` first; without the `.i` the
    // record still wins: here the `.i` is removed from a copy of the build.
    let c = config();
    let scratch = tempfile::Builder::new().prefix("kgraph-compiled-checks-noi-").tempdir().unwrap();
    let dir = scratch.path();
    let from = c.record_dir.clone().unwrap();
    std::fs::copy(from.join("if0.kernels"), dir.join("if0.kernels")).unwrap();
    let no_i = Config::new(kernel_dir(), MANIFEST).with_record_dir(dir);
    fails(
        &no_i,
        quote!("if0.cu"),
        quote!(
            pub fn live(x: &mut [f32], n: i32, stride: i32);
        ),
        &["takes 2 parameters, declared 3", "kgraph's reading of the source finds 3"],
    );
    fails(
        &no_i,
        quote!("if0.cu"),
        quote!(
            pub fn live(x: &mut [f32], n: i32);
        ),
        &["cannot verify kernel `live`", "finds 3"],
    );
    // The text reader cannot read a spliced `long long`; the record's sizes still check the
    // declaration before the reader reports it cannot verify the types.
    std::fs::copy(from.join("continuation.kernels"), dir.join("continuation.kernels")).unwrap();
    fails(
        &no_i,
        quote!("continuation.cu"),
        quote!(
            pub fn spliced(x: &[f32], y: &mut [f32], n: i32);
        ),
        &[
            "parameter `n`: nvcc compiled parameter 3 of `spliced`",
            "as 8 bytes aligned to 8 (PTX `.u64`)",
            "`i32` passes 4 bytes",
        ],
    );
    fails(
        &no_i,
        quote!("continuation.cu"),
        quote!(
            pub fn spliced(x: &[f32], y: &mut [f32], n: i64);
        ),
        &["cannot verify kernel `spliced`", "kgraph cannot read `\\`", "Way out"],
    );
}
