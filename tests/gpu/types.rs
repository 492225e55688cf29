//! Parameter types beyond plain numbers, on the GPU: `f16`/`bf16` values and slices, CUDA
//! vector types (`half2`, `float4`), `#[derive(kgraph::DeviceStruct)]` structs by value, as
//! `__grid_constant__` and by pointer (the layouts checked against the `.cu` at compile time),
//! `void*` bytes, typedefs, enums, `bool` and `char` scalars, and a finite-difference check of
//! a half-precision forward/backward pair. Kernels in `tests/kernels/test_types.cu`; every
//! launch goes through the generated checked launch.

use kgraph::gradcheck::{sample_coords, weighted_sum, GradCheck};
use kgraph::{bf16, f16, Float2, Float4, Half2};

use super::common::{device, random};

/// `tests/kernels/test_types.cu`'s `Params` (size 48, align 16): C pads 14 bytes after `tag`,
/// which the twin spells out (bytemuck refuses implicit padding).
#[derive(Debug, Clone, Copy, PartialEq, kgraph::bytemuck::Pod, kgraph::bytemuck::Zeroable, kgraph::DeviceStruct)]
#[bytemuck(crate = "kgraph::bytemuck")]
#[repr(C, align(16))]
pub struct Params {
    pub a: f32,
    pub flags: i32,
    pub b: f64,
    pub w: [f32; 4],
    pub tag: i16,
    pub _pad: [u8; 14],
}

/// C `struct Tag`.
#[derive(Debug, Clone, Copy, PartialEq, kgraph::bytemuck::Pod, kgraph::bytemuck::Zeroable, kgraph::DeviceStruct)]
#[bytemuck(crate = "kgraph::bytemuck")]
#[repr(C)]
pub struct Tag {
    pub id: i32,
    pub kind: i32,
}

/// C `Particle` (a typedef'd struct; size 32, align 8, 4 bytes of padding at the end).
#[derive(Debug, Clone, Copy, PartialEq, kgraph::bytemuck::Pod, kgraph::bytemuck::Zeroable, kgraph::DeviceStruct)]
#[bytemuck(crate = "kgraph::bytemuck")]
#[repr(C)]
pub struct Particle {
    pub pos: Float2,
    pub vel: Float2,
    pub mass: f32,
    pub tag: Tag,
    pub _pad: u32,
}

#[kgraph::kernels]
mod types {
    // `Params` is named by a `super::` path below (not imported): the handle, emitted in a
    // module of its own, must name the same struct the layout checks check.
    use super::Particle;

    #[kernel("test_types.cu", unsafe(extents))]
    pub fn ty_scale_half(x: &[f16; n], a: f16, n: i32, y: &mut [f16; n]);
    #[kernel("test_types.cu", unsafe(extents))]
    pub fn ty_scale_bf16(x: &[bf16; n], a: bf16, n: i32, y: &mut [bf16; n]);
    #[kernel("test_types.cu", unsafe(extents))]
    pub fn ty_swap_half2(x: &[Half2; n], n: i32, y: &mut [Half2; n]);
    #[kernel("test_types.cu", unsafe(extents))]
    pub fn ty_scale_float4(x: &[Float4; n], s: Float4, n: i32, y: &mut [Float4; n]);
    #[kernel("test_types.cu", unsafe(extents))]
    pub fn ty_affine(p: super::Params, x: &[f32; n], n: i32, y: &mut [f32; n]);
    // `in` is a Rust keyword: the parameter is `input` on purpose.
    #[kernel("test_types.cu", unsafe(extents), rename(input = in))]
    pub fn ty_particles_step(input: &[Particle; n], dt: f32, n: i32, out: &mut [Particle; n]);
    // `in` is a Rust keyword: the parameter is `input` on purpose.
    #[kernel("test_types.cu", unsafe(extents), rename(input = in))]
    pub fn ty_not_bytes(input: &[u8; bytes], bytes: i32, out: &mut [u8; bytes]);
    #[kernel("test_types.cu", unsafe(extents))]
    pub fn ty_mode(x: &[f32; n], s: f32, mode: u8, sign: i32, negate: bool, offset: i8, n: i32, y: &mut [f32; n]);
    #[kernel("test_types.cu", unsafe(extents))]
    pub fn ty_tanh_half_fwd(w: &[f32; n], x: &[f32; n], n: i32, y: &mut [f32; n]);
    #[kernel("test_types.cu", unsafe(extents))]
    pub fn ty_tanh_half_bwd(w: &[f32; n], x: &[f32; n], gy: &[f32; n], n: i32, gw: &mut [f32; n]);
}

