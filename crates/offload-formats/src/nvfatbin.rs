//! NVIDIA fat binaries: the container the CUDA driver loads (`cuModuleLoadData`,
//! `cuModuleLoadFatBinary`), which `nvcc`, `fatbinary` and nvFatbin write and `cuobjdump`
//! lists, and which a CUDA executable carries in its `.nv_fatbin` section.
//!
//! A fat binary holds cubins (ELF images for one `sm_XX`) and PTX (text for one
//! `compute_XX`, JIT-compiled by the driver for newer GPUs). [`Fatbin::parse`] reads one
//! over borrowed bytes, [`scan`] finds every fat binary in any file as `cuobjdump` does,
//! and [`FatbinWriter`] writes one from cubins and PTX, with no NVIDIA tool.
//!
//! # Layout
//!
//! All fields are little-endian. The facts come from the bytes that NVIDIA's own writers
//! produce (nvFatbin 12.9, `fatbinary` 13.5, `nvcc -fatbin` 13.5) and from what `cuobjdump`
//! accepts; the integration tests (`integration/nvfatbin.rs`) check them against those tools.
//!
//! The outer header, 16 bytes:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `0xBA55ED50` (bytes `50 ED 55 BA`) |
//! | 4 | 2 | version, 1 |
//! | 6 | 2 | header size, 16 |
//! | 8 | 8 | size of the entries that follow the header |
//!
//! Each entry: a header of at least 64 bytes, then its payload, the next entry right after:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 2 | kind: 1 PTX, 2 ELF (cubin) |
//! | 2 | 2 | entry version, `0x0101` |
//! | 4 | 4 | entry header size (the payload starts there) |
//! | 8 | 8 | payload size (padded to 8 bytes) |
//! | 16 | 4 | compressed size (0 when not compressed) |
//! | 20 | 4 | offset of the options block in the entry (0: none) |
//! | 24 | 2 | minor version (PTX: the ISA's `.version` minor; ELF: the cubin's ABI version) |
//! | 26 | 2 | major version (PTX: the ISA's major; ELF: 1) |
//! | 28 | 4 | architecture, `80` for `sm_80` |
//! | 32 | 4 | offset of the identifier in the entry (0: none) |
//! | 36 | 4 | length of the identifier, without its NUL |
//! | 40 | 8 | flags ([`Flags`]: 64-bit, debug, host OS, compression, `sm_90a`-style arch) |
//! | 48 | 8 | reserved, 0 |
//! | 56 | 8 | uncompressed size (0 when not compressed) |
//!
//! The identifier (NUL-terminated, padded with zeros to 8 bytes) follows the 64 bytes;
//! `cuobjdump` names extracted files `<identifier>.sm_XX.cubin` after it. A PTX entry
//! carries an options block after that: a 4-byte offset (in the entry) and a 4-byte length
//! of the ptxas options string, then the string, NUL-terminated and padded to 8 bytes
//! (nvFatbin and `fatbinary` write an empty string when there are none). A PTX payload is
//! the text with a NUL, padded with zeros to 8 bytes; `cuobjdump -xptx` extracts the text
//! up to the NUL. A cubin payload is the ELF file (ptxas writes cubins whose size is a
//! multiple of 8; this writer pads any other with zeros). An architecture-specific target
//! (`sm_90a`) is arch 90 with flag `0x100000`.
//!
//! # Compressed entries
//!
//! Flag `0x2000` marks an LZ4-compressed payload and `0x8000` a zstd-compressed one; the
//! compressed size and the uncompressed size are then set, and the payload's first
//! `compressed size` bytes are one LZ4 block (the block format of the LZ4 project's
//! `lz4_Block_format.md`, no frame) or one zstd frame (RFC 8878) that decompress to exactly
//! `uncompressed size` bytes: the cubin, or the PTX text with its NUL. NVIDIA documents
//! neither the flags nor the framing; these facts are read off nvFatbin's and `nvcc`'s output,
//! and [`Entry::decompress`] is checked against `cuobjdump -xelf`/`-xptx` of it
//! (`integration/nvfatbin.rs`). [`Entry::image`] is `None` for a compressed entry and
//! [`Entry::stored`] gives its compressed bytes; [`Entry::decompress`] decodes it within a size
//! limit (LZ4 with `lz4_flex`, zstd with the `compression` feature). The writer never compresses.
//!
//! # Differences from nvFatbin's bytes
//!
//! For the same cubins and PTX (nvFatbin with `-compress=false`), the writer's entry headers
//! are nvFatbin's byte for byte (kind, entry version, header size, compressed and
//! uncompressed sizes, versions, architecture, identifier, options block, flags) but for
//! the payload size of PTX entries, and the cubin payloads are the same bytes. The one
//! difference is the PTX payload: nvFatbin and `fatbinary` minify the text before storing it
//! (comment text removed, leaving `//`; indentation and runs of blanks removed), where this
//! writer stores the PTX exactly as given. It is harmless: the minified text and ours are the
//! same sequence of PTX tokens (the integration test compares them), which is all the
//! driver's PTX compiler reads; ours is larger (about 1.3 times for clang's PTX), and
//! `cuobjdump -xptx` gives back the input byte for byte.
//!
//! ```
//! use offload_formats::nvfatbin::{EntryKind, Fatbin, FatbinWriter};
//! let ptx = b".version 7.8\n.target sm_90\n.address_size 64\n";
//! let mut w = FatbinWriter::new();
//! w.add_ptx("sm_90", ptx, Some("saxpy"), None)?;
//! let bytes = w.to_bytes();
//! let fatbin = Fatbin::parse(&bytes)?;
//! let entry = &fatbin.entries()[0];
//! assert_eq!(entry.kind(), EntryKind::Ptx);
//! assert_eq!(entry.arch(), 90);
//! assert_eq!(entry.ptx_version(), Some((7, 8)));
//! assert_eq!(entry.image(), Some(&ptx[..]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use object::endian::{U16, U32, U64};
use object::pod::bytes_of;

