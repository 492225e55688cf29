//! The model's shapes and feature layout, the `#define`s of `kernels/model_common.cuh` that the
//! Rust side needs, with the test that keeps the two equal.

/// Price levels per book side (MBP-10; level 0 is the best).
pub const N_LEVELS: usize = 10;
/// `f32`s per snapshot: `bid_px[10], bid_sz[10], ask_px[10], ask_sz[10]`.
pub const SNAP_LEN: usize = 40;
/// Features per snapshot (layout: the `FEAT_*` offsets).
pub const N_FEAT: usize = 45;
/// Prediction horizons of the multi-horizon heads.
pub const N_HORIZONS: usize = 5;
/// Outputs of the projection.
pub const N_PROJ: usize = 8;

/// Feature offset of `(bid_px[i] - mid) / spread`, 10 values.
pub const FEAT_BID_OFFSET: usize = 0;
/// Feature offset of `(ask_px[i] - mid) / spread`, 10 values.
pub const FEAT_ASK_OFFSET: usize = 10;
/// Feature offset of `log1p(bid_sz[i])`, 10 values.
pub const FEAT_BID_LOGSZ: usize = 20;
/// Feature offset of `log1p(ask_sz[i])`, 10 values.
pub const FEAT_ASK_LOGSZ: usize = 30;
/// Feature offset of the size imbalance `(Σbid − Σask)/(Σbid + Σask)` at depths 1, 5, 10.
pub const FEAT_IMBALANCE: usize = 40;
/// Feature offset of the relative spread `spread / mid`.
pub const FEAT_REL_SPREAD: usize = 43;
/// Feature offset of the validity flag (1 valid; 0 invalid, and then every feature is 0).
pub const FEAT_VALID: usize = 44;

#[cfg(test)]
mod tests {
    /// The Rust constants must match the `#define`s the kernels are compiled with.
    #[test]
    fn constants_match_the_cuda_header() {
        let header = include_str!("../../kernels/model_common.cuh");
        let define = |name: &str| -> usize {
            let line = header
                .lines()
                .find(|l| l.split_whitespace().take(2).eq(["#define", name]))
                .unwrap_or_else(|| panic!("model_common.cuh has no #define {name}"));
            line.split_whitespace().nth(2).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("bad #define {name}"))
        };
        let rust = [
            ("N_LEVELS", super::N_LEVELS),
            ("SNAP_LEN", super::SNAP_LEN),
            ("N_FEAT", super::N_FEAT),
            ("N_HORIZONS", super::N_HORIZONS),
            ("N_PROJ", super::N_PROJ),
            ("FEAT_BID_OFFSET", super::FEAT_BID_OFFSET),
            ("FEAT_ASK_OFFSET", super::FEAT_ASK_OFFSET),
            ("FEAT_BID_LOGSZ", super::FEAT_BID_LOGSZ),
            ("FEAT_ASK_LOGSZ", super::FEAT_ASK_LOGSZ),
            ("FEAT_IMBALANCE", super::FEAT_IMBALANCE),
            ("FEAT_REL_SPREAD", super::FEAT_REL_SPREAD),
            ("FEAT_VALID", super::FEAT_VALID),
        ];
        for (name, value) in rust {
            assert_eq!(define(name), value, "{name}: Rust and model_common.cuh disagree");
        }
    }
}
