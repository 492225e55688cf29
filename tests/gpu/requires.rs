//! Launch-time requirements (issue #28): kernels whose extents are true only under conditions
//! on their scalars and launch shape (`requires(...)`) or for aligned pointers (`align(...)`).
//! A launch meeting them runs; one violating each kind (scalar range, block shape, alignment)
//! is refused with its typed error before anything runs, the output untouched; a graph's
//! `set_stride` and `set_launch` re-check them. Kernels: `tests/kernels/test_requires.cu`; graph:
//! `tests/graphs/test_requires.toml`.

use kgraph::{Error, LaunchConfig, LaunchError};

use super::common::device;

/// `out[r * hidden + i] = 2 * input[r * input_stride + i]`, one block per row (vLLM rms_norm's
/// access pattern): the extent of `input` bounds the reads only for `input_stride >= 0`.
#[kgraph::kernel("test_requires.cu", unsafe(extents), requires(input_stride >= 0))]
pub fn rq_scale_rows(
    out: &mut [f32; grid.x * hidden],
    input: &[f32; (grid.x - 1) * input_stride + hidden],
    input_stride: i64,
    hidden: i32,
);

/// `out[b]` = the sum of the 256 elements of block `b`'s shared tile: written for exactly 256
/// threads in x.
#[kgraph::kernel("test_requires.cu", unsafe(extents), max_block = 256, requires(block.x == 256))]
pub fn rq_tile_sum(x: &[f32; grid.x * block.x], out: &mut [f32; grid.x]);

/// `y = x + 1` through `float4` accesses: both pointers 16-byte aligned.
#[kgraph::kernel("test_requires.cu", unsafe(extents), align(x = 16, y = 16))]
pub fn rq_add_one4(x: &[f32; n4 * 4], y: &mut [f32; n4 * 4], n4: i32);

kgraph::graph!("tests/graphs/test_requires.toml");

const POISON: f32 = -7.25;

fn cfg(grid: u32, block: (u32, u32, u32)) -> LaunchConfig {
    LaunchConfig { grid_dim: (grid, 1, 1), block_dim: block, shared_mem_bytes: 0 }
}

