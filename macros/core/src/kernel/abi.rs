//! How a declared parameter is passed, in bytes: what the compiled record's parameter sizes
//! and alignments are checked against, and what the handle's `PARAM_SIZES` (checked at load
//! against the driver's `cuFuncGetParamInfo`) lists. One function of the model's type, so a
//! new parameter kind is one more arm.

use crate::syntax::model::ParamKind;

/// Size and alignment of a kernel parameter, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Abi {
    /// `sizeof`.
    pub size: u32,
    /// `alignof`.
    pub align: u32,
}

/// The size and alignment the declared `kind` passes: every pointer kind is a 64-bit device
/// address; a value is its element's size and alignment. `None` for a struct by value, whose
/// size the generated layout checks compare with the C struct instead.
pub(crate) fn abi(kind: ParamKind) -> Option<Abi> {
    match kind {
        ParamKind::Slice { .. } | ParamKind::Pinned(_) | ParamKind::PinnedMut(_) => Some(Abi { size: 8, align: 8 }),
        ParamKind::Scalar(elem) => Some(Abi { size: elem.size()? as u32, align: elem.align()? as u32 }),
    }
}
