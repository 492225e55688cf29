//! `unsafe(device_fn = "name")`: the `.cu` must declare a `__device__` function `name` taking
//! the block index and the block count before the kernel's own parameters. What it does is the
//! author's promise; that it exists with that many parameters is checked here, so a misspelt
//! name is an error at the declaration rather than in the build of a resident kernel.

use crate::cuda::lex::{Tok, Token};
use crate::diagnostics::Ctxt;
use crate::syntax::model::KernelDecl;

/// Errors (at the name) when `toks` (the `.cu`, preprocessed where the build kept it) holds no
/// `__device__` function of `decl`'s `device_fn` name with `2 + params` parameters.
pub(crate) fn check_device_fn(decl: &KernelDecl, file: &str, toks: &[Token], cx: &mut Ctxt) {
    let Some(device_fn) = &decl.device_fn else { return };
    let want = decl.params.len() + 2;
    let mut arities = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if t.ident() != Some(device_fn.name.as_str()) || !toks.get(i + 1).is_some_and(|n| n.is_punct("(")) {
            continue;
        }
        if !is_device_declaration(&toks[..i]) {
            continue;
        }
        if let Some(n) = arity(&toks[i + 1..]) {
            if n == want {
                return;
            }
            arities.push(n);
        }
    }
    let found = if arities.is_empty() {
        format!("{file} has no `__device__` function `{}`", device_fn.name)
    } else {
        let listed: Vec<String> = arities.iter().map(ToString::to_string).collect();
        let noun = if arities == [1] { "parameter" } else { "parameters" };
        format!("`{}` in {file} takes {} {noun}", device_fn.name, listed.join(" or "))
    };
    cx.push(
        device_fn.span,
        format!(
            "{found}: the device function of kernel `{}` is `__device__ void {}(unsigned block, unsigned blocks, <the kernel's {} parameters>)` ({want} parameters)",
            decl.symbol,
            device_fn.name,
            decl.params.len()
        ),
    );
}

/// Whether the declaration the tokens end in (back to the last `;`, `{` or `}`) says `__device__`,
/// as written or as nvcc's preprocessor spells it (`__attribute__((device))`).
fn is_device_declaration(before: &[Token]) -> bool {
    let start = before.iter().rposition(|t| t.is_punct(";") || t.is_punct("{") || t.is_punct("}")).map_or(0, |i| i + 1);
    let decl = &before[start..];
    decl.iter().any(|t| t.ident() == Some("__device__"))
        || decl.windows(4).any(|w| {
            w[0].ident() == Some("__attribute__")
                && w[1].is_punct("(")
                && w[2].is_punct("(")
                && w[3].ident() == Some("device")
        })
}

/// The number of parameters of the list `toks` starts with (`(` ... `)`), or `None` when it
/// does not close.
fn arity(toks: &[Token]) -> Option<usize> {
    let mut depth = 0usize;
    let mut commas = 0usize;
    let mut empty = true;
    for t in toks {
        match &t.tok {
            Tok::Punct(p) if p == "(" || p == "<" || p == "[" || p == "{" => depth += 1,
            Tok::Punct(p) if p == ")" || p == ">" || p == "]" || p == "}" => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(if empty { 0 } else { commas + 1 });
                }
            }
            Tok::Punct(p) if p == "," && depth == 1 => commas += 1,
            Tok::Ident(i) if depth == 1 && i == "void" && empty => {}
            _ if depth >= 1 => empty = false,
            _ => {}
        }
    }
    None
}
