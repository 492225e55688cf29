//! Hot reload's file side, without a GPU: the file a kernel is recompiled from is its kernel
//! folder's `.cu` of the declared name, and the watch sees an edit, a removal and a file coming
//! back (each once), so `reload_kernels` never misses a change it should recompile.

use std::time::{Duration, SystemTime};

use kgraph_runtime::reload::{self, KernelWatch};
use kgraph_runtime::KernelSource;

fn touch(path: &std::path::Path, text: &str, at: SystemTime) {
    std::fs::write(path, text).unwrap();
    std::fs::File::options().write(true).open(path).unwrap().set_modified(at).unwrap();
}

#[test]
fn the_watch_sees_each_change_of_the_file_reload_compiles() {
    reload::set_enabled(true);
    let dir = tempfile::tempdir().unwrap();
    let folder: &'static str = Box::leak(dir.path().to_str().unwrap().to_string().into_boxed_str());
    // SAFETY: a test value for paths only; never loaded.
    let a = unsafe { KernelSource::new("kernels/ops.cu", &[], "", folder) };
    // SAFETY: as above (a second kernel of the same file).
    let b = unsafe { KernelSource::new("kernels/ops.cu", &[], "", folder) };
    let path = dir.path().join("ops.cu");
    assert_eq!(a.disk_path(), path, "the kernel folder's file of the declared name");
    let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
    touch(&path, "v1", t0);
    let mut watch = KernelWatch::new(&[&a, &b]);
    assert_eq!(watch.files().count(), 1, "one file, however many kernels it holds");
    assert!(!watch.changed());
    touch(&path, "v2", t0 + Duration::from_secs(1));
    assert!(watch.changed(), "an edit");
    assert!(!watch.changed(), "seen once");
    std::fs::remove_file(&path).unwrap();
    assert!(watch.changed(), "a removal (the reload then fails and the old kernels stay)");
    touch(&path, "v3", t0);
    assert!(watch.changed(), "the file back, even with an older time");
    reload::set_enabled(false);
    assert_eq!(KernelWatch::new(&[&a]).files().count(), 0, "off: no file is watched");
}
