//! Shared helpers of the model-kernel GPU tests: a deterministic generator and transfers.
#![allow(dead_code)]

use kgraph::{Device, DeviceBuffer};
use kgraph_model::model::Kernels;

/// A 64-bit LCG (Knuth's MMIX constants), high bits out: small, deterministic, no crates.
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Self {
        Lcg(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x2545_F491_4F6C_DD1D)
    }

    pub fn next_u32(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as u32
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f32 {
        (self.next_u32() >> 7) as f32 / (1u32 << 24) as f32
    }

    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }

    pub fn vec(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n).map(|_| self.uniform(lo, hi)).collect()
    }
}

pub fn kernels(dev: &Device) -> Kernels {
    Kernels::load(dev).unwrap_or_else(|e| panic!("loading the model kernels failed: {e}"))
}

pub fn up(dev: &Device, v: &[f32]) -> DeviceBuffer<f32> {
    dev.upload(v).unwrap()
}

pub fn zeros(dev: &Device, n: usize) -> DeviceBuffer<f32> {
    dev.alloc_zeros::<f32>(n).unwrap()
}

/// A buffer of `n` NaN sentinels (a payload no kernel produces).
pub fn sentinels(dev: &Device, n: usize) -> DeviceBuffer<f32> {
    up(dev, &vec![f32::from_bits(0x7FC0_1234); n])
}

pub fn down(dev: &Device, b: &DeviceBuffer<f32>) -> Vec<f32> {
    dev.download(b).unwrap()
}

/// Weights with entries in ±scale/√fan_in, so pre-activations of O(1) inputs are O(scale).
pub fn weights(rng: &mut Lcg, rows: usize, fan_in: usize, scale: f32) -> Vec<f32> {
    let a = scale / (fan_in as f32).sqrt();
    rng.vec(rows * fan_in, -a, a)
}

pub fn assert_all_finite(what: &str, v: &[f32]) {
    if let Some(i) = v.iter().position(|x| !x.is_finite()) {
        panic!("{what}[{i}] = {} is not finite", v[i]);
    }
}

/// Bitwise equality (so -0.0 != 0.0 and NaN == NaN would be visible); reports the first miss.
pub fn assert_bitwise_eq(what: &str, a: &[f32], b: &[f32]) {
    assert_eq!(a.len(), b.len(), "{what}: lengths differ");
    if let Some(i) = (0..a.len()).find(|&i| a[i].to_bits() != b[i].to_bits()) {
        panic!("{what}[{i}]: {} vs {} (not bitwise equal)", a[i], b[i]);
    }
}
