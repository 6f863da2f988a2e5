//! Compressed bundles (`CCOB`): a whole bundle (binary or text) compressed with zstd or zlib
//! behind a small header, as `clang-offload-bundler -compress` writes them.
//!
//! Layout (all integers little-endian; LLVM's `CompressedOffloadBundle` in
//! `clang/lib/Driver/OffloadBundler.cpp`):
//!
//! | field             | v1 (20 B) | v2 (24 B) | v3 (32 B) |
//! |-------------------|-----------|-----------|-----------|
//! | magic `CCOB`      | 0         | 0         | 0         |
//! | version `u16`     | 4         | 4         | 4         |
//! | method `u16`      | 6         | 6         | 6         |
//! | total size        | —         | 8: `u32`  | 8: `u64`  |
//! | uncompressed size | 8: `u32`  | 12: `u32` | 16: `u64` |
//! | hash `u64`        | 12        | 16        | 24        |
//! | compressed data   | 20..      | 24..      | 32..      |
//!
//! Method 0 is zlib (an RFC 1950 stream), 1 is zstd (one frame). The total size counts the
//! header and the compressed data. The hash is the first 8 bytes of the MD5 digest of the
//! uncompressed bundle. LLVM 18 wrote v1, 19 writes v2, 22 writes v3 by default.
//!
//! Reading here is stricter and safer than LLVM's: v2 and v3 are bounded by their total size
//! (so padding and further bundles may follow, as in a linked `.hip_fatbin`), v1 by the end of
//! its frame; the uncompressed size in the header is checked against the zstd frame's own
//! content size and against [`Limits::max_size`] before anything is allocated; the hash is
//! verified (LLVM never does). Decompression runs beside hashing, and a caller may consume the
//! bytes while they are being produced ([`CompressedBundle::decompress_with`]).
//!
//! Writing ([`compress`]) reproduces LLVM's bytes: zstd through `ZSTD_compress2` with the level
//! and long-distance matching, zlib through `compress2`; with the same libzstd as LLVM (the
//! `system-zstd` feature) the output is byte-identical to clang-offload-bundler's. The MD5 is
//! computed beside the compression, so it adds no wall time.

use std::fmt;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use object::endian::{U16, U32, U64};
use object::pod::bytes_of;

use crate::raw::{self, CCOB_MAGIC, CcobHeaderV1, CcobHeaderV2, CcobHeaderV3, CcobPrefix, LE};
use CompressError::UncompressedTooLarge;
use md5::{Digest, Md5};

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

/// The compression method, the header's `method` field (LLVM's `compression::Format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// 0: zlib (`compress2`, RFC 1950 stream).
    Zlib,
    /// 1: zstd (one frame from `ZSTD_compress2`).
    Zstd,
}

impl Method {
    /// The method for a header value.
    pub fn from_raw(raw: u16) -> Option<Method> {
        match raw {
            0 => Some(Method::Zlib),
            1 => Some(Method::Zstd),
            _ => None,
        }
    }

    /// The header value.
    pub fn raw(self) -> u16 {
        match self {
            Method::Zlib => 0,
            Method::Zstd => 1,
        }
    }

    /// `zlib` or `zstd`, as `-verbose` prints it.
    pub fn name(self) -> &'static str {
        match self {
            Method::Zlib => "zlib",
            Method::Zstd => "zstd",
        }
    }

    /// LLVM's default level for the method: 3 for zstd, 6 for zlib.
    pub fn default_level(self) -> i32 {
        match self {
            Method::Zlib => 6,
            Method::Zstd => 3,
        }
    }
}

/// A compressed-bundle format version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Version {
    /// Version 1 (LLVM 18): 32-bit uncompressed size, no total size. Read only.
    V1,
    /// Version 2 (LLVM 19 to 21 by default): 32-bit total and uncompressed sizes.
    V2,
    /// Version 3 (LLVM 22 by default): 64-bit sizes.
    V3,
}

impl Version {
    /// The version for a header value.
    pub fn from_raw(raw: u16) -> Option<Version> {
        match raw {
            1 => Some(Version::V1),
            2 => Some(Version::V2),
            3 => Some(Version::V3),
            _ => None,
        }
    }

    /// The header value.
    pub fn raw(self) -> u16 {
        match self {
            Version::V1 => 1,
            Version::V2 => 2,
            Version::V3 => 3,
        }
    }

    /// Size of this version's header in bytes.
    pub fn header_len(self) -> usize {
        match self {
            Version::V1 => 20,
            Version::V2 => 24,
            Version::V3 => 32,
        }
    }
}

/// A parsed compressed-bundle header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Format version.
    pub version: Version,
    /// Compression method.
    pub method: Method,
    /// Header plus compressed data, in bytes (`None` for v1, which has no such field).
    pub total_size: Option<u64>,
    /// Size of the bundle once decompressed, as the header claims.
    pub uncompressed_size: u64,
    /// First 8 bytes of the MD5 digest of the uncompressed bundle, read as a little-endian
    /// integer (LLVM's `MD5Result::low()`).
    pub hash: u64,
}

impl Header {
    /// Parses the header at the start of `data`.
    pub fn parse(data: &[u8]) -> Result<Header, CompressedError> {
        if !is_compressed(data) {
            return Err(CompressedError::NotCompressed);
        }
        if data.len() < 8 {
            return Err(CompressedError::TruncatedHeader {
                needed: 8,
                available: data.len() as u64,
            });
        }
        let prefix = raw::read_at::<CcobPrefix>(data, 0).expect("8 bytes");
        let raw_version = prefix.version.get(LE);
        let version =
            Version::from_raw(raw_version).ok_or(CompressedError::UnknownVersion(raw_version))?;
        if data.len() < version.header_len() {
            return Err(CompressedError::TruncatedHeader {
                needed: version.header_len() as u64,
                available: data.len() as u64,
            });
        }
        let raw_method = prefix.method.get(LE);
        let method =
            Method::from_raw(raw_method).ok_or(CompressedError::UnknownMethod(raw_method))?;
        let (total_size, uncompressed_size, hash) = read_sizes(data, version);
        Ok(Header {
            version,
            method,
            total_size,
            uncompressed_size,
            hash,
        })
    }

    /// Size of the header in bytes.
    pub fn len(&self) -> usize {
        self.version.header_len()
    }

    /// Always false: a header has a fixed, non-zero size.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The header's bytes. Fails when a size does not fit the version's fields, with
    /// LLVM 22's message for version 2.
    pub fn to_bytes(&self) -> Result<Vec<u8>, CompressError> {
        let prefix = CcobPrefix {
            magic: CCOB_MAGIC,
            version: U16::new(LE, self.version.raw()),
            method: U16::new(LE, self.method.raw()),
        };
        let total = self.total_size.unwrap_or(0);
        let small = |v: u64, what| u32::try_from(v).map(|v| U32::new(LE, v)).map_err(|_| what);
        let hash = U64::new(LE, self.hash);
        Ok(match self.version {
            Version::V1 => bytes_of(&CcobHeaderV1 {
                prefix,
                uncompressed_size: small(self.uncompressed_size, UncompressedTooLarge)?,
                hash,
            })
            .to_vec(),
            Version::V2 => {
                let uncompressed_size = small(self.uncompressed_size, UncompressedTooLarge)?;
                let total_size = small(total, CompressError::TotalTooLarge)?;
                let header = CcobHeaderV2 {
                    prefix,
                    total_size,
                    uncompressed_size,
                    hash,
                };
                bytes_of(&header).to_vec()
            }
            Version::V3 => bytes_of(&CcobHeaderV3 {
                prefix,
                total_size: U64::new(LE, total),
                uncompressed_size: U64::new(LE, self.uncompressed_size),
                hash,
            })
            .to_vec(),
        })
    }
}

