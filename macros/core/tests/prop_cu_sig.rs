//! Properties of the `.cu` signature reader (`cuda::signature::find_kernel`, `kernel_names`):
//! 1. generated well-formed signatures (every element-type spelling, `const` before or after the
//!    type, pointer depths, `__restrict__`, comments and line breaks between any tokens,
//!    `__launch_bounds__`, `extern "C" {}` blocks, decoy functions, macros and strings) are
//!    read exactly: names, types, constness, pointer depth and each parameter's line;
//! 2. those signatures and every `kernels/*.cu` file, randomly mutated (unbalanced brackets,
//!    comment and string openers, macros, non-ASCII, truncation, ...), never make the reader
//!    panic, and every line it reports lies inside the text.

mod prop_support;

use kgraph_codegen::cuda::signature::{find_kernel, kernel_names, CuBase, CuError, CuKernel};
use kgraph_codegen::syntax::model::{Elem, Vector};
use prop_support::{cases, check_text, files, mutate_text, seed, Rng};

/// C spellings and what they read as (`None`: a C type kgraph has no element type for).
const TYPES: &[(&str, Option<Elem>)] = &[
    ("float", Some(Elem::F32)),
    ("double", Some(Elem::F64)),
    ("signed char", Some(Elem::I8)),
    ("int8_t", Some(Elem::I8)),
    ("unsigned char", Some(Elem::U8)),
    ("uint8_t", Some(Elem::U8)),
    ("short", Some(Elem::I16)),
    ("short int", Some(Elem::I16)),
    ("signed short", Some(Elem::I16)),
    ("int16_t", Some(Elem::I16)),
    ("unsigned short", Some(Elem::U16)),
    ("unsigned short int", Some(Elem::U16)),
    ("uint16_t", Some(Elem::U16)),
    ("int", Some(Elem::I32)),
    ("signed", Some(Elem::I32)),
    ("signed int", Some(Elem::I32)),
    ("int32_t", Some(Elem::I32)),
    ("std::int32_t", Some(Elem::I32)),
    ("unsigned", Some(Elem::U32)),
    ("unsigned int", Some(Elem::U32)),
    ("uint32_t", Some(Elem::U32)),
    ("long long", Some(Elem::I64)),
    ("long long int", Some(Elem::I64)),
    ("long", Some(Elem::I64)),
    ("int64_t", Some(Elem::I64)),
    ("unsigned long long", Some(Elem::U64)),
    ("unsigned long", Some(Elem::U64)),
    ("uint64_t", Some(Elem::U64)),
    ("size_t", Some(Elem::U64)),
    ("std::size_t", Some(Elem::U64)),
    ("char", Some(Elem::I8)),
    ("bool", Some(Elem::Bool)),
    ("void", None),
    ("half", Some(Elem::F16)),
    ("__half", Some(Elem::F16)),
    ("float2", Some(Elem::Vector(Vector::Float2))),
    ("int4", Some(Elem::Vector(Vector::Int4))),
    ("__nv_bfloat16", Some(Elem::Bf16)),
    ("nv_bfloat162", Some(Elem::Vector(Vector::Bf16x2))),
    ("cudaTextureObject_t", Some(Elem::U64)),
    ("double4", None),
    ("long double", None),
];

/// What a generated parameter must read as.
#[derive(Debug, Clone, PartialEq)]
struct Expected {
    name: Option<String>,
    elem: Option<Elem>,
    pointers: u8,
    is_const: bool,
    line: usize,
}

/// Builds text while tracking the current line, with random comments and line breaks between
/// tokens (never inside one).
struct Writer<'r> {
    out: String,
    rng: &'r mut Rng,
}

impl Writer<'_> {
    fn line(&self) -> usize {
        self.out.matches('\n').count() + 1
    }

    fn gap(&mut self) {
        match self.rng.below(12) {
            0 => self.out.push('\n'),
            1 => self.out.push_str(" /* a ( comment ) with , commas */ "),
            2 => self.out.push_str(" // a line comment (\n"),
            3 => self.out.push_str("\n\t  "),
            4 => self.out.push_str(" /* multi\n line */ "),
            _ => self.out.push(' '),
        }
    }

    /// A token, then a gap.
    fn tok(&mut self, t: &str) {
        self.out.push_str(t);
        self.gap();
    }
}

