//! A parser for LLVM's `cl` command-line syntax, as the LLVM tools accept it.
//!
//! - `-name=value`, `--name=value`, and `-name value` for options that take a value;
//! - boolean options take no separate value but accept `=true|false|1|0` (and the
//!   capitalized spellings);
//! - list options may repeat, comma-separated lists are split;
//! - scalar options may repeat: the last occurrence wins;
//! - `@file` arguments are replaced by the file's arguments (GNU quoting rules);
//! - errors print as `<program>: for the --name option: …` and
//!   `<program>: Unknown command line argument '…'.  Try: '<argv0> --help'`, where
//!   `<program>` is the file name of argv\[0\]. Parsing continues after an error so
//!   that every problem is reported, as LLVM does, then required options are checked.

use std::collections::HashMap;
use std::fmt::Write as _;

/// What kind of value an option takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A boolean flag (`-x`, `-x=false`).
    Flag,
    /// One string value; the last occurrence wins.
    Str,
    /// A string value per occurrence, all kept.
    List,
    /// Like `List`, and each value is split at commas.
    CommaList,
    /// An unsigned 32-bit integer (`cl::opt<unsigned>`).
    Uint,
    /// A signed 32-bit integer (`cl::opt<int>`).
    Int,
}

/// One option a tool accepts.
#[derive(Clone, Copy, Debug)]
pub struct Opt {
    /// The name without dashes.
    pub name: &'static str,
    /// Its value kind.
    pub kind: Kind,
    /// Must occur at least once.
    pub required: bool,
}

impl Opt {
    /// An optional option.
    pub const fn new(name: &'static str, kind: Kind) -> Opt {
        Opt {
            name,
            kind,
            required: false,
        }
    }

    /// An option that must occur at least once.
    pub const fn required(name: &'static str, kind: Kind) -> Opt {
        Opt {
            name,
            kind,
            required: true,
        }
    }
}

/// The result of parsing.
#[derive(Debug, Default)]
pub struct Parsed {
    values: HashMap<&'static str, Vec<String>>,
    /// Error lines, already formatted, in the order found.
    pub errors: Vec<String>,
    /// `--help`, `--help-list` (or their hidden variants) was given.
    pub help: bool,
    /// `--version` was given.
    pub version: bool,
    /// The help asked for is the uncategorized list (`--help-list`, `--help-list-hidden`).
    pub help_list: bool,
    /// Positional arguments, in order (see [`parse_with_positional`]).
    pub positional: Vec<String>,
}

impl Parsed {
    /// How many times the option occurred (a comma list counts once per occurrence).
    pub fn occurrences(&self, name: &str) -> usize {
        self.values.get(name).map_or(0, Vec::len)
    }

    /// All values of a list option, comma lists split.
    pub fn list(&self, name: &str) -> Vec<String> {
        self.values
            .get(name)
            .map(|v| {
                v.iter()
                    .flat_map(|s| s.split(',').map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// All values of a list option, as given.
    pub fn raw_list(&self, name: &str) -> Vec<String> {
        self.values.get(name).cloned().unwrap_or_default()
    }

    /// The last value of a scalar option.
    pub fn last(&self, name: &str) -> Option<&str> {
        self.values
            .get(name)
            .and_then(|v| v.last())
            .map(String::as_str)
    }

    /// A boolean flag's value (false when absent).
    pub fn flag(&self, name: &str) -> bool {
        self.last(name).is_some_and(|v| v == "1")
    }

    /// A boolean flag's value when it was given, else `default` (what the environment says).
    pub fn flag_or(&self, name: &str, default: bool) -> bool {
        if self.occurrences(name) > 0 {
            self.flag(name)
        } else {
            default
        }
    }
}

/// Parses a boolean value as `cl::parser<bool>` does.
fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "" | "true" | "TRUE" | "True" | "1" => Some(true),
        "false" | "FALSE" | "False" | "0" => Some(false),
        _ => None,
    }
}

/// Parses an integer with LLVM's automatic radix (`0x`, `0b`, `0o`, leading `0`).
pub fn parse_llvm_integer(v: &str) -> Option<i128> {
    let (neg, digits) = match v.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, v),
    };
    let (radix, digits) = if let Some(d) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        (16, d)
    } else if let Some(d) = digits
        .strip_prefix("0b")
        .or_else(|| digits.strip_prefix("0B"))
    {
        (2, d)
    } else if let Some(d) = digits.strip_prefix("0o") {
        (8, d)
    } else if digits.len() > 1 && digits.starts_with('0') && digits.as_bytes()[1].is_ascii_digit() {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let n = i128::from_str_radix(digits, radix).ok()?;
    Some(if neg { -n } else { n })
}

