//! Precompiled preambles (issue 25): where a source's preamble ends, and the commands that
//! precompile it once per (compiler, architecture, flags, preamble) and use it in the device
//! compile, with device code byte-identical to a compile without it. Part of the plan stage,
//! like [`crate::builder::toolchain::clang`]: these functions spell commands as data and run nothing. The plan
//! (`plan.rs`, `pch_jobs_of`) gives every clang HIP compile job the PCH job of its preamble
//! (one per key: sources sharing a preamble share it); the jobs stage (`compile.rs`) decides
//! which are made, makes them and uses them.
//!
//! # In a build
//!
//! **When it pays.** Making a PCH costs about one parse of the preamble (about the compile
//! itself for a small kernel), so one is made only where it is used again:
//! - it is in the cache and fresh (its record: the headers it read, by content, and the PCH's
//!   hash): used, whichever build or out-dir sharing the cache made it;
//! - two or more compiles of this build use it (sources sharing their leading includes, for
//!   one architecture): made first;
//! - one compile uses it: made only when an earlier build compiled that preamble (its
//!   `.seen` mark in the cache, left by the build that compiled it without); so a cold build
//!   of one source costs what it did without PCH (the mark is an empty file), and every
//!   edit of a kernel body after it uses the PCH. That build makes it afterwards, in the
//!   background (`Build::pch_background`, clangd's way): a detached clang at the lowest
//!   priority, started once the machine is idle, writes it into `<key>.bg/` and holds that
//!   directory's `lock` (its standard input) while it runs; beside it, its `manifest`: the
//!   headers it is to read with their content, and the context. The next build that needs
//!   the PCH adopts it when the lock is free and the manifest still holds (content
//!   decides), as if it had made it; one whose clang still runs is taken over: killed, and
//!   made (two or more compiles) or started again after the build (one). Without the
//!   background (off, or the clang failed or was killed), the build after the first edit
//!   makes the PCH itself;
//! - sources whose preambles differ but begin alike share the PCH of the common first
//!   lines ([`prefer_shared`]), across builds sharing the cache (one build per source, as
//!   `make -j` runs them).
//!
//! A PCH that clang refuses or warns about is not used; its `.refused` record beside it keeps
//! what clang said (the one place this is told) and, while the headers it read are unchanged,
//! keeps later builds from trying again.
//!
//! **Scheduling.** The PCH jobs start first; the compiles follow, longest first (by the time
//! each took when it last ran, kept beside its cache record; one never run counts as the
//! longest; then the larger source first; those using a PCH, which parse less, last), each
//! compile that uses a PCH as soon as that PCH is made (`pool::run_after`); PCH jobs take
//! jobserver tokens as compiles do, so no more processes run than the jobserver allows.
//!
//! **The compile.** Same job key, `-cuid` and files as without PCH, so both fill the same
//! cache entry; its record lists the headers the PCH read (not the PCH nor its preamble
//! file), so a header change recompiles it and makes the PCH again. A compile that fails or
//! prints anything with the PCH runs again without it, and that result is the one used.
//! `Build::pch(false)`, `OFFLOAD_BUILD_PCH=0`, `compile --no-pch` and CMake's `NO_PCH` turn
//! all of this off. CUDA compiled by clang gets PCHs as HIP does (the PTX and cubins are the
//! same bytes; with a toolkit's headers, the compile takes a fifth of the time), except
//! without a toolkit, where clang's builtins come with an `-include`d prelude; nvcc gets
//! none, and neither do builds under a compiler cache
//! (a launcher named `sccache`, `ccache`, `cachepot`, `buildcache`), which cannot cache a
//! compile with a PCH (sccache refuses its `-Xclang` pairs, ccache `-preamble-bytes`).
//!
//! # The mechanism, and why
//!
//! Tried by hand with Debian's ROCm 5.2 and its clang 15 (`--rocm-path=/usr`), clang 19 and
//! 22 (`-nogpulib -nogpuinc`), HIP for `gfx90a`, on a saxpy including `hip/hip_runtime.h`,
//! macros defined before the includes that a header without include guards reads, a quoted
//! include, `__FILE__`/`__LINE__` in a kernel, and errors in the body:
//!
//! - **clang's preamble mechanism, from the command line** (chosen). The first `N` bytes of
//!   the source (the preamble, a run of whole directive lines) are written to a file of their
//!   own; `clang <the compile's flags> -S <that file> -iquote <source dir> -Xclang -emit-pch
//!   -Xclang -fno-pch-timestamp -Xclang -fpch-instantiate-templates -o P.pch` precompiles
//!   them; the compile is the unchanged command plus `-Xclang -include-pch -Xclang P.pch
//!   -Xclang -preamble-bytes=N,1`: clang loads the PCH as a *preamble* and starts lexing
//!   the unchanged source at byte `N`, so every location in the body keeps its file, line and column, and `__FILE__`, `__LINE__`
//!   and the depfile are those of the source. The code objects are byte-identical to a compile
//!   without PCH for all three compilers and every case above (when the compile gets an
//!   explicit `-cuid`, as this crate always passes: clang's own CUID hashes the arguments).
//!   The PCH is deterministic with `-fno-pch-timestamp`.
//! - **Templates are instantiated in the PCH** (`-fpch-instantiate-templates`, which
//!   clang-cl's `/Yc` turns on): the implicit instantiations the preamble asks for are done
//!   once, at the end of the preamble, instead of at the end of every compile using the PCH.
//!   For the 8-source project of `benches/pch.sh` (clang 15, gfx90a) that is 127 ms of each
//!   compile's 495 ms (`-ftime-trace`: `PerformPendingInstantiations`), and the code objects
//!   stay the same bytes. It moves those instantiations' point of instantiation to the end of
//!   the preamble; a program whose meaning depends on which of the two points is taken is
//!   ill-formed, no diagnostic required (\[temp.point\]).
//! - clangd's way (the source itself remapped to its preamble while the PCH is made:
//!   `-remap-file`, `-ivfsoverlay`) does not work from a command line: clang records the
//!   source's size in the PCH and refuses the compile ("file ... has been modified since the
//!   precompiled header was built: size changed"), `-fno-validate-pch` included; only a
//!   buffer remapped in memory (clangd's) is exempt. Hence a preamble file of its own.
//! - `-include-pch` of a header made of the preamble, with the preamble removed from a
//!   rewritten source: `__FILE__`, the depfile and quoted includes name the rewritten file,
//!   and lines shift unless padded. Keeping the source whole instead (include guards skip
//!   the second inclusion) reparses every header without guards, and redefines what it
//!   declares. Both rejected.
//!
//! Quoted includes of the preamble are looked up in the directory of the including file; the
//! preamble file lies in the cache, so the PCH command adds `-iquote <source dir>` (first in
//! the quoted search, as the source's directory would be) and the key holds that directory.
//!
//! **Diagnostics.** Body diagnostics keep their message, file, line and column, but two
//! things differ with a PCH: a note pointing at a macro defined in the preamble names the
//! preamble file, and an error inside a header gets one more `In file included from <source>:1:`
//! line (clang gives the PCH's file an include location at the start of the source); warnings
//! raised while the preamble is parsed are printed when the PCH is made, not by the compile.
//! So the compile's output is only used when the PCH was made without any diagnostic and the
//! compile with it printed nothing and succeeded; otherwise the compile runs again without
//! PCH and that result (its diagnostics, its failure) is the one shown: diagnostics are then
//! exactly those of a compile without PCH.
//!
//! **What clang checks, and the key.** clang refuses a PCH made for another target CPU, with
//! other language options (`-std`, `-fgpu-rdc`, `-ffast-math`, `-fno-exceptions`) or by
//! another clang version ("uses an older format"), but accepts other `-D`, `-I`, `-g` or
//! `-O2` against `-O3`, which can change what the preamble means. With `-std=c++20`, clang 15
//! and 19 fail the compile with the PCH of `hip/hip_runtime.h`'s preamble ("'operator new'
//! has different definitions in different modules": ODR checks between the preamble and
//! the source), so C++20 and later turn the PCH off. With `-g` the code object differs
//! (clang 15 and ROCm's headers: the debug entries of `using std::abs` and the like, read
//! from the PCH, are missing), so debug information turns it off too. So the key is the whole
//! PCH command (compiler identity, every flag and the architecture; the PCH is made without the launcher), the preamble
//! bytes, and the source directory; the headers the PCH read are checked by content through
//! its depfile, as a compile's are. Flags that change how a PCH is read (`-include`,
//! `-imacros`, `-Xclang`, modules, `-save-temps`) or warnings a PCH would hide
//! (`-Weverything`, `-Wunused-macros`: unused macros of the preamble) turn the PCH off.
//!
//! **Cost** (this 2-core machine, Debian's ROCm 5.2 clang 15, saxpy for `gfx90a`, median of
//! 3): compile without PCH 0.86 s, making the PCH 0.91 s, compile with it 0.19 s; the PCH is
//! 8.7 MB.
//!
//! # The preamble
//!
//! [`clang_bounds`] is clang's `Lexer::ComputePreamble` (clang/lib/Lex/Lexer.cpp; what
//! `clang -cc1 -print-preamble` prints, which the tests compare with): a raw lexer keeping
//! comments runs from the start of the file (after a UTF-8 byte order mark) and
//! - skips comments;
//! - at a `#` (or `%:`) that starts a line, reads the next token: when it is an identifier
//!   written without line splices and one of `include`, `__include_macros`, `define`,
//!   `undef`, `line`, `error`, `pragma`, `import`, `include_next`, `warning`, `ident`, `sccs`,
//!   `assert`, `unassert`, `if`, `ifdef`, `ifndef`, `elif`, `elifdef`, `elifndef`, `else`,
//!   `endif`, the directive is skipped up to the next token that starts a line (a block
//!   comment spanning lines or a line splice continues it); anything else (another
//!   directive, the null directive `#` alone, `# /*c*/ include`) ends the preamble at the `#`;
//! - any other token ends it (`module;` opens a C++20 global module fragment that stays in
//!   the preamble; not modelled here: this crate's preamble stops there);
//! - the end is that token's start, or the start of the comments just before it (a comment
//!   documenting a declaration stays with it); it may be inside an open `#if`.
//!
//! [`preamble_len`] is the part this crate precompiles: the directives of clang's preamble
//! up to the last one after which no conditional is open, ending with its line, and stopping
//! before the first directive whose effect a PCH does not carry identically: `#pragma`
//! (diagnostic and packing state are kept per file), `#line`, `#error`, `#warning`,
//! `#ident`, `#sccs`, `#assert`, `#unassert`, `#import`, `#include_next`,
//! `#__include_macros`, and an `#if`/`#elif` naming `__FILE__`, `__LINE__`, `__COUNTER__`,
//! `__INCLUDE_LEVEL__`, `__BASE_FILE__`, `__FILE_NAME__` or `__TIMESTAMP__`. An unterminated
//! `#if` cannot be precompiled from the command line (clang keeps the conditional stack of a
//! preamble only in memory), hence the stop at depth zero. Not modelled: line splices inside
//! `/*`, `//` and raw string literals spanning lines in a directive (each only makes the
//! preamble end elsewhere than clang's, never splits a line).

