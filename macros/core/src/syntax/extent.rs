//! Extents: how many elements a pointer parameter must hold, written as the length of an
//! array type in the declaration (`x: &[f32; n]`, `w: &[f32; n_hid * (n_in + n_hid)]`,
//! `snap: Pinned<[f32; batch * 40]>`, `out: &mut [f32; grid.x * hidden]`). An extent is an
//! integer expression over the kernel's scalar parameters, the launch's shape (`grid.x` ...
//! `block.z`) and integer literals with `+ - * / %`, parentheses, `min(a, b)` and `max(a, b)`. This file reads them from `syn::Expr` into the model's [`Extent`] and says
//! which type each is computed in; which names are allowed is a rule of
//! `kernel/extent_rules` (it needs the whole parameter list).

use syn::spanned::Spanned;

use super::model::{Axis, Elem, Extent, ExtentExpr, ExtentFn, ExtentOp, KernelDecl, LaunchDim};

/// The type C evaluates an extent in, from the types of the scalars it names (the usual
/// arithmetic conversions: everything narrower than `int` becomes `int`; `unsigned int` wins
/// over `int`; a 64-bit type over 32-bit ones; `unsigned long long` over everything). An
/// extent of literals only is `long long`. Always one of `I32`, `U32`, `I64`, `U64`.
pub fn evaluation_type(scalars: impl IntoIterator<Item = Elem>) -> Elem {
    let rank = |e: Elem| match e {
        Elem::U64 => 4,
        Elem::I64 => 3,
        Elem::U32 => 2,
        _ => 1,
    };
    match scalars.into_iter().map(rank).max() {
        None => Elem::I64,
        Some(4) => Elem::U64,
        Some(3) => Elem::I64,
        Some(2) => Elem::U32,
        Some(_) => Elem::I32,
    }
}

/// The type the extent is computed in, from the scalars of `decl` it names. `grid.x`,
/// `block.x` and the like count as `int`, not as C's `unsigned int` `gridDim`/`blockDim`:
/// kernels copy them into `int` (`int row = blockIdx.x;`), so an extent that overflows `int`
/// must refuse the launch rather than wrap in the kernel (every grid and block size fits `int`).
pub fn extent_type(decl: &KernelDecl, extent: &Extent) -> Elem {
    let scalar = |name: &syn::Ident| decl.param(&name.to_string()).map(|p| p.kind.elem());
    let launch = extent.expr.uses_launch().then_some(Elem::I32);
    evaluation_type(extent.expr.names().into_iter().filter_map(scalar).chain(launch))
}

/// The type C computes `expr` (a whole extent or a part of one) in, operation by operation:
/// a scalar in its promoted type (`int` for anything narrower), `grid.x` ... `block.z` in `int`
/// (as in [`extent_type`]), a literal in `int` when it fits, else `long long` (`unsigned long
/// long` past that, as nvcc reads a decimal literal too large for any signed type), and each
/// `+ - * / %`, `min`, `max` in the wider of its operands' types (the usual arithmetic
/// conversions, [`evaluation_type`] of the two). `(end - start) + offset` with `unsigned int`
/// `end` and `start` and a `long long` `offset` subtracts in `unsigned int` (where C wraps),
/// then adds in `long long`: the checked launch computes each operation in this type, so an
/// operation C would overflow or wrap is refused even where a wider type would hold it. An
/// extent of literals only is computed in `long long` throughout ([`extent_type`]), not here.
pub fn operation_type(decl: &KernelDecl, expr: &ExtentExpr) -> Elem {
    match expr {
        ExtentExpr::Int { value, .. } => match *value {
            v if v <= i32::MAX as u64 => Elem::I32,
            v if v <= i64::MAX as u64 => Elem::I64,
            _ => Elem::U64,
        },
        ExtentExpr::Name(name) => evaluation_type(decl.param(&name.to_string()).map(|p| p.kind.elem())),
        ExtentExpr::Launch { .. } => Elem::I32,
        ExtentExpr::Binary { lhs: a, rhs: b, .. } | ExtentExpr::Call { a, b, .. } => {
            evaluation_type([operation_type(decl, a), operation_type(decl, b)])
        }
    }
}

