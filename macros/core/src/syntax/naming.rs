//! How generated things are named, in one place: identifiers as text, UpperCamelCase for handle
//! and graph struct names, and which spec names can become generated method names.

use std::path::Path;

use proc_macro2::Span;
use syn::Ident;

use super::model::KernelDecl;

/// The identifier without a raw `r#` prefix.
pub fn ident_text(ident: &Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_string).unwrap_or(s)
}

/// The words joined in UpperCamelCase, each word's first letter uppercased and the rest kept;
/// `prefix` goes in front when the result would be empty or start with a digit (not an
/// identifier).
pub fn upper_camel<'w>(words: impl IntoIterator<Item = &'w str>, prefix: &str) -> String {
    let camel: String = words
        .into_iter()
        .filter(|word| !word.is_empty())
        .map(|word| {
            let mut chars = word.chars();
            let first = chars.next().map(|c| c.to_ascii_uppercase()).into_iter();
            first.chain(chars).collect::<String>()
        })
        .collect();
    if camel.is_empty() || camel.starts_with(|c: char| c.is_ascii_digit()) {
        format!("{prefix}{camel}")
    } else {
        camel
    }
}

/// The handle type's name for kernel fn `name`: `cfc_step` → `CfcStep` (words split at `_`).
pub fn handle_name(name: &Ident) -> String {
    upper_camel(ident_text(name).split('_'), "Kernel")
}

/// [`handle_name`] as an identifier spanned on the fn name.
pub fn handle_ident(name: &Ident) -> Ident {
    Ident::new(&handle_name(name), name.span())
}

/// The handle type's name: the fn name in UpperCamelCase (`cfc_step` → `CfcStep`).
pub fn kernel_handle_ident(decl: &KernelDecl) -> Ident {
    handle_ident(&decl.name)
}

/// The default graph struct name for a spec path: its file stem in UpperCamelCase, words split
/// at anything not ASCII-alphanumeric (`graphs/test_affine.toml` → `TestAffine`).
pub fn graph_struct_name(path: &str) -> String {
    let stem = Path::new(path).file_stem().and_then(|s| s.to_str()).unwrap_or("graph");
    upper_camel(stem.split(|c: char| !c.is_ascii_alphanumeric()), "Graph")
}

/// [`graph_struct_name`] as an identifier at `span`.
pub fn graph_struct_ident(path: &str, span: Span) -> Ident {
    Ident::new(&graph_struct_name(path), span)
}

/// True for names usable as Rust identifiers in generated methods: `[a-z][a-z0-9_]*`, no keyword.
pub fn is_snake_ident(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && syn::parse_str::<syn::Ident>(name).is_ok()
}

/// A C++ kernel name as `name = "..."` may give it: identifiers joined by `::`, optionally
/// followed by one template argument list `<...>` of identifiers, numbers, `*`, `&`, `,`, `::`,
/// `-`, spaces and nested `<>`/`()` (`ops::gemm<float, 128>`, `k<const float*, 4u>`).
pub fn is_cpp_kernel_name(name: &str) -> bool {
    let (head, args) = match name.split_once('<') {
        Some((head, rest)) => match rest.strip_suffix('>') {
            Some(args) => (head, Some(args)),
            None => return false,
        },
        None => (name, None),
    };
    let ident = |s: &str| {
        s.chars().next().is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
            && s.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
    };
    let head_ok = head.trim().split("::").all(|part| ident(part.trim()));
    let mut depth = 0i32;
    let args_ok = args.map_or(true, |a| {
        a.chars().all(|c| {
            match c {
                '<' | '(' => depth += 1,
                '>' | ')' => depth -= 1,
                _ => {}
            }
            depth >= 0 && (c.is_ascii_alphanumeric() || " _*&,:-.<>()".contains(c))
        }) && depth == 0
    });
    head_ok && args_ok
}

/// A C identifier: a letter or `_`, then letters, digits and `_`.
pub(crate) fn is_c_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}
