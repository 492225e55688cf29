//! `kgraph declare kernels/x.cu`: the `#[kernel]` line to paste for each kernel of a `.cu`
//! file, each checked by the macro's own rules before it is printed (so it compiles as
//! printed); a kernel kgraph cannot bind gets a comment with the reason instead.

use std::path::{Path, PathBuf};

use kgraph_codegen::{suggest_declarations, Config, Suggestion};

use crate::args::{run_command, Arg, Args, CliError, Exit};
use crate::project::{self, absolute, shown};

pub const HELP: &str = "\
Print the #[kernel] declaration for each kernel of .cu files

Usage: kgraph declare [OPTIONS] <FILE.cu>...

For every __global__ kernel, prints the one line to paste into a #[kgraph::kernels] module,
checked as #[kernel] checks it. The declarations have no extents, so their `launch` is an
`unsafe fn`; the comment above each shows how to add extents and `unsafe(extents)`, or says
why extents may not hold (a read-only integer array among the pointers: indexing that may
depend on data, a heuristic). A kernel kgraph cannot bind gets a comment saying why.

extern \"C\" kernels are read from the .cu. C++ kernels (every template instantiation) are read
from the build's record of what nvcc compiled (the crate's latest build, or --records) and
declared with `name = \"<C++ name>\"`; without a record each gets a comment saying so.

Options:
      --module            Wrap each file's declarations in `#[kgraph::kernels] pub mod <stem> { }`
      --root <DIR>        The crate (default: the nearest Cargo.toml at or above the file)
      --kernel-dir <DIR>  Another folder of .cu files (repeatable)
      --records <DIR>     The build's $OUT_DIR/kgraph folder (default: the crate's latest build)
      --no-records        Read the .cu text only (C++ kernels are not declared)
      --target-dir <DIR>  Cargo's target folder, to find the latest build
  -h, --help              Print help

Exit status: 0 printed (a kernel kgraph cannot bind is a comment, not a failure), 1 a file
cannot be read, 2 usage error.
";

#[derive(Default)]
struct Options {
    files: Vec<PathBuf>,
    module: bool,
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
            Arg::Flag(f) if f == "--module" => o.module = true,
            Arg::Flag(f) if f == "--root" => o.root = Some(args.path(&f)?),
            Arg::Flag(f) if f == "--kernel-dir" => o.kernel_dirs.push(args.path(&f)?),
            Arg::Flag(f) if f == "--records" => o.records = Some(args.path(&f)?),
            Arg::Flag(f) if f == "--no-records" => o.no_records = true,
            Arg::Flag(f) if f == "--target-dir" => o.target_dir = Some(args.path(&f)?),
            Arg::Flag(f) => return Err(args.unknown(&f)),
            Arg::Positional(file) => o.files.push(PathBuf::from(file)),
        }
    }
    if o.files.is_empty() {
        return Err(args.usage("no .cu file given: `kgraph declare kernels/x.cu`"));
    }
    if o.no_records && o.records.is_some() {
        return Err(args.usage("`--records` and `--no-records` contradict each other"));
    }
    Ok(Some(o))
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    run_command(args, HELP, options, execute)
}

fn execute(o: Options) -> Result<Exit, CliError> {
    let mut out = Vec::new();
    for file in &o.files {
        let file = absolute(file);
        if !file.is_file() {
            return Err(CliError::Failed(format!("`{}`: no such file", file.display())));
        }
        let root = project::crate_root(o.root.clone(), file.parent().unwrap_or(Path::new(".")))?;
        let (config, note) = config_for(&root, &o)?;
        let (name, config) = attribute_name(&file, config);
        let suggestions = suggest_declarations(&name, &config).map_err(CliError::Failed)?;
        let mut text = render_file(&shown(&root, &file), &name, &suggestions, o.module);
        if let Some(note) = note {
            text.insert_str(0, &format!("// {note}\n"));
        }
        out.push(text);
    }
    print!("{}", out.join("\n"));
    Ok(Exit::Ok)
}

/// The kernel configuration with the record folder to read, and a note when a build's
/// records exist but are not used (a source changed since).
fn config_for(root: &Path, o: &Options) -> Result<(Config, Option<String>), CliError> {
    let build = project::target_dir(root, o.target_dir.clone()).and_then(|t| project::latest_build(root, &t));
    let config = project::kernel_config(root, &o.kernel_dirs, build.as_ref(), None);
    if o.no_records {
        return Ok((config, None));
    }
    if let Some(dir) = &o.records {
        if !dir.is_dir() {
            return Err(CliError::Failed(format!("`--records {}`: no such folder", dir.display())));
        }
        return Ok((config.with_record_dir(absolute(dir)), None));
    }
    let Some(build) = build else { return Ok((config, None)) };
    if let Some(stale) = project::stale_source(&build, &config) {
        let note = format!(
            "{} changed since the last build: C++ kernels are not declared from its stale record (`cargo build` first)",
            shown(root, &stale)
        );
        return Ok((config, Some(note)));
    }
    let dir = build.kgraph_dir.clone();
    Ok((config.with_record_dir(dir), None))
}

