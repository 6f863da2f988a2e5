//! Finding offload binaries in the files that carry them, as LLVM's
//! `extractOffloadBinaries` does:
//!
//! - an offload binary, or several back to back (a `.llvm.offloading` section's
//!   contents, clang-offload-packager's output): each binary in turn; after a
//!   version-1 binary the next starts right at its end (LLVM 19 and 22), after a
//!   newer one at the next multiple of 8 (LLVM 23 and later);
//! - ELF relocatable objects, executables and shared objects: every section of type
//!   `SHT_LLVM_OFFLOADING` (0x6fff4c0b), whatever its name;
//! - COFF objects: every section whose name starts with `.llvm.offloading`;
//! - static archives: each member, recursively;
//! - anything else (including ELF core files and PE executables): nothing, no error.
//!
//! LLVM bitcode carries binaries in globals listed by `!llvm.embedded.objects`,
//! which needs an IR reader: it is reported as [`ScanErrorKind::Bitcode`].
//! Anything inside a scanned region that is not an offload binary is an error, as
//! in LLVM.

use crate::kind::FileKind;
use std::borrow::Cow;
use std::fmt;

use object::read::archive::ArchiveFile;
use object::read::elf::{FileHeader, SectionHeader};
use object::{Endianness, Object, ObjectSection, elf};

use super::error::PackageReadError;
use super::read::{Header, OffloadBinary, decompress};
use crate::raw::{OFFLOAD_ALIGNMENT as ALIGNMENT, SHT_LLVM_OFFLOADING};

/// What a file is, as far as finding offload binaries goes (LLVM's `identify_magic`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScanKind {
    /// An offload binary (magic `10 FF 10 AD`).
    OffloadBinary,
    /// An ELF relocatable object, executable or shared object.
    Elf,
    /// A COFF object (regular or big-object).
    Coff,
    /// A static archive (`!<arch>`), or a thin one (`!<thin>`).
    Archive,
    /// LLVM bitcode, raw or wrapped.
    Bitcode,
    /// Anything else: holds no offload binaries.
    Other,
}

impl ScanKind {
    /// Identifies `data` by its first bytes ([`FileKind::sniff`], LLVM's `identify_magic`).
    pub fn identify(data: &[u8]) -> ScanKind {
        match FileKind::sniff(data) {
            FileKind::OffloadBinary => ScanKind::OffloadBinary,
            FileKind::Archive | FileKind::ThinArchive => ScanKind::Archive,
            FileKind::Bitcode | FileKind::BitcodeWrapper => ScanKind::Bitcode,
            FileKind::Elf => ScanKind::Elf,
            FileKind::Coff | FileKind::CoffBigObj => ScanKind::Coff,
            _ => ScanKind::Other,
        }
    }
}

/// One offload binary found in a file.
#[derive(Clone, Debug)]
pub struct Found<'data> {
    /// The name LLVM gives the buffer it came from: the file name, or the archive
    /// member's name (clang-offload-packager's `--archive` names members by it).
    pub origin: String,
    /// Where in `origin` it was: `None` for a raw binary, else the section.
    pub section: Option<String>,
    /// Byte offset of the binary inside its region (file, member or section).
    pub offset: u64,
    /// The binary: borrowed from the input, or owned when it was decompressed.
    pub data: Cow<'data, [u8]>,
}

impl Found<'_> {
    /// The parsed binary (cannot fail: the scan validated it).
    pub fn binary(&self) -> OffloadBinary<'_> {
        OffloadBinary::parse(&self.data).expect("validated by the scan")
    }
}

/// What went wrong while scanning.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScanErrorKind {
    /// A malformed offload binary.
    Binary(PackageReadError),
    /// An ELF, COFF or archive structure that cannot be read (the message says why).
    ScanKind(String),
    /// An ELF, COFF or archive structure the `object` crate cannot read.
    Object(object::read::Error),
    /// LLVM bitcode: reading `!llvm.embedded.objects` is not supported.
    Bitcode,
    /// A thin archive: its members live in other files.
    ThinArchive,
}

/// An error of [`scan`], naming the buffer and section it happened in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanError {
    /// The buffer name (file or archive member).
    pub origin: String,
    /// The section, when the error is inside one.
    pub section: Option<String>,
    /// What went wrong.
    pub kind: ScanErrorKind,
}

