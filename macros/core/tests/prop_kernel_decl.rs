//! Property: `#[kernel]` / `#[kernels]` expansion never panics. The real declarations of
//! `src/model.rs` are mutated token by token (tokens deleted, duplicated, swapped, moved, or
//! replaced with keywords, types, punctuation and literals; the attribute's arguments too) and
//! expanded against `kernels/` with [`expand_kernel`] (standalone) or [`expand_kernels`] (a
//! registry of several). The expansion must parse as Rust items — the handle, or
//! `compile_error!`s plus stubs — be non-empty, and declare no function with two parameters of
//! one name (a generated `launch` colliding with a declared parameter).

mod prop_support;

use std::cell::Cell;
use std::collections::BTreeSet;

use kgraph_codegen::{expand_kernel, expand_kernels, Config};
use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use prop_support::{cases, check_text, seed, workspace_root, Rng};

/// One declaration as flat token texts: the `#[kernel(...)]` arguments, and the rest.
#[derive(Debug, Clone)]
struct Decl {
    attr: Vec<String>,
    item: Vec<String>,
}

fn flatten(tokens: TokenStream, out: &mut Vec<String>) {
    let mut joint = String::new();
    for tt in tokens {
        if !joint.is_empty() && !matches!(tt, TokenTree::Punct(_)) {
            out.push(std::mem::take(&mut joint));
        }
        match tt {
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Brace => ("{", "}"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::None => ("", ""),
                };
                if !open.is_empty() {
                    out.push(open.into());
                }
                flatten(g.stream(), out);
                if !close.is_empty() {
                    out.push(close.into());
                }
            }
            TokenTree::Punct(p) => {
                joint.push(p.as_char());
                if p.spacing() == Spacing::Alone {
                    out.push(std::mem::take(&mut joint));
                }
            }
            TokenTree::Ident(i) => out.push(i.to_string()),
            TokenTree::Literal(l) => out.push(l.to_string()),
        }
    }
    if !joint.is_empty() {
        out.push(joint);
    }
}

