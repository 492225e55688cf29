//! Checked launches (declarations with extents under `unsafe(extents)`) refuse, with a typed
//! error and before anything reaches the driver, every launch that would let the kernel step
//! outside its arguments: an argument shorter than its extent, an extent that overflows or is
//! negative, a written argument overlapping another, a launch too large for `int` thread
//! indices, a block beyond the kernel's `__launch_bounds__`. Every refused launch leaves the
//! poisoned output as it was. The kernels are `tests/kernels/test_args.cu`'s and
//! `test_shared.cu`'s (and one model kernel with launch bounds).

use std::marker::PhantomData;

use kgraph::cudarc::driver::sys::CUdeviceptr;
use kgraph::{
    Device, DeviceBuffer, DeviceIn, DeviceOut, Error, LaunchConfig, LaunchError, LaunchOptions, MappedBuffer,
    PinnedMutPtr, PinnedPtr,
};

use super::common::device;

#[kgraph::kernels]
mod checked {
    /// `y[n-1-i] = x[i]` for `i < n`.
    #[kernel("test_args.cu", unsafe(extents))]
    pub fn ka_reverse(x: &[f32; n], y: &mut [f32; n], n: i32);

    /// `out[i] = s` for `i < n`, declared with the extent `n * n * n`: more than the kernel
    /// touches (so the promise holds), and it overflows C's `int` from `n = 1291`.
    #[kernel("test_args.cu", name = "ka_fill_f32", unsafe(extents))]
    pub fn fill_cubed(n: i32, s: f32, out: &mut [f32; n * n * n]);

    /// `out[i] = src[i]` for `i < n`, both in mapped pinned host memory.
    #[kernel("test_args.cu", name = "ka_copy_pinned_f32", unsafe(extents))]
    pub fn copy_pinned_to_pinned(src: Pinned<[f32; n]>, n: i32, out: PinnedMut<[f32; n]>);

    /// `out[b]` = the sum of `x` over block `b`, through `block.x` floats of dynamic shared memory.
    #[kernel("test_shared.cu", name = "ka_block_sum_f32", unsafe(extents), shared = block.x * 4)]
    pub fn block_sum(x: &[f32; n], n: i32, n_blocks: i32, out: &mut [f32; n_blocks]);

    /// The same with 16 KiB of static shared memory beside the dynamic array (indexed modulo its
    /// size, so any block is fine: `max_block = 1024`).
    #[kernel("test_shared.cu", name = "ka_block_sum_static_f32", unsafe(extents), shared = block.x * 4, max_block = 1024)]
    pub fn block_sum_static(x: &[f32; n], n: i32, n_blocks: i32, out: &mut [f32; n_blocks]);
}
use checked::Kernels;

/// `ka_reverse` without extents: its `launch` is `unsafe`.
#[kgraph::kernel("test_args.cu", name = "ka_reverse")]
fn reverse_unchecked(x: &[f32], y: &mut [f32], n: i32);

const POISON: f32 = -7.25;
const H2_N: i32 = 1 << 20;

fn cfg(n: usize) -> LaunchConfig {
    LaunchConfig::for_num_elems(u32::try_from(n).expect("test sizes fit in u32"))
}

