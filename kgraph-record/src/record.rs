//! kgraph's compiled-kernel record, `$OUT_DIR/kgraph/<stem>.kernels`: what nvcc actually compiled
//! from `<stem>.cu`, read from the PTX of the same nvcc invocation that produced the cubin (see
//! kgraph-build's `records_from_ptx`). `#[kernel]` checks declarations against it instead of reading
//! the `.cu` text, so `#if`/`#ifdef`, macros, templates and `-D` flags are already resolved.
//!
//! # Format, version 1
//!
//! UTF-8 text, one item per line, `\n` line ends, fields separated by single spaces. The first
//! line is exactly `kgraph-kernels 1`. Then, in any order before the first block, header lines
//! (informational; a reader may ignore them):
//!
//! ```text
//! target <ptx target>          the PTX `.target`, e.g. `sm_90` (first arch of the list)
//! ```
//!
//! Then one block per `.entry` of the PTX, in PTX order (visible or not):
//!
//! ```text
//! entry <name> visible=<0|1> pdl_wait=<0|1> pdl_trigger=<0|1> calls=<0|1> [dyn_smem=<0|1>]
//!       [pdl_wait_first=<0|1>] [line=<n>] [maxntid=<n>] [reqntid=<n>] [minnctapersm=<n>] [maxnreg=<n>] [maxclusterrank=<n>]
//!       [cluster=<x>,<y>,<z>]                                  (all on the one `entry` line)
//! file <path>                  optional; the rest of the line, verbatim (may contain spaces)
//! call <callee> defined=<0|1>  zero or more; `*` as callee for an indirect call
//! shared <symbol> size=<n>     zero or more: a static `__shared__` array the kernel uses
//! param <index> <ptx type> size=<n> align=<n> [array=<n>] [ptr=<space>] [ptr_align=<n>]
//! end
//! ```
//!
//! - `<name>`: the PTX entry name, i.e. the symbol: the plain name for `extern "C"`, the
//!   Itanium-mangled name for C++ linkage and template instantiations (`_Z2tkIfEvPT_i`).
//! - `visible`: `1` for `.visible .entry` (an external symbol `cuModuleGetFunction` finds), `0`
//!   for an internal one (a `static` kernel).
//! - `pdl_wait` / `pdl_trigger`: the instruction `griddepcontrol.wait` /
//!   `griddepcontrol.launch_dependents` occurs in the entry's body (instructions only, not
//!   comments; inlined device functions are part of the body), or in the body of a `.func`
//!   defined in the same PTX that the entry calls, directly or through other such functions.
//! - `pdl_wait_first`: `1` when the entry's own body, read from its first statement in order,
//!   reaches an unguarded `griddepcontrol.wait` (on every thread: straight-line code) before
//!   anything that could touch memory other than the kernel's parameters or leave the straight
//!   line. Only declarations (statements starting with `.`), `ld.param`, `mov`, `cvta`,
//!   `griddepcontrol.launch_dependents` and plain integer and float arithmetic and compares
//!   (`add`, `setp`, `selp`, `cvt`, `shl`, ...) may come first; any other load, store, atomic,
//!   copy, prefetch, texture or barrier instruction, a branch, call, `ret`, `exit` or `trap`, a
//!   label or a guard (`@%p`, the wait's own too) before it means `0`. So a PDL launch of the
//!   kernel touches no buffer before the grids it depends on have completed (what `graph!`'s
//!   memory plan relies on to let a PDL edge order). Absent (a record written before the field
//!   existed) reads as `0`.
//! - `dyn_smem`: `1` when the kernel may use the launch's dynamic shared memory: the body, or a
//!   `.func` defined in the PTX that it calls, names a `.extern .shared` array (CUDA's
//!   `extern __shared__`), or it calls code the PTX lacks (an indirect call, an external function
//!   other than the runtime's `vprintf`, `malloc`, `free`, `__assertfail`), or the module
//!   declares such an array in a form the reader cannot name. Absent (a record written before
//!   the field existed) reads as `0`.
//! - `calls`: `1` when the body contains any `call` instruction; each callee then has a `call`
//!   line. `defined=1`: a `.func` with a body in this PTX (already folded into the `pdl_*`
//!   flags); `defined=0`: an external function (`vprintf`, a `-rdc` symbol) or `*` (an indirect
//!   call through a register): a consumer should treat those conservatively (unknown).
//! - `line` and `file`: the first `.loc` of the body that is not `inlined_at` something: the
//!   line of the function's name in its source (nvcc's debug info), and that source's path as
//!   the PTX `.file` directive names it (the original `.cu` or header, not the `.i`). Absent
//!   when the PTX has no line info.
//! - `maxntid` / `reqntid`: the product of the dimensions of `.maxntid` (from
//!   `__launch_bounds__(n)`) / `.reqntid`; `minnctapersm` (launch bounds' second argument),
//!   `maxnreg` (`__maxnreg__`), `maxclusterrank` (launch bounds' third argument) and `cluster`
//!   (`.reqnctapercluster`, from `__cluster_dims__`) as the directives give them. Absent when
//!   the entry has no such directive.
//! - `shared`: each static shared array (a `__shared__` variable that is not `extern`, PTX
//!   `.shared` without `.extern`) the body, or a `.func` defined in the PTX that it calls, declares
//!   or names, in first-seen order, each once: its PTX symbol (function-scope arrays are mangled,
//!   `_ZZ4tileE1t` is `t` of `tile`) and its size in bytes. Such an array has a fixed size however
//!   the kernel is launched, so a kernel indexing it by thread depends on the launch's block size
//!   (`#[kernel]` asks for a block bound). Absent lines (a record written before them) read as
//!   no arrays.
//! - `param` lines come in index order, `0, 1, 2, ...`, one per PTX parameter. `<ptx type>` is
//!   the PTX type without its dot (`u64`, `u32`, `f32`, `f64`, `b8`, ...). `size` is the size in
//!   bytes (element size times `array`), `align` the parameter's alignment in bytes (`.align`
//!   when given, else the element size). `array=<n>` marks a by-value aggregate,
//!   `.param .align 16 .b8 p[48]`: a struct of 48 bytes aligned to 16 (also how
//!   `__grid_constant__` structs are passed). `ptr=<generic|global|shared|const|local>` and
//!   `ptr_align` appear only when the PTX carries a `.ptr` annotation; nvcc 13 at `-O3` emits
//!   none (not at `-O0` or `-G` either), so a pointer is a `u64` of size 8 like a 64-bit
//!   integer.
//!
//! PTX keeps size and class, not C's signedness or struct identity. What nvcc 13 (sm_90)
//! writes for common parameter types:
//!
//! | C parameter | record |
//! | --- | --- |
//! | `T*`, `const T*` (any `T`), `long long`, `uint64_t` | `u64 size=8 align=8` |
//! | `int`, `unsigned`, `int32_t` | `u32 size=4 align=4` |
//! | `float` / `double` | `f32 size=4 align=4` / `f64 size=8 align=8` |
//! | `bool`, `signed char`, `int8_t`, `uint8_t` | `u8 size=1 align=1` |
//! | `short` | `u16 size=2 align=2` |
//! | `__half`, `__nv_bfloat16` (structs) | `b8 size=2 align=2 array=2` |
//! | `float2` / `float4` | `b8 size=8 align=8 array=8` / `b8 size=16 align=16 array=16` |
//! | a struct (by value or `__grid_constant__`) | `b8 size=<sizeof> align=<alignof> array=<sizeof>` |
//!
//! Unknown line kinds and unknown `key=value` fields are ignored (a later version 1 writer may
//! add some); a missing required field, a bad number or a `param` out of order is an error
//! ([`RecordError`]).