/// A parameter list of 0..8 parameters, each well-formed.
fn write_params(w: &mut Writer<'_>, unnamed_ok: bool) -> Vec<Expected> {
    let n = w.rng.below(8);
    let mut expected = Vec::new();
    for i in 0..n {
        if i > 0 {
            w.tok(",");
        }
        let (spelled, elem) = *w.rng.pick(TYPES);
        let pointers = if spelled == "void" { w.rng.range(1, 3) } else { w.rng.range(0, 3) } as u8;
        let array = pointers >= 1 && w.rng.chance(1, 6);
        let is_const = w.rng.chance(1, 2);
        let const_after = is_const && w.rng.chance(1, 3);
        let named = !unnamed_ok || array || w.rng.chance(4, 5);
        let mut first_line = None;
        let mut tok = |w: &mut Writer<'_>, t: &str| {
            first_line.get_or_insert(w.line());
            w.tok(t);
        };
        if w.rng.chance(1, 12) {
            tok(w, "[[maybe_unused]]");
        }
        if is_const && !const_after {
            tok(w, "const");
        }
        if w.rng.chance(1, 10) {
            tok(w, "volatile");
        }
        for word in spelled.split(' ') {
            tok(w, word);
        }
        if const_after {
            tok(w, "const");
        }
        let stars = if array { pointers - 1 } else { pointers };
        for _ in 0..stars {
            tok(w, "*");
            if w.rng.chance(1, 8) {
                tok(w, "const"); // a const pointer: the pointee stays as it was
            }
        }
        if stars > 0 && w.rng.chance(1, 3) {
            let restrict = *w.rng.pick(&["__restrict__", "__restrict", "restrict"]);
            tok(w, restrict);
        }
        let name = format!("p{i}_{}", w.rng.below(1000));
        let mut line = first_line.expect("a type was written");
        if named {
            line = w.line();
            w.tok(&name);
        }
        if array {
            w.tok("[");
            if w.rng.chance(1, 2) {
                w.tok("16");
            }
            w.tok("]");
        }
        expected.push(Expected { name: named.then_some(name), elem, pointers, is_const, line });
    }
    if n == 0 && w.rng.chance(1, 3) {
        w.tok("void");
    }
    expected
}

/// Decoys that must not be mistaken for the kernel.
const DECOYS: &[&str] = &[
    "#include <cuda_fp16.h>\n",
    "#define KERNEL(name) extern \"C\" __global__ void name(float* x)\n",
    "#define LONG_MACRO(a, b) \\\n  a + b\n",
    "// extern \"C\" __global__ void TARGET(double* ghost) {}\n",
    "/* extern \"C\" __global__ void TARGET(int ghost) {} */\n",
    "__device__ float TARGET_helper(float v) { return v * 2.0f; }\n",
    "namespace detail { __device__ int sq(int v) { return v * v; } }\n",
    "static const char* msg = \"extern \\\"C\\\" __global__ void TARGET(\";\n",
    "template <typename T> __device__ T twice(T v) { return v + v; }\n",
    "extern \"C\" __global__ void other_kernel(const float* a, int n) { if (n) { twice(a[0]); } }\n",
    "struct Pair { float a; int b; };\n",
    "constexpr int kBlock = 256;\n",
    "const char c = ')';\n",
    "auto r = R\"x( ) __global__ void TARGET( )x\";\n",
];

/// A `.cu` text declaring kernel `name`, and its expected parameters.
fn well_formed(rng: &mut Rng, name: &str) -> (String, Vec<Expected>) {
    let mut w = Writer { out: String::new(), rng };
    for _ in 0..w.rng.below(4) {
        let decoy = w.rng.pick(DECOYS).replace("TARGET", name);
        w.out.push_str(&decoy);
    }
    let block = w.rng.chance(1, 4);
    let prototype = w.rng.chance(1, 6);
    if block {
        w.tok("extern \"C\" {");
    } else {
        w.tok("extern");
        w.tok("\"C\"");
    }
    w.tok("__global__");
    if w.rng.chance(1, 3) {
        w.tok("__launch_bounds__(256, 2)");
    }
    w.tok("void");
    if w.rng.chance(1, 4) {
        w.tok("__launch_bounds__ ( 128 )");
    }
    w.tok(name);
    w.tok("(");
    let expected = write_params(&mut w, prototype);
    w.tok(")");
    if prototype {
        w.tok(";");
    } else {
        w.tok("{ int i = threadIdx.x; if (i < 1) { (void)i; } }");
    }
    if block {
        w.tok("}");
    }
    w.out.push('\n'); // a directive among the decoys must start a line
    for _ in 0..w.rng.below(3) {
        let decoy = w.rng.pick(DECOYS).replace("TARGET", name);
        w.out.push_str(&decoy);
    }
    (w.out, expected)
}

fn read_as(k: &CuKernel) -> Vec<Expected> {
    k.params
        .iter()
        .map(|p| Expected {
            name: p.name.clone(),
            elem: match p.ty.base {
                CuBase::Elem(e) => Some(e),
                _ => None,
            },
            pointers: p.ty.pointers,
            is_const: p.ty.is_const,
            line: p.line,
        })
        .collect()
}

