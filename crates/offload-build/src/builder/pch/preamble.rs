//! Where a source's preamble ends, as clang's `-preamble-bytes` counts it: its leading
//! directives and comments, whole lines ([`clang_bounds`]), the shorter prefixes a family of
//! sources may share ([`cut_points`]), and a preamble without its comments ([`normalized`]),
//! which sources whose licence headers differ share.

/// Where clang's preamble of a source ends ([`clang_bounds`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bounds {
    /// The preamble's length in bytes.
    pub size: usize,
    /// Whether the token after it starts a line (clang's `PreambleEndsAtStartOfLine`).
    pub ends_at_start_of_line: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Comment,
    Hash,
    /// An identifier; `clean` when written without line splices or escapes.
    Ident {
        clean: bool,
    },
    Other,
    Eof,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Token {
    start: usize,
    end: usize,
    kind: Kind,
    /// Whether an unescaped newline (or the file's start) comes before it.
    sol: bool,
    /// Just after the first unescaped newline before it, if any.
    line_start: Option<usize>,
}

/// clang's raw lexer, as far as the preamble needs it (C++: line comments and digraphs on).
pub(crate) struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
    first: bool,
}

impl<'a> Lexer<'a> {
    fn new(s: &'a [u8]) -> Lexer<'a> {
        let pos = if s.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
        Lexer {
            s,
            pos,
            first: true,
        }
    }

    fn at(&self, i: usize) -> u8 {
        self.s.get(i).copied().unwrap_or(0)
    }

    /// The length of a line splice (`\`, horizontal blanks, a newline) at `i`, or 0.
    fn splice(&self, i: usize) -> usize {
        if self.at(i) != b'\\' {
            return 0;
        }
        let mut j = i + 1;
        while matches!(self.at(j), b' ' | b'\t' | b'\x0b' | b'\x0c') {
            j += 1;
        }
        match (self.at(j), self.at(j + 1)) {
            (b'\r', b'\n') | (b'\n', b'\r') => j + 2 - i,
            (b'\n' | b'\r', _) => j + 1 - i,
            _ => 0,
        }
    }

    /// Skips blanks, newlines and line splices: whether a newline was crossed, and just after
    /// the first one.
    fn blanks(&mut self) -> (bool, Option<usize>) {
        let mut first_nl = None;
        loop {
            match self.at(self.pos) {
                b'\n' | b'\r' if self.pos < self.s.len() => {
                    self.pos += 1;
                    if self.at(self.pos - 1) == b'\r' && self.at(self.pos) == b'\n' {
                        self.pos += 1;
                    }
                    first_nl.get_or_insert(self.pos);
                }
                b' ' | b'\t' | b'\x0b' | b'\x0c' if self.pos < self.s.len() => self.pos += 1,
                b'\\' if self.splice(self.pos) > 0 => self.pos += self.splice(self.pos),
                _ => return (first_nl.is_some(), first_nl),
            }
        }
    }

    fn next(&mut self) -> Token {
        let (nl, line_start) = self.blanks();
        let sol = nl || std::mem::take(&mut self.first);
        let start = self.pos;
        let kind = self.token();
        Token {
            start,
            end: self.pos,
            kind,
            sol,
            line_start,
        }
    }

    /// Lexes one token at `pos` (not a blank) and returns its kind.
    fn token(&mut self) -> Kind {
        let s = self.s;
        let p = self.pos;
        if p >= s.len() {
            return Kind::Eof;
        }
        let (c, d) = (s[p], self.at(p + 1));
        match (c, d) {
            (b'/', b'/') => self.line_comment(),
            (b'/', b'*') => self.block_comment(),
            (b'#', b'#') => {
                self.pos += 2;
                Kind::Other
            }
            (b'#', _) => {
                self.pos += 1;
                Kind::Hash
            }
            (b'%', b':') if !(self.at(p + 2) == b'%' && self.at(p + 3) == b':') => {
                self.pos += 2;
                Kind::Hash
            }
            (b'"' | b'\'', _) => self.quoted(c),
            (b'0'..=b'9', _) | (b'.', b'0'..=b'9') => self.number(),
            _ if is_ident_start(c) => self.ident(),
            _ => {
                self.pos += 1;
                Kind::Other
            }
        }
    }

    fn line_comment(&mut self) -> Kind {
        while self.pos < self.s.len() {
            match self.s[self.pos] {
                b'\n' | b'\r' => break,
                b'\\' if self.splice(self.pos) > 0 => self.pos += self.splice(self.pos),
                _ => self.pos += 1,
            }
        }
        Kind::Comment
    }

    fn block_comment(&mut self) -> Kind {
        match self.s[self.pos + 2..].windows(2).position(|w| w == b"*/") {
            Some(i) => self.pos += 2 + i + 2,
            None => self.pos = self.s.len(),
        }
        Kind::Comment
    }

    /// A string or character literal; an unterminated one ends before the newline.
    fn quoted(&mut self, q: u8) -> Kind {
        self.pos += 1;
        while self.pos < self.s.len() {
            match self.s[self.pos] {
                b'\n' | b'\r' => break,
                b'\\' if self.splice(self.pos) > 0 => self.pos += self.splice(self.pos),
                b'\\' => self.pos = (self.pos + 2).min(self.s.len()),
                c if c == q => {
                    self.pos += 1;
                    break;
                }
                _ => self.pos += 1,
            }
        }
        Kind::Other
    }

    /// A preprocessing number (digit separators and exponent signs included).
    fn number(&mut self) -> Kind {
        self.pos += 1;
        loop {
            let c = self.at(self.pos);
            let prev = self.at(self.pos - 1);
            let sign = matches!(c, b'+' | b'-') && matches!(prev, b'e' | b'E' | b'p' | b'P');
            if is_ident_continue(c) || c == b'.' || c == b'\'' || sign {
                self.pos += 1;
            } else if self.splice(self.pos) > 0 {
                self.pos += self.splice(self.pos);
            } else {
                return Kind::Other;
            }
        }
    }

    fn ident(&mut self) -> Kind {
        let mut clean = true;
        loop {
            let c = self.at(self.pos);
            if self.pos < self.s.len() && is_ident_continue(c) {
                self.pos += 1;
            } else if self.splice(self.pos) > 0 && is_ident_continue(self.at(self.pos + 2)) {
                clean = false;
                self.pos += self.splice(self.pos);
            } else if c == b'\\' && matches!(self.at(self.pos + 1), b'u' | b'U') {
                clean = false;
                self.pos += 2;
            } else {
                return Kind::Ident { clean };
            }
        }
    }
}

pub(crate) fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80
}

