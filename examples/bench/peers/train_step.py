#!/usr/bin/env python3
"""PyTorch peer of kgraph's training step (`graphs/train_step.toml`), timed on the same GPU.

    python3 examples/bench/peers/train_step.py [--json out.json] [--iters N] [--warmup N]

One step, B = 256 samples, all float32 on CUDA, the same math as kgraph's kernels:

    snap [256, 40] --snap_features--> feat [256, 45]            (kernels/snap_features.cu)
    z = [feat, h0], h0 = 0                                          (kernels/cfc_step.cu)
    h1 = h0 + (1 - exp(-softplus(W_t z + b_t) dt)) (tanh(W_g z + b_g) - h0)
    logits = W_h h1 + b_h, probs = sigmoid(logits)                  (kernels/heads.cu)
    loss = mean BCE-with-logits(logits, targets) over 256 x 5        (kernels/bce.cu)
    backward into w_g, b_g, w_t, b_t, w_h, b_h (autograd)            (*_backward kernels)
    AdamW(lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight decay 0)     (kernels/adamw.cu)

Variants (each prints `name value unit` lines like kgraph's bench, `cargo run --example bench`):

    torch_train_step_eager                 eager autograd, AdamW(foreach=True)
    torch_train_step_eager_fused           eager autograd, AdamW(fused=True)
    torch_train_step_cuda_graph            whole step captured with torch.cuda.graph,
                                           AdamW(foreach=True, capturable=True)
    torch_train_step_cuda_graph_fused      the same with AdamW(fused=True, capturable=True)
    torch_train_step_compile               torch.compile(mode="max-autotune-no-cudagraphs")
    torch_train_step_compile_reduce_overhead  torch.compile(mode="reduce-overhead")

Per variant, in microseconds:
    <name>            median over --iters steps of the CUDA-event time of one step (the stream
                      is synchronised after every step, so this is one step's latency on the GPU
                      timeline, launch gaps included)
    <name>_host       median host wall time of one step: launch + torch.cuda.synchronize()
                      (kgraph's bench times its latencies this way)
    <name>_pipelined  CUDA-event time of --iters back-to-back steps / --iters (throughput)
and, to show the step trains: the loss at step 1 and its mean over the first and last 50 steps
of a --train-steps run from the same initial weights on the same batches (loss falls from
ln 2 = 0.693 towards the label law's noise, about 0.40, as in `cargo run --example train`), and
the largest |loss difference| to the eager variant's run.

fp32 throughout: TF32 is OFF for matmuls (kgraph's kernels compute in plain fp32 FMAs), via
`torch.backends.cuda.matmul.fp32_precision = "ieee"` where that API exists (PyTorch >= 2.9), else
`torch.backends.cuda.matmul.allow_tf32 = False`.

This is a benchmark, not an oracle: kgraph's kernels are validated by their own invariant tests.
"""

import argparse
import json
import math
import statistics
import struct
import sys
import time
import traceback
import warnings

import torch
import torch.nn.functional as F

# ---- Sizes (graphs/train_step.toml [dims], kernels/model_common.cuh) -----------------------
BATCH = 256
N_LEVELS = 10
SNAP_LEN = 40  # bid_px[10], bid_sz[10], ask_px[10], ask_sz[10]; level 0 = best
N_IN = 45      # N_FEAT
N_HID = 32
N_HORIZONS = 5
K_ALL = N_IN + N_HID  # columns of w_g, w_t: [0, 45) act on x, [45, 77) on h_old

# ---- AdamW defaults (train_step.toml [scalars]; lr as in examples/train.rs) ------------------
LR = 1e-3
BETAS = (0.9, 0.999)
EPS = 1e-8
WEIGHT_DECAY = 0.0  # NB: torch.optim.AdamW's own default is 0.01; pass 0.0 explicitly

FLT_MAX = 3.4028234663852886e38

# ---- Synthetic data (src/graphs/synthetic.rs, BookStream::independent) ---------------------
HORIZON_BETA = (6.0, 5.0, 4.0, 3.0, 2.0)  # P(up within horizon k) = sigmoid(beta_k * pressure)
TICK = 0.01


