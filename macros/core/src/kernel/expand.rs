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
use super::requires_rules::check_requirements;
use super::resolve::resolve;
use crate::diagnostics::{Ctxt, Errors};
use crate::syntax::model::KernelDecl;
use crate::syntax::naming::{handle_ident, ident_text, kernel_handle_ident};
use crate::syntax::parse::{parse_decl, DeclParse};
use crate::syntax::registry::{parse_kernels_mod, KernelsMod, ModItem};

const OUT_DIR_MISSING: &str = "OUT_DIR is not set, so the compiled kernel cannot be embedded: add a build.rs to this \
     crate containing `fn main() { kgraph_build::compile_kernels(); }`, with `kgraph-build` under [build-dependencies]";

/// Verifies one parsed declaration: the complete declaration and where its kernel is, or
/// `None` with every error found pushed to `cx`.
fn verify(parsed: &DeclParse, config: &Config, files: &mut Files, cx: &mut Ctxt) -> Option<(KernelDecl, Resolved)> {
    let Some(decl) = parsed.to_decl() else {
        cx.extend(parsed.errors.clone());
        return None;
    };
    let cu = match files.get(&decl.file, config) {
        Ok(cu) => cu,
        Err(msg) => {
            // One unreadable file is one error, however many declarations name it.
            if files.first_failure(&decl.file) {
                cx.push(decl.file_span, msg);
            }
            return None;
        }
    };
    // The extent rules need the declaration only: they report alongside the kernel's checks.
    let found = resolve(&decl, &cu, config, files, cx);
    let extents = check_extents(&decl, cx);
    let requirements = check_requirements(&decl, cx);
    match (found, extents, requirements) {
        (Ok(found), Ok(()), Ok(())) => {
            let stem = decl.file.strip_suffix(".cu").unwrap_or(&decl.file).to_string();
            let resolved = Resolved {
                display: found.display,
                source_path: cu.source_path.clone(),
                source_literal: (!cu.utf8).then(|| cu.text.clone()),
                include_dir: cu.include_dir.clone(),
                stem,
                kernel: found.kernel,
                symbol: found.symbol,
                record_path: found.record_path,
                pdl_waits: found.pdl_waits,
            };
            Some((decl, resolved))
        }
        _ => None,
    }
}

/// `#[kernel("file.cu")] fn name(...);` outside a registry: the handle, or errors and a stub.
pub fn expand_kernel(attr: TokenStream, item: TokenStream, config: &Config) -> TokenStream {
    let parsed = parse_decl(item, Some((attr, Span::call_site())));
    let mut cx = Ctxt::new();
    let verified = verify_standalone(&parsed, config, &mut cx);
    match (verified, cx.check()) {
        (Some((decl, resolved)), Ok(())) => emit::handle(&decl, &resolved),
        (_, checked) => {
            let mut out = checked.err().unwrap_or_default().to_compile_error(Span::call_site());
            out.extend(emit::stub(&parsed));
            out
        }
    }
}

/// What [`expand_kernel`] reports for the same input, without generating anything: every
/// error, empty when the declaration binds (for tools that check a crate without building it).
pub fn check_kernel(attr: TokenStream, item: TokenStream, config: &Config) -> Result<(), Errors> {
    let parsed = parse_decl(item, Some((attr, Span::call_site())));
    let mut cx = Ctxt::new();
    verify_standalone(&parsed, config, &mut cx);
    cx.check()
}

/// A standalone declaration verified, and the crate able to embed its cubin.
fn verify_standalone(parsed: &DeclParse, config: &Config, cx: &mut Ctxt) -> Option<(KernelDecl, Resolved)> {
    let (decl, resolved) = verify(parsed, config, &mut Files::default(), cx)?;
    if !config.has_out_dir {
        cx.push(decl.file_span, OUT_DIR_MISSING);
        return None;
    }
    Some((decl, resolved))
}

