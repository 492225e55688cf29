//! C type names that need no definition in the file: the keyword types (`unsigned long long`),
//! fixed-width integers and CUDA's built-in types kgraph has a Rust twin of (`__half`, `float4`,
//! `cudaTextureObject_t`, ...), those it has none of, and hints for the latter in messages.

use super::model::CuBase;
use crate::syntax::model::{Elem, Vector};

const TYPE_WORDS: [&str; 10] =
    ["signed", "unsigned", "short", "long", "int", "char", "float", "double", "void", "bool"];

/// A C keyword that is (part of) a type name: `unsigned`, `int`, `float`, ...
pub(crate) fn is_type_word(word: &str) -> bool {
    TYPE_WORDS.contains(&word)
}

/// Base type from C keywords (`unsigned long long int`); `None` for an invalid combination.
pub(crate) fn word_type(words: &[&str]) -> Option<CuBase> {
    let count = |w: &str| words.iter().filter(|x| **x == w).count();
    let (signed, unsigned, short, long, int, char) =
        (count("signed"), count("unsigned"), count("short"), count("long"), count("int"), count("char"));
    let (float, double, void, boolean) = (count("float"), count("double"), count("void"), count("bool"));
    if signed + unsigned > 1 || int > 1 || char > 1 || short > 1 || long > 2 || (short > 0 && long > 0) {
        return None;
    }
    let sign_or_size = signed + unsigned + short + long + int + char;
    if float + double + void + boolean > 0 {
        let one = float + double + void + boolean == 1;
        return match () {
            _ if one && double == 1 && long == 1 && sign_or_size == 1 => Some(CuBase::Other),
            _ if one && sign_or_size == 0 && float == 1 => Some(CuBase::Elem(Elem::F32)),
            _ if one && sign_or_size == 0 && double == 1 => Some(CuBase::Elem(Elem::F64)),
            _ if one && sign_or_size == 0 && void == 1 => Some(CuBase::Void),
            _ if one && sign_or_size == 0 => Some(CuBase::Elem(Elem::Bool)),
            _ => None,
        };
    }
    let u = unsigned == 1;
    let elem = if char == 1 {
        if short + long + int > 0 {
            return None;
        }
        // Plain `char` is signed on x86-64 and in CUDA device code.
        match (signed, unsigned) {
            (_, 1) => Elem::U8,
            _ => Elem::I8,
        }
    } else if short == 1 {
        if u {
            Elem::U16
        } else {
            Elem::I16
        }
    } else if long >= 1 {
        if u {
            Elem::U64
        } else {
            Elem::I64
        }
    } else if u {
        Elem::U32
    } else {
        Elem::I32
    };
    Some(CuBase::Elem(elem))
}

/// The base type of a C type name that needs no definition in the file: fixed-width integers,
/// CUDA's half, bfloat16 and vector types, texture and surface objects. `None` when the name
/// is not one of them.
pub(crate) fn builtin(name: &str) -> Option<CuBase> {
    let elem = match name {
        "int8_t" => Elem::I8,
        "uint8_t" | "uchar" => Elem::U8,
        "int16_t" => Elem::I16,
        "uint16_t" | "ushort" => Elem::U16,
        "int32_t" => Elem::I32,
        "uint32_t" | "uint" => Elem::U32,
        // `clock_t` is `long` in glibc (LP64), as nvcc compiles device code on Linux.
        "int64_t" | "ptrdiff_t" | "longlong" | "intptr_t" | "ssize_t" | "clock_t" => Elem::I64,
        "uint64_t" | "size_t" | "ulonglong" | "uintptr_t" => Elem::U64,
        // `typedef unsigned long long` in the CUDA headers.
        "cudaTextureObject_t" | "cudaSurfaceObject_t" | "CUtexObject" | "CUsurfObject" => Elem::U64,
        "half" | "__half" => Elem::F16,
        "__nv_bfloat16" | "nv_bfloat16" => Elem::Bf16,
        "half2" | "__half2" => Elem::Vector(Vector::Half2),
        "__nv_bfloat162" | "nv_bfloat162" => Elem::Vector(Vector::Bf16x2),
        _ => match Vector::all().find(|v| v.c_name() == name) {
            Some(v) => Elem::Vector(v),
            None if is_cuda_only_type(name) => return Some(CuBase::Other),
            None => return None,
        },
    };
    Some(CuBase::Elem(elem))
}

/// CUDA types kgraph has no Rust twin of: other vector widths, `dim3`, tensor maps.
fn is_cuda_only_type(name: &str) -> bool {
    const NAMED: [&str; 8] =
        ["dim3", "wchar_t", "CUtensorMap", "char16_t", "char32_t", "__half_raw", "__nv_bfloat16_raw", "cudaStream_t"];
    const VECTOR_BASES: [&str; 12] = [
        "char",
        "uchar",
        "short",
        "ushort",
        "int",
        "uint",
        "long",
        "ulong",
        "longlong",
        "ulonglong",
        "float",
        "double",
    ];
    NAMED.contains(&name)
        || name.strip_suffix(['1', '2', '3', '4']).is_some_and(|base| VECTOR_BASES.contains(&base))
        || name.ends_with("_16a")
        || name.ends_with("_32a")
}

/// What the Rust side of a C type with no kgraph parameter type could be, for messages.
pub(crate) fn hint_for(spelled: &str) -> Option<&'static str> {
    Some(match spelled {
        "dim3" => "pass the three sizes as `u32` scalars",
        "long double" => "`long double` has no Rust counterpart: use `double` (`f64`)",
        "wchar_t" | "char16_t" | "char32_t" => "use a fixed-width integer (`uint16_t`, `uint32_t`)",
        _ if spelled.ends_with('1') => "a one-component vector is its component: use the scalar type",
        _ if spelled.ends_with("_16a") || spelled.ends_with("_32a") => {
            "derive `kgraph::DeviceStruct` on a `#[repr(C, align(N))]` twin and pass a struct"
        }
        _ => return None,
    })
}
