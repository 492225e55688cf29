//! `requires(<cond>, ...)` and `align(<param> = <bytes>)` in `#[kernel(...)]` (issue #28's
//! launch-time requirements): what parses, the one spanned error per mistake, and the checks
//! the checked launch makes (`__requires`, `check_align`) as generated code.

use proc_macro2::TokenStream;
use quote::quote;

mod decl_support;
use decl_support::{config, errors_of};
use kgraph_codegen::expand_kernel;

/// `rms_norm(float* out, const float* input, int num_tokens, int d)` of `names.cu`, with `attr`
/// after the file and the promise.
fn rms_errors(attr: TokenStream) -> Vec<String> {
    errors_of(
        quote!("names.cu", unsafe(extents), #attr),
        quote!(
            pub fn rms_norm(out: &mut [f32; num_tokens * d], input: &[f32; num_tokens * d], num_tokens: i32, d: i32);
        ),
    )
}

/// The expansion of the same declaration, whitespace collapsed.
fn rms_code(attr: TokenStream) -> String {
    let out = expand_kernel(
        quote!("names.cu", unsafe(extents), #attr),
        quote!(
            pub fn rms_norm(out: &mut [f32; num_tokens * d], input: &[f32; num_tokens * d], num_tokens: i32, d: i32);
        ),
        &config(),
    );
    out.to_string().split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn well_formed_requirements_bind() {
    for attr in [
        quote!(requires(d >= 0)),
        quote!(requires(block.x == 256, block.y == 1 && block.z == 1)),
        quote!(requires(num_tokens <= i32::MAX - grid.x * block.x)),
        quote!(requires(d % 4 == 0 || d == 1, num_tokens > -1, min(d, 8) != max(0, i64::MIN))),
        quote!(align(out = 16, input = 16)),
        quote!(requires(d >= 0), align(input = 256)),
    ] {
        assert_eq!(rms_errors(attr.clone()), Vec::<String>::new(), "{attr}");
    }
}

#[test]
fn each_mistake_is_one_error() {
    let cases = [
        (quote!(requires(out > 0)), "`requires(out > 0)` names `out`, a pointer parameter"),
        (quote!(requires(n > 0)), "`requires(n > 0)` names `n`, which is not a parameter of `rms_norm`"),
        (quote!(requires(d > 0 && d < dd, dd > 1)), "names `dd`, which is not a parameter"),
        (quote!(requires(d)), "expected a comparison"),
        (quote!(requires(!(d < 0))), "a `requires` condition has no `!`"),
        (quote!(requires(d < i128::MAX)), "the constants a `requires` condition may name"),
        (quote!(requires(d < grid.w)), "the launch's grid has axes"),
        (quote!(requires(d < 4u32)), "a `requires` condition's literals take no suffix"),
        (quote!(requires(d > 0), requires(d < 9)), "`requires` given twice"),
        (quote!(requires()), "`requires()` has no condition"),
        (quote!(align(input = 12)), "the alignment is a power of two from 1 to 256"),
        (quote!(align(input = 512)), "the alignment is a power of two from 1 to 256"),
        (quote!(align(d = 16)), "`align(d = 16)`: `d` is `i32`, not a pointer"),
        (quote!(align(x = 16)), "`x` is not a parameter of `rms_norm`"),
        (quote!(align(input = 16, input = 8)), "`input` aligned twice"),
    ];
    for (attr, want) in cases {
        let errors = rms_errors(attr.clone());
        assert_eq!(errors.len(), 1, "{attr}: {errors:#?}");
        assert!(errors[0].contains(want), "{attr}: want `{want}` in {errors:#?}");
    }
}

#[test]
fn a_float_parameter_cannot_be_a_condition() {
    let errors = errors_of(
        quote!("names.cu", unsafe(extents), requires(factor > 0)),
        quote!(
            pub fn scale_all(data: &mut [f32; num_elements], factor: f32, num_elements: i32);
        ),
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("names `factor`, which is `f32`"), "{errors:?}");
    assert!(errors[0].contains("(here: `num_elements`)"), "{errors:?}");
}

#[test]
fn requirements_qualify_the_promise_so_they_need_it() {
    for (attr, what) in [(quote!(requires(n >= 0)), "`requires`"), (quote!(align(y = 16)), "`align`")] {
        let errors = errors_of(
            quote!("names.cu", #attr),
            quote!(
                pub fn proto(y: &mut [f32], n: i32);
            ),
        );
        assert_eq!(errors.len(), 1, "{attr}: {errors:?}");
        assert!(errors[0].starts_with(&format!("{what} is part of the promise")), "{attr}: {errors:?}");
        assert!(errors[0].contains("needs `unsafe(extents)`"), "{attr}: {errors:?}");
    }
}

#[test]
fn the_checked_launch_evaluates_each_condition_and_alignment() {
    let code = rms_code(quote!(requires(d >= 0, num_tokens <= i32::MAX - grid.x * block.x), align(input = 16)));
    // `__requires` takes the scalars the conditions name, in parameter order.
    assert!(
        code.contains(
            "pub fn __requires (& self , cfg : & :: kgraph :: LaunchConfig , num_tokens : i32 , d : i32) -> :: kgraph :: Result < () >"
        ),
        "{code}"
    );
    assert!(
        code.contains(
            "if ! (:: kgraph :: __private :: requires :: ge (:: kgraph :: __private :: requires :: int (d) , :: kgraph :: __private :: requires :: lit (0i128)))"
        ),
        "{code}"
    );
    assert!(
        code.contains("refused (Self :: NAME , \"d >= 0\" , & [(\"d\" , :: core :: convert :: From :: from (d))])"),
        "{code}"
    );
    // The headroom condition: exact i128 arithmetic over the launch's shape, every value shown.
    assert!(code.contains(":: kgraph :: __private :: requires :: lit (2147483647i128)"), "{code}");
    assert!(code.contains("\"num_tokens <= i32::MAX - grid.x * block.x\""), "{code}");
    assert!(code.contains("(\"grid.x\" , :: core :: convert :: From :: from (cfg . grid_dim . 0))"), "{code}");
    // The launch calls it before the extents, and checks the alignment on the device address.
    let issue = &code[code.find("pub unsafe fn __issue").expect("__issue")..];
    let (requires, extents) = (
        issue.find("self . __requires (& cfg , num_tokens , d) ?").unwrap(),
        issue.find("extent :: extent (").unwrap(),
    );
    assert!(requires < extents, "requirements before extents: {issue}");
    let (address, align) = (
        issue.find("let input =").unwrap(),
        issue.find("check_align (Self :: NAME , \"input\" , input , 16u64) ?").unwrap(),
    );
    assert!(address < align, "alignment of the device address: {issue}");
}

#[test]
fn a_declaration_without_requirements_generates_no_requirement_code() {
    let code = rms_code(quote!());
    assert!(!code.contains("__requires") && !code.contains("check_align"), "{code}");
}