const EXTENT_HELP: &str = "an extent is an integer expression over the kernel's scalar parameters, the launch's \
     shape (`grid.x`, `grid.y`, `grid.z`, `block.x`, `block.y`, `block.z`) and integer literals: `+ - * / %`, \
     parentheses, `min(a, b)`, `max(a, b)`, e.g. `[f32; batch * (n_in + n_hid)]`, `[f32; grid.x * hidden]`";

/// Which grammar an expression is read with: an extent's (`shared`'s too), or the arithmetic of
/// a `requires` condition, which also takes integer constants (`i32::MAX`) and unary minus.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Grammar {
    /// "an extent", "a `requires` condition": what is being read, for messages.
    pub name: &'static str,
    /// What the grammar accepts, for messages.
    pub help: &'static str,
    /// Whether `i32::MAX`-style constants and unary `-` are allowed.
    pub constants: bool,
}

/// An extent's grammar.
const EXTENT: Grammar = Grammar { name: "an extent", help: EXTENT_HELP, constants: false };

/// Reads an extent from the length expression of an array type; `text` is how it is written.
pub fn extent_from_expr(expr: &syn::Expr, text: String) -> syn::Result<Extent> {
    Ok(Extent { expr: read_expr(expr, EXTENT)?, text, span: expr.span() })
}

/// Reads the dynamic shared memory requirement of `shared = <expr>` (bytes), an expression of
/// the same form as an extent.
pub fn shared_from_expr(expr: &syn::Expr, text: String) -> syn::Result<Extent> {
    Ok(Extent { expr: read_expr(expr, EXTENT)?, text, span: expr.span() })
}

/// `grid.x` ... `block.z`; `Err` for another field of `grid` or `block`, `Ok(None)` for any other
/// field expression.
fn launch_field(field: &syn::ExprField) -> syn::Result<Option<(LaunchDim, Axis)>> {
    let syn::Expr::Path(base) = &*field.base else { return Ok(None) };
    let dim = if base.path.is_ident("grid") {
        LaunchDim::Grid
    } else if base.path.is_ident("block") {
        LaunchDim::Block
    } else {
        return Ok(None);
    };
    let axis = match &field.member {
        syn::Member::Named(axis) => {
            [("x", Axis::X), ("y", Axis::Y), ("z", Axis::Z)].into_iter().find(|(n, _)| axis == n).map(|(_, a)| a)
        }
        syn::Member::Unnamed(_) => None,
    };
    let name = if dim == LaunchDim::Grid { "grid" } else { "block" };
    match axis {
        Some(axis) => Ok(Some((dim, axis))),
        None => Err(syn::Error::new_spanned(
            field,
            format!("the launch's {name} has axes `{name}.x`, `{name}.y` and `{name}.z`"),
        )),
    }
}

/// Reads `expr` with `grammar`.
pub(crate) fn read_expr(expr: &syn::Expr, grammar: Grammar) -> syn::Result<ExtentExpr> {
    let read = |e: &syn::Expr| read_expr(e, grammar);
    let unsupported =
        |what: &str| syn::Error::new_spanned(expr, format!("{what} in {}: {}", grammar.name, grammar.help));
    match expr {
        syn::Expr::Paren(p) => read(&p.expr),
        syn::Expr::Group(g) => read(&g.expr),
        syn::Expr::Field(f) => match launch_field(f)? {
            Some((dim, axis)) => Ok(ExtentExpr::Launch { dim, axis, span: f.span() }),
            None => Err(unsupported("a field")),
        },
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(lit), .. }) => {
            if !lit.suffix().is_empty() {
                let message = format!("{}'s literals take no suffix (`40`, not `40i32`)", grammar.name);
                return Err(syn::Error::new(lit.span(), message));
            }
            let value = lit.base10_parse::<u64>()?;
            Ok(ExtentExpr::Int { value, span: lit.span() })
        }
        syn::Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => match p.path.get_ident() {
            Some(ident) => Ok(ExtentExpr::Name(ident.clone())),
            None if grammar.constants => integer_constant(p),
            None => Err(unsupported("a path")),
        },
        // `-e` is `0 - e`, exact in a condition's `i128`.
        syn::Expr::Unary(u) if grammar.constants && matches!(u.op, syn::UnOp::Neg(_)) => {
            let zero = ExtentExpr::Int { value: 0, span: u.op.span() };
            Ok(ExtentExpr::Binary { op: ExtentOp::Sub, lhs: Box::new(zero), rhs: Box::new(read(&u.expr)?) })
        }
        syn::Expr::Binary(b) => {
            let op = match b.op {
                syn::BinOp::Add(_) => ExtentOp::Add,
                syn::BinOp::Sub(_) => ExtentOp::Sub,
                syn::BinOp::Mul(_) => ExtentOp::Mul,
                syn::BinOp::Div(_) => ExtentOp::Div,
                syn::BinOp::Rem(_) => ExtentOp::Rem,
                _ => {
                    let message = format!("unsupported operator: {}", grammar.help);
                    return Err(syn::Error::new_spanned(b.op, message));
                }
            };
            Ok(ExtentExpr::Binary { op, lhs: Box::new(read(&b.left)?), rhs: Box::new(read(&b.right)?) })
        }
        syn::Expr::Call(call) => read_call(call, grammar),
        syn::Expr::Lit(_) => Err(unsupported("a non-integer literal")),
        _ => Err(unsupported("an unsupported expression")),
    }
}

