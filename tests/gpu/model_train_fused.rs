//! The train step's fused and overwriting kernels against the model kernels they replace, bit for
//! bit: `multi_horizon_heads_bce_backward` = `bce_with_logits` then `multi_horizon_heads_backward`
//! (g_probs = 0) into zeroed buffers; `cfc_step_backward_pre` + `cfc_step_backward_weights` =
//! `cfc_step_backward_gates` + `cfc_step_backward_params` (their weight gradients) into zeroed
//! buffers; `cfc_step_save` = `cfc_step` (h_new), and with its stored coefficients
//! `multi_horizon_heads_bce_cfc_backward` = `multi_horizon_heads_bce_backward` then
//! `cfc_step_backward_pre`; `train_forward` = `snap_feature_assemble`, `cfc_step_save` and
//! `multi_horizon_heads`. The fused AdamW kernels are in model_train_fused_adamw.rs. The replaced
//! kernels are checked against finite differences in model_bce.rs, model_heads.rs and model_cfc.rs,
//! so equality carries those checks over. The overwriting kernels' outputs start as NaN sentinels:
//! every float must be written.

use kgraph_model::model::{launch, N_HORIZONS};

use super::common::device;
use super::model_util::{assert_all_finite, assert_bitwise_eq, down, kernels, sentinels, up, weights, zeros, Lcg};

