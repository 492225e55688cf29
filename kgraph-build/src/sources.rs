//! The kernel files of a build: the `.cu` files and headers of each folder, the local headers a
//! file includes, and the cache key they make up.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::{BuildError, IoOp};

/// One `.cu` file and the folder it came from (its `-I` include folder).
#[derive(Debug, Clone)]
pub(crate) struct KernelFile {
    /// The `.cu` file.
    pub path: PathBuf,
    /// Its kernel folder.
    pub dir: PathBuf,
}

impl KernelFile {
    /// The file stem, which names its cubin, stamp and report.
    pub fn stem(&self) -> String {
        self.path.file_stem().unwrap_or_default().to_string_lossy().into_owned()
    }
}

/// The `.cu` files of `dirs`, folder by folder, each folder's sorted by name. A folder that
/// cannot be read contributes nothing (callers check the folders that must exist).
/// [`BuildError::DuplicateStem`] when two files would compile to the same cubin.
pub(crate) fn collect(dirs: &[PathBuf]) -> Result<Vec<KernelFile>, BuildError> {
    let mut files: Vec<KernelFile> = Vec::new();
    for dir in dirs {
        for path in list_with_extension(dir, &["cu"]) {
            let file = KernelFile { path, dir: dir.clone() };
            let stem = file.stem();
            if let Some(first) = files.iter().find(|f| f.stem() == stem) {
                return Err(BuildError::DuplicateStem { stem, first: first.path.clone(), second: file.path });
            }
            files.push(file);
        }
    }
    Ok(files)
}

/// The headers (`.cuh`, `.h`, `.hpp`) directly in `dir`, sorted.
pub(crate) fn headers(dir: &Path) -> Vec<PathBuf> {
    list_with_extension(dir, &["cuh", "h", "hpp"])
}

/// The files directly in `dir` with one of `extensions`, sorted; none if `dir` cannot be read.
fn list_with_extension(dir: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| extensions.iter().any(|x| e == *x)))
        .collect();
    v.sort();
    v
}

/// Local headers `src` includes, transitively, as nvcc resolves them with `-I` for each of
/// `search` (the kernel folder first, then the include folders): `#include "x.cuh"` beside the
/// including file, then in `search`; `#include <x.h>` in `search` only. Headers found nowhere
/// (CUDA's and the system's) are not followed.
pub(crate) fn local_includes(src: &Path, search: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![src.to_path_buf()];
    while let Some(file) = todo.pop() {
        // Lossy: a `.cu` may hold Latin-1 bytes in comments (nvcc accepts them); `#include`s are ASCII.
        let Ok(bytes) = std::fs::read(&file) else { continue };
        let text = String::from_utf8_lossy(&bytes);
        for line in text.lines() {
            let line = line.trim_start();
            let Some(rest) = line.strip_prefix('#').map(str::trim_start).and_then(|l| l.strip_prefix("include")) else {
                continue;
            };
            let rest = rest.trim();
            let (name, beside) = if let Some(r) = rest.strip_prefix('"') {
                (r.split('"').next(), true)
            } else if let Some(r) = rest.strip_prefix('<') {
                (r.split('>').next(), false)
            } else {
                continue;
            };
            let Some(name) = name else { continue };
            let base = file.parent().filter(|_| beside).map(|b| b.join(name));
            let candidate = base.into_iter().chain(search.iter().map(|d| d.join(name))).find(|p| p.is_file());
            if let Some(p) = candidate {
                if seen.insert(p.clone()) {
                    todo.push(p);
                }
            }
        }
    }
    seen
}

/// What the outputs of one compile contain, part of the cache key: bumped whenever the record
/// (or another output) gains a fact, so that outputs cached by an older kgraph-build, which
/// lack it, are rebuilt rather than read as "none" (revision 2: static shared arrays; 3:
/// `pdl_wait_first`; 4: `pdl_wait_first` and `pdl_wait` proven for every arch, and the prover
/// no longer blind to code after a `.loc` or inside a `.pragma` string: records cached by 3
/// may claim a wait first that the code does not make). Bump it with any change to what a
/// record says of the same PTX.
const OUTPUT_REVISION: &[u8] = b"kgraph-build outputs 4";

