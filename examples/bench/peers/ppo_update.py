#!/usr/bin/env python3
"""PyTorch peer of kgraph's PPO update (`graphs/ppo_update.toml`, `examples/ppo.rs`), timed on the same GPU.

    python3 examples/bench/peers/ppo_update.py [--json out.json] [--iters N] [--warmup N]

One PPO update: a rollout of N = 1024 samples, 4 epochs x 8 minibatches of 128 = 32 optimizer
steps, all float32 on CUDA, the same math as kgraph's kernels (kernels/ppo.cu):

    minibatch k: rows perm[k * 128 : (k + 1) * 128] of the rollout (perm: 4 shuffles of 0..N)
    adv = (adv - mean) / (std + 1e-8)                         (unbiased std, per minibatch)
    actor  = Linear(16, 64) tanh Linear(64, 64) tanh Linear(64, 4) -> log_softmax, entropy
    critic = Linear(16, 64) tanh Linear(64, 64) tanh Linear(64, 1) -> value
    ratio = exp(logp(a) - old_logp)
    loss = mean(-min(ratio A, clip(ratio, 0.8, 1.2) A)) + 0.5 * mean(0.5 (V - R)^2) - 0.01 * mean(H)
    backward (autograd), AdamW(lr 1e-3, betas (0.9, 0.999), eps 1e-5, weight decay 0)

Variants (each prints `name value unit` lines like kgraph's bench):

    torch_ppo_update_eager                   eager autograd, 32 Python-driven steps, AdamW(foreach=True)
    torch_ppo_update_eager_fused             the same with AdamW(fused=True)
    torch_ppo_update_cuda_graph              all 32 steps captured in ONE torch.cuda.graph, replayed
                                             once per update (what kgraph's update becomes with
                                             the WHILE node), AdamW(foreach=True, capturable=True)
    torch_ppo_update_cuda_graph_per_minibatch  one step captured (minibatch index on the device,
                                             advanced in the graph), replayed 32 times per update
                                             (what kgraph's examples/ppo.rs does today)

Per variant, in microseconds per UPDATE (32 minibatch steps):
    <name>            median over --iters updates of the CUDA-event time of one update (stream
                      synchronised after each)
    <name>_host       median host wall time of one update: launches + torch.cuda.synchronize()
                      (kgraph's `--bench` times `kgraph_ppo_update_replay_loop` this way)
and, to show the update trains: the last minibatch's loss of the first and the last timed
update on the same rollout (it falls: the policy fits the fixed advantages), and the kernel and
CUDA-graph launch counts of one update from torch.profiler.

fp32 throughout, TF32 off (as train_step.py). This is a benchmark, not an oracle: kgraph's PPO
kernels are validated by their own invariant and finite-difference tests (tests/gpu/ppo.rs).
"""

import argparse
import json
import math
import statistics
import sys
import time
import traceback

import torch
import torch.nn.functional as F

# ---- Sizes (graphs/ppo_update.toml [dims]) and hyper-parameters ([scalars], examples/ppo.rs) --
N_ROLLOUT = 1024
EPOCHS = 4
MB = 128
N_MB = EPOCHS * N_ROLLOUT // MB  # 32 optimizer steps per update
N_OBS = 16
N_HID = 64
N_ACT = 4
LR = 1e-3
BETAS = (0.9, 0.999)
ADAM_EPS = 1e-5
WEIGHT_DECAY = 0.0  # torch.optim.AdamW defaults to 0.01: pass 0.0 explicitly
CLIP = 0.2
VF_COEF = 0.5
ENT_COEF = 0.01
ADV_EPS = 1e-8


def set_fp32_ieee():
    if hasattr(torch.backends.cuda.matmul, "fp32_precision"):
        torch.backends.cuda.matmul.fp32_precision = "ieee"
        return "fp32 matmul: ieee (TF32 off)"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    return "fp32 matmul: highest (TF32 off)"


def mlp(n_out, out_gain, g):
    """kgraph_model::ppo::MlpLayout::init's law: uniform +-gain/sqrt(fan_in), zero biases."""
    net = torch.nn.Sequential(
        torch.nn.Linear(N_OBS, N_HID), torch.nn.Tanh(),
        torch.nn.Linear(N_HID, N_HID), torch.nn.Tanh(),
        torch.nn.Linear(N_HID, n_out),
    )
    with torch.no_grad():
        for i, layer in enumerate([net[0], net[2], net[4]]):
            a = (out_gain if i == 2 else 1.0) / math.sqrt(layer.in_features)
            layer.weight.copy_(torch.rand(layer.weight.shape, generator=g) * 2 * a - a)
            layer.bias.zero_()
    return net


