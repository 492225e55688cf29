//! Kernels sized by their launch grid (`tests/kernels/test_rows.cu`): an RMSNorm launched one
//! block per row and a bias add whose batch is `grid.y`, declared truthfully with extents over
//! `grid.x` / `grid.y`. The checked launch evaluates those from its `LaunchConfig` and refuses a
//! grid larger than the buffers; `graph!` evaluates them from each node's `grid` at compile time.
//! Expected values are invariants of the outputs (unit RMS, a constant ratio per row, the bias
//! recovered), or the same spec run eagerly.

use kgraph::{Device, DeviceBuffer, Error, LaunchConfig, LaunchError};

use super::common::{device, random};

#[kgraph::kernels]
pub(crate) mod kernels {
    /// RMSNorm of row `blockIdx.x`: the grid is the row count.
    #[kernel("test_rows.cu", unsafe(extents))]
    pub fn kr_rms_norm(
        out: &mut [f32; grid.x * hidden],
        x: &[f32; grid.x * hidden],
        weight: &[f32; hidden],
        eps: f32,
        hidden: i32,
    );

    /// `out = a + bias` for batch row `blockIdx.y`: the batch is `grid.y`.
    #[kernel("test_rows.cu", unsafe(extents))]
    pub fn kr_add_bias_rows(a: &[f32; grid.y * n], bias: &[f32; n], out: &mut [f32; grid.y * n], n: i32);
}
use kernels::{Kernels, KrAddBiasRows};

kgraph::graph!("tests/graphs/test_rows.toml");

const POISON: f32 = -7.25;

/// `kgraph::config_rows`, with a block of any shape.
fn rows_cfg(rows: u32, block: (u32, u32, u32)) -> LaunchConfig {
    LaunchConfig { block_dim: block, ..kgraph::config_rows(rows, 1) }
}

