//! What goes wrong with a device archive: malformed ([`DeviceArchiveError`]), a member that
//! cannot be unbundled, checked, written or have its symbols listed. Every error type of
//! the module lives here, so the reader, the unbundler, the writer and `bundle::symbols`
//! share them without importing one another.

use std::fmt;

use crate::bundle::BundleReadError;
use crate::bundle::bitcode::BitcodeError;
use crate::bundle::compressed::CompressedError;
use crate::bundle::fatobj::FatObjectError;

/// A malformed or unsupported archive, or a member that cannot be processed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceArchiveError {
    /// Byte offset of the member header concerned (0 for the archive as a whole).
    pub offset: u64,
    /// What is wrong.
    pub message: String,
}

impl DeviceArchiveError {
    pub(super) fn new(offset: usize, message: impl Into<String>) -> Self {
        DeviceArchiveError {
            offset: offset as u64,
            message: message.into(),
        }
    }
}

impl fmt::Display for DeviceArchiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.offset == 0 {
            write!(f, "malformed archive: {}", self.message)
        } else {
            write!(
                f,
                "malformed archive: member header at offset {}: {}",
                self.offset, self.message
            )
        }
    }
}

impl std::error::Error for DeviceArchiveError {}

/// A compressed archive member that cannot be decompressed; displayed with LLVM's prefix,
/// `Failed to decompress code object: `.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecompressMemberError(pub CompressedError);

impl fmt::Display for DecompressMemberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Failed to decompress code object: {}", self.0)
    }
}

impl std::error::Error for DecompressMemberError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// Why an archive member cannot be unbundled. Displayed as the wrapped error.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemberError {
    /// A compressed member that cannot be decompressed.
    Decompress(DecompressMemberError),
    /// A malformed bundle.
    Bundle(BundleReadError),
    /// A fat object whose host object cannot be extracted.
    FatObject(FatObjectError),
    /// The symbols of an extracted member cannot be listed.
    Symbols(SymbolsError),
}

impl MemberError {
    /// The wrapped error.
    pub fn inner(&self) -> &(dyn std::error::Error + 'static) {
        match self {
            MemberError::Decompress(e) => e,
            MemberError::Bundle(e) => e,
            MemberError::FatObject(e) => e,
            MemberError::Symbols(e) => e,
        }
    }
}

impl fmt::Display for MemberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.inner(), f)
    }
}

impl std::error::Error for MemberError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner().source()
    }
}

/// Why an archive cannot be unbundled.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UnbundleError {
    /// The archive is malformed.
    Archive(DeviceArchiveError),
    /// A member cannot be processed (`member`: its name).
    Member {
        /// The member's name.
        member: String,
        /// What went wrong.
        error: MemberError,
    },
    /// No entry of the archive is compatible with this (standardized) target; LLVM's
    /// message `no compatible code object found for the target '<T>' in heterogeneous
    /// archive library: <path>` when displayed with the path.
    NoCompatible {
        /// The standardized target.
        target: String,
        /// Its index in the targets given.
        index: usize,
    },
    /// The archive would exceed the format's limits.
    TooLarge,
}

impl UnbundleError {
    /// The message as clang-offload-bundler words it, `archive` being the input path.
    pub fn message(&self, archive: &str) -> String {
        match self {
            UnbundleError::Archive(e) => format!("'{archive}': {e}"),
            UnbundleError::Member { member, error } => {
                format!("'{archive}': member '{member}': {error}")
            }
            UnbundleError::NoCompatible { target, .. } => format!(
                "no compatible code object found for the target '{target}' in heterogeneous archive library: {archive}"
            ),
            UnbundleError::TooLarge => format!("'{archive}': the output archive is too large"),
        }
    }
}

impl fmt::Display for UnbundleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message("<archive>"))
    }
}

impl std::error::Error for UnbundleError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            UnbundleError::Archive(e) => Some(e),
            UnbundleError::Member { error, .. } => Some(error.inner()),
            _ => None,
        }
    }
}

