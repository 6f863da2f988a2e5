//! Zero-copy reader of one offload binary (versions 1 to 3), and decompression of
//! compressed version-3 binaries.
//!
//! [`OffloadBinary::parse`] checks every size and offset before anything is read
//! through it, so the accessors of [`OffloadEntry`] cannot fail. It is stricter than
//! LLVM's reader where LLVM reads out of bounds or misaligned structures:
//!
//! - images, string entries and strings must lie inside the binary (LLVM checks only
//!   that offsets start inside the input);
//! - the total size of an uncompressed binary, the entries offset and each entry's
//!   string-entry offset must be multiples of 8, as every writer makes them (LLVM
//!   casts them to structs requiring that alignment).
//!
//! The input does not need to be aligned in memory: fields are read bytewise.

#[cfg(feature = "compression")]
use std::io::Read;
use std::sync::Arc;

use super::error::{InflateError, PackageReadError, PackageReadErrorKind};
use super::kinds::{ImageKindValue, OffloadKindValue};
use crate::kind;
use crate::raw::{
    self, LE, OFFLOAD_ENTRY_SIZE as ENTRY_SIZE, OFFLOAD_HEADER_SIZE as HEADER_SIZE,
    OFFLOAD_HEADER_SIZE_V3 as HEADER_SIZE_V3, OFFLOAD_NEWEST_VERSION as NEWEST_VERSION,
    STRING_ENTRY_SIZE_V1, STRING_ENTRY_SIZE_V2, u32_at,
};

/// The fixed part of entry `at` of a binary whose entry table was checked.
fn entry_at(d: &[u8], at: u64) -> &raw::OffloadEntry {
    raw::read_at(d, at as usize).expect("the entry table was checked")
}

/// `(key offset, value offset, value size)` of the string entry at `se` of a binary of
/// `version` whose string entries were checked (no value size in version 1).
fn string_entry(d: &[u8], se: u64, version: u32) -> (u64, u64, Option<u64>) {
    const CHECKED: &str = "the string entries were checked";
    if version == 1 {
        let e: &raw::StringEntryV1 = raw::read_at(d, se as usize).expect(CHECKED);
        (e.key.get(LE), e.value.get(LE), None)
    } else {
        let e: &raw::StringEntryV2 = raw::read_at(d, se as usize).expect(CHECKED);
        (e.key.get(LE), e.value.get(LE), Some(e.value_size.get(LE)))
    }
}