use crate::kind;
use crate::raw::{
    self, LE, NVFATBIN_ENTRY_FIELDS, NVFATBIN_HEADER_FIELDS, NvFatbinEntry, NvFatbinHeader,
};

pub use crate::raw::{NVFATBIN_MAGIC as MAGIC, NVFATBIN_MAGIC_BYTES as MAGIC_BYTES};
/// The outer header's version.
pub const VERSION: u16 = 1;
/// The outer header's size.
pub const HEADER_SIZE: usize = 16;
/// The fixed part of an entry's header.
pub const ENTRY_HEADER_SIZE: usize = 64;
/// The entry version every NVIDIA writer stores.
pub const ENTRY_VERSION: u16 = 0x0101;
/// The uncompressed size [`Entry::decompress`] is given by the readers of this crate
/// (inspect's extraction): 16 GiB, the default of the compressed-bundle readers.
pub const DEFAULT_MAX_UNCOMPRESSED: u64 = 16 << 30;
/// The name of the ELF section that holds a host program's fat binaries.
pub const SECTION: &str = ".nv_fatbin";

/// What an entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// PTX text (kind 1).
    Ptx,
    /// A cubin, an ELF image for one `sm_XX` (kind 2).
    Elf,
    /// Any other kind number (NVIDIA's LTO-IR and index entries among them).
    Other(u16),
}

impl EntryKind {
    /// The kind as stored.
    pub fn raw(self) -> u16 {
        match self {
            EntryKind::Ptx => 1,
            EntryKind::Elf => 2,
            EntryKind::Other(k) => k,
        }
    }

    /// The kind for a stored number.
    pub fn from_raw(raw: u16) -> EntryKind {
        match raw {
            1 => EntryKind::Ptx,
            2 => EntryKind::Elf,
            k => EntryKind::Other(k),
        }
    }

    /// `"ptx"`, `"cubin"` or `"kind-N"`: the word the listings use.
    pub fn name(self) -> String {
        match self {
            EntryKind::Ptx => "ptx".to_string(),
            EntryKind::Elf => "cubin".to_string(),
            EntryKind::Other(k) => format!("kind-{k}"),
        }
    }
}

/// An entry's flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Flags(pub u64);

impl Flags {
    /// 64-bit device code (`-64`, the default).
    pub const ADDRESS_64: u64 = 0x1;
    /// Compiled with debug information (`-g`).
    pub const DEBUG: u64 = 0x2;
    /// Host: Linux (`-host=linux`, the default on Linux).
    pub const HOST_LINUX: u64 = 0x10;
    /// Host: macOS.
    pub const HOST_MAC: u64 = 0x20;
    /// Host: Windows (`-host=windows`).
    pub const HOST_WINDOWS: u64 = 0x40;
    /// The payload is LZ4-compressed.
    pub const COMPRESSED_LZ4: u64 = 0x2000;
    /// The payload is zstd-compressed.
    pub const COMPRESSED_ZSTD: u64 = 0x8000;
    /// Architecture-specific code: `sm_90a` is arch 90 with this flag (what nvFatbin
    /// writes for arch `90a`, and `cuobjdump` lists as `sm_90a`).
    pub const ARCH_SPECIFIC: u64 = 0x10_0000;

    /// What NVIDIA's tools write on 64-bit Linux: `0x11`.
    pub const LINUX_64: Flags = Flags(Self::ADDRESS_64 | Self::HOST_LINUX);

    /// Whether every bit of `bits` is set.
    pub fn has(self, bits: u64) -> bool {
        self.0 & bits == bits
    }
}

/// How an entry's payload is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compression {
    /// LZ4 (flag `0x2000`).
    Lz4,
    /// zstd (flag `0x8000`).
    Zstd,
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        })
    }
}

