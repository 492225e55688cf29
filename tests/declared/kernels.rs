/// The kernels of `kernels/adamw.cu`, as `kgraph declare` writes them.
#[kgraph::kernels]
pub mod adamw {
    // `adamw` (kernels/adamw.cu:71); for a safe `launch`, give each pointer the elements the kernel may access (`grad: &[f32; n]`) and write `#[kernel("adamw.cu", unsafe(extents))]`
    #[kernel("adamw.cu")] pub fn adamw(grad: &[f32], lr: f32, beta1: f32, beta2: f32, eps: f32, weight_decay: f32, bias_correction1: f32, bias_correction2: f32, n: i32, param: &mut [f32], m: &mut [f32], v: &mut [f32]);
    // `adamw_scheduled` (kernels/adamw.cu:82); for a safe `launch`, give each pointer the elements the kernel may access (`grad: &[f32; n]`) and write `#[kernel("adamw.cu", unsafe(extents))]`
    #[kernel("adamw.cu")] pub fn adamw_scheduled(grad: &[f32], schedule: &[f32], beta1: f32, beta2: f32, eps: f32, weight_decay: f32, n: i32, param: &mut [f32], m: &mut [f32], v: &mut [f32]);
    // `adamw_scheduled_group` (kernels/adamw.cu:91); for a safe `launch`, give each pointer the elements the kernel may access (`schedule: &[f32; n0]`) and write `#[kernel("adamw.cu", unsafe(extents))]`
    #[kernel("adamw.cu")] pub fn adamw_scheduled_group(schedule: &[f32], beta1: f32, beta2: f32, eps: f32, weight_decay: f32, grad0: &[f32], n0: i32, param0: &mut [f32], m0: &mut [f32], v0: &mut [f32], grad1: &[f32], n1: i32, param1: &mut [f32], m1: &mut [f32], v1: &mut [f32], grad2: &[f32], n2: i32, param2: &mut [f32], m2: &mut [f32], v2: &mut [f32], grad3: &[f32], n3: i32, param3: &mut [f32], m3: &mut [f32], v3: &mut [f32], grad4: &[f32], n4: i32, param4: &mut [f32], m4: &mut [f32], v4: &mut [f32], grad5: &[f32], n5: i32, param5: &mut [f32], m5: &mut [f32], v5: &mut [f32]);
}

/// The kernels of `kernels/bce.cu`, as `kgraph declare` writes them.
#[kgraph::kernels]
pub mod bce {
    // `bce_with_logits` (kernels/bce.cu:19); for a safe `launch`, give each pointer the elements the kernel may access (`logits: &[f32; count]`) and write `#[kernel("bce.cu", unsafe(extents))]`
    #[kernel("bce.cu")] pub fn bce_with_logits(logits: &[f32], targets: &[f32], count: i32, loss: &mut [f32], g_logits: &mut [f32]);
}

