//! Reading kernel entries out of PTX text (what `nvcc -ptx`, or `-keep` of a cubin compile,
//! writes): names, parameters, performance directives, PDL instructions, calls, shared memory
//! (dynamic here, static in [`shared`]) and source lines. The functions and their bodies are
//! read in [`function`], the parameter lists in [`params`].
//! Dependency-free and tolerant: anything it does not understand is skipped.

mod function;
mod params;
mod shared;
mod wait_first;

use std::collections::{BTreeMap, BTreeSet};

use crate::record::{CallRecord, KernelRecord};
use function::{functions, Body, Function};
use params::params;

/// The kernel entries (`.entry`, visible or not) of `ptx`, in PTX order; see [`crate::record`]
/// for what each field says. Functions (`.func`) are not listed, but their PDL instructions
/// count for the entries that call them.
pub fn records_from_ptx(ptx: &str) -> Vec<KernelRecord> {
    let text = strip_comments(ptx);
    let files = file_directives(&text);
    let functions = functions(&text);
    let dynamic_shared = extern_shared_names(&text);
    let static_shared = shared::static_shared_arrays(&text);
    let bodies: BTreeMap<&str, &Body> =
        functions.iter().filter_map(|f| Some((f.name.as_str(), f.body.as_ref()?))).collect();
    functions
        .iter()
        .filter(|f| f.entry)
        .map(|f| {
            let body = f.body.as_ref();
            let reached = reach(f, &bodies);
            let (pdl_wait, pdl_trigger) = (reached.iter().any(|b| b.pdl_wait), reached.iter().any(|b| b.pdl_trigger));
            let callees: Vec<CallRecord> = body
                .map(|b| &b.calls)
                .into_iter()
                .flatten()
                .map(|c| CallRecord { name: c.clone(), defined: c.as_deref().is_some_and(|n| bodies.contains_key(n)) })
                .collect();
            let dyn_smem = uses_dynamic_shared(&reached, &bodies, dynamic_shared.as_deref());
            let loc = body.and_then(|b| b.first_loc);
            KernelRecord {
                name: f.name.clone(),
                visible: f.visible,
                params: params(&f.params),
                max_threads: f.directive("maxntid").map(product),
                req_threads: f.directive("reqntid").map(product),
                min_blocks_per_sm: f.directive("minnctapersm").and_then(|v| v.first().copied()),
                max_registers: f.directive("maxnreg").and_then(|v| v.first().copied()),
                max_cluster_rank: f.directive("maxclusterrank").and_then(|v| v.first().copied()),
                cluster_dims: f.directive("reqnctapercluster").map(|v| {
                    let d = |i: usize| v.get(i).copied().unwrap_or(1);
                    [d(0), d(1), d(2)]
                }),
                pdl_wait,
                pdl_trigger,
                // The entry's own body: a call before the wait already ends the proof.
                pdl_wait_first: body.is_some_and(|b| b.wait_first),
                dyn_smem,
                static_shared: shared::used_by(&reached, &static_shared),
                calls: !callees.is_empty(),
                callees,
                file: loc.and_then(|(file, _)| files.get(&file).cloned()),
                line: loc.map(|(_, line)| line),
            }
        })
        .collect()
}

/// The PTX `.target` (e.g. `sm_90`), if any.
pub fn ptx_target(ptx: &str) -> Option<String> {
    strip_comments(ptx).lines().find_map(|l| {
        let rest = l.trim().strip_prefix(".target")?;
        rest.split([',', ' ', '\t']).find(|w| !w.is_empty()).map(str::to_string)
    })
}

fn product(dims: Vec<u32>) -> u32 {
    dims.iter().product()
}

/// The body of `f` and of every function defined in the PTX that it reaches through calls
/// (what its `griddepcontrol` instructions and shared-memory uses are read from).
fn reach<'a>(f: &'a Function, bodies: &BTreeMap<&str, &'a Body>) -> Vec<&'a Body> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<&Body> = f.body.iter().collect();
    let mut out = Vec::new();
    while let Some(b) = todo.pop() {
        out.push(b);
        for callee in b.calls.iter().flatten() {
            if seen.insert(callee.as_str()) {
                todo.extend(bodies.get(callee.as_str()).copied());
            }
        }
    }
    out
}

/// External functions of the CUDA runtime that cannot name a module's `extern __shared__`
/// arrays (the rest of an external call's code is unknown).
const SYSTEM_CALLEES: [&str; 4] = ["vprintf", "malloc", "free", "__assertfail"];

