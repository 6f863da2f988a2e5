//! The claims of `ARCHITECTURE.md` about the code, checked on the sources (issue 23): each
//! test reads `crates/*/src` as text, so a change that breaks a rule fails here, not in review.
//!
//! - integers are read by hand (`from_le_bytes`/`from_be_bytes`) in one module per crate at
//!   most: every on-disk header is a typed view;
//! - no function is longer than 80 lines, except the data tables and generated code named
//!   in [`LONG_FUNCTION_ALLOWED`];
//! - the top-level modules of offload-formats import each other without a cycle;
//! - magic bytes are compared only in offload-formats' `kind.rs` (defined in `raw.rs`);
//! - every path that `ARCHITECTURE.md` names exists.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::support::repo_root;

/// The longest a function may be, in lines from its `fn` line to its closing brace.
const MAX_FUNCTION_LINES: usize = 80;

/// Functions allowed to be longer, each with the reason: data tables, not logic.
const LONG_FUNCTION_ALLOWED: &[(&str, &str, &str)] = &[
    (
        "crates/offload-formats/src/id/triple/parse.rs",
        "parse_arch",
        "a match table of LLVM's architecture names (Triple.cpp's parseArch)",
    ),
    (
        "crates/offload-formats/src/id/triple/parse.rs",
        "parse_sub_arch",
        "a match table of LLVM's sub-architecture names (Triple.cpp's parseSubArch)",
    ),
];

/// Every `.rs` file under `crates/*/src`, relative to the repository root, generated code
/// (a `generated` folder) left out.
fn crate_sources() -> Vec<PathBuf> {
    let root = repo_root();
    let mut krates: Vec<PathBuf> = fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .collect();
    krates.sort();
    let mut out = Vec::new();
    for src in krates {
        for p in crate::support::files_under(&src) {
            let generated = p
                .strip_prefix(&src)
                .unwrap()
                .iter()
                .any(|c| c == "generated");
            if !generated && p.extension().is_some_and(|e| e == "rs") {
                out.push(p.strip_prefix(&root).unwrap().to_path_buf());
            }
        }
    }
    out
}

fn read(rel: &Path) -> String {
    fs::read_to_string(repo_root().join(rel))
        .unwrap_or_else(|e| panic!("reading {}: {e}", rel.display()))
}

/// The source with comments, string and character literals blanked out (newlines kept), so
/// that braces and words are counted only where they are code.
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let blank = |s: &[u8], out: &mut String| {
        for &c in s {
            out.push(if c == b'\n' { '\n' } else { ' ' });
        }
    };
    while i < b.len() {
        let rest = &b[i..];
        let end = if rest.starts_with(b"//") {
            rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len())
        } else if rest.starts_with(b"/*") {
            let mut depth = 0;
            let mut j = 0;
            loop {
                if j >= rest.len() {
                    break rest.len();
                }
                if rest[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if rest[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break j;
                    }
                } else {
                    j += 1;
                }
            }
        } else if let Some(n) = raw_string_len(rest) {
            n
        } else if rest[0] == b'"' {
            let mut j = 1;
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            (j + 1).min(rest.len())
        } else if rest[0] == b'\'' {
            // A character literal ('x', '\n', '\u{..}', '{'), not a lifetime ('a).
            let close = if rest.get(1) == Some(&b'\\') {
                rest[2..].iter().position(|&c| c == b'\'').map(|p| p + 3)
            } else {
                let ch = std::str::from_utf8(&rest[1..]).ok().or_else(|| {
                    // The rest of the file may cut a character: take what decodes.
                    let valid = std::str::from_utf8(&rest[1..]).unwrap_err().valid_up_to();
                    std::str::from_utf8(&rest[1..1 + valid]).ok()
                });
                ch.and_then(|s| s.chars().next())
                    .map(|c| 1 + c.len_utf8())
                    .filter(|&n| rest.get(n) == Some(&b'\''))
                    .map(|n| n + 1)
            };
            match close {
                Some(n) => n,
                None => {
                    out.push('\'');
                    i += 1;
                    continue;
                }
            }
        } else {
            let c = src[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
            continue;
        };
        blank(&rest[..end], &mut out);
        i += end;
    }
    out
}

/// The length of a raw (byte) string literal at the start of `s`: `r"…"`, `r#"…"#`, `br"…"`.
fn raw_string_len(s: &[u8]) -> Option<usize> {
    let start = if s.starts_with(b"br") {
        2
    } else if s.starts_with(b"r") {
        1
    } else {
        return None;
    };
    let hashes = s[start..].iter().take_while(|&&c| c == b'#').count();
    if s.get(start + hashes) != Some(&b'"') {
        return None;
    }
    let body = start + hashes + 1;
    let mut close = vec![b'"'];
    close.extend(std::iter::repeat_n(b'#', hashes));
    (body..s.len())
        .find(|&j| s[j..].starts_with(&close))
        .map(|j| j + close.len())
}

