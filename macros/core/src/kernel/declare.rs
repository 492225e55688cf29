//! The `#[kernel]` declaration to write for each kernel of a `.cu` file (`kgraph declare`): the
//! parameter types the check would ask for (`check`'s rules), then the declaration
//! checked exactly as the macro checks it, so what is suggested is known to bind.
//!
//! Extents cannot be read from a `.cu` (they are the kernel author's promise), so the
//! declarations have none: they compile, and their `launch` is an `unsafe fn` until the author
//! adds the extents and `unsafe(extents)`.

use proc_macro2::TokenStream;

use super::c_types::unverifiable_reason;
use super::check::{expected_kind, rust_elem_for};
use super::config::{Config, Files};
use super::expand::check_kernel;
use crate::cuda::signature::{find_kernel, kernel_names, CuBase, CuError, CuKernel, CuParam};
use crate::syntax::model::{Elem, ParamKind};
use crate::syntax::parse::RESERVED_PARAMS;

/// One kernel of a `.cu` file, with the declaration that binds it or why there is none.
#[derive(Debug, Clone)]
pub struct Suggestion {
    /// The kernel's `extern "C"` name.
    pub kernel: String,
    /// The line of its name in the `.cu` (1-based).
    pub line: usize,
    /// The declaration, `#[kernel("x.cu")] pub fn name(...);`, checked to bind; or why kgraph
    /// cannot bind the kernel (the check's message).
    pub declaration: Result<Declaration, String>,
}

/// A declaration that binds, and what its author may add.
#[derive(Debug, Clone)]
pub struct Declaration {
    /// The whole declaration on one line.
    pub text: String,
    /// The C structs (`Params (kernels/x.cu:3, 16 bytes, align 8)`) the declaration passes by
    /// their Rust twin's name: it compiles once each has its `#[derive(kgraph::DeviceStruct)]`
    /// `#[repr(C)]` twin in scope. Empty: it compiles as it is.
    pub needs_twins: Vec<String>,
    /// One pointer parameter with an extent written in (`x: &[f32; n]`), to show the form the
    /// declaration takes with `unsafe(extents)`; `None` when the kernel takes no pointer.
    pub extent_example: Option<String>,
}

/// Every `extern "C" __global__` kernel of `file` (found as `#[kernel("file")]` finds it, in
/// `config`'s kernel folders), in file order, each with its declaration; `Err` when the file
/// cannot be read.
pub fn suggest_declarations(file: &str, config: &Config) -> Result<Vec<Suggestion>, String> {
    let cu = Files::default().get(file, config)?;
    let mut names = kernel_names(&cu.text);
    // A prototype and its definition name the kernel twice.
    let mut seen = std::collections::HashSet::new();
    names.retain(|name| seen.insert(name.clone()));
    let suggestions = names
        .into_iter()
        .map(|name| match find_kernel(&cu.text, &name) {
            Ok(kernel) => Suggestion {
                kernel: name,
                line: kernel.line,
                declaration: declaration(file, &cu.display, &kernel, config),
            },
            Err(e) => Suggestion { kernel: name, line: error_line(&e), declaration: Err(unreadable(&e, &cu.display)) },
        })
        .collect();
    Ok(suggestions)
}

/// The declaration of `kernel` (of `file`, shown as `display`), checked by the macro's rules.
fn declaration(file: &str, display: &str, kernel: &CuKernel, config: &Config) -> Result<Declaration, String> {
    let mut params = Vec::new();
    let mut needs_twins = Vec::new();
    for (index, cu) in kernel.params.iter().enumerate() {
        let name = param_name(cu, index);
        // A C struct is declared by its twin's name, which the check takes on trust (the
        // layout is checked when the crate compiles, against the twin itself).
        let declared = match &cu.ty.base {
            CuBase::Struct(s) => {
                needs_twins.push(format!("{} ({display}:{}, {} bytes, align {})", s.name, s.line, s.size, s.align));
                Elem::Struct(Box::leak(s.name.clone().into_boxed_str()))
            }
            _ => Elem::F32,
        };
        let elem = rust_elem_for(cu, declared, display).map_err(|why| {
            let sep = if why.starts_with("which") { ", " } else { ": " };
            format!("parameter {} `{cu}` ({display}:{}){sep}{why}", index + 1, cu.line)
        })?;
        params.push((name, expected_kind(cu, elem, false)));
    }
    let (fn_name, rename) = match rust_ident(&kernel.name) {
        name if name == kernel.name => (name, String::new()),
        name => (name, format!(", name = \"{}\"", kernel.name)),
    };
    let list: Vec<String> = params.iter().map(|(name, kind)| format!("{name}: {}", rust_type(*kind))).collect();
    let file_lit = format!("{file:?}");
    let text = format!("#[kernel({file_lit}{rename})] pub fn {fn_name}({});", list.join(", "));
    check(&format!("{file_lit}{rename}"), &format!("pub fn {fn_name}({});", list.join(", ")), config)?;
    Ok(Declaration { text, needs_twins, extent_example: extent_example(&params) })
}