def bandit_rollout(actor, critic, g, device):
    """A rollout of the example's bandit (examples/ppo.rs) under the initial policy: one-hot
    contexts, sampled actions, old log-probs, advantages r - V and returns r (every step is
    terminal, so GAE reduces to these)."""
    best = torch.tensor([(7 * c + 3) % N_ACT for c in range(N_OBS)])
    reward = torch.tensor([[1.0 if a == best[c] else [0.1, 0.3, 0.5][(c + 2 * a) % 3] for a in range(N_ACT)]
                           for c in range(N_OBS)])
    ctx = torch.randint(0, N_OBS, (N_ROLLOUT,), generator=g)
    obs = F.one_hot(ctx, N_OBS).float().to(device)
    with torch.no_grad():
        logp = F.log_softmax(actor(obs), dim=1)
        actions = torch.multinomial(logp.exp().cpu(), 1, generator=g).squeeze(1)
        r = reward[ctx, actions] + 0.1 * (torch.rand(N_ROLLOUT, generator=g) * 2 - 1)
        values = critic(obs).squeeze(1).cpu()
    actions = actions.to(device)
    old = logp.gather(1, actions.unsqueeze(1)).squeeze(1)
    return {
        "obs": obs, "actions": actions, "old_log_probs": old,
        "advantages": (r - values).to(device), "returns": r.to(device),
    }


def shuffles(g, device):
    return torch.cat([torch.randperm(N_ROLLOUT, generator=g) for _ in range(EPOCHS)]).to(device)


def minibatch_loss(actor, critic, data, idx):
    """Forward + loss of one minibatch (rows idx of the rollout); returns the loss tensor."""
    obs = data["obs"].index_select(0, idx)
    actions = data["actions"].index_select(0, idx)
    old = data["old_log_probs"].index_select(0, idx)
    adv = data["advantages"].index_select(0, idx)
    ret = data["returns"].index_select(0, idx)
    adv = (adv - adv.mean()) / (adv.std() + ADV_EPS)
    logp_all = F.log_softmax(actor(obs), dim=1)
    entropy = -(logp_all.exp() * logp_all).sum(1)
    ratio = torch.exp(logp_all.gather(1, actions.unsqueeze(1)).squeeze(1) - old)
    pg = -torch.min(ratio * adv, torch.clamp(ratio, 1 - CLIP, 1 + CLIP) * adv).mean()
    v = 0.5 * ((critic(obs).squeeze(1) - ret) ** 2).mean()
    return pg + VF_COEF * v - ENT_COEF * entropy.mean()


class Runner:
    """Eager: 32 Python-driven minibatch steps per update."""

    def __init__(self, init, data, perm, device, **adamw):
        self.actor = mlp(N_ACT, 0.01, torch.Generator().manual_seed(0)).to(device)
        self.critic = mlp(1, 1.0, torch.Generator().manual_seed(0)).to(device)
        self.actor.load_state_dict(init[0])
        self.critic.load_state_dict(init[1])
        self.init = init
        self.params = list(self.actor.parameters()) + list(self.critic.parameters())
        self.opt = torch.optim.AdamW(self.params, lr=LR, betas=BETAS, eps=ADAM_EPS, weight_decay=WEIGHT_DECAY, **adamw)
        self.data, self.perm = data, perm
        self.loss = torch.zeros((), device=device)

    def step(self, idx, set_to_none=True):
        self.opt.zero_grad(set_to_none=set_to_none)
        loss = minibatch_loss(self.actor, self.critic, self.data, idx)
        loss.backward()
        self.opt.step()
        return loss

    def update(self):
        for k in range(N_MB):
            loss = self.step(self.perm[k * MB:(k + 1) * MB])
        self.loss = loss.detach()
        return self.loss

    @torch.no_grad()
    def reset(self):
        self.actor.load_state_dict(self.init[0])
        self.critic.load_state_dict(self.init[1])
        for state in self.opt.state.values():
            for v in state.values():
                if torch.is_tensor(v):
                    v.zero_()


class GraphRunner(Runner):
    """CUDA-graphed, PyTorch's whole-network capture recipe (side-stream warm-up, static
    inputs, capturable AdamW). per_minibatch=False: all 32 steps unrolled in one graph (the
    minibatch slices of the static perm are fixed views). per_minibatch=True: one step whose
    minibatch index k lives on the device and is advanced inside the graph, replayed 32 times."""

    def __init__(self, init, data, perm, device, per_minibatch, **adamw):
        super().__init__(init, data, perm, device, capturable=True, **adamw)
        self.per_minibatch = per_minibatch
        self.k = torch.zeros((), dtype=torch.long, device=device)
        self.perm2d = perm.view(N_MB, MB)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                super().update()
        torch.cuda.current_stream().wait_stream(s)
        self.reset()
        self.graph = torch.cuda.CUDAGraph()
        self.opt.zero_grad(set_to_none=False)  # gradients keep their addresses inside the graph
        with torch.cuda.graph(self.graph):
            if per_minibatch:
                idx = self.perm2d.index_select(0, self.k.view(1)).view(MB)
                self.static_loss = self.step(idx, set_to_none=False)
                self.k.copy_((self.k + 1) % N_MB)
            else:
                for k in range(N_MB):
                    self.static_loss = self.step(self.perm2d[k], set_to_none=False)
        torch.cuda.synchronize()

    def update(self):
        if self.per_minibatch:
            for _ in range(N_MB):
                self.graph.replay()
        else:
            self.graph.replay()
        return self.static_loss

    def reset(self):
        super().reset()
        self.k.zero_()


