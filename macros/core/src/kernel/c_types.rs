//! What the declaration checks say about C parameter types kgraph cannot read: one place for
//! the wording (the C type → Rust type rule and its messages are `check.rs::rust_elem_for`).

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
