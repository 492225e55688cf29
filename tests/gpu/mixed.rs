//! Element types beyond `f32 .. u64` in a graph spec (`tests/graphs/test_mixed.toml`, kernels
//! in `tests/kernels/test_mixed.cu`): `f16` and `bf16` buffers with typed host methods, a
//! buffer of `#[derive(DeviceStruct)]` structs, an `f16` scalar, an optional pointer passed
//! `"null"` and a kernel sized by its grid. The replay is bit-equal to `run_eager`, and the
//! outputs keep their invariants (the half values are the correctly rounded `2x` and `3x`; the
//! step moves each body by `dt * v`).

use kgraph::{bf16, f16};

use super::common::{device, random};

/// The Rust twin of `struct Body` in `test_mixed.cu`.
#[derive(Debug, Clone, Copy, PartialEq, kgraph::bytemuck::Pod, kgraph::bytemuck::Zeroable, kgraph::DeviceStruct)]
#[bytemuck(crate = "kgraph::bytemuck")]
#[repr(C)]
pub struct Body {
    pub x: f32,
    pub v: f32,
}

// Only the graph launches these: the registry struct's fields are never read here.
#[allow(dead_code)]
#[kgraph::kernels]
pub(crate) mod kernels {
    use super::Body;

    /// `h = half(2x)`, `b = bf16(3x)` unless `b` is NULL, one block per row of `n`.
    #[kernel("test_mixed.cu", unsafe(extents))]
    pub fn km_to_half(x: &[f32; grid.x * n], h: &mut [f16; grid.x * n], b: Option<&mut [bf16; grid.x * n]>, n: i32);

    /// One Euler step per body; `energy` unless NULL.
    #[kernel("test_mixed.cu", unsafe(extents))]
    pub fn km_step(
        bodies: &[Body; n],
        h: &[f16; n],
        out: &mut [Body; n],
        energy: Option<&mut [f32; n]>,
        dt: f16,
        n: i32,
    );
}

kgraph::graph!("tests/graphs/test_mixed.toml");

#[test]
#[ignore = "needs a CUDA GPU"]
fn half_struct_and_optional_buffers_in_a_graph_match_eager_and_keep_invariants() {
    let dev = device();
    let cells = TestMixed::ROWS * TestMixed::N;
    let x = random(cells, 21);
    let bodies: Vec<Body> =
        random(cells, 22).chunks(1).zip(random(cells, 23)).map(|(a, v)| Body { x: a[0], v }).collect();
    let run = |capture: bool| {
        let mut g = TestMixed::new(&dev).unwrap();
        g.upload_x(&x).unwrap();
        g.upload_bodies(&bodies).unwrap();
        assert_eq!(g.dt(), f16::from_f32(0.25), "the f16 scalar's default");
        if capture {
            g.capture().unwrap();
            g.replay().unwrap();
        } else {
            g.run_eager().unwrap();
        }
        let h: Vec<f16> = g.download_h().unwrap();
        let b: Vec<bf16> = g.download_b().unwrap();
        let moved: Vec<Body> = g.download_moved().unwrap();
        (h, b, moved)
    };
    let (eh, eb, em) = run(false);
    let (h, b, moved) = run(true);
    assert_eq!(h.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), eh.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    assert_eq!(b.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), eb.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    assert_eq!(moved, em, "replay vs eager, bodies");
    for i in 0..cells {
        // __float2half / __float2bfloat16 round to nearest even, as `half`'s from_f32 does.
        assert_eq!(h[i], f16::from_f32(2.0 * x[i]), "h[{i}]");
        assert_eq!(b[i], bf16::from_f32(3.0 * x[i]), "b[{i}]");
        let v = bodies[i].v + h[i].to_f32();
        assert_eq!(moved[i].v, v, "v[{i}]");
        assert!((moved[i].x - (bodies[i].x + 0.25 * v)).abs() <= 1e-6 * (1.0 + moved[i].x.abs()), "x[{i}]");
    }
}