/// Whether an entry may use dynamic shared memory: a body it reaches names one of the module's
/// `.extern .shared` arrays, or it calls code the PTX lacks (an indirect call, an external
/// function other than [`SYSTEM_CALLEES`]: under `-rdc` another file's function may declare its
/// own `extern __shared__`), or the module declares such an array kgraph could not read
/// (`names` is `None`). Unknown counts as used: the declaration must then say how much.
fn uses_dynamic_shared(reached: &[&Body], bodies: &BTreeMap<&str, &Body>, names: Option<&[String]>) -> bool {
    let Some(names) = names else { return true };
    let unknown = |c: &Option<String>| match c.as_deref() {
        None => true,
        Some(n) => !bodies.contains_key(n) && !SYSTEM_CALLEES.contains(&n),
    };
    let unknown_call = reached.iter().any(|b| b.calls.iter().any(unknown));
    unknown_call || reached.iter().any(|b| names.iter().any(|name| b.names(name)))
}

/// The names of the module's `.extern .shared` arrays (`extern __shared__ float smem[];` in
/// CUDA: `.extern .shared .align 16 .b8 smem[];`), which address dynamic shared memory; `None`
/// when one is declared in a form whose name this cannot read.
fn extern_shared_names(text: &str) -> Option<Vec<String>> {
    let mut names = Vec::new();
    for statement in text.split(['\n', ';', '{', '}']) {
        let words: Vec<&str> = statement.split_whitespace().collect();
        if words.first() != Some(&".extern") || !words.contains(&".shared") {
            continue;
        }
        // The name is the last word, before its `[]` (`smem[]`, or `smem []` split in two).
        let last = words.iter().rev().find(|w| !w.starts_with('[')).copied().unwrap_or("");
        let name = last.split('[').next().unwrap_or("");
        let is_name = !name.is_empty()
            && !name.starts_with('.')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || "_$".contains(c));
        if !is_name {
            return None;
        }
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    Some(names)
}

/// `ptx` without `//` and `/* */` comments (string literals kept whole); line breaks survive.
fn strip_comments(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len());
    let mut chars = ptx.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                out.extend(chars.next());
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

