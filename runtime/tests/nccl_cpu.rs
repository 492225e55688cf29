//! The NCCL layer's CPU half, on any machine: the torchrun-style environment, the unique-id
//! exchange through a file and over loopback TCP (ranks as threads), the collectives' length
//! rules, and the one error a machine without NCCL gets.
#![cfg(feature = "nccl")]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use kgraph_runtime::nccl::{self, Bootstrap, Collective, DataType, IdExchange, ReduceOp, UniqueId};
use kgraph_runtime::{Error, MemoryError, NcclError};

fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    move |k| map.get(k).cloned()
}

/// The bootstrap error's rank and text, or a panic naming what came instead.
fn bootstrap_error<T: std::fmt::Debug>(r: Result<T, Error>) -> (Option<usize>, String) {
    match r {
        Err(e @ Error::Nccl(NcclError::Bootstrap { rank, .. })) => (rank, e.to_string()),
        other => panic!("expected NcclError::Bootstrap, got {other:?}"),
    }
}

#[test]
fn environment_reads_like_torchrun() {
    let b = Bootstrap::from_vars(vars(&[
        ("RANK", "3"),
        ("WORLD_SIZE", "8"),
        ("LOCAL_RANK", "1"),
        ("MASTER_ADDR", "node0"),
        ("MASTER_PORT", "29500"),
        ("KGRAPH_NCCL_TIMEOUT_S", "2.5"),
    ]))
    .unwrap();
    assert_eq!((b.rank(), b.world_size(), b.local_rank()), (3, 8, 1));
    assert_eq!(b.exchange(), &IdExchange::Tcp { host: "node0".into(), port: 29500 });
    assert_eq!(b.timeout(), Duration::from_millis(2500));

    let base = [("RANK", "0"), ("WORLD_SIZE", "2"), ("MASTER_ADDR", "h"), ("MASTER_PORT", "1")];
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut all = base.to_vec();
        all.extend_from_slice(extra);
        Bootstrap::from_vars(vars(&all))
    };
    // KGRAPH_NCCL_PORT overrides MASTER_PORT (torchrun's own store listens there); the file
    // takes precedence over TCP; LOCAL_RANK defaults to RANK; the default timeout is 300 s.
    assert_eq!(
        with(&[("KGRAPH_NCCL_PORT", "29600")]).unwrap().exchange(),
        &IdExchange::Tcp { host: "h".into(), port: 29600 }
    );
    let file = with(&[("KGRAPH_NCCL_ID_FILE", "/shared/id")]).unwrap();
    assert_eq!(file.exchange(), &IdExchange::File(PathBuf::from("/shared/id")));
    assert_eq!((file.local_rank(), file.timeout()), (0, nccl::DEFAULT_TIMEOUT));
    // A world of one needs no exchange.
    let one = Bootstrap::from_vars(vars(&[("RANK", "0"), ("WORLD_SIZE", "1")])).unwrap();
    assert_eq!(one.exchange(), &IdExchange::Local);
}