impl fmt::Display for ScanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}'", self.origin)?;
        if let Some(s) = &self.section {
            write!(f, ", section {s}")?;
        }
        match &self.kind {
            ScanErrorKind::Binary(e) => write!(f, ": {e}"),
            ScanErrorKind::ScanKind(e) => write!(f, ": {e}"),
            ScanErrorKind::Object(e) => write!(f, ": {e}"),
            ScanErrorKind::Bitcode => f.write_str(
                ": LLVM bitcode is not supported (offload binaries embedded through !llvm.embedded.objects need an IR reader)",
            ),
            ScanErrorKind::ThinArchive => f.write_str(": thin archives are not supported"),
        }
    }
}

impl std::error::Error for ScanError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ScanErrorKind::Binary(e) => Some(e),
            ScanErrorKind::Object(e) => Some(e),
            _ => None,
        }
    }
}

/// One binary of a region: its offset there and its bytes (owned when decompressed).
pub type Split<'data> = (u64, Cow<'data, [u8]>);

/// Splits a region holding offload binaries back to back into the binaries,
/// decompressing compressed ones. Each binary is validated; errors carry offsets
/// within `region`.
pub fn split(region: &[u8]) -> Result<Vec<Split<'_>>, PackageReadError> {
    let mut out = Vec::new();
    let mut at = 0u64;
    while at < region.len() as u64 {
        let rest = &region[at as usize..];
        let h = Header::read(rest).map_err(|e| e.at(at))?;
        let data = if h.is_compressed() {
            Cow::Owned(decompress(rest).map_err(|e| e.at(at))?)
        } else {
            Cow::Borrowed(&rest[..h.size as usize])
        };
        // Offsets of errors in a decompressed binary are offsets in its inflated form.
        OffloadBinary::parse(&data).map_err(|e| e.at(at))?;
        out.push((at, data));
        at += if h.version == 1 {
            h.size
        } else {
            h.size.next_multiple_of(ALIGNMENT)
        };
    }
    Ok(out)
}

/// Every offload binary in `data`, a file called `origin`, in LLVM's order.
pub fn scan<'data>(data: &'data [u8], origin: &str) -> Result<Vec<Found<'data>>, ScanError> {
    let mut out = Vec::new();
    scan_into(data, origin, &mut out, 0)?;
    Ok(out)
}

fn scan_into<'data>(
    data: &'data [u8],
    origin: &str,
    out: &mut Vec<Found<'data>>,
    depth: usize,
) -> Result<(), ScanError> {
    let err = |section: Option<String>, kind| ScanError {
        origin: origin.to_owned(),
        section,
        kind,
    };
    let mut push_region = |region: &'data [u8], section: Option<String>| {
        let binaries = split(region).map_err(|e| err(section.clone(), ScanErrorKind::Binary(e)))?;
        out.extend(binaries.into_iter().map(|(offset, data)| Found {
            origin: origin.to_owned(),
            section: section.clone(),
            offset,
            data,
        }));
        Ok(())
    };
    match ScanKind::identify(data) {
        ScanKind::OffloadBinary => push_region(data, None),
        ScanKind::Elf => {
            let obj = |e: object::Error| err(None, ScanErrorKind::Object(e));
            let is64 = crate::kind::elf_ident(data).is_some_and(|id| id.class == elf::ELFCLASS64);
            let regions = if is64 {
                elf_regions::<elf::FileHeader64<Endianness>>(data).map_err(obj)?
            } else {
                elf_regions::<elf::FileHeader32<Endianness>>(data).map_err(obj)?
            };
            for (name, region) in regions {
                push_region(region, Some(name))?;
            }
            Ok(())
        }
        ScanKind::Coff => {
            let obj = |e: object::Error| err(None, ScanErrorKind::Object(e));
            let file = object::File::parse(data).map_err(obj)?;
            for section in file.sections() {
                let name = section.name().map_err(obj)?;
                if !name.starts_with(".llvm.offloading") {
                    continue;
                }
                let name = format!("{name} [{}]", section.index().0);
                push_region(section.data().map_err(obj)?, Some(name))?;
            }
            Ok(())
        }
        ScanKind::Archive => {
            let obj = |e: object::Error| err(None, ScanErrorKind::Object(e));
            let archive = ArchiveFile::parse(data).map_err(obj)?;
            if archive.is_thin() {
                return Err(err(None, ScanErrorKind::ThinArchive));
            }
            if depth > 16 {
                return Err(err(
                    None,
                    ScanErrorKind::ScanKind("archives nested more than 16 deep".into()),
                ));
            }
            crate::bundle::archive::check_long_names(data)
                .map_err(|m| err(None, ScanErrorKind::ScanKind(m)))?;
            for member in archive.members() {
                let member = member.map_err(obj)?;
                let name = String::from_utf8_lossy(member.name()).into_owned();
                let member_data = member.data(data).map_err(obj)?;
                scan_into(member_data, &name, out, depth + 1)?;
            }
            Ok(())
        }
        ScanKind::Bitcode => Err(err(None, ScanErrorKind::Bitcode)),
        ScanKind::Other => Ok(()),
    }
}