/// Total size (v2, v3), uncompressed size and hash of a header of `version`, which `data`
/// holds entirely.
fn read_sizes(data: &[u8], version: Version) -> (Option<u64>, u64, u64) {
    const WHOLE: &str = "the header's length was checked";
    match version {
        Version::V1 => {
            let h = raw::read_at::<CcobHeaderV1>(data, 0).expect(WHOLE);
            (None, h.uncompressed_size.get(LE).into(), h.hash.get(LE))
        }
        Version::V2 => {
            let h = raw::read_at::<CcobHeaderV2>(data, 0).expect(WHOLE);
            let total = u64::from(h.total_size.get(LE));
            (
                Some(total),
                h.uncompressed_size.get(LE).into(),
                h.hash.get(LE),
            )
        }
        Version::V3 => {
            let h = raw::read_at::<CcobHeaderV3>(data, 0).expect(WHOLE);
            let total = h.total_size.get(LE);
            (Some(total), h.uncompressed_size.get(LE), h.hash.get(LE))
        }
    }
}

/// The truncated MD5 LLVM stores in the header: the first 8 digest bytes as a little-endian
/// integer.
pub fn truncated_md5(data: &[u8]) -> u64 {
    truncated_md5_of(&[data])
}

/// [`truncated_md5`] of the concatenation of `pieces`.
fn truncated_md5_of(pieces: &[&[u8]]) -> u64 {
    let mut h = Md5::new();
    for piece in pieces {
        h.update(piece);
    }
    low_u64(&h.finalize())
}

fn low_u64(digest: &[u8]) -> u64 {
    raw::u64_at(digest, 0).expect("16-byte digest")
}

/// Whether this build compresses and decompresses (the `compression` feature, on by
/// default). Without it, headers are still parsed and listed, but compressing or
/// decompressing is [`CompressError::Unsupported`] / [`CompressedError::Unsupported`].
pub const SUPPORTED: bool = cfg!(feature = "compression");

const UNSUPPORTED: &str = "compressed bundles are not supported by this build (offload-formats without its `compression` feature)";

/// Why a compressed bundle cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompressedError {
    /// The data does not start with `CCOB`.
    NotCompressed,
    /// Built without the `compression` feature.
    Unsupported,
    /// The input ends inside the header.
    TruncatedHeader {
        /// Bytes the header needs.
        needed: u64,
        /// Bytes present.
        available: u64,
    },
    /// A version other than 1, 2 and 3.
    UnknownVersion(u16),
    /// A method other than 0 (zlib) and 1 (zstd).
    UnknownMethod(u16),
    /// The total size is smaller than the header itself.
    TotalTooSmall {
        /// The total size in the header.
        total: u64,
        /// The header's own size.
        header: u64,
    },
    /// The total size reaches past the end of the input.
    Truncated {
        /// The total size in the header.
        total: u64,
        /// Bytes present from the start of the header.
        available: u64,
    },
    /// The compressed data is not a complete zstd frame or zlib stream.
    TruncatedFrame,
    /// The compressed data is not a zstd frame (or zlib stream) at all, or it is corrupt.
    Corrupt(String),
    /// Bytes follow the zstd frame inside the total size.
    TrailingData {
        /// Offset (from the start of the header) where the frame ends.
        frame_end: u64,
        /// The total size in the header.
        total: u64,
    },
    /// The data decompresses to more bytes than the header says (LLVM: "Destination buffer is
    /// too small").
    SizeTooSmall {
        /// The uncompressed size in the header.
        claimed: u64,
        /// The size the frame holds (at least this much when `exact` is false).
        actual: u64,
        /// Whether `actual` is the frame's exact content size.
        exact: bool,
    },
    /// The uncompressed size is above the reader's limit.
    TooLarge {
        /// The size that would be allocated.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The stored hash differs from the data's and the reader was asked to be strict.
    HashMismatch {
        /// The hash in the header.
        stored: u64,
        /// The hash of the decompressed data.
        computed: u64,
    },
    /// The memory for the decompressed data could not be had (the allocator refused, as
    /// under `ulimit -v`): the buffer of an exactly known size, or a larger one for data that
    /// grows past what it holds.
    OutOfMemory {
        /// The size of the buffer that could not be allocated.
        size: u64,
    },
}

impl fmt::Display for CompressedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompressedError::NotCompressed => {
                f.write_str("not a compressed bundle (no CCOB magic)")
            }
            CompressedError::Unsupported => f.write_str(UNSUPPORTED),
            CompressedError::TruncatedHeader { needed, available } => write!(
                f,
                "compressed bundle header is truncated: it needs {needed} bytes but only {available} are present"
            ),
            CompressedError::UnknownVersion(v) => write!(
                f,
                "compressed bundle format version {v} at offset 4 is not supported (known: 1, 2, 3)"
            ),
            CompressedError::UnknownMethod(m) => write!(
                f,
                "unknown compression method {m} at offset 6 (known: 0 = zlib, 1 = zstd)"
            ),
            CompressedError::TotalTooSmall { total, header } => write!(
                f,
                "compressed bundle total size {total} (offset 8) is smaller than its {header}-byte header"
            ),
            CompressedError::Truncated { total, available } => write!(
                f,
                "compressed bundle is truncated: its header (offset 8) gives a total size of {total} bytes but only {available} are present"
            ),
            CompressedError::TruncatedFrame => {
                f.write_str("compressed data is truncated: the frame ends before it is complete")
            }
            CompressedError::Corrupt(msg) => write!(f, "compressed data is corrupt: {msg}"),
            CompressedError::TrailingData { frame_end, total } => write!(
                f,
                "the compressed frame ends at offset {frame_end} but the header's total size is {total}"
            ),
            CompressedError::SizeTooSmall {
                claimed,
                actual,
                exact,
            } => write!(
                f,
                "the header claims {claimed} uncompressed bytes but the data holds {}{actual}",
                if *exact { "" } else { "more than " }
            ),
            CompressedError::TooLarge { size, limit } => write!(
                f,
                "uncompressed size {size} is above the limit of {limit} bytes"
            ),
            CompressedError::HashMismatch { stored, computed } => write!(
                f,
                "hash mismatch: the header stores {stored:#x} but the data hashes to {computed:#x}"
            ),
            // The words of an input that cannot be read into memory (`/dev/zero`).
            CompressedError::OutOfMemory { .. } => f.write_str("out of memory"),
        }
    }
}

impl std::error::Error for CompressedError {}