/// A malformed record file: the first bad line and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordError {
    /// 1-based line of the record text.
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "kernel record, line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for RecordError {}

/// The first line of every record file.
pub const RECORD_HEADER: &str = "kgraph-kernels 1";

/// One compiled kernel entry, as the PTX of the build declares it. See the [module
/// docs](crate::record) for what each field means.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelRecord {
    /// The entry symbol: plain for `extern "C"`, mangled for C++ linkage.
    pub name: String,
    /// `.visible .entry` (external) rather than internal.
    pub visible: bool,
    /// The parameters in order.
    pub params: Vec<ParamRecord>,
    /// Product of `.maxntid` (`__launch_bounds__(n)` gives `n`).
    pub max_threads: Option<u32>,
    /// Product of `.reqntid`.
    pub req_threads: Option<u32>,
    /// `.minnctapersm` (the second argument of `__launch_bounds__`).
    pub min_blocks_per_sm: Option<u32>,
    /// `.maxnreg`.
    pub max_registers: Option<u32>,
    /// `.maxclusterrank` (the third argument of `__launch_bounds__`).
    pub max_cluster_rank: Option<u32>,
    /// `.reqnctapercluster` (`__cluster_dims__`).
    pub cluster_dims: Option<[u32; 3]>,
    /// `griddepcontrol.wait` in the body or a function it calls that is defined in the PTX.
    pub pdl_wait: bool,
    /// `griddepcontrol.launch_dependents`, likewise.
    pub pdl_trigger: bool,
    /// The body's straight-line start reaches an unguarded `griddepcontrol.wait` before any
    /// instruction that could touch memory other than the parameters (see the [module
    /// docs](crate::record)): a PDL launch touches no buffer before its dependency completed.
    pub pdl_wait_first: bool,
    /// The kernel may use dynamic shared memory: the body, or a function it calls that is
    /// defined in the PTX, names an `.extern .shared` array, or it calls code the PTX lacks.
    pub dyn_smem: bool,
    /// The body contains a `call` (see [`KernelRecord::callees`]).
    pub calls: bool,
    /// The static shared arrays (`__shared__`, not `extern`) the body, or a function it calls
    /// that is defined in the PTX, declares or names.
    pub static_shared: Vec<SharedRecord>,
    /// Every function the body calls, in first-call order, each once.
    pub callees: Vec<CallRecord>,
    /// The source file of [`KernelRecord::line`], as the PTX `.file` names it.
    pub file: Option<String>,
    /// The line of the function's name in [`KernelRecord::file`].
    pub line: Option<u32>,
}

