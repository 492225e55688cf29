//! The command line of one subcommand, read by hand (four subcommands with a few flags each do
//! not earn an argument-parsing dependency): `--flag value`, `--flag=value`, `-h`/`--help`,
//! positional arguments, and `--` to end the flags.

use std::collections::VecDeque;
use std::path::PathBuf;

/// How a command ended well.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Nothing to report (exit 0).
    Ok,
    /// The command ran and found errors in what it checked, already printed (exit 1).
    Findings,
}

/// How a command failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliError {
    /// The command line is wrong (exit 2); `command` names the subcommand whose help to point at.
    Usage { message: String, command: &'static str },
    /// The command could not do its work: a missing file, no build output (exit 1).
    Failed(String),
}

impl CliError {
    pub fn usage(command: &'static str, message: impl Into<String>) -> CliError {
        CliError::Usage { message: message.into(), command }
    }
}

/// Runs a subcommand: `read` takes its options from `args` (`None`: `--help` was given, so
/// `help` is printed), then `body` does the work.
pub fn run_command<O>(
    args: Args,
    help: &str,
    read: fn(Args) -> Result<Option<O>, CliError>,
    body: fn(O) -> Result<Exit, CliError>,
) -> Result<Exit, CliError> {
    match read(args)? {
        Some(options) => body(options),
        None => {
            print!("{help}");
            Ok(Exit::Ok)
        }
    }
}

/// One word of the command line, classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// `--name` or `-n` (a value it takes is read with [`Args::value`]).
    Flag(String),
    /// Anything else.
    Positional(String),
    /// `-h` or `--help`.
    Help,
}

/// The words after the subcommand.
pub struct Args {
    command: &'static str,
    words: VecDeque<String>,
    /// The value of the last `--flag=value`, until [`Args::value`] takes it.
    inline_value: Option<String>,
    only_positional: bool,
}

impl Args {
    pub fn new(command: &'static str, words: Vec<String>) -> Args {
        Args { command, words: words.into(), inline_value: None, only_positional: false }
    }

    /// The next word, or `None` at the end. A `--flag=value` whose flag takes no value is an
    /// error at the next call.
    pub fn next(&mut self) -> Result<Option<Arg>, CliError> {
        if let Some(value) = self.inline_value.take() {
            return Err(self.usage(format!("unexpected value `{value}`: this flag takes none")));
        }
        let Some(word) = self.words.pop_front() else { return Ok(None) };
        if self.only_positional || word == "-" || !word.starts_with('-') {
            return Ok(Some(Arg::Positional(word)));
        }
        if word == "--" {
            self.only_positional = true;
            return self.next();
        }
        if word == "-h" || word == "--help" {
            return Ok(Some(Arg::Help));
        }
        match word.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                self.inline_value = Some(value.to_string());
                Ok(Some(Arg::Flag(flag.to_string())))
            }
            _ => Ok(Some(Arg::Flag(word))),
        }
    }

    /// The value of `flag`, just read: after `=` or the next word.
    pub fn value(&mut self, flag: &str) -> Result<String, CliError> {
        if let Some(value) = self.inline_value.take() {
            return Ok(value);
        }
        match self.words.pop_front() {
            Some(value) if !value.starts_with('-') || value == "-" => Ok(value),
            _ => Err(self.usage(format!("`{flag}` needs a value"))),
        }
    }

    /// [`Args::value`] as a path.
    pub fn path(&mut self, flag: &str) -> Result<PathBuf, CliError> {
        self.value(flag).map(PathBuf::from)
    }

    /// A usage error of this subcommand.
    pub fn usage(&self, message: impl Into<String>) -> CliError {
        CliError::usage(self.command, message)
    }

    /// The error for a flag this subcommand does not have.
    pub fn unknown(&self, flag: &str) -> CliError {
        self.usage(format!("unknown option `{flag}` for `kgraph {}`", self.command))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Args {
        Args::new("test", words.iter().map(|w| w.to_string()).collect())
    }

    #[test]
    fn flags_values_and_positionals() {
        let mut a = args(&["--root", "x", "--svg=out.svg", "file", "--", "--not-a-flag"]);
        assert_eq!(a.next().unwrap(), Some(Arg::Flag("--root".into())));
        assert_eq!(a.value("--root").unwrap(), "x");
        assert_eq!(a.next().unwrap(), Some(Arg::Flag("--svg".into())));
        assert_eq!(a.value("--svg").unwrap(), "out.svg");
        assert_eq!(a.next().unwrap(), Some(Arg::Positional("file".into())));
        assert_eq!(a.next().unwrap(), Some(Arg::Positional("--not-a-flag".into())));
        assert_eq!(a.next().unwrap(), None);
    }

    #[test]
    fn missing_and_unexpected_values_are_usage_errors() {
        let mut a = args(&["--root"]);
        a.next().unwrap();
        assert!(matches!(a.value("--root"), Err(CliError::Usage { .. })));
        let mut b = args(&["--mermaid=yes"]);
        b.next().unwrap();
        assert!(matches!(b.next(), Err(CliError::Usage { .. })));
    }
}