#[test]
fn missing_or_invalid_variables_are_named() {
    /// The environment, the rank the error should name, and what its text should contain.
    type Case<'a> = (&'a [(&'a str, &'a str)], Option<usize>, &'a [&'a str]);
    let cases: &[Case] = &[
        (&[("WORLD_SIZE", "2")], None, &["RANK is not set"]),
        (&[("RANK", "x"), ("WORLD_SIZE", "2")], None, &["RANK=\"x\""]),
        (&[("RANK", "-1"), ("WORLD_SIZE", "2")], None, &["RANK=\"-1\""]),
        (&[("RANK", "0")], Some(0), &["WORLD_SIZE is not set"]),
        (&[("RANK", "0"), ("WORLD_SIZE", "0")], Some(0), &["WORLD_SIZE=0"]),
        (&[("RANK", "2"), ("WORLD_SIZE", "2")], Some(2), &["RANK=2", "WORLD_SIZE=2"]),
        (&[("RANK", "1"), ("WORLD_SIZE", "2"), ("LOCAL_RANK", "one")], Some(1), &["LOCAL_RANK=\"one\""]),
        (&[("RANK", "1"), ("WORLD_SIZE", "2")], Some(1), &["KGRAPH_NCCL_ID_FILE", "MASTER_ADDR", "MASTER_PORT"]),
        (&[("RANK", "1"), ("WORLD_SIZE", "2"), ("MASTER_ADDR", "h")], Some(1), &["MASTER_PORT is not set"]),
        (&[("RANK", "1"), ("WORLD_SIZE", "2"), ("MASTER_PORT", "1")], Some(1), &["MASTER_ADDR is not set"]),
        (
            &[("RANK", "1"), ("WORLD_SIZE", "2"), ("MASTER_ADDR", "h"), ("MASTER_PORT", "70000")],
            Some(1),
            &["MASTER_PORT=\"70000\""],
        ),
        (
            &[("RANK", "1"), ("WORLD_SIZE", "2"), ("MASTER_ADDR", "h"), ("MASTER_PORT", "0")],
            Some(1),
            &["MASTER_PORT=0"],
        ),
        (
            &[
                ("RANK", "1"),
                ("WORLD_SIZE", "2"),
                ("MASTER_ADDR", "h"),
                ("MASTER_PORT", "1"),
                ("KGRAPH_NCCL_PORT", "p"),
            ],
            Some(1),
            &["KGRAPH_NCCL_PORT=\"p\""],
        ),
        (&[("RANK", "0"), ("WORLD_SIZE", "1"), ("KGRAPH_NCCL_TIMEOUT_S", "-3")], Some(0), &["KGRAPH_NCCL_TIMEOUT_S"]),
        (&[("RANK", "0"), ("WORLD_SIZE", "1"), ("KGRAPH_NCCL_TIMEOUT_S", "inf")], Some(0), &["KGRAPH_NCCL_TIMEOUT_S"]),
    ];
    for (env, want_rank, needles) in cases {
        let (rank, text) = bootstrap_error(Bootstrap::from_vars(vars(env)));
        assert_eq!(rank, *want_rank, "{env:?}: {text}");
        for needle in *needles {
            assert!(text.contains(needle), "{env:?}: `{text}` does not contain `{needle}`");
        }
        if let Some(r) = want_rank {
            assert!(text.starts_with(&format!("rank {r}: ")), "{text}");
        }
    }
}

/// A fresh path in the temp directory, unique per test and process.
fn temp_path(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("kgraph-nccl-{tag}-{}-{n}", std::process::id()))
}

fn id_of(seed: u8) -> UniqueId {
    let mut bytes = [0u8; nccl::UNIQUE_ID_BYTES];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = seed.wrapping_mul(31).wrapping_add(i as u8);
    }
    UniqueId::from_bytes(bytes)
}

