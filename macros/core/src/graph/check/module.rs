//! `[kernels] module` against `[kernels] source`. The generated code names each kernel's handle
//! as `<module>::Handle`, so a wrong path would only surface as rustc errors inside that code,
//! with no position in the spec: the path is checked here, where its TOML line is known.

use super::context::Ctx;
use crate::graph::spec::{RawKernels, S};
use crate::syntax::model::KernelDecl;
use crate::syntax::naming::ident_text;
use crate::syntax::source::SourceDecl;

/// `module` parsed as a plain module path (segments without generic arguments); `None` when
/// missing or not one (reported).
pub(crate) fn module_path(cx: &mut Ctx<'_>, k: &RawKernels) -> Option<syn::Path> {
    let Some(m) = &k.module else {
        cx.diags.push(
            k.key.clone(),
            "`[kernels]` has no `module` (the Rust module path of the generated kernel handles, e.g. `crate::model`)",
        );
        return None;
    };
    let path = syn::parse_str::<syn::Path>(&m.v).ok().filter(|p| p.segments.iter().all(|s| s.arguments.is_none()));
    if path.is_none() {
        cx.diags.push(
            m.span.clone(),
            format!("`kernels.module`: `{}` is not a Rust module path (e.g. `crate::model`)", m.v),
        );
    }
    path
}

/// Where a source file's top level sits in its crate, as far as its path tells.
enum FileModule {
    /// A crate root (`lib.rs`, `main.rs`, a file directly in `src/bin`, `examples`, `tests` or
    /// `benches`): its module is `crate`.
    CrateRoot,
    /// A module file, named by its stem (`mod.rs` by its folder).
    Named(String),
}

fn file_module(source: &str) -> FileModule {
    let path = std::path::Path::new(source);
    let name = |p: Option<&std::ffi::OsStr>| p.and_then(|s| s.to_str()).unwrap_or("").to_string();
    let stem = name(path.file_stem());
    let folder = name(path.parent().and_then(|p| p.file_name()));
    let root_folders = ["bin", "examples", "tests", "benches"];
    match stem.as_str() {
        "lib" | "main" => FileModule::CrateRoot,
        _ if root_folders.contains(&folder.as_str()) => FileModule::CrateRoot,
        "mod" => FileModule::Named(folder),
        _ => FileModule::Named(stem),
    }
}

/// How a module chain inside the source reads in messages.
fn chain_text(chain: &[String]) -> String {
    if chain.is_empty() {
        "at its top level".to_string()
    } else {
        format!("in `mod {}`", chain.join("::"))
    }
}

/// The inline modules (outermost first) holding the kernels used, one chain for all of them,
/// or `None` when they differ (reported: one `module` cannot name two modules).
fn used_chain<'a>(
    cx: &mut Ctx<'_>,
    m: &S<String>,
    source: &str,
    used: &[KernelDecl],
    found: &'a [SourceDecl],
) -> Option<&'a [String]> {
    let chain_of = |d: &KernelDecl| found.iter().find(|f| f.decl.name == d.name).map(|f| f.modules.as_slice());
    let chains: Vec<(String, &[String])> =
        used.iter().filter_map(|d| Some((ident_text(&d.name), chain_of(d)?))).collect();
    let (_, first) = chains.first()?;
    if let Some((other, chain)) = chains.iter().find(|(_, c)| c != first) {
        cx.diags.push(
            m.span.clone(),
            format!(
                "`kernels.module`: the kernels used are declared in different modules of `{source}`: `{}` {}, `{other}` {}; one `module` names a single module, so declare them together",
                chains[0].0,
                chain_text(first),
                chain_text(chain)
            ),
        );
        return None;
    }
    Some(first)
}

/// The path ends in the module that holds the declarations of the kernels used: their inline
/// `mod` chain inside `source`, or, for declarations at the file's top level, the file's own
/// module (`crate` for a crate root). A relative path ending in `self` or `super` is not judged.
pub(crate) fn module_matches_source(
    cx: &mut Ctx<'_>,
    k: &RawKernels,
    path: &syn::Path,
    source: &str,
    used: &[KernelDecl],
    found: &[SourceDecl],
) {
    let Some(m) = &k.module else { return };
    let Some(chain) = used_chain(cx, m, source, used, found) else { return };
    let segments: Vec<String> = path.segments.iter().map(|s| ident_text(&s.ident)).collect();
    let last = segments.last().map_or("", String::as_str);
    let expected = if !chain.is_empty() {
        if segments.ends_with(chain) {
            return;
        }
        format!("end in `{}`", chain.join("::"))
    } else if last == "self" || last == "super" {
        return;
    } else {
        match file_module(source) {
            FileModule::CrateRoot if segments == ["crate"] => return,
            FileModule::CrateRoot => "be `crate` (the file is a crate root)".to_string(),
            FileModule::Named(name) if last == name => return,
            FileModule::Named(name) => format!("end in `{name}`, the file's own module"),
        }
    };
    cx.diags.push(
        m.span.clone(),
        format!(
            "`kernels.module`: `{}` is not where the kernels' handles are: `{source}` declares the kernels used {}, so the path should {expected}",
            m.v,
            chain_text(chain)
        ),
    );
}
