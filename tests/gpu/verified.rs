//! What the checks against the compiled kernel buy at run time: a PDL launch of a kernel whose
//! wait is not proven is refused (`LaunchError::PdlWithoutWait`), a generated launch on a stream that
//! does not own its arguments is refused (`LaunchError::ForeignStream`), both before anything is
//! written; the load-time parameter check (`cuFuncGetParamInfo`); and C++ kernels bound by
//! their C++ names. Kernels: `tests/kernels/test_args.cu`, `tests/kernels/test_cpp.cu`.

use kgraph::expert::check_param_sizes;
use kgraph::{Error, LaunchConfig, LaunchError, LaunchOptions, ModuleError};

use super::common::device;

#[kgraph::kernels]
mod verified {
    /// `out[i] = src[i]`, without `griddepcontrol.wait`.
    #[kernel("test_args.cu", unsafe(extents))]
    pub fn ka_copy_no_wait_f32(src: &[f32; n], n: i32, out: &mut [f32; n]);

    /// `x[i] = x[i] * a + i` (C++ linkage).
    #[kernel("test_cpp.cu", name = "kc_scale_add_index", unsafe(extents))]
    pub fn scale_add_index(x: &mut [f32; n], a: f32, n: i32);

    /// `dst[i] = src[i] * 3` (a template instantiation).
    #[kernel("test_cpp.cu", name = "kc_times<float, 3>", unsafe(extents))]
    pub fn times3(src: &[f32; n], dst: &mut [f32; n], n: i32);

    /// `dst[i] = src[i] * 5` in `double`.
    #[kernel("test_cpp.cu", name = "kc_times<double, 5>", unsafe(extents))]
    pub fn times5(src: &[f64; n], dst: &mut [f64; n], n: i32);
}

// The record says which kernels wait: the copy without the wait does not, the pinned copy in
// `kernel_args.rs` (which executes `griddepcontrol.wait`) does.
const _: () = assert!(!verified::KaCopyNoWaitF32::PDL_WAITS);
const _: () = assert!(super::kernel_args::COPY_TO_PINNED_WAITS);

