//! Reads kernel signatures from `.cu` text, without a preprocessor or a compiler.
//!
//! Finds `extern "C" __global__ void NAME(...)` across line breaks and comments, inside
//! `extern "C" { ... }` blocks and namespaces, with `__launch_bounds__(...)` and similar
//! between tokens, and parses each parameter into base type, pointer-ness and constness
//! (`const float*` and `float const*` alike; `__restrict__` ignored). Anything it cannot
//! read for certain, such as a macro in the parameter list, is reported rather than guessed.

use super::lex::{lex, Tok, Token};
use super::structs::resolve;
use super::types::{is_type_word, matching, word_type, TypeEnv};
use crate::syntax::text::signature;

/// A kernel's signature as written in the `.cu`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CuKernel {
    /// The `extern "C"` symbol.
    pub name: String,
    /// Line of the name (1-based).
    pub line: usize,
    /// Parameters in order.
    pub params: Vec<CuParam>,
    /// Its `__launch_bounds__(N, ...)`, when it has one with a number kgraph can read.
    pub launch_bounds: Option<LaunchBounds>,
}

/// A kernel's `__launch_bounds__(max_threads, ...)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchBounds {
    /// The most threads per block the kernel is compiled for.
    pub max_threads: u32,
    /// The line of `__launch_bounds__` (1-based).
    pub line: usize,
}

/// One kernel parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CuParam {
    /// The parameter's name (`None` when unnamed, as in a prototype).
    pub name: Option<String>,
    /// Its type.
    pub ty: CuType,
    /// Line it is on (1-based).
    pub line: usize,
}

/// A parameter type: base type, pointer depth, and whether the pointee is `const`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CuType {
    /// The base type.
    pub base: CuBase,
    /// The base type as spelled (`unsigned int`, `uint32_t`, `float2`).
    pub spelled: String,
    /// Number of `*` (0 for a value).
    pub pointers: u8,
    /// `const T*` / `T const*` (for values: `const T`).
    pub is_const: bool,
}

pub use super::types::CuBase;

/// Why a kernel's signature could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CuError {
    /// No `__global__` function of that name.
    NotFound {
        /// The kernel asked for.
        name: String,
        /// The `extern "C"` kernels the file does have.
        kernels: Vec<String>,
        /// A non-kernel function of that name (`__device__` or host), with its line.
        non_kernel: Option<usize>,
    },
    /// A `__global__` function of that name exists but is not `extern "C"` (C++-mangled).
    NotExternC {
        /// The kernel.
        name: String,
        /// Line of its name.
        line: usize,
    },
    /// Several C++ functions of that name fit what nvcc compiled (overloads the reader cannot
    /// tell apart).
    Ambiguous {
        /// The kernel.
        name: String,
        /// The lines of the candidates.
        lines: Vec<usize>,
    },
    /// A parameter uses something that cannot be read without the preprocessor.
    Unverifiable {
        /// The kernel.
        name: String,
        /// Line of the offending token.
        line: usize,
        /// 0-based parameter index.
        param: usize,
        /// The token that could not be understood.
        token: String,
    },
}

impl std::fmt::Display for CuType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_const {
            f.write_str("const ")?;
        }
        f.write_str(&self.spelled)?;
        for _ in 0..self.pointers {
            f.write_str("*")?;
        }
        Ok(())
    }
}

impl std::fmt::Display for CuParam {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.name {
            Some(name) => write!(f, "{} {name}", self.ty),
            None => write!(f, "{}", self.ty),
        }
    }
}

impl CuKernel {
    /// `name(const float* x, int n)`, as a reminder in messages.
    pub fn signature(&self) -> String {
        signature(&self.name, &self.params)
    }
}

/// A function declarator found at file or namespace scope.
#[derive(Debug)]
struct FnDecl<'t> {
    name: &'t str,
    line: usize,
    global: bool,
    extern_c: bool,
    params: &'t [Token],
    launch_bounds: Option<LaunchBounds>,
    specs: &'t [Token],
    defined: bool,
}

/// Finds kernel `name` in `.cu` text and reads its parameters.
pub fn find_kernel(src: &str, name: &str) -> Result<CuKernel, CuError> {
    let toks = lex(src);
    find_kernel_with(&toks, &TypeEnv::new(src, &toks), name)
}

