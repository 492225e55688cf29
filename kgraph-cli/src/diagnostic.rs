//! Errors in Rust files rendered like the graph-spec errors (`file:line:col: message`, the
//! line, a caret under the span), through the spec renderer itself so both read the same.

use kgraph_codegen::graph::spec::diag::SourceMap;
use proc_macro2::LineColumn;

/// `error` (spanned in `text`, which was parsed with span locations) as
/// `path:line:col: message` with the line quoted.
pub fn render_rust_error(path: &str, text: &str, error: &syn::Error) -> String {
    let span = error.span();
    let start = byte_offset(text, span.start());
    let end = byte_offset(text, span.end()).max(start);
    SourceMap::new(path, text).render(&(start..end), &error.to_string())
}

/// The byte offset of a span position (1-based line, 0-based column in characters).
fn byte_offset(text: &str, at: LineColumn) -> usize {
    let line_start: usize = text.split_inclusive('\n').take(at.line.saturating_sub(1)).map(str::len).sum();
    let line = &text[line_start.min(text.len())..];
    let column: usize = line.chars().take(at.column).map(char::len_utf8).sum();
    (line_start + column).min(text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_the_line_of_the_span() {
        let text = "fn a() {}\nfn bé(x: i32) {}\n";
        let file = syn::parse_file(text).unwrap();
        let syn::Item::Fn(f) = &file.items[1] else { panic!() };
        let error = syn::Error::new_spanned(&f.sig.inputs, "no");
        let shown = render_rust_error("src/x.rs", text, &error);
        assert!(shown.starts_with("src/x.rs:2:7: no\n"), "{shown}");
        assert!(shown.contains("2 | fn bé(x: i32) {}"), "{shown}");
        assert!(shown.ends_with("|       ^^^^^^"), "{shown}");
    }
}
