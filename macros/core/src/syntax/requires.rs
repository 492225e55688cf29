//! Reading launch-time requirements from `#[kernel(...)]`: `requires(<cond>, ...)`, conditions
//! over the kernel's integer scalar parameters, the launch's shape (`grid.x` ... `block.z`),
//! integer literals and constants (`i32::MAX`), under which the author's `unsafe(extents)`
//! promise holds; and `align(<param> = <bytes>, ...)`, pointer parameters whose address must be
//! a multiple of `bytes`. The model is `condition.rs`; which names a condition may use is a rule
//! of `kernel/requires_rules` (it needs the parameter list).

use quote::ToTokens;
use syn::parse::ParseStream;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Ident, Token};

use super::condition::{Align, CmpOp, Cond, Requirement, MAX_ALIGN};
use super::extent::{read_expr, Grammar};

const REQUIRES_HELP: &str = "a `requires` condition compares integer expressions over the kernel's integer scalar \
     parameters, the launch's shape (`grid.x` ... `block.z`), integer literals and the bounds of Rust's integer \
     types (`i32::MAX`): `==, !=, <, <=, >, >=`, joined by `&&` and `||`, with `+ - * / %`, unary `-`, \
     parentheses, `min(a, b)`, `max(a, b)`, e.g. `requires(input_stride >= 0, block.x == 256)`";

/// A condition's arithmetic grammar: an extent's, with constants and unary minus.
const CONDITION: Grammar = Grammar { name: "a `requires` condition", help: REQUIRES_HELP, constants: true };

/// `requires(<cond>, ...)` (after the word `requires`): one [`Requirement`] per condition.
pub(crate) fn parse_requires(input: ParseStream, keyword: &Ident) -> syn::Result<Vec<Requirement>> {
    let content;
    let paren = syn::parenthesized!(content in input);
    let conds = Punctuated::<syn::Expr, Token![,]>::parse_terminated(&content)?;
    if conds.is_empty() {
        let span = keyword.span().join(paren.span.join()).unwrap_or_else(|| keyword.span());
        return Err(syn::Error::new(span, format!("`requires()` has no condition: {REQUIRES_HELP}")));
    }
    conds.iter().map(|e| Ok(Requirement { cond: read_cond(e)?, text: condition_text(e), span: e.span() })).collect()
}

/// A condition as a person writes it (`n <= i32::MAX - grid.x * block.x`, `a == -1`,
/// `min(d, 8) > 0`), from its tokens.
fn condition_text(expr: &syn::Expr) -> String {
    let mut s = expr.to_token_stream().to_string();
    for (from, to) in
        [(" . ", "."), (" :: ", "::"), (" ,", ","), ("( ", "("), (" )", ")"), ("min (", "min("), ("max (", "max(")]
    {
        s = s.replace(from, to);
    }
    // A unary minus follows an operator or an opening parenthesis (or starts the condition).
    for op in ["==", "!=", "<=", ">=", "<", ">", "&&", "||", "+", "-", "*", "/", "%", ","] {
        s = s.replace(&format!("{op} - "), &format!("{op} -"));
    }
    s = s.replace("(- ", "(-");
    match s.strip_prefix("- ") {
        Some(rest) => format!("-{rest}"),
        None => s,
    }
}

fn read_cond(expr: &syn::Expr) -> syn::Result<Cond> {
    match expr {
        syn::Expr::Paren(p) => read_cond(&p.expr),
        syn::Expr::Group(g) => read_cond(&g.expr),
        syn::Expr::Binary(b) => {
            let op = match b.op {
                syn::BinOp::And(_) => {
                    return Ok(Cond::And(Box::new(read_cond(&b.left)?), Box::new(read_cond(&b.right)?)))
                }
                syn::BinOp::Or(_) => {
                    return Ok(Cond::Or(Box::new(read_cond(&b.left)?), Box::new(read_cond(&b.right)?)))
                }
                syn::BinOp::Eq(_) => CmpOp::Eq,
                syn::BinOp::Ne(_) => CmpOp::Ne,
                syn::BinOp::Lt(_) => CmpOp::Lt,
                syn::BinOp::Le(_) => CmpOp::Le,
                syn::BinOp::Gt(_) => CmpOp::Gt,
                syn::BinOp::Ge(_) => CmpOp::Ge,
                _ => return Err(not_a_condition(expr)),
            };
            Ok(Cond::Compare { op, lhs: read_expr(&b.left, CONDITION)?, rhs: read_expr(&b.right, CONDITION)? })
        }
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => Err(syn::Error::new_spanned(
            u.op,
            format!(
                "a `requires` condition has no `!`: write the comparison the other way (`a >= b` for `!(a < b)`): \
                 {REQUIRES_HELP}"
            ),
        )),
        _ => Err(not_a_condition(expr)),
    }
}

