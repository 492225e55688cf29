//! ggml-org/llama.cpp's ggml-cuda kernels whose extents hold only for some scalars or launch
//! shapes, declared with `requires(...)` (the checked launch refuses the others,
//! `LaunchError::Requirement`): argmax (a 32-bit column counter against a 64-bit bound),
//! count_equal (a signed chunk size), the LayerNorm / L2 norm / group norm (signed `int64_t`
//! strides, `int` offsets and loop counters) and both cumsums (signed strides; the cub scan's
//! block of exactly 256). Each runs at the manifest's three shapes with buffers of exactly its
//! extents, and all seven are one graph (`tests/corpus2/graphs/llamacpp_requires.toml`).
//!
//! The norms and count_equal step their loops by `WARP_SIZE` and reduce with full-mask warp
//! shuffles, so the shapes keep their blocks at 32 threads (any block stays in bounds).

use kgraph::{Device, DeviceBuffer};

use super::common::{
    assert_extent_refused, assert_requirement_refused, device, download, filled, random, upload, Shape,
};

#[kgraph::kernels]
pub(crate) mod kernels {
    /// `dst[r]` = the column of row `r`'s maximum, one block per row. The column counter is an
    /// `int32_t` stepping by `blockDim.x` up to the `int64_t` `ncols`.
    #[kernel("llamacpp__argmax.cu", unsafe(extents), max_block = 1024, requires(ncols <= i32::MAX - block.x))]
    pub fn argmax_f32(x: &[f32; grid.x * ncols], dst: &mut [i32; grid.x], ncols: i64);

    /// `dst[0] += #{i : x[i] == y[i]}`, block `b` counting `[b * dk, min((b + 1) * dk, k))`.
    #[kernel(
        "llamacpp__count_equal.cu",
        name = "count_equal<int>",
        unsafe(extents),
        requires(dk >= 0, grid.x * dk <= i64::MAX)
    )]
    pub fn count_equal(x: &[i32; k], y: &[i32; k], dst: &mut [i64; 1], dk: i64, k: i64);

    /// LayerNorm without affine of row (`blockIdx.x`, `blockIdx.y`, `blockIdx.z`), read at
    /// signed strides and written densely.
    #[kernel(
        "llamacpp__norm.cu",
        name = "norm_f32<32>",
        unsafe(extents),
        requires(stride_row >= 0, stride_channel >= 0, stride_sample >= 0, ncols <= i32::MAX - 32)
    )]
    pub fn norm_f32(
        x: &[f32; (grid.z - 1) * stride_sample + (grid.y - 1) * stride_channel + (grid.x - 1) * stride_row + ncols],
        dst: &mut [f32; grid.x * grid.y * grid.z * ncols],
        ncols: i32,
        stride_row: i64,
        stride_channel: i64,
        stride_sample: i64,
        eps: f32,
    );

    /// `x / max(|x|, eps)` per row, laid out as `norm_f32`'s.
    #[kernel(
        "llamacpp__norm.cu",
        name = "l2_norm_f32<32>",
        unsafe(extents),
        requires(stride_row >= 0, stride_channel >= 0, stride_sample >= 0, ncols <= i32::MAX - 32)
    )]
    pub fn l2_norm_f32(
        x: &[f32; (grid.z - 1) * stride_sample + (grid.y - 1) * stride_channel + (grid.x - 1) * stride_row + ncols],
        dst: &mut [f32; grid.x * grid.y * grid.z * ncols],
        ncols: i32,
        stride_row: i64,
        stride_channel: i64,
        stride_sample: i64,
        eps: f32,
    );

    /// Group `blockIdx.x` (elements `[b * group_size, min((b + 1) * group_size, ne_elements))`)
    /// normalised; the start is computed in `unsigned` and stored in `int`.
    #[kernel(
        "llamacpp__norm.cu",
        name = "group_norm_f32<32>",
        unsafe(extents),
        requires(group_size >= 0, grid.x * group_size + block.x <= i32::MAX, ne_elements <= i32::MAX - 32)
    )]
    pub fn group_norm_f32(
        x: &[f32; ne_elements],
        dst: &mut [f32; ne_elements],
        group_size: i32,
        ne_elements: i32,
        eps: f32,
    );

    /// Inclusive prefix sum of each row with cub's `BlockScan<float, 256>` (its shared
    /// `TempStorage` is laid out for 256 threads).
    #[kernel(
        "llamacpp__cumsum.cu",
        name = "cumsum_cub_kernel<float, 256>",
        unsafe(extents),
        max_block = 256,
        requires(block.x == 256, nb01 >= 0, nb02 >= 0, nb03 >= 0, nb1 >= 0, nb2 >= 0, nb3 >= 0)
    )]
    pub fn cumsum_cub_kernel(
        src: &[f32; (ne01 - 1) * nb01 + (ne02 - 1) * nb02 + (ne03 - 1) * nb03 + ne00],
        dst: &mut [f32; (ne01 - 1) * nb1 + (ne02 - 1) * nb2 + (ne03 - 1) * nb3 + ne00],
        ne00: i64,
        ne01: i64,
        ne02: i64,
        ne03: i64,
        nb01: i64,
        nb02: i64,
        nb03: i64,
        nb1: i64,
        nb2: i64,
        nb3: i64,
    );

    /// The same prefix sum with warp scans, for any block (shared: the block's values, one
    /// sum per warp, the carry and the chunk total).
    #[kernel(
        "llamacpp__cumsum.cu",
        name = "cumsum_kernel<float>",
        unsafe(extents),
        shared = (block.x + block.x / 32 + 2) * 4,
        requires(nb01 >= 0, nb02 >= 0, nb03 >= 0, nb1 >= 0, nb2 >= 0, nb3 >= 0)
    )]
    pub fn cumsum_kernel(
        src: &[f32; (ne01 - 1) * nb01 + (ne02 - 1) * nb02 + (ne03 - 1) * nb03 + ne00],
        dst: &mut [f32; (ne01 - 1) * nb1 + (ne02 - 1) * nb2 + (ne03 - 1) * nb3 + ne00],
        ne00: i64,
        ne01: i64,
        ne02: i64,
        ne03: i64,
        nb00: i64,
        nb01: i64,
        nb02: i64,
        nb03: i64,
        nb0: i64,
        nb1: i64,
        nb2: i64,
        nb3: i64,
    );
}
use kernels::{CountEqual, CumsumCubKernel, Kernels, NormF32};

