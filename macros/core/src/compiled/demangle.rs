//! Just enough of the Itanium C++ ABI's name mangling to name a kernel: the (qualified)
//! function name and its template arguments, read from the front of a mangled symbol
//! (`_Z4gemmIfLi128EEvPKT_PS0_i` → `gemm` with `<float, 128>`). The parameter types after
//! them are not read: the record's sizes and the source reader check those.
//!
//! Understood in template arguments: the builtin types (`f` float, `i` int, `j` unsigned, ...),
//! `P`/`R`/`K`/`V` (pointer, reference, const, volatile) over them, class names (`6__half`,
//! nested `N..E`, class templates `N3ops3VecIfLi4EEE` → `ops::Vec<float, 4>`), integer literals
//! (`Li128E` → `128`, `Lj4E` → `4u`, `Lb1E` → `true`), enumerators (`L4Mode1E` → `(Mode)1`: the
//! symbol holds the value, not the enumerator's name), functions and function pointers
//! (`XadL_Z4siluIfET_RKS0_EE` → `silu<float>`, the function's parameter types read past),
//! template parameters `T_` inside such a function, and substitutions `S_`/`S<n>_` (also as the
//! first part of a nested name, `NS_11silu_kernelIfEE` → `vllm::silu_kernel<float>`). A name in an
//! anonymous namespace (`_GLOBAL__N_...`) is shown as `(anonymous namespace)::name`. Anything
//! else (other expressions, packs, `std::` types) makes [`demangle`] return `None`, and kgraph
//! shows the mangled symbol instead, which `name = "..."` accepts verbatim.
//!
//! Default template arguments are in the symbol like any other, so a kernel is named with them
//! written out (`fill<float, 128>` for `template <typename T, int B = 128>`).

/// A demangled kernel name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Demangled {
    /// The name with its namespaces, `::`-separated (`ops::gemm`).
    pub name: String,
    /// The template arguments as C++ writes them (`float`, `128`, `4u`, `const float*`), or
    /// `None` for a function that is not a template instantiation.
    pub template_args: Option<Vec<String>>,
}

impl Demangled {
    /// `ops::gemm<float, 128>`.
    pub fn display(&self) -> String {
        match &self.template_args {
            Some(args) => format!("{}<{}>", self.name, args.join(", ")),
            None => self.name.clone(),
        }
    }

    /// The unqualified name (`gemm` of `ops::gemm`).
    pub fn base_name(&self) -> &str {
        self.name.rsplit("::").next().unwrap_or(&self.name)
    }
}

/// The name and template arguments of mangled symbol `symbol`, or `None` when it is not a
/// mangled name or uses a construct this reader does not understand.
pub fn demangle(symbol: &str) -> Option<Demangled> {
    let mut r = Reader { s: symbol.as_bytes(), pos: 0, subs: Vec::new(), template_params: Vec::new() };
    r.eat("_Z").then_some(())?;
    r.function_name()
}

/// The anonymous namespace's spelling in messages (its symbol part is a per-file hash).
const ANONYMOUS: &str = "(anonymous namespace)";

impl Reader<'_> {
    /// The name and template arguments at the front of an encoding (after `_Z`); the
    /// template arguments become the ones `T_` refers to.
    fn function_name(&mut self) -> Option<Demangled> {
        let r = self;
        let (name, template_args) = if r.eat("N") {
            let mut parts = Vec::new();
            let mut args = None;
            while !r.eat("E") {
                if r.peek() == Some(b'I') {
                    args = Some(r.template_args()?);
                    continue;
                }
                args.is_none().then_some(())?;
                if parts.is_empty() && r.peek() == Some(b'S') {
                    // `NS_11silu_kernelIfEE`: a prefix seen before (`vllm`), not a new candidate.
                    parts.push(r.substitution()?);
                    continue;
                }
                parts.push(r.scope_name()?);
                r.subs.push(parts.join("::"));
            }
            (parts.join("::"), args)
        } else {
            let name = r.source_name()?;
            let args = if r.peek() == Some(b'I') {
                r.subs.push(name.clone());
                Some(r.template_args()?)
            } else {
                None
            };
            (name, args)
        };
        if let Some(args) = &template_args {
            r.template_params = args.clone();
        }
        Some(Demangled { name, template_args })
    }

    /// A namespace or function name inside `N..E`: the anonymous namespace by its C++ spelling.
    fn scope_name(&mut self) -> Option<String> {
        let name = self.source_name()?;
        Some(if name.starts_with("_GLOBAL__N") { ANONYMOUS.to_string() } else { name })
    }
}

