//! Soundness review of the extents a checked launch evaluates: the generated expression must
//! compute every operation in the type C computes *that operation* in (the usual arithmetic
//! conversions, operation by operation), not the whole expression in its widest type. A
//! `u32` subtraction that C wraps, or an `int` product that overflows, before the result meets a
//! 64-bit operand, is otherwise accepted with a value far below what the kernel's own C
//! arithmetic over the same expression reaches (`(end - start) + offset` with `end < start`:
//! the check accepts 9 elements, the kernel's loop bound is 4294967305).
//!
//! The tests expand declarations against a `.cu` written to a scratch folder, take the
//! generated extent expression out of the checked launch and evaluate it with the semantics of
//! `kgraph::__private::extent` (each operation checked in its type; a scalar or value that does
//! not convert is a fault), and compare it with C's evaluation: whenever the check accepts, its
//! value must be at least C's, and C must not have overflowed.

use std::collections::HashMap;

use kgraph_codegen::{expand_kernel, Config};
use proc_macro2::TokenStream;
use quote::quote;
use syn::visit::Visit;

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

const CU: &str = r#"
extern "C" __global__ void spans(const float* x, unsigned int end, unsigned int start, long long offset) {}
extern "C" __global__ void rows(float* y, int n, int m, long long base) {}
extern "C" __global__ void mixed(const float* z, int a, unsigned int b, long long c) {}
"#;

/// The checked launch's code for `item` (a declaration of a kernel of `CU`), with no errors.
fn expand(attr: TokenStream, item: TokenStream) -> syn::File {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("review.cu"), CU).unwrap();
    let out = expand_kernel(attr, item, &Config::new(dir.path(), MANIFEST));
    let file: syn::File = syn::parse2(out).expect("expansion is valid Rust");
    for item in &file.items {
        if let syn::Item::Macro(m) = item {
            assert!(!m.mac.path.is_ident("compile_error"), "the declaration has errors: {}", m.mac.tokens);
        }
    }
    file
}

/// The integer types an extent is computed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    I32,
    U32,
    I64,
    U64,
}

impl Ty {
    fn from_type(t: &syn::Type) -> Ty {
        match quote!(#t).to_string().as_str() {
            "i32" => Ty::I32,
            "u32" => Ty::U32,
            "i64" => Ty::I64,
            "u64" => Ty::U64,
            other => panic!("not an extent type: {other}"),
        }
    }

    fn from_suffix(s: &str) -> Ty {
        Ty::from_type(&syn::parse_str(s).unwrap())
    }

    fn fits(self, v: i128) -> bool {
        let (lo, hi) = match self {
            Ty::I32 => (i128::from(i32::MIN), i128::from(i32::MAX)),
            Ty::U32 => (0, i128::from(u32::MAX)),
            Ty::I64 => (i128::from(i64::MIN), i128::from(i64::MAX)),
            Ty::U64 => (0, i128::from(u64::MAX)),
        };
        (lo..=hi).contains(&v)
    }
}

/// Finds the value expression of `extent(NAME, "<param>", "<text>", <value>)`.
struct FindExtent<'e> {
    param: &'e str,
    found: Option<syn::Expr>,
}

impl<'ast> Visit<'ast> for FindExtent<'_> {
    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        if let syn::Expr::Path(p) = &*call.func {
            let last = p.path.segments.last().unwrap();
            let named = matches!(call.args.iter().nth(1), Some(syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. })) if s.value() == self.param);
            if last.ident == "extent" && call.args.len() == 4 && named && self.found.is_none() {
                self.found = call.args.iter().nth(3).cloned();
            }
        }
        syn::visit::visit_expr_call(self, call);
    }
}