/// Runs `world` ranks of `exchange` as threads; rank 0 makes `id`, the others must not.
fn share_among(world: usize, exchange: IdExchange, id: UniqueId, timeout: Duration) -> Vec<Result<UniqueId, Error>> {
    let handles: Vec<_> = (0..world)
        .map(|rank| {
            let b = Bootstrap::new(rank, world, exchange.clone()).unwrap().with_timeout(timeout);
            std::thread::spawn(move || {
                b.share_id(|| {
                    assert_eq!(rank, 0, "only rank 0 makes the id");
                    Ok(id)
                })
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn the_file_exchange_hands_rank_0s_bytes_to_every_rank_and_cleans_up() {
    let path = temp_path("file");
    let id = id_of(7);
    for got in share_among(3, IdExchange::File(path.clone()), id, Duration::from_secs(20)) {
        assert_eq!(got.unwrap().as_bytes(), id.as_bytes());
    }
    let dir = path.parent().unwrap();
    let stem = path.file_name().unwrap().to_string_lossy().into_owned();
    let left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&stem))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn the_file_exchange_times_out_naming_the_rank_and_the_file() {
    let path = temp_path("nobody");
    let b = Bootstrap::new(1, 2, IdExchange::File(path.clone())).unwrap().with_timeout(Duration::from_millis(300));
    let start = Instant::now();
    let (rank, text) = bootstrap_error(b.share_id(|| panic!("rank 1 does not make the id")));
    assert!(start.elapsed() >= Duration::from_millis(300) && start.elapsed() < Duration::from_secs(10));
    assert_eq!(rank, Some(1));
    assert!(text.contains("timed out") && text.contains(&path.display().to_string()), "{text}");

    // Rank 0 whose peers never read: it names them, and takes the id file away again.
    let b = Bootstrap::new(0, 3, IdExchange::File(path.clone())).unwrap().with_timeout(Duration::from_millis(200));
    let (rank, text) = bootstrap_error(b.share_id(|| Ok(id_of(1))));
    assert_eq!(rank, Some(0));
    assert!(text.contains("ranks 1, 2"), "{text}");
    assert!(!path.exists());
}

#[test]
fn a_timeout_past_the_clock_is_an_error_not_a_panic() {
    let b = Bootstrap::new(1, 2, IdExchange::File(temp_path("forever"))).unwrap().with_timeout(Duration::MAX);
    let (rank, text) = bootstrap_error(b.share_id(|| unreachable!()));
    assert_eq!(rank, Some(1));
    assert!(text.contains("past what the clock can count"), "{text}");
}

#[test]
fn the_file_exchange_refuses_a_leftover_file_and_garbage() {
    let path = temp_path("stale");
    std::fs::write(&path, b"an old id").unwrap();
    let b0 = Bootstrap::new(0, 2, IdExchange::File(path.clone())).unwrap();
    let (_, text) = bootstrap_error(b0.share_id(|| Ok(id_of(2))));
    assert!(text.contains("already exists"), "{text}");
    let b1 = Bootstrap::new(1, 2, IdExchange::File(path.clone())).unwrap();
    let (_, text) = bootstrap_error(b1.share_id(|| unreachable!()));
    assert!(text.contains("not a kgraph NCCL id file"), "{text}");
    std::fs::remove_file(&path).unwrap();
}

/// A loopback port free a moment ago.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn the_tcp_exchange_over_loopback_hands_rank_0s_bytes_to_every_rank() {
    let id = id_of(9);
    let exchange = IdExchange::Tcp { host: "127.0.0.1".into(), port: free_port() };
    for got in share_among(4, exchange, id, Duration::from_secs(20)) {
        assert_eq!(got.unwrap().as_bytes(), id.as_bytes());
    }
}

#[test]
fn the_tcp_exchange_ignores_a_stranger_and_serves_the_ranks() {
    let port = free_port();
    let exchange = IdExchange::Tcp { host: "127.0.0.1".into(), port };
    let id = id_of(3);
    let b0 = Bootstrap::new(0, 2, exchange.clone()).unwrap().with_timeout(Duration::from_secs(20));
    let server = std::thread::spawn(move || b0.share_id(|| Ok(id)));
    // A client that is not a kgraph rank: connects, sends junk, hangs up.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            use std::io::Write;
            let _ = s.write_all(b"GET / HTTP/1.0\r\n\r\n");
            break;
        }
        assert!(Instant::now() < deadline, "rank 0 never listened");
        std::thread::sleep(Duration::from_millis(10));
    }
    let b1 = Bootstrap::new(1, 2, exchange).unwrap().with_timeout(Duration::from_secs(20));
    assert_eq!(b1.share_id(|| unreachable!()).unwrap(), id);
    assert_eq!(server.join().unwrap().unwrap(), id);
}

#[test]
fn the_tcp_exchange_times_out_on_both_sides() {
    let port = free_port();
    let exchange = IdExchange::Tcp { host: "127.0.0.1".into(), port };
    let b1 = Bootstrap::new(1, 2, exchange.clone()).unwrap().with_timeout(Duration::from_millis(300));
    let (rank, text) = bootstrap_error(b1.share_id(|| unreachable!()));
    assert_eq!(rank, Some(1));
    assert!(text.contains("timed out") && text.contains(&format!("127.0.0.1:{port}")), "{text}");
    let b0 = Bootstrap::new(0, 3, exchange).unwrap().with_timeout(Duration::from_millis(300));
    let (rank, text) = bootstrap_error(b0.share_id(|| Ok(id_of(4))));
    assert_eq!(rank, Some(0));
    assert!(text.contains("ranks 1, 2"), "{text}");
}

#[test]
fn a_world_of_one_needs_no_exchange_and_local_needs_one_rank() {
    let b = Bootstrap::single();
    assert_eq!(b.share_id(|| Ok(id_of(5))).unwrap(), id_of(5));
    let (rank, text) = bootstrap_error(Bootstrap::new(0, 2, IdExchange::Local));
    assert_eq!(rank, Some(0));
    assert!(text.contains("file or TCP"), "{text}");
    assert!(Bootstrap::new(2, 2, IdExchange::Local).is_err());
}

#[test]
fn collective_lengths_follow_nccl_shapes() {
    let sum = ReduceOp::Sum;
    assert_eq!(Collective::AllReduce(sum).check_lengths(4, 10, 10).unwrap(), 10);
    assert_eq!(Collective::Broadcast { root: 3 }.check_lengths(4, 10, 10).unwrap(), 10);
    assert_eq!(Collective::ReduceScatter(sum).check_lengths(4, 40, 10).unwrap(), 10);
    assert_eq!(Collective::AllGather.check_lengths(4, 10, 40).unwrap(), 10);
    assert_eq!(Collective::AllGather.check_lengths(1, 10, 10).unwrap(), 10);
    let rule = |c: Collective, w, s, r| match c.check_lengths(w, s, r) {
        Err(Error::Nccl(NcclError::CollectiveLength { rule, rank: None, world_size, .. })) => {
            assert_eq!(world_size, w);
            rule
        }
        other => panic!("{c}: expected CollectiveLength, got {other:?}"),
    };
    assert!(rule(Collective::AllReduce(sum), 2, 10, 11).contains("equal"));
    assert!(rule(Collective::ReduceScatter(sum), 4, 42, 10).contains("divisible by world_size"));
    assert!(rule(Collective::ReduceScatter(sum), 4, 40, 11).contains("world_size x receive"));
    assert!(rule(Collective::AllGather, 4, 10, 42).contains("divisible by world_size"));
    assert!(rule(Collective::AllGather, 4, 11, 40).contains("world_size x send"));
    assert!(rule(Collective::AllGather, 2, usize::MAX, 2).contains("world_size x send"));
    let text = Collective::ReduceScatter(ReduceOp::Avg).check_lengths(3, 10, 3).unwrap_err().to_string();
    assert!(text.contains("reduce_scatter over 3 ranks") && text.contains("nothing was issued"), "{text}");
    assert!(matches!(
        Collective::Broadcast { root: 4 }.check_lengths(4, 1, 1),
        Err(Error::Memory(MemoryError::OutOfRange { index: 4, len: 4, .. }))
    ));
}

#[test]
fn data_types_and_ops_by_name() {
    for t in DataType::ALL {
        assert_eq!(DataType::from_name(t.name()), Some(t));
    }
    assert_eq!(DataType::from_name("i16"), None, "NCCL has no 16-bit integers");
    assert_eq!(DataType::Bf16.size_bytes(), 2);
    assert_eq!(<kgraph_runtime::bf16 as nccl::NcclType>::DATA_TYPE, DataType::Bf16);
    assert_eq!(ReduceOp::from_name("avg"), Some(ReduceOp::Avg));
    assert_eq!(ReduceOp::from_name("mean"), None);
}

/// Where a dynamic loader would find `libnccl.so*`: LD_LIBRARY_PATH and the usual system
/// directories, listed here independently of the loader under test.
fn nccl_files_on_this_machine() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("LD_LIBRARY_PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    for d in ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib/x86_64-linux-gnu", "/usr/local/lib"] {
        dirs.push(d.into());
    }
    dirs.iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("libnccl.so")))
        .collect()
}