struct Reader<'a> {
    s: &'a [u8],
    pos: usize,
    /// Substitution candidates seen so far (`S_` is the first).
    subs: Vec<String>,
    /// The template arguments `T_`, `T0_`, ... refer to: those of the innermost function
    /// encoding read so far.
    template_params: Vec<String>,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn eat(&mut self, lit: &str) -> bool {
        let found = self.s[self.pos..].starts_with(lit.as_bytes());
        if found {
            self.pos += lit.len();
        }
        found
    }

    fn number(&mut self) -> Option<u64> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        std::str::from_utf8(&self.s[start..self.pos]).ok()?.parse().ok()
    }

    /// `<length><identifier>`.
    fn source_name(&mut self) -> Option<String> {
        let len = usize::try_from(self.number()?).ok()?;
        let end = self.pos.checked_add(len).filter(|&e| e <= self.s.len())?;
        let name = std::str::from_utf8(&self.s[self.pos..end]).ok()?.to_string();
        self.pos = end;
        Some(name)
    }

    /// `I <arg>+ E`.
    fn template_args(&mut self) -> Option<Vec<String>> {
        self.eat("I").then_some(())?;
        let mut args = Vec::new();
        while !self.eat("E") {
            args.push(if self.eat("L") {
                self.literal()?
            } else if self.eat("X") {
                self.expression()?
            } else {
                self.ty()?
            });
        }
        Some(args)
    }

    /// After `X`: the one expression a kernel's template argument takes in practice, a
    /// function's (or object's) address `adL_Z<encoding>EE`, shown as the function's name
    /// (`silu<float>`), which C++ accepts for a function-pointer argument.
    fn expression(&mut self) -> Option<String> {
        self.eat("adL").then_some(())?;
        let name = self.external_name()?;
        self.eat("E").then_some(())?;
        Some(name)
    }

    /// After `L`: `_Z<encoding>E`, an external name (a function argument), read past its
    /// parameter types; the template arguments `T_` refers to are restored after it.
    fn external_name(&mut self) -> Option<String> {
        self.eat("_Z").then_some(())?;
        let outer = self.template_params.clone();
        let d = self.function_name()?;
        // A function template's encoding has its return type first; then the parameters.
        while !self.eat("E") {
            self.ty()?;
        }
        self.template_params = outer;
        Some(d.display())
    }

    /// After `L`: `<type><value>E`, an external name `_Z..E`, or an enumerator `<class
    /// type><value>E`, shown as `(Type)value` (the symbol has no enumerator name).
    fn literal(&mut self) -> Option<String> {
        if self.peek() == Some(b'_') {
            return self.external_name();
        }
        if self.peek().is_some_and(|c| c.is_ascii_digit() || c == b'N' || c == b'S') {
            let ty = self.ty()?;
            let negative = self.eat("n");
            let value = self.number()?;
            self.eat("E").then_some(())?;
            return Some(format!("({ty}){}{value}", if negative { "-" } else { "" }));
        }
        let ty = self.peek()?;
        self.pos += 1;
        let negative = self.eat("n");
        let value = self.number()?;
        self.eat("E").then_some(())?;
        let sign = if negative { "-" } else { "" };
        let suffix = match ty {
            b'b' => return Some(if value == 0 { "false" } else { "true" }.to_string()),
            b'i' | b's' | b'a' | b'c' => "",
            b'j' | b't' | b'h' => "u",
            b'l' => "l",
            b'm' => "ul",
            b'x' => "ll",
            b'y' => "ull",
            _ => return None,
        };
        Some(format!("{sign}{value}{suffix}"))
    }

    fn ty(&mut self) -> Option<String> {
        let c = self.peek()?;
        if let Some(builtin) = builtin(c) {
            self.pos += 1;
            return Some(builtin.to_string());
        }
        let ty = match c {
            b'P' | b'R' | b'K' | b'V' => {
                self.pos += 1;
                let inner = self.ty()?;
                match c {
                    b'P' => format!("{inner}*"),
                    b'R' => format!("{inner}&"),
                    b'K' => format!("const {inner}"),
                    _ => format!("volatile {inner}"),
                }
            }
            b'S' => return self.substitution(),
            b'T' => {
                // A template parameter of the enclosing function: a substitution candidate.
                self.pos += 1;
                let index = if self.eat("_") {
                    0
                } else {
                    let n = usize::try_from(self.number()?).ok()?;
                    self.eat("_").then_some(())?;
                    n + 1
                };
                self.template_params.get(index)?.clone()
            }
            b'0'..=b'9' => {
                let name = self.source_name()?;
                if self.peek() != Some(b'I') {
                    name
                } else {
                    // A class template's specialisation: its name, then the whole, are candidates.
                    self.subs.push(name.clone());
                    format!("{name}<{}>", self.template_args()?.join(", "))
                }
            }
            b'N' => {
                self.pos += 1;
                let mut name = String::new();
                while !self.eat("E") {
                    if self.peek() == Some(b'I') {
                        name = format!("{name}<{}>", self.template_args()?.join(", "));
                    } else if name.is_empty() && self.peek() == Some(b'S') {
                        // A prefix seen before: the next part makes the first new candidate.
                        name = self.substitution()?;
                        continue;
                    } else {
                        let part = self.scope_name()?;
                        name = if name.is_empty() { part } else { format!("{name}::{part}") };
                    }
                    self.subs.push(name.clone());
                }
                // The whole name is pushed once below.
                self.subs.pop();
                name
            }
            _ => return None,
        };
        self.subs.push(ty.clone());
        Some(ty)
    }

    /// `S_`, `S<seq-id>_`: a name or type seen before (not itself a new candidate).
    fn substitution(&mut self) -> Option<String> {
        self.eat("S").then_some(())?;
        let index = if self.eat("_") {
            0
        } else {
            let digits = self.seq_id()?;
            self.eat("_").then_some(())?;
            digits + 1
        };
        self.subs.get(index).cloned()
    }

    /// A base-36 sequence id (digits and upper-case letters).
    fn seq_id(&mut self) -> Option<usize> {
        let start = self.pos;
        let mut value = 0usize;
        while let Some(c) = self.peek().filter(|c| c.is_ascii_digit() || c.is_ascii_uppercase()) {
            let digit = if c.is_ascii_digit() { c - b'0' } else { c - b'A' + 10 };
            value = value.checked_mul(36)?.checked_add(usize::from(digit))?;
            self.pos += 1;
        }
        (self.pos > start).then_some(value)
    }
}