/// One parameter of a [`KernelRecord`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParamRecord {
    /// Position, from 0.
    pub index: usize,
    /// PTX type without the dot: `u64`, `u32`, `f32`, `b8`, ...
    pub ptx_type: String,
    /// Bytes.
    pub size: u32,
    /// Alignment in bytes.
    pub align: u32,
    /// Element count of an array parameter (a by-value aggregate), `None` for a scalar.
    pub array: Option<u32>,
    /// The `.ptr` annotation's state space, when the PTX has one.
    pub ptr_space: Option<PtrSpace>,
    /// The `.ptr` annotation's pointee alignment, when given.
    pub ptr_align: Option<u32>,
}

/// The state space of a `.ptr` parameter annotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PtrSpace {
    /// `.ptr` without a space: generic addressing.
    Generic,
    /// `.ptr .global`.
    Global,
    /// `.ptr .shared`.
    Shared,
    /// `.ptr .const`.
    Const,
    /// `.ptr .local`.
    Local,
}

impl PtrSpace {
    /// The name in the record file and in PTX (without the dot).
    pub fn as_str(self) -> &'static str {
        match self {
            PtrSpace::Generic => "generic",
            PtrSpace::Global => "global",
            PtrSpace::Shared => "shared",
            PtrSpace::Const => "const",
            PtrSpace::Local => "local",
        }
    }

    /// The space named `name` (as [`PtrSpace::as_str`] writes it).
    pub fn from_name(name: &str) -> Option<PtrSpace> {
        [PtrSpace::Generic, PtrSpace::Global, PtrSpace::Shared, PtrSpace::Const, PtrSpace::Local]
            .into_iter()
            .find(|s| s.as_str() == name)
    }
}

/// A static shared array of a [`KernelRecord`] (PTX `.shared`, not `.extern`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedRecord {
    /// The PTX symbol: mangled for a function-scope `__shared__` (`_ZZ4tileE1t`).
    pub symbol: String,
    /// Its size in bytes.
    pub size: u64,
}

/// A function a kernel calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRecord {
    /// The callee's symbol; `None` for an indirect call (through a register).
    pub name: Option<String>,
    /// The callee is a `.func` with a body in the same PTX (its instructions are folded into
    /// the caller's `pdl_*` flags).
    pub defined: bool,
}

