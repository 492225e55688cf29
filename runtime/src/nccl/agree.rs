//! Cross-rank agreement on each collective's arguments, before NCCL sees them.
//!
//! NCCL checks nothing across ranks: if rank 0 all-reduces 1024 floats and rank 1 512, each
//! passes its local checks and, with peer pointers, the larger side writes past the smaller
//! side's buffer. So every checked collective first agrees with the other ranks on what it is
//! (kind, op, root, element type, count, and its position in the communicator's sequence)
//! over a host channel the bootstrap sets up: a star through rank 0, on TCP. Rank 0 gathers every
//! rank's [`CallSignature`], compares, and answers each rank; a rank that disagrees gets
//! an error naming both calls, on every rank, and nothing is issued. A rank that never makes
//! the call makes the others time out with an error instead of hanging.
//!
//! Why every call and not "first use of new arguments": a cache of agreed signatures cannot tell
//! a rank skipping the check (its arguments agreed earlier) from another rank at the same
//! position with other, also agreed, arguments. Only the exchange at each position proves the
//! position matches. It costs one host round trip through rank 0 per eager collective (no GPU
//! synchronisation: the queue keeps running). `Communicator::issue_raw` (what graph structs
//! issue and capture through) and `capture_graph` agree too; they stay `unsafe` for what no
//! exchange covers: raw addresses, and replays of graphs, which are not checked again.
//!
//! A position agreed on must reach NCCL on every rank: every check of this rank's own runs
//! before the exchange, and a rank whose agreed collective still fails to reach NCCL (NCCL
//! refuses it, a group's end fails, a capture fails) poisons the channel
//! ([`RankChannel::poison`]), or its next collective would pair with the other ranks' of the
//! position it skipped, with other counts.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::nccl::bootstrap::{Bootstrap, IdExchange};
use crate::nccl::collective::{Collective, DataType, ReduceOp};

/// What every rank must pass identically to one collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CallSignature {
    /// The call's position among this communicator's checked collectives (from 0).
    pub(crate) seq: u64,
    pub(crate) collective: Collective,
    pub(crate) dtype: DataType,
    /// The count NCCL is called with.
    pub(crate) count: usize,
}

/// Bytes of an encoded [`CallSignature`].
const CALL_BYTES: usize = 32;
const HELLO: &[u8; 8] = b"KGAGREE1";
/// Rank 0's answer: agreed, or the first disagreeing rank with its call and rank 0's.
const AGREED: u8 = 0;
const DISAGREED: u8 = 1;
const ANSWER_BYTES: usize = 1 + 8 + 2 * CALL_BYTES;
const POLL: Duration = Duration::from_millis(20);

const OPS: [ReduceOp; 5] = [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min, ReduceOp::Avg];

impl CallSignature {
    fn encode(&self) -> [u8; CALL_BYTES] {
        let (kind, op, root) = match self.collective {
            Collective::AllReduce(op) => (0u8, op, 0u64),
            Collective::ReduceScatter(op) => (1, op, 0),
            Collective::AllGather => (2, ReduceOp::Sum, 0),
            Collective::Broadcast { root } => (3, ReduceOp::Sum, root as u64),
        };
        let op = OPS.iter().position(|&o| o == op).unwrap_or(0) as u8;
        let dtype = DataType::ALL.iter().position(|&t| t == self.dtype).unwrap_or(0) as u8;
        let mut out = [0u8; CALL_BYTES];
        out[..8].copy_from_slice(&self.seq.to_le_bytes());
        out[8..11].copy_from_slice(&[kind, op, dtype]);
        out[16..24].copy_from_slice(&root.to_le_bytes());
        out[24..32].copy_from_slice(&(self.count as u64).to_le_bytes());
        out
    }

    /// The call `bytes` encode, for messages (a description of anything that does not decode).
    fn describe(bytes: &[u8]) -> String {
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
        let (kind, op, dtype) = (bytes[8], OPS.get(bytes[9] as usize), DataType::ALL.get(bytes[10] as usize));
        let op = op.map_or("?", |o| o.name());
        let what = match kind {
            0 => format!("all_reduce ({op})"),
            1 => format!("reduce_scatter ({op})"),
            2 => "all_gather".to_string(),
            3 => format!("broadcast (root {})", word(16)),
            _ => "an unknown collective".to_string(),
        };
        let dtype = dtype.map_or("?", |t| t.name());
        format!("{what} of {} x {dtype} as collective #{}", word(24), word(0))
    }
}

