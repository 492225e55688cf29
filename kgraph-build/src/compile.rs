//! Compiling the kernel files with nvcc: the stale ones in parallel, each cached by its stamp,
//! its PTX read into the record (narrowed over every arch), and the per-file outcomes gathered
//! into the [`BuildReport`]; or, without nvcc, the NVRTC fallback's empty images.

use std::path::{Path, PathBuf};

use crate::error::{BuildError, IoOp};
use crate::nvcc::{self, Nvcc, HOW_TO_GET_NVCC};
use crate::outputs::{Outcome, OutputFiles};
use crate::resources;
use crate::sources::{self, KernelFile};
use crate::{format_kernel_record, ptx_target, records_from_ptx, BuildReport, KernelBuild, KernelRecord};

impl KernelBuild {
    /// No nvcc: leaves an empty image per kernel (so `#[kernel]` compiles the source with NVRTC
    /// at load), with a loud warning, unless nvcc is required.
    pub(crate) fn fall_back_to_nvrtc(
        &self,
        dirs: &[PathBuf],
        sources: &[KernelFile],
        out_dir: &Path,
    ) -> Result<BuildReport, BuildError> {
        let require = self.require_nvcc.unwrap_or_else(|| std::env::var("KGRAPH_REQUIRE_NVCC").is_ok_and(|v| v == "1"));
        if require {
            return Err(BuildError::NvccRequired { how_to: HOW_TO_GET_NVCC });
        }
        let folders: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        self.cargo(&format!(
            "warning=kgraph: NO NVCC FOUND, kernels in {} will be compiled with NVRTC at run time (slower first load, no resource report). Without nvcc there is no record of what was compiled: `#[kernel]` checks declarations against the .cu text only (no preprocessor), parameter sizes are checked when a module loads, and PDL launches and `pdl = true` graph nodes are refused (no wait is proven). To build cubins, {HOW_TO_GET_NVCC}. Set KGRAPH_REQUIRE_NVCC=1 to make this an error.",
            folders.join(", ")
        ));
        for src in sources {
            let files = OutputFiles::new(out_dir, &src.path);
            std::fs::write(&files.cubin, b"").map_err(|e| BuildError::io(IoOp::Write, &files.cubin, e))?;
            // No compile, no record: old ones would describe a source that may have changed.
            files.remove_derived();
        }
        Ok(BuildReport { nvrtc_fallback: true, ..BuildReport::default() })
    }

