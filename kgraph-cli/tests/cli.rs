//! The `kgraph` binary end to end: each subcommand on good and bad input, its exit code
//! (0 ok, 1 findings or failure, 2 usage), and its output pinned by snapshots, with the
//! machine's absolute paths replaced by `<fixtures>` and `<workspace>`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("workspace root")
}

/// What one run printed and how it exited.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    /// stdout and stderr together, paths normalised, for a snapshot.
    fn output(&self) -> String {
        let text = format!("exit {}\n--- stdout\n{}--- stderr\n{}", self.code, self.stdout, self.stderr);
        text.replace(&fixtures().display().to_string(), "<fixtures>")
            .replace(&workspace().display().to_string(), "<workspace>")
    }
}

/// Runs `kgraph args...` in `dir`, with no target folder inherited (so no build output of
/// this machine is found unless a test asks for it).
fn kgraph_in(dir: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_kgraph"))
        .args(args)
        .current_dir(dir)
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .expect("run kgraph");
    Run {
        code: out.status.code().expect("exit code"),
        stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
    }
}

fn kgraph(args: &[&str]) -> Run {
    kgraph_in(&fixtures(), args)
}

#[test]
fn help_and_version() {
    let top = kgraph(&["--help"]);
    assert_eq!(top.code, 0);
    insta::assert_snapshot!("help", top.output());
    for command in ["check", "declare", "resources", "dot"] {
        let help = kgraph(&[command, "--help"]);
        assert_eq!(help.code, 0, "{command}");
        assert!(help.stdout.contains(&format!("Usage: kgraph {command}")), "{}", help.stdout);
        assert_eq!(kgraph(&["help", command]).stdout, help.stdout);
    }
    let version = kgraph(&["--version"]);
    assert_eq!((version.code, version.stdout.trim()), (0, concat!("kgraph ", env!("CARGO_PKG_VERSION"))));
}

#[test]
fn usage_errors_exit_2() {
    let unknown = kgraph(&["frobnicate"]);
    assert_eq!(unknown.code, 2);
    insta::assert_snapshot!("unknown_command", unknown.output());
    let flag = kgraph(&["check", "--frob"]);
    assert_eq!(flag.code, 2);
    insta::assert_snapshot!("unknown_flag", flag.output());
    assert_eq!(kgraph(&[]).code, 2);
    assert_eq!(kgraph(&["declare"]).code, 2);
    assert_eq!(kgraph(&["dot"]).code, 2);
    assert_eq!(kgraph(&["check", "--root"]).code, 2);
    assert_eq!(kgraph(&["dot", "--mermaid", "--svg", "x.svg", "good/graphs/affine.toml"]).code, 2);
}

#[test]
fn check_passes_a_valid_crate() {
    let run = kgraph(&["check", "--root", "good"]);
    assert_eq!(run.code, 0, "{}", run.output());
    insta::assert_snapshot!("check_good", run.output());
}

#[test]
fn check_reports_every_error_located() {
    let run = kgraph(&["check", "--root", "broken"]);
    assert_eq!(run.code, 1);
    insta::assert_snapshot!("check_broken", run.output());
}

