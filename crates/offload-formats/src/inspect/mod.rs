//! Finding every embedded device-code container in any file, and extracting entries.
//!
//! [`inspect`] lists, for a raw bundle, a compressed bundle (CCOB), an offload binary, an
//! object file, an executable, a shared library or a static archive, every container and
//! every entry in it, with file offsets and `file://<path>#offset=<n>&size=<m>` URIs (the
//! URI form of LLVM's `OffloadBundle` library and of `roc-obj-ls`). What is looked at:
//!
//! - sections named `.hip_fatbin`, and any other section whose contents start with a bundle
//!   or `CCOB` magic (PE images truncate the name to `.hip_fat`): walked as a
//!   [`Sequence`](crate::bundle::sequence::Sequence) of bundles, so the several bundles a linker concatenates, with zero
//!   padding between them, are all found;
//! - `__CLANG_OFFLOAD_BUNDLE__<ID>` sections (fat objects): one entry each;
//! - ELF sections of type `SHT_LLVM_OFFLOADING` whatever their name, and COFF sections named
//!   `.llvm.offloading*`: offload binaries back to back;
//! - archive members, recursively;
//! - NVIDIA fat binaries ([`crate::nvfatbin`]): a raw fat binary file, sections named
//!   `.nv_fatbin` (`__nv_fatbin` in Mach-O) or starting with the magic `0xBA55ED50`, and, as
//!   `cuobjdump` does, any 8-byte aligned fat binary in the data sections of an object where
//!   no container was found by its sections, or in a file of no other kind. Each cubin and PTX entry is listed with its architecture
//!   (`sm_80` for a cubin, `compute_80` for PTX) and image kind (`cubin`, `ptx`); entries
//!   compressed by NVIDIA's tools (LZ4, zstd) are listed with their compression and stored
//!   size, and extracted by decompressing them.
//!
//! Entries stored uncompressed have a file offset and a URI; entries inside a compressed
//! container have neither (their container has both) and are extracted by decompressing it.
//! Malformed input is an [`InspectError`], never a panic.

mod decode;
mod error;
mod extract;
mod options;
mod report;
mod run;
mod scanner;

pub use error::{InspectError, InspectSource};
pub use extract::{ExtractError, Selected, Selector, entry_bytes, range, select};
pub use options::Options;
pub use report::{Compression, ContainerReport, EntryReport, Report, parse_uri, uri};
pub use run::{Unverified, inspect, inspect_with, verify_bundle};

#[cfg(test)]
mod tests;