pub(crate) mod background;
pub(crate) mod lifecycle;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::xxh3_128;

use crate::builder::arch::Arch;
use crate::builder::command::{Command, Domain, KeyBuilder};
use crate::builder::job::{self, CompileJob, CompileOptions};
use crate::builder::toolchain::Toolchain;
use crate::builder::toolchain::clang;

/// Where clang's preamble of a source ends ([`clang_bounds`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bounds {
    /// The preamble's length in bytes.
    pub size: usize,
    /// Whether the token after it starts a line (clang's `PreambleEndsAtStartOfLine`).
    pub ends_at_start_of_line: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
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
struct Token {
    start: usize,
    end: usize,
    kind: Kind,
    /// Whether an unescaped newline (or the file's start) comes before it.
    sol: bool,
    /// Just after the first unescaped newline before it, if any.
    line_start: Option<usize>,
}

/// clang's raw lexer, as far as the preamble needs it (C++: line comments and digraphs on).
struct Lexer<'a> {
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

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80
}

fn is_ident_continue(c: u8) -> bool {
    is_ident_start(c) || c.is_ascii_digit()
}

/// The directives clang keeps in a preamble.
const CLANG_DIRECTIVES: &[&str] = &[
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

/// The directives whose effect a PCH carries identically ([`preamble_len`]).
const SAFE_DIRECTIVES: &[&str] = &[
    "include", "define", "undef", "if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else",
    "endif",
];

/// Macros whose value depends on where they are expanded: a conditional naming one stops
/// [`preamble_len`].
const PLACE_MACROS: &[&str] = &[
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
struct Directive {
    name: String,
    /// The `#`.
    start: usize,
    /// Just after the newline that ends it (the file's length when none does).
    end: usize,
}

/// clang's preamble ([`Bounds`]) and its directives, in order.
fn scan(source: &[u8]) -> (Bounds, Vec<Directive>) {
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
fn without_comments(text: &[u8]) -> Vec<u8> {
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

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Flags with which a compile gets no PCH: they change how a PCH is read or made
/// (`-include`, `-imacros`, `-Xclang`, modules, `-save-temps`), ask for warnings a PCH
/// would hide (`-Weverything`, `-Wunused-macros`), or choose C++20 or later, where clang 15
/// and 19 reject the preamble of `hip/hip_runtime.h` ("'operator new' has different
/// definitions in different modules", from `cuda_wrappers/new`), or debug information
/// (`-g…`): clang does not emit the debug entries of using-declarations it read from a PCH
/// (`DW_TAG_imported_declaration` of `using std::abs`), so the code object differs.
pub(crate) fn flag_refuses_pch(flag: &OsStr) -> bool {
    let f = flag.as_encoded_bytes();
    let prefixes: [&[u8]; 8] = [
        b"-include",
        b"-imacros",
        b"-Xclang",
        b"-fmodules",
        b"-save-temps",
        b"-emit-",
        b"-Weverything",
        b"-Wunused-macros",
    ];
    let cxx20 = [
        b"-std=c++2".as_slice(),
        b"-std=gnu++2",
        b"--std=c++2",
        b"--std=gnu++2",
    ];
    let debug = f.starts_with(b"-g") && !f.starts_with(b"-gno-");
    prefixes.iter().any(|p| f.starts_with(p))
        || cxx20.iter().any(|p| f.starts_with(p))
        || debug
        || f == b"--precompile"
}

/// One planned precompiled preamble: the preamble file to write, the command making the PCH
/// from it, and the files named after its key in the cache directory.
#[derive(Clone, Debug)]
pub(crate) struct PchJob {
    /// The architecture.
    pub arch: Arch,
    /// The preamble's bytes (the source's first [`PchJob::len`] bytes).
    pub preamble: Vec<u8>,
    /// Where the jobs stage writes [`PchJob::preamble`] before the command runs (named
    /// after the key; its content never changes).
    pub preamble_file: PathBuf,
    /// The command making the PCH (`-S -Xclang -emit-pch`), without the launcher.
    pub command: Command,
    /// The host-side preprocessing of the preamble file that writes the depfile, for
    /// compilers that write none in a device-only compile (clang 22).
    pub deps_only: Command,
    /// The PCH.
    pub pch: PathBuf,
    /// Its depfile: the headers whose content the record checks.
    pub depfile: PathBuf,
    /// Its cache record (as a compile job's: inputs' content, outputs, diagnostics).
    pub record: PathBuf,
    /// The key: compiler identity, every argument, the preamble's bytes and the
    /// source directory (through `-iquote`).
    pub key: u128,
    /// The key without the preamble's bytes: the PCHs of one family differ only in their
    /// preamble, so one made of a preamble's first lines serves every source starting so.
    pub family: u128,
}

impl PchJob {
    /// The directory where the PCH of `p` is made in the background
    /// ([`crate::builder::pch::background`]): beside its record, `.bg`.
    pub(crate) fn background_dir(&self) -> PathBuf {
        self.record.with_extension("bg")
    }

    /// The paths of `p`'s outputs (the PCH, its depfile) in `dir`, under their own file names.
    pub(crate) fn in_dir<'p>(&'p self, dir: &'p Path) -> impl Fn(&Path) -> Option<PathBuf> + 'p {
        move |q: &Path| {
            (q == self.pch || q == self.depfile)
                .then(|| dir.join(q.file_name().unwrap_or_default()))
        }
    }

    /// The preamble's length (the compile's `-preamble-bytes` when it is the source's own).
    pub fn len(&self) -> usize {
        self.preamble.len()
    }
}

/// What makes the command a PCH's: `-emit-pch`, no timestamp in it (the same bytes every
/// time), and the preamble's template instantiations done in it (see the module docs).
const PCH_FLAGS: [&str; 6] = [
    "-Xclang",
    "-emit-pch",
    "-Xclang",
    "-fno-pch-timestamp",
    "-Xclang",
    "-fpch-instantiate-templates",
];

/// The PCH job for the preamble of `source` (whose content is `text`) for `arch`, with the
/// options of its compile, or `None` when the source has no preamble or a flag refuses PCH
/// ([`flag_refuses_pch`]). Sources of one directory with the same preamble get the same job.
pub(crate) fn pch_job(
    o: &CompileOptions,
    tc: &Toolchain,
    cache_dir: &Path,
    source: &Path,
    text: &[u8],
    arch: &Arch,
    rdc: bool,
) -> Option<PchJob> {
    let len = preamble_len(text);
    (len > 0)
        .then(|| text[..len].to_vec())
        .and_then(|preamble| prefix_job(o, tc, cache_dir, source, preamble, arch, rdc))
}

/// [`pch_job`] for `preamble`: the source's own preamble, or the [`normalized`] text of its
/// first directives ([`prefer_shared`]).
pub(crate) fn prefix_job(
    o: &CompileOptions,
    tc: &Toolchain,
    cache_dir: &Path,
    source: &Path,
    preamble: Vec<u8>,
    arch: &Arch,
    rdc: bool,
) -> Option<PchJob> {
    let (mut args, _) = clang::device_args(o, tc, arch, rdc);
    if args.iter().any(|f| flag_refuses_pch(f)) || preamble.is_empty() {
        return None;
    }
    // The PCH is the front end's output alone: `-S` (HIP's `-c` would link a code object).
    for a in args.iter_mut().filter(|a| *a == "-c") {
        *a = OsString::from("-S");
    }
    let dir = source.parent().unwrap_or(Path::new("/"));
    args.extend(["-iquote".into(), dir.as_os_str().to_os_string()]);
    args.extend(PCH_FLAGS.map(OsString::from));
    let stand_in = PathBuf::from("<preamble>");
    args.extend([
        stand_in.clone().into_os_string(),
        "-o".into(),
        job::OUT.into(),
    ]);
    // No launcher: the PCH is cached here by content already (and `sccache` or `ccache`
    // cannot cache `-emit-pch`); the compile using it goes through the launcher.
    let mut c = Command::new(&tc.clang);
    c.env = o.env.clone();
    c.args = args;
    c.inputs = vec![stand_in];
    let mut k = KeyBuilder::new(Domain::Preamble);
    k.u128(tc.identity);
    let mut f = k.clone();
    c.add_to_key(&mut k, |_| Some(xxh3_128(&preamble)));
    let key = k.finish();
    c.add_to_key(&mut f, |_| Some(0));
    let family = f.finish();
    let base = cache_dir.join(format!("preamble-{}-{:016x}", arch.file_tag(), key as u64));
    let (preamble_file, pch, depfile) = (
        base.with_extension("hip"),
        base.with_extension("pch"),
        base.with_extension("d"),
    );
    for a in c.args.iter_mut() {
        if *a == *"<preamble>" {
            *a = preamble_file.clone().into_os_string();
        } else if *a == *job::OUT {
            *a = pch.clone().into_os_string();
        }
    }
    c.inputs = vec![preamble_file.clone()];
    c.outputs = vec![pch.clone()];
    if o.depfile_in_compile {
        c.add_args(["-MD", "-MF"]).add_arg(&depfile);
        c.depfile = Some(depfile.clone());
    }
    let deps_only = clang::deps_only(&c, &depfile);
    Some(PchJob {
        arch: arch.clone(),
        preamble,
        preamble_file,
        command: c,
        deps_only,
        pch,
        depfile,
        record: base.with_extension("rec"),
        key,
        family,
    })
}

/// How many preambles of a family the cache keeps ([`prefer_shared`]).
const FAMILY_KEPT: usize = 64;

/// The PCH a compile of `source` (content `text`) uses, given `full`, the job of its whole
/// preamble, and `siblings`, the other sources of this build with their whole preambles:
/// `full` when its PCH exists or was asked for (made, marked seen, or in the background),
/// or when another source of this build has the very same preamble; else a PCH of the
/// preamble's first lines shared with other sources of the same family (same compiler,
/// flags, architecture and directory): the longest such prefix whose PCH exists, else the
/// prefix the most other sources (of this build, or seen by earlier builds in the cache,
/// `<cache>/preambles-<arch>-<family>/`) start with, when one does — it is then marked seen,
/// so that this build makes it: one PCH of the shared includes serves every source that
/// starts with them, across the one-source builds of a `make -j` project. A prefix holds
/// at least one `#include`; the compile parses the rest of its preamble itself. Prefixes
/// are compared and precompiled without their comments ([`normalized`]). Earlier preambles
/// of the same source do not count: a single source keeps its own PCH. The job, and how
/// many bytes of the source it stands for.
#[allow(clippy::too_many_arguments)] // prefix_job's, the whole preamble's job and siblings
pub(crate) fn prefer_shared(
    full: PchJob,
    o: &CompileOptions,
    tc: &Toolchain,
    cache_dir: &Path,
    source: &Path,
    text: &[u8],
    rdc: bool,
    siblings: &[(&Path, &[u8])],
) -> (PchJob, usize) {
    let family_dir = cache_dir.join(format!(
        "preambles-{}-{:016x}",
        full.arch.file_tag(),
        full.family as u64
    ));
    remember(&family_dir, &full, source);
    let known = full.record.is_file()
        || full.record.with_extension("seen").is_file()
        || full.record.with_extension("bg").is_dir();
    let shared_whole = siblings.iter().any(|(_, q)| *q == full.preamble.as_slice());
    let whole = full.len();
    // Each shorter cut with an include, and the text a PCH of it holds.
    let prefixes: Vec<(usize, Vec<u8>)> = cut_points(text)
        .into_iter()
        .filter(|&c| c < whole)
        .map(|c| (c, normalized(text, c)))
        .filter(|(_, n)| contains(n, b"include"))
        .collect();
    if known || shared_whole || prefixes.is_empty() {
        return (full, whole);
    }
    let job = |n: &[u8]| prefix_job(o, tc, cache_dir, source, n.to_vec(), &full.arch, rdc);
    for (c, n) in prefixes.iter().rev() {
        if let Some(p) = job(n).filter(|p| p.record.is_file()) {
            return (p, *c);
        }
    }
    // The other sources, each with the texts its preamble's prefixes hold.
    let seen = family(&family_dir, &full, source);
    let mut others: Vec<(&Path, Vec<Vec<u8>>)> = seen
        .iter()
        .map(|(s, q)| (s.as_path(), q.as_slice()))
        .chain(siblings.iter().copied())
        .filter(|(s, _)| *s != source)
        .map(|(s, q)| {
            (
                s,
                cut_points(q)
                    .into_iter()
                    .map(|c| normalized(q, c))
                    .collect(),
            )
        })
        .collect();
    others.sort_unstable();
    others.dedup();
    let mut best = (0, 0);
    for (k, (_, n)) in prefixes.iter().enumerate() {
        let mut sources: Vec<&Path> = others
            .iter()
            .filter(|(_, texts)| texts.contains(n))
            .map(|(s, _)| *s)
            .collect();
        sources.dedup();
        if sources.len() >= best.0.max(1) {
            best = (sources.len(), k);
        }
    }
    let (c, n) = &prefixes[best.1];
    match job(n).filter(|_| best.0 >= 1) {
        Some(p) => {
            let _ = crate::builder::fs::write_atomic(&p.record.with_extension("seen"), b"");
            (p, *c)
        }
        None => (full, whole),
    }
}

/// The file of the preamble of `job` for `source` in its family's directory `dir`.
fn family_entry(dir: &Path, job: &PchJob, source: &Path) -> PathBuf {
    let mut k = KeyBuilder::new(Domain::Preamble);
    k.u128(job.key).os(source.as_os_str());
    dir.join(format!("{:032x}", k.finish()))
}

/// Keeps the preamble of `job` for `source` in its family's directory (one file per
/// preamble and source: the source's path, a NUL, the preamble), unless it is there.
fn remember(dir: &Path, job: &PchJob, source: &Path) {
    let own = family_entry(dir, job, source);
    if !own.is_file() {
        let mut entry = source.as_os_str().as_encoded_bytes().to_vec();
        entry.push(0);
        entry.extend_from_slice(&job.preamble);
        let _ = std::fs::create_dir_all(dir);
        let _ = crate::builder::fs::write_atomic(&own, &entry);
    }
}

/// The preambles kept in the family directory `dir` other than that of `job` for `source`,
/// with their sources; the oldest go past [`FAMILY_KEPT`].
fn family(dir: &Path, job: &PchJob, source: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let own = family_entry(dir, job, source);
    let mut entries: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path() != own && !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| {
            let t = e.metadata().and_then(|m| m.modified());
            (t.unwrap_or(std::time::UNIX_EPOCH), e.path())
        })
        .collect();
    entries.sort();
    let drop = entries.len().saturating_sub(FAMILY_KEPT);
    for (_, old) in entries.drain(..drop) {
        let _ = std::fs::remove_file(old);
    }
    entries
        .iter()
        .filter_map(|(_, p)| {
            let entry = std::fs::read(p).ok()?;
            let at = entry.iter().position(|&b| b == 0)?;
            Some((path_from(&entry[..at]), entry[at + 1..].to_vec()))
        })
        .collect()
}

/// A path from its bytes (as [`std::ffi::OsStr::as_encoded_bytes`] gave them on Unix).
fn path_from(bytes: &[u8]) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(OsStr::from_bytes(bytes))
    }
    #[cfg(not(unix))]
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}

/// The arguments that make a compile use `pch`, standing for the source's first `skip`
/// bytes (before the source): `-include-pch` and `-preamble-bytes=<skip>,1`.
pub(crate) fn use_args(pch: &PchJob, skip: usize) -> Vec<OsString> {
    vec![
        "-Xclang".into(),
        "-include-pch".into(),
        "-Xclang".into(),
        pch.pch.clone().into_os_string(),
        "-Xclang".into(),
        format!("-preamble-bytes={skip},1").into(),
    ]
}

/// The compile of `job` using `pch`: its first step with [`use_args`] before the source and
/// the PCH among its inputs. The job's key, `-cuid` and file names stay those of the compile
/// without PCH (the device code is the same), so either fills the same cache entry.
pub(crate) fn compile_with_pch(job: &CompileJob, pch: &PchJob) -> Command {
    let mut c = job.steps[0].clone();
    let at = c
        .args
        .iter()
        .position(|a| Path::new(a) == job.source)
        .unwrap_or(c.args.len());
    c.args.splice(at..at, use_args(pch, job.pch_skip));
    c.inputs.push(pch.pch.clone());
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Bounds {
        clang_bounds(s.as_bytes())
    }

    // Each case's size is what `clang-19 -cc1 -print-preamble` printed for the same text.
    #[test]
    fn clang_bounds_follow_clang() {
        let cases: &[(&str, usize)] = &[
            (
                "#include <hip/hip_runtime.h>\n\n__global__ void k() {}\n",
                30,
            ),
            (
                "// c\n#define A 1\n#if A\n#include <x.h>\n#endif\n/* doc */\nint x;\n",
                45,
            ),
            ("#ifdef FOO\n#include <stddef.h>\nint x;\n#endif\n", 31),
            ("int x;\n#include <a.h>\n", 0),
            ("/* c */ int x;\n", 0),
            ("#include <a.h>\n#\n#include <b.h>\n", 15),
            ("#include <a.h>\n#foo\n", 15),
            ("#include <a.h> /* multi\nline */ int x;\nint y;\n", 39),
            ("#define A \\\n  1\nint x;\n", 16),
            ("#include <a.h>\n#pragma once\n  int x;\n", 30),
            ("%:include <a.h>\nint x;\n", 16),
            ("#in\\\nclude <a.h>\nint x;\n", 0),
            ("#include <a.h>\n# /*c*/ define X\nint x;\n", 15),
            ("#include <a.h>", 14),
            ("\u{feff}#include <a.h>\nint x;\n", 18),
            ("#define S \"/*\"\nint x;\n", 15),
            ("#include <a.h>\r\nint x;\r\n", 16),
            ("#include <a.h>\n// one\n// two\nint x;\n", 15),
        ];
        for (src, size) in cases {
            assert_eq!(b(src).size, *size, "{src:?}");
        }
        assert!(b("#include <a.h>\n  int x;\n").ends_at_start_of_line);
        assert!(!b("/* c */ int x;\n").ends_at_start_of_line);
    }

    #[test]
    fn preamble_len_keeps_whole_safe_lines_outside_conditionals() {
        let len = |s: &str| preamble_len(s.as_bytes());
        assert_eq!(
            len("#include <hip/hip_runtime.h>\n\n__global__ void k() {}\n"),
            29
        );
        // An `#if` open where clang's preamble ends: back to before it.
        assert_eq!(
            len("#include <a.h>\n#ifdef FOO\n#include <b.h>\nint x;\n#endif\n"),
            15
        );
        // A pragma, a line marker or a warning stops it.
        assert_eq!(
            len("#include <a.h>\n#pragma once\n#include <b.h>\nint x;\n"),
            15
        );
        assert_eq!(len("#define A 1\n#line 7\nint x;\n"), 12);
        // A conditional reading a place-dependent macro stops it; a definition does not.
        assert_eq!(
            len("#define F __FILE__\n#if __LINE__ > 1\n#endif\nint x;\n"),
            19
        );
        // A directive continued by a comment or a splice counts whole.
        let s = "#include <a.h> /* multi\nline */ int x;\nint y;\n";
        assert_eq!(len(s), 39);
        assert_eq!(len("#define A \\\n  1\nint x;\n"), 16);
        // A closed conditional is kept; a file of directives only without a final newline
        // keeps its complete lines.
        assert_eq!(len("#if A\n#include <a.h>\n#else\n#endif\nint x;\n"), 34);
        assert_eq!(len("#include <a.h>\n#include <b.h>"), 15);
        assert_eq!(len("int x;\n"), 0);
        assert_eq!(len("#endif\nint x;\n"), 0);
    }

    /// The cut points are the lengths a shared prefix may take: after each whole directive
    /// line outside a conditional, the last one the preamble's length.
    #[test]
    fn cut_points_end_every_whole_line_outside_conditionals() {
        let s = b"#include <a.h>\n#include \"b.h\"\n#if A\n#include <c.h>\n#endif\nint x;\n";
        assert_eq!(cut_points(s), [15, 30, 58]);
        assert_eq!(preamble_len(s), 58);
        assert!(cut_points(b"int x;\n").is_empty());
    }

    /// Sources that differ only in comments around and after their directives have the same
    /// normalized prefix.
    #[test]
    fn normalized_prefixes_ignore_comments() {
        let a = b"// MIT (c) 2022\n#include \"u.h\" // utils\n#include <v>\nint x;\n";
        let b = b"/* (c) 2023\n */\n#include \"u.h\"\n#include /* std */ <v>\nint y;\n";
        let (ca, cb) = (cut_points(a), cut_points(b));
        assert_eq!(normalized(a, ca[0]), b"#include \"u.h\"\n");
        assert_eq!(normalized(a, ca[0]), normalized(b, cb[0]));
        assert_ne!(
            normalized(a, ca[1]),
            normalized(b, cb[1]),
            "a block comment is a space"
        );
        assert_eq!(
            normalized(b"#define S \"//x\"\n", 16),
            b"#define S \"//x\"\n"
        );
    }

    #[test]
    fn refusing_flags() {
        let refused = [
            "-include",
            "-includefoo.h",
            "-Xclang",
            "-Weverything",
            "-fmodules",
            "-std=c++20",
            "-std=gnu++2b",
            "-g",
            "-gdwarf-5",
        ];
        for f in refused {
            assert!(flag_refuses_pch(OsStr::new(f)), "{f}");
        }
        for f in [
            "-O2",
            "-DX",
            "-Wall",
            "-I/x",
            "-std=c++17",
            "-gno-column-info",
        ] {
            assert!(!flag_refuses_pch(OsStr::new(f)), "{f}");
        }
    }
}
