//! The on-disk definitions of every container this crate reads and writes, as object's
//! `elf.rs` is for ELF: each fixed-size header as a `#[repr(C)]` [`Pod`] struct of
//! little-endian fields, every magic number, and the one bounds-checked reader the format
//! modules read them through ([`read_at`], [`u32_at`], …).
//!
//! The structs are views: their fields are byte arrays (`U32<LittleEndian>` is `[u8; 4]`),
//! so they have alignment 1 and can be read from any offset of any input. Only this module
//! turns bytes into integers; [`crate::kind`] compares the magic numbers.
//!
//! - Binary bundles (clang-offload-bundler's `BinaryFileHandler`): [`BundleHeader`],
//!   then per entry a [`BundleEntry`] followed by the entry ID's bytes.
//! - Compressed bundles (`CCOB`, `CompressedOffloadBundle`): [`CcobHeaderV1`],
//!   [`CcobHeaderV2`], [`CcobHeaderV3`].
//! - Offload binaries (`llvm/Object/OffloadBinary.h`): [`OffloadHeader`] (versions 1 and 2;
//!   version 3 adds [`OffloadHeaderV3Tail`]), [`OffloadEntry`], [`StringEntryV1`],
//!   [`StringEntryV2`]. All integers are little-endian:
//!
//! | off | size | v1 | v2 | v3 |
//! |---|---|---|---|---|
//! | 0 | 4 | magic `10 FF 10 AD` | = | = |
//! | 4 | 4 | version | = | = |
//! | 8 | 8 | total size | = | = (compressed: header + payload, padding excluded) |
//! | 16 | 8 | entry offset | entries offset | = |
//! | 24 | 8 | entry size (40) | entries count | = |
//! | 32 | 8 | — | — | inflated size (0: not compressed) |
//!
//!   String entries are `(key offset, value offset)` in v1 (NUL-terminated strings) and
//!   `(key offset, value offset, value size)` from v2 on.
//! - NVIDIA fat binaries: [`NvFatbinHeader`], [`NvFatbinEntry`].

use object::endian::{LittleEndian, U16, U32, U64};
use object::pod::Pod;

/// The byte order of every container here.
pub(crate) const LE: LittleEndian = LittleEndian;

/// The 24 magic bytes that start a binary bundle and name the sections of a fat object.
pub const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
/// The 4 magic bytes that start a compressed bundle.
pub const CCOB_MAGIC: [u8; 4] = *b"CCOB";
/// The four bytes every offload binary starts with (`0x10FF10AD` stored big-end first).
pub const OFFLOAD_MAGIC: [u8; 4] = [0x10, 0xFF, 0x10, 0xAD];
/// The magic number of an NVIDIA fat binary's header.
pub const NVFATBIN_MAGIC: u32 = 0xBA55_ED50;
/// [`NVFATBIN_MAGIC`] as it is stored (little-endian).
pub const NVFATBIN_MAGIC_BYTES: [u8; 4] = NVFATBIN_MAGIC.to_le_bytes();
/// The 8-byte global header of an `ar` archive (also a complete empty archive).
pub const AR_MAGIC: &[u8; 8] = b"!<arch>\n";
/// The global header of a GNU thin archive.
pub const THIN_MAGIC: &[u8; 8] = b"!<thin>\n";
/// The global header of an AIX big archive.
pub const BIG_ARCHIVE_MAGIC: &[u8; 8] = b"<bigaf>\n";
/// Raw LLVM bitcode.
pub const BITCODE_MAGIC: &[u8; 4] = b"BC\xc0\xde";
/// LLVM bitcode in its wrapper header.
pub const BITCODE_WRAPPER_MAGIC: &[u8; 4] = b"\xde\xc0\x17\x0b";
/// An ELF file.
pub const ELF_MAGIC: &[u8; 4] = b"\x7fELF";
/// A WebAssembly module.
pub const WASM_MAGIC: &[u8; 4] = b"\0asm";
/// A zstd frame.
pub const ZSTD_MAGIC: &[u8; 4] = &[0x28, 0xb5, 0x2f, 0xfd];
/// The four Mach-O magics: 32 and 64 bit, both byte orders.
pub const MACHO_MAGICS: [[u8; 4]; 4] = [
    [0xfe, 0xed, 0xfa, 0xce],
    [0xfe, 0xed, 0xfa, 0xcf],
    [0xce, 0xfa, 0xed, 0xfe],
    [0xcf, 0xfa, 0xed, 0xfe],
];
/// The class ID of a big-object COFF file (`/bigobj`), at offset 12.
pub const BIG_OBJ_CLASS_ID: [u8; 16] = [
    0xc7, 0xa1, 0xba, 0xd1, 0xee, 0xba, 0xa9, 0x4b, 0xaf, 0x20, 0xfa, 0xf6, 0x6a, 0xa4, 0xdc, 0xb8,
];
/// A DOS/PE image's `MZ`.
pub const DOS_MAGIC: &[u8; 2] = b"MZ";
/// The PE signature where `e_lfanew` (at 0x3c) points.
pub const PE_SIGNATURE: &[u8; 4] = b"PE\0\0";
/// A zip file's local file header, and an empty zip's end of central directory.
pub const ZIP_MAGICS: [&[u8; 4]; 2] = [b"PK\x03\x04", b"PK\x05\x06"];