const N: usize = 1000;

fn cfg(n: usize) -> kgraph::LaunchConfig {
    kgraph::LaunchConfig::for_num_elems(n as u32)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn half_scaling_is_exact_on_representable_values_and_monotone() {
    let dev = device();
    let k = types::Kernels::load(&dev).unwrap();
    // Small integers and halves are exact in f16 (11 significant bits), and so are their
    // products by 0.5 or 2: the kernel's one rounding changes nothing.
    let xs: Vec<f16> = (0..N).map(|i| f16::from_f32(i as f32 * 0.5 - 250.0)).collect();
    let x = dev.upload(&xs).unwrap();
    let mut y = dev.alloc_zeros::<f16>(N).unwrap();
    for a in [0.5f32, 2.0, -1.0] {
        k.ty_scale_half.launch(dev.stream(), cfg(N), &x, f16::from_f32(a), N as i32, &mut y).unwrap();
        let ys = dev.download(&y).unwrap();
        for (xv, yv) in xs.iter().zip(&ys) {
            assert_eq!(yv.to_f32(), xv.to_f32() * a, "x = {xv}, a = {a}");
        }
    }
    // A positive factor keeps the order of increasing inputs (rounding is monotone).
    let ramp: Vec<f16> = (0..N).map(|i| f16::from_f32(i as f32 * 0.37 - 180.0)).collect();
    let x = dev.upload(&ramp).unwrap();
    k.ty_scale_half.launch(dev.stream(), cfg(N), &x, f16::from_f32(1.7), N as i32, &mut y).unwrap();
    let ys = dev.download(&y).unwrap();
    assert!(ys.windows(2).all(|w| w[0] <= w[1]), "not monotone");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bf16_scaling_is_exact_on_representable_values() {
    let dev = device();
    let k = types::Kernels::load(&dev).unwrap();
    // bf16 has 8 significant bits: integers up to 256 and their doubles are exact.
    let xs: Vec<bf16> = (0..256).map(|i| bf16::from_f32(i as f32 - 128.0)).collect();
    let x = dev.upload(&xs).unwrap();
    let mut y = dev.alloc_zeros::<bf16>(xs.len()).unwrap();
    k.ty_scale_bf16.launch(dev.stream(), cfg(xs.len()), &x, bf16::from_f32(2.0), xs.len() as i32, &mut y).unwrap();
    let ys = dev.download(&y).unwrap();
    for (xv, yv) in xs.iter().zip(&ys) {
        assert_eq!(yv.to_f32(), xv.to_f32() * 2.0);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn half2_components_are_swapped() {
    let dev = device();
    let k = types::Kernels::load(&dev).unwrap();
    let xs: Vec<Half2> = (0..N).map(|i| Half2::new(f16::from_f32(i as f32), f16::from_f32(-(i as f32)))).collect();
    let x = dev.upload(&xs).unwrap();
    let mut y = dev.alloc_zeros::<Half2>(N).unwrap();
    k.ty_swap_half2.launch(dev.stream(), cfg(N), &x, N as i32, &mut y).unwrap();
    let ys = dev.download(&y).unwrap();
    for (xv, yv) in xs.iter().zip(&ys) {
        assert_eq!((yv.x, yv.y), (xv.y, xv.x));
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn float4_scales_each_component_and_conserves_sums() {
    let dev = device();
    let k = types::Kernels::load(&dev).unwrap();
    let r = random(4 * N, 11);
    let xs: Vec<Float4> = r.chunks(4).map(|c| Float4::new(c[0], c[1], c[2], c[3])).collect();
    let x = dev.upload(&xs).unwrap();
    let mut y = dev.alloc_zeros::<Float4>(N).unwrap();
    // Powers of two scale exactly, so per-component sums scale exactly too.
    let s = Float4::new(2.0, 0.5, -1.0, 0.0);
    k.ty_scale_float4.launch(dev.stream(), cfg(N), &x, s, N as i32, &mut y).unwrap();
    let ys = dev.download(&y).unwrap();
    for (xv, yv) in xs.iter().zip(&ys) {
        assert_eq!(<[f32; 4]>::from(*yv), [xv.x * 2.0, xv.y * 0.5, -xv.z, 0.0]);
    }
    let sum = |v: &[Float4], f: fn(&Float4) -> f32| v.iter().map(|e| f64::from(f(e))).sum::<f64>();
    assert_eq!(sum(&ys, |e| e.x), 2.0 * sum(&xs, |e| e.x));
    assert_eq!(sum(&ys, |e| e.z), -sum(&xs, |e| e.z));
    assert_eq!(sum(&ys, |e| e.w), 0.0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn struct_by_value_fields_drive_the_output() {
    let dev = device();
    let k = types::Kernels::load(&dev).unwrap();
    let xs: Vec<f32> = (0..N).map(|i| i as f32 * 0.25 - 100.0).collect();
    let x = dev.upload(&xs).unwrap();
    let mut y = dev.alloc_zeros::<f32>(N).unwrap();
    // Affine: flags = 0 and tag = 0 switch the other terms off; y = a x + b exactly (a a power
    // of two, b a small dyadic), so y(x1) - y(x0) = a (x1 - x0) and y(0) = b.
    let p = Params { a: 2.0, flags: 0, b: 0.5, w: [9.0; 4], tag: 0, _pad: [0; 14] };
    k.ty_affine.launch(dev.stream(), cfg(N), p, &x, N as i32, &mut y).unwrap();
    let ys = dev.download(&y).unwrap();
    for (xv, yv) in xs.iter().zip(&ys) {
        assert_eq!(*yv, 2.0 * xv + 0.5);
    }
    assert_eq!(ys[400], 0.5, "x[400] = 0, so y = b");
    // a = b = 0: y = flags * w[i % 4] + tag, so `w`, `flags` and `tag` are read at their offsets.
    let p = Params { a: 0.0, flags: 3, b: 0.0, w: [1.0, 2.0, 4.0, 8.0], tag: -10, _pad: [0; 14] };
    k.ty_affine.launch(dev.stream(), cfg(N), p, &x, N as i32, &mut y).unwrap();
    let ys = dev.download(&y).unwrap();
    for (i, yv) in ys.iter().enumerate() {
        assert_eq!(*yv, 3.0 * p.w[i % 4] - 10.0, "i = {i}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn struct_by_pointer_each_output_depends_on_its_own_struct() {
    let dev = device();
    let k = types::Kernels::load(&dev).unwrap();
    let ps: Vec<Particle> = (0..N)
        .map(|i| {
            let f = i as f32;
            Particle {
                pos: Float2::new(f, -f),
                vel: Float2::new(1.0, f * 0.5),
                mass: f + 1.0,
                tag: kgraph_tag(i as i32),
                _pad: 0,
            }
        })
        .collect();
    let input = dev.upload(&ps).unwrap();
    let mut out = dev.alloc_zeros::<Particle>(N).unwrap();
    k.ty_particles_step.launch(dev.stream(), cfg(N), &input, 0.5, N as i32, &mut out).unwrap();
    let outs = dev.download(&out).unwrap();
    for (i, (p, q)) in ps.iter().zip(&outs).enumerate() {
        assert_eq!(q.pos, Float2::new(p.pos.x + 0.5 * p.vel.x, p.pos.y + 0.5 * p.vel.y), "i = {i}");
        assert_eq!(q.vel, p.vel);
        assert_eq!(q.mass, 2.0 * p.mass);
        assert_eq!(q.tag, Tag { id: p.tag.id + 1, kind: (p.tag.id + 1) * 10 });
    }
}

fn kgraph_tag(i: i32) -> Tag {
    Tag { id: 1000 + i, kind: -1 }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn void_pointers_are_bytes() {
    let dev = device();
    let k = types::Kernels::load(&dev).unwrap();
    let bytes: Vec<u8> = (0..=255).collect();
    let input = dev.upload(&bytes).unwrap();
    let mut out = dev.alloc_zeros::<u8>(bytes.len()).unwrap();
    k.ty_not_bytes.launch(dev.stream(), cfg(bytes.len()), &input, bytes.len() as i32, &mut out).unwrap();
    let outs = dev.download(&out).unwrap();
    assert_eq!(outs, bytes.iter().map(|b| !b).collect::<Vec<_>>());
    // The extent is in bytes: a buffer one byte short is refused.
    let short = dev.alloc_zeros::<u8>(bytes.len() - 1).unwrap();
    let err = k.ty_not_bytes.launch(dev.stream(), cfg(bytes.len()), &short, bytes.len() as i32, &mut out);
    assert!(matches!(err, Err(kgraph::Error::Launch(kgraph::LaunchError::Extent { param: "input", .. }))), "{err:?}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn typedefs_enums_bool_and_char_scalars() {
    let dev = device();
    let k = types::Kernels::load(&dev).unwrap();
    let xs: Vec<f32> = (0..N).map(|i| i as f32 - 500.0).collect();
    let x = dev.upload(&xs).unwrap();
    let mut y = dev.alloc_zeros::<f32>(N).unwrap();
    // (mode, sign, negate, offset) → y = f(x), all exact in f32.
    type Case = (u8, i32, bool, i8, fn(f32) -> f32);
    let cases: [Case; 4] = [
        (0, 1, false, 0, |x| x + 3.0),
        (1, 1, false, 0, |x| x * 3.0),
        (1, -1, true, 5, |x| x * 3.0 + 5.0),
        (0, -1, false, -7, |x| x - 3.0 - 7.0),
    ];
    for (mode, sign, negate, offset, f) in cases {
        k.ty_mode.launch(dev.stream(), cfg(N), &x, 3.0, mode, sign, negate, offset, N as i32, &mut y).unwrap();
        let ys = dev.download(&y).unwrap();
        for (xv, yv) in xs.iter().zip(&ys) {
            assert_eq!(*yv, f(*xv), "mode {mode} sign {sign} negate {negate} offset {offset}, x = {xv}");
        }
    }
}

/// Finite differences of the half-precision `y = tanh(w x)` against its half-precision
/// backward `gw = gy (1 - y²) x`, with the loss `L = Σ c_i y_i` and `gy = c`.
///
/// Tolerance, from f16's unit roundoff u = 2^-11 ≈ 4.9e-4 and the step ε = 0.05 (inputs
/// |w| in [0.5, 1), |x| in [0.5, 1), |c| ≤ 2; one output per coordinate, the kernel is
/// elementwise):
/// - output rounding: each evaluation of y_i is off by ≤ u/2 (|y| < 1), so the difference
///   of the two losses by ≤ u |c| ≈ 9.8e-4, and the quotient over 2ε = 0.1 by ≈ 9.8e-3;
/// - step rounding: the kernel rounds w ± ε to half, moving each end by ≤ u/2 |w| ≤ 2.4e-4,
///   and the product w x is rounded once more (≤ u/2 relative): the effective step differs
///   from the one divided by by ≤ 1% relative;
/// - truncation ε² |L'''| / 6 with |∂³ tanh(w x) / ∂w³| ≤ 2 |x|³ ≤ 2: ≤ 2.5e-3 · 4 / 6 ≈ 1.7e-3;
/// - the analytic side rounds gy, x, y², 1 - y² and two products to half: ≤ 6 u/2 ≈ 0.15%.
///
/// So abs_tol = 2e-2 (about 1.7× the 1.2e-2 absolute budget) and rel_tol = 3e-2 (about 2× the
/// 1.2% relative one). A wrong backward is off by more: with |w x| ≥ 0.25, dropping (1 - y²)
/// is ≥ 6% off, and a sign error 200%.
#[test]
#[ignore = "needs a CUDA GPU"]
fn half_precision_backward_matches_finite_differences() {
    let dev = device();
    let k = types::Kernels::load(&dev).unwrap();
    let n = 256;
    let unit = |seed| random(n, seed).into_iter().map(|v| v / 4.0).collect::<Vec<f32>>(); // [-0.5, 0.5)
    let mag = |v: f32| v.signum() * (0.5 + v.abs()); // ±[0.5, 1)
    let ws: Vec<f32> = unit(21).into_iter().map(mag).collect();
    let xs: Vec<f32> = unit(22).into_iter().map(mag).collect();
    let cs: Vec<f32> = random(n, 23);
    let (mut w, x, c) = (dev.upload(&ws).unwrap(), dev.upload(&xs).unwrap(), dev.upload(&cs).unwrap());
    let mut gw = dev.alloc_zeros::<f32>(n).unwrap();
    k.ty_tanh_half_bwd.launch(dev.stream(), cfg(n), &w, &x, &c, n as i32, &mut gw).unwrap();
    let analytic = dev.download(&gw).unwrap();
    let coords = sample_coords(n, 32, 5);
    let report = GradCheck::default()
        .with_eps(0.05)
        .with_tol(2e-2, 3e-2)
        .check(&dev, "w", &mut w, &analytic, &coords, |w| {
            let mut y = dev.alloc_zeros::<f32>(n)?;
            k.ty_tanh_half_fwd.launch(dev.stream(), cfg(n), w, &x, n as i32, &mut y)?;
            weighted_sum(&dev, &y, &cs)
        })
        .unwrap();
    report.assert_passed();
}
