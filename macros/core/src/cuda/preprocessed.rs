//! Reading kernels from the preprocessed source `<stem>.i` that nvcc's device compile read
//! (kept by `kgraph-build`), so macros, `#if`/`#ifdef`, line continuations and included
//! headers are resolved exactly as nvcc resolved them, and mapping every position back to the
//! original file and line through the `.i`'s line markers.
//!
//! Only lines that come from the kernel's own files are read: the `.cu` itself and headers in
//! its kernel folders (`local`); CUDA's and the system's headers, which make up most of an `.i`,
//! are blanked before lexing. The preprocessor's spellings of CUDA's keywords are turned back
//! into theirs (`__attribute__((global))` is `__global__`, `__attribute__((launch_bounds(128)))`
//! is `__launch_bounds__(128)`), and simple typedefs of the kernel's files (`typedef float real;`,
//! `using real = float;`) are replaced by the type they name, so the signature reader
//! ([`super::signature`]) sees what nvcc saw.

use kgraph_record::LineMap;

use super::lex::{lex, Tok, Token};
use super::signature::{CuError, CuKernel};
use super::types::{builtin, matching, CFieldType, CStruct, CuBase};

/// A preprocessed source, lexed: the local tokens (their `line` is the `.i` line) and the map
/// back to original files.
pub struct Preprocessed {
    /// The tokens of local lines, rewritten as described in the module docs.
    pub toks: Vec<Token>,
    map: LineMap,
}

/// Where a token came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The file as the line marker names it.
    pub file: String,
    /// 1-based line in it.
    pub line: usize,
}

impl Preprocessed {
    /// Lexes the lines of `text` whose line marker names a file `local` accepts.
    pub fn new(text: &str, local: impl Fn(&str) -> bool) -> Preprocessed {
        let map = LineMap::new(text);
        let keep: Vec<bool> = map.files.iter().map(|f| local(f)).collect();
        let mut kept = String::with_capacity(text.len() / 8);
        for (i, line) in text.lines().enumerate() {
            if map.lines.get(i).copied().flatten().is_some_and(|(file, _)| keep[file]) {
                kept.push_str(line);
            }
            kept.push('\n');
        }
        let toks = resolve_typedefs(rewrite_attributes(lex(&kept)));
        Preprocessed { toks, map }
    }

    /// The original file and line of `.i` line `line`.
    pub fn origin(&self, line: usize) -> Option<Origin> {
        self.map.get(line).map(|(file, at)| Origin { file: file.to_string(), line: at as usize })
    }

    /// `line` mapped to its original line (unchanged when the `.i` has no marker for it).
    pub fn line(&self, line: usize) -> usize {
        self.origin(line).map_or(line, |o| o.line)
    }

    /// A kernel read from the `.i`, its lines mapped back to the original file.
    pub fn map_kernel(&self, mut k: CuKernel) -> CuKernel {
        k.line = self.line(k.line);
        for p in &mut k.params {
            p.line = self.line(p.line);
            match &mut p.ty.base {
                CuBase::Struct(st) => self.map_struct(st),
                CuBase::Unreadable(why) => *why = self.map_line_mentions(why),
                _ => {}
            }
        }
        if let Some(b) = k.launch_bounds.as_mut() {
            b.line = self.line(b.line);
        }
        k
    }

    /// A struct parameter's definition and field lines (nested structs too), mapped back.
    fn map_struct(&self, st: &mut CStruct) {
        st.line = self.line(st.line);
        for f in &mut st.fields {
            f.line = self.line(f.line);
            if let CFieldType::Struct(inner) = &mut f.ty {
                self.map_struct(inner);
            }
        }
    }

