//! Bundle entry IDs, target triples and AMDGPU target IDs.
//!
//! An entry ID names one entry of a bundle: `<offload-kind>-<triple>[-<target-id>]`,
//! for example `hip-amdgcn-amd-amdhsa--gfx90a:xnack+` or `host-x86_64-unknown-linux-gnu-`.
//!
//! - [`triple`] ports the parts of `llvm::Triple` the bundler depends on
//!   (component parsing, normalization, compatibility).
//! - [`offload_arch`] holds the processor-name tables of clang 19 and clang 22.
//! - [`target_id`] parses target IDs (`gfx90a:sramecc-:xnack+`), knows which features
//!   each AMDGPU processor supports and implements LLVM's compatibility and conflict rules.
//! - [`spell`] spells names that are bytes (not UTF-8) losslessly as text.
//! - [`entry`] parses and standardizes whole entry IDs and decides which bundle entry
//!   satisfies which requested target.

pub mod entry;
mod generated;
pub mod offload_arch;
pub mod spell;
pub mod target_id;
pub mod triple;
pub use entry::{EntryId, EntryKind, IdError};

/// The old name of [`spell`] (which encodes names; it reads no on-disk header, which is what
/// `raw` names elsewhere in this crate).
#[deprecated(note = "renamed to `offload_formats::id::spell`")]
#[doc(hidden)]
pub mod raw {
    pub use super::spell::{BytesWriter, bytes, os, text, text_of_os};
}
