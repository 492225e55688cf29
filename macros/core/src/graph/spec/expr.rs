//! Integer expressions over dims, as written in specs: `"n_hid * n_in"`, `"ceil(n / 128)"`.
//!
//! Grammar: `+ - * / %`, unary `-`, parentheses, integer literals (`_` separators allowed), dim
//! names, and the functions `ceil(x)`, `floor(x)`, `min(a, b)`, `max(a, b)`. Evaluation is exact
//! (rationals), so `n / 3` is 40/3 and a context that needs a whole number says so instead of
//! silently truncating; `ceil`/`floor` round. `%` takes whole numbers.
//!
//! Nesting is limited to [`MAX_DEPTH`] levels, counting parentheses, calls and unary minus as
//! written and the depth of the parsed tree (a chain `1 + 1 + ...` is one level per operator):
//! parsing, evaluation and dropping all recurse, and a generated expression thousands deep
//! would otherwise overflow the compiler's stack.

use std::collections::BTreeMap;
use std::ops::Range;

/// A parsed expression; spans are byte ranges inside the expression text.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// An integer literal.
    Int(i128),
    /// A dim name.
    Name(String, Range<usize>),
    /// `-e`.
    Neg(Box<Expr>),
    /// `a op b`.
    Bin(Box<Expr>, BinOp, Box<Expr>),
    /// `f(args)`.
    Call(Func, Vec<Expr>),
}

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (exact)
    Div,
    /// `%` (whole numbers)
    Rem,
}

/// A built-in function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    /// Round up.
    Ceil,
    /// Round down.
    Floor,
    /// Smaller of two.
    Min,
    /// Larger of two.
    Max,
}

/// A problem in an expression, at a byte range of the expression text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExprError {
    /// Where, inside the expression text.
    pub span: Range<usize>,
    /// What.
    pub message: String,
}

/// How deeply an expression may nest (see the module docs).
pub const MAX_DEPTH: usize = 128;

fn too_deep(span: Range<usize>) -> ExprError {
    ExprError { span, message: format!("expression nested deeper than {MAX_DEPTH} levels") }
}

fn err<T>(span: Range<usize>, message: impl Into<String>) -> Result<T, ExprError> {
    Err(ExprError { span, message: message.into() })
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(i128),
    Name(String),
    Op(char),
}

fn lex(src: &str) -> Result<Vec<(Tok, Range<usize>)>, ExprError> {
    let mut out = Vec::new();
    let bytes = src.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let text: String = src[start..i].chars().filter(|&c| c != '_').collect();
            match text.parse::<i128>() {
                Ok(v) => out.push((Tok::Int(v), start..i)),
                Err(_) => return err(start..i, format!("`{}` is not an integer", &src[start..i])),
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push((Tok::Name(src[start..i].to_string()), start..i));
        } else if b"+-*/%(),".contains(&c) {
            out.push((Tok::Op(c as char), i..i + 1));
            i += 1;
        } else {
            let ch = src[i..].chars().next().unwrap_or('?');
            return err(i..i + ch.len_utf8(), format!("unexpected character `{ch}`"));
        }
    }
    Ok(out)
}

struct Parser<'a> {
    toks: Vec<(Tok, Range<usize>)>,
    pos: usize,
    src: &'a str,
    /// Parentheses, calls and unary minus open around the current position.
    nesting: usize,
}

/// A parsed subexpression and the depth of its tree (a literal or name is 1).
type Parsed = (Expr, usize);

