//! LLVM's `cl` command-line conventions, as LLVM's tools accept them, over flags defined
//! once as data.
//!
//! A tool lists its flags as a table of [`Flag`]s: name, aliases, value [`Kind`] (whose
//! setter stores the value in the tool's raw options `A`, a struct with a typed field per
//! flag), help text, [`Category`], [`Origin`] and the rank that breaks ties between "Did
//! you mean" suggestions. [`parse`] fills `A` from the arguments, [`help_text`] prints the
//! table as LLVM's `--help` and `--help-list` do, and `parse_args` runs both the way the
//! tools start. The tools then validate `A` into the options they run with (ripgrep's
//! lowargs → hiargs).
//!
//! The syntax:
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

use std::fmt::Write as _;
use std::io::Write;

use crate::{Ctx, Exit};

/// What a flag takes, and the setter that stores each value in the raw options `A`.
pub enum Kind<A> {
    /// A boolean flag (`-x`, `-x=false`).
    Flag(fn(&mut A, bool)),
    /// One string value per occurrence (`cl::opt<std::string>`: the setter overwrites).
    Str(fn(&mut A, String)),
    /// A string value per occurrence, all kept (`cl::list`).
    List(fn(&mut A, String)),
    /// Like `List`, and each value is split at commas (`cl::CommaSeparated`): the setter
    /// gets each piece.
    CommaList(fn(&mut A, String)),
    /// An unsigned 32-bit integer (`cl::opt<unsigned>`).
    Uint(fn(&mut A, u32)),
    /// A signed 32-bit integer (`cl::opt<int>`).
    Int(fn(&mut A, i32)),
    /// A positional argument (`cl::Positional`, at most one value each); its help text
    /// follows `USAGE: <prog> [options]`.
    Positional(fn(&mut A, String)),
    /// `--help` (`list: false`) or `--help-list` (`list: true`): parsing stops there.
    Help {
        /// The uncategorized list was asked for.
        list: bool,
    },
    /// `--version`: parsing stops there.
    Version,
}

impl<A> Clone for Kind<A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A> Copy for Kind<A> {}

/// The group a flag is listed under in `--help`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    /// "Generic Options": `--help`, `--help-list`, `--version`.
    Generic,
    /// The tool's own options (named by [`Help::category`]).
    Tool,
}

/// Where a flag comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The LLVM tool has it (19 and 22 alike unless the flag's docs say otherwise).
    Llvm,
    /// offload-build's own: left out when the help's column width is measured, so that
    /// the LLVM options keep LLVM's layout.
    OffloadBuild,
}

/// One flag a tool accepts, defined once: parsing, suggestions and help derive from it.
pub struct Flag<A> {
    /// The name without dashes (empty for a positional argument).
    pub name: &'static str,
    /// Other names accepted for it (neither suggested nor listed).
    pub aliases: &'static [&'static str],
    /// Its value kind and setter.
    pub kind: Kind<A>,
    /// Must occur at least once.
    pub required: bool,
    /// The value as the help shows it after the name (`=<uint>`, ` <file>`).
    pub value: &'static str,
    /// The help text; continuation lines after `\n`. Empty: a hidden flag.
    pub help: &'static str,
    /// Where `--help` lists it.
    pub category: Category,
    /// LLVM's or offload-build's own.
    pub origin: Origin,
    /// Its place in the order in which "Did you mean" ties are broken (lower first), or
    /// `None` when it is never suggested. LLVM walks a hash table of every option it
    /// links, so the order is observed from the tool, not derived.
    pub suggest: Option<u8>,
}

impl<A> Flag<A> {
    /// A visible optional flag of the tool's category, from LLVM, never suggested.
    pub const fn new(name: &'static str, kind: Kind<A>) -> Flag<A> {
        Flag {
            name,
            aliases: &[],
            kind,
            required: false,
            value: "",
            help: "",
            category: Category::Tool,
            origin: Origin::Llvm,
            suggest: None,
        }
    }

    /// A "Generic Options" flag, as LLVM's `cl` library defines it for every tool.
    const fn generic(name: &'static str, kind: Kind<A>, help: &'static str) -> Flag<A> {
        Flag {
            category: Category::Generic,
            ..Flag::new(name, kind).help(help)
        }
    }

    /// `--help` (and its alias `--help-hidden`), suggested at `rank`.
    pub const fn help_flag(rank: u8) -> Flag<A> {
        Flag::generic(
            "help",
            Kind::Help { list: false },
            "Display available options (--help-hidden for more)",
        )
        .aliases(&["help-hidden"])
        .suggest(rank)
    }