/// Every row of `out` has a root mean square of 1 (weight 1, eps tiny) and is `x`'s row times
/// one positive constant.
fn assert_unit_rms_rows(out: &[f32], x: &[f32], rows: usize, hidden: usize, what: &str) {
    for r in 0..rows {
        let (o, xr) = (&out[r * hidden..(r + 1) * hidden], &x[r * hidden..(r + 1) * hidden]);
        let ms = o.iter().map(|v| f64::from(*v) * f64::from(*v)).sum::<f64>() / hidden as f64;
        assert!((ms.sqrt() - 1.0).abs() < 1e-4, "{what}: row {r} has RMS {}", ms.sqrt());
        let sq = |v: &[f32]| v.iter().map(|a| f64::from(*a) * f64::from(*a)).sum::<f64>();
        let ratio = (sq(o) / sq(xr)).sqrt();
        for (j, (a, b)) in o.iter().zip(xr).enumerate() {
            let want = ratio * f64::from(*b);
            assert!(
                (f64::from(*a) - want).abs() <= 1e-5 * want.abs() + 1e-7,
                "{what}: row {r} element {j} is {a}, not x scaled by the row's constant ({want})"
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn one_block_per_row_norm_at_three_block_shapes() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().kr_rms_norm;
    let (rows, hidden) = (37usize, 300usize);
    let x = random(rows * hidden, 3);
    let xd = dev.upload(&x).unwrap();
    let w = dev.upload(&vec![1.0f32; hidden]).unwrap();
    for block in [(32, 1, 1), (100, 1, 1), (16, 4, 2)] {
        let mut out = dev.upload(&vec![POISON; rows * hidden]).unwrap();
        k.launch(dev.stream(), rows_cfg(rows as u32, block), &mut out, &xd, &w, 1e-12, hidden as i32).unwrap();
        assert_unit_rms_rows(&dev.download(&out).unwrap(), &x, rows, hidden, &format!("block {block:?}"));
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_grid_larger_than_the_rows_is_refused_before_the_driver() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().kr_rms_norm;
    let (rows, hidden) = (8usize, 64usize);
    let xd = dev.upload(&random(rows * hidden, 4)).unwrap();
    let w = dev.upload(&vec![1.0f32; hidden]).unwrap();
    let mut out = dev.upload(&vec![POISON; rows * hidden]).unwrap();
    // One block more than there are rows: the kernel would write row 8, past both buffers.
    let err = k.launch(dev.stream(), rows_cfg(rows as u32 + 1, (64, 1, 1)), &mut out, &xd, &w, 1e-6, hidden as i32);
    match err {
        Err(Error::Launch(LaunchError::Extent { kernel: "kr_rms_norm", param: "out", required, actual })) => {
            assert_eq!((required, actual), ((rows as u64 + 1) * hidden as u64, rows * hidden));
        }
        other => panic!("expected LaunchError::Extent for `out`, got {other:?}"),
    }
    assert!(dev.download(&out).unwrap().iter().all(|&v| v == POISON), "a refused launch wrote");
    // Fewer rows than the buffers hold is within the promise: only those rows are written.
    k.launch(dev.stream(), rows_cfg(rows as u32 - 1, (64, 1, 1)), &mut out, &xd, &w, 1e-6, hidden as i32).unwrap();
    let got = dev.download(&out).unwrap();
    assert!(got[..(rows - 1) * hidden].iter().all(|v| v.is_finite() && *v != POISON));
    assert!(got[(rows - 1) * hidden..].iter().all(|&v| v == POISON), "the last row was not launched");
}

fn bias_case(dev: &Device, k: &KrAddBiasRows, batch: u32, n: usize, grid_y: u32) -> (Result<(), Error>, Vec<f32>) {
    let a = dev.upload(&random(batch as usize * n, 5)).unwrap();
    let bias = dev.upload(&random(n, 6)).unwrap();
    let mut out: DeviceBuffer<f32> = dev.upload(&vec![POISON; batch as usize * n]).unwrap();
    let cfg =
        LaunchConfig { grid_dim: ((n as u32).div_ceil(64), grid_y, 1), block_dim: (64, 1, 1), shared_mem_bytes: 0 };
    let r = k.launch(dev.stream(), cfg, &a, &bias, &mut out, n as i32);
    let got = dev.download(&out).unwrap();
    let (a, bias) = (dev.download(&a).unwrap(), dev.download(&bias).unwrap());
    if r.is_ok() {
        // `out - a` recovers the bias in every launched row exactly (one rounding of a + b).
        for b in 0..grid_y as usize {
            for i in 0..n {
                assert_eq!(got[b * n + i], a[b * n + i] + bias[i], "row {b} element {i}");
            }
        }
    }
    (r, got)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn batch_in_grid_y_is_checked_at_every_shape() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().kr_add_bias_rows;
    for (batch, n) in [(1u32, 1usize), (16, 200), (64, 1000)] {
        bias_case(&dev, &k, batch, n, batch).0.unwrap();
    }
    let (r, got) = bias_case(&dev, &k, 16, 200, 17);
    assert!(
        matches!(r, Err(Error::Launch(LaunchError::Extent { kernel: "kr_add_bias_rows", param: "a", .. }))),
        "{r:?}"
    );
    assert!(got.iter().all(|&v| v == POISON), "a refused launch wrote");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn grid_sized_nodes_in_a_graph_match_eager_and_keep_the_invariants() {
    let dev = device();
    let (rows, hidden) = (TestRows::ROWS, TestRows::HIDDEN);
    let x = random(rows * hidden, 7);
    let bias = random(hidden, 8);
    let fill = |g: &mut TestRows| {
        g.upload_x(&x).unwrap();
        g.upload_w(&vec![1.0f32; hidden]).unwrap();
        g.upload_bias(&bias).unwrap();
    };
    let mut eager = TestRows::new(&dev).unwrap();
    fill(&mut eager);
    eager.run_eager().unwrap();
    let mut graph = TestRows::new(&dev).unwrap();
    fill(&mut graph);
    graph.capture().unwrap();
    graph.replay().unwrap();
    let (y, z) = (graph.download_y().unwrap(), graph.download_z().unwrap());
    assert_eq!(
        y.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        eager.download_y().unwrap().iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    assert_eq!(
        z.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        eager.download_z().unwrap().iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    assert_unit_rms_rows(&y, &x, rows, hidden, "graph norm");
    for r in 0..rows {
        for j in 0..hidden {
            assert_eq!(z[r * hidden + j], y[r * hidden + j] + bias[j], "row {r} element {j}");
        }
    }
}
