//! Checks a raw spec against itself and the kernels' `#[kernel]` declarations and builds the
//! validated [`GraphIr`]. Every problem is recorded (nothing stops at the first error); what
//! cannot be resolved is skipped so one mistake yields one message, not a cascade.

use std::collections::BTreeMap;

use super::bind::bind_nodes;
use super::diag::{list, suggest, Diagnostics};
use super::expr;
use super::ir::{Buffer, Dim, GraphIr, Role, Scalar, Value};
use super::spec::{Lit, Num, RawSpec, Span, S};
use crate::model::{Elem, KernelDecl};

/// What is known of the kernel declarations when validating.
#[derive(Debug, Clone)]
pub enum Kernels {
    /// Declarations read from the spec's `[kernels] source`.
    Loaded(Vec<KernelDecl>),
    /// They could not be read (already reported): kernel-dependent checks are skipped.
    Unavailable,
}

/// Generated method names a spec name must not produce (see `codegen`).
pub const RESERVED_METHODS: &[&str] = &[
    "new",
    "device",
    "run_eager",
    "capture",
    "capture_serialized",
    "replay",
    "graph",
    "graph_nodes",
    "is_captured",
    "pdl_enabled",
    "set_pdl_enabled",
];
/// Generated associated constants a spec name must not produce.
pub const RESERVED_CONSTS: &[&str] = &["SPEC", "NODES", "EDGES", "NODE_PDL", "PDL_EDGES", "DOT", "MERMAID"];

/// Shared state of one validation run.
pub(crate) struct Ctx<'a> {
    pub diags: &'a mut Diagnostics,
    /// Name → (kind, span of its declaration), for dims, buffers and scalars.
    pub names: BTreeMap<String, (&'static str, Span)>,
    pub dims: BTreeMap<String, i128>,
    /// Names declared more than once: references to them are not reported again.
    pub poisoned: std::collections::BTreeSet<String>,
}

impl Ctx<'_> {
    /// Evaluates a `Num` to a whole number; errors point inside the expression when possible.
    pub fn whole(&mut self, n: &S<Num>, what: &str) -> Option<i128> {
        match &n.v {
            Num::Int(v) => Some(*v),
            Num::Expr(src, start) => {
                let at = |r: std::ops::Range<usize>| match start {
                    Some(s) => s + r.start..s + r.end.max(r.start + 1).min(src.len().max(1)),
                    None => n.span.clone(),
                };
                let e = match expr::parse(src) {
                    Ok(e) => e,
                    Err(err) => {
                        self.diags.error(at(err.span), format!("{what}: cannot parse `{src}`: {}", err.message));
                        return None;
                    }
                };
                let mut ok = true;
                for (name, span) in e.names() {
                    if !self.dims.contains_key(name) {
                        ok = false;
                        let kind = match self.names.get(name) {
                            Some((kind, _)) => format!("; `{name}` is a {kind}, only dims can appear in expressions"),
                            None => suggest(name, self.dims.keys().map(String::as_str)),
                        };
                        self.diags.error(at(span), format!("{what}: unknown dim `{name}` in `{src}`{kind}"));
                    }
                }
                if !ok {
                    return None;
                }
                match e.eval(&self.dims) {
                    Ok(r) => match r.whole() {
                        Some(v) => Some(v),
                        None => {
                            self.diags.error(
                                n.span.clone(),
                                format!("{what}: `{src}` = {r} is not a whole number; round it with ceil() or floor()"),
                            );
                            None
                        }
                    },
                    Err(msg) => {
                        self.diags.error(n.span.clone(), format!("{what}: `{src}`: {msg}"));
                        None
                    }
                }
            }
        }
    }
}

/// The source text of a `Num`, for docs.
pub(crate) fn num_src(n: &Num) -> String {
    match n {
        Num::Int(v) => v.to_string(),
        Num::Expr(s, _) => s.clone(),
    }
}

fn elem_of(diags: &mut Diagnostics, s: &S<String>, what: &str) -> Option<Elem> {
    let e = Elem::from_rust(&s.v);
    if e.is_none() {
        let names = Elem::ALL.map(Elem::rust_name);
        diags.error(
            s.span.clone(),
            format!("{what}: unknown dtype `{}` (expected one of {}){}", s.v, list(names), suggest(&s.v, names)),
        );
    }
    e
}

/// True for names usable as Rust identifiers in generated methods: `[a-z][a-z0-9_]*`, no keyword.
pub(crate) fn is_snake_ident(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && syn::parse_str::<syn::Ident>(name).is_ok()
}

