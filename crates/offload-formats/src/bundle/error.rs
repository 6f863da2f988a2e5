//! Errors of the bundle readers and writers.

use std::fmt;

/// What is wrong with a malformed bundle.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BundleReadErrorKind {
    /// The header ends before a field it must hold.
    Truncated {
        /// The field that is cut off.
        field: &'static str,
        /// Bytes the field needs.
        needed: u64,
        /// Bytes left in the input at that point.
        available: u64,
    },
    /// The entry count claims more descriptors than the input could hold.
    CountTooLarge {
        /// The count in the header.
        count: u64,
        /// The most descriptors that fit in the input.
        max: u64,
    },
    /// An entry's payload offset is zero (LLVM stops reading there).
    ZeroOffset,
    /// An entry's payload extends past the end of the input.
    PastEnd {
        /// Payload offset.
        offset: u64,
        /// Payload size.
        size: u64,
        /// Length of the input.
        len: u64,
    },
    /// A text bundle entry has a start marker but no end marker.
    MissingEnd {
        /// The entry ID after the start marker.
        id: String,
    },
}

/// A malformed bundle: what is wrong, where, and in which entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleReadError {
    /// What is wrong.
    pub kind: BundleReadErrorKind,
    /// Byte offset in the input where the problem was found.
    pub offset: u64,
    /// Zero-based index of the entry, when the problem belongs to one.
    pub entry: Option<u64>,
}

impl BundleReadError {
    pub(crate) fn new(kind: BundleReadErrorKind, offset: u64, entry: Option<u64>) -> Self {
        BundleReadError {
            kind,
            offset,
            entry,
        }
    }
}

impl fmt::Display for BundleReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("malformed offload bundle: ")?;
        if let Some(i) = self.entry {
            write!(f, "entry {i}: ")?;
        }
        match &self.kind {
            BundleReadErrorKind::Truncated {
                field,
                needed,
                available,
            } => write!(
                f,
                "{field} at offset {} needs {needed} bytes but only {available} remain",
                self.offset
            ),
            BundleReadErrorKind::CountTooLarge { count, max } => write!(
                f,
                "header at offset {} claims {count} entries but the input can hold at most {max}",
                self.offset
            ),
            BundleReadErrorKind::ZeroOffset => write!(
                f,
                "descriptor at offset {} gives payload offset 0",
                self.offset
            ),
            BundleReadErrorKind::PastEnd { offset, size, len } => write!(
                f,
                "descriptor at offset {} places {size} bytes at offset {offset}, past the end of the input ({len} bytes)",
                self.offset
            ),
            BundleReadErrorKind::MissingEnd { id } => write!(
                f,
                "start marker for '{id}' at offset {} has no matching end marker",
                self.offset
            ),
        }
    }
}

impl std::error::Error for BundleReadError {}

/// Why a bundle cannot be written.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BundleWriteError {
    /// `-bundle-align=0`.
    ZeroAlignment,
    /// Two entries share an ID (LLVM writes a corrupt file in that case).
    DuplicateId(String),
    /// Offsets would not fit in 64 bits.
    TooLarge,
    /// A payload does not have the size its entry was planned with.
    SizeChanged {
        /// Index of the entry.
        entry: usize,
        /// The planned size.
        expected: u64,
        /// The payload's size.
        actual: u64,
    },
}

impl fmt::Display for BundleWriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BundleWriteError::ZeroAlignment => {
                f.write_str("-bundle-align=0 is invalid: the bundle alignment must be at least 1")
            }
            BundleWriteError::DuplicateId(id) => {
                write!(f, "two entries have the same bundle ID '{id}'")
            }
            BundleWriteError::TooLarge => f.write_str("bundle size does not fit in 64 bits"),
            BundleWriteError::SizeChanged {
                entry,
                expected,
                actual,
            } => write!(
                f,
                "entry {entry}: expected {expected} payload bytes, got {actual}"
            ),
        }
    }
}

impl std::error::Error for BundleWriteError {}