fn assert_poisoned(dev: &Device, y: &DeviceBuffer<f32>, what: &str) {
    assert!(dev.download(y).unwrap().iter().all(|&v| v == POISON), "{what}: a refused launch wrote");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn short_arguments_are_refused_naming_kernel_param_and_lengths() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap();
    // The H2 program: one-element buffers, n = 1 << 20.
    let x1 = dev.upload(&[1.0f32]).unwrap();
    let mut y1 = dev.upload(&[POISON]).unwrap();
    let n = H2_N as usize;
    let plain = k.ka_reverse.launch(dev.stream(), cfg(n), &x1, &mut y1, H2_N).unwrap_err();
    let with_pdl = k.ka_reverse.launch_with(dev.stream(), cfg(n), LaunchOptions::PDL, &x1, &mut y1, H2_N).unwrap_err();
    for (how, err) in [("launch", plain), ("launch_with(PDL)", with_pdl)] {
        match &err {
            Error::Launch(LaunchError::Extent { kernel: "ka_reverse", param: "x", required, actual: 1 }) => {
                assert_eq!(*required, 1 << 20, "{how}")
            }
            other => panic!("{how}: expected LaunchError::Extent for `x`, got {other:?}"),
        }
        let text = err.to_string();
        assert!(text.contains("ka_reverse") && text.contains("`x`") && text.contains("1048576"), "{how}: {text}");
    }
    assert_poisoned(&dev, &y1, "one-element buffers");

    // A long enough input, a short output: the output is named.
    let x = dev.alloc_zeros::<f32>(n).unwrap();
    let err = k.ka_reverse.launch(dev.stream(), cfg(n), &x, &mut y1, H2_N).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Launch(LaunchError::Extent { kernel: "ka_reverse", param: "y", required: 1048576, actual: 1 })
        ),
        "{err:?}"
    );
    assert_poisoned(&dev, &y1, "short output");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn disjoint_halves_launch_and_overlapping_views_are_refused() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap();
    let n = 6;
    let mut buf =
        dev.upload(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, POISON, POISON, POISON, POISON, POISON, POISON]).unwrap();
    {
        // `DeviceBuffer::split_at_mut`: disjoint halves, a sound launch.
        let (lo, mut hi) = buf.split_at_mut(n).unwrap();
        k.ka_reverse.launch(dev.stream(), cfg(n), &lo, &mut hi, n as i32).unwrap();
    }
    assert_eq!(dev.download(&buf).unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]);

    // Two views of one buffer that overlap in elements 4..6: refused before launching.
    let values: Vec<f32> = (10..20).map(|v| v as f32).collect();
    let mut buf = dev.upload(&values).unwrap();
    let (x, mut y) = overlapping_views(&mut buf, 0..6, 4..10);
    let err = k.ka_reverse.launch(dev.stream(), cfg(n), &x, &mut y, n as i32).unwrap_err();
    assert!(
        matches!(err, Error::Launch(LaunchError::Aliasing { kernel: "ka_reverse", written: "y", other: "x" })),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(text.contains("ka_reverse") && text.contains("`y`") && text.contains("`x`"), "{text}");
    let err = k.ka_reverse.launch_with(dev.stream(), cfg(n), LaunchOptions::PDL, &x, &mut y, n as i32).unwrap_err();
    assert!(
        matches!(err, Error::Launch(LaunchError::Aliasing { written: "y", other: "x", .. })),
        "launch_with: {err:?}"
    );
    assert_eq!(dev.download(&buf).unwrap(), values, "a refused launch wrote");

    // Within n = 4 the same views are disjoint (x covers 0..4, y 4..8): the extents decide.
    let (x, mut y) = overlapping_views(&mut buf, 0..6, 4..10);
    k.ka_reverse.launch(dev.stream(), cfg(4), &x, &mut y, 4).unwrap();
    let got = dev.download(&buf).unwrap();
    assert_eq!(got, [10.0, 11.0, 12.0, 13.0, 13.0, 12.0, 11.0, 10.0, 18.0, 19.0]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn one_mapped_buffer_as_input_and_output_is_refused() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap();
    let n = 64;
    let mut host = MappedBuffer::<f32>::new(&dev, n).unwrap();
    host.as_mut_slice().unwrap().fill(POISON);
    // Safe code cannot hold `device_ptr()` and `device_ptr_mut()` of one buffer at once (the
    // borrows conflict); pointers made from raw addresses can, and the check still refuses them.
    let addr = host.device_ptr().addr();
    // SAFETY: the address maps `host`'s n elements, alive past the (refused) launch.
    let (src, out) = unsafe { (PinnedPtr::<f32>::from_raw(addr, n), PinnedMutPtr::<f32>::from_raw(addr, n)) };
    let err = k.copy_pinned_to_pinned.launch(dev.stream(), cfg(n), src, n as i32, out).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Launch(LaunchError::Aliasing { kernel: "ka_copy_pinned_f32", written: "out", other: "src" })
        ),
        "{err:?}"
    );
    // A one-element mapped buffer with n = 1 << 20: the pinned pointer's length is checked too.
    let mut small = MappedBuffer::<f32>::new(&dev, 1).unwrap();
    let err =
        k.copy_pinned_to_pinned.launch(dev.stream(), cfg(1 << 20), small.device_ptr(), H2_N, host.device_ptr_mut());
    assert!(
        matches!(err, Err(Error::Launch(LaunchError::Extent { param: "src", required: 1048576, actual: 1, .. }))),
        "{err:?}"
    );
    let mut other = MappedBuffer::<f32>::new(&dev, n).unwrap();
    let err =
        k.copy_pinned_to_pinned.launch(dev.stream(), cfg(1 << 20), other.device_ptr(), H2_N, small.device_ptr_mut());
    assert!(matches!(err, Err(Error::Launch(LaunchError::Extent { param: "src", actual: 64, .. }))), "{err:?}");
    dev.synchronize().unwrap();
    assert!(host.to_vec_volatile().iter().all(|&v| v == POISON), "a refused launch wrote host memory");
    assert_eq!(small.to_vec_volatile(), [0.0], "a refused launch wrote host memory");

    // Two buffers: a sound launch.
    other.as_mut_slice().unwrap().iter_mut().enumerate().for_each(|(i, v)| *v = i as f32);
    k.copy_pinned_to_pinned.launch(dev.stream(), cfg(n), other.device_ptr(), n as i32, host.device_ptr_mut()).unwrap();
    dev.synchronize().unwrap();
    assert_eq!(host.to_vec_volatile(), other.to_vec_volatile());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn overflowing_or_negative_extents_are_refused() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap();
    let mut out = dev.upload(&[POISON; 1000]).unwrap();
    // 2048^3 = 2^33 overflows `int`, the type C computes `n * n * n` in for `n: i32`.
    let err = k.fill_cubed.launch(dev.stream(), cfg(2048), 2048, 1.0, &mut out).unwrap_err();
    match &err {
        Error::Launch(LaunchError::ExtentArithmetic { kernel: "ka_fill_f32", param: "out", detail }) => {
            assert!(detail.contains("n * n * n") && detail.contains("overflows `i32`"), "{detail}")
        }
        other => panic!("expected LaunchError::ExtentArithmetic, got {other:?}"),
    }
    assert!(err.to_string().contains("ka_fill_f32") && err.to_string().contains("`out`"), "{err}");
    let err = k.fill_cubed.launch(dev.stream(), cfg(1), -1, 1.0, &mut out).unwrap_err();
    match &err {
        Error::Launch(LaunchError::ExtentArithmetic { param: "out", detail, .. }) => {
            assert!(detail.contains("negative"), "{detail}")
        }
        other => panic!("expected LaunchError::ExtentArithmetic, got {other:?}"),
    }
    assert_poisoned(&dev, &out, "refused extents");

    // 10^3 = 1000 elements required and held: the kernel fills the first 10.
    k.fill_cubed.launch(dev.stream(), cfg(10), 10, 1.0, &mut out).unwrap();
    let got = dev.download(&out).unwrap();
    assert!(got[..10].iter().all(|&v| v == 1.0) && got[10..].iter().all(|&v| v == POISON));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn launches_beyond_int_thread_indices_are_refused() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap();
    let x = dev.upload(&[1.0f32; 8]).unwrap();
    let mut y = dev.upload(&[POISON; 8]).unwrap();
    // 2^22 blocks of 1024 threads: thread indices past 2^31 - 1 would be negative `int`s.
    let huge = LaunchConfig { grid_dim: (1 << 22, 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 };
    let err = k.ka_reverse.launch(dev.stream(), huge, &x, &mut y, 8).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Launch(LaunchError::TooManyThreads {
                kernel: "ka_reverse",
                threads: 0x1_0000_0000,
                max: 0x8000_0000
            })
        ),
        "{err:?}"
    );
    assert_poisoned(&dev, &y, "too many threads");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_unchecked_launch_runs_when_the_caller_keeps_its_contract() {
    let dev = device();
    let k = ReverseUnchecked::new(&dev).unwrap();
    let n = 100;
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let x = dev.upload(&xs).unwrap();
    let mut y = dev.alloc_zeros::<f32>(n).unwrap();
    // SAFETY: `ka_reverse` reads x[0..n) and writes y[0..n) for `i < n` with at most n threads
    // here; `x` and `y` hold n elements each, in two separate allocations.
    unsafe { k.launch(dev.stream(), cfg(n), &x, &mut y, n as i32) }.unwrap();
    let mut got = dev.download(&y).unwrap();
    got.reverse();
    assert_eq!(got, xs);
}

