//! `kgraph resources`: per kernel, what ptxas reported when the build compiled it (registers,
//! static shared memory, stack frame, spills, from `<stem>.resources.txt`) and the most
//! threads a block may have (the compiled launch bounds from `<stem>.kernels`, else what the
//! register count allows).

use std::path::{Path, PathBuf};

use kgraph_build::{parse_ptxas_report, KernelResources};
use kgraph_codegen::compiled::{display_name, read_record, KernelRecord};

use crate::args::{run_command, Arg, Args, CliError, Exit};
use crate::project::{self, shown};

pub const HELP: &str = "\
Print registers, shared memory, stack, spills and max threads per kernel from the last build

Usage: kgraph resources [OPTIONS]

Reads the ptxas reports the build left beside the cubins
(target/<profile>/build/<package>-<hash>/out/kgraph/<stem>.resources.txt); run `cargo build` first.
Max threads is the kernel's __launch_bounds__ as compiled (marked `bound`), else the block
size its registers allow (64K registers per block, allocated per warp in units of 256).

Options:
      --root <DIR>        The crate (default: the nearest Cargo.toml at or above the current folder)
      --target-dir <DIR>  Cargo's target folder (default: $CARGO_TARGET_DIR, else target/)
      --out-dir <DIR>     The build's $OUT_DIR/kgraph folder itself
  -h, --help              Print help

Exit status: 0 printed, 1 no build output found, 2 usage error.
";

#[derive(Default)]
struct Options {
    root: Option<PathBuf>,
    target_dir: Option<PathBuf>,
    out_dir: Option<PathBuf>,
}

fn options(mut args: Args) -> Result<Option<Options>, CliError> {
    let mut o = Options::default();
    while let Some(arg) = args.next()? {
        match arg {
            Arg::Help => return Ok(None),
            Arg::Flag(f) if f == "--root" => o.root = Some(args.path(&f)?),
            Arg::Flag(f) if f == "--target-dir" => o.target_dir = Some(args.path(&f)?),
            Arg::Flag(f) if f == "--out-dir" => o.out_dir = Some(args.path(&f)?),
            Arg::Flag(f) => return Err(args.unknown(&f)),
            Arg::Positional(p) => return Err(args.usage(format!("unexpected argument `{p}`"))),
        }
    }
    Ok(Some(o))
}

/// One row of the table.
struct Row {
    file: String,
    resources: KernelResources,
    max_threads: String,
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    run_command(args, HELP, options, execute)
}

fn execute(o: Options) -> Result<Exit, CliError> {
    let root = project::crate_root(o.root.clone(), &project::current_dir()?)?;
    let out_dir = match o.out_dir {
        Some(dir) if dir.is_dir() => dir,
        Some(dir) => return Err(CliError::Failed(format!("`--out-dir {}`: no such folder", dir.display()))),
        None => find_out_dir(&root, o.target_dir)?,
    };
    let rows = rows(&out_dir);
    if rows.is_empty() {
        return Err(CliError::Failed(format!(
            "{} has no ptxas reports (*.resources.txt): the kernels were not compiled with nvcc (the NVRTC \
             fallback reports nothing); install nvcc (scripts/install-nvcc) and `cargo build` again",
            shown(&root, &out_dir)
        )));
    }
    println!("kernel resources from {}\n", shown(&root, &out_dir));
    print!("{}", table(&rows));
    Ok(Exit::Ok)
}

fn find_out_dir(root: &Path, target_dir: Option<PathBuf>) -> Result<PathBuf, CliError> {
    let no_build = |looked: String| {
        CliError::Failed(format!(
            "no kgraph build output for the crate at {} ({looked}): run `cargo build` first",
            root.display()
        ))
    };
    let Some(target) = project::target_dir(root, target_dir) else {
        return Err(no_build("no target folder".into()));
    };
    project::latest_build(root, &target)
        .map(|b| b.kgraph_dir)
        .ok_or_else(|| no_build(format!("looked in {}", target.display())))
}

/// Every kernel of every report in `out_dir`, by file then in ptxas' order.
fn rows(out_dir: &Path) -> Vec<Row> {
    let mut rows = Vec::new();
    for report in project::files_with_extension(out_dir, "txt") {
        let name = report.file_name().unwrap_or_default().to_string_lossy();
        let Some(stem) = name.strip_suffix(".resources.txt") else { continue };
        let text = std::fs::read_to_string(&report).unwrap_or_default();
        let records = match read_record(Some(out_dir), stem) {
            Some(Ok(compiled)) => compiled.kernels,
            _ => Vec::new(),
        };
        for resources in parse_ptxas_report(&text) {
            let record = records.iter().find(|r| r.name == resources.kernel);
            let max_threads = max_threads(&resources, record);
            rows.push(Row { file: format!("{stem}.cu"), resources, max_threads });
        }
    }
    rows
}

/// The launch bound as compiled, else the largest block the register count allows.
fn max_threads(resources: &KernelResources, record: Option<&KernelRecord>) -> String {
    if let Some(bound) = record.and_then(|r| r.req_threads.or(r.max_threads)) {
        return format!("{bound} bound");
    }
    const REGISTERS_PER_BLOCK: u32 = 65536;
    const WARP_ALLOCATION: u32 = 256;
    let per_warp = (resources.registers.max(1) * 32).div_ceil(WARP_ALLOCATION) * WARP_ALLOCATION;
    let threads = (REGISTERS_PER_BLOCK / per_warp * 32).min(1024);
    threads.to_string()
}

fn table(rows: &[Row]) -> String {
    let header = ["kernel", "file", "arch", "registers", "shared", "stack", "spill st", "spill ld", "max threads"];
    let cells: Vec<[String; 9]> = rows
        .iter()
        .map(|row| {
            let r = &row.resources;
            [
                display_name(&r.kernel),
                row.file.clone(),
                r.arch.clone(),
                r.registers.to_string(),
                r.shared.to_string(),
                r.stack_frame.to_string(),
                r.spill_stores.to_string(),
                r.spill_loads.to_string(),
                row.max_threads.clone(),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let text: Vec<String> = cells
            .iter()
            .zip(widths)
            .enumerate()
            // Names left-aligned, numbers right-aligned.
            .map(|(i, (cell, w))| if i < 3 { format!("{cell:<w$}") } else { format!("{cell:>w$}") })
            .collect();
        text.join("  ").trim_end().to_string() + "\n"
    };
    let mut out = line(&header.map(String::from));
    for row in &cells {
        out.push_str(&line(row));
    }
    out.push_str("\nshared: static __shared__ bytes; stack, spill st/ld: bytes of local memory per thread\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_limited_block_sizes() {
        let with = |registers| KernelResources { registers, ..Default::default() };
        assert_eq!(max_threads(&with(32), None), "1024");
        assert_eq!(max_threads(&with(128), None), "512");
        assert_eq!(max_threads(&with(255), None), "256");
    }
}
