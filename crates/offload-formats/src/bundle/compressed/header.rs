//! The `CCOB` header: its fields for versions 1 to 3, parsed and written, and the truncated
//! MD5 it stores. Everything else about a compressed bundle reads or fills the data after it.
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

use object::endian::{U16, U32, U64};
use object::pod::bytes_of;

use super::error::{CompressError, CompressedError};
use crate::raw::{self, CCOB_MAGIC, CcobHeaderV1, CcobHeaderV2, CcobHeaderV3, CcobPrefix, LE};
use CompressError::UncompressedTooLarge;
use md5::{Digest, Md5};

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
pub(super) fn truncated_md5_of(pieces: &[&[u8]]) -> u64 {
    let mut h = Md5::new();
    for piece in pieces {
        h.update(piece);
    }
    low_u64(&h.finalize())
}

pub(super) fn low_u64(digest: &[u8]) -> u64 {
    raw::u64_at(digest, 0).expect("16-byte digest")
}

/// Whether `data` starts with the compressed-bundle magic.
pub fn is_compressed(data: &[u8]) -> bool {
    crate::kind::FileKind::sniff(data) == crate::kind::FileKind::CompressedBundle
}
