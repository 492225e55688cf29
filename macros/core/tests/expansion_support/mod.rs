//! Reading an expansion's errors, for the tests that expand declarations against real builds.

use proc_macro2::TokenStream;

/// The `compile_error!` messages of an expansion.
pub fn errors(tokens: &TokenStream) -> Vec<String> {
    let file: syn::File = syn::parse2(tokens.clone()).expect("expansion is valid Rust");
    file.items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Macro(m) if m.mac.path.segments.last().is_some_and(|s| s.ident == "compile_error") => {
                Some(m.mac.parse_body::<syn::LitStr>().expect("message literal").value())
            }
            _ => None,
        })
        .collect()
}
