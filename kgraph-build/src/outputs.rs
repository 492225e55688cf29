//! The files one kernel file compiles to in the output folder, and whether a cached set of
//! them is still good.

use std::path::{Path, PathBuf};

use crate::resources::{self, KernelResources};
use crate::{parse_kernel_record, KernelOutputs, KernelRecord};

/// One kernel file's result: whether it was compiled (or cached), ptxas' report, its outputs.
pub(crate) struct Outcome {
    pub(crate) compiled: bool,
    pub(crate) resources: Vec<KernelResources>,
    pub(crate) outputs: KernelOutputs,
}

/// The paths of one kernel file's outputs in the output folder.
pub(crate) struct OutputFiles {
    pub(crate) cubin: PathBuf,
    pub(crate) stamp: PathBuf,
    pub(crate) resources: PathBuf,
    pub(crate) record: PathBuf,
    pub(crate) preprocessed: PathBuf,
    pub(crate) ptx: PathBuf,
    /// nvcc's `-keep-dir` for this file, removed after each compile.
    pub(crate) keep_dir: PathBuf,
}

impl OutputFiles {
    pub(crate) fn new(out_dir: &Path, src: &Path) -> Self {
        let file = |suffix| out_dir.join(output_name(src, suffix));
        OutputFiles {
            cubin: file("cubin"),
            stamp: file("stamp"),
            resources: file("resources.txt"),
            record: file("kernels"),
            preprocessed: file("i"),
            ptx: file("ptx"),
            keep_dir: file("keep"),
        }
    }

    /// The cached outcome, if the stamp holds `key`, the cubin is not empty, the preprocessed
    /// source and PTX exist and the record parses; `None` means the file must be compiled.
    pub(crate) fn cached(&self, key: &str, src: &Path) -> Option<Outcome> {
        let stamped = std::fs::read_to_string(&self.stamp).ok().is_some_and(|s| s == key)
            && std::fs::metadata(&self.cubin).is_ok_and(|m| m.len() > 0)
            && self.preprocessed.is_file()
            && self.ptx.is_file();
        if !stamped {
            return None;
        }
        let kernels = parse_kernel_record(&std::fs::read_to_string(&self.record).ok()?).ok()?;
        let text = std::fs::read_to_string(&self.resources).unwrap_or_default();
        Some(Outcome {
            compiled: false,
            resources: resources::parse(&text),
            outputs: self.outputs(src, kernels, false),
        })
    }

    /// Removes the stamp and every file derived from a compile other than the image.
    pub(crate) fn remove_derived(&self) {
        for path in [&self.stamp, &self.record, &self.preprocessed, &self.ptx] {
            let _ = std::fs::remove_file(path);
        }
    }

    pub(crate) fn outputs(&self, src: &Path, kernels: Vec<KernelRecord>, compiled: bool) -> KernelOutputs {
        KernelOutputs {
            source: src.to_path_buf(),
            cubin: self.cubin.clone(),
            record: self.record.clone(),
            preprocessed: self.preprocessed.clone(),
            ptx: self.ptx.clone(),
            kernels,
            compiled,
        }
    }
}

/// `<stem>.<suffix>`: the name of one of `src`'s files in the output folder.
pub(crate) fn output_name(src: &Path, suffix: &str) -> String {
    format!("{}.{suffix}", src.file_stem().unwrap_or_default().to_string_lossy())
}
