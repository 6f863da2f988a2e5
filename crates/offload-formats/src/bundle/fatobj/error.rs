//! Why a fat object cannot be read or written ([`FatObjectError`]).

use std::fmt;

use crate::raw::BUNDLE_MAGIC as MAGIC;

/// Why a fat object cannot be read or written.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FatObjectError {
    /// The object file could not be parsed (the message says why).
    Malformed(String),
    /// The `object` crate cannot read the object file, or one of its sections.
    Object {
        /// The index of the section that cannot be read, when the error is about one.
        section: Option<usize>,
        /// Why.
        error: object::read::Error,
    },
    /// The format (or variant) has no fat-object writer here.
    Unsupported(String),
    /// The bundle sections cannot be removed without renumbering sections.
    NotRemovable(String),
    /// The result would not fit the format's size fields.
    TooLarge,
    /// A bundle section's contents cannot be read: the section header places them (partly)
    /// outside the file, or the `object` crate refuses them. LLVM lists such a section by
    /// name but fails with "The end of the file was unexpectedly encountered" when it
    /// reads it.
    UnreadableSection {
        /// The section's index in the `object` crate's numbering (see
        /// [`FatObjectEntry::section`](super::FatObjectEntry::section)).
        section: usize,
        /// The bundle ID (the section name after the magic).
        id: Vec<u8>,
        /// The contents' offset and size as the section header claims them.
        range: Option<(u64, u64)>,
        /// The size of the whole file.
        file_size: u64,
        /// Why the `object` crate cannot read them.
        error: object::read::Error,
    },
}

impl fmt::Display for FatObjectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FatObjectError::Malformed(m) => write!(f, "malformed object file: {m}"),
            FatObjectError::Object {
                section: None,
                error,
            } => write!(f, "malformed object file: {error}"),
            FatObjectError::Object {
                section: Some(index),
                error,
            } => write!(f, "malformed object file: section {index}: {error}"),
            FatObjectError::Unsupported(m) => write!(f, "{m}"),
            FatObjectError::NotRemovable(m) => {
                write!(f, "cannot remove the offload bundle sections: {m}")
            }
            FatObjectError::TooLarge => f.write_str("the fat object would be too large"),
            FatObjectError::UnreadableSection {
                section,
                id,
                range,
                file_size,
                error,
            } => {
                let name = String::from_utf8_lossy(id);
                let magic = std::str::from_utf8(MAGIC).unwrap_or_default();
                write!(f, "section {section} '{magic}{name}': ")?;
                match range {
                    Some((offset, size)) if offset.saturating_add(*size) > *file_size => write!(
                        f,
                        "the end of the file was unexpectedly encountered: contents at offset {offset} ({offset:#x}), {size} bytes, but the file has {file_size} bytes"
                    ),
                    _ => write!(f, "contents cannot be read: {error}"),
                }
            }
        }
    }
}

impl std::error::Error for FatObjectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FatObjectError::Object { error, .. }
            | FatObjectError::UnreadableSection { error, .. } => Some(error),
            _ => None,
        }
    }
}

pub(super) fn malformed(m: impl Into<String>) -> FatObjectError {
    FatObjectError::Malformed(m.into())
}
