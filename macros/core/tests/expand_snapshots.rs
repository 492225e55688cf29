//! Snapshots of what `#[kernel]` and `#[kernels]` expand to, formatted like `cargo expand`.
//! The kernel folder is passed explicitly (`Config::new`), never through the environment.

use kgraph_codegen::{expand_kernel, expand_kernels, Config};
use proc_macro2::TokenStream;
use quote::quote;

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

fn config() -> Config {
    Config::new(format!("{MANIFEST}/tests/fixtures"), MANIFEST)
}

/// Formats generated tokens as a file; the checkout's location is replaced so snapshots are
/// the same on every machine.
fn pretty(tokens: TokenStream) -> String {
    // Replace the checkout's path before formatting, so line breaks do not depend on where the
    // repository lives.
    let tokens = tokens.to_string().replace(MANIFEST, "$CARGO_MANIFEST_DIR");
    let file: syn::File = syn::parse_str(&tokens).unwrap_or_else(|e| panic!("expansion is not valid Rust: {e}"));
    let text = prettyplease::unparse(&file);
    assert!(!text.contains("compile_error"), "expansion reported errors:\n{text}");
    text
}

/// With extents under `unsafe(extents)`: a safe `launch` that checks the thread count, every
/// extent, every length and every written argument against the others before launching.
#[test]
fn standalone_kernel_with_read_write_slices_and_scalars() {
    let out = expand_kernel(
        quote!("cfc_step.cu", unsafe(extents)),
        quote! {
            pub fn cfc_step(w_in: &[f32; n * n], x: &[f32; n], h_old: &[f32; n], dt: f32, n: i32, h_new: &mut [f32; n]);
        },
        &config(),
    );
    insta::assert_snapshot!(pretty(out));
}

#[test]
fn pinned_pointer_argument() {
    let out = expand_kernel(
        quote!("snap.cu", unsafe(extents)),
        quote! {
            pub(crate) fn snap_features(snap: Pinned<[f32; n]>, out: &mut [f32; n], n: i32);
        },
        &config(),
    );
    insta::assert_snapshot!(pretty(out));
}

#[test]
fn pinned_mut_output_argument() {
    let out = expand_kernel(
        quote!("host_out.cu", unsafe(extents)),
        quote! {
            pub fn publish(x: &[f32; n], scale: Pinned<[f32; 1]>, host_out: PinnedMut<[f32; n]>, n: i32);
        },
        &config(),
    );
    insta::assert_snapshot!(pretty(out));
}

#[test]
fn registry_with_two_kernels_of_one_file() {
    let out = expand_kernels(
        TokenStream::new(),
        quote! {
            pub mod ops {
                use super::*;
                #[kernel("pair.cu", unsafe(extents))]
                pub fn scale(x: &mut [f32; n], a: f32, n: i32);
                #[kgraph::kernel("pair.cu", unsafe(extents))]
                pub fn shift(x: &mut [f32; n], b: f32, n: i32);
            }
        },
        &config(),
    );
    insta::assert_snapshot!(pretty(out));
}

#[test]
fn name_override_binds_another_symbol() {
    let out = expand_kernel(
        quote!("versions.cu", name = "axpy_f32_v2"),
        quote! {
            pub fn axpy(x: &[f32], y: &mut [f32], a: f32, n: u32);
        },
        &config(),
    );
    insta::assert_snapshot!(pretty(out));
}

/// Extents over scalars of several types are computed in the type C would use (`u64` here,
/// from `j: u64`), with `min`, `max`, `/` and `%`.
#[test]
fn extents_in_the_c_type_of_their_scalars() {
    let out = expand_kernel(
        quote!("scalars.cu", unsafe(extents)),
        quote! {
            pub fn all_scalars(
                a: f32, b: f64, c: i8, d: u8, e: i16, f: u16, g: i32, h: u32, i: i64, j: u64,
                out: &mut [f64; max(g, min(h, 4)) + (i / 2) % 3 + j + 2 - 1],
            );
        },
        &config(),
    );
    insta::assert_snapshot!(pretty(out));
}

/// Without extents, `launch` and `launch_with` are `unsafe fn`s whose `# Safety` states the
/// contract, and nothing is checked.
#[test]
fn no_extents_give_an_unsafe_launch() {
    let out = expand_kernel(
        quote!("cfc_step.cu"),
        quote! {
            pub fn cfc_step(w_in: &[f32], x: &[f32], h_old: &[f32], dt: f32, n: i32, h_new: &mut [f32]);
        },
        &config(),
    );
    insta::assert_snapshot!(pretty(out));
}

#[test]
fn every_scalar_type() {
    let out = expand_kernel(
        quote!("scalars.cu"),
        quote! {
            pub fn all_scalars(a: f32, b: f64, c: i8, d: u8, e: i16, f: u16, g: i32, h: u32, i: i64, j: u64, out: &mut [f64]);
        },
        &config(),
    );
    insta::assert_snapshot!(pretty(out));
}

