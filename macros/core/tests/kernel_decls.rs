//! Declarations without a compiler: parsing, `decls_from_source`, handle names, the kernel
//! folders searched, error collection, and the guarantee that no input makes the macros panic.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use kgraph_codegen::syntax::model::{Elem, ParamKind};
use kgraph_codegen::syntax::parse::parse_decl;
use kgraph_codegen::{decls_from_source, expand_kernel, expand_kernels, kernel_handle_ident, Config};
use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

fn config() -> Config {
    Config::new(format!("{MANIFEST}/tests/fixtures"), MANIFEST)
}

/// The `compile_error!` messages in an expansion.
fn errors(tokens: &TokenStream) -> Vec<String> {
    let file: syn::File = syn::parse2(tokens.clone()).expect("expansion is valid Rust");
    let mut found = Vec::new();
    collect_errors(&file.items, &mut found);
    found
}

fn collect_errors(items: &[syn::Item], found: &mut Vec<String>) {
    for item in items {
        match item {
            syn::Item::Macro(m) if m.mac.path.segments.last().is_some_and(|s| s.ident == "compile_error") => {
                let lit: syn::LitStr = m.mac.parse_body().expect("message literal");
                found.push(lit.value());
            }
            syn::Item::Mod(m) => collect_errors(m.content.as_ref().map_or(&[][..], |c| &c.1), found),
            _ => {}
        }
    }
}

#[test]
fn decls_from_source_reads_registries_and_top_level_declarations() {
    let src = r#"
        use kgraph::kernel;
        #[kgraph::kernels]
        pub mod model {
            /// Docs are kept.
            #[kernel("cfc_step.cu")]
            pub fn cfc_step(w: &[f32], x: &[f32], dt: f32, n: i32, h_new: &mut [f32]);
            #[kernel("snap.cu", name = "snap_kernel")]
            pub fn snap_features(snap: Pinned<f32>, out: &mut [f32]);
            pub fn not_a_kernel() {}
            mod nested {
                #[kgraph::kernel("deep.cu")] fn deep_one(v: u64);
            }
        }
        #[kernel("top.cu")]
        fn top_level(a: i8, b: &mut [u16]) {}
    "#;
    let decls = decls_from_source(src).unwrap();
    let names: Vec<String> = decls.iter().map(|d| d.name.to_string()).collect();
    assert_eq!(names, ["cfc_step", "snap_features", "deep_one", "top_level"]);
    let handles: Vec<String> = decls.iter().map(|d| kernel_handle_ident(d).to_string()).collect();
    assert_eq!(handles, ["CfcStep", "SnapFeatures", "DeepOne", "TopLevel"]);

    let cfc = &decls[0];
    assert_eq!((cfc.file.as_str(), cfc.symbol.as_str()), ("cfc_step.cu", "cfc_step"));
    let kinds: Vec<ParamKind> = cfc.params.iter().map(|p| p.kind).collect();
    assert_eq!(
        kinds,
        [
            ParamKind::Slice { elem: Elem::F32, mutable: false },
            ParamKind::Slice { elem: Elem::F32, mutable: false },
            ParamKind::Scalar(Elem::F32),
            ParamKind::Scalar(Elem::I32),
            ParamKind::Slice { elem: Elem::F32, mutable: true },
        ]
    );
    assert!(cfc.attrs.iter().any(|a| a.path().is_ident("doc")));
    assert_eq!(decls[1].symbol, "snap_kernel");
    assert_eq!(decls[1].params[0].kind, ParamKind::Pinned(Elem::F32));
    assert_eq!(decls[3].params[1].kind, ParamKind::Slice { elem: Elem::U16, mutable: true });
}