def set_fp32_ieee():
    """Turns TF32 off for fp32 matmuls (and cuDNN); returns a line saying how."""
    if hasattr(torch.backends.cuda.matmul, "fp32_precision"):
        # PyTorch >= 2.9: the new API (mixing it with allow_tf32 is warned about / refused).
        torch.backends.cuda.matmul.fp32_precision = "ieee"
        try:
            torch.backends.cudnn.fp32_precision = "ieee"
        except (AttributeError, RuntimeError):
            pass
        return "fp32 matmul: ieee (TF32 off, torch.backends.cuda.matmul.fp32_precision)"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    return "fp32 matmul: highest (TF32 off, torch.backends.cuda.matmul.allow_tf32 = False)"


# ============================================================================================
# The model: the same math as kgraph's kernels
# ============================================================================================


def snap_features(snap):
    """kernels/snap_features.cu, `snap_feature_assemble`: snap [B, 40] -> feat [B, 45].

    feat[0:10]  (bid_px[i] - mid) / spread     feat[10:20] (ask_px[i] - mid) / spread
    feat[20:30] log1p(bid_sz[i])               feat[30:40] log1p(ask_sz[i])
    feat[40:43] (sum bid_sz - sum ask_sz) / (sum bid_sz + sum ask_sz) over levels [0, d),
                d = 1, 5, 10 (0 when that depth holds no size)
    feat[43]    spread / mid                   feat[44]    1 (validity flag)
    mid = bid_px[0]/2 + ask_px[0]/2, spread = ask_px[0] - bid_px[0].
    A row is valid when all 40 inputs are finite, prices > 0, sizes >= 0, ask_px[0] > bid_px[0],
    total size > 0 and every feature is finite; an invalid row is 45 zeros (select, not
    multiply, as the kernel does). Level prices are not checked for monotonicity (as there).
    No parameter is involved: autograd records nothing here.
    """
    bid_px = snap[:, 0:10]
    bid_sz = snap[:, 10:20]
    ask_px = snap[:, 20:30]
    ask_sz = snap[:, 30:40]
    best_bid = bid_px[:, 0:1]
    best_ask = ask_px[:, 0:1]
    mid = 0.5 * best_bid + 0.5 * best_ask  # the kernel's overflow-free form
    spread = best_ask - best_bid
    # Inclusive prefix sums of the sizes; the kernel sums by warp shuffles (another order, same
    # value for the integer sizes used here). Slices, not a list index: a Python list would
    # become a host->device copy, which a CUDA-graph capture refuses.
    cum_bid = torch.cumsum(bid_sz, dim=1)
    cum_ask = torch.cumsum(ask_sz, dim=1)
    db = torch.cat([cum_bid[:, 0:1], cum_bid[:, 4:5], cum_bid[:, 9:10]], dim=1)
    da = torch.cat([cum_ask[:, 0:1], cum_ask[:, 4:5], cum_ask[:, 9:10]], dim=1)
    den = db + da
    imbalance = torch.where(den > 0, (db - da) / den, torch.zeros_like(den))
    feat = torch.cat(
        [
            (bid_px - mid) / spread,
            (ask_px - mid) / spread,
            torch.log1p(bid_sz),
            torch.log1p(ask_sz),
            imbalance,
            spread / mid,
            torch.ones_like(mid),
        ],
        dim=1,
    )
    valid = (
        torch.isfinite(snap).all(dim=1)
        & (bid_px > 0).all(dim=1)
        & (ask_px > 0).all(dim=1)
        & (bid_sz >= 0).all(dim=1)
        & (ask_sz >= 0).all(dim=1)
        & (best_ask[:, 0] > best_bid[:, 0])
        & (cum_bid[:, 9] + cum_ask[:, 9] > 0)
        & torch.isfinite(feat).all(dim=1)
    )
    return torch.where(valid.unsqueeze(1), feat, torch.zeros_like(feat))


