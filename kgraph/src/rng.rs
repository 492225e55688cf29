//! SplitMix64, the one small deterministic generator kgraph's helpers use (gradient-check
//! coordinate sampling, the reference model's synthetic data). Not for cryptography.

/// SplitMix64 (Steele, Lea, Flood 2014): full period 2^64, well mixed from any seed, so
/// nearby seeds give unrelated sequences.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose first output mixes `seed + γ`.
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// 64 uniform random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)` (53 random bits).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}