    /// `why` with each `(line N)` the type reader wrote (a line of the preprocessed text) mapped
    /// back to the original file's line.
    fn map_line_mentions(&self, why: &str) -> String {
        let mut out = String::with_capacity(why.len());
        let mut rest = why;
        while let Some(at) = rest.find("line ") {
            let (head, tail) = rest.split_at(at + "line ".len());
            out.push_str(head);
            let digits = tail.chars().take_while(char::is_ascii_digit).count();
            if let Ok(n) = tail[..digits].parse::<usize>() {
                out.push_str(&self.line(n).to_string());
            }
            rest = &tail[digits..];
        }
        out.push_str(rest);
        out
    }

    /// An error of the reader, its lines mapped back to the original file.
    pub fn map_error(&self, err: CuError) -> CuError {
        match err {
            CuError::NotFound { name, kernels, non_kernel } => {
                CuError::NotFound { name, kernels, non_kernel: non_kernel.map(|l| self.line(l)) }
            }
            CuError::NotExternC { name, line } => CuError::NotExternC { name, line: self.line(line) },
            CuError::Ambiguous { name, lines } => {
                CuError::Ambiguous { name, lines: lines.into_iter().map(|l| self.line(l)).collect() }
            }
            CuError::Unverifiable { name, line, param, token } => {
                CuError::Unverifiable { name, line: self.line(line), param, token }
            }
        }
    }
}

fn ident(text: &str, line: usize) -> Token {
    Token { tok: Tok::Ident(text.to_string()), line }
}

/// `__attribute__((global))` → `__global__`, `((device))` → `__device__`, `((host))` →
/// `__host__`, `((grid_constant))` → `__grid_constant__`, `((launch_bounds(args)))` →
/// `__launch_bounds__(args)`, `((aligned(n)))` → `__align__(n)` (what the struct reader knows);
/// other attributes stay.
fn rewrite_attributes(toks: Vec<Token>) -> Vec<Token> {
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        let is_attr = t.ident() == Some("__attribute__")
            && toks.get(i + 1).is_some_and(|t| t.is_punct("("))
            && toks.get(i + 2).is_some_and(|t| t.is_punct("("));
        if is_attr {
            let word = toks.get(i + 3).and_then(Token::ident);
            let simple =
                toks.get(i + 4).is_some_and(|t| t.is_punct(")")) && toks.get(i + 5).is_some_and(|t| t.is_punct(")"));
            match word {
                Some(w @ ("global" | "device" | "host" | "grid_constant")) if simple => {
                    out.push(ident(&format!("__{w}__"), t.line));
                    i += 6;
                    continue;
                }
                Some(w @ ("launch_bounds" | "aligned")) if toks.get(i + 4).is_some_and(|t| t.is_punct("(")) => {
                    // `__attribute__ ( ( launch_bounds ( args ) ) )`
                    let k = matching(&toks, i + 4, "(", ")");
                    out.push(ident(if w == "aligned" { "__align__" } else { "__launch_bounds__" }, t.line));
                    out.extend(toks[i + 4..=k.min(toks.len() - 1)].iter().cloned());
                    i = k + 3; // past `)` of the args and the attribute's `) )`
                    continue;
                }
                _ => {}
            }
        }
        out.push(t.clone());
        i += 1;
    }
    out
}

