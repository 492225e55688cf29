//! `#[kernel]` / `#[kernels]` compile errors: each case in `tests/ui/kernel/` must fail with
//! exactly the checked-in `.stderr`. The cases' kernels are in `tests/ui/kernel/kernels/`.

#[test]
fn kernel_compile_fail() {
    std::env::set_var("KGRAPH_KERNEL_DIR", concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ui/kernel/kernels"));
    trybuild::TestCases::new().compile_fail("tests/ui/kernel/*.rs");
}