#[test]
fn doc_comments_and_cfg_are_kept() {
    let out = expand_kernels(
        TokenStream::new(),
        quote! {
            /// Kernels for the snapshot path.
            pub mod snapshot {
                //! Inner docs stay on the module.

                /// Copies `n` values of a pinned snapshot into `out`.
                ///
                /// One thread per value.
                #[kernel("snap.cu")]
                pub fn snap_features(snap: Pinned<f32>, out: &mut [f32], n: i32);

                /// Only with the `debug-kernels` feature.
                #[cfg(feature = "debug-kernels")]
                #[kernel("pair.cu", name = "scale")]
                fn debug_scale(x: &mut [f32], a: f32, n: i32);

                /// A constant kept next to the kernels.
                pub const LANES: usize = 32;
            }
        },
        &config(),
    );
    insta::assert_snapshot!(pretty(out));
}

#[test]
fn an_error_yields_the_error_and_a_stub() {
    let out = expand_kernel(
        quote!("cfc_step.cu"),
        quote! {
            pub fn cfc_step(w_in: &[f32], x: &[f32], h_old: &[f32], dt: i32, n: i32, h_new: &mut [f32]);
        },
        &config(),
    );
    let file: syn::File = syn::parse2(out).expect("valid Rust even on error");
    let text = prettyplease::unparse(&file).replace(MANIFEST, "$CARGO_MANIFEST_DIR");
    insta::assert_snapshot!(text);
}

/// `f16` by value and by pointer: passed as `::kgraph::f16`.
#[test]
fn half_values_and_slices() {
    let out = expand_kernel(
        quote!("types.cu", unsafe(extents)),
        quote! {
            pub fn scale_half(x: &[f16; n], a: f16, n: i32, y: &mut [f16; n]);
        },
        &config(),
    );
    insta::assert_snapshot!(pretty(out));
}

/// A CUDA vector type by value and by pointer: `::kgraph::Float4`.
#[test]
fn vector_type_values_and_slices() {
    let out = expand_kernel(
        quote!("types.cu", unsafe(extents)),
        quote! {
            pub fn scale_float4(x: &[kgraph::Float4; n], s: kgraph::Float4, n: i32, y: &mut [kgraph::Float4; n]);
        },
        &config(),
    );
    insta::assert_snapshot!(pretty(out));
}

/// `void*` is bytes: `&[u8]`/`&mut [u8]`, extents in bytes.
#[test]
fn void_pointers_as_bytes() {
    let out = expand_kernel(
        quote!("types.cu", unsafe(extents)),
        quote! {
            pub fn copy_bytes(src: &[u8; bytes], bytes: i32, dst: &mut [u8; bytes]);
        },
        &config(),
    );
    insta::assert_snapshot!(pretty(out));
}

/// A struct by value (`__grid_constant__ const Params`): the twin's layout is checked at
/// compile time against the C struct (size, alignment, every field's offset, size and type,
/// the nested `Inner` through its `DeviceStruct`).
#[test]
fn struct_by_value_with_layout_checks() {
    let out = expand_kernel(
        quote!("types.cu", unsafe(extents)),
        quote! {
            pub fn affine(p: Params, x: &[f32; n], n: i32, y: &mut [f32; n]);
        },
        &config(),
    );
    insta::assert_snapshot!(pretty(out));
}

/// A struct path starting with `super` names the declaring module's parent: the layout checks,
/// emitted in the declaring module, keep it; the handle, emitted in its hidden module, says one
/// `super` more, so the launch takes the very type whose layout was checked.
#[test]
fn super_paths_name_the_checked_struct_inside_the_hidden_module() {
    let out = expand_kernel(
        quote!("types.cu", unsafe(extents)),
        quote! {
            pub fn affine(p: super::Params, x: &[f32; n], n: i32, y: &mut [f32; n]);
        },
        &config(),
    )
    .to_string();
    let (outside, inside) = out.split_once("mod __kgraph_kernel_Affine").expect("the handle's hidden module");
    assert!(outside.contains("super :: Params") && !outside.contains("super :: super"), "{outside}");
    assert!(inside.contains("p : super :: super :: Params"), "{inside}");
    assert!(!inside.replace("super :: super :: Params", "").contains("super :: Params"), "{inside}");
}

/// Structs by pointer: `&[Params; n]`, `&mut [Params; n]`; the layout checks appear once.
#[test]
fn struct_by_pointer_with_layout_checks() {
    let out = expand_kernel(
        quote!("types.cu", unsafe(extents), rename(input = in)),
        quote! {
            pub fn step(input: &[crate::sim::Params; n], n: i32, out: &mut [crate::sim::Params; n]);
        },
        &config(),
    );
    insta::assert_snapshot!(pretty(out));
}

/// `shared = <bytes>`: the checked launch evaluates the requirement from the launch's block
/// (and scalars) in C's type and refuses a `cfg.shared_mem_bytes` below it.
#[test]
fn dynamic_shared_memory_requirement() {
    let out = expand_kernel(
        quote!("pair.cu", name = "scale", unsafe(extents), shared = block.x * block.y * 4 + n),
        quote! {
            pub fn scale_shared(x: &mut [f32; n], a: f32, n: i32);
        },
        &config(),
    );
    insta::assert_snapshot!(pretty(out));
}