fn builtin(c: u8) -> Option<&'static str> {
    Some(match c {
        b'v' => "void",
        b'b' => "bool",
        b'c' => "char",
        b'a' => "signed char",
        b'h' => "unsigned char",
        b's' => "short",
        b't' => "unsigned short",
        b'i' => "int",
        b'j' => "unsigned int",
        b'l' => "long",
        b'm' => "unsigned long",
        b'x' => "long long",
        b'y' => "unsigned long long",
        b'f' => "float",
        b'd' => "double",
        _ => return None,
    })
}

/// A template argument or kernel name as written by a person, normalised for comparison: no
/// spaces except between words, integer literals without their `u`/`l` suffixes (a template's
/// `int`/`unsigned` parameter decides the type, and `128` and `128u` name the same
/// instantiation there), `T const` as `const T`, and the CUDA headers' typedef spellings of
/// the half types as the types nvcc mangles (`half` → `__half`, `nv_bfloat16` → `__nv_bfloat16`).
pub fn normalize(text: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    let flush = |cur: &mut String, words: &mut Vec<String>| {
        if !cur.is_empty() {
            let w = std::mem::take(cur);
            let digits = w.trim_end_matches(['u', 'U', 'l', 'L']);
            let is_number = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
            words.push(match w.as_str() {
                _ if is_number => digits.to_string(),
                "half" => "__half".to_string(),
                "half2" => "__half2".to_string(),
                "nv_bfloat16" => "__nv_bfloat16".to_string(),
                "nv_bfloat162" => "__nv_bfloat162".to_string(),
                _ => w,
            });
        }
    };
    for ch in text.chars() {
        if ch.is_alphanumeric() || ch == '_' || ch == '-' {
            cur.push(ch);
        } else {
            flush(&mut cur, &mut words);
            if !ch.is_whitespace() {
                words.push(ch.to_string());
            }
        }
    }
    flush(&mut cur, &mut words);
    // `&silu<float>` → `silu<float>`: an address-of at the start of a template argument (a
    // reference type puts its `&` after the type), as the demangled name shows a function.
    let mut k = 1;
    while k < words.len() {
        if words[k] == "&" && matches!(words[k - 1].as_str(), "<" | ",") {
            words.remove(k);
        } else {
            k += 1;
        }
    }
    // `float const*` → `const float*`.
    let mut k = 1;
    while k < words.len() {
        if words[k] == "const" && words[k - 1] != "*" && words[k - 1] != "const" {
            let w = words.remove(k);
            let start = (0..k).rev().find(|&j| matches!(words[j].as_str(), "," | "<" | "(")).map_or(0, |j| j + 1);
            words.insert(start, w);
        }
        k += 1;
    }
    let mut out = String::new();
    for w in &words {
        let word = |s: &str| s.chars().next().is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-');
        if out.chars().last().is_some_and(|c| c.is_alphanumeric() || c == '_') && word(w) {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::compiled::demangle::{demangle, normalize};

    fn shown(symbol: &str) -> Option<String> {
        demangle(symbol).map(|d| d.display())
    }

    #[test]
    fn names_and_template_arguments() {
        assert_eq!(shown("_Z5scalePfi").as_deref(), Some("scale"));
        assert_eq!(shown("_Z4gemmIfLi128EEvPKT_PS0_i").as_deref(), Some("gemm<float, 128>"));
        assert_eq!(shown("_Z4gemmIdLj64EEvPKT_PS0_i").as_deref(), Some("gemm<double, 64u>"));
        assert_eq!(shown("_ZN3ops4axpyEPfi").as_deref(), Some("ops::axpy"));
        assert_eq!(shown("_ZN3ops4gemmIfLi8EEEvPT_").as_deref(), Some("ops::gemm<float, 8>"));
        assert_eq!(shown("_Z2tkI6__halfS0_EvPT_").as_deref(), Some("tk<__half, __half>"));
        assert_eq!(shown("_Z1kIPKfLb1EEvT_").as_deref(), Some("k<const float*, true>"));
        assert_eq!(shown("_Z1kILin3EEvv").as_deref(), Some("k<-3>"));
        assert_eq!(shown("scale"), None);
        assert_eq!(shown("_Z1kIXplLi1ELi2EEEvv"), None, "expressions other than an address are not read");
        assert_eq!(shown("_Z99x"), None, "truncated");
    }

    #[test]
    fn functions_enums_class_templates_and_anonymous_namespaces() {
        // As nvcc 13 mangles them (macros/core/tests/compiled/cpp_args.cu).
        assert_eq!(
            shown("_Z7act_mulIfXadL_Z6squareIfET_RKS1_EELb1EEvPS1_PS2_i").as_deref(),
            Some("act_mul<float, square<float>, true>")
        );
        // vLLM's: the function argument's namespace is a substitution of the kernel's (`NS_..`).
        assert_eq!(
            shown("_ZN4vllm18act_and_mul_kernelIfXadL_ZNS_11silu_kernelIfEET_RKS2_EELb1EEEvPS2_PS3_i").as_deref(),
            Some("vllm::act_and_mul_kernel<float, vllm::silu_kernel<float>, true>")
        );
        assert_eq!(
            shown("_ZN4vllm29act_and_mul_kernel_with_paramIfXadL_ZNS_14fatrelu_kernelIfEET_RKS2_fEEEEvPS2_PS3_if")
                .as_deref(),
            Some("vllm::act_and_mul_kernel_with_param<float, vllm::fatrelu_kernel<float>>")
        );
        assert_eq!(shown("_ZN3ops1kINS_3VecEEEvv").as_deref(), Some("ops::k<ops::Vec>"));
        assert_eq!(shown("_Z1kIXadL_Z1gvEEEvv").as_deref(), Some("k<g>"));
        assert_eq!(shown("_Z1kIL_Z1gvEEvv").as_deref(), Some("k<g>"), "a function argument without `ad`");
        assert_eq!(
            shown("_Z7combineIL4Mode1ELN3ops6ReduceE0EEvPfPKfi").as_deref(),
            Some("combine<(Mode)1, (ops::Reduce)0>")
        );
        assert_eq!(
            shown("_Z8fill_vecIN3ops3VecIfLi4EEELi128EEvPT_i").as_deref(),
            Some("fill_vec<ops::Vec<float, 4>, 128>")
        );
        assert_eq!(shown("_Z1kI3VecIfLi2EES1_EvPT_").as_deref(), Some("k<Vec<float, 2>, Vec<float, 2>>"));
        assert_eq!(
            shown("_ZN44_GLOBAL__N__f6d195c0_11_cpp_args_cu_5492af3712hidden_scaleEPffi").as_deref(),
            Some("(anonymous namespace)::hidden_scale")
        );
    }

    #[test]
    fn normalised_spellings() {
        assert_eq!(normalize("gemm< float,128u >"), "gemm<float,128>");
        assert_eq!(normalize("k<half, nv_bfloat16>"), normalize("k<__half, __nv_bfloat16>"));
        assert_eq!(normalize("gemm<float, 128>"), normalize("gemm<float,128>"));
        assert_eq!(normalize("k<float const *>"), normalize("k<const float*>"));
        assert_eq!(normalize("k<unsigned  int>"), "k<unsigned int>");
        assert_eq!(normalize("k<float, &silu<float>, true>"), normalize("k<float,silu<float>,true>"));
        assert_eq!(normalize("k<float&>"), "k<float&>");
    }
}
