//! Reads a graph spec's TOML into the raw model of [`super::raw`], in file order; TOML syntax
//! errors, unknown keys and wrong TOML types go to the diagnostics. Each value is read by the
//! [`value::Reader`]; the tables and arrays of tables are walked here.

mod value;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::raw::{
    RawBatch, RawBuffer, RawCollective, RawControl, RawControlKind, RawDim, RawGemm, RawInclude, RawKernels, RawMemcpy,
    RawMemset, RawNode, RawScalar, RawSpec, RawUntil, ScalarTarget, Span, S,
};
use crate::diagnostics::Ctxt;
use value::{entries, type_name, Reader};

const TOP_KEYS: &[&str] = &[
    "doc",
    "pdl",
    "plan_memory",
    "resident",
    "kernels",
    "dims",
    "buffers",
    "scalars",
    "node",
    "while",
    "if",
    "include",
];
const KERNELS_KEYS: &[&str] = &["source", "module"];
const BUFFER_KEYS: &[&str] = &["dtype", "len", "role", "doc", "plan"];
const SCALAR_KEYS: &[&str] = &["dtype", "default", "doc"];
const NODE_KEYS: &[&str] = &[
    "name",
    "kernel",
    "grid",
    "block",
    "shared",
    "pdl",
    "args",
    "doc",
    "tune",
    "memset",
    "memcpy",
    "collective",
    "gemm",
];
const GEMM_KEYS: &[&str] =
    &["a", "b", "c", "m", "n", "k", "trans_a", "trans_b", "lda", "ldb", "ldc", "alpha", "beta", "compute", "batch"];
const BATCH_KEYS: &[&str] = &["count", "stride_a", "stride_b", "stride_c"];
const COLLECTIVE_KEYS: &[&str] = &["op", "reduce", "root", "buffer", "send", "recv"];
const MEMSET_KEYS: &[&str] = &["dst", "value"];
const MEMCPY_KEYS: &[&str] = &["src", "dst"];
const WHILE_KEYS: &[&str] = &["name", "nodes", "repeat", "until", "max", "doc"];
const IF_KEYS: &[&str] = &["name", "nodes", "flag", "doc"];
const UNTIL_KEYS: &[&str] = &["buffer", "below"];
const INCLUDE_KEYS: &[&str] = &["name", "spec", "buffers", "scalars"];

