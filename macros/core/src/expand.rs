//! The two attribute macros end to end: parse → read the `.cu` → check → generate, or report
//! every error with stubs in place of the items that could not be generated.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{quote, ToTokens};
use syn::parse::{ParseStream, Parser};
use syn::{Attribute, Ident, Token, Visibility};

use crate::check::check_decl;
use crate::codegen::{self, Entry, Resolved};
use crate::cu_sig::find_kernel;
use crate::model::KernelDecl;
use crate::parse::{ident_text, is_kernel_attr, kernel_handle_ident, parse_decl, upper_camel, DeclParse};

/// Where the macros find kernel files, and whether generated code can embed cubins.
#[derive(Debug, Clone)]
pub struct Config {
    /// The folders `#[kernel("x.cu")]` files are looked up in, in order.
    pub kernel_dirs: Vec<PathBuf>,
    /// The crate root: paths inside it are shown relative to it.
    pub manifest_dir: PathBuf,
    /// Whether `OUT_DIR` is set (the crate has a build script that compiles the kernels).
    pub has_out_dir: bool,
}

impl Config {
    /// From the compiler's environment: `$KGRAPH_KERNEL_DIR` (if set) and then
    /// `$CARGO_MANIFEST_DIR/kernels`; `OUT_DIR` as cargo sets it for crates with a build script.
    ///
    /// `$KGRAPH_KERNEL_DIR` is searched first rather than instead, because the variable reaches
    /// every crate of a build: kgraph's own kernels must still be found while compile-fail
    /// fixtures elsewhere are being compiled.
    pub fn from_env() -> Config {
        let manifest_dir =
            std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
        let mut kernel_dirs = Vec::new();
        if let Some(dir) = std::env::var_os("KGRAPH_KERNEL_DIR").filter(|d| !d.is_empty()) {
            kernel_dirs.push(manifest_dir.join(dir));
        }
        kernel_dirs.push(manifest_dir.join("kernels"));
        Config { kernel_dirs, manifest_dir, has_out_dir: std::env::var_os("OUT_DIR").is_some() }
    }

    /// Kernels in `kernel_dir`, paths shown relative to `manifest_dir`, `OUT_DIR` assumed set.
    pub fn new(kernel_dir: impl Into<PathBuf>, manifest_dir: impl Into<PathBuf>) -> Config {
        Config { kernel_dirs: vec![kernel_dir.into()], manifest_dir: manifest_dir.into(), has_out_dir: true }
    }

    /// `path` relative to the crate root when inside it, else as is.
    fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.manifest_dir) {
            Ok(rel) => rel.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }
}

/// A `.cu` file as read once per expansion.
struct CuFile {
    display: String,
    source_path: String,
    include_dir: String,
    text: String,
}

/// Reads each `.cu` once per macro expansion (a registry often has several kernels per file).
#[derive(Default)]
struct Files {
    read: HashMap<String, Result<std::rc::Rc<CuFile>, String>>,
}

impl Files {
    fn get(&mut self, file: &str, config: &Config) -> Result<std::rc::Rc<CuFile>, String> {
        self.read.entry(file.to_string()).or_insert_with(|| read_cu(file, config).map(std::rc::Rc::new)).clone()
    }
}

fn path_text(path: &Path) -> Result<String, String> {
    path.to_str().map(str::to_string).ok_or_else(|| format!("kernel path {} is not UTF-8", path.display()))
}

