//! Checks a declaration against what nvcc compiled: the entry's parameter count and each
//! parameter's size and alignment in the compiled-kernel record. PTX keeps sizes, not C types,
//! so this catches what the source reader could have been fooled about (a parameter list the
//! preprocessor changed, a typedef), and the source check ([`super::check`]) the rest
//! (pointer vs value, constness, signedness).

use super::abi::abi;
use super::block_bound::check_static_shared_bound;
use super::param_error::param_error;
use crate::compiled::KernelRecord;
use crate::cuda::signature::CuKernel;
use crate::diagnostics::Ctxt;
use crate::syntax::model::KernelDecl;

fn plural(n: usize) -> String {
    match n {
        1 => "1 parameter".into(),
        n => format!("{n} parameters"),
    }
}

/// Every mismatch between `decl` and the compiled entry `record` of kernel `shown` (its name
/// as a person writes it), compiled at `at` (`kernels/x.cu:12`), each pushed to `cx`.
/// `source`: what the source reader found, for the message when the two disagree.
pub(crate) fn check_record(
    decl: &KernelDecl,
    record: &KernelRecord,
    shown: &str,
    at: &str,
    source: Option<&CuKernel>,
    cx: &mut Ctxt,
) {
    let (n_rec, n_rust) = (record.params.len(), decl.params.len());
    let reader_note = |n_src: usize| {
        format!(
            " (kgraph's reading of the source finds {}; the compiled record wins: the preprocessor changed the parameter list)",
            n_src
        )
    };
    if n_rec != n_rust {
        let note = source.map(|k| k.params.len()).filter(|&n| n != n_rec).map(reader_note).unwrap_or_default();
        let msg =
            format!("kernel `{shown}` as nvcc compiled it ({at}) takes {}, declared {n_rust}{note}", plural(n_rec));
        return match decl.params.get(n_rec) {
            Some(extra) => param_error(extra, format!("{msg}: remove this and any later parameters"), cx),
            None => cx.push(decl.params_span, format!("{msg}: parameters are missing")),
        };
    }
    let before = cx.len();
    for (index, (param, rec)) in decl.params.iter().zip(&record.params).enumerate() {
        let Some(want) = abi(param.kind) else { continue };
        if want.size != rec.size || want.align != rec.align {
            param_error(
                param,
                format!(
                    "parameter `{}`: nvcc compiled parameter {} of `{shown}` ({at}) as {} bytes aligned to {} (PTX `.{}`), but `{}` passes {} bytes aligned to {}",
                    param.name,
                    index + 1,
                    rec.size,
                    rec.align,
                    rec.ptx_type,
                    param.kind.rust_decl(),
                    want.size,
                    want.align
                ),
                cx,
            );
        }
    }
    check_shared_memory_declared(decl, record, shown, at, cx);
    check_static_shared_bound(decl, record, shown, at, cx);
    if cx.len() == before {
        if let Some(k) = source.filter(|k| k.params.len() != n_rec) {
            cx.push(
                decl.symbol_span,
                format!(
                    "cannot verify kernel `{shown}`: nvcc compiled {} ({at}), but kgraph's reading of the source finds {} (`{}`); the parameter types cannot be paired. Way out: rebuild so kgraph-build writes `<stem>.i` beside the record (nvcc is found), or spell the parameter list without preprocessor conditionals",
                    plural(n_rec),
                    k.params.len(),
                    k.signature()
                ),
            );
        }
    }
}

/// Rule: a checked launch of a kernel that uses dynamic shared memory (an `extern __shared__`
/// array, as the record shows) needs `shared = <bytes>`: otherwise any `cfg.shared_mem_bytes`,
/// 0 included, would pass the checks while the kernel indexes past what the launch gave it.
fn check_shared_memory_declared(decl: &KernelDecl, record: &KernelRecord, shown: &str, at: &str, cx: &mut Ctxt) {
    let Some(promise) = decl.extents_promise else { return };
    if !record.dyn_smem || decl.shared.is_some() {
        return;
    }
    cx.push(
        promise,
        format!(
            "kernel `{shown}` uses dynamic shared memory as nvcc compiled it ({at}): it names an `extern __shared__` \
             array, or calls code the PTX lacks (another file's function, an indirect call), which may; a safe launch \
             must give it what it uses: declare how many bytes it needs for a launch, over its integer scalars \
             and `block.x`/`block.y`/`block.z`, e.g. `shared = block.x * 4`; the launch then refuses a \
             `cfg.shared_mem_bytes` below it (`shared = 0` if the kernel reads `%dynamic_smem_size` and stays within \
             any size)"
        ),
    );
}