/// Parses `text`; TOML syntax errors and structural problems go to `diags`.
pub fn read(text: &str, diags: &mut Ctxt) -> RawSpec {
    let (root, errors) = DeTable::parse_recoverable(text);
    for e in &errors {
        let span = e.span().unwrap_or(0..0);
        diags.push(span, format!("TOML syntax: {}", e.message().trim_end()));
    }
    let mut spec = RawSpec::default();
    if !errors.is_empty() {
        return spec;
    }
    let mut r = Reader { text, diags };
    for (key, value) in entries(root.get_ref()) {
        match key.get_ref().as_ref() {
            "doc" => spec.doc = r.string(value, "`doc`").map(|s| s.v),
            "pdl" => spec.pdl = r.boolean(value, "`pdl`"),
            "plan_memory" => spec.plan_memory = r.boolean(value, "`plan_memory`"),
            "resident" => spec.resident = r.boolean(value, "`resident`"),
            "kernels" => spec.kernels = read_kernels(&mut r, key.span(), value),
            "dims" => {
                let Some(t) = r.table(value, "`dims`") else { continue };
                for (k, v) in entries(t) {
                    if let Some(n) = r.int(v, &format!("dim `{}`", k.get_ref())) {
                        spec.dims.push(RawDim {
                            name: S { v: k.get_ref().to_string(), span: k.span() },
                            value: S { v: n, span: v.span() },
                        });
                    }
                }
            }
            "buffers" => {
                let Some(t) = r.table(value, "`buffers`") else { continue };
                for (k, v) in entries(t) {
                    if let Some(b) = read_buffer(&mut r, k, v) {
                        spec.buffers.push(b);
                    }
                }
            }
            "scalars" => {
                let Some(t) = r.table(value, "`scalars`") else { continue };
                for (k, v) in entries(t) {
                    if let Some(s) = read_scalar(&mut r, k, v) {
                        spec.scalars.push(s);
                    }
                }
            }
            "node" => match value.get_ref() {
                DeValue::Array(items) => {
                    for item in items.iter() {
                        if let Some(n) = read_node(&mut r, item) {
                            spec.nodes.push(n);
                        }
                    }
                }
                other => r.diags.push(
                    value.span(),
                    format!("`node` must be an array of tables (`[[node]]`), found {}", type_name(other)),
                ),
            },
            "while" | "if" => {
                let kind = if key.get_ref() == "while" { RawControlKind::While } else { RawControlKind::If };
                match value.get_ref() {
                    DeValue::Array(items) => {
                        for item in items.iter() {
                            if let Some(c) = read_control(&mut r, kind, item) {
                                spec.controls.push(c);
                            }
                        }
                    }
                    other => r.diags.push(
                        value.span(),
                        format!(
                            "`{}` must be an array of tables (`[[{}]]`), found {}",
                            key.get_ref(),
                            key.get_ref(),
                            type_name(other)
                        ),
                    ),
                }
            }
            "include" => match value.get_ref() {
                DeValue::Array(items) => {
                    for item in items.iter() {
                        if let Some(i) = read_include(&mut r, item) {
                            spec.includes.push(i);
                        }
                    }
                }
                other => r.diags.push(
                    value.span(),
                    format!("`include` must be an array of tables (`[[include]]`), found {}", type_name(other)),
                ),
            },
            _ => r.unknown_key(key, "the spec", TOP_KEYS),
        }
    }
    spec
}

fn read_kernels(r: &mut Reader<'_>, key: Span, value: &Spanned<DeValue<'_>>) -> Option<RawKernels> {
    let t = r.table(value, "`kernels`")?;
    let mut k = RawKernels { key, ..Default::default() };
    for (key, v) in entries(t) {
        match key.get_ref().as_ref() {
            "source" => k.source = r.string(v, "`kernels.source`"),
            "module" => k.module = r.string(v, "`kernels.module`"),
            _ => r.unknown_key(key, "`[kernels]`", KERNELS_KEYS),
        }
    }
    Some(k)
}

fn read_buffer(
    r: &mut Reader<'_>,
    k: &Spanned<std::borrow::Cow<'_, str>>,
    v: &Spanned<DeValue<'_>>,
) -> Option<RawBuffer> {
    let name = S { v: k.get_ref().to_string(), span: k.span() };
    let t = r.table(v, &format!("buffer `{}`", name.v))?;
    let mut b = RawBuffer { name, dtype: None, len: None, role: None, doc: None, plan: None };
    let place = format!("buffer `{}`", b.name.v);
    for (key, v) in entries(t) {
        match key.get_ref().as_ref() {
            "dtype" => b.dtype = r.string(v, &format!("{place}: `dtype`")),
            "len" => b.len = r.num(v, &format!("{place}: `len`")),
            "role" => b.role = r.string(v, &format!("{place}: `role`")),
            "doc" => b.doc = r.string(v, &format!("{place}: `doc`")).map(|s| s.v),
            "plan" => b.plan = r.boolean(v, &format!("{place}: `plan`")),
            _ => r.unknown_key(key, &place, BUFFER_KEYS),
        }
    }
    Some(b)
}

