//! `kgraph dot graphs/x.toml`: a graph spec's dataflow as the graph struct's `DOT` (or
//! `MERMAID`) constant has it, or rendered to SVG by Graphviz.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use kgraph_codegen::graph::{analyze_with, GraphRequest, Options as AnalyzeOptions};
use kgraph_codegen::syntax::naming::graph_struct_name;

use crate::args::{run_command, Arg, Args, CliError, Exit};
use crate::project::{self, absolute, shown};

pub const HELP: &str = "\
Print a graph spec's dataflow as DOT or Mermaid, or render it to SVG

Usage: kgraph dot [OPTIONS] <SPEC.toml>

Prints the text of the graph struct's DOT constant (or MERMAID with --mermaid). The spec is
validated first, as kgraph::graph! validates it.

Options:
      --mermaid       Print the Mermaid flowchart instead
      --svg <OUT>     Render with Graphviz (`dot -Tsvg`) into OUT
      --plan          Draw the memory plan beside the dataflow: each planned buffer's arena
                      offset and size, each scratch buffer left out and why
      --pdl-waits-first
                      Plan as `graph!(.., unsafe(pdl_waits_first))` does (PDL edges order)
      --records <DIR> Plan as `graph!` does by default, reading the build's compiled-kernel
                      records in DIR ($OUT_DIR/kgraph): PDL edges into kernels they prove to
                      wait first order (without it nothing is proven: PDL edges never order)
      --root <DIR>    The crate the spec's paths are relative to (default: the nearest
                      Cargo.toml at or above the spec)
  -h, --help          Print help

Exit status: 0 printed, 1 the spec has errors or cannot be read (or Graphviz failed),
2 usage error.
";

#[derive(Default)]
struct Options {
    spec: Option<PathBuf>,
    mermaid: bool,
    svg: Option<PathBuf>,
    root: Option<PathBuf>,
    plan: bool,
    pdl_waits_first: bool,
    records: Option<PathBuf>,
}

fn options(mut args: Args) -> Result<Option<Options>, CliError> {
    let mut o = Options::default();
    while let Some(arg) = args.next()? {
        match arg {
            Arg::Help => return Ok(None),
            Arg::Flag(f) if f == "--mermaid" => o.mermaid = true,
            Arg::Flag(f) if f == "--plan" => o.plan = true,
            Arg::Flag(f) if f == "--pdl-waits-first" => o.pdl_waits_first = true,
            Arg::Flag(f) if f == "--records" => o.records = Some(args.path(&f)?),
            Arg::Flag(f) if f == "--svg" => o.svg = Some(args.path(&f)?),
            Arg::Flag(f) if f == "--root" => o.root = Some(args.path(&f)?),
            Arg::Flag(f) => return Err(args.unknown(&f)),
            Arg::Positional(p) if o.spec.is_none() => o.spec = Some(PathBuf::from(p)),
            Arg::Positional(p) => return Err(args.usage(format!("unexpected argument `{p}`: one spec at a time"))),
        }
    }
    if o.mermaid && o.svg.is_some() {
        return Err(args.usage("`--mermaid` and `--svg` contradict each other: SVG is rendered from DOT"));
    }
    if o.mermaid && o.plan {
        return Err(args.usage("`--plan` draws DOT: leave out `--mermaid`"));
    }
    if o.spec.is_none() {
        return Err(args.usage("no graph spec given: `kgraph dot graphs/x.toml`"));
    }
    Ok(Some(o))
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    run_command(args, HELP, options, execute)
}

fn execute(o: Options) -> Result<Exit, CliError> {
    let spec = absolute(o.spec.as_deref().unwrap_or(Path::new("")));
    let text = std::fs::read_to_string(&spec)
        .map_err(|e| CliError::Failed(format!("cannot read graph spec `{}`: {e}", spec.display())))?;
    let root = project::crate_root(o.root.clone(), spec.parent().unwrap_or(Path::new(".")))?;
    let spec_path = shown(&root, &spec);
    let read_file = |rel: &str| std::fs::read_to_string(root.join(rel));
    let root_text = root.to_string_lossy();
    let request = GraphRequest {
        spec_path: &spec_path,
        spec_text: &text,
        struct_name: None,
        root: &root_text,
        read_file: &read_file,
    };
    let records = o.records.as_deref().map(absolute);
    if let Some(dir) = records.as_deref().filter(|d| !d.is_dir()) {
        return Err(CliError::Failed(format!("`--records {}`: no such folder", dir.display())));
    }
    let analyze_options = AnalyzeOptions {
        record_dir: records.as_deref(),
        pdl_waits_first: o.pdl_waits_first,
        resident: true,
        ..AnalyzeOptions::default()
    };
    let analysis = match analyze_with(&request, &analyze_options) {
        Ok(analysis) => analysis,
        Err(errors) => {
            for error in errors {
                println!("{error}\n");
            }
            return Ok(Exit::Findings);
        }
    };
    if o.mermaid {
        print!("{}", with_newline(analysis.mermaid()));
        return Ok(Exit::Ok);
    }
    let name = graph_struct_name(&spec_path);
    let dot = if o.plan { analysis.dot_with_plan(&name) } else { analysis.dot(&name) };
    match &o.svg {
        Some(out) => render_svg(&dot, out),
        None => {
            print!("{}", with_newline(dot));
            Ok(Exit::Ok)
        }
    }
}

fn with_newline(mut text: String) -> String {
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// `dot -Tsvg -o <out>` fed the DOT text on stdin.
fn render_svg(dot: &str, out: &Path) -> Result<Exit, CliError> {
    let spawned = Command::new("dot").arg("-Tsvg").arg("-o").arg(out).stdin(Stdio::piped()).spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(CliError::Failed(
                "Graphviz is not installed (no `dot` on PATH): install it (`apt install graphviz`), or print DOT \
                 with `kgraph dot <spec>` and render it elsewhere"
                    .into(),
            ))
        }
        Err(e) => return Err(CliError::Failed(format!("cannot run Graphviz `dot`: {e}"))),
    };
    let written = child.stdin.take().map(|mut stdin| stdin.write_all(dot.as_bytes()));
    let status = child.wait().map_err(|e| CliError::Failed(format!("Graphviz `dot` did not finish: {e}")))?;
    if let Some(Err(e)) = written {
        return Err(CliError::Failed(format!("cannot feed Graphviz `dot`: {e}")));
    }
    if !status.success() {
        return Err(CliError::Failed(format!("Graphviz `dot -Tsvg` failed ({status})")));
    }
    println!("wrote {}", out.display());
    Ok(Exit::Ok)
}
