//! A deterministic synthetic MBP-10 stream with learnable labels, for the examples and tests.
//!
//! [`BookStream`] produces order-book snapshots in the layout of
//! [`crate::model::SNAP_LEN`] (`bid_px[10], bid_sz[10], ask_px[10], ask_sz[10]`): a best bid on a
//! 0.01 tick grid doing a random walk, a spread of 1 to 3 ticks, ten levels per side with
//! occasional one-tick gaps, integer sizes, and an elapsed time per snapshot. A latent order-flow
//! **pressure** `p ∈ (−0.9, 0.9)` skews the sizes (bid sizes scale with `1 + p`, ask sizes with
//! `1 − p`, so the depth imbalance tracks `p`) and drives the labels through a known logistic
//! law: the mid moves up within horizon `k` with probability `sigmoid(HORIZON_BETA[k] · p)`
//! ([`up_probability`]). A model that reads the imbalance features can therefore learn the
//! labels, down to the law's irreducible noise.
//!
//! [`BookStream::new`] is a stream (persistent pressure, rare crossed books, which the feature
//! kernel must turn into its all-zero invalid row); [`BookStream::independent`] draws every
//! snapshot afresh and never crosses, for training batches. Same seed, same sequence on one
//! platform (`ln`, `cos`, `tanh` and `exp` come from the platform's math library, so another
//! platform may differ in the last bits of a few values).

use crate::model::{N_HORIZONS, N_LEVELS, SNAP_LEN};
use kgraph::rng::SplitMix64;
use kgraph::{Error, MemoryError, Result};

/// Per-horizon slopes of the label law `P(up within horizon k) = sigmoid(HORIZON_BETA[k] · p)`:
/// longer horizons are noisier.
pub const HORIZON_BETA: [f32; N_HORIZONS] = [6.0, 5.0, 4.0, 3.0, 2.0];

/// Price grid of the synthetic book.
pub const TICK: f64 = 0.01;

/// A small deterministic generator (SplitMix64), so the examples need no crates.
#[derive(Debug, Clone)]
pub struct Rng(SplitMix64);

impl Rng {
    /// A generator; different seeds give unrelated sequences.
    pub fn new(seed: u64) -> Self {
        Rng(SplitMix64::new(seed ^ 0x5DEE_CE66_D1A4_F87B))
    }

    /// 64 uniform random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `[0, 1)` (53 random bits).
    pub fn unit(&mut self) -> f64 {
        self.0.unit()
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Standard normal (Box–Muller; one value per call).
    pub fn normal(&mut self) -> f64 {
        let u = 1.0 - self.unit(); // (0, 1]: ln(u) is finite
        let v = self.unit();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// `n` values uniform in `[-a, a)`, as `f32`.
    pub fn symmetric_vec(&mut self, n: usize, a: f64) -> Vec<f32> {
        (0..n).map(|_| self.uniform(-a, a) as f32).collect()
    }
}

/// What [`BookStream::next_into`] produced besides the snapshot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tick {
    /// Elapsed time since the previous snapshot, in the model's time unit (mean ≈ 1).
    pub dt: f32,
    /// The latent pressure the snapshot's sizes were drawn with.
    pub pressure: f32,
    /// True for a deliberately crossed book (best ask ≤ best bid): an invalid snapshot.
    pub crossed: bool,
}

/// The deterministic synthetic MBP-10 source (see the [module docs](self)).
#[derive(Debug, Clone)]
pub struct BookStream {
    rng: Rng,
    /// Best bid in ticks.
    bid_ticks: i64,
    /// Latent driver of the pressure: an AR(1) process with unit variance.
    latent: f64,
    /// AR(1) coefficient of `latent` (0: independent snapshots).
    persistence: f64,
    /// Probability that a snapshot is a crossed book.
    crossed_rate: f64,
}

impl BookStream {
    /// A live-like stream: the pressure persists over ~50 snapshots (AR(1) coefficient 0.98)
    /// and one snapshot in 500 is a crossed book.
    pub fn new(seed: u64) -> Self {
        BookStream { rng: Rng::new(seed), bid_ticks: 10_000, latent: 0.0, persistence: 0.98, crossed_rate: 1.0 / 500.0 }
    }

    /// Independent snapshots (a fresh pressure each) and no crossed books: training samples.
    pub fn independent(seed: u64) -> Self {
        BookStream { persistence: 0.0, crossed_rate: 0.0, ..BookStream::new(seed) }
    }

    /// Writes the next snapshot into `snap` and returns its elapsed time and pressure.
    pub fn next_into(&mut self, snap: &mut [f32; SNAP_LEN]) -> Tick {
        let r = &mut self.rng;
        let rho = self.persistence;
        self.latent = rho * self.latent + (1.0 - rho * rho).sqrt() * r.normal();
        let pressure = 0.9 * self.latent.tanh();
        // The mid drifts with the pressure: a move (30% of snapshots) is up with the horizon-0 law.
        if r.chance(0.3) {
            let up = r.chance(sigmoid(f64::from(HORIZON_BETA[0]) * pressure));
            self.bid_ticks += if up { 1 } else { -1 };
            self.bid_ticks = self.bid_ticks.clamp(1_000, 1_000_000);
        }
        let spread_ticks = match r.unit() {
            u if u < 0.6 => 1,
            u if u < 0.9 => 2,
            _ => 3,
        };
        let (mut bid, mut ask) = (self.bid_ticks, self.bid_ticks + spread_ticks);
        for i in 0..N_LEVELS {
            if i > 0 {
                bid -= if r.chance(0.1) { 2 } else { 1 };
                ask += if r.chance(0.1) { 2 } else { 1 };
            }
            let depth = 1.0 + 0.15 * i as f64;
            snap[i] = (bid as f64 * TICK) as f32;
            snap[N_LEVELS + i] = (r.uniform(1.0, 40.0) * depth * (1.0 + pressure)).round() as f32;
            snap[2 * N_LEVELS + i] = (ask as f64 * TICK) as f32;
            snap[3 * N_LEVELS + i] = (r.uniform(1.0, 40.0) * depth * (1.0 - pressure)).round() as f32;
        }
        let crossed = r.chance(self.crossed_rate);
        if crossed {
            // A feed glitch: the best ask a tick under the best bid.
            snap[2 * N_LEVELS] = ((self.bid_ticks - 1) as f64 * TICK) as f32;
        }
        // Exponential inter-arrival time with mean 1, kept within [0.05, 5].
        let dt = (-(1.0 - r.unit()).ln()).clamp(0.05, 5.0) as f32;
        Tick { dt, pressure: pressure as f32, crossed }
    }