/// Alignment of offload binaries in memory and in sections, and of their sizes.
pub const OFFLOAD_ALIGNMENT: u64 = 8;
/// Size of a version 1 or 2 offload binary header.
pub const OFFLOAD_HEADER_SIZE: u64 = size_of::<OffloadHeader>() as u64;
/// Size of a version 3 offload binary header (adds the inflated size).
pub const OFFLOAD_HEADER_SIZE_V3: u64 =
    OFFLOAD_HEADER_SIZE + size_of::<OffloadHeaderV3Tail>() as u64;
/// Size of one offload binary entry.
pub const OFFLOAD_ENTRY_SIZE: u64 = size_of::<OffloadEntry>() as u64;
/// Size of a version 1 string entry.
pub const STRING_ENTRY_SIZE_V1: u64 = size_of::<StringEntryV1>() as u64;
/// Size of a version 2 or 3 string entry.
pub const STRING_ENTRY_SIZE_V2: u64 = size_of::<StringEntryV2>() as u64;
/// The newest offload binary layout version this crate reads.
pub const OFFLOAD_NEWEST_VERSION: u32 = 3;
/// `SHT_LLVM_OFFLOADING`, the ELF section type that marks embedded offload binaries.
pub const SHT_LLVM_OFFLOADING: u32 = 0x6fff_4c0b;

/// The fixed start of a binary bundle.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct BundleHeader {
    /// [`BUNDLE_MAGIC`].
    pub magic: [u8; 24],
    /// The number of entries.
    pub num_entries: U64<LittleEndian>,
}

/// The fixed part of a binary bundle's entry; `id_len` bytes of entry ID follow.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct BundleEntry {
    /// Offset of the payload from the start of the bundle.
    pub offset: U64<LittleEndian>,
    /// Payload size.
    pub size: U64<LittleEndian>,
    /// Length of the entry ID that follows.
    pub id_len: U64<LittleEndian>,
}

/// What every compressed-bundle header starts with.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct CcobPrefix {
    /// [`CCOB_MAGIC`].
    pub magic: [u8; 4],
    /// Format version: 1, 2 or 3.
    pub version: U16<LittleEndian>,
    /// Compression method: 0 zlib, 1 zstd.
    pub method: U16<LittleEndian>,
}

/// A version 1 compressed-bundle header (LLVM 18), 20 bytes.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct CcobHeaderV1 {
    /// Magic, version, method.
    pub prefix: CcobPrefix,
    /// Size of the bundle once decompressed.
    pub uncompressed_size: U32<LittleEndian>,
    /// The first 8 bytes of the uncompressed bundle's MD5.
    pub hash: U64<LittleEndian>,
}

/// A version 2 compressed-bundle header (LLVM 19 to 21), 24 bytes.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct CcobHeaderV2 {
    /// Magic, version, method.
    pub prefix: CcobPrefix,
    /// Header plus compressed data.
    pub total_size: U32<LittleEndian>,
    /// Size of the bundle once decompressed.
    pub uncompressed_size: U32<LittleEndian>,
    /// The first 8 bytes of the uncompressed bundle's MD5.
    pub hash: U64<LittleEndian>,
}

/// A version 3 compressed-bundle header (LLVM 22), 32 bytes.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct CcobHeaderV3 {
    /// Magic, version, method.
    pub prefix: CcobPrefix,
    /// Header plus compressed data.
    pub total_size: U64<LittleEndian>,
    /// Size of the bundle once decompressed.
    pub uncompressed_size: U64<LittleEndian>,
    /// The first 8 bytes of the uncompressed bundle's MD5.
    pub hash: U64<LittleEndian>,
}

/// An offload binary's header, versions 1 and 2 (32 bytes); version 3 appends
/// [`OffloadHeaderV3Tail`].
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct OffloadHeader {
    /// [`OFFLOAD_MAGIC`].
    pub magic: [u8; 4],
    /// Layout version, 1 to 3.
    pub version: U32<LittleEndian>,
    /// Total size (compressed: header plus payload, padding excluded).
    pub size: U64<LittleEndian>,
    /// Offset of the entry (v1) or entries (v2, v3).
    pub entries_offset: U64<LittleEndian>,
    /// Size of the entry (v1, 40) or number of entries (v2, v3).
    pub entry_size_or_count: U64<LittleEndian>,
}

