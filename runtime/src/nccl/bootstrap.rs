//! [`Bootstrap`]: who this process is in a multi-rank job, and how the NCCL unique id gets from
//! rank 0 to the others, in the torchrun style (`RANK`, `WORLD_SIZE`, `LOCAL_RANK`,
//! `MASTER_ADDR`, `MASTER_PORT`). Plain std: no NCCL call happens here, so all of it runs (and
//! is tested) on machines without a GPU.

use std::collections::BTreeSet;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{Error, NcclError, Result};

/// Bytes in an NCCL unique id (`NCCL_UNIQUE_ID_BYTES`).
pub const UNIQUE_ID_BYTES: usize = 128;

/// The environment variables [`Bootstrap::from_env`] reads.
pub mod env {
    /// This process's rank, `0..WORLD_SIZE` (required).
    pub const RANK: &str = "RANK";
    /// How many processes (ranks) the job has (required).
    pub const WORLD_SIZE: &str = "WORLD_SIZE";
    /// This process's index on its host, the GPU ordinal it uses by default (optional:
    /// `RANK` when unset, right for a single host).
    pub const LOCAL_RANK: &str = "LOCAL_RANK";
    /// Rank 0's host, for the TCP exchange of the id.
    pub const MASTER_ADDR: &str = "MASTER_ADDR";
    /// The TCP port rank 0 serves the id on.
    pub const MASTER_PORT: &str = "MASTER_PORT";
    /// Overrides `MASTER_PORT` for kgraph's id exchange (under torchrun, whose own store
    /// listens on `MASTER_PORT`).
    pub const NCCL_PORT: &str = "KGRAPH_NCCL_PORT";
    /// A file path (shared by every rank) through which rank 0 hands out the id; takes
    /// precedence over TCP.
    pub const ID_FILE: &str = "KGRAPH_NCCL_ID_FILE";
    /// Seconds to wait for the other ranks during the exchange (default 300).
    pub const TIMEOUT_S: &str = "KGRAPH_NCCL_TIMEOUT_S";
}

/// How long the exchange waits for the other ranks unless told otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

const FILE_MAGIC: &[u8; 16] = b"KGRAPH-NCCL-ID1\n";
const TCP_HELLO: &[u8; 8] = b"KGNCCL1?";
const TCP_REPLY: &[u8; 8] = b"KGNCCL1!";
const POLL: Duration = Duration::from_millis(20);

/// An NCCL unique id: 128 opaque bytes made by `ncclGetUniqueId` on rank 0 and given to every
/// rank's `ncclCommInitRank`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct UniqueId([u8; UNIQUE_ID_BYTES]);

impl UniqueId {
    /// The id of these bytes.
    pub fn from_bytes(bytes: [u8; UNIQUE_ID_BYTES]) -> Self {
        UniqueId(bytes)
    }

    /// The id's bytes.
    pub fn as_bytes(&self) -> &[u8; UNIQUE_ID_BYTES] {
        &self.0
    }
}

impl std::fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UniqueId(")?;
        for b in &self.0[..8] {
            write!(f, "{b:02x}")?;
        }
        write!(f, "..)")
    }
}

/// How rank 0's unique id reaches the other ranks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdExchange {
    /// No exchange: a world of one rank.
    Local,
    /// Rank 0 writes the id to this path (a temporary file renamed into place, so readers never
    /// see half of it); the others poll for it and acknowledge with `<path>.ack<rank>`; rank 0
    /// removes all of them once every rank has acknowledged. The path must not exist when rank
    /// 0 starts (a leftover of a crashed run is refused, not silently handed out).
    File(PathBuf),
    /// Rank 0 listens on `host:port` and answers each rank's request with the id; the others
    /// connect, retrying until rank 0 is up.
    Tcp {
        /// Rank 0's host (`MASTER_ADDR`); rank 0 listens on its address.
        host: String,
        /// The port (`KGRAPH_NCCL_PORT`, else `MASTER_PORT`).
        port: u16,
    },
}

/// This process's place in a multi-rank job and how it obtains the NCCL unique id.
///
/// ```
/// use kgraph_runtime::nccl::{Bootstrap, IdExchange};
/// let vars = [("RANK", "1"), ("WORLD_SIZE", "2"), ("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "29500")];
/// let b = Bootstrap::from_vars(|k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string()))?;
/// assert_eq!((b.rank(), b.world_size(), b.local_rank()), (1, 2, 1));
/// assert_eq!(b.exchange(), &IdExchange::Tcp { host: "127.0.0.1".into(), port: 29500 });
/// # Ok::<(), kgraph_runtime::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bootstrap {
    rank: usize,
    world_size: usize,
    local_rank: usize,
    exchange: IdExchange,
    timeout: Duration,
}

