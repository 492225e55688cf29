//! Finite-difference gradient checks of your own backward kernels against your own GPU forward.
//!
//! A backward kernel is right when its gradient matches how the forward's loss actually moves.
//! [`GradCheck`] measures that on the GPU: for each sampled coordinate `i` of a parameter (any
//! device buffer: a weight, a bias, an input), it sets `θ_i ± ε` in device memory, runs your
//! forward through a closure that returns a scalar loss, and compares the central difference
//! `(L(θ+) − L(θ−)) / (θ+ − θ−)` with the analytic gradient your backward produced.
//!
//! ```no_run
//! # fn demo(dev: &kgraph::Device, mut w: kgraph::DeviceBuffer<f32>, g_w: Vec<f32>,
//! #         mut run_forward: impl FnMut(&kgraph::DeviceBuffer<f32>) -> kgraph::Result<kgraph::DeviceBuffer<f32>>,
//! #         cotangent: Vec<f32>) -> kgraph::Result<()> {
//! use kgraph::gradcheck::{sample_coords, weighted_sum, GradCheck};
//! // Loss = Σ_i c_i y_i with fixed random cotangents c; the backward was run with g_y = c.
//! let coords = sample_coords(w.len(), 24, 7);
//! let report = GradCheck::default().check(dev, "w", &mut w, &g_w, &coords, |w| {
//!     let y = run_forward(w)?;
//!     weighted_sum(dev, &y, &cotangent)
//! })?;
//! report.assert_passed();
//! # Ok(()) }
//! ```
//!
//! # Step and tolerance (why these defaults, for `f32` forwards)
//! The default step is ε = 1e-2 (absolute; parameters of order 1) and a coordinate passes when
//! `|analytic − numeric| ≤ abs_tol + rel_tol · max(|analytic|, |numeric|)` with
//! `abs_tol` = 2e-3, `rel_tol` = 1e-2. Central differences have two error sources:
//! - truncation `ε² |L'''| / 6`: for smooth layers (tanh, softplus, sigmoid, exp) with `O(1)`
//!   weights, `L'''` is a sum of `O(1)` terms with random-sign cotangents, e.g. `|L'''| ≈ 8`
//!   for 256 influenced outputs, giving `1e-4 · 8 / 6 ≈ 1.3e-4`;
//! - rounding `≈ δL / ε`, where δL is the `f32` rounding noise of the loss. Outputs the
//!   coordinate does not influence are bitwise identical in both evaluations (kgraph's kernels
//!   are deterministic), so only the `n` influenced outputs contribute, each off by ≈ 1 ulp
//!   (6e-8 relative): `δL ≈ √n · 6e-8 · |c y|`, i.e. 2.4e-7 for n = 256 and `|c y| ≈ 0.25`, and
//!   `δL / ε ≈ 2.4e-5`.
//!
//! Both stay an order of magnitude below `abs_tol`, and the relative errors (≈ 1e-4 of
//! gradients of order 1) well below `rel_tol`; a wrong backward (missing factor, wrong index or
//! sign, a missed batch row) is off by `O(1)` relative. A smaller ε trades truncation for
//! rounding (ε = 1e-3 makes rounding 10× larger). A loss rounded to `f32` as a whole (e.g. a
//! device-side mean) has noise `|L| · 6e-8` however many outputs it covers: scale such a loss to
//! order 1 per coordinate and prefer a larger ε (5e-2) where the forward is gently curved.
//! The perturbed values are rounded to `f32`; the difference quotient divides by the actual
//! `θ+ − θ−`, not `2ε`, so that rounding costs nothing.
//!
//! The forward must be deterministic (no atomics in a reduction whose order varies) or the
//! rounding noise no longer cancels, and smooth around the checked point (no kinks within ε).

use crate::{Device, DeviceBuffer, DeviceIn, Error, MemoryError, Result};