/// Two views `x`, `y` of one buffer that may overlap, as a view type of another library could
/// hand out (cudarc's own `split_at_mut` gives disjoint halves, so safe cudarc code cannot build
/// this): exactly what a checked launch must catch, since the borrow checker cannot.
fn overlapping_views(
    buf: &mut DeviceBuffer<f32>,
    x: std::ops::Range<usize>,
    y: std::ops::Range<usize>,
) -> (View<'_>, View<'_>) {
    assert!(x.end <= buf.len() && y.end <= buf.len() && x.start <= x.end && y.start <= y.end);
    let base = DeviceIn::<f32>::device_addr(&*buf);
    let stream = buf.stream().clone();
    let view = |r: std::ops::Range<usize>| View {
        addr: base + (r.start * std::mem::size_of::<f32>()) as u64,
        len: r.len(),
        stream: stream.clone(),
        _buf: PhantomData,
    };
    (view(x), view(y))
}

/// A range of a device buffer by address, alive while the buffer is mutably borrowed.
struct View<'a> {
    addr: CUdeviceptr,
    len: usize,
    stream: kgraph::Stream,
    _buf: PhantomData<&'a mut DeviceBuffer<f32>>,
}

// SAFETY: `overlapping_views` builds each view inside its buffer (asserted), a live device
// allocation mutably borrowed for `'a`, so the address holds `len` f32s while the view lives.
unsafe impl DeviceIn<f32> for View<'_> {
    fn device_addr(&self) -> CUdeviceptr {
        self.addr
    }
    fn elem_len(&self) -> usize {
        self.len
    }
    fn stream(&self) -> &kgraph::Stream {
        &self.stream
    }
}

