//! Bundles: the clang-offload-bundler container and the files built around it.
//!
//! A bundle holds one payload per *entry ID* (see [`crate::id`]). Two layouts exist:
//!
//! - [`binary`]: a header with a table of `(offset, size, ID)` descriptors followed by
//!   the payloads; used for `bc`, `gch`, `ast`, and for `o` when the host input is not
//!   an object file (the HIP driver's `.hipfb`).
//! - [`text`]: payloads framed by comment lines, for preprocessed sources, LLVM IR,
//!   assembly and dependency files.
//!
//! Around them:
//!
//! - [`fatobj`]: fat objects, host object files with one `__CLANG_OFFLOAD_BUNDLE__<ID>`
//!   section per entry (`o` with an object host input).
//! - [`archive`]: heterogeneous device archives (`a`, unbundling only).
//! - [`hipfb`]: the `.hipfb` bundle clang's HIP driver writes (a binary bundle of a fixed
//!   shape).
//!
//! [`compressed`] wraps a binary or text bundle in a zstd- or zlib-compressed `CCOB` bundle;
//! [`sequence`] walks binary and compressed bundles placed one after another (a linked
//! `.hip_fatbin`).
//!
//! The `order` module reproduces the hash-table iteration order LLVM uses when listing and
//! unbundling binary bundles. Readers work over borrowed bytes (a mapped file, a
//! section) and never allocate what a header merely claims; writers stream payloads.

pub mod archive;
pub mod binary;
pub mod bitcode;
pub mod compressed;
pub mod fatobj;
pub mod hipfb;
mod order;
mod prefix;
pub mod sequence;
mod symbols;
pub mod targets;
pub mod text;

mod error;

pub use prefix::Prefix;

pub use binary::{BinaryBundle, BinaryBundleWriter, BinaryEntry, BinaryLayout};
pub use compressed::{CompressOptions, CompressedBundle};
pub use error::{BundleReadError, BundleReadErrorKind, BundleWriteError};
pub use text::{TextBundle, TextEntry};

pub use crate::raw::BUNDLE_MAGIC as MAGIC;

/// A bundle file type, the value of clang-offload-bundler's `-type=` option.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FileType {
    /// `i`: preprocessed C (text, `//` comments).
    I,
    /// `ii`: preprocessed C++ (text, `//`).
    Ii,
    /// `cui`: preprocessed CUDA (text, `//`).
    Cui,
    /// `hipi`: preprocessed HIP (text, `//`).
    Hipi,
    /// `d`: dependency file (text, `#`).
    D,
    /// `ll`: LLVM IR (text, `;`).
    Ll,
    /// `s`: assembly (text, `#`).
    S,
    /// `bc`: LLVM bitcode (binary).
    Bc,
    /// `gch`: precompiled header (binary).
    Gch,
    /// `ast`: clang AST file (binary).
    Ast,
    /// `o`: object; a fat object when the host input is an object file, else binary.
    O,
    /// `a`: archive of bundled objects (unbundling only).
    A,
}

impl FileType {
    /// Every type, in the order of clang-offload-bundler's `--help`.
    pub const ALL: [FileType; 12] = [
        FileType::I,
        FileType::Ii,
        FileType::Cui,
        FileType::Hipi,
        FileType::D,
        FileType::Ll,
        FileType::Bc,
        FileType::S,
        FileType::O,
        FileType::A,
        FileType::Gch,
        FileType::Ast,
    ];

    /// Parses a `-type=` value (`None` for anything LLVM rejects).
    pub fn parse(s: &str) -> Option<FileType> {
        FileType::ALL.into_iter().find(|t| t.name() == s)
    }

    /// The `-type=` spelling.
    pub fn name(self) -> &'static str {
        match self {
            FileType::I => "i",
            FileType::Ii => "ii",
            FileType::Cui => "cui",
            FileType::Hipi => "hipi",
            FileType::D => "d",
            FileType::Ll => "ll",
            FileType::S => "s",
            FileType::Bc => "bc",
            FileType::Gch => "gch",
            FileType::Ast => "ast",
            FileType::O => "o",
            FileType::A => "a",
        }
    }

    /// The line-comment string of a text type (`None` for binary types).
    pub fn text_comment(self) -> Option<&'static str> {
        match self {
            FileType::I | FileType::Ii | FileType::Cui | FileType::Hipi => Some("//"),
            FileType::D | FileType::S => Some("#"),
            FileType::Ll => Some(";"),
            _ => None,
        }
    }
}

impl std::fmt::Display for FileType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Rounds `value` up to a multiple of `align` (any non-zero value, not only powers of two).
pub(crate) fn align_up(value: u64, align: u64) -> Option<u64> {
    debug_assert!(align != 0);
    value.div_ceil(align).checked_mul(align)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_types_round_trip() {
        for t in FileType::ALL {
            assert_eq!(FileType::parse(t.name()), Some(t));
        }
        assert_eq!(FileType::parse("cubin"), None);
        assert_eq!(FileType::Ll.text_comment(), Some(";"));
        assert_eq!(FileType::Bc.text_comment(), None);
    }

    #[test]
    fn align_up_any_alignment() {
        assert_eq!(align_up(0, 3), Some(0));
        assert_eq!(align_up(7, 3), Some(9));
        assert_eq!(align_up(4096, 4096), Some(4096));
        assert_eq!(align_up(u64::MAX, 2), None);
    }
}