/// [`find_kernel`] over tokens already lexed (and possibly rewritten: the preprocessed reader's),
/// with the types those tokens define (a preprocessed source has no `#define`s left).
pub(crate) fn find_kernel_in(toks: &[Token], name: &str) -> Result<CuKernel, CuError> {
    find_kernel_with(toks, &TypeEnv::new("", toks), name)
}

fn find_kernel_with(toks: &[Token], env: &TypeEnv<'_>, name: &str) -> Result<CuKernel, CuError> {
    let decls = scan(toks);
    let globals = || decls.iter().filter(|d| d.global && d.name == name);
    // The definition's parameter names are the ones that count (a prototype may leave them out).
    let extern_c = || globals().filter(|d| d.extern_c);
    let Some(decl) = extern_c().find(|d| d.defined).or_else(|| extern_c().next()).or_else(|| globals().next()) else {
        let kernels = extern_c_kernels(&decls);
        let non_kernel = decls.iter().find(|d| d.name == name).map(|d| d.line);
        return Err(CuError::NotFound { name: name.to_string(), kernels, non_kernel });
    };
    if !decl.extern_c {
        return Err(CuError::NotExternC { name: name.to_string(), line: decl.line });
    }
    let params = read_params(name, decl.line, decl.params, env)?;
    // `__launch_bounds__` may stand on the prototype only.
    let launch_bounds = decl.launch_bounds.or_else(|| extern_c().find_map(|d| d.launch_bounds));
    Ok(CuKernel { name: name.to_string(), line: decl.line, params, launch_bounds })
}

/// Reads a parameter list (the tokens between the parentheses) of kernel `name` declared at
/// `line`, with the file's types `env`.
pub(crate) fn read_params(name: &str, line: usize, toks: &[Token], env: &TypeEnv<'_>) -> Result<Vec<CuParam>, CuError> {
    parse_params(toks, env).map_err(|(param, bad)| CuError::Unverifiable {
        name: name.to_string(),
        line: bad.map_or(line, |t| t.line),
        param,
        token: bad.map_or_else(|| ",".to_string(), Token::text),
    })
}

/// Names of every `extern "C" __global__` kernel in `.cu` text, in order.
pub fn kernel_names(src: &str) -> Vec<String> {
    kernel_names_in(&lex(src))
}

/// [`kernel_names`] over tokens.
pub(crate) fn kernel_names_in(toks: &[Token]) -> Vec<String> {
    extern_c_kernels(&scan(toks))
}

/// Every C++-linkage (not `extern "C"`) `__global__` function of `.cu` text, each name once
/// with the line of its first declarator, in order: what `kgraph declare` names when the
/// build's record, which lists their instantiations, is missing.
pub fn cpp_kernel_names(src: &str) -> Vec<(String, usize)> {
    global_kernel_names(src).into_iter().filter(|(_, _, extern_c)| !extern_c).map(|(n, l, _)| (n, l)).collect()
}

/// Every `__global__` function of `.cu` text, each name once with the line of its first
/// declarator and whether it is `extern "C"`, in order.
pub fn global_kernel_names(src: &str) -> Vec<(String, usize, bool)> {
    let toks = lex(src);
    let mut names: Vec<(String, usize, bool)> = Vec::new();
    for d in scan(&toks).iter().filter(|d| d.global) {
        if !names.iter().any(|(n, _, _)| n == d.name) {
            names.push((d.name.to_string(), d.line, d.extern_c));
        }
    }
    names
}

/// A `__global__` function declarator of any linkage, for the C++ reader.
#[derive(Debug)]
pub(crate) struct GlobalDecl<'t> {
    /// Line of the name.
    pub line: usize,
    /// Declared `extern "C"`.
    pub extern_c: bool,
    /// The tokens before the name since the last `;`/`{`/`}` (`template <...>`, specifiers).
    pub specs: &'t [Token],
    /// The tokens between the parentheses.
    pub params: &'t [Token],
    /// Its launch bounds.
    pub launch_bounds: Option<LaunchBounds>,
    /// A definition (a body follows), not only a declaration.
    pub defined: bool,
}

/// Every `__global__` declarator named `name`, in order.
pub(crate) fn global_decls<'t>(toks: &'t [Token], name: &str) -> Vec<GlobalDecl<'t>> {
    scan(toks)
        .into_iter()
        .filter(|d| d.global && d.name == name)
        .map(|d| GlobalDecl {
            line: d.line,
            extern_c: d.extern_c,
            specs: d.specs,
            params: d.params,
            launch_bounds: d.launch_bounds,
            defined: d.defined,
        })
        .collect()
}

