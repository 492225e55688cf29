//! Property: the graph-spec reader and validator ([`analyze`]) never panic on any text. Every
//! spec in `graphs/`, `tests/graphs/`, `examples/bench/graphs/` and `tests/ui/graph/` is mutated
//! at random (characters flipped, deleted or inserted, lines swapped, duplicated or dropped,
//! truncation, values, keys and names replaced with others, expressions that overflow or divide
//! by zero), and each result must be either a model — whose generated code then parses as
//! Rust — or errors that each start with `file:line:col` inside the file and quote that line.

mod prop_support;

use std::cell::RefCell;

use kgraph_codegen::graph::spec::expr::MAX_DEPTH;
use kgraph_codegen::graph::{analyze, generate, GraphRequest};
use prop_support::{boundary, cases, check_text, files, lines, mutate_text, nth_line, seed, valid_specs, Rng};

const SPEC_PATH: &str = "g.toml";

/// Snippets inserted into the TOML text: its syntax, odd whitespace, non-ASCII.
const TOML_BITS: &[&str] = &[
    "[",
    "]",
    "[[",
    "]]",
    "{",
    "}",
    "=",
    "\"",
    "'",
    "\"\"\"",
    "'''",
    ",",
    ".",
    "#",
    "\n",
    "\r\n",
    "\r",
    "\t",
    " ",
    "\\",
    "\\u",
    "\0",
    "-",
    "+",
    "_",
    "0",
    "9",
    "e",
    "x",
    "é",
    "💥",
    "\u{feff}",
    "\u{2028}",
    "[node]",
    "[[node]]",
    "[buffers]",
    "[dims]\n",
    "inf",
    "nan",
    "true",
    "1979-05-27",
    "0x",
    "1e",
];

/// Right-hand sides swapped in for values: names, numbers, expressions, other TOML types.
const VALUES: &[&str] = &[
    "\"x\"",
    "\"y\"",
    "\"n\"",
    "\"a\"",
    "\"b\"",
    "\"s\"",
    "\"out\"",
    "\"q\"",
    "\"f32\"",
    "\"f64\"",
    "\"i32\"",
    "\"u8\"",
    "\"u64\"",
    "\"input\"",
    "\"output\"",
    "\"state\"",
    "\"scratch\"",
    "\"parameter\"",
    "\"pinned\"",
    "\"slot\"",
    "\"pinned_out\"",
    "\"tg_affine\"",
    "\"tg_prep\"",
    "\"tg_branch\"",
    "\"tg_join4\"",
    "\"tg_read_pinned\"",
    "\"tg_mul\"",
    "\"tg_accumulate\"",
    "\"new\"",
    "\"replay\"",
    "\"fn\"",
    "\"Self\"",
    "\"é\"",
    "\"\"",
    "\"n n\"",
    "\"src/model.rs\"",
    "\"tests/gpu/graph/kernels.rs\"",
    "\"nope.rs\"",
    "\"crate::x\"",
    "\"crate::\"",
    "\"::\"",
    "0",
    "1",
    "-1",
    "3",
    "255",
    "256",
    "1024",
    "1025",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "4294967296",
    "16777217",
    "9007199254740993",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "1_000",
    "0x10",
    "0o7",
    "0b1",
    "+5",
    "0.5",
    "-0.25",
    "1e300",
    "-1e-300",
    "inf",
    "-inf",
    "nan",
    "1.0",
    "true",
    "\"ceil(n / 0)\"",
    "\"n % 0\"",
    "\"n / 3\"",
    "\"n % -1\"",
    "\"-n\"",
    "\"n - n\"",
    "\"min(n)\"",
    "\"max(n, 1, 2)\"",
    "\"foo(n)\"",
    "\"n +\"",
    "\"((((n\"",
    "\"ceil(\"",
    "\")\"",
    "\"n n\"",
    "\"n $ 2\"",
    "\"n é\"",
    "\"1__0\"",
    "\"170141183460469231731687303715884105727\"",
    "\"170141183460469231731687303715884105728\"",
    "\"170141183460469231731687303715884105727 * 2\"",
    "\"170141183460469231731687303715884105727 + 1\"",
    "\"-170141183460469231731687303715884105727 - 1\"",
    "\"(-170141183460469231731687303715884105727 - 1) / -1\"",
    "\"(-170141183460469231731687303715884105727 - 1) % -1\"",
    "\"-(-170141183460469231731687303715884105727 - 1)\"",
    "\"ceil((-170141183460469231731687303715884105727 - 1) / 3)\"",
    "\"floor(-170141183460469231731687303715884105727 / 2 - 1)\"",
    "\"min(-170141183460469231731687303715884105727 - 1, 1 / 3)\"",
    "\"9223372036854775807 * 9223372036854775807\"",
    "\"ceil(n / 256) * 4294967296\"",
    "\"n * n * n * n * n\"",
    "\"n \\\\ 2\"",
    "\"\\u00e9\"",
    "\"x\\ty\"",
    "'n'",
    "'''n'''",
    "\"\"\"n\"\"\"",
    "[]",
    "[1]",
    "[1, 2, 3]",
    "[1, 2, 3, 4]",
    "[\"n\", 0]",
    "[[1]]",
    "[0, 1]",
    "[1025, 1]",
    "[64, 64]",
    "{}",
    "{ x = \"x\" }",
    "{ x = 1.5, y = [1] }",
    "{ a = { b = 1 } }",
    "1979-05-27T07:32:00Z",
    "07:32:00",
];

