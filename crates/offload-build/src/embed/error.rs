//! The errors of the object emitters: [`EmbedError`], with [`DeviceCodeError`] for device
//! code that cannot be used and [`DeviceCodeSource`], the reader's or writer's own error.

use std::error::Error as StdError;
use std::fmt;

use offload_formats::bundle::compressed::{CompressError, CompressedError};
use offload_formats::bundle::sequence::SequenceError;
use offload_formats::id::target_id::TargetIdError;

/// Why a host object cannot be written.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EmbedError {
    /// The host triple names an architecture or object format the emitter does not support.
    UnsupportedTarget(String),
    /// The device code given is not usable (a malformed bundle, offload binary or code object).
    DeviceCode(DeviceCodeError),
    /// Two device symbols or caller-given symbols cannot both be emitted.
    Symbol(String),
    /// A value does not fit the encoding of the target (e.g. a variable too large).
    Limit(String),
    /// The `object` crate refused the object.
    Object(object::write::Error),
}

impl EmbedError {
    /// [`EmbedError::DeviceCode`] for `source`, refused while reading or writing `context`
    /// (empty when the source's message says it all).
    pub(crate) fn device(context: impl Into<String>, source: impl Into<DeviceCodeSource>) -> Self {
        EmbedError::DeviceCode(DeviceCodeError {
            context: context.into(),
            source: Some(source.into()),
        })
    }
}

impl fmt::Display for EmbedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmbedError::UnsupportedTarget(m) => write!(f, "unsupported host target: {m}"),
            EmbedError::DeviceCode(m) => write!(f, "unusable device code: {m}"),
            EmbedError::Symbol(m) => write!(f, "symbol conflict: {m}"),
            EmbedError::Limit(m) => write!(f, "value out of range: {m}"),
            EmbedError::Object(e) => write!(f, "cannot write the object: {e}"),
        }
    }
}

impl StdError for EmbedError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            EmbedError::DeviceCode(e) => e.source.as_ref().map(DeviceCodeSource::inner),
            EmbedError::Object(e) => Some(e),
            _ => None,
        }
    }
}

impl From<object::write::Error> for EmbedError {
    fn from(e: object::write::Error) -> Self {
        EmbedError::Object(e)
    }
}

/// Why device code is unusable: a message, or the error of the reader or writer that refused
/// it with what it was reading or writing. Displayed as `<context>: <source>` (either part
/// alone when the other is empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceCodeError {
    /// What is wrong, or what was being read or written when `source` failed (`the bundle`,
    /// `offload binary`, …); may be empty when there is a source.
    pub context: String,
    /// The error of the reader or writer that refused the device code.
    pub source: Option<DeviceCodeSource>,
}

impl fmt::Display for DeviceCodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            None => f.write_str(&self.context),
            Some(s) if self.context.is_empty() => write!(f, "{s}"),
            Some(s) => write!(f, "{}: {s}", self.context),
        }
    }
}

impl StdError for DeviceCodeError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source.as_ref().map(DeviceCodeSource::inner)
    }
}

impl From<String> for DeviceCodeError {
    fn from(message: String) -> Self {
        DeviceCodeError {
            context: message,
            source: None,
        }
    }
}

impl From<&str> for DeviceCodeError {
    fn from(message: &str) -> Self {
        DeviceCodeError::from(message.to_owned())
    }
}

/// Declares [`DeviceCodeSource`] from one list of (variant, wrapped error type): the enum,
/// [`DeviceCodeSource::inner`] and a `From` per type.
macro_rules! device_code_source {
    ($($(#[$doc:meta])* $variant:ident($ty:ty),)*) => {
        /// The error of the reader or writer that refused device code. Displayed as that
        /// error; [`source`](StdError::source) is that error's own source.
        #[derive(Clone, Debug, PartialEq, Eq)]
        #[non_exhaustive]
        pub enum DeviceCodeSource {
            $($(#[$doc])* $variant($ty),)*
        }

        impl DeviceCodeSource {
            /// The wrapped error.
            pub fn inner(&self) -> &(dyn StdError + 'static) {
                match self {
                    $(DeviceCodeSource::$variant(e) => e,)*
                }
            }
        }

        $(impl From<$ty> for DeviceCodeSource {
            fn from(e: $ty) -> Self {
                DeviceCodeSource::$variant(e)
            }
        })*
    };
}

device_code_source! {
    /// A target ID that cannot be parsed.
    TargetId(TargetIdError),
    /// A bundle sequence that cannot be walked.
    Sequence(SequenceError),
    /// A malformed binary bundle.
    Bundle(offload_formats::bundle::BundleReadError),
    /// A compressed bundle that cannot be decompressed.
    Compressed(CompressedError),
    /// The bundle of the code objects cannot be written.
    WriteBundle(offload_formats::bundle::BundleWriteError),
    /// The bundle cannot be compressed.
    Compress(CompressError),
    /// A malformed offload binary.
    OffloadBinary(offload_formats::package::PackageReadError),
    /// A code object the `object` crate cannot read.
    Elf(object::read::Error),
}

impl fmt::Display for DeviceCodeSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.inner(), f)
    }
}

impl StdError for DeviceCodeSource {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.inner().source()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_is_the_wrapped_error() {
        let inner = offload_formats::id::target_id::TargetId::parse("gfx90a:xnack").unwrap_err();
        let e = EmbedError::device("target ID 'gfx90a:xnack'", inner.clone());
        assert_eq!(
            e.to_string(),
            format!("unusable device code: target ID 'gfx90a:xnack': {inner}")
        );
        let source = e.source().expect("a source");
        assert_eq!(source.downcast_ref::<TargetIdError>(), Some(&inner));

        let bare = EmbedError::device("", inner.clone());
        assert_eq!(bare.to_string(), format!("unusable device code: {inner}"));

        let plain = EmbedError::DeviceCode("no code objects".into());
        assert_eq!(plain.to_string(), "unusable device code: no code objects");
        assert!(plain.source().is_none());
    }

    #[test]
    fn object_errors_are_kept() {
        let mut obj = object::write::Object::new(
            object::BinaryFormat::Elf,
            object::Architecture::X86_64,
            object::Endianness::Little,
        );
        let section = obj.add_section(Vec::new(), b".x".to_vec(), object::SectionKind::Text);
        // A relocation past the end of its section is refused when writing.
        obj.append_section_data(section, &[0; 4], 1);
        let symbol = obj.section_symbol(section);
        let inner = obj
            .add_relocation(
                section,
                object::write::Relocation {
                    offset: 0,
                    symbol,
                    addend: 0,
                    flags: object::RelocationFlags::Generic {
                        kind: object::RelocationKind::Absolute,
                        encoding: object::RelocationEncoding::Generic,
                        size: 3,
                    },
                },
            )
            .and_then(|()| obj.write().map(drop))
            .unwrap_err();
        let e = EmbedError::from(inner.clone());
        assert_eq!(e.to_string(), format!("cannot write the object: {inner}"));
        assert_eq!(
            e.source()
                .and_then(|s| s.downcast_ref::<object::write::Error>()),
            Some(&inner)
        );
    }
}
