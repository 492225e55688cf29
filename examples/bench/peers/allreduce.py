#!/usr/bin/env python3
"""torch.distributed.all_reduce bus bandwidth, the peer of kgraph's `nccl_allreduce` example.

    torchrun --standalone --nproc-per-node=2 examples/bench/peers/allreduce.py [--max-mib 1024] [--iters N]

One process per GPU (LOCAL_RANK picks it), backend "nccl". For each size from 1 MiB to
--max-mib (powers of two), every rank first checks that the sum of rank-dependent data
(x[i] = (rank + 1) * (i % 7 + 1)) equals the analytic (i % 7 + 1) * W (W + 1) / 2, then rank 0
times an in-place float32 sum all-reduce of zeros (5 warm-up calls, a barrier, `iters` calls,
a device synchronize) and prints `name value unit` lines like the kgraph example:

    torch_allreduce_busbw_1MiB 12.34 GB/s
    torch_allreduce_time_1MiB 85.10 us

bus bandwidth = bytes / time x 2 (W - 1) / W (nccl-tests' definition). The iteration count per
size is the kgraph example's: clamp(8 GiB / bytes, 5, 200).
"""
import argparse
import os
import time

import torch
import torch.distributed as dist


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--max-mib", type=int, default=1024)
    p.add_argument("--iters", type=int, default=None)
    args = p.parse_args()

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    rank, world = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        print(f"torch_world_size {world} ranks", flush=True)
        print(f"# torch {torch.__version__}, NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, "
              f"{torch.cuda.get_device_name()}", flush=True)
    ok = True
    tri = world * (world + 1) / 2
    mib = 1
    while mib <= args.max_mib:
        nbytes = mib << 20
        n = nbytes // 4
        idx = torch.arange(n, device="cuda", dtype=torch.int64)
        pattern = (idx % 7 + 1).to(torch.float32)
        x = pattern * (rank + 1)
        dist.all_reduce(x)
        bad = int((x != pattern * tri).sum().item())
        print(f"torch_allreduce_check_rank{rank}_{mib}MiB {bad} mismatches", flush=True)
        ok &= bad == 0
        del idx, pattern, x

        iters = args.iters or min(max((8 << 30) // nbytes, 5), 200)
        buf = torch.zeros(n, device="cuda", dtype=torch.float32)
        for _ in range(5):
            dist.all_reduce(buf)
        dist.barrier()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(buf)
        torch.cuda.synchronize()
        secs = (time.perf_counter() - start) / iters
        if rank == 0:
            busbw = nbytes / secs * 2 * (world - 1) / world / 1e9
            print(f"torch_allreduce_busbw_{mib}MiB {busbw:.2f} GB/s", flush=True)
            print(f"torch_allreduce_time_{mib}MiB {secs * 1e6:.2f} us", flush=True)
        del buf
        mib *= 2
    print(f"torch_allreduce_rank{rank}_checks {1 if ok else 0} pass", flush=True)
    dist.destroy_process_group()
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