impl Bootstrap {
    /// `rank` of `world_size`, sharing the id through `exchange`, with [`DEFAULT_TIMEOUT`] and
    /// `local_rank == rank`. [`NcclError::Bootstrap`] when `rank >= world_size`, `world_size` is 0
    /// or over `i32::MAX` (NCCL's limit), or [`IdExchange::Local`] is asked for several ranks.
    pub fn new(rank: usize, world_size: usize, exchange: IdExchange) -> Result<Self> {
        let fail = |detail: String| Err(Error::Nccl(NcclError::Bootstrap { rank: Some(rank), detail }));
        if world_size == 0 || world_size > i32::MAX as usize {
            return fail(format!("world size {world_size} is outside 1..={}", i32::MAX));
        }
        if rank >= world_size {
            return fail(format!("rank {rank} is not below the world size {world_size}"));
        }
        if exchange == IdExchange::Local && world_size > 1 {
            return fail(format!("a world of {world_size} ranks needs a file or TCP exchange of the NCCL id"));
        }
        Ok(Bootstrap { rank, world_size, local_rank: rank, exchange, timeout: DEFAULT_TIMEOUT })
    }

    /// A one-rank world (rank 0 of 1, no exchange).
    pub fn single() -> Self {
        Bootstrap { rank: 0, world_size: 1, local_rank: 0, exchange: IdExchange::Local, timeout: DEFAULT_TIMEOUT }
    }

