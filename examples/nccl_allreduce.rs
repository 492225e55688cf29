//! All-reduce across ranks, checked and timed: one process per GPU, started by
//! `scripts/launch-ranks` (or torchrun, with `KGRAPH_NCCL_PORT` or `KGRAPH_NCCL_ID_FILE` set).
//!
//! ```text
//! cargo build --release --example nccl_allreduce
//! scripts/launch-ranks target/release/examples/nccl_allreduce [--max-mib 1024] [--iters N]
//! ```
//!
//! Every rank checks, for each size from 1 MiB to `--max-mib` (default 1 GiB), that the sum
//! of rank-dependent data (`x[i] = (rank + 1) * (i % 7 + 1)`) is the analytic
//! `(i % 7 + 1) * W (W + 1) / 2` on every element, eagerly and through a captured CUDA graph,
//! and that reduce-scatter, all-gather and broadcast give their analytic results. Rank 0 then
//! prints the bus bandwidth of an in-place f32 sum all-reduce per size (eager, and replayed
//! from a graph of the same all-reduces), as `name value unit` lines like
//! `examples/bench/peers/allreduce.py` prints for `torch.distributed.all_reduce`:
//! bus bandwidth = bytes / time x 2 (W - 1) / W, as nccl-tests defines it.

use std::process::ExitCode;
use std::time::Instant;

use kgraph::nccl::{Bootstrap, Collective, Communicator, DataType, ReduceOp};
use kgraph::{Device, DeviceBuffer, DeviceIn, Error, Graph, NcclError, SetupError};

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("nccl_allreduce: {e}");
            if matches!(e, Error::Nccl(NcclError::Bootstrap { .. })) {
                eprintln!("(start one process per GPU with scripts/launch-ranks; docs/multi-gpu.md)");
            }
            ExitCode::from(2)
        }
    }
}

struct Args {
    max_mib: usize,
    iters: Option<usize>,
}

fn args() -> Result<Args, Error> {
    let mut a = Args { max_mib: 1024, iters: None };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| {
            it.next().and_then(|v| v.parse::<usize>().ok()).filter(|&v| v > 0).ok_or_else(|| {
                Error::Nccl(NcclError::Bootstrap { rank: None, detail: format!("{name} takes a positive integer") })
            })
        };
        match flag.as_str() {
            "--max-mib" => a.max_mib = value("--max-mib")?,
            "--iters" => a.iters = Some(value("--iters")?),
            other => {
                return Err(Error::Nccl(NcclError::Bootstrap {
                    rank: None,
                    detail: format!("unknown argument {other:?} (--max-mib N, --iters N)"),
                }))
            }
        }
    }
    Ok(a)
}

/// `Device::new(LOCAL_RANK)`, or device 0 when the launcher gave this process one GPU
/// (`CUDA_VISIBLE_DEVICES` per rank).
fn open_device(boot: &Bootstrap) -> Result<Device, Error> {
    match Device::new(boot.local_rank()) {
        Err(Error::Setup(SetupError::NoDevice { count: 1, .. })) => Device::new(0),
        other => other,
    }
}

fn run() -> Result<bool, Error> {
    let args = args()?;
    let boot = Bootstrap::from_env()?;
    let dev = open_device(&boot)?;
    let comm = Communicator::new(&dev, &boot)?;
    let (rank, world) = (comm.rank(), comm.world_size());
    if rank == 0 {
        let info = kgraph::nccl::probe()?;
        eprintln!(
            "nccl_allreduce: {world} ranks, NCCL {}.{}.{} ({}), {}",
            info.version.0,
            info.version.1,
            info.version.2,
            info.library,
            dev.name()?
        );
        println!("nccl_world_size {world} ranks");
    }
    let mut ok = check_small_collectives(&dev, &comm)?;
    let mut mib = 1;
    while mib <= args.max_mib {
        let bytes = mib << 20;
        let n = bytes / 4;
        ok &= check_all_reduce(&dev, &comm, n, &format!("{mib}MiB"))?;
        let iters = args.iters.unwrap_or_else(|| ((8usize << 30) / bytes).clamp(5, 200));
        let (eager_s, graph_s) = time_all_reduce(&dev, &comm, n, iters)?;
        if rank == 0 {
            let busbw = |s: f64| bytes as f64 / s * 2.0 * (world - 1) as f64 / world as f64 / 1e9;
            println!("kgraph_allreduce_busbw_{mib}MiB {:.2} GB/s", busbw(eager_s));
            println!("kgraph_allreduce_graph_busbw_{mib}MiB {:.2} GB/s", busbw(graph_s));
            println!("kgraph_allreduce_time_{mib}MiB {:.2} us", eager_s * 1e6);
        }
        mib *= 2;
    }
    comm.async_error()?;
    println!("nccl_allreduce_rank{rank}_checks {} pass", if ok { 1 } else { 0 });
    Ok(ok)
}

/// `x[i] = (rank + 1) * (i % 7 + 1)`: small integers, so every sum below is exact in f32.
fn rank_data(rank: usize, n: usize) -> Vec<f32> {
    (0..n).map(|i| ((rank + 1) * (i % 7 + 1)) as f32).collect()
}

/// How many elements of `got` differ from `want(i)`; prints the first.
fn mismatches(what: &str, rank: usize, got: &[f32], want: impl Fn(usize) -> f32) -> usize {
    let bad: Vec<usize> = (0..got.len()).filter(|&i| got[i] != want(i)).collect();
    if let Some(&i) = bad.first() {
        eprintln!(
            "rank {rank}: {what}: {} of {} elements wrong, first [{i}] = {} (want {})",
            bad.len(),
            got.len(),
            got[i],
            want(i)
        );
    }
    bad.len()
}