/// The functions of one source: (name, first line, number of lines).
fn functions(src: &str) -> Vec<(String, usize, usize)> {
    let code = code_only(src);
    let bytes = code.as_bytes();
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(p) = code[at..].find("fn ") {
        let start = at + p;
        at = start + 3;
        let word_start =
            start == 0 || !(bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_');
        let name: String = code[at..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !word_start || name.is_empty() {
            continue;
        }
        // The body: the first `{` before any `;` (a declaration without a body has none).
        let Some(open) = code[at..].find(['{', ';']).map(|q| at + q) else {
            break;
        };
        if bytes[open] == b';' {
            continue;
        }
        let mut depth = 0usize;
        let mut close = None;
        for (j, &c) in bytes.iter().enumerate().skip(open) {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(j);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else { break };
        let first = line_of(start);
        out.push((name, first, line_of(close) - first + 1));
    }
    out
}

#[test]
fn the_length_counter_counts_what_it_should() {
    let src = "fn a() {\n    let s = \"}\"; // }\n    let c = '}';\n}\nfn b<'x>(v: &'x str) -> &'x str {\n    v\n}\nfn decl();\n";
    let f = functions(src);
    assert_eq!(
        f,
        vec![("a".to_string(), 1, 4), ("b".to_string(), 5, 3)],
        "{src}"
    );
    assert_eq!(
        functions("fn r() { let x = r#\"{{\"#; }"),
        vec![("r".to_string(), 1, 1)]
    );
}

#[test]
fn no_function_is_longer_than_80_lines() {
    let mut long = Vec::new();
    for rel in crate_sources() {
        let path = rel.to_string_lossy().replace('\\', "/");
        for (name, line, len) in functions(&read(&rel)) {
            let allowed = LONG_FUNCTION_ALLOWED
                .iter()
                .any(|(f, n, _)| *f == path && *n == name);
            if len > MAX_FUNCTION_LINES && !allowed {
                long.push(format!("{path}:{line} {name}: {len} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions longer than {MAX_FUNCTION_LINES} lines (split them by meaning, or add a \
         data table to LONG_FUNCTION_ALLOWED with the reason):\n{}",
        long.join("\n")
    );
}

#[test]
fn integers_are_read_by_hand_in_one_module_per_crate_at_most() {
    let mut per_crate: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for rel in non_test_sources() {
        let code = code_only(&read(&rel));
        if code.contains("from_le_bytes") || code.contains("from_be_bytes") {
            let krate = rel.iter().nth(1).unwrap().to_string_lossy().into_owned();
            per_crate
                .entry(krate)
                .or_default()
                .insert(rel.display().to_string());
        }
    }
    let over: Vec<String> = per_crate
        .iter()
        .filter(|(_, files)| files.len() > 1)
        .map(|(k, files)| format!("{k}: {files:?}"))
        .collect();
    assert!(
        over.is_empty(),
        "from_le_bytes/from_be_bytes outside the one typed-view module of a crate:\n{}",
        over.join("\n")
    );
}

/// The top-level module of offload-formats that a source file belongs to (`bundle` for
/// `src/bundle/binary.rs`, `kind` for `src/kind.rs`); `None` for `lib.rs`.
fn formats_module(rel: &Path) -> Option<String> {
    let inside = rel.strip_prefix("crates/offload-formats/src").ok()?;
    let first = inside.iter().next()?.to_string_lossy().into_owned();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_string();
    (name != "lib").then_some(name)
}

#[test]
fn formats_modules_import_each_other_without_a_cycle() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for rel in non_test_sources() {
        let Some(from) = formats_module(&rel) else {
            continue;
        };
        let code = code_only(&read(&rel));
        // Only non-test code counts: tests may use any module to build their inputs.
        let code = code.split("#[cfg(test)]").next().unwrap_or("");
        for (i, _) in code.match_indices("crate::") {
            let to: String = code[i + 7..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !to.is_empty() && to != from {
                edges.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    let cycle = crate::stages::circle(&edges);
    assert!(
        cycle.is_none(),
        "an import cycle between offload-formats' modules: {}",
        cycle.unwrap().join(" -> ")
    );
}

#[test]
fn every_path_architecture_md_names_exists() {
    let root = repo_root();
    let text = fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut missing = Vec::new();
    let mut checked = 0;
    for span in text.split('`').skip(1).step_by(2) {
        let looks_like_path = span.contains('/')
            && !span.contains(' ')
            && !span.contains("::")
            && [".rs", ".sh", ".cmake", ".md", "/"]
                .iter()
                .any(|e| span.ends_with(e));
        if !looks_like_path {
            continue;
        }
        let path = span.trim_end_matches('/');
        // Relative to the repository, to a crate or to a crate's src/.
        let found = [root.clone(), root.join("crates")]
            .into_iter()
            .chain(
                fs::read_dir(root.join("crates"))
                    .unwrap()
                    .map(|e| e.unwrap().path().join("src")),
            )
            .any(|base| base.join(path).exists());
        checked += 1;
        if !found {
            missing.push(span.to_string());
        }
    }
    assert!(checked > 10, "ARCHITECTURE.md names only {checked} paths");
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths that do not exist: {missing:?}"
    );
}

/// [`crate_sources`] but the test modules of their own (`tests.rs`, which a parent declares
/// under `#[cfg(test)]`): all of such a file is test code.
fn non_test_sources() -> Vec<PathBuf> {
    let mut all = crate_sources();
    all.retain(|rel| rel.file_name().is_none_or(|n| n != "tests.rs"));
    all
}

/// The part of a source that is not test code: everything before its first `#[cfg(test)]`,
/// with `//` comment lines blanked (so that line numbers stay those of the file).
fn non_test_code(src: &str) -> String {
    let body = src.split("#[cfg(test)]").next().unwrap_or("");
    body.lines()
        .map(|l| {
            if l.trim_start().starts_with("//") {
                ""
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `line` names a magic constant: an upper-case identifier with `MAGIC` in it
/// (`AR_MAGIC`, `ZIP_MAGICS`) or `MAG` at its end or before a digit or `_` (object's `ELFMAG`,
/// `ELFMAG0`), not `IMAGE`.
fn names_magic(line: &str) -> bool {
    line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|t| !t.is_empty() && !t.bytes().any(|b| b.is_ascii_lowercase()))
        .any(|t| {
            t.match_indices("MAG").any(|(i, _)| {
                let after = &t[i + 3..];
                after.is_empty()
                    || after.starts_with("IC")
                    || after.starts_with('_')
                    || after.starts_with(|c: char| c.is_ascii_digit())
            })
        })
}

/// Whether `line` compares something: equality, a prefix test or a pattern.
fn compares(line: &str) -> bool {
    ["starts_with(", "strip_prefix(", "== ", "!= ", "matches!("]
        .iter()
        .any(|op| line.contains(op))
}

#[test]
fn magic_checker_catches_what_it_should() {
    assert!(names_magic("if id.magic == ELFMAG {"));
    assert!(names_magic("data.starts_with(AR_MAGIC)"));
    assert!(names_magic("[ELFMAG0, ELFMAG1]"));
    assert!(!names_magic("let image = IMAGE_FILE_MACHINE_AMD64;"));
    assert!(!names_magic("let magic = 3;"));
    assert!(compares("(id.magic == ELFMAG && id.class == ELFCLASS64)"));
}

#[test]
fn magic_bytes_are_compared_only_in_kind_rs() {
    // The magic numbers of every file kind offload-formats recognises, as they would be
    // written in a comparison: byte strings, byte arrays and integers.
    const LITERALS: &[&str] = &[
        r#"b"\x7fELF"#,
        r"0x7f, b'e', b'l', b'f'",
        r"b'\x7f', b'e', b'l', b'f'",
        r#"b"CCOB"#,
        r#"b"!<arch>"#,
        r#"b"BC\xc0\xde"#,
        r#"b"__CLANG_OFFLOAD_BUNDLE__"#,
        "0x10ff10ad",
        "0xba55ed50",
        "0x464c457f",
        "0x424f4343",
    ];
    // Text forms, flagged where the line compares (writing a section name is no comparison).
    const COMPARED: &[&str] = &[r#""\x7fELF"#, r#""CCOB"#, "__CLANG_OFFLOAD_BUNDLE__"];
    // The sniffer and the on-disk definitions of offload-formats.
    const ALLOWED: &[&str] = &[
        "crates/offload-formats/src/kind.rs",
        "crates/offload-formats/src/raw.rs",
    ];
    let mut found = Vec::new();
    for rel in non_test_sources() {
        let path = rel.to_string_lossy().replace('\\', "/");
        if ALLOWED.contains(&path.as_str()) {
            continue;
        }
        for (n, line) in non_test_code(&read(&rel)).lines().enumerate() {
            let lower = line.to_ascii_lowercase();
            let literal = LITERALS
                .iter()
                .any(|m| lower.contains(&m.to_ascii_lowercase()));
            let compared =
                compares(line) && (names_magic(line) || COMPARED.iter().any(|m| line.contains(m)));
            if literal || compared {
                found.push(format!("{path}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "magic bytes compared outside offload-formats' kind.rs (ask `kind` instead):\n{}",
        found.join("\n")
    );
}