// SAFETY: as above; the buffer is mutably borrowed, so nothing else uses it while kernels
// write through the views. Two views may overlap: a checked launch refuses that.
unsafe impl DeviceOut<f32> for View<'_> {}

#[test]
#[ignore = "needs a CUDA GPU"]
fn blocks_beyond_launch_bounds_are_refused_naming_the_cu_line() {
    use kgraph_model::model::ZeroF32;
    let dev = device();
    let zero = ZeroF32::new(&dev).unwrap();
    assert_eq!(ZeroF32::MAX_THREADS, Some(256), "kernels/model_util.cu: __launch_bounds__(256)");
    let mut x = dev.upload(&[POISON; 1000]).unwrap();
    let too_big = LaunchConfig { grid_dim: (2, 1, 1), block_dim: (512, 1, 1), shared_mem_bytes: 0 };
    let err = zero.launch(dev.stream(), too_big, 1000, &mut x).unwrap_err();
    match &err {
        Error::Launch(LaunchError::BlockTooLarge { kernel: "zero_f32", block: 512, bound: 256, file, line }) => {
            assert!(file.ends_with("model_util.cu") && *line > 0, "{file}:{line}")
        }
        other => panic!("expected LaunchError::BlockTooLarge, got {other:?}"),
    }
    assert!(err.to_string().contains("model_util.cu"), "{err}");
    assert_poisoned(&dev, &x, "block too large");
    let cfg = zero.cfg_for(1000);
    assert_eq!((cfg.grid_dim, cfg.block_dim), ((4, 1, 1), (256, 1, 1)));
    zero.launch(dev.stream(), cfg, 1000, &mut x).unwrap();
    assert!(dev.download(&x).unwrap().iter().all(|&v| v == 0.0));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dynamic_shared_memory_too_little_is_refused_enough_runs_and_above_48_kib_opts_in() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap();
    let (n, block) = (1000usize, 128u32);
    let blocks = n.div_ceil(block as usize);
    let x = dev.upload(&vec![1.0f32; n]).unwrap();
    let mut out = dev.upload(&vec![POISON; blocks]).unwrap();
    let launch = |bytes: u32| LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: bytes,
    };
    for bytes in [0, block * 4 - 1] {
        match k.block_sum.launch(dev.stream(), launch(bytes), &x, n as i32, blocks as i32, &mut out) {
            Err(
                e @ Error::Launch(LaunchError::SharedMemory {
                    kernel: "ka_block_sum_f32", required: 512, given, ..
                }),
            ) => {
                assert_eq!(given, bytes);
                assert!(e.to_string().contains("block.x * 4"), "{e}");
            }
            other => panic!("{bytes} bytes for a block of {block}: expected SharedMemory, got {other:?}"),
        }
    }
    assert_poisoned(&dev, &out, "too little shared memory");
    // The requirement follows the block: 256 threads need 1024 bytes, 512 are refused.
    let wide = LaunchConfig { grid_dim: (4, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 512 };
    assert!(matches!(
        k.block_sum.launch(dev.stream(), wide, &x, n as i32, 4, &mut out),
        Err(Error::Launch(LaunchError::SharedMemory { required: 1024, given: 512, .. }))
    ));
    // Enough: every block sums its ones, the last one the remainder (conservation: the sums add up to n).
    k.block_sum.launch(dev.stream(), launch(block * 4), &x, n as i32, blocks as i32, &mut out).unwrap();
    let sums = dev.download(&out).unwrap();
    let expected = |b: usize| (n - b * block as usize).min(block as usize) as f32;
    assert!(sums.iter().enumerate().all(|(b, &s)| s == expected(b)), "{sums:?}");
    assert_eq!(sums.iter().sum::<f32>(), n as f32);

    // More than the 48 KiB a kernel has without opting in (less its static shared memory): the launch raises the kernel's limit
    // (as `cudaFuncSetAttribute` would) and runs; more than the device grants is refused before the driver sees it.
    let mut big = dev.upload(&vec![POISON; blocks]).unwrap();
    k.block_sum.launch(dev.stream(), launch(100 * 1024), &x, n as i32, blocks as i32, &mut big).unwrap();
    assert_eq!(dev.download(&big).unwrap(), sums, "the same sums with 100 KiB of dynamic shared memory");
    match k.block_sum.launch(dev.stream(), launch(1 << 20), &x, n as i32, blocks as i32, &mut big) {
        // The H200 grants 227 KiB a block, less the kernel's static shared memory (none here).
        Err(Error::Launch(LaunchError::SharedMemoryLimit { kernel: "ka_block_sum_f32", requested, limit })) => {
            assert_eq!(requested, 1 << 20);
            assert!((48 * 1024..1 << 20).contains(&limit), "limit {limit}");
        }
        other => panic!("1 MiB of shared memory: expected SharedMemoryLimit, got {other:?}"),
    }
    // With 16 KiB of static shared memory the kernel's own limit is 32 KiB: 40 KiB opts in too.
    let mut with_static = dev.upload(&vec![POISON; blocks]).unwrap();
    k.block_sum_static.launch(dev.stream(), launch(40 * 1024), &x, n as i32, blocks as i32, &mut with_static).unwrap();
    assert_eq!(dev.download(&with_static).unwrap(), sums, "the same sums beside static shared memory");
    dev.synchronize().unwrap();
}