/// The sources of the PTX reader, part of the cache key (see [`cache_key`]).
const RECORD_READERS: [&[u8]; 5] = [
    include_bytes!("ptx.rs"),
    include_bytes!("ptx/function.rs"),
    include_bytes!("ptx/params.rs"),
    include_bytes!("ptx/wait_first.rs"),
    include_bytes!("ptx/shared.rs"),
];

/// FNV-1a over the source, its local headers (see [`local_includes`] for `search`), nvcc's
/// version, the arguments, [`OUTPUT_REVISION`] and the PTX reader's own sources.
pub(crate) fn cache_key(src: &Path, search: &[PathBuf], version: &str, args: &[String]) -> Result<String, BuildError> {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x100_0000_01b3);
        }
    };
    feed(&std::fs::read(src).map_err(|e| BuildError::io(IoOp::Read, src, e))?);
    for header in local_includes(src, search) {
        feed(header.to_string_lossy().as_bytes());
        feed(&std::fs::read(&header).unwrap_or_default());
    }
    feed(version.as_bytes());
    feed(OUTPUT_REVISION);
    // The code that reads the records out of the PTX: a change to it (a prover made stricter)
    // rebuilds the records it would read differently, even where OUTPUT_REVISION was not bumped.
    for reader in RECORD_READERS {
        feed(reader);
    }
    for a in args {
        feed(a.as_bytes());
    }
    Ok(format!("{h:016x}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder, removed when the guard drops.
    fn scratch(name: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::Builder::new().prefix(&format!("kgraph-build-test-{name}-")).tempdir().unwrap();
        let path = dir.path().to_path_buf();
        (dir, path)
    }

    #[test]
    fn includes_are_followed_transitively_and_change_the_key() {
        let (_guard, dir) = scratch("includes");
        std::fs::write(dir.join("a.cu"), "#include \"b.cuh\"\nextern \"C\" __global__ void a() {}\n").unwrap();
        std::fs::write(dir.join("b.cuh"), "#include \"c.cuh\"\n").unwrap();
        std::fs::write(dir.join("c.cuh"), "// v1\n").unwrap();
        let search = [dir.clone()];
        let inc = local_includes(&dir.join("a.cu"), &search);
        assert_eq!(inc.len(), 2);
        let k1 = cache_key(&dir.join("a.cu"), &search, "v", &[]).unwrap();
        std::fs::write(dir.join("c.cuh"), "// v2\n").unwrap();
        let k2 = cache_key(&dir.join("a.cu"), &search, "v", &[]).unwrap();
        assert_ne!(k1, k2);
    }

    #[test]
    fn files_come_folder_by_folder_and_stems_must_differ() {
        let ((_one, one), (_two, two)) = (scratch("collect-one"), scratch("collect-two"));
        for (dir, name) in [(&one, "b.cu"), (&one, "a.cu"), (&two, "c.cu"), (&two, "x.cuh")] {
            std::fs::write(dir.join(name), "").unwrap();
        }
        let files = collect(&[one.clone(), two.clone(), one.join("absent")]).unwrap();
        let stems: Vec<String> = files.iter().map(KernelFile::stem).collect();
        assert_eq!(stems, ["a", "b", "c"]);
        assert_eq!(files[2].dir, two);

        std::fs::write(two.join("a.cu"), "").unwrap();
        match collect(&[one.clone(), two.clone()]) {
            Err(BuildError::DuplicateStem { stem, first, second }) => {
                assert_eq!((stem.as_str(), first, second), ("a", one.join("a.cu"), two.join("a.cu")));
            }
            other => panic!("expected DuplicateStem, got {other:?}"),
        }
    }
}