/// Writes `records` in the record format (the [crate docs](crate)); `target` is the
/// PTX target for the header, if known.
pub fn format_kernel_record(target: Option<&str>, records: &[KernelRecord]) -> String {
    let mut s = format!("{RECORD_HEADER}\n");
    if let Some(t) = target {
        s.push_str(&format!("target {t}\n"));
    }
    let flag = |b: bool| if b { 1 } else { 0 };
    for k in records {
        s.push_str(&format!(
            "entry {} visible={} pdl_wait={} pdl_trigger={} calls={} dyn_smem={} pdl_wait_first={}",
            k.name,
            flag(k.visible),
            flag(k.pdl_wait),
            flag(k.pdl_trigger),
            flag(k.calls),
            flag(k.dyn_smem),
            flag(k.pdl_wait_first)
        ));
        let numbers = [
            ("line", k.line),
            ("maxntid", k.max_threads),
            ("reqntid", k.req_threads),
            ("minnctapersm", k.min_blocks_per_sm),
            ("maxnreg", k.max_registers),
            ("maxclusterrank", k.max_cluster_rank),
        ];
        for (key, value) in numbers {
            if let Some(v) = value {
                s.push_str(&format!(" {key}={v}"));
            }
        }
        if let Some([x, y, z]) = k.cluster_dims {
            s.push_str(&format!(" cluster={x},{y},{z}"));
        }
        s.push('\n');
        if let Some(file) = &k.file {
            s.push_str(&format!("file {file}\n"));
        }
        for c in &k.callees {
            s.push_str(&format!("call {} defined={}\n", c.name.as_deref().unwrap_or("*"), flag(c.defined)));
        }
        for a in &k.static_shared {
            s.push_str(&format!("shared {} size={}\n", a.symbol, a.size));
        }
        for p in &k.params {
            s.push_str(&format!("param {} {} size={} align={}", p.index, p.ptx_type, p.size, p.align));
            if let Some(n) = p.array {
                s.push_str(&format!(" array={n}"));
            }
            if let Some(space) = p.ptr_space {
                s.push_str(&format!(" ptr={}", space.as_str()));
            }
            if let Some(a) = p.ptr_align {
                s.push_str(&format!(" ptr_align={a}"));
            }
            s.push('\n');
        }
        s.push_str("end\n");
    }
    s
}

/// Reads a record file (the [crate docs](crate) give the format) into its kernels, in
/// file order. [`RecordError`] names the first malformed line.
pub fn parse_kernel_record(text: &str) -> Result<Vec<KernelRecord>, RecordError> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    match lines.next() {
        Some((_, first)) if first.trim_end() == RECORD_HEADER => {}
        _ => return Err(bad(1, format!("the first line must be `{RECORD_HEADER}`"))),
    }
    let mut records = Vec::new();
    let mut open: Option<KernelRecord> = None;
    for (n, line) in lines {
        let (kind, rest) = line.split_once(' ').unwrap_or((line, ""));
        match (kind, open.as_mut()) {
            ("entry", None) => open = Some(parse_entry(n, rest)?),
            ("entry", Some(k)) => return Err(bad(n, format!("`entry` inside the block of `{}` (no `end`)", k.name))),
            ("file", Some(k)) => k.file = Some(rest.to_string()),
            ("call", Some(k)) => {
                let mut words = rest.split(' ');
                let name = words.next().filter(|w| !w.is_empty()).ok_or_else(|| bad(n, "`call` without a callee"))?;
                let fields = Fields::new(n, words)?;
                k.callees.push(CallRecord {
                    name: (name != "*").then(|| name.to_string()),
                    defined: fields.flag("defined")?,
                });
            }
            ("shared", Some(k)) => k.static_shared.push(parse_shared(n, rest)?),
            ("param", Some(k)) => {
                let p = parse_param(n, rest)?;
                if p.index != k.params.len() {
                    return Err(bad(n, format!("param {} out of order: expected param {}", p.index, k.params.len())));
                }
                k.params.push(p);
            }
            ("end", Some(_)) => records.extend(open.take()),
            ("file" | "call" | "shared" | "param" | "end", None) => {
                return Err(bad(n, format!("`{kind}` outside an entry block")))
            }
            _ => {} // header lines and kinds a later writer may add
        }
    }
    match open {
        Some(k) => Err(bad(text.lines().count(), format!("the block of `{}` has no `end`", k.name))),
        None => Ok(records),
    }
}

fn bad(line: usize, message: impl Into<String>) -> RecordError {
    RecordError { line, message: message.into() }
}

