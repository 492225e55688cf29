//! Declaration errors of issue 32, item 7 (kernel side): a literal division by zero in an
//! extent or `shared` (also after constant folding) is one error at the divisor; a `.cu` with
//! Latin-1 bytes in a comment is read; each error is reported once.

use proc_macro2::TokenStream;
use quote::quote;

mod decl_support;
use decl_support::{config, errors_of, MANIFEST};
use kgraph_codegen::expand_kernel;

#[test]
fn a_literal_division_by_zero_is_an_error_at_the_divisor() {
    let cases = [
        (quote!(&mut [f32; num_elements / 0]), "divides by zero"),
        (quote!(&mut [f32; num_elements % 0]), "takes a remainder modulo zero"),
        (quote!(&mut [f32; num_elements / (2 - 2)]), "the divisor's literals fold to 0"),
        (quote!(&mut [f32; num_elements * (num_elements / (min(3, 0) * 7))]), "divides by zero"),
    ];
    for (ty, want) in cases {
        let errors = errors_of(
            quote!("names.cu", unsafe(extents)),
            quote!(pub fn scale_all(data: #ty, factor: f32, num_elements: i32);),
        );
        assert_eq!(errors.len(), 1, "{ty}: {errors:?}");
        assert!(errors[0].contains(want), "{ty}: {errors:?}");
        assert!(errors[0].starts_with("the extent of `data` (`num_elements "), "{ty}: {errors:?}");
    }
}

#[test]
fn a_division_by_zero_in_shared_is_an_error() {
    let errors = errors_of(
        quote!("names.cu", unsafe(extents), shared = block.x * 4 / (1 - 1)),
        quote!(
            pub fn scale_all(data: &mut [f32; num_elements], factor: f32, num_elements: i32);
        ),
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("`shared` (`block.x * 4 / (1 - 1)`) divides by zero"), "{errors:?}");
}

#[test]
fn a_divisor_that_only_may_be_zero_is_the_launch_checks_business() {
    // `num_elements` may be 0 at run time: the checked launch refuses that launch, not the macro.
    for ty in [quote!(&mut [f32; 64 / num_elements]), quote!(&mut [f32; num_elements / (2 - 1)])] {
        let errors = errors_of(
            quote!("names.cu", unsafe(extents)),
            quote!(pub fn scale_all(data: #ty, factor: f32, num_elements: i32);),
        );
        assert!(errors.is_empty(), "{ty}: {errors:?}");
    }
}

#[test]
fn a_cu_with_latin1_bytes_in_a_comment_is_read() {
    let bytes = std::fs::read(format!("{MANIFEST}/tests/fixtures/latin1.cu")).unwrap();
    assert!(std::str::from_utf8(&bytes).is_err(), "the fixture must not be UTF-8");
    let out = expand_kernel(
        quote!("latin1.cu", unsafe(extents)),
        quote!(
            pub fn latin1_scale(x: &mut [f32; n], a: f32, n: i32);
        ),
        &config(),
    );
    let text = out.to_string();
    assert!(!text.contains("compile_error"), "{text}");
    // `include_str!` cannot read the file: the text is a literal (Latin-1 read, one character
    // per byte, lines kept), and `include_bytes!` keeps the file a dependency of the crate.
    assert!(!text.contains("include_str"), "{text}");
    assert!(text.contains("include_bytes ! (\"") && text.contains("latin1.cu\")"), "{text}");
    assert!(text.contains("caf\u{e9}, \u{b5}s"), "{text}");
    // The handle's docs name the kernel's line as in the file.
    assert!(text.contains("latin1.cu:2"), "{text}");
}

#[test]
fn a_template_named_without_arguments_names_the_template_without_a_record_too() {
    let errors = errors_of(
        quote!("templ.cu"),
        quote!(
            pub fn tiled(src: &[f32], dst: &mut [f32], n: i32);
        ),
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = &errors[0];
    assert!(
        e.starts_with(
            "`tiled` is a template kernel (tests/fixtures/templ.cu:3, `template <typename T, int TILE>`), named \
             without its template arguments: name an instantiation, `name = \"tiled<...>\"`"
        ),
        "{e}"
    );
    assert!(!e.contains("extern"), "{e}");
}

#[test]
fn an_unknown_name_in_extents_is_reported_once() {
    let errors = errors_of(
        quote!("names.cu", unsafe(extents), shared = m * 4),
        quote!(
            pub fn scale_all(data: &mut [f32; m * m + num_elements], factor: f32, num_elements: i32);
        ),
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("the extent of `data` names `m`, which is not a parameter"), "{errors:?}");
}

#[test]
fn a_missing_file_is_one_error_however_many_declarations_name_it() {
    let out = kgraph_codegen::expand_kernels(
        TokenStream::new(),
        quote! {
            mod m {
                #[kernel("nowhere.cu")]
                pub fn one(x: &mut [f32], n: i32);
                #[kernel("nowhere.cu")]
                pub fn two(x: &mut [f32], n: i32);
                #[kernel("names.cu")]
                pub fn scale_all(data: &mut [f32], factor: f32, num_elements: i32);
            }
        },
        &config(),
    );
    let text = out.to_string();
    assert_eq!(text.matches("compile_error").count(), 1, "{text}");
    assert!(text.contains("kernel file `nowhere.cu` not found"), "{text}");
    // Both get stubs; the good declaration its handle.
    assert!(
        text.contains("struct One { _declaration_has_errors") && text.contains("struct Two { _declaration_has_errors")
    );
    assert!(text.contains("mod __kgraph_kernel_ScaleAll"), "{text}");
}

#[test]
fn a_parameter_whose_type_does_not_parse_keeps_its_place_in_the_stub() {
    let out = expand_kernel(
        quote!("names.cu", unsafe(extents)),
        quote!(pub fn scale_all(data: &mut 5, factor: f32, num_elements: i32);),
        &config(),
    );
    let file: syn::File = syn::parse2(out).expect("valid Rust");
    let text = prettyplease_free(&file);
    assert_eq!(text.matches("compile_error").count(), 1, "{text}");
    // `launch(&self, stream, cfg, data, factor, num_elements)`: `data` takes any type.
    assert!(text.contains("data : impl :: core :: marker :: Sized , factor : f32 , num_elements : i32"), "{text}");
}

/// The tokens of a file as text (spaced as `TokenStream`'s `Display` spaces them).
fn prettyplease_free(file: &syn::File) -> String {
    quote::ToTokens::to_token_stream(file).to_string()
}
