//! One entry of a fat binary ([`Entry`]): its header parsed and checked against the bytes,
//! its identifier and ptxas options, and its payload as stored.

use crate::raw::{LE, NVFATBIN_ENTRY_FIELDS, NvFatbinEntry};

use super::error::{FatbinError, FatbinErrorKind, err, read_header, u32_at};
use super::layout::{Compression, ENTRY_HEADER_SIZE, EntryKind, Flags};

/// One entry of a fat binary, borrowing its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    offset: usize,
    kind: EntryKind,
    version: u16,
    header_size: u32,
    payload: &'a [u8],
    compressed_size: u32,
    minor: u16,
    major: u16,
    arch: u32,
    identifier: Option<&'a [u8]>,
    options: Option<&'a [u8]>,
    flags: Flags,
    uncompressed_size: u64,
}

impl<'a> Entry<'a> {
    /// The entry header's offset from the start of the fat binary.
    pub fn offset(&self) -> usize {
        self.offset
    }
    /// The payload's offset from the start of the fat binary.
    pub fn payload_offset(&self) -> usize {
        self.offset + self.header_size as usize
    }
    /// What the entry holds.
    pub fn kind(&self) -> EntryKind {
        self.kind
    }
    /// The entry version (`0x0101`).
    pub fn version(&self) -> u16 {
        self.version
    }
    /// The entry header's size.
    pub fn header_size(&self) -> u32 {
        self.header_size
    }
    /// The architecture number: `80` for `sm_80` / `compute_80`.
    pub fn arch(&self) -> u32 {
        self.arch
    }
    /// `sm_80` for a cubin, `compute_80` for PTX (as CUDA names them); `sm_90a` /
    /// `compute_90a` with [`Flags::ARCH_SPECIFIC`].
    pub fn arch_name(&self) -> String {
        let a = if self.flags.has(Flags::ARCH_SPECIFIC) {
            "a"
        } else {
            ""
        };
        match self.kind {
            EntryKind::Ptx => format!("compute_{}{a}", self.arch),
            _ => format!("sm_{}{a}", self.arch),
        }
    }
    /// The (major, minor) version field: the PTX ISA version for PTX, (1, ABI version) for a
    /// cubin.
    pub fn version_pair(&self) -> (u16, u16) {
        (self.major, self.minor)
    }
    /// The PTX ISA version of a PTX entry.
    pub fn ptx_version(&self) -> Option<(u16, u16)> {
        (self.kind == EntryKind::Ptx).then_some((self.major, self.minor))
    }
    /// The identifier (without its NUL), when the entry has one.
    pub fn identifier(&self) -> Option<&'a [u8]> {
        self.identifier
    }
    /// The ptxas options string of a PTX entry (without its NUL), when it has an options
    /// block.
    pub fn options(&self) -> Option<&'a [u8]> {
        self.options
    }
    /// The flags.
    pub fn flags(&self) -> Flags {
        self.flags
    }
    /// The compressed size field (0 when not compressed).
    pub fn compressed_size(&self) -> u32 {
        self.compressed_size
    }
    /// The uncompressed size field (0 when not compressed).
    pub fn uncompressed_size(&self) -> u64 {
        self.uncompressed_size
    }
    /// How the payload is compressed, if it is.
    pub fn compression(&self) -> Option<Compression> {
        if self.flags.has(Flags::COMPRESSED_ZSTD) {
            Some(Compression::Zstd)
        } else if self.flags.has(Flags::COMPRESSED_LZ4) {
            Some(Compression::Lz4)
        } else {
            None
        }
    }
    /// The whole payload as stored (padding included).
    pub fn payload(&self) -> &'a [u8] {
        self.payload
    }
    /// The stored bytes without the padding: the compressed bytes of a compressed entry, the
    /// image otherwise.
    pub fn stored(&self) -> &'a [u8] {
        match self.compression() {
            Some(_) => &self.payload[..self.compressed_size as usize],
            None => self.image().unwrap_or(self.payload),
        }
    }
    /// The image, as `cuobjdump -xelf` / `-xptx` extract it: the cubin, or the PTX text up
    /// to its NUL. `None` for a compressed entry.
    pub fn image(&self) -> Option<&'a [u8]> {
        if self.compression().is_some() {
            return None;
        }
        Some(match self.kind {
            EntryKind::Ptx => {
                let end = self
                    .payload
                    .iter()
                    .position(|&b| b == 0)
                    .unwrap_or(self.payload.len());
                &self.payload[..end]
            }
            _ => self.payload,
        })
    }
}

