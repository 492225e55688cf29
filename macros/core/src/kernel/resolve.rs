//! Finding a declaration's kernel in what was built: the compiled-kernel record (when the
//! build left one: nvcc) names the entry (by C name, mangled symbol, or C++ name with template
//! arguments), the preprocessed source `<stem>.i` (or, without it, the `.cu` text) gives its C
//! signature, and the two are checked against the declaration ([`super::record_check`],
//! [`super::check`]). Without a record (the NVRTC fallback) only the source is read; the
//! handle then checks parameter sizes when the module loads.

use std::path::Path;
use std::rc::Rc;

use super::check::{check_decl, check_shared_memory_in_source};
use super::config::{Config, CuFile, Files};
use super::device_fn::check_device_fn;
use super::record_check::check_record;
use crate::compiled::demangle::demangle;
use crate::compiled::{display_name, is_mangled, pdl_waits, Compiled, KernelRecord, Lookup};
use crate::cuda::cpp::{find_cpp_kernel, instantiation_line, template_kernel, CppKernel};
use crate::cuda::enums::{enumerators, enumerators_as_ints, enumerators_as_values};
use crate::cuda::lex::{lex, Token};
use crate::cuda::preprocessed::Preprocessed;
use crate::cuda::signature::{find_kernel_in, CuError, CuKernel, LaunchBounds};
use crate::diagnostics::Ctxt;
use crate::syntax::model::KernelDecl;

/// A declaration's kernel as found.
pub(crate) struct Found {
    /// The signature read from the source (lines of the original file).
    pub kernel: CuKernel,
    /// The `.cu` path, or the header the kernel is in, for messages and docs.
    pub display: String,
    /// The symbol to load.
    pub symbol: String,
    /// The record file, when there is one.
    pub record_path: Option<String>,
    /// Proven PDL wait.
    pub pdl_waits: bool,
}

/// The source tokens a kernel is read from: the `.i` (mapped back to the original lines) or
/// the `.cu` text.
enum Source {
    Preprocessed(Rc<Preprocessed>),
    Text(Vec<Token>),
}

impl Source {
    fn toks(&self) -> &[Token] {
        match self {
            Source::Preprocessed(p) => &p.toks,
            Source::Text(t) => t,
        }
    }

    fn map_kernel(&self, k: CuKernel) -> CuKernel {
        match self {
            Source::Preprocessed(p) => p.map_kernel(k),
            Source::Text(_) => k,
        }
    }

    fn map_error(&self, e: CuError) -> CuError {
        match self {
            Source::Preprocessed(p) => p.map_error(e),
            Source::Text(_) => e,
        }
    }

    /// The file a kernel read at (unmapped) line `line` is in, when it is not the `.cu`.
    fn file_of(&self, line: usize) -> Option<String> {
        match self {
            Source::Preprocessed(p) => p.origin(line).map(|o| o.file),
            Source::Text(_) => None,
        }
    }
}

