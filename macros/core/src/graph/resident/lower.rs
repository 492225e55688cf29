//! The build's side of a resident spec: [`resident_kernel`] analyzes a spec as `graph!` does
//! and lowers it ([`super::cuda`]).

use std::path::{Path, PathBuf};

use super::cuda;
use super::layout::resident_symbol;
use crate::graph::pipeline::{analyze_with, GraphRequest, Options};

/// A spec's resident kernel, as the build writes it.
#[derive(Debug, Clone)]
pub struct ResidentKernel {
    /// `kg_<stem>_resident`: the entry's symbol and the name of its files.
    pub symbol: String,
    /// The CUDA source.
    pub source: String,
    /// The files it was generated from, relative to the crate root (the spec, the specs it
    /// includes, the kernels' Rust declarations): a change to any of them changes it.
    pub inputs: Vec<String>,
}

/// The resident kernel of the spec at `spec_path` (relative to `root`, the crate root), with
/// the kernels' records in `record_dir` and their `.cu` files in `kernel_dirs`: `Ok(None)` when
/// the spec does not ask for one (`resident = true`), `Err` with every error when it does not
/// check (`graph!` reports them, located, when it expands the spec). What `kgraph-build` writes
/// and compiles.
pub fn resident_kernel(
    root: &Path,
    spec_path: &str,
    record_dir: Option<&Path>,
    kernel_dirs: &[PathBuf],
) -> Result<Option<ResidentKernel>, Vec<String>> {
    let text = std::fs::read_to_string(root.join(spec_path))
        .map_err(|e| vec![format!("cannot read graph spec `{spec_path}`: {e}")])?;
    let read_file = |rel: &str| std::fs::read_to_string(root.join(rel));
    let root_str = root.to_string_lossy();
    let req = GraphRequest { spec_path, spec_text: &text, struct_name: None, root: &root_str, read_file: &read_file };
    let analysis = analyze_with(&req, &Options { record_dir, resident: true, ..Options::default() })?;
    let ir = &analysis.ir;
    if !ir.resident {
        return Ok(None);
    }
    let mut inputs = vec![spec_path.to_string(), ir.kernel_source.clone()];
    inputs.extend(ir.includes.iter().map(|i| i.spec.clone()));
    Ok(Some(ResidentKernel {
        symbol: resident_symbol(spec_path),
        source: cuda::source(ir, &analysis.edges, kernel_dirs),
        inputs,
    }))
}