fn dashes(name: &str) -> &'static str {
    if name.chars().count() == 1 { "-" } else { "--" }
}

/// Levenshtein distance (LLVM's `edit_distance` with replacements allowed).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Expands `@file` arguments (recursively, GNU tokenization). A file that cannot be
/// read leaves the argument as it is, as LLVM does.
pub fn expand_response_files(args: Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    expand_into(args, &mut out, 0);
    out
}

fn expand_into(args: Vec<String>, out: &mut Vec<String>, depth: usize) {
    for arg in args {
        match arg.strip_prefix('@') {
            Some(path) if depth < 20 => match std::fs::read(offload_formats::id::raw::os(path)) {
                Ok(bytes) => expand_into(
                    tokenize_gnu(&offload_formats::id::raw::text(&bytes)),
                    out,
                    depth + 1,
                ),
                Err(_) => out.push(arg),
            },
            _ => out.push(arg),
        }
    }
}

/// Splits response-file text like GNU tools: whitespace separates, quotes group,
/// backslash escapes the next character.
pub fn tokenize_gnu(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_token = false;
    let mut chars = text.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_token = true;
            }
            (None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
                in_token = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_token {
                    out.push(std::mem::take(&mut cur));
                    in_token = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_token = true;
            }
        }
    }
    if in_token {
        out.push(cur);
    }
    out
}

/// The file name part of argv\[0\], which LLVM prints before its parse errors.
pub fn program_name(argv0: &str) -> &str {
    argv0.rsplit('/').next().unwrap_or(argv0)
}

/// Parses `args` (without argv\[0\]) against `opts`. `suggest` lists the names that
/// may be offered in "Did you mean" hints, in the order they are tried.
pub fn parse(argv0: &str, args: &[String], opts: &[Opt], suggest: &[&str]) -> Parsed {
    parse_with_positional(argv0, args, opts, suggest, 0)
}

