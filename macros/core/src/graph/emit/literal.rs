//! Typed Rust literals for constants bound to kernel parameters.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::emit_util::{elem_in_hidden_module, ident};
use crate::graph::ir::Value;
use crate::syntax::model::Elem;

/// A typed literal for `elem`: `4096i32`, `0.5f32`, `f32::INFINITY`.
pub(crate) fn typed_literal(v: &Value, elem: Elem) -> TokenStream {
    match (elem, v) {
        (Elem::F32, _) => float_literal::<f32>(v),
        (Elem::F64, _) => float_literal::<f64>(v),
        // The nearest half value, rounded at compile time by `half` (`from_f32_const`).
        (Elem::F16 | Elem::Bf16, _) => {
            let (t, f) = (elem_in_hidden_module(elem), float_literal::<f32>(v));
            quote!(#t::from_f32_const(#f))
        }
        // A vector or struct starts zeroed (a spec gives no value for one; `set_<scalar>` does).
        (Elem::Vector(_) | Elem::Struct(_), _) => {
            let t = elem_in_hidden_module(elem);
            quote!(::kgraph::__private::zeroed::<#t>())
        }
        (_, Value::Int(i)) => int_literal(*i, elem),
        (_, Value::Float(_)) => unreachable!("validation rejects float literals for integer parameters"),
    }
}

/// An integer literal with `elem`'s suffix (validation checked that `i` fits).
fn int_literal(i: i128, elem: Elem) -> TokenStream {
    let lit = match elem {
        Elem::I8 => Literal::i8_suffixed(i as i8),
        Elem::U8 => Literal::u8_suffixed(i as u8),
        Elem::I16 => Literal::i16_suffixed(i as i16),
        Elem::U16 => Literal::u16_suffixed(i as u16),
        Elem::I32 => Literal::i32_suffixed(i as i32),
        Elem::U32 => Literal::u32_suffixed(i as u32),
        Elem::I64 => Literal::i64_suffixed(i as i64),
        _ => Literal::u64_suffixed(i as u64),
    };
    // A negative literal is an expression (`-5i32`); parenthesize so it stays one term.
    if i < 0 {
        quote!((#lit))
    } else {
        quote!(#lit)
    }
}

/// `f32` and `f64`, as far as writing their literals needs.
trait Float: Copy + PartialOrd + std::ops::Neg<Output = Self> + std::str::FromStr {
    /// The type's name, which also names its constants (`f32::NAN`).
    const NAME: &'static str;
    const NAN: Self;
    const ZERO: Self;
    /// The nearest value to an integer.
    fn from_int(i: i128) -> Self;
    fn is_nan(self) -> bool;
    fn is_infinite(self) -> bool;
    /// The suffixed literal (`0.5f32`).
    fn suffixed(self) -> Literal;
}

impl Float for f32 {
    const NAME: &'static str = "f32";
    const NAN: Self = f32::NAN;
    const ZERO: Self = 0.0;
    fn from_int(i: i128) -> Self {
        i as f32
    }
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    fn is_infinite(self) -> bool {
        f32::is_infinite(self)
    }
    fn suffixed(self) -> Literal {
        Literal::f32_suffixed(self)
    }
}

impl Float for f64 {
    const NAME: &'static str = "f64";
    const NAN: Self = f64::NAN;
    const ZERO: Self = 0.0;
    fn from_int(i: i128) -> Self {
        i as f64
    }
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    fn is_infinite(self) -> bool {
        f64::is_infinite(self)
    }
    fn suffixed(self) -> Literal {
        Literal::f64_suffixed(self)
    }
}

/// A float literal of type `F` for `v` (a TOML float text or an integer); NaN and the
/// infinities become the type's constants, a negative value a parenthesized negation.
fn float_literal<F: Float>(v: &Value) -> TokenStream {
    let v = match v {
        Value::Float(text) => text.replace('_', "").parse::<F>().unwrap_or(F::NAN),
        Value::Int(i) => F::from_int(*i),
    };
    let ty = ident(F::NAME);
    if v.is_nan() {
        quote!(#ty::NAN)
    } else if v.is_infinite() {
        if v > F::ZERO {
            quote!(#ty::INFINITY)
        } else {
            quote!(#ty::NEG_INFINITY)
        }
    } else if v < F::ZERO {
        let lit = (-v).suffixed();
        quote!((-#lit))
    } else {
        let lit = v.suffixed();
        quote!(#lit)
    }
}
