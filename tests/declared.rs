//! `kgraph declare` output compiles unchanged: `declared/kernels.rs` is exactly what
//! `kgraph declare --module kernels/*.cu` prints for the reference model's kernels (pinned by
//! kgraph-cli's `tests/cli.rs`), and this test crate compiles it through `#[kgraph::kernels]`,
//! checked against the same records and cubins as `src/model.rs`.

#[allow(dead_code)]
mod declared {
    include!("declared/kernels.rs");
}

/// Every handle and registry is there, bound to the kernel of its file.
#[test]
fn declared_kernels_bind_to_their_files() {
    assert_eq!(declared::saxpy::Saxpy::FILE, "kernels/saxpy.cu");
    assert_eq!(declared::cfc_step::CfcStep::NAME, "cfc_step");
    assert_eq!(declared::cfc_step::CfcStep::MAX_THREADS, Some(128));
    assert_eq!(declared::model_util::CopyF32::SYMBOL, "copy_f32");
    let _: fn(&kgraph::Device) -> kgraph::Result<declared::adamw::Kernels> = declared::adamw::Kernels::load;
}
