//! The `#[kernel]` declaration to write for each kernel of a `.cu` file (`kgraph declare`): the
//! parameter types the check would ask for (`check`'s rules), then the declaration
//! checked exactly as the macro checks it, so what is suggested is known to bind.
//!
//! Extents cannot be read from a `.cu` (they are the kernel author's promise), so the
//! declarations have none: they compile, and their `launch` is an `unsafe fn` until the author
//! adds the extents and `unsafe(extents)`.
//!
//! With the build's record of what nvcc compiled (`<stem>.kernels`), every entry is declared:
//! `extern "C"` kernels by name, C++-linkage kernels (template instantiations included) with
//! `name = "<C++ name>"` as the demangler reads it (`declare_record.rs`).
//! Without one, only `extern "C"` kernels can be; each C++ kernel gets the reason.

use super::config::{Config, Files};
use super::declare_line::{declaration, error_line, unreadable, Naming};
pub use super::declare_line::{Declaration, Suggestion};
use super::declare_record::from_record;
use crate::cuda::signature::{cpp_kernel_names, find_kernel, kernel_names};

/// Every kernel of `file` (found as `#[kernel("file")]` finds it, in `config`'s kernel
/// folders), each with its declaration or why there is none: with the build's record, its
/// entries in PTX order; without, the file's kernels in line order. `Err` when the file or
/// its record cannot be read.
pub fn suggest_declarations(file: &str, config: &Config) -> Result<Vec<Suggestion>, String> {
    let mut files = Files::default();
    let cu = files.get(file, config)?;
    let stem = file.strip_suffix(".cu").unwrap_or(file);
    match files.record(stem, config) {
        Some(Ok(compiled)) => return Ok(from_record(file, &cu, &compiled, &mut files, config)),
        Some(Err(e)) => return Err(e),
        None => {}
    }
    let mut names = kernel_names(&cu.text);
    // A prototype and its definition name the kernel twice.
    let mut seen = std::collections::HashSet::new();
    names.retain(|name| seen.insert(name.clone()));
    let mut suggestions = names
        .into_iter()
        .map(|name| match find_kernel(&cu.text, &name) {
            Ok(kernel) => Suggestion {
                kernel: name,
                line: kernel.line,
                declaration: declaration(file, &cu.display, &kernel, &Naming::extern_c(&kernel.name), config),
            },
            Err(e) => Suggestion { kernel: name, line: error_line(&e), declaration: Err(unreadable(&e, &cu.display)) },
        })
        .collect::<Vec<_>>();
    // C++ kernels are bound through the record's mangled symbols (their instantiations are
    // known only from it).
    for (name, line) in cpp_kernel_names(&cu.text) {
        let why = "C++ linkage: kgraph binds C++ kernels (and each template instantiation) through the build's record of what nvcc compiled, and there is none; `cargo build` the crate (kgraph-build writes the record) and run `kgraph declare` again, or pass `--records <DIR>`";
        suggestions.push(Suggestion { kernel: name, line, declaration: Err(why.to_string()) });
    }
    suggestions.sort_by_key(|s| s.line);
    Ok(suggestions)
}
