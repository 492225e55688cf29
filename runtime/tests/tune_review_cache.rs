//! The autotune cache as a file: what `save` writes reads back as it was, and a name that would
//! not (a tab or a line break in it, a GPU name read as a comment) is refused instead of
//! writing a file that forges or drops entries.

use std::path::Path;

use kgraph_runtime::tune::{TuneCache, TuneKey};

fn key(gpu: &str, node: &str) -> TuneKey {
    TuneKey { gpu: gpu.into(), graph: "G".into(), node: node.into(), threads: 1024 }
}

#[test]
fn a_saved_cache_reads_back_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tune.txt");
    let mut cache = TuneCache::default();
    cache.insert(key("NVIDIA H200", "cfc"), 64);
    cache.insert(key("NVIDIA H200", "heads"), 256);
    cache.save(&path).unwrap();
    assert_eq!(TuneCache::load(&path).unwrap(), cache);
}

#[test]
fn a_name_that_would_not_read_back_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tune.txt");
    // A tab and a line break in the GPU name would write a second, forged entry (node `x`,
    // block 1024) into the file; a GPU name starting with `#` would be read as a comment.
    for bad in [key("A\tG\tx\t1024\t1024\nB", "cfc"), key("#1", "cfc"), key("H200", "a\tb")] {
        let mut cache = TuneCache::default();
        cache.insert(bad.clone(), 64);
        let err = cache.save(&path).expect_err("refused").to_string();
        assert!(err.contains("would not read back"), "{bad:?}: {err}");
        assert!(!path.exists(), "nothing written for {bad:?}");
    }
    // What the forged line would have read as, had it been written.
    let text = "A\tG\tx\t1024\t1024\nB\tG\tcfc\t1024\t64\n";
    let forged = TuneCache::parse(text, Path::new("t")).unwrap();
    assert_eq!(
        forged.get(&TuneKey { gpu: "A".into(), graph: "G".into(), node: "x".into(), threads: 1024 }),
        Some(1024)
    );
}
