//! The fixed numbers of NVIDIA's fat-binary layout (see the [module docs](super)): the
//! header sizes and versions, and the entry fields' vocabularies ([`EntryKind`], [`Flags`],
//! [`Compression`]) that the reader and the writer share.

use std::fmt;

/// The outer header's version.
pub const VERSION: u16 = 1;
/// The outer header's size.
pub const HEADER_SIZE: usize = 16;
/// The fixed part of an entry's header.
pub const ENTRY_HEADER_SIZE: usize = 64;
/// The entry version every NVIDIA writer stores.
pub const ENTRY_VERSION: u16 = 0x0101;
/// The uncompressed size [`Entry::decompress`](super::Entry::decompress) is given by the readers of this crate
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