/// What a version 3 offload binary's header adds after [`OffloadHeader`].
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct OffloadHeaderV3Tail {
    /// Size once inflated; 0 when the binary is not compressed.
    pub inflated_size: U64<LittleEndian>,
}

/// One entry of an offload binary, 40 bytes.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct OffloadEntry {
    /// `ImageKind`.
    pub image_kind: U16<LittleEndian>,
    /// `OffloadKind`, in the writer's numbering.
    pub offload_kind: U16<LittleEndian>,
    /// Flags.
    pub flags: U32<LittleEndian>,
    /// Offset of the entry's string entries.
    pub string_offset: U64<LittleEndian>,
    /// Number of string entries.
    pub num_strings: U64<LittleEndian>,
    /// Offset of the image.
    pub image_offset: U64<LittleEndian>,
    /// Size of the image.
    pub image_size: U64<LittleEndian>,
}

/// A version 1 string entry: offsets of two NUL-terminated strings.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct StringEntryV1 {
    /// Offset of the key.
    pub key: U64<LittleEndian>,
    /// Offset of the value.
    pub value: U64<LittleEndian>,
}

/// A version 2 or 3 string entry: a key, and a value with its size.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct StringEntryV2 {
    /// Offset of the key (NUL-terminated).
    pub key: U64<LittleEndian>,
    /// Offset of the value.
    pub value: U64<LittleEndian>,
    /// Size of the value.
    pub value_size: U64<LittleEndian>,
}

/// An NVIDIA fat binary's outer header, 16 bytes.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct NvFatbinHeader {
    /// [`NVFATBIN_MAGIC`].
    pub magic: U32<LittleEndian>,
    /// Version, 1.
    pub version: U16<LittleEndian>,
    /// Header size, 16.
    pub header_size: U16<LittleEndian>,
    /// Size of the entries that follow the header.
    pub fat_size: U64<LittleEndian>,
}

/// The fixed 64 bytes of an NVIDIA fat binary entry's header.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct NvFatbinEntry {
    /// 1 PTX, 2 ELF (cubin).
    pub kind: U16<LittleEndian>,
    /// Entry version, `0x0101`.
    pub version: U16<LittleEndian>,
    /// Entry header size: the payload starts there.
    pub header_size: U32<LittleEndian>,
    /// Payload size.
    pub size: U64<LittleEndian>,
    /// Compressed size (0 when not compressed).
    pub compressed_size: U32<LittleEndian>,
    /// Offset of the options block in the entry (0: none).
    pub options_offset: U32<LittleEndian>,
    /// Minor version.
    pub minor: U16<LittleEndian>,
    /// Major version.
    pub major: U16<LittleEndian>,
    /// Architecture, `80` for `sm_80`.
    pub arch: U32<LittleEndian>,
    /// Offset of the identifier in the entry (0: none).
    pub name_offset: U32<LittleEndian>,
    /// Length of the identifier, without its NUL.
    pub name_len: U32<LittleEndian>,
    /// Flags.
    pub flags: U64<LittleEndian>,
    /// Reserved, 0.
    pub reserved: U64<LittleEndian>,
    /// Uncompressed size (0 when not compressed).
    pub uncompressed_size: U64<LittleEndian>,
}

// SAFETY: every struct above is `repr(C)` of byte arrays (the endian types are `[u8; N]`
// with the `unaligned` feature of object), so it has alignment 1, no padding, and every bit
// pattern is valid.
unsafe impl Pod for BundleHeader {}
unsafe impl Pod for BundleEntry {}
unsafe impl Pod for CcobPrefix {}
unsafe impl Pod for CcobHeaderV1 {}
unsafe impl Pod for CcobHeaderV2 {}
unsafe impl Pod for CcobHeaderV3 {}
unsafe impl Pod for OffloadHeader {}
unsafe impl Pod for OffloadHeaderV3Tail {}
unsafe impl Pod for OffloadEntry {}
unsafe impl Pod for StringEntryV1 {}
unsafe impl Pod for StringEntryV2 {}
unsafe impl Pod for NvFatbinHeader {}
unsafe impl Pod for NvFatbinEntry {}

/// The size of `T` on disk.
pub(crate) const fn size_of<T: Pod>() -> usize {
    std::mem::size_of::<T>()
}

/// The `T` at `at` in `data`, when all of it is there. The one bounds-checked read every
/// format module goes through.
pub(crate) fn read_at<T: Pod>(data: &[u8], at: usize) -> Option<&T> {
    object::pod::from_bytes(data.get(at..)?)
        .ok()
        .map(|(t, _)| t)
}

