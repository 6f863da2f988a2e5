//! Compressed bundles (`CCOB`): a whole bundle (binary or text) compressed with zstd or zlib
//! behind a small header, as `clang-offload-bundler -compress` writes them. This module owns
//! the reader ([`CompressedBundle`]), the writer ([`compress`]) and their options, limits and
//! errors; `header` holds the layout, `codec` the zstd and zlib calls, `pipeline` the
//! threads that hash beside them.
//!
//! Reading is stricter than LLVM's: v2 and v3 are bounded by their total size, v1 by the end
//! of its frame; sizes are checked against the frame and [`Limits::max_size`] before anything
//! is allocated; the hash is verified. Writing reproduces LLVM's bytes (byte-identical with
//! the `system-zstd` feature).

mod buffer;
mod codec;
mod error;
mod header;
mod options;
mod pipeline;
mod reader;

pub use crate::raw::CCOB_MAGIC as MAGIC;
pub use buffer::Progress;
pub(super) use codec::{Stream, with_stream};
pub use error::{CompressError, CompressedError};
pub use header::{Header, Method, Version, is_compressed, truncated_md5};
pub use options::{
    BufferHook, CompressOptions, Hook, Hooks, Limits, SUPPORTED, ThreadHook, Warning,
    llvm_decompresses,
};
pub use pipeline::{compress, compress_pieces, compress_pieces_with};
pub use reader::{CompressedBundle, Decompressed};

#[cfg(test)]
mod tests;