/// The `#[kernel(...)]` declarations of `src/model.rs`'s `kernels` module.
fn model_decls() -> Vec<Decl> {
    let text = std::fs::read_to_string(workspace_root().join("src/model.rs")).expect("src/model.rs");
    let file = syn::parse_file(&text).expect("src/model.rs parses");
    let module = file
        .items
        .iter()
        .find_map(|i| match i {
            syn::Item::Mod(m) if m.ident == "kernels" => m.content.as_ref(),
            _ => None,
        })
        .expect("`mod kernels` in src/model.rs");
    let mut decls = Vec::new();
    for item in &module.1 {
        let tokens = match item {
            syn::Item::Verbatim(t) => t.clone(),
            syn::Item::Fn(f) => quote::quote!(#f),
            _ => continue,
        };
        let mut flat = Vec::new();
        flatten(tokens, &mut flat);
        // `# [ kernel ( args ) ]`
        let Some(at) = (0..flat.len()).find(|&i| flat[i..].starts_with(&["#".into(), "[".into(), "kernel".into()]))
        else {
            continue;
        };
        let close = (at..flat.len()).find(|&i| flat[i] == "]").expect("attribute closes");
        let attr = flat[at + 4..close - 1].to_vec();
        let item: Vec<String> = flat[..at].iter().chain(&flat[close + 1..]).cloned().collect();
        decls.push(Decl { attr, item });
    }
    decls
}

const IDENTS: &[&str] = &[
    "f32",
    "f64",
    "i8",
    "u8",
    "i16",
    "u16",
    "i32",
    "u32",
    "i64",
    "u64",
    "usize",
    "isize",
    "bool",
    "char",
    "str",
    "Pinned",
    "my",
    "CfcStep",
    "PinnedMut",
    "Vec",
    "Option",
    "Box",
    "mut",
    "self",
    "Self",
    "fn",
    "pub",
    "crate",
    "const",
    "unsafe",
    "extern",
    "async",
    "where",
    "impl",
    "dyn",
    "_",
    "r#type",
    "r#fn",
    "stream",
    "cfg",
    "opts",
    "args",
    "kernels",
    "Kernels",
    "kernel",
    "name",
    "x",
    "n",
    "batch",
    "é",
    "T",
    "super",
    "in",
    "ref",
    "static",
    "kgraph",
    "core",
    "Ok",
];

const PUNCT: &[&str] = &[
    "&",
    "*",
    ",",
    ";",
    ":",
    "::",
    "<",
    ">",
    "->",
    "-",
    "!",
    "#",
    "=",
    ".",
    "...",
    "'a",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "&mut",
    "?",
    "|",
    "@",
    "$",
    "#[kernel(\"cfc_step.cu\")]",
    "#[doc = \"d\"]",
    "#[cfg(test)]",
    "#![allow(x)]",
];

const LITERALS: &[&str] = &[
    "\"cfc_step.cu\"",
    "\"snap_features.cu\"",
    "\"heads.cu\"",
    "\"nope.cu\"",
    "\"../cfc_step.cu\"",
    "\"\"",
    "\".cu\"",
    "\"x\"",
    "\"cfc_step\"",
    "\"bad symbol\"",
    "\"é\"",
    "\"é.cu\"",
    "r\"cfc_step.cu\"",
    "b\"x\"",
    "'c'",
    "1",
    "1.0",
    "-1",
    "0x10",
    "\"cfc_step.cu\\0\"",
    "\"kernels/cfc_step.cu\"",
    "name = \"cfc_step\"",
    ", name = \"x\"",
];

fn mutate(rng: &mut Rng, toks: &mut Vec<String>) {
    let vocab = |rng: &mut Rng| -> String {
        match rng.below(3) {
            0 => rng.pick(IDENTS).to_string(),
            1 => rng.pick(PUNCT).to_string(),
            _ => rng.pick(LITERALS).to_string(),
        }
    };
    let at = |rng: &mut Rng, toks: &Vec<String>| rng.below(toks.len().max(1));
    match rng.below(11) {
        _ if toks.is_empty() => toks.push(vocab(rng)),
        9 | 10 => {
            // Rename a parameter (a word before `:`): keywords, reserved and duplicate names.
            let params: Vec<usize> = (0..toks.len().saturating_sub(1))
                .filter(|&i| toks[i + 1] == ":" && toks[i].starts_with(|c: char| c.is_alphabetic() || c == '_'))
                .collect();
            if let Some(&i) = (!params.is_empty()).then(|| rng.pick(&params)) {
                toks[i] =
                    if rng.chance(1, 4) { toks[*rng.pick(&params)].clone() } else { rng.pick(IDENTS).to_string() };
            }
        }
        0 => {
            toks.remove(at(rng, toks));
        }
        1 => {
            let i = at(rng, toks);
            let j = (i + rng.range(1, 6)).min(toks.len());
            toks.drain(i..j);
        }
        2 => {
            let i = at(rng, toks);
            toks.insert(i, toks[i].clone());
        }
        3 => {
            let i = at(rng, toks);
            let j = (i + 1).min(toks.len() - 1);
            toks.swap(i, j);
        }
        4 | 5 => {
            let i = at(rng, toks);
            toks[i] = vocab(rng);
        }
        6 => {
            let i = rng.below(toks.len() + 1);
            toks.insert(i, vocab(rng));
        }
        7 => {
            // An identifier of the declaration itself somewhere else (e.g. a duplicate parameter).
            let words: Vec<String> = toks.iter().filter(|t| t.starts_with(char::is_alphabetic)).cloned().collect();
            if let Some(w) = (!words.is_empty()).then(|| rng.pick(&words).clone()) {
                let i = at(rng, toks);
                toks[i] = w;
            }
        }
        _ => {
            let i = at(rng, toks);
            let t = toks.remove(i);
            toks.insert(rng.below(toks.len() + 1), t);
        }
    }
}

/// Finds functions with a repeated parameter name anywhere in the expansion.
fn duplicate_params(items: &[syn::Item]) -> Option<String> {
    fn check(sig: &syn::Signature) -> Option<String> {
        let mut seen = BTreeSet::new();
        for input in &sig.inputs {
            if let syn::FnArg::Typed(t) = input {
                if let syn::Pat::Ident(p) = &*t.pat {
                    if !seen.insert(p.ident.to_string()) {
                        return Some(format!("`{}` has two parameters named `{}`", sig.ident, p.ident));
                    }
                }
            }
        }
        None
    }
    items.iter().find_map(|item| match item {
        syn::Item::Fn(f) => check(&f.sig),
        syn::Item::Impl(i) => i.items.iter().find_map(|ii| match ii {
            syn::ImplItem::Fn(f) => check(&f.sig),
            _ => None,
        }),
        syn::Item::Mod(m) => m.content.as_ref().and_then(|(_, items)| duplicate_params(items)),
        _ => None,
    })
}

/// The expansion is non-empty Rust items with no duplicate parameters; `Ok(true)` when it
/// reports no error.
fn check_expansion(out: TokenStream) -> Result<bool, String> {
    let text = out.to_string();
    let clean = !text.contains("compile_error");
    let file = syn::parse2::<syn::File>(out).map_err(|e| format!("expansion does not parse as items: {e}\n{text}"))?;
    if file.items.is_empty() {
        return Err("empty expansion: neither a handle nor an error".into());
    }
    match duplicate_params(&file.items) {
        Some(dup) if clean => Err(format!("{dup}, and no error reported")),
        _ => Ok(clean),
    }
}

/// One case as text: the attribute's arguments, this separator, and the item (`#[kernel]`) or
/// the whole module (`#[kernels]`).
const SEPARATOR: &str = "\n@@\n";

/// Expands one case; `None` when its text is not tokens (no compiler would call the macro).
fn expand_case(input: &str, registry: bool, config: &Config) -> Option<TokenStream> {
    let (attr, item) = input.split_once(SEPARATOR)?;
    let (attr, item) = (attr.parse::<TokenStream>().ok()?, item.parse::<TokenStream>().ok()?);
    Some(if registry { expand_kernels(attr, item, config) } else { expand_kernel(attr, item, config) })
}

#[test]
fn mutated_declarations_expand_to_items_or_errors_never_a_panic() {
    let root = workspace_root();
    let config = Config::new(root.join("kernels"), &root);
    let decls = model_decls();
    assert!(decls.len() >= 8, "expected the model's declarations, found {}", decls.len());

    // The unmutated declarations expand without errors (else the mutations test nothing deep).
    for d in &decls {
        let (attr, item) = (d.attr.join(" ").parse().unwrap(), d.item.join(" ").parse().unwrap());
        let out = expand_kernel(attr, item, &config);
        assert_eq!(check_expansion(out), Ok(true), "{}", d.item.join(" "));
    }

    let mut rng = Rng::new(seed() ^ 0xdec1);
    let n = cases(2500);
    let (mut ran, mut clean) = (0usize, 0usize);
    while ran < n {
        let pick = |rng: &mut Rng| {
            let mut d = rng.pick(&decls).clone();
            for _ in 0..rng.range(0, 3) {
                mutate(rng, &mut d.item);
            }
            if rng.chance(1, 3) {
                mutate(rng, &mut d.attr);
            }
            d
        };
        let registry = rng.chance(1, 5);
        let input = if !registry {
            let d = pick(&mut rng);
            format!("{}{SEPARATOR}{}", d.attr.join(" "), d.item.join(" "))
        } else {
            let mut body = String::new();
            for _ in 0..rng.range(1, 4) {
                let d = pick(&mut rng);
                let path = if rng.chance(1, 2) { "kernel" } else { "kgraph::kernel" };
                body += &format!("#[{path}({})] {}\n", d.attr.join(" "), d.item.join(" "));
            }
            let attr = if rng.chance(1, 20) { "x" } else { "" };
            format!("{attr}{SEPARATOR}pub mod m {{ use super::*; {body} }}")
        };
        // Only token streams a compiler could hand to the macro count as cases.
        if !input.split(SEPARATOR).all(|part| part.parse::<TokenStream>().is_ok()) {
            continue;
        }
        let last_clean = Cell::new(false);
        let prop = |input: &str| {
            let out = expand_case(input, registry, &config).map_or(Ok(false), check_expansion)?;
            last_clean.set(out);
            Ok(())
        };
        check_text("kernel declaration", ran, &input, &prop);
        clean += usize::from(last_clean.get());
        ran += 1;
    }
    eprintln!("prop_kernel_decl: {n} mutated declarations: {clean} expanded cleanly, {} with errors", n - clean);
    assert!(clean >= n / 20 && clean < n, "the mutations lost their balance: {clean} of {n} expanded cleanly");
}
