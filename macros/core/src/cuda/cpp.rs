//! C++-linkage kernels in the source: a plain C++ `__global__` function, or the primary
//! template of an instantiation, read with its template parameters replaced by the
//! instantiation's arguments (`template <typename T, int TILE> __global__ void gemm(const T*
//! a, ...)` read for `gemm<float, 128>` is `gemm(const float* a, ...)`), so the declaration is
//! checked against the types nvcc compiled.

use super::lex::{lex, Tok, Token};
use super::signature::{global_decls, read_params, CuError, CuKernel, GlobalDecl};
use super::types::TypeEnv;

/// What to read: the function's unqualified name, its template arguments (for an
/// instantiation), how it is shown in messages, and the parameter count nvcc compiled (to tell
/// overloads apart).
#[derive(Debug, Clone)]
pub struct CppKernel<'a> {
    /// `gemm` (namespaces dropped: the reader matches names in any namespace).
    pub base_name: &'a str,
    /// `["float", "128"]`, or `None` for a function that is not a template.
    pub template_args: Option<&'a [String]>,
    /// `gemm<float, 128>`.
    pub display: &'a str,
    /// The parameter count of the compiled entry.
    pub arity: usize,
    /// The entry's mangled symbol, which tells overloads of the same arity apart.
    pub mangled: &'a str,
}

/// The template parameter names of a declarator whose specifiers start a template
/// (`template <typename T, int TILE = 4>` → `T`, `TILE`; a function pointer `T (*F)(const T&)`
/// → `F`), or `None` for a non-template (an explicit instantiation `template __global__ void
/// f<...>(...)` is not a primary template).
fn template_params(specs: &[Token]) -> Option<Vec<String>> {
    let k = specs.iter().position(|t| t.ident() == Some("template"))?;
    specs.get(k + 1).filter(|t| t.is_punct("<"))?;
    let mut names = Vec::new();
    let (mut depth, mut last_ident, mut in_default) = (0i32, None::<String>, false);
    // The declarator name of a function-pointer (or reference) parameter: `(*F)`, `(&F)`.
    let mut declarator = None::<String>;
    let specs = &specs[k + 1..];
    for (j, t) in specs.iter().enumerate() {
        if depth == 2 && declarator.is_none() && j >= 2 && (specs[j - 1].is_punct("*") || specs[j - 1].is_punct("&")) {
            if let (Some(w), true) = (t.ident(), specs[j - 2].is_punct("(")) {
                declarator = Some(w.to_string());
            }
        }
        if t.is_punct("<") || t.is_punct("(") {
            depth += 1;
            continue;
        }
        if t.is_punct(">") || t.is_punct(")") {
            depth -= 1;
            if depth == 0 {
                names.extend(declarator.take().or(last_ident.take()));
                break;
            }
            continue;
        }
        if depth == 1 && t.is_punct(",") {
            names.extend(declarator.take().or(last_ident.take()));
            in_default = false;
        } else if depth == 1 && t.is_punct("=") {
            in_default = true;
        } else if let (1, Some(w), false) = (depth, t.ident(), in_default) {
            last_ident = Some(w.to_string());
        }
    }
    Some(names)
}

/// `toks` with every template parameter replaced by its argument's tokens.
fn substitute(toks: &[Token], params: &[String], args: &[String]) -> Vec<Token> {
    let mut out = Vec::new();
    for t in toks {
        match t.ident().and_then(|w| params.iter().position(|p| p == w)).and_then(|k| args.get(k)) {
            Some(arg) => out.extend(lex(arg).into_iter().map(|a| Token { tok: a.tok, line: t.line })),
            None => out.push(t.clone()),
        }
    }
    out
}

