//! `kgraph declare` with the build's record: one declaration per entry nvcc compiled, in PTX
//! order. An `extern "C"` entry is declared by its name; a C++ entry (a plain C++ kernel, each
//! instantiation of a template) by `name = "<C++ name>"` as the demangler reads it
//! (`act_mul<float, square<float>, true>`), its Rust function named after it
//! (`act_mul_float_square_float_true`); an entry kgraph cannot bind gets the reason. Kernels
//! with internal linkage are declared too: the record holds the symbol nvcc gave them in this
//! build, which is the symbol the build's cubin holds and the handle loads.

use std::collections::HashSet;

use super::config::{Config, CuFile, Files};
use super::declare_line::{declaration, error_line, rust_ident, unreadable, Naming, Suggestion};
use crate::compiled::demangle::{demangle, Demangled};
use crate::compiled::{is_mangled, Compiled, KernelRecord};
use crate::cuda::cpp::{find_cpp_kernel, CppKernel};
use crate::cuda::enums::{enumerator_name, enumerators, Enumerator};
use crate::cuda::lex::{lex, Token};
use crate::cuda::preprocessed::Preprocessed;
use crate::cuda::signature::{find_kernel_in, global_kernel_names, CuError, CuKernel};

/// The anonymous namespace as the demangler shows it: left out of the name a declaration
/// gives (the lookup accepts a name without its namespaces).
const ANONYMOUS: &str = "(anonymous namespace)::";

/// One suggestion per entry of `compiled`, the record of `file`.
pub(super) fn from_record(
    file: &str,
    cu: &CuFile,
    compiled: &Compiled,
    files: &mut Files,
    config: &Config,
) -> Vec<Suggestion> {
    let stem = file.strip_suffix(".cu").unwrap_or(file);
    let pre = files.preprocessed(stem, cu, config);
    let text_toks;
    let toks: &[Token] = match &pre {
        Some(p) => &p.toks,
        None => {
            text_toks = lex(&cu.text);
            &text_toks
        }
    };
    let mut taken = HashSet::new();
    let enums = enumerators(toks);
    let shown = compiled.names();
    let mut out = Vec::new();
    for entry in &compiled.kernels {
        let line = entry.line.map_or(0, |l| l as usize);
        let suggestion = if !is_mangled(&entry.name) {
            let naming = unique(Naming::extern_c(&entry.name), &mut taken);
            let found = find_kernel_in(toks, &entry.name);
            suggest(file, cu, pre.as_deref(), entry.name.clone(), line, found, &naming, config)
        } else {
            match demangle(&entry.name) {
                Some(d) => {
                    let cpp_name = cpp_name(&d, &enums);
                    let overloaded = shown.iter().filter(|s| **s == d.display()).count() > 1;
                    let naming = unique(cpp_naming(&cpp_name, entry, overloaded), &mut taken);
                    let found = read_cpp(toks, &d, entry);
                    suggest(file, cu, pre.as_deref(), cpp_name, line, found, &naming, config)
                }
                None => Suggestion {
                    kernel: entry.name.clone(),
                    line,
                    declaration: Err(format!(
                        "kgraph cannot read its mangled symbol `{}` (a construct of the C++ name mangling kgraph does not demangle), so it cannot find the kernel's source signature; way out: an `extern \"C\"` wrapper kernel that calls it",
                        entry.name
                    )),
                },
            }
        };
        out.push(suggestion);
    }
    out.extend(not_compiled(cu, compiled));
    out
}

/// The kernels of the `.cu` text no record entry is (a template nvcc instantiated with no
/// arguments, code under an `#if` the build left out), each with the reason, so none is
/// skipped without a word.
fn not_compiled(cu: &CuFile, compiled: &Compiled) -> Vec<Suggestion> {
    let names: HashSet<String> = compiled
        .kernels
        .iter()
        .map(|k| demangle(&k.name).map_or_else(|| k.name.clone(), |d| d.base_name().to_string()))
        .collect();
    global_kernel_names(&cu.text)
        .into_iter()
        .filter(|(name, _, _)| !names.contains(name))
        .map(|(name, line, extern_c)| {
            let why = if extern_c {
                "not in the build's record of what nvcc compiled (left out by the preprocessor in this build?)"
            } else {
                "not in the build's record of what nvcc compiled: a template is compiled only for the arguments it is instantiated with (add an explicit instantiation, `template __global__ void f<float>(float* x, int n);`, to the .cu), and code an `#if` left out is not compiled"
            };
            Suggestion { kernel: name, line, declaration: Err(why.to_string()) }
        })
        .collect()
}

