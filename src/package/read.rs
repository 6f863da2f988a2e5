//! Zero-copy reader of one offload binary (versions 1 to 3), and decompression of
//! compressed version-3 binaries.
//!
//! [`OffloadBinary::parse`] checks every size and offset before anything is read
//! through it, so the accessors of [`Entry`] cannot fail. It is stricter than
//! LLVM's reader where LLVM reads out of bounds or misaligned structures:
//!
//! - images, string entries and strings must lie inside the binary (LLVM checks only
//!   that offsets start inside the input);
//! - the total size of an uncompressed binary, the entries offset and each entry's
//!   string-entry offset must be multiples of 8, as every writer makes them (LLVM
//!   casts them to structs requiring that alignment).
//!
//! The input does not need to be aligned in memory: fields are read bytewise.

use std::io::Read;

use super::error::{ReadError, ReadErrorKind};
use super::raw::{
    ENTRY_SIZE, HEADER_SIZE, HEADER_SIZE_V3, ImageKindValue, MAGIC, NEWEST_VERSION,
    OffloadKindValue, STRING_ENTRY_SIZE_V1, STRING_ENTRY_SIZE_V2,
};

pub(crate) fn u16_at(d: &[u8], at: u64) -> u16 {
    let at = at as usize;
    u16::from_le_bytes([d[at], d[at + 1]])
}

pub(crate) fn u32_at(d: &[u8], at: u64) -> u32 {
    let at = at as usize;
    u32::from_le_bytes(d[at..at + 4].try_into().expect("4 bytes"))
}

pub(crate) fn u64_at(d: &[u8], at: u64) -> u64 {
    let at = at as usize;
    u64::from_le_bytes(d[at..at + 8].try_into().expect("8 bytes"))
}

/// The header fields every version shares, read after checking magic, version and length.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Header {
    pub version: u32,
    pub size: u64,
    pub entries_offset: u64,
    /// Entry size (v1) or entry count (v2, v3).
    pub word3: u64,
    /// v3 only; 0 otherwise.
    pub inflated_size: u64,
}

impl Header {
    pub(crate) fn header_size(version: u32) -> u64 {
        if version >= 3 {
            HEADER_SIZE_V3
        } else {
            HEADER_SIZE
        }
    }

    /// Reads and checks magic, version, header length and total size.
    pub(crate) fn read(input: &[u8]) -> Result<Header, ReadError> {
        let len = input.len() as u64;
        let err = |kind| ReadError::new(kind, 0, None);
        if len < 8 {
            if !MAGIC.starts_with(&input[..input.len().min(4)]) {
                return Err(err(ReadErrorKind::BadMagic));
            }
            return Err(err(ReadErrorKind::Truncated {
                field: "header",
                needed: HEADER_SIZE,
                available: len,
            }));
        }
        if input[..4] != MAGIC {
            return Err(err(ReadErrorKind::BadMagic));
        }
        let version = u32_at(input, 4);
        if version == 0 || version > NEWEST_VERSION {
            return Err(err(ReadErrorKind::UnsupportedVersion(version)));
        }
        let header_size = Header::header_size(version);
        if len < header_size {
            return Err(err(ReadErrorKind::Truncated {
                field: "header",
                needed: header_size,
                available: len,
            }));
        }
        let h = Header {
            version,
            size: u64_at(input, 8),
            entries_offset: u64_at(input, 16),
            word3: u64_at(input, 24),
            inflated_size: if version >= 3 { u64_at(input, 32) } else { 0 },
        };
        if h.size > len || h.size < header_size {
            return Err(err(ReadErrorKind::BadSize {
                size: h.size,
                available: len,
            }));
        }
        Ok(h)
    }

    pub(crate) fn is_compressed(&self) -> bool {
        self.version >= 3 && self.inflated_size != 0
    }
}

/// Whether `input` starts with a compressed (version 3) offload binary header.
pub fn is_compressed(input: &[u8]) -> bool {
    Header::read(input).is_ok_and(|h| h.is_compressed())
}

