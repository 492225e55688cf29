//! Parameter names checked against the `.cu`'s. Two parameters of one type declared in each
//! other's place pass every type and size check, and the launch then feeds the kernel the wrong
//! values; the `.cu` names its parameters, so a declaration naming them otherwise is refused
//! unless it says so (`rename(param = cu_name)` in the attribute).
//!
//! Names match ignoring case and underscores, so the Rust spelling of a C name is no rename
//! (`num_tokens` for `numTokens`). A `.cu` parameter without a name (a prototype's) is not
//! checked.

use crate::cuda::signature::{CuKernel, CuParam};
use crate::syntax::model::{KernelDecl, Param, Rename};
use crate::syntax::naming::ident_text;

/// A problem with the names of one or two parameters.
pub(super) struct NameIssue {
    /// The parameters it concerns (indices), two for a swap.
    pub params: Vec<usize>,
    /// The message, without the leading parameter (the caller spans it).
    pub message: String,
    /// The `rename(...)` the message is about, when it is one (then spanned there).
    pub rename: Option<Rename>,
}

/// Whether `a` and `b` name the same thing, ignoring case and underscores.
fn same_name(a: &str, b: &str) -> bool {
    let key = |s: &str| s.chars().filter(|c| *c != '_').map(|c| c.to_ascii_lowercase()).collect::<String>();
    key(a) == key(b)
}

/// Every name problem of `decl` against `kernel` (same arity, checked before), in order:
/// swaps first (one issue per pair), then each other parameter's.
pub(super) fn check_names(decl: &KernelDecl, file: &str, kernel: &CuKernel) -> Vec<NameIssue> {
    let pairs: Vec<(&Param, &CuParam)> = decl.params.iter().zip(&kernel.params).collect();
    let mut issues: Vec<NameIssue> = pairs
        .iter()
        .enumerate()
        .filter_map(|(index, (param, cu))| rename_issue(decl, file, index, param.rename.as_ref()?, cu))
        .collect();
    // The positions whose names differ, unexplained by a rename.
    let differs: Vec<usize> = (0..pairs.len())
        .filter(|&i| {
            let (param, cu) = pairs[i];
            param.rename.is_none() && cu.name.as_deref().is_some_and(|cu| !same_name(&ident_text(&param.name), cu))
        })
        .collect();
    let rust = |i: usize| ident_text(&pairs[i].0.name);
    let cu = |i: usize| pairs[i].1.name.clone().unwrap_or_default();
    let mut in_swap: Vec<usize> = Vec::new();
    for (k, &i) in differs.iter().enumerate() {
        let partner =
            differs[k + 1..].iter().copied().find(|&j| same_name(&rust(i), &cu(j)) && same_name(&rust(j), &cu(i)));
        if let Some(j) = partner.filter(|j| !in_swap.contains(j) && !in_swap.contains(&i)) {
            in_swap.extend([i, j]);
            issues.push(swap_issue(decl, file, kernel, i, j));
        }
    }
    for &i in differs.iter().filter(|i| !in_swap.contains(i)) {
        let (rust_name, cu_name) = (rust(i), cu(i));
        let elsewhere = pairs.iter().position(|(_, c)| c.name.as_deref().is_some_and(|c| same_name(c, &rust_name)));
        let order = elsewhere.map_or_else(String::new, |j| {
            format!(" (`{rust_name}` is the kernel's parameter {}: are the parameters out of order?)", j + 1)
        });
        let fix = format!("rename it `{}`, or, if the name differs on purpose, add", rust_spelling(&cu_name));
        issues.push(NameIssue {
            params: vec![i],
            message: format!(
                "kernel `{}` ({file}:{}) names parameter {} `{cu_name}`{order}: {fix} \
                 `rename({rust_name} = {cu_name})` to `#[kernel(...)]`",
                decl.symbol,
                pairs[i].1.line,
                i + 1
            ),
            rename: None,
        });
    }
    issues
}

/// How a Rust parameter named as the `.cu` does is spelled: as is, raw for a keyword (`r#in`),
/// or with a trailing `_` where neither can be (`self_`, `cfg_` beside the generated `launch`'s
/// own `cfg`), which still matches (underscores do not count).
fn rust_spelling(cu_name: &str) -> String {
    let reserved = crate::syntax::parse::RESERVED_PARAMS.contains(&cu_name);
    if syn::parse_str::<syn::Ident>(cu_name).is_ok() && !reserved {
        return cu_name.to_string();
    }
    let raw = format!("r#{cu_name}");
    match syn::parse_str::<syn::Ident>(&raw) {
        Ok(_) if !reserved => raw,
        _ => format!("{cu_name}_"),
    }
}

/// Parameters `i` and `j` declared in each other's place.
fn swap_issue(decl: &KernelDecl, file: &str, kernel: &CuKernel, i: usize, j: usize) -> NameIssue {
    let (a, b) = (ident_text(&decl.params[i].name), ident_text(&decl.params[j].name));
    let (cu_i, cu_j) = (&kernel.params[i], &kernel.params[j]);
    NameIssue {
        params: vec![i, j],
        message: format!(
            "parameters `{a}` and `{b}` are declared in each other's place: kernel `{}` ({file}:{}) takes `{cu_i}` as \
             parameter {} and `{cu_j}` as parameter {}: did you swap `{a}` and `{b}`? (if the names differ on \
             purpose: `rename({a} = {}, {b} = {})`)",
            decl.symbol,
            kernel.line,
            i + 1,
            j + 1,
            cu_i.name.as_deref().unwrap_or_default(),
            cu_j.name.as_deref().unwrap_or_default(),
        ),
        rename: None,
    }
}

/// A `rename(...)` that does not fit the `.cu`: it names another parameter than the `.cu` has
/// there, renames nothing, or renames a parameter the `.cu` leaves unnamed.
fn rename_issue(decl: &KernelDecl, file: &str, index: usize, rename: &Rename, cu: &CuParam) -> Option<NameIssue> {
    let rust = ident_text(&rename.rust);
    let at = format!("kernel `{}` ({file}:{})", decl.symbol, cu.line);
    let lead = format!("`rename({rust} = {})`", rename.cu);
    let message = match cu.name.as_deref() {
        None => format!(
            "{lead}: {at} gives parameter {} no name, so there is nothing to check or rename: remove it",
            index + 1
        ),
        Some(cu_name) if same_name(&rust, cu_name) => {
            format!("{lead} renames nothing: {at} names parameter {} `{cu_name}` too: remove it", index + 1)
        }
        Some(cu_name) if !same_name(&rename.cu, cu_name) => format!(
            "{lead}: {at} names parameter {} `{cu_name}`, not `{}`: write `rename({rust} = {cu_name})`",
            index + 1,
            rename.cu
        ),
        Some(_) => return None,
    };
    Some(NameIssue { params: vec![index], message, rename: Some(rename.clone()) })
}