/// Why agreeing failed: the text of an NCCL error naming this rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Disagreement(pub(crate) String);

/// The host channel between the ranks of one communicator: rank 0 holds a stream to each other
/// rank, the others one to rank 0.
#[derive(Debug)]
pub(crate) struct RankChannel {
    rank: usize,
    peers: Peers,
    /// Why the channel broke (a peer gone, a timeout): the ranks may no longer be at the same
    /// call, so every later check fails with this instead of pairing other calls.
    broken: Option<String>,
}

#[derive(Debug)]
enum Peers {
    /// A world of one: nothing to agree with.
    Alone,
    /// No channel: the caller of `unsafe Communicator::with_id` promised matching calls.
    Promised,
    /// Rank 0: the stream of rank `i + 1` at `i`.
    Root(Vec<TcpStream>),
    /// Another rank: its stream to rank 0.
    Leaf(TcpStream),
}

impl RankChannel {
    /// The channel of a world of one rank.
    pub(crate) fn alone() -> Self {
        RankChannel { rank: 0, peers: Peers::Alone, broken: None }
    }

    /// No channel, for a communicator whose maker promised that every rank passes matching
    /// arguments (`unsafe Communicator::with_id`): every check passes.
    pub(crate) fn promised(rank: usize) -> Self {
        RankChannel { rank, peers: Peers::Promised, broken: None }
    }

    /// The channel of the job `bootstrap` describes, once every rank calls this: a world of
    /// one needs none; a TCP exchange's rank 0 listens again on the exchange's address; a file
    /// exchange's rank 0 listens on localhost and publishes the port beside the id file (so
    /// its ranks share one host).
    pub(crate) fn connect(bootstrap: &Bootstrap) -> Result<Self, Disagreement> {
        let (rank, world, timeout) = (bootstrap.rank(), bootstrap.world_size(), bootstrap.timeout());
        let fail = |what: String| Disagreement(format!("rank {rank}: the cross-rank check channel: {what}"));
        if world == 1 {
            return Ok(RankChannel::alone());
        }
        match bootstrap.exchange() {
            IdExchange::Local => Ok(RankChannel::alone()),
            IdExchange::Tcp { host, port } => {
                let addrs: Vec<SocketAddr> = (host.as_str(), *port)
                    .to_socket_addrs()
                    .map_err(|e| fail(format!("{host} does not resolve: {e}")))?
                    .collect();
                if rank > 0 {
                    return RankChannel::join(&addrs, rank, timeout);
                }
                let listener = TcpListener::bind(addrs.as_slice())
                    .map_err(|e| fail(format!("cannot listen on {host}:{port}: {e}")))?;
                RankChannel::serve(&listener, world, timeout)
            }
            IdExchange::File(id_file) => {
                let path = port_file(id_file);
                if rank > 0 {
                    let port = read_port(&path, timeout)?;
                    return RankChannel::join(&[SocketAddr::from(([127, 0, 0, 1], port))], rank, timeout);
                }
                let listener =
                    TcpListener::bind("127.0.0.1:0").map_err(|e| fail(format!("cannot listen on localhost: {e}")))?;
                let port = listener.local_addr().map_err(|e| fail(e.to_string()))?.port();
                publish_port(&path, port).map_err(|e| fail(format!("write {}: {e}", path.display())))?;
                let channel = RankChannel::serve(&listener, world, timeout);
                let _ = std::fs::remove_file(&path);
                channel
            }
        }
    }

