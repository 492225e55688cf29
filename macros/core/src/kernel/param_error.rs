//! The one way a check reports an error about a declared parameter: over its whole
//! declaration (`x: &[f32; n]`), which rustc underlines from the name to the end of the type.

use quote::quote;

use crate::diagnostics::Ctxt;
use crate::syntax::model::Param;

/// Pushes `message` about `param` to `cx`, spanning the parameter's declaration.
pub(super) fn param_error(param: &Param, message: String, cx: &mut Ctxt) {
    let (name, ty) = (&param.name, &param.ty);
    cx.push_spanned(quote!(#name: #ty), message);
}