class CfcWithHeads(torch.nn.Module):
    """The trained tensors of train_step.toml, in kgraph's layouts (row-major, f32):
    w_g, w_t [n_hid, n_in + n_hid] (z = [x, h_old] columns), b_g, b_t [n_hid],
    w_h [5, n_hid], b_h [5]. F.linear(z, W, b) = z W^T + b matches `W z + b` per row."""

    def __init__(self, init):
        super().__init__()
        for name in ("w_g", "b_g", "w_t", "b_t", "w_h", "b_h"):
            setattr(self, name, torch.nn.Parameter(init[name].clone()))

    def forward(self, feat, h0, dt):
        # kernels/cfc_step.cu, `cfc_step` (one step from h_old = h0):
        #   target = tanh(W_g z + b_g), lambda = softplus(W_t z + b_t),
        #   a = 1 - exp(-lambda dt) computed as -expm1(-lambda dt), h_new = h_old + a (target - h_old)
        # kgraph computes both pre-activations in one kernel; here they are two addmm's.
        # softplus: torch returns x for x > 20 (threshold); the kernel's stable form
        # max(x, 0) + log1p(exp(-|x|)) equals x in fp32 there too.
        # dt: the kernel clamps to [0, FLT_MAX] and maps NaN to 0; clamp() keeps a NaN (the
        # inputs here are finite, so the two agree). The clamp is one extra elementwise op.
        z = torch.cat([feat, h0], dim=1)
        target = torch.tanh(F.linear(z, self.w_g, self.b_g))
        lam = F.softplus(F.linear(z, self.w_t, self.b_t))
        a = -torch.expm1(-lam * dt.clamp(0.0, FLT_MAX).unsqueeze(1))
        h1 = h0 + a * (target - h0)
        # kernels/heads.cu, `multi_horizon_heads`: logits = W_h h + b_h, probs = sigmoid(logits).
        # kgraph writes probs as a graph output; it is computed here too, though no loss reads it.
        logits = F.linear(h1, self.w_h, self.b_h)
        probs = torch.sigmoid(logits)
        return logits, probs


def train_loss(model, snap, dt, h0, targets):
    """Forward + loss of one step. kernels/bce.cu: loss = mean_i softplus(z_i) - y_i z_i over
    B x 5 (kgraph accumulates in f64 in one block; torch reduces in fp32), and its gradient
    (sigmoid(z) - y) / count comes from autograd here."""
    logits, probs = model(snap_features(snap), h0, dt)
    loss = F.binary_cross_entropy_with_logits(logits, targets)  # reduction="mean"
    return loss, probs


def initial_weights(seed):
    """ModelWeights::init's law (src/graphs.rs): every matrix uniform in +-1/sqrt(fan_in),
    biases zero (not kgraph's bits: its generator is SplitMix64, this is torch's)."""
    g = torch.Generator().manual_seed(seed)

    def uniform(shape, fan_in):
        a = 1.0 / math.sqrt(fan_in)
        return (torch.rand(shape, generator=g, dtype=torch.float64) * 2 * a - a).float()

    return {
        "w_g": uniform((N_HID, K_ALL), K_ALL),
        "b_g": torch.zeros(N_HID),
        "w_t": uniform((N_HID, K_ALL), K_ALL),
        "b_t": torch.zeros(N_HID),
        "w_h": uniform((N_HORIZONS, N_HID), N_HID),
        "b_h": torch.zeros(N_HORIZONS),
    }


# ============================================================================================
# Data
# ============================================================================================