fn read_scalar(
    r: &mut Reader<'_>,
    k: &Spanned<std::borrow::Cow<'_, str>>,
    v: &Spanned<DeValue<'_>>,
) -> Option<RawScalar> {
    let name = S { v: k.get_ref().to_string(), span: k.span() };
    let t = r.table(v, &format!("scalar `{}`", name.v))?;
    let mut s = RawScalar { name, dtype: None, default: None, doc: None };
    let place = format!("scalar `{}`", s.name.v);
    for (key, v) in entries(t) {
        match key.get_ref().as_ref() {
            "dtype" => s.dtype = r.string(v, &format!("{place}: `dtype`")),
            "default" => s.default = r.lit(v, &format!("{place}: `default`")),
            "doc" => s.doc = r.string(v, &format!("{place}: `doc`")).map(|s| s.v),
            _ => r.unknown_key(key, &place, SCALAR_KEYS),
        }
    }
    Some(s)
}

fn read_node(r: &mut Reader<'_>, item: &Spanned<DeValue<'_>>) -> Option<RawNode> {
    let t = r.table(item, "each `node`")?;
    let mut n = RawNode {
        span: item.span(),
        name: None,
        kernel: None,
        grid: None,
        block: None,
        shared: None,
        args: None,
        doc: None,
        pdl: None,
        tune: None,
        memset: None,
        memcpy: None,
        collective: None,
        gemm: None,
    };
    for (key, v) in entries(t) {
        match key.get_ref().as_ref() {
            "name" => n.name = r.string(v, "node `name`"),
            "kernel" => n.kernel = r.string(v, "node `kernel`"),
            "grid" => n.grid = r.dims3(v, "`grid`"),
            "block" => n.block = r.dims3(v, "`block`"),
            "shared" => n.shared = r.num(v, "`shared`"),
            "doc" => n.doc = r.string(v, "node `doc`").map(|s| s.v),
            "pdl" => n.pdl = r.boolean(v, "node `pdl`"),
            "tune" => match v.get_ref() {
                DeValue::Array(items) => {
                    let c: Option<Vec<_>> = items.iter().map(|i| r.num(i, "`tune`")).collect();
                    n.tune = c.map(|c| S { v: c, span: v.span() });
                }
                other => r.diags.push(
                    v.span(),
                    format!("`tune` must be an array of candidate block sizes, found {}", type_name(other)),
                ),
            },
            "memset" => n.memset = read_memset(r, v),
            "memcpy" => n.memcpy = read_memcpy(r, v),
            "collective" => n.collective = read_collective(r, v),
            "gemm" => n.gemm = read_gemm(r, v),
            "args" => {
                let Some(at) = r.table(v, "`args`") else { continue };
                let mut args = Vec::new();
                for (ak, av) in entries(at) {
                    let Some(value) = r.arg_value(av, &format!("argument `{}`", ak.get_ref())) else { continue };
                    args.push((S { v: ak.get_ref().to_string(), span: ak.span() }, value));
                }
                n.args = Some(S { v: args, span: v.span() });
            }
            _ => r.unknown_key(key, "`[[node]]`", NODE_KEYS),
        }
    }
    Some(n)
}

fn read_memset(r: &mut Reader<'_>, v: &Spanned<DeValue<'_>>) -> Option<S<RawMemset>> {
    let t = r.table(v, "node `memset`")?;
    let mut m = RawMemset { dst: None, value: None };
    for (key, val) in entries(t) {
        match key.get_ref().as_ref() {
            "dst" => m.dst = r.string(val, "`memset.dst`"),
            "value" => m.value = r.lit(val, "`memset.value`"),
            _ => r.unknown_key(key, "`memset`", MEMSET_KEYS),
        }
    }
    Some(S { v: m, span: v.span() })
}

fn read_memcpy(r: &mut Reader<'_>, v: &Spanned<DeValue<'_>>) -> Option<S<RawMemcpy>> {
    let t = r.table(v, "node `memcpy`")?;
    let mut m = RawMemcpy { src: None, dst: None };
    for (key, val) in entries(t) {
        match key.get_ref().as_ref() {
            "src" => m.src = r.string(val, "`memcpy.src`"),
            "dst" => m.dst = r.string(val, "`memcpy.dst`"),
            _ => r.unknown_key(key, "`memcpy`", MEMCPY_KEYS),
        }
    }
    Some(S { v: m, span: v.span() })
}