fn generics(seg: &syn::PathSegment) -> Vec<syn::Type> {
    match &seg.arguments {
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|g| match g {
                syn::GenericArgument::Type(t) => Some(t.clone()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Evaluates a generated extent expression as `kgraph::__private::extent` does: `Err` for a
/// fault (an overflow in the operation's type, a division by zero, a value that does not
/// convert), else the value and its type.
fn eval(e: &syn::Expr, vars: &HashMap<&str, i128>) -> Result<(i128, Ty), String> {
    let syn::Expr::Call(call) = e else { panic!("unexpected generated expression: {}", quote!(#e)) };
    let syn::Expr::Path(p) = &*call.func else { panic!("unexpected callee") };
    let seg = p.path.segments.last().unwrap();
    let args: Vec<&syn::Expr> = call.args.iter().collect();
    let gen = generics(seg);
    let checked = |v: Option<i128>, t: Ty, what: &str| match v {
        Some(v) if t.fits(v) => Ok((v, t)),
        _ => Err(format!("`{what}` overflows {t:?}")),
    };
    match seg.ident.to_string().as_str() {
        "lit" => {
            let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(l), .. }) = args[0] else { panic!("literal") };
            let t = if gen.is_empty() { Ty::from_suffix(l.suffix()) } else { Ty::from_type(&gen[0]) };
            Ok((l.base10_parse::<i128>().unwrap(), t))
        }
        "scalar" => {
            let t = Ty::from_type(&gen[0]);
            let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(name), .. }) = args[0] else { panic!("name") };
            let v = vars[name.value().as_str()];
            if t.fits(v) {
                Ok((v, t))
            } else {
                Err(format!("`{}` = {v} does not fit {t:?}", name.value()))
            }
        }
        "convert" => {
            let (to, from) = (Ty::from_type(&gen[0]), Ty::from_type(&gen[1]));
            let (v, t) = eval(args[0], vars)?;
            assert_eq!(t, from, "a conversion from the type its operand is computed in");
            if to.fits(v) {
                Ok((v, to))
            } else {
                Err(format!("{v} does not convert to {to:?}"))
            }
        }
        op => {
            let (a, ta) = eval(args[0], vars)?;
            let (b, tb) = eval(args[1], vars)?;
            assert_eq!(ta, tb, "both operands of `{op}` in one type");
            let v = match op {
                "add" => a.checked_add(b),
                "sub" => a.checked_sub(b),
                "mul" => a.checked_mul(b),
                "div" => a.checked_div(b),
                "rem" => a.checked_rem(b),
                "min" => Some(a.min(b)),
                "max" => Some(a.max(b)),
                other => panic!("unknown operation {other}"),
            };
            if matches!(op, "div" | "rem") && b == 0 {
                return Err("division by zero".into());
            }
            checked(v, ta, op)
        }
    }
}

/// The extent of `param` the expansion's checked launch computes for `vars`: `Err` when the
/// launch is refused.
fn generated_extent(file: &syn::File, param: &str, vars: &[(&str, i128)]) -> Result<i128, String> {
    let mut finder = FindExtent { param, found: None };
    finder.visit_file(file);
    let expr = finder.found.unwrap_or_else(|| panic!("no extent of `{param}` in the expansion"));
    let vars: HashMap<&str, i128> = vars.iter().copied().collect();
    let (v, _) = eval(&expr, &vars)?;
    if v < 0 {
        return Err(format!("negative extent {v}"));
    }
    Ok(v)
}

/// The launch is refused, or accepts at least C's value (the kernel's own arithmetic over the
/// expression reaches C's value, so a buffer of the accepted length must hold it); `None`: C
/// overflows a signed type (undefined), so the launch must be refused.
#[track_caller]
fn agrees_with_c(file: &syn::File, param: &str, vars: &[(&str, i128)], c: Option<i128>) {
    match (generated_extent(file, param, vars), c) {
        (Err(_), _) => {}
        (Ok(v), Some(c)) => assert!(v >= c, "`{param}` for {vars:?}: the check accepts {v} elements, C computes {c}"),
        (Ok(v), None) => panic!("`{param}` for {vars:?}: the check accepts {v} where C's arithmetic overflows"),
    }
}

#[test]
fn an_unsigned_subtraction_c_wraps_is_not_accepted_in_64_bits() {
    let file = expand(
        quote!("review.cu", unsafe(extents)),
        quote!(
            pub fn spans(x: &[f32; (end - start) + offset], end: u32, start: u32, offset: i64);
        ),
    );
    // C: `end - start` in `unsigned int`, then converted to `long long`.
    let c = |end: u32, start: u32, offset: i64| i128::from(end.wrapping_sub(start)) + i128::from(offset);
    for (end, start, offset) in [(5, 2, 10), (1, 2, 10), (0, u32::MAX, 0), (7, 7, 0)] {
        let vars = [("end", i128::from(end)), ("start", i128::from(start)), ("offset", i128::from(offset))];
        agrees_with_c(&file, "x", &vars, Some(c(end, start, offset)));
    }
    assert_eq!(generated_extent(&file, "x", &[("end", 5), ("start", 2), ("offset", 10)]), Ok(13));
}

#[test]
fn an_int_product_that_overflows_is_not_rescued_by_a_64_bit_addend() {
    let file = expand(
        quote!("review.cu", unsafe(extents), shared = n * m + base),
        quote!(
            pub fn rows(y: &mut [f32; n * m + base], n: i32, m: i32, base: i64);
        ),
    );
    // C: `n * m` in `int` (undefined past its range), then converted to `long long`.
    let c = |n: i32, m: i32, base: i64| n.checked_mul(m).map(|p| i128::from(p) + i128::from(base));
    for (n, m, base) in [(3, 4, 5), (-3, 1 << 30, 4_000_000_000), (1 << 16, 1 << 16, 0), (-1, 1, 1)] {
        let vars = [("n", i128::from(n)), ("m", i128::from(m)), ("base", i128::from(base))];
        agrees_with_c(&file, "y", &vars, c(n, m, base));
        agrees_with_c(&file, "shared", &vars, c(n, m, base));
    }
    assert_eq!(generated_extent(&file, "y", &[("n", 3), ("m", 4), ("base", 5)]), Ok(17));
}

#[test]
fn each_operation_is_computed_in_its_own_c_type() {
    let file = expand(
        quote!("review.cu", unsafe(extents)),
        quote!(
            pub fn mixed(z: &[f32; (a - 1) * 2 + b + c * (a + 1)], a: i32, b: u32, c: i64);
        ),
    );
    // C: `(a - 1) * 2` in `int`; `+ b` in `unsigned int` (a negative `int` converts to a huge
    // one); `c * (a + 1)` in `long long`; the sum in `long long`.
    let c_value = |a: i32, b: u32, c: i64| -> Option<i128> {
        let left = a.checked_sub(1)?.checked_mul(2)?;
        let unsigned = (left as u32).wrapping_add(b);
        let right = c.checked_mul(i64::from(a.checked_add(1)?))?;
        Some(i128::from(unsigned) + i128::from(right))
    };
    for (a, b, c) in [(3, 4, 5), (0, 4, 5), (0, 1, 0), (i32::MAX, 0, 0), (1 << 30, 0, 1), (2, u32::MAX, 1), (-5, 20, 3)]
    {
        let vars = [("a", i128::from(a)), ("b", i128::from(b)), ("c", i128::from(c))];
        agrees_with_c(&file, "z", &vars, c_value(a, b, c));
    }
    assert_eq!(generated_extent(&file, "z", &[("a", 3), ("b", 4), ("c", 5)]), Ok(4 + 4 + 20));
}

#[test]
fn launch_dimensions_and_literals_keep_their_types() {
    let file = expand(
        quote!("review.cu", unsafe(extents)),
        quote!(
            pub fn rows(y: &mut [f32; (grid.x - 1) * n + base + 3000000000], n: i32, m: i32, base: i64);
        ),
    );
    // C: `(grid.x - 1) * n` in `int` (kgraph counts the launch's shape as `int`), then `long long`.
    let c = |gx: u32, n: i32, base: i64| {
        let row = i32::try_from(gx).ok()?.checked_sub(1)?.checked_mul(n)?;
        Some(i128::from(row) + i128::from(base) + 3_000_000_000)
    };
    for (gx, n, base) in [(4, 10, 0), (1 << 20, 1 << 12, 0), (3, -10, 0), (1, i32::MIN, 5)] {
        let vars = [("grid.x", i128::from(gx)), ("n", i128::from(n)), ("m", 0), ("base", i128::from(base))];
        agrees_with_c(&file, "y", &vars, c(gx, n, base));
    }
    assert_eq!(generated_extent(&file, "y", &[("grid.x", 4), ("n", 10), ("base", 0)]), Ok(3_000_000_030));
}
