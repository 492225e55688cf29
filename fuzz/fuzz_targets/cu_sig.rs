//! Fuzzes the `.cu` signature reader: the first line is the kernel's name, the rest the `.cu`
//! text. `find_kernel` and `kernel_names` must not panic, and every line they report lies
//! inside the text.

#![no_main]

use kgraph_codegen::cu_sig::{find_kernel, kernel_names, CuError};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (name, src) = text.split_once('\n').unwrap_or(("k", text));
    let names = kernel_names(src);
    let n_lines = src.matches('\n').count() + 1;
    let inside = |line: usize| assert!((1..=n_lines).contains(&line), "line {line} outside 1..={n_lines}");
    match find_kernel(src, name) {
        Ok(k) => {
            inside(k.line);
            k.params.iter().for_each(|p| inside(p.line));
            assert!(names.contains(&k.name), "`{}` read but not listed in {names:?}", k.name);
            let _ = k.signature();
        }
        Err(CuError::NotFound { non_kernel, .. }) => non_kernel.into_iter().for_each(inside),
        Err(CuError::NotExternC { line, .. }) | Err(CuError::Unverifiable { line, .. }) => inside(line),
        Err(CuError::Ambiguous { lines, .. }) => lines.into_iter().for_each(inside),
    }
});
