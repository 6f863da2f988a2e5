//! Choosing one entry of a [`Report`] and getting its bytes.

use std::borrow::Cow;

use super::{Container, Entry, Report, decompress};
use crate::bundle::BinaryBundle;
use crate::bundle::compressed::CompressedBundle;
use crate::package::OffloadBinary;
use crate::package::scan::split;

/// Which entry to extract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selector {
    /// The entry's [`Entry::index`].
    Index(usize),
    /// The entry with this ID; `nth` picks among several with the same ID (0-based).
    Id {
        /// The ID as [`Entry::id`] shows it.
        id: String,
        /// Which of the matches; required when the ID occurs more than once.
        nth: Option<usize>,
    },
    /// The entry at exactly this file offset and size (`file://…#offset=N&size=M`), or any
    /// byte range of the file when no entry matches it.
    Range {
        /// File offset.
        offset: u64,
        /// Size in bytes.
        size: u64,
    },
}

/// What [`select`] found.
#[derive(Clone, Copy, Debug)]
pub enum Selected<'r> {
    /// An entry of the report.
    Entry(&'r Container, &'r Entry),
    /// A raw byte range of the file.
    Range(u64, u64),
}

/// Finds the entry `selector` names in `report`.
pub fn select<'r>(report: &'r Report, selector: &Selector) -> Result<Selected<'r>, String> {
    match selector {
        Selector::Index(i) => report
            .entries()
            .find(|(_, e)| e.index == *i)
            .map(|(c, e)| Selected::Entry(c, e))
            .ok_or_else(|| {
                format!(
                    "no entry with index {i} (the file has {})",
                    report.entries().count()
                )
            }),
        Selector::Id { id, nth } => {
            let found: Vec<_> = report.entries().filter(|(_, e)| &e.id == id).collect();
            match (found.len(), nth) {
                (0, _) => Err(format!("no entry with ID '{id}'")),
                (1, None) => Ok(Selected::Entry(found[0].0, found[0].1)),
                (n, None) => Err(format!(
                    "{n} entries have ID '{id}'; choose one with --nth (0 to {}) or by --index",
                    n - 1
                )),
                (n, Some(k)) => found
                    .get(*k)
                    .map(|(c, e)| Selected::Entry(c, e))
                    .ok_or_else(|| {
                        format!("--nth {k} is out of range: {n} entries have ID '{id}'")
                    }),
            }
        }
        Selector::Range { offset, size } => {
            let end = offset
                .checked_add(*size)
                .filter(|&e| e <= report.size)
                .ok_or_else(|| {
                    format!(
                        "range offset={offset} size={size} lies outside the file ({} bytes)",
                        report.size
                    )
                })?;
            let _ = end;
            Ok(report
                .entries()
                .find(|(_, e)| e.offset == Some(*offset) && e.size == *size)
                .map_or(Selected::Range(*offset, *size), |(c, e)| {
                    Selected::Entry(c, e)
                }))
        }
    }
}

/// The bytes of `entry` of `container`, read from `data`, the inspected file.
pub fn entry_bytes<'d>(
    data: &'d [u8],
    container: &Container,
    entry: &Entry,
) -> Result<Cow<'d, [u8]>, String> {
    if let Some(off) = entry.offset {
        return range(data, off, entry.size).map(Cow::Borrowed);
    }
    let stored = range(data, container.offset, container.size)?;
    match container.kind {
        "compressed-bundle" => {
            let c = CompressedBundle::parse(stored).map_err(|e| e.to_string())?;
            let (_, bundle) = decompress(&c)?;
            let parsed = BinaryBundle::parse(&bundle)
                .map_err(|e| e.to_string())?
                .ok_or("the compressed bundle does not hold a binary bundle")?;
            let e = parsed
                .entries()
                .get(entry.position)
                .ok_or("entry not found after decompression")?;
            Ok(Cow::Owned(e.data.to_vec()))
        }
        "offload-binary" => {
            let binaries = split(stored).map_err(|e| e.to_string())?;
            let (_, bin) = binaries.first().ok_or("no offload binary")?;
            let parsed = OffloadBinary::parse(bin).map_err(|e| e.to_string())?;
            let e = parsed
                .entry(entry.position as u64)
                .ok_or("entry not found after decompression")?;
            Ok(Cow::Owned(e.image().to_vec()))
        }
        other => Err(format!("cannot extract from a {other}")),
    }
}

/// `size` bytes of `data` at `offset`, checked.
pub fn range(data: &[u8], offset: u64, size: u64) -> Result<&[u8], String> {
    usize::try_from(offset)
        .ok()
        .zip(usize::try_from(size).ok())
        .and_then(|(o, n)| data.get(o..o.checked_add(n)?))
        .ok_or_else(|| format!("offset={offset} size={size} lies outside the file"))
}