impl Parser<'_> {
    fn peek_op(&self) -> Option<char> {
        match self.toks.get(self.pos) {
            Some((Tok::Op(c), _)) => Some(*c),
            _ => None,
        }
    }

    fn here(&self) -> Range<usize> {
        match self.toks.get(self.pos) {
            Some((_, s)) => s.clone(),
            None => self.src.len()..self.src.len(),
        }
    }

    fn expected(&self, what: &str) -> ExprError {
        let found = match self.toks.get(self.pos) {
            Some((_, s)) => format!("`{}`", &self.src[s.clone()]),
            None => "the end".to_string(),
        };
        ExprError { span: self.here(), message: format!("expected {what}, found {found}") }
    }

    /// Opens one level of nesting at the current token, before recursing into it.
    fn enter(&mut self) -> Result<(), ExprError> {
        self.nesting += 1;
        if self.nesting > MAX_DEPTH {
            return Err(too_deep(self.here()));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.nesting -= 1;
    }

    /// The depth of a node over children of depth `children`, written at `at`.
    fn node_depth(children: usize, at: Range<usize>) -> Result<usize, ExprError> {
        if children >= MAX_DEPTH {
            return Err(too_deep(at));
        }
        Ok(children + 1)
    }

    fn sum(&mut self) -> Result<Parsed, ExprError> {
        let (mut lhs, mut depth) = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek_op() {
            let at = self.here();
            self.pos += 1;
            let (rhs, rhs_depth) = self.product()?;
            depth = Self::node_depth(depth.max(rhs_depth), at)?;
            let op = if op == '+' { BinOp::Add } else { BinOp::Sub };
            lhs = Expr::Bin(Box::new(lhs), op, Box::new(rhs));
        }
        Ok((lhs, depth))
    }

    fn product(&mut self) -> Result<Parsed, ExprError> {
        let (mut lhs, mut depth) = self.unary()?;
        while let Some(op @ ('*' | '/' | '%')) = self.peek_op() {
            let at = self.here();
            self.pos += 1;
            let (rhs, rhs_depth) = self.unary()?;
            depth = Self::node_depth(depth.max(rhs_depth), at)?;
            let op = match op {
                '*' => BinOp::Mul,
                '/' => BinOp::Div,
                _ => BinOp::Rem,
            };
            lhs = Expr::Bin(Box::new(lhs), op, Box::new(rhs));
        }
        Ok((lhs, depth))
    }

    fn unary(&mut self) -> Result<Parsed, ExprError> {
        if self.peek_op() != Some('-') {
            return self.atom();
        }
        let at = self.here();
        self.enter()?;
        self.pos += 1;
        let (e, depth) = self.unary()?;
        self.leave();
        Ok((Expr::Neg(Box::new(e)), Self::node_depth(depth, at)?))
    }

    fn atom(&mut self) -> Result<Parsed, ExprError> {
        let Some((tok, span)) = self.toks.get(self.pos).cloned() else {
            return Err(self.expected("a number, a dim name or `(`"));
        };
        match tok {
            Tok::Int(v) => {
                self.pos += 1;
                Ok((Expr::Int(v), 1))
            }
            Tok::Op('(') => {
                self.enter()?;
                self.pos += 1;
                let e = self.sum()?;
                self.close()?;
                self.leave();
                Ok(e)
            }
            Tok::Name(name) => {
                self.pos += 1;
                if self.peek_op() != Some('(') {
                    return Ok((Expr::Name(name, span), 1));
                }
                self.call(name, span)
            }
            Tok::Op(_) => Err(self.expected("a number, a dim name or `(`")),
        }
    }

    /// `name(args)`, at the `(` after the name.
    fn call(&mut self, name: String, span: Range<usize>) -> Result<Parsed, ExprError> {
        let (func, arity) = match name.as_str() {
            "ceil" => (Func::Ceil, 1),
            "floor" => (Func::Floor, 1),
            "min" => (Func::Min, 2),
            "max" => (Func::Max, 2),
            _ => return err(span, format!("unknown function `{name}` (known: ceil, floor, min, max)")),
        };
        self.enter()?;
        self.pos += 1;
        let (first, mut depth) = self.sum()?;
        let mut args = vec![first];
        while self.peek_op() == Some(',') {
            self.pos += 1;
            let (arg, arg_depth) = self.sum()?;
            depth = depth.max(arg_depth);
            args.push(arg);
        }
        let end = self.here();
        self.close()?;
        self.leave();
        if args.len() != arity {
            return err(span.start..end.end, format!("`{name}` takes {arity} argument(s), got {}", args.len()));
        }
        Ok((Expr::Call(func, args), Self::node_depth(depth, span)?))
    }

    fn close(&mut self) -> Result<(), ExprError> {
        if self.peek_op() == Some(')') {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.expected("`)`"))
        }
    }
}

/// Parses `src`.
pub fn parse(src: &str) -> Result<Expr, ExprError> {
    let toks = lex(src)?;
    if toks.is_empty() {
        return err(0..src.len(), "empty expression");
    }
    let mut p = Parser { toks, pos: 0, src, nesting: 0 };
    let (e, _) = p.sum()?;
    if p.pos < p.toks.len() {
        return Err(p.expected("an operator or the end"));
    }
    Ok(e)
}

impl Expr {
    /// Every dim name used, with its span.
    pub fn names(&self) -> Vec<(&str, Range<usize>)> {
        let mut out = Vec::new();
        self.collect_names(&mut out);
        out
    }

    fn collect_names<'a>(&'a self, out: &mut Vec<(&'a str, Range<usize>)>) {
        match self {
            Expr::Int(_) => {}
            Expr::Name(n, s) => out.push((n, s.clone())),
            Expr::Neg(e) => e.collect_names(out),
            Expr::Bin(a, _, b) => {
                a.collect_names(out);
                b.collect_names(out);
            }
            Expr::Call(_, args) => args.iter().for_each(|a| a.collect_names(out)),
        }
    }

