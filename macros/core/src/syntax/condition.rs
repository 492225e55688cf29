//! Launch-time requirements of a declaration, as the model holds them: the conditions of
//! `requires(<cond>, ...)` (comparisons over integer expressions, joined by `&&` and `||`) and
//! the alignments of `align(<param> = <bytes>)`, re-exported by [`super::model`]. A condition is
//! evaluated here ([`Cond::holds`]) exactly as the runtime's `kgraph::__private::requires`
//! evaluates it: in `i128`, checked, an operand without a value making its comparison false.
//! They are read by `requires.rs`.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::Ident;

use super::expr::{ExtentExpr, ExtentFn, ExtentOp};

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// The function of `kgraph::__private::requires` that compares this way.
    pub fn runtime_fn(self) -> &'static str {
        match self {
            CmpOp::Eq => "eq",
            CmpOp::Ne => "ne",
            CmpOp::Lt => "lt",
            CmpOp::Le => "le",
            CmpOp::Gt => "gt",
            CmpOp::Ge => "ge",
        }
    }

    fn compare(self, a: i128, b: i128) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }
}

/// A condition: comparisons joined by `&&` and `||` (no negation, so an arithmetic fault,
/// which makes its comparison false, can only make the whole condition false).
#[derive(Debug, Clone)]
pub enum Cond {
    /// `lhs op rhs`.
    Compare {
        /// The operator.
        op: CmpOp,
        /// Left operand.
        lhs: ExtentExpr,
        /// Right operand.
        rhs: ExtentExpr,
    },
    /// `a && b`.
    And(Box<Cond>, Box<Cond>),
    /// `a || b`.
    Or(Box<Cond>, Box<Cond>),
}

/// One condition of `requires(...)` as declared.
#[derive(Debug, Clone)]
pub struct Requirement {
    /// The condition.
    pub cond: Cond,
    /// As written (`input_stride >= 0`), for messages and the runtime error.
    pub text: String,
    /// Where it is written.
    pub span: Span,
}

/// `align(x = 16)`: pointer parameter `param`'s address is a multiple of `bytes`.
#[derive(Debug, Clone)]
pub struct Align {
    /// The pointer parameter.
    pub param: Ident,
    /// The alignment in bytes: a power of two from 1 to 256.
    pub bytes: u64,
    /// Where `param = bytes` is written.
    pub span: Span,
}

/// The most an `align` may ask: every CUDA allocation (and so every whole buffer of a graph
/// struct) starts at a multiple of 256 bytes.
pub const MAX_ALIGN: u64 = 256;

impl Cond {
    /// Every operand expression, left to right.
    fn operands(&self) -> Vec<&ExtentExpr> {
        match self {
            Cond::Compare { lhs, rhs, .. } => vec![lhs, rhs],
            Cond::And(a, b) | Cond::Or(a, b) => {
                let mut out = a.operands();
                out.extend(b.operands());
                out
            }
        }
    }

    /// Every parameter name the condition uses, in order (with repeats).
    pub fn names(&self) -> Vec<&Ident> {
        self.operands().into_iter().flat_map(|e| e.names()).collect()
    }

    /// The names whose values a refusal shows: each parameter once, then each of `grid.x` ...
    /// `block.z` the condition uses, in order.
    pub fn value_names(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for name in self.names() {
            let name = name.unraw().to_string();
            if !out.contains(&name) {
                out.push(name);
            }
        }
        for e in self.operands() {
            for launch in e.launch_names() {
                if !out.iter().any(|n| n == launch) {
                    out.push(launch.to_string());
                }
            }
        }
        out
    }

    /// Whether the condition holds where `value` gives each name's value (`grid.x` and the like
    /// by their text), evaluated as the runtime does; an unknown name is a fault (false).
    pub fn holds(&self, value: &dyn Fn(&str) -> Option<i128>) -> bool {
        match self {
            Cond::Compare { op, lhs, rhs } => {
                matches!((evaluate(lhs, value), evaluate(rhs, value)), (Some(a), Some(b)) if op.compare(a, b))
            }
            Cond::And(a, b) => a.holds(value) && b.holds(value),
            Cond::Or(a, b) => a.holds(value) || b.holds(value),
        }
    }
}

/// `expr` in `i128`, checked; `None` on overflow, division by zero or an unknown name.
pub fn evaluate(expr: &ExtentExpr, value: &dyn Fn(&str) -> Option<i128>) -> Option<i128> {
    match expr {
        ExtentExpr::Int { value, .. } => Some(i128::from(*value)),
        ExtentExpr::Name(name) => value(&name.unraw().to_string()),
        ExtentExpr::Launch { dim, axis, .. } => value(dim.text(*axis)),
        ExtentExpr::Binary { op, lhs, rhs } => {
            let (a, b) = (evaluate(lhs, value)?, evaluate(rhs, value)?);
            match op {
                ExtentOp::Add => a.checked_add(b),
                ExtentOp::Sub => a.checked_sub(b),
                ExtentOp::Mul => a.checked_mul(b),
                ExtentOp::Div => a.checked_div(b),
                ExtentOp::Rem => a.checked_rem(b),
            }
        }
        ExtentExpr::Call { func, a, b } => {
            let (a, b) = (evaluate(a, value)?, evaluate(b, value)?);
            Some(match func {
                ExtentFn::Min => a.min(b),
                ExtentFn::Max => a.max(b),
            })
        }
    }
}