/// The kernels of `kernels/cfc_step.cu`, as `kgraph declare` writes them.
#[kgraph::kernels]
pub mod cfc_step {
    // `cfc_step` (kernels/cfc_step.cu:62); for a safe `launch`, give each pointer the elements the kernel may access (`x: &[f32; batch]`) and write `#[kernel("cfc_step.cu", unsafe(extents))]`
    #[kernel("cfc_step.cu")] pub fn cfc_step(x: &[f32], h_old: &[f32], w_g: &[f32], b_g: &[f32], w_t: &[f32], b_t: &[f32], dt: &[f32], batch: i32, n_in: i32, n_hid: i32, h_new: &mut [f32]);
    // `cfc_step_save` (kernels/cfc_step.cu:77); for a safe `launch`, give each pointer the elements the kernel may access (`x: &[f32; batch]`) and write `#[kernel("cfc_step.cu", unsafe(extents))]`
    #[kernel("cfc_step.cu")] pub fn cfc_step_save(x: &[f32], h_old: &[f32], w_g: &[f32], b_g: &[f32], w_t: &[f32], b_t: &[f32], dt: &[f32], batch: i32, n_in: i32, n_hid: i32, h_new: &mut [f32], coeffs: &mut [f32]);
    // `cfc_step_backward_gates` (kernels/cfc_step.cu:131); for a safe `launch`, give each pointer the elements the kernel may access (`x: &[f32; batch]`) and write `#[kernel("cfc_step.cu", unsafe(extents))]`
    #[kernel("cfc_step.cu")] pub fn cfc_step_backward_gates(x: &[f32], h_old: &[f32], w_g: &[f32], b_g: &[f32], w_t: &[f32], b_t: &[f32], dt: &[f32], g_h_new: &[f32], batch: i32, n_in: i32, n_hid: i32, d_pre_g: &mut [f32], d_pre_t: &mut [f32], g_h_old: &mut [f32]);
    // `cfc_step_backward_pre` (kernels/cfc_step.cu:145); for a safe `launch`, give each pointer the elements the kernel may access (`x: &[f32; batch]`) and write `#[kernel("cfc_step.cu", unsafe(extents))]`
    #[kernel("cfc_step.cu")] pub fn cfc_step_backward_pre(x: &[f32], h_old: &[f32], w_g: &[f32], b_g: &[f32], w_t: &[f32], b_t: &[f32], dt: &[f32], g_h_new: &[f32], batch: i32, n_in: i32, n_hid: i32, d_pre_g: &mut [f32], d_pre_t: &mut [f32]);
    // `cfc_step_backward_params` (kernels/cfc_step.cu:235); for a safe `launch`, give each pointer the elements the kernel may access (`x: &[f32; batch]`) and write `#[kernel("cfc_step.cu", unsafe(extents))]`
    #[kernel("cfc_step.cu")] pub fn cfc_step_backward_params(x: &[f32], h_old: &[f32], w_g: &[f32], w_t: &[f32], d_pre_g: &[f32], d_pre_t: &[f32], batch: i32, n_in: i32, n_hid: i32, g_x: &mut [f32], g_h_old: &mut [f32], g_w_g: &mut [f32], g_b_g: &mut [f32], g_w_t: &mut [f32], g_b_t: &mut [f32]);
    // `cfc_step_backward_weights` (kernels/cfc_step.cu:277); for a safe `launch`, give each pointer the elements the kernel may access (`x: &[f32; batch]`) and write `#[kernel("cfc_step.cu", unsafe(extents))]`
    #[kernel("cfc_step.cu")] pub fn cfc_step_backward_weights(x: &[f32], h_old: &[f32], d_pre_g: &[f32], d_pre_t: &[f32], batch: i32, n_in: i32, n_hid: i32, g_w_g: &mut [f32], g_b_g: &mut [f32], g_w_t: &mut [f32], g_b_t: &mut [f32]);
    // `cfc_step_backward_weights_adamw` (kernels/cfc_step.cu:299); for a safe `launch`, give each pointer the elements the kernel may access (`x: &[f32; batch]`) and write `#[kernel("cfc_step.cu", unsafe(extents))]`
    #[kernel("cfc_step.cu")] pub fn cfc_step_backward_weights_adamw(x: &[f32], h_old: &[f32], d_pre_g: &[f32], d_pre_t: &[f32], g_w_h: &[f32], g_b_h: &[f32], schedule: &[f32], beta1: f32, beta2: f32, eps: f32, weight_decay: f32, batch: i32, n_in: i32, n_hid: i32, g_w_g: &mut [f32], g_b_g: &mut [f32], g_w_t: &mut [f32], g_b_t: &mut [f32], w_g: &mut [f32], m_w_g: &mut [f32], v_w_g: &mut [f32], b_g: &mut [f32], m_b_g: &mut [f32], v_b_g: &mut [f32], w_t: &mut [f32], m_w_t: &mut [f32], v_w_t: &mut [f32], b_t: &mut [f32], m_b_t: &mut [f32], v_b_t: &mut [f32], w_h: &mut [f32], m_w_h: &mut [f32], v_w_h: &mut [f32], b_h: &mut [f32], m_b_h: &mut [f32], v_b_h: &mut [f32]);
}