def time_updates(runner, iters, warmup):
    runner.reset()
    losses = []
    for _ in range(warmup):
        runner.update()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ev, host = [], []
    for i in range(iters):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        start.record()
        loss = runner.update()
        end.record()
        end.synchronize()
        host.append((time.perf_counter() - t0) * 1e6)
        ev.append(start.elapsed_time(end) * 1e3)
        if i in (0, iters - 1):
            losses.append(float(loss))
    return statistics.median(ev), statistics.median(host), losses


def profile_update(runner):
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        runner.update()
        torch.cuda.synchronize()
    kernels = launches = 0
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            if not e.name.startswith(("Memcpy", "Memset")):
                kernels += 1
        elif e.name in ("cudaGraphLaunch", "cuGraphLaunch"):
            launches += 1
    return kernels, launches


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iters", type=int, default=300, help="timed updates per variant (default 300)")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--variants", default="all", help="comma list of eager,eager_fused,cuda_graph,cuda_graph_per_minibatch")
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args()
    if args.iters < 2 or args.warmup < 0:
        ap.error("need --iters >= 2, --warmup >= 0")
    print(f"torch {torch.__version__} (CUDA {torch.version.cuda})", flush=True)
    if not torch.cuda.is_available():
        print("ppo_update.py: no CUDA device", file=sys.stderr)
        return 1
    device = torch.device("cuda")
    name = torch.cuda.get_device_name(device)
    print(f"device {name}", flush=True)
    precision = set_fp32_ieee()
    print(precision, flush=True)
    print(f"rollout {N_ROLLOUT}, {EPOCHS} epochs x {N_ROLLOUT // MB} minibatches of {MB}; MLPs {N_OBS}-{N_HID}-{N_HID}-"
          f"{N_ACT}|1 tanh; AdamW lr {LR} eps {ADAM_EPS}; clip {CLIP}, vf {VF_COEF}, ent {ENT_COEF}", flush=True)

    g = torch.Generator().manual_seed(args.seed)
    actor, critic = mlp(N_ACT, 0.01, g).to(device), mlp(1, 1.0, g).to(device)
    init = ({k: v.clone() for k, v in actor.state_dict().items()}, {k: v.clone() for k, v in critic.state_dict().items()})
    data = bandit_rollout(actor, critic, g, device)
    perm = shuffles(g, device)

    variants = [
        ("torch_ppo_update_eager", lambda: Runner(init, data, perm, device, foreach=True)),
        ("torch_ppo_update_eager_fused", lambda: Runner(init, data, perm, device, fused=True)),
        ("torch_ppo_update_cuda_graph", lambda: GraphRunner(init, data, perm, device, False, foreach=True)),
        ("torch_ppo_update_cuda_graph_per_minibatch", lambda: GraphRunner(init, data, perm, device, True, foreach=True)),
    ]
    wanted = None if args.variants == "all" else {"torch_ppo_update_" + v.strip() for v in args.variants.split(",")}
    figures, skipped = [], {}

    def add(fig, value, unit):
        fmt = {"count": "{:.0f}", "loss": "{:.5f}"}.get(unit, "{:.3f}")
        print(f"{fig} {fmt.format(value)} {unit}", flush=True)
        figures.append({"name": fig, "value": float(value), "unit": unit})

    for vname, make in variants:
        if wanted is not None and vname not in wanted:
            continue
        runner = None
        try:
            runner = make()
            event_us, host_us, losses = time_updates(runner, args.iters, args.warmup)
            add(vname, event_us, "us")
            add(vname + "_host", host_us, "us")
            if not all(math.isfinite(v) for v in losses):
                raise RuntimeError(f"non-finite loss {losses}")
            add(vname + "_loss_first_update", losses[0], "loss")
            add(vname + "_loss_last_update", losses[-1], "loss")
            try:
                kernels, launches = profile_update(runner)
                add(vname + "_kernels", kernels, "count")
                add(vname + "_graph_launches", launches, "count")
            except Exception as e:  # noqa: BLE001 - informative only
                skipped[vname + "_kernels"] = f"profiler: {e}"
        except Exception as e:  # noqa: BLE001 - a variant that cannot run is reported, not fatal
            traceback.print_exc(file=sys.stderr)
            reason = " ".join(f"{type(e).__name__}: {e}".split())[:300]
            print(f"{vname} skipped {reason}", flush=True)
            skipped[vname] = reason
        finally:
            runner = None
            torch.cuda.synchronize()
            torch.cuda.empty_cache()

    if args.json:
        doc = {"device": name, "torch": torch.__version__, "cuda": torch.version.cuda,
               "settings": {"n_rollout": N_ROLLOUT, "epochs": EPOCHS, "mb": MB, "n_obs": N_OBS, "n_hid": N_HID,
                            "n_act": N_ACT, "lr": LR, "adam_eps": ADAM_EPS, "clip": CLIP, "vf_coef": VF_COEF,
                            "ent_coef": ENT_COEF, "iters": args.iters, "warmup": args.warmup, "seed": args.seed,
                            "precision": precision},
               "figures": figures, "skipped": skipped}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
        print(f"wrote {args.json}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
