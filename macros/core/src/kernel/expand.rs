//! The two attribute macros end to end: parse → read the `.cu` → check → generate, or report
//! every error with stubs in place of the items that could not be generated.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::parse::Parser;
use syn::Ident;

use super::config::{Config, Files, Resolved};
use super::emit;
use super::emit_registry::{self, Entry};
use super::extent_rules::check_extents;
use super::resolve::resolve;
use crate::syntax::model::KernelDecl;
use crate::syntax::naming::{handle_ident, ident_text, kernel_handle_ident};
use crate::syntax::parse::{parse_decl, DeclParse};
use crate::syntax::registry::{parse_kernels_mod, KernelsMod, ModItem};

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
    let found = resolve(&decl, &cu, config, files);
    let extent_errors = check_extents(&decl);
    match found {
        Ok(found) if extent_errors.is_empty() => {
            let stem = decl.file.strip_suffix(".cu").unwrap_or(&decl.file).to_string();
            let resolved = Resolved {
                display: found.display,
                source_path: cu.source_path.clone(),
                include_dir: cu.include_dir.clone(),
                stem,
                kernel: found.kernel,
                symbol: found.symbol,
                record_path: found.record_path,
                pdl_waits: found.pdl_waits,
            };
            Ok((decl, resolved))
        }
        Ok(_) => Err(extent_errors),
        Err(mut errors) => {
            errors.extend(extent_errors);
            Err(errors)
        }
    }
}

fn to_compile_errors(errors: &[syn::Error]) -> TokenStream {
    errors.iter().map(syn::Error::to_compile_error).collect()
}

fn stub_of(parsed: &DeclParse) -> TokenStream {
    match &parsed.name {
        Some(name) => emit::stub(&parsed.vis, name, &parsed.attrs, &parsed.params),
        None => TokenStream::new(),
    }
}

/// `#[kernel("file.cu")] fn name(...);` outside a registry: the handle, or errors and a stub.
pub fn expand_kernel(attr: TokenStream, item: TokenStream, config: &Config) -> TokenStream {
    let parsed = parse_decl(item, Some((attr, Span::call_site())));
    match verify_standalone(&parsed, config) {
        Ok((decl, resolved)) => emit::handle(&decl, &resolved),
        Err(errors) => {
            let mut out = to_compile_errors(&errors);
            out.extend(stub_of(&parsed));
            out
        }
    }
}

/// What [`expand_kernel`] reports for the same input, without generating anything: every
/// error, empty when the declaration binds (for tools that check a crate without building it).
pub fn check_kernel(attr: TokenStream, item: TokenStream, config: &Config) -> Vec<syn::Error> {
    let parsed = parse_decl(item, Some((attr, Span::call_site())));
    verify_standalone(&parsed, config).err().unwrap_or_default()
}

/// A standalone declaration verified, and the crate able to embed its cubin.
fn verify_standalone(parsed: &DeclParse, config: &Config) -> Result<(KernelDecl, Resolved), Vec<syn::Error>> {
    let (decl, resolved) = verify(parsed, config, &mut Files::default())?;
    if !config.has_out_dir {
        return Err(vec![out_dir_error(decl.file_span)]);
    }
    Ok((decl, resolved))
}

/// `#[kernels] mod m { ... }`: every declaration's handle plus the `Kernels` registry; on any
/// error, all errors and stubs for every handle and the registry.
pub fn expand_kernels(attr: TokenStream, item: TokenStream, config: &Config) -> TokenStream {
    let registry = match verify_kernels_mod(attr, item, config) {
        Ok(registry) => registry,
        Err(errors) => return to_compile_errors(&errors),
    };
    let VerifiedMod { module, taken, handles, errors } = &registry;
    let stub = !errors.is_empty();
    // Generated items take the place of their declarations, so the module reads in order.
    let mut body = to_compile_errors(errors);
    body.extend(registry_body(module, handles, taken, stub));
    let KernelsMod { attrs, vis, mod_token, ident, inner_attrs, .. } = module;
    quote! {
        #(#attrs)*
        #vis #mod_token #ident {
            #(#inner_attrs)*
            #body
        }
    }
}

/// What [`expand_kernels`] reports for the same input, without generating anything: every
/// error, empty when every declaration of the module binds.
pub fn check_kernels(attr: TokenStream, item: TokenStream, config: &Config) -> Vec<syn::Error> {
    match verify_kernels_mod(attr, item, config) {
        Ok(registry) => registry.errors,
        Err(errors) => errors,
    }
}

