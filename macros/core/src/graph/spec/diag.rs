//! Error reporting for graph specs: byte offsets into the TOML file become `file:line:col`
//! plus the offending line with a caret underline. Every error of one spec is collected (in a
//! [`crate::diagnostics::Ctxt`]) before any is reported.
//!
//! Output stays bounded whatever the input (a generated spec may have one line of megabytes
//! and thousands of errors): a long line is quoted as a window around the caret, messages and
//! name lists are clipped, and at most [`MAX_ERRORS`] errors are shown, then a count.

use std::ops::Range;

use proc_macro2::{LineColumn, Span};

use crate::diagnostics::{Errors, Location};
use crate::syntax::text::code_list;

/// At most this many errors of one spec are shown; one more error counts the rest.
pub const MAX_ERRORS: usize = 50;
/// Characters of a long quoted line shown before and after the caret's start.
const QUOTE_CONTEXT: usize = 60;
/// Lines up to this many characters are quoted whole.
const QUOTE_WHOLE: usize = 2 * QUOTE_CONTEXT + 20;
/// A message longer than this (characters) is clipped in the middle.
const MAX_MESSAGE: usize = 2000;
/// Names listed in one message (`buffers: ...`); the rest are counted.
const MAX_LISTED: usize = 32;
/// Names longer than this get no "did you mean" (the edit distance is quadratic).
const MAX_SUGGESTED_LEN: usize = 256;

/// `text`, or its first and last `max / 2` characters around a `…` when it is longer than
/// `max` characters: for user text quoted in messages.
pub fn clip(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    let len = text.chars().count();
    if len <= max {
        return text.into();
    }
    let head: String = text.chars().take(max / 2).collect();
    let tail: String = text.chars().skip(len - max / 2).collect();
    format!("{head}…{tail}").into()
}

/// A spec file's text and display path, for turning byte offsets into positions.
#[derive(Debug, Clone)]
pub struct SourceMap<'a> {
    path: &'a str,
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> SourceMap<'a> {
    /// Indexes `text` (shown as `path` in messages).
    pub fn new(path: &'a str, text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        SourceMap { path, text, line_starts }
    }

    /// The display path.
    pub fn path(&self) -> &'a str {
        self.path
    }

    /// 1-based (line, column) of byte `offset`; the column counts characters.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line];
        let col = self.text[start..floor_char_boundary(self.text, offset)].chars().count() + 1;
        (line + 1, col)
    }

    fn line_text(&self, line: usize) -> &'a str {
        let start = self.line_starts[line - 1];
        let end = self.line_starts.get(line).copied().unwrap_or(self.text.len());
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }

    /// `path:line:col: message`, then the line and a caret under `span` (first line only). A
    /// line longer than `QUOTE_WHOLE` characters is quoted as a window around the caret.
    pub fn render(&self, span: &Range<usize>, message: &str) -> String {
        let (line, col) = self.line_col(span.start);
        let text = self.line_text(line);
        let gutter = line.to_string();
        let pad = " ".repeat(gutter.len());
        let (end_line, end_col) = self.line_col(span.end.max(span.start));
        let len = text.chars().count();
        let width = if end_line == line { end_col.saturating_sub(col).max(1) } else { len + 1 - col };
        let quote = Quote::around(text, len, col - 1);
        let mut caret_pad = String::from(if quote.cut_before { " " } else { "" });
        caret_pad.extend(text.chars().skip(quote.from).take(col - 1 - quote.from).map(|c| {
            if c == '\t' {
                '\t'
            } else {
                ' '
            }
        }));
        // The caret stops at the window's end (plus the end of the line's own position).
        let width = width.min(quote.to + 1 - (col - 1)).max(1);
        format!(
            "{}:{line}:{col}: {}\n {pad} |\n {gutter} | {}\n {pad} | {caret_pad}{}",
            self.path,
            clip(message, MAX_MESSAGE),
            quote.text,
            "^".repeat(width)
        )
    }
}

/// The part of a line quoted under an error: characters `from..to`, with `…` where cut.
struct Quote {
    text: String,
    from: usize,
    to: usize,
    cut_before: bool,
}