/// Finds `decl`'s kernel and checks the declaration against it: the kernel, or `Err` with
/// every error pushed to `cx` (none for a record file whose failure was already reported).
pub(crate) fn resolve(
    decl: &KernelDecl,
    cu: &CuFile,
    config: &Config,
    files: &mut Files,
    cx: &mut Ctxt,
) -> Result<Found, ()> {
    let stem = decl.file.strip_suffix(".cu").unwrap_or(&decl.file).to_string();
    let compiled = match files.record(&stem, config) {
        Some(Ok(c)) => Some(c),
        Some(Err(msg)) => {
            // One unreadable record is one error, however many declarations use it.
            if files.first_failure(&format!("{stem}.kernels")) {
                cx.push(decl.file_span, msg);
            }
            return Err(());
        }
        None => None,
    };
    let source = match compiled.as_ref().and_then(|_| files.preprocessed(&stem, cu, config)) {
        Some(pre) => Source::Preprocessed(pre),
        None => Source::Text(lex(&cu.text)),
    };
    let Some(compiled) = compiled else {
        return source_only(decl, cu, &source, cx);
    };
    // An enumerator template argument written by name (`Mode::Max`) is looked up by its value,
    // which is what the symbol holds.
    let enums = if decl.symbol.contains('<') { enumerators(source.toks()) } else { Vec::new() };
    let wanted = enumerators_as_values(&decl.symbol, &enums);
    let record = match compiled.lookup(&wanted) {
        Lookup::Found(r) => r.clone(),
        other => {
            // Or given to an `int` template parameter (`kfunc<float, FILL>` for `template
            // <typename T, int FUNC>`): C++ converts it, and the symbol holds the int.
            let as_ints = enumerators_as_ints(&decl.symbol, &enums);
            match compiled.lookup(&as_ints) {
                Lookup::Found(r) if as_ints != decl.symbol => r.clone(),
                _ => {
                    lookup_error(decl, cu, &compiled, &source, other, cx);
                    return Err(());
                }
            }
        }
    };
    let unmapped = if is_mangled(&record.name) {
        let Some(d) = demangle(&record.name) else {
            cx.push(
                decl.symbol_span,
                format!(
                    "cannot verify kernel `{}`: kgraph cannot read its mangled symbol `{}` (a construct of the C++ name mangling kgraph does not demangle), so it cannot find the kernel's source signature; way out: give the kernel `extern \"C\"` linkage (a wrapper kernel calling the template), or a simpler template argument list",
                    decl.symbol, record.name
                ),
            );
            return Err(());
        };
        let shown = d.display();
        let want = CppKernel {
            base_name: d.base_name(),
            template_args: d.template_args.as_deref(),
            display: &shown,
            arity: record.params.len(),
            mangled: &record.name,
        };
        find_cpp_kernel(source.toks(), &want)
    } else {
        find_kernel_in(source.toks(), &record.name)
    };
    let file_display = unmapped
        .as_ref()
        .ok()
        .and_then(|k| source.file_of(k.line))
        .map_or_else(|| cu.display.clone(), |f| config.display(Path::new(&f)));
    let found = unmapped.map(|k| source.map_kernel(k)).map_err(|e| source.map_error(e));
    let shown = display_name(&record.name);
    let at = record_at(&record, cu, config);
    // Where the source reading agrees with the record on the parameter list, its messages (C
    // types, the fix) come first and the record's sizes check what it accepted; where they
    // disagree, the record wins.
    let agree = found.as_ref().is_ok_and(|k| k.params.len() == record.params.len());
    let before = cx.len();
    if agree {
        check_decl(decl, &file_display, &found, cx);
    }
    if cx.len() == before {
        check_record(decl, &record, &shown, &at, found.as_ref().ok(), cx);
    }
    if cx.len() == before && !agree {
        check_decl(decl, &file_display, &found, cx);
    }
    if cx.len() == before {
        check_device_fn(decl, &file_display, source.toks(), cx);
    }
    match found {
        Ok(mut kernel) if cx.len() == before => {
            // The compiled launch bounds win over the source's reading of them.
            if let Some(max) = record.max_threads {
                let line = kernel.launch_bounds.map_or(record.line.unwrap_or(0) as usize, |b| b.line);
                kernel.launch_bounds = Some(LaunchBounds { max_threads: max, line });
            }
            Ok(Found {
                kernel,
                display: file_display,
                symbol: record.name.clone(),
                record_path: Some(compiled.path.clone()),
                pdl_waits: pdl_waits(Some(&record)),
            })
        }
        _ => Err(()),
    }
}

/// `kernels/x.cu:12`: where the record says the entry was compiled from.
fn record_at(record: &KernelRecord, cu: &CuFile, config: &Config) -> String {
    let file = record.file.as_deref().map_or_else(|| cu.display.clone(), |f| config.display(Path::new(f)));
    match record.line {
        Some(line) => format!("{file}:{line}"),
        None => file,
    }
}

/// No record: the `.cu` text is all there is (the NVRTC fallback, or a crate built without
/// kgraph-build's records).
fn source_only(decl: &KernelDecl, cu: &CuFile, source: &Source, cx: &mut Ctxt) -> Result<Found, ()> {
    if let Some(msg) = bare_template_message(&decl.symbol, &cu.display, source, None) {
        cx.push(decl.symbol_span, msg);
        return Err(());
    }
    if decl.symbol.contains('<') || decl.symbol.contains("::") || is_mangled(&decl.symbol) {
        cx.push(
            decl.symbol_span,
            format!(
                "cannot verify C++ kernel `{}` of {}: kgraph binds C++ kernels through the record of what nvcc compiled (their mangled symbols), and this build left none (no nvcc: the NVRTC fallback); way out: build with nvcc (scripts/install-nvcc), or give the kernel `extern \"C\"` linkage",
                decl.symbol, cu.display
            ),
        );
        return Err(());
    }
    let found = find_kernel_in(source.toks(), &decl.symbol);
    let before = cx.len();
    check_decl(decl, &cu.display, &found, cx);
    if found.is_ok() {
        check_shared_memory_in_source(decl, &cu.display, source.toks(), cx);
        check_device_fn(decl, &cu.display, source.toks(), cx);
    }
    match found {
        Ok(kernel) if cx.len() == before => Ok(Found {
            kernel,
            display: cu.display.clone(),
            symbol: decl.symbol.clone(),
            record_path: None,
            pdl_waits: false,
        }),
        _ => Err(()),
    }
}