/// `.file <n> "<path>"[, ...]` directives: file number to path.
fn file_directives(text: &str) -> BTreeMap<u32, String> {
    text.lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix(".file")?;
            let (num, rest) = rest.trim_start().split_once(|c: char| c.is_whitespace())?;
            let start = rest.find('"')? + 1;
            let end = start + rest[start..].find('"')?;
            Some((num.parse().ok()?, rest[start..end].to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::PtrSpace;

    /// Hand-written PTX with what nvcc 13 -O3 does not emit for the reference kernels:
    /// `.ptr` annotations, guarded and labelled instructions, a comment that names an
    /// instruction, indirect and external calls, a call chain, an initialised global.
    const PTX: &str = r#"
.version 8.0
.target sm_90a
.address_size 64
.global .align 4 .b8 table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
.extern .func (.param .b32 func_retval0) vprintf
(
	.param .b64 vprintf_param_0,
	.param .b64 vprintf_param_1
)
;
.func inner()
{
	griddepcontrol.launch_dependents;
	ret;
}
.func (.param .b32 func_retval0) outer(.param .b64 p)
{
	call.uni inner, ();
	st.param.b32 [func_retval0+0], 0;
	ret;
}
.visible .entry annotated(
	.param .u64 .ptr .global .align 16 annotated_param_0,
	.param .u64 .ptr .align 4 annotated_param_1,
	.param .align 8 .b8 annotated_param_2 [24],
	.param .f16 annotated_param_3
)
.reqntid 32, 4, 1
.maxnreg 64
.maxclusterrank 8
{
	.reg .pred %p<2>;
	.loc 3 77 5, function_name $L__info_string0, inlined_at 1 40 0
	.loc 1 41 0
	// griddepcontrol.launch_dependents; (a comment, not an instruction)
$L__BB0_1:
	@%p1 griddepcontrol.wait;
	{ // callseq 0, 0
	.param .b32 retval0;
	call.uni (retval0), outer, (param0);
	call (retval0), %rd4, (param0), prototype_0;
	call.uni (retval0), vprintf, (param0, param1);
	call.uni (retval0), outer, (param0);
	} // callseq 0
	ret;
}
.entry bare()
{
	ret;
}
	.file	1 "/src/my kernels/a.cu", 1700000000, 1234
	.file	3 "/src/my kernels/defs.cuh"
"#;

    #[test]
    fn reads_annotations_guards_and_calls() {
        let r = records_from_ptx(PTX);
        assert_eq!(r.len(), 2, "entries only: {r:?}");
        let k = &r[0];
        assert_eq!((k.name.as_str(), k.visible), ("annotated", true));
        let p = &k.params;
        assert_eq!((p[0].ptr_space, p[0].ptr_align, p[0].size, p[0].align), (Some(PtrSpace::Global), Some(16), 8, 8));
        assert_eq!((p[1].ptr_space, p[1].ptr_align), (Some(PtrSpace::Generic), Some(4)));
        assert_eq!((p[2].ptx_type.as_str(), p[2].size, p[2].align, p[2].array), ("b8", 24, 8, Some(24)));
        assert_eq!((p[3].ptx_type.as_str(), p[3].size, p[3].align, p[3].ptr_space), ("f16", 2, 2, None));
        assert_eq!(
            (k.req_threads, k.max_threads, k.max_registers, k.max_cluster_rank),
            (Some(128), None, Some(64), Some(8))
        );
        assert!(k.pdl_wait, "a guarded, labelled wait counts");
        assert!(!k.pdl_wait_first, "but a guarded wait after a label is not a first wait");
        assert!(k.pdl_trigger, "the trigger is in inner, called through outer");
        let calls: Vec<(Option<&str>, bool)> = k.callees.iter().map(|c| (c.name.as_deref(), c.defined)).collect();
        assert_eq!(calls, [(Some("outer"), true), (None, false), (Some("vprintf"), false)]);
        assert_eq!(
            (k.file.as_deref(), k.line),
            (Some("/src/my kernels/a.cu"), Some(41)),
            "inlined_at locs are skipped"
        );

        let bare = &r[1];
        assert_eq!((bare.name.as_str(), bare.visible, bare.params.len()), ("bare", false, 0));
        assert_eq!((bare.pdl_wait, bare.pdl_trigger, bare.calls, bare.line), (false, false, false, None));
        assert_eq!(ptx_target(PTX).as_deref(), Some("sm_90a"));
    }

    /// Dynamic shared memory as nvcc 13 writes it: a module-level `.extern .shared` array that an
    /// entry addresses directly or through a function it calls; a static `.shared` array and a
    /// longer name that starts with the same letters are not it.
    const SHARED_PTX: &str = r#"
.version 8.0
.target sm_90
.extern .shared .align 16 .b8 smem[];
.func (.param .b64 func_retval0) base()
{
	mov.u64 %rd1, smem;
	st.param.b64 [func_retval0+0], %rd1;
	ret;
}
.visible .entry direct(.param .u32 direct_param_0)
{
	st.shared.f32 [smem+4], %f1;
	ret;
}
.visible .entry through_call()
{
	call.uni (retval0), base, ();
	ret;
}
.visible .entry static_only()
{
	.shared .align 4 .b8 _ZZ11static_onlyE4tile[1024];
	mov.u64 %rd1, smem_table;
	st.shared.f32 [_ZZ11static_onlyE4tile], %f1;
	call.uni (retval0), vprintf, (param0, param1);
	ret;
}
.visible .entry other_file()
{
	call.uni (retval0), _Z9elsewherev, ();
	ret;
}
"#;

    #[test]
    fn dynamic_shared_memory_is_an_extern_shared_array_the_entry_reaches() {
        let r = records_from_ptx(SHARED_PTX);
        let uses: Vec<(&str, bool)> = r.iter().map(|k| (k.name.as_str(), k.dyn_smem)).collect();
        // `static_only` calls only printf; `other_file` calls a function of another file (`-rdc`),
        // whose code the PTX lacks: counted as a use.
        assert_eq!(uses, [("direct", true), ("through_call", true), ("static_only", false), ("other_file", true)]);
        // A declaration spelled `smem []` reads; one whose name cannot be read marks every entry.
        assert!(records_from_ptx(&SHARED_PTX.replace("smem[];", "smem [];"))[0].dyn_smem);
        let unreadable = SHARED_PTX.replace(".b8 smem[];", ".b8 smem[]; .extern .shared .align 4 .b8 [];");
        assert!(records_from_ptx(&unreadable).iter().all(|k| k.dyn_smem));
        // No `.extern .shared` in PTX, but `annotated` makes an indirect call: unknown code, which
        // may use dynamic shared memory; `bare` calls nothing.
        let plain = records_from_ptx(PTX);
        let other: Vec<(&str, bool)> = plain.iter().map(|k| (&*k.name, k.dyn_smem)).collect();
        assert_eq!(other, [("annotated", true), ("bare", false)]);
        let text = crate::record::format_kernel_record(None, &r);
        assert!(
            text.contains("entry direct visible=1 pdl_wait=0 pdl_trigger=0 calls=0 dyn_smem=1 pdl_wait_first=0\n"),
            "{text}"
        );
        assert_eq!(crate::record::parse_kernel_record(&text).unwrap(), r);
    }

    #[test]
    fn the_record_round_trips() {
        let r = records_from_ptx(PTX);
        let text = crate::record::format_kernel_record(ptx_target(PTX).as_deref(), &r);
        assert!(text.contains("\nfile /src/my kernels/a.cu\n"), "{text}");
        assert!(text.contains("\ncall * defined=0\n"), "{text}");
        assert!(text.contains("param 0 u64 size=8 align=8 ptr=global ptr_align=16\n"), "{text}");
        assert_eq!(crate::record::parse_kernel_record(&text).unwrap(), r);
    }

    #[test]
    fn garbage_gives_no_entries() {
        assert!(records_from_ptx("").is_empty());
        assert!(records_from_ptx(".entry").is_empty());
        assert!(records_from_ptx(".visible .entry broken( .param .u32 x").is_empty());
    }
}