impl Quote {
    /// The window of `line` (`len` characters) around character `at` (0-based).
    fn around(line: &str, len: usize, at: usize) -> Self {
        if len <= QUOTE_WHOLE {
            return Quote { text: line.to_string(), from: 0, to: len, cut_before: false };
        }
        let from = at.saturating_sub(QUOTE_CONTEXT).min(len.saturating_sub(2 * QUOTE_CONTEXT));
        let to = (from + 2 * QUOTE_CONTEXT).min(len);
        let (cut_before, cut_after) = (from > 0, to < len);
        let mut text = String::from(if cut_before { "…" } else { "" });
        text.extend(line.chars().skip(from).take(to - from));
        if cut_after {
            text.push('…');
        }
        Quote { text, from, to, cut_before }
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl SourceMap<'_> {
    /// Renders `errors` (those of this spec, and those positioned in included specs) with
    /// positions from this map: the included specs' first, then this file's in file order
    /// (file-level ones first), duplicates removed, at most [`MAX_ERRORS`] plus one more (at
    /// the first one left out) saying how many were left out. A Rust span (`kgraph check`
    /// parses Rust files with span locations) is placed by its line and column.
    pub fn render_errors(&self, errors: &Errors) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut own: Vec<(Option<Range<usize>>, &str)> = Vec::new();
        for e in errors {
            match &e.location {
                Location::Positioned => out.push(e.message.clone()),
                Location::SpecFile => own.push((None, &e.message)),
                Location::Spec(range) => own.push((Some(range.clone()), &e.message)),
                Location::Span(span) => own.push((Some(self.span_bytes(*span)), &e.message)),
                Location::Tokens(error) => own.push((Some(self.span_bytes(error.span())), &e.message)),
            }
        }
        own.sort_by_key(|(span, _)| span.as_ref().map_or((0, 0), |s| (s.start + 1, s.end)));
        own.dedup();
        let render = |span: &Option<Range<usize>>, message: &str| match span {
            Some(span) => self.render(span, message),
            None => format!("{}: {}", self.path(), clip(message, MAX_MESSAGE)),
        };
        out.extend(own.iter().take(MAX_ERRORS).map(|(span, message)| render(span, message)));
        if let Some((first_left_out, _)) = own.get(MAX_ERRORS) {
            let more = own.len() - MAX_ERRORS;
            let message = format!("and {more} more error(s) from here on (only the first {MAX_ERRORS} are shown)");
            out.push(render(first_left_out, &message));
        }
        out
    }

    /// The bytes of this text a span (of tokens parsed from it with span locations; a joined
    /// span covers a `syn::Error`'s first to last token) covers.
    fn span_bytes(&self, span: Span) -> Range<usize> {
        let start = self.byte_offset(span.start());
        start..self.byte_offset(span.end()).max(start)
    }

    /// The byte offset of a span position (1-based line, 0-based column in characters).
    fn byte_offset(&self, at: LineColumn) -> usize {
        let Some(&line_start) = self.line_starts.get(at.line.saturating_sub(1)) else { return self.text.len() };
        let column: usize = self.text[line_start..].chars().take(at.column).map(char::len_utf8).sum();
        (line_start + column).min(self.text.len())
    }
}

/// `did you mean `x`?` when some candidate is within a small edit distance of `name`.
pub fn suggest<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>) -> String {
    if name.len() > MAX_SUGGESTED_LEN {
        return String::new();
    }
    // The distance is at least the difference in characters: skip what cannot be close enough.
    let close_enough = |d: usize, c: &str| d <= name.len().max(c.len()) / 3;
    let name_chars = name.chars().count();
    let best = candidates
        .into_iter()
        .filter(|c| close_enough(name_chars.abs_diff(c.chars().count()), c))
        .map(|c| (edit_distance(name, c), c))
        .filter(|&(d, c)| d > 0 && close_enough(d, c))
        .min_by_key(|(d, _)| *d);
    match best {
        Some((_, c)) => format!("; did you mean `{c}`?"),
        None => String::new(),
    }
}

/// A list like "`a`, `b`, `c`" (or "none"), as spec messages write it; after `MAX_LISTED`
/// names, the rest are counted.
pub fn list<'c>(names: impl IntoIterator<Item = &'c str>) -> String {
    let names: Vec<&str> = names.into_iter().collect();
    let shown = code_list(names.iter().take(MAX_LISTED).map(|n| clip(n, 64)), "none");
    match names.len().checked_sub(MAX_LISTED) {
        Some(rest) if rest > 0 => format!("{shown} and {rest} more"),
        _ => shown,
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use crate::diagnostics::{Errors, Location};
    use crate::graph::spec::diag::SourceMap;

    #[test]
    fn a_rust_span_is_placed_by_its_line_and_column() {
        // `kgraph check` renders #[kernel] errors in Rust files through this renderer.
        let text = "fn a() {}\nfn bé(x: i32) {}\n";
        let file = syn::parse_file(text).unwrap();
        let syn::Item::Fn(f) = &file.items[1] else { panic!() };
        let error = syn::Error::new_spanned(&f.sig.inputs, "no");
        let shown = SourceMap::new("src/x.rs", text).render_errors(&Errors::one(error.span(), "no"));
        assert_eq!(shown.len(), 1);
        assert!(shown[0].starts_with("src/x.rs:2:7: no\n"), "{}", shown[0]);
        assert!(shown[0].contains("2 | fn bé(x: i32) {}"), "{}", shown[0]);
        assert!(shown[0].ends_with("|       ^^^^^^"), "{}", shown[0]);
    }

    #[test]
    fn included_errors_come_first_then_this_file_in_order() {
        let text = "a = 1\nb = 2\n";
        let mut cx = crate::diagnostics::Ctxt::new();
        cx.push(6..7, "second");
        cx.push(Location::Positioned, "elsewhere.toml:1:1: included");
        cx.push(0..1, "first");
        cx.push(0..1, "first");
        let shown = SourceMap::new("x.toml", text).render_errors(&cx.check().unwrap_err());
        assert_eq!(shown.len(), 3, "{shown:?}");
        assert_eq!(shown[0], "elsewhere.toml:1:1: included");
        assert!(shown[1].starts_with("x.toml:1:1: first"), "{}", shown[1]);
        assert!(shown[2].starts_with("x.toml:2:1: second"), "{}", shown[2]);
    }
}