/// Why a bundle cannot be compressed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompressError {
    /// Version 2 cannot hold an uncompressed size of 4 GiB or more.
    UncompressedTooLarge,
    /// Version 2 cannot hold a total size of 4 GiB or more.
    TotalTooLarge,
    /// Version 1 is read only.
    ReadOnlyVersion,
    /// The compression library failed (its message).
    Library(String),
    /// Built without the `compression` feature.
    Unsupported,
    /// The memory for the bundle or its compressed data could not be had.
    OutOfMemory,
}

impl fmt::Display for CompressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompressError::UncompressedTooLarge => {
                f.write_str("Uncompressed size exceeds version 2 limit")
            }
            CompressError::TotalTooLarge => f.write_str("Total file size exceeds version 2 limit"),
            CompressError::ReadOnlyVersion => {
                f.write_str("compressed bundle format version 1 can be read but not written")
            }
            CompressError::Library(msg) => f.write_str(msg),
            CompressError::Unsupported => f.write_str(UNSUPPORTED),
            CompressError::OutOfMemory => f.write_str("out of memory"),
        }
    }
}

impl std::error::Error for CompressError {}

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
/// nothing. Two `Hooks` are equal when they hold the same functions (by address).
#[derive(Clone, Copy, Debug, Default)]
pub struct Hooks {
    /// Runs first on the thread that compresses beside the hash when zstd workers are asked
    /// for ([`CompressOptions::threads`] above 0); the workers inherit what it sets
    /// (`offload-bundler` lowers their priority, so that the hash keeps a core).
    pub compressor_thread: Option<fn()>,
    /// Runs on each fresh buffer that a compressed bundle is gathered, compressed or
    /// decompressed into, before it is filled (`offload-bundler` asks for transparent huge
    /// pages on large ones).
    pub fresh_buffer: Option<fn(&mut [u8])>,
}