/// Decompresses the compressed version-3 binary at the start of `input` (zstd when
/// the payload starts with zstd's magic, zlib otherwise, as LLVM decides) and
/// returns the uncompressed binary, whose header has the inflated size as total
/// size and 0 as inflated size. The output grows with the data actually
/// decompressed, never beyond the size the header announces.
pub fn decompress(input: &[u8]) -> Result<Vec<u8>, ReadError> {
    let h = Header::read(input)?;
    if !h.is_compressed() {
        return Ok(input[..h.size as usize].to_vec());
    }
    let header_size = HEADER_SIZE_V3;
    if h.entries_offset < header_size || h.entries_offset > h.size {
        return Err(ReadError::new(
            ReadErrorKind::OutOfRange {
                field: "compressed payload",
                offset: h.entries_offset,
                size: h.size.saturating_sub(h.entries_offset),
                limit: h.size,
            },
            16,
            None,
        ));
    }
    if h.inflated_size < h.entries_offset {
        return Err(ReadError::new(
            ReadErrorKind::BadSize {
                size: h.inflated_size,
                available: h.entries_offset,
            },
            32,
            None,
        ));
    }
    let payload = &input[h.entries_offset as usize..h.size as usize];
    let body_size = h.inflated_size - h.entries_offset;
    let mut body = Vec::with_capacity(body_size.min(payload.len() as u64 * 4) as usize);
    let limit = body_size.saturating_add(1);
    let result = if payload.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        zstd::stream::read::Decoder::new(payload).and_then(|d| d.take(limit).read_to_end(&mut body))
    } else {
        flate2::read::ZlibDecoder::new(payload)
            .take(limit)
            .read_to_end(&mut body)
    };
    if let Err(e) = result {
        return Err(ReadError::new(
            ReadErrorKind::Decompression(e.to_string()),
            h.entries_offset,
            None,
        ));
    }
    if body.len() as u64 != body_size {
        return Err(ReadError::new(
            ReadErrorKind::InflatedSize {
                expected: body_size,
                found: body.len() as u64,
            },
            h.entries_offset,
            None,
        ));
    }
    let mut out = Vec::with_capacity(h.entries_offset as usize + body.len());
    out.extend_from_slice(&input[..h.entries_offset as usize]);
    out[8..16].copy_from_slice(&h.inflated_size.to_le_bytes());
    out[32..40].copy_from_slice(&0u64.to_le_bytes());
    out.extend_from_slice(&body);
    Ok(out)
}

/// One parsed, validated offload binary borrowed from its input.
#[derive(Clone, Copy, Debug)]
pub struct OffloadBinary<'data> {
    data: &'data [u8],
    version: u32,
    entries_offset: u64,
    entry_count: u64,
}

impl<'data> OffloadBinary<'data> {
    /// Parses the binary at the start of `input` (which may continue past it) and
    /// checks all its offsets. Compressed binaries are refused with
    /// [`ReadErrorKind::Compressed`]: pass them through [`decompress`] first.
    pub fn parse(input: &'data [u8]) -> Result<OffloadBinary<'data>, ReadError> {
        let h = Header::read(input)?;
        if h.is_compressed() {
            return Err(ReadError::new(ReadErrorKind::Compressed, 32, None));
        }
        let data = &input[..h.size as usize];
        let size = h.size;
        if size % 8 != 0 {
            return Err(ReadError::new(
                ReadErrorKind::Misaligned {
                    field: "total size",
                    value: size,
                },
                8,
                None,
            ));
        }
        let entry_count = if h.version == 1 { 1 } else { h.word3 };
        if h.version == 1 && h.word3 > size - HEADER_SIZE {
            return Err(ReadError::new(
                ReadErrorKind::OutOfRange {
                    field: "entry",
                    offset: h.entries_offset,
                    size: h.word3,
                    limit: size,
                },
                24,
                None,
            ));
        }
        if h.entries_offset % 8 != 0 {
            return Err(ReadError::new(
                ReadErrorKind::Misaligned {
                    field: "entries offset",
                    value: h.entries_offset,
                },
                16,
                None,
            ));
        }
        check_range(
            "entries",
            h.entries_offset,
            entry_count.checked_mul(ENTRY_SIZE),
            size,
            16,
            None,
        )?;
        let bin = OffloadBinary {
            data,
            version: h.version,
            entries_offset: h.entries_offset,
            entry_count,
        };
        for i in 0..entry_count {
            bin.check_entry(i)?;
        }
        Ok(bin)
    }

    fn string_entry_size(&self) -> u64 {
        if self.version == 1 {
            STRING_ENTRY_SIZE_V1
        } else {
            STRING_ENTRY_SIZE_V2
        }
    }

    fn check_entry(&self, index: u64) -> Result<(), ReadError> {
        let d = self.data;
        let size = d.len() as u64;
        let at = self.entries_offset + index * ENTRY_SIZE;
        let e = Some(index);
        let string_offset = u64_at(d, at + 8);
        let num_strings = u64_at(d, at + 16);
        let image_offset = u64_at(d, at + 24);
        let image_size = u64_at(d, at + 32);
        check_range("image", image_offset, Some(image_size), size, at + 24, e)?;
        if string_offset % 8 != 0 {
            return Err(ReadError::new(
                ReadErrorKind::Misaligned {
                    field: "string entries offset",
                    value: string_offset,
                },
                at + 8,
                e,
            ));
        }
        let ses = self.string_entry_size();
        check_range(
            "string entries",
            string_offset,
            num_strings.checked_mul(ses),
            size,
            at + 8,
            e,
        )?;
        for s in 0..num_strings {
            let se = string_offset + s * ses;
            c_string(d, u64_at(d, se), "key").map_err(|k| ReadError::new(k, se, e))?;
            if self.version == 1 {
                c_string(d, u64_at(d, se + 8), "value")
                    .map_err(|k| ReadError::new(k, se + 8, e))?;
            } else {
                check_range(
                    "value",
                    u64_at(d, se + 8),
                    Some(u64_at(d, se + 16)),
                    size,
                    se + 8,
                    e,
                )?;
            }
        }
        Ok(())
    }

    /// The layout version (1 to 3).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The total size from the header: the bytes this binary covers in its input.
    pub fn size(&self) -> u64 {
        self.data.len() as u64
    }

    /// The binary's bytes.
    pub fn data(&self) -> &'data [u8] {
        self.data
    }

