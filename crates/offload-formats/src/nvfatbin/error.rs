//! What is wrong with a malformed fat binary ([`FatbinError`]), and the checked reads of
//! header fields that make those errors, shared by the entry and fat-binary readers.

use std::fmt;

use crate::raw::{self, NVFATBIN_MAGIC as MAGIC};

use super::layout::Compression;

/// What is wrong with a malformed fat binary.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FatbinErrorKind {
    /// The input does not start with the magic number.
    BadMagic,
    /// A header ends before a field it must hold.
    Truncated {
        /// The field that is cut off.
        field: &'static str,
        /// Bytes the field needs.
        needed: u64,
        /// Bytes left in the input at that point.
        available: u64,
    },
    /// The outer header's size is smaller than 16.
    BadHeaderSize(u16),
    /// An entry header's size is smaller than 64 or past the fat binary's end.
    BadEntryHeaderSize(u32),
    /// An entry's payload extends past the fat binary's end.
    PastEnd {
        /// What extends past the end.
        what: &'static str,
        /// Its offset, from the fat binary's start.
        offset: u64,
        /// Its size.
        size: u64,
        /// The fat binary's size.
        len: u64,
    },
    /// A string (identifier, options) has no NUL within the entry header.
    Unterminated(&'static str),
    /// A compressed payload that does not decompress to its uncompressed size.
    Decompression {
        /// The compression.
        method: Compression,
        /// What went wrong.
        message: String,
    },
    /// The uncompressed size is above the caller's limit.
    TooLarge {
        /// The uncompressed size the entry claims.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// The compressed size is larger than the payload.
    CompressedSize {
        /// The compressed size.
        compressed: u32,
        /// The payload size.
        payload: u64,
    },
}

/// A malformed fat binary: what is wrong, where, and in which entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FatbinError {
    /// What is wrong.
    pub kind: FatbinErrorKind,
    /// Byte offset, from the start of the fat binary, where the problem was found.
    pub offset: u64,
    /// Zero-based index of the entry, when the problem belongs to one.
    pub entry: Option<usize>,
}

impl fmt::Display for FatbinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("malformed NVIDIA fat binary")?;
        if let Some(e) = self.entry {
            write!(f, ", entry {e}")?;
        }
        write!(f, " at offset {}: ", self.offset)?;
        match &self.kind {
            FatbinErrorKind::BadMagic => write!(f, "no magic 0x{MAGIC:08X}"),
            FatbinErrorKind::Truncated {
                field,
                needed,
                available,
            } => write!(
                f,
                "{field} truncated: needs {needed} bytes, {available} available"
            ),
            FatbinErrorKind::BadHeaderSize(s) => write!(f, "header size {s} is less than 16"),
            FatbinErrorKind::BadEntryHeaderSize(s) => write!(
                f,
                "entry header size {s} is less than 64 or past the end of the fat binary"
            ),
            FatbinErrorKind::PastEnd {
                what,
                offset,
                size,
                len,
            } => write!(
                f,
                "{what} at offset {offset} with size {size} extends past the end ({len} bytes)"
            ),
            FatbinErrorKind::Unterminated(what) => {
                write!(f, "{what} has no NUL within the entry header")
            }
            FatbinErrorKind::Decompression { method, message } => {
                write!(f, "{method}-compressed payload: {message}")
            }
            FatbinErrorKind::TooLarge { size, max } => write!(
                f,
                "uncompressed size {size} is above the limit of {max} bytes"
            ),
            FatbinErrorKind::CompressedSize {
                compressed,
                payload,
            } => write!(
                f,
                "compressed size {compressed} is larger than the payload ({payload} bytes)"
            ),
        }
    }
}

impl std::error::Error for FatbinError {}

pub(super) fn err(kind: FatbinErrorKind, offset: usize, entry: Option<usize>) -> FatbinError {
    FatbinError {
        kind,
        offset: offset as u64,
        entry,
    }
}

/// The error for a field of `size` bytes at `at` that `data` does not hold.
pub(super) fn truncated(
    data: &[u8],
    at: usize,
    field: &'static str,
    size: usize,
    entry: Option<usize>,
) -> FatbinError {
    let available = data.len().saturating_sub(at) as u64;
    let kind = FatbinErrorKind::Truncated {
        field,
        needed: size as u64,
        available,
    };
    err(kind, at, entry)
}

/// The `T` at `at`, or the error naming the first of its `fields` that `data` cuts.
pub(super) fn read_header<'d, T: object::pod::Pod>(
    data: &'d [u8],
    at: usize,
    fields: &[raw::Field],
    entry: Option<usize>,
) -> Result<&'d T, FatbinError> {
    raw::read_at::<T>(data, at).ok_or_else(|| {
        let (f, _) = raw::first_cut(fields, data.len().saturating_sub(at))
            .expect("a header that does not fit cuts a field");
        truncated(data, at + f.offset, f.name, f.size, entry)
    })
}

pub(super) fn u32_at(
    d: &[u8],
    at: usize,
    name: &'static str,
    e: Option<usize>,
) -> Result<u32, FatbinError> {
    raw::u32_at(d, at).ok_or_else(|| truncated(d, at, name, 4, e))
}

impl FatbinError {
    /// Makes an offset relative to an entry relative to the fat binary.
    pub(super) fn at(mut self, base: usize) -> FatbinError {
        self.offset += base as u64;
        self
    }
}
