//! The functions of PTX text: each `.entry` and `.func` with its parameter list, performance
//! directives and body, and what a body holds that the records need (PDL instructions, calls,
//! the first `.loc`), which `ptx.rs` turns into records.

use super::wait_first;

/// One `.entry` or `.func` of the PTX.
pub(super) struct Function {
    pub(super) entry: bool,
    pub(super) visible: bool,
    pub(super) name: String,
    /// The text inside the parameter list's parentheses.
    pub(super) params: String,
    /// Performance directives between the parameter list and the body: name to numbers.
    directives: Vec<(String, Vec<u32>)>,
    /// `None` for a declaration (`.extern .func f(...);`).
    pub(super) body: Option<Body>,
}

impl Function {
    pub(super) fn directive(&self, name: &str) -> Option<Vec<u32>> {
        self.directives.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
    }
}

/// What a function body contains that the records need.
pub(super) struct Body {
    pub(super) pdl_wait: bool,
    pub(super) pdl_trigger: bool,
    /// An unguarded `griddepcontrol.wait` comes first ([`wait_first`]).
    pub(super) wait_first: bool,
    /// Callees in first-call order, each once; `None` for an indirect call.
    pub(super) calls: Vec<Option<String>>,
    /// The first `.loc` that is not `inlined_at`: (file number, line).
    pub(super) first_loc: Option<(u32, u32)>,
    /// The body's statements without `.loc` lines, to look names up in.
    code: String,
}

impl Body {
    /// Whether the body names `symbol` as a whole word (an operand such as `smem`, `[smem+4]`).
    pub(super) fn names(&self, symbol: &str) -> bool {
        let ident = |c: char| c.is_ascii_alphanumeric() || "_$".contains(c);
        self.code.match_indices(symbol).any(|(i, _)| {
            let before = self.code[..i].chars().next_back();
            let after = self.code[i + symbol.len()..].chars().next();
            !before.is_some_and(ident) && !after.is_some_and(ident)
        })
    }
}