/// `gemm<float, 128>` → `gemm` and `["float", "128"]`; `None` without `<...>`.
fn split_template(name: &str) -> Option<(String, Vec<String>)> {
    let (base, rest) = name.split_once('<')?;
    let inner = rest.trim_end().strip_suffix('>')?;
    let mut args = Vec::new();
    let (mut depth, mut cur) = (0i32, String::new());
    for ch in inner.chars() {
        match ch {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth == 0 => {
                args.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    args.push(cur.trim().to_string());
    let base = base.trim();
    Some((base.rsplit("::").next().unwrap_or(base).to_string(), args))
}

/// The one error of a declaration whose kernel the record does not name (as `lookup` found),
/// pushed to `cx`.
fn lookup_error(
    decl: &KernelDecl,
    cu: &CuFile,
    compiled: &Compiled,
    source: &Source,
    lookup: Lookup<'_>,
    cx: &mut Ctxt,
) {
    let name = &decl.symbol;
    let file = &cu.display;
    let compiled_list = || {
        let names = compiled.names();
        if names.is_empty() {
            "nvcc compiled no kernels from it".to_string()
        } else {
            format!("kernels nvcc compiled from it: {}", names.join(", "))
        }
    };
    let instantiations: Vec<String> = match &lookup {
        Lookup::Ambiguous(candidates) => candidates.iter().map(|(_, shown)| shown.clone()).collect(),
        _ => Vec::new(),
    };
    let bare_template = match &lookup {
        Lookup::Missing | Lookup::Ambiguous(_) => bare_template_message(name, file, source, Some(&instantiations)),
        _ => None,
    };
    if let Some(msg) = bare_template {
        return cx.push(decl.symbol_span, msg);
    }
    let msg = match lookup {
        Lookup::Found(_) => unreachable!("found entries are not errors"),
        Lookup::Ambiguous(candidates) => {
            let list: Vec<String> =
                candidates.iter().map(|(k, shown)| format!("`{shown}` (`name = \"{}\"`)", k.name)).collect();
            format!(
                "kernel name `{name}` is ambiguous in {file}: nvcc compiled {} kernels of that name: {}; name one by its symbol",
                list.len(),
                list.join(", ")
            )
        }
        Lookup::OtherInstantiations(others) => {
            let mut msg =
                format!("nvcc compiled no `{}` from {file}: instantiations compiled: {}", name, others.join(", "));
            if let Some((base, args)) = split_template(name) {
                if let Some((line, at)) = instantiation_line(source.toks(), &base, &args) {
                    let at = source_line(source, at);
                    msg.push_str(&format!("; to compile this one, add after the template (line {at}): `{line}`"));
                }
            }
            msg
        }
        Lookup::Missing => {
            let template = split_template(name)
                .and_then(|(base, args)| instantiation_line(source.toks(), &base, &args).map(|l| (base, l)));
            if let Some((base, (line, at))) = template {
                let at = source_line(source, at);
                format!(
                    "`{name}` is not compiled: {file}:{at} defines the template `{base}`, but nvcc compiles a template kernel only where it is instantiated, and {file} instantiates none with these arguments; add `{line}` after it"
                )
            } else {
                let reader = find_kernel_in(source.toks(), name).ok().map(|k| source.map_kernel(k));
                match reader {
                    Some(k) => format!(
                        "nvcc did not compile kernel `{name}`: kgraph's reading of {file} finds it at line {}, but it is not in what nvcc built (inside `#if 0`, an `#ifdef` branch not taken, or a `#define` that is not expanded?); {}",
                        k.line,
                        compiled_list()
                    ),
                    // The reader's own message (it knows a `__device__` function of that name),
                    // with the kernels nvcc compiled.
                    None => {
                        let non_kernel = match source.map_error(find_kernel_in(source.toks(), name).unwrap_err()) {
                            CuError::NotFound { non_kernel, .. } => non_kernel,
                            _ => None,
                        };
                        let err = CuError::NotFound { name: name.clone(), kernels: compiled.names(), non_kernel };
                        return check_decl(decl, file, &Err(err), cx);
                    }
                }
            }
        }
    };
    cx.push(decl.symbol_span, msg);
}

/// The message for a template kernel named without its template arguments (`name` has none and
/// the source defines a template kernel of that name): the template, its instantiations
/// (`compiled`: what nvcc compiled, `None` without a record) and how to name one.
fn bare_template_message(name: &str, file: &str, source: &Source, compiled: Option<&[String]>) -> Option<String> {
    if name.contains('<') {
        return None;
    }
    let base = name.rsplit("::").next().unwrap_or(name);
    let (at, params, example) = template_kernel(source.toks(), base)?;
    let at = source_line(source, at);
    let head = format!(
        "`{name}` is a template kernel ({file}:{at}, `template <{params}>`), named without its template arguments"
    );
    Some(match compiled {
        Some([]) => format!(
            "{head}, and nvcc compiled no instantiation of it (a template kernel is compiled only where it is \
             instantiated): add one after the template, `{example}` with your arguments, and name it: \
             `name = \"{base}<...>\"`"
        ),
        Some(list) => {
            let names: Vec<String> = list.iter().map(|i| format!("`name = \"{i}\"`")).collect();
            format!("{head}: nvcc compiled {} instantiations of it; name one: {}", list.len(), names.join(", "))
        }
        None => format!(
            "{head}: name an instantiation, `name = \"{base}<...>\"`; kgraph binds C++ kernels through the record of \
             what nvcc compiled, and this build left none (no nvcc: the NVRTC fallback), so build with nvcc \
             (scripts/install-nvcc)"
        ),
    })
}

fn source_line(source: &Source, line: usize) -> usize {
    match source {
        Source::Preprocessed(p) => p.line(line),
        Source::Text(_) => line,
    }
}
