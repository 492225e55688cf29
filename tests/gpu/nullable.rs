//! Optional pointers (`tests/kernels/test_nullable.cu`): a parameter the kernel accepts as NULL
//! is declared `Option<&mut [f32; n]>`; the launch takes `None` (a null pointer, no length or
//! overlap check) or `Some(&mut buffer)` (checked as any other argument), and a graph spec
//! passes `"null"`. Expected values are invariants (the copy equals the updated `y`; `y` moved
//! by exactly `a * x`), or the same spec run eagerly.

use kgraph::{DeviceBuffer, Error, LaunchConfig, LaunchError};

use super::common::{device, random};

#[kgraph::kernels]
pub(crate) mod kernels {
    /// `y += a * x`, and `copy = y` unless `copy` is NULL.
    #[kernel("test_nullable.cu", unsafe(extents))]
    pub fn kn_axpy_copy(y: &mut [f32; n], x: &[f32; n], a: f32, copy: Option<&mut [f32; n]>, n: i32);
}
use kernels::Kernels;

kgraph::graph!("tests/graphs/test_nullable.toml");

const POISON: f32 = -7.25;

#[test]
#[ignore = "needs a CUDA GPU"]
fn none_passes_null_and_some_is_checked_like_any_argument() {
    let dev = device();
    let k = Kernels::load(&dev).unwrap().kn_axpy_copy;
    let n = 777usize;
    let cfg = LaunchConfig::for_num_elems(n as u32);
    let (x, y0) = (random(n, 11), random(n, 12));
    let xd = dev.upload(&x).unwrap();
    let mut y = dev.upload(&y0).unwrap();
    // None: the kernel skips the copy (a null pointer it checks for).
    k.launch(dev.stream(), cfg, &mut y, &xd, 2.0, None, n as i32).unwrap();
    let y1 = dev.download(&y).unwrap();
    for i in 0..n {
        assert_eq!(y1[i], y0[i] + 2.0 * x[i], "element {i}");
    }
    // Some: the copy equals the updated y bit for bit.
    let mut copy = dev.upload(&vec![POISON; n]).unwrap();
    k.launch(dev.stream(), cfg, &mut y, &xd, 1.0, Some(&mut copy), n as i32).unwrap();
    let (y2, c) = (dev.download(&y).unwrap(), dev.download(&copy).unwrap());
    assert_eq!(y2.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), c.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    // Some of a short buffer is refused as any short argument is, naming the parameter.
    let mut short: DeviceBuffer<f32> = dev.upload(&[POISON]).unwrap();
    let err = k.launch(dev.stream(), cfg, &mut y, &xd, 1.0, Some(&mut short), n as i32);
    assert!(
        matches!(
            err,
            Err(Error::Launch(LaunchError::Extent { kernel: "kn_axpy_copy", param: "copy", required: 777, actual: 1 }))
        ),
        "{err:?}"
    );
    assert_eq!(dev.download(&short).unwrap(), [POISON]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn null_in_a_graph_spec_matches_eager() {
    let dev = device();
    let x = random(TestNullable::N, 13);
    let y0 = random(TestNullable::N, 14);
    let run = |capture: bool| {
        let mut g = TestNullable::new(&dev).unwrap();
        g.upload_x(&x).unwrap();
        g.load_y(&y0).unwrap();
        if capture {
            g.capture().unwrap();
            g.replay().unwrap();
        } else {
            g.run_eager().unwrap();
        }
        (g.download_y().unwrap(), g.download_copy().unwrap())
    };
    let (eager_y, eager_copy) = run(false);
    let (graph_y, graph_copy) = run(true);
    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&graph_y), bits(&eager_y));
    assert_eq!(bits(&graph_copy), bits(&eager_copy));
    // The copy is written only by the second node, after both updates.
    assert_eq!(bits(&graph_copy), bits(&graph_y));
    assert!(graph_y.iter().zip(&y0).any(|(a, b)| a != b), "the nodes ran");
}