/// `#[kernels] mod m { ... }`: every declaration's handle plus the `Kernels` registry; a
/// declaration with errors gets a stub in place of its handle (the others keep theirs), and the
/// registry then cannot load.
pub fn expand_kernels(attr: TokenStream, item: TokenStream, config: &Config) -> TokenStream {
    let mut cx = Ctxt::new();
    let registry = verify_kernels_mod(attr, item, config, &mut cx);
    let errors = cx.check().err().unwrap_or_default().to_compile_error(Span::call_site());
    let Some(registry) = registry else { return errors };
    let VerifiedMod { module, outcomes } = &registry;
    // Generated items take the place of their declarations, so the module reads in order.
    let mut body = errors;
    body.extend(registry_body(module, outcomes));
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
pub fn check_kernels(attr: TokenStream, item: TokenStream, config: &Config) -> Result<(), Errors> {
    let mut cx = Ctxt::new();
    verify_kernels_mod(attr, item, config, &mut cx);
    cx.check()
}

/// A `#[kernels]` module with every declaration checked.
struct VerifiedMod {
    module: KernelsMod,
    /// What each declaration of the module becomes, in order.
    outcomes: Vec<Outcome>,
}

/// What one declaration of a `#[kernels]` module becomes.
enum Outcome {
    /// It verified: its handle.
    Handle(Box<(KernelDecl, Resolved)>),
    /// It has errors: a stub with every item of a handle, so code using it adds no errors.
    Stub,
    /// Nothing: its handle's name is taken (by another item, an earlier declaration, the
    /// registry) or it has no name; the clash is its one error.
    Nothing,
}

/// Parses and checks a `#[kernels]` module, every error going to `cx`; `None` when it does not
/// parse as one.
fn verify_kernels_mod(attr: TokenStream, item: TokenStream, config: &Config, cx: &mut Ctxt) -> Option<VerifiedMod> {
    if let Some(tt) = attr.into_iter().next() {
        cx.push(tt.span(), "`#[kernels]` takes no arguments");
    }
    let module = match parse_kernels_mod.parse2(item) {
        Ok(module) => module,
        Err(e) => {
            cx.push_syn(e);
            return None;
        }
    };
    let taken = taken_type_names(&module);
    check_registry_clash(&taken, cx);
    let outcomes = verify_registry(&module, &taken, config, cx);
    Some(VerifiedMod { module, outcomes })
}

/// Checks every declaration of the module (its handle name among the others', then against
/// its `.cu`), in order: what each becomes, every error going to `cx`.
fn verify_registry(
    module: &KernelsMod,
    taken: &[(Ident, &'static str)],
    config: &Config,
    cx: &mut Ctxt,
) -> Vec<Outcome> {
    let mut files = Files::default();
    let mut outcomes = Vec::new();
    let mut seen: Vec<(String, Ident)> = Vec::new();
    let mut first_file_span = None;
    for item in &module.items {
        let ModItem::Kernel(parsed) = item else { continue };
        let mut name_free = false;
        if let Some(name) = &parsed.name {
            let before = cx.len();
            check_handle_name(name, &seen, cx);
            check_handle_clash(name, taken, cx);
            name_free = cx.len() == before;
            seen.push((ident_text(name), handle_ident(name)));
        }
        let outcome = match verify(parsed, config, &mut files, cx) {
            Some((decl, resolved)) => {
                first_file_span.get_or_insert(decl.file_span);
                Outcome::Handle(Box::new((decl, resolved)))
            }
            None => Outcome::Stub,
        };
        outcomes.push(if name_free { outcome } else { Outcome::Nothing });
    }
    if !config.has_out_dir && outcomes.iter().any(|o| matches!(o, Outcome::Handle(_))) {
        // The handles embed `$OUT_DIR/kgraph/<stem>.cubin`: without it, stubs.
        cx.push(first_file_span.unwrap_or_else(|| module.ident.span()), OUT_DIR_MISSING);
        for outcome in &mut outcomes {
            if matches!(outcome, Outcome::Handle(_)) {
                *outcome = Outcome::Stub;
            }
        }
    }
    outcomes
}

/// Rule: kernel `name` can have its handle in this module: no handle of that name is already
/// declared (`seen`: earlier kernels' names and handles), and it is not the registry's own
/// `Kernels`.
fn check_handle_name(name: &Ident, seen: &[(String, Ident)], cx: &mut Ctxt) {
    let handle = handle_ident(name);
    if let Some((prev, _)) = seen.iter().find(|(_, h)| *h == handle) {
        let what =
            if *prev == ident_text(name) { format!("`{prev}`") } else { format!("`{prev}` (both become `{handle}`)") };
        cx.push(name.span(), format!("duplicate kernel declaration: {what} is already declared in this module"));
    } else if handle == "Kernels" {
        cx.push(
            name.span(),
            "a kernel named `kernels` would clash with the registry struct `Kernels`: rename it (use `name = \"kernels\"` to keep the symbol)",
        );
    }
}

/// The names the module's other items take where handles, their hidden modules and the
/// registry live (the type namespace), with what they are, so a clash is one error on the
/// user's item instead of rustc's E0428/E0255 about generated names.
fn taken_type_names(module: &KernelsMod) -> Vec<(Ident, &'static str)> {
    let mut taken = Vec::new();
    let items = module.items.iter().filter_map(|item| match item {
        ModItem::Other(tokens) => syn::parse2::<syn::Item>(tokens.clone()).ok(),
        ModItem::Kernel(_) => None,
    });
    for item in items {
        match item {
            syn::Item::Struct(s) => taken.push((s.ident, "struct")),
            syn::Item::Enum(e) => taken.push((e.ident, "enum")),
            syn::Item::Union(u) => taken.push((u.ident, "union")),
            syn::Item::Type(t) => taken.push((t.ident, "type alias")),
            syn::Item::Trait(t) => taken.push((t.ident, "trait")),
            syn::Item::Mod(m) => taken.push((m.ident, "module")),
            syn::Item::ExternCrate(c) => taken.push((c.rename.map_or(c.ident, |(_, r)| r), "crate")),
            syn::Item::Use(u) => imported_names(&u.tree, &mut taken),
            _ => {}
        }
    }
    taken
}

/// The names a `use` tree brings into the module (a glob brings none kgraph can see; an
/// explicit item shadows a glob's anyway).
fn imported_names(tree: &syn::UseTree, taken: &mut Vec<(Ident, &'static str)>) {
    match tree {
        syn::UseTree::Path(p) => imported_names(&p.tree, taken),
        syn::UseTree::Name(n) if n.ident != "self" => taken.push((n.ident.clone(), "import")),
        syn::UseTree::Rename(r) => taken.push((r.rename.clone(), "import")),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| imported_names(t, taken)),
        _ => {}
    }
}

/// Rule: no item of the module takes the name of the registry struct `Kernels`.
fn check_registry_clash(taken: &[(Ident, &'static str)], cx: &mut Ctxt) {
    let Some((item, what)) = taken.iter().find(|(ident, _)| *ident == "Kernels") else { return };
    cx.push(
        item.span(),
        format!(
            "this {what} `Kernels` clashes with the registry struct `#[kernels]` generates in this module (it \
             loads every kernel of the module): rename it, or move it out of the module"
        ),
    );
}

/// Rule: kernel `name`'s handle (and its hidden module) takes no name another item of the
/// module has.
fn check_handle_clash(name: &Ident, taken: &[(Ident, &'static str)], cx: &mut Ctxt) {
    let handle = handle_ident(name);
    let hidden = emit::hidden_module(&handle);
    if let Some((item, what)) = taken.iter().find(|(ident, _)| *ident == hidden) {
        return cx.push(
            item.span(),
            format!(
                "this {what} `{hidden}` has the name of the module kgraph generates for the handle of kernel `{}` \
                 in this module: rename it (names starting with `__kgraph` are kgraph's)",
                ident_text(name)
            ),
        );
    }
    let Some((item, what)) = taken.iter().find(|(ident, _)| *ident == handle) else { return };
    cx.push(
        item.span(),
        format!(
            "this {what} `{handle}` clashes with the handle `#[kernel]` generates for kernel `{}` in this module: \
             rename one (to keep the kernel's symbol, rename the Rust `fn` and add `name = \"{}\"`)",
            ident_text(name),
            ident_text(name)
        ),
    );
}

/// The module's items with each declaration replaced by what it became (its handle or stub),
/// then the `Kernels` registry (which cannot load when any declaration is a stub).
fn registry_body(module: &KernelsMod, outcomes: &[Outcome]) -> TokenStream {
    let mut body = TokenStream::new();
    let mut entries = Vec::new();
    let stub = outcomes.iter().any(|o| !matches!(o, Outcome::Handle(_)));
    let mut outcomes = outcomes.iter();
    for item in &module.items {
        let parsed = match item {
            ModItem::Other(tokens) => {
                body.extend(tokens.clone());
                continue;
            }
            ModItem::Kernel(parsed) => parsed,
        };
        match (outcomes.next(), &parsed.name) {
            (Some(Outcome::Handle(verified)), _) => {
                let (decl, resolved) = verified.as_ref();
                body.extend(emit::handle(decl, resolved));
                entries.push(Entry {
                    field: decl.name.clone(),
                    handle: kernel_handle_ident(decl),
                    attrs: &decl.attrs,
                    vis: &decl.vis,
                    doc: format!("`{}` ({}:{})", decl.symbol, resolved.display, resolved.kernel.line),
                });
            }
            (Some(Outcome::Stub), Some(name)) => {
                body.extend(emit::stub(parsed));
                let doc = format!("`{}` (its declaration has errors)", ident_text(name));
                entries.push(Entry {
                    field: name.clone(),
                    handle: handle_ident(name),
                    attrs: &parsed.attrs,
                    vis: &parsed.vis,
                    doc,
                });
            }
            _ => {}
        }
    }
    // A user item named `Kernels` is reported once (`check_registry_clash`): no registry then.
    if !taken_type_names(module).iter().any(|(ident, _)| ident == "Kernels") {
        body.extend(emit_registry::registry(&entries, stub));
    }
    body
}