    /// The number of entries (1 for version 1).
    pub fn entry_count(&self) -> u64 {
        self.entry_count
    }

    /// The entries, in stored order.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = Entry<'data>> + '_ {
        (0..self.entry_count as usize).map(|i| self.entry_unchecked(i as u64))
    }

    /// The entry at `index`, if there is one.
    pub fn entry(&self, index: u64) -> Option<Entry<'data>> {
        (index < self.entry_count).then(|| self.entry_unchecked(index))
    }

    fn entry_unchecked(&self, index: u64) -> Entry<'data> {
        let d = self.data;
        let at = self.entries_offset + index * ENTRY_SIZE;
        let image_offset = u64_at(d, at + 24) as usize;
        let image_size = u64_at(d, at + 32) as usize;
        Entry {
            data: d,
            version: self.version,
            index,
            image_kind: ImageKindValue(u16_at(d, at)),
            offload_kind: OffloadKindValue(u16_at(d, at + 2)),
            flags: u32_at(d, at + 4),
            string_offset: u64_at(d, at + 8),
            num_strings: u64_at(d, at + 16),
            image: &d[image_offset..image_offset + image_size],
        }
    }
}

fn check_range(
    field: &'static str,
    offset: u64,
    size: Option<u64>,
    limit: u64,
    at: u64,
    entry: Option<u64>,
) -> Result<(), ReadError> {
    let fits = size
        .and_then(|s| offset.checked_add(s))
        .is_some_and(|end| end <= limit);
    if fits {
        return Ok(());
    }
    Err(ReadError::new(
        ReadErrorKind::OutOfRange {
            field,
            offset,
            size: size.unwrap_or(u64::MAX),
            limit,
        },
        at,
        entry,
    ))
}

/// The NUL-terminated string at `offset` (without its NUL).
fn c_string<'d>(d: &'d [u8], offset: u64, field: &'static str) -> Result<&'d [u8], ReadErrorKind> {
    if offset >= d.len() as u64 {
        return Err(ReadErrorKind::OutOfRange {
            field,
            offset,
            size: 1,
            limit: d.len() as u64,
        });
    }
    let rest = &d[offset as usize..];
    match rest.iter().position(|&b| b == 0) {
        Some(n) => Ok(&rest[..n]),
        None => Err(ReadErrorKind::UnterminatedString { field }),
    }
}

/// One image of an offload binary with its kinds and string map.
#[derive(Clone, Copy, Debug)]
pub struct Entry<'data> {
    data: &'data [u8],
    version: u32,
    index: u64,
    image_kind: ImageKindValue,
    offload_kind: OffloadKindValue,
    flags: u32,
    string_offset: u64,
    num_strings: u64,
    image: &'data [u8],
}

impl<'data> Entry<'data> {
    /// Zero-based index of the entry in its binary.
    pub fn index(&self) -> u64 {
        self.index
    }

    /// The image kind as stored.
    pub fn image_kind(&self) -> ImageKindValue {
        self.image_kind
    }

    /// The offload kind as stored (see [`OffloadKindValue`] for its two readings).
    pub fn offload_kind(&self) -> OffloadKindValue {
        self.offload_kind
    }

    /// The entry flags (bit 0 is `OIF_Metadata` in LLVM 23).
    pub fn flags(&self) -> u32 {
        self.flags
    }

    /// The image bytes.
    pub fn image(&self) -> &'data [u8] {
        self.image
    }

    /// The string entries as stored: `(key, value)`, repeated keys included.
    pub fn strings(&self) -> impl ExactSizeIterator<Item = (&'data [u8], &'data [u8])> + '_ {
        let ses = if self.version == 1 {
            STRING_ENTRY_SIZE_V1
        } else {
            STRING_ENTRY_SIZE_V2
        };
        (0..self.num_strings as usize).map(move |i| {
            let d = self.data;
            let se = self.string_offset + i as u64 * ses;
            let key = c_string(d, u64_at(d, se), "key").expect("checked by parse");
            let value = if self.version == 1 {
                c_string(d, u64_at(d, se + 8), "value").expect("checked by parse")
            } else {
                let off = u64_at(d, se + 8) as usize;
                &d[off..off + u64_at(d, se + 16) as usize]
            };
            (key, value)
        })
    }

    /// The value of `key`; the last one when the key repeats, as LLVM's map keeps it.
    pub fn get(&self, key: &str) -> Option<&'data [u8]> {
        self.strings()
            .filter(|(k, _)| *k == key.as_bytes())
            .last()
            .map(|(_, v)| v)
    }

    /// The `triple` string (empty when absent, as LLVM's `getTriple`).
    pub fn triple(&self) -> &'data [u8] {
        self.get("triple").unwrap_or_default()
    }

    /// The `arch` string (empty when absent, as LLVM's `getArch`).
    pub fn arch(&self) -> &'data [u8] {
        self.get("arch").unwrap_or_default()
    }
}