/// 0, 1, 2, ... as floats (exact).
fn iota(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32).collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_negative_stride_is_refused_by_its_scalar_range() {
    let dev = device();
    let k = RqScaleRows::new(&dev).unwrap();
    let (rows, hidden) = (4usize, 64usize);
    let input = dev.upload(&iota(rows * hidden)).unwrap();
    let mut out = dev.upload(&vec![POISON; rows * hidden]).unwrap();
    // Meeting the condition: stride 64 reads each row once; stride 0 reads row 0 four times.
    k.launch(dev.stream(), cfg(4, (32, 1, 1)), &mut out, &input, 64, 64).unwrap();
    assert_eq!(dev.download(&out).unwrap(), iota(rows * hidden).iter().map(|v| 2.0 * v).collect::<Vec<_>>());
    k.launch(dev.stream(), cfg(4, (32, 1, 1)), &mut out, &input, 0, 64).unwrap();
    let row0: Vec<f32> = (0..rows * hidden).map(|i| 2.0 * (i % hidden) as f32).collect();
    assert_eq!(dev.download(&out).unwrap(), row0);

    // Stride -1 from a view of the last row: the extent `(grid.x - 1) * stride + hidden` is
    // 3 * -1 + 64 = 61, which the 64-element view holds, yet rows 1..3 would start below the view
    // (memory the caller did not lend): only the requirement stands between it and the kernel.
    let mut fresh = dev.upload(&vec![POISON; rows * hidden]).unwrap();
    let last_row = input.slice((rows - 1) * hidden..).unwrap();
    match k.launch(dev.stream(), cfg(4, (32, 1, 1)), &mut fresh, &last_row, -1, 64) {
        Err(Error::Launch(LaunchError::Requirement { kernel: "rq_scale_rows", condition, values })) => {
            assert_eq!(condition, "input_stride >= 0");
            assert_eq!(values, [("input_stride", -1)]);
        }
        other => panic!("a negative stride must be refused, got {other:?}"),
    }
    assert!(dev.download(&fresh).unwrap().iter().all(|&v| v == POISON), "a refused launch wrote");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_block_other_than_256_is_refused_by_its_block_shape() {
    let dev = device();
    let k = RqTileSum::new(&dev).unwrap();
    let x = dev.upload(&vec![1.0f32; 4 * 256]).unwrap();
    let mut out = dev.upload(&[POISON; 4]).unwrap();
    for block in [(128, 1, 1), (64, 4, 1), (255, 1, 1)] {
        match k.launch(dev.stream(), cfg(4, block), &x, &mut out) {
            Err(Error::Launch(LaunchError::Requirement {
                kernel: "rq_tile_sum",
                condition: "block.x == 256",
                values,
            })) => {
                assert_eq!(values, [("block.x", i128::from(block.0))], "{block:?}");
            }
            other => panic!("block {block:?}: expected LaunchError::Requirement, got {other:?}"),
        }
    }
    assert!(dev.download(&out).unwrap().iter().all(|&v| v == POISON), "a refused launch wrote");
    k.launch(dev.stream(), cfg(4, (256, 1, 1)), &x, &mut out).unwrap();
    assert_eq!(dev.download(&out).unwrap(), [256.0; 4], "every tile holds 256 ones");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_misaligned_view_is_refused_by_its_alignment() {
    let dev = device();
    let k = RqAddOne4::new(&dev).unwrap();
    let x = dev.upload(&iota(65)).unwrap();
    let mut y = dev.upload(&[POISON; 65]).unwrap();
    // Whole allocations are aligned: 16 float4s.
    k.launch(dev.stream(), cfg(1, (16, 1, 1)), &x, &mut y, 16).unwrap();
    let mut want: Vec<f32> = (0..64).map(|i| i as f32 + 1.0).collect();
    want.push(POISON);
    assert_eq!(dev.download(&y).unwrap(), want);

    // A view one float in (4 bytes) is not 16-byte aligned: refused, nothing written.
    let mut fresh = dev.upload(&[POISON; 65]).unwrap();
    let x1 = x.slice(1..).unwrap();
    match k.launch(dev.stream(), cfg(1, (16, 1, 1)), &x1, &mut fresh, 16) {
        Err(Error::Launch(LaunchError::Misaligned { kernel: "rq_add_one4", param: "x", addr, align: 16 })) => {
            assert_eq!(addr % 16, 4, "{addr:#x}");
        }
        other => panic!("a misaligned x must be refused, got {other:?}"),
    }
    {
        let mut y1 = fresh.slice_mut(1..).unwrap();
        let err = k.launch(dev.stream(), cfg(1, (16, 1, 1)), &x, &mut y1, 16).unwrap_err();
        assert!(matches!(err, Error::Launch(LaunchError::Misaligned { param: "y", align: 16, .. })), "{err:?}");
    }
    assert!(dev.download(&fresh).unwrap().iter().all(|&v| v == POISON), "a refused launch wrote");
    // A view four floats in is aligned again.
    let x4 = x.slice(4..).unwrap();
    k.launch(dev.stream(), cfg(1, (15, 1, 1)), &x4, &mut fresh, 15).unwrap();
    assert_eq!(dev.download(&fresh).unwrap()[..4], [5.0, 6.0, 7.0, 8.0]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn graph_setters_re_check_the_requirements() {
    let dev = device();
    let (rows, hidden) = (TestRequires::ROWS, TestRequires::HIDDEN);
    let x = iota(rows * hidden);
    let mut g = TestRequires::new(&dev).unwrap();
    g.upload_x(&x).unwrap();
    g.capture().unwrap();
    g.replay().unwrap();
    let y = g.download_y().unwrap();
    assert_eq!(y, x.iter().map(|v| 2.0 * v).collect::<Vec<_>>());
    let sums = g.download_sums().unwrap();

    // -1 keeps the extent of `x` ((8 - 1) * -1 + 256 = 249) within the buffer: only the
    // requirement refuses it, before the scalar or the graph changes.
    match g.set_stride(-1) {
        Err(Error::Launch(LaunchError::Requirement {
            kernel: "rq_scale_rows",
            condition: "input_stride >= 0",
            values,
        })) => {
            assert_eq!(values, [("input_stride", -1)]);
        }
        other => panic!("set_stride(-1) must be refused, got {other:?}"),
    }
    assert_eq!(g.stride(), 256, "a refused value changes nothing");
    // A block of 128 for the tile node: refused before the node changes.
    let tiles = TestRequires::NODES.iter().position(|n| *n == "tiles").expect("node `tiles`");
    let err = g.set_launch(tiles, cfg(rows as u32 * 2, (128, 1, 1))).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Launch(LaunchError::Requirement { kernel: "rq_tile_sum", condition: "block.x == 256", .. })
        ),
        "{err:?}"
    );
    // The replay runs as captured.
    g.upload_x(&x).unwrap();
    g.replay().unwrap();
    assert_eq!(g.download_y().unwrap(), y);
    assert_eq!(g.download_sums().unwrap(), sums);
    // A value meeting the condition is taken: stride 0 reads row 0 for every row.
    g.set_stride(0).unwrap();
    g.replay().unwrap();
    let row0: Vec<f32> = (0..rows * hidden).map(|i| 2.0 * (i % hidden) as f32).collect();
    assert_eq!(g.download_y().unwrap(), row0);
}
