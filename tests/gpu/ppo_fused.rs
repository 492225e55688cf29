//! The PPO update graph's fused node, `ppo_heads_loss_backward`, against the four kernels it
//! replaced (`ppo_linear_forward` for the actor's and the critic's last layers, `ppo_policy_head`,
//! `ppo_loss_backward`), bit for bit, actions out of range included (NaN rows in both). Those
//! kernels are checked against finite differences and invariants in ppo.rs and ppo_update.rs.

use kgraph_model::ppo::{launch, ACT_IDENTITY};

use super::common::device;
use super::model_util::{assert_bitwise_eq, down, up, zeros, Lcg};
use super::ppo::kernels;

#[test]
#[ignore = "needs a CUDA GPU"]
fn ppo_heads_loss_backward_equals_last_layers_policy_head_and_loss_backward_bit_for_bit() {
    let dev = device();
    let k = kernels(&dev);
    let (clip_eps, vf_coef, ent_coef) = (0.2f32, 0.5f32, 0.01f32);
    for (batch, n_hid, n_act) in [(128usize, 64usize, 4usize), (37, 16, 7), (1, 64, 31)] {
        let mut rng = Lcg::new(71 + batch as u64);
        // Arenas with the last layers at an offset (as in the update graph's MLPs).
        let (a_off, c_off) = (11usize, 3usize);
        let scale = 2.0 / (n_hid as f32).sqrt();
        let actor = up(&dev, &rng.vec(a_off + n_act * (n_hid + 1), -scale, scale));
        let critic = up(&dev, &rng.vec(c_off + n_hid + 1, -scale, scale));
        let a_h1 = up(&dev, &rng.vec(batch * n_hid, -1.0, 1.0));
        let c_h1 = up(&dev, &rng.vec(batch * n_hid, -1.0, 1.0));
        // Every fifth action out of range (-1 or n_act): the sample's loss terms are NaN.
        let actions: Vec<i32> = (0..batch)
            .map(|i| match i % 5 {
                3 => -1,
                4 if i % 10 == 4 => n_act as i32,
                _ => (rng.next_u32() % n_act as u32) as i32,
            })
            .collect();
        let actions = dev.upload(&actions).unwrap();
        let old_lp = up(&dev, &rng.vec(batch, -3.0, -0.2));
        let adv = up(&dev, &rng.vec(batch, -2.0, 2.0));
        let ret = up(&dev, &rng.vec(batch, -1.0, 1.0));
        let (b, nh, na) = (batch as i32, n_hid as i32, n_act as i32);
        let s = dev.stream();
        let n = batch * n_act;
        // The four kernels.
        let (mut logits_ref, mut values_ref) = (zeros(&dev, n), zeros(&dev, batch));
        k.ppo_linear_forward
            .launch(
                s,
                launch::linear_forward(batch, n_act),
                &actor,
                &a_h1,
                a_off as i32,
                b,
                nh,
                na,
                ACT_IDENTITY,
                &mut logits_ref,
            )
            .unwrap();
        k.ppo_linear_forward
            .launch(
                s,
                launch::linear_forward(batch, 1),
                &critic,
                &c_h1,
                c_off as i32,
                b,
                nh,
                1,
                ACT_IDENTITY,
                &mut values_ref,
            )
            .unwrap();
        let (mut lp_ref, mut p_ref, mut h_ref) = (zeros(&dev, n), zeros(&dev, n), zeros(&dev, batch));
        k.ppo_policy_head
            .launch(s, launch::per_row(batch), &logits_ref, b, na, &mut lp_ref, &mut p_ref, &mut h_ref)
            .unwrap();
        let (mut gl_ref, mut gv_ref) = (zeros(&dev, n), zeros(&dev, batch));
        k.ppo_loss_backward
            .launch(
                s,
                launch::per_row(batch),
                &lp_ref,
                &p_ref,
                &h_ref,
                &values_ref,
                &actions,
                &old_lp,
                &adv,
                &ret,
                clip_eps,
                vf_coef,
                ent_coef,
                b,
                na,
                &mut gl_ref,
                &mut gv_ref,
            )
            .unwrap();
        // The fused kernel, into sentinels.
        let sentinel = |len: usize| up(&dev, &vec![f32::from_bits(0x7FC0_1234); len]);
        let (mut logits, mut lp, mut p, mut h, mut values, mut gl, mut gv) =
            (sentinel(n), sentinel(n), sentinel(n), sentinel(batch), sentinel(batch), sentinel(n), sentinel(batch));
        k.ppo_heads_loss_backward
            .launch(
                s,
                launch::per_row(batch),
                &actor,
                &a_h1,
                a_off as i32,
                &critic,
                &c_h1,
                c_off as i32,
                &actions,
                &old_lp,
                &adv,
                &ret,
                clip_eps,
                vf_coef,
                ent_coef,
                b,
                nh,
                na,
                &mut logits,
                &mut lp,
                &mut p,
                &mut h,
                &mut values,
                &mut gl,
                &mut gv,
            )
            .unwrap();
        for (name, got, want) in [
            ("logits", &logits, &logits_ref),
            ("values", &values, &values_ref),
            ("log_probs", &lp, &lp_ref),
            ("probs", &p, &p_ref),
            ("entropy", &h, &h_ref),
            ("g_logits", &gl, &gl_ref),
            ("g_values", &gv, &gv_ref),
        ] {
            let got = down(&dev, got);
            assert!(
                got.iter().all(|v| v.to_bits() != 0x7FC0_1234),
                "batch {batch}, n_act {n_act}: {name} has unwritten floats"
            );
            assert_bitwise_eq(&format!("batch {batch}, n_hid {n_hid}, n_act {n_act}: {name}"), &got, &down(&dev, want));
        }
    }
}