pub(crate) fn is_ident_continue(c: u8) -> bool {
    is_ident_start(c) || c.is_ascii_digit()
}

/// The directives clang keeps in a preamble.
pub(crate) const CLANG_DIRECTIVES: &[&str] = &[
    "include",
    "__include_macros",
    "define",
    "undef",
    "line",
    "error",
    "pragma",
    "import",
    "include_next",
    "warning",
    "ident",
    "sccs",
    "assert",
    "unassert",
    "if",
    "ifdef",
    "ifndef",
    "elif",
    "elifdef",
    "elifndef",
    "else",
    "endif",
];

/// The preamble of the PCH that sources including HIP's runtime header after standard
/// headers alone share
/// ([`hoists_runtime`](crate::builder::pch::shared::hoists_runtime),
/// [`prefer_wrapper`](crate::builder::pch::shared::prefer_wrapper)): their directories and
/// their standard headers differ, so no prefix of theirs is shared, but `hip_runtime.h`
/// (ROCm 5.2: 0.1 to 0.4 s of a 0.4 to 1.3 s HeCBench compile with the wrapper's PCH) is.
pub(crate) const RUNTIME_PREAMBLE: &[u8] = b"#include <hip/hip_runtime.h>\n";

/// The directives whose effect a PCH carries identically ([`preamble_len`]).
pub(crate) const SAFE_DIRECTIVES: &[&str] = &[
    "include", "define", "undef", "if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else",
    "endif",
];

/// Macros whose value depends on where they are expanded: a conditional naming one stops
/// [`preamble_len`].
pub(crate) const PLACE_MACROS: &[&str] = &[
    "__FILE__",
    "__LINE__",
    "__COUNTER__",
    "__INCLUDE_LEVEL__",
    "__BASE_FILE__",
    "__FILE_NAME__",
    "__TIMESTAMP__",
];

/// One directive of clang's preamble.
#[derive(Clone, Debug)]
pub(crate) struct Directive {
    name: String,
    /// The `#`.
    start: usize,
    /// Just after the newline that ends it (the file's length when none does).
    end: usize,
}