/// All-reduce sum of `n` elements, eagerly and replayed from a captured graph, against the
/// analytic sum.
fn check_all_reduce(dev: &Device, comm: &Communicator, n: usize, label: &str) -> Result<bool, Error> {
    let (rank, world) = (comm.rank(), comm.world_size());
    let tri = (world * (world + 1) / 2) as f32;
    let want = |i: usize| (i % 7 + 1) as f32 * tri;
    let send = dev.upload(&rank_data(rank, n))?;
    let mut recv = dev.alloc_zeros::<f32>(n)?;
    comm.all_reduce(&send, &mut recv, ReduceOp::Sum)?;
    let eager = mismatches(&format!("all_reduce {label}"), rank, &dev.download(&recv)?, want);
    let graphed = dev.alloc_zeros::<f32>(n)?;
    dev.synchronize()?;
    // SAFETY: `send` and `graphed` outlive the graph (dropped at the end of this function,
    // after it) and the host reads `graphed` only after the replay, through a synchronising
    // download.
    let graph = unsafe {
        Graph::capture(dev.stream(), |s| {
            comm.issue_raw(
                Collective::AllReduce(ReduceOp::Sum),
                DataType::F32,
                send.device_addr(),
                n,
                DeviceIn::<f32>::device_addr(&graphed),
                n,
                s,
            )
        })
    }?;
    graph.replay()?;
    let captured = mismatches(&format!("graph all_reduce {label}"), rank, &dev.download(&graphed)?, want);
    drop(graph);
    println!("allreduce_check_rank{rank}_{label} {} mismatches", eager + captured);
    Ok(eager + captured == 0)
}

/// Reduce-scatter, all-gather and broadcast of rank-dependent data on 7 x W elements.
fn check_small_collectives(dev: &Device, comm: &Communicator) -> Result<bool, Error> {
    let (rank, world) = (comm.rank(), comm.world_size());
    let block = 7 * 1024;
    let tri = (world * (world + 1) / 2) as f32;
    let full = dev.upload(&rank_data(rank, block * world))?;
    let mut part = dev.alloc_zeros::<f32>(block)?;
    comm.reduce_scatter(&full, &mut part, ReduceOp::Sum)?;
    let mut bad =
        mismatches("reduce_scatter", rank, &dev.download(&part)?, |i| ((rank * block + i) % 7 + 1) as f32 * tri);
    let mine = dev.upload(&rank_data(rank, block))?;
    let mut gathered = dev.alloc_zeros::<f32>(block * world)?;
    comm.all_gather(&mine, &mut gathered)?;
    bad +=
        mismatches("all_gather", rank, &dev.download(&gathered)?, |i| ((i / block + 1) * (i % block % 7 + 1)) as f32);
    let root = world - 1;
    let mut got: DeviceBuffer<f32> = dev.alloc_zeros(block)?;
    comm.broadcast(&mine, &mut got, root)?;
    bad += mismatches("broadcast", rank, &dev.download(&got)?, |i| ((root + 1) * (i % 7 + 1)) as f32);
    let mut avg = dev.upload(&rank_data(rank, block))?;
    comm.all_reduce_in_place(&mut avg, ReduceOp::Avg)?;
    bad += mismatches("all_reduce avg", rank, &dev.download(&avg)?, |i| (i % 7 + 1) as f32 * tri / world as f32);
    println!("collectives_check_rank{rank} {bad} mismatches");
    Ok(bad == 0)
}

/// Seconds per in-place all-reduce of `n` f32 zeros: eager, then replayed from one graph of
/// `iters` captured all-reduces; each after a warm-up and a one-element all-reduce that lines
/// the ranks up.
fn time_all_reduce(dev: &Device, comm: &Communicator, n: usize, iters: usize) -> Result<(f64, f64), Error> {
    let mut buf = dev.alloc_zeros::<f32>(n)?;
    let mut sync = dev.alloc_zeros::<f32>(1)?;
    let barrier = |buf: &mut DeviceBuffer<f32>| -> Result<(), Error> {
        comm.all_reduce_in_place(buf, ReduceOp::Sum)?;
        dev.synchronize()
    };
    for _ in 0..5 {
        comm.all_reduce_in_place(&mut buf, ReduceOp::Sum)?;
    }
    barrier(&mut sync)?;
    let start = Instant::now();
    for _ in 0..iters {
        comm.all_reduce_in_place(&mut buf, ReduceOp::Sum)?;
    }
    dev.synchronize()?;
    let eager = start.elapsed().as_secs_f64() / iters as f64;

    let addr = DeviceIn::<f32>::device_addr(&buf);
    // SAFETY: `buf` outlives the graph (dropped before it returns) and the host never reads it.
    let graph = unsafe {
        Graph::capture(dev.stream(), |s| {
            for _ in 0..iters {
                comm.issue_raw(Collective::AllReduce(ReduceOp::Sum), DataType::F32, addr, n, addr, n, s)?;
            }
            Ok(())
        })
    }?;
    if graph.is_empty() {
        // One rank: NCCL records nothing for an in-place all-reduce (it is the identity).
        return Ok((eager, eager));
    }
    graph.upload()?;
    graph.replay()?;
    barrier(&mut sync)?;
    let start = Instant::now();
    graph.replay()?;
    dev.synchronize()?;
    let graphed = start.elapsed().as_secs_f64() / iters as f64;
    drop(graph);
    Ok((eager, graphed))
}