#[test]
fn pinned_mut_binds_a_non_const_pointer_and_is_checked_against_constness() {
    let decl = decls_from_source(
        r#"#[kernel("host_out.cu")] fn publish(x: &[f32], s: Pinned<f32>, o: PinnedMut<u64>, n: i32);"#,
    )
    .unwrap()
    .remove(0);
    assert_eq!(decl.params[1].kind, ParamKind::Pinned(Elem::F32));
    assert_eq!(decl.params[2].kind, ParamKind::PinnedMut(Elem::U64));
    assert_eq!(decl.params[2].kind.rust_decl(), "PinnedMut<u64>");
    assert_eq!(decl.params[2].kind.c_decl(), "unsigned long long*");

    let ok = expand_kernel(
        quote!("host_out.cu"),
        quote!(
            pub fn publish(x: &[f32], scale: Pinned<f32>, host_out: PinnedMut<f32>, n: i32);
        ),
        &config(),
    );
    assert_eq!(errors(&ok), Vec::<String>::new());
    assert!(ok.to_string().contains(":: kgraph :: PinnedMutPtr < f32 >"), "{ok}");

    // Swapped: `PinnedMut` on the `const float*`, `Pinned` on the `float*`. Both reported.
    let swapped = expand_kernel(
        quote!("host_out.cu"),
        quote!(
            pub fn publish(x: &[f32], scale: PinnedMut<f32>, host_out: Pinned<f32>, n: i32);
        ),
        &config(),
    );
    let errors = errors(&swapped);
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(errors[0].contains("parameter `scale`") && errors[0].contains("host_out.cu:3"), "{}", errors[0]);
    assert!(errors[0].contains("takes `const float* scale`, declared `PinnedMut<f32>`"), "{}", errors[0]);
    assert!(errors[0].contains("declare `Pinned<f32>`"), "{}", errors[0]);
    assert!(errors[1].contains("takes `float* host_out`, declared `Pinned<f32>`"), "{}", errors[1]);
    assert!(errors[1].contains("declare `PinnedMut<f32>`"), "{}", errors[1]);

    let bad = decls_from_source(r#"#[kernel("k.cu")] fn k(a: PinnedMut, b: PinnedMut<usize>);"#).unwrap_err();
    let bad: Vec<String> = bad.iter().map(ToString::to_string).collect();
    assert_eq!(bad.len(), 2, "{bad:#?}");
    assert!(bad[0].contains("`PinnedMut` takes one element type: `PinnedMut<f32>`"), "{}", bad[0]);
    assert!(bad[1].contains("unsupported `PinnedMut` element type `usize`"), "{}", bad[1]);
}

#[test]
fn decls_from_source_reports_every_bad_declaration() {
    let src = r#"
        #[kgraph::kernels]
        mod m {
            #[kernel("a.cu")] pub fn a(x: Vec<f32>, n: usize);
            #[kernel] pub fn b(x: &[f32]);
            #[kernel("c.cu")] pub fn c(x: &[f32]) -> f32;
        }
    "#;
    let errors: Vec<String> = decls_from_source(src).unwrap_err().iter().map(|e| e.to_string()).collect();
    assert_eq!(errors.len(), 4, "{errors:#?}");
    assert!(errors[0].contains("`Vec<f32>`"), "{}", errors[0]);
    assert!(errors[1].contains("`usize`"), "{}", errors[1]);
    assert!(errors[2].contains("missing the kernel's `.cu` file"), "{}", errors[2]);
    assert!(errors[3].contains("returns nothing"), "{}", errors[3]);
}

#[test]
fn handle_names_are_upper_camel_case() {
    let cases = [
        ("cfc_step", "CfcStep"),
        ("snap", "Snap"),
        ("matmul_2d", "Matmul2d"),
        ("r#type", "Type"),
        ("a__b_", "AB"),
        ("x86_kernel", "X86Kernel"),
    ];
    for (name, handle) in cases {
        let src = format!("#[kernel(\"k.cu\")] fn {name}(n: i32);");
        let decl = decls_from_source(&src).unwrap().remove(0);
        assert_eq!(kernel_handle_ident(&decl).to_string(), handle, "{name}");
    }
}

/// Every error of a registry is reported; a declaration with errors becomes a stub, and the one
/// that binds keeps its real handle (one bad declaration does not break the good ones).
#[test]
fn all_errors_of_a_registry_are_reported_and_only_the_bad_declarations_are_stubs() {
    let out = expand_kernels(
        TokenStream::new(),
        quote! {
            mod m {
                #[kernel("cfc_step.cu")]
                pub fn cfc_step(w_in: &mut [f32], x: &[f32], h_old: &[f32], dt: f64, n: i32, h_new: &mut [f32]);
                #[kernel("pair.cu")]
                pub fn scale(x: &mut [f32], a: f32, n: i32);
                #[kernel("pair.cu")]
                pub fn missing(x: &mut [f32]);
            }
        },
        &config(),
    );
    let errors = errors(&out);
    assert_eq!(errors.len(), 3, "{errors:#?}");
    assert!(errors[0].starts_with("parameter `w_in`") && errors[0].contains("declare `&[f32]`"), "{}", errors[0]);
    assert!(errors[1].starts_with("parameter `dt`") && errors[1].contains("declare `f32`"), "{}", errors[1]);
    assert!(errors[2].contains("no kernel `missing`") && errors[2].contains("scale, shift"), "{}", errors[2]);
    let text = out.to_string();
    for stub in ["struct CfcStep", "struct Missing"] {
        assert!(text.contains(&format!("{stub} {{ _declaration_has_errors")), "no stub `{stub}`: {text}");
    }
    assert!(text.contains("mod __kgraph_kernel_Scale"), "`scale` binds: its real handle");
    assert!(text.contains("pair.cubin"), "the real handle embeds its module");
    assert!(!text.contains("cfc_step.cubin"), "stubs embed nothing");
    assert!(text.contains("struct Kernels"), "the registry keeps every field");
}

#[test]
fn missing_out_dir_asks_for_a_build_script_only_when_the_declaration_is_right() {
    let mut config = config();
    config.has_out_dir = false;
    let good = expand_kernel(
        quote!("pair.cu"),
        quote!(
            pub fn scale(x: &mut [f32], a: f32, n: i32);
        ),
        &config,
    );
    let errs = errors(&good);
    assert_eq!(errs.len(), 1);
    assert!(errs[0].contains("kgraph_build::compile_kernels()"), "{}", errs[0]);
    let bad = expand_kernel(
        quote!("pair.cu"),
        quote!(
            pub fn scale(x: &mut [f32], a: i32, n: i32);
        ),
        &config,
    );
    let errs = errors(&bad);
    assert_eq!(errs.len(), 1);
    assert!(errs[0].starts_with("parameter `a`"), "{}", errs[0]);
}

#[test]
fn kernel_dirs_are_searched_in_order() {
    let config = Config {
        kernel_dirs: vec![format!("{MANIFEST}/tests/no_such_dir").into(), format!("{MANIFEST}/tests/fixtures").into()],
        manifest_dir: MANIFEST.into(),
        has_out_dir: true,
        record_dir: None,
    };
    let out = expand_kernel(
        quote!("pair.cu"),
        quote!(
            pub fn scale(x: &mut [f32], a: f32, n: i32);
        ),
        &config,
    );
    assert!(errors(&out).is_empty());
    assert!(out.to_string().contains("tests/fixtures/pair.cu"));
    let out = expand_kernel(
        quote!("nope.cu"),
        quote!(
            pub fn scale(x: &mut [f32]);
        ),
        &config,
    );
    let errs = errors(&out);
    assert!(errs[0].contains("tests/no_such_dir/nope.cu, tests/fixtures/nope.cu"), "{}", errs[0]);
}

/// `Config::from_env`'s folder list, from the variables' values: `$KGRAPH_KERNEL_DIR`, then
/// every folder of `$KGRAPH_KERNEL_DIRS` (what kgraph-build compiled), then `kernels/`; relative
/// folders under the crate root, each folder once.
#[test]
fn kernel_dirs_from_the_environment_values() {
    let root = Path::new("/crate");
    let dirs = |one: Option<&str>, many: Option<OsString>| {
        Config::kernel_dirs_from(root, one.map(OsStr::new), many.as_deref())
    };
    let paths = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();

    assert_eq!(dirs(None, None), paths(&["/crate/kernels"]));
    assert_eq!(dirs(Some(""), Some(OsString::new())), paths(&["/crate/kernels"]), "empty values add nothing");
    assert_eq!(dirs(Some("fixtures"), None), paths(&["/crate/fixtures", "/crate/kernels"]));

    let built =
        std::env::join_paths(["/crate/kernels", "/crate/tests/kernels", "/crate/examples/bench/kernels"]).unwrap();
    assert_eq!(
        dirs(None, Some(built.clone())),
        paths(&["/crate/kernels", "/crate/tests/kernels", "/crate/examples/bench/kernels"]),
        "the build script's folders in its order, `kernels/` not repeated"
    );
    assert_eq!(
        dirs(Some("/elsewhere/k"), Some(built)),
        paths(&["/elsewhere/k", "/crate/kernels", "/crate/tests/kernels", "/crate/examples/bench/kernels"]),
        "$KGRAPH_KERNEL_DIR first"
    );

    let relative = std::env::join_paths(["tests/kernels", "/crate/tests/kernels", "kernels"]).unwrap();
    assert_eq!(
        dirs(Some("tests/kernels"), Some(relative)),
        paths(&["/crate/tests/kernels", "/crate/kernels"]),
        "relative folders are under the crate root, and each folder is searched once"
    );
}

/// Every prefix of valid and invalid declarations, token by token: the macros must answer
/// with code or errors, never panic.
#[test]
fn no_input_makes_the_macros_panic() {
    let inputs = [
        quote! {
            /// docs
            #[kernel("cfc_step.cu", name = "cfc_step")]
            pub fn cfc_step(w_in: &[f32], x: &[f32], h_old: &[f32], dt: f32, n: i32, h_new: &mut [f32]);
        },
        quote! {
            #[kernel("snap.cu")] pub(crate) unsafe extern "C" fn snap_features<T: Copy>(self, (a, b): (i32, i32), snap: Pinned<f32,>, out: &'static mut [f32], ...) -> i32 where T: Send { body }
        },
        quote! { #[kernel] #[kernel = "x"] #[kernel(1, 2)] fn x(a: &[[f32; 4]], b: &mut Vec<f32>, c: Pinned, d: Pinned<>, e: ::std::primitive::f32, f: (f32)) ; ; },
    ];
    for input in inputs {
        let tokens: Vec<proc_macro2::TokenTree> = input.into_iter().collect();
        for end in 0..=tokens.len() {
            let item: TokenStream = tokens[..end].iter().cloned().collect();
            let _ = expand_kernel(quote!("cfc_step.cu"), item.clone(), &config());
            let _ = expand_kernel(TokenStream::new(), item.clone(), &config());
            let _ = expand_kernels(TokenStream::new(), quote!(mod m { #item }), &config());
            let _ = expand_kernels(quote!(x), item, &config());
        }
    }
}

/// Found by `tests/prop_kernel_decl.rs`: a parameter named `opts` expanded without an error
/// into a `launch_with(.., opts: LaunchOptions, opts: ..)` that rustc rejects.
#[test]
fn parameter_names_used_by_the_generated_launchers_are_refused() {
    for (name, method) in [("stream", "`launch(&self"), ("cfg", "`launch(&self"), ("opts", "`launch_with(&self")] {
        let param = Ident::new(name, Span::call_site());
        let parsed = parse_decl(quote!(pub fn k(x: &[f32], #param: i32);), Some((quote!("k.cu"), Span::call_site())));
        let messages: Vec<String> = parsed.errors.iter().map(ToString::to_string).collect();
        assert_eq!(messages.len(), 1, "{name}: {messages:?}");
        assert!(messages[0].contains(&format!("`{name}` is taken by the generated {method}")), "{messages:?}");
    }
}

#[test]
fn lifetimes_and_foreign_pinned_types_are_spanned_errors() {
    let bad = decls_from_source(
        r#"#[kernel("k.cu", unsafe(extents))] fn k(x: &'a [f32; n], y: &'static mut [f32; n], n: i32);"#,
    )
    .unwrap_err();
    let bad: Vec<String> = bad.iter().map(ToString::to_string).collect();
    assert_eq!(bad.len(), 2, "every lifetime is reported: {bad:#?}");
    assert!(bad[0].contains("kernel parameters take no lifetimes") && bad[0].contains("`'a`"), "{}", bad[0]);
    assert!(bad[1].contains("`'static`") && bad[1].contains("write `&mut [..]`"), "{}", bad[1]);

    let bad =
        decls_from_source(r#"#[kernel("k.cu")] fn k(x: my::Pinned<f32>, y: other::PinnedMut<f32>);"#).unwrap_err();
    let bad: Vec<String> = bad.iter().map(ToString::to_string).collect();
    assert_eq!(bad.len(), 2, "{bad:#?}");
    assert!(bad[0].contains("`Pinned` here is not kgraph's"), "{}", bad[0]);
    assert!(bad[1].contains("`PinnedMut` here is not kgraph's"), "{}", bad[1]);

    // kgraph's own, by bare name or under `kgraph::`, are taken.
    let ok = decls_from_source(
        r#"#[kernel("k.cu", unsafe(extents))] fn k(x: kgraph::Pinned<[f32; n]>, y: ::kgraph::PinnedMut<[f32; n]>, z: Pinned<[f32; n]>, n: i32);"#,
    );
    assert!(ok.is_ok(), "{:?}", ok.err().map(|e| e.iter().map(ToString::to_string).collect::<Vec<_>>()));
}

/// Without a record (these fixtures have none), a checked declaration of a kernel whose file
/// declares an `extern __shared__` array must state `shared`: kgraph cannot tell which of the
/// file's kernels use it. With `shared` (or `shared = 0` for the one that uses none) it expands;
/// a file without one needs nothing, and neither does an unchecked declaration.
#[test]
fn without_a_record_extern_shared_in_the_file_requires_shared() {
    let missing = errors(&expand_kernel(
        quote!("reduce.cu", unsafe(extents)),
        quote!(
            pub fn block_sum(x: &[f32; n], out: &mut [f32; n], n: i32);
        ),
        &config(),
    ));
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert!(missing[0].contains("reduce.cu:5 declares an `extern __shared__` array"), "{}", missing[0]);
    assert!(missing[0].contains("shared = block.x * 4"), "{}", missing[0]);
    let also_copy = errors(&expand_kernel(
        quote!("reduce.cu", name = "copy", unsafe(extents)),
        quote!(
            pub fn copy_f32(x: &[f32; n], y: &mut [f32; n], n: i32);
        ),
        &config(),
    ));
    assert_eq!(also_copy.len(), 1, "the file's other kernel is not told apart: {also_copy:?}");
    for ok in [
        expand_kernel(
            quote!("reduce.cu", unsafe(extents), shared = block.x * 4),
            quote!(
                pub fn block_sum(x: &[f32; n], out: &mut [f32; n], n: i32);
            ),
            &config(),
        ),
        expand_kernel(
            quote!("reduce.cu", name = "copy", unsafe(extents), shared = 0),
            quote!(
                pub fn copy_f32(x: &[f32; n], y: &mut [f32; n], n: i32);
            ),
            &config(),
        ),
        expand_kernel(
            quote!("reduce.cu"),
            quote!(
                pub fn block_sum(x: &[f32], out: &mut [f32], n: i32);
            ),
            &config(),
        ),
        expand_kernel(
            quote!("pair.cu", name = "scale", unsafe(extents)),
            quote!(
                pub fn scale(x: &mut [f32; n], a: f32, n: i32);
            ),
            &config(),
        ),
    ] {
        assert_eq!(errors(&ok), Vec::<String>::new());
    }
}