/// Replaces each use of a simple local typedef (`typedef <words> NAME;` or `using NAME =
/// <words>;`, no pointer, no array, no function type) by the words it stands for, at the
/// use's line. A typedef of a pointer is left alone (`const fptr` is not `const float*`), as
/// are typedefs of other typedefs the reader does not know: the signature reader then says it
/// cannot verify the type.
fn resolve_typedefs(toks: Vec<Token>) -> Vec<Token> {
    let mut defs: Vec<(String, Vec<Tok>)> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let (start, is_using) = match toks[i].ident() {
            Some("typedef") => (i + 1, false),
            Some("using") if toks.get(i + 2).is_some_and(|t| t.is_punct("=")) => (i + 3, true),
            _ => {
                i += 1;
                continue;
            }
        };
        let Some(end) = toks[start..].iter().position(|t| t.is_punct(";")).map(|k| start + k) else { break };
        let body = &toks[start..end];
        let words_only = |ts: &[Token]| ts.iter().all(|t| t.ident().is_some() || t.is_punct("::"));
        let def = if is_using {
            toks[i + 1].ident().filter(|_| words_only(body)).map(|n| (n.to_string(), body))
        } else {
            match body.split_last() {
                Some((name, ty)) if !ty.is_empty() && words_only(ty) => name.ident().map(|n| (n.to_string(), ty)),
                _ => None,
            }
        };
        // A built-in name (`cudaTextureObject_t`, `float4`) stays as spelled: kgraph knows it, and
        // some rules need the name itself (a texture object is a raw handle, not any `u64`).
        if let Some((name, ty)) = def.filter(|(name, _)| builtin(name).is_none()) {
            // A typedef of an earlier typedef resolves through it.
            let expanded: Vec<Tok> = ty
                .iter()
                .flat_map(|t| match defs.iter().find(|(n, _)| Some(n.as_str()) == t.ident()) {
                    Some((_, inner)) => inner.clone(),
                    None => vec![t.tok.clone()],
                })
                .collect();
            let is_self = expanded.len() == 1 && matches!(&expanded[0], Tok::Ident(w) if *w == name);
            if !is_self {
                defs.retain(|(n, _)| *n != name);
                defs.push((name, expanded));
            }
        }
        i = end + 1;
    }
    if defs.is_empty() {
        return toks;
    }
    let mut out = Vec::with_capacity(toks.len());
    let mut in_def = false;
    for t in toks {
        // The typedef declarations themselves are left as written.
        if matches!(t.ident(), Some("typedef" | "using")) {
            in_def = true;
        } else if t.is_punct(";") {
            in_def = false;
        }
        match defs.iter().find(|(n, _)| Some(n.as_str()) == t.ident()) {
            Some((_, words)) if !in_def => {
                out.extend(words.iter().map(|w| Token { tok: w.clone(), line: t.line }));
            }
            _ => out.push(t),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::signature::find_kernel_in;

    const I: &str = "# 1 \"/k/a.cu\"\n# 1 \"/usr/include/sys.h\" 1\nextern \"C\" __attribute__((global)) void sys(int x) {}\n# 3 \"/k/a.cu\" 2\ntypedef float real;\nextern \"C\" __attribute__((global)) void __attribute__((launch_bounds(128)))\nk(const real* x,\n real a, int n) {}\n";

    #[test]
    fn reads_local_kernels_with_original_lines() {
        let pre = Preprocessed::new(I, |f| f.starts_with("/k/"));
        let k = pre.map_kernel(find_kernel_in(&pre.toks, "k").unwrap());
        assert_eq!(k.signature(), "k(const float* x, float a, int n)");
        assert_eq!((k.line, k.params[2].line), (5, 6));
        assert_eq!(k.launch_bounds.map(|b| (b.max_threads, b.line)), Some((128, 4)));
        assert!(find_kernel_in(&pre.toks, "sys").is_err(), "system headers are not read");
    }

    #[test]
    fn a_pragma_pack_in_the_preprocessed_source_refuses_its_structs() {
        // nvcc's `.i` keeps `#pragma pack` lines; the reader is given its tokens only, so the
        // lexer must leave a trace of the pragma or the struct is laid out unpacked (8 bytes
        // where nvcc compiled 5).
        let i = "# 1 \"/k/a.cu\"\n#pragma pack(push, 1)\nstruct P { char c; float f; };\n#pragma pack(pop)\n\
                 extern \"C\" __attribute__((global)) void k(P p) {}\n";
        let pre = Preprocessed::new(i, |f| f.starts_with("/k/"));
        let k = find_kernel_in(&pre.toks, "k").unwrap();
        match &k.params[0].ty.base {
            crate::cuda::types::CuBase::Unreadable(why) => assert!(why.contains("#pragma pack"), "{why}"),
            other => panic!("a packed struct was read as {other:?}"),
        }
    }
}
