//! Why a file cannot be inspected ([`InspectError`]), with the typed error of the reader
//! that refused it ([`InspectSource`]).

use std::fmt;

use crate::bundle::compressed::CompressedError;
use crate::bundle::sequence::SequenceError;

/// A file that cannot be inspected. Displayed as `'<path>'[, <location>]: <message>[: <source>]`
/// (the message alone, or the source alone when the message is empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InspectError {
    /// The file.
    pub path: String,
    /// Where in it: archive member and/or section, when known.
    pub location: Option<String>,
    /// What is wrong, or what was being read when `source` failed (may be empty then).
    pub message: String,
    /// The error of the reader that refused the file, when one did (boxed: the errors of
    /// the readers are large, and most inspections succeed).
    pub source: Option<Box<InspectSource>>,
}

impl fmt::Display for InspectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}'", self.path)?;
        if let Some(l) = &self.location {
            write!(f, ", {l}")?;
        }
        match &self.source {
            None => write!(f, ": {}", self.message),
            Some(s) if self.message.is_empty() => write!(f, ": {s}"),
            Some(s) => write!(f, ": {}: {s}", self.message),
        }
    }
}

impl std::error::Error for InspectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(InspectSource::inner)
    }
}

/// The error of the reader that refused an inspected file. Displayed as that error.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InspectSource {
    /// An object file or archive the `object` crate cannot read.
    Object(object::read::Error),
    /// A bundle sequence that cannot be walked.
    Sequence(SequenceError),
    /// A compressed bundle that cannot be decompressed.
    Compressed(CompressedError),
    /// A malformed bundle.
    Bundle(crate::bundle::BundleReadError),
    /// A malformed offload binary.
    OffloadBinary(crate::package::PackageReadError),
    /// A malformed NVIDIA fat binary.
    NvFatbin(crate::nvfatbin::FatbinError),
}

impl InspectSource {
    /// The wrapped error.
    pub fn inner(&self) -> &(dyn std::error::Error + 'static) {
        match self {
            InspectSource::Object(e) => e,
            InspectSource::Sequence(e) => e,
            InspectSource::Compressed(e) => e,
            InspectSource::Bundle(e) => e,
            InspectSource::OffloadBinary(e) => e,
            InspectSource::NvFatbin(e) => e,
        }
    }
}

impl fmt::Display for InspectSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.inner(), f)
    }
}

impl std::error::Error for InspectSource {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner().source()
    }
}

macro_rules! inspect_source_from {
    ($($variant:ident($ty:ty)),* $(,)?) => {$(
        impl From<$ty> for InspectSource {
            fn from(e: $ty) -> Self {
                InspectSource::$variant(e)
            }
        }
    )*};
}

inspect_source_from!(
    Object(object::read::Error),
    Sequence(SequenceError),
    Compressed(CompressedError),
    Bundle(crate::bundle::BundleReadError),
    OffloadBinary(crate::package::PackageReadError),
    NvFatbin(crate::nvfatbin::FatbinError),
);
