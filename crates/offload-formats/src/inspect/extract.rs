//! Choosing one entry of a [`Report`] and getting its bytes.

use std::borrow::Cow;
use std::fmt;

use super::decode::decompress;
use super::report::{ContainerReport, EntryReport, Report};
use crate::bundle::BinaryBundle;
use crate::bundle::binary::{Descriptor, HeaderRead, read_header};
use crate::bundle::compressed::{CompressedBundle, CompressedError};
use crate::package::OffloadBinary;
use crate::package::scan::split;

/// Which entry to extract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selector {
    /// The entry's [`EntryReport::index`].
    Index(usize),
    /// The entry with this ID; `nth` picks among several with the same ID (0-based).
    Id {
        /// The ID as [`EntryReport::id`] shows it.
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

/// Why [`select`], [`entry_bytes`] or [`range`] fails.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExtractError {
    /// The selector names nothing in the file, or more than one entry (the message says why).
    NotFound(String),
    /// A byte range outside the file.
    OutOfRange {
        /// Offset of the range.
        offset: u64,
        /// Size of the range.
        size: u64,
    },
    /// A compressed bundle that cannot be read or decompressed.
    Compressed(CompressedError),
    /// A malformed bundle.
    Bundle(crate::bundle::BundleReadError),
    /// A malformed offload binary.
    OffloadBinary(crate::package::PackageReadError),
    /// A malformed NVIDIA fat binary, or a compressed entry that does not decompress.
    NvFatbin(crate::nvfatbin::FatbinError),
    /// The container does not hold the entry, or cannot be extracted from (the message says
    /// why).
    Container(String),
}

impl fmt::Display for ExtractError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExtractError::NotFound(m) | ExtractError::Container(m) => f.write_str(m),
            ExtractError::OutOfRange { offset, size } => {
                write!(f, "offset={offset} size={size} lies outside the file")
            }
            ExtractError::Compressed(e) => fmt::Display::fmt(e, f),
            ExtractError::Bundle(e) => fmt::Display::fmt(e, f),
            ExtractError::OffloadBinary(e) => fmt::Display::fmt(e, f),
            ExtractError::NvFatbin(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for ExtractError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ExtractError::Compressed(e) => Some(e),
            ExtractError::Bundle(e) => Some(e),
            ExtractError::OffloadBinary(e) => Some(e),
            ExtractError::NvFatbin(e) => Some(e),
            _ => None,
        }
    }
}

/// What [`select`] found.
#[derive(Clone, Copy, Debug)]
pub enum Selected<'r> {
    /// An entry of the report.
    Entry(&'r ContainerReport, &'r EntryReport),
    /// A raw byte range of the file.
    Range(u64, u64),
}