/// Settings of a finite-difference check (see the [module docs](self) for the defaults' reasoning).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GradCheck {
    /// Absolute step ε added to and subtracted from each coordinate.
    pub eps: f32,
    /// Absolute part of the allowed error.
    pub abs_tol: f64,
    /// Relative part of the allowed error, times `max(|analytic|, |numeric|)`.
    pub rel_tol: f64,
    /// Coordinates per parameter that [`GradCheck::check_all`] samples.
    pub samples: usize,
    /// Seed of [`GradCheck::check_all`]'s sampling (parameter `p` uses `seed + p`).
    pub seed: u64,
}

impl Default for GradCheck {
    fn default() -> Self {
        GradCheck { eps: 1e-2, abs_tol: 2e-3, rel_tol: 1e-2, samples: 16, seed: 0 }
    }
}

/// The comparison at one coordinate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CoordCheck {
    /// Index into the parameter buffer.
    pub index: usize,
    /// The backward's gradient.
    pub analytic: f64,
    /// The central difference of the forward.
    pub numeric: f64,
    /// `|analytic − numeric|` (NaN when either is not finite).
    pub abs_err: f64,
    /// The allowed error at this coordinate.
    pub allowed: f64,
}

impl CoordCheck {
    /// True when the error is within the allowance (false for any NaN/Inf).
    pub fn passed(&self) -> bool {
        self.abs_err <= self.allowed
    }

    /// Error over allowance: ≤ 1 passes; NaN/Inf count as infinitely bad.
    pub fn ratio(&self) -> f64 {
        let r = self.abs_err / self.allowed;
        if r.is_nan() {
            f64::INFINITY
        } else {
            r
        }
    }
}

/// The result of checking one parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct GradCheckReport {
    /// The parameter's name, for messages.
    pub name: String,
    /// The settings used.
    pub settings: GradCheck,
    /// Every coordinate checked, in the order given.
    pub coords: Vec<CoordCheck>,
}

impl GradCheckReport {
    /// The coordinate with the largest error-to-allowance ratio (`None` when none was checked).
    pub fn worst(&self) -> Option<&CoordCheck> {
        self.coords.iter().max_by(|a, b| a.ratio().total_cmp(&b.ratio()))
    }

    /// The largest absolute error (NaN counts as infinite).
    pub fn max_abs_err(&self) -> f64 {
        self.coords.iter().map(|c| if c.abs_err.is_nan() { f64::INFINITY } else { c.abs_err }).fold(0.0, f64::max)
    }

    /// True when every checked coordinate passed (and at least one was checked).
    pub fn passed(&self) -> bool {
        !self.coords.is_empty() && self.coords.iter().all(CoordCheck::passed)
    }

    /// Panics with the failing coordinates when the check did not pass.
    #[track_caller]
    pub fn assert_passed(&self) {
        if !self.passed() {
            panic!("{self}");
        }
    }
}

impl std::fmt::Display for GradCheckReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let failed = self.coords.iter().filter(|c| !c.passed()).count();
        write!(
            f,
            "gradcheck `{}`: {} of {} coordinates failed (eps {}, abs_tol {}, rel_tol {}), max |err| {:.3e}",
            self.name,
            failed,
            self.coords.len(),
            self.settings.eps,
            self.settings.abs_tol,
            self.settings.rel_tol,
            self.max_abs_err()
        )?;
        if let Some(w) = self.worst() {
            write!(
                f,
                "; worst [{}]: analytic {:.6e}, numeric {:.6e}, allowed {:.1e}",
                w.index, w.analytic, w.numeric, w.allowed
            )?;
        }
        for c in self.coords.iter().filter(|c| !c.passed()).take(8) {
            write!(
                f,
                "\n  [{}] analytic {:.6e} numeric {:.6e} |err| {:.3e} > {:.3e}",
                c.index, c.analytic, c.numeric, c.abs_err, c.allowed
            )?;
        }
        Ok(())
    }
}

impl GradCheck {
    /// These settings with step `eps`.
    pub fn with_eps(self, eps: f32) -> Self {
        GradCheck { eps, ..self }
    }