/// The `extern "C" __global__` kernels among `decls`, each once, in order.
fn extern_c_kernels(decls: &[FnDecl<'_>]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for d in decls.iter().filter(|d| d.global && d.extern_c) {
        if !names.iter().any(|n| n == d.name) {
            names.push(d.name.to_string());
        }
    }
    names
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    ExternC,
    Namespace,
}

/// Walks file scope (descending into `extern "C" {}` and namespaces, skipping function bodies
/// and other braces) and records every `name(...)` declarator with its specifiers.
fn scan(toks: &[Token]) -> Vec<FnDecl<'_>> {
    let mut decls = Vec::new();
    let mut blocks: Vec<Block> = Vec::new();
    let mut seg_start = 0;
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        if t.is_punct(";") {
            seg_start = i + 1;
        } else if t.is_punct("}") {
            blocks.pop();
            seg_start = i + 1;
        } else if t.is_punct("{") {
            let seg = &toks[seg_start..i];
            let block = if seg.len() == 2 && is_extern_c(seg, 0) {
                Some(Block::ExternC)
            } else if seg.iter().any(|t| t.ident() == Some("namespace")) {
                Some(Block::Namespace)
            } else {
                None
            };
            match block {
                Some(b) => blocks.push(b),
                None => i = matching(toks, i, "{", "}"),
            }
            seg_start = i + 1;
        } else if let (Some(name), true) = (t.ident(), toks.get(i + 1).is_some_and(|n| n.is_punct("("))) {
            let close = matching(toks, i + 1, "(", ")");
            if !is_attribute_like(name) {
                let seg = &toks[seg_start..i];
                decls.push(FnDecl {
                    name,
                    line: t.line,
                    global: seg.iter().any(|t| t.ident() == Some("__global__")),
                    extern_c: blocks.contains(&Block::ExternC) || (0..seg.len()).any(|k| is_extern_c(seg, k)),
                    params: &toks[(i + 2).min(close)..close],
                    launch_bounds: launch_bounds(seg),
                    specs: seg,
                    defined: toks[close + 1..]
                        .iter()
                        .find(|t| !is_trailing_specifier(t))
                        .is_some_and(|t| t.is_punct("{")),
                });
            }
            i = close;
        }
        i += 1;
    }
    decls
}

/// What may stand between a declarator's `)` and its body: `const`, attributes' words.
fn is_trailing_specifier(t: &Token) -> bool {
    !t.is_punct("{") && !t.is_punct(";") && !t.is_punct("}")
}

/// `__launch_bounds__(N` among a declarator's specifiers, when `N` is an integer literal (a
/// macro or expression is not guessed at: `None`).
fn launch_bounds(seg: &[Token]) -> Option<LaunchBounds> {
    let k = seg.iter().position(|t| t.ident() == Some("__launch_bounds__"))?;
    if !seg.get(k + 1)?.is_punct("(") || !seg.get(k + 3).is_some_and(|t| t.is_punct(")") || t.is_punct(",")) {
        return None;
    }
    let Tok::Literal(text) = &seg.get(k + 2)?.tok else { return None };
    let digits = text.trim_end_matches(['u', 'U', 'l', 'L']);
    let max_threads = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
        None => digits.parse().ok()?,
    };
    Some(LaunchBounds { max_threads, line: seg[k].line })
}

fn is_extern_c(seg: &[Token], k: usize) -> bool {
    seg[k].ident() == Some("extern") && matches!(seg.get(k + 1).map(|t| &t.tok), Some(Tok::Str(s)) if s == "C")
}

/// `__launch_bounds__(...)`, `__attribute__((...))`, `alignas(...)`: skipped like whitespace.
fn is_attribute_like(name: &str) -> bool {
    (name.len() > 4 && name.starts_with("__") && name.ends_with("__"))
        || matches!(name, "alignas" | "__declspec" | "decltype")
}