kgraph::graph!("tests/corpus2/graphs/llamacpp_requires.toml");

/// Random rows with row `r`'s maximum (10, above every random value) at `(r * 7) % ncols`.
fn planted_rows(rows: usize, ncols: usize) -> Vec<f32> {
    let mut x = random(rows * ncols, 90);
    for r in 0..rows {
        x[r * ncols + (r * 7) % ncols] = 10.0;
    }
    x
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn argmax_finds_the_planted_maximum_of_every_row_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().argmax_f32;
    for (shape, ncols) in [(Shape::x(1, 32), 1i64), (Shape::x(128, 1024), 50_000), (Shape::x(1000, 64), 10)] {
        let (rows, n) = (shape.gx(), ncols as usize);
        let x = upload(&dev, &planted_rows(rows, n));
        let mut dst = filled(&dev, rows, -7i32);
        k.launch(dev.stream(), shape.cfg(), &x, &mut dst, ncols).unwrap();
        for (r, col) in download(&dev, &dst).into_iter().enumerate() {
            assert_eq!(col as usize, (r * 7) % n, "{shape:?} ncols {ncols}: row {r}");
        }
    }
    // One row more than x holds.
    let (shape, ncols) = (Shape::x(16, 64), 100i64);
    let x = upload(&dev, &planted_rows(16, 100));
    let mut dst = filled(&dev, 17, -7i32);
    let r = k.launch(dev.stream(), shape.one_more_block().cfg(), &x, &mut dst, ncols);
    assert_extent_refused(r, "argmax_f32", "x", 1700, 1600);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn count_equal_counts_the_equal_positions_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().count_equal;
    for (shape, dk, n) in
        [(Shape::x(1, 32), 32i64, 1i64), (Shape::x(528, 32), 256, 135_000), (Shape::x(8, 32), 1024, 8192)]
    {
        let len = n as usize;
        let x_h: Vec<i32> = (0..len as i32).collect();
        // Every third position differs: k - ceil(k / 3) are equal.
        let y_h: Vec<i32> = x_h.iter().map(|&v| if v % 3 == 0 { -1 } else { v }).collect();
        let (x, y) = (upload(&dev, &x_h), upload(&dev, &y_h));
        let mut dst = filled(&dev, 1, 0i64);
        k.launch(dev.stream(), shape.cfg(), &x, &y, &mut dst, dk, n).unwrap();
        assert_eq!(download(&dev, &dst)[0], n - (n + 2) / 3, "{shape:?} dk {dk} k {n}");
    }
    let (x, y) = (filled(&dev, 64, 1i32), filled(&dev, 64, 1i32));
    let mut dst = filled(&dev, 1, 0i64);
    // dk = -32: block 1 would start at x[-32].
    let r = k.launch(dev.stream(), Shape::x(2, 32).cfg(), &x, &y, &mut dst, -32, 64);
    assert_requirement_refused(r, CountEqual::NAME, "dk >= 0");
    assert_eq!(download(&dev, &dst)[0], 0, "a refused launch wrote");
}