/// Keys swapped in for keys.
const KEYS: &[&str] = &[
    "doc", "pdl", "kernels", "source", "module", "dims", "buffers", "scalars", "node", "name", "kernel", "grid",
    "block", "shared", "args", "dtype", "len", "role", "default", "x", "y", "n", "a", "b", "k", "out", "nodes", "lenn",
    "\"\"", "\"a b\"", "a.b", "x.y.z", "é", "new", "graph", "SPEC", "x_len", "set_a", "upload_x", "fn", "_x", "X", "1",
];

/// Names swapped in for identifier-like words anywhere (inside strings and expressions too).
const NAMES: &[&str] = &[
    "x",
    "y",
    "n",
    "a",
    "b",
    "s",
    "q",
    "out",
    "block",
    "ceil",
    "floor",
    "min",
    "max",
    "f32",
    "i64",
    "slot",
    "tg_affine",
    "tg_mul",
    "node",
    "args",
    "fn",
    "self",
    "new",
    "replay",
    "x_len",
    "é",
];

fn replace_line_part(rng: &mut Rng, text: &str, value: bool) -> String {
    let mut l = lines(text);
    let candidates: Vec<usize> = (0..l.len()).filter(|&i| l[i].contains('=')).collect();
    if candidates.is_empty() {
        return text.to_string();
    }
    let i = *rng.pick(&candidates);
    let (key, rest) = l[i].split_once('=').expect("line with `=`");
    let new = if value {
        let eol = if rest.ends_with('\n') { "\n" } else { "" };
        format!("{key}= {}{eol}", rng.pick(VALUES))
    } else {
        format!("{} ={rest}", rng.pick(KEYS))
    };
    l[i] = &new;
    l.concat()
}

/// Replaces one identifier-like word (also inside strings: names in `args`, expressions).
fn replace_word(rng: &mut Rng, text: &str) -> String {
    let mut words = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        let word_char = c.is_ascii_alphanumeric() || c == '_';
        match (start, word_char) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                words.push(s..i);
                start = None;
            }
            _ => {}
        }
    }
    if words.is_empty() {
        return text.to_string();
    }
    let w = rng.pick(&words).clone();
    format!("{}{}{}", &text[..w.start], rng.pick(NAMES), &text[w.end..])
}

fn mutate(rng: &mut Rng, text: &str, donors: &[&str]) -> String {
    let mut t = text.to_string();
    for _ in 0..rng.range(1, 3) {
        t = match rng.below(16) {
            0..=5 => replace_line_part(rng, &t, true),
            6 => replace_line_part(rng, &t, false),
            7..=9 => replace_word(rng, &t),
            10 => {
                // A whole `[[node]]` or `[buffers.x]` table duplicated at the end.
                let at = boundary(rng, &t);
                let tail = t[at..].to_string();
                t + "\n" + &tail
            }
            _ => mutate_text(rng, &t, TOML_BITS, donors),
        };
    }
    t
}

/// The kernel declaration files specs name, read from the workspace once each (relative paths
/// inside it only: a mutated path never reads elsewhere).
struct Sources {
    root: std::path::PathBuf,
    cache: RefCell<std::collections::HashMap<String, Option<String>>>,
    /// When set, reads of `tests/gpu/graph/kernels.rs` get this (mutated) text instead.
    override_text: RefCell<Option<String>>,
}