/// The kernels of `kernels/heads.cu`, as `kgraph declare` writes them.
#[kgraph::kernels]
pub mod heads {
    // `multi_horizon_heads` (kernels/heads.cu:53); for a safe `launch`, give each pointer the elements the kernel may access (`h: &[f32; batch]`) and write `#[kernel("heads.cu", unsafe(extents))]`
    #[kernel("heads.cu")] pub fn multi_horizon_heads(h: &[f32], w_h: &[f32], b_h: &[f32], batch: i32, n_hid: i32, logits: &mut [f32], probs: &mut [f32]);
    // `multi_horizon_heads_backward` (kernels/heads.cu:72); for a safe `launch`, give each pointer the elements the kernel may access (`h: &[f32; batch]`) and write `#[kernel("heads.cu", unsafe(extents))]`
    #[kernel("heads.cu")] pub fn multi_horizon_heads_backward(h: &[f32], w_h: &[f32], probs: &[f32], g_logits: &[f32], g_probs: &[f32], batch: i32, n_hid: i32, g_h: &mut [f32], g_w_h: &mut [f32], g_b_h: &mut [f32]);
    // `multi_horizon_heads_bce_backward` (kernels/heads.cu:115); for a safe `launch`, give each pointer the elements the kernel may access (`h: &[f32; batch]`) and write `#[kernel("heads.cu", unsafe(extents))]`
    #[kernel("heads.cu")] pub fn multi_horizon_heads_bce_backward(h: &[f32], w_h: &[f32], logits: &[f32], targets: &[f32], batch: i32, n_hid: i32, loss: &mut [f32], g_h: &mut [f32], g_w_h: &mut [f32], g_b_h: &mut [f32]);
    // `multi_horizon_heads_bce_cfc_backward` (kernels/heads.cu:143); for a safe `launch`, give each pointer the elements the kernel may access (`h: &[f32; batch]`) and write `#[kernel("heads.cu", unsafe(extents))]`
    #[kernel("heads.cu")] pub fn multi_horizon_heads_bce_cfc_backward(h: &[f32], w_h: &[f32], logits: &[f32], targets: &[f32], coeffs: &[f32], batch: i32, n_hid: i32, loss: &mut [f32], d_pre_g: &mut [f32], d_pre_t: &mut [f32], g_w_h: &mut [f32], g_b_h: &mut [f32]);
}

/// The kernels of `kernels/model_util.cu`, as `kgraph declare` writes them.
#[kgraph::kernels]
pub mod model_util {
    // `zero_f32` (kernels/model_util.cu:18); for a safe `launch`, give each pointer the elements the kernel may access (`x: &mut [f32; n]`) and write `#[kernel("model_util.cu", unsafe(extents))]`
    #[kernel("model_util.cu")] pub fn zero_f32(n: i32, x: &mut [f32]);
    // `copy_f32` (kernels/model_util.cu:26); for a safe `launch`, give each pointer the elements the kernel may access (`src: &[f32; n]`) and write `#[kernel("model_util.cu", unsafe(extents))]`
    #[kernel("model_util.cu")] pub fn copy_f32(src: &[f32], n: i32, dst: &mut [f32]);
}

/// The kernels of `kernels/perception_fused.cu`, as `kgraph declare` writes them.
#[kgraph::kernels]
pub mod perception_fused {
    // `perception_fused` (kernels/perception_fused.cu:30); for a safe `launch`, give each pointer the elements the kernel may access (`snap: &[f32; batch]`) and write `#[kernel("perception_fused.cu", unsafe(extents))]`
    #[kernel("perception_fused.cu")] pub fn perception_fused(snap: &[f32], dt: &[f32], h: &mut [f32], w_g: &[f32], b_g: &[f32], w_t: &[f32], b_t: &[f32], w_h: &[f32], b_h: &[f32], p: &[f32], c: &[f32], batch: i32, n_hid: i32, probs: &mut [f32], y: &mut [f32]);
}

/// The kernels of `kernels/perception_resident.cu`, as `kgraph declare` writes them.
#[kgraph::kernels]
pub mod perception_resident {
    // not declared: `perception_resident` (kernels/perception_resident.cu:56): cannot read parameter 4 (kernels/perception_resident.cu:56): kgraph cannot read `::` as part of a C parameter type. Way out: write the parameter as `<type> <name>` with a C type kgraph passes (`const float* x`, `int n`); preprocessor constructs are resolved when the build leaves the preprocessed source (`<stem>.i`, with nvcc)
}