impl<'a> Entry<'a> {
    /// Parses entry `index`, whose header is at `at` in `data` (the fat binary, cut at its
    /// end): its header, payload, identifier and options block, each checked against `data`.
    pub(super) fn parse(data: &'a [u8], at: usize, index: usize) -> Result<Entry<'a>, FatbinError> {
        let e = Some(index);
        let h: &NvFatbinEntry = read_header(data, at, &NVFATBIN_ENTRY_FIELDS, e)?;
        let header_size = h.header_size.get(LE);
        let rest = &data[at..];
        if (header_size as usize) < ENTRY_HEADER_SIZE || header_size as usize > rest.len() {
            let kind = FatbinErrorKind::BadEntryHeaderSize(header_size);
            return Err(err(kind, at + 4, e));
        }
        let header = &rest[..header_size as usize];
        let payload_at = at + header_size as usize;
        let size = h.size.get(LE);
        if size > (data.len() - payload_at) as u64 {
            let kind = FatbinErrorKind::PastEnd {
                what: "payload",
                offset: payload_at as u64,
                size,
                len: data.len() as u64,
            };
            return Err(err(kind, at + 8, e));
        }
        let flags = Flags(h.flags.get(LE));
        let compressed_size = h.compressed_size.get(LE);
        if flags.0 & (Flags::COMPRESSED_LZ4 | Flags::COMPRESSED_ZSTD) != 0
            && compressed_size as u64 > size
        {
            let kind = FatbinErrorKind::CompressedSize {
                compressed: compressed_size,
                payload: size,
            };
            return Err(err(kind, at + 16, e));
        }
        Ok(Entry {
            offset: at,
            kind: EntryKind::from_raw(h.kind.get(LE)),
            version: h.version.get(LE),
            header_size,
            payload: &data[payload_at..payload_at + size as usize],
            compressed_size,
            minor: h.minor.get(LE),
            major: h.major.get(LE),
            arch: h.arch.get(LE),
            identifier: identifier(header, h, at, e)?,
            options: options(header, h.options_offset.get(LE), at, e)?,
            flags,
            uncompressed_size: h.uncompressed_size.get(LE),
        })
    }
}

/// The string of `len` bytes at `offset` in an entry's `header` (at `at`), up to a NUL
/// inside it, as C readers see it; `what` and `field_at` name it in the error.
fn header_string<'a>(
    header: &'a [u8],
    (offset, len): (usize, usize),
    what: &'static str,
    (at, field_at): (usize, usize),
    e: Option<usize>,
) -> Result<&'a [u8], FatbinError> {
    let s = header
        .get(offset..)
        .and_then(|s| s.get(..len))
        .ok_or_else(|| {
            let kind = FatbinErrorKind::PastEnd {
                what,
                offset: (at + offset) as u64,
                size: len as u64,
                len: (at + header.len()) as u64,
            };
            err(kind, field_at, e)
        })?;
    Ok(s.split(|&b| b == 0).next().unwrap_or(s))
}

/// The identifier of the entry at `at` (`None` at offset 0).
fn identifier<'a>(
    header: &'a [u8],
    h: &NvFatbinEntry,
    at: usize,
    e: Option<usize>,
) -> Result<Option<&'a [u8]>, FatbinError> {
    let (offset, len) = (h.name_offset.get(LE) as usize, h.name_len.get(LE) as usize);
    if offset == 0 {
        return Ok(None);
    }
    header_string(header, (offset, len), "identifier", (at, at + 32), e).map(Some)
}

/// The options string of the entry at `at`, through its options block at `block` (`None` at
/// offset 0).
fn options(
    header: &[u8],
    block: u32,
    at: usize,
    e: Option<usize>,
) -> Result<Option<&[u8]>, FatbinError> {
    if block == 0 {
        return Ok(None);
    }
    let o = block as usize;
    let offset = u32_at(header, o, "options string offset", e).map_err(|x| x.at(at))? as usize;
    let len = u32_at(header, o.saturating_add(4), "options string length", e)
        .map_err(|x| x.at(at))? as usize;
    header_string(header, (offset, len), "options string", (at, at + o), e).map(Some)
}