/// The header fields every version shares, read after checking magic, version and length.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Header {
    pub version: u32,
    pub size: u64,
    pub entries_offset: u64,
    /// OffloadEntry size (v1) or entry count (v2, v3).
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
    pub(crate) fn read(input: &[u8]) -> Result<Header, PackageReadError> {
        let len = input.len() as u64;
        let err = |kind| PackageReadError::new(kind, 0, None);
        if len < 8 {
            if !kind::may_start_offload_binary(input) {
                return Err(err(PackageReadErrorKind::BadMagic));
            }
            return Err(err(PackageReadErrorKind::Truncated {
                field: "header",
                needed: HEADER_SIZE,
                available: len,
            }));
        }
        if kind::FileKind::sniff(input) != kind::FileKind::OffloadBinary {
            return Err(err(PackageReadErrorKind::BadMagic));
        }
        let version = u32_at(input, 4).expect("8 bytes");
        if version == 0 || version > NEWEST_VERSION {
            return Err(err(PackageReadErrorKind::UnsupportedVersion(version)));
        }
        let header_size = Header::header_size(version);
        if len < header_size {
            return Err(err(PackageReadErrorKind::Truncated {
                field: "header",
                needed: header_size,
                available: len,
            }));
        }
        let fixed: &raw::OffloadHeader = raw::read_at(input, 0).expect("the length was checked");
        let inflated_size = match version {
            3.. => raw::read_at::<raw::OffloadHeaderV3Tail>(input, HEADER_SIZE as usize)
                .expect("the length was checked")
                .inflated_size
                .get(LE),
            _ => 0,
        };
        let h = Header {
            version,
            size: fixed.size.get(LE),
            entries_offset: fixed.entries_offset.get(LE),
            word3: fixed.entry_size_or_count.get(LE),
            inflated_size,
        };
        if h.size > len || h.size < header_size {
            return Err(err(PackageReadErrorKind::BadSize {
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
pub fn decompress(input: &[u8]) -> Result<Vec<u8>, PackageReadError> {
    decompress_limited(input, DEFAULT_MAX_INFLATED)
}

/// The largest inflated size [`decompress`] accepts: 16 GiB, as for compressed bundles.
pub const DEFAULT_MAX_INFLATED: u64 = 16 << 30;

/// [`decompress`] with a limit on the inflated size the header announces: a larger one is
/// an error before anything is decompressed (the output never grows past the announced
/// size, so this bounds memory whatever the compressed data expands to).
pub fn decompress_limited(input: &[u8], max_size: u64) -> Result<Vec<u8>, PackageReadError> {
    let h = Header::read(input)?;
    if h.is_compressed() && h.inflated_size > max_size {
        return Err(PackageReadError::new(
            PackageReadErrorKind::Decompression(format!(
                "the header announces {} inflated bytes, above the limit of {max_size}",
                h.inflated_size
            )),
            32,
            None,
        ));
    }
    if !h.is_compressed() {
        return Ok(input[..h.size as usize].to_vec());
    }
    let payload = compressed_payload(input, &h)?;
    let body_size = h.inflated_size - h.entries_offset;
    // The header, then the body decompressed behind it: the buffer grows with the data
    // (read_to_end reserves fallibly), starting from at most four times the compressed
    // bytes; a refused allocation is an "out of memory" error, never an abort.
    let start = h.entries_offset as usize;
    let first = start as u64 + body_size.min(payload.len() as u64 * 4);
    let inflate_error =
        |e: std::io::Error| PackageReadError::new(inflate_kind(e), h.entries_offset, None);
    let mut out = Vec::new();
    out.try_reserve_exact(first as usize)
        .map_err(|_| inflate_error(std::io::ErrorKind::OutOfMemory.into()))?;
    out.extend_from_slice(&input[..start]);
    let (header, _) =
        object::pod::from_bytes_mut::<raw::OffloadHeader>(&mut out).expect("a version 3 header");
    header.size.set(LE, h.inflated_size);
    let (tail, _) = object::pod::from_bytes_mut::<raw::OffloadHeaderV3Tail>(&mut out[32..])
        .expect("a version 3 header");
    tail.inflated_size.set(LE, 0);
    inflate(payload, &mut out, body_size.saturating_add(1)).map_err(inflate_error)?;
    let found = (out.len() - start) as u64;
    if found != body_size {
        return Err(PackageReadError::new(
            PackageReadErrorKind::InflatedSize {
                expected: body_size,
                found,
            },
            h.entries_offset,
            None,
        ));
    }
    Ok(out)
}

fn inflate_kind(e: std::io::Error) -> PackageReadErrorKind {
    PackageReadErrorKind::Inflate(InflateError(Arc::new(e)))
}

/// The compressed payload of a compressed binary with header `h`, once its offset and the
/// inflated size are checked.
fn compressed_payload<'d>(input: &'d [u8], h: &Header) -> Result<&'d [u8], PackageReadError> {
    if h.entries_offset < HEADER_SIZE_V3 || h.entries_offset > h.size {
        return Err(PackageReadError::new(
            PackageReadErrorKind::OutOfRange {
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
        return Err(PackageReadError::new(
            PackageReadErrorKind::BadSize {
                size: h.inflated_size,
                available: h.entries_offset,
            },
            32,
            None,
        ));
    }
    Ok(&input[h.entries_offset as usize..h.size as usize])
}

/// Appends at most `limit` bytes inflated from `payload` to `out`: zstd when the payload
/// starts with zstd's magic, zlib otherwise, as LLVM decides.
#[cfg(feature = "compression")]
fn inflate(payload: &[u8], out: &mut Vec<u8>, limit: u64) -> std::io::Result<usize> {
    if kind::FileKind::sniff(payload) == kind::FileKind::ZstdFrame {
        zstd::stream::read::Decoder::new(payload).and_then(|d| d.take(limit).read_to_end(out))
    } else {
        flate2::read::ZlibDecoder::new(payload)
            .take(limit)
            .read_to_end(out)
    }
}

#[cfg(not(feature = "compression"))]
fn inflate(_: &[u8], _: &mut Vec<u8>, _: u64) -> std::io::Result<usize> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "compressed offload binaries are not supported by this build \
         (offload-formats without its `compression` feature)",
    ))
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
    /// [`PackageReadErrorKind::Compressed`]: pass them through [`decompress`] first.
    pub fn parse(input: &'data [u8]) -> Result<OffloadBinary<'data>, PackageReadError> {
        let h = Header::read(input)?;
        if h.is_compressed() {
            return Err(PackageReadError::new(
                PackageReadErrorKind::Compressed,
                32,
                None,
            ));
        }
        let data = &input[..h.size as usize];
        let size = h.size;
        if size % 8 != 0 {
            return Err(PackageReadError::new(
                PackageReadErrorKind::Misaligned {
                    field: "total size",
                    value: size,
                },
                8,
                None,
            ));
        }
        let entry_count = if h.version == 1 { 1 } else { h.word3 };
        if h.version == 1 && h.word3 > size - HEADER_SIZE {
            return Err(PackageReadError::new(
                PackageReadErrorKind::OutOfRange {
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
            return Err(PackageReadError::new(
                PackageReadErrorKind::Misaligned {
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

    fn check_entry(&self, index: u64) -> Result<(), PackageReadError> {
        let d = self.data;
        let size = d.len() as u64;
        let at = self.entries_offset + index * ENTRY_SIZE;
        let e = Some(index);
        let entry = entry_at(d, at);
        let string_offset = entry.string_offset.get(LE);
        let num_strings = entry.num_strings.get(LE);
        let image_offset = entry.image_offset.get(LE);
        let image_size = entry.image_size.get(LE);
        check_range("image", image_offset, Some(image_size), size, at + 24, e)?;
        if string_offset % 8 != 0 {
            return Err(PackageReadError::new(
                PackageReadErrorKind::Misaligned {
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
            let (key, value, value_size) = string_entry(d, se, self.version);
            c_string(d, key, "key").map_err(|k| PackageReadError::new(k, se, e))?;
            match value_size {
                None => {
                    c_string(d, value, "value").map_err(|k| PackageReadError::new(k, se + 8, e))?;
                }
                Some(value_size) => {
                    check_range("value", value, Some(value_size), size, se + 8, e)?;
                }
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
    pub fn entries(&self) -> impl ExactSizeIterator<Item = OffloadEntry<'data>> + '_ {
        (0..self.entry_count as usize).map(|i| self.entry_unchecked(i as u64))
    }

    /// The entry at `index`, if there is one.
    pub fn entry(&self, index: u64) -> Option<OffloadEntry<'data>> {
        (index < self.entry_count).then(|| self.entry_unchecked(index))
    }

    fn entry_unchecked(&self, index: u64) -> OffloadEntry<'data> {
        let d = self.data;
        let at = self.entries_offset + index * ENTRY_SIZE;
        let entry = entry_at(d, at);
        let image_offset = entry.image_offset.get(LE) as usize;
        let image_size = entry.image_size.get(LE) as usize;
        OffloadEntry {
            data: d,
            version: self.version,
            index,
            image_kind: ImageKindValue(entry.image_kind.get(LE)),
            offload_kind: OffloadKindValue(entry.offload_kind.get(LE)),
            flags: entry.flags.get(LE),
            string_offset: entry.string_offset.get(LE),
            num_strings: entry.num_strings.get(LE),
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
) -> Result<(), PackageReadError> {
    let fits = size
        .and_then(|s| offset.checked_add(s))
        .is_some_and(|end| end <= limit);
    if fits {
        return Ok(());
    }
    Err(PackageReadError::new(
        PackageReadErrorKind::OutOfRange {
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
fn c_string<'d>(
    d: &'d [u8],
    offset: u64,
    field: &'static str,
) -> Result<&'d [u8], PackageReadErrorKind> {
    if offset >= d.len() as u64 {
        return Err(PackageReadErrorKind::OutOfRange {
            field,
            offset,
            size: 1,
            limit: d.len() as u64,
        });
    }
    let rest = &d[offset as usize..];
    match rest.iter().position(|&b| b == 0) {
        Some(n) => Ok(&rest[..n]),
        None => Err(PackageReadErrorKind::UnterminatedString { field }),
    }
}

/// One image of an offload binary with its kinds and string map.
#[derive(Clone, Copy, Debug)]
pub struct OffloadEntry<'data> {
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

impl<'data> OffloadEntry<'data> {
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
            let (key, value, value_size) = string_entry(d, se, self.version);
            let key = c_string(d, key, "key").expect("checked by parse");
            let value = match value_size {
                None => c_string(d, value, "value").expect("checked by parse"),
                Some(size) => &d[value as usize..(value + size) as usize],
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

#[cfg(test)]
mod tests {
    use super::*;

    fn le(out: &mut Vec<u8>, v: u64) {
        out.extend_from_slice(&v.to_le_bytes());
    }

    /// A version-2 binary with two entries, built by hand from the layout in the
    /// module docs (not by this crate's writer).
    fn hand_v2(header: u64) -> Vec<u8> {
        let mut d = Vec::new();
        d.extend_from_slice(&crate::raw::OFFLOAD_MAGIC);
        d.extend_from_slice(&(if header == 40 { 3u32 } else { 2u32 }).to_le_bytes());
        le(&mut d, 0); // size, patched below
        le(&mut d, header);
        le(&mut d, 2);
        if header == 40 {
            le(&mut d, 0); // not compressed
        }
        let strings = header + 80;
        let strtab = strings + 3 * 24;
        // strtab: "\0arch\0gfx90a\0triple\0amdgcn-amd-amdhsa\0sm_70\0"
        let tab = b"\0arch\0gfx90a\0triple\0amdgcn-amd-amdhsa\0sm_70\0";
        let images = (strtab + tab.len() as u64).next_multiple_of(8);
        // OffloadEntry 0: bitcode, HIP (4), two strings, image "AAAA".
        d.extend_from_slice(&[2, 0, 4, 0, 0, 0, 0, 0]);
        le(&mut d, strings);
        le(&mut d, 2);
        le(&mut d, images);
        le(&mut d, 4);
        // OffloadEntry 1: cubin, CUDA, one string, image "BBBBBB" right after the first.
        d.extend_from_slice(&[3, 0, 2, 0, 0, 0, 0, 0]);
        le(&mut d, strings + 48);
        le(&mut d, 1);
        le(&mut d, images + 4);
        le(&mut d, 6);
        for (k, v, n) in [(1, 6, 6), (13, 20, 17), (1, 38, 5)] {
            le(&mut d, strtab + k);
            le(&mut d, strtab + v);
            le(&mut d, n);
        }
        d.extend_from_slice(tab);
        d.resize(images as usize, 0);
        d.extend_from_slice(b"AAAABBBBBB");
        d.resize(d.len().next_multiple_of(8), 0);
        let size = d.len() as u64;
        d[8..16].copy_from_slice(&size.to_le_bytes());
        d
    }

    fn check_two_entries(bin: &OffloadBinary<'_>) {
        assert_eq!(bin.entry_count(), 2);
        let e: Vec<_> = bin.entries().collect();
        assert_eq!(e[0].image(), b"AAAA");
        assert_eq!(e[0].arch(), b"gfx90a");
        assert_eq!(e[0].triple(), b"amdgcn-amd-amdhsa");
        assert_eq!(
            e[0].image_kind().kind(),
            Some(crate::package::ImageKind::Bitcode)
        );
        assert_eq!(
            e[0].offload_kind().from_llvm21(),
            Some(crate::package::OffloadKind::Hip)
        );
        assert_eq!(e[1].image(), b"BBBBBB");
        assert_eq!(e[1].arch(), b"sm_70");
        assert_eq!(e[1].triple(), b"");
        assert_eq!(e[1].strings().count(), 1);
    }

    #[test]
    fn hand_built_v2_and_uncompressed_v3() {
        let v2 = hand_v2(32);
        let bin = OffloadBinary::parse(&v2).unwrap();
        assert_eq!(bin.version(), 2);
        check_two_entries(&bin);
        let v3 = hand_v2(40);
        let bin = OffloadBinary::parse(&v3).unwrap();
        assert_eq!(bin.version(), 3);
        check_two_entries(&bin);
        assert!(!is_compressed(&v3));
    }

    /// A compressed v3 binary as spec B.3 describes LLVM's writer: the header with
    /// size = 40 + payload and the inflated size, the payload, zero padding to 8.
    #[cfg(feature = "compression")]
    fn compress(v3: &[u8], zstd: bool) -> Vec<u8> {
        use std::io::Write;
        let body = &v3[40..];
        let payload = if zstd {
            zstd::bulk::compress(body, 3).unwrap()
        } else {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
            e.write_all(body).unwrap();
            e.finish().unwrap()
        };
        let mut d = v3[..40].to_vec();
        d[8..16].copy_from_slice(&(40 + payload.len() as u64).to_le_bytes());
        d[32..40].copy_from_slice(&(v3.len() as u64).to_le_bytes());
        d.extend_from_slice(&payload);
        d.resize(d.len().next_multiple_of(8), 0);
        d
    }

    /// Resource budget: a configurable cap on the announced inflated size, checked before
    /// decompressing (a 40 KiB zstd payload of zeros inflates to 1 GiB).
    #[cfg(feature = "compression")]
    #[test]
    fn inflated_size_limit() {
        let v3 = hand_v2(40);
        let c = compress(&v3, true);
        assert_eq!(decompress_limited(&c, v3.len() as u64).unwrap(), v3);
        let e = decompress_limited(&c, v3.len() as u64 - 1).unwrap_err();
        assert_eq!(e.offset, 32);
        assert!(e.to_string().contains("above the limit"), "{e}");
    }

    #[cfg(feature = "compression")]
    #[test]
    fn compressed_v3_zstd_and_zlib() {
        let v3 = hand_v2(40);
        for zstd in [true, false] {
            let c = compress(&v3, zstd);
            assert!(is_compressed(&c));
            assert_eq!(
                OffloadBinary::parse(&c).unwrap_err().kind,
                PackageReadErrorKind::Compressed
            );
            let d = decompress(&c).unwrap();
            assert_eq!(d, v3, "zstd={zstd}");
            check_two_entries(&OffloadBinary::parse(&d).unwrap());
            // The scan inflates it and steps over its padding to a following binary.
            let mut two = c.clone();
            two.extend_from_slice(&hand_v2(32));
            let found = crate::package::scan(&two, "c.bin").unwrap();
            assert_eq!(found.len(), 2);
            assert_eq!(found[1].offset, c.len() as u64);
            check_two_entries(&found[0].binary());
            // Announcing a different inflated size is an error, not a short or long buffer.
            let mut wrong = c.clone();
            wrong[32..40].copy_from_slice(&(v3.len() as u64 + 1).to_le_bytes());
            assert!(matches!(
                decompress(&wrong).unwrap_err().kind,
                PackageReadErrorKind::InflatedSize { .. }
            ));
            wrong[32..40].copy_from_slice(&u64::MAX.to_le_bytes());
            assert!(decompress(&wrong).is_err());
            let mut garbage = c.clone();
            for b in &mut garbage[44..c.len() - 8] {
                *b ^= 0x5a;
            }
            assert!(decompress(&garbage).is_err());
        }
    }

    #[cfg(feature = "compression")]
    #[test]
    fn decompressor_errors_are_the_source() {
        use std::error::Error as _;
        for zstd in [true, false] {
            let mut garbage = compress(&hand_v2(40), zstd);
            let len = garbage.len();
            for b in &mut garbage[44..len - 8] {
                *b ^= 0x5a;
            }
            let e = decompress(&garbage).unwrap_err();
            let PackageReadErrorKind::Inflate(inner) = &e.kind else {
                panic!("zstd={zstd}: {e:?}");
            };
            assert!(
                e.to_string()
                    .ends_with(&format!("cannot decompress: {}", inner.0))
            );
            let io = e.source().and_then(|s| s.downcast_ref::<std::io::Error>());
            assert_eq!(io.map(|io| io.kind()), Some(inner.0.kind()));
        }
    }

    fn v1() -> Vec<u8> {
        use crate::package::{ImageKind, LlvmVersion, OffloadKind, write::Image, write_v1};
        let img = Image::new(
            ImageKind::Object,
            OffloadKind::Cuda,
            LlvmVersion::LLVM22,
            b"0123456789",
        )
        .unwrap()
        .string("triple", "nvptx64-nvidia-cuda")
        .string("arch", "sm_90");
        write_v1(&img).unwrap()
    }

    fn kind(d: &[u8]) -> PackageReadErrorKind {
        OffloadBinary::parse(d).unwrap_err().kind
    }

    #[test]
    fn malformed_headers_are_errors() {
        let good = v1();
        OffloadBinary::parse(&good).unwrap();
        // Every truncation.
        for n in 0..good.len() {
            assert!(OffloadBinary::parse(&good[..n]).is_err(), "prefix {n}");
        }
        let set = |at: usize, v: u64| with_u64(&good, at, v);
        for version in [0u32, 4, 99] {
            let mut d = good.clone();
            d[4..8].copy_from_slice(&version.to_le_bytes());
            assert_eq!(kind(&d), PackageReadErrorKind::UnsupportedVersion(version));
        }
        assert!(matches!(
            kind(&set(8, 1 << 40)),
            PackageReadErrorKind::BadSize { .. }
        ));
        assert!(matches!(
            kind(&set(8, 8)),
            PackageReadErrorKind::BadSize { .. }
        ));
        let mut longer = good.clone();
        longer.extend_from_slice(&[0; 4]);
        longer[8..16].copy_from_slice(&(good.len() as u64 + 4).to_le_bytes());
        assert!(matches!(
            kind(&longer),
            PackageReadErrorKind::Misaligned { .. }
        ));
        assert!(matches!(
            kind(&set(16, 33)),
            PackageReadErrorKind::Misaligned { .. }
        ));
        assert!(matches!(
            kind(&set(16, 1 << 20)),
            PackageReadErrorKind::OutOfRange { .. }
        ));
        assert!(matches!(
            kind(&set(24, u64::MAX)),
            PackageReadErrorKind::OutOfRange { .. }
        ));
        let mut magic = good.clone();
        magic[3] = 0;
        assert_eq!(kind(&magic), PackageReadErrorKind::BadMagic);
    }

    /// `good` with the u64 at `at` set to `v`.
    fn with_u64(good: &[u8], at: usize, v: u64) -> Vec<u8> {
        let mut d = good.to_vec();
        d[at..at + 8].copy_from_slice(&v.to_le_bytes());
        d
    }

    #[test]
    fn malformed_entries_are_errors() {
        let good = v1();
        let set = |at: usize, v: u64| with_u64(&good, at, v);
        // OffloadEntry fields: string offset 40, count 48, image offset 56, image size 64.
        assert!(matches!(
            kind(&set(40, 76)),
            PackageReadErrorKind::Misaligned { .. }
        ));
        assert!(matches!(
            kind(&set(40, u64::MAX - 7)),
            PackageReadErrorKind::OutOfRange { .. }
        ));
        assert!(matches!(
            kind(&set(48, u64::MAX / 2)),
            PackageReadErrorKind::OutOfRange { .. }
        ));
        assert!(matches!(
            kind(&set(56, u64::MAX)),
            PackageReadErrorKind::OutOfRange { .. }
        ));
        assert!(matches!(
            kind(&set(64, 1 << 33)),
            PackageReadErrorKind::OutOfRange { .. }
        ));
        // A key offset past the end, and one whose string has no NUL before the end.
        assert!(matches!(
            kind(&set(72, 1 << 30)),
            PackageReadErrorKind::OutOfRange { .. }
        ));
        let last = good.len() as u64 - 1;
        let mut d = set(72, last - 2);
        let n = d.len();
        d[n - 3..].copy_from_slice(b"xyz");
        assert_eq!(
            OffloadBinary::parse(&d).unwrap_err(),
            PackageReadError::new(
                PackageReadErrorKind::UnterminatedString { field: "key" },
                72,
                Some(0)
            )
        );
    }

    #[test]
    fn every_single_byte_corruption_is_handled() {
        for good in [v1(), hand_v2(32), hand_v2(40)] {
            for at in 0..good.len() {
                for x in [0x01u8, 0x80, 0xff] {
                    let mut d = good.clone();
                    d[at] ^= x;
                    if let Ok(bin) = OffloadBinary::parse(&d) {
                        for e in bin.entries() {
                            let _ = (e.strings().count(), e.image().len(), e.arch());
                        }
                    }
                    let _ = crate::package::scan(&d, "fuzz");
                }
            }
        }
    }
}