#[test]
fn check_finds_the_crate_from_inside_it() {
    let run = kgraph_in(&fixtures().join("broken/src"), &["check"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, kgraph(&["check", "--root", "broken"]).stdout);
}

#[test]
fn check_fails_without_a_crate_or_with_missing_records() {
    let no_crate = kgraph(&["check", "--root", "no/such/crate"]);
    assert_eq!(no_crate.code, 1);
    insta::assert_snapshot!("check_no_crate", no_crate.output());
    let no_records = kgraph(&["check", "--root", "good", "--records", "no/such/dir"]);
    assert_eq!(no_records.code, 1);
    assert!(no_records.stderr.contains("no such folder"), "{}", no_records.stderr);
}

/// The workspace's own crate (the reference model, examples, benches) checks clean, whatever
/// build this machine has.
#[test]
fn check_passes_the_reference_model() {
    let run = kgraph_in(&workspace(), &["check", "--no-records"]);
    assert_eq!(run.code, 0, "{}", run.output());
    assert!(run.stdout.starts_with("kgraph check: no errors in "), "{}", run.stdout);
}

#[test]
fn declare_prints_checked_declarations() {
    let run = kgraph(&["declare", "good/kernels/affine.cu"]);
    assert_eq!(run.code, 0);
    insta::assert_snapshot!("declare_affine", run.output());
    let module = kgraph(&["declare", "--module", "good/kernels/affine.cu"]);
    assert_eq!(module.code, 0);
    insta::assert_snapshot!("declare_affine_module", module.output());
}

#[test]
fn declare_fails_on_a_missing_file() {
    let run = kgraph(&["declare", "good/kernels/nothing.cu"]);
    assert_eq!(run.code, 1);
    insta::assert_snapshot!("declare_missing", run.output());
}

/// `tests/declared/kernels.rs` of the workspace root is `kgraph declare --module --no-records`
/// over every `kernels/*.cu`, and the root package's `tests/declared.rs` compiles it: so the
/// output of `declare` compiles unchanged. (`--no-records`: the output must not depend on
/// whether, or how recently, the workspace was built; the reference kernels are all `extern "C"`.)
#[test]
fn declare_output_for_the_reference_kernels_is_the_compiled_file() {
    let mut args = vec!["declare".to_string(), "--module".to_string(), "--no-records".to_string()];
    let mut files: Vec<String> = std::fs::read_dir(workspace().join("kernels"))
        .expect("kernels/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
        .filter(|name| name.ends_with(".cu"))
        .map(|name| format!("kernels/{name}"))
        .collect();
    files.sort();
    args.extend(files);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = kgraph_in(&workspace(), &args);
    assert_eq!(run.code, 0, "{}", run.output());
    let checked_in =
        std::fs::read_to_string(workspace().join("tests/declared/kernels.rs")).expect("tests/declared/kernels.rs");
    assert!(
        run.stdout == checked_in,
        "tests/declared/kernels.rs is not what `kgraph declare` prints; regenerate it from the workspace root with\n  \
         cargo run -p kgraph-cli -- declare --module --no-records kernels/*.cu > tests/declared/kernels.rs\n\n{}",
        run.stdout
    );
}

#[test]
fn dot_prints_the_dataflow() {
    let dot = kgraph(&["dot", "good/graphs/affine.toml"]);
    assert_eq!(dot.code, 0, "{}", dot.output());
    insta::assert_snapshot!("dot_affine", dot.output());
    let mermaid = kgraph(&["dot", "--mermaid", "good/graphs/affine.toml"]);
    assert_eq!(mermaid.code, 0);
    insta::assert_snapshot!("mermaid_affine", mermaid.output());
}

/// What `kgraph dot` prints is the graph struct's `DOT` constant: the same pipeline output.
#[test]
fn dot_is_the_generated_constant() {
    let spec = "graphs/perception.toml";
    let root = workspace();
    let text = std::fs::read_to_string(root.join(spec)).unwrap();
    let read_file = |p: &str| std::fs::read_to_string(root.join(p));
    let req = kgraph_codegen::graph::GraphRequest {
        spec_path: spec,
        spec_text: &text,
        struct_name: None,
        root: "",
        read_file: &read_file,
    };
    let analysis = kgraph_codegen::graph::analyze(&req).expect("perception.toml is valid");
    let run = kgraph_in(&root, &["dot", spec]);
    assert_eq!(run.code, 0, "{}", run.output());
    assert_eq!(run.stdout.trim_end(), analysis.dot("Perception").trim_end());
}

/// `kgraph dot --plan` draws the memory plan beside the dataflow: the train step's planned
/// buffers with their offsets (with `--pdl-waits-first`: the spec is PDL throughout, so without
/// the promise nothing is planned and every scratch buffer says why).
#[test]
fn dot_plan_draws_the_memory_plan() {
    let root = workspace();
    let spec = "graphs/train_step.toml";
    let plain = kgraph_in(&root, &["dot", "--plan", spec]);
    assert_eq!(plain.code, 0, "{}", plain.output());
    assert!(plain.stdout.contains("subgraph cluster_memory_plan"), "{}", plain.stdout);
    assert!(plain.stdout.contains("memory plan: arena 0 bytes"), "{}", plain.stdout);
    assert!(plain.stdout.contains("own allocation: shares with no buffer"), "{}", plain.stdout);
    let promised = kgraph_in(&root, &["dot", "--plan", "--pdl-waits-first", spec]);
    assert_eq!(promised.code, 0, "{}", promised.output());
    assert!(promised.stdout.contains("\\n@0 +"), "a planned buffer at offset 0: {}", promised.stdout);
    assert!(!promised.stdout.contains("memory plan: arena 0 bytes"), "{}", promised.stdout);
    assert_eq!(kgraph(&["dot", "--plan", "--mermaid", "good/graphs/affine.toml"]).code, 2);
}

/// `kgraph dot --plan --records DIR` plans as `graph!` does by default: the records prove the train
/// step's PDL kernels wait first, so the plan is the promised one; records that do not prove it
/// plan nothing.
#[test]
fn dot_plan_reads_the_records_as_graph_does() {
    let root = workspace();
    let spec = "graphs/train_step.toml";
    let promised = kgraph_in(&root, &["dot", "--plan", "--pdl-waits-first", spec]);
    let records = |first: u8| {
        let dir = tempfile::tempdir().unwrap();
        let entry = |name: &str| {
            format!("entry {name} visible=1 pdl_wait=1 pdl_trigger=1 calls=0 dyn_smem=0 pdl_wait_first={first}\nend\n")
        };
        let files = [
            ("train_forward", vec!["train_forward"]),
            ("heads", vec!["multi_horizon_heads_bce_cfc_backward"]),
            ("cfc_step", vec!["cfc_step_backward_weights_adamw"]),
        ];
        for (stem, kernels) in files {
            let text: String = kernels.iter().map(|k| entry(k)).collect();
            std::fs::write(dir.path().join(format!("{stem}.kernels")), format!("kgraph-kernels 1\n{text}")).unwrap();
        }
        dir
    };
    let proven = records(1);
    let dir = proven.path().to_str().unwrap();
    let by_default = kgraph_in(&root, &["dot", "--plan", "--records", dir, spec]);
    assert_eq!(by_default.code, 0, "{}", by_default.output());
    assert_eq!(by_default.stdout, promised.stdout);
    let unproven = records(0);
    let plain = kgraph_in(&root, &["dot", "--plan", "--records", unproven.path().to_str().unwrap(), spec]);
    assert_eq!(plain.code, 0, "{}", plain.output());
    assert!(plain.stdout.contains("memory plan: arena 0 bytes"), "{}", plain.stdout);
    assert_eq!(kgraph_in(&root, &["dot", "--plan", "--records", "no/such/dir", spec]).code, 1);
}

#[test]
fn dot_reports_spec_errors_and_missing_files() {
    let broken = kgraph(&["dot", "broken/graphs/broken.toml"]);
    assert_eq!(broken.code, 1);
    insta::assert_snapshot!("dot_broken", broken.output());
    let missing = kgraph(&["dot", "good/graphs/missing.toml"]);
    assert_eq!(missing.code, 1);
    insta::assert_snapshot!("dot_missing", missing.output());
}

#[test]
fn dot_svg_needs_graphviz() {
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("affine.svg");
    let run = kgraph(&["dot", "--svg", out.to_str().unwrap(), "good/graphs/affine.toml"]);
    let has_graphviz = Command::new("dot").arg("-V").output().is_ok();
    if has_graphviz {
        assert_eq!(run.code, 0, "{}", run.output());
        assert!(std::fs::read_to_string(&out).unwrap().contains("<svg"));
    } else {
        assert_eq!(run.code, 1);
        assert!(run.stderr.contains("Graphviz is not installed"), "{}", run.stderr);
    }
}

/// A build output folder as kgraph-build leaves it, with one file's ptxas report and record.
fn fake_build(target: &Path) -> PathBuf {
    let out = target.join("debug/build/fixture-good-0123456789abcdef/out/kgraph");
    std::fs::create_dir_all(&out).unwrap();
    let report = "ptxas info    : 0 bytes gmem\n\
        ptxas info    : Compiling entry function 'affine' for 'sm_90'\n\
        ptxas info    : Function properties for affine\n    \
        0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
        ptxas info    : Used 16 registers, used 0 barriers\n\
        ptxas info    : Compiling entry function '_Z5tiledPfi' for 'sm_90'\n\
        ptxas info    : Function properties for _Z5tiledPfi\n    \
        64 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n\
        ptxas info    : Used 128 registers, used 1 barriers, 4096 bytes smem, 372 bytes cmem[0]\n";
    std::fs::write(out.join("affine.resources.txt"), report).unwrap();
    let record = "kgraph-kernels 1\ntarget sm_90\n\
        entry affine visible=1 pdl_wait=0 pdl_trigger=0 calls=0 maxntid=256\nend\n\
        entry _Z5tiledPfi visible=1 pdl_wait=0 pdl_trigger=0 calls=0\nend\n";
    std::fs::write(out.join("affine.kernels"), record).unwrap();
    std::fs::write(out.parent().unwrap().parent().unwrap().join("output"), "").unwrap();
    out
}

#[test]
fn resources_prints_the_table_of_the_latest_build() {
    let scratch = tempfile::tempdir().unwrap();
    let target = scratch.path().to_path_buf();
    fake_build(&target);
    let run = kgraph(&["resources", "--root", "good", "--target-dir", target.to_str().unwrap()]);
    let output = run.output().replace(&target.display().to_string(), "<target>");
    assert_eq!(run.code, 0, "{output}");
    insta::assert_snapshot!("resources", output);
}

#[test]
fn resources_without_a_build_says_to_build() {
    let scratch = tempfile::tempdir().unwrap();
    let target = scratch.path().to_path_buf();
    let run = kgraph(&["resources", "--root", "good", "--target-dir", target.to_str().unwrap()]);
    let output = run.output().replace(&target.display().to_string(), "<target>");
    assert_eq!(run.code, 1);
    insta::assert_snapshot!("resources_no_build", output);
}
