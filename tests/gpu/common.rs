//! Helpers shared by the GPU test modules.
#![allow(dead_code)]

use std::collections::BTreeSet;

use kgraph::Device;

/// Device 0; GPU tests only run where one exists (they are `#[ignore]`d elsewhere).
pub fn device() -> Device {
    Device::new(0).unwrap_or_else(|e| panic!("GPU test needs a CUDA device: {e}"))
}

/// Deterministic pseudo-random values in [-2, 2) (xorshift64*), different per seed.
pub fn random(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            let bits = (s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as u32; // 24 random bits
            bits as f32 / (1u32 << 22) as f32 - 2.0
        })
        .collect()
}

/// Reachability over `edges` (node indices `0..n`): `reach[a][b]` when a path a → b exists.
pub fn reachability(n: usize, edges: &BTreeSet<(usize, usize)>) -> Vec<Vec<bool>> {
    let mut reach = vec![vec![false; n]; n];
    for &(a, b) in edges {
        reach[a][b] = true;
    }
    for k in 0..n {
        for a in 0..n {
            for b in 0..n {
                if reach[a][k] && reach[k][b] {
                    reach[a][b] = true;
                }
            }
        }
    }
    reach
}

/// Steps of a long step-by-step comparison: `default`, or `KGRAPH_TEST_STEPS` when set (to run
/// it short under compute-sanitizer, whose instrumented spins on mapped memory are slow).
pub fn steps(default: usize) -> usize {
    std::env::var("KGRAPH_TEST_STEPS").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}
