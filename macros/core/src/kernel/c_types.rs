//! What the declaration checks say about C types kgraph cannot pass or cannot read: one place
//! for the wording, so support for a new C type changes one function.

use crate::cuda::signature::CuType;

/// The Rust side to use for a kernel parameter of type `ty` that kgraph has no Rust type for,
/// or why there is none, as the end of a sentence.
pub(crate) fn no_rust_type(ty: &CuType) -> String {
    let base = ty.spelled.as_str();
    let pointer = ty.pointers > 0;
    match base {
        "bool" => {
            "kgraph has no `bool` parameter yet: take an `unsigned char` (`u8`) in the kernel and test it against 0"
                .to_string()
        }
        "char" => {
            "plain `char` has no fixed signedness: write `signed char` (`i8`) or `unsigned char` (`u8`)".to_string()
        }
        "void" if pointer => {
            "an untyped pointer cannot be checked: give the kernel a typed pointer (`const float*` for `&[f32]`)"
                .to_string()
        }
        "long double" => "`long double` has no Rust counterpart: use `double` (`f64`)".to_string(),
        _ if ty.pointers > 1 => {
            "a pointer to a pointer has no kgraph type: pass one flat buffer and offsets".to_string()
        }
        _ => format!(
            "type `{base}` is not one kgraph passes (halves, vectors and structs are not supported yet): use one of \
             f32, f64, i8, u8, i16, u16, i32, u32, i64, u64 by value or through `const T*`/`T*`"
        ),
    }
}

/// Why the reader could not read a parameter at `token`, and the way out.
pub(crate) fn unverifiable_reason(token: &str) -> String {
    let is_word = token.chars().next().is_some_and(|c| c == '_' || c.is_alphabetic());
    if is_word {
        format!(
            "type `{token}` is not one kgraph knows (a struct, a class, or a macro or typedef kgraph could not resolve). \
             Way out: declare the kernel parameter with a C type kgraph passes (`float`, `int`, `const float*`, ...); \
             a macro or simple typedef is resolved when the build leaves the preprocessed source (`<stem>.i`, with nvcc)"
        )
    } else {
        format!(
            "kgraph cannot read `{token}` as part of a C parameter type. Way out: write the parameter as `<type> <name>` \
             with a C type kgraph passes (`const float* x`, `int n`); preprocessor constructs are resolved when the build \
             leaves the preprocessed source (`<stem>.i`, with nvcc)"
        )
    }
}