def synthetic_pool(n_batches, seed):
    """`n_batches` training batches drawn like BookStream::independent (src/graphs/synthetic.rs),
    vectorised: a latent pressure p = 0.9 tanh(N(0, 1)) per sample; best bid on a 0.01 tick grid,
    spread 1/2/3 ticks (60/30/10 %), ten levels a side with 10 % one-tick gaps (so bid prices
    fall and ask prices rise away from the touch: valid books); integer sizes
    round(U(1, 40) (1 + 0.15 i) (1 +- p)) (the thin side can round to 0: allowed, >= 0);
    dt = Exp(1) clamped to [0.05, 5]; targets are 0/1 draws of sigmoid(HORIZON_BETA_k p), a law a
    model reading the depth imbalance can learn. Returns CPU tensors (snap, dt, targets)."""
    g = torch.Generator().manual_seed(seed)
    n = n_batches * BATCH
    f64 = torch.float64

    def rand(*shape):
        return torch.rand(shape, generator=g, dtype=f64)

    pressure = 0.9 * torch.tanh(torch.randn(n, generator=g, dtype=f64))
    bid0 = torch.randint(9_000, 11_001, (n,), generator=g).to(f64)  # best bid, ticks
    u = rand(n)
    spread = 1.0 + (u >= 0.6).to(f64) + (u >= 0.9).to(f64)  # 1, 2, 3 ticks
    zero = torch.zeros(n, 1, dtype=f64)
    gap_bid = torch.cat([zero, torch.cumsum(1.0 + (rand(n, N_LEVELS - 1) < 0.1).to(f64), 1)], 1)
    gap_ask = torch.cat([zero, torch.cumsum(1.0 + (rand(n, N_LEVELS - 1) < 0.1).to(f64), 1)], 1)
    bid_px = (bid0.unsqueeze(1) - gap_bid) * TICK
    ask_px = (bid0.unsqueeze(1) + spread.unsqueeze(1) + gap_ask) * TICK
    depth = 1.0 + 0.15 * torch.arange(N_LEVELS, dtype=f64)
    p = pressure.unsqueeze(1)
    bid_sz = torch.round((1.0 + 39.0 * rand(n, N_LEVELS)) * depth * (1.0 + p))
    ask_sz = torch.round((1.0 + 39.0 * rand(n, N_LEVELS)) * depth * (1.0 - p))
    snap = torch.cat([bid_px, bid_sz, ask_px, ask_sz], 1).float()
    dt = (-torch.log1p(-rand(n))).clamp(0.05, 5.0).float()
    beta = torch.tensor(HORIZON_BETA, dtype=f64)
    targets = (rand(n, N_HORIZONS) < torch.sigmoid(beta * p)).float()
    return (
        snap.view(n_batches, BATCH, SNAP_LEN),
        dt.view(n_batches, BATCH),
        targets.view(n_batches, BATCH, N_HORIZONS),
    )


class StaticInputs:
    """The step's input buffers (kgraph's `input` buffers snap, dt, h0, targets): fixed
    addresses, as a CUDA graph needs; `load(i)` copies batch i (mod the pool) into them, like
    kgraph's `upload_batch` before a replay (device-to-device here, outside every timing)."""

    def __init__(self, pool, device):
        self.pool = [t.to(device) for t in pool]
        self.snap = torch.empty_like(self.pool[0][0])
        self.dt = torch.empty_like(self.pool[1][0])
        self.targets = torch.empty_like(self.pool[2][0])
        self.h0 = torch.zeros(BATCH, N_HID, device=device)  # stays zero (never uploaded)
        self.load(0)

    def load(self, i):
        j = i % self.pool[0].shape[0]
        self.snap.copy_(self.pool[0][j])
        self.dt.copy_(self.pool[1][j])
        self.targets.copy_(self.pool[2][j])

    def args(self):
        return self.snap, self.dt, self.h0, self.targets


# ============================================================================================
# Variants: each gives step() -> loss tensor and reset() (weights to init, optimizer state 0)
# ============================================================================================


class Runner:
    def __init__(self, init, inputs, device, **adamw_kwargs):
        self.init = {k: v.to(device) for k, v in init.items()}
        self.inputs = inputs
        self.model = CfcWithHeads(self.init).to(device)
        self.opt = torch.optim.AdamW(
            self.model.parameters(), lr=LR, betas=BETAS, eps=EPS, weight_decay=WEIGHT_DECAY, **adamw_kwargs
        )
        self.loss = None

    def eager_step(self):
        # kgraph's train step overwrites its gradients (one producer each, nothing zeroed);
        # set_to_none lets backward write fresh gradients here too.
        self.opt.zero_grad(set_to_none=True)
        loss, _ = train_loss(self.model, *self.inputs.args())
        loss.backward()
        self.opt.step()
        return loss

    step = eager_step

    @torch.no_grad()
    def reset(self):
        """In place (addresses a captured graph holds stay valid): weights back to the initial
        values, AdamW moments and step counts to zero."""
        for name, p in self.model.named_parameters():
            p.copy_(self.init[name])
        for state in self.opt.state.values():
            for v in state.values():
                if torch.is_tensor(v):
                    v.zero_()


