//! Decoding compressed bundles for the report and extraction: whole (with the compression
//! details) or only as far as the entry table.

use crate::bundle::binary::{Descriptor, HeaderRead, read_header};
use crate::bundle::compressed::{CompressedBundle, CompressedError, Limits};

use super::report::Compression;

pub(super) fn ratio(uncompressed: u64, compressed: u64) -> f64 {
    if compressed == 0 {
        0.0
    } else {
        // Two decimals, as LLVM prints it.
        ((uncompressed as f64 / compressed as f64) * 100.0).round() / 100.0
    }
}

/// Decompresses a compressed bundle, with its compression details.
pub(crate) fn decompress(
    c: &CompressedBundle<'_>,
) -> Result<(Compression, Vec<u8>), CompressedError> {
    decompress_within(c, &Limits::default())
}

/// [`decompress`] within `limits`.
pub(super) fn decompress_within(
    c: &CompressedBundle<'_>,
    limits: &Limits,
) -> Result<(Compression, Vec<u8>), CompressedError> {
    let (d, ()) = c.decompress_with(limits, |_| ())?;
    let h = c.header();
    let compressed = c.len() as u64;
    Ok((
        Compression {
            method: h.method.name(),
            version: h.version.raw(),
            compressed_size: compressed,
            uncompressed_size: d.data.len() as u64,
            ratio: ratio(d.data.len() as u64, compressed),
            hash_matches: d.hash.map(|computed| computed == h.hash),
        },
        d.data,
    ))
}

/// The decoded size of a compressed bundle whose entry table may be read without decoding it
/// whole: the size its zstd frame records, when that equals the header's claim and is within
/// the default limit. `None` otherwise (zlib, a frame that does not record its size, a size
/// that disagrees): the caller decodes the whole bundle, which reports any problem exactly as
/// before.
pub(crate) fn trusted_size(c: &CompressedBundle<'_>) -> Option<u64> {
    c.content_size()
        .filter(|&n| n == c.header().uncompressed_size)
        .filter(|&n| n <= crate::bundle::compressed::Limits::default().max_size)
}

/// The first bytes of a compressed bundle of `size` decoded bytes: decoded until its entry
/// table is complete, then up to what `end` asks of the table (`None`: no further). `None`
/// when decoding fails or the table is malformed (the caller then decodes the whole bundle).
pub(crate) fn decode_table(
    c: &CompressedBundle<'_>,
    size: u64,
    end: impl Fn(&[Descriptor<'_>]) -> Option<u64>,
) -> Option<Vec<u8>> {
    // The table is read once complete; what it asks for is kept for the steps after.
    let mut wanted = None;
    let prefix = c
        .decompress_prefix(|d| {
            if wanted.is_some() {
                return wanted;
            }
            match read_header(d, size) {
                Ok(Some(HeaderRead::NeedMore(n))) => Some(n),
                Ok(Some(HeaderRead::Complete(descriptors, _))) => {
                    wanted = end(&descriptors);
                    wanted
                }
                _ => None,
            }
        })
        .ok()?;
    Some(prefix.data)
}

/// The compression details and the decoded entry table of a compressed bundle, decoding no
/// further than the table; `None` when [`trusted_size`] or [`decode_table`] says so.
pub(crate) fn header_only(c: &CompressedBundle<'_>) -> Option<(Compression, Vec<u8>)> {
    let size = trusted_size(c)?;
    let header = decode_table(c, size, |_| None)?;
    let h = c.header();
    let compressed = c.len() as u64;
    Some((
        Compression {
            method: h.method.name(),
            version: h.version.raw(),
            compressed_size: compressed,
            uncompressed_size: size,
            ratio: ratio(size, compressed),
            hash_matches: None,
        },
        header,
    ))
}