/// A `#[kernels]` module with every declaration checked.
struct VerifiedMod {
    module: KernelsMod,
    /// The type names the module's other items take.
    taken: Vec<(Ident, &'static str)>,
    /// The declarations that verified, in order.
    handles: Vec<(KernelDecl, Resolved)>,
    /// Every error found (empty: the module expands to handles and a registry).
    errors: Vec<syn::Error>,
}

/// Parses and checks a `#[kernels]` module; `Err` when it does not parse as one.
fn verify_kernels_mod(attr: TokenStream, item: TokenStream, config: &Config) -> Result<VerifiedMod, Vec<syn::Error>> {
    let mut errors = Vec::new();
    if let Some(tt) = attr.into_iter().next() {
        errors.push(syn::Error::new(tt.span(), "`#[kernels]` takes no arguments"));
    }
    let module = match parse_kernels_mod.parse2(item) {
        Ok(module) => module,
        Err(e) => {
            errors.push(e);
            return Err(errors);
        }
    };
    let taken = taken_type_names(&module);
    let handles = verify_registry(&module, &taken, config, &mut errors);
    Ok(VerifiedMod { module, taken, handles, errors })
}

/// Checks every declaration of the module (its handle name among the others', then against
/// its `.cu`), in order; the verified ones come back, every error goes to `errors`.
fn verify_registry(
    module: &KernelsMod,
    taken: &[(Ident, &'static str)],
    config: &Config,
    errors: &mut Vec<syn::Error>,
) -> Vec<(KernelDecl, Resolved)> {
    let mut files = Files::default();
    let mut handles = Vec::new();
    let mut seen: Vec<(String, Ident)> = Vec::new();
    let mut first_file_span = None;
    for item in &module.items {
        let ModItem::Kernel(parsed) = item else { continue };
        if let Some(name) = &parsed.name {
            errors.extend(handle_name_error(name, &seen));
            errors.extend(handle_clash_error(name, taken));
            seen.push((ident_text(name), handle_ident(name)));
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
    handles
}

/// Why kernel `name` cannot have its handle in this module, if it cannot: a handle of that
/// name is already declared (`seen`: earlier kernels' names and handles), or it would be the
/// registry's own `Kernels`.
fn handle_name_error(name: &Ident, seen: &[(String, Ident)]) -> Option<syn::Error> {
    let handle = handle_ident(name);
    if let Some((prev, _)) = seen.iter().find(|(_, h)| *h == handle) {
        let what =
            if *prev == ident_text(name) { format!("`{prev}`") } else { format!("`{prev}` (both become `{handle}`)") };
        return Some(syn::Error::new(
            name.span(),
            format!("duplicate kernel declaration: {what} is already declared in this module"),
        ));
    }
    (handle == "Kernels").then(|| {
        syn::Error::new(
            name.span(),
            "a kernel named `kernels` would clash with the registry struct `Kernels`: rename it (use `name = \"kernels\"` to keep the symbol)",
        )
    })
}

/// The names the module's other items take where handles live (the type namespace), with what
/// they are, so a clash is one error on the user's item instead of rustc's cascade.
fn taken_type_names(module: &KernelsMod) -> Vec<(Ident, &'static str)> {
    module
        .items
        .iter()
        .filter_map(|item| match item {
            ModItem::Other(tokens) => syn::parse2::<syn::Item>(tokens.clone()).ok(),
            ModItem::Kernel(_) => None,
        })
        .filter_map(|item| match item {
            syn::Item::Struct(s) => Some((s.ident, "struct")),
            syn::Item::Enum(e) => Some((e.ident, "enum")),
            syn::Item::Union(u) => Some((u.ident, "union")),
            syn::Item::Type(t) => Some((t.ident, "type alias")),
            syn::Item::Trait(t) => Some((t.ident, "trait")),
            _ => None,
        })
        .collect()
}

/// The error when kernel `name`'s handle would take a name another item of the module has.
fn handle_clash_error(name: &Ident, taken: &[(Ident, &'static str)]) -> Option<syn::Error> {
    let handle = handle_ident(name);
    let (item, what) = taken.iter().find(|(ident, _)| *ident == handle)?;
    Some(syn::Error::new(
        item.span(),
        format!(
            "this {what} `{handle}` clashes with the handle `#[kernel]` generates for kernel `{}` in this module: \
             rename one (to keep the kernel's symbol, rename the Rust `fn` and add `name = \"{}\"`)",
            ident_text(name),
            ident_text(name)
        ),
    ))
}

/// The module's items with each declaration replaced by its handle (or, with `stub`, by a stub
/// for each distinct handle name), then the `Kernels` registry.
fn registry_body(
    module: &KernelsMod,
    handles: &[(KernelDecl, Resolved)],
    taken: &[(Ident, &'static str)],
    stub: bool,
) -> TokenStream {
    let mut body = TokenStream::new();
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
            let handle = handle_ident(name);
            // A name another item has gets no stub (nor registry field): the clash is reported once.
            if stubbed.contains(&handle.to_string()) || handle == "Kernels" || taken.iter().any(|(t, _)| *t == handle) {
                continue;
            }
            stubbed.push(handle.to_string());
            body.extend(stub_of(parsed));
            let doc = format!("`{}` (its declaration has errors)", ident_text(name));
            entries.push(Entry { field: name.clone(), handle, attrs: &parsed.attrs, vis: &parsed.vis, doc });
        } else if let Some((decl, resolved)) = verified.next() {
            body.extend(emit::handle(decl, resolved));
            entries.push(Entry {
                field: decl.name.clone(),
                handle: kernel_handle_ident(decl),
                attrs: &decl.attrs,
                vis: &decl.vis,
                doc: format!("`{}` ({}:{})", decl.symbol, resolved.display, resolved.kernel.line),
            });
        }
    }
    body.extend(emit_registry::registry(&entries, stub));
    body
}
