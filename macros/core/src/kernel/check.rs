//! Checks a `#[kernel]` declaration against the kernel's signature read from the `.cu`.
//! Every mismatch is its own error, spanned on the Rust parameter, naming the `.cu` parameter
//! with file and line, and saying what to declare instead.

use super::c_types::unverifiable_reason;
use super::names::check_names;
use super::param_error::param_error;
use super::raw_handles::check_raw_handles;
use crate::cuda::lex::{Tok, Token};
use crate::cuda::signature::{CuBase, CuError, CuKernel, CuParam};
use crate::cuda::types::hint_for;
use crate::diagnostics::Ctxt;
use crate::syntax::model::{Elem, KernelDecl, Param, ParamKind};

/// Every mismatch between `decl` and what was found in `file` (the path shown in messages),
/// each pushed to `cx`.
pub(crate) fn check_decl(decl: &KernelDecl, file: &str, found: &Result<CuKernel, CuError>, cx: &mut Ctxt) {
    let kernel = match found {
        Ok(kernel) => kernel,
        Err(err) => return cu_error(decl, file, err, cx),
    };
    let (n_cu, n_rust) = (kernel.params.len(), decl.params.len());
    if n_cu != n_rust {
        return arity_error(decl, file, kernel, cx);
    }
    let names = check_names(decl, file, kernel);
    // A swap explains both parameters' type errors, if any: one error for the pair.
    let swapped: Vec<usize> = names.iter().filter(|n| n.params.len() > 1).flat_map(|n| n.params.clone()).collect();
    let mut names_left = Vec::new();
    for issue in names {
        match (&issue.rename, issue.params.as_slice()) {
            (Some(rename), _) => cx.push(rename.span, issue.message),
            (None, [first, _]) => param_error(&decl.params[*first], issue.message, cx),
            _ => names_left.push(issue),
        }
    }
    for (index, (param, cu)) in decl.params.iter().zip(&kernel.params).enumerate() {
        if swapped.contains(&index) {
            continue;
        }
        let name = names_left.iter().find(|n| n.params == [index]).map(|n| &n.message);
        // One error per parameter: a wrong type with a wrong name is most likely one mistake.
        let message = match (check_param(decl, file, index, param, cu), name) {
            (Some(ty), Some(name)) => format!("{ty}; and the name: {name}"),
            (Some(ty), None) => ty,
            (None, Some(name)) => format!("parameter `{}`: {name}", param.name),
            (None, None) => continue,
        };
        param_error(param, message, cx);
    }
    check_raw_handles(decl, file, kernel, cx);
}

/// Without a record of what nvcc compiled (the NVRTC fallback), whether a kernel uses dynamic
/// shared memory can only be read from the `.cu`: a checked declaration without `shared` of a
/// kernel whose file declares an `extern __shared__` array is refused, since kgraph cannot tell
/// which of the file's kernels reach it. (What the file's headers declare, or a macro spells
/// otherwise, only the record shows.)
pub(crate) fn check_shared_memory_in_source(decl: &KernelDecl, file: &str, toks: &[Token], cx: &mut Ctxt) {
    let Some(promise) = decl.extents_promise else { return };
    if decl.shared.is_some() {
        return;
    }
    let Some(line) = extern_shared_line(toks) else { return };
    cx.push(
        promise,
        format!(
            "{file}:{line} declares an `extern __shared__` array, and this build left no record of what nvcc compiled \
             (the NVRTC fallback), so kgraph cannot tell which of the file's kernels use dynamic shared memory: declare \
             how many bytes `{}` needs for a launch, e.g. `shared = block.x * 4` (`shared = 0` for a kernel that uses \
             none); the launch then refuses a `cfg.shared_mem_bytes` below it",
            decl.symbol
        ),
    );
}

/// The line of the first `extern ... __shared__` (or `__shared__ ... extern`) declaration in
/// `toks`: both words in one statement.
fn extern_shared_line(toks: &[Token]) -> Option<usize> {
    let mut statement_start = 0;
    for (i, t) in toks.iter().enumerate() {
        match &t.tok {
            Tok::Punct(p) if p == ";" || p == "{" || p == "}" => statement_start = i + 1,
            Tok::Ident(word) if word == "__shared__" || word == "extern" => {
                let other = if word == "extern" { "__shared__" } else { "extern" };
                if toks[statement_start..i].iter().any(|u| matches!(&u.tok, Tok::Ident(w) if w == other)) {
                    return Some(t.line);
                }
            }
            _ => {}
        }
    }
    None
}