/// Splits a parameter list at top-level commas and parses each; on failure returns the
/// parameter index and the token that could not be read.
fn parse_params<'t>(toks: &'t [Token], env: &TypeEnv<'_>) -> Result<Vec<CuParam>, (usize, Option<&'t Token>)> {
    if toks.is_empty() || (toks.len() == 1 && toks[0].ident() == Some("void")) {
        return Ok(Vec::new());
    }
    let mut params = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for k in 0..=toks.len() {
        let at_end = k == toks.len();
        if !at_end {
            let t = &toks[k];
            if t.is_punct("(") || t.is_punct("[") || t.is_punct("<") {
                depth += 1;
            } else if t.is_punct(")") || t.is_punct("]") || t.is_punct(">") {
                depth -= 1;
            }
        }
        if at_end || (depth == 0 && toks[k].is_punct(",")) {
            let index = params.len();
            // A default argument (`int force_reset = 0`) is not part of the type.
            let part = &toks[start..k];
            let part = part.iter().position(|t| t.is_punct("=")).map_or(part, |eq| &part[..eq]);
            let param = parse_param(part, env).map_err(|bad| (index, bad.or(toks.get(k)).or(toks.last())))?;
            params.push(param);
            start = k + 1;
        }
    }
    Ok(params)
}

const QUALIFIERS: [&str; 9] =
    ["volatile", "__restrict__", "__restrict", "restrict", "__grid_constant__", "struct", "register", "class", "enum"];

/// Parses one parameter; `Err(Some(token))` names the token that cannot be read,
/// `Err(None)` means an empty parameter.
fn parse_param<'t>(toks: &'t [Token], env: &TypeEnv<'_>) -> Result<CuParam, Option<&'t Token>> {
    let first = toks.first().ok_or(None)?;
    let mut words: Vec<&str> = Vec::new();
    let mut typename: Option<&Token> = None;
    let mut name: Option<&Token> = None;
    let mut pointers = 0u8;
    let mut is_const = false;
    let mut k = 0;
    while k < toks.len() {
        let t = &toks[k];
        match &t.tok {
            Tok::Ident(w) if w == "const" => is_const |= pointers == 0,
            Tok::Ident(w) if QUALIFIERS.contains(&w.as_str()) => {}
            Tok::Ident(w) if w == "std" && toks.get(k + 1).is_some_and(|n| n.is_punct("::")) => k += 1,
            Tok::Ident(w) if is_attribute_like(w) && toks.get(k + 1).is_some_and(|n| n.is_punct("(")) => {
                k = matching(toks, k + 1, "(", ")");
            }
            // A function-like macro (`ARGS(float)`).
            Tok::Ident(_) if toks.get(k + 1).is_some_and(|n| n.is_punct("(")) => return Err(Some(t)),
            Tok::Ident(w) if is_type_word(w) && typename.is_none() && pointers == 0 && name.is_none() => words.push(w),
            Tok::Ident(_) if typename.is_none() && words.is_empty() && pointers == 0 && name.is_none() => {
                typename = Some(t)
            }
            Tok::Ident(_) if name.is_none() && (typename.is_some() || !words.is_empty()) => name = Some(t),
            // Two names in a row: the first is most likely a macro (`float* RESTRICT x`).
            Tok::Ident(_) => return Err(Some(name.unwrap_or(t))),
            Tok::Punct(p) if p == "::" && k == 0 => {}
            Tok::Punct(p) if p == "*" && name.is_none() => pointers = pointers.saturating_add(1),
            // `float x[]` is `float* x`.
            Tok::Punct(p) if p == "[" && name.is_some() => {
                pointers = pointers.saturating_add(1);
                k = matching(toks, k, "[", "]");
            }
            // `[[attribute]]` before the type.
            Tok::Punct(p) if p == "[" && toks.get(k + 1).is_some_and(|n| n.is_punct("[")) => {
                k = matching(toks, k, "[", "]");
            }
            _ => return Err(Some(t)),
        }
        k += 1;
    }
    let (base, spelled) = match typename {
        Some(t) => {
            let spelled = t.text();
            let base = resolve(env, &spelled, 0);
            // An unknown name alone is most likely a macro standing for parameters.
            if base == CuBase::Unknown && name.is_none() {
                return Err(Some(t));
            }
            (base, spelled)
        }
        None if !words.is_empty() => (word_type(&words).ok_or(Some(first))?, words.join(" ")),
        None => return Err(Some(first)),
    };
    Ok(CuParam {
        name: name.and_then(|t| t.ident()).map(str::to_string),
        ty: CuType { base, spelled, pointers, is_const },
        line: name.unwrap_or(first).line,
    })
}