impl Sources {
    fn read(&self, path: &str) -> std::io::Result<String> {
        if path == GRAPH_KERNELS {
            if let Some(t) = self.override_text.borrow().clone() {
                return Ok(t);
            }
        }
        let inside = !path.is_empty() && !path.starts_with(['/', '\\']) && !path.contains("..");
        let text = self
            .cache
            .borrow_mut()
            .entry(path.to_string())
            .or_insert_with(|| inside.then(|| std::fs::read_to_string(self.root.join(path)).ok()).flatten())
            .clone();
        text.ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"))
    }
}

const GRAPH_KERNELS: &str = "tests/gpu/graph/kernels.rs";

/// Every error starts with `g.toml:line:col: ` inside the text and quotes that line, or with the
/// same inside a spec that `g.toml` includes (read through `read`).
fn check_errors(text: &str, errors: &[String], read: &dyn Fn(&str) -> std::io::Result<String>) -> Result<(), String> {
    if errors.is_empty() {
        return Err("analysis failed without an error".into());
    }
    for e in errors {
        let (pos, rest) = e.split_once(": ").ok_or_else(|| format!("no `file:line:col: ` in {e:?}"))?;
        let parts: Vec<&str> = pos.split(':').collect();
        let [file, line, col] = parts[..] else { return Err(format!("no `file:line:col` in {e:?}")) };
        let (line, col): (usize, usize) = match (line.parse(), col.parse()) {
            (Ok(l), Ok(c)) => (l, c),
            _ => return Err(format!("line/col not numbers in {e:?}")),
        };
        let included =
            if file == SPEC_PATH { None } else { Some(read(file).map_err(|_| format!("no file {file} in {e:?}"))?) };
        let text = included.as_deref().unwrap_or(text);
        let quoted = nth_line(text, line).ok_or_else(|| format!("line {line} is past the end in {e:?}"))?;
        let width = quoted.chars().count(); // a `\r` before the `\n` counts: it is a position too
        if !file.ends_with(".toml") || col == 0 || col > width + 1 {
            return Err(format!("bad position {file}:{line}:{col} (line has {width} chars) in {e:?}"));
        }
        if !rest.contains(&format!(" {line} | ")) {
            return Err(format!("line {line} is not quoted in {e:?}"));
        }
    }
    Ok(())
}

#[test]
fn mutated_specs_give_a_model_or_positioned_errors_never_a_panic() {
    let mut seeds = valid_specs();
    let n_primary = seeds.len();
    assert!(n_primary >= 3, "graphs/*.toml, tests/graphs/*.toml, examples/bench/graphs/*.toml");
    seeds.extend(files("tests/ui/graph", ".toml"));
    let donors: Vec<&str> = seeds.iter().map(|(_, t)| t.as_str()).collect();
    let root = prop_support::workspace_root();
    let kernels_rs = std::fs::read_to_string(root.join(GRAPH_KERNELS)).expect("graph test kernels");
    let sources = Sources { root, cache: RefCell::default(), override_text: RefCell::new(None) };
    let read_file = |p: &str| sources.read(p);
    let (valid, rejected) = (std::cell::Cell::new(0usize), std::cell::Cell::new(0usize));
    let prop = |text: &str| -> Result<(), String> {
        let req =
            GraphRequest { spec_path: SPEC_PATH, spec_text: text, struct_name: None, root: "", read_file: &read_file };
        // `generate` is `analyze` plus code generation: its errors are the analysis's.
        match generate(&req) {
            Ok(tokens) => {
                valid.set(valid.get() + 1);
                syn::parse2::<syn::File>(tokens).map_err(|e| format!("generated code does not parse: {e}"))?;
                Ok(())
            }
            Err(errors) => {
                rejected.set(rejected.get() + 1);
                check_errors(text, &errors, &read_file)
            }
        }
    };

    // The unmutated graphs validate (else the mutations below would test nothing deep).
    for (path, text) in &seeds[..n_primary] {
        let req =
            GraphRequest { spec_path: SPEC_PATH, spec_text: text, struct_name: None, root: "", read_file: &read_file };
        assert!(analyze(&req).is_ok(), "{path} must validate");
    }

    let mut rng = Rng::new(seed());
    let n = cases(3000);
    for case in 0..n {
        // Most cases start from the valid graphs; some from the compile-fail specs.
        let (_, base) = if rng.chance(3, 4) { &seeds[rng.below(n_primary)] } else { rng.pick(&seeds) };
        let text = mutate(&mut rng, base, &donors);
        // One case in ten also mutates the kernel declarations the spec reads.
        let decls = rng.chance(1, 10).then(|| {
            let bits = ["(", ")", "<", ">", "&", "mut", "[", "]", ";", "#", "!", "\"", "é", "fn", "pub", "\n"];
            mutate_text(&mut rng, &kernels_rs, &bits, &[&kernels_rs])
        });
        *sources.override_text.borrow_mut() = decls;
        check_text("graph spec", case, &text, &prop);
    }
    let (valid, rejected) = (valid.get(), rejected.get());
    eprintln!("prop_graph_spec: {n} mutated specs: {valid} valid, {rejected} rejected with positioned errors");
    assert!(valid >= n / 50, "too few mutated specs stay valid ({valid} of {n}): the generator lost its depth");
    assert!(rejected >= n / 2, "too few mutated specs are rejected ({rejected} of {n})");
}

