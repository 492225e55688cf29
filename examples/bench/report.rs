//! Figures: printed as `name value unit` lines as they are measured, and written as JSON.

use std::time::Instant;

/// Collected figures, in measurement order.
pub struct Report {
    device: String,
    figures: Vec<(String, f64, &'static str)>,
}

impl Report {
    pub fn new(device: &str) -> Self {
        println!("device {device}");
        Report { device: device.to_string(), figures: Vec::new() }
    }

    /// Records and prints one figure.
    pub fn add(&mut self, name: impl Into<String>, value: f64, unit: &'static str) {
        let name = name.into();
        println!("{name} {value:.3} {unit}");
        self.figures.push((name, value, unit));
    }

    /// A figure recorded earlier.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.figures.iter().find(|(n, _, _)| n == name).map(|f| f.1)
    }

    /// `a / b` as a ratio figure, when both exist.
    pub fn ratio(&mut self, name: &str, a: &str, b: &str) {
        if let (Some(x), Some(y)) = (self.get(a), self.get(b)) {
            self.add(name, x / y, "x");
        }
    }

    pub fn write_json(&self, path: &str) -> std::io::Result<()> {
        let rows: Vec<String> = self
            .figures
            .iter()
            .map(|(n, v, u)| format!("    {{\"name\": \"{n}\", \"value\": {v:.4}, \"unit\": \"{u}\"}}"))
            .collect();
        let text = format!("{{\n  \"device\": \"{}\",\n  \"figures\": [\n{}\n  ]\n}}\n", self.device, rows.join(",\n"));
        std::fs::write(path, text)
    }
}

/// `iters` host-timed runs of `f` in us, sorted, after dropping the first sixth as warm-up.
fn sorted_samples_us(iters: usize, mut f: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<Vec<f64>> {
    let mut t = Vec::with_capacity(iters);
    for _ in 0..iters {
        let t0 = Instant::now();
        f()?;
        t.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    t.drain(..iters / 6);
    t.sort_by(f64::total_cmp);
    Ok(t)
}

/// Median of `iters` host-timed runs of `f` (first sixth dropped as warm-up), in us.
pub fn median_us(iters: usize, f: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<f64> {
    let t = sorted_samples_us(iters, f)?;
    Ok(t[t.len() / 2])
}

/// Percentiles `ps` (0..=100) of `iters` host-timed runs, with the same warm-up drop, in us.
pub fn percentiles_us(iters: usize, ps: &[f64], f: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<Vec<f64>> {
    let t = sorted_samples_us(iters, f)?;
    Ok(ps.iter().map(|p| t[((p / 100.0) * (t.len() - 1) as f64).round() as usize]).collect())
}
