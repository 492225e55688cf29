//! Parameter names checked against the `.cu`'s (issue 28, item 4): a declaration naming a
//! parameter otherwise than the `.cu` is one compile error naming both, spanned on the Rust
//! parameter, "did you swap" for two parameters in each other's place, and `rename(a = b)` is
//! the visible opt-out. Fixture: tests/fixtures/names.cu.

use kgraph_codegen::expand_kernels;
use proc_macro2::TokenStream;
use quote::quote;

mod decl_support;
use decl_support::{config, errors_of};

#[test]
fn matching_names_bind() {
    let errors = errors_of(
        quote!("names.cu", unsafe(extents)),
        quote!(
            pub fn rms_norm(out: &mut [f32; num_tokens * d], input: &[f32; num_tokens * d], num_tokens: i32, d: i32);
        ),
    );
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn swapped_parameters_are_one_error_naming_the_swap() {
    let errors = errors_of(
        quote!("names.cu"),
        quote!(
            pub fn rms_norm(out: &mut [f32], input: &[f32], d: i32, num_tokens: i32);
        ),
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = &errors[0];
    assert!(e.contains("did you swap `d` and `num_tokens`?"), "{e}");
    assert!(e.contains("`int num_tokens` as parameter 3") && e.contains("`int d` as parameter 4"), "{e}");
    assert!(e.contains("rename(d = num_tokens, num_tokens = d)"), "{e}");
}

#[test]
fn a_swap_of_different_types_is_the_swap_not_two_type_errors() {
    let errors = errors_of(
        quote!("names.cu"),
        quote!(
            pub fn scale_all(data: &mut [f32], num_elements: f32, factor: i32);
        ),
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("did you swap `num_elements` and `factor`?"), "{}", errors[0]);
}

#[test]
fn a_differing_name_names_both_and_the_opt_out() {
    let errors = errors_of(
        quote!("names.cu"),
        quote!(
            pub fn rms_norm(out: &mut [f32], input: &[f32], n: i32, d: i32);
        ),
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = &errors[0];
    assert!(e.starts_with("parameter `n`: kernel `rms_norm`"), "{e}");
    assert!(e.contains("names parameter 3 `num_tokens`"), "{e}");
    assert!(e.contains("rename(n = num_tokens)"), "{e}");
}

#[test]
fn a_name_of_another_position_says_out_of_order() {
    let errors = errors_of(
        quote!("names.cu"),
        quote!(
            pub fn rms_norm(out: &mut [f32], input: &[f32], d: i32, x: i32);
        ),
    );
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("`d` is the kernel's parameter 4: are the parameters out of order?"), "{errors:?}");
}

#[test]
fn rename_is_the_opt_out() {
    let errors = errors_of(
        quote!("names.cu", rename(n = num_tokens, dim = d)),
        quote!(
            pub fn rms_norm(out: &mut [f32], input: &[f32], n: i32, dim: i32);
        ),
    );
    assert!(errors.is_empty(), "{errors:?}");
    // Swapped on purpose (the kernel's names are the wrong way round, say).
    let errors = errors_of(
        quote!("names.cu", rename(d = num_tokens, num_tokens = d)),
        quote!(
            pub fn rms_norm(out: &mut [f32], input: &[f32], d: i32, num_tokens: i32);
        ),
    );
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn a_rename_that_does_not_fit_the_cu_is_an_error() {
    let stale = errors_of(
        quote!("names.cu", rename(n = count)),
        quote!(
            pub fn rms_norm(out: &mut [f32], input: &[f32], n: i32, d: i32);
        ),
    );
    assert_eq!(stale.len(), 1, "{stale:?}");
    assert!(
        stale[0].contains("names parameter 3 `num_tokens`, not `count`: write `rename(n = num_tokens)`"),
        "{stale:?}"
    );
    let needless = errors_of(
        quote!("names.cu", rename(d = d)),
        quote!(
            pub fn rms_norm(out: &mut [f32], input: &[f32], num_tokens: i32, d: i32);
        ),
    );
    assert_eq!(needless.len(), 1, "{needless:?}");
    assert!(needless[0].contains("renames nothing"), "{needless:?}");
    let unknown = errors_of(
        quote!("names.cu", rename(m = num_tokens)),
        quote!(
            pub fn rms_norm(out: &mut [f32], input: &[f32], num_tokens: i32, d: i32);
        ),
    );
    assert_eq!(unknown.len(), 1, "{unknown:?}");
    assert!(unknown[0].contains("the declaration has no parameter `m`"), "{unknown:?}");
    let nameless = errors_of(
        quote!("names.cu", rename(y = out)),
        quote!(
            pub fn unnamed(y: &mut [f32], n: i32);
        ),
    );
    assert_eq!(nameless.len(), 1, "{nameless:?}");
    assert!(nameless[0].contains("no name"), "{nameless:?}");
}

#[test]
fn case_and_underscores_are_no_rename() {
    let errors = errors_of(
        quote!("names.cu"),
        quote!(
            pub fn scale_all(data: &mut [f32], factor: f32, num_elements: i32);
        ),
    );
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn unnamed_parameters_are_not_checked() {
    let errors = errors_of(
        quote!("names.cu"),
        quote!(
            pub fn unnamed(anything: &mut [f32], at_all: i32);
        ),
    );
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn a_definition_names_what_its_prototype_leaves_unnamed() {
    let errors = errors_of(
        quote!("names.cu"),
        quote!(
            pub fn proto(x: &mut [f32], n: i32);
        ),
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("names parameter 1 `y`"), "{errors:?}");
}

#[test]
fn a_keyword_name_is_spelled_raw() {
    let errors = errors_of(
        quote!("names.cu"),
        quote!(
            pub fn keyword(input: &[f32], kind: i32, out: &mut [f32]);
        ),
    );
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("rename it `r#in`"), "{errors:?}");
    assert!(errors[1].contains("rename it `r#type`"), "{errors:?}");
    let errors = errors_of(
        quote!("names.cu"),
        quote!(
            pub fn keyword(r#in: &[f32], r#type: i32, out: &mut [f32]);
        ),
    );
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn a_wrong_type_and_name_is_one_error() {
    let errors = errors_of(
        quote!("names.cu"),
        quote!(
            pub fn rms_norm(out: &mut [f32], input: &[f32], n: f32, d: i32);
        ),
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("declare `i32`") && errors[0].contains("`num_tokens`"), "{errors:?}");
}

#[test]
fn names_are_checked_in_registries_too() {
    let out = expand_kernels(
        TokenStream::new(),
        quote! {
            mod k {
                #[kernel("names.cu")]
                pub fn rms_norm(out: &mut [f32], input: &[f32], d: i32, num_tokens: i32);
            }
        },
        &config(),
    );
    assert!(out.to_string().contains("did you swap"), "{out}");
}

#[test]
fn a_name_the_launch_takes_is_written_with_a_trailing_underscore() {
    let errors = errors_of(
        quote!("names.cu"),
        quote!(
            pub fn with_cfg(cfg_: &[f32], n: i32);
        ),
    );
    assert!(errors.is_empty(), "{errors:?}");
    let errors = errors_of(
        quote!("names.cu"),
        quote!(
            pub fn with_cfg(cfg: &[f32], n: i32);
        ),
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("call it `cfg_`"), "{errors:?}");
    let errors = errors_of(
        quote!("names.cu"),
        quote!(
            pub fn with_cfg(config: &[f32], n: i32);
        ),
    );
    assert!(errors[0].contains("rename it `cfg_`"), "{errors:?}");
    // `kgraph declare` writes what binds.
    let suggestions = kgraph_codegen::suggest_declarations("names.cu", &config()).unwrap();
    let with_cfg = suggestions.iter().find(|s| s.kernel == "with_cfg").unwrap();
    let declaration = with_cfg.declaration.as_ref().unwrap();
    assert!(declaration.text.contains("pub fn with_cfg(cfg_: &[f32], n: i32);"), "{}", declaration.text);
}

#[test]
fn a_rename_names_a_raw_parameter_with_or_without_its_prefix() {
    for attr in [quote!("names.cu", rename(r#match = data)), quote!("names.cu", rename(match = data))] {
        let errors = errors_of(
            attr,
            quote!(
                pub fn scale_all(r#match: &mut [f32], factor: f32, num_elements: i32);
            ),
        );
        assert!(errors.is_empty(), "{errors:?}");
    }
}
