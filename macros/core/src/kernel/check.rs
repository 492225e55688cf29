//! Checks a `#[kernel]` declaration against the kernel's signature read from the `.cu`.
//! Every mismatch is its own error, spanned on the Rust parameter, naming the `.cu` parameter
//! with file and line, and saying what to declare instead.

use quote::quote;

use super::c_types::{no_rust_type, unverifiable_reason};
use crate::cuda::signature::{CuBase, CuError, CuKernel, CuParam};
use crate::syntax::model::{Elem, KernelDecl, Param, ParamKind};

/// All mismatches between `decl` and what was found in `file` (the path shown in messages).
pub(crate) fn check_decl(decl: &KernelDecl, file: &str, found: &Result<CuKernel, CuError>) -> Vec<syn::Error> {
    let kernel = match found {
        Ok(kernel) => kernel,
        Err(err) => return vec![cu_error(decl, file, err)],
    };
    let (n_cu, n_rust) = (kernel.params.len(), decl.params.len());
    if n_cu != n_rust {
        return vec![arity_error(decl, file, kernel)];
    }
    decl.params
        .iter()
        .zip(&kernel.params)
        .enumerate()
        .filter_map(|(index, (param, cu))| check_param(decl, file, index, param, cu))
        .collect()
}

fn param_error(param: &Param, message: String) -> syn::Error {
    let (name, ty) = (&param.name, &param.ty);
    syn::Error::new_spanned(quote!(#name: #ty), message)
}

fn cu_error(decl: &KernelDecl, file: &str, err: &CuError) -> syn::Error {
    match err {
        CuError::NotFound { name, kernels, non_kernel } => {
            let mut msg = match non_kernel {
                Some(line) => format!(
                    "`{name}` in {file}:{line} is not a kernel: only `extern \"C\" __global__` functions can be \
                     launched (a `__device__` or host function cannot)"
                ),
                None => format!("no kernel `{name}` in {file}: expected `extern \"C\" __global__ void {name}(...)`"),
            };
            if kernels.is_empty() {
                msg.push_str("; the file has no `extern \"C\" __global__` kernels");
            } else {
                msg.push_str(&format!("; kernels in this file: {}", kernels.join(", ")));
            }
            syn::Error::new(decl.symbol_span, msg)
        }
        CuError::NotExternC { name, line } => syn::Error::new(
            decl.symbol_span,
            format!(
                "kernel `{name}` ({file}:{line}) is not `extern \"C\"`: its symbol is C++-mangled, and kgraph binds C++ \
                 kernels through the record of what nvcc compiled, which this build did not leave (no nvcc); build \
                 with nvcc, or declare it `extern \"C\" __global__ void {name}(...)` or put it in an \
                 `extern \"C\" {{ ... }}` block"
            ),
        ),
        CuError::Ambiguous { name, lines } => {
            let lines: Vec<String> = lines.iter().map(|l| format!("{file}:{l}")).collect();
            syn::Error::new(
                decl.symbol_span,
                format!(
                    "cannot verify kernel `{name}`: several functions of that name in the source fit what nvcc compiled ({}), and kgraph cannot tell which one it is; way out: give the overloads distinct names, or give the kernel `extern \"C\"` linkage",
                    lines.join(", ")
                ),
            )
        }
        CuError::Unverifiable { name, line, param, token } => {
            let msg = format!(
                "cannot verify kernel `{name}` ({file}:{line}): parameter {}: {}",
                param + 1,
                unverifiable_reason(token)
            );
            match decl.params.get(*param) {
                Some(p) => param_error(p, msg),
                None => syn::Error::new(decl.symbol_span, msg),
            }
        }
    }
}

fn plural(n: usize) -> String {
    match n {
        0 => "no parameters".into(),
        1 => "1 parameter".into(),
        n => format!("{n} parameters"),
    }
}

fn arity_error(decl: &KernelDecl, file: &str, kernel: &CuKernel) -> syn::Error {
    let (n_cu, n_rust) = (kernel.params.len(), decl.params.len());
    let head = format!("kernel `{}` ({file}:{}) takes {}, declared {n_rust}", kernel.name, kernel.line, plural(n_cu));
    if n_rust > n_cu {
        let extra: Vec<String> = decl.params[n_cu..].iter().map(|p| format!("`{}`", p.name)).collect();
        let msg = format!("{head}: remove {}; the kernel is `{}`", extra.join(", "), kernel.signature());
        param_error(&decl.params[n_cu], msg)
    } else {
        let missing: Vec<String> = kernel.params[n_rust..].iter().map(|p| format!("`{p}`")).collect();
        let msg = format!("{head}: missing {}; the kernel is `{}`", missing.join(", "), kernel.signature());
        syn::Error::new(decl.params_span, msg)
    }
}

/// The Rust declaration that matches a kernel parameter, if kgraph can pass it. `pinned`
/// prefers `Pinned<T>`/`PinnedMut<T>` over `&[T]`/`&mut [T]` for a `const T*`/`T*` (to echo
/// what the user wrote: mapped host memory rather than device memory).
fn expected_kind(cu: &CuParam, pinned: bool) -> Option<ParamKind> {
    let CuBase::Elem(elem) = cu.ty.base else { return None };
    match (cu.ty.pointers, cu.ty.is_const) {
        (0, _) => Some(ParamKind::Scalar(elem)),
        (1, true) if pinned => Some(ParamKind::Pinned(elem)),
        (1, false) if pinned => Some(ParamKind::PinnedMut(elem)),
        (1, is_const) => Some(ParamKind::Slice { elem, mutable: !is_const }),
        _ => None,
    }
}

fn check_param(decl: &KernelDecl, file: &str, index: usize, param: &Param, cu: &CuParam) -> Option<syn::Error> {
    let lead = format!("parameter `{}`: kernel `{}` ({file}:{}) takes `{cu}`", param.name, decl.symbol, cu.line);
    let declared = param.kind.rust_decl();
    let Some(expected) = expected_kind(cu, param.kind.is_pinned()) else {
        return Some(param_error(
            param,
            format!(
                "{lead}, which has no kgraph Rust type: {} (parameter {} of `{}`)",
                no_rust_type(&cu.ty),
                index + 1,
                decl.symbol
            ),
        ));
    };
    if expected == param.kind {
        return None;
    }
    let fix = expected.rust_decl();
    let is_pointer = |kind: ParamKind| !matches!(kind, ParamKind::Scalar(_));
    let spelled = &cu.ty.spelled;
    let (reason, alternative) = if is_pointer(param.kind) != is_pointer(expected) {
        let reason = if is_pointer(expected) {
            "the kernel takes a pointer, not a value"
        } else {
            "the kernel takes a value, not a pointer"
        };
        (reason.to_string(), String::new())
    } else if param.kind.elem() != expected.elem() {
        (elem_reason(param.kind.elem(), expected.elem(), spelled), String::new())
    } else {
        match param.kind {
            ParamKind::Slice { mutable: true, .. } => (
                "the kernel only reads through a `const` pointer".to_string(),
                " (or drop the `const` in the `.cu` if the kernel writes it)".to_string(),
            ),
            ParamKind::Pinned(elem) => (
                "`Pinned<T>` is read-only and needs a `const` pointer".to_string(),
                format!(
                    " for the kernel to write mapped host memory, or `&mut [{elem}]` for device memory \
                     (or make the kernel parameter `const {spelled}*` if it only reads)"
                ),
            ),
            ParamKind::PinnedMut(_) => (
                "the kernel only reads through a `const` pointer, and `PinnedMut<T>` is for memory the kernel writes"
                    .to_string(),
                " (or drop the `const` in the `.cu` if the kernel writes it)".to_string(),
            ),
            _ => (
                "the kernel may write through a non-`const` pointer".to_string(),
                format!(" (or make the kernel parameter `const {spelled}*` if it only reads)"),
            ),
        }
    };
    Some(param_error(param, format!("{lead}, declared `{declared}`: {reason}; declare `{fix}`{alternative}")))
}

fn elem_reason(have: Elem, want: Elem, spelled: &str) -> String {
    let float = |e: Elem| matches!(e, Elem::F32 | Elem::F64);
    let bits = |e: Elem| match e {
        Elem::I8 | Elem::U8 => 8,
        Elem::I16 | Elem::U16 => 16,
        Elem::F32 | Elem::I32 | Elem::U32 => 32,
        Elem::F64 | Elem::I64 | Elem::U64 => 64,
    };
    let kind = |e: Elem| if float(e) { "floating-point" } else { "an integer" };
    let sign = |e: Elem| if matches!(e, Elem::U8 | Elem::U16 | Elem::U32 | Elem::U64) { "unsigned" } else { "signed" };
    let what = if float(have) != float(want) {
        format!("`{have}` is {}, `{spelled}` {}", kind(have), kind(want))
    } else if bits(have) != bits(want) {
        format!("`{have}` is {} bits, `{spelled}` {}", bits(have), bits(want))
    } else {
        format!("`{have}` is {}, `{spelled}` {}", sign(have), sign(want))
    };
    format!("element types differ ({what})")
}