/// The candidates for `want` among the `__global__` declarators of that name: primary
/// templates for an instantiation, non-templates otherwise, never `extern "C"` ones (those
/// have no mangled symbol); definitions before declarations.
fn candidates<'t>(toks: &'t [Token], want: &CppKernel<'_>) -> Vec<(GlobalDecl<'t>, Vec<String>)> {
    let mut found: Vec<(GlobalDecl<'t>, Vec<String>)> = global_decls(toks, want.base_name)
        .into_iter()
        .filter(|d| !d.extern_c)
        .filter_map(|d| {
            let params = template_params(d.specs);
            let explicit_instantiation = params.is_none() && d.specs.iter().any(|t| t.ident() == Some("template"));
            match (params, want.template_args) {
                (Some(p), Some(args)) if p.len() >= args.len() => Some((d, p)),
                (None, None) if !explicit_instantiation => Some((d, Vec::new())),
                _ => None,
            }
        })
        .collect();
    found.sort_by_key(|(d, _)| !d.defined);
    found
}

/// Reads C++ kernel `want` from the tokens of its source.
pub fn find_cpp_kernel(toks: &[Token], want: &CppKernel<'_>) -> Result<CuKernel, CuError> {
    let args: &[String] = want.template_args.unwrap_or(&[]);
    let mut read = Vec::new();
    let mut first_error = None;
    let env = TypeEnv::new("", toks);
    for (decl, params) in candidates(toks, want) {
        let substituted = substitute(decl.params, &params, args);
        match read_params(want.display, decl.line, &substituted, &env) {
            Ok(ps) if ps.len() == want.arity => {
                read.push(CuKernel {
                    name: want.display.to_string(),
                    line: decl.line,
                    params: ps,
                    launch_bounds: decl.launch_bounds,
                });
            }
            Ok(_) => {}
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    // A declaration and its definition read the same: keep distinct signatures only.
    read.dedup_by(|a, b| a.params.iter().map(|p| &p.ty).eq(b.params.iter().map(|p| &p.ty)));
    // Overloads of one arity: the one whose mangled name is the entry's.
    if read.len() > 1 && want.template_args.is_none() {
        read.retain(|k| mangle_plain(want.mangled, want.base_name, &k.params).is_some_and(|m| m == want.mangled));
    }
    match (read.len(), first_error) {
        (1, _) => Ok(read.remove(0)),
        (0, Some(e)) => Err(e),
        (0, None) => Err(CuError::NotFound { name: want.display.to_string(), kernels: Vec::new(), non_kernel: None }),
        (_, _) => Err(CuError::Unverifiable {
            name: want.display.to_string(),
            line: read[1].line,
            param: 0,
            token: format!(
                "an overload of `{}` with {} parameters (lines {} and {})",
                want.base_name, want.arity, read[0].line, read[1].line
            ),
        }),
    }
}

/// The Itanium mangled name of a non-template function named `base` (in the namespaces that
/// `like`, the entry's own symbol, spells) with `params`, or `None` for a parameter type this
/// does not mangle (only kgraph's element types, `const`, pointers and their substitutions).
fn mangle_plain(like: &str, base: &str, params: &[super::signature::CuParam]) -> Option<String> {
    let demangled = crate::compiled::demangle::demangle(like)?;
    let parts: Vec<&str> = demangled.name.split("::").collect();
    if parts.last() != Some(&base) {
        return None;
    }
    let mut subs: Vec<String> = Vec::new();
    let mut out = String::from("_Z");
    if parts.len() == 1 {
        out.push_str(&format!("{}{base}", base.len()));
    } else {
        out.push('N');
        for (k, part) in parts.iter().enumerate() {
            out.push_str(&format!("{}{part}", part.len()));
            if k + 1 < parts.len() {
                subs.push(parts[..=k].join("::"));
            }
        }
        out.push('E');
    }
    if params.is_empty() {
        out.push('v');
    }
    for p in params {
        let code = builtin_code(&p.ty.spelled)?;
        // Bottom-up: the element, `const`, then each pointer level; every composite is a
        // substitution candidate, emitted as `S_`/`S<n>_` when seen before.
        let mut layers = vec![code.to_string()];
        if p.ty.is_const && p.ty.pointers > 0 {
            layers.push(format!("K{}", layers[0]));
        }
        for _ in 0..p.ty.pointers {
            let inner = layers.last()?.clone();
            layers.push(format!("P{inner}"));
        }
        out.push_str(&encode(&layers, &mut subs));
    }
    Some(out)
}

/// The encoding of the outermost of `layers` (each the previous wrapped once), using and
/// extending the substitution candidates.
fn encode(layers: &[String], subs: &mut Vec<String>) -> String {
    let full = layers.last().cloned().unwrap_or_default();
    if layers.len() == 1 {
        return full; // a builtin: never substituted
    }
    if let Some(k) = subs.iter().position(|s| *s == full) {
        return if k == 0 { "S_".to_string() } else { format!("S{}_", to_base36(k - 1)) };
    }
    let inner = encode(&layers[..layers.len() - 1], subs);
    subs.push(full.clone());
    format!("{}{inner}", &full[..1])
}

fn to_base36(mut n: usize) -> String {
    let digits = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut out = Vec::new();
    loop {
        out.push(digits[n % 36]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// The mangling of a C type as spelled (LP64: `long` and `int64_t` are `l`).
fn builtin_code(spelled: &str) -> Option<&'static str> {
    Some(match spelled {
        "float" => "f",
        "double" => "d",
        "signed char" | "int8_t" => "a",
        "unsigned char" | "uint8_t" | "uchar" => "h",
        "short" | "short int" | "signed short" | "int16_t" => "s",
        "unsigned short" | "unsigned short int" | "uint16_t" | "ushort" => "t",
        "int" | "signed" | "signed int" | "int32_t" => "i",
        "unsigned" | "unsigned int" | "uint32_t" | "uint" => "j",
        "long" | "long int" | "signed long" | "int64_t" | "ptrdiff_t" => "l",
        "unsigned long" | "unsigned long int" | "uint64_t" | "size_t" => "m",
        "long long" | "long long int" | "signed long long" | "longlong" => "x",
        "unsigned long long" | "unsigned long long int" | "ulonglong" => "y",
        "bool" => "b",
        "char" => "c",
        "void" => "v",
        _ => return None,
    })
}

/// The explicit instantiation that would compile `base_name<args>` from its primary template
/// in the source, `template __global__ void gemm<float, 128>(const float*, float*, int);`,
/// with the template's line; `None` when the source has no such template.
pub fn instantiation_line(toks: &[Token], base_name: &str, args: &[String]) -> Option<(String, usize)> {
    let decls = global_decls(toks, base_name);
    let (decl, params) = decls.iter().filter(|d| !d.extern_c).find_map(|d| template_params(d.specs).map(|p| (d, p)))?;
    let list = substitute(decl.params, &params, args);
    let text = format!("template __global__ void {base_name}<{}>({});", args.join(", "), tokens_text(&list));
    Some((text, decl.line))
}

/// The primary template kernel named `base_name` in the source: its line, its template
/// parameter list as written (`typename T, int TILE`) and the explicit instantiation that
/// would compile it with its parameters' names standing for the arguments; `None` when no
/// template kernel has that name.
pub fn template_kernel(toks: &[Token], base_name: &str) -> Option<(usize, String, String)> {
    let decls = global_decls(toks, base_name);
    let (decl, params) = decls.iter().filter(|d| !d.extern_c).find_map(|d| template_params(d.specs).map(|p| (d, p)))?;
    let start = decl.specs.iter().position(|t| t.ident() == Some("template"))? + 1;
    let close = super::types::matching(decl.specs, start, "<", ">");
    let list = tokens_text(decl.specs.get(start + 1..close).unwrap_or_default());
    let (line, _) = instantiation_line(toks, base_name, &params)?;
    Some((decl.line, list, line))
}

/// Tokens written back as C: words spaced, `*`/`&` attached to the type, `, ` after commas.
pub fn tokens_text(toks: &[Token]) -> String {
    let mut out = String::new();
    let mut prev_word = false;
    for t in toks {
        let word = matches!(t.tok, Tok::Ident(_) | Tok::Literal(_) | Tok::Str(_));
        if word && prev_word {
            out.push(' ');
        }
        if word && (out.ends_with('*') || out.ends_with('&')) {
            out.push(' ');
        }
        out.push_str(&t.text());
        if t.is_punct(",") {
            out.push(' ');
        }
        prev_word = word;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "template <typename T, int TILE>\n__global__ void gemm(const T* a, T* b, int n) {}\n__global__ void scale(float* x, int n) {}\n__global__ void scale(double* x, long n, int m) {}\ntemplate __global__ void gemm<float, 128>(const float*, float*, int);\n";

    #[test]
    fn templates_read_with_their_arguments() {
        let toks = lex(SRC);
        let args = ["float".to_string(), "128".to_string()];
        let want = CppKernel {
            base_name: "gemm",
            template_args: Some(&args),
            display: "gemm<float, 128>",
            arity: 3,
            mangled: "_Z4gemmIfLi128EEvPKT_PS0_i",
        };
        let k = find_cpp_kernel(&toks, &want).unwrap();
        assert_eq!(k.signature(), "gemm<float, 128>(const float* a, float* b, int n)");
        let want =
            CppKernel { base_name: "scale", template_args: None, display: "scale", arity: 3, mangled: "_Z5scalePdli" };
        assert_eq!(
            find_cpp_kernel(&toks, &want).unwrap().signature(),
            "scale(double* x, long long m, int m)".replace("long long m", "long n")
        );
        let k = |params: &str| {
            let toks = lex(params);
            read_params("f", 1, &toks, &TypeEnv::new(params, &toks)).unwrap()
        };
        assert_eq!(
            mangle_plain("_Z5scalePdli", "scale", &k("double* x, long n, int m")).as_deref(),
            Some("_Z5scalePdli")
        );
        assert_eq!(mangle_plain("_Z1fPfS_", "f", &k("float* a, float* b")).as_deref(), Some("_Z1fPfS_"));
        assert_eq!(
            mangle_plain("_Z1fPKfS0_", "f", &k("const float* a, const float* b")).as_deref(),
            Some("_Z1fPKfS0_")
        );
        assert_eq!(mangle_plain("_ZN2ns1fEPfS0_", "f", &k("float* a, float* b")).as_deref(), Some("_ZN2ns1fEPfS0_"));
        let names = |src: &str| template_params(&lex(src));
        assert_eq!(names("template <typename T, int TILE = 4>"), Some(vec!["T".to_string(), "TILE".to_string()]));
        assert_eq!(
            names("template <float (*F)(float), typename T, T (&G)(const T&), bool B>"),
            Some(["F", "T", "G", "B"].map(String::from).to_vec()),
            "function pointers and references by their declarator names"
        );
        let (line, at) = instantiation_line(&toks, "gemm", &["double".into(), "64".into()]).unwrap();
        assert_eq!(
            (line.as_str(), at),
            ("template __global__ void gemm<double, 64>(const double* a, double* b, int n);", 2)
        );
    }
}
