//! Why a compressed bundle cannot be read ([`CompressedError`]) or written
//! ([`CompressError`]), with LLVM's messages where LLVM has one.

use std::fmt;

pub(crate) const UNSUPPORTED: &str = "compressed bundles are not supported by this build (offload-formats without its `compression` feature)";

/// Why a compressed bundle cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompressedError {
    /// The data does not start with `CCOB`.
    NotCompressed,
    /// Built without the `compression` feature.
    Unsupported,
    /// The input ends inside the header.
    TruncatedHeader {
        /// Bytes the header needs.
        needed: u64,
        /// Bytes present.
        available: u64,
    },
    /// A version other than 1, 2 and 3.
    UnknownVersion(u16),
    /// A method other than 0 (zlib) and 1 (zstd).
    UnknownMethod(u16),
    /// The total size is smaller than the header itself.
    TotalTooSmall {
        /// The total size in the header.
        total: u64,
        /// The header's own size.
        header: u64,
    },
    /// The total size reaches past the end of the input.
    Truncated {
        /// The total size in the header.
        total: u64,
        /// Bytes present from the start of the header.
        available: u64,
    },
    /// The compressed data is not a complete zstd frame or zlib stream.
    TruncatedFrame,
    /// The compressed data is not a zstd frame (or zlib stream) at all, or it is corrupt.
    Corrupt(String),
    /// Bytes follow the zstd frame inside the total size.
    TrailingData {
        /// Offset (from the start of the header) where the frame ends.
        frame_end: u64,
        /// The total size in the header.
        total: u64,
    },
    /// The data decompresses to more bytes than the header says (LLVM: "Destination buffer is
    /// too small").
    SizeTooSmall {
        /// The uncompressed size in the header.
        claimed: u64,
        /// The size the frame holds (at least this much when `exact` is false).
        actual: u64,
        /// Whether `actual` is the frame's exact content size.
        exact: bool,
    },
    /// The uncompressed size is above the reader's limit.
    TooLarge {
        /// The size that would be allocated.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The stored hash differs from the data's and the reader was asked to be strict.
    HashMismatch {
        /// The hash in the header.
        stored: u64,
        /// The hash of the decompressed data.
        computed: u64,
    },
    /// The memory for the decompressed data could not be had (the allocator refused, as
    /// under `ulimit -v`): the buffer of an exactly known size, or a larger one for data that
    /// grows past what it holds.
    OutOfMemory {
        /// The size of the buffer that could not be allocated.
        size: u64,
    },
}

impl fmt::Display for CompressedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompressedError::NotCompressed => {
                f.write_str("not a compressed bundle (no CCOB magic)")
            }
            CompressedError::Unsupported => f.write_str(UNSUPPORTED),
            CompressedError::TruncatedHeader { needed, available } => write!(
                f,
                "compressed bundle header is truncated: it needs {needed} bytes but only {available} are present"
            ),
            CompressedError::UnknownVersion(v) => write!(
                f,
                "compressed bundle format version {v} at offset 4 is not supported (known: 1, 2, 3)"
            ),
            CompressedError::UnknownMethod(m) => write!(
                f,
                "unknown compression method {m} at offset 6 (known: 0 = zlib, 1 = zstd)"
            ),
            CompressedError::TotalTooSmall { total, header } => write!(
                f,
                "compressed bundle total size {total} (offset 8) is smaller than its {header}-byte header"
            ),
            CompressedError::Truncated { total, available } => write!(
                f,
                "compressed bundle is truncated: its header (offset 8) gives a total size of {total} bytes but only {available} are present"
            ),
            CompressedError::TruncatedFrame => {
                f.write_str("compressed data is truncated: the frame ends before it is complete")
            }
            CompressedError::Corrupt(msg) => write!(f, "compressed data is corrupt: {msg}"),
            CompressedError::TrailingData { frame_end, total } => write!(
                f,
                "the compressed frame ends at offset {frame_end} but the header's total size is {total}"
            ),
            CompressedError::SizeTooSmall {
                claimed,
                actual,
                exact,
            } => write!(
                f,
                "the header claims {claimed} uncompressed bytes but the data holds {}{actual}",
                if *exact { "" } else { "more than " }
            ),
            CompressedError::TooLarge { size, limit } => write!(
                f,
                "uncompressed size {size} is above the limit of {limit} bytes"
            ),
            CompressedError::HashMismatch { stored, computed } => write!(
                f,
                "hash mismatch: the header stores {stored:#x} but the data hashes to {computed:#x}"
            ),
            // The words of an input that cannot be read into memory (`/dev/zero`).
            CompressedError::OutOfMemory { .. } => f.write_str("out of memory"),
        }
    }
}

impl std::error::Error for CompressedError {}

/// Why a bundle cannot be compressed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompressError {
    /// Version 2 cannot hold an uncompressed size of 4 GiB or more.
    UncompressedTooLarge,
    /// Version 2 cannot hold a total size of 4 GiB or more.
    TotalTooLarge,
    /// Version 1 is read only.
    ReadOnlyVersion,
    /// The compression library failed (its message).
    Library(String),
    /// Built without the `compression` feature.
    Unsupported,
    /// The memory for the bundle or its compressed data could not be had.
    OutOfMemory,
}

impl fmt::Display for CompressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompressError::UncompressedTooLarge => {
                f.write_str("Uncompressed size exceeds version 2 limit")
            }
            CompressError::TotalTooLarge => f.write_str("Total file size exceeds version 2 limit"),
            CompressError::ReadOnlyVersion => {
                f.write_str("compressed bundle format version 1 can be read but not written")
            }
            CompressError::Library(msg) => f.write_str(msg),
            CompressError::Unsupported => f.write_str(UNSUPPORTED),
            CompressError::OutOfMemory => f.write_str("out of memory"),
        }
    }
}

impl std::error::Error for CompressError {}
