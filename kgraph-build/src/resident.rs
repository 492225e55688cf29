//! Resident kernels generated from graph specs: every spec of the graph folders that says
//! `resident = true` is lowered (by `kgraph-codegen`, the front end `graph!` uses) to one
//! `.cu` in `$OUT_DIR/kgraph/resident/`, written beside the device headers it includes and
//! compiled like a kernel file. `graph!` then checks that the file is the one it would write
//! (`docs/resident.md`).

use std::path::{Path, PathBuf};

use crate::error::{BuildError, IoOp};
use crate::nvcc::Nvcc;
use crate::sources::KernelFile;
use crate::KernelBuild;

/// The folder of the generated sources and their outputs, in the record folder.
pub const RESIDENT_DIR: &str = "resident";

impl KernelBuild {
    /// Lowers the resident specs of the graph folders (after the kernels compiled: the lowering
    /// reads their records) and compiles each with `nvcc`, or leaves an empty cubin for the
    /// NVRTC fallback when it is `None`. A spec that does not check is skipped with a warning
    /// (`graph!` reports its errors where it expands it).
    pub(crate) fn build_residents(
        &self,
        out_dir: &Path,
        kernel_dirs: &[PathBuf],
        nvcc: Option<(&Nvcc, &str, &[String])>,
    ) -> Result<(), BuildError> {
        let dir = out_dir.join(RESIDENT_DIR);
        let mut made: Vec<KernelFile> = Vec::new();
        let mut specs: Vec<(String, PathBuf)> = Vec::new();
        for spec in self.resident_candidates() {
            let rel = spec.strip_prefix(&self.manifest_dir).unwrap_or(&spec).to_string_lossy().replace('\\', "/");
            let lowered = kgraph_codegen::graph::resident::lower::resident_kernel(
                &self.manifest_dir,
                &rel,
                Some(out_dir),
                kernel_dirs,
            );
            let kernel = match lowered {
                Ok(Some(kernel)) => kernel,
                Ok(None) => continue,
                Err(errors) => {
                    let first = errors.first().and_then(|e| e.lines().next()).unwrap_or_default().to_string();
                    self.cargo(&format!("warning=kgraph: {rel}: no resident kernel ({first})"));
                    continue;
                }
            };
            if let Some((_, first)) = specs.iter().find(|(symbol, _)| *symbol == kernel.symbol) {
                return Err(BuildError::DuplicateResident {
                    symbol: kernel.symbol,
                    first: first.clone(),
                    second: spec,
                });
            }
            specs.push((kernel.symbol.clone(), spec.clone()));
            for input in &kernel.inputs {
                self.cargo(&format!("rerun-if-changed={}", self.manifest_dir.join(input).display()));
            }
            if made.is_empty() {
                write_headers(&dir)?;
            }
            let path = dir.join(format!("{}.cu", kernel.symbol));
            // Written only when it changed, so an unchanged source keeps its cached cubin.
            if std::fs::read_to_string(&path).ok().as_deref() != Some(kernel.source.as_str()) {
                std::fs::write(&path, &kernel.source).map_err(|e| BuildError::io(IoOp::Write, &path, e))?;
            }
            made.push(KernelFile { path, dir: dir.clone() });
        }
        for src in &made {
            let failed = kgraph_codegen::graph::resident::failure_note_path(&src.path);
            match nvcc {
                // A generated kernel nvcc refuses (device functions' shared memory past the limit,
                // file-scope names two kernel files both define) fails its spec's `graph!`, at
                // the spec, not the crate's build: the message waits in `<stem>.failed`.
                Some((nvcc, version, archs)) => match self.build_one(src, &dir, nvcc, version, archs) {
                    Ok(_) => {
                        let _ = std::fs::remove_file(&failed);
                        self.warn_non_coherent_loads(&dir, &src.stem());
                    }
                    Err(e) => {
                        let message = e.to_string();
                        let first = message.lines().find(|l| l.contains("error")).unwrap_or_default();
                        self.cargo(&format!("warning=kgraph: resident kernel {} did not compile: {first}", src.stem()));
                        std::fs::write(&failed, &message).map_err(|e| BuildError::io(IoOp::Write, &failed, e))?;
                    }
                },
                None => {
                    let _ = std::fs::remove_file(&failed);
                    let cubin = dir.join(format!("{}.cubin", src.stem()));
                    std::fs::write(&cubin, b"").map_err(|e| BuildError::io(IoOp::Write, &cubin, e))?;
                }
            }
        }
        Ok(())
    }

    /// A warning when the resident kernel reads through the non-coherent cache (`ld.global.nc`:
    /// `__ldg`, or a `const __restrict__` pointer the compiler took to be read-only): a kernel
    /// that stays resident may see stale values there of memory a step writes, so only memory
    /// no node writes may be read so (part of each `unsafe(device_fn)` promise).
    fn warn_non_coherent_loads(&self, dir: &Path, stem: &str) {
        let ptx = std::fs::read_to_string(dir.join(format!("{stem}.ptx"))).unwrap_or_default();
        let loads = ptx.matches("ld.global.nc").count();
        if loads > 0 {
            self.cargo(&format!(
                "warning=kgraph: resident kernel {stem} has {loads} loads through the non-coherent cache (ld.global.nc): each must read memory no node of the step writes (weights), which the kernels' `unsafe(device_fn)` promise says (docs/resident.md)"
            ));
        }
    }

    /// The `.toml` files of the graph folders that mention `resident` (the lowering decides),
    /// with a `rerun-if-changed` for each folder and file.
    fn resident_candidates(&self) -> Vec<PathBuf> {
        let mut specs = Vec::new();
        for dir in &self.graph_dirs {
            let Ok(entries) = std::fs::read_dir(dir) else { continue };
            self.cargo(&format!("rerun-if-changed={}", dir.display()));
            let mut files: Vec<PathBuf> =
                entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect();
            files.sort();
            for file in files {
                self.cargo(&format!("rerun-if-changed={}", file.display()));
                if std::fs::read_to_string(&file).is_ok_and(|t| t.contains("resident")) {
                    specs.push(file);
                }
            }
        }
        specs
    }
}

/// `kg_resident.cuh` and `kg_resident_grid.cuh` into `dir` (created), where the generated
/// sources include them from.
fn write_headers(dir: &Path) -> Result<(), BuildError> {
    std::fs::create_dir_all(dir).map_err(|e| BuildError::io(IoOp::Create, dir, e))?;
    for (name, text) in [
        ("kg_resident.cuh", kgraph_record::cuda::RESIDENT_HEADER),
        ("kg_resident_grid.cuh", kgraph_record::cuda::RESIDENT_GRID_HEADER),
    ] {
        let path = dir.join(name);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text) {
            std::fs::write(&path, text).map_err(|e| BuildError::io(IoOp::Write, &path, e))?;
        }
    }
    Ok(())
}