/// clang's preamble ([`Bounds`]) and its directives, in order.
pub(crate) fn scan(source: &[u8]) -> (Bounds, Vec<Directive>) {
    let mut lx = Lexer::new(source);
    let mut directives: Vec<Directive> = Vec::new();
    let mut comment_start: Option<usize> = None;
    let mut in_directive = false;
    let mut tok = lx.next();
    loop {
        if in_directive {
            if tok.kind == Kind::Eof {
                directives.last_mut().expect("a directive").end = source.len();
                break;
            }
            if !tok.sol {
                tok = lx.next();
                continue;
            }
            in_directive = false;
            let end = tok.line_start.unwrap_or(tok.start);
            directives.last_mut().expect("a directive").end = end;
        }
        if tok.kind == Kind::Comment {
            comment_start.get_or_insert(tok.start);
            tok = lx.next();
            continue;
        }
        if tok.sol && tok.kind == Kind::Hash {
            let hash = tok;
            comment_start = None;
            let name = lx.next();
            let word = &source[name.start..name.end];
            let known = CLANG_DIRECTIVES.iter().any(|d| d.as_bytes() == word);
            if name.kind == (Kind::Ident { clean: true }) && known {
                in_directive = true;
                directives.push(Directive {
                    name: String::from_utf8_lossy(word).into_owned(),
                    start: hash.start,
                    end: source.len(),
                });
                tok = lx.next();
                continue;
            }
            tok = hash;
        }
        break;
    }
    let size = comment_start.unwrap_or(tok.start);
    let bounds = Bounds {
        size,
        ends_at_start_of_line: tok.sol,
    };
    (bounds, directives)
}

/// clang's preamble of `source`: `Lexer::ComputePreamble` without a line limit, as
/// `clang -cc1 -print-preamble` prints it (see the module's documentation for the rules).
#[cfg_attr(not(test), allow(dead_code))] // the tests' reference for `preamble_len`
pub(crate) fn clang_bounds(source: &[u8]) -> Bounds {
    scan(source).0
}

/// The length of the preamble this crate precompiles: whole directive lines from the start
/// of `source`, within clang's preamble, ending where no conditional is open, before the
/// first directive a PCH does not carry identically (see the module's documentation); 0
/// for none. The bytes before it always end with a newline.
pub(crate) fn preamble_len(source: &[u8]) -> usize {
    cut_points(source).last().copied().unwrap_or(0)
}

/// Every length at which the preamble of `source` ([`preamble_len`]) could end, shortest
/// first: after each whole directive line outside any conditional. A shorter one is the
/// preamble that sources sharing only their first includes have in common.
pub(crate) fn cut_points(source: &[u8]) -> Vec<usize> {
    let (bounds, directives) = scan(source);
    let mut depth = 0usize;
    let mut cuts = Vec::new();
    for d in &directives {
        if !SAFE_DIRECTIVES.contains(&d.name.as_str()) || d.end > bounds.size {
            break;
        }
        let text = &source[d.start..d.end];
        let conditional = matches!(d.name.as_str(), "if" | "elif");
        if conditional && PLACE_MACROS.iter().any(|m| contains(text, m.as_bytes())) {
            break;
        }
        match d.name.as_str() {
            "if" | "ifdef" | "ifndef" => depth += 1,
            "endif" if depth == 0 => break,
            "endif" => depth -= 1,
            _ => {}
        }
        let ends_line = matches!(source[..d.end].last(), Some(b'\n' | b'\r'));
        if depth == 0 && ends_line && cuts.last() != Some(&d.end) {
            cuts.push(d.end);
        }
    }
    cuts
}

/// The directives of `source` before `cut` (a [cut point](cut_points)) without their
/// comments, one a line: what a PCH of that prefix holds, whatever comments (a licence
/// header) sources put around them. Its PCH stands for the first `cut` bytes of every source
/// with the same text, each compile skipping its own (`-preamble-bytes`): clang lexes the
/// rest of the source from there, its lines counted in the source itself.
pub(crate) fn normalized(source: &[u8], cut: usize) -> Vec<u8> {
    let (_, directives) = scan(source);
    let mut out = Vec::new();
    for d in directives.iter().take_while(|d| d.end <= cut) {
        let text = without_comments(&source[d.start..d.end]);
        let end = text
            .iter()
            .rposition(|c| !c.is_ascii_whitespace())
            .map_or(0, |i| i + 1);
        out.extend_from_slice(&text[..end]);
        out.push(b'\n');
    }
    out
}

/// `text` with its `//` and `/* */` comments removed (a block comment becomes a space), string
/// literals kept as they are.
pub(crate) fn without_comments(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        match (text[i], text.get(i + 1)) {
            (b'"', _) => {
                let close = text[i + 1..]
                    .iter()
                    .position(|&c| c == b'"' || c == b'\n')
                    .map_or(text.len(), |k| i + 2 + k);
                out.extend_from_slice(&text[i..close.min(text.len())]);
                i = close;
            }
            (b'/', Some(b'/')) => {
                while i < text.len() && text[i] != b'\n' {
                    i += 1;
                }
            }
            (b'/', Some(b'*')) => {
                let close = memchr::memmem::find(&text[i + 2..], b"*/");
                i = close.map_or(text.len(), |k| i + 2 + k + 2);
                out.push(b' ');
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

pub(crate) fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}