/// What a stress case puts into a valid spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stress {
    /// An expression nested past the depth limit, as a length, launch size or argument.
    Deep,
    /// One line of hundreds of kilobytes: thousands of arguments, a huge value, or garbage.
    Huge,
    /// A float literal out of range (or rounding to 0) for f32, f64 or both.
    Float,
}

/// An expression `MAX_DEPTH + 1` to 3000 levels deep, of one shape or mixed.
fn deep_expression(rng: &mut Rng) -> String {
    let depth = rng.range(MAX_DEPTH + 1, 3000);
    let shape = rng.below(5);
    let (mut open, mut close) = (String::new(), String::new());
    for _ in 0..depth {
        let (o, c) = match if shape == 4 { rng.below(4) } else { shape } {
            0 => ("(", ")"),
            1 => ("", " + 1"),
            2 => ("-", ""),
            _ => ("ceil(", ")"),
        };
        open += o;
        close.insert_str(0, c);
    }
    format!("\"{open}n{close}\"")
}

fn bad_float(rng: &mut Rng) -> String {
    let sign = if rng.chance(1, 2) { "-" } else { "" };
    let exponent =
        if rng.chance(1, 2) { format!("{}", rng.range(39, 400)) } else { format!("-{}", rng.range(46, 500)) };
    format!("{sign}{}.{}e{exponent}", rng.range(1, 9), rng.below(1000))
}

/// Lines of `text` whose key is one of `keys` (`args` lines included when `args` is).
fn lines_with_keys(text: &str, keys: &[&str]) -> Vec<usize> {
    let key_of = |l: &str| l.split_once('=').map(|(k, _)| k.trim().to_string());
    (0..lines(text).len()).filter(|&i| key_of(lines(text)[i]).is_some_and(|k| keys.contains(&k.as_str()))).collect()
}

/// `text` with line `i`'s value (or, for an `args` line, one argument's value) set to `value`.
fn set_value(rng: &mut Rng, text: &str, i: usize, value: &str) -> String {
    set_value_where(rng, text, i, value, &|_| true)
}

/// A float literal as written (`0.5`, `-1.0`), not a name or an integer.
fn is_float_literal(v: &str) -> bool {
    let v = v.trim();
    v.contains('.') && v.parse::<f64>().is_ok()
}

/// [`set_value`], choosing among the arguments whose current value passes `choose` (any
/// argument when none does).
fn set_value_where(rng: &mut Rng, text: &str, i: usize, value: &str, choose: &dyn Fn(&str) -> bool) -> String {
    let mut l: Vec<String> = lines(text).iter().map(|s| s.to_string()).collect();
    let (key, rest) = l[i].split_once('=').map(|(k, r)| (k.to_string(), r.to_string())).expect("a key line");
    l[i] = if key.trim() == "args" {
        let args: Vec<&str> = rest.trim().trim_start_matches('{').trim_end_matches('}').split(',').collect();
        let value_of = |a: &str| a.split_once('=').map_or("", |(_, v)| v).to_string();
        let chosen: Vec<usize> = (0..args.len()).filter(|&j| choose(&value_of(args[j]))).collect();
        let pick = if chosen.is_empty() { rng.below(args.len()) } else { *rng.pick(&chosen) };
        let new: Vec<String> = args
            .iter()
            .enumerate()
            .map(|(j, a)| {
                if j == pick {
                    format!("{} = {value}", a.split('=').next().unwrap_or("x").trim())
                } else {
                    a.trim().to_string()
                }
            })
            .collect();
        format!("{key}= {{ {} }}\n", new.join(", "))
    } else {
        format!("{key}= {value}\n")
    };
    l.concat()
}