class GraphRunner(Runner):
    """The whole step in one CUDA graph, PyTorch's documented whole-network capture recipe
    (https://docs.pytorch.org/docs/stable/notes/cuda.html#whole-network-capture): warm up on a
    side stream, zero_grad(set_to_none=True), capture forward + backward + optimizer.step();
    replay() then reruns it on the static inputs. AdamW must be capturable=True (its step
    counts and bias corrections live on the device, like kgraph's `schedule` buffer)."""

    def __init__(self, init, inputs, device, **adamw_kwargs):
        super().__init__(init, inputs, device, capturable=True, **adamw_kwargs)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                self.eager_step()
        torch.cuda.current_stream().wait_stream(s)
        self.graph = torch.cuda.CUDAGraph()
        self.opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(self.graph):
            self.static_loss, _ = train_loss(self.model, *inputs.args())
            self.static_loss.backward()
            self.opt.step()
        torch.cuda.synchronize()

    def step(self):
        self.graph.replay()
        return self.static_loss


class CompileRunner(Runner):
    """torch.compile of the forward + loss (AOTAutograd compiles the backward too) and of the
    optimizer step (PyTorch's "compiling the optimizer" recipe); loss.backward() and zero_grad
    stay in Python. With mode="reduce-overhead", Inductor runs both under CUDA graphs
    (cudagraph trees), and each step begins with cudagraph_mark_step_begin()."""

    def __init__(self, init, inputs, device, mode):
        torch._dynamo.reset()
        super().__init__(init, inputs, device, foreach=True)
        self.cudagraphs = mode == "reduce-overhead"
        # The input buffers keep their addresses, like kgraph's: tell dynamo, so cudagraph trees
        # need not copy them into their own buffers on every replay.
        for t in inputs.args():
            try:
                torch._dynamo.mark_static_address(t)
            except Exception:  # noqa: BLE001 - only an optimisation
                pass
        self.fwd = torch.compile(train_loss, mode=mode)
        opt = self.opt

        def opt_step():
            opt.step()

        self.opt_step = torch.compile(opt_step, mode=mode)
        t0 = time.perf_counter()
        for _ in range(3):  # compile forward, backward and optimizer; record the CUDA graphs
            self.step()
        torch.cuda.synchronize()
        self.compile_s = time.perf_counter() - t0

    def step(self):
        if self.cudagraphs:
            torch.compiler.cudagraph_mark_step_begin()
        self.opt.zero_grad(set_to_none=True)
        loss, _ = self.fwd(self.model, *self.inputs.args())
        loss.backward()
        self.opt_step()
        return loss


# ============================================================================================
# Measurement
# ============================================================================================


def loss_curve(runner, inputs, steps):
    """Loss of each of `steps` steps (before its update) from the initial weights, one batch
    per step in pool order, as a CPU list. Losses stay on the device until the end."""
    runner.reset()
    losses = torch.empty(steps, device=inputs.snap.device)
    for i in range(steps):
        inputs.load(i)
        loss = runner.step()
        losses[i].copy_(loss.detach())  # before the next step (reduce-overhead reuses outputs)
    return losses.cpu().tolist()


def time_steps(runner, inputs, iters, warmup):
    """(event median us, host median us, pipelined us per step)."""
    for i in range(warmup):
        inputs.load(i)
        runner.step()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    ev, host = [], []
    for i in range(iters):
        inputs.load(i)
        torch.cuda.synchronize()  # the batch copy is done before the clock starts
        t0 = time.perf_counter()
        start.record()
        runner.step()
        end.record()
        end.synchronize()
        host.append((time.perf_counter() - t0) * 1e6)
        ev.append(start.elapsed_time(end) * 1e3)
    # Back-to-back steps on one batch (no copies, no synchronisation between them).
    inputs.load(0)
    torch.cuda.synchronize()
    start.record()
    for _ in range(iters):
        runner.step()
    end.record()
    end.synchronize()
    pipelined = start.elapsed_time(end) * 1e3 / iters
    return statistics.median(ev), statistics.median(host), pipelined


def profile_step(runner, inputs):
    """(GPU kernels, CUDA-graph launches) of one step, from torch.profiler (CUPTI also reports
    the kernels a graph replay runs). kgraph's TrainStep graph has 3 kernel nodes and one
    launch. Memcpy/memset activities are not counted as kernels."""
    from torch.profiler import ProfilerActivity, profile

    inputs.load(0)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        runner.step()
        torch.cuda.synchronize()
    kernels = graph_launches = 0
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            if not e.name.startswith(("Memcpy", "Memset")):
                kernels += 1
        elif e.name in ("cudaGraphLaunch", "cuGraphLaunch"):
            graph_launches += 1
    return kernels, graph_launches