/// A norm launch shape: grid (rows, channels, samples), ncols and the three strides.
type NormShape = (Shape, i32, i64, i64, i64);

/// The manifest's norm shapes: a single element, a dense 3-D grid, padded rows with no sample stride.
const NORM_SHAPES: [NormShape; 3] = [
    (Shape { grid: (1, 1, 1), block: (32, 1, 1) }, 1, 1, 1, 1),
    (Shape { grid: (64, 4, 2), block: (32, 1, 1) }, 1000, 1000, 64_000, 256_000),
    (Shape { grid: (7, 3, 1), block: (32, 1, 1) }, 33, 40, 280, 0),
];

/// `x` of exactly the declared extent with row (r, c, s) at `s * ss + c * sc + r * sr` holding
/// `first, first + 1, ...`; every element no row covers is NaN, so a read of one shows.
fn strided_rows((shape, ncols, sr, sc, ss): NormShape, first: f32) -> Vec<f32> {
    let (gx, gy, gz) = shape.grid;
    let len = (gz as i64 - 1) * ss + (gy as i64 - 1) * sc + (gx as i64 - 1) * sr + ncols as i64;
    let mut x = vec![f32::NAN; len as usize];
    for s in 0..gz as i64 {
        for c in 0..gy as i64 {
            for r in 0..gx as i64 {
                let at = (s * ss + c * sc + r * sr) as usize;
                for j in 0..ncols as usize {
                    x[at + j] = first + j as f32;
                }
            }
        }
    }
    x
}

