//! A spec as one resident kernel (`resident = true`): the step's layout, read by both back ends
//! from the validated graph: the build writes the kernel's CUDA source from it ([`cuda`],
//! through [`lower::resident_kernel`]), `graph!` the Rust side (`into_resident`, the step's `In` and
//! `Out` structs). `check::resident` has the rules that make a spec lowerable.
//!
//! What goes where: the buffers the host writes each step (pinned, slot, input) are the step's
//! input words, copied into every block's shared memory and passed to the device functions at
//! their copy in the loop's device memory; the ones it reads back (pinned_out,
//! output) are its output words; every other buffer stays in device memory the graph struct
//! owns, reached through the parameter struct with the scalars' values. Nodes run level by
//! level of the dataflow, a grid barrier between levels.

pub mod cuda;
pub mod layout;
pub mod lower;

use std::path::{Path, PathBuf};

use self::layout::resident_symbol;
use super::dataflow::Edge;
use super::ir::GraphIr;

/// Where the build writes the resident kernel of a spec, in the record folder.
pub fn built_source_path(record_dir: &Path, spec_path: &str) -> PathBuf {
    record_dir.join("resident").join(format!("{}.cu", resident_symbol(spec_path)))
}

/// Beside a generated source nvcc refused, where kgraph-build leaves nvcc's message
/// (`kg_<stem>_resident.failed`), for [`check_built`] to report at the spec.
pub fn failure_note_path(source: &Path) -> PathBuf {
    source.with_extension("failed")
}

/// Checks that the build lowered `ir` as this expansion does (the source in `record_dir`
/// equals [`cuda::source`] of `ir`), so `into_resident`'s structs are the kernel's: the file's
/// path (to track), or why not.
pub fn check_built(ir: &GraphIr, edges: &[Edge], record_dir: &Path, kernel_dirs: &[PathBuf]) -> Result<String, String> {
    let path = built_source_path(record_dir, &ir.spec_path);
    let expected = cuda::source(ir, edges, kernel_dirs);
    // kgraph-build leaves nvcc's message beside a generated kernel it could not compile.
    if let Ok(message) = std::fs::read_to_string(failure_note_path(&path)) {
        let shown: Vec<&str> = message.lines().filter(|l| !l.trim().is_empty()).take(12).collect();
        return Err(format!(
            "nvcc could not compile the resident kernel the build generated from this spec ({}): the kernels' device functions do not go together in one step (their static shared memory beside the step's input, or a name two kernel files both define); nvcc said:\n{}",
            path.display(),
            shown.join("\n")
        ));
    }
    match std::fs::read_to_string(&path) {
        Ok(built) if built == expected => Ok(path.to_string_lossy().into_owned()),
        Ok(_) => Err(format!(
            "the resident kernel the build generated ({}) is not this spec's as it stands: the spec or a kernel declaration changed after the build ran; build again (the build script watches `graphs/`: `touch` the spec)",
            path.display()
        )),
        Err(_) => Err(format!(
            "`resident = true`, but the build did not generate this spec's resident kernel ({}): kgraph-build lowers the specs of the crate's `graphs/` folder; add others with `KernelBuild::add_graph_dir`",
            path.display()
        )),
    }
}
