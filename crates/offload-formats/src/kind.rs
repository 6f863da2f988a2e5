//! What a file is, by its first bytes: the one sniffer every reader and tool asks, and the
//! one place magic numbers are compared.
//!
//! [`FileKind::sniff`] follows LLVM's `identify_magic` (`llvm/lib/BinaryFormat/Magic.cpp`)
//! for the kinds LLVM knows, and adds the offload containers (bundles, compressed bundles,
//! offload binaries) that LLVM recognises in its tools instead, and NVIDIA fat binaries. The
//! magic numbers themselves are defined with the on-disk headers in the crate's raw
//! definitions.

use crate::raw::{
    AR_MAGIC, BIG_ARCHIVE_MAGIC, BIG_OBJ_CLASS_ID, BITCODE_MAGIC, BITCODE_WRAPPER_MAGIC,
    BUNDLE_MAGIC, CCOB_MAGIC, DOS_MAGIC, ELF_MAGIC, MACHO_MAGICS, NVFATBIN_MAGIC_BYTES,
    OFFLOAD_MAGIC, PE_SIGNATURE, THIN_MAGIC, WASM_MAGIC, ZIP_MAGICS, ZSTD_MAGIC, u16_at, u32_at,
};
use object::{Endianness, elf};

/// The kinds of file the offload tools tell apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FileKind {
    /// A binary bundle (`__CLANG_OFFLOAD_BUNDLE__`).
    Bundle,
    /// A compressed bundle (`CCOB`).
    CompressedBundle,
    /// An offload binary (`10 FF 10 AD`).
    OffloadBinary,
    /// A static archive (`!<arch>\n`).
    Archive,
    /// A thin archive (`!<thin>\n`).
    ThinArchive,
    /// Raw LLVM bitcode (`BC C0 DE`).
    Bitcode,
    /// LLVM bitcode in its wrapper header (`DE C0 17 0B`).
    BitcodeWrapper,
    /// An ELF relocatable object, executable or shared object (`identify_magic`'s
    /// `elf_relocatable`, `elf_executable`, `elf_shared_object`).
    Elf,
    /// ELF magic, but too short for a header or of another type (a core file).
    ElfOther,
    /// A COFF object of a machine `identify_magic` knows.
    Coff,
    /// A big-object COFF file (`/bigobj`).
    CoffBigObj,
    /// A Mach-O file, 32 or 64 bit, either byte order.
    MachO,
    /// A WebAssembly module (`\0asm`).
    Wasm,
    /// A zstd frame (`28 B5 2F FD`), as in a compressed offload binary's payload.
    ZstdFrame,
    /// An NVIDIA fat binary (`50 ED 55 BA`, [`crate::nvfatbin`]).
    NvFatbin,
    /// A PE/COFF image (`MZ` with a `PE\0\0` signature where `e_lfanew` points), as
    /// `identify_magic`'s `pecoff_executable`: Windows executables and DLLs.
    PeExecutable,
    /// A zip file (`PK\x03\x04`, or `PK\x05\x06` for an empty one): Python wheels, jars.
    Zip,
    /// None of these.
    Unknown,
}

impl FileKind {
    /// Identifies `data` by its first bytes.
    pub fn sniff(data: &[u8]) -> FileKind {
        if data.starts_with(BUNDLE_MAGIC) {
            return FileKind::Bundle;
        }
        if data.starts_with(&CCOB_MAGIC) {
            return FileKind::CompressedBundle;
        }
        if data.starts_with(&OFFLOAD_MAGIC) {
            return FileKind::OffloadBinary;
        }
        if data.starts_with(&NVFATBIN_MAGIC_BYTES) {
            return FileKind::NvFatbin;
        }
        if data.starts_with(AR_MAGIC) {
            return FileKind::Archive;
        }
        if data.starts_with(THIN_MAGIC) {
            return FileKind::ThinArchive;
        }
        if data.starts_with(BITCODE_MAGIC) {
            return FileKind::Bitcode;
        }
        if data.starts_with(BITCODE_WRAPPER_MAGIC) {
            return FileKind::BitcodeWrapper;
        }
        if data.starts_with(ELF_MAGIC) {
            use object::elf::{ET_DYN, ET_EXEC, ET_REL};
            return match elf_type(data) {
                Some(ET_REL | ET_EXEC | ET_DYN) => FileKind::Elf,
                _ => FileKind::ElfOther,
            };
        }
        if data.len() >= 4 && MACHO_MAGICS.iter().any(|m| data[..4] == *m) {
            return FileKind::MachO;
        }
        if data.starts_with(WASM_MAGIC) {
            return FileKind::Wasm;
        }
        if data.starts_with(ZSTD_MAGIC) {
            return FileKind::ZstdFrame;
        }
        if data.len() >= 28
            && data[..4] == [0, 0, 0xff, 0xff]
            && u16_at(data, 4).is_some_and(|version| version >= 2)
            && data[12..28] == BIG_OBJ_CLASS_ID
        {
            return FileKind::CoffBigObj;
        }
        if data.len() >= 2 {
            // identify_magic's COFF machines, by their first two (little-endian) bytes.
            let coff = matches!(
                (data[0], data[1]),
                (0x4c | 0xc4, 0x01)
                    | (0x4c | 0xc4 | 0x90 | 0x68, 0x02)
                    | (0x64, 0x86 | 0xaa)
                    | (0x41 | 0x4e, 0xa6)
            );
            if coff {
                return FileKind::Coff;
            }
        }
        if data.starts_with(DOS_MAGIC) && data.len() >= 0x40 {
            let at = u32_at(data, 0x3c).unwrap_or(0) as usize;
            if data.get(at..at.saturating_add(4)) == Some(PE_SIGNATURE) {
                return FileKind::PeExecutable;
            }
        }
        if ZIP_MAGICS.iter().any(|m| data.starts_with(*m)) {
            return FileKind::Zip;
        }
        FileKind::Unknown
    }