/// Like [`parse`], for a tool with one optional positional option
/// (`cl::opt<…>(cl::Positional)`) taking at most `max_positional` values. Extra
/// positional arguments are reported after every other error, as LLVM does:
/// `<program>: Too many positional arguments specified!` and
/// `Can specify at most N positional arguments: See: <argv0> --help`.
/// With `max_positional == 0` every positional argument is an unknown argument.
pub fn parse_with_positional(
    argv0: &str,
    args: &[String],
    opts: &[Opt],
    suggest: &[&str],
    max_positional: usize,
) -> Parsed {
    let prog = program_name(argv0);
    let mut too_many = false;
    let mut p = Parsed::default();
    let find = |name: &str| opts.iter().find(|o| o.name == name);
    let mut i = 0;
    let mut positional_only = false;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        let stripped = if positional_only || arg == "-" || !arg.starts_with('-') {
            None
        } else if arg == "--" {
            positional_only = true;
            continue;
        } else {
            Some(arg.strip_prefix("--").unwrap_or(&arg[1..]))
        };
        let Some(body) = stripped else {
            if max_positional > 0 {
                if p.positional.len() < max_positional {
                    p.positional.push(arg.clone());
                } else {
                    too_many = true;
                }
                continue;
            }
            let _ = write!(
                p.errors_line(),
                "{prog}: Unknown command line argument '{arg}'.  Try: '{argv0} --help'"
            );
            continue;
        };
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        match name {
            "help" | "help-list" | "help-hidden" | "help-list-hidden" => {
                p.help = true;
                p.help_list = name.starts_with("help-list");
                return p;
            }
            "version" => {
                p.version = true;
                return p;
            }
            _ => {}
        }
        let Some(opt) = find(name) else {
            let _ = write!(
                p.errors_line(),
                "{prog}: Unknown command line argument '{arg}'.  Try: '{argv0} --help'"
            );
            if let Some(near) = nearest(name, value, suggest) {
                p.errors.push(format!("{prog}: Did you mean '{near}'?"));
            }
            continue;
        };
        let value = match (opt.kind, value) {
            (Kind::Flag, v) => match parse_bool(v.unwrap_or("")) {
                Some(b) => (if b { "1" } else { "0" }).to_owned(),
                None => {
                    p.errors.push(format!(
                        "{prog}: for the {}{} option: '{}' is invalid value for boolean argument! Try 0 or 1",
                        dashes(opt.name),
                        opt.name,
                        v.unwrap_or("")
                    ));
                    continue;
                }
            },
            (_, Some(v)) => v.to_owned(),
            (_, None) if i < args.len() => {
                i += 1;
                args[i - 1].clone()
            }
            (_, None) => {
                p.errors.push(format!(
                    "{prog}: for the {}{} option: requires a value!",
                    dashes(opt.name),
                    opt.name
                ));
                continue;
            }
        };
        let valid = match opt.kind {
            Kind::Uint => {
                parse_llvm_integer(&value).is_some_and(|n| (0..=u32::MAX as i128).contains(&n))
            }
            Kind::Int => parse_llvm_integer(&value)
                .is_some_and(|n| (i32::MIN as i128..=i32::MAX as i128).contains(&n)),
            _ => true,
        };
        if !valid {
            let what = if opt.kind == Kind::Uint {
                "uint"
            } else {
                "integer"
            };
            p.errors.push(format!(
                "{prog}: for the {}{} option: '{value}' value invalid for {what} argument!",
                dashes(opt.name),
                opt.name
            ));
            continue;
        }
        p.values.entry(opt.name).or_default().push(value);
    }
    if too_many {
        p.errors
            .push(format!("{prog}: Too many positional arguments specified!"));
        p.errors.push(format!(
            "Can specify at most {max_positional} positional arguments: See: {argv0} --help"
        ));
    }
    for opt in opts.iter().filter(|o| o.required) {
        if p.occurrences(opt.name) == 0 {
            p.errors.push(format!(
                "{prog}: for the {}{} option: must be specified at least once!",
                dashes(opt.name),
                opt.name
            ));
        }
    }
    p
}

impl Parsed {
    fn errors_line(&mut self) -> &mut String {
        self.errors.push(String::new());
        self.errors.last_mut().expect("just pushed")
    }
}