    /// `--help-list` (and its alias `--help-list-hidden`), suggested at `rank`.
    pub const fn help_list_flag(rank: u8) -> Flag<A> {
        Flag::generic(
            "help-list",
            Kind::Help { list: true },
            "Display list of available options (--help-list-hidden for more)",
        )
        .aliases(&["help-list-hidden"])
        .suggest(rank)
    }

    /// `--version`, suggested at `rank`.
    pub const fn version_flag(rank: u8) -> Flag<A> {
        Flag::generic(
            "version",
            Kind::Version,
            "Display the version of this program",
        )
        .suggest(rank)
    }

    /// The flag must occur at least once.
    pub const fn required(self) -> Flag<A> {
        Flag {
            required: true,
            ..self
        }
    }

    /// Other accepted names.
    pub const fn aliases(self, aliases: &'static [&'static str]) -> Flag<A> {
        Flag { aliases, ..self }
    }

    /// The value as shown in the help (`=<uint>`).
    pub const fn value(self, value: &'static str) -> Flag<A> {
        Flag { value, ..self }
    }

    /// The help text.
    pub const fn help(self, help: &'static str) -> Flag<A> {
        Flag { help, ..self }
    }

    /// Offered in "Did you mean" hints at this tie-break rank.
    pub const fn suggest(self, rank: u8) -> Flag<A> {
        Flag {
            suggest: Some(rank),
            ..self
        }
    }

    /// An offload-build extension, not an LLVM option.
    pub const fn ours(self) -> Flag<A> {
        Flag {
            origin: Origin::OffloadBuild,
            ..self
        }
    }

    fn is_positional(&self) -> bool {
        matches!(self.kind, Kind::Positional(_))
    }

    /// The name with its dashes and value, as the help lists it.
    fn display(&self) -> String {
        format!("{}{}{}", dashes(self.name), self.name, self.value)
    }
}

