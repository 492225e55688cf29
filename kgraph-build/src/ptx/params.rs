//! An entry's parameter list as the record describes it: each `.param`'s PTX type, size,
//! alignment, array length and `.ptr` annotation, from the byte size of PTX's element types.

use crate::record::{ParamRecord, PtrSpace};

/// The parameters of an entry's parameter list text.
pub(super) fn params(list: &str) -> Vec<ParamRecord> {
    list.split(',').map(str::trim).filter(|p| !p.is_empty()).enumerate().map(|(index, p)| param(index, p)).collect()
}

/// One `.param [.align N] .type [.ptr [.space] [.align N]] name[[N]]`.
fn param(index: usize, text: &str) -> ParamRecord {
    let (mut ty, mut align, mut array) = (String::new(), None, None);
    let (mut ptr, mut ptr_space, mut ptr_align) = (false, None, None);
    let mut words = text.split_whitespace().peekable();
    while let Some(w) = words.next() {
        match w {
            ".param" => {}
            ".ptr" => ptr = true,
            ".align" => {
                let n = words.next().and_then(|n| n.parse().ok());
                if ptr {
                    ptr_align = n;
                } else {
                    align = n;
                }
            }
            _ if ptr && w.starts_with('.') => ptr_space = PtrSpace::from_name(&w[1..]),
            _ if w.starts_with('.') && element_size(&w[1..]).is_some() => ty = w[1..].to_string(),
            _ => {
                // The name, possibly with its array length: `p[48]` or `p [48]`.
                let rest: String = std::iter::once(w).chain(words.by_ref()).collect();
                array = rest.split_once('[').and_then(|(_, n)| n.trim_end_matches(']').trim().parse().ok());
            }
        }
    }
    let elem = element_size(&ty).unwrap_or(0);
    ParamRecord {
        index,
        size: elem * array.unwrap_or(1),
        align: align.unwrap_or(elem),
        ptx_type: ty,
        array,
        ptr_space: if ptr { Some(ptr_space.unwrap_or(PtrSpace::Generic)) } else { None },
        ptr_align,
    }
}

/// Bytes of one element of PTX type `ty` (`u32`, `f64`, `b8`, ...).
pub(super) fn element_size(ty: &str) -> Option<u32> {
    Some(match ty {
        "b8" | "u8" | "s8" => 1,
        "b16" | "u16" | "s16" | "f16" | "bf16" => 2,
        "b32" | "u32" | "s32" | "f32" | "f16x2" | "bf16x2" => 4,
        "b64" | "u64" | "s64" | "f64" => 8,
        "b128" => 16,
        _ => return None,
    })
}
