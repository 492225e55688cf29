//! Error reporting for graph specs: byte offsets into the TOML file become `file:line:col`
//! plus the offending line with a caret underline, and every error of one spec is collected
//! before any is reported.

use std::ops::Range;

use crate::syntax::text::code_list;

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

    /// `path:line:col: message`, then the line and a caret under `span` (first line only).
    pub fn render(&self, span: &Range<usize>, message: &str) -> String {
        let (line, col) = self.line_col(span.start);
        let text = self.line_text(line);
        let gutter = line.to_string();
        let pad = " ".repeat(gutter.len());
        let (end_line, end_col) = self.line_col(span.end.max(span.start));
        let width = if end_line == line { end_col.saturating_sub(col).max(1) } else { text.chars().count() + 1 - col };
        let caret_pad: String = text.chars().take(col - 1).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
        format!(
            "{}:{line}:{col}: {message}\n {pad} |\n {gutter} | {text}\n {pad} | {caret_pad}{}",
            self.path,
            "^".repeat(width.max(1))
        )
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// One problem found in a spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// Byte range in the spec file (`None`: about the file as a whole).
    pub span: Option<Range<usize>>,
    /// What is wrong, without the position.
    pub message: String,
}

/// Collects [`SpecError`]s so all of a spec's problems are reported together.
#[derive(Debug, Default)]
pub struct Diagnostics {
    errors: Vec<SpecError>,
}

impl Diagnostics {
    /// An empty collection.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records an error at `span`.
    pub fn error(&mut self, span: Range<usize>, message: impl Into<String>) {
        self.errors.push(SpecError { span: Some(span), message: message.into() });
    }

    /// Records an error about the whole file.
    pub fn file_error(&mut self, message: impl Into<String>) {
        self.errors.push(SpecError { span: None, message: message.into() });
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// Number of errors recorded.
    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// The errors, in file order (file-level ones first), duplicates removed.
    pub fn into_sorted(mut self) -> Vec<SpecError> {
        self.errors.sort_by_key(|e| e.span.as_ref().map_or((0, 0), |s| (s.start + 1, s.end)));
        self.errors.dedup();
        self.errors
    }

    /// Renders every error with positions from `map`.
    pub fn render(self, map: &SourceMap<'_>) -> Vec<String> {
        self.into_sorted()
            .into_iter()
            .map(|e| match &e.span {
                Some(span) => map.render(span, &e.message),
                None => format!("{}: {}", map.path(), e.message),
            })
            .collect()
    }
}

/// `did you mean `x`?` when some candidate is within a small edit distance of `name`.
pub fn suggest<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>) -> String {
    let best = candidates
        .into_iter()
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, c)| *d > 0 && *d <= name.len().max(c.len()) / 3)
        .min_by_key(|(d, _)| *d);
    match best {
        Some((_, c)) => format!("; did you mean `{c}`?"),
        None => String::new(),
    }
}

/// A list like "`a`, `b`, `c`" (or "none"), as spec messages write it.
pub fn list<'c>(names: impl IntoIterator<Item = &'c str>) -> String {
    code_list(names, "none")
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