/// The name `#[kernel("...")]` gives `file`: its path inside the first kernel folder that
/// holds it; for a file outside them, its file name, with its own folder searched (the build
/// script must compile that folder too, `KernelBuild::add_kernel_dir`).
fn attribute_name(file: &Path, mut config: Config) -> (String, Config) {
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let file = canonical(file);
    for dir in &config.kernel_dirs {
        if let Ok(rel) = file.strip_prefix(canonical(dir)) {
            return (rel.to_string_lossy().replace('\\', "/"), config);
        }
    }
    let name = file.file_name().unwrap_or_default().to_string_lossy().to_string();
    config.kernel_dirs.insert(0, file.parent().unwrap_or(Path::new(".")).to_path_buf());
    (name, config)
}

/// One file's declarations, as comments and lines (indented in a module with `module`).
fn render_file(shown: &str, name: &str, suggestions: &[Suggestion], module: bool) -> String {
    let indent = if module { "    " } else { "" };
    let mut lines = Vec::new();
    if module {
        lines.push(format!("/// The kernels of `{shown}`, as `kgraph declare` writes them."));
        lines.push("#[kgraph::kernels]".to_string());
        lines.push(format!("pub mod {} {{", module_name(name)));
    } else {
        lines.push(format!("// {shown}: paste into a `#[kgraph::kernels]` module"));
    }
    if suggestions.is_empty() {
        lines.push(format!("{indent}// no `extern \"C\" __global__` kernels in {shown}"));
    }
    for s in suggestions {
        lines.extend(render_kernel(shown, s).into_iter().map(|l| format!("{indent}{l}")));
    }
    if module {
        lines.push("}".to_string());
    }
    lines.join("\n") + "\n"
}

fn render_kernel(shown: &str, s: &Suggestion) -> Vec<String> {
    let place = format!("`{}` ({shown}:{})", s.kernel, s.line);
    let d = match &s.declaration {
        Ok(d) => d,
        Err(why) => return vec![format!("// not declared: {place}: {why}")],
    };
    if !d.needs_twins.is_empty() {
        // Commented out: it names Rust types only the author can write, and the output compiles.
        return vec![
            format!(
                "// {place} takes C structs: with a `#[derive(kgraph::DeviceStruct)]` `#[repr(C)]` twin of {} in scope, declare it as",
                d.needs_twins.join(", ")
            ),
            format!("// {}", d.text),
        ];
    }
    let mut lines = Vec::new();
    if let Some(symbol) = &d.internal_symbol {
        lines.push(format!(
            "// {place} has internal linkage (`static` or an anonymous namespace): loaded by the symbol this build gave it, `{symbol}`"
        ));
    }
    lines.push(match (&d.extent_example, d.index_arrays.as_slice()) {
        (_, arrays @ [_, ..]) => {
            let (what, whose) = if arrays.len() == 1 { ("array", "its") } else { ("arrays", "their") };
            let names: Vec<String> = arrays.iter().map(|n| format!("`{n}`")).collect();
            format!(
                "// {place} takes the read-only integer {what} {}: if the kernel indexes other buffers by \
                 {whose} values (CSR row pointers, a gather by index) without checking each index, no \
                 extents can make `launch` safe (the promise holds for any contents); keep the `unsafe fn \
                 launch` and state its contract at each call (docs/safety.md, \"Indices read from \
                 memory\"). Where the kernel checks every index against the extent, add extents and \
                 `unsafe(extents)` as usual.",
                names.join(", ")
            )
        }
        (Some(example), []) => format!(
            "// {place}; for a safe `launch`, give each pointer the elements the kernel may access \
             (`{example}`) and write `#[kernel({}, unsafe(extents))]`",
            d.attribute
        ),
        (None, []) => format!("// {place}"),
    });
    lines.push(d.text.clone());
    lines
}

/// A module name for the file `#[kernel]` names `name`: its stem as a snake_case identifier.
fn module_name(name: &str) -> String {
    let stem = Path::new(name).file_stem().unwrap_or_default().to_string_lossy();
    let mut ident: String =
        stem.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    if !ident.starts_with(|c: char| c.is_ascii_lowercase()) {
        ident.insert_str(0, "k_");
    }
    if syn::parse_str::<syn::Ident>(&ident).is_err() {
        ident.push('_');
    }
    ident
}