fn cfg(n: usize) -> LaunchConfig {
    LaunchConfig::for_num_elems(n as u32)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pdl_launch_of_a_kernel_without_the_wait_is_refused() {
    let dev = device();
    let k = verified::Kernels::load(&dev).unwrap();
    let n = 1000;
    let src = dev.upload(&vec![2.5f32; n]).unwrap();
    let mut out = dev.alloc_zeros::<f32>(n).unwrap();
    let err = k
        .ka_copy_no_wait_f32
        .launch_with(dev.stream(), cfg(n), LaunchOptions::PDL, &src, n as i32, &mut out)
        .unwrap_err();
    assert!(matches!(err, Error::Launch(LaunchError::PdlWithoutWait { kernel: "ka_copy_no_wait_f32" })), "{err:?}");
    assert!(err.to_string().contains("griddepcontrol.wait"), "{err}");
    assert_eq!(dev.download(&out).unwrap(), vec![0.0; n], "a refused launch wrote nothing");
    // Without PDL the same launch runs.
    k.ka_copy_no_wait_f32
        .launch_with(dev.stream(), cfg(n), LaunchOptions::default(), &src, n as i32, &mut out)
        .unwrap();
    assert_eq!(dev.download(&out).unwrap(), vec![2.5; n]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn generated_launch_on_a_foreign_stream_is_refused() {
    let dev = device();
    let k = verified::Kernels::load(&dev).unwrap();
    let n = 512;
    let src = dev.upload(&vec![1.0f32; n]).unwrap();
    let mut out = dev.alloc_zeros::<f32>(n).unwrap();
    // SAFETY: the side stream is only handed to the checked launches below, which refuse it
    // for the main-stream slices; nothing is issued on it.
    let side = unsafe { dev.new_stream() }.unwrap();
    let err = k.ka_copy_no_wait_f32.launch(&side, cfg(n), &src, n as i32, &mut out).unwrap_err();
    assert!(
        matches!(err, Error::Launch(LaunchError::ForeignStream { kernel: "ka_copy_no_wait_f32", param: "src" })),
        "{err:?}"
    );
    let err = k.times3.launch_with(&side, cfg(n), LaunchOptions::default(), &src, &mut out, n as i32).unwrap_err();
    assert!(
        matches!(err, Error::Launch(LaunchError::ForeignStream { kernel: "kc_times<float, 3>", param: "src" })),
        "{err:?}"
    );
    side.synchronize().unwrap();
    assert_eq!(dev.download(&out).unwrap(), vec![0.0; n], "a refused launch wrote nothing");
    // On the stream that owns them, the same arguments are fine.
    k.ka_copy_no_wait_f32.launch(dev.stream(), cfg(n), &src, n as i32, &mut out).unwrap();
    assert_eq!(dev.download(&out).unwrap(), vec![1.0; n]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn loaded_parameters_that_differ_from_the_declaration_are_refused() {
    let dev = device();
    let k = verified::Kernels::load(&dev).unwrap();
    let f = k.ka_copy_no_wait_f32.function();
    assert_eq!(verified::KaCopyNoWaitF32::PARAM_SIZES, [8, 4, 8]);
    check_param_sizes(dev.context(), f, "ka_copy_no_wait_f32", verified::KaCopyNoWaitF32::PARAM_SIZES).unwrap();
    // (Where the driver reports parameters: CUDA 12.4+, as on the GPU machines.)
    match check_param_sizes(dev.context(), f, "ka_copy_no_wait_f32", &[8, 8, 8]) {
        Err(Error::Module(ModuleError::ParamMismatch {
            kernel: "ka_copy_no_wait_f32",
            index: 1,
            expected: Some(8),
            found: Some(4),
        })) => {}
        other => panic!("expected ParamMismatch at 1, got {other:?}"),
    }
    // Declared more than the kernel takes: the driver has no parameter 3 (a deliberate failing
    // query, which is why this test's name says "refused" for scripts/sanitize).
    match check_param_sizes(dev.context(), f, "ka_copy_no_wait_f32", &[8, 4, 8, 8]) {
        Err(Error::Module(ModuleError::ParamMismatch { index: 3, expected: Some(8), found: None, .. })) => {}
        other => panic!("expected ParamMismatch at 3, got {other:?}"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cpp_kernels_launch_by_their_cpp_names() {
    let dev = device();
    let k = verified::Kernels::load(&dev).unwrap();
    assert_eq!(verified::Times3::SYMBOL, "_Z8kc_timesIfLi3EEvPKT_PS0_i");
    assert_eq!(verified::Times3::NAME, "kc_times<float, 3>");
    let n = 300;
    let xs: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let src = dev.upload(&xs).unwrap();
    let mut dst = dev.alloc_zeros::<f32>(n).unwrap();
    k.times3.launch(dev.stream(), cfg(n), &src, &mut dst, n as i32).unwrap();
    let got = dev.download(&dst).unwrap();
    assert!(got.iter().zip(&xs).all(|(g, x)| *g == x * 3.0), "times3");

    let ds: Vec<f64> = (0..n).map(|i| i as f64 - 7.0).collect();
    let dsrc = dev.upload(&ds).unwrap();
    let mut ddst = dev.alloc_zeros::<f64>(n).unwrap();
    k.times5.launch(dev.stream(), cfg(n), &dsrc, &mut ddst, n as i32).unwrap();
    assert!(dev.download(&ddst).unwrap().iter().zip(&ds).all(|(g, x)| *g == x * 5.0), "times5");

    let mut x = dev.upload(&vec![2.0f32; n]).unwrap();
    k.scale_add_index.launch(dev.stream(), cfg(n), &mut x, 0.5, n as i32).unwrap();
    let got = dev.download(&x).unwrap();
    assert!(got.iter().enumerate().all(|(i, v)| *v == 1.0 + i as f32), "scale_add_index: {:?}", &got[..4]);
}
