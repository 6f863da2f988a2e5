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

use std::fmt;
use std::time::Duration;

mod codec;
mod error;
mod header;
mod pipeline;

pub(super) use codec::{Stream, with_stream};
pub use error::{CompressError, CompressedError};
pub use header::{Header, Method, Version, truncated_md5};
pub use pipeline::{Progress, compress, compress_pieces, compress_pieces_with};

use codec::frame_len;

pub use crate::raw::CCOB_MAGIC as MAGIC;

/// Whether `data` starts with the compressed-bundle magic.
pub fn is_compressed(data: &[u8]) -> bool {
    crate::kind::FileKind::sniff(data) == crate::kind::FileKind::CompressedBundle
}

/// Whether clang-offload-bundler 22 decompresses `data` before reading it (as an input or an
/// archive member): the magic and at least 8 bytes; shorter inputs are read uncompressed.
pub fn llvm_decompresses(data: &[u8]) -> bool {
    data.len() >= 8 && is_compressed(data)
}

/// Whether this build compresses and decompresses (the `compression` feature, on by
/// default). Without it, headers are still parsed and listed, but compressing or
/// decompressing is [`CompressError::Unsupported`] / [`CompressedError::Unsupported`].
pub const SUPPORTED: bool = cfg!(feature = "compression");

const UNSUPPORTED: &str = "compressed bundles are not supported by this build (offload-formats without its `compression` feature)";

/// How to compress a bundle. The default is what LLVM 22 writes: zstd at level 3 with
/// long-distance matching, format version 3, one thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompressOptions {
    /// Compression method.
    pub method: Method,
    /// Level; `None` for the method's default ([`Method::default_level`]).
    pub level: Option<i32>,
    /// Format version to write (2 or 3).
    pub version: Version,
    /// zstd worker threads; 0 (the default) gives LLVM's exact bytes, more is faster but the
    /// bytes differ from LLVM's (still a valid bundle every LLVM reads).
    pub threads: u32,
}

impl Default for CompressOptions {
    fn default() -> Self {
        CompressOptions {
            method: Method::Zstd,
            level: None,
            version: Version::V3,
            threads: 0,
        }
    }
}

impl CompressOptions {
    /// The level used: the given one or the method's default.
    pub fn effective_level(&self) -> i32 {
        self.level.unwrap_or(self.method.default_level())
    }
}

/// What a caller may do to the process around compressing and decompressing: this crate sets
/// no thread priority and gives the kernel no memory advice of its own. Both default to
/// nothing. Two `Hooks` are equal when their hooks have the same names ([`Hook`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Hooks {
    /// Runs first on the thread that compresses beside the hash when zstd workers are asked
    /// for ([`CompressOptions::threads`] above 0); the workers inherit what it sets
    /// (`offload-bundler` lowers their priority, so that the hash keeps a core).
    pub compressor_thread: Option<ThreadHook>,
    /// Runs on each fresh buffer that a compressed bundle is gathered, compressed or
    /// decompressed into, before it is filled (`offload-bundler` asks for transparent huge
    /// pages on large ones).
    pub fresh_buffer: Option<BufferHook>,
}

/// A hook run on a thread ([`Hooks::compressor_thread`]).
pub type ThreadHook = Hook<fn()>;

/// A hook run on a fresh buffer ([`Hooks::fresh_buffer`]).
pub type BufferHook = Hook<fn(&mut [u8])>;

/// A caller's function with the name that identifies it: hooks are compared, hashed and
/// printed by name, because function addresses are not (the same function may have two, and
/// two functions one).
#[derive(Clone, Copy)]
pub struct Hook<F> {
    /// What the hook does, e.g. `"lower the thread priority"`: equal names mean equal hooks.
    pub name: &'static str,
    /// The function run.
    pub run: F,
}

impl<F> PartialEq for Hook<F> {
    fn eq(&self, other: &Hook<F>) -> bool {
        self.name == other.name
    }
}

impl<F> Eq for Hook<F> {}

impl<F> std::hash::Hash for Hook<F> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

impl<F> fmt::Debug for Hook<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Hook").field(&self.name).finish()
    }
}

impl Hooks {
    fn compressor_thread(&self) {
        if let Some(hook) = self.compressor_thread {
            (hook.run)();
        }
    }

    fn fresh_buffer(&self, buffer: &mut [u8]) {
        if let Some(hook) = self.fresh_buffer {
            (hook.run)(buffer);
        }
    }
}