fn parse_entry(n: usize, rest: &str) -> Result<KernelRecord, RecordError> {
    let mut words = rest.split(' ');
    let name = words.next().filter(|w| !w.is_empty()).ok_or_else(|| bad(n, "`entry` without a name"))?;
    let f = Fields::new(n, words)?;
    let cluster_dims = match f.get("cluster") {
        None => None,
        Some(v) => {
            let dims: Vec<u32> = v
                .split(',')
                .map(|d| d.parse().map_err(|_| bad(n, format!("cluster={v}"))))
                .collect::<Result<_, _>>()?;
            Some(<[u32; 3]>::try_from(dims).map_err(|_| bad(n, format!("cluster={v}: expected x,y,z")))?)
        }
    };
    Ok(KernelRecord {
        name: name.to_string(),
        visible: f.flag("visible")?,
        pdl_wait: f.flag("pdl_wait")?,
        pdl_trigger: f.flag("pdl_trigger")?,
        calls: f.flag("calls")?,
        dyn_smem: f.get("dyn_smem").is_some() && f.flag("dyn_smem")?,
        pdl_wait_first: f.get("pdl_wait_first").is_some() && f.flag("pdl_wait_first")?,
        line: f.number("line")?,
        max_threads: f.number("maxntid")?,
        req_threads: f.number("reqntid")?,
        min_blocks_per_sm: f.number("minnctapersm")?,
        max_registers: f.number("maxnreg")?,
        max_cluster_rank: f.number("maxclusterrank")?,
        cluster_dims,
        ..KernelRecord::default()
    })
}

fn parse_shared(n: usize, rest: &str) -> Result<SharedRecord, RecordError> {
    let mut words = rest.split(' ');
    let symbol = words.next().filter(|w| !w.is_empty()).ok_or_else(|| bad(n, "`shared` without a symbol"))?;
    let f = Fields::new(n, words)?;
    let size = f.get("size").ok_or_else(|| bad(n, "`shared` without size="))?;
    let size = size.parse().map_err(|_| bad(n, format!("size={size}: not a number")))?;
    Ok(SharedRecord { symbol: symbol.to_string(), size })
}

fn parse_param(n: usize, rest: &str) -> Result<ParamRecord, RecordError> {
    let mut words = rest.split(' ');
    let index = words.next().and_then(|w| w.parse().ok()).ok_or_else(|| bad(n, "`param` without an index"))?;
    let ptx_type = words.next().filter(|w| !w.is_empty()).ok_or_else(|| bad(n, "`param` without a type"))?;
    let f = Fields::new(n, words)?;
    let ptr_space = match f.get("ptr") {
        None => None,
        Some(s) => Some(PtrSpace::from_name(s).ok_or_else(|| bad(n, format!("ptr={s}: unknown state space")))?),
    };
    Ok(ParamRecord {
        index,
        ptx_type: ptx_type.to_string(),
        size: f.number("size")?.ok_or_else(|| bad(n, "`param` without size="))?,
        align: f.number("align")?.ok_or_else(|| bad(n, "`param` without align="))?,
        array: f.number("array")?,
        ptr_space,
        ptr_align: f.number("ptr_align")?,
    })
}

/// The `key=value` fields of one line.
struct Fields<'a> {
    line: usize,
    pairs: Vec<(&'a str, &'a str)>,
}

impl<'a> Fields<'a> {
    fn new(line: usize, words: impl Iterator<Item = &'a str>) -> Result<Self, RecordError> {
        let pairs = words
            .filter(|w| !w.is_empty())
            .map(|w| w.split_once('=').ok_or_else(|| bad(line, format!("`{w}` is not key=value"))))
            .collect::<Result<_, _>>()?;
        Ok(Fields { line, pairs })
    }

    fn get(&self, key: &str) -> Option<&'a str> {
        self.pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    fn number(&self, key: &str) -> Result<Option<u32>, RecordError> {
        self.get(key).map(|v| v.parse().map_err(|_| bad(self.line, format!("{key}={v}: not a number")))).transpose()
    }

