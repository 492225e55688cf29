//! Checks a declaration against what nvcc compiled: the entry's parameter count and each
//! parameter's size and alignment in the compiled-kernel record. PTX keeps sizes, not C types,
//! so this catches what the source reader could have been fooled about (a parameter list the
//! preprocessor changed, a typedef), and the source check ([`super::check`]) the rest
//! (pointer vs value, constness, signedness).

use quote::quote;

use super::abi::abi;
use super::block_bound::unbounded_static_shared_error;
use crate::compiled::KernelRecord;
use crate::cuda::signature::CuKernel;
use crate::syntax::model::{KernelDecl, Param};

fn plural(n: usize) -> String {
    match n {
        1 => "1 parameter".into(),
        n => format!("{n} parameters"),
    }
}

fn param_error(param: &Param, message: String) -> syn::Error {
    let (name, ty) = (&param.name, &param.ty);
    syn::Error::new_spanned(quote!(#name: #ty), message)
}

/// Every mismatch between `decl` and the compiled entry `record` of kernel `shown` (its
/// name as a person writes it), compiled at `at` (`kernels/x.cu:12`). `source`: what the
/// source reader found, for the message when the two disagree.
pub(crate) fn check_record(
    decl: &KernelDecl,
    record: &KernelRecord,
    shown: &str,
    at: &str,
    source: Option<&CuKernel>,
) -> Vec<syn::Error> {
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
        return vec![match decl.params.get(n_rec) {
            Some(extra) => param_error(extra, format!("{msg}: remove this and any later parameters")),
            None => syn::Error::new(decl.params_span, format!("{msg}: parameters are missing")),
        }];
    }
    let mut errors: Vec<syn::Error> = decl
        .params
        .iter()
        .zip(&record.params)
        .enumerate()
        .filter_map(|(index, (param, rec))| {
            let want = abi(param.kind)?;
            (want.size != rec.size || want.align != rec.align).then(|| {
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
                )
            })
        })
        .collect();
    errors.extend(undeclared_shared_memory_error(decl, record, shown, at));
    errors.extend(unbounded_static_shared_error(decl, record, shown, at));
    if errors.is_empty() {
        if let Some(k) = source.filter(|k| k.params.len() != n_rec) {
            errors.push(syn::Error::new(
                decl.symbol_span,
                format!(
                    "cannot verify kernel `{shown}`: nvcc compiled {} ({at}), but kgraph's reading of the source finds {} (`{}`); the parameter types cannot be paired. Way out: rebuild so kgraph-build writes `<stem>.i` beside the record (nvcc is found), or spell the parameter list without preprocessor conditionals",
                    plural(n_rec),
                    k.params.len(),
                    k.signature()
                ),
            ));
        }
    }
    errors
}

/// Rule: a checked launch of a kernel that uses dynamic shared memory (an `extern __shared__`
/// array, as the record shows) needs `shared = <bytes>`: otherwise any `cfg.shared_mem_bytes`,
/// 0 included, would pass the checks while the kernel indexes past what the launch gave it.
fn undeclared_shared_memory_error(
    decl: &KernelDecl,
    record: &KernelRecord,
    shown: &str,
    at: &str,
) -> Option<syn::Error> {
    let promise = decl.extents_promise?;
    if !record.dyn_smem || decl.shared.is_some() {
        return None;
    }
    Some(syn::Error::new(
        promise,
        format!(
            "kernel `{shown}` uses dynamic shared memory as nvcc compiled it ({at}): it names an `extern __shared__` \
             array, or calls code the PTX lacks (another file's function, an indirect call), which may; a safe launch \
             must give it what it uses: declare how many bytes it needs for a launch, over its integer scalars \
             and `block.x`/`block.y`/`block.z`, e.g. `shared = block.x * 4`; the launch then refuses a \
             `cfg.shared_mem_bytes` below it (`shared = 0` if the kernel reads `%dynamic_smem_size` and stays within \
             any size)"
        ),
    ))
}
