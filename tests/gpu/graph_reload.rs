//! Kernel hot reload on the GPU: a graph replays, its `.cu` changes on disk, `reload_kernels`
//! recompiles (NVRTC) and the next replay runs the new code; a changed signature is refused
//! with the old code still running. The test rewrites `tests/kernels/test_reload.cu` and
//! restores it when it ends (also on failure).

use kgraph::{Error, ModuleError};

use super::common::{device, random};

kgraph::graph!("tests/graphs/test_reload.toml");

/// Restores the kernel file's text when dropped.
struct Restore(std::path::PathBuf, String);

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.0, &self.1);
    }
}

fn scaled(x: &[f32], k: f32) -> Vec<f32> {
    x.iter().map(|v| k * v).collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_changed_kernel_runs_at_the_next_replay_and_a_changed_signature_keeps_the_old_one() {
    let path = crate::graph::kernels::HrScale::SOURCE.disk_path();
    let original = std::fs::read_to_string(&path).expect("the kernel file is where the build found it");
    let _restore = Restore(path.clone(), original.clone());
    kgraph::expert::reload::set_enabled(true);
    // SAFETY (every `reload_kernels` below): the edits keep the kernel's parameters as
    // declared, or change `int n` to `long long n`, a size the reload check refuses.
    let dev = device();
    let x = random(TestReload::N, 51);
    let mut g = TestReload::new(&dev).unwrap();
    g.upload_x(&x).unwrap();
    g.capture().unwrap();
    g.replay().unwrap();
    assert_eq!(g.download_y().unwrap(), scaled(&x, 2.0), "the built kernel");
    assert!(!unsafe { g.reload_kernels() }.unwrap(), "nothing changed yet");
    assert!(g.pdl_enabled(), "PDL is on for the built kernels");

    std::fs::write(&path, original.replace("2.0f * x[i]", "3.0f * x[i]")).unwrap();
    assert!(unsafe { g.reload_kernels() }.unwrap(), "the edit is seen");
    g.replay().unwrap();
    assert_eq!(g.download_y().unwrap(), scaled(&x, 3.0), "the next replay runs the new code");
    // The build's record of `griddepcontrol.wait` says nothing of the reloaded code: PDL is off
    // and stays off.
    assert!(!g.pdl_enabled(), "a reload turns PDL off");
    g.set_pdl_enabled(true);
    assert!(!g.pdl_enabled(), "PDL cannot be turned back on over reloaded kernels");

    // `int n` becomes `long long n`: 8 bytes where the declaration passes 4.
    std::fs::write(&path, original.replace("int n)", "long long n)")).unwrap();
    let err = unsafe { g.reload_kernels() }.expect_err("a changed signature is refused");
    assert!(
        matches!(&err, Error::InGraph { source, .. } if matches!(**source, Error::Module(ModuleError::ParamMismatch { .. }))),
        "{err}"
    );
    g.replay().unwrap();
    assert_eq!(g.download_y().unwrap(), scaled(&x, 3.0), "the old (reloaded) code still runs");
    assert!(!unsafe { g.reload_kernels() }.unwrap(), "a refused file is not retried until it changes again");

    // A `.cu` that is not UTF-8 (a Latin-1 byte in a comment, which nvcc and NVRTC accept) is
    // read, as `#[kernel]` reads it.
    let mut latin1 = b"// r\xe9sum\xe9: 4x\n".to_vec();
    latin1.extend_from_slice(original.replace("2.0f * x[i]", "4.0f * x[i]").as_bytes());
    std::fs::write(&path, latin1).unwrap();
    assert!(unsafe { g.reload_kernels() }.unwrap(), "the Latin-1 file is read");
    g.replay().unwrap();
    assert_eq!(g.download_y().unwrap(), scaled(&x, 4.0), "the next replay runs the Latin-1 file's code");
    kgraph::expert::reload::set_enabled(false);
}