    fn flag(&self, key: &str) -> Result<bool, RecordError> {
        match self.get(key) {
            Some("1") => Ok(true),
            Some("0") => Ok(false),
            Some(v) => Err(bad(self.line, format!("{key}={v}: expected 0 or 1"))),
            None => Err(bad(self.line, format!("missing {key}="))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECORD: &str = "kgraph-kernels 1
target sm_90
some-later-header x
entry _Z19gelu_forward_kernelPfPKfi visible=1 maxntid=256 pdl_wait=1 pdl_trigger=1 calls=0 line=12 later=7
file /k/gelu.cu
param 0 u64 size=8 align=8 ptr=global
param 1 f32 size=4 align=4
param 2 b8 size=48 align=16 array=48
end
entry k visible=0 pdl_wait=1 pdl_trigger=0 calls=1 cluster=2,1,1 pdl_wait_first=1
call * defined=0
shared _ZZ1kE4tile size=512
end
";

    #[test]
    fn parses_blocks_and_ignores_what_it_does_not_know() {
        let r = parse_kernel_record(RECORD).unwrap();
        assert_eq!(r.len(), 2);
        let g = &r[0];
        assert_eq!(
            (g.name.as_str(), g.visible, g.max_threads, g.line),
            ("_Z19gelu_forward_kernelPfPKfi", true, Some(256), Some(12))
        );
        assert_eq!((g.pdl_wait, g.pdl_trigger, g.calls, g.file.as_deref()), (true, true, false, Some("/k/gelu.cu")));
        assert_eq!(g.params[0].ptr_space, Some(PtrSpace::Global));
        assert_eq!((g.params[2].size, g.params[2].align, g.params[2].array), (48, 16, Some(48)));
        assert_eq!(r[1].callees, [CallRecord { name: None, defined: false }]);
        // `k` says `pdl_wait_first=1`; `g`'s line (as written before the field existed) lacks it,
        // which proves nothing although it waits.
        assert!(r[1].pdl_wait_first && g.pdl_wait && !g.pdl_wait_first, "absent reads as 0");
        assert_eq!(r[1].cluster_dims, Some([2, 1, 1]));
        assert_eq!(r[1].static_shared, [SharedRecord { symbol: "_ZZ1kE4tile".into(), size: 512 }]);
        assert!(g.static_shared.is_empty());
        assert_eq!(parse_kernel_record(&format_kernel_record(Some("sm_90"), &r)).unwrap(), r);
    }

    #[test]
    fn malformed_records_name_the_line() {
        let line_of = |text: &str| match parse_kernel_record(text) {
            Err(RecordError { line, .. }) => line,
            other => panic!("expected BadKernelRecord, got {other:?}"),
        };
        assert_eq!(line_of("kgraph-kernels 2\n"), 1);
        assert_eq!(line_of(""), 1);
        let entry = "entry k visible=1 pdl_wait=0 pdl_trigger=0 calls=0\n";
        assert_eq!(line_of(&format!("{RECORD_HEADER}\n{entry}param 1 u32 size=4 align=4\nend\n")), 3);
        assert_eq!(line_of(&format!("{RECORD_HEADER}\n{entry}param 0 u32 size=four align=4\nend\n")), 3);
        assert_eq!(line_of(&format!("{RECORD_HEADER}\n{entry}param 0 u32 align=4\nend\n")), 3);
        assert_eq!(line_of(&format!("{RECORD_HEADER}\nentry k visible=1 pdl_wait=2 pdl_trigger=0 calls=0\nend\n")), 2);
        assert_eq!(line_of(&format!("{RECORD_HEADER}\nentry k visible=1\nend\n")), 2, "missing pdl_wait=");
        assert_eq!(line_of(&format!("{RECORD_HEADER}\n{entry}")), 2, "no end");
        assert_eq!(line_of(&format!("{RECORD_HEADER}\nparam 0 u32 size=4 align=4\n")), 2, "param outside a block");
        assert_eq!(line_of(&format!("{RECORD_HEADER}\n{entry}{entry}")), 3, "entry inside a block");
        assert_eq!(line_of(&format!("{RECORD_HEADER}\n{entry}shared t size=x\nend\n")), 3, "bad shared size");
        assert_eq!(line_of(&format!("{RECORD_HEADER}\n{entry}shared t\nend\n")), 3, "shared without size");
        let bad_first = "entry k visible=1 pdl_wait=1 pdl_trigger=0 calls=0 pdl_wait_first=yes\nend\n";
        assert_eq!(line_of(&format!("{RECORD_HEADER}\n{bad_first}")), 2, "pdl_wait_first not 0 or 1");
    }
}