/// Each `n`-element chunk of `dst` is the LayerNorm of `0, 1, ..., n - 1`: mean 0 and mean
/// square `var / (var + eps)` with `var = (n^2 - 1) / 12`.
fn assert_layer_normed(what: &str, dst: &[f32], n: usize, eps: f64) {
    let var = ((n * n) as f64 - 1.0) / 12.0;
    for (r, row) in dst.chunks(n).enumerate() {
        let mean = row.iter().map(|&v| f64::from(v)).sum::<f64>() / n as f64;
        let ms = row.iter().map(|&v| f64::from(v) * f64::from(v)).sum::<f64>() / n as f64;
        assert!(mean.abs() <= 1e-4, "{what}: row {r} mean {mean}");
        assert!((ms - var / (var + eps)).abs() <= 1e-3, "{what}: row {r} mean square {ms}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn norm_and_l2_norm_normalise_every_strided_row_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap();
    for ns in NORM_SHAPES {
        let (shape, ncols, sr, sc, ss) = ns;
        let (g, n) = (shape.grid, ncols as usize);
        let rows = (g.0 * g.1 * g.2) as usize;
        let what = format!("{shape:?} ncols {ncols} strides {sr}/{sc}/{ss}");

        let x = upload(&dev, &strided_rows(ns, 0.0));
        let mut dst = filled(&dev, rows * n, f32::NAN);
        k.norm_f32.launch(dev.stream(), shape.cfg(), &x, &mut dst, ncols, sr, sc, ss, 1e-5).unwrap();
        assert_layer_normed(&format!("norm {what}"), &download(&dev, &dst), n, 1e-5);

        // Rows 1, 2, ..., n: unit L2 norm after.
        let x = upload(&dev, &strided_rows(ns, 1.0));
        let mut dst = filled(&dev, rows * n, f32::NAN);
        k.l2_norm_f32.launch(dev.stream(), shape.cfg(), &x, &mut dst, ncols, sr, sc, ss, 1e-6).unwrap();
        for (r, row) in download(&dev, &dst).chunks(n).enumerate() {
            let sq = row.iter().map(|&v| f64::from(v) * f64::from(v)).sum::<f64>();
            assert!((sq - 1.0).abs() <= 1e-4, "l2 {what}: row {r} has squared norm {sq}");
        }
    }
    let x = filled(&dev, 64, 1.0f32);
    let mut dst = filled(&dev, 64, f32::NAN);
    // A reversed view (stride -32) would read row 1 at x[-32..0].
    let r = k.norm_f32.launch(dev.stream(), Shape::x(2, 32).cfg(), &x, &mut dst, 32, -32, 0, 0, 1e-5);
    assert_requirement_refused(r, NormF32::NAME, "stride_row >= 0");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn group_norm_normalises_every_complete_group_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().group_norm_f32;
    for (shape, group_size, ne) in
        [(Shape::x(1, 32), 32, 32), (Shape::x(32, 32), 1024, 32_768), (Shape::x(5, 32), 100, 450)]
    {
        let x = upload(&dev, &(0..ne).map(|i| (i % group_size) as f32).collect::<Vec<_>>());
        let mut dst = filled(&dev, ne as usize, f32::NAN);
        k.launch(dev.stream(), shape.cfg(), &x, &mut dst, group_size, ne, 1e-5).unwrap();
        let got = download(&dev, &dst);
        let full = (ne / group_size * group_size) as usize;
        let what = format!("{shape:?} group_size {group_size} ne_elements {ne}");
        assert_layer_normed(&what, &got[..full], group_size as usize, 1e-5);
        // The tail group is divided by group_size, not its own length: only finite is promised.
        assert!(got[full..].iter().all(|v| v.is_finite()), "{what}: the tail group");
    }
}

/// A cumsum shape: (shape, ne00, ne01, ne02, ne03, nb01, nb02, nb03, nb1, nb2, nb3).
type ScanShape = (Shape, [i64; 4], [i64; 3], [i64; 3]);

/// `src` all ones (the elements between padded rows NaN) and `dst` NaN, of the extents.
fn scan_buffers(dev: &Device, (_, ne, nbs, nbd): ScanShape) -> (DeviceBuffer<f32>, DeviceBuffer<f32>) {
    let extent = |nb: [i64; 3]| ((ne[1] - 1) * nb[0] + (ne[2] - 1) * nb[1] + (ne[3] - 1) * nb[2] + ne[0]) as usize;
    let mut src = vec![f32::NAN; extent(nbs)];
    for i3 in 0..ne[3] {
        for i2 in 0..ne[2] {
            for i1 in 0..ne[1] {
                let at = (i1 * nbs[0] + i2 * nbs[1] + i3 * nbs[2]) as usize;
                src[at..at + ne[0] as usize].fill(1.0);
            }
        }
    }
    (upload(dev, &src), filled(dev, extent(nbd), f32::NAN))
}

/// Every dense row of `dst` is `1, 2, ..., ne00`: the prefix sums of ones, exact.
fn assert_counts_up(what: &str, dst: &[f32], ne00: usize) {
    for (r, row) in dst.chunks(ne00).enumerate() {
        assert!(row.iter().enumerate().all(|(i, &v)| v == (i + 1) as f32), "{what}: row {r}: {row:?}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn both_cumsums_count_up_every_row_at_three_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap();
    let cub: [ScanShape; 3] = [
        (Shape::x(1, 256), [1, 1, 1, 1], [1, 1, 1], [1, 1, 1]),
        (
            Shape { grid: (64, 2, 1), block: (256, 1, 1) },
            [1000, 64, 2, 1],
            [1000, 64_000, 128_000],
            [1000, 64_000, 128_000],
        ),
        (Shape::x(10, 256), [7, 10, 1, 1], [8, 80, 80], [7, 70, 70]),
    ];
    for s in cub {
        let (shape, ne, nbs, nbd) = s;
        let (src, mut dst) = scan_buffers(&dev, s);
        k.cumsum_cub_kernel
            .launch(
                dev.stream(),
                shape.cfg(),
                &src,
                &mut dst,
                ne[0],
                ne[1],
                ne[2],
                ne[3],
                nbs[0],
                nbs[1],
                nbs[2],
                nbd[0],
                nbd[1],
                nbd[2],
            )
            .unwrap();
        assert_counts_up(&format!("cub {shape:?} {ne:?}"), &download(&dev, &dst), ne[0] as usize);
    }
    let warp: [ScanShape; 3] = [
        (Shape::x(1, 32), [1, 1, 1, 1], [1, 1, 1], [1, 1, 1]),
        (
            Shape { grid: (64, 2, 1), block: (1024, 1, 1) },
            [5000, 64, 2, 1],
            [5000, 320_000, 640_000],
            [5000, 320_000, 640_000],
        ),
        (Shape::x(10, 64), [7, 10, 1, 1], [8, 80, 80], [7, 70, 70]),
    ];
    for s in warp {
        let (shape, ne, nbs, nbd) = s;
        let (src, mut dst) = scan_buffers(&dev, s);
        let shared = (shape.block.0 + shape.block.0 / 32 + 2) * 4;
        k.cumsum_kernel
            .launch(
                dev.stream(),
                shape.cfg_shared(shared),
                &src,
                &mut dst,
                ne[0],
                ne[1],
                ne[2],
                ne[3],
                1,
                nbs[0],
                nbs[1],
                nbs[2],
                1,
                nbd[0],
                nbd[1],
                nbd[2],
            )
            .unwrap();
        assert_counts_up(&format!("warp {shape:?} {ne:?}"), &download(&dev, &dst), ne[0] as usize);
    }
    // cub's scan with 128 threads would leave block_total unwritten and the scan storage half used.
    let (src, mut dst) = scan_buffers(&dev, cub[0]);
    let r =
        k.cumsum_cub_kernel.launch(dev.stream(), Shape::x(1, 128).cfg(), &src, &mut dst, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);
    assert_requirement_refused(r, CumsumCubKernel::NAME, "block.x == 256");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_reductions_and_scans_graph_matches_eager_and_keeps_the_invariants() {
    type G = LlamacppRequires;
    let dev = device();
    let fill = |g: &mut G| {
        g.upload_am_x(&planted_rows(G::ROWS, G::NCOLS)).unwrap();
        let x: Vec<i32> = (0..G::K as i32).collect();
        g.upload_ce_x(&x).unwrap();
        g.upload_ce_y(&x.iter().map(|&v| if v % 3 == 0 { -1 } else { v }).collect::<Vec<_>>()).unwrap();
        g.load_ce_count(&[0]).unwrap();
        g.upload_norm_x(&(0..G::ROWS * G::NCOLS).map(|i| (i % G::NCOLS) as f32).collect::<Vec<_>>()).unwrap();
        g.upload_l2_x(&(0..G::ROWS * G::NCOLS).map(|i| (i % G::NCOLS + 1) as f32).collect::<Vec<_>>()).unwrap();
        g.upload_gn_x(&(0..G::GROUPS * G::GROUP_SIZE).map(|i| (i % G::GROUP_SIZE) as f32).collect::<Vec<_>>()).unwrap();
        g.upload_scan_src(&vec![1.0; G::SCAN_SRC_LEN]).unwrap();
    };
    let results = |g: &G| {
        let b = |v: Vec<f32>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        vec![
            g.download_am_dst().unwrap().iter().map(|&c| c as u32).collect(),
            vec![g.download_ce_count().unwrap()[0] as u32],
            b(g.download_norm_dst().unwrap()),
            b(g.download_l2_dst().unwrap()),
            b(g.download_gn_dst().unwrap()),
            b(g.download_scan_cub().unwrap()),
            b(g.download_scan_warp().unwrap()),
        ]
    };
    let mut eager = G::new(&dev).unwrap();
    fill(&mut eager);
    eager.run_eager().unwrap();
    let mut graph = G::new(&dev).unwrap();
    fill(&mut graph);
    graph.capture().unwrap();
    graph.replay().unwrap();
    assert_eq!(results(&graph), results(&eager), "graph replay and run_eager differ");

    let am = graph.download_am_dst().unwrap();
    assert!(am.iter().enumerate().all(|(r, &c)| c as usize == (r * 7) % G::NCOLS), "{am:?}");
    assert_eq!(graph.download_ce_count().unwrap()[0], (G::K - G::K.div_ceil(3)) as i64);
    assert_layer_normed("graph norm", &graph.download_norm_dst().unwrap(), G::NCOLS, 1e-5);
    assert_layer_normed("graph group norm", &graph.download_gn_dst().unwrap(), G::GROUP_SIZE, 1e-5);
    assert_counts_up("graph cub scan", &graph.download_scan_cub().unwrap(), G::NCOLS);
    assert_counts_up("graph warp scan", &graph.download_scan_warp().unwrap(), G::NCOLS);
}