class Report:
    def __init__(self):
        self.figures = []
        self.skipped = {}

    FORMATS = {"bce": "{:.4f}", "abs": "{:.2e}", "count": "{:.0f}"}

    def add(self, name, value, unit):
        fmt = self.FORMATS.get(unit, "{:.3f}")
        print(f"{name} {fmt.format(value)} {unit}", flush=True)
        self.figures.append({"name": name, "value": float(value), "unit": unit})

    def skip(self, name, reason):
        reason = " ".join(str(reason).split())[:300]
        print(f"{name} skipped {reason}", flush=True)
        self.skipped[name] = reason


# ============================================================================================
# A sanity check of the feature mapping on a few rows, against a scalar transcription
# ============================================================================================


def _f32(x):
    """x rounded to float32 (an op done in float64 and rounded once equals the float32 op)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def features_scalar(row):
    """snap_feature_assemble for one row, transcribed per element with float32 rounding after
    every operation (the offsets cancel catastrophically: prices ~100, spread ~0.01)."""
    bp, bs, ap, az = row[0:10], row[10:20], row[20:30], row[30:40]
    zeros = [0.0] * N_IN
    if not all(math.isfinite(v) for v in row):
        return zeros
    if min(bp + ap) <= 0 or min(bs + az) < 0 or not ap[0] > bp[0] or sum(bs) + sum(az) <= 0:
        return zeros
    mid = _f32(_f32(0.5 * bp[0]) + _f32(0.5 * ap[0]))
    spread = _f32(ap[0] - bp[0])
    f = [_f32(_f32(x - mid) / spread) for x in bp] + [_f32(_f32(x - mid) / spread) for x in ap]
    f += [_f32(math.log1p(x)) for x in bs] + [_f32(math.log1p(x)) for x in az]
    for d in (1, 5, 10):
        b, a = sum(bs[:d]), sum(az[:d])  # integer sizes: exact in float32
        f.append(_f32((b - a) / (b + a)) if b + a > 0 else 0.0)
    return f + [_f32(spread / mid), 1.0]


def check_features(pool_snap, device):
    """Valid rows from the pool plus hand-made invalid ones (crossed, negative size, NaN, zero
    price, empty); raises if the tensor features differ from the scalar transcription."""
    rows = [pool_snap[0, i].tolist() for i in range(4)]
    base = rows[0]
    crossed = list(base)
    crossed[20] = crossed[0] - TICK
    negative = list(base)
    negative[13] = -1.0
    nan = list(base)
    nan[35] = float("nan")
    zero_px = list(base)
    zero_px[9] = 0.0
    empty = base[:10] + [0.0] * 10 + base[20:30] + [0.0] * 10
    rows += [crossed, negative, nan, zero_px, empty]
    got = snap_features(torch.tensor(rows, device=device)).cpu().tolist()
    for r, (row, out) in enumerate(zip(rows, got)):
        want = features_scalar(row)
        for c, (w, o) in enumerate(zip(want, out)):
            if not abs(w - o) <= 1e-5 * max(1.0, abs(w)):
                raise AssertionError(f"feature check: row {r} column {c}: tensor {o}, scalar {w}")
    valid = snap_features(pool_snap.reshape(-1, SNAP_LEN).to(device))[:, 44]
    return len(rows), int(valid.sum().item()), valid.numel()


# ============================================================================================


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iters", type=int, default=1000, help="timed steps per variant (default 1000)")
    ap.add_argument("--warmup", type=int, default=100, help="untimed steps first (default 100)")
    ap.add_argument("--train-steps", type=int, default=1000,
                    help="steps of the loss-curve run per variant, >= 100 (default 1000)")
    ap.add_argument("--batches", type=int, default=64, help="distinct batches in the data pool (default 64)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--variants", default="all",
                    help="comma list of eager,eager_fused,cuda_graph,cuda_graph_fused,compile,"
                         "compile_reduce_overhead (default all)")
    ap.add_argument("--no-compile", action="store_true", help="skip the torch.compile variants")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = ap.parse_args()
    if args.iters < 1 or args.warmup < 0 or args.train_steps < 100 or args.batches < 1:
        ap.error("need --iters >= 1, --warmup >= 0, --train-steps >= 100, --batches >= 1")

    print(f"torch {torch.__version__} (CUDA {torch.version.cuda})", flush=True)
    if not torch.cuda.is_available():
        print("train_step.py: no CUDA device", file=sys.stderr)
        return 1
    device = torch.device("cuda")
    device_name = torch.cuda.get_device_name(device)
    print(f"device {device_name}", flush=True)
    precision = set_fp32_ieee()
    # Inductor suggests TF32 for speed; it is off on purpose (see set_fp32_ieee).
    warnings.filterwarnings("ignore", message="TensorFloat32 tensor cores")
    print(precision, flush=True)
    print(f"batch {BATCH}, n_in {N_IN}, n_hid {N_HID}, horizons {N_HORIZONS}; "
          f"AdamW lr {LR} betas {BETAS} eps {EPS} weight_decay {WEIGHT_DECAY}; "
          f"iters {args.iters}, warmup {args.warmup}, train steps {args.train_steps}", flush=True)

    torch.manual_seed(args.seed)
    pool = synthetic_pool(args.batches, args.seed)
    n_rows, n_valid, n_all = check_features(pool[0], device)
    print(f"feature check: {n_rows} rows match the scalar transcription; "
          f"valid rows in the pool: {n_valid}/{n_all}", flush=True)
    inputs = StaticInputs(pool, device)
    init = initial_weights(args.seed)

    variants = [
        ("torch_train_step_eager", lambda: Runner(init, inputs, device, foreach=True)),
        ("torch_train_step_eager_fused", lambda: Runner(init, inputs, device, fused=True)),
        ("torch_train_step_cuda_graph", lambda: GraphRunner(init, inputs, device, foreach=True)),
        ("torch_train_step_cuda_graph_fused", lambda: GraphRunner(init, inputs, device, fused=True)),
        ("torch_train_step_compile",
         lambda: CompileRunner(init, inputs, device, "max-autotune-no-cudagraphs")),
        ("torch_train_step_compile_reduce_overhead",
         lambda: CompileRunner(init, inputs, device, "reduce-overhead")),
    ]
    wanted = None if args.variants == "all" else {"torch_train_step_" + v.strip() for v in args.variants.split(",")}
    if wanted is not None:
        unknown = wanted - {name for name, _ in variants}
        if unknown:
            ap.error(f"unknown variant(s): {', '.join(sorted(unknown))}")

    report = Report()
    reference = None  # the first variant's loss curve
    for name, make in variants:
        if wanted is not None and name not in wanted:
            continue
        if args.no_compile and "compile" in name:
            report.skip(name, "--no-compile")
            continue
        try:
            runner = make()
            if isinstance(runner, CompileRunner):
                report.add(name + "_compile_time", runner.compile_s, "s")
            curve = loss_curve(runner, inputs, args.train_steps)
            if not all(math.isfinite(v) for v in curve):
                raise RuntimeError("non-finite loss in the loss-curve run")
            w = 50
            report.add(name + "_loss_step1", curve[0], "bce")
            report.add(name + f"_loss_first{w}", sum(curve[:w]) / w, "bce")
            report.add(name + f"_loss_last{w}", sum(curve[-w:]) / w, "bce")
            if reference is None:
                reference = (name, curve)
            else:
                diff = max(abs(a - b) for a, b in zip(curve, reference[1]))
                report.add(name + "_loss_maxdiff_vs_" + reference[0].removeprefix("torch_train_step_"), diff, "abs")
            event_us, host_us, pipelined_us = time_steps(runner, inputs, args.iters, args.warmup)
            report.add(name, event_us, "us")
            report.add(name + "_host", host_us, "us")
            report.add(name + "_pipelined", pipelined_us, "us")
            try:
                kernels, graph_launches = profile_step(runner, inputs)
                report.add(name + "_kernels", kernels, "count")
                report.add(name + "_graph_launches", graph_launches, "count")
            except Exception as e:  # noqa: BLE001 - the profile is informative only
                report.skip(name + "_kernels", f"profiler: {type(e).__name__}: {e}")
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
                "batch": BATCH, "n_in": N_IN, "n_hid": N_HID, "n_horizons": N_HORIZONS,
                "lr": LR, "betas": list(BETAS), "eps": EPS, "weight_decay": WEIGHT_DECAY,
                "iters": args.iters, "warmup": args.warmup, "train_steps": args.train_steps,
                "batches": args.batches, "seed": args.seed, "precision": precision,
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
