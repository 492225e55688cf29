//! `snap_feature_assemble`: invariants of the features (ranges, symmetry, scale invariance,
//! monotonicity) and invalid books (never NaN/Inf, all-zero features, flag 0).

use kgraph::{Device, MappedBuffer};
use kgraph_model::model::{launch, Kernels, FEAT_ASK_LOGSZ, FEAT_ASK_OFFSET, FEAT_BID_LOGSZ, FEAT_BID_OFFSET};
use kgraph_model::model::{FEAT_IMBALANCE, FEAT_REL_SPREAD, FEAT_VALID, N_FEAT, N_LEVELS, SNAP_LEN};

use super::common::device;
use super::model_util::{assert_all_finite, assert_bitwise_eq, down, kernels, up, zeros, Lcg};

const BID_PX: usize = 0;
const BID_SZ: usize = 10;
const ASK_PX: usize = 20;
const ASK_SZ: usize = 30;

/// A well-formed book: strictly monotone prices around `mid`, random sizes (level 0 > 0).
fn book(rng: &mut Lcg, mid: f32, half_spread: f32, tick: f32) -> Vec<f32> {
    let mut s = vec![0.0f32; SNAP_LEN];
    for i in 0..N_LEVELS {
        s[BID_PX + i] = mid - half_spread - i as f32 * tick;
        s[ASK_PX + i] = mid + half_spread + i as f32 * tick;
        let lo = if i == 0 { 1.0 } else { 0.0 };
        s[BID_SZ + i] = rng.uniform(lo, 100.0);
        s[ASK_SZ + i] = rng.uniform(lo, 100.0);
    }
    s
}

fn random_book(rng: &mut Lcg) -> Vec<f32> {
    let mid = rng.uniform(10.0, 200.0);
    let half = rng.uniform(0.05, 1.0);
    let tick = rng.uniform(0.01, 0.5);
    book(rng, mid, half, tick)
}