    /// Fills a training batch: `snap [batch, SNAP_LEN]`, `dt [batch]` and
    /// `targets [batch, N_HORIZONS]`, each target drawn from [`up_probability`] of the row's
    /// pressure. [`MemoryError::LengthMismatch`] unless the three lengths describe one batch.
    pub fn fill_batch(&mut self, snap: &mut [f32], dt: &mut [f32], targets: &mut [f32]) -> Result<()> {
        let batch = dt.len();
        for (what, len, per_row) in
            [("fill_batch: snap", snap.len(), SNAP_LEN), ("fill_batch: targets", targets.len(), N_HORIZONS)]
        {
            if len != batch * per_row {
                return Err(Error::Memory(MemoryError::LengthMismatch {
                    what: what.to_string(),
                    expected: batch * per_row,
                    actual: len,
                }));
            }
        }
        let rows = snap.chunks_exact_mut(SNAP_LEN).zip(targets.chunks_exact_mut(N_HORIZONS));
        for ((row, target), dt) in rows.zip(dt.iter_mut()) {
            let row: &mut [f32; SNAP_LEN] = row.try_into().expect("chunks_exact_mut gives SNAP_LEN elements");
            let tick = self.next_into(row);
            *dt = tick.dt;
            for (t, p) in target.iter_mut().zip(up_probability(tick.pressure)) {
                *t = if self.rng.chance(f64::from(p)) { 1.0 } else { 0.0 };
            }
        }
        Ok(())
    }
}

/// The label law: the probability of an up-move within each horizon, given the pressure.
pub fn up_probability(pressure: f32) -> [f32; N_HORIZONS] {
    HORIZON_BETA.map(|beta| sigmoid(f64::from(beta) * f64::from(pressure)) as f32)
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_valid_books() {
        let (mut a, mut b) = (BookStream::new(3), BookStream::new(3));
        let (mut sa, mut sb) = ([0.0; SNAP_LEN], [0.0; SNAP_LEN]);
        let mut crossed = 0;
        for _ in 0..5000 {
            let (ta, tb) = (a.next_into(&mut sa), b.next_into(&mut sb));
            assert_eq!((ta, sa.map(f32::to_bits)), (tb, sb.map(f32::to_bits)));
            assert!(ta.dt >= 0.05 && ta.dt <= 5.0 && ta.pressure.abs() < 0.9);
            assert!(sa.iter().all(|v| v.is_finite() && *v >= 0.0));
            let (best_bid, best_ask) = (sa[0], sa[2 * N_LEVELS]);
            if ta.crossed {
                crossed += 1;
                assert!(best_ask <= best_bid);
            } else {
                assert!(best_ask > best_bid);
                // Bids fall and asks rise away from the touch.
                assert!(sa[..N_LEVELS].windows(2).all(|w| w[1] < w[0]));
                assert!(sa[2 * N_LEVELS..3 * N_LEVELS].windows(2).all(|w| w[1] > w[0]));
            }
        }
        assert!((1..=40).contains(&crossed), "about 10 crossed books in 5000, got {crossed}");
    }

    #[test]
    fn pressure_skews_the_depth_and_the_labels() {
        let mut s = BookStream::independent(9);
        let batch = 4000;
        let (mut snap, mut dt, mut targets) = (vec![0.0; batch * SNAP_LEN], vec![0.0; batch], vec![0.0; batch * 5]);
        s.fill_batch(&mut snap, &mut dt, &mut targets).unwrap();
        let (mut agree_depth, mut agree_label, mut informative) = (0, 0, 0);
        for (row, target) in snap.chunks_exact(SNAP_LEN).zip(targets.chunks_exact(N_HORIZONS)) {
            let bid5: f32 = row[N_LEVELS..N_LEVELS + 5].iter().sum();
            let ask5: f32 = row[3 * N_LEVELS..3 * N_LEVELS + 5].iter().sum();
            let imbalance = (bid5 - ask5) / (bid5 + ask5);
            if imbalance.abs() > 0.3 {
                informative += 1;
                agree_label += usize::from((target[0] > 0.5) == (imbalance > 0.0));
            }
            agree_depth += usize::from(imbalance.abs() <= 1.0);
        }
        assert_eq!(agree_depth, batch);
        // Where the depth is clearly skewed, the short-horizon label mostly follows it.
        assert!(informative > batch / 4, "{informative}");
        assert!(agree_label as f64 > 0.8 * informative as f64, "{agree_label} of {informative}");
        assert!(s.fill_batch(&mut snap, &mut dt[..3], &mut targets).is_err());
    }
}