    /// Rank 0: accepts one connection from each of the `world_size - 1` other ranks on
    /// `listener`, until `timeout`.
    pub(crate) fn serve(listener: &TcpListener, world_size: usize, timeout: Duration) -> Result<Self, Disagreement> {
        let deadline = Instant::now() + timeout;
        let fail = |what: String| Disagreement(format!("rank 0: the cross-rank check channel: {what}"));
        listener.set_nonblocking(true).map_err(|e| fail(e.to_string()))?;
        let mut peers: Vec<Option<TcpStream>> = (1..world_size).map(|_| None).collect();
        while peers.iter().any(Option::is_none) {
            match listener.accept() {
                // A connection that is not a kgraph rank (or a rank already joined) is dropped.
                Ok((stream, _)) => {
                    if let Ok((rank, stream)) = greet(stream, world_size, timeout) {
                        if peers[rank - 1].is_none() {
                            peers[rank - 1] = Some(stream);
                        }
                    }
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {
                    if Instant::now() >= deadline {
                        let missing: Vec<String> =
                            (1..world_size).filter(|r| peers[r - 1].is_none()).map(|r| r.to_string()).collect();
                        return Err(fail(format!(
                            "timed out after {timeout:?} waiting for ranks {} to join",
                            missing.join(", ")
                        )));
                    }
                    std::thread::sleep(POLL);
                }
                Err(e) => return Err(fail(format!("accept: {e}"))),
            }
        }
        Ok(RankChannel { rank: 0, peers: Peers::Root(peers.into_iter().flatten().collect()), broken: None })
    }

    /// Rank `rank > 0`: connects to rank 0 at one of `addrs`, retrying until `timeout`.
    pub(crate) fn join(addrs: &[SocketAddr], rank: usize, timeout: Duration) -> Result<Self, Disagreement> {
        let deadline = Instant::now() + timeout;
        let mut last = String::from("no attempt finished");
        loop {
            for addr in addrs {
                match hello(addr, rank, timeout) {
                    Ok(stream) => return Ok(RankChannel { rank, peers: Peers::Leaf(stream), broken: None }),
                    Err(e) => last = format!("{addr}: {e}"),
                }
            }
            if Instant::now() >= deadline {
                return Err(Disagreement(format!(
                    "rank {rank}: cannot join rank 0's cross-rank check channel within {timeout:?} (last error: {last})"
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Agrees with every other rank on `call`: `Ok` when all passed the same, else the
    /// disagreement (on every rank), naming rank 0's call and the first rank whose call differs.
    /// After an I/O failure (a peer gone, a timeout) every later call fails too.
    pub(crate) fn agree(&mut self, call: &CallSignature) -> Result<(), Disagreement> {
        if let Some(why) = &self.broken {
            return Err(Disagreement(format!("rank {}: the cross-rank check channel broke earlier: {why}", self.rank)));
        }
        let agreed = self.exchange(call);
        if let Err(Disagreement(why)) = &agreed {
            if !why.contains("the ranks disagree") {
                self.break_off(why.clone());
            }
        }
        agreed
    }

    /// After a call this rank agreed on was not handed to NCCL after all (a check after the
    /// agreement refused it, NCCL returned an error, a group's end failed): the other ranks
    /// may have issued it, so this rank's next collective would pair with theirs of this
    /// position, with other counts. Every later check on this rank fails with `why`, and the
    /// other ranks' next check fails at once (their streams to this rank are shut down).
    /// Nothing for a world of one or a communicator without a channel.
    pub(crate) fn poison(&mut self, why: String) {
        if matches!(self.peers, Peers::Root(_) | Peers::Leaf(_)) && self.broken.is_none() {
            self.break_off(format!("rank {}: {why}", self.rank));
        }
    }

    /// Whether the channel refuses every check (it broke, or was poisoned).
    #[cfg(test)]
    pub(crate) fn is_broken(&self) -> bool {
        self.broken.is_some()
    }

    /// Marks the channel broken and shuts its streams down, so the ranks at the other end stop
    /// waiting for this one at their next check (an end of file instead of the timeout): a rank
    /// that gave up on a position must not leave the others agreeing without it.
    fn break_off(&mut self, why: String) {
        self.broken = Some(why);
        match &self.peers {
            Peers::Root(streams) => streams.iter().for_each(|s| {
                let _ = s.shutdown(Shutdown::Both);
            }),
            Peers::Leaf(stream) => {
                let _ = stream.shutdown(Shutdown::Both);
            }
            Peers::Alone | Peers::Promised => {}
        }
    }

    fn exchange(&mut self, call: &CallSignature) -> Result<(), Disagreement> {
        let mine = call.encode();
        let rank = self.rank;
        let io = |e: std::io::Error| {
            Disagreement(format!(
                "rank {rank}: the cross-rank check of {} failed: {e} (did another rank not make this call?)",
                CallSignature::describe(&mine)
            ))
        };
        match &mut self.peers {
            Peers::Alone | Peers::Promised => Ok(()),
            Peers::Leaf(stream) => {
                stream.write_all(&mine).map_err(io)?;
                let mut answer = [0u8; ANSWER_BYTES];
                stream.read_exact(&mut answer).map_err(io)?;
                match answer[0] {
                    AGREED => Ok(()),
                    _ => Err(disagreement(rank, &answer)),
                }
            }
            Peers::Root(streams) => {
                let mut first: Option<(usize, [u8; CALL_BYTES])> = None;
                for (i, stream) in streams.iter_mut().enumerate() {
                    let mut theirs = [0u8; CALL_BYTES];
                    stream.read_exact(&mut theirs).map_err(io)?;
                    if theirs != mine && first.is_none() {
                        first = Some((i + 1, theirs));
                    }
                }
                let mut answer = [0u8; ANSWER_BYTES];
                if let Some((other, theirs)) = first {
                    answer[0] = DISAGREED;
                    answer[1..9].copy_from_slice(&(other as u64).to_le_bytes());
                    answer[9..9 + CALL_BYTES].copy_from_slice(&theirs);
                    answer[9 + CALL_BYTES..].copy_from_slice(&mine);
                }
                for stream in streams.iter_mut() {
                    stream.write_all(&answer).map_err(io)?;
                }
                match answer[0] {
                    AGREED => Ok(()),
                    _ => Err(disagreement(rank, &answer)),
                }
            }
        }
    }
}

/// The error of a `DISAGREED` answer, as rank `rank` reports it.
fn disagreement(rank: usize, answer: &[u8; ANSWER_BYTES]) -> Disagreement {
    let other = u64::from_le_bytes(answer[1..9].try_into().unwrap_or([0; 8]));
    let (theirs, root) = (&answer[9..9 + CALL_BYTES], &answer[9 + CALL_BYTES..]);
    Disagreement(format!(
        "rank {rank}: the ranks disagree on a collective, so nothing was issued: rank 0 passed {}, rank {other} \
         passed {}; every rank must pass the same collective, op, root, element type and count, in the same order",
        CallSignature::describe(root),
        CallSignature::describe(theirs)
    ))
}

/// Rank 0's side of a joining rank's hello: its rank.
fn greet(mut stream: TcpStream, world_size: usize, timeout: Duration) -> std::io::Result<(usize, TcpStream)> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    stream.set_nodelay(true)?;
    let mut hello = [0u8; 16];
    stream.read_exact(&mut hello)?;
    let rank = u64::from_le_bytes(hello[8..].try_into().unwrap_or([0; 8])) as usize;
    if &hello[..8] != HELLO || rank == 0 || rank >= world_size {
        return Err(ErrorKind::InvalidData.into());
    }
    stream.write_all(HELLO)?;
    Ok((rank, stream))
}

/// A joining rank's hello to rank 0 at `addr`: the stream, once rank 0 has answered.
fn hello(addr: &SocketAddr, rank: usize, timeout: Duration) -> std::io::Result<TcpStream> {
    let mut stream = TcpStream::connect_timeout(addr, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    stream.set_nodelay(true)?;
    let mut hello = HELLO.to_vec();
    hello.extend_from_slice(&(rank as u64).to_le_bytes());
    stream.write_all(&hello)?;
    let mut answer = [0u8; 8];
    stream.read_exact(&mut answer)?;
    if &answer != HELLO {
        return Err(std::io::Error::new(ErrorKind::InvalidData, "the peer is not a kgraph rank 0"));
    }
    Ok(stream)
}

/// Where a file exchange's rank 0 publishes its channel's port: beside the id file.
pub(crate) fn port_file(id_file: &Path) -> PathBuf {
    let mut name = id_file.as_os_str().to_owned();
    name.push(".agree");
    PathBuf::from(name)
}

/// Rank 0 of a file exchange: the port, written to `path` through a renamed temporary file.
pub(crate) fn publish_port(path: &Path, port: u16) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, port.to_string())?;
    std::fs::rename(&tmp, path)
}

/// The longest port file [`read_port`] reads: a port is at most 5 digits; more is not a port.
const PORT_FILE_MAX: u64 = 16;

/// The text of a port file, read no further than [`PORT_FILE_MAX`] bytes (the path is shared,
/// so it may name anything: a huge file, or `/dev/zero`).
fn read_port_file(path: &Path) -> Option<String> {
    let mut text = Vec::new();
    std::fs::File::open(path).ok()?.take(PORT_FILE_MAX + 1).read_to_end(&mut text).ok()?;
    if text.len() as u64 > PORT_FILE_MAX {
        return None;
    }
    String::from_utf8(text).ok()
}

/// Another rank of a file exchange: rank 0's port from `path`, polled until `timeout`.
pub(crate) fn read_port(path: &Path, timeout: Duration) -> Result<u16, Disagreement> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(port) = read_port_file(path).and_then(|s| s.trim().parse().ok()) {
            return Ok(port);
        }
        if Instant::now() >= deadline {
            return Err(Disagreement(format!(
                "rank 0 did not publish its cross-rank check channel in {} within {timeout:?}",
                path.display()
            )));
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(seq: u64, collective: Collective, count: usize) -> CallSignature {
        CallSignature { seq, collective, dtype: DataType::F32, count }
    }

    /// `world` ranks as threads over localhost, each agreeing on `calls(rank)` in turn.
    fn run(world: usize, calls: fn(usize) -> Vec<CallSignature>) -> Vec<Vec<Result<(), Disagreement>>> {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let timeout = Duration::from_secs(5);
        let threads: Vec<_> = (0..world)
            .map(|rank| {
                let listener = listener.try_clone().unwrap();
                std::thread::spawn(move || {
                    let mut channel = match rank {
                        0 => RankChannel::serve(&listener, world, timeout).unwrap(),
                        _ => RankChannel::join(&[addr], rank, timeout).unwrap(),
                    };
                    calls(rank).iter().map(|c| channel.agree(c)).collect::<Vec<_>>()
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    }

    #[test]
    fn ranks_passing_the_same_calls_agree() {
        let results = run(3, |_| {
            vec![
                call(0, Collective::AllReduce(ReduceOp::Sum), 1024),
                call(1, Collective::Broadcast { root: 2 }, 7),
                call(2, Collective::AllGather, 0),
            ]
        });
        assert!(results.iter().flatten().all(Result::is_ok), "{results:?}");
    }

    #[test]
    fn a_rank_passing_another_count_is_refused_on_every_rank() {
        let results = run(3, |rank| {
            let count = if rank == 2 { 512 } else { 1024 };
            vec![call(0, Collective::AllReduce(ReduceOp::Sum), count)]
        });
        for (rank, r) in results.iter().enumerate() {
            let Err(Disagreement(msg)) = &r[0] else { panic!("rank {rank} agreed: {r:?}") };
            assert!(msg.starts_with(&format!("rank {rank}: ")), "{msg}");
            assert!(msg.contains("rank 0 passed all_reduce (sum) of 1024 x f32"), "{msg}");
            assert!(msg.contains("rank 2 passed all_reduce (sum) of 512 x f32"), "{msg}");
        }
    }

    #[test]
    fn other_types_ops_and_roots_are_refused_too() {
        let results = run(2, |rank| {
            let mut typed = call(0, Collective::AllReduce(ReduceOp::Sum), 8);
            if rank == 1 {
                typed.dtype = DataType::F16;
            }
            let op = if rank == 1 { ReduceOp::Max } else { ReduceOp::Sum };
            let root = Collective::Broadcast { root: rank };
            vec![typed, call(1, Collective::AllReduce(op), 8), call(2, root, 8)]
        });
        for r in &results {
            assert!(matches!(&r[0], Err(Disagreement(m)) if m.contains("8 x f16")), "{r:?}");
            assert!(matches!(&r[1], Err(Disagreement(m)) if m.contains("all_reduce (max)")), "{r:?}");
            assert!(matches!(&r[2], Err(Disagreement(m)) if m.contains("broadcast (root 1)")), "{r:?}");
        }
    }

    /// Review: a rank that agreed on a call but did not hand it to NCCL (a check after the
    /// agreement refused it, NCCL failed) poisons its channel; its next call must not agree,
    /// and the other ranks' next call must fail too, at once rather than after the timeout,
    /// since their NCCL sequence is now one collective ahead of this rank's.
    #[test]
    fn a_poisoned_rank_stops_every_rank_at_the_next_call_without_waiting_for_the_timeout() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let timeout = Duration::from_secs(20);
        let world = 3;
        let threads: Vec<_> = (0..world)
            .map(|rank| {
                let listener = listener.try_clone().unwrap();
                std::thread::spawn(move || {
                    let mut channel = match rank {
                        0 => RankChannel::serve(&listener, world, timeout).unwrap(),
                        _ => RankChannel::join(&[addr], rank, timeout).unwrap(),
                    };
                    let first = channel.agree(&call(0, Collective::AllReduce(ReduceOp::Sum), 1024));
                    if rank == 2 {
                        channel.poison("nccl all_reduce failed after the cross-rank check".into());
                        assert!(channel.is_broken());
                    }
                    let started = Instant::now();
                    let second = channel.agree(&call(1, Collective::AllReduce(ReduceOp::Sum), 4096));
                    // The channel is returned, not dropped: a rank that poisoned its channel
                    // lives on (its streams open) while the others make their next call.
                    (first, second, started.elapsed(), channel.is_broken(), channel)
                })
            })
            .collect();
        let mut kept = Vec::new();
        for (rank, t) in threads.into_iter().enumerate() {
            let (first, second, waited, broken, channel) = t.join().unwrap();
            kept.push(channel);
            assert!(first.is_ok(), "rank {rank}: {first:?}");
            assert!(second.is_err(), "rank {rank} agreed on the call after a poisoned one");
            assert!(broken, "rank {rank}'s channel still checks after a rank gave up");
            assert!(waited < Duration::from_secs(10), "rank {rank} waited {waited:?} (the timeout, not the shutdown)");
        }
    }

    #[test]
    fn poisoning_a_world_of_one_or_a_promised_channel_changes_nothing() {
        for mut channel in [RankChannel::alone(), RankChannel::promised(1)] {
            channel.poison("a failed collective".into());
            assert!(!channel.is_broken());
            assert!(channel.agree(&call(0, Collective::AllGather, 8)).is_ok());
        }
    }

    #[test]
    fn a_port_file_is_read_no_further_than_a_port() {
        let dir = std::env::temp_dir().join(format!("kgraph-agree-port-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let long = dir.join("long.agree");
        std::fs::write(&long, format!("80{}", " ".repeat(64))).unwrap();
        assert!(read_port(&long, Duration::from_millis(50)).is_err());
        // A shared path may name anything: `/dev/zero` must be refused, not read forever.
        #[cfg(unix)]
        {
            let zero = dir.join("zero.agree");
            let _ = std::fs::remove_file(&zero);
            std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
            assert!(read_port(&zero, Duration::from_millis(50)).is_err());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_rank_that_never_joins_is_a_timeout_not_a_hang() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let err = RankChannel::serve(&listener, 2, Duration::from_millis(200)).unwrap_err();
        assert!(err.0.contains("waiting for ranks 1 to join"), "{}", err.0);
    }

    #[test]
    fn ranks_of_a_file_exchange_connect_through_the_bootstrap_and_check() {
        let dir = std::env::temp_dir().join(format!("kgraph-agree-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let id = dir.join("id");
        let threads: Vec<_> = (0..3)
            .map(|rank| {
                let boot =
                    Bootstrap::new(rank, 3, IdExchange::File(id.clone())).unwrap().with_timeout(Duration::from_secs(5));
                std::thread::spawn(move || {
                    let mut channel = RankChannel::connect(&boot).unwrap();
                    let count = if rank == 1 { 3 } else { 4 };
                    (
                        channel.agree(&call(0, Collective::AllGather, 4)),
                        channel.agree(&call(1, Collective::AllGather, count)),
                    )
                })
            })
            .collect();
        for t in threads {
            let (same, other) = t.join().unwrap();
            assert!(same.is_ok(), "{same:?}");
            assert!(matches!(other, Err(Disagreement(m)) if m.contains("rank 1 passed all_gather of 3 x f32")));
        }
        assert!(!port_file(&id).exists(), "rank 0 leaves no port file behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_exchange_publishes_the_port_beside_the_id_file() {
        let dir = std::env::temp_dir().join(format!("kgraph-agree-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = port_file(&dir.join("id"));
        assert!(path.ends_with("id.agree"));
        publish_port(&path, 4321).unwrap();
        assert_eq!(read_port(&path, Duration::from_millis(100)).unwrap(), 4321);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