fn error_line(e: &CuError) -> usize {
    match e {
        CuError::NotExternC { line, .. } | CuError::Unverifiable { line, .. } => *line,
        CuError::Ambiguous { lines, .. } => lines.first().copied().unwrap_or(0),
        CuError::NotFound { .. } => 0,
    }
}

/// Why a kernel named in the file has no readable signature.
fn unreadable(e: &CuError, display: &str) -> String {
    match e {
        CuError::Unverifiable { param, token, line, .. } => {
            format!("cannot read parameter {} ({display}:{line}): {}", param + 1, unverifiable_reason(token))
        }
        CuError::Ambiguous { lines, .. } => format!("several kernels of this name (lines {lines:?})"),
        CuError::NotExternC { .. } => "it is not `extern \"C\"`".to_string(),
        CuError::NotFound { .. } => "its signature was not found".to_string(),
    }
}

/// Runs the macro's check on `#[kernel(<attr>)] <item>`: `Err` holds its messages.
fn check(attr: &str, item: &str, config: &Config) -> Result<(), String> {
    let parse =
        |text: &str| text.parse::<TokenStream>().map_err(|e| format!("kgraph wrote invalid Rust `{text}`: {e}"));
    let Err(errors) = check_kernel(parse(attr)?, parse(item)?, config) else { return Ok(()) };
    let messages: Vec<String> = errors.into_iter().map(|e| e.message).collect();
    Err(messages.join("; "))
}

/// The parameter's Rust name: its C name (raw, `r#type`, where it is a Rust keyword; `cfg_`
/// where the generated `launch` takes the name, which still matches the `.cu`'s, names being
/// compared without underscores), or `arg<n>` for an unnamed parameter.
fn param_name(cu: &CuParam, index: usize) -> String {
    match cu.name.as_deref() {
        Some(name) if RESERVED_PARAMS.contains(&name) => format!("{name}_"),
        Some(name) if name != "_" => rust_ident(name),
        _ => format!("arg{index}"),
    }
}

/// `name` as a Rust identifier: itself, raw for a keyword (`r#type`), or with a trailing `_`
/// for the keywords that cannot be raw (`self`, `crate`, `super`, `Self`).
fn rust_ident(name: &str) -> String {
    if syn::parse_str::<syn::Ident>(name).is_ok() {
        return name.to_string();
    }
    match name {
        "self" | "Self" | "super" | "crate" => format!("{name}_"),
        _ => format!("r#{name}"),
    }
}

/// The Rust spelling of a parameter kind, with the types kgraph defines named by their path
/// (`&[kgraph::f16]`) so the declaration compiles without a `use`.
fn rust_type(kind: ParamKind) -> String {
    let elem = match kind.elem() {
        e @ (Elem::F16 | Elem::Bf16 | Elem::Vector(_)) => format!("kgraph::{e}"),
        e => e.to_string(),
    };
    match kind {
        ParamKind::Slice { mutable: false, .. } => format!("&[{elem}]"),
        ParamKind::Slice { mutable: true, .. } => format!("&mut [{elem}]"),
        ParamKind::Pinned(_) => format!("Pinned<{elem}>"),
        ParamKind::PinnedMut(_) => format!("PinnedMut<{elem}>"),
        ParamKind::Scalar(_) => elem,
    }
}

/// The first pointer parameter written with an extent: over the first integer scalar
/// parameter (`x: &[f32; n]`), else a literal.
fn extent_example(params: &[(String, ParamKind)]) -> Option<String> {
    let (name, kind) = params.iter().find(|(_, kind)| kind.is_pointer())?;
    let len = params.iter().find(|(_, kind)| kind.is_integer_scalar()).map_or("1024", |(n, _)| n.as_str());
    let typed = rust_type(*kind);
    let (open, elem) = typed.split_once('[').unwrap_or(("&[", &typed));
    Some(format!("{name}: {open}[{}; {len}]", elem.trim_end_matches(']')))
}
