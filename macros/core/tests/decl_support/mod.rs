//! Shared by the kernel-declaration error suites (`kernel_decl_errors.rs`, `kernel_names.rs`):
//! expand one standalone `#[kernel]` over `tests/fixtures` and read back its
//! `compile_error!` messages.

use kgraph_codegen::{expand_kernel, Config};
use proc_macro2::TokenStream;

/// This crate's root.
pub const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

/// `#[kernel]`'s configuration over this crate's `tests/fixtures` (no records).
pub fn config() -> Config {
    Config::new(format!("{MANIFEST}/tests/fixtures"), MANIFEST)
}

/// The `compile_error!` messages of a standalone declaration's expansion.
pub fn errors_of(attr: TokenStream, item: TokenStream) -> Vec<String> {
    let out = expand_kernel(attr, item, &config());
    let file: syn::File = syn::parse2(out).expect("expansion is valid Rust");
    file.items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Macro(m) if m.mac.path.segments.last().is_some_and(|s| s.ident == "compile_error") => {
                m.mac.parse_body::<syn::LitStr>().ok().map(|l| l.value())
            }
            _ => None,
        })
        .collect()
}
