//! offload-build: GPU fat binaries that a host linker can link.
#![deny(missing_docs)]

pub mod bundle;
pub mod cli;
pub mod fileio;
pub mod id;
