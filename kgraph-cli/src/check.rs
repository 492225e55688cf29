//! `kgraph check`: every graph spec of `graphs/` through the analysis `graph!` runs, and every
//! `#[kernel]` declaration of `src/` and `examples/` through the checks `#[kernel]` and
//! `#[kernels]` run, without building the crate, so the messages are the compiler's.

use std::path::{Path, PathBuf};

use kgraph_codegen::diagnostics::Errors;
use kgraph_codegen::graph::spec::diag::SourceMap;
use kgraph_codegen::graph::{analyze_with, once_each, GraphRequest, Options as AnalyzeOptions};
use kgraph_codegen::{check_rust_source, Config};

use crate::args::{run_command, Arg, Args, CliError, Exit};
use crate::project::{self, absolute, shown, BuildOutput};

pub const HELP: &str = "\
Validate every graph spec and #[kernel] declaration of a crate, without building it

Usage: kgraph check [OPTIONS]

Checks graphs/*.toml as kgraph::graph! does and every #[kernel] declaration in src/**/*.rs
and examples/**/*.rs as #[kernel]/#[kernels] do: the same messages, each at file:line:col.

Options:
      --root <DIR>        The crate (default: the nearest Cargo.toml at or above the current folder)
      --kernel-dir <DIR>  Another folder of .cu files (repeatable; kernels/, the folders build.rs
                          adds and the last build's KGRAPH_KERNEL_DIRS are searched anyway)
      --records <DIR>     Check against what nvcc compiled: the build's $OUT_DIR/kgraph folder
                          (default: the latest build's under target/, when not older than the .cu files)
      --no-records        Check against the .cu text only
      --target-dir <DIR>  Cargo's target folder (default: $CARGO_TARGET_DIR, else target/)
  -h, --help              Print help

Exit status: 0 no errors, 1 errors found (or nothing could be read), 2 usage error.
";

/// The command line of `kgraph check`.
#[derive(Default)]
struct Options {
    root: Option<PathBuf>,
    kernel_dirs: Vec<PathBuf>,
    records: Option<PathBuf>,
    no_records: bool,
    target_dir: Option<PathBuf>,
}

fn options(mut args: Args) -> Result<Option<Options>, CliError> {
    let mut o = Options::default();
    while let Some(arg) = args.next()? {
        match arg {
            Arg::Help => return Ok(None),
            Arg::Flag(f) if f == "--root" => o.root = Some(args.path(&f)?),
            Arg::Flag(f) if f == "--kernel-dir" => o.kernel_dirs.push(args.path(&f)?),
            Arg::Flag(f) if f == "--records" => o.records = Some(args.path(&f)?),
            Arg::Flag(f) if f == "--no-records" => o.no_records = true,
            Arg::Flag(f) if f == "--target-dir" => o.target_dir = Some(args.path(&f)?),
            Arg::Flag(f) => return Err(args.unknown(&f)),
            Arg::Positional(p) => return Err(args.usage(format!("unexpected argument `{p}`: `check` takes no files"))),
        }
    }
    if o.no_records && o.records.is_some() {
        return Err(args.usage("`--records` and `--no-records` contradict each other"));
    }
    Ok(Some(o))
}

/// What the check found, counted for the summary.
#[derive(Default)]
struct Report {
    specs: usize,
    declarations: usize,
    rust_files: usize,
    /// Every rendered error, in file order.
    errors: Vec<String>,
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    run_command(args, HELP, options, execute)
}

fn execute(o: Options) -> Result<Exit, CliError> {
    let root = project::crate_root(o.root.clone(), &project::current_dir()?)?;
    let build = project::target_dir(&root, o.target_dir.clone()).and_then(|t| project::latest_build(&root, &t));
    let (config, against) = config_for(&root, &o, build.as_ref())?;
    let mut report = Report::default();
    for spec in project::files_with_extension(&root.join("graphs"), "toml") {
        check_spec(&root, &spec, config.record_dir.as_deref(), &mut report);
    }
    for dir in ["src", "examples"] {
        for file in project::files_with_extension(&root.join(dir), "rs") {
            check_rust_file(&root, &file, &config, &mut report);
        }
    }
    // An included spec's error reaches every spec that includes it, and the spec itself when
    // it is in graphs/ too: each is printed once.
    report.errors = once_each(std::mem::take(&mut report.errors));
    for error in &report.errors {
        println!("{error}\n");
    }
    let errors = if report.errors.is_empty() { "no errors".to_string() } else { count(report.errors.len(), "error") };
    println!(
        "kgraph check: {errors} in {} and {} ({}); {against}",
        count(report.specs, "graph spec"),
        count(report.declarations, "kernel declaration"),
        count(report.rust_files, "Rust file"),
    );
    Ok(if report.errors.is_empty() { Exit::Ok } else { Exit::Findings })
}

/// `1 graph spec`, `2 graph specs`.
fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// The kernel configuration, and what the declarations are checked against (for the summary).
fn config_for(root: &Path, o: &Options, build: Option<&BuildOutput>) -> Result<(Config, String), CliError> {
    let text_only = project::kernel_config(root, &o.kernel_dirs, build, None);
    if o.no_records {
        return Ok((text_only, "checked against the .cu text (--no-records)".into()));
    }
    if let Some(dir) = &o.records {
        if !dir.is_dir() {
            return Err(CliError::Failed(format!("`--records {}`: no such folder", dir.display())));
        }
        let against = format!("checked against the build records in {}", shown(root, &absolute(dir)));
        return Ok((text_only.with_record_dir(absolute(dir)), against));
    }
    let Some(build) = build else {
        return Ok((
            text_only,
            "checked against the .cu text (no build records: `cargo build` to check against what nvcc compiled)".into(),
        ));
    };
    if let Some(stale) = project::stale_source(build, &text_only) {
        let against = format!(
            "checked against the .cu text: {} changed since the last build (`cargo build` to check against what nvcc compiled)",
            shown(root, &stale)
        );
        return Ok((text_only, against));
    }
    let against = format!("checked against the build records in {}", shown(root, &build.kgraph_dir));
    Ok((text_only.with_record_dir(build.kgraph_dir.clone()), against))
}

fn check_spec(root: &Path, spec: &Path, records: Option<&Path>, report: &mut Report) {
    report.specs += 1;
    let spec_path = shown(root, spec);
    let text = match std::fs::read_to_string(spec) {
        Ok(text) => text,
        Err(e) => return report.errors.push(format!("{spec_path}: cannot read the graph spec: {e}")),
    };
    let read_file = |rel: &str| std::fs::read_to_string(root.join(rel));
    let root_text = root.to_string_lossy();
    let request = GraphRequest {
        spec_path: &spec_path,
        spec_text: &text,
        struct_name: None,
        root: &root_text,
        read_file: &read_file,
    };
    // As `graph!` checks the spec: a `resident = true` spec must lower.
    let options = AnalyzeOptions { record_dir: records, resident: true, ..AnalyzeOptions::default() };
    if let Err(errors) = analyze_with(&request, &options) {
        report.errors.extend(errors);
    }
}

fn check_rust_file(root: &Path, file: &Path, config: &Config, report: &mut Report) {
    let path = shown(root, file);
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) => return report.errors.push(format!("{path}: cannot read: {e}")),
    };
    // Only files that mention the attribute are parsed: most of a crate declares no kernels.
    if !text.contains("kernel") {
        return;
    }
    match check_rust_source(&text, config) {
        Ok(found) if found.declarations == 0 => {}
        Ok(found) => {
            report.rust_files += 1;
            report.declarations += found.declarations;
            report.errors.extend(SourceMap::new(&path, &text).render_errors(&found.errors));
        }
        Err(e) => {
            let message = format!("not valid Rust, so its `#[kernel]` declarations cannot be read: {e}");
            let errors = Errors::one(e.span(), message);
            report.errors.extend(SourceMap::new(&path, &text).render_errors(&errors));
        }
    }
}
