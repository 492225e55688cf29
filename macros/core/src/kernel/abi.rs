//! How a declared parameter is passed, in bytes: what the compiled record's parameter sizes
//! and alignments are checked against, and what the handle's `PARAM_SIZES` (checked at load
//! against the driver's `cuFuncGetParamInfo`) lists. One function of the model's type, so a
//! new parameter kind is one more arm.

use crate::syntax::model::{Elem, ParamKind};

/// Size and alignment of a kernel parameter, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Abi {
    /// `sizeof`.
    pub size: u32,
    /// `alignof`.
    pub align: u32,
}

/// The size and alignment the declared `kind` passes: every pointer kind is a 64-bit device
/// address; a value is its element's size, aligned to it.
pub(crate) fn abi(kind: ParamKind) -> Abi {
    match kind {
        ParamKind::Slice { .. } | ParamKind::Pinned(_) | ParamKind::PinnedMut(_) => Abi { size: 8, align: 8 },
        ParamKind::Scalar(elem) => {
            let size = elem_size(elem);
            Abi { size, align: size }
        }
    }
}

/// Bytes of one element.
pub(crate) fn elem_size(elem: Elem) -> u32 {
    match elem {
        Elem::I8 | Elem::U8 => 1,
        Elem::I16 | Elem::U16 => 2,
        Elem::F32 | Elem::I32 | Elem::U32 => 4,
        Elem::F64 | Elem::I64 | Elem::U64 => 8,
    }
}