fn read_until(r: &mut Reader<'_>, v: &Spanned<DeValue<'_>>) -> Option<S<RawUntil>> {
    let t = r.table(v, "`until`")?;
    let mut u = RawUntil { buffer: None, below: None };
    for (key, val) in entries(t) {
        match key.get_ref().as_ref() {
            "buffer" => u.buffer = r.string(val, "`until.buffer`"),
            "below" => u.below = r.lit(val, "`until.below`"),
            _ => r.unknown_key(key, "`until`", UNTIL_KEYS),
        }
    }
    Some(S { v: u, span: v.span() })
}

fn read_control(r: &mut Reader<'_>, kind: RawControlKind, item: &Spanned<DeValue<'_>>) -> Option<RawControl> {
    let (table, keys) = match kind {
        RawControlKind::While => ("each `while`", WHILE_KEYS),
        RawControlKind::If => ("each `if`", IF_KEYS),
    };
    let place = match kind {
        RawControlKind::While => "`[[while]]`",
        RawControlKind::If => "`[[if]]`",
    };
    let t = r.table(item, table)?;
    let mut c = RawControl {
        kind,
        span: item.span(),
        name: None,
        nodes: None,
        repeat: None,
        until: None,
        max: None,
        flag: None,
        doc: None,
    };
    for (key, v) in entries(t) {
        let is_while = kind == RawControlKind::While;
        match key.get_ref().as_ref() {
            "name" => c.name = r.string(v, &format!("{place} `name`")),
            "doc" => c.doc = r.string(v, &format!("{place} `doc`")).map(|s| s.v),
            "nodes" => match v.get_ref() {
                DeValue::Array(items) => {
                    let names: Option<Vec<_>> =
                        items.iter().map(|i| r.string(i, &format!("{place} `nodes`"))).collect();
                    c.nodes = names.map(|n| S { v: n, span: v.span() });
                }
                other => r.diags.push(
                    v.span(),
                    format!("{place} `nodes` must be an array of node names, found {}", type_name(other)),
                ),
            },
            "repeat" if is_while => c.repeat = r.num(v, "`repeat`"),
            "until" if is_while => c.until = read_until(r, v),
            "max" if is_while => c.max = r.num(v, "`max`"),
            "flag" if !is_while => c.flag = r.string(v, "`flag`"),
            _ => r.unknown_key(key, place, keys),
        }
    }
    Some(c)
}

fn read_collective(r: &mut Reader<'_>, v: &Spanned<DeValue<'_>>) -> Option<S<RawCollective>> {
    let t = r.table(v, "node `collective`")?;
    let mut c = RawCollective::default();
    for (key, val) in entries(t) {
        match key.get_ref().as_ref() {
            "op" => c.op = r.string(val, "`collective.op`"),
            "reduce" => c.reduce = r.string(val, "`collective.reduce`"),
            "root" => c.root = r.int(val, "`collective.root`").map(|i| S { v: i, span: val.span() }),
            "buffer" => c.buffer = r.string(val, "`collective.buffer`"),
            "send" => c.send = r.string(val, "`collective.send`"),
            "recv" => c.recv = r.string(val, "`collective.recv`"),
            _ => r.unknown_key(key, "`collective`", COLLECTIVE_KEYS),
        }
    }
    Some(S { v: c, span: v.span() })
}