    /// Raw or wrapped bitcode.
    pub fn is_bitcode(self) -> bool {
        matches!(self, FileKind::Bitcode | FileKind::BitcodeWrapper)
    }

    /// A regular or thin archive.
    pub fn is_archive(self) -> bool {
        matches!(self, FileKind::Archive | FileKind::ThinArchive)
    }

    /// Anything with the ELF magic.
    pub fn is_elf(self) -> bool {
        matches!(self, FileKind::Elf | FileKind::ElfOther)
    }

    /// COFF, regular or big-object.
    pub fn is_coff(self) -> bool {
        matches!(self, FileKind::Coff | FileKind::CoffBigObj)
    }
}

/// Whether LLVM's `ObjectFile::createObjectFile` takes `data` as an object file: what
/// clang-offload-bundler asks of the host input to choose a fat object for `-type=o`. Any
/// ELF magic, Wasm, Mach-O, or at least a COFF header (20 bytes) of a machine LLVM's COFF
/// reader knows.
pub fn is_llvm_object_file(data: &[u8]) -> bool {
    const COFF_MACHINES: [u16; 9] = [
        0x14c, 0x8664, 0xaa64, 0xa641, 0x1c0, 0x1c4, 0x1c2, 0x200, 0x5064,
    ];
    match FileKind::sniff(data) {
        FileKind::Elf | FileKind::ElfOther | FileKind::Wasm | FileKind::MachO => true,
        _ => data.len() >= 20 && u16_at(data, 0).is_some_and(|m| COFF_MACHINES.contains(&m)),
    }
}

/// Whether `prefix` could be the start of a binary bundle: it starts with the magic, or is
/// shorter than the magic and a prefix of it.
pub(crate) fn may_start_bundle(prefix: &[u8]) -> bool {
    may_start_with(prefix, BUNDLE_MAGIC)
}

/// Whether `prefix` could be the start of an offload binary (as [`may_start_bundle`]).
pub(crate) fn may_start_offload_binary(prefix: &[u8]) -> bool {
    may_start_with(prefix, &OFFLOAD_MAGIC)
}

fn may_start_with(prefix: &[u8], magic: &[u8]) -> bool {
    magic.starts_with(&prefix[..prefix.len().min(magic.len())])
}

/// Whether `data` starts with AIX's big-archive magic (`<bigaf>\n`), which LLVM's archive
/// reader accepts and the offload tools do not read.
pub(crate) fn is_big_archive(data: &[u8]) -> bool {
    data.starts_with(BIG_ARCHIVE_MAGIC)
}

/// Whether `data` starts as a 64-bit little-endian ELF file (`EI_CLASS` 2, `EI_DATA` 1): what
/// a cubin is.
pub(crate) fn is_elf64_le(data: &[u8]) -> bool {
    elf_ident(data).is_some_and(|id| id.class == elf::ELFCLASS64 && id.data == elf::ELFDATA2LSB)
}

/// The ELF identification (`e_ident`, the first 16 bytes) of `data`, when it has one with the
/// ELF magic. The one place the rest of the crate reads an ELF file's class, byte order or ABI
/// version from.
pub(crate) fn elf_ident(data: &[u8]) -> Option<elf::Ident> {
    if data.len() < size_of::<elf::Ident>() {
        return None;
    }
    elf_head(data).map(|h| h.e_ident)
}

/// `e_type` in the file's byte order (big-endian when `EI_DATA` says so, else little).
fn elf_type(data: &[u8]) -> Option<u16> {
    if data.len() < std::mem::offset_of!(elf::FileHeader32<Endianness>, e_machine) {
        return None;
    }
    let h = elf_head(data)?;
    let endian = if h.e_ident.data == elf::ELFDATA2MSB {
        Endianness::Big
    } else {
        Endianness::Little
    };
    Some(h.e_type.get(endian))
}

/// The start of an ELF header through `object`'s 32-bit header over a zero-padded copy, so
/// that data shorter than a whole header still has its identification and type (the same
/// fields at the same offsets in both classes); the callers check that `data` holds the
/// fields they read. `None` without the ELF magic.
fn elf_head(data: &[u8]) -> Option<elf::FileHeader32<Endianness>> {
    let mut head = [0u8; size_of::<elf::FileHeader32<Endianness>>()];
    let n = data.len().min(head.len());
    head[..n].copy_from_slice(&data[..n]);
    let (h, _) = object::pod::from_bytes::<elf::FileHeader32<Endianness>>(&head).ok()?;
    (h.e_ident.magic == elf::ELFMAG).then_some(*h)
}

