//! One kernel's `#[kernel]` declaration as `kgraph declare` prints it: the parameter types the
//! check asks for, the names, the hints above the line, and the macro's own check of the
//! result, shared by the `.cu`-text path (`declare.rs`) and the record path
//! (`declare_record.rs`).

use proc_macro2::TokenStream;

use super::c_types::unverifiable_reason;
use super::check::{expected_kind, rust_elem_for};
use super::config::Config;
use super::expand::check_kernel;
use crate::cuda::signature::{CuBase, CuError, CuKernel, CuParam};
use crate::syntax::model::{Elem, ParamKind};
use crate::syntax::parse::RESERVED_PARAMS;

/// One kernel of a `.cu` file, with the declaration that binds it or why there is none.
#[derive(Debug, Clone)]
pub struct Suggestion {
    /// The kernel's `extern "C"` name, or its C++ name (`gemm<float, 128>`).
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
    /// What the declaration's `#[kernel(...)]` holds: `"x.cu"`, or `"x.cu", name = "gemm<float,
    /// 128>"` (the attribute to extend with `unsafe(extents)`).
    pub attribute: String,
    /// The C structs (`Params (kernels/x.cu:3, 16 bytes, align 8)`) the declaration passes by
    /// their Rust twin's name: it compiles once each has its `#[derive(kgraph::DeviceStruct)]`
    /// `#[repr(C)]` twin in scope. Empty: it compiles as it is.
    pub needs_twins: Vec<String>,
    /// One pointer parameter with an extent written in (`x: &[f32; n]`), to show the form the
    /// declaration takes with `unsafe(extents)`; `None` when the kernel takes no pointer.
    pub extent_example: Option<String>,
    /// The read-only integer arrays among several pointers (`row_ptr`, `index`): a heuristic
    /// for indexing that depends on data (CSR row pointers, gathers), where no extent over the
    /// scalars holds for every content of the array unless the kernel checks each index.
    pub index_arrays: Vec<String>,
    /// The kernel has internal linkage (`static`, an anonymous namespace): it is loaded by the
    /// symbol this build's record holds, shown here.
    pub internal_symbol: Option<String>,
}

/// How a declaration names its kernel: the Rust function, and the attribute's `name = "..."`
/// where the kernel's name is not that identifier.
pub(super) struct Naming {
    pub fn_name: String,
    pub name_attr: Option<String>,
    /// The symbol of a kernel with internal linkage.
    pub internal_symbol: Option<String>,
}

impl Naming {
    pub(super) fn extern_c(name: &str) -> Naming {
        let fn_name = rust_ident(name);
        let name_attr = (fn_name != name).then(|| name.to_string());
        Naming { fn_name, name_attr, internal_symbol: None }
    }
}

/// The declaration of `kernel` (of `file`, shown as `display`), checked by the macro's rules.
pub(super) fn declaration(
    file: &str,
    display: &str,
    kernel: &CuKernel,
    naming: &Naming,
    config: &Config,
) -> Result<Declaration, String> {
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
    let fn_name = &naming.fn_name;
    let rename = naming.name_attr.as_ref().map_or_else(String::new, |n| format!(", name = {n:?}"));
    let list: Vec<String> = params.iter().map(|(name, kind)| format!("{name}: {}", rust_type(*kind))).collect();
    let file_lit = format!("{file:?}");
    let text = format!("#[kernel({file_lit}{rename})] pub fn {fn_name}({});", list.join(", "));
    check(&format!("{file_lit}{rename}"), &format!("pub fn {fn_name}({});", list.join(", ")), config)?;
    Ok(Declaration {
        text,
        attribute: format!("{file_lit}{rename}"),
        needs_twins,
        extent_example: extent_example(&params),
        index_arrays: index_arrays(kernel),
        internal_symbol: naming.internal_symbol.clone(),
    })
}

/// The heuristic of [`Declaration::index_arrays`]: read-only (`const`) pointers to integers,
/// when the kernel takes another pointer they could index. It reads the signature only, so it
/// flags an integer input that is plain data too, and misses indices passed in a float array
/// or a struct; it only adds a comment, never a safe declaration.
fn index_arrays(kernel: &CuKernel) -> Vec<String> {
    let pointers = kernel.params.iter().filter(|p| p.ty.pointers > 0).count();
    if pointers < 2 {
        return Vec::new();
    }
    kernel
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| p.ty.pointers == 1 && p.ty.is_const)
        .filter(|(_, p)| matches!(p.ty.base, CuBase::Elem(e) if e.is_integer() && e != Elem::Bool))
        .map(|(k, p)| param_name(p, k))
        .collect()
}

pub(super) fn error_line(e: &CuError) -> usize {
    match e {
        CuError::NotExternC { line, .. } | CuError::Unverifiable { line, .. } => *line,
        CuError::Ambiguous { lines, .. } => lines.first().copied().unwrap_or(0),
        CuError::NotFound { .. } => 0,
    }
}

/// Why a kernel named in the file has no readable signature.
pub(super) fn unreadable(e: &CuError, display: &str) -> String {
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
pub(super) fn rust_ident(name: &str) -> String {
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