impl From<DeviceArchiveError> for UnbundleError {
    fn from(e: DeviceArchiveError) -> Self {
        UnbundleError::Archive(e)
    }
}

/// Why [`check_archive`](super::check_archive) refuses an archive.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CheckArchiveError {
    /// The archive is malformed.
    Archive {
        /// The archive's path, as given.
        path: String,
        /// What is wrong.
        error: DeviceArchiveError,
    },
    /// A member is a malformed bundle.
    Member {
        /// The archive's path, as given.
        path: String,
        /// The member's name.
        member: String,
        /// What is wrong.
        error: BundleReadError,
    },
    /// A member combines target IDs inconsistently (LLVM's message `conflicting TargetIDs
    /// [<A>, <B>] found in <member> of <archive>`).
    Conflict {
        /// The archive's path, as given.
        path: String,
        /// The member's name.
        member: String,
        /// The two conflicting target IDs.
        ids: [String; 2],
    },
}

impl fmt::Display for CheckArchiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckArchiveError::Archive { path, error } => write!(f, "'{path}': {error}"),
            CheckArchiveError::Member {
                path,
                member,
                error,
            } => write!(f, "'{path}': member '{member}': {error}"),
            CheckArchiveError::Conflict {
                path,
                member,
                ids: [a, b],
            } => write!(
                f,
                "conflicting TargetIDs [{a}, {b}] found in {member} of {path}"
            ),
        }
    }
}

impl std::error::Error for CheckArchiveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CheckArchiveError::Archive { error, .. } => Some(error),
            CheckArchiveError::Member { error, .. } => Some(error),
            CheckArchiveError::Conflict { .. } => None,
        }
    }
}

/// Why an archive cannot be written.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteArchiveError {
    /// A member's symbols cannot be read (LLVM fails the same way).
    Symbols {
        /// The member name.
        member: String,
        /// What is wrong.
        error: SymbolsError,
    },
    /// A size does not fit the format.
    TooLarge,
}

impl fmt::Display for WriteArchiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteArchiveError::Symbols { member, error } => {
                write!(f, "member '{member}': {error}")
            }
            WriteArchiveError::TooLarge => f.write_str("archive too large"),
        }
    }
}

impl std::error::Error for WriteArchiveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WriteArchiveError::Symbols { error, .. } => Some(error.inner()),
            WriteArchiveError::TooLarge => None,
        }
    }
}

/// Why a member's archive symbols cannot be listed. Displayed as the wrapped error or the
/// message.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SymbolsError {
    /// Bitcode whose symbol table cannot be read.
    Bitcode(BitcodeError),
    /// An object file the `object` crate cannot read.
    Object(object::read::Error),
    /// A member the writer cannot list (the message says why).
    Unsupported(String),
}

impl SymbolsError {
    /// The wrapped error (the error itself for [`SymbolsError::Unsupported`]).
    pub fn inner(&self) -> &(dyn std::error::Error + 'static) {
        match self {
            SymbolsError::Bitcode(e) => e,
            SymbolsError::Object(e) => e,
            SymbolsError::Unsupported(_) => self,
        }
    }
}

impl fmt::Display for SymbolsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SymbolsError::Bitcode(e) => fmt::Display::fmt(e, f),
            SymbolsError::Object(e) => fmt::Display::fmt(e, f),
            SymbolsError::Unsupported(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for SymbolsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SymbolsError::Bitcode(e) => e.source(),
            SymbolsError::Object(e) => e.source(),
            SymbolsError::Unsupported(_) => None,
        }
    }
}

impl From<BitcodeError> for SymbolsError {
    fn from(e: BitcodeError) -> Self {
        SymbolsError::Bitcode(e)
    }
}

impl From<object::read::Error> for SymbolsError {
    fn from(e: object::read::Error) -> Self {
        SymbolsError::Object(e)
    }
}