#[test]
#[ignore = "needs a CUDA GPU"]
fn heads_bce_backward_equals_bce_then_heads_backward_bit_for_bit() {
    let dev = device();
    let k = kernels(&dev);
    for (batch, n_hid) in [(1usize, 32usize), (256, 32), (300, 64)] {
        let mut rng = Lcg::new(7 + batch as u64);
        let count = batch * N_HORIZONS;
        let h = up(&dev, &rng.vec(batch * n_hid, -1.0, 1.0));
        let w_h = up(&dev, &weights(&mut rng, N_HORIZONS, n_hid, 2.0));
        let logits = up(&dev, &rng.vec(count, -6.0, 6.0));
        let targets = up(&dev, &(0..count).map(|_| if rng.unit() < 0.5 { 0.0 } else { 1.0 }).collect::<Vec<f32>>());
        let (b, nh) = (batch as i32, n_hid as i32);
        // The replaced pair: BCE into a zeroed g_logits, then the heads' backward (g_probs = 0,
        // probs irrelevant) into zeroed gradients.
        let (mut loss_ref, mut g_logits) = (zeros(&dev, 1), zeros(&dev, count));
        k.bce_with_logits
            .launch(
                dev.stream(),
                launch::bce_with_logits(),
                &logits,
                &targets,
                count as i32,
                &mut loss_ref,
                &mut g_logits,
            )
            .unwrap();
        let (probs, g_probs) = (zeros(&dev, count), zeros(&dev, count));
        let (mut g_h_ref, mut g_w_ref, mut g_b_ref) =
            (zeros(&dev, batch * n_hid), zeros(&dev, N_HORIZONS * n_hid), zeros(&dev, N_HORIZONS));
        k.multi_horizon_heads_backward
            .launch(
                dev.stream(),
                launch::multi_horizon_heads_backward(batch, n_hid),
                &h,
                &w_h,
                &probs,
                &g_logits,
                &g_probs,
                b,
                nh,
                &mut g_h_ref,
                &mut g_w_ref,
                &mut g_b_ref,
            )
            .unwrap();
        // The fused kernel, into sentinels.
        let (mut loss, mut g_h, mut g_w, mut g_b) = (
            sentinels(&dev, 1),
            sentinels(&dev, batch * n_hid),
            sentinels(&dev, N_HORIZONS * n_hid),
            sentinels(&dev, N_HORIZONS),
        );
        k.multi_horizon_heads_bce_backward
            .launch(
                dev.stream(),
                launch::multi_horizon_heads_bce_backward(batch, n_hid),
                &h,
                &w_h,
                &logits,
                &targets,
                b,
                nh,
                &mut loss,
                &mut g_h,
                &mut g_w,
                &mut g_b,
            )
            .unwrap();
        let what = |name: &str| format!("batch {batch}, n_hid {n_hid}: {name}");
        for (name, got, want) in
            [("loss", &loss, &loss_ref), ("g_h", &g_h, &g_h_ref), ("g_w_h", &g_w, &g_w_ref), ("g_b_h", &g_b, &g_b_ref)]
        {
            let got = down(&dev, got);
            assert_all_finite(&what(name), &got);
            assert_bitwise_eq(&what(name), &got, &down(&dev, want));
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cfc_backward_pre_and_weights_equal_gates_and_params_bit_for_bit() {
    let dev = device();
    let k = kernels(&dev);
    let n_in = kgraph_model::model::N_FEAT;
    for (batch, n_hid) in [(1usize, 32usize), (256, 32), (300, 48)] {
        let mut rng = Lcg::new(17 + batch as u64);
        let kk = n_in + n_hid;
        let x = up(&dev, &rng.vec(batch * n_in, -1.0, 1.0));
        let h_old = up(&dev, &rng.vec(batch * n_hid, -1.0, 1.0));
        let (w_g, w_t) = (up(&dev, &weights(&mut rng, n_hid, kk, 1.5)), up(&dev, &weights(&mut rng, n_hid, kk, 1.5)));
        let (b_g, b_t) = (up(&dev, &rng.vec(n_hid, -0.5, 0.5)), up(&dev, &rng.vec(n_hid, -0.5, 0.5)));
        let dt = up(&dev, &rng.vec(batch, 0.1, 1.5));
        let g_h_new = up(&dev, &rng.vec(batch * n_hid, -1.0, 1.0));
        let (b, ni, nh) = (batch as i32, n_in as i32, n_hid as i32);
        let nw = n_hid * kk;
        // The replaced pair, accumulating into zeroed buffers.
        let (mut dg_ref, mut dt_ref) = (zeros(&dev, batch * n_hid), zeros(&dev, batch * n_hid));
        let (mut g_x, mut g_h_old) = (zeros(&dev, batch * n_in), zeros(&dev, batch * n_hid));
        let mut refs = [zeros(&dev, nw), zeros(&dev, n_hid), zeros(&dev, nw), zeros(&dev, n_hid)];
        let s = dev.stream();
        k.cfc_step_backward_gates
            .launch(
                s,
                launch::cfc_step_backward_gates(batch, n_hid),
                &x,
                &h_old,
                &w_g,
                &b_g,
                &w_t,
                &b_t,
                &dt,
                &g_h_new,
                b,
                ni,
                nh,
                &mut dg_ref,
                &mut dt_ref,
                &mut g_h_old,
            )
            .unwrap();
        let [r_wg, r_bg, r_wt, r_bt] = &mut refs;
        k.cfc_step_backward_params
            .launch(
                s,
                launch::cfc_step_backward_params(batch, n_in, n_hid),
                &x,
                &h_old,
                &w_g,
                &w_t,
                &dg_ref,
                &dt_ref,
                b,
                ni,
                nh,
                &mut g_x,
                &mut g_h_old,
                r_wg,
                r_bg,
                r_wt,
                r_bt,
            )
            .unwrap();
        // The train step's forms, into sentinels.
        let (mut dg, mut dtau) = (sentinels(&dev, batch * n_hid), sentinels(&dev, batch * n_hid));
        k.cfc_step_backward_pre
            .launch(
                s,
                launch::cfc_step_backward_gates(batch, n_hid),
                &x,
                &h_old,
                &w_g,
                &b_g,
                &w_t,
                &b_t,
                &dt,
                &g_h_new,
                b,
                ni,
                nh,
                &mut dg,
                &mut dtau,
            )
            .unwrap();
        let mut got = [sentinels(&dev, nw), sentinels(&dev, n_hid), sentinels(&dev, nw), sentinels(&dev, n_hid)];
        let [g_wg, g_bg, g_wt, g_bt] = &mut got;
        k.cfc_step_backward_weights
            .launch(
                s,
                launch::cfc_step_backward_weights(n_in, n_hid),
                &x,
                &h_old,
                &dg,
                &dtau,
                b,
                ni,
                nh,
                g_wg,
                g_bg,
                g_wt,
                g_bt,
            )
            .unwrap();
        let what = |name: &str| format!("batch {batch}, n_hid {n_hid}: {name}");
        assert_bitwise_eq(&what("d_pre_g"), &down(&dev, &dg), &down(&dev, &dg_ref));
        assert_bitwise_eq(&what("d_pre_t"), &down(&dev, &dtau), &down(&dev, &dt_ref));
        for (name, (g, r)) in ["g_w_g", "g_b_g", "g_w_t", "g_b_t"].iter().zip(got.iter().zip(&refs)) {
            let g = down(&dev, g);
            assert_all_finite(&what(name), &g);
            assert_bitwise_eq(&what(name), &g, &down(&dev, r));
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cfc_step_save_then_the_gate_folding_heads_backward_equal_the_unfused_kernels_bit_for_bit() {
    let dev = device();
    let k = kernels(&dev);
    let n_in = kgraph_model::model::N_FEAT;
    for (batch, n_hid) in [(1usize, 32usize), (256, 32), (300, 48)] {
        let mut rng = Lcg::new(41 + batch as u64);
        let kk = n_in + n_hid;
        let x = up(&dev, &rng.vec(batch * n_in, -1.0, 1.0));
        let h_old = up(&dev, &rng.vec(batch * n_hid, -1.0, 1.0));
        let (w_g, w_t) = (up(&dev, &weights(&mut rng, n_hid, kk, 1.5)), up(&dev, &weights(&mut rng, n_hid, kk, 1.5)));
        let (b_g, b_t) = (up(&dev, &rng.vec(n_hid, -0.5, 0.5)), up(&dev, &rng.vec(n_hid, -0.5, 0.5)));
        let dt = up(&dev, &rng.vec(batch, 0.1, 1.5));
        let w_h = up(&dev, &weights(&mut rng, N_HORIZONS, n_hid, 2.0));
        let b_h = up(&dev, &rng.vec(N_HORIZONS, -0.5, 0.5));
        let count = batch * N_HORIZONS;
        let targets = up(&dev, &(0..count).map(|_| if rng.unit() < 0.5 { 0.0 } else { 1.0 }).collect::<Vec<f32>>());
        let (b, ni, nh) = (batch as i32, n_in as i32, n_hid as i32);
        let s = dev.stream();
        let what = |name: &str| format!("batch {batch}, n_hid {n_hid}: {name}");
        // Forward: cfc_step_save's h_new is cfc_step's.
        let (mut h1_ref, mut h1, mut coeffs) =
            (zeros(&dev, batch * n_hid), sentinels(&dev, batch * n_hid), sentinels(&dev, 4 * batch * n_hid));
        let cfg = launch::cfc_step(batch, n_hid);
        k.cfc_step.launch(s, cfg, &x, &h_old, &w_g, &b_g, &w_t, &b_t, &dt, b, ni, nh, &mut h1_ref).unwrap();
        k.cfc_step_save
            .launch(s, cfg, &x, &h_old, &w_g, &b_g, &w_t, &b_t, &dt, b, ni, nh, &mut h1, &mut coeffs)
            .unwrap();
        assert_bitwise_eq(&what("h_new"), &down(&dev, &h1), &down(&dev, &h1_ref));
        assert_all_finite(&what("coeffs"), &down(&dev, &coeffs));
        let (mut logits, mut probs) = (zeros(&dev, count), zeros(&dev, count));
        k.multi_horizon_heads
            .launch(s, launch::multi_horizon_heads(batch), &h1, &w_h, &b_h, b, nh, &mut logits, &mut probs)
            .unwrap();
        // The unfused pair: the BCE heads backward (g_h), then the gate step from it.
        let cfg = launch::multi_horizon_heads_bce_backward(batch, n_hid);
        let (mut loss_ref, mut g_h, mut g_w_ref, mut g_b_ref) =
            (zeros(&dev, 1), zeros(&dev, batch * n_hid), zeros(&dev, N_HORIZONS * n_hid), zeros(&dev, N_HORIZONS));
        k.multi_horizon_heads_bce_backward
            .launch(s, cfg, &h1, &w_h, &logits, &targets, b, nh, &mut loss_ref, &mut g_h, &mut g_w_ref, &mut g_b_ref)
            .unwrap();
        let (mut dg_ref, mut dt_ref) = (zeros(&dev, batch * n_hid), zeros(&dev, batch * n_hid));
        k.cfc_step_backward_pre
            .launch(
                s,
                launch::cfc_step_backward_gates(batch, n_hid),
                &x,
                &h_old,
                &w_g,
                &b_g,
                &w_t,
                &b_t,
                &dt,
                &g_h,
                b,
                ni,
                nh,
                &mut dg_ref,
                &mut dt_ref,
            )
            .unwrap();
        // The fused kernel, into sentinels.
        let (mut loss, mut dg, mut dtau, mut g_w, mut g_b) = (
            sentinels(&dev, 1),
            sentinels(&dev, batch * n_hid),
            sentinels(&dev, batch * n_hid),
            sentinels(&dev, N_HORIZONS * n_hid),
            sentinels(&dev, N_HORIZONS),
        );
        k.multi_horizon_heads_bce_cfc_backward
            .launch(
                s, cfg, &h1, &w_h, &logits, &targets, &coeffs, b, nh, &mut loss, &mut dg, &mut dtau, &mut g_w, &mut g_b,
            )
            .unwrap();
        for (name, got, want) in [
            ("loss", &loss, &loss_ref),
            ("d_pre_g", &dg, &dg_ref),
            ("d_pre_t", &dtau, &dt_ref),
            ("g_w_h", &g_w, &g_w_ref),
            ("g_b_h", &g_b, &g_b_ref),
        ] {
            let got = down(&dev, got);
            assert_all_finite(&what(name), &got);
            assert_bitwise_eq(&what(name), &got, &down(&dev, want));
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn train_forward_equals_features_cfc_step_save_and_heads_bit_for_bit() {
    use kgraph_model::graphs::synthetic::BookStream;
    use kgraph_model::model::{N_FEAT, SNAP_LEN};
    let dev = device();
    let k = kernels(&dev);
    // The formula's launch, fewer blocks than rows, and blocks of one and two warps (the warps
    // then stride over the units, the horizons and the feature copy).
    for (batch, n_hid, grid, block) in
        [(1usize, 32usize, 1u32, 1024u32), (256, 32, 256, 1024), (300, 48, 7, 64), (5, 32, 5, 32)]
    {
        let mut rng = Lcg::new(61 + batch as u64);
        let kk = N_FEAT + n_hid;
        let (mut snap, mut dt, mut targets) = (vec![0.0; batch * SNAP_LEN], vec![0.0; batch], vec![0.0; batch * 5]);
        BookStream::independent(batch as u64).fill_batch(&mut snap, &mut dt, &mut targets).unwrap();
        // Every third row a crossed or garbage book: the all-zero feature rows too.
        for row in snap.chunks_mut(SNAP_LEN).step_by(3) {
            row.copy_from_slice(&rng.vec(SNAP_LEN, -5.0, 5.0));
        }
        let (snap, dt) = (up(&dev, &snap), up(&dev, &dt));
        let h0 = up(&dev, &rng.vec(batch * n_hid, -1.0, 1.0));
        let (w_g, w_t) = (up(&dev, &weights(&mut rng, n_hid, kk, 1.5)), up(&dev, &weights(&mut rng, n_hid, kk, 1.5)));
        let (b_g, b_t) = (up(&dev, &rng.vec(n_hid, -0.5, 0.5)), up(&dev, &rng.vec(n_hid, -0.5, 0.5)));
        let w_h = up(&dev, &weights(&mut rng, N_HORIZONS, n_hid, 2.0));
        let b_h = up(&dev, &rng.vec(N_HORIZONS, -0.5, 0.5));
        let (b, nh) = (batch as i32, n_hid as i32);
        let s = dev.stream();
        // The three multi-node kernels.
        let count = batch * N_HORIZONS;
        let (mut feat_ref, mut h1_ref, mut coeffs_ref) =
            (zeros(&dev, batch * N_FEAT), zeros(&dev, batch * n_hid), zeros(&dev, 4 * batch * n_hid));
        let (mut logits_ref, mut probs_ref) = (zeros(&dev, count), zeros(&dev, count));
        k.snap_feature_assemble.launch(s, launch::snap_feature_assemble(batch), &snap, b, &mut feat_ref).unwrap();
        k.cfc_step_save
            .launch(
                s,
                launch::cfc_step(batch, n_hid),
                &feat_ref,
                &h0,
                &w_g,
                &b_g,
                &w_t,
                &b_t,
                &dt,
                b,
                N_FEAT as i32,
                nh,
                &mut h1_ref,
                &mut coeffs_ref,
            )
            .unwrap();
        k.multi_horizon_heads
            .launch(s, launch::multi_horizon_heads(batch), &h1_ref, &w_h, &b_h, b, nh, &mut logits_ref, &mut probs_ref)
            .unwrap();
        // The fused forward, into sentinels, with the formula's grid or fewer blocks.
        let (mut feat, mut h1, mut coeffs, mut logits, mut probs) = (
            sentinels(&dev, batch * N_FEAT),
            sentinels(&dev, batch * n_hid),
            sentinels(&dev, 4 * batch * n_hid),
            sentinels(&dev, count),
            sentinels(&dev, count),
        );
        let mut cfg = launch::train_forward(batch);
        (cfg.grid_dim.0, cfg.block_dim.0) = (grid, block);
        k.train_forward
            .launch(
                s,
                cfg,
                &snap,
                &h0,
                &w_g,
                &b_g,
                &w_t,
                &b_t,
                &dt,
                &w_h,
                &b_h,
                b,
                nh,
                &mut feat,
                &mut h1,
                &mut coeffs,
                &mut logits,
                &mut probs,
            )
            .unwrap();
        let what = |name: &str| format!("batch {batch}, n_hid {n_hid}, grid {grid} x {block}: {name}");
        for (name, got, want) in [
            ("feat", &feat, &feat_ref),
            ("h1", &h1, &h1_ref),
            ("coeffs", &coeffs, &coeffs_ref),
            ("logits", &logits, &logits_ref),
            ("probs", &probs, &probs_ref),
        ] {
            let got = down(&dev, got);
            assert_all_finite(&what(name), &got);
            assert_bitwise_eq(&what(name), &got, &down(&dev, want));
        }
    }
}