fn not_a_condition(expr: &syn::Expr) -> syn::Error {
    syn::Error::new_spanned(expr, format!("expected a comparison (`n >= 0`, `block.x == 256`): {REQUIRES_HELP}"))
}

/// `align(x = 16, ...)` (after the word `align`): pointer parameters with their alignment in
/// bytes, a power of two from 1 to [`MAX_ALIGN`], each parameter once.
pub(crate) fn parse_align(input: ParseStream, keyword: &Ident, aligns: &mut Vec<Align>) -> syn::Result<()> {
    let content;
    let paren = syn::parenthesized!(content in input);
    if content.is_empty() {
        let span = keyword.span().join(paren.span.join()).unwrap_or_else(|| keyword.span());
        return Err(syn::Error::new(
            span,
            "expected `align(param = <bytes>)`: a pointer parameter and the alignment its address must have",
        ));
    }
    while !content.is_empty() {
        let param: Ident = content.parse()?;
        content.parse::<Token![=]>()?;
        let lit: syn::LitInt = content.parse().map_err(|e| {
            syn::Error::new(e.span(), "expected `align(param = <bytes>)`: the alignment is an integer literal")
        })?;
        let span = param.span().join(lit.span()).unwrap_or_else(|| param.span());
        let bytes = lit.base10_parse::<u64>().ok().filter(|b| b.is_power_of_two() && *b <= MAX_ALIGN);
        let Some(bytes) = bytes.filter(|_| lit.suffix().is_empty()) else {
            let message = format!(
                "`align({param} = {lit})`: the alignment is a power of two from 1 to {MAX_ALIGN} bytes, without a \
                 suffix ({MAX_ALIGN}: every CUDA allocation starts at a multiple of it)"
            );
            return Err(syn::Error::new(lit.span(), message));
        };
        if aligns.iter().any(|a| a.param == param) {
            return Err(syn::Error::new(span, format!("`{param}` aligned twice")));
        }
        aligns.push(Align { param, bytes, span });
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse::Parser;

    fn parse(tokens: proc_macro2::TokenStream) -> syn::Result<Vec<Requirement>> {
        (|input: ParseStream| {
            let keyword: Ident = input.parse()?;
            parse_requires(input, &keyword)
        })
        .parse2(tokens)
    }

    fn holds(r: &Requirement, values: &[(&str, i128)]) -> bool {
        r.cond.holds(&|n| values.iter().find(|(k, _)| *k == n).map(|(_, v)| *v))
    }

    #[test]
    fn conditions_read_and_evaluate_exactly() {
        let rs = parse(quote::quote!(requires(
            input_stride >= 0,
            block.x == 256,
            n <= i32::MAX - grid.x * block.x,
            a == -1 || (b > i64::MIN && b < u64::MAX)
        )))
        .unwrap();
        assert_eq!(rs.len(), 4);
        assert_eq!(rs[2].text, "n <= i32::MAX - grid.x * block.x");
        assert_eq!(rs[3].text, "a == -1 || (b > i64::MIN && b < u64::MAX)");
        assert!(holds(&rs[0], &[("input_stride", 0)]) && !holds(&rs[0], &[("input_stride", -1)]));
        assert!(holds(&rs[1], &[("block.x", 256)]) && !holds(&rs[1], &[("block.x", 128)]));
        let at = |n: i128| holds(&rs[2], &[("n", n), ("grid.x", 1024), ("block.x", 1024)]);
        assert!(at(i128::from(i32::MAX) - (1 << 20)) && !at(i128::from(i32::MAX) - (1 << 20) + 1));
        assert_eq!(rs[2].cond.value_names(), ["n", "grid.x", "block.x"]);
        assert!(holds(&rs[3], &[("a", -1)]), "`||`: the left side holds");
        assert!(holds(&rs[3], &[("a", 0), ("b", i128::from(i64::MIN) + 1)]));
        assert!(!holds(&rs[3], &[("a", 0), ("b", i128::from(i64::MIN))]));
        assert!(!holds(&rs[0], &[]), "a name without a value is a fault: false");
    }

    #[test]
    fn malformed_conditions_are_one_spanned_error() {
        let err = |t| parse(t).unwrap_err().to_string();
        assert!(err(quote::quote!(requires(n))).starts_with("expected a comparison"));
        assert!(err(quote::quote!(requires(!(n < 0)))).starts_with("a `requires` condition has no `!`"));
        assert!(err(quote::quote!(requires(n < i33::MAX))).starts_with("the constants a `requires` condition"));
        assert!(err(quote::quote!(requires(n < f(1)))).starts_with("a `requires` condition calls only `min(a, b)`"));
        assert!(err(quote::quote!(requires())).starts_with("`requires()` has no condition"));
    }
}
