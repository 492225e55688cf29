//! A small CUDA C++ tokenizer: just enough to find kernel signatures. Comments, preprocessor
//! directives, string and character literals are dropped or kept opaque; every token carries
//! its 1-based line. It never fails: unterminated constructs end at the end of the text.

/// One token of `.cu` source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    /// Identifier or keyword.
    Ident(String),
    /// String literal contents (without quotes, escapes kept as written).
    Str(String),
    /// Number or character literal (kept opaque).
    Literal(String),
    /// Punctuation; `::` is one token, everything else one character.
    Punct(String),
}

/// A token and the line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// What it is.
    pub tok: Tok,
    /// The 1-based line it starts on.
    pub line: usize,
}

impl Token {
    /// True for the punctuation `p`.
    pub fn is_punct(&self, p: &str) -> bool {
        matches!(&self.tok, Tok::Punct(q) if q == p)
    }

    /// The identifier or keyword, if it is one.
    pub fn ident(&self) -> Option<&str> {
        match &self.tok {
            Tok::Ident(s) => Some(s),
            _ => None,
        }
    }

    /// The token as it would be written, for messages.
    pub fn text(&self) -> String {
        match &self.tok {
            Tok::Ident(s) | Tok::Literal(s) | Tok::Punct(s) => s.clone(),
            Tok::Str(s) => format!("\"{s}\""),
        }
    }
}