/// The machine (`e_machine`, e.g. `object::elf::EM_AMDGPU` or `EM_CUDA`) of a 64-bit
/// little-endian ELF file, read through its whole 64-byte header; `None` for anything else
/// (shorter data, another class or byte order, no ELF magic). What a GPU code object or a
/// cubin is checked by.
pub fn elf64_le_machine(data: &[u8]) -> Option<u16> {
    use object::LittleEndian as LE;
    let (h, _) = object::pod::from_bytes::<elf::FileHeader64<LE>>(data).ok()?;
    let id = &h.e_ident;
    (id.magic == elf::ELFMAG && id.class == elf::ELFCLASS64 && id.data == elf::ELFDATA2LSB)
        .then(|| h.e_machine.get(LE))
}

/// The entry ID of a fat object's bundle section: `name` after the bundle magic.
pub(crate) fn bundle_section_id(name: &[u8]) -> Option<&[u8]> {
    name.strip_prefix(&BUNDLE_MAGIC[..])
}

/// [`bundle_section_id`] of a section name read as text.
pub(crate) fn bundle_section_id_str(name: &str) -> Option<&str> {
    // The magic is ASCII, so what follows it starts at a character boundary.
    bundle_section_id(name.as_bytes()).map(|id| &name[name.len() - id.len()..])
}

/// The first offset in `data`, a multiple of 8, where an NVIDIA fat binary's magic starts
/// a whole 8-byte chunk: one comparison per 8 bytes.
pub(crate) fn next_aligned_nvfatbin(data: &[u8]) -> Option<usize> {
    data.chunks_exact(8)
        .position(|c| c[..4] == NVFATBIN_MAGIC_BYTES)
        .map(|i| i * 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_magic() {
        assert_eq!(
            FileKind::sniff(b"__CLANG_OFFLOAD_BUNDLE__x"),
            FileKind::Bundle
        );
        assert_eq!(FileKind::sniff(b"CCOB\x03\x00"), FileKind::CompressedBundle);
        assert_eq!(
            FileKind::sniff(b"\x10\xff\x10\xad"),
            FileKind::OffloadBinary
        );
        assert_eq!(
            FileKind::sniff(b"\x50\xed\x55\xba\x01\x00\x10\x00"),
            FileKind::NvFatbin
        );
        assert_eq!(FileKind::sniff(b"!<arch>\n"), FileKind::Archive);
        assert_eq!(FileKind::sniff(b"!<thin>\n"), FileKind::ThinArchive);
        assert!(FileKind::sniff(b"BC\xc0\xde").is_bitcode());
        assert!(FileKind::sniff(b"\xde\xc0\x17\x0b").is_bitcode());
        assert_eq!(FileKind::sniff(b"\x7fELF"), FileKind::ElfOther);
        let mut elf = b"\x7fELF\x02\x01\x01".to_vec();
        elf.resize(18, 0);
        elf[16] = 1;
        assert_eq!(FileKind::sniff(&elf), FileKind::Elf);
        elf[16] = 4; // ET_CORE
        assert_eq!(FileKind::sniff(&elf), FileKind::ElfOther);
        assert_eq!(FileKind::sniff(b"\xcf\xfa\xed\xfe"), FileKind::MachO);
        assert_eq!(FileKind::sniff(b"\0asm"), FileKind::Wasm);
        assert_eq!(FileKind::sniff(b"\x64\x86"), FileKind::Coff);
        assert_eq!(FileKind::sniff(b"\x28\xb5\x2f\xfd"), FileKind::ZstdFrame);
        assert_eq!(FileKind::sniff(b""), FileKind::Unknown);
        assert_eq!(FileKind::sniff(b"PK\x03\x04\x14\0"), FileKind::Zip);
        assert_eq!(FileKind::sniff(b"PK\x05\x06"), FileKind::Zip);
        let mut pe = vec![0; 0x84];
        pe[..2].copy_from_slice(b"MZ");
        pe[0x3c] = 0x80;
        assert_eq!(FileKind::sniff(&pe), FileKind::Unknown);
        pe[0x80..].copy_from_slice(b"PE\0\0");
        assert_eq!(FileKind::sniff(&pe), FileKind::PeExecutable);
        pe[0x3c] = 0xff;
        assert_eq!(FileKind::sniff(&pe), FileKind::Unknown);
        assert_eq!(FileKind::sniff(b"HOSTDATA"), FileKind::Unknown);
    }

    #[test]
    fn llvm_object_files() {
        assert!(is_llvm_object_file(b"\x7fELF\x02\x01\x01"));
        assert!(!is_llvm_object_file(b""));
        assert!(!is_llvm_object_file(b"HOSTDATA"));
        let mut coff = vec![0x64, 0x86];
        assert!(!is_llvm_object_file(&coff), "shorter than a COFF header");
        coff.resize(20, 0);
        assert!(is_llvm_object_file(&coff));
    }
}
