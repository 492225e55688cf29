//! Fuzzes `#[kernel]` / `#[kernels]` expansion against the workspace's `kernels/`: the input is
//! the attribute's arguments, a line `@@`, then the item (a `mod` goes to `#[kernels]`). Text
//! that is not Rust tokens is skipped (no compiler would call the macro with it). The expansion
//! must not panic and must parse as non-empty Rust items.

#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use kgraph_codegen::{expand_kernel, expand_kernels, Config};
use libfuzzer_sys::fuzz_target;
use proc_macro2::TokenStream;

fn config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        Config::new(root.join("kernels"), root)
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Some((attr, item)) = text.split_once("\n@@\n") else { return };
    let (Ok(attr), Ok(item_tokens)) = (attr.parse::<TokenStream>(), item.parse::<TokenStream>()) else { return };
    let first = item.split_whitespace().take(2).collect::<Vec<_>>();
    let out = if first.contains(&"mod") {
        expand_kernels(attr, item_tokens, config())
    } else {
        expand_kernel(attr, item_tokens, config())
    };
    match syn::parse2::<syn::File>(out) {
        Ok(file) => assert!(!file.items.is_empty(), "empty expansion: neither a handle nor an error"),
        Err(e) => panic!("expansion does not parse as items: {e}"),
    }
});