    /// Reads the job from the process environment (the variables of [`env`](mod@env)); see
    /// [`Bootstrap::from_vars`].
    pub fn from_env() -> Result<Self> {
        Self::from_vars(|name| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned()))
    }

    /// Reads the job from `lookup` (a variable's value, `None` when unset), torchrun-style:
    /// `RANK` and `WORLD_SIZE` (required), `LOCAL_RANK` (default `RANK`), then the exchange:
    /// `KGRAPH_NCCL_ID_FILE` if set, else `MASTER_ADDR` with `KGRAPH_NCCL_PORT` or
    /// `MASTER_PORT`, else none for a world of one; `KGRAPH_NCCL_TIMEOUT_S` (seconds, default
    /// 300). Every missing or invalid variable is an [`NcclError::Bootstrap`] that names it.
    pub fn from_vars(lookup: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let get = |name: &str| lookup(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let rank = parse_var::<usize>(None, env::RANK, get(env::RANK), "a rank, 0 or more")?;
        let world_size = parse_var::<usize>(Some(rank), env::WORLD_SIZE, get(env::WORLD_SIZE), "a count, 1 or more")?;
        if world_size == 0 || world_size > i32::MAX as usize {
            return Err(Error::Nccl(NcclError::Bootstrap {
                rank: Some(rank),
                detail: format!("{}={world_size} is outside 1..={}", env::WORLD_SIZE, i32::MAX),
            }));
        }
        if rank >= world_size {
            return Err(Error::Nccl(NcclError::Bootstrap {
                rank: Some(rank),
                detail: format!("{}={rank} is not below {}={world_size}", env::RANK, env::WORLD_SIZE),
            }));
        }
        let local_rank = match get(env::LOCAL_RANK) {
            None => rank,
            some => parse_var::<usize>(Some(rank), env::LOCAL_RANK, some, "a rank on this host, 0 or more")?,
        };
        let exchange = if let Some(path) = get(env::ID_FILE) {
            IdExchange::File(PathBuf::from(path))
        } else {
            match (get(env::MASTER_ADDR), get(env::MASTER_PORT), get(env::NCCL_PORT)) {
                (None, None, None) if world_size == 1 => IdExchange::Local,
                (None, None, None) => {
                    return Err(Error::Nccl(NcclError::Bootstrap {
                        rank: Some(rank),
                        detail: format!(
                            "{}={world_size} needs a way to share the NCCL id: set {} (a path every rank sees) or {} and {}",
                            env::WORLD_SIZE,
                            env::ID_FILE,
                            env::MASTER_ADDR,
                            env::MASTER_PORT
                        ),
                    }))
                }
                (None, _, _) => {
                    return Err(Error::Nccl(NcclError::Bootstrap {
                        rank: Some(rank),
                        detail: format!("{} is not set (rank 0's host, for the TCP exchange of the NCCL id)", env::MASTER_ADDR),
                    }))
                }
                (Some(host), master_port, nccl_port) => {
                    let (name, value) = match nccl_port {
                        Some(p) => (env::NCCL_PORT, Some(p)),
                        None => (env::MASTER_PORT, master_port),
                    };
                    let port = parse_var::<u16>(Some(rank), name, value, "a TCP port, 1 to 65535")?;
                    if port == 0 {
                        return Err(Error::Nccl(NcclError::Bootstrap {
                            rank: Some(rank),
                            detail: format!("{name}=0 is not a port rank 0 can be reached on"),
                        }));
                    }
                    IdExchange::Tcp { host, port }
                }
            }
        };
        let timeout = match get(env::TIMEOUT_S) {
            None => DEFAULT_TIMEOUT,
            Some(v) => match v.parse::<f64>() {
                Ok(s) if s.is_finite() && s > 0.0 && s < 1e9 => Duration::from_secs_f64(s),
                _ => {
                    return Err(Error::Nccl(NcclError::Bootstrap {
                        rank: Some(rank),
                        detail: format!("{}={v:?} is not a positive number of seconds", env::TIMEOUT_S),
                    }))
                }
            },
        };
        Ok(Bootstrap { rank, world_size, local_rank, exchange, timeout })
    }

    /// The same, with another local rank (the GPU ordinal a launcher would pick).
    pub fn with_local_rank(mut self, local_rank: usize) -> Self {
        self.local_rank = local_rank;
        self
    }

    /// The same, waiting at most `timeout` for the other ranks during the exchange.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    pub fn world_size(&self) -> usize {
        self.world_size
    }

    /// This process's index on its host (`LOCAL_RANK`).
    pub fn local_rank(&self) -> usize {
        self.local_rank
    }

    /// How the id is shared.
    pub fn exchange(&self) -> &IdExchange {
        &self.exchange
    }

    /// How long the exchange waits for the other ranks.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Shares the NCCL unique id: rank 0 makes it with `make` and hands it to every other rank
    /// through the exchange, returning once every rank has it (so every rank is up when NCCL's
    /// own, collective, initialisation starts); the others return what rank 0 made (`make` is
    /// not called there). A world of one returns `make()` at once. Every wait is bounded by
    /// [`Bootstrap::timeout`]: [`NcclError::Bootstrap`] names this rank, the file or address and,
    /// on rank 0, the ranks that never showed up.
    pub fn share_id(&self, make: impl FnOnce() -> Result<UniqueId>) -> Result<UniqueId> {
        if self.world_size == 1 {
            return make();
        }
        let Some(deadline) = Instant::now().checked_add(self.timeout) else {
            return Err(self.fail(format!("a timeout of {:?} reaches past what the clock can count", self.timeout)));
        };
        match (&self.exchange, self.rank) {
            (IdExchange::Local, _) => {
                Err(self
                    .fail(format!("a world of {} ranks needs a file or TCP exchange of the NCCL id", self.world_size)))
            }
            (IdExchange::File(path), 0) => self.publish_file(path, make()?, deadline),
            (IdExchange::File(path), _) => self.fetch_file(path, deadline),
            (IdExchange::Tcp { host, port }, 0) => self.serve_tcp(host, *port, make()?, deadline),
            (IdExchange::Tcp { host, port }, _) => self.fetch_tcp(host, *port, deadline),
        }
    }

    fn fail(&self, detail: String) -> Error {
        Error::Nccl(NcclError::Bootstrap { rank: Some(self.rank), detail })
    }

    /// Rank 0, file exchange: write the id, wait for every rank's acknowledgement, clean up.
    fn publish_file(&self, path: &Path, id: UniqueId, deadline: Instant) -> Result<UniqueId> {
        if path.exists() {
            return Err(self.fail(format!(
                "{} {} already exists (left by an earlier run?); remove it or give every job a fresh path",
                env::ID_FILE,
                path.display()
            )));
        }
        let acks: Vec<PathBuf> = (1..self.world_size).map(|r| ack_path(path, r)).collect();
        for ack in &acks {
            let _ = std::fs::remove_file(ack);
        }
        // A cross-rank check port left by a crashed run: the other ranks read the port only
        // after the NCCL initialisation this id starts, so once it is gone they can only find
        // the one this rank publishes then (not a stale port another job may listen on).
        let _ = std::fs::remove_file(super::agree::port_file(path));
        let mut content = FILE_MAGIC.to_vec();
        content.extend_from_slice(id.as_bytes());
        write_atomically(path, self.rank, &content)
            .map_err(|e| self.fail(format!("cannot write the NCCL id to {}: {e}", path.display())))?;
        let missing = loop {
            let missing: Vec<usize> = (1..self.world_size).filter(|r| !acks[r - 1].exists()).collect();
            if missing.is_empty() || Instant::now() >= deadline {
                break missing;
            }
            std::thread::sleep(POLL);
        };
        let _ = std::fs::remove_file(path);
        for ack in &acks {
            let _ = std::fs::remove_file(ack);
        }
        if missing.is_empty() {
            Ok(id)
        } else {
            Err(self.fail(format!(
                "timed out after {:?} waiting for ranks {} to read the NCCL id from {}",
                self.timeout,
                rank_list(&missing),
                path.display()
            )))
        }
    }

    /// Rank > 0, file exchange: wait for the id, acknowledge it.
    fn fetch_file(&self, path: &Path, deadline: Instant) -> Result<UniqueId> {
        let content = loop {
            match read_id_file(path) {
                Ok(content) => break content,
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(self.fail(format!("cannot read the NCCL id from {}: {e}", path.display()))),
            }
            if Instant::now() >= deadline {
                return Err(self.fail(format!(
                    "timed out after {:?} waiting for rank 0 to write the NCCL id to {}",
                    self.timeout,
                    path.display()
                )));
            }
            std::thread::sleep(POLL);
        };
        let id = content
            .strip_prefix(FILE_MAGIC.as_slice())
            .and_then(|rest| <[u8; UNIQUE_ID_BYTES]>::try_from(rest).ok())
            .map(UniqueId)
            .ok_or_else(|| {
                let size = match content.len() {
                    n if n > ID_FILE_BYTES => format!("more than {ID_FILE_BYTES}"),
                    n => n.to_string(),
                };
                self.fail(format!("{} holds {size} bytes that are not a kgraph NCCL id file", path.display()))
            })?;
        write_atomically(&ack_path(path, self.rank), self.rank, format!("{}\n", self.rank).as_bytes())
            .map_err(|e| self.fail(format!("cannot acknowledge the NCCL id next to {}: {e}", path.display())))?;
        Ok(id)
    }

    /// Rank 0, TCP exchange: listen on `host:port`, answer every other rank once.
    fn serve_tcp(&self, host: &str, port: u16, id: UniqueId, deadline: Instant) -> Result<UniqueId> {
        let addrs = self.resolve(host, port)?;
        let listener = TcpListener::bind(addrs.as_slice()).map_err(|e| {
            self.fail(format!(
                "cannot listen on {host}:{port} to hand out the NCCL id: {e} ({} must name rank 0's host, and the port be free)",
                env::MASTER_ADDR
            ))
        })?;
        listener.set_nonblocking(true).map_err(|e| self.fail(format!("listen on {host}:{port}: {e}")))?;
        let mut served = BTreeSet::new();
        while served.len() + 1 < self.world_size {
            match listener.accept() {
                Ok((stream, _)) => {
                    // A connection that is not a kgraph rank (or one that fails mid-way) is
                    // dropped; a real rank retries.
                    if let Ok(rank) = self.answer(stream, &id, deadline) {
                        served.insert(rank);
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                    if Instant::now() >= deadline {
                        let missing: Vec<usize> = (1..self.world_size).filter(|r| !served.contains(r)).collect();
                        return Err(self.fail(format!(
                            "timed out after {:?} waiting for ranks {} to fetch the NCCL id from {host}:{port}",
                            self.timeout,
                            rank_list(&missing)
                        )));
                    }
                    std::thread::sleep(POLL);
                }
                Err(e) => return Err(self.fail(format!("accept on {host}:{port}: {e}"))),
            }
        }
        Ok(id)
    }

    /// Reads one rank's request on `stream` and sends it the id; the rank served.
    fn answer(&self, mut stream: TcpStream, id: &UniqueId, deadline: Instant) -> std::io::Result<usize> {
        stream.set_nonblocking(false)?;
        let wait = io_timeout(deadline);
        stream.set_read_timeout(Some(wait))?;
        stream.set_write_timeout(Some(wait))?;
        let mut hello = [0u8; 12];
        stream.read_exact(&mut hello)?;
        let rank = u32::from_le_bytes([hello[8], hello[9], hello[10], hello[11]]) as usize;
        if &hello[..8] != TCP_HELLO || rank == 0 || rank >= self.world_size {
            return Err(ErrorKind::InvalidData.into());
        }
        let mut reply = TCP_REPLY.to_vec();
        reply.extend_from_slice(id.as_bytes());
        stream.write_all(&reply)?;
        stream.flush()?;
        Ok(rank)
    }

    /// Rank > 0, TCP exchange: connect to rank 0 (retrying until it listens), fetch the id.
    fn fetch_tcp(&self, host: &str, port: u16, deadline: Instant) -> Result<UniqueId> {
        let addrs = self.resolve(host, port)?;
        let mut last_error = String::from("no attempt finished");
        loop {
            for addr in &addrs {
                match self.request(addr, deadline) {
                    Ok(id) => return Ok(id),
                    Err(e) => last_error = format!("{addr}: {e}"),
                }
            }
            if Instant::now() >= deadline {
                return Err(self.fail(format!(
                    "timed out after {:?} fetching the NCCL id from rank 0 at {host}:{port} (last error: {last_error})",
                    self.timeout
                )));
            }
            std::thread::sleep(Duration::from_millis(100).min(deadline.saturating_duration_since(Instant::now())));
        }
    }

    fn request(&self, addr: &SocketAddr, deadline: Instant) -> std::io::Result<UniqueId> {
        let mut stream = TcpStream::connect_timeout(addr, io_timeout(deadline))?;
        let wait = io_timeout(deadline);
        stream.set_read_timeout(Some(wait))?;
        stream.set_write_timeout(Some(wait))?;
        let mut hello = TCP_HELLO.to_vec();
        hello.extend_from_slice(&(self.rank as u32).to_le_bytes());
        stream.write_all(&hello)?;
        let mut reply = [0u8; 8 + UNIQUE_ID_BYTES];
        stream.read_exact(&mut reply)?;
        if &reply[..8] != TCP_REPLY {
            return Err(std::io::Error::new(ErrorKind::InvalidData, "the peer is not a kgraph rank 0"));
        }
        let mut id = [0u8; UNIQUE_ID_BYTES];
        id.copy_from_slice(&reply[8..]);
        Ok(UniqueId(id))
    }

    fn resolve(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>> {
        let addrs: Vec<SocketAddr> = (host, port)
            .to_socket_addrs()
            .map_err(|e| self.fail(format!("{}={host} does not resolve: {e}", env::MASTER_ADDR)))?
            .collect();
        if addrs.is_empty() {
            return Err(self.fail(format!("{}={host} resolves to no address", env::MASTER_ADDR)));
        }
        Ok(addrs)
    }
}

/// `name`'s value parsed as `T`, or an error naming the variable (and `rank`, once known).
fn parse_var<T: std::str::FromStr>(rank: Option<usize>, name: &str, value: Option<String>, what: &str) -> Result<T> {
    let value = value
        .ok_or_else(|| Error::Nccl(NcclError::Bootstrap { rank, detail: format!("{name} is not set ({what})") }))?;
    value
        .parse()
        .map_err(|_| Error::Nccl(NcclError::Bootstrap { rank, detail: format!("{name}={value:?} is not {what}") }))
}

/// The longest id file [`read_id_file`] reads: the magic line and the id.
const ID_FILE_BYTES: usize = FILE_MAGIC.len() + UNIQUE_ID_BYTES;

/// The content of an id file, read no further than one byte past [`ID_FILE_BYTES`] (enough to
/// refuse a longer file): the path is shared, so it may name anything, a huge file or
/// `/dev/zero`, which must not be read whole.
fn read_id_file(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut content = Vec::with_capacity(ID_FILE_BYTES + 1);
    std::fs::File::open(path)?.take(ID_FILE_BYTES as u64 + 1).read_to_end(&mut content)?;
    Ok(content)
}

/// `<path>.ack<rank>`.
fn ack_path(path: &Path, rank: usize) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".ack{rank}"));
    PathBuf::from(name)
}

/// Writes `content` to a temporary file next to `path`, then renames it over `path`, so a
/// reader sees the whole content or no file.
fn write_atomically(path: &Path, rank: usize, content: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}.{rank}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let written = std::fs::write(&tmp, content).and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// A socket timeout for what is left until `deadline`: at least 10 ms (0 means "none" to the
/// socket API), at most 5 s (one stuck peer does not hold up the others for long).
fn io_timeout(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now()).clamp(Duration::from_millis(10), Duration::from_secs(5))
}

fn rank_list(ranks: &[usize]) -> String {
    ranks.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", ")
}
