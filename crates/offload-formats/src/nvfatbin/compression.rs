//! Compressed entries: [`Entry::decompress`] and the LZ4-block and zstd-frame decoders it
//! calls, each bounded by the size the entry header announces.

use super::entry::Entry;
use super::error::{FatbinError, FatbinErrorKind, err};
use super::layout::{Compression, EntryKind};

impl Entry<'_> {
    /// The image of a compressed entry, decompressed as `cuobjdump -xelf`/`-xptx` extracts
    /// it (a cubin; PTX text up to its NUL); `Ok(None)` when the entry is not compressed
    /// (then [`Entry::image`] has it). The uncompressed size is checked against `max` before
    /// anything is allocated, and the output must have exactly that size. zstd needs the
    /// `compression` feature.
    pub fn decompress(&self, max: u64) -> Result<Option<Vec<u8>>, FatbinError> {
        let Some(method) = self.compression() else {
            return Ok(None);
        };
        let at = self.payload_offset();
        let fail =
            |message: String| err(FatbinErrorKind::Decompression { method, message }, at, None);
        let size = self.uncompressed_size();
        if size > max {
            return Err(err(
                FatbinErrorKind::TooLarge { size, max },
                self.offset() + 56,
                None,
            ));
        }
        let input = self.stored();
        let mut out = match method {
            Compression::Lz4 => lz4_block(input, size as usize).map_err(fail)?,
            Compression::Zstd => zstd_frame(input, size).map_err(fail)?,
        };
        if out.len() as u64 != size {
            return Err(fail(format!(
                "{} bytes decompressed, the header says {size}",
                out.len()
            )));
        }
        if self.kind() == EntryKind::Ptx {
            let end = out.iter().position(|&b| b == 0).unwrap_or(out.len());
            out.truncate(end);
        }
        Ok(Some(out))
    }
}

/// Decodes one LZ4 block (no frame) into `size` bytes at most, with `lz4_flex`'s checked
/// decoder: crafted input ends in an error, never a panic or an overrun.
pub(super) fn lz4_block(input: &[u8], size: usize) -> Result<Vec<u8>, String> {
    // An LZ4 sequence of n bytes expands to at most about 255 n bytes: a size beyond that
    // is a lie, refused before allocating it.
    if size / 256 > input.len() + 1 {
        return Err(format!(
            "{} compressed bytes cannot hold {size} bytes",
            input.len()
        ));
    }
    lz4_flex::block::decompress(input, size).map_err(|e| e.to_string())
}

#[cfg(feature = "compression")]
fn zstd_frame(input: &[u8], size: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    if crate::kind::FileKind::sniff(input) != crate::kind::FileKind::ZstdFrame {
        return Err("no zstd frame magic".into());
    }
    let mut out = Vec::with_capacity(size.min(input.len() as u64 * 64) as usize);
    zstd::stream::read::Decoder::new(input)
        .and_then(|d| d.take(size.saturating_add(1)).read_to_end(&mut out))
        .map_err(|e| e.to_string())?;
    Ok(out)
}

#[cfg(not(feature = "compression"))]
fn zstd_frame(_: &[u8], _: u64) -> Result<Vec<u8>, String> {
    Err(
        "zstd is not supported by this build (offload-formats without its `compression` \
         feature)"
            .into(),
    )
}