/// What is wrong with a malformed fat binary.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FatbinErrorKind {
    /// The input does not start with the magic number.
    BadMagic,
    /// A header ends before a field it must hold.
    Truncated {
        /// The field that is cut off.
        field: &'static str,
        /// Bytes the field needs.
        needed: u64,
        /// Bytes left in the input at that point.
        available: u64,
    },
    /// The outer header's size is smaller than 16.
    BadHeaderSize(u16),
    /// An entry header's size is smaller than 64 or past the fat binary's end.
    BadEntryHeaderSize(u32),
    /// An entry's payload extends past the fat binary's end.
    PastEnd {
        /// What extends past the end.
        what: &'static str,
        /// Its offset, from the fat binary's start.
        offset: u64,
        /// Its size.
        size: u64,
        /// The fat binary's size.
        len: u64,
    },
    /// A string (identifier, options) has no NUL within the entry header.
    Unterminated(&'static str),
    /// A compressed payload that does not decompress to its uncompressed size.
    Decompression {
        /// The compression.
        method: Compression,
        /// What went wrong.
        message: String,
    },
    /// The uncompressed size is above the caller's limit.
    TooLarge {
        /// The uncompressed size the entry claims.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// The compressed size is larger than the payload.
    CompressedSize {
        /// The compressed size.
        compressed: u32,
        /// The payload size.
        payload: u64,
    },
}

/// A malformed fat binary: what is wrong, where, and in which entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FatbinError {
    /// What is wrong.
    pub kind: FatbinErrorKind,
    /// Byte offset, from the start of the fat binary, where the problem was found.
    pub offset: u64,
    /// Zero-based index of the entry, when the problem belongs to one.
    pub entry: Option<usize>,
}

impl fmt::Display for FatbinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("malformed NVIDIA fat binary")?;
        if let Some(e) = self.entry {
            write!(f, ", entry {e}")?;
        }
        write!(f, " at offset {}: ", self.offset)?;
        match &self.kind {
            FatbinErrorKind::BadMagic => write!(f, "no magic 0x{MAGIC:08X}"),
            FatbinErrorKind::Truncated {
                field,
                needed,
                available,
            } => write!(
                f,
                "{field} truncated: needs {needed} bytes, {available} available"
            ),
            FatbinErrorKind::BadHeaderSize(s) => write!(f, "header size {s} is less than 16"),
            FatbinErrorKind::BadEntryHeaderSize(s) => write!(
                f,
                "entry header size {s} is less than 64 or past the end of the fat binary"
            ),
            FatbinErrorKind::PastEnd {
                what,
                offset,
                size,
                len,
            } => write!(
                f,
                "{what} at offset {offset} with size {size} extends past the end ({len} bytes)"
            ),
            FatbinErrorKind::Unterminated(what) => {
                write!(f, "{what} has no NUL within the entry header")
            }
            FatbinErrorKind::Decompression { method, message } => {
                write!(f, "{method}-compressed payload: {message}")
            }
            FatbinErrorKind::TooLarge { size, max } => write!(
                f,
                "uncompressed size {size} is above the limit of {max} bytes"
            ),
            FatbinErrorKind::CompressedSize {
                compressed,
                payload,
            } => write!(
                f,
                "compressed size {compressed} is larger than the payload ({payload} bytes)"
            ),
        }
    }
}

impl std::error::Error for FatbinError {}

fn err(kind: FatbinErrorKind, offset: usize, entry: Option<usize>) -> FatbinError {
    FatbinError {
        kind,
        offset: offset as u64,
        entry,
    }
}

/// The error for a field of `size` bytes at `at` that `data` does not hold.
fn truncated(
    data: &[u8],
    at: usize,
    field: &'static str,
    size: usize,
    entry: Option<usize>,
) -> FatbinError {
    let available = data.len().saturating_sub(at) as u64;
    let kind = FatbinErrorKind::Truncated {
        field,
        needed: size as u64,
        available,
    };
    err(kind, at, entry)
}

/// The `T` at `at`, or the error naming the first of its `fields` that `data` cuts.
fn read_header<'d, T: object::pod::Pod>(
    data: &'d [u8],
    at: usize,
    fields: &[raw::Field],
    entry: Option<usize>,
) -> Result<&'d T, FatbinError> {
    raw::read_at::<T>(data, at).ok_or_else(|| {
        let (f, _) = raw::first_cut(fields, data.len().saturating_sub(at))
            .expect("a header that does not fit cuts a field");
        truncated(data, at + f.offset, f.name, f.size, entry)
    })
}

