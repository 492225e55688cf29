//! `#[kernel]` argument passing on the GPU, one test per argument kind: read and write slices
//! (whole and as views), every scalar type, pinned pointers read and written. The kernels in
//! `tests/kernels/test_args.cu` only move bits, so every expected value is exact and a wrong order,
//! width, signedness or pointer shows up as a different value.

use std::fmt::Debug;
use std::sync::Arc;

use kgraph::{Device, DeviceBuffer, LaunchConfig, LaunchOptions, MappedBuffer, PinnedSlot, Pod};

use super::common::device;

#[kgraph::kernels]
mod args {
    /// `y[n-1-i] = x[i]`.
    #[kernel("test_args.cu", unsafe(extents))]
    pub fn ka_reverse(x: &[f32; n], y: &mut [f32; n], n: i32);

    /// `target[i] = source[i] + args` for `i < function`: parameter names the generated code
    /// could collide with.
    #[kernel("test_args.cu", unsafe(extents))]
    pub fn ka_copy_named(source: &[f32; function], target: &mut [f32; function], function: i32, args: i32);

    #[kernel("test_args.cu", unsafe(extents))]
    pub fn ka_fill_f32(n: i32, s: f32, out: &mut [f32; n]);
    #[kernel("test_args.cu", unsafe(extents))]
    pub fn ka_fill_f64(n: i32, s: f64, out: &mut [f64; n]);
    #[kernel("test_args.cu", unsafe(extents))]
    pub fn ka_fill_i8(n: i32, s: i8, out: &mut [i8; n]);
    #[kernel("test_args.cu", unsafe(extents))]
    pub fn ka_fill_u8(n: i32, s: u8, out: &mut [u8; n]);
    #[kernel("test_args.cu", unsafe(extents))]
    pub fn ka_fill_i16(n: i32, s: i16, out: &mut [i16; n]);
    #[kernel("test_args.cu", unsafe(extents))]
    pub fn ka_fill_u16(n: i32, s: u16, out: &mut [u16; n]);
    #[kernel("test_args.cu", unsafe(extents))]
    pub fn ka_fill_i32(n: i32, s: i32, out: &mut [i32; n]);
    #[kernel("test_args.cu", unsafe(extents))]
    pub fn ka_fill_u32(n: i32, s: u32, out: &mut [u32; n]);
    #[kernel("test_args.cu", unsafe(extents))]
    pub fn ka_fill_i64(n: i32, s: i64, out: &mut [i64; n]);
    #[kernel("test_args.cu", unsafe(extents))]
    pub fn ka_fill_u64(n: i32, s: u64, out: &mut [u64; n]);

    /// `out[i] = src[i]`, `src` in mapped pinned host memory.
    #[kernel("test_args.cu", unsafe(extents))]
    pub fn ka_copy_pinned_f32(src: Pinned<[f32; n]>, n: i32, out: &mut [f32; n]);
    #[kernel("test_args.cu", unsafe(extents))]
    pub fn ka_copy_pinned_u64(src: Pinned<[u64; n]>, n: i32, out: &mut [u64; n]);

    /// `out[i] = src[i]`, `out` in mapped pinned host memory the kernel writes.
    #[kernel("test_args.cu", unsafe(extents))]
    pub fn ka_copy_to_pinned_f32(src: &[f32; n], n: i32, out: PinnedMut<[f32; n]>);
    /// `out[i] = base + i`, `out` in mapped pinned host memory the kernel writes.
    #[kernel("test_args.cu", unsafe(extents))]
    pub fn ka_iota_to_pinned_u64(base: u64, n: i32, out: PinnedMut<[u64; n]>);
}

/// The same kernel bound outside a registry, under another Rust name.
#[kgraph::kernel("test_args.cu", name = "ka_reverse", unsafe(extents))]
fn reverse_standalone(x: &[f32; n], y: &mut [f32; n], n: i32);

fn cfg(n: usize) -> LaunchConfig {
    LaunchConfig::for_num_elems(n as u32)
}

