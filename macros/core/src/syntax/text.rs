//! Plain-text forms shared by error messages and generated docs.

use proc_macro2::TokenStream;

use super::model::KernelDecl;
use super::naming::ident_text;

/// `name(a, b, c)`: a signature as a reminder in messages and docs, whatever the language of
/// its parameters (`axpb(const float* x, int n)`, `axpb(x: &[f32], n: i32)`).
pub fn signature<P: std::fmt::Display>(name: &str, params: impl IntoIterator<Item = P>) -> String {
    let params: Vec<String> = params.into_iter().map(|p| p.to_string()).collect();
    format!("{name}({})", params.join(", "))
}

/// A declaration's Rust signature for messages: `cfc_step(x: &[f32], n: i32)`.
pub fn decl_signature(decl: &KernelDecl) -> String {
    let params = decl.params.iter().map(|p| format!("{}: {}", ident_text(&p.name), p.kind.rust_decl()));
    signature(&ident_text(&decl.name), params)
}

/// "`a`, `b`, `c`", or `empty` when there is nothing to list.
pub fn code_list<S: AsRef<str>>(items: impl IntoIterator<Item = S>, empty: &str) -> String {
    let v: Vec<String> = items.into_iter().map(|s| format!("`{}`", s.as_ref())).collect();
    if v.is_empty() {
        empty.to_string()
    } else {
        v.join(", ")
    }
}

/// Token text with the spacing a person would write (`&mut [f32]`, `Vec<f32>`).
pub(crate) fn tidy_tokens(tokens: &TokenStream) -> String {
    let mut s = tokens.to_string();
    for (from, to) in
        [("& ", "&"), (" . ", "."), (" <", "<"), ("< ", "<"), (" >", ">"), (" ,", ","), (" ::", "::"), (":: ", "::")]
    {
        s = s.replace(from, to);
    }
    s
}