    /// The exact value with `dims` substituted; names missing from `dims` are an error.
    pub fn eval(&self, dims: &BTreeMap<String, i128>) -> Result<Ratio, String> {
        match self {
            Expr::Int(v) => Ok(Ratio::int(*v)),
            Expr::Name(n, _) => dims.get(n).map(|v| Ratio::int(*v)).ok_or_else(|| format!("unknown dim `{n}`")),
            Expr::Neg(e) => e.eval(dims)?.neg(),
            Expr::Bin(a, op, b) => {
                let (a, b) = (a.eval(dims)?, b.eval(dims)?);
                match op {
                    BinOp::Add => a.add(b),
                    BinOp::Sub => a.add(b.neg()?),
                    BinOp::Mul => a.mul(b),
                    BinOp::Div => a.div(b),
                    BinOp::Rem => {
                        let (Some(x), Some(y)) = (a.whole(), b.whole()) else {
                            return Err("`%` needs whole numbers on both sides".into());
                        };
                        if y == 0 {
                            return Err("remainder by zero".into());
                        }
                        // `None` only for `i128::MIN % -1` (y != 0 here), whose remainder is 0.
                        Ok(Ratio::int(x.checked_rem_euclid(y).unwrap_or(0)))
                    }
                }
            }
            Expr::Call(f, args) => {
                let vals = args.iter().map(|a| a.eval(dims)).collect::<Result<Vec<_>, _>>()?;
                Ok(match f {
                    Func::Ceil => Ratio::int(vals[0].ceil()),
                    Func::Floor => Ratio::int(vals[0].floor()),
                    Func::Min => vals[0].min(vals[1]),
                    Func::Max => vals[0].max(vals[1]),
                })
            }
        }
    }
}

/// An exact rational `num / den` (`den > 0`, lowest terms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ratio {
    num: i128,
    den: i128,
}

/// The message of an evaluation that overflows `i128`.
#[doc(hidden)]
pub const OVERFLOW: &str = "expression overflows";

/// The greatest common divisor (at least 1), or `None` when it is 2^127, which `i128` cannot
/// hold. Computed on magnitudes: `i128::MIN % -1` and `i128::MIN.abs()` would overflow.
fn gcd(a: i128, b: i128) -> Option<i128> {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    i128::try_from(a.max(1)).ok()
}

impl Ratio {
    /// A whole number.
    pub fn int(v: i128) -> Self {
        Ratio { num: v, den: 1 }
    }

    fn new(num: i128, den: i128) -> Result<Self, String> {
        if den == 0 {
            return Err("division by zero".into());
        }
        let g = gcd(num, den).ok_or(OVERFLOW)?;
        let (num, den) = (num / g, den / g);
        if den < 0 {
            // Negating `i128::MIN` overflows.
            return Ok(Ratio { num: num.checked_neg().ok_or(OVERFLOW)?, den: den.checked_neg().ok_or(OVERFLOW)? });
        }
        Ok(Ratio { num, den })
    }

    fn neg(self) -> Result<Self, String> {
        Ok(Ratio { num: self.num.checked_neg().ok_or(OVERFLOW)?, den: self.den })
    }

    fn add(self, o: Self) -> Result<Self, String> {
        let n1 = self.num.checked_mul(o.den).ok_or(OVERFLOW)?;
        let n2 = o.num.checked_mul(self.den).ok_or(OVERFLOW)?;
        Ratio::new(n1.checked_add(n2).ok_or(OVERFLOW)?, self.den.checked_mul(o.den).ok_or(OVERFLOW)?)
    }

    fn mul(self, o: Self) -> Result<Self, String> {
        Ratio::new(self.num.checked_mul(o.num).ok_or(OVERFLOW)?, self.den.checked_mul(o.den).ok_or(OVERFLOW)?)
    }

    fn div(self, o: Self) -> Result<Self, String> {
        if o.num == 0 {
            return Err("division by zero".into());
        }
        Ratio::new(self.num.checked_mul(o.den).ok_or(OVERFLOW)?, self.den.checked_mul(o.num).ok_or(OVERFLOW)?)
    }

    fn ceil(self) -> i128 {
        self.num.div_euclid(self.den) + i128::from(self.num.rem_euclid(self.den) != 0)
    }

    fn floor(self) -> i128 {
        self.num.div_euclid(self.den)
    }

    fn min(self, o: Self) -> Self {
        if self.num.saturating_mul(o.den) <= o.num.saturating_mul(self.den) {
            self
        } else {
            o
        }
    }

    fn max(self, o: Self) -> Self {
        if self.num.saturating_mul(o.den) >= o.num.saturating_mul(self.den) {
            self
        } else {
            o
        }
    }

    /// The value when it is a whole number.
    pub fn whole(self) -> Option<i128> {
        (self.den == 1).then_some(self.num)
    }
}

impl std::fmt::Display for Ratio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.den == 1 {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}