fn u32_at(d: &[u8], at: usize, name: &'static str, e: Option<usize>) -> Result<u32, FatbinError> {
    raw::u32_at(d, at).ok_or_else(|| truncated(d, at, name, 4, e))
}

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
    fn parse(data: &'a [u8], at: usize, index: usize) -> Result<Entry<'a>, FatbinError> {
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
        let size = self.uncompressed_size;
        if size > max {
            return Err(err(
                FatbinErrorKind::TooLarge { size, max },
                self.offset + 56,
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
        if self.kind == EntryKind::Ptx {
            let end = out.iter().position(|&b| b == 0).unwrap_or(out.len());
            out.truncate(end);
        }
        Ok(Some(out))
    }
}

/// Decodes one LZ4 block (no frame) into `size` bytes at most, with `lz4_flex`'s checked
/// decoder: crafted input ends in an error, never a panic or an overrun.
fn lz4_block(input: &[u8], size: usize) -> Result<Vec<u8>, String> {
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

/// A parsed fat binary, borrowing its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fatbin<'a> {
    data: &'a [u8],
    version: u16,
    header_size: u16,
    entries: Vec<Entry<'a>>,
}

impl<'a> Fatbin<'a> {
    /// Whether `data` starts with the magic number.
    pub fn is_fatbin(data: &[u8]) -> bool {
        kind::FileKind::sniff(data) == kind::FileKind::NvFatbin
    }

    /// Parses the fat binary at the start of `data`; bytes after its end (other fat
    /// binaries, padding) are ignored ([`Fatbin::size`] tells where it ends). Every size and
    /// offset is checked against the input.
    pub fn parse(data: &'a [u8]) -> Result<Fatbin<'a>, FatbinError> {
        if data.len() >= 4 && !Fatbin::is_fatbin(data) {
            return Err(err(FatbinErrorKind::BadMagic, 0, None));
        }
        let h: &NvFatbinHeader = read_header(data, 0, &NVFATBIN_HEADER_FIELDS, None)?;
        let (version, header_size) = (h.version.get(LE), h.header_size.get(LE));
        let fat_size = h.fat_size.get(LE);
        if (header_size as usize) < HEADER_SIZE {
            return Err(err(FatbinErrorKind::BadHeaderSize(header_size), 6, None));
        }
        let total = (header_size as u64)
            .checked_add(fat_size)
            .filter(|&t| t <= data.len() as u64)
            .ok_or_else(|| {
                let kind = FatbinErrorKind::PastEnd {
                    what: "entries",
                    offset: header_size as u64,
                    size: fat_size,
                    len: data.len() as u64,
                };
                err(kind, 8, None)
            })? as usize;
        let data = &data[..total];
        let mut entries = Vec::new();
        let mut at = header_size as usize;
        // Each entry takes at least 64 bytes, so the loop is bounded by the input.
        while at < total {
            let entry = Entry::parse(data, at, entries.len())?;
            at = entry.payload_offset() + entry.payload.len();
            entries.push(entry);
        }
        Ok(Fatbin {
            data,
            version,
            header_size,
            entries,
        })
    }

    /// The fat binary's bytes (header and entries; nothing after its end).
    pub fn data(&self) -> &'a [u8] {
        self.data
    }
    /// Its size: header size plus the size of its entries.
    pub fn size(&self) -> usize {
        self.data.len()
    }
    /// The outer header's version (1).
    pub fn version(&self) -> u16 {
        self.version
    }
    /// The outer header's size (16).
    pub fn header_size(&self) -> u16 {
        self.header_size
    }
    /// The entries, in stored order.
    pub fn entries(&self) -> &[Entry<'a>] {
        &self.entries
    }
}

impl FatbinError {
    /// Makes an offset relative to an entry relative to the fat binary.
    fn at(mut self, base: usize) -> FatbinError {
        self.offset += base as u64;
        self
    }
}

/// A fat binary found by [`scan`]: where it starts in the scanned bytes, and what it holds.
#[derive(Clone, Debug)]
pub struct Found<'a> {
    /// Offset of its header in the scanned bytes.
    pub offset: usize,
    /// The parsed fat binary.
    pub fatbin: Fatbin<'a>,
}

/// Finds the fat binaries in `data` as `cuobjdump` does in a file it does not otherwise
/// understand: at every 8-byte aligned offset (the alignment of `.nv_fatbin` and of the
/// fat binaries in it) where the magic number starts a well-formed fat binary; the search
/// goes on after its end. Candidates that do not parse are skipped and returned as errors
/// with their offset, so a caller can report them.
pub fn scan(data: &[u8]) -> (Vec<Found<'_>>, Vec<(usize, FatbinError)>) {
    let mut found = Vec::new();
    let mut errors = Vec::new();
    let mut at = 0;
    while at + HEADER_SIZE <= data.len() {
        // The next aligned magic: one comparison per 8 bytes, over whole chunks.
        match kind::next_aligned_nvfatbin(&data[at..]) {
            Some(skip) => at += skip,
            None => break,
        }
        if at + HEADER_SIZE > data.len() {
            break;
        }
        match Fatbin::parse(&data[at..]) {
            Ok(f) => {
                let size = f.size().max(HEADER_SIZE);
                found.push(Found {
                    offset: at,
                    fatbin: f,
                });
                at += size.next_multiple_of(8);
                continue;
            }
            Err(e) => errors.push((at, e)),
        }
        at += 8;
    }
    (found, errors)
}

/// What the writer could not take.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FatbinWriteError {
    /// A PTX input has no `.version X.Y` directive (nvFatbin refuses it too).
    MissingPtxVersion,
    /// A PTX input has a NUL byte before its end.
    NulInPtx {
        /// Offset of the NUL.
        offset: usize,
    },
    /// An identifier or options string holds a NUL byte.
    NulInString(&'static str),
    /// A cubin input is not a 64-bit ELF file.
    NotElf64,
    /// A size does not fit the format's fields.
    TooLarge(&'static str),
    /// An architecture that is not `NN`, `NNa`, `sm_NN[a]` or `compute_NN[a]`.
    BadArch(String),
}

impl fmt::Display for FatbinWriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FatbinWriteError::MissingPtxVersion => {
                f.write_str("PTX input has no '.version X.Y' directive")
            }
            FatbinWriteError::NulInPtx { offset } => {
                write!(
                    f,
                    "PTX input has a NUL byte at offset {offset} before its end"
                )
            }
            FatbinWriteError::NulInString(what) => write!(f, "the {what} holds a NUL byte"),
            FatbinWriteError::NotElf64 => {
                f.write_str("cubin input is not a 64-bit little-endian ELF file")
            }
            FatbinWriteError::TooLarge(what) => {
                write!(f, "the {what} is too large for a fat binary")
            }
            FatbinWriteError::BadArch(a) => write!(
                f,
                "architecture '{a}' is not NN, NNa, sm_NN[a] or compute_NN[a]"
            ),
        }
    }
}