/// The kernels of `kernels/ppo.cu`, as `kgraph declare` writes them.
#[kgraph::kernels]
pub mod ppo {
    // `ppo_linear_forward` (kernels/ppo.cu:112); for a safe `launch`, give each pointer the elements the kernel may access (`params: &[f32; w_off]`) and write `#[kernel("ppo.cu", unsafe(extents))]`
    #[kernel("ppo.cu")] pub fn ppo_linear_forward(params: &[f32], x: &[f32], w_off: i32, batch: i32, n_in: i32, n_out: i32, act: i32, y: &mut [f32]);
    // `ppo_linear_backward` (kernels/ppo.cu:155); for a safe `launch`, give each pointer the elements the kernel may access (`params: &[f32; w_off]`) and write `#[kernel("ppo.cu", unsafe(extents))]`
    #[kernel("ppo.cu")] pub fn ppo_linear_backward(params: &[f32], x: &[f32], y: &[f32], g_y: &[f32], w_off: i32, batch: i32, n_in: i32, n_out: i32, act: i32, g_x: &mut [f32], grads: &mut [f32]);
    // `ppo_linear_backward_params` (kernels/ppo.cu:184); for a safe `launch`, give each pointer the elements the kernel may access (`x: &[f32; w_off]`) and write `#[kernel("ppo.cu", unsafe(extents))]`
    #[kernel("ppo.cu")] pub fn ppo_linear_backward_params(x: &[f32], y: &[f32], g_y: &[f32], w_off: i32, batch: i32, n_in: i32, n_out: i32, act: i32, grads: &mut [f32]);
    // `ppo_policy_head` (kernels/ppo.cu:200); for a safe `launch`, give each pointer the elements the kernel may access (`logits: &[f32; batch]`) and write `#[kernel("ppo.cu", unsafe(extents))]`
    #[kernel("ppo.cu")] pub fn ppo_policy_head(logits: &[f32], batch: i32, n_act: i32, log_probs: &mut [f32], probs: &mut [f32], entropy: &mut [f32]);
    // `ppo_loss_forward` (kernels/ppo.cu:294) takes the read-only integer array `actions`: if the kernel indexes other buffers by its values (CSR row pointers, a gather by index) without checking each index, no extents can make `launch` safe (the promise holds for any contents); keep the `unsafe fn launch` and state its contract at each call (docs/safety.md, "Indices read from memory"). Where the kernel checks every index against the extent, add extents and `unsafe(extents)` as usual.
    #[kernel("ppo.cu")] pub fn ppo_loss_forward(log_probs: &[f32], entropy: &[f32], values: &[f32], actions: &[i32], old_log_probs: &[f32], advantages: &[f32], returns: &[f32], clip_eps: f32, vf_coef: f32, ent_coef: f32, batch: i32, n_act: i32, sample_loss: &mut [f32], stats: &mut [f32]);
    // `ppo_loss_backward` (kernels/ppo.cu:331) takes the read-only integer array `actions`: if the kernel indexes other buffers by its values (CSR row pointers, a gather by index) without checking each index, no extents can make `launch` safe (the promise holds for any contents); keep the `unsafe fn launch` and state its contract at each call (docs/safety.md, "Indices read from memory"). Where the kernel checks every index against the extent, add extents and `unsafe(extents)` as usual.
    #[kernel("ppo.cu")] pub fn ppo_loss_backward(log_probs: &[f32], probs: &[f32], entropy: &[f32], values: &[f32], actions: &[i32], old_log_probs: &[f32], advantages: &[f32], returns: &[f32], clip_eps: f32, vf_coef: f32, ent_coef: f32, batch: i32, n_act: i32, g_logits: &mut [f32], g_values: &mut [f32]);
    // `ppo_heads_loss_backward` (kernels/ppo.cu:373) takes the read-only integer array `actions`: if the kernel indexes other buffers by its values (CSR row pointers, a gather by index) without checking each index, no extents can make `launch` safe (the promise holds for any contents); keep the `unsafe fn launch` and state its contract at each call (docs/safety.md, "Indices read from memory"). Where the kernel checks every index against the extent, add extents and `unsafe(extents)` as usual.
    #[kernel("ppo.cu")] pub fn ppo_heads_loss_backward(actor: &[f32], a_h1: &[f32], a_off: i32, critic: &[f32], c_h1: &[f32], c_off: i32, actions: &[i32], old_log_probs: &[f32], advantages: &[f32], returns: &[f32], clip_eps: f32, vf_coef: f32, ent_coef: f32, batch: i32, n_hid: i32, n_act: i32, logits: &mut [f32], log_probs: &mut [f32], probs: &mut [f32], entropy: &mut [f32], values: &mut [f32], g_logits: &mut [f32], g_values: &mut [f32]);
    // `ppo_gae` (kernels/ppo.cu:445); for a safe `launch`, give each pointer the elements the kernel may access (`rewards: &[f32; t_steps]`) and write `#[kernel("ppo.cu", unsafe(extents))]`
    #[kernel("ppo.cu")] pub fn ppo_gae(rewards: &[f32], values: &[f32], dones: &[f32], gamma: f32, lambda: f32, t_steps: i32, n_envs: i32, advantages: &mut [f32], returns: &mut [f32]);
    // `ppo_normalize_advantages` (kernels/ppo.cu:472); for a safe `launch`, give each pointer the elements the kernel may access (`adv: &[f32; n]`) and write `#[kernel("ppo.cu", unsafe(extents))]`
    #[kernel("ppo.cu")] pub fn ppo_normalize_advantages(adv: &[f32], n: i32, eps: f32, out: &mut [f32]);
    // `ppo_gather_minibatch` (kernels/ppo.cu:499) takes the read-only integer arrays `perm`, `mb_sel`, `actions`: if the kernel indexes other buffers by their values (CSR row pointers, a gather by index) without checking each index, no extents can make `launch` safe (the promise holds for any contents); keep the `unsafe fn launch` and state its contract at each call (docs/safety.md, "Indices read from memory"). Where the kernel checks every index against the extent, add extents and `unsafe(extents)` as usual.
    #[kernel("ppo.cu")] pub fn ppo_gather_minibatch(perm: &[i32], mb_sel: &[i32], obs: &[f32], actions: &[i32], old_log_probs: &[f32], advantages: &[f32], returns: &[f32], n: i32, n_obs: i32, n_perm: i32, mb_size: i32, mb_obs: &mut [f32], mb_actions: &mut [i32], mb_old_log_probs: &mut [f32], mb_advantages: &mut [f32], mb_returns: &mut [f32]);
    // `ppo_minibatch_begin` (kernels/ppo.cu:531); for a safe `launch`, give each pointer the elements the kernel may access (`counters: &mut [i32; 1024]`) and write `#[kernel("ppo.cu", unsafe(extents))]`
    #[kernel("ppo.cu")] pub fn ppo_minibatch_begin(lr: f32, beta1: f32, beta2: f32, counters: &mut [i32], mb_sel: &mut [i32], schedule: &mut [f32]);
}