/// The contents of every `SHT_LLVM_OFFLOADING` section, with a name for reports.
fn elf_regions<H: FileHeader<Endian = Endianness>>(
    data: &[u8],
) -> object::Result<Vec<(String, &[u8])>> {
    let header = H::parse(data)?;
    let endian = header.endian()?;
    let sections = header.sections(endian, data)?;
    let mut out = Vec::new();
    for (index, section) in sections.enumerate() {
        if section.sh_type(endian) != SHT_LLVM_OFFLOADING {
            continue;
        }
        let name = sections.section_name(endian, section).unwrap_or(b"?");
        let contents = section.data(endian, data)?;
        out.push((
            format!("{} [{}]", String::from_utf8_lossy(name), index.0),
            contents,
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::write::{Image, write_v1};
    use super::super::{ImageKind, LlvmVersion, OffloadKind};
    use super::*;

    /// Resource budget: 20,000 members named through one 1 MiB long-name line took 10 s to
    /// scan (release build), quadratic in the input; now refused at once. Ordinary long
    /// names still read.
    #[test]
    fn repeated_long_names_are_refused() {
        let archive = |line: usize, members: usize| {
            let mut table = vec![b'a'; line];
            table.extend_from_slice(b"/\n");
            let mut a = b"!<arch>\n".to_vec();
            a.extend_from_slice(format!("{:<16}{:<32}{:<10}`\n", "//", "", table.len()).as_bytes());
            a.extend_from_slice(&table);
            for i in 0..members {
                let name = format!("/{}", i % 1000);
                a.extend_from_slice(format!("{name:<16}{:<32}{:<10}`\n", "", 0).as_bytes());
            }
            a
        };
        let start = std::time::Instant::now();
        let e = scan(&archive(1 << 20, 20_000), "x.a").unwrap_err();
        assert!(e.to_string().contains("repeat its long-name table"), "{e}");
        assert!(start.elapsed().as_secs() < 2, "{:?}", start.elapsed());
        assert!(scan(&archive(100, 3), "x.a").unwrap().is_empty());
    }

    fn binary(data: &[u8], arch: &'static str) -> Vec<u8> {
        let img = Image::new(
            ImageKind::Object,
            OffloadKind::OpenMp,
            LlvmVersion::LLVM22,
            data,
        )
        .unwrap()
        .string("arch", arch);
        write_v1(&img).unwrap()
    }

    #[test]
    fn identify() {
        assert_eq!(
            ScanKind::identify(&crate::raw::OFFLOAD_MAGIC),
            ScanKind::OffloadBinary
        );
        assert_eq!(ScanKind::identify(b"!<arch>\n"), ScanKind::Archive);
        assert_eq!(ScanKind::identify(b"BC\xc0\xde...."), ScanKind::Bitcode);
        assert_eq!(ScanKind::identify(b"\x64\x86"), ScanKind::Coff);
        assert_eq!(ScanKind::identify(b"hello"), ScanKind::Other);
        let mut elf = b"\x7fELF\x02\x01\x01".to_vec();
        elf.resize(18, 0);
        elf[16] = 1;
        assert_eq!(ScanKind::identify(&elf), ScanKind::Elf);
        elf[16] = 4; // core file
        assert_eq!(ScanKind::identify(&elf), ScanKind::Other);
    }

    #[test]
    fn concatenation_and_errors() {
        let mut data = binary(b"one", "a");
        data.extend(binary(b"second", "b"));
        let found = scan(&data, "x.bin").unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[1].binary().entry(0).unwrap().image(), b"second");
        assert_eq!(found[1].offset, found[0].data.len() as u64);
        // Trailing padding is not a binary.
        data.extend_from_slice(&[0; 8]);
        let e = scan(&data, "x.bin").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("'x.bin': malformed offload binary at offset"),
            "{e}"
        );
        assert!(scan(b"plain text", "t").unwrap().is_empty());
        assert_eq!(
            scan(b"BC\xc0\xde\x35\x14", "k.bc").unwrap_err().kind,
            ScanErrorKind::Bitcode
        );
    }
}