impl PartialEq for Hooks {
    fn eq(&self, other: &Hooks) -> bool {
        let thread = match (self.compressor_thread, other.compressor_thread) {
            (Some(a), Some(b)) => std::ptr::fn_addr_eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        let buffer = match (self.fresh_buffer, other.fresh_buffer) {
            (Some(a), Some(b)) => std::ptr::fn_addr_eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        thread && buffer
    }
}

impl Eq for Hooks {}

impl Hooks {
    fn compressor_thread(&self) {
        if let Some(hook) = self.compressor_thread {
            hook();
        }
    }

    fn fresh_buffer(&self, buffer: &mut [u8]) {
        if let Some(hook) = self.fresh_buffer {
            hook(buffer);
        }
    }
}

/// Compresses a finished bundle into a compressed bundle (header plus data).
///
/// The MD5 of the input is computed on a second thread while the compression runs.
pub fn compress(bundle: &[u8], options: &CompressOptions) -> Result<Vec<u8>, CompressError> {
    compress_pieces(&[bundle], options)
}

/// Compresses the bundle made of `pieces` concatenated (see
/// [`BinaryLayout::pieces`](super::BinaryLayout::pieces)). The pieces are gathered and
/// compressed on a second thread while this one hashes them, so the MD5 adds no wall time
/// beyond its own (on large bundles it is the longer of the two).
pub fn compress_pieces(
    pieces: &[&[u8]],
    options: &CompressOptions,
) -> Result<Vec<u8>, CompressError> {
    compress_pieces_with(pieces, options, &Hooks::default())
}

/// [`compress_pieces`], running the caller's `hooks` on the compressing thread and buffers.
pub fn compress_pieces_with(
    pieces: &[&[u8]],
    options: &CompressOptions,
    hooks: &Hooks,
) -> Result<Vec<u8>, CompressError> {
    if options.version == Version::V1 {
        return Err(CompressError::ReadOnlyVersion);
    }
    let len: u64 = pieces.iter().map(|p| p.len() as u64).sum();
    if options.version == Version::V2 && len > u64::from(u32::MAX) {
        return Err(CompressError::UncompressedTooLarge);
    }
    let header_len = options.version.header_len();
    let (data, hash) = std::thread::scope(|s| {
        let compressor = s.spawn(|| {
            if options.threads > 0 {
                // The hash is the critical path and cannot be split: zstd's workers (which
                // inherit this thread's settings) take what the hash leaves of the CPUs.
                hooks.compressor_thread();
            }
            if let [one] = pieces {
                compress_payload(one, options, header_len, hooks)
            } else {
                let mut whole = try_zeroed(len as usize).map_err(|_| CompressError::OutOfMemory)?;
                hooks.fresh_buffer(&mut whole);
                let mut at = 0;
                for piece in pieces {
                    whole[at..at + piece.len()].copy_from_slice(piece);
                    at += piece.len();
                }
                compress_payload(&whole, options, header_len, hooks)
            }
        });
        let hash = truncated_md5_of(pieces);
        let data = compressor
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        (data, hash)
    });
    let mut data = data?;
    let header = Header {
        version: options.version,
        method: options.method,
        total_size: Some(data.len() as u64),
        uncompressed_size: len,
        hash,
    };
    data[..header_len].copy_from_slice(&header.to_bytes()?);
    Ok(data)
}

/// The compressed data after `header_len` reserved (zeroed) bytes.
#[cfg(not(feature = "compression"))]
fn compress_payload(
    _: &[u8],
    _: &CompressOptions,
    _: usize,
    _: &Hooks,
) -> Result<Vec<u8>, CompressError> {
    Err(CompressError::Unsupported)
}

#[cfg(feature = "compression")]
fn compress_payload(
    input: &[u8],
    options: &CompressOptions,
    header_len: usize,
    hooks: &Hooks,
) -> Result<Vec<u8>, CompressError> {
    let level = options.effective_level();
    match options.method {
        Method::Zstd => {
            let mut cctx = zstd_safe::CCtx::create();
            let lib = |code: usize| CompressError::Library(zstd_safe::get_error_name(code).into());
            cctx.set_parameter(zstd_safe::CParameter::CompressionLevel(level))
                .map_err(lib)?;
            cctx.set_parameter(zstd_safe::CParameter::EnableLongDistanceMatching(true))
                .map_err(lib)?;
            if options.threads > 0 {
                cctx.set_parameter(zstd_safe::CParameter::NbWorkers(options.threads))
                    .map_err(lib)?;
            }
            let bound = zstd_safe::compress_bound(input.len());
            let mut out = try_zeroed(header_len + bound).map_err(|_| CompressError::OutOfMemory)?;
            hooks.fresh_buffer(&mut out);
            let n = cctx.compress2(&mut out[header_len..], input).map_err(lib)?;
            out.truncate(header_len + n);
            Ok(out)
        }
        Method::Zlib => {
            let level = match level {
                -1 => 6,
                0..=9 => level as u32,
                _ => return Err(CompressError::Library("zlib error: Z_STREAM_ERROR".into())),
            };
            // zlib's compressBound.
            let n = input.len();
            let bound = n + (n >> 12) + (n >> 14) + (n >> 25) + 13;
            let mut out = try_zeroed(header_len + bound).map_err(|_| CompressError::OutOfMemory)?;
            let mut z = flate2::Compress::new(flate2::Compression::new(level), true);
            let status = z
                .compress(input, &mut out[header_len..], flate2::FlushCompress::Finish)
                .map_err(|e| CompressError::Library(format!("zlib error: {e}")))?;
            if status != flate2::Status::StreamEnd {
                return Err(CompressError::Library("zlib error: Z_BUF_ERROR".into()));
            }
            out.truncate(header_len + z.total_out() as usize);
            Ok(out)
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

    /// Decompresses, hashing on a second thread, while `consume` runs on the calling thread
    /// and reads the bytes as they arrive through [`Progress::wait`]. Returns the bundle and
    /// what `consume` returned.
    ///
    /// Memory: when the zstd frame records its content size (LLVM's always do), that size is
    /// checked against the header, the compressed bytes and `limits`, then allocated at once
    /// and filled while `consume` and the hasher read it. Otherwise (a zstd frame without a
    /// content size, zlib) nothing is allocated for what the header claims: the output grows
    /// as the data arrives, up to the claimed size (more is [`CompressedError::SizeTooSmall`]),
    /// and `consume` and the hasher start when it is complete. An allocation the system
    /// refuses is [`CompressedError::OutOfMemory`], never an abort.
    pub fn decompress_with<R>(
        &self,
        limits: &Limits,
        consume: impl FnOnce(&Progress<'_>) -> R,
    ) -> Result<(Decompressed, R), CompressedError> {
        let claimed = self.header.uncompressed_size;
        let mut warnings = Vec::new();
        let (size, exact) = self.output_size(&mut warnings)?;
        check_size(size, limits)?;
        let start = Instant::now();
        // The decompressed length and time, when decompression is already over.
        let mut done = None;
        let mut buffer = if exact {
            let mut buffer = try_zeroed(size as usize)?;
            limits.hooks.fresh_buffer(&mut buffer);
            buffer
        } else {
            let buffer = inflate_growing(self.header.method, self.payload, size as usize, claimed)?;
            done = Some((buffer.len(), start.elapsed()));
            buffer
        };
        // A small bundle is decompressed and hashed on the calling thread: starting threads
        // would cost more than they save (100,000 tiny bundles in one file).
        let small = done.map_or(size, |(len, _)| len as u64) < INLINE_BELOW;
        let shared = Shared::new(&mut buffer, !small);
        if let Some((len, _)) = done {
            shared.publish(len);
            shared.finish(true);
        }
        let verify = limits.verify_hash || limits.strict_hash;
        let inflate = || {
            let r = match self.header.method {
                Method::Zstd => inflate_zstd(self.payload, &shared, claimed),
                Method::Zlib => inflate_zlib(self.payload, &shared, claimed),
            };
            shared.finish(r.is_ok());
            (r, start.elapsed())
        };
        let (result, hash, value, elapsed) = if small {
            let (result, elapsed) = match done {
                Some((len, elapsed)) => (Ok(len), elapsed),
                None => inflate(),
            };
            let progress = Progress { shared: &shared };
            let hash = verify.then(|| hash_progress(&progress));
            let value = consume(&progress);
            (result, hash, value, elapsed)
        } else {
            std::thread::scope(|s| {
                let progress = Progress { shared: &shared };
                let hasher = verify.then(|| s.spawn(move || hash_progress(&progress)));
                let worker = done.is_none().then(|| s.spawn(inflate));
                let value = consume(&progress);
                let (result, elapsed) = match (worker, done) {
                    (Some(worker), _) => worker
                        .join()
                        .unwrap_or_else(|p| std::panic::resume_unwind(p)),
                    (None, Some((len, elapsed))) => (Ok(len), elapsed),
                    (None, None) => unreachable!("decompressed already or by the worker"),
                };
                let hash =
                    hasher.map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
                (result, hash, value, elapsed)
            })
        };
        let len = result?;
        buffer.truncate(len);
        // Decompression succeeded, so a hasher that ran has a hash.
        let hash = hash.flatten();
        self.check_output(len as u64, hash, limits, &mut warnings)?;
        Ok((
            Decompressed {
                data: buffer,
                hash,
                warnings,
                elapsed,
            },
            value,
        ))
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
/// refuses it (`vec![0; len]` would abort the process). Zeroed memory comes from the system
/// as fresh pages, so nothing is written before decompression fills it.
fn try_zeroed(len: usize) -> Result<Vec<u8>, CompressedError> {
    let oom = CompressedError::OutOfMemory { size: len as u64 };
    if len == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u8>(len).map_err(|_| oom.clone())?;
    // SAFETY: the layout's size is not zero.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(oom);
    }
    // SAFETY: `ptr` comes from the global allocator with the layout of `len` bytes aligned
    // to 1 (a `Vec<u8>` of capacity `len`), and all `len` bytes are initialised (zero).
    Ok(unsafe { Vec::from_raw_parts(ptr, len, len) })
}

/// Makes room for at least one more byte in `out`, which may hold at most `cap` bytes:
/// doubles it (from 1 MiB), never past `cap`. `Ok(false)` when `out` is full at `cap`.
#[cfg(feature = "compression")]
fn grow(out: &mut Vec<u8>, cap: usize) -> Result<bool, CompressedError> {
    if out.len() < out.capacity() {
        return Ok(true);
    }
    if out.len() >= cap {
        return Ok(false);
    }
    let want = out.capacity().saturating_mul(2).max(1 << 20).min(cap);
    out.try_reserve_exact(want - out.len())
        .map_err(|_| CompressedError::OutOfMemory { size: want as u64 })?;
    Ok(true)
}

/// Decompresses a zstd frame without a content size, or a zlib stream, into a buffer that
/// grows as the data arrives, up to `cap` bytes (the claimed size, bounded by what the
/// compressed bytes can hold); data beyond `claimed` is [`CompressedError::SizeTooSmall`].
#[cfg(not(feature = "compression"))]
fn inflate_growing(_: Method, _: &[u8], _: usize, _: u64) -> Result<Vec<u8>, CompressedError> {
    Err(CompressedError::Unsupported)
}

#[cfg(feature = "compression")]
fn inflate_growing(
    method: Method,
    src: &[u8],
    cap: usize,
    claimed: u64,
) -> Result<Vec<u8>, CompressedError> {
    with_stream(method, src, |stream| {
        let mut out = Vec::new();
        loop {
            if grow(&mut out, cap)? {
                if stream.step(&mut out)? {
                    return Ok(out);
                }
                continue;
            }
            // Full at the claimed size: the data must end with no more output.
            match stream.probe()? {
                Probe::Output => {
                    return Err(CompressedError::SizeTooSmall {
                        claimed,
                        actual: claimed + 1,
                        exact: false,
                    });
                }
                Probe::Ended => return Ok(out),
                Probe::Truncated => return Err(CompressedError::TruncatedFrame),
                Probe::Again => {}
            }
        }
    })
}

/// One zstd frame or zlib stream decoded a step at a time into the spare capacity of a
/// `Vec`: what the growing whole-bundle decoder and the prefix decoder
/// ([`CompressedBundle::decompress_prefix`]) share.
#[cfg(feature = "compression")]
pub(super) enum Stream<'a> {
    Zstd {
        dctx: &'a mut zstd_safe::DCtx<'static>,
        input: zstd_safe::InBuffer<'a>,
    },
    Zlib {
        z: flate2::Decompress,
        src: &'a [u8],
    },
}

/// What decoding into a one-byte probe found, once the output may grow no further.
#[cfg(feature = "compression")]
pub(super) enum Probe {
    /// More output: the data holds more than the room allowed.
    Output,
    /// The data ended, with no more output.
    Ended,
    /// The data stops short of its end.
    Truncated,
    /// Input was taken but nothing decided yet: probe again.
    Again,
}

/// Runs `f` over a decoder of `src` (with this thread's zstd context for zstd).
#[cfg(feature = "compression")]
pub(super) fn with_stream<R>(
    method: Method,
    src: &[u8],
    f: impl FnOnce(&mut Stream<'_>) -> Result<R, CompressedError>,
) -> Result<R, CompressedError> {
    match method {
        Method::Zstd => with_dctx(|dctx| {
            // Windows as large as one-shot decoding accepts; zstd allocates the window
            // itself here, and a refusal is its "Allocation error".
            allow_large_windows(dctx);
            f(&mut Stream::Zstd {
                dctx,
                input: zstd_safe::InBuffer::around(src),
            })
        }),
        Method::Zlib => f(&mut Stream::Zlib {
            z: flate2::Decompress::new(true),
            src,
        }),
    }
}

/// Without the `compression` feature no stream is ever made.
#[cfg(not(feature = "compression"))]
pub(super) struct Stream<'a>(std::convert::Infallible, std::marker::PhantomData<&'a ()>);

#[cfg(not(feature = "compression"))]
impl Stream<'_> {
    pub(super) fn step(&mut self, _: &mut Vec<u8>) -> Result<bool, CompressedError> {
        match self.0 {}
    }
}

#[cfg(not(feature = "compression"))]
pub(super) fn with_stream<R>(
    _: Method,
    _: &[u8],
    _: impl FnOnce(&mut Stream<'_>) -> Result<R, CompressedError>,
) -> Result<R, CompressedError> {
    Err(CompressedError::Unsupported)
}

#[cfg(feature = "compression")]
impl Stream<'_> {
    /// Decodes into the spare capacity of `out` (there must be some); `Ok(true)` when the data
    /// ended. All the input is given, so a step that makes no progress means the data stops
    /// short: [`CompressedError::TruncatedFrame`].
    pub(super) fn step(&mut self, out: &mut Vec<u8>) -> Result<bool, CompressedError> {
        match self {
            Stream::Zstd { dctx, input } => {
                let pos = out.len();
                let before = (input.pos(), pos);
                // Writing through `output` sets `out`'s length.
                let mut output = zstd_safe::OutBuffer::around_pos(out, pos);
                let r = dctx
                    .decompress_stream(&mut output, input)
                    .map_err(zstd_stream_error)?;
                if r == 0 {
                    return Ok(true);
                }
                if (input.pos(), out.len()) == before {
                    return Err(CompressedError::TruncatedFrame);
                }
                Ok(false)
            }
            Stream::Zlib { z, src } => {
                let before = (z.total_in(), z.total_out());
                let status = z
                    .decompress_vec(
                        &src[z.total_in() as usize..],
                        out,
                        flate2::FlushDecompress::None,
                    )
                    .map_err(|e| CompressedError::Corrupt(format!("zlib error: {e}")))?;
                if status == flate2::Status::StreamEnd {
                    return Ok(true);
                }
                if (z.total_in(), z.total_out()) == before {
                    return Err(CompressedError::TruncatedFrame);
                }
                Ok(false)
            }
        }
    }

    /// Decodes into a one-byte probe: whether the data holds more than what was decoded.
    fn probe(&mut self) -> Result<Probe, CompressedError> {
        let mut probe = [0u8; 1];
        match self {
            Stream::Zstd { dctx, input } => {
                let mut output = zstd_safe::OutBuffer::around(&mut probe[..]);
                let fed = input.pos();
                let r = dctx
                    .decompress_stream(&mut output, input)
                    .map_err(zstd_stream_error)?;
                Ok(if output.pos() > 0 {
                    Probe::Output
                } else if r == 0 {
                    Probe::Ended
                } else if input.pos() == fed {
                    Probe::Truncated
                } else {
                    Probe::Again
                })
            }
            Stream::Zlib { z, src } => {
                let out = z.total_out();
                let status = z
                    .decompress(
                        &src[z.total_in() as usize..],
                        &mut probe,
                        flate2::FlushDecompress::None,
                    )
                    .map_err(|e| CompressedError::Corrupt(format!("zlib error: {e}")))?;
                Ok(if z.total_out() > out {
                    Probe::Output
                } else if status == flate2::Status::StreamEnd {
                    Probe::Ended
                } else {
                    Probe::Truncated
                })
            }
        }
    }
}

/// A zstd streaming error: an allocation zstd could not make is out of memory.
#[cfg(feature = "compression")]
fn zstd_stream_error(code: usize) -> CompressedError {
    let name = zstd_safe::get_error_name(code);
    if name.contains("Allocation error") {
        CompressedError::OutOfMemory { size: 0 }
    } else {
        CompressedError::Corrupt(format!("zstd: {name}"))
    }
}

/// Length of the zstd frame or zlib stream at the start of `data`.
#[cfg(not(feature = "compression"))]
fn frame_len(_: Method, _: &[u8]) -> Result<usize, CompressedError> {
    Err(CompressedError::Unsupported)
}

#[cfg(feature = "compression")]
fn frame_len(method: Method, data: &[u8]) -> Result<usize, CompressedError> {
    match method {
        Method::Zstd => zstd_safe::find_frame_compressed_size(data).map_err(zstd_error),
        Method::Zlib => {
            let mut z = flate2::Decompress::new(true);
            let mut sink = vec![0u8; 64 << 10];
            loop {
                let before = (z.total_in(), z.total_out());
                let pos = z.total_in() as usize;
                let status = z
                    .decompress(&data[pos..], &mut sink, flate2::FlushDecompress::None)
                    .map_err(|e| CompressedError::Corrupt(format!("zlib error: {e}")))?;
                if status == flate2::Status::StreamEnd {
                    return Ok(z.total_in() as usize);
                }
                if (z.total_in(), z.total_out()) == before {
                    return Err(CompressedError::TruncatedFrame);
                }
            }
        }
    }
}

#[cfg(feature = "compression")]
fn zstd_error(code: usize) -> CompressedError {
    let name = zstd_safe::get_error_name(code);
    if name.contains("Src size is incorrect") {
        CompressedError::TruncatedFrame
    } else {
        CompressedError::Corrupt(format!("zstd: {name}"))
    }
}

/// Below this decompressed size, a bundle is decompressed and hashed on the calling thread.
const INLINE_BELOW: u64 = 1 << 20;

/// Bytes handed to the hasher and to consumers at a time.
const HASH_CHUNK: usize = 1 << 20;
/// Compressed bytes fed to zstd per call, so that progress is published regularly.
#[cfg(feature = "compression")]
const FEED: usize = 256 << 10;

/// The output buffer shared between the decompressing thread (the only writer, always past
/// the published length) and readers (only below it).
struct Shared {
    ptr: *mut u8,
    cap: usize,
    state: Mutex<State>,
    changed: Condvar,
    /// Whether other threads may wait (otherwise nobody is woken: each wake is a system call).
    threads: bool,
}

#[derive(Clone, Copy)]
struct State {
    published: usize,
    done: bool,
    ok: bool,
}

// SAFETY: the pointer is written only by the one decompressing thread, past `published`, and
// read by others only below `published`, which the mutex orders.
unsafe impl Sync for Shared {}

impl Shared {
    fn new(buffer: &mut [u8], threads: bool) -> Shared {
        Shared {
            ptr: buffer.as_mut_ptr(),
            cap: buffer.len(),
            state: Mutex::new(State {
                published: 0,
                done: false,
                ok: false,
            }),
            changed: Condvar::new(),
            threads,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn publish(&self, len: usize) {
        self.lock().published = len;
        if self.threads {
            self.changed.notify_all();
        }
    }

    fn finish(&self, ok: bool) {
        let mut s = self.lock();
        s.done = true;
        s.ok = ok;
        drop(s);
        if self.threads {
            self.changed.notify_all();
        }
    }
}

/// The decompressing thread's view of the shared buffer, as zstd's output buffer: zstd
/// writes only past `filled` (the position it reports) and reads back below it (its window).
#[cfg(feature = "compression")]
struct Tail<'a> {
    shared: &'a Shared,
    filled: usize,
}

// SAFETY: `as_mut_ptr` and `capacity` describe the whole buffer, which outlives `shared`'s
// borrow and which only this thread writes; `as_slice` covers the first `filled` bytes, which
// are initialised (the buffer starts zeroed) and never written again, so they may be shared
// with the readers of the published part.
#[cfg(feature = "compression")]
unsafe impl zstd_safe::WriteBuf for Tail<'_> {
    fn as_slice(&self) -> &[u8] {
        // SAFETY: see the impl: the first `filled` bytes are initialised and immutable.
        unsafe { std::slice::from_raw_parts(self.shared.ptr, self.filled) }
    }

    fn capacity(&self) -> usize {
        self.shared.cap
    }

    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.shared.ptr
    }

    unsafe fn filled_until(&mut self, n: usize) {
        self.filled = n;
    }
}

/// The output of a running decompression, readable as it grows.
#[derive(Clone, Copy)]
pub struct Progress<'a> {
    shared: &'a Shared,
}

impl fmt::Debug for Progress<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Progress")
            .field("capacity", &self.shared.cap)
            .finish()
    }
}

