//! The reader of a compressed bundle ([`CompressedBundle`]): the header checked against the
//! frame and the limits before anything is allocated; decompression is in the pipeline.

use super::codec::frame_len;
use super::error::CompressedError;
use super::header::{Header, Method};
use super::options::{Limits, Warning};
use std::time::Duration;

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
    pub(super) header: Header,
    pub(super) payload: &'data [u8],
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

    pub(super) fn parse_checked(
        data: &'data [u8],
        check_frame: bool,
    ) -> Result<Self, CompressedError> {
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
    pub(super) fn output_size(
        &self,
        warnings: &mut Vec<Warning>,
    ) -> Result<(u64, bool), CompressedError> {
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
    pub(super) fn check_output(
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