    /// Compiles the kernels whose cubin is stale on `NUM_JOBS` threads, and reports on all.
    pub(crate) fn compile_stale(
        &self,
        sources: &[KernelFile],
        out_dir: &Path,
        nvcc: &Nvcc,
        archs: &[String],
    ) -> Result<BuildReport, BuildError> {
        let version = nvcc::version(nvcc)?;
        let jobs = std::env::var("NUM_JOBS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
            .max(1);
        let queue = std::sync::Mutex::new(sources.iter().enumerate());
        let done = std::sync::Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for _ in 0..jobs.min(sources.len()) {
                s.spawn(|| loop {
                    let next = queue.lock().unwrap().next();
                    let Some((index, src)) = next else { break };
                    let result = self.build_one(src, out_dir, nvcc, &version, archs);
                    done.lock().unwrap().push((index, result));
                });
            }
        });
        let mut results = done.into_inner().unwrap();
        // Threads finish in any order; report in source order, so messages are reproducible.
        results.sort_by_key(|(index, _)| *index);
        self.report(results.into_iter().map(|(index, result)| (&sources[index], result)))
    }

    /// Gathers per-file outcomes into a report (warning about local memory use), or the errors
    /// of the files that failed.
    fn report<'a>(
        &self,
        results: impl Iterator<Item = (&'a KernelFile, Result<Outcome, BuildError>)>,
    ) -> Result<BuildReport, BuildError> {
        let mut report = BuildReport::default();
        let mut errors = Vec::new();
        for (src, result) in results {
            let outcome = match result {
                Ok(outcome) => outcome,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            for k in outcome.resources.iter().filter(|k| k.uses_local_memory()) {
                self.cargo(&format!(
                    "warning=kgraph: kernel `{}` ({}) uses local memory: {}",
                    k.kernel,
                    src.path.display(),
                    k.line()
                ));
            }
            report.resources.extend(outcome.resources);
            report.outputs.push(outcome.outputs);
            if outcome.compiled {
                report.compiled.push(src.path.clone())
            } else {
                report.up_to_date.push(src.path.clone())
            }
        }
        if errors.len() > 1 {
            Err(BuildError::Several(errors))
        } else if let Some(error) = errors.pop() {
            Err(error)
        } else {
            Ok(report)
        }
    }

    /// Compiles `src` unless its stamp matches the cache key and all its outputs exist.
    pub(crate) fn build_one(
        &self,
        src: &KernelFile,
        out_dir: &Path,
        nvcc: &Nvcc,
        version: &str,
        archs: &[String],
    ) -> Result<Outcome, BuildError> {
        let in_kernel = |source| BuildError::Kernel { file: src.path.clone(), source: Box::new(source) };
        let files = OutputFiles::new(out_dir, &src.path);
        let args = nvcc::args(&src.path, &files.cubin, &files.keep_dir, archs, &self.flags(&src.dir));
        let mut search = vec![src.dir.clone()];
        search.extend(self.include_dirs.iter().cloned());
        let key = sources::cache_key(&src.path, &search, version, &args).map_err(in_kernel)?;
        if let Some(outcome) = files.cached(&key, &src.path) {
            return Ok(outcome);
        }
        files.remove_derived();
        let _ = std::fs::remove_dir_all(&files.keep_dir);
        let compiled = self.compile_keeping(src, nvcc, &args, &files, archs);
        let _ = std::fs::remove_dir_all(&files.keep_dir);
        let (stderr, kernels) = compiled?;
        let resources = resources::parse(&stderr);
        let mut text = stderr.clone();
        text.push_str("\n# summary\n");
        for k in &resources {
            text.push_str(&k.line());
            text.push('\n');
        }
        let write = |path: &Path, text: &str| {
            std::fs::write(path, text).map_err(|e| in_kernel(BuildError::io(IoOp::Write, path, e)))
        };
        write(&files.resources, &text)?;
        // The stamp last: it vouches for every other output.
        write(&files.stamp, &key)?;
        Ok(Outcome { compiled: true, resources, outputs: files.outputs(&src.path, kernels, true) })
    }

    /// Runs nvcc with `args` (which keep intermediates in `files.keep_dir`), then moves the PTX and
    /// the preprocessed source of the first arch out of it and writes the record. Returns nvcc's
    /// stderr and the records.
    fn compile_keeping(
        &self,
        src: &KernelFile,
        nvcc: &Nvcc,
        args: &[String],
        files: &OutputFiles,
        archs: &[String],
    ) -> Result<(String, Vec<KernelRecord>), BuildError> {
        let in_kernel = |source| BuildError::Kernel { file: src.path.clone(), source: Box::new(source) };
        std::fs::create_dir_all(&files.keep_dir)
            .map_err(|e| in_kernel(BuildError::io(IoOp::Create, &files.keep_dir, e)))?;
        let stderr = nvcc::run(nvcc, &src.path, args, &files.keep_dir)?;
        let (ptx, ii) = nvcc::kept_files(&files.keep_dir, &src.path, archs).map_err(in_kernel)?;
        for (from, to) in [(&ptx, &files.ptx), (&ii, &files.preprocessed)] {
            std::fs::rename(from, to).map_err(|e| in_kernel(BuildError::io(IoOp::Write, to, e)))?;
        }
        let text =
            std::fs::read_to_string(&files.ptx).map_err(|e| in_kernel(BuildError::io(IoOp::Read, &files.ptx, e)))?;
        let mut kernels = records_from_ptx(&text);
        for other in nvcc::other_arch_ptx(&files.keep_dir, &src.path, archs).map_err(in_kernel)? {
            let text = std::fs::read_to_string(&other).map_err(|e| in_kernel(BuildError::io(IoOp::Read, &other, e)))?;
            every_arch(&mut kernels, &records_from_ptx(&text));
        }
        let record = format_kernel_record(ptx_target(&text).as_deref(), &kernels);
        std::fs::write(&files.record, record).map_err(|e| in_kernel(BuildError::io(IoOp::Write, &files.record, e)))?;
        Ok((stderr, kernels))
    }
}

/// Narrows the first arch's records to what also holds in another arch's PTX (`other`): the
/// driver runs whichever image matches the GPU, and `__CUDA_ARCH__` can make them differ. A
/// kernel waits (first) only if it does in every arch, and may use dynamic shared memory if it
/// may in any; a kernel another arch lacks proves nothing there.
fn every_arch(kernels: &mut [KernelRecord], other: &[KernelRecord]) {
    for k in kernels {
        match other.iter().find(|o| o.name == k.name) {
            Some(o) => {
                k.pdl_wait &= o.pdl_wait;
                k.pdl_wait_first &= o.pdl_wait_first;
                k.dyn_smem |= o.dyn_smem;
            }
            None => {
                k.pdl_wait = false;
                k.pdl_wait_first = false;
                k.dyn_smem = true;
            }
        }
    }
}