/// LLVM's "Did you mean" search: the option name at the smallest edit distance
/// from the given name (first one wins on ties), with `=value` appended when a
/// value was given (every option here permits a value, booleans included).
///
/// LLVM walks its whole option table (a `StringMap` that also holds every hidden
/// option of the libraries it links) in bucket order, so ties are broken by an
/// order this parser cannot derive; callers list candidates in the order observed
/// from the tool they imitate.
fn nearest(name: &str, value: Option<&str>, suggest: &[&str]) -> Option<String> {
    let mut best: Option<(&str, usize)> = None;
    for &cand in suggest {
        let d = edit_distance(cand, name);
        if best.is_none_or(|(_, bd)| d < bd) {
            best = Some((cand, d));
        }
    }
    let (cand, _) = best?;
    Some(match value {
        Some(v) if !v.is_empty() => format!("{}{cand}={v}", dashes(cand)),
        _ => format!("{}{cand}", dashes(cand)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPTS: &[Opt] = &[
        Opt::required("type", Kind::Str),
        Opt::new("list", Kind::Flag),
        Opt::new("input", Kind::List),
        Opt::new("targets", Kind::CommaList),
        Opt::new("bundle-align", Kind::Uint),
        Opt::new("###", Kind::Flag),
    ];
    const SUGGEST: &[&str] = &["###", "type", "list", "input", "targets", "bundle-align"];

    fn run(args: &[&str]) -> Parsed {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        parse("/usr/bin/clang-offload-bundler", &args, OPTS, SUGGEST)
    }

    #[test]
    fn syntax_variants() {
        let p = run(&[
            "-type=bc",
            "--type",
            "o",
            "-input",
            "a",
            "--input=b",
            "-targets=x,y",
            "-targets",
            "z",
            "-list",
        ]);
        assert!(p.errors.is_empty(), "{:?}", p.errors);
        assert_eq!(p.last("type"), Some("o"));
        assert_eq!(p.list("input"), ["a", "b"]);
        assert_eq!(p.list("targets"), ["x", "y", "z"]);
        assert_eq!(p.occurrences("targets"), 2);
        assert!(p.flag("list"));
        assert!(!run(&["-type=bc", "-list=0"]).flag("list"));
    }

    #[test]
    fn llvm_error_texts() {
        let p = run(&["-foo"]);
        assert_eq!(
            p.errors,
            [
                "clang-offload-bundler: Unknown command line argument '-foo'.  Try: '/usr/bin/clang-offload-bundler --help'",
                "clang-offload-bundler: Did you mean '--###'?",
                "clang-offload-bundler: for the --type option: must be specified at least once!",
            ]
        );
        assert_eq!(
            run(&["-type=bc", "-typ=bc"]).errors[1],
            "clang-offload-bundler: Did you mean '--type=bc'?"
        );
        assert_eq!(
            run(&["-type=bc", "-list=yes"]).errors,
            [
                "clang-offload-bundler: for the --list option: 'yes' is invalid value for boolean argument! Try 0 or 1"
            ]
        );
        assert_eq!(
            run(&["-type=bc", "-bundle-align=-1"]).errors,
            [
                "clang-offload-bundler: for the --bundle-align option: '-1' value invalid for uint argument!"
            ]
        );
        assert_eq!(
            run(&["-type"]).errors,
            [
                "clang-offload-bundler: for the --type option: requires a value!",
                "clang-offload-bundler: for the --type option: must be specified at least once!"
            ]
        );
        assert_eq!(
            run(&["-type=bc", "pos"]).errors,
            [
                "clang-offload-bundler: Unknown command line argument 'pos'.  Try: '/usr/bin/clang-offload-bundler --help'"
            ]
        );
    }

    #[test]
    fn integers_use_llvm_radix_rules() {
        assert_eq!(parse_llvm_integer("4096"), Some(4096));
        assert_eq!(parse_llvm_integer("0x1000"), Some(4096));
        assert_eq!(parse_llvm_integer("010"), Some(8));
        assert_eq!(parse_llvm_integer("0"), Some(0));
        assert_eq!(parse_llvm_integer(""), None);
        assert_eq!(parse_llvm_integer("12a"), None);
        assert!(run(&["-type=bc", "-bundle-align=4294967296"]).errors.len() == 1);
    }

    #[test]
    fn response_files() {
        assert_eq!(
            tokenize_gnu("a 'b c' \"d\\\"e\" f\\ g\n"),
            ["a", "b c", "d\"e", "f g"]
        );
        let dir = tempfile::tempdir().unwrap();
        let rsp = dir.path().join("args.rsp");
        std::fs::write(&rsp, "-type=bc\n-list").unwrap();
        let args = expand_response_files(vec![format!("@{}", rsp.display()), "-x".into()]);
        assert_eq!(args, ["-type=bc", "-list", "-x"]);
    }
}
