//! Errors of the offload binary reader, writer and container scan.

use std::fmt;
use std::io;
use std::sync::Arc;

/// What is wrong with a malformed offload binary.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PackageReadErrorKind {
    /// The input ends before a structure it must hold.
    Truncated {
        /// The structure that is cut off.
        field: &'static str,
        /// Bytes it needs.
        needed: u64,
        /// Bytes available.
        available: u64,
    },
    /// The input does not start with the magic bytes `10 FF 10 AD`.
    BadMagic,
    /// A layout version this reader does not know (it reads 1 to 3).
    UnsupportedVersion(u32),
    /// The header's total size is larger than the input or smaller than a header.
    BadSize {
        /// The size in the header.
        size: u64,
        /// Bytes available.
        available: u64,
    },
    /// A size or offset that every writer aligns to 8 bytes is not aligned.
    Misaligned {
        /// The field.
        field: &'static str,
        /// Its value.
        value: u64,
    },
    /// A region named by the header or an entry lies outside the binary.
    OutOfRange {
        /// The region.
        field: &'static str,
        /// Its offset.
        offset: u64,
        /// Its size.
        size: u64,
        /// The size of the binary.
        limit: u64,
    },
    /// A NUL-terminated string runs to the end of the binary.
    UnterminatedString {
        /// `key` or `value`.
        field: &'static str,
    },
    /// The binary is compressed (version 3): decompress it first.
    Compressed,
    /// Decompression cannot start (the message says why).
    Decompression(String),
    /// The decompressor failed.
    Inflate(InflateError),
    /// The decompressed data does not have the size the header announces.
    InflatedSize {
        /// The size the header announces (minus the header).
        expected: u64,
        /// The size found (at most `expected + 1`: decompression stops there).
        found: u64,
    },
}

/// A malformed offload binary: what is wrong, where, and in which entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackageReadError {
    /// What is wrong.
    pub kind: PackageReadErrorKind,
    /// Offset in the input of the structure (header, entry, string entry) that is wrong.
    pub offset: u64,
    /// Zero-based index of the entry, when the problem belongs to one.
    pub entry: Option<u64>,
}

impl PackageReadError {
    pub(crate) fn new(
        kind: PackageReadErrorKind,
        offset: u64,
        entry: Option<u64>,
    ) -> PackageReadError {
        PackageReadError {
            kind,
            offset,
            entry,
        }
    }

    /// The same error with `base` added to its offset (for binaries inside a larger input).
    pub fn at(mut self, base: u64) -> PackageReadError {
        self.offset = self.offset.saturating_add(base);
        self
    }
}

impl fmt::Display for PackageReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed offload binary at offset {}: ", self.offset)?;
        if let Some(i) = self.entry {
            write!(f, "entry {i}: ")?;
        }
        match &self.kind {
            PackageReadErrorKind::Truncated {
                field,
                needed,
                available,
            } => write!(
                f,
                "{field} needs {needed} bytes but only {available} remain"
            ),
            PackageReadErrorKind::BadMagic => f.write_str("no offload binary magic (10 ff 10 ad)"),
            PackageReadErrorKind::UnsupportedVersion(v) => {
                write!(f, "version {v} is not supported (known: 1 to 3)")
            }
            PackageReadErrorKind::BadSize { size, available } => write!(
                f,
                "header gives a total size of {size} bytes, but {available} bytes are available"
            ),
            PackageReadErrorKind::Misaligned { field, value } => {
                write!(f, "{field} {value} is not a multiple of 8")
            }
            PackageReadErrorKind::OutOfRange {
                field,
                offset,
                size,
                limit,
            } => write!(
                f,
                "{field} at offset {offset} ({size} bytes) lies outside the binary ({limit} bytes)"
            ),
            PackageReadErrorKind::UnterminatedString { field } => {
                write!(f, "{field} string has no terminating NUL inside the binary")
            }
            PackageReadErrorKind::Compressed => {
                f.write_str("binary is compressed; decompress it before parsing")
            }
            PackageReadErrorKind::Decompression(e) => write!(f, "cannot decompress: {e}"),
            PackageReadErrorKind::Inflate(e) => write!(f, "cannot decompress: {}", e.0),
            PackageReadErrorKind::InflatedSize { expected, found } => write!(
                f,
                "decompressed to {found} bytes, but the header announces {expected}"
            ),
        }
    }
}

impl std::error::Error for PackageReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            PackageReadErrorKind::Inflate(e) => Some(&*e.0),
            _ => None,
        }
    }
}

/// The I/O error of a zstd or zlib decompressor, shared so that [`PackageReadError`] stays `Clone`;
/// two are equal when their kind and message are.
#[derive(Clone, Debug)]
pub struct InflateError(pub Arc<io::Error>);

impl PartialEq for InflateError {
    fn eq(&self, other: &Self) -> bool {
        self.0.kind() == other.0.kind() && self.0.to_string() == other.0.to_string()
    }
}

impl Eq for InflateError {}

/// Why an offload binary cannot be written.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PackageWriteError {
    /// A key or value contains a NUL byte, which the string table cannot hold.
    NulInString(String),
    /// The offload kind has no value in the target LLVM (SYCL before LLVM 21).
    UnrepresentableKind {
        /// The kind.
        kind: &'static str,
        /// The target LLVM major version.
        llvm: u32,
    },
    /// A version-2 binary needs at least one image.
    NoImages,
    /// Sizes would not fit in 64 bits.
    TooLarge,
}

impl fmt::Display for PackageWriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PackageWriteError::NulInString(s) => {
                write!(f, "string '{}' contains a NUL byte", s.escape_debug())
            }
            PackageWriteError::UnrepresentableKind { kind, llvm } => {
                write!(f, "offload kind '{kind}' has no value in LLVM {llvm}")
            }
            PackageWriteError::NoImages => f.write_str("a version 2 offload binary needs an image"),
            PackageWriteError::TooLarge => {
                f.write_str("offload binary size does not fit in 64 bits")
            }
        }
    }
}

impl std::error::Error for PackageWriteError {}