/// The result of parsing: the raw options, or what stopped them.
#[derive(Debug, Default)]
pub struct Parsed<A> {
    /// The raw options the flags' setters filled in.
    pub args: A,
    /// Error lines, already formatted, in the order found.
    pub errors: Vec<String>,
    /// `--help`, `--help-list` (or their hidden variants) was given.
    pub help: bool,
    /// `--version` was given.
    pub version: bool,
    /// The help asked for is the uncategorized list (`--help-list`, `--help-list-hidden`).
    pub help_list: bool,
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
            Some(path) if depth < 20 => match std::fs::read(offload_formats::id::spell::os(path)) {
                Ok(bytes) => expand_into(
                    tokenize_gnu(&offload_formats::id::spell::text(&bytes)),
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

/// Parses `args` (without argv\[0\]) against `flags` into their raw options `A`.
///
/// Positional flags take one argument each, in table order; extra positional arguments
/// are reported after every other error, as LLVM does:
/// `<program>: Too many positional arguments specified!` and
/// `Can specify at most N positional arguments: See: <argv0> --help`. A tool without
/// positional flags reports each positional argument as an unknown argument.
pub fn parse<A: Default>(argv0: &str, args: &[String], flags: &[Flag<A>]) -> Parsed<A> {
    let mut parser = Parser {
        argv0,
        prog: program_name(argv0),
        flags,
        parsed: Parsed::default(),
        seen: vec![0; flags.len()],
        positional: flags
            .iter()
            .enumerate()
            .filter(|(_, f)| f.is_positional())
            .map(|(i, _)| i)
            .collect(),
        positional_given: 0,
        too_many: false,
    };
    let mut rest = args;
    let mut positional_only = false;
    while let Some((arg, tail)) = rest.split_first() {
        rest = tail;
        if positional_only || arg == "-" || !arg.starts_with('-') {
            parser.positional(arg);
        } else if arg == "--" {
            positional_only = true;
        } else if parser.option(arg, &mut rest) == Step::Stop {
            return parser.parsed;
        }
    }
    parser.finish()
}

/// Whether parsing goes on after an argument (`--help` and `--version` stop it).
#[derive(PartialEq, Eq)]
enum Step {
    Next,
    Stop,
}

/// The state of one [`parse`].
struct Parser<'f, 'a, A> {
    argv0: &'a str,
    prog: &'a str,
    flags: &'f [Flag<A>],
    parsed: Parsed<A>,
    /// Occurrences per flag (by table index).
    seen: Vec<usize>,
    /// The table indices of the positional flags, in order.
    positional: Vec<usize>,
    positional_given: usize,
    too_many: bool,
}

impl<A> Parser<'_, '_, A> {
    fn error(&mut self, line: String) {
        self.parsed.errors.push(line);
    }

    fn unknown(&mut self, arg: &str) {
        let (prog, argv0) = (self.prog, self.argv0);
        self.error(format!(
            "{prog}: Unknown command line argument '{arg}'.  Try: '{argv0} --help'"
        ));
    }

    fn option_error(&mut self, flag: &Flag<A>, what: impl std::fmt::Display) {
        let line = format!(
            "{}: for the {}{} option: {what}",
            self.prog,
            dashes(flag.name),
            flag.name
        );
        self.error(line);
    }

    fn positional(&mut self, arg: &str) {
        if self.positional.is_empty() {
            return self.unknown(arg);
        }
        let Some(&index) = self.positional.get(self.positional_given) else {
            self.too_many = true;
            return;
        };
        self.positional_given += 1;
        self.seen[index] += 1;
        if let Kind::Positional(set) = self.flags[index].kind {
            set(&mut self.parsed.args, arg.to_owned());
        }
    }

    /// One `-name[=value]` argument; a value given separately is taken from `rest`.
    fn option(&mut self, arg: &str, rest: &mut &[String]) -> Step {
        let body = arg.strip_prefix("--").unwrap_or(&arg[1..]);
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        let flags = self.flags;
        let Some(index) = flags
            .iter()
            .position(|f| !f.is_positional() && (f.name == name || f.aliases.contains(&name)))
        else {
            self.unknown(arg);
            if let Some(near) = nearest(name, value, flags) {
                let line = format!("{}: Did you mean '{near}'?", self.prog);
                self.error(line);
            }
            return Step::Next;
        };
        let flag = &flags[index];
        let value = match flag.kind {
            Kind::Help { list } => {
                self.parsed.help = true;
                self.parsed.help_list = list;
                return Step::Stop;
            }
            Kind::Version => {
                self.parsed.version = true;
                return Step::Stop;
            }
            Kind::Flag(set) => {
                match parse_bool(value.unwrap_or("")) {
                    Some(b) => {
                        set(&mut self.parsed.args, b);
                        self.seen[index] += 1;
                    }
                    None => self.option_error(
                        flag,
                        format_args!(
                            "'{}' is invalid value for boolean argument! Try 0 or 1",
                            value.unwrap_or("")
                        ),
                    ),
                }
                return Step::Next;
            }
            _ => match (value, rest.split_first()) {
                (Some(v), _) => v.to_owned(),
                (None, Some((next, tail))) => {
                    *rest = tail;
                    next.clone()
                }
                (None, None) => {
                    self.option_error(flag, "requires a value!");
                    return Step::Next;
                }
            },
        };
        self.store(index, value);
        Step::Next
    }

    /// Checks and stores the value of a flag that takes one.
    fn store(&mut self, index: usize, value: String) {
        let flags = self.flags;
        let flag = &flags[index];
        let args = &mut self.parsed.args;
        let int = |lo: i128, hi: i128| parse_llvm_integer(&value).filter(|n| (lo..=hi).contains(n));
        match flag.kind {
            Kind::Str(set) | Kind::List(set) | Kind::Positional(set) => set(args, value),
            Kind::CommaList(set) => value.split(',').for_each(|v| set(args, v.to_owned())),
            Kind::Uint(set) => match int(0, u32::MAX.into()) {
                Some(n) => set(args, n as u32),
                None => {
                    let what = format!("'{value}' value invalid for uint argument!");
                    return self.option_error(flag, what);
                }
            },
            Kind::Int(set) => match int(i32::MIN.into(), i32::MAX.into()) {
                Some(n) => set(args, n as i32),
                None => {
                    let what = format!("'{value}' value invalid for integer argument!");
                    return self.option_error(flag, what);
                }
            },
            Kind::Flag(_) | Kind::Help { .. } | Kind::Version => {}
        }
        self.seen[index] += 1;
    }

    /// The errors LLVM reports once every argument is read.
    fn finish(mut self) -> Parsed<A> {
        if self.too_many {
            let (prog, argv0, max) = (self.prog, self.argv0, self.positional.len());
            self.error(format!("{prog}: Too many positional arguments specified!"));
            self.error(format!(
                "Can specify at most {max} positional arguments: See: {argv0} --help"
            ));
        }
        for index in 0..self.flags.len() {
            let flag = &self.flags[index];
            if flag.required && self.seen[index] == 0 {
                self.option_error(flag, "must be specified at least once!");
            }
        }
        self.parsed
    }
}

/// LLVM's "Did you mean" search: the suggested flag name at the smallest edit distance
/// from the given name (the lowest rank wins on ties), with `=value` appended when a
/// value was given (every option here permits a value, booleans included).
fn nearest<A>(name: &str, value: Option<&str>, flags: &[Flag<A>]) -> Option<String> {
    let (_, _, cand) = flags
        .iter()
        .filter_map(|f| Some((edit_distance(f.name, name), f.suggest?, f.name)))
        .min()?;
    Some(match value {
        Some(v) if !v.is_empty() => format!("{}{cand}={v}", dashes(cand)),
        _ => format!("{}{cand}", dashes(cand)),
    })
}

/// How a tool's help and version read, besides its flags.
#[derive(Debug)]
pub struct Help {
    /// The text after `OVERVIEW: `.
    pub overview: &'static str,
    /// The title of the tool's option category (`clang-offload-bundler options`).
    pub category: &'static str,
    /// `--help-list` prints the uncategorized list, as LLVM does; otherwise it prints
    /// the categorized help.
    pub list: bool,
    /// The `--version` text.
    pub version: &'static str,
}

/// The `--help` text (`list`: `--help-list`'s) of a tool for `prog`, as LLVM prints it:
/// the overview, the usage line with the positional arguments' help, then the visible
/// flags in table order (by category), or every visible flag sorted by name for the
/// list. The name column is as wide as the widest LLVM flag.
pub fn help_text<A>(prog: &str, help: &Help, flags: &[Flag<A>], list: bool) -> String {
    let mut text = format!("OVERVIEW: {}\n\nUSAGE: {prog} [options]", help.overview);
    for f in flags.iter().filter(|f| f.is_positional()) {
        let _ = write!(text, " {}", f.help);
    }
    text.push_str("\n\nOPTIONS:\n");
    let shown = || {
        flags
            .iter()
            .filter(|f| !f.help.is_empty() && !f.is_positional())
    };
    let width = shown()
        .filter(|f| f.origin == Origin::Llvm)
        .map(|f| f.display().len())
        .max()
        .unwrap_or(0);
    if list {
        // LLVM lists `--help-list` only in the categorized help.
        let mut all: Vec<_> = shown()
            .filter(|f| !matches!(f.kind, Kind::Help { list: true }))
            .collect();
        all.sort_by_key(|f| f.name);
        all.into_iter().for_each(|f| help_line(&mut text, f, width));
        return text;
    }
    for (category, title) in [
        (Category::Generic, "Generic Options"),
        (Category::Tool, help.category),
    ] {
        let _ = write!(text, "\n{title}:\n\n");
        for f in shown().filter(|f| f.category == category) {
            help_line(&mut text, f, width);
        }
    }
    text
}

/// `  --name=<value> - help`, continuation lines aligned after the ` - `.
fn help_line<A>(text: &mut String, flag: &Flag<A>, width: usize) {
    let mut lines = flag.help.split('\n');
    let first = lines.next().unwrap_or_default();
    let _ = writeln!(text, "  {:<width$} - {first}", flag.display());
    for line in lines {
        let _ = writeln!(text, "{:indent$}{line}", "", indent = width + 5);
    }
}

/// How a tool starts: expands response files, parses `args` (`args[0]` is the program),
/// prints the parse errors, and answers `--help` and `--version` on `out`. Returns the raw
/// options, `None` when help or version was printed, or exit status 1 after errors.
pub(crate) fn parse_args<A: Default>(
    ctx: &mut Ctx<'_>,
    args: &[String],
    flags: &[Flag<A>],
    help: &Help,
    out: &mut dyn Write,
) -> Result<Option<A>, Exit> {
    let rest = expand_response_files(args.get(1..).unwrap_or_default().to_vec());
    let p = parse(ctx.argv0, &rest, flags);
    for e in &p.errors {
        let _ = writeln!(ctx.err, "{e}");
    }
    if p.help {
        print_help(out, ctx.argv0, help, flags, help.list && p.help_list);
        return Ok(None);
    }
    if p.version {
        let _ = writeln!(out, "{}", help.version);
        return Ok(None);
    }
    if !p.errors.is_empty() {
        return Err(Exit(1));
    }
    Ok(Some(p.args))
}

/// Writes [`help_text`] for the program `argv0` to `out`.
pub(crate) fn print_help<A>(
    out: &mut dyn Write,
    argv0: &str,
    help: &Help,
    flags: &[Flag<A>],
    list: bool,
) {
    let text = help_text(program_name(argv0), help, flags, list);
    let _ = out.write_all(text.as_bytes());
}

/// Checks a tool's table: every suggested flag has its own rank, with no gap, and the LLVM
/// flags of each help category are in LLVM's order (by name).
#[cfg(test)]
pub(crate) fn assert_well_formed<A>(flags: &[Flag<A>]) {
    let mut ranks: Vec<u8> = flags.iter().filter_map(|f| f.suggest).collect();
    ranks.sort_unstable();
    assert_eq!(ranks, (0..ranks.len() as u8).collect::<Vec<_>>());
    for category in [Category::Generic, Category::Tool] {
        let names: Vec<&str> = flags
            .iter()
            .filter(|f| f.category == category && f.origin == Origin::Llvm)
            .filter(|f| !f.help.is_empty() && !f.is_positional())
            .map(|f| f.name)
            .collect();
        assert!(names.is_sorted(), "{names:?}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default)]
    struct Args {
        file_type: Option<String>,
        list: bool,
        input: Vec<String>,
        targets: Vec<String>,
        align: Option<u32>,
        print_only: bool,
    }

    /// Shorthand for the table below.
    type F = Flag<Args>;

    const FLAGS: &[Flag<Args>] = &[
        F::new("type", Kind::Str(|a, v| a.file_type = Some(v)))
            .required()
            .suggest(1),
        F::new("list", Kind::Flag(|a, v| a.list = v)).suggest(2),
        F::new("input", Kind::List(|a, v| a.input.push(v))).suggest(3),
        F::new("targets", Kind::CommaList(|a, v| a.targets.push(v))).suggest(4),
        F::new("bundle-align", Kind::Uint(|a, v| a.align = Some(v))).suggest(5),
        F::new("###", Kind::Flag(|a, v| a.print_only = v)).suggest(0),
    ];

    fn run(args: &[&str]) -> Parsed<Args> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        parse("/usr/bin/clang-offload-bundler", &args, FLAGS)
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
        assert_eq!(p.args.file_type.as_deref(), Some("o"));
        assert_eq!(p.args.input, ["a", "b"]);
        assert_eq!(p.args.targets, ["x", "y", "z"]);
        assert!(p.args.list);
        assert!(!run(&["-type=bc", "-list=0"]).args.list);
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
        assert_eq!(
            run(&["-type=bc", "-bundle-align=0x10"]).args.align,
            Some(16)
        );
    }

    #[test]
    fn help_derives_from_the_table() {
        type F = Flag<Args>;
        const TABLE: &[F] = &[
            F::help_flag(0),
            F::help_list_flag(1),
            F::version_flag(2),
            F::new("list", Kind::Flag(|a, v| a.list = v)).help("List."),
            F::new("bundle-align", Kind::Uint(|a, v| a.align = Some(v)))
                .value("=<uint>")
                .help("Align.\nSecond line."),
            F::new("our-own-much-longer-flag", Kind::Flag(|a, v| a.list = v))
                .help("Ours.")
                .ours(),
            F::new("hidden", Kind::Flag(|a, v| a.list = v)),
            F::new("", Kind::Positional(|a, v| a.file_type = Some(v))).help("<file>"),
        ];
        let help = Help {
            overview: "A tool.",
            category: "tool options",
            list: true,
            version: "1",
        };
        // The name column is as wide as the widest LLVM flag; ours may overflow it.
        assert_eq!(
            help_text("t", &help, TABLE, false),
            "OVERVIEW: A tool.\n\nUSAGE: t [options] <file>\n\nOPTIONS:\n\n\
             Generic Options:\n\n\
             \x20 --help                - Display available options (--help-hidden for more)\n\
             \x20 --help-list           - Display list of available options (--help-list-hidden for more)\n\
             \x20 --version             - Display the version of this program\n\n\
             tool options:\n\n\
             \x20 --list                - List.\n\
             \x20 --bundle-align=<uint> - Align.\n\
             \x20                         Second line.\n\
             \x20 --our-own-much-longer-flag - Ours.\n"
        );
        // The list: every visible flag by name, without --help-list.
        let list = help_text("t", &help, TABLE, true);
        let (_, options) = list.split_once("OPTIONS:\n").unwrap();
        let names: Vec<&str> = options
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|n| n.starts_with('-'))
            .collect();
        assert_eq!(
            names,
            [
                "--bundle-align=<uint>",
                "--help",
                "--list",
                "--our-own-much-longer-flag",
                "--version"
            ]
        );
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
