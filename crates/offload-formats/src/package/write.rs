//! Writer of offload binaries: version 1 (one image per binary, what every LLVM up
//! to 22 writes and reads) and, on request, version 2 (several images sharing one
//! string table, what LLVM 23 writes; unreadable by LLVM ≤ 22).
//!
//! Output is deterministic and byte-identical to LLVM's `OffloadBinary::write` for
//! the same image: string entries in the order given, string table as
//! LLVM's `StringTableBuilder` builds it, image at the next multiple of 8 after the table, zero padding
//! to a multiple of 8.

use std::io::{self, Write};

use super::error::PackageWriteError;
use object::endian::{U16, U32, U64};
use object::pod::bytes_of;

use super::kinds::{ImageKind, LlvmVersion, OffloadKind};
use super::strtab::StringTable;
use crate::raw::{
    self, LE, OFFLOAD_ALIGNMENT as ALIGNMENT, OFFLOAD_ENTRY_SIZE as ENTRY_SIZE,
    OFFLOAD_HEADER_SIZE as HEADER_SIZE, STRING_ENTRY_SIZE_V1, STRING_ENTRY_SIZE_V2,
};

/// The layout version to write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FormatVersion {
    /// Version 1: one binary per image (LLVM 15 to 22).
    #[default]
    V1,
    /// Version 2: one binary holding every image (LLVM 23).
    V2,
}

/// One image to write, with its raw kind values and its string map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image<'a> {
    /// Image kind value.
    pub image_kind: u16,
    /// Offload kind value, in the numbering of the LLVM that will read the binary.
    pub offload_kind: u16,
    /// OffloadEntry flags (0).
    pub flags: u32,
    /// `(key, value)` pairs, written in this order (as the bytes they hold, see
    /// [`crate::id::spell`]: a value given as bytes that are not UTF-8 is written as given).
    pub strings: Vec<(&'a str, &'a str)>,
    /// The image bytes.
    pub data: &'a [u8],
}

impl<'a> Image<'a> {
    /// An image with no strings, its offload kind numbered as `llvm` numbers it.
    pub fn new(
        image_kind: ImageKind,
        offload_kind: OffloadKind,
        llvm: LlvmVersion,
        data: &'a [u8],
    ) -> Result<Image<'a>, PackageWriteError> {
        let offload_kind =
            offload_kind
                .value(llvm)
                .ok_or(PackageWriteError::UnrepresentableKind {
                    kind: offload_kind.name(),
                    llvm: llvm.major(),
                })?;
        Ok(Image {
            image_kind: image_kind.value(),
            offload_kind,
            flags: 0,
            strings: Vec::new(),
            data,
        })
    }

    /// Adds a string entry.
    pub fn string(mut self, key: &'a str, value: &'a str) -> Image<'a> {
        self.strings.push((key, value));
        self
    }
}

fn align8(v: u64) -> Result<u64, PackageWriteError> {
    v.checked_next_multiple_of(ALIGNMENT)
        .ok_or(PackageWriteError::TooLarge)
}

