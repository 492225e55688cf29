//! `kgraph`: the command-line companion of the kgraph macros, for the kernel workflow without a
//! full build: `check` the crate's graph specs and `#[kernel]` declarations, `declare` the
//! kernels of a `.cu` file, show the `resources` ptxas reported, draw a graph (`dot`).
//!
//! The work is the macros' own (`kgraph-codegen`), so the messages are the compiler's; this
//! crate finds the files, reads the command line and prints. Exit codes: 0 ok, 1 findings or
//! failure, 2 a wrong command line.

mod args;
mod check;
mod declare;
mod dot;
mod project;
mod resources;

use std::process::ExitCode;

use args::{Args, CliError, Exit};

const HELP: &str = "\
kgraph: check, declare and inspect kgraph kernels and graph specs

Usage: kgraph <COMMAND> [OPTIONS]

Commands:
  check      Validate every graphs/*.toml and #[kernel] declaration, without building
  declare    Print the #[kernel] declaration for each kernel of .cu files
  resources  Print registers, shared memory, stack, spills, max threads per kernel
  dot        Print a graph spec's dataflow as DOT or Mermaid, or render SVG
  help       Print this message or a command's help

Options:
  -h, --help     Print help
  -V, --version  Print version

Exit status: 0 ok, 1 findings (errors in the checked files) or a failure, 2 usage error.
Run `kgraph <COMMAND> --help` for a command's options.
";

fn main() -> ExitCode {
    let outcome = run(std::env::args().skip(1).collect());
    match outcome {
        Ok(Exit::Ok) => ExitCode::SUCCESS,
        Ok(Exit::Findings) => ExitCode::from(1),
        Err(CliError::Failed(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
        Err(CliError::Usage { message, command }) => {
            let help =
                if command.is_empty() { "kgraph --help".to_string() } else { format!("kgraph {command} --help") };
            eprintln!("error: {message}\n\nRun `{help}` for usage.");
            ExitCode::from(2)
        }
    }
}

fn run(mut words: Vec<String>) -> Result<Exit, CliError> {
    if words.is_empty() {
        print!("{HELP}");
        return Err(CliError::usage("", "no command given"));
    }
    let command = words.remove(0);
    match command.as_str() {
        "check" => check::run(Args::new("check", words)),
        "declare" => declare::run(Args::new("declare", words)),
        "resources" => resources::run(Args::new("resources", words)),
        "dot" => dot::run(Args::new("dot", words)),
        "help" | "-h" | "--help" => help(words.first().map(String::as_str)),
        "-V" | "--version" => {
            println!("kgraph {}", env!("CARGO_PKG_VERSION"));
            Ok(Exit::Ok)
        }
        other if other.starts_with('-') => Err(CliError::usage("", format!("unknown option `{other}`"))),
        other => Err(CliError::usage(
            "",
            format!("unknown command `{other}`: the commands are check, declare, resources, dot"),
        )),
    }
}

/// `kgraph help [COMMAND]`.
fn help(command: Option<&str>) -> Result<Exit, CliError> {
    let text = match command {
        None => HELP,
        Some("check") => check::HELP,
        Some("declare") => declare::HELP,
        Some("resources") => resources::HELP,
        Some("dot") => dot::HELP,
        Some(other) => return Err(CliError::usage("", format!("no help for unknown command `{other}`"))),
    };
    print!("{text}");
    Ok(Exit::Ok)
}