/// Splits `.cu` text into tokens.
pub fn lex(src: &str) -> Vec<Token> {
    let chars: Vec<char> = src.chars().collect();
    let mut lexer = Lexer { chars, pos: 0, line: 1, line_start: true, out: Vec::new() };
    lexer.run();
    lexer.out
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    line: usize,
    /// Only whitespace seen since the last newline: a `#` here starts a directive.
    line_start: bool,
    out: Vec<Token>,
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn push(&mut self, tok: Tok, line: usize) {
        self.out.push(Token { tok, line });
        self.line_start = false;
    }

    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
            let line = self.line;
            match c {
                '\n' => {
                    self.bump();
                    self.line_start = true;
                }
                c if c.is_whitespace() => {
                    self.bump();
                }
                '/' if self.peek(1) == Some('/') => self.skip_line_comment(),
                '/' if self.peek(1) == Some('*') => self.skip_block_comment(),
                '#' if self.line_start => self.directive(line),
                '"' => {
                    let s = self.string_body();
                    self.push(Tok::Str(s), line);
                }
                '\'' => {
                    let s = self.char_literal();
                    self.push(Tok::Literal(s), line);
                }
                c if c == '_' || c.is_alphabetic() => self.ident_or_prefixed_string(),
                c if c.is_ascii_digit() || (c == '.' && self.peek(1).is_some_and(|d| d.is_ascii_digit())) => {
                    let mut s = String::new();
                    while let Some(d) = self.peek(0) {
                        let exponent_sign = (d == '+' || d == '-') && s.ends_with(['e', 'E', 'p', 'P']);
                        if d.is_alphanumeric() || d == '.' || d == '_' || d == '\'' || exponent_sign {
                            s.push(d);
                            self.bump();
                        } else {
                            break;
                        }
                    }
                    self.push(Tok::Literal(s), line);
                }
                ':' if self.peek(1) == Some(':') => {
                    self.pos += 2;
                    self.push(Tok::Punct("::".into()), line);
                }
                c => {
                    self.bump();
                    self.push(Tok::Punct(c.to_string()), line);
                }
            }
        }
    }

    fn skip_line_comment(&mut self) {
        while let Some(c) = self.peek(0) {
            if c == '\n' {
                break;
            }
            self.bump();
        }
    }

    fn skip_block_comment(&mut self) {
        self.pos += 2;
        while let Some(c) = self.bump() {
            if c == '*' && self.peek(0) == Some('/') {
                self.pos += 1;
                return;
            }
        }
    }

    /// A directive: dropped, except that `#pragma pack` leaves the tokens of its operator form
    /// (`__pragma ( pack ) ;`), so the struct reader sees that the file packs structs whatever
    /// text it was given (the preprocessed `.i` keeps its pragmas; its reader passes no text).
    fn directive(&mut self, line: usize) {
        let start = self.pos;
        self.skip_directive();
        let text: String = self.chars[start + 1..self.pos].iter().collect();
        let mut words = text.split(|c: char| c.is_whitespace() || c == '(').filter(|w| !w.is_empty());
        if words.next() == Some("pragma") && words.next() == Some("pack") {
            self.push(Tok::Ident("__pragma".into()), line);
            self.push(Tok::Punct("(".into()), line);
            self.push(Tok::Ident("pack".into()), line);
            self.push(Tok::Punct(")".into()), line);
            // Ends like a declaration, so the definition after it is read as its own.
            self.push(Tok::Punct(";".into()), line);
        }
    }

    /// `#define`, `#include`, ... to the end of the line, following `\` continuations.
    fn skip_directive(&mut self) {
        while let Some(c) = self.peek(0) {
            match c {
                '\n' => break,
                '\\' if self.peek(1) == Some('\n') => {
                    self.bump();
                    self.bump();
                }
                '\\' if self.peek(1) == Some('\r') && self.peek(2) == Some('\n') => {
                    self.pos += 1;
                    self.bump();
                    self.bump();
                }
                '/' if self.peek(1) == Some('*') => self.skip_block_comment(),
                '/' if self.peek(1) == Some('/') => self.skip_line_comment(),
                _ => {
                    self.bump();
                }
            }
        }
    }

    /// After the opening `"`: the contents up to the closing quote.
    fn string_body(&mut self) -> String {
        self.bump();
        let mut s = String::new();
        while let Some(c) = self.bump() {
            match c {
                '"' => break,
                '\\' => {
                    s.push(c);
                    if let Some(e) = self.bump() {
                        s.push(e);
                    }
                }
                '\n' => break,
                c => s.push(c),
            }
        }
        s
    }

    fn char_literal(&mut self) -> String {
        let mut s = String::from('\'');
        self.bump();
        while let Some(c) = self.bump() {
            s.push(c);
            match c {
                '\'' | '\n' => break,
                '\\' => {
                    if let Some(e) = self.bump() {
                        s.push(e);
                    }
                }
                _ => {}
            }
        }
        s
    }

    fn ident_or_prefixed_string(&mut self) {
        let line = self.line;
        let mut s = String::new();
        while let Some(c) = self.peek(0) {
            if c == '_' || c.is_alphanumeric() {
                s.push(c);
                self.bump();
            } else {
                break;
            }
        }
        let is_prefix = matches!(s.as_str(), "u8" | "u" | "U" | "L");
        let is_raw_prefix = matches!(s.as_str(), "R" | "u8R" | "uR" | "UR" | "LR");
        if self.peek(0) == Some('"') && is_prefix {
            let body = self.string_body();
            self.push(Tok::Str(body), line);
        } else if self.peek(0) == Some('"') && is_raw_prefix {
            let body = self.raw_string_body();
            self.push(Tok::Str(body), line);
        } else {
            self.push(Tok::Ident(s), line);
        }
    }

    /// `R"delim( ... )delim"`, after the prefix.
    fn raw_string_body(&mut self) -> String {
        self.bump();
        let mut delim = String::new();
        while let Some(c) = self.bump() {
            if c == '(' {
                break;
            }
            delim.push(c);
        }
        let close: Vec<char> = format!("){delim}\"").chars().collect();
        let mut s = String::new();
        while self.peek(0).is_some() {
            if self.chars[self.pos..].starts_with(&close) {
                for _ in 0..close.len() {
                    self.bump();
                }
                break;
            }
            if let Some(c) = self.bump() {
                s.push(c);
            }
        }
        s
    }
}