/// The name a declaration gives C++ entry `d`: as demangled, without the anonymous namespace,
/// and with each enumerator argument by its name where the source has it (`Mode::Max` for
/// `(Mode)1`; `#[kernel]` looks it up by value again).
fn cpp_name(d: &Demangled, enums: &[Enumerator]) -> String {
    let args = d
        .template_args
        .as_ref()
        .map(|args| args.iter().map(|a| enumerator_name(a, enums).unwrap_or_else(|| a.clone())).collect::<Vec<_>>());
    Demangled { name: d.name.clone(), template_args: args }.display().replace(ANONYMOUS, "")
}

/// The suggestion for a kernel found (or not) in the source tokens.
#[allow(clippy::too_many_arguments)]
fn suggest(
    file: &str,
    cu: &CuFile,
    pre: Option<&Preprocessed>,
    kernel: String,
    line: usize,
    found: Result<CuKernel, CuError>,
    naming: &Naming,
    config: &Config,
) -> Suggestion {
    let found = match pre {
        Some(p) => found.map(|k| p.map_kernel(k)).map_err(|e| p.map_error(e)),
        None => found,
    };
    match found {
        Ok(k) => {
            let line = if line == 0 { k.line } else { line };
            Suggestion { kernel, line, declaration: declaration(file, &cu.display, &k, naming, config) }
        }
        Err(e) => {
            let line = if line == 0 { error_line(&e) } else { line };
            Suggestion { kernel, line, declaration: Err(unreadable(&e, &cu.display)) }
        }
    }
}

/// The source signature of C++ entry `entry` (demangled `d`), as `#[kernel]` reads it.
fn read_cpp(toks: &[Token], d: &Demangled, entry: &KernelRecord) -> Result<CuKernel, CuError> {
    let shown = d.display();
    let want = CppKernel {
        base_name: d.base_name(),
        template_args: d.template_args.as_deref(),
        display: &shown,
        arity: entry.params.len(),
        mangled: &entry.name,
    };
    find_cpp_kernel(toks, &want)
}

/// The naming of C++ entry `entry`: `act_mul<float, square<float>, true>` →
/// `act_mul_float_square_float_true`, with the C++ name in `name = "..."`; an overload (a C++
/// name that several entries share) by its mangled symbol, which alone tells it apart.
fn cpp_naming(cpp_name: &str, entry: &KernelRecord, overloaded: bool) -> Naming {
    let mut fn_name = String::new();
    for c in cpp_name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            fn_name.push(c);
        } else if !fn_name.is_empty() && !fn_name.ends_with('_') {
            fn_name.push('_');
        }
    }
    // snake_case, as a Rust function is named (`combine<Mode::Max>` → `combine_mode_max`).
    let fn_name = rust_ident(&fn_name.trim_end_matches('_').to_ascii_lowercase());
    let name = if overloaded { entry.name.as_str() } else { cpp_name };
    let name_attr = (fn_name != name).then(|| name.to_string());
    Naming { fn_name, name_attr, internal_symbol: (!entry.visible).then(|| entry.name.clone()) }
}

/// `naming` with a function name no earlier declaration of the file took (overloads and
/// instantiations that read the same get `_2`, `_3`, ...).
fn unique(mut naming: Naming, taken: &mut HashSet<String>) -> Naming {
    let base = naming.fn_name.clone();
    let mut k = 2;
    while !taken.insert(naming.fn_name.clone()) {
        naming.fn_name = format!("{base}_{k}");
        k += 1;
    }
    naming
}