/// Every `.entry` and `.func` at the top level of comment-free `text`, in order.
pub(super) fn functions(text: &str) -> Vec<Function> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut in_string = false;
    // Where the current top-level statement began (after the last `;` or `}` at depth 0).
    let mut statement_start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if in_string {
            if c == b'\\' {
                i += 1;
            } else if c == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match c {
            b'"' => in_string = true,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    statement_start = i + 1;
                }
            }
            b';' if depth == 0 => statement_start = i + 1,
            b'.' if depth == 0 && (i == 0 || bytes[i - 1].is_ascii_whitespace()) => {
                let word = word_at(text, i);
                if word == ".entry" || word == ".func" {
                    let prefix = &text[statement_start..i];
                    if let Some((f, end)) = function_at(text, i + word.len(), word == ".entry", prefix) {
                        out.push(f);
                        i = end;
                        statement_start = end;
                        continue;
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The directive-like word at `i` (`.entry`, `.maxntid`): up to whitespace or punctuation.
fn word_at(text: &str, i: usize) -> &str {
    let rest = &text[i..];
    let end = rest[1..].find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

/// Parses a function whose `.entry`/`.func` keyword ends at `i`; returns it and the index after
/// it (after the body's `}` or the declaration's `;`).
fn function_at(text: &str, mut i: usize, entry: bool, prefix: &str) -> Option<(Function, usize)> {
    let skip_ws = |i: usize| i + text[i..].len() - text[i..].trim_start().len();
    i = skip_ws(i);
    if !entry && text[i..].starts_with('(') {
        i = skip_ws(matching(text, i, b'(', b')')? + 1); // the return parameter list
    }
    let name_len = text[i..].find(|c: char| !(c.is_ascii_alphanumeric() || "_$".contains(c)))?;
    let name = text[i..i + name_len].to_string();
    if name.is_empty() {
        return None;
    }
    i = skip_ws(i + name_len);
    let mut params = String::new();
    if text[i..].starts_with('(') {
        let close = matching(text, i, b'(', b')')?;
        params = text[i + 1..close].to_string();
        i = close + 1;
    }
    let header_end = i + text[i..].find(['{', ';'])?;
    let directives = directives(&text[i..header_end]);
    let (body, end) = if text.as_bytes()[header_end] == b'{' {
        let close = matching(text, header_end, b'{', b'}')?;
        (Some(body(&text[header_end + 1..close])), close + 1)
    } else {
        (None, header_end + 1)
    };
    let visible = prefix.split_whitespace().any(|w| w == ".visible");
    Some((Function { entry, visible, name, params, directives, body }, end))
}

/// The index of the bracket closing the one at `open`.
fn matching(text: &str, open: usize, left: u8, right: u8) -> Option<usize> {
    let mut depth = 0usize;
    for (j, &b) in text.as_bytes().iter().enumerate().skip(open) {
        if b == left {
            depth += 1;
        } else if b == right {
            depth -= 1;
            if depth == 0 {
                return Some(j);
            }
        }
    }
    None
}

/// `.maxntid 128, 1, 1` `.minnctapersm 2` ... : each directive with its numbers.
fn directives(header: &str) -> Vec<(String, Vec<u32>)> {
    let mut out: Vec<(String, Vec<u32>)> = Vec::new();
    for word in header.split(|c: char| c.is_whitespace() || c == ',').filter(|w| !w.is_empty()) {
        if let Some(name) = word.strip_prefix('.') {
            out.push((name.to_string(), Vec::new()));
        } else if let (Some(last), Ok(n)) = (out.last_mut(), word.parse()) {
            last.1.push(n);
        }
    }
    out
}

/// Scans a function body (between its braces) for PDL instructions, calls and its first `.loc`.
fn body(text: &str) -> Body {
    let mut first_loc = None;
    let mut code = String::with_capacity(text.len());
    for line in text.lines() {
        // `.loc` (a newline-terminated directive) carries no `;`. ptxas assembles whatever
        // follows its operands on the same line, so that stays code.
        if let Some(rest) = line.trim_start().strip_prefix(".loc") {
            let (operands, after) = rest.split_at(loc_operands_len(rest));
            if first_loc.is_none() && !operands.contains("inlined_at") {
                let mut nums = operands.split(|c: char| c.is_whitespace() || c == ',').filter(|w| !w.is_empty());
                if let (Some(Ok(file)), Some(Ok(line))) = (nums.next().map(str::parse), nums.next().map(str::parse)) {
                    first_loc = Some((file, line));
                }
            }
            if !after.trim().is_empty() {
                code.push_str(after);
                code.push('\n');
            }
            continue;
        }
        code.push_str(line);
        code.push('\n');
    }
    let wait_first = wait_first::waits_first(&code);
    let mut b =
        Body { pdl_wait: false, pdl_trigger: false, wait_first, calls: Vec::new(), first_loc, code: String::new() };
    for statement in code.split(';') {
        let (opcode, operands) = instruction(statement);
        match opcode {
            "griddepcontrol.wait" => b.pdl_wait = true,
            "griddepcontrol.launch_dependents" => b.pdl_trigger = true,
            op if op == "call" || op.starts_with("call.") => {
                let callee = callee(operands);
                if !b.calls.contains(&callee) {
                    b.calls.push(callee);
                }
            }
            _ => {}
        }
    }
    b.code = code;
    b
}

/// The length of a `.loc` directive's operands at the start of `rest` (what follows `.loc`):
/// `file line column`, then `, function_name label[+n]` and `, inlined_at file line column`
/// as they come. Whatever is left on the line is not part of the directive.
fn loc_operands_len(rest: &str) -> usize {
    let word_end = |s: &str, i: usize, part: fn(char) -> bool| {
        let t = &s[i..];
        let start = i + (t.len() - t.trim_start().len());
        start + s[start..].find(|c: char| !part(c)).unwrap_or(s.len() - start)
    };
    let digits = |c: char| c.is_ascii_digit();
    let mut i = 0;
    for _ in 0..3 {
        i = word_end(rest, i, digits);
    }
    loop {
        let t = rest[i..].trim_start();
        let Some(t) = t.strip_prefix(',') else { return i };
        let at = rest.len() - t.len();
        let key_end = word_end(rest, at, |c| c.is_ascii_alphabetic() || c == '_');
        match rest[at..key_end].trim() {
            "function_name" => {
                i = word_end(rest, key_end, |c| c.is_ascii_alphanumeric() || "_$.".contains(c));
                let t = rest[i..].trim_start();
                if let Some(t) = t.strip_prefix('+') {
                    i = word_end(rest, rest.len() - t.len(), digits);
                }
            }
            "inlined_at" => {
                i = key_end;
                for _ in 0..3 {
                    i = word_end(rest, i, digits);
                }
            }
            _ => return i,
        }
    }
}

/// The opcode of one `;`-terminated statement and the rest: scope braces, labels (`L:`) and a
/// guard predicate (`@%p1`, `@!%p1`) before it are skipped.
fn instruction(statement: &str) -> (&str, &str) {
    let mut s = statement;
    loop {
        let t = s.trim_start().trim_start_matches(['{', '}']).trim_start();
        let label_end = t.find(|c: char| !(c.is_ascii_alphanumeric() || "_$%".contains(c))).unwrap_or(t.len());
        let after_label = t[label_end..].trim_start();
        let t = if label_end > 0 && after_label.starts_with(':') { &after_label[1..] } else { t };
        // `@%p1`, `@!%p1`, and ptxas also takes `@ %p1` and `@ !%p1`.
        let t = match t.strip_prefix('@') {
            Some(guard) => {
                let guard = guard.trim_start();
                let guard = guard.strip_prefix('!').unwrap_or(guard).trim_start();
                guard.trim_start_matches(|c: char| !c.is_whitespace())
            }
            None => t,
        };
        if t.len() == s.len() {
            break;
        }
        s = t;
    }
    let s = s.trim_start();
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    (&s[..end], &s[end..])
}

/// The callee of a `call` instruction's operands: `[(ret), ] callee, (args)[, prototype]`.
fn callee(operands: &str) -> Option<String> {
    let mut s = operands.trim_start();
    if s.starts_with('(') {
        let close = matching(s, 0, b'(', b')')?;
        s = s[close + 1..].trim_start().strip_prefix(',')?.trim_start();
    }
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || "_$".contains(c))).unwrap_or(s.len());
    let name = &s[..end];
    (!name.is_empty() && !name.starts_with('%')).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loc_directive_ends_after_its_operands() {
        let rest = |line: &str| {
            let r = line.strip_prefix(".loc").unwrap();
            r[loc_operands_len(r)..].trim().to_string()
        };
        assert_eq!(rest(".loc 1 41 0"), "");
        assert_eq!(rest(".loc\t3 77 5, function_name $L__info_string0, inlined_at 1 40 0"), "");
        assert_eq!(rest(".loc 2 9 3, function_name $L__info_string1+12, inlined_at 1 4 0"), "");
        assert_eq!(rest(".loc 1 1 1 st.global.f32 [%rd1], %f1;"), "st.global.f32 [%rd1], %f1;");
        assert_eq!(rest(".loc 1 2 3, inlined_at 1 1 1 ld.global.u32 %r1, [%rd2];"), "ld.global.u32 %r1, [%rd2];");
    }
}
