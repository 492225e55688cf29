//! Typed values in a spec: dtypes, literals checked against the element type they are for, and
//! the source text of lengths and launch dimensions.

use crate::diagnostics::Ctxt;
use crate::graph::ir::Value;
use crate::graph::spec::diag::{list, suggest};
use crate::graph::spec::{Lit, Num, Span, S};
use crate::syntax::model::Elem;

/// The source text of a `Num`, for docs.
pub(crate) fn num_src(n: &Num) -> String {
    match n {
        Num::Int(v) => v.to_string(),
        Num::Expr(s, _) => s.clone(),
    }
}

/// The element type a `dtype` names, or an error naming the known ones.
pub(crate) fn dtype(diags: &mut Ctxt, s: &S<String>, what: &str) -> Option<Elem> {
    let e = Elem::from_rust(&s.v);
    if e.is_none() {
        let names = Elem::ALL.map(Elem::rust_name);
        diags.push(
            s.span.clone(),
            format!("{what}: unknown dtype `{}` (expected one of {}){}", s.v, list(names), suggest(&s.v, names)),
        );
    }
    e
}

/// Checks that `value` fits `elem`; returns the typed constant or records an error.
pub(crate) fn typed_value(diags: &mut Ctxt, lit: &S<Lit>, elem: Elem, what: &str) -> Option<Value> {
    match &lit.v {
        Lit::Int(v) => int_value(diags, *v, &lit.span, elem, what),
        Lit::Float(text) => {
            if !matches!(elem, Elem::F32 | Elem::F64) {
                diags.push(lit.span.clone(), format!("dtype mismatch: {what} is {elem}, found the float `{text}`"));
                return None;
            }
            float_value(diags, text, &lit.span, elem, what)
        }
    }
}

/// A float constant for `elem` (`F32` or `F64`). TOML's own `inf`, `-inf` and `nan` are kept
/// (they become the type's constants); any other spelling must give a finite value of `elem`
/// (`1e39` is no f32: it would silently become infinity) that is not a nonzero value rounding
/// to 0 (`1e-50` in f32).
fn float_value(diags: &mut Ctxt, text: &str, span: &Span, elem: Elem, what: &str) -> Option<Value> {
    let digits = text.replace('_', "");
    if matches!(digits.trim_start_matches(['+', '-']), "inf" | "nan") {
        return Some(Value::Float(text.to_string()));
    }
    let (finite, zero) = match elem {
        Elem::F32 => digits.parse::<f32>().map(|v| (v.is_finite(), v == 0.0)),
        _ => digits.parse::<f64>().map(|v| (v.is_finite(), v == 0.0)),
    }
    .unwrap_or((false, false));
    let mantissa = digits.split(['e', 'E']).next().unwrap_or("");
    let nonzero = mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b));
    let problem = if !finite {
        Some(format!("is out of its range (at most {} in magnitude); write `inf` for infinity", max_float(elem)))
    } else if zero && nonzero {
        Some(format!("is too small for it: it would round to 0 (the smallest nonzero is {})", min_float(elem)))
    } else {
        None
    };
    match problem {
        Some(p) => {
            diags.push(span.clone(), format!("{what} is {elem}: the value `{text}` {p}"));
            None
        }
        None => Some(Value::Float(text.to_string())),
    }
}

fn max_float(elem: Elem) -> String {
    match elem {
        Elem::F32 => format!("{:e}", f32::MAX),
        _ => format!("{:e}", f64::MAX),
    }
}

fn min_float(elem: Elem) -> String {
    // The smallest positive subnormal.
    match elem {
        Elem::F32 => format!("{:e}", f32::from_bits(1)),
        _ => format!("{:e}", f64::from_bits(1)),
    }
}

/// An integer constant for `elem` (range-checked; exactly representable for floats).
pub(crate) fn int_value(diags: &mut Ctxt, v: i128, span: &Span, elem: Elem, what: &str) -> Option<Value> {
    let range: (i128, i128) = match elem {
        Elem::I8 => (i8::MIN.into(), i8::MAX.into()),
        Elem::U8 => (0, u8::MAX.into()),
        Elem::I16 => (i16::MIN.into(), i16::MAX.into()),
        Elem::U16 => (0, u16::MAX.into()),
        Elem::I32 => (i32::MIN.into(), i32::MAX.into()),
        Elem::U32 => (0, u32::MAX.into()),
        Elem::I64 => (i64::MIN.into(), i64::MAX.into()),
        Elem::U64 => (0, u64::MAX.into()),
        Elem::F32 => (-(1 << 24), 1 << 24),
        Elem::F64 => (-(1 << 53), 1 << 53),
        Elem::F16 | Elem::Bf16 | Elem::Bool | Elem::Vector(_) | Elem::Struct(_) => {
            diags.push(span.clone(), format!("{what} is {elem}: a graph spec gives values to number parameters only"));
            return None;
        }
    };
    if v < range.0 || v > range.1 {
        let why = if matches!(elem, Elem::F32 | Elem::F64) { " exactly" } else { "" };
        diags.push(span.clone(), format!("{what} is {elem}: the value {v} does not fit{why}"));
        return None;
    }
    Some(Value::Int(v))
}