fn check_strings(images: &[Image<'_>]) -> Result<(), PackageWriteError> {
    for s in images
        .iter()
        .flat_map(|i| i.strings.iter().flat_map(|(k, v)| [*k, *v]))
    {
        if s.contains('\0') {
            return Err(PackageWriteError::NulInString(s.to_owned()));
        }
    }
    Ok(())
}

/// The layout of one binary, computed before writing.
struct Layout {
    strtab: StringTable,
    strtab_offset: u64,
    data_offset: u64,
    size: u64,
}

fn layout(
    images: &[Image<'_>],
    header: u64,
    string_entry: u64,
) -> Result<Layout, PackageWriteError> {
    check_strings(images)?;
    let raw: Vec<std::borrow::Cow<'_, [u8]>> = images
        .iter()
        .flat_map(|i| i.strings.iter().flat_map(|(k, v)| [*k, *v]))
        .map(crate::id::spell::bytes)
        .collect();
    let strtab = StringTable::build(raw.iter().map(|s| &**s));
    let n_strings: u64 = images.iter().map(|i| i.strings.len() as u64).sum();
    let strtab_offset = header + ENTRY_SIZE * images.len() as u64 + string_entry * n_strings;
    let data_offset = align8(strtab_offset + strtab.len())?;
    let total_images = images
        .iter()
        .try_fold(0u64, |acc, i| acc.checked_add(i.data.len() as u64))
        .ok_or(PackageWriteError::TooLarge)?;
    let size = align8(
        data_offset
            .checked_add(total_images)
            .ok_or(PackageWriteError::TooLarge)?,
    )?;
    Ok(Layout {
        strtab,
        strtab_offset,
        data_offset,
        size,
    })
}

fn write_padding(out: &mut dyn Write, n: u64) -> io::Result<()> {
    const ZEROS: [u8; 8] = [0; 8];
    debug_assert!(n < 8);
    out.write_all(&ZEROS[..n as usize])
}

/// The size of the version-1 binary of `image`.
pub fn v1_size(image: &Image<'_>) -> Result<u64, PackageWriteError> {
    Ok(layout(
        std::slice::from_ref(image),
        HEADER_SIZE,
        STRING_ENTRY_SIZE_V1,
    )?
    .size)
}

/// Writes `image` as one version-1 binary.
pub fn write_v1_to(image: &Image<'_>, out: &mut dyn Write) -> Result<(), WriteOrIo> {
    let l = layout(
        std::slice::from_ref(image),
        HEADER_SIZE,
        STRING_ENTRY_SIZE_V1,
    )?;
    let mut head = Vec::with_capacity(l.data_offset as usize);
    push_header(&mut head, 1, l.size, ENTRY_SIZE);
    push_entry(&mut head, image, HEADER_SIZE + ENTRY_SIZE, l.data_offset);
    for (k, v) in &image.strings {
        head.extend_from_slice(bytes_of(&raw::StringEntryV1 {
            key: U64::new(LE, l.strtab_offset + offset(&l.strtab, k)),
            value: U64::new(LE, l.strtab_offset + offset(&l.strtab, v)),
        }));
    }
    head.extend_from_slice(l.strtab.bytes());
    head.resize(l.data_offset as usize, 0);
    out.write_all(&head)?;
    out.write_all(image.data)?;
    write_padding(out, l.size - l.data_offset - image.data.len() as u64)?;
    Ok(())
}

/// `image` as one version-1 binary.
pub fn write_v1(image: &Image<'_>) -> Result<Vec<u8>, PackageWriteError> {
    let mut out = Vec::new();
    write_v1_to(image, &mut out).map_err(WriteOrIo::into_write_error)?;
    Ok(out)
}

/// Writes `images` as one version-2 binary (header, all entries, all string
/// entries, one shared string table, the images back to back).
pub fn write_v2_to(images: &[Image<'_>], out: &mut dyn Write) -> Result<(), WriteOrIo> {
    if images.is_empty() {
        return Err(PackageWriteError::NoImages.into());
    }
    let l = layout(images, HEADER_SIZE, STRING_ENTRY_SIZE_V2)?;
    let mut head = Vec::with_capacity(l.data_offset as usize);
    push_header(&mut head, 2, l.size, images.len() as u64);
    let mut string_entry = HEADER_SIZE + ENTRY_SIZE * images.len() as u64;
    let mut image_offset = l.data_offset;
    for image in images {
        push_entry(&mut head, image, string_entry, image_offset);
        string_entry += STRING_ENTRY_SIZE_V2 * image.strings.len() as u64;
        image_offset += image.data.len() as u64;
    }
    for (k, v) in images.iter().flat_map(|i| &i.strings) {
        head.extend_from_slice(bytes_of(&raw::StringEntryV2 {
            key: U64::new(LE, l.strtab_offset + offset(&l.strtab, k)),
            value: U64::new(LE, l.strtab_offset + offset(&l.strtab, v)),
            value_size: U64::new(LE, crate::id::spell::bytes(v).len() as u64),
        }));
    }
    head.extend_from_slice(l.strtab.bytes());
    head.resize(l.data_offset as usize, 0);
    out.write_all(&head)?;
    for image in images {
        out.write_all(image.data)?;
    }
    write_padding(out, l.size - image_offset)?;
    Ok(())
}

/// `images` as one version-2 binary.
pub fn write_v2(images: &[Image<'_>]) -> Result<Vec<u8>, PackageWriteError> {
    let mut out = Vec::new();
    write_v2_to(images, &mut out).map_err(WriteOrIo::into_write_error)?;
    Ok(out)
}

/// `images` in the given layout version: for [`FormatVersion::V1`] one binary per
/// image, concatenated (what clang-offload-packager writes); for
/// [`FormatVersion::V2`] one binary.
pub fn write(images: &[Image<'_>], version: FormatVersion) -> Result<Vec<u8>, PackageWriteError> {
    match version {
        FormatVersion::V1 => {
            let mut out = Vec::new();
            for image in images {
                write_v1_to(image, &mut out).map_err(WriteOrIo::into_write_error)?;
            }
            Ok(out)
        }
        FormatVersion::V2 => write_v2(images),
    }
}

fn offset(strtab: &StringTable, s: &str) -> u64 {
    strtab
        .offset(&crate::id::spell::bytes(s))
        .expect("string added to the table")
}

/// A version 1 or 2 header: the entry at [`HEADER_SIZE`], and the entry size (v1) or count.
fn push_header(head: &mut Vec<u8>, version: u32, size: u64, entry_size_or_count: u64) {
    head.extend_from_slice(bytes_of(&raw::OffloadHeader {
        magic: raw::OFFLOAD_MAGIC,
        version: U32::new(LE, version),
        size: U64::new(LE, size),
        entries_offset: U64::new(LE, HEADER_SIZE),
        entry_size_or_count: U64::new(LE, entry_size_or_count),
    }));
}

fn push_entry(head: &mut Vec<u8>, image: &Image<'_>, string_offset: u64, image_offset: u64) {
    head.extend_from_slice(bytes_of(&raw::OffloadEntry {
        image_kind: U16::new(LE, image.image_kind),
        offload_kind: U16::new(LE, image.offload_kind),
        flags: U32::new(LE, image.flags),
        string_offset: U64::new(LE, string_offset),
        num_strings: U64::new(LE, image.strings.len() as u64),
        image_offset: U64::new(LE, image_offset),
        image_size: U64::new(LE, image.data.len() as u64),
    }));
}

/// A write that failed in the format or in the output stream.
#[derive(Debug)]
pub enum WriteOrIo {
    /// The images cannot be written.
    Format(PackageWriteError),
    /// The output stream failed.
    Io(io::Error),
}

impl WriteOrIo {
    fn into_write_error(self) -> PackageWriteError {
        match self {
            WriteOrIo::Format(e) => e,
            // Writing to a Vec does not fail.
            WriteOrIo::Io(e) => unreachable!("in-memory write failed: {e}"),
        }
    }
}

impl From<PackageWriteError> for WriteOrIo {
    fn from(e: PackageWriteError) -> Self {
        WriteOrIo::Format(e)
    }
}

impl From<io::Error> for WriteOrIo {
    fn from(e: io::Error) -> Self {
        WriteOrIo::Io(e)
    }
}

impl std::fmt::Display for WriteOrIo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteOrIo::Format(e) => e.fmt(f),
            WriteOrIo::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for WriteOrIo {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WriteOrIo::Format(e) => Some(e),
            WriteOrIo::Io(e) => Some(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::read::OffloadBinary;
    use super::*;

    #[test]
    fn spec_worked_example() {
        let image = Image::new(
            ImageKind::Object,
            OffloadKind::OpenMp,
            LlvmVersion::LLVM19,
            b"ABCDEFGHIJ",
        )
        .unwrap()
        .string("arch", "gfx906")
        .string("triple", "amdgcn-amd-amdhsa");
        let bytes = write_v1(&image).unwrap();
        assert_eq!(bytes.len(), 160);
        assert_eq!(v1_size(&image).unwrap(), 160);
        let mut expect = Vec::new();
        expect.extend_from_slice(&[0x10, 0xff, 0x10, 0xad, 1, 0, 0, 0]);
        for v in [160u64, 32, 40] {
            expect.extend_from_slice(&v.to_le_bytes());
        }
        expect.extend_from_slice(&[1, 0, 1, 0, 0, 0, 0, 0]);
        for v in [72u64, 2, 144, 10, 0x69, 0x87, 0x6e, 0x75] {
            expect.extend_from_slice(&v.to_le_bytes());
        }
        expect.extend_from_slice(b"\0arch\0triple\0amdgcn-amd-amdhsa\0gfx906\0\0\0");
        expect.extend_from_slice(b"ABCDEFGHIJ\0\0\0\0\0\0");
        assert_eq!(bytes, expect);
    }

    #[test]
    fn round_trip_v1_and_v2() {
        let a = Image::new(
            ImageKind::Bitcode,
            OffloadKind::Hip,
            LlvmVersion::LLVM19,
            b"abc",
        )
        .unwrap()
        .string("triple", "amdgcn-amd-amdhsa")
        .string("arch", "gfx90a:xnack+");
        let b = Image::new(
            ImageKind::Cubin,
            OffloadKind::Cuda,
            LlvmVersion::LLVM22,
            b"",
        )
        .unwrap()
        .string("arch", "sm_70")
        .string("x", "");
        for version in [FormatVersion::V1, FormatVersion::V2] {
            let bytes = write(&[a.clone(), b.clone()], version).unwrap();
            assert_eq!(bytes.len() % 8, 0);
            let mut entries = Vec::new();
            let mut at = 0;
            while at < bytes.len() {
                let bin = OffloadBinary::parse(&bytes[at..]).unwrap();
                assert_eq!(
                    bin.version(),
                    if version == FormatVersion::V1 { 1 } else { 2 }
                );
                entries.extend(bin.entries().map(|e| {
                    (
                        e.image_kind().raw(),
                        e.offload_kind().raw(),
                        e.strings().collect::<Vec<_>>(),
                        e.image().to_vec(),
                    )
                }));
                at += bin.size() as usize;
            }
            assert_eq!(
                entries,
                [
                    (
                        2,
                        3,
                        vec![
                            (&b"triple"[..], &b"amdgcn-amd-amdhsa"[..]),
                            (b"arch", b"gfx90a:xnack+")
                        ],
                        b"abc".to_vec()
                    ),
                    (
                        3,
                        2,
                        vec![(&b"arch"[..], &b"sm_70"[..]), (b"x", b"")],
                        vec![]
                    ),
                ]
            );
        }
    }

    #[test]
    fn refusals() {
        assert_eq!(
            Image::new(ImageKind::None, OffloadKind::Sycl, LlvmVersion::LLVM20, b""),
            Err(PackageWriteError::UnrepresentableKind {
                kind: "sycl",
                llvm: 20
            })
        );
        let img = Image::new(ImageKind::None, OffloadKind::None, LlvmVersion::LLVM22, b"")
            .unwrap()
            .string("a\0b", "c");
        assert!(matches!(
            write_v1(&img),
            Err(PackageWriteError::NulInString(_))
        ));
        assert_eq!(write_v2(&[]), Err(PackageWriteError::NoImages));
        assert_eq!(write(&[], FormatVersion::V1), Ok(Vec::new()));
    }
}
