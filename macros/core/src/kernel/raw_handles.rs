//! Rule: a kernel that takes raw handles gets an `unsafe` launch only. A texture or surface
//! object (`cudaTextureObject_t`, `cudaSurfaceObject_t`, `CUtexObject`, `CUsurfObject`) is a
//! `u64` to the Rust side, and so is a pointer field of a struct (`DeviceStruct` twins hold
//! device addresses as `u64`): safe code can set either to any value, and the kernel then
//! reads or writes wherever it points. No promise about the kernel "for any scalar values"
//! can hold, so `unsafe(extents)` is refused for such a kernel, naming the parameter.

use super::param_error::param_error;
use crate::cuda::signature::{CuBase, CuKernel, CuParam};
use crate::cuda::types::{CFieldType, CStruct};
use crate::diagnostics::Ctxt;
use crate::syntax::model::{KernelDecl, Param};

/// The CUDA handle types that are plain integers in C and to kgraph.
const HANDLE_TYPES: [&str; 4] = ["cudaTextureObject_t", "cudaSurfaceObject_t", "CUtexObject", "CUsurfObject"];

/// One error to `cx` per parameter of `decl` that is, or is a struct holding, a raw handle,
/// when the declaration makes the promise (`unsafe(extents)`); `file` is the `.cu` for messages.
pub(crate) fn check_raw_handles(decl: &KernelDecl, file: &str, kernel: &CuKernel, cx: &mut Ctxt) {
    if decl.extents_promise.is_none() {
        return;
    }
    for (param, cu) in decl.params.iter().zip(&kernel.params) {
        if let Some(why) = raw_handle(cu) {
            handle_error(param, cu, file, why, cx);
        }
    }
}

/// What makes `cu` a raw handle: its type, or the struct field (path and type) that is one.
fn raw_handle(cu: &CuParam) -> Option<String> {
    if HANDLE_TYPES.contains(&cu.ty.spelled.as_str()) && cu.ty.pointers == 0 {
        return Some(format!("its type `{}` is a texture or surface object", cu.ty.spelled));
    }
    let CuBase::Struct(s) = &cu.ty.base else { return None };
    let (path, spelled) = handle_field(s, &s.name)?;
    Some(format!("its struct `{}` has field `{path}` of type `{spelled}`", s.name))
}

/// The first field of `s`, nested structs included, that is a pointer or a handle: its path
/// (`Params.inner.weights`) and type as spelled.
fn handle_field(s: &CStruct, prefix: &str) -> Option<(String, String)> {
    s.fields.iter().find_map(|f| {
        let path = format!("{prefix}.{}", f.name);
        match &f.ty {
            CFieldType::Pointer => Some((path, f.spelled.clone())),
            CFieldType::Elem(_) if HANDLE_TYPES.contains(&f.spelled.as_str()) => Some((path, f.spelled.clone())),
            CFieldType::Struct(inner) => handle_field(inner, &path),
            CFieldType::Elem(_) => None,
        }
    })
}

fn handle_error(param: &Param, cu: &CuParam, file: &str, why: String, cx: &mut Ctxt) {
    param_error(
        param,
        format!(
            "parameter `{}` ({file}:{}): {why}, an address the kernel accesses memory through, but on the Rust side \
             a plain integer that safe code can set to any value, so no promise about the kernel can \
             bound what a launch then accesses: a kernel taking texture or surface objects, or structs holding \
             pointers, gets an `unsafe` launch only; remove `unsafe(extents)` (callers then state in an `unsafe` \
             block that every handle and pointer they pass is valid for what the kernel does with it), or pass the \
             memory as a `&[T; n]` parameter instead",
            param.name, cu.line
        ),
        cx,
    );
}