fn features(dev: &Device, k: &Kernels, snaps: &[f32]) -> Vec<f32> {
    let batch = snaps.len() / SNAP_LEN;
    let s = up(dev, snaps);
    let mut f = zeros(dev, batch * N_FEAT);
    k.snap_feature_assemble
        .launch(dev.stream(), launch::snap_feature_assemble(batch), &s, batch as i32, &mut f)
        .unwrap();
    down(dev, &f)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn snap_valid_books_have_flag_one_signed_monotone_offsets_and_imbalance_in_unit_range() {
    let dev = device();
    let k = kernels(&dev);
    for batch in [1usize, 256] {
        let mut rng = Lcg::new(11 + batch as u64);
        let snaps: Vec<f32> = (0..batch).flat_map(|_| random_book(&mut rng)).collect();
        let f = features(&dev, &k, &snaps);
        assert_all_finite("feat", &f);
        for (r, (row, s)) in f.chunks(N_FEAT).zip(snaps.chunks(SNAP_LEN)).enumerate() {
            assert_eq!(row[FEAT_VALID], 1.0, "row {r}: valid book flagged invalid");
            for d in 0..3 {
                let imb = row[FEAT_IMBALANCE + d];
                assert!((-1.0..=1.0).contains(&imb), "row {r}: imbalance[{d}] = {imb}");
            }
            // The best quotes sit half a spread either side of mid; deeper levels further out.
            assert!((row[FEAT_BID_OFFSET] + 0.5).abs() < 1e-3, "row {r}: best bid offset {}", row[FEAT_BID_OFFSET]);
            assert!((row[FEAT_ASK_OFFSET] - 0.5).abs() < 1e-3, "row {r}: best ask offset {}", row[FEAT_ASK_OFFSET]);
            for i in 1..N_LEVELS {
                assert!(row[FEAT_BID_OFFSET + i] < row[FEAT_BID_OFFSET + i - 1], "row {r}: bid offsets not decreasing");
                assert!(row[FEAT_ASK_OFFSET + i] > row[FEAT_ASK_OFFSET + i - 1], "row {r}: ask offsets not increasing");
            }
            // log1p sizes are >= 0 and ordered like the sizes.
            for (side_sz, side_feat) in [(BID_SZ, FEAT_BID_LOGSZ), (ASK_SZ, FEAT_ASK_LOGSZ)] {
                for i in 0..N_LEVELS {
                    assert!(row[side_feat + i] >= 0.0);
                    for j in 0..N_LEVELS {
                        // (Sizes within 1e-4 of each other are skipped: log1pf is faithfully
                        // rounded, not guaranteed monotone across a few ulps.)
                        if s[side_sz + i] < s[side_sz + j] * (1.0 - 1e-4) {
                            assert!(row[side_feat + i] <= row[side_feat + j], "row {r}: log sizes not monotone");
                        }
                    }
                }
            }
            let rel = row[FEAT_REL_SPREAD];
            assert!(rel > 0.0 && rel < 2.0, "row {r}: relative spread {rel}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn snap_mirrored_book_has_zero_imbalance_and_antisymmetric_offsets() {
    let dev = device();
    let k = kernels(&dev);
    for batch in [1usize, 256] {
        let mut rng = Lcg::new(5 + batch as u64);
        let mut snaps = Vec::with_capacity(batch * SNAP_LEN);
        for _ in 0..batch {
            // Multiples of 1/4 below 256: every price and the mid are exact in f32.
            let mid = 50.0 + (rng.next_u32() % 100) as f32;
            let half = 0.25 * (1 + rng.next_u32() % 4) as f32;
            let mut s = book(&mut rng, mid, half, 0.25);
            for i in 0..N_LEVELS {
                s[ASK_SZ + i] = s[BID_SZ + i];
            }
            snaps.extend(s);
        }
        let f = features(&dev, &k, &snaps);
        for (r, row) in f.chunks(N_FEAT).enumerate() {
            assert_eq!(row[FEAT_VALID], 1.0);
            for d in 0..3 {
                assert_eq!(row[FEAT_IMBALANCE + d], 0.0, "row {r}: mirrored book imbalance[{d}]");
            }
            for i in 0..N_LEVELS {
                assert_eq!(row[FEAT_ASK_OFFSET + i], -row[FEAT_BID_OFFSET + i], "row {r}: level {i} offsets");
                assert_eq!(row[FEAT_ASK_LOGSZ + i], row[FEAT_BID_LOGSZ + i], "row {r}: level {i} sizes");
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn snap_scaling_prices_keeps_offsets_and_scaling_sizes_keeps_imbalance() {
    let dev = device();
    let k = kernels(&dev);
    let mut rng = Lcg::new(21);
    let base: Vec<f32> = (0..256).flat_map(|_| random_book(&mut rng)).collect();
    let scaled = |c: f32, from: usize, len: usize| -> Vec<f32> {
        let mut v = base.clone();
        for row in v.chunks_mut(SNAP_LEN) {
            for side in [from, from + 20] {
                row[side..side + len].iter_mut().for_each(|x| *x *= c);
            }
        }
        v
    };
    let f0 = features(&dev, &k, &base);
    // A power of two scales every intermediate exactly: features are bitwise unchanged.
    assert_bitwise_eq("prices x4", &f0, &features(&dev, &k, &scaled(4.0, BID_PX, N_LEVELS)));
    // Any c > 0: unchanged up to the rounding of (c p - c mid) / (c spread).
    let f137 = features(&dev, &k, &scaled(1.37, BID_PX, N_LEVELS));
    for (i, (a, b)) in f0.iter().zip(&f137).enumerate() {
        assert!((a - b).abs() <= 2e-3 * a.abs().max(1.0), "feat[{i}]: {a} vs {b} after prices x1.37");
    }
    // Scaling all sizes by 8 keeps every imbalance bitwise and raises every positive log size.
    let f8 = features(&dev, &k, &scaled(8.0, BID_SZ, N_LEVELS));
    for (r, (a, b)) in f0.chunks(N_FEAT).zip(f8.chunks(N_FEAT)).enumerate() {
        assert_bitwise_eq(
            &format!("row {r} imbalance, sizes x8"),
            &a[FEAT_IMBALANCE..FEAT_IMBALANCE + 3],
            &b[FEAT_IMBALANCE..FEAT_IMBALANCE + 3],
        );
        assert_bitwise_eq(&format!("row {r} offsets, sizes x8"), &a[..20], &b[..20]);
        for i in FEAT_BID_LOGSZ..FEAT_BID_LOGSZ + 2 * N_LEVELS {
            assert!(b[i] > a[i] || a[i] == 0.0, "row {r}: log size {i} did not grow");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn snap_imbalance_rises_with_best_bid_size_and_one_sided_books_saturate() {
    let dev = device();
    let k = kernels(&dev);
    let mut rng = Lcg::new(3);
    let base = book(&mut rng, 100.0, 0.5, 0.1);
    let mut snaps = Vec::new();
    for r in 0..64 {
        let mut s = base.clone();
        s[BID_SZ] = 0.5 + 2.0 * r as f32;
        snaps.extend(s);
    }
    let f = features(&dev, &k, &snaps);
    for (r, w) in f.chunks(N_FEAT).collect::<Vec<_>>().windows(2).enumerate() {
        assert!(w[1][FEAT_IMBALANCE] > w[0][FEAT_IMBALANCE], "rows {r}, {}: depth-1 imbalance not rising", r + 1);
        for d in 1..3 {
            assert!(w[1][FEAT_IMBALANCE + d] >= w[0][FEAT_IMBALANCE + d], "depth index {d} not monotone");
        }
    }
    let mut only_bids = base.clone();
    only_bids[ASK_SZ..ASK_SZ + N_LEVELS].fill(0.0);
    let mut only_asks = base.clone();
    only_asks[BID_SZ..BID_SZ + N_LEVELS].fill(0.0);
    let f = features(&dev, &k, &[only_bids, only_asks].concat());
    assert_eq!(&f[FEAT_IMBALANCE..FEAT_IMBALANCE + 3], &[1.0, 1.0, 1.0]);
    assert_eq!(&f[N_FEAT + FEAT_IMBALANCE..N_FEAT + FEAT_IMBALANCE + 3], &[-1.0, -1.0, -1.0]);
    assert_eq!((f[FEAT_VALID], f[N_FEAT + FEAT_VALID]), (1.0, 1.0), "one-sided books are not empty");
}

/// Invalid books of every kind, each with a description.
fn invalid_books(rng: &mut Lcg) -> Vec<(String, Vec<f32>)> {
    let good = book(rng, 100.0, 0.5, 0.1);
    let mut out = Vec::new();
    let mut with = |what: String, f: &dyn Fn(&mut Vec<f32>)| {
        let mut s = good.clone();
        f(&mut s);
        out.push((what, s));
    };
    with("crossed".into(), &|s| s[ASK_PX] = s[BID_PX] - 0.1);
    with("locked".into(), &|s| s[ASK_PX] = s[BID_PX]);
    with("empty".into(), &|s| {
        s[BID_SZ..BID_SZ + 10].fill(0.0);
        s[ASK_SZ..ASK_SZ + 10].fill(0.0);
    });
    for i in 0..SNAP_LEN {
        with(format!("NaN at {i}"), &|s| s[i] = f32::NAN);
        with(format!("+Inf at {i}"), &|s| s[i] = f32::INFINITY);
        with(format!("-Inf at {i}"), &|s| s[i] = f32::NEG_INFINITY);
    }
    for side in [BID_SZ, ASK_SZ] {
        for i in 0..N_LEVELS {
            with(format!("negative size at {}", side + i), &|s| s[side + i] = -1.0);
        }
    }
    for side in [BID_PX, ASK_PX] {
        for i in 0..N_LEVELS {
            with(format!("zero price at {}", side + i), &|s| s[side + i] = 0.0);
            with(format!("negative price at {}", side + i), &|s| s[side + i] = -100.0);
        }
    }
    // Finite inputs whose features would overflow: a one-ulp spread under a far level, and
    // sizes whose sum overflows.
    with("offset overflow".into(), &|s| {
        s[BID_PX] = 1.0;
        s[ASK_PX] = f32::from_bits(1.0f32.to_bits() + 1);
        s[ASK_PX + 9] = 3.0e38;
    });
    with("size sum overflow".into(), &|s| {
        s[BID_SZ..BID_SZ + 10].fill(f32::MAX);
        s[ASK_SZ..ASK_SZ + 10].fill(f32::MAX);
    });
    out
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn snap_invalid_books_give_all_zero_features_and_flag_zero_never_nan() {
    let dev = device();
    let k = kernels(&dev);
    let mut rng = Lcg::new(8);
    let invalid = invalid_books(&mut rng);
    // Interleave valid books so a bad row cannot leak into its neighbours.
    let mut snaps = Vec::new();
    let mut expect_valid = Vec::new();
    for (_, s) in &invalid {
        snaps.extend_from_slice(s);
        expect_valid.push(false);
        snaps.extend(random_book(&mut rng));
        expect_valid.push(true);
    }
    let f = features(&dev, &k, &snaps);
    assert_all_finite("feat", &f);
    for (r, row) in f.chunks(N_FEAT).enumerate() {
        if expect_valid[r] {
            assert_eq!(row[FEAT_VALID], 1.0, "valid row {r} next to an invalid one");
        } else {
            let what = &invalid[r / 2].0;
            assert!(row.iter().all(|&x| x == 0.0), "{what}: features not all zero: {row:?}");
        }
    }
    // The latency shape (B = 1) on a few of them.
    for (what, s) in invalid.iter().step_by(17) {
        let f = features(&dev, &k, s);
        assert!(f.iter().all(|&x| x == 0.0), "{what} (B = 1): {f:?}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn snap_extreme_but_valid_books_stay_finite_and_valid() {
    let dev = device();
    let k = kernels(&dev);
    let mut rng = Lcg::new(2);
    let mut snaps = Vec::new();
    for (scale_px, scale_sz) in [(1e30f32, 1e30f32), (1e-30, 1e-30), (1e30, 1e-30), (1e-30, 1e30)] {
        let mut s = book(&mut rng, 100.0, 0.5, 0.1);
        for i in 0..N_LEVELS {
            s[BID_PX + i] *= scale_px;
            s[ASK_PX + i] *= scale_px;
            s[BID_SZ + i] *= scale_sz;
            s[ASK_SZ + i] *= scale_sz;
        }
        snaps.extend(s);
    }
    let f = features(&dev, &k, &snaps);
    assert_all_finite("feat", &f);
    for (r, row) in f.chunks(N_FEAT).enumerate() {
        assert_eq!(row[FEAT_VALID], 1.0, "row {r}");
        assert!(row[FEAT_IMBALANCE..FEAT_IMBALANCE + 3].iter().all(|x| (-1.0..=1.0).contains(x)));
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn snap_batch_rows_match_single_row_launches_and_repeat_bitwise() {
    let dev = device();
    let k = kernels(&dev);
    let mut rng = Lcg::new(99);
    let snaps: Vec<f32> = (0..256).flat_map(|_| random_book(&mut rng)).collect();
    let f = features(&dev, &k, &snaps);
    assert_bitwise_eq("repeat", &f, &features(&dev, &k, &snaps));
    for r in [0usize, 1, 127, 255] {
        let one = features(&dev, &k, &snaps[r * SNAP_LEN..(r + 1) * SNAP_LEN]);
        assert_bitwise_eq(&format!("row {r}"), &f[r * N_FEAT..(r + 1) * N_FEAT], &one);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn snap_pinned_variant_reads_host_memory_like_the_device_variant() {
    let dev = device();
    let k = kernels(&dev);
    let mut rng = Lcg::new(41);
    let batch = 256;
    let snaps: Vec<f32> = (0..batch).flat_map(|_| random_book(&mut rng)).collect();
    let mut host = MappedBuffer::<f32>::new(&dev, snaps.len()).unwrap();
    host.as_mut_slice().unwrap().copy_from_slice(&snaps);
    let mut out = zeros(&dev, batch * N_FEAT);
    let cfg = launch::snap_feature_assemble(batch);
    k.snap_feature_assemble_pinned.launch(dev.stream(), cfg, host.device_ptr(), batch as i32, &mut out).unwrap();
    assert_bitwise_eq("pinned vs device", &down(&dev, &out), &features(&dev, &k, &snaps));
    // The kernel reads the host's latest write: make every book one-sided and launch again.
    for row in host.as_mut_slice().unwrap().chunks_mut(SNAP_LEN) {
        row[ASK_SZ..ASK_SZ + N_LEVELS].fill(0.0);
    }
    k.snap_feature_assemble_pinned.launch(dev.stream(), cfg, host.device_ptr(), batch as i32, &mut out).unwrap();
    let f = down(&dev, &out);
    assert!(f.chunks(N_FEAT).all(|row| row[FEAT_IMBALANCE..FEAT_IMBALANCE + 3] == [1.0, 1.0, 1.0]));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn warp_kernels_write_nothing_for_blocks_that_are_not_whole_warps() {
    // The warp kernels' full-mask shuffles need every lane: for a block of 48 threads, or a 2-D
    // block, they return at once (the launch itself is valid), so the outputs keep a sentinel.
    let dev = device();
    let k = kernels(&dev);
    let mut rng = Lcg::new(43);
    let batch = 8;
    let snaps: Vec<f32> = (0..batch).flat_map(|_| random_book(&mut rng)).collect();
    let s = up(&dev, &snaps);
    let sentinel = vec![f32::from_bits(0x7fc0_1234); batch * N_FEAT];
    for block in [(48, 1, 1), (32, 2, 1), (16, 1, 1)] {
        let mut out = up(&dev, &sentinel);
        let cfg = kgraph::LaunchConfig { grid_dim: (batch as u32, 1, 1), block_dim: block, shared_mem_bytes: 0 };
        k.snap_feature_assemble.launch(dev.stream(), cfg, &s, batch as i32, &mut out).unwrap();
        assert_bitwise_eq(&format!("block {block:?}: untouched"), &down(&dev, &out), &sentinel);
    }
    // The same kernel with whole warps writes every feature.
    let mut out = up(&dev, &sentinel);
    k.snap_feature_assemble
        .launch(dev.stream(), launch::snap_feature_assemble(batch), &s, batch as i32, &mut out)
        .unwrap();
    assert_all_finite("block 128", &down(&dev, &out));
}