/// Limits and checks of a reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest uncompressed size accepted (default 16 GiB). Nothing larger is allocated,
    /// whatever the header claims.
    pub max_size: u64,
    /// Treat a hash mismatch as an error instead of a warning.
    pub strict_hash: bool,
    /// Compute the MD5 of the decompressed data and compare it with the header's (on by
    /// default here; LLVM never does, and `offload-bundler` does only when asked). It runs
    /// beside decompression but, being sequential, it bounds the time of a large bundle at
    /// about 1.5 ms per MiB.
    pub verify_hash: bool,
    /// What the caller runs on the decompression buffer (nothing by default).
    pub hooks: Hooks,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_size: 16 << 30,
            strict_hash: false,
            verify_hash: true,
            hooks: Hooks::default(),
        }
    }
}

/// Something odd about a compressed bundle that LLVM accepts silently.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// The stored hash differs from the hash of the decompressed data.
    HashMismatch {
        /// The hash in the header.
        stored: u64,
        /// The hash of the decompressed data.
        computed: u64,
    },
    /// The header claims more uncompressed bytes than the data holds; the data is used.
    SizeTooLarge {
        /// The uncompressed size in the header.
        claimed: u64,
        /// The size of the decompressed data.
        actual: u64,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::HashMismatch { stored, computed } => write!(
                f,
                "hash mismatch: the header stores {stored:#x} but the data hashes to {computed:#x}"
            ),
            Warning::SizeTooLarge { claimed, actual } => write!(
                f,
                "the header claims {claimed} uncompressed bytes but the data holds only {actual}"
            ),
        }
    }
}

/// A decompressed bundle.
#[derive(Debug)]
pub struct Decompressed {
    /// The uncompressed bundle.
    pub data: Vec<u8>,
    /// The truncated MD5 of `data` (`None` when [`Limits::verify_hash`] was off).
    pub hash: Option<u64>,
    /// What LLVM would have accepted silently.
    pub warnings: Vec<Warning>,
    /// Time spent decompressing (for `-verbose`).
    pub elapsed: Duration,
}

/// A compressed bundle inside a larger input.
#[derive(Clone, Copy, Debug)]
pub struct CompressedBundle<'data> {
    header: Header,
    payload: &'data [u8],
}

impl<'data> CompressedBundle<'data> {
    /// Parses the compressed bundle at the start of `data`. Versions 2 and 3 end where their
    /// total size says; version 1 ends with its zstd frame or zlib stream. Whatever follows
    /// (padding, other bundles) is not part of it.
    pub fn parse(data: &'data [u8]) -> Result<Self, CompressedError> {
        Self::parse_checked(data, true)
    }

    /// Like [`parse`](Self::parse), but a version 2 or 3 bundle is bounded by its total size
    /// alone: its zstd frame is not walked to check that it ends exactly there. Nothing past
    /// the header is read, which is what a listing at header speed wants (decompressing the
    /// bundle later still stops at the frame's end; data after it goes unnoticed).
    pub fn parse_bounded(data: &'data [u8]) -> Result<Self, CompressedError> {
        Self::parse_checked(data, false)
    }

    fn parse_checked(data: &'data [u8], check_frame: bool) -> Result<Self, CompressedError> {
        let header = Header::parse(data)?;
        let start = header.len();
        let payload = match header.total_size {
            Some(total) => {
                if total < start as u64 {
                    return Err(CompressedError::TotalTooSmall {
                        total,
                        header: start as u64,
                    });
                }
                if total > data.len() as u64 {
                    return Err(CompressedError::Truncated {
                        total,
                        available: data.len() as u64,
                    });
                }
                &data[start..total as usize]
            }
            None => {
                let rest = &data[start..];
                &rest[..frame_len(header.method, rest)?]
            }
        };
        if check_frame && header.method == Method::Zstd && header.total_size.is_some() {
            let n = frame_len(Method::Zstd, payload)?;
            if n != payload.len() {
                return Err(CompressedError::TrailingData {
                    frame_end: (start + n) as u64,
                    total: header.total_size.unwrap_or(0),
                });
            }
        }
        Ok(CompressedBundle { header, payload })
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The compressed data (after the header).
    pub fn payload(&self) -> &'data [u8] {
        self.payload
    }

