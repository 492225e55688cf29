#!/usr/bin/env python3
"""PyTorch peer of kgraph's MLP example (`cargo run --release --example mlp`), timed on the same GPU.

    python3 examples/bench/peers/mlp_step.py [--json out.json] [--iters N] [--warmup N]

One training step of a tanh MLP policy/value network, all float32 on CUDA, the same math as
`examples/mlp/mlp_train.toml` (`kgraph_model::mlp::MlpTrain`):

    x [4096, 64] -> tanh(x W1^T + b1) [4096, 512] -> tanh(. W2^T + b2) [4096, 512]
                 -> out = . W3^T + b3 [4096, 8]       (output 0: value, 1..7: policy logits)
    loss = 0.5 * sum((out - target)^2) / 4096          (sum over the 8 outputs, mean over the batch)
    target[:, j] = sin(2 <u_j, x>), x ~ U[-1, 1]^64, u_j ~ U[-sqrt(3/64), sqrt(3/64)]^64 (fixed)
    backward (autograd), AdamW(lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight decay 0.01)

Weights uniform in +-1/sqrt(fan_in), biases zero (kgraph_model::mlp::MlpWeights::init's law, with
PyTorch's generator: the curves match kgraph's in shape, not value). One fixed batch, resident
on the device, as in the kgraph example.

Variants (each prints `name value unit` lines like kgraph's example and bench):

    torch_mlp_step_eager               eager autograd, AdamW(foreach=True)
    torch_mlp_step_eager_fused         eager autograd, AdamW(fused=True)
    torch_mlp_step_cuda_graph          whole step captured with torch.cuda.graph,
                                       AdamW(foreach=True, capturable=True)
    torch_mlp_step_cuda_graph_fused    the same with AdamW(fused=True, capturable=True)

Per variant, in microseconds:
    <name>            median over --iters steps of the CUDA-event time of one step (synchronised
                      after every step)
    <name>_host       median host wall time of one step: launch + torch.cuda.synchronize()
                      (kgraph_mlp_step is timed this way)
    <name>_pipelined  CUDA-event time of --iters back-to-back steps / --iters
                      (kgraph_mlp_step_pipelined)
and the loss at step 1 and after --train-steps steps from the initial weights, with their ratio.

fp32 throughout: TF32 is OFF for matmuls (the kgraph spec's GEMM nodes use compute = "f32", IEEE),
via `torch.backends.cuda.matmul.fp32_precision = "ieee"` where that API exists (PyTorch >= 2.9),
else `torch.backends.cuda.matmul.allow_tf32 = False`.

A benchmark, not an oracle: kgraph's kernels are validated by their own tests (tests/gpu/mlp.rs).
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

# ---- Sizes and optimiser (examples/mlp/mlp_train.toml [dims], [scalars]) -------------------
BATCH = 4096
N_IN = 64
N_HID = 512
N_OUT = 8
LR = 1e-3
BETAS = (0.9, 0.999)
EPS = 1e-8
WEIGHT_DECAY = 0.01  # the spec's weight_decay (torch's own AdamW default too)


def set_fp32_ieee():
    """Turns TF32 off for fp32 matmuls; returns a line saying how."""
    if hasattr(torch.backends.cuda.matmul, "fp32_precision"):
        torch.backends.cuda.matmul.fp32_precision = "ieee"
        return "fp32 matmul: ieee (TF32 off, torch.backends.cuda.matmul.fp32_precision)"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    return "fp32 matmul: highest (TF32 off, torch.backends.cuda.matmul.allow_tf32 = False)"


def make_data(seed, device):
    """(x, target): kgraph_model::mlp::TargetLaw's law, drawn with PyTorch's generator."""
    g = torch.Generator().manual_seed(seed)
    bound = math.sqrt(3.0 / N_IN)
    u = (torch.rand(N_OUT, N_IN, generator=g, dtype=torch.float64) * 2 - 1) * bound
    x = torch.rand(BATCH, N_IN, generator=g, dtype=torch.float64) * 2 - 1
    x = x.float().double()  # the target of the float32 inputs the network sees, as kgraph's host does
    target = torch.sin(2.0 * x @ u.T)
    return x.float().to(device), target.float().to(device)


def initial_weights(seed):
    """Uniform +-1/sqrt(fan_in) weights [out, in], zero biases (MlpWeights::init's law)."""
    g = torch.Generator().manual_seed(seed + 1)

    def uniform(rows, fan_in):
        b = 1.0 / math.sqrt(fan_in)
        return (torch.rand(rows, fan_in, generator=g) * 2 - 1) * b

    return {
        "w1": uniform(N_HID, N_IN), "b1": torch.zeros(N_HID),
        "w2": uniform(N_HID, N_HID), "b2": torch.zeros(N_HID),
        "w3": uniform(N_OUT, N_HID), "b3": torch.zeros(N_OUT),
    }


class Mlp(torch.nn.Module):
    def __init__(self, init):
        super().__init__()
        self.w1 = torch.nn.Parameter(init["w1"].clone())
        self.b1 = torch.nn.Parameter(init["b1"].clone())
        self.w2 = torch.nn.Parameter(init["w2"].clone())
        self.b2 = torch.nn.Parameter(init["b2"].clone())
        self.w3 = torch.nn.Parameter(init["w3"].clone())
        self.b3 = torch.nn.Parameter(init["b3"].clone())

    def forward(self, x):
        h1 = torch.tanh(F.linear(x, self.w1, self.b1))
        h2 = torch.tanh(F.linear(h1, self.w2, self.b2))
        return F.linear(h2, self.w3, self.b3)


def train_loss(model, x, target):
    d = model(x) - target
    return 0.5 * (d * d).sum() / x.shape[0]


class Runner:
    def __init__(self, init, x, target, device, **adamw_kwargs):
        self.init = {k: v.to(device) for k, v in init.items()}
        self.x, self.target = x, target
        self.model = Mlp(self.init).to(device)
        self.opt = torch.optim.AdamW(
            self.model.parameters(), lr=LR, betas=BETAS, eps=EPS, weight_decay=WEIGHT_DECAY, **adamw_kwargs
        )

    def eager_step(self):
        self.opt.zero_grad(set_to_none=True)
        loss = train_loss(self.model, self.x, self.target)
        loss.backward()
        self.opt.step()
        return loss

    step = eager_step

    @torch.no_grad()
    def reset(self):
        """In place: weights back to the initial values, AdamW moments and step counts to zero."""
        for name, p in self.model.named_parameters():
            p.copy_(self.init[name])
        for state in self.opt.state.values():
            for v in state.values():
                if torch.is_tensor(v):
                    v.zero_()


class GraphRunner(Runner):
    """The whole step in one CUDA graph (PyTorch's whole-network capture recipe: side-stream
    warm-up, zero_grad(set_to_none=True), capture forward + backward + optimizer.step()), with
    AdamW(capturable=True) so its step counts live on the device, like kgraph's `step` buffer."""

    def __init__(self, init, x, target, device, **adamw_kwargs):
        super().__init__(init, x, target, device, capturable=True, **adamw_kwargs)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                self.eager_step()
        torch.cuda.current_stream().wait_stream(s)
        self.graph = torch.cuda.CUDAGraph()
        self.opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(self.graph):
            self.static_loss = train_loss(self.model, self.x, self.target)
            self.static_loss.backward()
            self.opt.step()
        torch.cuda.synchronize()

    def step(self):
        self.graph.replay()
        return self.static_loss


def loss_run(runner, steps):
    """(loss of step 1, loss of the last step) from the initial weights."""
    runner.reset()
    first = runner.step().detach().clone()
    last = first
    for _ in range(steps - 1):
        last = runner.step()
    return first.item(), last.detach().clone().item()


def time_steps(runner, iters, warmup):
    """(event median us, host median us, pipelined us per step)."""
    for _ in range(warmup):
        runner.step()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    ev, host = [], []
    for _ in range(iters):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        start.record()
        runner.step()
        end.record()
        end.synchronize()
        host.append((time.perf_counter() - t0) * 1e6)
        ev.append(start.elapsed_time(end) * 1e3)
    torch.cuda.synchronize()
    start.record()
    for _ in range(iters):
        runner.step()
    end.record()
    end.synchronize()
    return statistics.median(ev), statistics.median(host), start.elapsed_time(end) * 1e3 / iters


class Report:
    def __init__(self):
        self.figures = []
        self.skipped = {}

    FORMATS = {"loss": "{:.6f}", "ratio": "{:.5f}"}

    def add(self, name, value, unit):
        fmt = self.FORMATS.get(unit, "{:.3f}")
        print(f"{name} {fmt.format(value)} {unit}", flush=True)
        self.figures.append({"name": name, "value": float(value), "unit": unit})

    def skip(self, name, reason):
        reason = " ".join(str(reason).split())[:300]
        print(f"{name} skipped {reason}", flush=True)
        self.skipped[name] = reason


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iters", type=int, default=1000, help="timed steps per variant (default 1000)")
    ap.add_argument("--warmup", type=int, default=100, help="untimed steps first (default 100)")
    ap.add_argument("--train-steps", type=int, default=1000, help="steps of the loss run (default 1000)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--variants", default="all", help="comma list of eager,eager_fused,cuda_graph,cuda_graph_fused")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = ap.parse_args()
    if args.iters < 1 or args.warmup < 0 or args.train_steps < 2:
        ap.error("need --iters >= 1, --warmup >= 0, --train-steps >= 2")

    print(f"torch {torch.__version__} (CUDA {torch.version.cuda})", flush=True)
    if not torch.cuda.is_available():
        print("mlp_step.py: no CUDA device", file=sys.stderr)
        return 1
    device = torch.device("cuda")
    device_name = torch.cuda.get_device_name(device)
    print(f"device {device_name}", flush=True)
    precision = set_fp32_ieee()
    print(precision, flush=True)
    print(f"batch {BATCH}, {N_IN} -> {N_HID} -> {N_HID} -> {N_OUT}; AdamW lr {LR} betas {BETAS} eps {EPS} "
          f"weight_decay {WEIGHT_DECAY}; iters {args.iters}, warmup {args.warmup}, "
          f"train steps {args.train_steps}", flush=True)

    x, target = make_data(args.seed, device)
    init = initial_weights(args.seed)
    variants = [
        ("torch_mlp_step_eager", lambda: Runner(init, x, target, device, foreach=True)),
        ("torch_mlp_step_eager_fused", lambda: Runner(init, x, target, device, fused=True)),
        ("torch_mlp_step_cuda_graph", lambda: GraphRunner(init, x, target, device, foreach=True)),
        ("torch_mlp_step_cuda_graph_fused", lambda: GraphRunner(init, x, target, device, fused=True)),
    ]
    wanted = None if args.variants == "all" else {"torch_mlp_step_" + v.strip() for v in args.variants.split(",")}
    if wanted is not None:
        unknown = wanted - {name for name, _ in variants}
        if unknown:
            ap.error(f"unknown variant(s): {', '.join(sorted(unknown))}")

    report = Report()
    for name, make in variants:
        if wanted is not None and name not in wanted:
            continue
        runner = None
        try:
            runner = make()
            first, last = loss_run(runner, args.train_steps)
            if not (math.isfinite(first) and math.isfinite(last)):
                raise RuntimeError(f"non-finite loss: {first} -> {last}")
            report.add(name + "_loss_step1", first, "loss")
            report.add(name + "_loss_last", last, "loss")
            report.add(name + "_loss_ratio", last / first, "ratio")
            event_us, host_us, pipelined_us = time_steps(runner, args.iters, args.warmup)
            report.add(name, event_us, "us")
            report.add(name + "_host", host_us, "us")
            report.add(name + "_pipelined", pipelined_us, "us")
        except Exception as e:  # noqa: BLE001 - a variant that cannot run is reported, not fatal
            traceback.print_exc(file=sys.stderr)
            report.skip(name, f"{type(e).__name__}: {e}")
        finally:
            runner = None
            torch.cuda.synchronize()
            torch.cuda.empty_cache()

    if args.json:
        doc = {
            "device": device_name,
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "settings": {
                "batch": BATCH, "n_in": N_IN, "n_hid": N_HID, "n_out": N_OUT,
                "lr": LR, "betas": list(BETAS), "eps": EPS, "weight_decay": WEIGHT_DECAY,
                "iters": args.iters, "warmup": args.warmup, "train_steps": args.train_steps,
                "seed": args.seed, "precision": precision,
            },
            "figures": report.figures,
            "skipped": report.skipped,
        }
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
        print(f"wrote {args.json}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
