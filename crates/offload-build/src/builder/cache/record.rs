//! A job's cache record: its context, every input with the hash of its content as the
//! compiler read it, every output with its size and hash, the probes and the warnings.

use crate::builder::cache::stamps::ContentHashes;
use crate::builder::error::Error;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::xxh3_128;

// Version 2 added the compiler's diagnostics (`! ` lines), replayed on a cache hit; version 3
// the context (`= `) and each output's size and content hash (`> `).
pub(crate) const RECORD_HEADER: &str = "offload-build cache record 4";

/// What a successful job read and wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Record {
    /// What the result depends on beside the inputs' content ([`crate::builder::cache::lookup::Lookups`]).
    pub context: u128,
    /// Every output with its size and content hash, in the job's order.
    pub outputs: Vec<(PathBuf, u64, u128)>,
    /// Every input with its content hash, the source first.
    pub deps: Vec<(PathBuf, u128)>,
    /// The paths whose existence decided what the compile read ([`crate::builder::cache::lookup::Lookups::probes`]).
    pub probes: Vec<PathBuf>,
    /// What the compiler printed on a successful compile (its warnings), one line each, so
    /// that a cache hit shows the same warnings as the compile did.
    pub stderr: Vec<String>,
}

impl Record {
    fn render(&self) -> String {
        let mut s = format!("{RECORD_HEADER}\n= {:032x}\n", self.context);
        for (p, size, h) in &self.outputs {
            s.push_str(&format!("> {size} {h:032x} {}\n", p.display()));
        }
        for (p, h) in &self.deps {
            s.push_str(&format!("{h:032x} {}\n", p.display()));
        }
        for p in &self.probes {
            s.push_str(&format!("? {}\n", p.display()));
        }
        for line in &self.stderr {
            s.push_str(&format!("! {line}\n"));
        }
        s
    }

    fn parse(text: &str) -> Option<Record> {
        let mut lines = text.lines();
        if lines.next()? != RECORD_HEADER {
            return None;
        }
        let context = u128::from_str_radix(lines.next()?.strip_prefix("= ")?, 16).ok()?;
        let mut rec = Record {
            context,
            outputs: Vec::new(),
            deps: Vec::new(),
            probes: Vec::new(),
            stderr: Vec::new(),
        };
        for line in lines {
            if let Some(l) = line.strip_prefix("! ") {
                rec.stderr.push(l.to_string());
            } else if let Some(l) = line.strip_prefix("? ") {
                rec.probes.push(PathBuf::from(l));
            } else if let Some(l) = line.strip_prefix("> ") {
                let (size, rest) = l.split_once(' ')?;
                let (h, p) = rest.split_once(' ')?;
                let h = u128::from_str_radix(h, 16).ok()?;
                rec.outputs.push((PathBuf::from(p), size.parse().ok()?, h));
            } else {
                let (h, p) = line.split_once(' ')?;
                rec.deps
                    .push((PathBuf::from(p), u128::from_str_radix(h, 16).ok()?));
            }
        }
        Some(rec)
    }

    /// Reads a record; `None` when missing or unreadable (the job then runs).
    pub(crate) fn load(path: &Path) -> Option<Record> {
        Record::parse(&std::fs::read_to_string(path).ok()?)
    }

    /// Writes the record atomically.
    pub(crate) fn store(&self, path: &Path) -> Result<(), Error> {
        crate::builder::fs::write_atomic(path, self.render().as_bytes())
    }

    /// Whether every input still has the recorded content.
    pub(crate) fn is_fresh(&self, hashes: &ContentHashes) -> bool {
        !self.deps.is_empty() && self.deps.iter().all(|(p, h)| hashes.file(p) == Some(*h))
    }

    /// Why `data` is not the recorded content of output `i`; `None` when it is.
    pub(crate) fn output_mismatch(&self, i: usize, data: &[u8]) -> Option<String> {
        let Some((_, size, h)) = self.outputs.get(i) else {
            return Some("the record does not list it".into());
        };
        if data.len() as u64 != *size {
            return Some(format!("{} bytes where {size} were written", data.len()));
        }
        (xxh3_128(data) != *h).then(|| "its content is not what was written".to_string())
    }
}