fn cu_error(decl: &KernelDecl, file: &str, err: &CuError, cx: &mut Ctxt) {
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
            cx.push(decl.symbol_span, msg)
        }
        CuError::NotExternC { name, line } => cx.push(
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
            cx.push(
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
                Some(p) => param_error(p, msg, cx),
                None => cx.push(decl.symbol_span, msg),
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

fn arity_error(decl: &KernelDecl, file: &str, kernel: &CuKernel, cx: &mut Ctxt) {
    let (n_cu, n_rust) = (kernel.params.len(), decl.params.len());
    let head = format!("kernel `{}` ({file}:{}) takes {}, declared {n_rust}", kernel.name, kernel.line, plural(n_cu));
    if n_rust > n_cu {
        let extra: Vec<String> = decl.params[n_cu..].iter().map(|p| format!("`{}`", p.name)).collect();
        let msg = format!("{head}: remove {}; the kernel is `{}`", extra.join(", "), kernel.signature());
        param_error(&decl.params[n_cu], msg, cx);
    } else {
        let missing: Vec<String> = kernel.params[n_rust..].iter().map(|p| format!("`{p}`")).collect();
        let msg = format!("{head}: missing {}; the kernel is `{}`", missing.join(", "), kernel.signature());
        cx.push(decl.params_span, msg);
    }
}

/// The element type the Rust declaration of a kernel parameter must have, from its C type
/// (`declared` is what the declaration has, which a C struct takes as its twin), or why kgraph
/// cannot pass it. `void*` is bytes (`u8`); `bool*` is `&[bool]`, whose buffers hold
/// `kgraph::Bool` (only ever 0 or 1, as a kernel's `bool` must be).
pub(super) fn rust_elem_for(cu: &CuParam, declared: Elem, file: &str) -> Result<Elem, String> {
    let (ty, spelled) = (&cu.ty, &cu.ty.spelled);
    if ty.pointers > 1 {
        return Err("a pointer to a pointer: kgraph passes one level of pointer (device addresses as `u64`)".into());
    }
    match (&ty.base, ty.pointers) {
        (CuBase::Void, 1) => Ok(Elem::U8),
        (CuBase::Void, _) => Err("`void` is no value".into()),
        (CuBase::Elem(elem), _) => Ok(*elem),
        (CuBase::Struct(_), _) if matches!(declared, Elem::Struct(_)) => Ok(declared),
        (CuBase::Struct(s), _) => Err(format!(
            "a struct ({file}:{}, {} bytes, align {}): derive `kgraph::DeviceStruct` on a `#[repr(C)]` twin and \
             declare the parameter with it",
            s.line, s.size, s.align
        )),
        (CuBase::Unknown, _) => Err(format!(
            "type `{spelled}` is not one kgraph knows: if it is a struct, define it in the `.cu` (kgraph reads its \
             layout there, not from headers), derive `kgraph::DeviceStruct` on a `#[repr(C)]` twin and declare the \
             parameter with it; if it is an enum or a typedef, define it in the `.cu` too, or spell out its \
             underlying type"
        )),
        (CuBase::Unreadable(why), _) => Err(why.clone()),
        (CuBase::Other, _) => Err(format!(
            "which has no kgraph Rust type{}: kernels take numbers (f32, f64, i8 ... u64), `kgraph::f16`, \
             `kgraph::bf16`, `bool`, CUDA vector types (`kgraph::Float4`, ...) and `#[derive(kgraph::DeviceStruct)]` \
             structs, by value or through `const T*`/`T*`",
            hint_for(spelled).map(|h| format!(" ({h})")).unwrap_or_default()
        )),
    }
}

/// The Rust declaration that matches a kernel parameter, given its Rust element type. `pinned`
/// prefers `Pinned<T>`/`PinnedMut<T>` over `&[T]`/`&mut [T]` for a `const T*`/`T*` (to echo
/// what the user wrote: mapped host memory rather than device memory).
pub(super) fn expected_kind(cu: &CuParam, elem: Elem, pinned: bool) -> ParamKind {
    match (cu.ty.pointers, cu.ty.is_const) {
        (0, _) => ParamKind::Scalar(elem),
        (_, true) if pinned => ParamKind::Pinned(elem),
        (_, false) if pinned => ParamKind::PinnedMut(elem),
        (_, is_const) => ParamKind::Slice { elem, mutable: !is_const },
    }
}

/// What to add to a fix naming a type that is not a plain number.
fn type_note(cu: &CuParam, elem: Elem) -> String {
    let spelled = &cu.ty.spelled;
    match (&cu.ty.base, elem) {
        (CuBase::Void, _) => " (`void*` is untyped device memory: bytes, its extent counted in bytes)".into(),
        (CuBase::Elem(Elem::Bool), Elem::Bool) if cu.ty.pointers > 0 => {
            " (a `bool*` takes a `DeviceBuffer<kgraph::Bool>`: safe code stores only 0 and 1 where the kernel reads `bool`)"
                .into()
        }
        (_, Elem::F16 | Elem::Bf16 | Elem::Vector(_)) => format!(" (C `{spelled}` is `kgraph::{elem}`)"),
        _ => String::new(),
    }
}

/// What is wrong with `param`'s type against `cu`, if anything.
fn check_param(decl: &KernelDecl, file: &str, index: usize, param: &Param, cu: &CuParam) -> Option<String> {
    let lead = format!("parameter `{}`: kernel `{}` ({file}:{}) takes `{cu}`", param.name, decl.symbol, cu.line);
    let declared = param.kind.rust_decl();
    let elem = match rust_elem_for(cu, param.kind.elem(), file) {
        Ok(elem) => elem,
        Err(why) => {
            let sep = if why.starts_with("which") { ", " } else { ": " };
            return Some(format!("{lead}{sep}{why} (parameter {} of `{}`)", index + 1, decl.symbol));
        }
    };
    let expected = expected_kind(cu, elem, param.kind.is_pinned());
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
        (reason.to_string(), type_note(cu, elem))
    } else if param.kind.elem() != expected.elem() {
        (elem_reason(param.kind.elem(), expected.elem(), spelled), type_note(cu, elem))
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
    Some(format!("{lead}, declared `{declared}`: {reason}; declare `{fix}`{alternative}"))
}

fn elem_reason(have: Elem, want: Elem, spelled: &str) -> String {
    if !have.is_number() || !want.is_number() {
        let what = |e: Elem| match e {
            Elem::Struct(_) => "a struct",
            Elem::Vector(_) => "a vector type",
            Elem::F16 | Elem::Bf16 => "a 16-bit float",
            Elem::Bool => "a `bool`",
            _ => "a number",
        };
        return format!("element types differ (`{have}` is {}, `{spelled}` {})", what(have), what(want));
    }
    let float = |e: Elem| matches!(e, Elem::F32 | Elem::F64);
    let bits = |e: Elem| 8 * e.size().unwrap_or(0);
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