fn read_gemm(r: &mut Reader<'_>, v: &Spanned<DeValue<'_>>) -> Option<S<RawGemm>> {
    let t = r.table(v, "node `gemm`")?;
    let mut g = RawGemm::default();
    for (key, val) in entries(t) {
        let what = format!("`gemm.{}`", key.get_ref());
        match key.get_ref().as_ref() {
            "a" => g.a = r.string(val, &what),
            "b" => g.b = r.string(val, &what),
            "c" => g.c = r.string(val, &what),
            "m" => g.m = r.num(val, &what),
            "n" => g.n = r.num(val, &what),
            "k" => g.k = r.num(val, &what),
            "trans_a" => g.trans_a = r.boolean(val, &what),
            "trans_b" => g.trans_b = r.boolean(val, &what),
            "lda" => g.lda = r.num(val, &what),
            "ldb" => g.ldb = r.num(val, &what),
            "ldc" => g.ldc = r.num(val, &what),
            "alpha" => g.alpha = r.arg_value(val, &what),
            "beta" => g.beta = r.arg_value(val, &what),
            "compute" => g.compute = r.string(val, &what),
            "batch" => g.batch = read_batch(r, val),
            _ => r.unknown_key(key, "`gemm`", GEMM_KEYS),
        }
    }
    Some(S { v: g, span: v.span() })
}

fn read_batch(r: &mut Reader<'_>, v: &Spanned<DeValue<'_>>) -> Option<S<RawBatch>> {
    let t = r.table(v, "`gemm.batch`")?;
    let mut b = RawBatch::default();
    for (key, val) in entries(t) {
        let what = format!("`gemm.batch.{}`", key.get_ref());
        match key.get_ref().as_ref() {
            "count" => b.count = r.num(val, &what),
            "stride_a" => b.stride_a = r.num(val, &what),
            "stride_b" => b.stride_b = r.num(val, &what),
            "stride_c" => b.stride_c = r.num(val, &what),
            _ => r.unknown_key(key, "`gemm.batch`", BATCH_KEYS),
        }
    }
    Some(S { v: b, span: v.span() })
}

fn read_include(r: &mut Reader<'_>, item: &Spanned<DeValue<'_>>) -> Option<RawInclude> {
    let t = r.table(item, "each `include`")?;
    let mut inc = RawInclude { span: item.span(), name: None, spec: None, buffers: None, scalars: None };
    for (key, v) in entries(t) {
        match key.get_ref().as_ref() {
            "name" => inc.name = r.string(v, "`[[include]]` `name`"),
            "spec" => inc.spec = r.string(v, "`[[include]]` `spec`"),
            "buffers" => {
                let Some(bt) = r.table(v, "`[[include]]` `buffers`") else { continue };
                let mut pairs = Vec::new();
                for (bk, bv) in entries(bt) {
                    let what = format!("`[[include]]` buffer binding `{}`", bk.get_ref());
                    if let Some(target) = r.string(bv, &what) {
                        pairs.push((S { v: bk.get_ref().to_string(), span: bk.span() }, target));
                    }
                }
                inc.buffers = Some(S { v: pairs, span: v.span() });
            }
            "scalars" => {
                let Some(st) = r.table(v, "`[[include]]` `scalars`") else { continue };
                let mut pairs = Vec::new();
                for (sk, sv) in entries(st) {
                    let what = format!("`[[include]]` scalar binding `{}`", sk.get_ref());
                    let target = match sv.get_ref() {
                        DeValue::String(s) => Some(ScalarTarget::Scalar(s.to_string())),
                        DeValue::Integer(_) | DeValue::Float(_) => r.lit(sv, &what).map(|l| ScalarTarget::Lit(l.v)),
                        other => {
                            r.diags.push(
                                sv.span(),
                                format!("{what} must be a scalar's name or a number, found {}", type_name(other)),
                            );
                            None
                        }
                    };
                    if let Some(target) = target {
                        pairs.push((
                            S { v: sk.get_ref().to_string(), span: sk.span() },
                            S { v: target, span: sv.span() },
                        ));
                    }
                }
                inc.scalars = Some(S { v: pairs, span: v.span() });
            }
            _ => r.unknown_key(key, "`[[include]]`", INCLUDE_KEYS),
        }
    }
    Some(inc)
}
