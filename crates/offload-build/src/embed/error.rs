//! The error of the object emitters.

use std::fmt;

/// Why a host object cannot be written.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EmbedError {
    /// The host triple names an architecture or object format the emitter does not support.
    UnsupportedTarget(String),
    /// The device code given is not usable (a malformed bundle, offload binary or code object).
    DeviceCode(String),
    /// Two device symbols or caller-given symbols cannot both be emitted.
    Symbol(String),
    /// A value does not fit the encoding of the target (e.g. a variable too large).
    Limit(String),
    /// The `object` crate refused the object.
    Object(String),
}

impl fmt::Display for EmbedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmbedError::UnsupportedTarget(m) => write!(f, "unsupported host target: {m}"),
            EmbedError::DeviceCode(m) => write!(f, "unusable device code: {m}"),
            EmbedError::Symbol(m) => write!(f, "symbol conflict: {m}"),
            EmbedError::Limit(m) => write!(f, "value out of range: {m}"),
            EmbedError::Object(m) => write!(f, "cannot write the object: {m}"),
        }
    }
}

impl std::error::Error for EmbedError {}

impl From<object::write::Error> for EmbedError {
    fn from(e: object::write::Error) -> Self {
        EmbedError::Object(e.to_string())
    }
}
