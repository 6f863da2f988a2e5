//! [`FatbinWriter`]: a fat binary written from cubins and PTX as nvFatbin lays it out, with
//! the parsing of architecture names and PTX ISA versions it needs.

use std::fmt;

use object::endian::{U16, U32, U64};
use object::pod::bytes_of;

use crate::kind;
use crate::raw::{LE, NVFATBIN_MAGIC as MAGIC, NvFatbinEntry, NvFatbinHeader};

use super::layout::{ENTRY_HEADER_SIZE, ENTRY_VERSION, EntryKind, Flags, HEADER_SIZE, VERSION};

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
/// as nvFatbin lays them out (see the [module docs](super)); never compressed.
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