fn check_name(cx: &mut Ctx<'_>, name: &S<String>, kind: &'static str) -> bool {
    if !is_snake_ident(&name.v) {
        cx.diags.error(
            name.span.clone(),
            format!("{kind} name `{}` must be a lowercase snake_case Rust identifier (not a keyword)", name.v),
        );
        return false;
    }
    if let Some((other, _)) = cx.names.get(&name.v) {
        cx.diags.error(
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

/// Checks that `value` fits `elem`; returns the typed constant or records an error.
pub(crate) fn typed_value(diags: &mut Diagnostics, lit: &S<Lit>, elem: Elem, what: &str) -> Option<Value> {
    match &lit.v {
        Lit::Int(v) => int_value(diags, *v, &lit.span, elem, what),
        Lit::Float(text) => {
            if !matches!(elem, Elem::F32 | Elem::F64) {
                diags.error(lit.span.clone(), format!("dtype mismatch: {what} is {elem}, found the float `{text}`"));
                return None;
            }
            Some(Value::Float(text.clone()))
        }
    }
}

/// An integer constant for `elem` (range-checked; exactly representable for floats).
pub(crate) fn int_value(diags: &mut Diagnostics, v: i128, span: &Span, elem: Elem, what: &str) -> Option<Value> {
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
    };
    if v < range.0 || v > range.1 {
        let why = if matches!(elem, Elem::F32 | Elem::F64) { " exactly" } else { "" };
        diags.error(span.clone(), format!("{what} is {elem}: the value {v} does not fit{why}"));
        return None;
    }
    Some(Value::Int(v))
}

/// Validates `raw` against `kernels`; `None` when anything is wrong (all reported in `diags`).
pub fn validate(raw: &RawSpec, kernels: &Kernels, spec_path: &str, diags: &mut Diagnostics) -> Option<GraphIr> {
    let errors_before = diags.len();
    let mut cx = Ctx { diags, names: BTreeMap::new(), dims: BTreeMap::new(), poisoned: Default::default() };

    let (mut kernel_source, mut module) = (String::new(), None);
    match &raw.kernels {
        None => cx.diags.error(
            0..0,
            "the spec has no `[kernels]` table: add `source = \"src/....rs\"` (the Rust file with the `#[kernel]` declarations) and `module = \"crate::...\"` (where their handle types live)",
        ),
        Some(k) => {
            match &k.source {
                Some(s) => kernel_source = s.v.clone(),
                None => cx.diags.error(k.key.clone(), "`[kernels]` has no `source` (the Rust file with the `#[kernel]` declarations, relative to the crate root)"),
            }
            match &k.module {
                Some(m) => match syn::parse_str::<syn::Path>(&m.v) {
                    Ok(p) => module = Some(p),
                    Err(_) => cx.diags.error(m.span.clone(), format!("`kernels.module`: `{}` is not a Rust path (e.g. `crate::model`)", m.v)),
                },
                None => cx.diags.error(k.key.clone(), "`[kernels]` has no `module` (the Rust module path of the generated kernel handles, e.g. `crate::model`)"),
            }
        }
    }

    let mut dims = Vec::new();
    for d in &raw.dims {
        if !(0..=i128::from(i64::MAX)).contains(&d.value.v) {
            cx.diags
                .error(d.value.span.clone(), format!("dim `{}` = {}: dims are sizes, at least 0", d.name.v, d.value.v));
            cx.poisoned.insert(d.name.v.clone());
            continue;
        }
        if check_name(&mut cx, &d.name, "dim") {
            cx.dims.insert(d.name.v.clone(), d.value.v);
            dims.push(Dim { name: d.name.v.clone(), value: d.value.v });
        }
    }

    let mut buffers = Vec::new();
    let mut buffer_spans = Vec::new();
    for b in &raw.buffers {
        let named = check_name(&mut cx, &b.name, "buffer");
        let what = format!("buffer `{}`", b.name.v);
        let elem = match &b.dtype {
            Some(d) => elem_of(cx.diags, d, &what),
            None => {
                cx.diags.error(b.name.span.clone(), format!("{what} has no `dtype` (e.g. `dtype = \"f32\"`)"));
                None
            }
        };
        let role = match &b.role {
            Some(r) => {
                let found = Role::ALL.iter().find(|(_, n)| *n == r.v).map(|(role, _)| *role);
                if found.is_none() {
                    let names = Role::ALL.map(|(_, n)| n);
                    cx.diags.error(
                        r.span.clone(),
                        format!(
                            "{what}: unknown role `{}` (expected one of {}){}",
                            r.v,
                            list(names),
                            suggest(&r.v, names)
                        ),
                    );
                }
                found
            }
            None => {
                cx.diags.error(
                    b.name.span.clone(),
                    format!(
                        "{what} has no `role` (input, output, parameter, state, scratch, pinned, slot or pinned_out)"
                    ),
                );
                None
            }
        };
        let len = match (&b.len, role) {
            (None, Some(Role::Slot)) => Some(1),
            (None, _) => {
                cx.diags
                    .error(b.name.span.clone(), format!("{what} has no `len` (an integer or an expression over dims)"));
                None
            }
            (Some(l), _) => cx.whole(l, &format!("{what}: `len`")).and_then(|v| {
                if v <= 0 || v > 1 << 48 {
                    cx.diags.error(l.span.clone(), format!("{what}: `len` = {v}, must be at least 1 (and below 2^48)"));
                    None
                } else if role == Some(Role::Slot) && v != 1 {
                    cx.diags.error(
                        l.span.clone(),
                        format!("{what}: a `slot` holds one value, but `len` = {v}; use role `pinned` for a buffer"),
                    );
                    None
                } else {
                    Some(v as u64)
                }
            }),
        };
        if let (true, Some(elem), Some(role), Some(len)) = (named, elem, role, len) {
            let len_src = b.len.as_ref().map_or_else(|| "1".to_string(), |l| num_src(&l.v));
            buffers.push(Buffer { name: b.name.v.clone(), elem, len, len_src, role, doc: b.doc.clone() });
            buffer_spans.push(b.name.span.clone());
        }
    }

    let mut scalars = Vec::new();
    let mut scalar_spans = Vec::new();
    for s in &raw.scalars {
        let named = check_name(&mut cx, &s.name, "scalar");
        let what = format!("scalar `{}`", s.name.v);
        let Some(dtype) = &s.dtype else {
            cx.diags.error(s.name.span.clone(), format!("{what} has no `dtype` (e.g. `dtype = \"f32\"`)"));
            continue;
        };
        let Some(elem) = elem_of(cx.diags, dtype, &what) else { continue };
        let default = match &s.default {
            Some(lit) => typed_value(cx.diags, lit, elem, &what),
            None => Some(Value::Int(0)),
        };
        if let (true, Some(default)) = (named, default) {
            scalars.push(Scalar { name: s.name.v.clone(), elem, default, doc: s.doc.clone() });
            scalar_spans.push(s.name.span.clone());
        }
    }

    check_generated_names(&mut cx, &dims, &buffers, &scalars);

    let decls = match kernels {
        Kernels::Loaded(d) => d.as_slice(),
        Kernels::Unavailable => return None,
    };
    let bound = bind_nodes(&mut cx, raw, decls, &buffers, &scalars);
    // Order and usage are whole-graph properties: judged only when every node bound (else a
    // node that failed would make its buffers look unused or unwritten).
    if bound.nodes.len() == raw.nodes.len() {
        super::bind::check_usage(&mut cx, &bound, &buffers, &buffer_spans, &scalars, &scalar_spans);
    }
    if cx.diags.len() > errors_before {
        return None;
    }
    Some(GraphIr {
        spec_path: spec_path.to_string(),
        doc: raw.doc.clone(),
        kernel_source,
        module: module?,
        dims,
        buffers,
        scalars,
        kernels: bound.kernels,
        nodes: bound.nodes,
    })
}

/// The generated method and constant names, checked against each other and the fixed ones.
fn check_generated_names(cx: &mut Ctx<'_>, dims: &[Dim], buffers: &[Buffer], scalars: &[Scalar]) {
    let mut methods: BTreeMap<String, String> =
        RESERVED_METHODS.iter().map(|m| (m.to_string(), "a method every graph has".to_string())).collect();
    let mut consts: BTreeMap<String, String> =
        RESERVED_CONSTS.iter().map(|c| (c.to_string(), "a constant every graph has".to_string())).collect();
    let mut wanted: Vec<(String, bool, String, String)> = Vec::new(); // (item, is_method, owner, owner name)
    for d in dims {
        wanted.push((d.name.to_uppercase(), false, format!("dim `{}`", d.name), d.name.clone()));
    }
    for b in buffers {
        let owner = format!("buffer `{}`", b.name);
        wanted.push((b.name.clone(), true, owner.clone(), b.name.clone()));
        wanted.push((format!("{}_LEN", b.name.to_uppercase()), false, owner.clone(), b.name.clone()));
        for m in super::codegen::host_methods(b.role) {
            wanted.push((m.replace("{}", &b.name), true, owner.clone(), b.name.clone()));
        }
    }
    for s in scalars {
        let owner = format!("scalar `{}`", s.name);
        wanted.push((s.name.clone(), true, owner.clone(), s.name.clone()));
        wanted.push((format!("set_{}", s.name), true, owner, s.name.clone()));
    }
    for (item, is_method, owner, name) in wanted {
        let table = if is_method { &mut methods } else { &mut consts };
        if let Some(prev) = table.get(&item) {
            let span = cx.names.get(&name).map(|(_, s)| s.clone()).unwrap_or(0..0);
            let kind = if is_method { "method" } else { "constant" };
            let msg = format!("{owner} would generate the {kind} `{item}`, which is already {prev}; rename it");
            cx.diags.error(span, msg);
        } else {
            table.insert(item, format!("generated for {owner}"));
        }
    }
}
