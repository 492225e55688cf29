//! The checked-in PTX of the control kernels is what `scripts/control-ptx` produces from
//! `control.cu` with the project's nvcc, and declares the three kernels the runtime loads.

use std::path::Path;
use std::process::Command;

#[test]
fn control_ptx_declares_the_kernels_the_runtime_loads() {
    let ptx = kgraph_runtime::control::CONTROL_PTX;
    for k in ["kgraph_loop_repeat", "kgraph_loop_until_below", "kgraph_if_nonzero", "kgraph_done_word"] {
        assert!(ptx.contains(&format!(".visible .entry {k}(")), "{k} missing from control.ptx");
    }
    assert!(ptx.contains("cudaGraphSetConditional"), "the kernels set a graph condition");
}

#[test]
fn control_ptx_is_current_with_control_cu() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let nvcc = std::env::var_os("NVCC")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root.join(".toolchain/cuda-13.0/nvidia/cu13/bin/nvcc"));
    if !nvcc.exists() {
        // CI installs nvcc (scripts/install-nvcc) before the tests, so this runs there.
        eprintln!("no nvcc at {}: cannot regenerate control.ptx here", nvcc.display());
        return;
    }
    let out = std::env::temp_dir().join(format!("kgraph_control_{}.ptx", std::process::id()));
    let status = Command::new(&nvcc)
        .args(["-arch=compute_75", "-ptx"])
        .arg(root.join("runtime/src/graph/control/control.cu"))
        .arg("-o")
        .arg(&out)
        .status()
        .expect("run nvcc");
    assert!(status.success(), "nvcc failed on control.cu");
    let fresh = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    assert_eq!(fresh, kgraph_runtime::control::CONTROL_PTX, "control.ptx is stale: run scripts/control-ptx");
}
