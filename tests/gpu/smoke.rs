//! Foundation smoke test: a cubin built from `kernels/` by build.rs loads and runs.

use kgraph::cudarc::driver::PushKernelArg;
use kgraph::expert::{KernelSource, ModuleCache};
use kgraph::LaunchConfig;

// SAFETY: the image is the one kgraph-build compiled from this file; it is only loaded by hand
// (`ModuleCache::function`) and launched through cudarc's unsafe launch, no declared handle.
const SMOKE: KernelSource = unsafe {
    KernelSource::new(
        "tests/kernels/smoke.cu",
        include_bytes!(concat!(env!("OUT_DIR"), "/kgraph/smoke.cubin")),
        include_str!("../kernels/smoke.cu"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/kernels"),
    )
};

#[test]
#[ignore = "needs a CUDA GPU"]
fn smoke_cubin_loads_and_axpb_is_affine() {
    let dev = super::common::device();
    assert!(SMOKE.has_image(), "bundle must be built with nvcc so the cubin is real");
    let mut cache = ModuleCache::new(dev.context());
    let f = cache.function(&SMOKE, "smoke_axpb").unwrap();
    let n = 4099usize;
    let xs: Vec<f32> = (0..n).map(|i| i as f32 * 0.25 - 100.0).collect();
    // SAFETY: cudarc's stream allocates, launches on and reads back buffers of its own stream.
    let stream = unsafe { dev.stream().cuda() };
    let x = dev.upload(&xs).unwrap();
    // SAFETY: as above.
    let x = unsafe { x.as_cuda() };
    let mut y = stream.alloc_zeros::<f32>(n).unwrap();
    let (a, b, n_i) = (2.0f32, 1.0f32, n as i32);
    let mut l = stream.launch_builder(&f);
    l.arg(x).arg(&mut y).arg(&a).arg(&b).arg(&n_i);
    // SAFETY: argument list matches `smoke_axpb(const float*, float*, float, float, int)`; x,y hold n.
    unsafe { l.launch(LaunchConfig::for_num_elems(n as u32)) }.unwrap();
    let ys = stream.clone_dtoh(&y).unwrap();
    // Invariant: an affine map with a > 0 is strictly increasing and fixes x* = -b/(a-1) = -1.
    assert!(ys.windows(2).all(|w| w[1] > w[0]), "not monotone");
    let fixed = xs.iter().position(|&v| v == -1.0).unwrap();
    assert_eq!(ys[fixed], -1.0);
    assert!(ys.iter().all(|v| v.is_finite()));
}