fn read_cu(file: &str, config: &Config) -> Result<CuFile, String> {
    let mut looked = Vec::new();
    for dir in &config.kernel_dirs {
        let path = dir.join(file);
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                return Ok(CuFile {
                    display: config.display(&path),
                    source_path: path_text(&path)?,
                    include_dir: path_text(dir)?,
                    text,
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => looked.push(config.display(&path)),
            Err(e) => return Err(format!("cannot read kernel file {}: {e}", config.display(&path))),
        }
    }
    Err(format!(
        "kernel file `{file}` not found (looked for {}): kernel files live in the crate's `kernels/` folder",
        looked.join(", ")
    ))
}

fn out_dir_error(span: Span) -> syn::Error {
    syn::Error::new(
        span,
        "OUT_DIR is not set, so the compiled kernel cannot be embedded: add a build.rs to this crate containing \
         `fn main() { kgraph_build::compile_kernels(); }`, with `kgraph-build` under [build-dependencies]",
    )
}

/// Verifies one parsed declaration: the complete declaration and where its kernel is, or
/// every error found.
fn verify(parsed: &DeclParse, config: &Config, files: &mut Files) -> Result<(KernelDecl, Resolved), Vec<syn::Error>> {
    let Some(decl) = parsed.to_decl() else {
        return Err(parsed.errors.clone());
    };
    let cu = files.get(&decl.file, config).map_err(|msg| vec![syn::Error::new(decl.file_span, msg)])?;
    let found = find_kernel(&cu.text, &decl.symbol);
    let errors = check_decl(&decl, &cu.display, &found);
    match found {
        Ok(kernel) if errors.is_empty() => {
            let stem = decl.file.strip_suffix(".cu").unwrap_or(&decl.file).to_string();
            let resolved = Resolved {
                display: cu.display.clone(),
                source_path: cu.source_path.clone(),
                include_dir: cu.include_dir.clone(),
                stem,
                kernel,
            };
            Ok((decl, resolved))
        }
        // `check_decl` reports at least one error whenever the kernel was not found.
        _ => Err(errors),
    }
}

fn to_compile_errors(errors: &[syn::Error]) -> TokenStream {
    errors.iter().map(syn::Error::to_compile_error).collect()
}

fn stub_of(parsed: &DeclParse) -> TokenStream {
    match &parsed.name {
        Some(name) => codegen::stub(&parsed.vis, name, &parsed.attrs, &parsed.params),
        None => TokenStream::new(),
    }
}

/// `#[kernel("file.cu")] fn name(...);` outside a registry: the handle, or errors and a stub.
pub fn expand_kernel(attr: TokenStream, item: TokenStream, config: &Config) -> TokenStream {
    let parsed = parse_decl(item, Some((attr, Span::call_site())));
    let mut files = Files::default();
    match verify(&parsed, config, &mut files) {
        Ok((decl, _)) if !config.has_out_dir => {
            let mut out = out_dir_error(decl.file_span).to_compile_error();
            out.extend(stub_of(&parsed));
            out
        }
        Ok((decl, resolved)) => codegen::handle(&decl, &resolved),
        Err(errors) => {
            let mut out = to_compile_errors(&errors);
            out.extend(stub_of(&parsed));
            out
        }
    }
}

/// An item of a `#[kernels]` module: a kernel declaration, or anything else (kept as is).
enum ModItem {
    Kernel(Box<DeclParse>),
    Other(TokenStream),
}

struct KernelsMod {
    attrs: Vec<Attribute>,
    vis: Visibility,
    mod_token: Token![mod],
    ident: Ident,
    inner_attrs: Vec<Attribute>,
    items: Vec<ModItem>,
}

/// The tokens of one kernel declaration: through its `;`, or through a body `{ ... }`.
fn take_decl_tokens(input: ParseStream) -> syn::Result<TokenStream> {
    input.step(|cursor| {
        let mut tokens = TokenStream::new();
        let mut rest = *cursor;
        while let Some((tt, next)) = rest.token_tree() {
            rest = next;
            let end = match &tt {
                TokenTree::Punct(p) => p.as_char() == ';',
                TokenTree::Group(g) => g.delimiter() == proc_macro2::Delimiter::Brace,
                _ => false,
            };
            tokens.extend([tt]);
            if end {
                break;
            }
        }
        Ok((tokens, rest))
    })
}

fn parse_kernels_mod(input: ParseStream) -> syn::Result<KernelsMod> {
    let attrs = input.call(Attribute::parse_outer)?;
    let vis: Visibility = input.parse()?;
    if !input.peek(Token![mod]) {
        return Err(input.error("`#[kernels]` goes on an inline module: `#[kgraph::kernels] mod my_kernels { ... }`"));
    }
    let mod_token: Token![mod] = input.parse()?;
    let ident: Ident = input.parse()?;
    if input.peek(Token![;]) {
        return Err(syn::Error::new(
            ident.span(),
            "`#[kernels]` needs the module inline, `mod name { ... }`, to see its `#[kernel]` declarations",
        ));
    }
    let content;
    syn::braced!(content in input);
    let inner_attrs = content.call(Attribute::parse_inner)?;
    let mut items = Vec::new();
    while !content.is_empty() {
        let ahead = content.fork();
        let is_kernel = ahead.call(Attribute::parse_outer)?.iter().any(is_kernel_attr);
        if is_kernel {
            items.push(ModItem::Kernel(Box::new(parse_decl(take_decl_tokens(&content)?, None))));
        } else {
            let item: syn::Item = content.parse()?;
            items.push(ModItem::Other(item.into_token_stream()));
        }
    }
    Ok(KernelsMod { attrs, vis, mod_token, ident, inner_attrs, items })
}

/// `#[kernels] mod m { ... }`: every declaration's handle plus the `Kernels` registry; on any
/// error, all errors and stubs for every handle and the registry.
pub fn expand_kernels(attr: TokenStream, item: TokenStream, config: &Config) -> TokenStream {
    let mut errors = Vec::new();
    if let Some(tt) = attr.into_iter().next() {
        errors.push(syn::Error::new(tt.span(), "`#[kernels]` takes no arguments"));
    }
    let module = match parse_kernels_mod.parse2(item) {
        Ok(module) => module,
        Err(e) => {
            errors.push(e);
            return to_compile_errors(&errors);
        }
    };
    let mut files = Files::default();
    let mut handles = Vec::new();
    let mut seen: Vec<(String, Ident)> = Vec::new();
    let mut first_file_span = None;
    for item in &module.items {
        let ModItem::Kernel(parsed) = item else { continue };
        if let Some(name) = &parsed.name {
            let handle = Ident::new(&upper_camel(&ident_text(name)), name.span());
            if let Some((prev, _)) = seen.iter().find(|(_, h)| *h == handle) {
                let what = if *prev == ident_text(name) {
                    format!("`{prev}`")
                } else {
                    format!("`{prev}` (both become `{handle}`)")
                };
                errors.push(syn::Error::new(
                    name.span(),
                    format!("duplicate kernel declaration: {what} is already declared in this module"),
                ));
            } else if handle == "Kernels" {
                errors.push(syn::Error::new(name.span(), "a kernel named `kernels` would clash with the registry struct `Kernels`: rename it (use `name = \"kernels\"` to keep the symbol)"));
            }
            seen.push((ident_text(name), handle));
        }
        match verify(parsed, config, &mut files) {
            Ok((decl, resolved)) => {
                first_file_span.get_or_insert(decl.file_span);
                handles.push((decl, resolved));
            }
            Err(errs) => errors.extend(errs),
        }
    }
    if errors.is_empty() && !config.has_out_dir {
        errors.push(out_dir_error(first_file_span.unwrap_or_else(|| module.ident.span())));
    }
    let stub = !errors.is_empty();
    // Generated items take the place of their declarations, so the module reads in order.
    let mut body = to_compile_errors(&errors);
    let mut entries = Vec::new();
    let mut verified = handles.iter();
    let mut stubbed: Vec<String> = Vec::new();
    for item in &module.items {
        let parsed = match item {
            ModItem::Other(tokens) => {
                body.extend(tokens.clone());
                continue;
            }
            ModItem::Kernel(parsed) => parsed,
        };
        if stub {
            let Some(name) = &parsed.name else { continue };
            let handle = Ident::new(&upper_camel(&ident_text(name)), name.span());
            if stubbed.contains(&handle.to_string()) || handle == "Kernels" {
                continue;
            }
            stubbed.push(handle.to_string());
            body.extend(stub_of(parsed));
            let doc = format!("`{}` (its declaration has errors)", ident_text(name));
            entries.push(Entry { field: name.clone(), handle, attrs: &parsed.attrs, vis: &parsed.vis, doc });
        } else if let Some((decl, resolved)) = verified.next() {
            body.extend(codegen::handle(decl, resolved));
            entries.push(Entry {
                field: decl.name.clone(),
                handle: kernel_handle_ident(decl),
                attrs: &decl.attrs,
                vis: &decl.vis,
                doc: format!("`{}` ({}:{})", decl.symbol, resolved.display, resolved.kernel.line),
            });
        }
    }
    body.extend(codegen::registry(&entries, stub));
    let KernelsMod { attrs, vis, mod_token, ident, inner_attrs, .. } = &module;
    quote! {
        #(#attrs)*
        #vis #mod_token #ident {
            #(#inner_attrs)*
            #body
        }
    }
}