/// Every line the reader reports is a line of `src` (or one past a final newline).
fn lines_inside(src: &str, result: &Result<CuKernel, CuError>) -> Result<(), String> {
    let n_lines = src.matches('\n').count() + 1;
    let mut reported = Vec::new();
    match result {
        Ok(k) => {
            reported.push(k.line);
            reported.extend(k.params.iter().map(|p| p.line));
        }
        Err(CuError::NotFound { non_kernel, .. }) => reported.extend(*non_kernel),
        Err(CuError::NotExternC { line, .. }) | Err(CuError::Unverifiable { line, .. }) => reported.push(*line),
        Err(CuError::Ambiguous { lines, .. }) => reported.extend(lines),
    }
    match reported.iter().find(|&&l| l == 0 || l > n_lines) {
        Some(l) => Err(format!("line {l} outside 1..={n_lines}: {result:?}")),
        None => Ok(()),
    }
}

/// Snippets inserted into C text.
const C_BITS: &[&str] = &[
    "(",
    ")",
    "((",
    "))",
    "{",
    "}",
    "[",
    "]",
    "<",
    ">",
    "*",
    "&",
    ",",
    ";",
    ":",
    "::",
    "=",
    "\"",
    "'",
    "\\",
    "/*",
    "*/",
    "//",
    "#",
    "\n#define X\n",
    "\n#if 0\n",
    "\n#endif\n",
    "\\\n",
    "\\\r\n",
    "\r",
    "\t",
    " ",
    "\0",
    "é",
    "µ",
    "💥",
    "\u{feff}",
    "\u{2028}",
    "const ",
    "const",
    " volatile ",
    "__restrict__",
    " __launch_bounds__(",
    "extern ",
    "\"C\"",
    "extern \"C\" {",
    "__global__ ",
    "__device__ ",
    "void ",
    "int ",
    "unsigned ",
    "long ",
    "float ",
    "size_t ",
    "half ",
    "RESTRICT ",
    "ARGS(float) ",
    "template <typename T> ",
    "namespace n {",
    "R\"d(",
    ")d\"",
    "u8\"",
    "L'",
    "0x1p-3",
    "1e+",
    "...",
    "->",
    "operator()",
    "[[",
    "]]",
    "alignas(16) ",
];

#[test]
fn generated_signatures_are_read_exactly() {
    let mut rng = Rng::new(seed());
    let n = cases(2000);
    for case in 0..n {
        let name = format!("k{}", rng.below(100));
        let (src, expected) = well_formed(&mut rng, &name);
        let prop = |src: &str| -> Result<(), String> {
            let found = find_kernel(src, &name);
            lines_inside(src, &found)?;
            let k = found.map_err(|e| format!("not read: {e:?}"))?;
            if k.name != name || read_as(&k) != expected {
                return Err(format!("read as {:?}\nexpected {expected:?}", read_as(&k)));
            }
            if !kernel_names(src).contains(&name) {
                return Err(format!("kernel_names misses `{name}`"));
            }
            Ok(())
        };
        check_text("generated signature", case, &src, &prop);
    }
    eprintln!("prop_cu_sig: {n} generated signatures read exactly");
}

#[test]
fn mutated_cu_text_never_panics_and_reports_lines_inside_the_text() {
    let real = files("kernels", ".cu");
    assert!(real.len() >= 5, "kernels/*.cu");
    let donors: Vec<&str> = real.iter().map(|(_, t)| t.as_str()).collect();
    let mut rng = Rng::new(seed() ^ 0x5eed);
    let n = cases(5000);
    let (mut found, mut errors) = (0usize, 0usize);
    for case in 0..n {
        // Half the cases mutate a real kernel file, half a generated signature.
        let (base, names) = if rng.chance(1, 2) {
            let (_, text) = rng.pick(&real);
            (text.clone(), kernel_names(text))
        } else {
            let name = format!("k{}", rng.below(10));
            (well_formed(&mut rng, &name).0, vec![name])
        };
        let mut src = base;
        for _ in 0..rng.range(1, 5) {
            src = mutate_text(&mut rng, &src, C_BITS, &donors);
        }
        let name = match names.is_empty() || rng.chance(1, 10) {
            true => rng.pick(&["k", "missing", "__global__", "é", ""]).to_string(),
            false => rng.pick(&names).clone(),
        };
        let prop = |src: &str| -> Result<(), String> {
            let names = kernel_names(src);
            let result = find_kernel(src, &name);
            lines_inside(src, &result)?;
            if let Ok(k) = &result {
                let _ = k.signature();
                if !names.contains(&k.name) {
                    return Err(format!("found `{}` but kernel_names has {names:?}", k.name));
                }
            }
            Ok(())
        };
        check_text("mutated .cu", case, &src, &prop);
        if find_kernel(&src, &name).is_ok() {
            found += 1;
        } else {
            errors += 1;
        }
    }
    eprintln!("prop_cu_sig: {n} mutated .cu texts: {found} kernels still read, {errors} errors");
    assert!(found >= n / 10 && errors >= n / 10, "the mutations lost their balance: {found} read, {errors} errors");
}