/// Distinct values, exact in f32, none equal to the sentinels used below.
fn ramp(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32 * 0.5 - 100.25).collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn read_slice_and_write_slice() {
    let dev = device();
    let k = args::Kernels::load(&dev).unwrap();
    let n = 3000;
    let xs = ramp(n);
    let x = dev.upload(&xs).unwrap();
    let mut y = dev.alloc_zeros::<f32>(n).unwrap();
    k.ka_reverse.launch(dev.stream(), cfg(n), &x, &mut y, n as i32).unwrap();
    let mut ys = dev.download(&y).unwrap();
    ys.reverse();
    assert_eq!(ys, xs);
    // The input is untouched.
    assert_eq!(dev.download(&x).unwrap(), xs);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn parameters_named_like_generated_locals() {
    let dev = device();
    let k = args::Kernels::load(&dev).unwrap();
    let n = 1000;
    let xs = ramp(n);
    let x = dev.upload(&xs).unwrap();
    let mut y = dev.alloc_zeros::<f32>(n).unwrap();
    k.ka_copy_named.launch(dev.stream(), cfg(n), &x, &mut y, n as i32, 3).unwrap();
    let want: Vec<f32> = xs.iter().map(|v| v + 3.0).collect();
    assert_eq!(dev.download(&y).unwrap(), want);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn views_pass_their_own_offsets() {
    let dev = device();
    let k = args::Kernels::load(&dev).unwrap();
    let xs = ramp(400);
    let x = dev.upload(&xs).unwrap();
    let sentinel = 7.75f32;
    let mut y = dev.upload(&vec![sentinel; 300]).unwrap();
    {
        let src = x.slice(100..200).unwrap();
        let mut dst = y.slice_mut(50..150).unwrap();
        k.ka_reverse.launch(dev.stream(), cfg(100), &src, &mut dst, 100).unwrap();
    }
    let ys = dev.download(&y).unwrap();
    assert!(ys[..50].iter().chain(&ys[150..]).all(|&v| v == sentinel), "wrote outside the view");
    let mut middle = ys[50..150].to_vec();
    middle.reverse();
    assert_eq!(middle, xs[100..200]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn standalone_handle_matches_the_registry_and_registry_kernels_share_a_module() {
    let dev = device();
    let k = args::Kernels::load(&dev).unwrap();
    assert!(Arc::ptr_eq(k.ka_reverse.module(), k.ka_copy_pinned_u64.module()), "one .cu, one module");
    let standalone = ReverseStandalone::new(&dev).unwrap();
    assert_eq!(ReverseStandalone::NAME, "ka_reverse");
    let n = 1500;
    let x = dev.upload(&ramp(n)).unwrap();
    let (mut a, mut b) = (dev.alloc_zeros::<f32>(n).unwrap(), dev.alloc_zeros::<f32>(n).unwrap());
    k.ka_reverse.launch(dev.stream(), cfg(n), &x, &mut a, n as i32).unwrap();
    standalone.launch(dev.stream(), cfg(n), &x, &mut b, n as i32).unwrap();
    let (a, b) = (dev.download(&a).unwrap(), dev.download(&b).unwrap());
    assert_eq!(a, b);
    assert_eq!(a[n - 1], ramp(n)[0]);
}

/// Fills the first `n` of `n + 5` elements preset to `sentinel` with `s`, then checks that
/// exactly those hold `s`: the scalar arrived whole, and so did `n` before it.
fn check_fill<T: Pod + PartialEq + Debug>(
    dev: &Device,
    s: T,
    sentinel: T,
    launch: impl Fn(LaunchConfig, i32, T, &mut DeviceBuffer<T>) -> kgraph::Result<()>,
) {
    assert_ne!(s, sentinel);
    let n = 3000;
    let mut out = dev.upload(&vec![sentinel; n + 5]).unwrap();
    launch(cfg(n), n as i32, s, &mut out).unwrap();
    let got = dev.download(&out).unwrap();
    assert!(got[..n].iter().all(|v| *v == s), "expected {s:?} everywhere, got e.g. {:?}", got[0]);
    assert!(got[n..].iter().all(|v| *v == sentinel), "wrote past n: {:?}", &got[n..]);
}

macro_rules! scalar_test {
    ($test:ident, $kernel:ident, $s:expr, $sentinel:expr) => {
        #[test]
        #[ignore = "needs a CUDA GPU"]
        fn $test() {
            let dev = device();
            let k = args::Kernels::load(&dev).unwrap();
            check_fill(&dev, $s, $sentinel, |cfg, n, s, out| k.$kernel.launch(dev.stream(), cfg, n, s, out));
        }
    };
}

// Values use the type's full width (high bits set, sign bit set where signed), so a
// truncated or sign-extended argument cannot compare equal.
scalar_test!(scalar_f32, ka_fill_f32, -1234.5f32, 0.25f32);
scalar_test!(scalar_f64, ka_fill_f64, -1.5e300f64, 0.25f64);
scalar_test!(scalar_i8, ka_fill_i8, -100i8, 7i8);
scalar_test!(scalar_u8, ka_fill_u8, 200u8, 7u8);
scalar_test!(scalar_i16, ka_fill_i16, -30_000i16, 7i16);
scalar_test!(scalar_u16, ka_fill_u16, 60_000u16, 7u16);
scalar_test!(scalar_i32, ka_fill_i32, -2_000_000_000i32, 7i32);
scalar_test!(scalar_u32, ka_fill_u32, 4_000_000_000u32, 7u32);
scalar_test!(scalar_i64, ka_fill_i64, -0x1234_5678_9ABC_DEF0i64, 7i64);
scalar_test!(scalar_u64, ka_fill_u64, 0xFEDC_BA98_7654_3210u64, 7u64);

#[test]
#[ignore = "needs a CUDA GPU"]
fn pinned_slot_value_is_read_fresh_on_every_launch() {
    let dev = device();
    let k = args::Kernels::load(&dev).unwrap();
    let slot = PinnedSlot::new(&dev, 0.0f32).unwrap();
    let mut out = dev.alloc_zeros::<f32>(1).unwrap();
    for v in [1.5f32, -2.25, 1.0e30, 0.0, 3.0, 3.0, -0.125] {
        slot.write(v);
        k.ka_copy_pinned_f32.launch(dev.stream(), cfg(1), slot.device_ptr(), 1, &mut out).unwrap();
        assert_eq!(dev.download(&out).unwrap(), vec![v]);
    }
    let wide = PinnedSlot::new(&dev, 0u64).unwrap();
    let mut out = dev.alloc_zeros::<u64>(1).unwrap();
    for v in [u64::MAX, 1 << 63, 0x0123_4567_89AB_CDEF, 1] {
        wide.write(v);
        k.ka_copy_pinned_u64.launch(dev.stream(), cfg(1), wide.device_ptr(), 1, &mut out).unwrap();
        assert_eq!(dev.download(&out).unwrap(), vec![v]);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pinned_buffer_is_read_whole() {
    let dev = device();
    let k = args::Kernels::load(&dev).unwrap();
    let n = 2500;
    let mut host = MappedBuffer::<f32>::new(&dev, n).unwrap();
    let mut out = dev.alloc_zeros::<f32>(n).unwrap();
    for round in 0..3 {
        let values: Vec<f32> = (0..n).map(|i| (round * 10_000 + i) as f32).collect();
        host.as_mut_slice().unwrap().copy_from_slice(&values);
        k.ka_copy_pinned_f32.launch(dev.stream(), cfg(n), host.device_ptr(), n as i32, &mut out).unwrap();
        assert_eq!(dev.download(&out).unwrap(), values, "round {round}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pinned_mut_output_is_written_straight_into_host_memory_at_every_launch() {
    let dev = device();
    let k = args::Kernels::load(&dev).unwrap();
    let n = 2500;
    let sentinel = -7.5f32; // never a value of the rounds below
    let mut host = MappedBuffer::<f32>::new(&dev, n + 3).unwrap();
    let mut seen = vec![0.0f32; n + 3];
    for round in 0..4 {
        let values: Vec<f32> = (0..n).map(|i| (round * 10_000 + i) as f32 * 0.25).collect();
        let src = dev.upload(&values).unwrap();
        // Nothing in flight before the launch: a PDL launch overlaps only the previous kernel.
        dev.synchronize().unwrap();
        host.as_mut_slice().unwrap().fill(sentinel);
        let out = host.device_ptr_mut();
        // Odd rounds through `launch_with` and PDL (the `cuLaunchKernelEx` path of the binding).
        if round % 2 == 0 {
            k.ka_copy_to_pinned_f32.launch(dev.stream(), cfg(n), &src, n as i32, out).unwrap();
        } else {
            k.ka_copy_to_pinned_f32.launch_with(dev.stream(), cfg(n), LaunchOptions::PDL, &src, n as i32, out).unwrap();
        }
        dev.synchronize().unwrap();
        host.read_volatile_into(&mut seen).unwrap();
        assert_eq!(seen[..n], values[..], "round {round}: the kernel's values, with no download");
        assert!(seen[n..].iter().all(|&v| v == sentinel), "round {round}: wrote past n: {:?}", &seen[n..]);
        assert_eq!(host.to_vec_volatile(), seen, "round {round}: both volatile readers agree");
    }
    let mut wrong = vec![0.0f32; n];
    assert!(matches!(
        host.read_volatile_into(&mut wrong),
        Err(kgraph::Error::Memory(kgraph::MemoryError::LengthMismatch { .. }))
    ));

    // 64-bit elements: the full width of every value lands (high bits set, then low).
    let mut wide = MappedBuffer::<u64>::new(&dev, 64).unwrap();
    for base in [u64::MAX - 63, 1 << 63, 0x0123_4567_89AB_CDEF, 0] {
        let out = wide.device_ptr_mut();
        k.ka_iota_to_pinned_u64.launch(dev.stream(), cfg(64), base, 64, out).unwrap();
        dev.synchronize().unwrap();
        let want: Vec<u64> = (0..64).map(|i| base + i).collect();
        assert_eq!(wide.to_vec_volatile(), want, "base {base:#x}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_rejected_launch_is_a_launch_error_naming_the_kernel() {
    let dev = device();
    let k = args::Kernels::load(&dev).unwrap();
    let mut out = dev.alloc_zeros::<i32>(4).unwrap();
    // More threads per block than any GPU allows: the driver rejects the launch itself.
    let too_big = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (4096, 1, 1), shared_mem_bytes: 0 };
    let err = k.ka_fill_i32.launch(dev.stream(), too_big, 4, 1, &mut out).unwrap_err();
    assert!(matches!(err, kgraph::Error::LaunchFailed { kernel: "ka_fill_i32", .. }), "{err}");
    // The context is still usable.
    k.ka_fill_i32.launch(dev.stream(), cfg(4), 4, -9, &mut out).unwrap();
    assert_eq!(dev.download(&out).unwrap(), vec![-9; 4]);
}

/// `ka_copy_to_pinned_f32` executes `griddepcontrol.wait`, so the record proves its PDL launch
/// (`verified.rs` checks this at compile time).
pub(crate) const COPY_TO_PINNED_WAITS: bool = args::KaCopyToPinnedF32::PDL_WAITS;