    /// These settings with tolerances `abs_tol`, `rel_tol`.
    pub fn with_tol(self, abs_tol: f64, rel_tol: f64) -> Self {
        GradCheck { abs_tol, rel_tol, ..self }
    }

    /// These settings with [`GradCheck::check_all`] sampling `samples` coordinates per
    /// parameter from `seed`.
    pub fn with_samples(self, samples: usize, seed: u64) -> Self {
        GradCheck { samples, seed, ..self }
    }

    /// Checks `analytic` (the backward's gradient of `param`, downloaded) at `coords` against
    /// central differences of `loss`, which runs the forward with the given (perturbed) `param`
    /// and returns the scalar loss. `param` is restored to its exact original contents.
    ///
    /// Errors: `analytic` not as long as `param` ([`MemoryError::LengthMismatch`]), a coordinate out of
    /// range ([`MemoryError::OutOfRange`]), an `eps` that is not finite and positive, and whatever
    /// `loss` or a transfer returns (then `param` may still hold a perturbed value).
    pub fn check(
        &self,
        dev: &Device,
        name: &str,
        param: &mut DeviceBuffer<f32>,
        analytic: &[f32],
        coords: &[usize],
        mut loss: impl FnMut(&DeviceBuffer<f32>) -> Result<f64>,
    ) -> Result<GradCheckReport> {
        let len = param.len();
        if analytic.len() != len {
            return Err(Error::Memory(MemoryError::LengthMismatch {
                what: format!("gradcheck `{name}`: analytic gradient"),
                expected: len,
                actual: analytic.len(),
            }));
        }
        if let Some(&index) = coords.iter().find(|&&i| i >= len) {
            return Err(Error::Memory(MemoryError::OutOfRange {
                what: format!("gradcheck `{name}`: coordinate"),
                index,
                len,
            }));
        }
        if !(self.eps.is_finite() && self.eps > 0.0) {
            return Err(Error::graph(
                format!("gradcheck `{name}`"),
                format!("eps must be finite and > 0, got {}", self.eps),
            ));
        }
        let mut checks = Vec::with_capacity(coords.len());
        for &i in coords {
            let original = dev.download(&param.slice(i..i + 1)?)?[0];
            let plus = original + self.eps;
            let minus = original - self.eps;
            set_elem(dev, param, i, plus)?;
            let l_plus = loss(param)?;
            set_elem(dev, param, i, minus)?;
            let l_minus = loss(param)?;
            set_elem(dev, param, i, original)?;
            let numeric = (l_plus - l_minus) / (f64::from(plus) - f64::from(minus));
            let a = f64::from(analytic[i]);
            let abs_err = if a.is_finite() && numeric.is_finite() { (a - numeric).abs() } else { f64::NAN };
            let allowed = self.abs_tol + self.rel_tol * a.abs().max(numeric.abs());
            checks.push(CoordCheck { index: i, analytic: a, numeric, abs_err, allowed });
        }
        Ok(GradCheckReport { name: name.to_string(), settings: *self, coords: checks })
    }

    /// Checks several parameters of one forward: `params[p]` (named `names[p]`) against
    /// `analytic[p]` at `self.samples` coordinates each ([`sample_coords`] with `self.seed + p`).
    /// `loss` receives all parameters in order (one of them perturbed). Returns one report per
    /// parameter.
    pub fn check_all(
        &self,
        dev: &Device,
        names: &[&str],
        params: &mut [DeviceBuffer<f32>],
        analytic: &[Vec<f32>],
        mut loss: impl FnMut(&[&DeviceBuffer<f32>]) -> Result<f64>,
    ) -> Result<Vec<GradCheckReport>> {
        if names.len() != params.len() || analytic.len() != params.len() {
            return Err(Error::Memory(MemoryError::LengthMismatch {
                what: "gradcheck check_all: names and analytic gradients per parameter".into(),
                expected: params.len(),
                actual: if names.len() != params.len() { names.len() } else { analytic.len() },
            }));
        }
        let mut reports = Vec::with_capacity(params.len());
        for p in 0..params.len() {
            let (before, rest) = params.split_at_mut(p);
            let (param, after) = rest.split_first_mut().expect("p < params.len()");
            let coords = sample_coords(param.len(), self.samples, self.seed.wrapping_add(p as u64));
            let report = self.check(dev, names[p], param, &analytic[p], &coords, |perturbed| {
                let all: Vec<&DeviceBuffer<f32>> =
                    before.iter().chain(std::iter::once(perturbed)).chain(after.iter()).collect();
                loss(&all)
            })?;
            reports.push(report);
        }
        Ok(reports)
    }
}

