//! The preprocessed source, `$OUT_DIR/kgraph/<stem>.i`: exactly the text nvcc's device compile
//! (cicc) read for `<stem>.cu`, kept from the same invocation that produced the cubin
//! (`nvcc -keep`: the `<stem>.cpp1.ii` of the first arch, preprocessed by the host compiler with
//! `-D__CUDA_ARCH__=<arch>0`, `-D__CUDACC__`, the build's `-I`/`-D` flags). So `#if`/`#ifdef`,
//! `#if __CUDA_ARCH__ >= 800` blocks, macros and includes are resolved as nvcc compiled them.
//!
//! Nothing is stripped: CUDA's own headers are in it (about 1.3 MB for a kernel including
//! `cuda_runtime.h` implicitly, as every nvcc compile does). Line markers are kept, in the GNU
//! form `# <line> "<file>"[ <flags>]` (also accepted: `#line <line> "<file>"`): the line after a
//! marker is line `<line>` of `<file>`, and each following line one more, until the next
//! marker. [`original_line`] applies that rule.

/// A position in an original source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLine {
    /// The file as the line marker names it (escapes such as `\\` left as written).
    pub file: String,
    /// 1-based line in that file.
    pub line: u32,
}

/// Where line `line` (1-based) of the preprocessed text `preprocessed` came from: the file and
/// line of the latest line marker above it, plus the lines since. `None` for a marker line, a
/// line before any marker, or a line past the end.
pub fn original_line(preprocessed: &str, line: usize) -> Option<SourceLine> {
    let mut current: Option<SourceLine> = None;
    for (i, text) in preprocessed.lines().enumerate() {
        if let Some((number, file)) = line_marker(text) {
            if i + 1 == line {
                return None;
            }
            current = Some(SourceLine { file, line: number });
            continue;
        }
        if i + 1 == line {
            return current;
        }
        if let Some(c) = current.as_mut() {
            c.line += 1;
        }
    }
    None
}

/// `# 12 "file" 2` or `#line 12 "file"`: the line number and file.
pub fn line_marker(text: &str) -> Option<(u32, String)> {
    let rest = text.strip_prefix('#')?;
    let rest = rest.strip_prefix("line").unwrap_or(rest).trim_start();
    let (number, rest) = rest.split_once(' ')?;
    let number = number.parse().ok()?;
    let file = rest.trim_start().strip_prefix('"')?;
    let end = file.rfind('"')?;
    Some((number, file[..end].to_string()))
}

/// Every line of a preprocessed text mapped to its original file and line at once (what
/// [`original_line`] computes for one line), for readers that look up many lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineMap {
    /// The files the markers name, each once, in order of first appearance.
    pub files: Vec<String>,
    /// Per line of the text (index 0 is line 1): the index into `files` and the 1-based line
    /// there; `None` for marker lines and lines before any marker.
    pub lines: Vec<Option<(usize, u32)>>,
}

impl LineMap {
    /// The map of `preprocessed`.
    pub fn new(preprocessed: &str) -> LineMap {
        let mut map = LineMap::default();
        let mut current: Option<(usize, u32)> = None;
        for text in preprocessed.lines() {
            if let Some((number, file)) = line_marker(text) {
                let index = match map.files.iter().position(|f| *f == file) {
                    Some(i) => i,
                    None => {
                        map.files.push(file);
                        map.files.len() - 1
                    }
                };
                current = Some((index, number));
                map.lines.push(None);
                continue;
            }
            map.lines.push(current);
            if let Some((_, line)) = current.as_mut() {
                *line += 1;
            }
        }
        map
    }

    /// Where 1-based line `line` of the text came from: file and line.
    pub fn get(&self, line: usize) -> Option<(&str, u32)> {
        let (file, at) = (*self.lines.get(line.checked_sub(1)?)?)?;
        Some((self.files[file].as_str(), at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_count_from_the_latest_marker() {
        let text = "# 0 \"a.cu\"\n# 1 \"a.cu\"\nint x;\n# 5 \"b.cuh\" 1\nint y;\nint z;\n#line 40 \"a.cu\"\nint w;\n";
        let at = |l| original_line(text, l).map(|s| (s.file, s.line));
        assert_eq!(at(1), None);
        assert_eq!(at(3), Some(("a.cu".into(), 1)));
        assert_eq!(at(5), Some(("b.cuh".into(), 5)));
        assert_eq!(at(6), Some(("b.cuh".into(), 6)));
        assert_eq!(at(8), Some(("a.cu".into(), 40)));
        assert_eq!(at(99), None);
        let map = LineMap::new(text);
        for l in 1..=9 {
            assert_eq!(map.get(l).map(|(f, n)| (f.to_string(), n)), at(l), "line {l}");
        }
    }
}