/// The kernels of `kernels/projection.cu`, as `kgraph declare` writes them.
#[kgraph::kernels]
pub mod projection {
    // `projection` (kernels/projection.cu:30); for a safe `launch`, give each pointer the elements the kernel may access (`h: &[f32; batch]`) and write `#[kernel("projection.cu", unsafe(extents))]`
    #[kernel("projection.cu")] pub fn projection(h: &[f32], p: &[f32], c: &[f32], batch: i32, n_hid: i32, y: &mut [f32]);
    // `projection_backward` (kernels/projection.cu:42); for a safe `launch`, give each pointer the elements the kernel may access (`h: &[f32; batch]`) and write `#[kernel("projection.cu", unsafe(extents))]`
    #[kernel("projection.cu")] pub fn projection_backward(h: &[f32], p: &[f32], g_y: &[f32], batch: i32, n_hid: i32, g_h: &mut [f32], g_p: &mut [f32], g_c: &mut [f32]);
}

/// The kernels of `kernels/saxpy.cu`, as `kgraph declare` writes them.
#[kgraph::kernels]
pub mod saxpy {
    // `saxpy` (kernels/saxpy.cu:3); for a safe `launch`, give each pointer the elements the kernel may access (`x: &[f32; n]`) and write `#[kernel("saxpy.cu", unsafe(extents))]`
    #[kernel("saxpy.cu")] pub fn saxpy(a: f32, x: &[f32], y: &mut [f32], n: i32);
}

/// The kernels of `kernels/snap_features.cu`, as `kgraph declare` writes them.
#[kgraph::kernels]
pub mod snap_features {
    // `snap_feature_assemble` (kernels/snap_features.cu:30); for a safe `launch`, give each pointer the elements the kernel may access (`snap: &[f32; batch]`) and write `#[kernel("snap_features.cu", unsafe(extents))]`
    #[kernel("snap_features.cu")] pub fn snap_feature_assemble(snap: &[f32], batch: i32, feat: &mut [f32]);
    // `snap_feature_assemble_dt` (kernels/snap_features.cu:59); for a safe `launch`, give each pointer the elements the kernel may access (`snap: &[f32; batch]`) and write `#[kernel("snap_features.cu", unsafe(extents))]`
    #[kernel("snap_features.cu")] pub fn snap_feature_assemble_dt(snap: &[f32], dt_src: &[f32], batch: i32, feat: &mut [f32], dt_dst: &mut [f32]);
}

/// The kernels of `kernels/train_forward.cu`, as `kgraph declare` writes them.
#[kgraph::kernels]
pub mod train_forward {
    // `train_forward` (kernels/train_forward.cu:29); for a safe `launch`, give each pointer the elements the kernel may access (`snap: &[f32; batch]`) and write `#[kernel("train_forward.cu", unsafe(extents))]`
    #[kernel("train_forward.cu")] pub fn train_forward(snap: &[f32], h0: &[f32], w_g: &[f32], b_g: &[f32], w_t: &[f32], b_t: &[f32], dt: &[f32], w_h: &[f32], b_h: &[f32], batch: i32, n_hid: i32, feat: &mut [f32], h1: &mut [f32], coeffs: &mut [f32], logits: &mut [f32], probs: &mut [f32]);
}
