//! The spec's declarations, one function per kind: the `[kernels]` table, dims, buffers and
//! scalars, each checked (names, dtypes, roles, lengths, defaults) and entered into the one
//! namespace they share.

use super::context::{Ctx, NameKind};
use super::module::module_path;
use super::values::{dtype, num_src, typed_value};
use crate::graph::ir::{Buffer, Dim, Role, Scalar, Value};
use crate::graph::spec::diag::{list, suggest};
use crate::graph::spec::{RawBuffer, RawSpec, Span, S};
use crate::syntax::naming::is_snake_ident;

/// Declared items that validated, with the span of each one's name (for later reports).
pub(crate) struct Declared<T> {
    pub items: Vec<T>,
    pub spans: Vec<Span>,
}

impl<T> Declared<T> {
    fn push(&mut self, item: T, span: Span) {
        self.items.push(item);
        self.spans.push(span);
    }
}

impl<T> Default for Declared<T> {
    fn default() -> Self {
        Declared { items: Vec::new(), spans: Vec::new() }
    }
}

/// Enters `name` into the namespace: it must be a snake_case identifier, declared once.
fn check_name(cx: &mut Ctx<'_>, name: &S<String>, kind: NameKind) -> bool {
    if !is_snake_ident(&name.v) {
        cx.diags.push(
            name.span.clone(),
            format!("{kind} name `{}` must be a lowercase snake_case Rust identifier (not a keyword)", name.v),
        );
        return false;
    }
    if let Some((other, _)) = cx.names.get(&name.v) {
        cx.diags.push(
            name.span.clone(),
            format!(
                "duplicate name `{}`: already declared as a {other} (dims, buffers and scalars share one namespace)",
                name.v
            ),
        );
        cx.poisoned.insert(name.v.clone());
        return false;
    }
    cx.names.insert(name.v.clone(), (kind, name.span.clone()));
    true
}

/// `[kernels]`: the Rust file with the declarations (as written) and the module path of the
/// handles (`None` when missing or not a path; reported).
pub(crate) fn kernels_table(cx: &mut Ctx<'_>, raw: &RawSpec) -> (String, Option<syn::Path>) {
    let Some(k) = &raw.kernels else {
        cx.diags.push(
            0..0,
            "the spec has no `[kernels]` table: add `source = \"src/....rs\"` (the Rust file with the `#[kernel]` declarations) and `module = \"crate::...\"` (where their handle types live)",
        );
        return (String::new(), None);
    };
    let source = match &k.source {
        Some(s) => s.v.clone(),
        None => {
            cx.diags.push(k.key.clone(), "`[kernels]` has no `source` (the Rust file with the `#[kernel]` declarations, relative to the crate root)");
            String::new()
        }
    };
    (source, module_path(cx, k))
}

/// `[dims]`: sizes, at least 0; each becomes usable in expressions.
pub(crate) fn dims(cx: &mut Ctx<'_>, raw: &RawSpec) -> Vec<Dim> {
    let mut dims = Vec::new();
    for d in &raw.dims {
        if !(0..=i128::from(i64::MAX)).contains(&d.value.v) {
            cx.diags
                .push(d.value.span.clone(), format!("dim `{}` = {}: dims are sizes, at least 0", d.name.v, d.value.v));
            cx.poisoned.insert(d.name.v.clone());
            continue;
        }
        if check_name(cx, &d.name, NameKind::Dim) {
            cx.dims.insert(d.name.v.clone(), d.value.v);
            dims.push(Dim { name: d.name.v.clone(), value: d.value.v });
        }
    }
    dims
}

