//! Comparing what two tools did in one step, and explaining a difference: exit status, stdout,
//! stderr and every file of the run directory, with sizes, the first differing byte offset and
//! a hexdump window around it.

use std::fmt::Write as _;
use std::path::Path;

use super::run::{Entry, Output, Tool, list_dir};

/// How much of a step to compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Exit status, stdout, stderr and the files of the run directory.
    Everything,
    /// Exit status, stdout and stderr (the files are checked by the caller).
    Streams,
    /// Only the exit status (e.g. `--version`, whose text names the version).
    Status,
}

/// The differences between two runs of the same step, each a human-readable paragraph; empty
/// when they agree.
pub fn compare(
    (ta, oa, da): (Tool, &Output, &Path),
    (tb, ob, db): (Tool, &Output, &Path),
    scope: Scope,
) -> Vec<String> {
    let (a, b) = (ta.name(), tb.name());
    let mut diffs = Vec::new();
    if oa.status != ob.status {
        diffs.push(format!(
            "exit status: {a} {:?}, {b} {:?}",
            oa.status, ob.status
        ));
    }
    if scope == Scope::Status {
        return diffs;
    }
    diffs.extend(describe("stdout", a, &oa.stdout, b, &ob.stdout));
    diffs.extend(describe("stderr", a, &oa.stderr, b, &ob.stderr));
    if scope == Scope::Streams {
        return diffs;
    }
    let (fa, fb) = (list_dir(da), list_dir(db));
    for (name, ea) in &fa {
        match fb.get(name) {
            None => diffs.push(format!("file {name}: only {a} has it ({ea:?})")),
            Some(eb) if std::mem::discriminant(ea) != std::mem::discriminant(eb) => {
                diffs.push(format!("file {name}: {a} has {ea:?}, {b} has {eb:?}"))
            }
            Some(Entry::File(_)) => {
                let x = std::fs::read(da.join(name)).expect("read file");
                let y = std::fs::read(db.join(name)).expect("read file");
                diffs.extend(describe(&format!("file {name}"), a, &x, b, &y));
            }
            Some(_) => {}
        }
    }
    for (name, eb) in &fb {
        if !fa.contains_key(name) {
            diffs.push(format!("file {name}: only {b} has it ({eb:?})"));
        }
    }
    diffs
}

/// `None` when equal, else sizes, first differing offset and both sides around it.
pub fn describe(what: &str, a: &str, x: &[u8], b: &str, y: &[u8]) -> Option<String> {
    if x == y {
        return None;
    }
    let first = x
        .iter()
        .zip(y)
        .position(|(p, q)| p != q)
        .unwrap_or(x.len().min(y.len()));
    let mut s = format!(
        "{what} differs: {a} {} bytes, {b} {} bytes, first difference at offset {first} (0x{first:x})",
        x.len(),
        y.len()
    );
    if is_short_text(x) && is_short_text(y) {
        let _ = write!(s, "\n      {a}: {}\n      {b}: {}", show(x), show(y));
    } else {
        let start = first.saturating_sub(32) & !15;
        let _ = write!(s, "\n      {a}:\n{}", hexdump(x, start, 64));
        let _ = write!(s, "\n      {b}:\n{}", hexdump(y, start, 64));
    }
    Some(s)
}

fn is_short_text(x: &[u8]) -> bool {
    x.len() <= 4096 && std::str::from_utf8(x).is_ok()
}

/// Bytes as a quoted, escaped string (newlines shown as `\n`).
pub fn show(x: &[u8]) -> String {
    format!("\"{}\"", x.escape_ascii())
}

/// `len` bytes of `x` from `start`, 16 per line with offsets and an ASCII column.
pub fn hexdump(x: &[u8], start: usize, len: usize) -> String {
    let end = (start + len).min(x.len());
    if start >= end {
        return format!(
            "        (nothing at offset {start:#x}; size {:#x})",
            x.len()
        );
    }
    let mut s = String::new();
    for line in (start..end).step_by(16) {
        let chunk = &x[line..(line + 16).min(end)];
        let hex: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
        let ascii: String = chunk
            .iter()
            .map(|&b| {
                if b.is_ascii_graphic() || b == b' ' {
                    b as char
                } else {
                    '.'
                }
            })
            .collect();
        let _ = writeln!(s, "        {line:08x}: {:<47}  {ascii}", hex.join(" "));
    }
    s.pop();
    s
}
