//! Typed values in a spec: dtypes, literals checked against the element type they are for, and
//! the source text of lengths and launch dimensions.

use crate::diagnostics::Ctxt;
use crate::graph::ir::Value;
use crate::graph::spec::diag::{list, suggest};
use crate::graph::spec::{Lit, Num, Span, S};
use crate::syntax::model::{Elem, Vector};

/// The source text of a `Num`, for docs.
pub(crate) fn num_src(n: &Num) -> String {
    match n {
        Num::Int(v) => v.to_string(),
        Num::Expr(s, _) => s.clone(),
    }
}

/// The element type a `dtype` names: a number type (`f32`, `i32`, ...), `f16`, `bf16`, a CUDA
/// vector type by its kgraph name (`Float4`, `Half2`, `Bf16x2`), or a `#[derive(DeviceStruct)]`
/// struct by its path as the module calling `graph!` names it (`Particle`,
/// `crate::sim::Particle`); or an error naming the known ones.
pub(crate) fn dtype(diags: &mut Ctxt, s: &S<String>, what: &str) -> Option<Elem> {
    let e = Elem::from_rust(&s.v)
        .or(match s.v.as_str() {
            "f16" => Some(Elem::F16),
            "bf16" => Some(Elem::Bf16),
            _ => None,
        })
        .or_else(|| Vector::from_rust(&s.v).map(Elem::Vector))
        .or_else(|| struct_path(&s.v).map(Elem::Struct));
    if e.is_none() {
        let names: Vec<&str> = Elem::ALL.map(Elem::rust_name).into_iter().chain(["f16", "bf16"]).collect();
        diags.push(
            s.span.clone(),
            format!(
                "{what}: unknown dtype `{}` (expected one of {}, a CUDA vector type such as `Float4` or `Half2`, or \
                 the path of a `#[derive(kgraph::DeviceStruct)]` struct such as `Particle` or `crate::sim::Particle`){}",
                s.v,
                list(names.iter().copied()),
                suggest(&s.v, names.iter().copied())
            ),
        );
    }
    e
}

/// A struct dtype: a Rust path without generics whose last segment starts with an upper-case
/// letter and is not a number type's name in another case (`F32` is a typo, not a struct).
fn struct_path(text: &str) -> Option<&'static str> {
    let path: syn::Path = syn::parse_str(text).ok()?;
    let last = path.segments.last()?;
    let name = last.ident.to_string();
    let generic = path.segments.iter().any(|s| !s.arguments.is_none());
    let typo = Elem::ALL.iter().chain(&[Elem::F16, Elem::Bf16]).any(|e| e.rust_name().eq_ignore_ascii_case(&name));
    let upper = name.chars().next().is_some_and(|c| c.is_ascii_uppercase());
    // The model's element types are `&'static str`: a spec's struct path lives for the macro's run.
    (upper && !generic && !typo).then(|| &*Box::leak(text.replace(' ', "").into_boxed_str()))
}

/// Whether a spec's dtype `spec` is the element type `decl` a kernel declares. A struct is
/// compared by its name (the last path segment), as the spec and the declaration may name it
/// from different modules; two different structs of one name then meet as a type error of the
/// generated launch, which rustc reports.
pub(crate) fn same_dtype(spec: Elem, decl: Elem) -> bool {
    match (spec, decl) {
        (Elem::Struct(a), Elem::Struct(b)) => a.rsplit("::").next() == b.rsplit("::").next(),
        _ => spec == decl,
    }
}

/// Checks that `value` fits `elem`; returns the typed constant or records an error.
pub(crate) fn typed_value(diags: &mut Ctxt, lit: &S<Lit>, elem: Elem, what: &str) -> Option<Value> {
    match &lit.v {
        Lit::Int(v) => int_value(diags, *v, &lit.span, elem, what),
        Lit::Float(text) => {
            if !matches!(elem, Elem::F32 | Elem::F64 | Elem::F16 | Elem::Bf16) {
                diags.push(lit.span.clone(), format!("dtype mismatch: {what} is {elem}, found the float `{text}`"));
                return None;
            }
            float_value(diags, text, &lit.span, elem, what)
        }
    }
}

/// A float constant for `elem` (`F32`, `F64`, `F16` or `BF16`). TOML's own `inf`, `-inf` and `nan` are kept
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
        // The half types by their limits: a magnitude above the largest finite value becomes
        // infinity, one below half the smallest subnormal rounds to 0.
        Elem::F16 | Elem::Bf16 => digits.parse::<f64>().map(|v| {
            let (max, min) = half_limits(elem);
            (v.abs() <= max, v.abs() < min / 2.0)
        }),
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

/// The largest finite value and the smallest positive subnormal of `f16` / `bf16`.
fn half_limits(elem: Elem) -> (f64, f64) {
    match elem {
        Elem::F16 => (65504.0, 5.960_464_477_539_063e-8),
        _ => (3.389_531_389_251_535_5e38, 9.183_549_615_799_121e-41),
    }
}

fn max_float(elem: Elem) -> String {
    match elem {
        Elem::F16 | Elem::Bf16 => format!("{:e}", half_limits(elem).0),
        Elem::F32 => format!("{:e}", f32::MAX),
        _ => format!("{:e}", f64::MAX),
    }
}

fn min_float(elem: Elem) -> String {
    // The smallest positive subnormal.
    match elem {
        Elem::F16 | Elem::Bf16 => format!("{:e}", half_limits(elem).1),
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
        // Integers every value of which up to here is exact (11 and 8 significand bits).
        Elem::F16 => (-(1 << 11), 1 << 11),
        Elem::Bf16 => (-(1 << 8), 1 << 8),
        Elem::Bool | Elem::Vector(_) | Elem::Struct(_) => {
            diags.push(span.clone(), format!("{what} is {elem}: a graph spec gives values to number parameters only"));
            return None;
        }
    };
    if v < range.0 || v > range.1 {
        let why = if matches!(elem, Elem::F32 | Elem::F64 | Elem::F16 | Elem::Bf16) { " exactly" } else { "" };
        diags.push(span.clone(), format!("{what} is {elem}: the value {v} does not fit{why}"));
        return None;
    }
    Some(Value::Int(v))
}