/// Finds the entry `selector` names in `report`.
pub fn select<'r>(report: &'r Report, selector: &Selector) -> Result<Selected<'r>, ExtractError> {
    match selector {
        Selector::Index(i) => report
            .entries()
            .find(|(_, e)| e.index == *i)
            .map(|(c, e)| Selected::Entry(c, e))
            .ok_or_else(|| {
                ExtractError::NotFound(format!(
                    "no entry with index {i} (the file has {})",
                    report.entries().count()
                ))
            }),
        Selector::Id { id, nth } => {
            let found: Vec<_> = report.entries().filter(|(_, e)| &e.id == id).collect();
            match (found.len(), nth) {
                (0, _) => Err(ExtractError::NotFound(format!("no entry with ID '{id}'"))),
                (1, None) => Ok(Selected::Entry(found[0].0, found[0].1)),
                (n, None) => Err(ExtractError::NotFound(format!(
                    "{n} entries have ID '{id}'; choose one with --nth (0 to {}) or by --index",
                    n - 1
                ))),
                (n, Some(k)) => found
                    .get(*k)
                    .map(|(c, e)| Selected::Entry(c, e))
                    .ok_or_else(|| {
                        ExtractError::NotFound(format!(
                            "--nth {k} is out of range: {n} entries have ID '{id}'"
                        ))
                    }),
            }
        }
        Selector::Range { offset, size } => {
            let end = offset
                .checked_add(*size)
                .filter(|&e| e <= report.size)
                .ok_or_else(|| {
                    ExtractError::NotFound(format!(
                        "range offset={offset} size={size} lies outside the file ({} bytes)",
                        report.size
                    ))
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
    container: &ContainerReport,
    entry: &EntryReport,
) -> Result<Cow<'d, [u8]>, ExtractError> {
    let unusable = |m: &str| ExtractError::Container(m.to_owned());
    if let Some(off) = entry.offset {
        return range(data, off, entry.size).map(Cow::Borrowed);
    }
    let stored = range(data, container.offset, container.size)?;
    match container.kind {
        "compressed-bundle" => {
            let c = CompressedBundle::parse(stored).map_err(ExtractError::Compressed)?;
            if let Some(bytes) = entry_from_prefix(&c, entry.position) {
                return Ok(Cow::Owned(bytes));
            }
            let (_, bundle) = decompress(&c).map_err(ExtractError::Compressed)?;
            let parsed = BinaryBundle::parse(&bundle)
                .map_err(ExtractError::Bundle)?
                .ok_or_else(|| unusable("the compressed bundle does not hold a binary bundle"))?;
            let e = parsed
                .entries()
                .get(entry.position)
                .ok_or_else(|| unusable("entry not found after decompression"))?;
            Ok(Cow::Owned(e.data.to_vec()))
        }
        "offload-binary" => {
            let binaries = split(stored).map_err(ExtractError::OffloadBinary)?;
            let (_, bin) = binaries
                .first()
                .ok_or_else(|| unusable("no offload binary"))?;
            let parsed = OffloadBinary::parse(bin).map_err(ExtractError::OffloadBinary)?;
            let e = parsed
                .entry(entry.position as u64)
                .ok_or_else(|| unusable("entry not found after decompression"))?;
            Ok(Cow::Owned(e.image().to_vec()))
        }
        "nv-fatbin" => {
            use crate::nvfatbin::{DEFAULT_MAX_UNCOMPRESSED, Fatbin};
            let parsed = Fatbin::parse(stored).map_err(ExtractError::NvFatbin)?;
            let e = parsed
                .entries()
                .get(entry.position)
                .ok_or_else(|| unusable("entry not found in the NVIDIA fat binary"))?;
            let data = e
                .decompress(DEFAULT_MAX_UNCOMPRESSED)
                .map_err(ExtractError::NvFatbin)?
                .ok_or_else(|| unusable("the NVIDIA fat binary entry is not compressed"))?;
            Ok(Cow::Owned(data))
        }
        other => Err(unusable(&format!("cannot extract from a {other}"))),
    }
}

/// Entry `position` of a compressed bundle, decoding only up to that entry's end; `None` when
/// that cannot be done with the answer a whole decode gives (see [`super::decode::trusted_size`]), and
/// the caller decodes the whole bundle instead.
fn entry_from_prefix(c: &CompressedBundle<'_>, position: usize) -> Option<Vec<u8>> {
    let size = super::decode::trusted_size(c)?;
    let entry_end = |d: &[Descriptor<'_>]| d.get(position).map(|e| e.offset + e.size);
    let data = super::decode::decode_table(c, size, entry_end)?;
    let Ok(Some(HeaderRead::Complete(descriptors, _))) = read_header(&data, size) else {
        return None;
    };
    let e = descriptors.get(position)?;
    let start = usize::try_from(e.offset).ok()?;
    let stop = usize::try_from(e.offset.checked_add(e.size)?).ok()?;
    data.get(start..stop).map(<[u8]>::to_vec)
}

/// `size` bytes of `data` at `offset`, checked.
pub fn range(data: &[u8], offset: u64, size: u64) -> Result<&[u8], ExtractError> {
    usize::try_from(offset)
        .ok()
        .zip(usize::try_from(size).ok())
        .and_then(|(o, n)| data.get(o..o.checked_add(n)?))
        .ok_or(ExtractError::OutOfRange { offset, size })
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn errors_read_as_before_and_keep_their_source() {
        let e = range(b"abc", 2, 5).unwrap_err();
        assert_eq!(e.to_string(), "offset=2 size=5 lies outside the file");
        assert!(e.source().is_none());

        let inner = CompressedBundle::parse(b"CCOB\x09\x00").unwrap_err();
        let e = ExtractError::Compressed(inner.clone());
        assert_eq!(e.to_string(), inner.to_string());
        assert_eq!(
            e.source().and_then(|s| s.downcast_ref::<CompressedError>()),
            Some(&inner)
        );
    }
}