#[test]
fn without_nccl_the_entry_points_give_one_clear_error() {
    if std::env::var_os(nccl::LIBRARY_ENV).is_some() {
        eprintln!("skipped: {} is set, so this machine's NCCL is whatever it names", nccl::LIBRARY_ENV);
        return;
    }
    let files = nccl_files_on_this_machine();
    let probed = nccl::probe();
    if !files.is_empty() {
        // NCCL is installed: then it must load, at a version kgraph accepts.
        let info = probed.unwrap_or_else(|e| panic!("libnccl is at {files:?} but did not load: {e}"));
        assert!(info.version >= (2, 14, 0), "{info:?}");
        eprintln!("NCCL present ({info:?}): the missing-library path is checked on machines without it");
        return;
    }
    for result in [probed.map(|_| ()), nccl::unique_id().map(|_| ())] {
        match result {
            Err(e @ Error::Nccl(NcclError::Missing { .. })) => {
                let text = e.to_string();
                for needle in
                    ["NCCL is not available", "libnccl.so.2", "libnccl2", "nvidia-nccl-cu13", "LD_LIBRARY_PATH"]
                {
                    assert!(text.contains(needle), "`{text}` lacks `{needle}`");
                }
            }
            other => panic!("no libnccl on this machine, yet {other:?}"),
        }
    }
}