/// `[buffers.*]`: each with a known dtype and role and a positive length.
pub(crate) fn buffers(cx: &mut Ctx<'_>, raw: &RawSpec) -> Declared<Buffer> {
    let mut out = Declared::default();
    for b in &raw.buffers {
        let named = check_name(cx, &b.name, NameKind::Buffer);
        let what = format!("buffer `{}`", b.name.v);
        let elem = match &b.dtype {
            Some(d) => dtype(cx.diags, d, &what),
            None => {
                cx.diags.push(b.name.span.clone(), format!("{what} has no `dtype` (e.g. `dtype = \"f32\"`)"));
                None
            }
        };
        let role = buffer_role(cx, b, &what);
        let len = buffer_len(cx, b, &what, role);
        if let (true, Some(elem), Some(role), Some(len)) = (named, elem, role, len) {
            let len_src = b.len.as_ref().map_or_else(|| "1".to_string(), |l| num_src(&l.v));
            out.push(
                Buffer {
                    name: b.name.v.clone(),
                    elem,
                    len,
                    len_src,
                    role,
                    doc: b.doc.clone(),
                    plan: b.plan.as_ref().map_or(true, |p| p.v),
                },
                b.name.span.clone(),
            );
        }
    }
    out
}

fn buffer_role(cx: &mut Ctx<'_>, b: &RawBuffer, what: &str) -> Option<Role> {
    let Some(r) = &b.role else {
        cx.diags.push(
            b.name.span.clone(),
            format!("{what} has no `role` (input, output, parameter, state, scratch, pinned, slot or pinned_out)"),
        );
        return None;
    };
    let found = Role::ALL.iter().find(|(_, n)| *n == r.v).map(|(role, _)| *role);
    if found.is_none() {
        let names = Role::ALL.map(|(_, n)| n);
        cx.diags.push(
            r.span.clone(),
            format!("{what}: unknown role `{}` (expected one of {}){}", r.v, list(names), suggest(&r.v, names)),
        );
    }
    found
}

/// A buffer's `len` is below this: 2^48 elements, far more than any device holds, so a length
/// in bytes stays far from overflowing.
pub(crate) const LEN_BOUND: i128 = 1 << 48;

/// The length: required except for a slot (one value), at least 1 and below [`LEN_BOUND`].
fn buffer_len(cx: &mut Ctx<'_>, b: &RawBuffer, what: &str, role: Option<Role>) -> Option<u64> {
    let Some(l) = &b.len else {
        if role == Some(Role::Slot) {
            return Some(1);
        }
        cx.diags.push(b.name.span.clone(), format!("{what} has no `len` (an integer or an expression over dims)"));
        return None;
    };
    let v = cx.whole(l, &format!("{what}: `len`"))?;
    if v <= 0 || v >= LEN_BOUND {
        cx.diags.push(l.span.clone(), format!("{what}: `len` = {v}, must be at least 1 and below 2^48 ({LEN_BOUND})"));
        None
    } else if role == Some(Role::Slot) && v != 1 {
        cx.diags.push(
            l.span.clone(),
            format!("{what}: a `slot` holds one value, but `len` = {v}; use role `pinned` for a buffer"),
        );
        None
    } else {
        Some(v as u64)
    }
}

/// `[scalars.*]`: each with a known dtype and a default that fits it (0 when not given).
pub(crate) fn scalars(cx: &mut Ctx<'_>, raw: &RawSpec) -> Declared<Scalar> {
    let mut out = Declared::default();
    for s in &raw.scalars {
        let named = check_name(cx, &s.name, NameKind::Scalar);
        let what = format!("scalar `{}`", s.name.v);
        let Some(dtype_key) = &s.dtype else {
            cx.diags.push(s.name.span.clone(), format!("{what} has no `dtype` (e.g. `dtype = \"f32\"`)"));
            continue;
        };
        let Some(elem) = dtype(cx.diags, dtype_key, &what) else { continue };
        let default = match &s.default {
            Some(lit) => typed_value(cx.diags, lit, elem, &what),
            None => Some(Value::Int(0)),
        };
        if let (true, Some(default)) = (named, default) {
            out.push(Scalar { name: s.name.v.clone(), elem, default, doc: s.doc.clone() }, s.name.span.clone());
        }
    }
    out
}
