#!/usr/bin/env python3
"""PyTorch DDP peer of kgraph's data-parallel train step (`graphs/train_step_ddp.toml`,
`cargo run --example train_ddp`), on the same GPUs.

    torchrun --standalone --nproc-per-node=1 examples/bench/peers/ddp_train_step.py   # baseline
    torchrun --standalone --nproc-per-node=2 examples/bench/peers/ddp_train_step.py

One process per GPU (LOCAL_RANK picks it), backend "nccl". Every rank trains the model of
`train_step.py` (CfcWithHeads: the same math, shapes and initial-weight law) wrapped in
`DistributedDataParallel` on its own shard of 256 samples per step (the global batch is
W x 256, as in train_ddp), with AdamW(foreach=True) and the same hyper-parameters. DDP averages
the gradients over the ranks with NCCL all-reduces (bucketed, overlapped with backward), as
kgraph's graph averages them with in-graph all-reduces before AdamW.

Prints, like kgraph's bench (`name value unit`), on rank 0:
    torch_ddp_step_w<W>          median host wall time of one step (forward, backward with the
                                 all-reduces, AdamW) + torch.cuda.synchronize(), in us
    torch_ddp_step_w<W>_event    median CUDA-event time of one step, in us
    torch_ddp_loss_first50_w<W>, torch_ddp_loss_last50_w<W>   mean loss over the first and
                                 last 50 of --train-steps steps (it trains)
and on every rank a weights checksum (the ranks agree: DDP applies the same averaged update).
Scaling efficiency at a fixed per-rank batch = step(W=1) / step(W); run both and divide.
This is a benchmark, not an oracle.
"""
import argparse
import os
import statistics
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import train_step as ts


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--train-steps", type=int, default=500)
    p.add_argument("--iters", type=int, default=500)
    p.add_argument("--warmup", type=int, default=50)
    args = p.parse_args()

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl", device_id=device)
    rank, world = dist.get_rank(), dist.get_world_size()
    ts.set_fp32_ieee()

    # Rank r's shard: its own pool of batches (seed 1 + r), as train_ddp's BookStream seeds.
    pool = ts.synthetic_pool(64, seed=1 + rank)
    inputs = ts.StaticInputs(pool, device)
    init = {k: v.to(device) for k, v in ts.initial_weights(7).items()}
    model = DDP(ts.CfcWithHeads(init).to(device), device_ids=[local_rank])
    opt = torch.optim.AdamW(
        model.parameters(), lr=ts.LR, betas=ts.BETAS, eps=ts.EPS, weight_decay=ts.WEIGHT_DECAY, foreach=True
    )

    def step():
        opt.zero_grad(set_to_none=True)
        loss, _ = ts.train_loss(model, *inputs.args())
        loss.backward()
        opt.step()
        return loss

    losses = []
    for i in range(args.train_steps):
        inputs.load(i)
        losses.append(step().item())

    host, event = [], []
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for i in range(args.warmup + args.iters):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        start.record()
        step()
        end.record()
        torch.cuda.synchronize()
        if i >= args.warmup:
            host.append((time.perf_counter() - t0) * 1e6)
            event.append(start.elapsed_time(end) * 1e3)

    checksum = sum(float(p.detach().double().sum()) for n, p in model.module.named_parameters() if n in ("w_g", "b_h"))
    print(f"rank {rank}: weights checksum {checksum:.9e}", flush=True)
    if rank == 0:
        print(f"# torch {torch.__version__}, NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, "
              f"{torch.cuda.get_device_name()}, world {world}")
        print(f"torch_ddp_step_w{world} {statistics.median(host):.2f} us")
        print(f"torch_ddp_step_w{world}_event {statistics.median(event):.2f} us")
        print(f"torch_ddp_loss_first50_w{world} {statistics.mean(losses[:50]):.4f} loss")
        print(f"torch_ddp_loss_last50_w{world} {statistics.mean(losses[-50:]):.4f} loss")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
