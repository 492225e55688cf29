//! Review of the NCCL bootstrap's file exchange against malformed shared files (CPU only): the
//! id file is read no further than an id (a shared path may name a huge file or `/dev/zero`),
//! and a cross-rank check port left by a crashed run is removed before the id is published.
#![cfg(feature = "nccl")]

use std::path::PathBuf;
use std::time::Duration;

use kgraph_runtime::nccl::{Bootstrap, IdExchange, UniqueId};
use kgraph_runtime::{Error, NcclError};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kgraph-nccl-review-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[cfg(unix)]
#[test]
fn an_id_file_naming_dev_zero_is_refused_not_read_whole() {
    let dir = scratch("zero");
    let id = dir.join("id");
    std::os::unix::fs::symlink("/dev/zero", &id).unwrap();
    let boot = Bootstrap::new(1, 2, IdExchange::File(id.clone())).unwrap().with_timeout(Duration::from_secs(2));
    // Before the review this read `/dev/zero` into memory until the process was killed.
    let err = boot.share_id(|| unreachable!("rank 1 makes no id")).unwrap_err();
    let Error::Nccl(NcclError::Bootstrap { rank: Some(1), .. }) = &err else { panic!("{err:?}") };
    assert!(err.to_string().contains("more than 144 bytes that are not a kgraph NCCL id file"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_id_file_longer_than_an_id_is_refused() {
    let dir = scratch("long");
    let id = dir.join("id");
    let mut content = b"KGRAPH-NCCL-ID1\n".to_vec();
    content.extend_from_slice(&[7u8; 128 + 4096]);
    std::fs::write(&id, &content).unwrap();
    let boot = Bootstrap::new(1, 2, IdExchange::File(id.clone())).unwrap().with_timeout(Duration::from_secs(2));
    let err = boot.share_id(|| unreachable!("rank 1 makes no id")).unwrap_err();
    assert!(err.to_string().contains("not a kgraph NCCL id file"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn rank_0_removes_a_stale_check_port_before_publishing_the_id() {
    let dir = scratch("stale");
    let id = dir.join("id");
    let mut port_file = id.clone().into_os_string();
    port_file.push(".agree");
    let port_file = PathBuf::from(port_file);
    // A crashed run's port: a rank reading it would join whatever listens there now.
    std::fs::write(&port_file, "4321").unwrap();
    let made = UniqueId::from_bytes([3; 128]);
    let ranks: Vec<_> = (0..2)
        .map(|rank| {
            let boot =
                Bootstrap::new(rank, 2, IdExchange::File(id.clone())).unwrap().with_timeout(Duration::from_secs(10));
            std::thread::spawn(move || boot.share_id(|| Ok(made)))
        })
        .collect();
    for r in ranks {
        assert_eq!(r.join().unwrap().unwrap(), made);
    }
    assert!(!port_file.exists(), "the stale port file outlived rank 0's publication of the id");
    std::fs::remove_dir_all(&dir).unwrap();
}
