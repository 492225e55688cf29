//! Static shared memory in PTX: the `.shared` arrays (CUDA `__shared__` variables that are not
//! `extern`) a kernel uses. Their size is fixed at compile time whatever block the launch has,
//! so a kernel indexing one by thread depends on the block size (what `#[kernel]`'s block-bound
//! rule reads from the record).

use super::function::Body;
use super::params::element_size;
use crate::record::SharedRecord;

/// Every static `.shared` declaration of comment-free PTX `text`, at module scope or inside a
/// function body (nvcc moves a function-scope `__shared__` used by one kernel into that kernel's
/// body: "demoted"), in text order: symbol to size in bytes.
pub(super) fn static_shared_arrays(text: &str) -> Vec<SharedRecord> {
    let mut out: Vec<SharedRecord> = Vec::new();
    for statement in text.split(['\n', ';', '{', '}']) {
        let words: Vec<&str> = statement.split_whitespace().collect();
        // Linkage words may come first (`.visible .shared`, `.weak .shared`); `.extern` is
        // dynamic shared memory, not this.
        let Some(at) = words.iter().position(|w| *w == ".shared") else { continue };
        let linkage = words[..at].iter().all(|w| matches!(*w, ".visible" | ".weak" | ".common"));
        if !linkage || words.contains(&".extern") {
            continue;
        }
        if let Some(array) = declaration(&words[at + 1..]) {
            if !out.iter().any(|a| a.symbol == array.symbol) {
                out.push(array);
            }
        }
    }
    out
}

/// `[.align N] .type name[[N]]...` after `.shared`.
fn declaration(words: &[&str]) -> Option<SharedRecord> {
    let mut elem = None;
    let mut rest = Vec::new();
    let mut words = words.iter();
    while let Some(w) = words.next() {
        match *w {
            ".align" => {
                words.next();
            }
            w if w.starts_with('.') => elem = element_size(&w[1..]).or(elem),
            w => rest.push(w),
        }
    }
    // The name and its dimensions (`t[512]`, `t [4][8]`); an initializer cannot follow.
    let joined: String = rest.concat();
    let joined = joined.split('=').next()?.trim();
    let (name, dims) = joined.split_once('[').map_or((joined, ""), |(n, d)| (n, d));
    let is_name = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || "_$".contains(c));
    if !is_name {
        return None;
    }
    let mut size = u64::from(elem?);
    for dim in dims.split('[').map(|d| d.trim_end_matches(']').trim()).filter(|d| !d.is_empty()) {
        size = size.saturating_mul(dim.parse().ok()?);
    }
    Some(SharedRecord { symbol: name.to_string(), size })
}

/// The arrays of `arrays` that the bodies `reached` (a kernel's and those of the functions it
/// calls) declare or name, in `arrays`' order.
pub(super) fn used_by(reached: &[&Body], arrays: &[SharedRecord]) -> Vec<SharedRecord> {
    arrays.iter().filter(|a| reached.iter().any(|b| b.names(&a.symbol))).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::super::records_from_ptx;
    use super::*;

    /// Static shared memory as nvcc 13 writes it: a function-scope array used by one kernel is
    /// declared in its body; one used by a function two kernels call stays at module scope.
    const PTX: &str = r#"
.version 8.0
.target sm_90
.extern .shared .align 16 .b8 dyn[];
.shared .align 4 .b8 _ZZ6helperPfE1h[256];
.visible .shared .align 8 .f64 grid2d[4][8];
.func helper()
{
	st.shared.u32 [_ZZ6helperPfE1h+4], %r1;
	ret;
}
.visible .entry tile(.param .u64 tile_param_0)
{
	.shared .align 4 .b8 _ZZ4tileE1t[512];
	st.shared.f32 [%r5], %f1;
	mov.u32 %r6, _ZZ4tileE1t;
	ret;
}
.visible .entry via_helper()
{
	call.uni helper, ();
	ld.shared.f64 %fd1, [grid2d+8];
	ret;
}
.visible .entry dynamic_only()
{
	st.shared.f32 [dyn+4], %f1;
	ret;
}
"#;

    #[test]
    fn static_shared_arrays_are_the_ones_a_kernel_declares_or_reaches() {
        let records = records_from_ptx(PTX);
        let arrays: Vec<(&str, Vec<(&str, u64)>)> = records
            .iter()
            .map(|k| (k.name.as_str(), k.static_shared.iter().map(|a| (a.symbol.as_str(), a.size)).collect()))
            .collect();
        assert_eq!(
            arrays,
            [
                ("tile", vec![("_ZZ4tileE1t", 512)]),
                ("via_helper", vec![("_ZZ6helperPfE1h", 256), ("grid2d", 256)]),
                ("dynamic_only", vec![]),
            ]
        );
        let text = crate::record::format_kernel_record(None, &records);
        assert!(text.contains("\nshared _ZZ4tileE1t size=512\n"), "{text}");
        assert_eq!(crate::record::parse_kernel_record(&text).unwrap(), records);
    }

    #[test]
    fn declarations_read_sizes_and_skip_what_is_not_one() {
        let read = |s: &str| static_shared_arrays(s).into_iter().map(|a| (a.symbol, a.size)).collect::<Vec<_>>();
        assert_eq!(read(".shared .align 4 .f32 x;"), [("x".to_string(), 4)]);
        assert_eq!(read(".shared .align 4 .b8 t [4][8];"), [("t".to_string(), 32)]);
        assert!(read(".extern .shared .align 4 .b8 d[];").is_empty());
        assert!(read("st.shared.f32 [t], %f1;").is_empty());
        assert!(read(".global .align 4 .b8 g[8];").is_empty());
    }
}