/// The little-endian `u16` at `at`, when both bytes are there.
pub(crate) fn u16_at(data: &[u8], at: usize) -> Option<u16> {
    read_at::<U16<LittleEndian>>(data, at).map(|v| v.get(LE))
}

/// The little-endian `u32` at `at`, when all four bytes are there.
pub(crate) fn u32_at(data: &[u8], at: usize) -> Option<u32> {
    read_at::<U32<LittleEndian>>(data, at).map(|v| v.get(LE))
}

/// The little-endian `u64` at `at`, when all eight bytes are there.
pub(crate) fn u64_at(data: &[u8], at: usize) -> Option<u64> {
    read_at::<U64<LittleEndian>>(data, at).map(|v| v.get(LE))
}

/// A named field of a header, for the error that says which field a short input cuts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Field {
    /// Offset in the header.
    pub offset: usize,
    /// Size in bytes.
    pub size: usize,
    /// The name errors give it.
    pub name: &'static str,
}

/// The first of `fields` (in file order) that `available` bytes from a header's start do not
/// hold entirely, with how many of its bytes are there; `None` when all of them fit.
pub(crate) fn first_cut(fields: &[Field], available: usize) -> Option<(Field, usize)> {
    fields
        .iter()
        .find(|f| f.offset + f.size > available)
        .map(|f| (*f, available.saturating_sub(f.offset)))
}

/// The named fields of [`NvFatbinEntry`], in the order they are read.
pub(crate) const NVFATBIN_ENTRY_FIELDS: [Field; 13] = {
    const fn f(offset: usize, size: usize, name: &'static str) -> Field {
        Field { offset, size, name }
    }
    [
        f(0, 2, "entry kind"),
        f(2, 2, "entry version"),
        f(4, 4, "entry header size"),
        f(8, 8, "payload size"),
        f(16, 4, "compressed size"),
        f(20, 4, "options offset"),
        f(24, 2, "minor version"),
        f(26, 2, "major version"),
        f(28, 4, "arch"),
        f(32, 4, "identifier offset"),
        f(36, 4, "identifier length"),
        f(40, 8, "flags"),
        f(56, 8, "uncompressed size"),
    ]
};

/// The named fields of [`NvFatbinHeader`], in the order they are read.
pub(crate) const NVFATBIN_HEADER_FIELDS: [Field; 4] = [
    Field {
        offset: 0,
        size: 4,
        name: "magic",
    },
    Field {
        offset: 4,
        size: 2,
        name: "version",
    },
    Field {
        offset: 6,
        size: 2,
        name: "header size",
    },
    Field {
        offset: 8,
        size: 8,
        name: "fat size",
    },
];

/// The named fields of [`BundleEntry`].
pub(crate) const BUNDLE_ENTRY_FIELDS: [Field; 3] = [
    Field {
        offset: 0,
        size: 8,
        name: "payload offset",
    },
    Field {
        offset: 8,
        size: 8,
        name: "payload size",
    },
    Field {
        offset: 16,
        size: 8,
        name: "ID length",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_the_formats() {
        assert_eq!(size_of::<BundleHeader>(), 32);
        assert_eq!(size_of::<BundleEntry>(), 24);
        assert_eq!(size_of::<CcobHeaderV1>(), 20);
        assert_eq!(size_of::<CcobHeaderV2>(), 24);
        assert_eq!(size_of::<CcobHeaderV3>(), 32);
        assert_eq!(size_of::<OffloadHeader>(), 32);
        assert_eq!(size_of::<OffloadEntry>(), 40);
        assert_eq!(size_of::<StringEntryV1>(), 16);
        assert_eq!(size_of::<StringEntryV2>(), 24);
        assert_eq!(size_of::<NvFatbinHeader>(), 16);
        assert_eq!(size_of::<NvFatbinEntry>(), 64);
        assert_eq!(std::mem::align_of::<NvFatbinEntry>(), 1);
    }

    #[test]
    fn reads_are_bounds_checked() {
        let d = [1, 2, 3, 4, 5, 6, 7, 8, 9];
        assert_eq!(u16_at(&d, 7), Some(0x0908));
        assert_eq!(u16_at(&d, 8), None);
        assert_eq!(u32_at(&d, 5), Some(0x0908_0706));
        assert_eq!(u64_at(&d, 1), Some(0x0908_0706_0504_0302));
        assert_eq!(u64_at(&d, 2), None);
        assert_eq!(u64_at(&d, usize::MAX), None);
        let cut = first_cut(&NVFATBIN_ENTRY_FIELDS, 50).unwrap();
        assert_eq!((cut.0.name, cut.1), ("uncompressed size", 0));
        assert!(first_cut(&NVFATBIN_ENTRY_FIELDS, 64).is_none());
    }
}