fn huge_line(rng: &mut Rng, text: &str) -> String {
    let args = lines_with_keys(text, &["args"]);
    let size = rng.range(100_000, 300_000);
    match rng.below(3) {
        0 if !args.is_empty() => {
            let i = *rng.pick(&args);
            let mut l: Vec<String> = lines(text).iter().map(|s| s.to_string()).collect();
            let extra: String = (0..size / 12).map(|k| format!(", q{k} = {}", rng.below(3))).collect();
            let line = l[i].trim_end().trim_end_matches('}').to_string();
            l[i] = format!("{line}{extra} }}\n");
            l.concat()
        }
        1 => {
            let keys = lines_with_keys(text, &["len", "grid", "kernel", "dtype", "role", "args"]);
            let Some(&i) = keys.first().map(|_| rng.pick(&keys)) else { return text.to_string() };
            let body: String = (0..size).map(|_| *rng.pick(&['n', ' ', '+', 'x', '_', '(', ')'])).collect();
            set_value(rng, text, i, &format!("\"{body}\""))
        }
        _ => format!("{text}\n{}\n", " ~ = {".repeat(size / 6)),
    }
}

fn stressed(rng: &mut Rng, text: &str, stress: Stress) -> String {
    match stress {
        Stress::Deep => {
            let at = lines_with_keys(text, &["len", "grid", "block", "shared", "args"]);
            let i = *rng.pick(&at);
            let value = deep_expression(rng);
            set_value(rng, text, i, &value)
        }
        Stress::Huge => huge_line(rng, text),
        Stress::Float => {
            // Lines with a float literal: scalar defaults and float arguments.
            let at: Vec<usize> = lines_with_keys(text, &["default", "args"])
                .into_iter()
                .filter(|&i| lines(text)[i].split([',', '=', '{', '}']).any(is_float_literal))
                .collect();
            let Some(&i) = at.first().map(|_| rng.pick(&at)) else { return text.to_string() };
            let value = bad_float(rng);
            set_value_where(rng, text, i, &value, &is_float_literal)
        }
    }
}

/// Property: deep expressions, huge lines and out-of-range floats put into the valid graphs
/// never panic or overflow the stack, and give a model or located errors whose total size is
/// bounded (under 1 MiB, each quoted line at most 200 characters). Deep expressions are always
/// rejected; floats must be rejected as out of range in some cases.
#[test]
fn deep_huge_and_out_of_range_inputs_give_located_bounded_errors() {
    let seeds = valid_specs();
    let root = prop_support::workspace_root();
    let sources = Sources { root, cache: RefCell::default(), override_text: RefCell::new(None) };
    let read_file = |p: &str| sources.read(p);
    let float_rejections = std::cell::Cell::new(0usize);
    let prop_for = |stress: Stress| {
        let (read_file, float_rejections) = (&read_file, &float_rejections);
        move |text: &str| -> Result<(), String> {
            let req = GraphRequest { spec_path: SPEC_PATH, spec_text: text, struct_name: None, root: "", read_file };
            let errors = match analyze(&req) {
                Ok(_) if stress == Stress::Deep => return Err("a too-deep expression validated".into()),
                Ok(_) => return Ok(()),
                Err(errors) => errors,
            };
            check_errors(text, &errors, read_file)?;
            let total: usize = errors.iter().map(String::len).sum();
            let widest =
                errors.iter().flat_map(|e| e.lines().skip(2).step_by(3).take(1)).map(|l| l.chars().count()).max();
            if total >= 1 << 20 || widest.unwrap_or(0) > 200 {
                return Err(format!("{total} bytes of errors, widest quoted line {widest:?} chars"));
            }
            let joined = errors.join("\n");
            if joined.contains("is out of its range") || joined.contains("would round to 0") {
                float_rejections.set(float_rejections.get() + 1);
            }
            Ok(())
        }
    };
    let mut rng = Rng::new(seed() ^ 0x5354_5245_5353);
    let n = cases(60);
    for case in 0..n {
        let stress = [Stress::Deep, Stress::Huge, Stress::Float][case % 3];
        let (_, base) = rng.pick(&seeds);
        let text = stressed(&mut rng, base, stress);
        let prop = prop_for(stress);
        check_text("stressed graph spec", case, &text, &prop);
    }
    eprintln!("prop_graph_spec: {n} stressed specs, {} floats rejected as out of range", float_rejections.get());
    assert!(float_rejections.get() >= n / 12, "too few out-of-range floats rejected ({})", float_rejections.get());
}