impl std::error::Error for FatbinWriteError {}

#[derive(Clone, Debug)]
struct Pending {
    kind: EntryKind,
    arch: u32,
    arch_specific: bool,
    major: u16,
    minor: u16,
    identifier: Option<String>,
    options: Option<String>,
    payload: Vec<u8>,
}

/// Writes a fat binary from cubins and PTX, entries in the order they are added, laid out
/// as nvFatbin lays them out (see the [module docs](self)); never compressed.
#[derive(Clone, Debug)]
pub struct FatbinWriter {
    flags: Flags,
    entries: Vec<Pending>,
}

impl Default for FatbinWriter {
    fn default() -> Self {
        Self::new()
    }
}

/// The (major, minor) of the first `.version X.Y` directive in PTX text.
pub fn ptx_isa_version(ptx: &[u8]) -> Option<(u16, u16)> {
    let text = std::str::from_utf8(ptx).ok()?;
    for line in text.lines() {
        let line = line.trim_start();
        if let Some(rest) = line.strip_prefix(".version") {
            let v = rest.split_whitespace().next()?;
            let (major, minor) = v.split_once('.')?;
            return Some((major.parse().ok()?, minor.parse().ok()?));
        }
    }
    None
}

/// The arch field and the [`Flags::ARCH_SPECIFIC`] bit of `90`, `90a`, `sm_90a`,
/// `compute_90` (nvFatbin takes the first two spellings).
pub fn parse_arch(arch: &str) -> Result<(u32, bool), FatbinWriteError> {
    let bad = || FatbinWriteError::BadArch(arch.to_string());
    let digits = arch
        .strip_prefix("sm_")
        .or_else(|| arch.strip_prefix("compute_"))
        .unwrap_or(arch);
    let (digits, specific) = match digits.strip_suffix('a') {
        Some(d) => (d, true),
        None => (digits, false),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    Ok((digits.parse().map_err(|_| bad())?, specific))
}

fn padded_string(s: &str) -> Vec<u8> {
    let mut v = s.as_bytes().to_vec();
    v.push(0);
    v.resize(v.len().next_multiple_of(8), 0);
    v
}

impl FatbinWriter {
    /// An empty writer for 64-bit device code on a Linux host (flags `0x11`, what NVIDIA's
    /// tools write there).
    pub fn new() -> FatbinWriter {
        FatbinWriter {
            flags: Flags::LINUX_64,
            entries: Vec::new(),
        }
    }

    /// Sets the flags of the entries (default [`Flags::LINUX_64`]); compression bits are
    /// cleared, as the writer does not compress.
    pub fn flags(&mut self, flags: Flags) -> &mut Self {
        self.flags = Flags(flags.0 & !(Flags::COMPRESSED_LZ4 | Flags::COMPRESSED_ZSTD));
        self
    }

    /// Whether no entry was added.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn check_string(s: Option<&str>, what: &'static str) -> Result<(), FatbinWriteError> {
        match s {
            Some(s) if s.contains('\0') => Err(FatbinWriteError::NulInString(what)),
            Some(s) if s.len() > u32::MAX as usize / 2 => Err(FatbinWriteError::TooLarge(what)),
            _ => Ok(()),
        }
    }

    /// Adds a cubin for `arch` (`sm_80`, `80`, `sm_90a`), with an identifier (the name
    /// `cuobjdump` gives it).
    pub fn add_cubin(
        &mut self,
        arch: &str,
        cubin: &[u8],
        identifier: Option<&str>,
    ) -> Result<&mut Self, FatbinWriteError> {
        Self::check_string(identifier, "identifier")?;
        let (arch, arch_specific) = parse_arch(arch)?;
        // ELFCLASS64, little-endian: the only cubins the 64-bit flag describes.
        if cubin.len() < 64 || !kind::is_elf64_le(cubin) {
            return Err(FatbinWriteError::NotElf64);
        }
        let mut payload = cubin.to_vec();
        payload.resize(payload.len().next_multiple_of(8), 0);
        self.entries.push(Pending {
            kind: EntryKind::Elf,
            arch,
            arch_specific,
            major: 1,
            // EI_ABIVERSION.
            minor: kind::elf_ident(cubin).map_or(0, |id| u16::from(id.abi_version)),
            identifier: identifier.map(str::to_string),
            options: None,
            payload,
        });
        Ok(self)
    }

    /// Adds PTX text for `arch` (`compute_80`, `sm_80`, `80`, `90a`), with an identifier and
    /// the ptxas options the driver's JIT should use. The text may end with NUL bytes; its
    /// `.version` directive gives the entry's version.
    pub fn add_ptx(
        &mut self,
        arch: &str,
        ptx: &[u8],
        identifier: Option<&str>,
        options: Option<&str>,
    ) -> Result<&mut Self, FatbinWriteError> {
        Self::check_string(identifier, "identifier")?;
        Self::check_string(options, "options string")?;
        let (arch, arch_specific) = parse_arch(arch)?;
        let end = ptx.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
        let text = &ptx[..end];
        if let Some(offset) = text.iter().position(|&b| b == 0) {
            return Err(FatbinWriteError::NulInPtx { offset });
        }
        let (major, minor) = ptx_isa_version(text).ok_or(FatbinWriteError::MissingPtxVersion)?;
        let mut payload = text.to_vec();
        payload.push(0);
        payload.resize(payload.len().next_multiple_of(8), 0);
        self.entries.push(Pending {
            kind: EntryKind::Ptx,
            arch,
            arch_specific,
            major,
            minor,
            identifier: identifier.map(str::to_string),
            options: Some(options.unwrap_or("").to_string()),
            payload,
        });
        Ok(self)
    }

    /// The fat binary's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut body = Vec::new();
        for p in &self.entries {
            let mut extra = Vec::new();
            let (mut name_offset, mut name_len) = (0u32, 0u32);
            if let Some(id) = &p.identifier {
                name_offset = ENTRY_HEADER_SIZE as u32;
                name_len = id.len() as u32;
                extra.extend(padded_string(id));
            }
            let mut options_offset = 0u32;
            if let Some(o) = &p.options {
                options_offset = (ENTRY_HEADER_SIZE + extra.len()) as u32;
                let str_offset = options_offset + 8;
                extra.extend(bytes_of(&U32::new(LE, str_offset)));
                extra.extend(bytes_of(&U32::new(LE, o.len() as u32)));
                extra.extend(padded_string(o));
            }
            let flags = self.flags.0
                | if p.arch_specific {
                    Flags::ARCH_SPECIFIC
                } else {
                    0
                };
            let header = NvFatbinEntry {
                kind: U16::new(LE, p.kind.raw()),
                version: U16::new(LE, ENTRY_VERSION),
                header_size: U32::new(LE, (ENTRY_HEADER_SIZE + extra.len()) as u32),
                size: U64::new(LE, p.payload.len() as u64),
                compressed_size: U32::new(LE, 0),
                options_offset: U32::new(LE, options_offset),
                minor: U16::new(LE, p.minor),
                major: U16::new(LE, p.major),
                arch: U32::new(LE, p.arch),
                name_offset: U32::new(LE, name_offset),
                name_len: U32::new(LE, name_len),
                flags: U64::new(LE, flags),
                reserved: U64::new(LE, 0),
                uncompressed_size: U64::new(LE, 0),
            };
            body.extend(bytes_of(&header));
            body.extend(extra);
            body.extend(&p.payload);
        }
        let header = NvFatbinHeader {
            magic: U32::new(LE, MAGIC),
            version: U16::new(LE, VERSION),
            header_size: U16::new(LE, HEADER_SIZE as u16),
            fat_size: U64::new(LE, body.len() as u64),
        };
        let mut out = Vec::with_capacity(HEADER_SIZE + body.len());
        out.extend(bytes_of(&header));
        out.extend(body);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header of the entry at `at`, to edit.
    fn entry_header(b: &mut [u8], at: usize) -> &mut NvFatbinEntry {
        object::pod::from_bytes_mut(&mut b[at..]).unwrap().0
    }

    fn cubin(arch: u8) -> Vec<u8> {
        let mut c = b"\x7fELF\x02\x01\x013\x07".to_vec();
        c.resize(64, 0);
        c[48] = arch;
        c.extend(b"body");
        c
    }

    const PTX: &[u8] = b"//\n.version 7.8\n.target sm_90\n.address_size 64\n";

    fn sample() -> Vec<u8> {
        let mut w = FatbinWriter::new();
        w.add_cubin("sm_80", &cubin(80), Some("k")).unwrap();
        w.add_ptx("80", PTX, Some("k"), None).unwrap();
        w.add_cubin("sm_90", &cubin(90), None).unwrap();
        w.add_ptx("compute_90", PTX, None, Some("-O3")).unwrap();
        w.to_bytes()
    }

    #[test]
    fn round_trip() {
        let bytes = sample();
        assert_eq!(bytes.len() % 8, 0);
        let f = Fatbin::parse(&bytes).unwrap();
        assert_eq!(f.size(), bytes.len());
        let e = f.entries();
        assert_eq!(e.len(), 4);
        assert_eq!(e[0].kind(), EntryKind::Elf);
        assert_eq!(e[0].arch_name(), "sm_80");
        assert_eq!(e[0].version_pair(), (1, 7));
        assert_eq!(e[0].identifier(), Some(&b"k"[..]));
        assert_eq!(e[0].header_size(), 72);
        assert_eq!(e[0].image().unwrap().len(), 72, "cubin padded to 8");
        assert_eq!(e[1].ptx_version(), Some((7, 8)));
        assert_eq!(e[1].arch_name(), "compute_80");
        assert_eq!(e[1].options(), Some(&b""[..]));
        assert_eq!(e[1].image(), Some(PTX));
        assert_eq!(e[1].header_size(), 88);
        assert_eq!(e[2].identifier(), None);
        assert_eq!(e[2].header_size(), 64);
        assert_eq!(e[3].options(), Some(&b"-O3"[..]));
        assert_eq!(e[3].flags(), Flags::LINUX_64);
        assert!(e.iter().all(|e| e.compression().is_none()));
    }

    #[test]
    fn writer_refuses_bad_inputs() {
        let mut w = FatbinWriter::new();
        assert_eq!(
            w.add_ptx("80", b".target sm_80\n", None, None).unwrap_err(),
            FatbinWriteError::MissingPtxVersion
        );
        assert_eq!(
            w.add_ptx("80", b".version 7.0\n\0x", None, None)
                .unwrap_err(),
            FatbinWriteError::NulInPtx { offset: 13 }
        );
        assert_eq!(
            w.add_cubin("sm_80", b"not elf", None).unwrap_err(),
            FatbinWriteError::NotElf64
        );
        assert_eq!(
            w.add_cubin("sm_80", &cubin(80), Some("a\0b")).unwrap_err(),
            FatbinWriteError::NulInString("identifier")
        );
        assert!(w.add_ptx("80", b".version 7.0\n\0\0", None, None).is_ok());
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let bytes = sample();
        for n in 0..bytes.len() {
            assert!(Fatbin::parse(&bytes[..n]).is_err(), "{n}");
        }
    }

    #[test]
    fn lying_sizes_are_errors() {
        let bytes = sample();
        let set = |at: usize, v: &[u8]| {
            let mut b = bytes.clone();
            b[at..at + v.len()].copy_from_slice(v);
            Fatbin::parse(&b).unwrap_err()
        };
        let e = set(8, &u64::MAX.to_le_bytes());
        assert!(
            matches!(
                e.kind,
                FatbinErrorKind::PastEnd {
                    what: "entries",
                    ..
                }
            ),
            "{e}"
        );
        let e = set(16 + 8, &u64::MAX.to_le_bytes());
        assert!(matches!(
            e.kind,
            FatbinErrorKind::PastEnd {
                what: "payload",
                ..
            }
        ));
        assert_eq!((e.entry, e.offset), (Some(0), 24));
        let e = set(16 + 4, &8u32.to_le_bytes());
        assert!(matches!(e.kind, FatbinErrorKind::BadEntryHeaderSize(8)));
        let e = set(16 + 4, &u32::MAX.to_le_bytes());
        assert!(matches!(e.kind, FatbinErrorKind::BadEntryHeaderSize(_)));
        let e = set(16 + 36, &1000u32.to_le_bytes());
        assert!(matches!(
            e.kind,
            FatbinErrorKind::PastEnd {
                what: "identifier",
                ..
            }
        ));
        let e = set(6, &4u16.to_le_bytes());
        assert_eq!(e.kind, FatbinErrorKind::BadHeaderSize(4));
        let e = set(0, b"\0\0\0\0");
        assert_eq!(e.kind, FatbinErrorKind::BadMagic);
        // Options offset pointing past the header.
        let second = Fatbin::parse(&bytes).unwrap().entries()[1].offset();
        let e = set(second + 20, &4000u32.to_le_bytes());
        assert!(e.to_string().contains("entry 1"), "{e}");
        // A compressed size larger than the payload.
        let mut b = bytes.clone();
        let h = entry_header(&mut b, 16);
        h.flags.set(LE, 0x8011);
        h.compressed_size.set(LE, 1000);
        assert!(matches!(
            Fatbin::parse(&b).unwrap_err().kind,
            FatbinErrorKind::CompressedSize { .. }
        ));
    }

    #[test]
    fn compressed_entries_are_listed_not_decompressed() {
        let mut b = sample();
        let h = entry_header(&mut b, 16);
        h.flags.set(LE, 0x2011);
        h.compressed_size.set(LE, 10);
        let f = Fatbin::parse(&b).unwrap();
        let e = &f.entries()[0];
        assert_eq!(e.compression(), Some(Compression::Lz4));
        assert_eq!(e.image(), None);
        assert_eq!(e.stored().len(), 10);
    }

    #[test]
    fn scan_finds_aligned_fatbins_and_reports_bad_ones() {
        let one = sample();
        let mut data = vec![0u8; 24];
        data.extend(&one);
        data.extend(&one);
        data.extend(MAGIC_BYTES);
        data.extend([0; 20]);
        let (found, errors) = scan(&data);
        assert_eq!(
            found.iter().map(|f| f.offset).collect::<Vec<_>>(),
            [24, 24 + one.len()]
        );
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].0, 24 + 2 * one.len());
    }

    #[test]
    fn arch_specific_entries() {
        let mut w = FatbinWriter::new();
        w.add_cubin("sm_90a", &cubin(90), None).unwrap();
        w.add_ptx("90a", PTX, None, None).unwrap();
        assert_eq!(
            w.add_ptx("sm_9x", PTX, None, None).unwrap_err(),
            FatbinWriteError::BadArch("sm_9x".into())
        );
        let bytes = w.to_bytes();
        let f = Fatbin::parse(&bytes).unwrap();
        let names: Vec<_> = f.entries().iter().map(Entry::arch_name).collect();
        assert_eq!(names, ["sm_90a", "compute_90a"]);
        assert_eq!(f.entries()[0].arch(), 90);
        assert_eq!(f.entries()[0].flags(), Flags(0x10_0011));
    }

    #[test]
    fn lz4_blocks() {
        // "abcabcabcabcX": 3 literals, a match of 9 at offset 3, then a last literal.
        let block = [0x35, b'a', b'b', b'c', 3, 0, 0x10, b'X'];
        assert_eq!(lz4_block(&block, 13).unwrap(), b"abcabcabcabcX");
        assert!(lz4_block(&block, 12).is_err(), "longer than announced");
        assert!(lz4_block(&[0x35, b'a', b'b', b'c', 9, 0, 0x10, b'X'], 13).is_err());
        assert!(lz4_block(&[0x35, b'a', b'b', b'c', 0, 0], 13).is_err());
        assert!(lz4_block(&[0xf0], 13).is_err());
        assert!(
            lz4_block(&[0x10], 1 << 30).is_err(),
            "a lying size is not allocated"
        );
        // A truncated block is an error or a shorter output (which `decompress` refuses).
        for n in 0..block.len() {
            assert!(
                lz4_block(&block[..n], 13).map_or(true, |o| o.len() < 13),
                "{n}"
            );
        }
    }

    #[test]
    fn compressed_entries_decompress_within_limits() {
        // An entry whose payload is the LZ4 block of "abcabcabcabcX" plus its NUL.
        let mut b = sample();
        let block = [0x35, b'a', b'b', b'c', 3, 0, 0x20, b'X', 0];
        let second = Fatbin::parse(&b).unwrap().entries()[1].clone();
        let at = second.offset();
        let p = second.payload_offset();
        b[p..p + block.len()].copy_from_slice(&block);
        let h = entry_header(&mut b, at);
        h.compressed_size.set(LE, block.len() as u32);
        h.flags.set(LE, 0x2011);
        h.uncompressed_size.set(LE, 14);
        let f = Fatbin::parse(&b).unwrap();
        let e = &f.entries()[1];
        assert_eq!(e.decompress(1 << 20).unwrap().unwrap(), b"abcabcabcabcX");
        let too = e.decompress(10).unwrap_err();
        assert!(matches!(
            too.kind,
            FatbinErrorKind::TooLarge { size: 14, max: 10 }
        ));
        assert_eq!(f.entries()[0].decompress(1 << 20).unwrap(), None);
        entry_header(&mut b, at).uncompressed_size.set(LE, 20);
        let e = Fatbin::parse(&b).unwrap().entries()[1]
            .decompress(1 << 20)
            .unwrap_err();
        assert!(e.to_string().contains("lz4-compressed payload"), "{e}");
    }

    #[test]
    fn ptx_versions() {
        assert_eq!(ptx_isa_version(b"//\n  .version 8.5 // x\n"), Some((8, 5)));
        assert_eq!(ptx_isa_version(b".target sm_80"), None);
    }
}