fn read_call(call: &syn::ExprCall, grammar: Grammar) -> syn::Result<ExtentExpr> {
    let func = match &*call.func {
        syn::Expr::Path(p) if p.path.is_ident("min") => ExtentFn::Min,
        syn::Expr::Path(p) if p.path.is_ident("max") => ExtentFn::Max,
        other => {
            return Err(syn::Error::new_spanned(
                other,
                format!("{} calls only `min(a, b)` and `max(a, b)`: {}", grammar.name, grammar.help),
            ))
        }
    };
    let args: Vec<&syn::Expr> = call.args.iter().collect();
    let [a, b] = args[..] else {
        return Err(syn::Error::new_spanned(call, "`min` and `max` take two arguments"));
    };
    Ok(ExtentExpr::Call { func, a: Box::new(read_expr(a, grammar)?), b: Box::new(read_expr(b, grammar)?) })
}

/// `i32::MAX`, `u64::MAX`, `i64::MIN` and the like: the bound of a Rust integer type, as
/// literals (a `MIN` below zero as `0 - |MIN|`).
fn integer_constant(path: &syn::ExprPath) -> syn::Result<ExtentExpr> {
    let span = path.span();
    let words: Vec<String> = path.path.segments.iter().map(|s| s.ident.to_string()).collect();
    let bits = |ty: &str| -> Option<(bool, u32)> {
        let signed = ty.starts_with('i');
        let bits = ty.strip_prefix(['i', 'u'])?.parse().ok()?;
        [8, 16, 32, 64].contains(&bits).then_some((signed, bits))
    };
    let value = match words.as_slice() {
        [ty, bound]
            if path.path.leading_colon.is_none() && path.path.segments.iter().all(|s| s.arguments.is_empty()) =>
        {
            bits(ty).and_then(|(signed, bits)| match (bound.as_str(), signed) {
                ("MAX", true) => Some((false, (1u64 << (bits - 1)) - 1)),
                ("MAX", false) => Some((false, u64::MAX >> (64 - bits))),
                ("MIN", true) => Some((true, 1u64 << (bits - 1))),
                ("MIN", false) => Some((false, 0)),
                _ => None,
            })
        }
        _ => None,
    };
    match value {
        Some((false, value)) => Ok(ExtentExpr::Int { value, span }),
        Some((true, magnitude)) => Ok(ExtentExpr::Binary {
            op: ExtentOp::Sub,
            lhs: Box::new(ExtentExpr::Int { value: 0, span }),
            rhs: Box::new(ExtentExpr::Int { value: magnitude, span }),
        }),
        None => Err(syn::Error::new(
            span,
            "the constants a `requires` condition may name are the bounds of Rust's integer types: `i32::MAX`, \
             `u32::MAX`, `i64::MAX`, `i64::MIN`, ... (`i8` to `u64`)",
        )),
    }
}