impl<'a> Progress<'a> {
    /// The expected size of the output (its final size unless the data holds less).
    pub fn expected_len(&self) -> usize {
        self.shared.cap
    }

    /// Blocks until at least `len` bytes are decompressed (or all of them, when the output is
    /// shorter) and returns everything decompressed so far; `None` when decompression failed.
    pub fn wait(&self, len: usize) -> Option<&'a [u8]> {
        let mut s = self.shared.lock();
        while s.published < len && !s.done {
            s = self
                .shared
                .changed
                .wait(s)
                .unwrap_or_else(|p| p.into_inner());
        }
        if s.done && !s.ok {
            return None;
        }
        let n = s.published;
        drop(s);
        // SAFETY: the first `n` bytes are published: the writer never touches them again, and
        // the buffer outlives the scope in which every `Progress` lives.
        Some(unsafe { std::slice::from_raw_parts(self.shared.ptr, n) })
    }

    /// Whether decompression has ended, with success.
    fn finished(&self) -> Option<bool> {
        let s = self.shared.lock();
        s.done.then_some(s.ok)
    }
}

fn hash_progress(p: &Progress<'_>) -> Option<u64> {
    let mut h = Md5::new();
    let mut done = 0usize;
    loop {
        let data = p.wait(done + HASH_CHUNK)?;
        if data.len() > done {
            h.update(&data[done..]);
            done = data.len();
        } else if let Some(ok) = p.finished() {
            let data = p.wait(usize::MAX)?;
            h.update(&data[done..]);
            return ok.then(|| low_u64(&h.finalize()));
        }
    }
}