/// Panics with every failing report when any of `reports` did not pass.
#[track_caller]
pub fn assert_all_passed(reports: &[GradCheckReport]) {
    let failed: Vec<String> = reports.iter().filter(|r| !r.passed()).map(ToString::to_string).collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// Up to `count` distinct indices in `0..len`, sorted: always the first and last index, the rest
/// pseudo-random from `seed` (deterministic). All of `0..len` when `count >= len`.
pub fn sample_coords(len: usize, count: usize, seed: u64) -> Vec<usize> {
    if count >= len {
        return (0..len).collect();
    }
    let mut picked = std::collections::BTreeSet::new();
    if count > 0 {
        picked.insert(0);
    }
    if count > 1 {
        picked.insert(len - 1);
    }
    let mut rng = crate::rng::SplitMix64::new(seed);
    while picked.len() < count {
        picked.insert((rng.next_u64() % len as u64) as usize);
    }
    picked.into_iter().collect()
}

/// `Σ_i weights[i] · out[i]` in `f64` over the downloaded `out`: the usual loss for a gradient
/// check (run the backward with the output gradient equal to `weights`). Errors when the lengths
/// differ.
pub fn weighted_sum(dev: &Device, out: &impl DeviceIn<f32>, weights: &[f32]) -> Result<f64> {
    if out.elem_len() != weights.len() {
        return Err(Error::Memory(MemoryError::LengthMismatch {
            what: "gradcheck weighted_sum: weights".into(),
            expected: out.elem_len(),
            actual: weights.len(),
        }));
    }
    let values = dev.download(out)?;
    Ok(values.iter().zip(weights).map(|(&y, &w)| f64::from(y) * f64::from(w)).sum())
}

fn set_elem(dev: &Device, param: &mut DeviceBuffer<f32>, i: usize, value: f32) -> Result<()> {
    let mut one = param.slice_mut(i..i + 1)?;
    dev.upload_into(&[value], &mut one)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_coords_are_distinct_sorted_and_cover_the_ends() {
        let c = sample_coords(1000, 20, 3);
        assert_eq!(c.len(), 20);
        assert!(c.windows(2).all(|w| w[0] < w[1]));
        assert_eq!((c[0], c[19]), (0, 999));
        assert_eq!(sample_coords(5, 9, 1), vec![0, 1, 2, 3, 4]);
        assert_eq!(sample_coords(1000, 20, 3), c, "deterministic for a seed");
        assert_ne!(sample_coords(1000, 20, 4), c, "seed changes the sample");
    }

    #[test]
    fn coord_check_fails_on_nan_and_large_error() {
        let ok = CoordCheck { index: 0, analytic: 1.0, numeric: 1.001, abs_err: 0.001, allowed: 0.012 };
        assert!(ok.passed());
        let nan = CoordCheck { abs_err: f64::NAN, ..ok };
        assert!(!nan.passed());
        assert_eq!(nan.ratio(), f64::INFINITY);
        let report = GradCheckReport { name: "w".into(), settings: GradCheck::default(), coords: vec![ok, nan] };
        assert!(!report.passed());
        assert_eq!(report.worst().map(|c| c.abs_err.is_nan()), Some(true));
        assert!(report.to_string().contains("1 of 2 coordinates failed"));
        let empty = GradCheckReport { coords: vec![], ..report };
        assert!(!empty.passed(), "checking nothing is not a pass");
    }
}
