//! Helpers over a token slice shared by the type readers: top-level splitting, the matching
//! closing bracket, and tokens as text for messages.

use crate::cuda::lex::Token;

/// `toks` split at top-level `sep` (outside `()`, `[]`, `{}`, `<>`).
pub(crate) fn split_top<'t>(toks: &'t [Token], sep: &str) -> Vec<&'t [Token]> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (k, t) in toks.iter().enumerate() {
        if t.is_punct("(") || t.is_punct("[") || t.is_punct("{") || t.is_punct("<") {
            depth += 1;
        } else if t.is_punct(")") || t.is_punct("]") || t.is_punct("}") || t.is_punct(">") {
            depth -= 1;
        } else if depth == 0 && t.is_punct(sep) {
            parts.push(&toks[start..k]);
            start = k + 1;
        }
    }
    if start < toks.len() {
        parts.push(&toks[start..]);
    }
    parts
}

/// Index of the token closing the group opened at `open` (or the last index when unclosed).
pub(crate) fn matching(toks: &[Token], open: usize, left: &str, right: &str) -> usize {
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().skip(open) {
        if t.is_punct(left) {
            depth += 1;
        } else if t.is_punct(right) {
            depth -= 1;
            if depth == 0 {
                return k;
            }
        }
    }
    toks.len().saturating_sub(1).max(open)
}

/// Tokens as text, for messages.
pub(crate) fn text_of(toks: &[Token]) -> String {
    toks.iter().map(Token::text).collect::<Vec<_>>().join(" ")
}