/// zstd into the shared buffer; returns the decompressed length.
#[cfg(not(feature = "compression"))]
fn inflate_zstd(_: &[u8], _: &Shared, _: u64) -> Result<usize, CompressedError> {
    Err(CompressedError::Unsupported)
}

#[cfg(not(feature = "compression"))]
fn inflate_zlib(_: &[u8], _: &Shared, _: u64) -> Result<usize, CompressedError> {
    Err(CompressedError::Unsupported)
}

#[cfg(feature = "compression")]
thread_local! {
    /// The decompression context last used on this thread: creating one costs more than
    /// decoding a tiny bundle.
    static DCTX: std::cell::RefCell<Option<zstd_safe::DCtx<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `f` with this thread's zstd decompression context (fresh parameters), creating it
/// the first time; keeping it saves its creation for each of many small bundles.
#[cfg(feature = "compression")]
pub(super) fn with_dctx<R>(
    f: impl FnOnce(&mut zstd_safe::DCtx<'static>) -> Result<R, CompressedError>,
) -> Result<R, CompressedError> {
    let cached = DCTX.with(|c| c.borrow_mut().take()).and_then(|mut d| {
        d.reset(zstd_safe::ResetDirective::SessionAndParameters)
            .is_ok()
            .then_some(d)
    });
    let mut dctx = match cached {
        Some(d) => d,
        None => zstd_safe::DCtx::try_create().ok_or(CompressedError::OutOfMemory { size: 0 })?,
    };
    let r = f(&mut dctx);
    DCTX.with(|c| *c.borrow_mut() = Some(dctx));
    r
}

/// Lets `dctx` take windows as large as one-shot decoding accepts (zstd's streaming default
/// is 128 MiB). Cannot fail on a context with these values; were it to, large windows would
/// only be refused, so the result is not needed.
#[cfg(feature = "compression")]
pub(super) fn allow_large_windows(dctx: &mut zstd_safe::DCtx<'_>) {
    let log = if cfg!(target_pointer_width = "64") {
        31
    } else {
        30
    };
    let _ = dctx.set_parameter(zstd_safe::DParameter::WindowLogMax(log));
}

#[cfg(feature = "compression")]
fn inflate_zstd(src: &[u8], out: &Shared, claimed: u64) -> Result<usize, CompressedError> {
    with_dctx(|dctx| inflate_zstd_with(dctx, src, out, claimed))
}

#[cfg(feature = "compression")]
fn inflate_zstd_with(
    dctx: &mut zstd_safe::DCtx<'static>,
    src: &[u8],
    out: &Shared,
    claimed: u64,
) -> Result<usize, CompressedError> {
    // The output buffer is one stable region, so zstd uses it as its window (no copy, no
    // window allocation); the window limit is raised to what one-shot decoding accepts.
    // Neither can fail on a fresh context with these values; were it to, decoding would
    // only be slower or refuse large windows, so the results are not needed.
    let _ = dctx.set_parameter(zstd_safe::DParameter::StableOutBuffer(true));
    allow_large_windows(dctx);
    let mut tail = Tail {
        shared: out,
        filled: 0,
    };
    let mut output = zstd_safe::OutBuffer::around(&mut tail);
    let too_small = || CompressedError::SizeTooSmall {
        claimed,
        actual: claimed + 1,
        exact: false,
    };
    let mut fed = 0usize;
    loop {
        let end = (fed + FEED).min(src.len());
        let mut input = zstd_safe::InBuffer {
            src: &src[..end],
            pos: fed,
        };
        let r = dctx
            .decompress_stream(&mut output, &mut input)
            .map_err(|code| {
                let name = zstd_safe::get_error_name(code);
                if name.contains("Destination buffer is too small") {
                    too_small()
                } else {
                    CompressedError::Corrupt(format!("zstd: {name}"))
                }
            })?;
        fed = input.pos;
        out.publish(output.pos());
        if r == 0 {
            // The frame is complete.
            return Ok(output.pos());
        }
        if output.pos() == output.capacity() {
            // Full, but the frame goes on: it holds more than the header says.
            return Err(too_small());
        }
        if fed == src.len() {
            // All input given and the frame is not complete: try once more to flush.
            let mut empty = zstd_safe::InBuffer {
                src,
                pos: src.len(),
            };
            let before = output.pos();
            let r = dctx.decompress_stream(&mut output, &mut empty);
            out.publish(output.pos());
            if r == Ok(0) {
                return Ok(output.pos());
            }
            if output.pos() == before {
                return Err(CompressedError::TruncatedFrame);
            }
        }
    }
}

/// zlib into the shared buffer; returns the decompressed length.
#[cfg(feature = "compression")]
fn inflate_zlib(src: &[u8], out: &Shared, claimed: u64) -> Result<usize, CompressedError> {
    let mut z = flate2::Decompress::new(true);
    let mut pos = 0usize;
    loop {
        let room = (out.cap - pos).min(4 << 20);
        // SAFETY: the region past `pos` is written by this thread only and not yet published.
        let dst = unsafe { std::slice::from_raw_parts_mut(out.ptr.add(pos), room) };
        let before = (z.total_in(), z.total_out());
        let status = z
            .decompress(
                &src[z.total_in() as usize..],
                dst,
                flate2::FlushDecompress::None,
            )
            .map_err(|e| CompressedError::Corrupt(format!("zlib error: {e}")))?;
        pos = z.total_out() as usize;
        out.publish(pos);
        if status == flate2::Status::StreamEnd {
            return Ok(pos);
        }
        if pos == out.cap {
            // Full: the stream must end here, with no more output.
            let mut probe = [0u8; 1];
            let status = z
                .decompress(
                    &src[z.total_in() as usize..],
                    &mut probe,
                    flate2::FlushDecompress::None,
                )
                .map_err(|e| CompressedError::Corrupt(format!("zlib error: {e}")))?;
            if z.total_out() as usize > pos {
                return Err(CompressedError::SizeTooSmall {
                    claimed,
                    actual: claimed + 1,
                    exact: false,
                });
            }
            if status == flate2::Status::StreamEnd {
                return Ok(pos);
            }
            return Err(CompressedError::TruncatedFrame);
        }
        if (z.total_in(), z.total_out()) == before {
            return Err(CompressedError::TruncatedFrame);
        }
    }
}

#[cfg(all(test, feature = "compression"))]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut v = Vec::new();
        for i in 0..50_000u32 {
            v.extend_from_slice(&(i % 977).to_le_bytes());
        }
        v
    }

    /// A v3 zstd CCOB around `frame` whose header claims `claimed` uncompressed bytes.
    fn ccob_around(frame: &[u8], claimed: u64) -> Vec<u8> {
        let header = Header {
            version: Version::V3,
            method: Method::Zstd,
            total_size: Some(32 + frame.len() as u64),
            uncompressed_size: claimed,
            hash: 0,
        };
        let mut out = header.to_bytes().unwrap();
        out.extend_from_slice(frame);
        out
    }

    /// Resource budget: a frame without a content size under a header claiming 15 GiB (below
    /// the 16 GiB default limit) used to allocate the 15 GiB; the allocation is now bounded
    /// by what the compressed bytes can hold (128 KiB per 4 bytes).
    #[test]
    fn unknown_content_size_allocates_by_the_frame() {
        let data = sample();
        let mut cctx = zstd_safe::CCtx::create();
        cctx.set_parameter(zstd_safe::CParameter::ContentSizeFlag(false))
            .unwrap();
        let mut frame = vec![0u8; zstd_safe::compress_bound(data.len())];
        let n = cctx.compress2(&mut frame[..], &data).unwrap();
        frame.truncate(n);
        let c = ccob_around(&frame, 15 << 30);
        let b = CompressedBundle::parse(&c).unwrap();
        assert_eq!(b.content_size(), None);
        let limits = Limits {
            verify_hash: false,
            ..Limits::default()
        };
        let (d, ()) = b.decompress_with(&limits, |_| ()).unwrap();
        assert_eq!(d.data, data);
        assert!(d.data.capacity() as u64 <= (frame.len() as u64 / 4 + 1) * (128 << 10));
        assert!(d.data.capacity() <= (2 * data.len()).max(1 << 20));
        assert_eq!(
            d.warnings,
            [Warning::SizeTooLarge {
                claimed: 15 << 30,
                actual: data.len() as u64
            }]
        );
    }

    /// Issue 16, finding 6: without a content size, the output grows with the data (doubling
    /// from 1 MiB) instead of taking the claimed 16 GiB, and stops at the claim.
    #[test]
    fn unknown_content_size_grows_with_the_data() {
        let data: Vec<u8> = (0..5u32 << 20).map(|i| (i % 251) as u8).collect();
        let mut cctx = zstd_safe::CCtx::create();
        cctx.set_parameter(zstd_safe::CParameter::ContentSizeFlag(false))
            .unwrap();
        let mut frame = vec![0u8; zstd_safe::compress_bound(data.len())];
        let n = cctx.compress2(&mut frame[..], &data).unwrap();
        frame.truncate(n);
        let limits = Limits {
            verify_hash: false,
            ..Limits::default()
        };
        let c = ccob_around(&frame, 16 << 30);
        let b = CompressedBundle::parse(&c).unwrap();
        let (d, ()) = b.decompress_with(&limits, |_| ()).unwrap();
        assert_eq!(d.data, data);
        assert!(d.data.capacity() <= 2 * data.len(), "{}", d.data.capacity());
        for claimed in [data.len() as u64 - 1, (3 << 20) + 5] {
            let c = ccob_around(&frame, claimed);
            let e = CompressedBundle::parse(&c)
                .unwrap()
                .decompress_with(&limits, |_| ())
                .unwrap_err();
            assert!(
                matches!(e, CompressedError::SizeTooSmall { exact: false, .. }),
                "{e:?}"
            );
        }
        let c = ccob_around(&frame, data.len() as u64);
        let (d, ()) = CompressedBundle::parse(&c)
            .unwrap()
            .decompress_with(&limits, |_| ())
            .unwrap();
        assert_eq!(d.data, data);
        assert!(d.warnings.is_empty());
    }

    /// Small bundles are decoded on the calling thread, large ones beside `consume` and the
    /// hasher: both give the same bytes, hash and consumer view.
    #[test]
    fn inline_and_threaded_decoding_agree() {
        for len in [100usize, (1 << 20) - 1, 1 << 20, 3 << 20] {
            let data: Vec<u8> = (0..len).map(|i| (i % 253) as u8).collect();
            for method in [Method::Zstd, Method::Zlib] {
                let options = CompressOptions {
                    method,
                    ..CompressOptions::default()
                };
                let c = compress(&data, &options).unwrap();
                let b = CompressedBundle::parse(&c).unwrap();
                let (d, seen) = b
                    .decompress_with(&Limits::default(), |p| {
                        p.wait(p.expected_len()).map(<[u8]>::to_vec)
                    })
                    .unwrap();
                assert_eq!(d.data, data, "{len} {method:?}");
                assert_eq!(seen.as_deref(), Some(&data[..]), "{len} {method:?}");
                assert_eq!(d.hash, Some(truncated_md5(&data)), "{len} {method:?}");
                assert!(d.warnings.is_empty());
            }
        }
    }

    /// Resource budget: a 20-byte frame whose own header claims 8 GiB used to get an 8 GiB
    /// buffer; it is now corrupt before anything is allocated.
    #[test]
    fn lying_frame_content_size_is_corrupt() {
        // Magic, descriptor (8-byte content size, single segment), content size, then one
        // last RLE block of 16 bytes.
        let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0xe0];
        frame.extend_from_slice(&(8u64 << 30).to_le_bytes());
        frame.extend_from_slice(&[(16 << 3 | 1 << 1 | 1) as u8, 0, 0, b'x']);
        let c = ccob_around(&frame, 8 << 30);
        let b = CompressedBundle::parse(&c).unwrap();
        assert_eq!(b.content_size(), Some(8 << 30));
        let e = b.decompress().unwrap_err();
        assert!(
            e.to_string().contains(
                "the frame claims 8589934592 bytes, more than its 17 compressed bytes can hold"
            ),
            "{e}"
        );
    }

    #[test]
    fn round_trips_every_version_and_method() {
        let data = sample();
        for method in [Method::Zstd, Method::Zlib] {
            for version in [Version::V2, Version::V3] {
                let opts = CompressOptions {
                    method,
                    version,
                    ..Default::default()
                };
                let c = compress(&data, &opts).unwrap();
                let b = CompressedBundle::parse(&c).unwrap();
                assert_eq!(b.len(), c.len());
                assert_eq!(b.header().version, version);
                assert_eq!(b.header().method, method);
                assert_eq!(b.header().hash, truncated_md5(&data));
                let d = b.decompress().unwrap();
                assert_eq!(d.data, data);
                assert!(d.warnings.is_empty(), "{:?}", d.warnings);
            }
        }
    }

    #[test]
    fn hash_is_low_half_of_md5() {
        // md5("") = d41d8cd98f00b204e9800998ecf8427e
        assert_eq!(truncated_md5(b""), 0x04b2008fd98c1dd4);
    }

    #[test]
    fn bounded_by_total_size_with_padding() {
        let data = sample();
        let mut c = compress(&data, &CompressOptions::default()).unwrap();
        let len = c.len();
        c.resize(len.next_multiple_of(4096), 0);
        let b = CompressedBundle::parse(&c).unwrap();
        assert_eq!(b.len(), len);
        assert_eq!(b.decompress().unwrap().data, data);
    }

    #[test]
    fn hostile_headers() {
        let data = sample();
        let c = compress(&data, &CompressOptions::default()).unwrap();
        // Claims 1 TiB: the frame knows better, so only its real size is allocated.
        let mut huge = c.clone();
        huge[16..24].copy_from_slice(&(1u64 << 40).to_le_bytes());
        let d = CompressedBundle::parse(&huge)
            .unwrap()
            .decompress()
            .unwrap();
        assert_eq!(d.data, data);
        assert_eq!(
            d.warnings,
            [Warning::SizeTooLarge {
                claimed: 1 << 40,
                actual: data.len() as u64
            }]
        );
        // Frame and header agree on 1 TiB: refused before anything is allocated.
        let limits = Limits {
            max_size: 1000,
            ..Limits::default()
        };
        let e = CompressedBundle::parse(&c)
            .unwrap()
            .decompress_with(&limits, |_| ())
            .unwrap_err();
        assert_eq!(
            e,
            CompressedError::TooLarge {
                size: data.len() as u64,
                limit: 1000
            }
        );
        let mut small = c.clone();
        small[16..24].copy_from_slice(&10u64.to_le_bytes());
        assert!(matches!(
            CompressedBundle::parse(&small).unwrap().decompress(),
            Err(CompressedError::SizeTooSmall { claimed: 10, .. })
        ));
        let mut version = c.clone();
        version[4] = 9;
        assert_eq!(
            CompressedBundle::parse(&version).unwrap_err(),
            CompressedError::UnknownVersion(9)
        );
        let mut method = c.clone();
        method[6] = 7;
        assert_eq!(
            CompressedBundle::parse(&method).unwrap_err(),
            CompressedError::UnknownMethod(7)
        );
        let truncated = &c[..c.len() - 5];
        assert!(matches!(
            CompressedBundle::parse(truncated),
            Err(CompressedError::Truncated { .. })
        ));
        let mut hash = c.clone();
        hash[24] ^= 1;
        let d = CompressedBundle::parse(&hash)
            .unwrap()
            .decompress()
            .unwrap();
        assert!(matches!(d.warnings[..], [Warning::HashMismatch { .. }]));
        let strict = Limits {
            strict_hash: true,
            ..Limits::default()
        };
        assert!(matches!(
            CompressedBundle::parse(&hash)
                .unwrap()
                .decompress_with(&strict, |_| ()),
            Err(CompressedError::HashMismatch { .. })
        ));
    }

    #[test]
    fn version_2_limits_use_llvm_22_messages() {
        let h = Header {
            version: Version::V2,
            method: Method::Zstd,
            total_size: Some(100),
            uncompressed_size: 1 << 32,
            hash: 0,
        };
        let e = h.to_bytes().unwrap_err();
        assert_eq!(e.to_string(), "Uncompressed size exceeds version 2 limit");
        let h = Header {
            total_size: Some(1 << 32),
            uncompressed_size: 10,
            ..h
        };
        assert_eq!(
            h.to_bytes().unwrap_err().to_string(),
            "Total file size exceeds version 2 limit"
        );
        let v3 = Header {
            version: Version::V3,
            uncompressed_size: 1 << 40,
            ..h
        };
        let bytes = v3.to_bytes().unwrap();
        assert_eq!(Header::parse(&bytes).unwrap(), v3);
    }
}