    /// Bytes the compressed bundle occupies in the input, header included.
    pub fn len(&self) -> usize {
        self.header.len() + self.payload.len()
    }

    /// Always false: a compressed bundle has a header.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The zstd frame's own content size, when the frame records it.
    pub fn content_size(&self) -> Option<u64> {
        match self.header.method {
            #[cfg(feature = "compression")]
            Method::Zstd => zstd_safe::get_frame_content_size(self.payload).unwrap_or_default(),
            #[cfg(not(feature = "compression"))]
            Method::Zstd => None,
            Method::Zlib => None,
        }
    }

    /// Decompresses with the default [`Limits`].
    pub fn decompress(&self) -> Result<Decompressed, CompressedError> {
        self.decompress_with(&Limits::default(), |_| ())
            .map(|(d, ())| d)
    }

    /// The size to decode into, and whether it is exact (a zstd frame that records its
    /// content size): neither the header's claim nor the frame's is trusted beyond what the
    /// compressed bytes can hold. A frame smaller than the claim is a warning.
    fn output_size(&self, warnings: &mut Vec<Warning>) -> Result<(u64, bool), CompressedError> {
        let claimed = self.header.uncompressed_size;
        Ok(match self.header.method {
            Method::Zstd => {
                // Neither our header nor the frame's is trusted for the allocation: every
                // zstd block takes at least 4 bytes and yields at most 128 KiB.
                let bound = ((self.payload.len() as u64) / 4 + 1).saturating_mul(128 << 10);
                match self.content_size() {
                    Some(actual) if actual > claimed => {
                        return Err(CompressedError::SizeTooSmall {
                            claimed,
                            actual,
                            exact: true,
                        });
                    }
                    Some(actual) if actual > bound => {
                        return Err(CompressedError::Corrupt(format!(
                            "zstd: the frame claims {actual} bytes, more than its {} compressed bytes can hold",
                            self.payload.len()
                        )));
                    }
                    Some(actual) => {
                        if actual < claimed {
                            warnings.push(Warning::SizeTooLarge { claimed, actual });
                        }
                        (actual, true)
                    }
                    None => (claimed.min(bound), false),
                }
            }
            // Deflate expands at most 1032:1.
            Method::Zlib => (
                claimed.min((self.payload.len() as u64).saturating_mul(1032) + 64),
                false,
            ),
        })
    }

    /// The checks after decoding `len` bytes: a claim larger than the output is a warning
    /// (unless the frame's size already gave one), a hash that differs from the header's is a
    /// warning, or an error with [`Limits::strict_hash`].
    fn check_output(
        &self,
        len: u64,
        hash: Option<u64>,
        limits: &Limits,
        warnings: &mut Vec<Warning>,
    ) -> Result<(), CompressedError> {
        let claimed = self.header.uncompressed_size;
        if len < claimed && warnings.is_empty() {
            warnings.push(Warning::SizeTooLarge {
                claimed,
                actual: len,
            });
        }
        if let Some(computed) = hash.filter(|&h| h != self.header.hash) {
            if limits.strict_hash {
                return Err(CompressedError::HashMismatch {
                    stored: self.header.hash,
                    computed,
                });
            }
            warnings.push(Warning::HashMismatch {
                stored: self.header.hash,
                computed,
            });
        }
        Ok(())
    }
}

/// Refuses to decode into `size` bytes above [`Limits::max_size`] (or what one allocation
/// can hold).
fn check_size(size: u64, limits: &Limits) -> Result<(), CompressedError> {
    if size > limits.max_size || size > isize::MAX as u64 {
        return Err(CompressedError::TooLarge {
            size,
            limit: limits.max_size,
        });
    }
    Ok(())
}

/// A zeroed buffer of `len` bytes, or [`CompressedError::OutOfMemory`] when the allocator
/// refuses it. `vec![0; len]` takes zeroed memory from the allocator (fresh pages, nothing
/// written before decompression fills them) but aborts when refused; asking for the same size
/// with `try_reserve_exact` first turns a refusal into an error.
fn try_zeroed(len: usize) -> Result<Vec<u8>, CompressedError> {
    let mut probe = Vec::<u8>::new();
    probe
        .try_reserve_exact(len)
        .map_err(|_| CompressedError::OutOfMemory { size: len as u64 })?;
    drop(probe);
    Ok(vec![0; len])
}

#[cfg(all(test, feature = "compression"))]
mod tests;
