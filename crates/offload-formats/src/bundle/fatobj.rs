//! Fat objects: a host object file that carries one `__CLANG_OFFLOAD_BUNDLE__<ID>` section
//! per bundle entry (clang-offload-bundler `-type=o` with an object host input).
//!
//! LLVM's bundler does not write these itself: it runs
//!
//! ```text
//! llvm-objcopy --add-section=__CLANG_OFFLOAD_BUNDLE__<ID>=<file> \
//!              --set-section-flags=__CLANG_OFFLOAD_BUNDLE__<ID>=readonly,exclude … -- <host> <out>
//! ```
//!
//! with a temporary one-byte file holding `00` for the host entry. This module writes the
//! same sections directly, without llvm-objcopy:
//!
//! - **ELF** (32/64-bit, either byte order; x86-64, AArch64 and ppc64le are tested): the
//!   host object's bytes are kept as they are. The payloads are appended, then a new
//!   section-name string table (the old one plus the new names), then a new section header
//!   table: the old headers (the string table's header now pointing at its new copy) followed
//!   by one header per entry, in entry order: `SHT_PROGBITS`, flags `SHF_EXCLUDE`, alignment
//!   1, address 0 — what `llvm-readelf -S` shows for llvm-objcopy's output. The old string
//!   table and header table stay in the file, unreferenced. Extended section numbering
//!   (`e_shnum == 0`, `e_shstrndx == SHN_XINDEX`) is read and written.
//! - **COFF** (relocatable objects, not bigobj or images): the new section headers are
//!   inserted after the existing ones (every file pointer behind them moves by 40 bytes per
//!   section), the long names go to a copy of the symbol and string tables appended at the
//!   end, followed by the payloads. Characteristics are `IMAGE_SCN_LNK_REMOVE |
//!   IMAGE_SCN_MEM_READ` (0x40000800), `VirtualSize` is the payload size and
//!   `VirtualAddress` the running sum of the added sizes, as llvm-objcopy writes them.
//! - **Mach-O** and other formats: [`FatObjectError::Unsupported`] (llvm-objcopy 19 and 22
//!   fail there too: "option is not supported for MachO").
//!
//! Reading ([`FatObject::parse`]) lists the bundle sections in section-table order, as
//! LLVM's `ObjectFileHandler` does, for every format the `object` crate reads. A section
//! whose contents lie outside the file is an error naming it and its offset;
//! [`FatObject::parse_sections`] still lists it (with its error) beside the intact ones, as
//! LLVM lists every section by name and fails only when it reads the broken one.
//!
//! The host entry: a section whose contents are the single byte `00` stands for the host
//! object itself. LLVM 19 and 22 extract it by running `llvm-objcopy --regex
//! --remove-section=__CLANG_OFFLOAD_BUNDLE__.*`, which re-lays out the whole file.
//! [`remove_bundle_sections`] instead keeps every byte and takes the bundle sections out of
//! the section header table (ELF: `e_shnum` shrinks; COFF: `NumberOfSections` shrinks). It
//! requires the bundle sections to be the last sections of the table and unreferenced by
//! symbols and other sections — true of every fat object written by llvm-objcopy or by this
//! module; anything else is reported, never guessed at. The result links as the original
//! host object does, but is not byte-identical to llvm-objcopy's output.

use std::fmt;

use super::MAGIC;

/// The payload of the host entry's section: one zero byte.
pub const HOST_PLACEHOLDER: &[u8] = &[0];

/// Whether section contents stand for the host object (exactly one `00` byte).
pub fn is_host_placeholder(data: &[u8]) -> bool {
    data == HOST_PLACEHOLDER
}

/// The section name of a bundle entry: `__CLANG_OFFLOAD_BUNDLE__<id>`.
pub fn section_name(id: &str) -> String {
    format!("{}{id}", std::str::from_utf8(MAGIC).unwrap_or_default())
}

/// The object file formats this module tells apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ObjectFormat {
    /// ELF (any class and byte order).
    Elf,
    /// COFF relocatable object.
    Coff,
    /// Mach-O (thin).
    MachO,
    /// Anything else the `object` crate reads (wasm, XCOFF, PE images, …).
    Other,
}

/// Why a fat object cannot be read or written.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FatObjectError {
    /// The object file could not be parsed (the message says why).
    Malformed(String),
    /// The `object` crate cannot read the object file, or one of its sections.
    Object {
        /// The index of the section that cannot be read, when the error is about one.
        section: Option<usize>,
        /// Why.
        error: object::read::Error,
    },
    /// The format (or variant) has no fat-object writer here.
    Unsupported(String),
    /// The bundle sections cannot be removed without renumbering sections.
    NotRemovable(String),
    /// The result would not fit the format's size fields.
    TooLarge,
    /// A bundle section's contents cannot be read: the section header places them (partly)
    /// outside the file, or the `object` crate refuses them. LLVM lists such a section by
    /// name but fails with "The end of the file was unexpectedly encountered" when it
    /// reads it.
    UnreadableSection {
        /// The section's index in the `object` crate's numbering (see
        /// [`FatObjectEntry::section`]).
        section: usize,
        /// The bundle ID (the section name after the magic).
        id: Vec<u8>,
        /// The contents' offset and size as the section header claims them.
        range: Option<(u64, u64)>,
        /// The size of the whole file.
        file_size: u64,
        /// Why the `object` crate cannot read them.
        error: object::read::Error,
    },
}

impl fmt::Display for FatObjectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FatObjectError::Malformed(m) => write!(f, "malformed object file: {m}"),
            FatObjectError::Object {
                section: None,
                error,
            } => write!(f, "malformed object file: {error}"),
            FatObjectError::Object {
                section: Some(index),
                error,
            } => write!(f, "malformed object file: section {index}: {error}"),
            FatObjectError::Unsupported(m) => write!(f, "{m}"),
            FatObjectError::NotRemovable(m) => {
                write!(f, "cannot remove the offload bundle sections: {m}")
            }
            FatObjectError::TooLarge => f.write_str("the fat object would be too large"),
            FatObjectError::UnreadableSection {
                section,
                id,
                range,
                file_size,
                error,
            } => {
                let name = String::from_utf8_lossy(id);
                let magic = std::str::from_utf8(MAGIC).unwrap_or_default();
                write!(f, "section {section} '{magic}{name}': ")?;
                match range {
                    Some((offset, size)) if offset.saturating_add(*size) > *file_size => write!(
                        f,
                        "the end of the file was unexpectedly encountered: contents at offset {offset} ({offset:#x}), {size} bytes, but the file has {file_size} bytes"
                    ),
                    _ => write!(f, "contents cannot be read: {error}"),
                }
            }
        }
    }
}

impl std::error::Error for FatObjectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FatObjectError::Object { error, .. }
            | FatObjectError::UnreadableSection { error, .. } => Some(error),
            _ => None,
        }
    }
}

fn malformed(m: impl Into<String>) -> FatObjectError {
    FatObjectError::Malformed(m.into())
}

/// One bundle section of a fat object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FatObjectEntry<'data> {
    /// The bundle ID: the section name after the 24-byte magic.
    pub id: &'data [u8],
    /// The section contents ([`HOST_PLACEHOLDER`] for the host entry).
    pub data: &'data [u8],
    /// Offset of the contents in the file.
    pub offset: u64,
    /// Index of the section in the `object` crate's numbering (ELF: the section header
    /// index; COFF: the 1-based section number).
    pub section: usize,
}

impl FatObjectEntry<'_> {
    /// The ID as text (bytes that are not UTF-8 held as [`crate::id::spell`] holds them).
    pub fn id_str(&self) -> std::borrow::Cow<'_, str> {
        crate::id::spell::text(self.id)
    }

    /// Whether this is the host entry (contents exactly one `00` byte).
    pub fn is_host(&self) -> bool {
        is_host_placeholder(self.data)
    }
}

/// One bundle section as the section table names it, whether or not its contents can be
/// read ([`FatObject::parse_sections`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FatObjectSection<'data> {
    /// The bundle ID: the section name after the 24-byte magic.
    pub id: &'data [u8],
    /// Index of the section (see [`FatObjectEntry::section`]).
    pub section: usize,
    /// The contents, or why they cannot be read
    /// ([`FatObjectError::UnreadableSection`]).
    pub contents: Result<FatObjectEntry<'data>, FatObjectError>,
}

/// The bundle sections of an object file, in section-table order.
#[derive(Clone, Debug)]
pub struct FatObject<'data> {
    format: ObjectFormat,
    entries: Vec<FatObjectEntry<'data>>,
}

impl<'data> FatObject<'data> {
    /// Parses `data` as an object file and collects its bundle sections (an object with
    /// none is a valid, empty fat object). Errors when `data` is not a readable object or
    /// when a bundle section's contents cannot be read
    /// ([`FatObjectError::UnreadableSection`], the first such section).
    pub fn parse(data: &'data [u8]) -> Result<Self, FatObjectError> {
        let (format, sections) = Self::parse_sections(data)?;
        let entries = sections
            .into_iter()
            .map(|s| s.contents)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(FatObject { format, entries })
    }

    /// Like [`FatObject::parse`], but a bundle section whose contents cannot be read (its
    /// offset past the end of the file, say) does not fail the whole object: it is listed
    /// with its error, as LLVM lists every bundle section by name and fails only when it
    /// reads one. Errors only when `data` is not a readable object.
    pub fn parse_sections(
        data: &'data [u8],
    ) -> Result<(ObjectFormat, Vec<FatObjectSection<'data>>), FatObjectError> {
        use object::{Object, ObjectSection};
        let file = object::File::parse(data).map_err(|error| FatObjectError::Object {
            section: None,
            error,
        })?;
        let format = match file.format() {
            object::BinaryFormat::Elf => ObjectFormat::Elf,
            object::BinaryFormat::Coff => ObjectFormat::Coff,
            object::BinaryFormat::MachO => ObjectFormat::MachO,
            _ => ObjectFormat::Other,
        };
        let mut sections = Vec::new();
        for section in file.sections() {
            let index = section.index().0;
            let Ok(name) = section.name_bytes() else {
                continue;
            };
            let Some(id) = crate::kind::bundle_section_id(name) else {
                continue;
            };
            let range = section.file_range();
            let contents = match section.data() {
                Ok(contents) => Ok(FatObjectEntry {
                    id,
                    data: contents,
                    offset: range.map_or(0, |(o, _)| o),
                    section: index,
                }),
                Err(error) => Err(FatObjectError::UnreadableSection {
                    section: index,
                    id: id.to_vec(),
                    range,
                    file_size: data.len() as u64,
                    error,
                }),
            };
            sections.push(FatObjectSection {
                id,
                section: index,
                contents,
            });
        }
        Ok((format, sections))
    }

    /// The object format.
    pub fn format(&self) -> ObjectFormat {
        self.format
    }

    /// The bundle entries in section-table order.
    pub fn entries(&self) -> &[FatObjectEntry<'data>] {
        &self.entries
    }
}

/// Writes a fat object: `host` with one bundle section per `(id, payload)` appended in
/// the given order. Pass [`HOST_PLACEHOLDER`] as the host entry's payload, as LLVM does.
///
/// ```
/// # use offload_formats::bundle::fatobj::{FatObject, HOST_PLACEHOLDER, write_fat_object};
/// # fn demo(host_object: &[u8]) -> Result<(), Box<dyn std::error::Error>> {
/// let fat = write_fat_object(
///     host_object,
///     &[("host-x86_64-unknown-linux-gnu-", HOST_PLACEHOLDER), ("hip-amdgcn-amd-amdhsa--gfx90a", b"BC\xc0\xde")],
/// )?;
/// let parsed = FatObject::parse(&fat)?;
/// assert_eq!(parsed.entries()[1].data, b"BC\xc0\xde");
/// # Ok(()) }
/// ```
pub fn write_fat_object(host: &[u8], entries: &[(&str, &[u8])]) -> Result<Vec<u8>, FatObjectError> {
    match detect(host) {
        Some(ObjectFormat::Elf) => elf::add_sections(host, entries),
        Some(ObjectFormat::Coff) => coff::add_sections(host, entries),
        Some(ObjectFormat::MachO) => Err(FatObjectError::Unsupported(
            "fat objects with a Mach-O host are not supported (llvm-objcopy cannot write them either)"
                .into(),
        )),
        _ => Err(FatObjectError::Unsupported(
            "fat objects are supported for ELF and COFF host objects only".into(),
        )),
    }
}

/// The host object back from a fat object: `data` with every bundle section taken out of
/// the section table (see the module documentation for what is kept). An object without
/// bundle sections comes back unchanged.
pub fn remove_bundle_sections(data: &[u8]) -> Result<Vec<u8>, FatObjectError> {
    let fat = FatObject::parse(data)?;
    if fat.entries().is_empty() {
        return Ok(data.to_vec());
    }
    let first = fat.entries()[0].section;
    match fat.format() {
        ObjectFormat::Elf => elf::truncate_sections(data, first, fat.entries().len()),
        // COFF section numbers start at 1.
        ObjectFormat::Coff => {
            coff::truncate_sections(data, first.saturating_sub(1), fat.entries().len())
        }
        _ => Err(FatObjectError::Unsupported(
            "removing offload bundle sections is supported for ELF and COFF objects only".into(),
        )),
    }
}

/// The format of `data` by its magic bytes, when it is one this module writes or names.
pub fn detect(data: &[u8]) -> Option<ObjectFormat> {
    let kind = crate::kind::FileKind::sniff(data);
    if kind.is_elf() {
        return Some(ObjectFormat::Elf);
    }
    if kind == crate::kind::FileKind::MachO {
        return Some(ObjectFormat::MachO);
    }
    match object::FileKind::parse(data) {
        Ok(object::FileKind::Coff) => Some(ObjectFormat::Coff),
        Ok(_) => Some(ObjectFormat::Other),
        Err(_) => None,
    }
}

/// The llvm-objcopy command line LLVM runs to write a fat object (for `-###`): each
/// argument double-quoted, separated by spaces, ending in a newline. `inputs[i]` is the
/// file of `ids[i]`; the host's (`host_index`) is `host_temp`, LLVM's temporary file with
/// the one zero byte; `host_input` is the host object and `output` the fat object.
pub fn objcopy_add_command(
    objcopy: &str,
    ids: &[&str],
    inputs: &[&str],
    host_index: usize,
    host_temp: &str,
    host_input: &str,
    output: &str,
) -> String {
    let mut args = vec![objcopy.to_owned()];
    for (i, id) in ids.iter().enumerate() {
        let file = if i == host_index {
            host_temp
        } else {
            inputs[i]
        };
        let name = section_name(id);
        args.push(format!("--add-section={name}={file}"));
        args.push(format!("--set-section-flags={name}=readonly,exclude"));
    }
    args.extend(["--".into(), host_input.into(), output.into()]);
    quote_command(&args)
}

/// The llvm-objcopy command line LLVM runs to extract the host object from a fat object
/// (for `-###`); `temp` is LLVM's temporary output file.
pub fn objcopy_remove_command(objcopy: &str, input: &str, temp: &str) -> String {
    let args = [
        objcopy.to_owned(),
        "--regex".into(),
        format!("--remove-section={}.*", section_name("")),
        "--".into(),
        input.into(),
        temp.into(),
    ];
    quote_command(&args)
}

fn quote_command(args: &[String]) -> String {
    let mut s = String::new();
    for (i, a) in args.iter().enumerate() {
        if i != 0 {
            s.push(' ');
        }
        s.push('"');
        s.push_str(a);
        s.push('"');
    }
    s.push('\n');
    s
}

mod elf {
    //! The ELF section appender and remover.

    use object::elf::{
        FileHeader32, FileHeader64, SHN_XINDEX, SHT_DYNSYM, SHT_PROGBITS, SHT_SYMTAB,
        SectionHeader32, SectionHeader64, Sym32, Sym64,
    };
    use object::pod;

    use super::{FatObjectError, malformed, section_name};

    const SHF_EXCLUDE: u64 = object::elf::SHF_EXCLUDE as u64;
    const SHN_LORESERVE: u64 = object::elf::SHN_LORESERVE as u64;

    type E = object::Endianness;

    /// The class and byte order of an ELF file: which of object's header types its bytes are.
    struct Layout {
        is64: bool,
        e: E,
    }

    fn too_large(v: u64) -> Result<u32, FatObjectError> {
        u32::try_from(v).map_err(|_| FatObjectError::TooLarge)
    }

    impl Layout {
        fn shentsize(&self) -> usize {
            if self.is64 {
                size_of::<SectionHeader64<E>>()
            } else {
                size_of::<SectionHeader32<E>>()
            }
        }
        fn header64<'d>(&self, data: &'d [u8]) -> &'d FileHeader64<E> {
            pod::from_bytes(data)
                .expect("the ELF header's length was checked")
                .0
        }
        fn header32<'d>(&self, data: &'d [u8]) -> &'d FileHeader32<E> {
            pod::from_bytes(data)
                .expect("the ELF header's length was checked")
                .0
        }
        /// `e_shoff`, `e_shentsize`, `e_shnum` and `e_shstrndx` of a whole ELF header.
        fn file_fields(&self, data: &[u8]) -> (u64, u16, u16, u16) {
            let e = self.e;
            if self.is64 {
                let h = self.header64(data);
                let (shoff, shentsize) = (h.e_shoff.get(e), h.e_shentsize.get(e));
                (shoff, shentsize, h.e_shnum.get(e), h.e_shstrndx.get(e))
            } else {
                let h = self.header32(data);
                let (shoff, shentsize) = (h.e_shoff.get(e).into(), h.e_shentsize.get(e));
                (shoff, shentsize, h.e_shnum.get(e), h.e_shstrndx.get(e))
            }
        }
        /// Sets `e_shoff` and `e_shnum` in a whole ELF header.
        fn set_table(
            &self,
            data: &mut [u8],
            shoff: Option<u64>,
            shnum: u16,
        ) -> Result<(), FatObjectError> {
            let e = self.e;
            let whole = "the ELF header's length was checked";
            if self.is64 {
                let h: &mut FileHeader64<E> = pod::from_bytes_mut(data).expect(whole).0;
                if let Some(shoff) = shoff {
                    h.e_shoff.set(e, shoff);
                }
                h.e_shnum.set(e, shnum);
            } else {
                let h: &mut FileHeader32<E> = pod::from_bytes_mut(data).expect(whole).0;
                if let Some(shoff) = shoff {
                    h.e_shoff.set(e, too_large(shoff)?);
                }
                h.e_shnum.set(e, shnum);
            }
            Ok(())
        }
        /// A field of the section header `header` (exactly [`Layout::shentsize`] bytes).
        fn sh(&self, header: &[u8], f: Field) -> u64 {
            let e = self.e;
            if self.is64 {
                let h: &SectionHeader64<E> = pod::from_bytes(header).expect("a section header").0;
                match f {
                    Field::Name => h.sh_name.get(e).into(),
                    Field::Type => h.sh_type.get(e).into(),
                    Field::Flags => h.sh_flags.get(e),
                    Field::Offset => h.sh_offset.get(e),
                    Field::Size => h.sh_size.get(e),
                    Field::Link => h.sh_link.get(e).into(),
                    Field::Align => h.sh_addralign.get(e),
                }
            } else {
                let h: &SectionHeader32<E> = pod::from_bytes(header).expect("a section header").0;
                u64::from(match f {
                    Field::Name => h.sh_name.get(e),
                    Field::Type => h.sh_type.get(e),
                    Field::Flags => h.sh_flags.get(e),
                    Field::Offset => h.sh_offset.get(e),
                    Field::Size => h.sh_size.get(e),
                    Field::Link => h.sh_link.get(e),
                    Field::Align => h.sh_addralign.get(e),
                })
            }
        }
        /// Sets a field of the section header `header`; a value its field cannot hold is
        /// [`FatObjectError::TooLarge`].
        fn set_sh(&self, header: &mut [u8], f: Field, v: u64) -> Result<(), FatObjectError> {
            let e = self.e;
            if self.is64 {
                let h: &mut SectionHeader64<E> =
                    pod::from_bytes_mut(header).expect("a section header").0;
                match f {
                    Field::Name => h.sh_name.set(e, too_large(v)?),
                    Field::Type => h.sh_type.set(e, too_large(v)?),
                    Field::Flags => h.sh_flags.set(e, v),
                    Field::Offset => h.sh_offset.set(e, v),
                    Field::Size => h.sh_size.set(e, v),
                    Field::Link => h.sh_link.set(e, too_large(v)?),
                    Field::Align => h.sh_addralign.set(e, v),
                }
            } else {
                let h: &mut SectionHeader32<E> =
                    pod::from_bytes_mut(header).expect("a section header").0;
                let v = too_large(v)?;
                match f {
                    Field::Name => h.sh_name.set(e, v),
                    Field::Type => h.sh_type.set(e, v),
                    Field::Flags => h.sh_flags.set(e, v),
                    Field::Offset => h.sh_offset.set(e, v),
                    Field::Size => h.sh_size.set(e, v),
                    Field::Link => h.sh_link.set(e, v),
                    Field::Align => h.sh_addralign.set(e, v),
                }
            }
            Ok(())
        }
        /// `st_shndx` of each symbol of a symbol table's contents.
        fn symbol_sections<'d>(&self, syms: &'d [u8]) -> Box<dyn Iterator<Item = u16> + 'd> {
            let e = self.e;
            if self.is64 {
                let (all, _) = pod::slice_from_bytes::<Sym64<E>>(syms, syms.len() / 24)
                    .expect("whole symbols");
                Box::new(all.iter().map(move |s| s.st_shndx.get(e)))
            } else {
                let (all, _) = pod::slice_from_bytes::<Sym32<E>>(syms, syms.len() / 16)
                    .expect("whole symbols");
                Box::new(all.iter().map(move |s| s.st_shndx.get(e)))
            }
        }
    }

    #[derive(Clone, Copy)]
    enum Field {
        Name,
        Type,
        Flags,
        Offset,
        Size,
        Link,
        Align,
    }

    /// The parsed ELF header facts the appender needs.
    struct Elf<'a> {
        data: &'a [u8],
        l: Layout,
        shoff: usize,
        shnum: usize,
        shstrndx: usize,
        extended_shnum: bool,
    }

    impl<'a> Elf<'a> {
        fn parse(data: &'a [u8]) -> Result<Self, FatObjectError> {
            if data.len() < 0x34 || !crate::kind::FileKind::sniff(data).is_elf() {
                return Err(malformed("truncated ELF header"));
            }
            let id =
                crate::kind::elf_ident(data).ok_or_else(|| malformed("truncated ELF header"))?;
            let is64 = match id.class {
                object::elf::ELFCLASS32 => false,
                object::elf::ELFCLASS64 => true,
                c => return Err(malformed(format!("unknown ELF class {c}"))),
            };
            let e = match id.data {
                object::elf::ELFDATA2LSB => E::Little,
                object::elf::ELFDATA2MSB => E::Big,
                c => return Err(malformed(format!("unknown ELF data encoding {c}"))),
            };
            let l = Layout { is64, e };
            let header_size = if is64 {
                size_of::<FileHeader64<E>>()
            } else {
                size_of::<FileHeader32<E>>()
            };
            if data.len() < header_size {
                return Err(malformed("truncated ELF header"));
            }
            let (shoff, entsize, shnum, shstrndx) = l.file_fields(data);
            if shoff == 0 {
                return Err(malformed("the object has no section header table"));
            }
            let shoff =
                usize::try_from(shoff).map_err(|_| malformed("section header table offset"))?;
            let entsize = entsize as usize;
            if entsize != l.shentsize() {
                return Err(malformed(format!(
                    "section header size {entsize}, expected {}",
                    l.shentsize()
                )));
            }
            let first = data
                .get(shoff..shoff.saturating_add(entsize))
                .ok_or_else(|| malformed("section header table past the end of the file"))?;
            let mut shnum = u64::from(shnum);
            let extended_shnum = shnum == 0;
            if extended_shnum {
                shnum = l.sh(first, Field::Size);
            }
            let mut shstrndx = u64::from(shstrndx);
            if shstrndx == u64::from(SHN_XINDEX) {
                shstrndx = l.sh(first, Field::Link);
            }
            let shnum = usize::try_from(shnum).map_err(|_| malformed("section count"))?;
            let end = shnum
                .checked_mul(entsize)
                .and_then(|n| n.checked_add(shoff))
                .ok_or_else(|| malformed("section header table size"))?;
            if end > data.len() {
                return Err(malformed("section header table past the end of the file"));
            }
            let shstrndx = shstrndx as usize;
            if shstrndx == 0 || shstrndx >= shnum {
                return Err(malformed("no section name string table"));
            }
            Ok(Elf {
                data,
                l,
                shoff,
                shnum,
                shstrndx,
                extended_shnum,
            })
        }

        fn header(&self, i: usize) -> &'a [u8] {
            let n = self.l.shentsize();
            &self.data[self.shoff + i * n..self.shoff + (i + 1) * n]
        }
    }

    pub(super) fn add_sections(
        host: &[u8],
        entries: &[(&str, &[u8])],
    ) -> Result<Vec<u8>, FatObjectError> {
        let elf = Elf::parse(host)?;
        let l = &elf.l;
        let strtab_header = elf.header(elf.shstrndx);
        let (str_off, str_size) = (
            l.sh(strtab_header, Field::Offset),
            l.sh(strtab_header, Field::Size),
        );
        let old_names = usize::try_from(str_off)
            .ok()
            .zip(usize::try_from(str_size).ok())
            .and_then(|(o, s)| host.get(o..o.checked_add(s)?))
            .ok_or_else(|| malformed("section name string table past the end of the file"))?;

        let payload_len: usize = entries.iter().map(|(_, p)| p.len()).sum();
        let mut out = Vec::with_capacity(host.len() + payload_len + 4096);
        out.extend_from_slice(host);
        let mut placed = Vec::with_capacity(entries.len());
        for (_, payload) in entries {
            placed.push(out.len() as u64);
            out.extend_from_slice(payload);
        }
        // The new section name table: the old one, then the new names.
        let strtab_at = out.len() as u64;
        out.extend_from_slice(old_names);
        if old_names.last().is_some_and(|&b| b != 0) {
            out.push(0);
        }
        let mut name_offsets = Vec::with_capacity(entries.len());
        for (id, _) in entries {
            name_offsets.push(out.len() as u64 - strtab_at);
            out.extend_from_slice(&crate::id::spell::bytes(&section_name(id)));
            out.push(0);
        }
        let strtab_len = out.len() as u64 - strtab_at;
        let align = if l.is64 { 8 } else { 4 };
        while out.len() % align != 0 {
            out.push(0);
        }
        let shoff = out.len() as u64;
        let total = elf.shnum + entries.len();
        for i in 0..elf.shnum {
            let mut h = elf.header(i).to_vec();
            if i == elf.shstrndx {
                l.set_sh(&mut h, Field::Offset, strtab_at)?;
                l.set_sh(&mut h, Field::Size, strtab_len)?;
            }
            if i == 0 && (elf.extended_shnum || total as u64 >= SHN_LORESERVE) {
                l.set_sh(&mut h, Field::Size, total as u64)?;
            }
            out.extend_from_slice(&h);
        }
        for (i, (_, payload)) in entries.iter().enumerate() {
            let mut h = vec![0u8; l.shentsize()];
            l.set_sh(&mut h, Field::Name, name_offsets[i])?;
            l.set_sh(&mut h, Field::Type, u64::from(SHT_PROGBITS))?;
            l.set_sh(&mut h, Field::Flags, SHF_EXCLUDE)?;
            l.set_sh(&mut h, Field::Offset, placed[i])?;
            l.set_sh(&mut h, Field::Size, payload.len() as u64)?;
            l.set_sh(&mut h, Field::Align, 1)?;
            out.extend_from_slice(&h);
        }
        // The ELF header: new table offset and count.
        let shnum_field = if total as u64 >= SHN_LORESERVE {
            0
        } else {
            total as u16
        };
        l.set_table(&mut out, Some(shoff), shnum_field)?;
        Ok(out)
    }

    /// Drops sections `first..first + count` (which must be the last ones) from the table.
    pub(super) fn truncate_sections(
        data: &[u8],
        first: usize,
        count: usize,
    ) -> Result<Vec<u8>, FatObjectError> {
        let elf = Elf::parse(data)?;
        let l = &elf.l;
        if first + count != elf.shnum {
            return Err(FatObjectError::NotRemovable(
                "they are not the last sections of the section table".into(),
            ));
        }
        if elf.shstrndx >= first {
            return Err(FatObjectError::NotRemovable(
                "the section name string table comes after them".into(),
            ));
        }
        // Nothing kept may refer to a removed section.
        for i in 1..first {
            let h = elf.header(i);
            let link = l.sh(h, Field::Link) as usize;
            let ty = l.sh(h, Field::Type) as u32;
            if link >= first {
                return Err(FatObjectError::NotRemovable(format!(
                    "section {i} links to section {link}"
                )));
            }
            // Symbols defined in a removed section.
            if ty == SHT_SYMTAB || ty == SHT_DYNSYM {
                check_symbols(&elf, h, first)?;
            }
        }
        let mut out = data.to_vec();
        let total = first;
        if elf.extended_shnum || total as u64 >= SHN_LORESERVE {
            let v = if total as u64 >= SHN_LORESERVE {
                total as u64
            } else {
                0
            };
            let first = &mut out[elf.shoff..elf.shoff + l.shentsize()];
            l.set_sh(first, Field::Size, v)?;
        }
        let shnum_field = if total as u64 >= SHN_LORESERVE {
            0
        } else {
            total as u16
        };
        l.set_table(&mut out, None, shnum_field)?;
        Ok(out)
    }

    fn check_symbols(elf: &Elf<'_>, h: &[u8], first: usize) -> Result<(), FatObjectError> {
        let l = &elf.l;
        let (off, size) = (l.sh(h, Field::Offset), l.sh(h, Field::Size));
        let syms = usize::try_from(off)
            .ok()
            .zip(usize::try_from(size).ok())
            .and_then(|(o, s)| elf.data.get(o..o.checked_add(s)?))
            .ok_or_else(|| malformed("symbol table past the end of the file"))?;
        for (n, shndx) in l.symbol_sections(syms).enumerate() {
            let shndx = shndx as usize;
            if shndx >= first && shndx < SHN_LORESERVE as usize {
                return Err(FatObjectError::NotRemovable(format!(
                    "symbol {n} is defined in section {shndx}"
                )));
            }
        }
        Ok(())
    }
}

mod coff {
    //! The COFF section appender and remover (relocatable objects).

    use object::LittleEndian as LE;
    use object::endian::U32;
    use object::pe::{ImageFileHeader, ImageSectionHeader, ImageSymbol};
    use object::pod::{self, bytes_of};

    use super::{FatObjectError, malformed, section_name};

    const HEADER: usize = size_of::<ImageFileHeader>();
    const SECTION: usize = size_of::<ImageSectionHeader>();
    const SYMBOL: usize = size_of::<ImageSymbol>();
    /// `IMAGE_SCN_LNK_REMOVE | IMAGE_SCN_MEM_READ`, what llvm-objcopy writes for
    /// `readonly,exclude`.
    const CHARACTERISTICS: u32 = object::pe::IMAGE_SCN_LNK_REMOVE | object::pe::IMAGE_SCN_MEM_READ;

    fn u32_of(v: usize) -> Result<u32, FatObjectError> {
        u32::try_from(v).map_err(|_| FatObjectError::TooLarge)
    }

    struct Coff<'a> {
        data: &'a [u8],
        header: &'a ImageFileHeader,
        sections: &'a [ImageSectionHeader],
        symtab: usize,
        nsymbols: usize,
    }

    impl<'a> Coff<'a> {
        fn parse(data: &'a [u8]) -> Result<Self, FatObjectError> {
            let Ok((header, rest)) = pod::from_bytes::<ImageFileHeader>(data) else {
                return Err(malformed("truncated COFF header"));
            };
            let nsections = header.number_of_sections.get(LE) as usize;
            if header.machine.get(LE) == 0 && nsections == 0xffff {
                return Err(FatObjectError::Unsupported(
                    "fat objects are not supported for COFF bigobj or import files".into(),
                ));
            }
            if header.size_of_optional_header.get(LE) != 0 {
                return Err(FatObjectError::Unsupported(
                    "fat objects need a COFF object file, not an image with an optional header"
                        .into(),
                ));
            }
            let symtab = header.pointer_to_symbol_table.get(LE) as usize;
            let nsymbols = header.number_of_symbols.get(LE) as usize;
            let (sections, _) = pod::slice_from_bytes(rest, nsections)
                .map_err(|()| malformed("section table past the end of the file"))?;
            if symtab != 0 && symtab.saturating_add(nsymbols.saturating_mul(SYMBOL)) > data.len() {
                return Err(malformed("symbol table past the end of the file"));
            }
            Ok(Coff {
                data,
                header,
                sections,
                symtab,
                nsymbols,
            })
        }

        /// The symbol table bytes and the string table (with its size field).
        fn tables(&self) -> Result<(&'a [u8], &'a [u8]), FatObjectError> {
            if self.symtab == 0 {
                return Ok((&[], &[]));
            }
            let syms = &self.data[self.symtab..self.symtab + self.nsymbols * SYMBOL];
            let str_at = self.symtab + self.nsymbols * SYMBOL;
            let strings = match crate::raw::u32_at(self.data, str_at) {
                None => &[][..],
                Some(n) => self
                    .data
                    .get(str_at..str_at + (n as usize).max(4))
                    .ok_or_else(|| malformed("string table past the end of the file"))?,
            };
            Ok((syms, strings))
        }
    }

    pub(super) fn add_sections(
        host: &[u8],
        entries: &[(&str, &[u8])],
    ) -> Result<Vec<u8>, FatObjectError> {
        let coff = Coff::parse(host)?;
        let total = coff.sections.len() + entries.len();
        if total > 65279 {
            return Err(FatObjectError::TooLarge);
        }
        let shift = entries.len() * SECTION;
        let table_end = HEADER + coff.sections.len() * SECTION;
        let (syms, strings) = coff.tables()?;

        let mut out = Vec::with_capacity(host.len() + shift + 4096);
        let mut header = *coff.header;
        header.number_of_sections.set(LE, total as u16);
        out.extend_from_slice(bytes_of(&header));
        let va_end = moved_sections(&mut out, coff.sections, table_end, shift)?;
        let new_headers_at = out.len();
        out.resize(out.len() + shift, 0);
        out.extend_from_slice(&host[table_end..]);

        // Symbol table copy and the string table with the new long names.
        let symtab_at = out.len();
        out.extend_from_slice(syms);
        let strings_at = out.len();
        if strings.len() >= 4 {
            out.extend_from_slice(strings);
        } else {
            out.extend_from_slice(&[4, 0, 0, 0]);
        }
        let mut name_offsets = Vec::with_capacity(entries.len());
        for (id, _) in entries {
            name_offsets.push(out.len() - strings_at);
            out.extend_from_slice(&crate::id::spell::bytes(&section_name(id)));
            out.push(0);
        }
        let strings_len = u32_of(out.len() - strings_at)?;
        let size_field: &mut U32<LE> = pod::from_bytes_mut(&mut out[strings_at..]).unwrap().0;
        size_field.set(LE, strings_len);
        let file_header: &mut ImageFileHeader = pod::from_bytes_mut(&mut out).unwrap().0;
        file_header
            .pointer_to_symbol_table
            .set(LE, u32_of(symtab_at)?);

        let mut va = va_end;
        for (i, (_, payload)) in entries.iter().enumerate() {
            let data_at = out.len();
            out.extend_from_slice(payload);
            let h = new_section(name_offsets[i], payload.len(), va, data_at)?;
            va += u64::from(h.size_of_raw_data.get(LE));
            let at = new_headers_at + i * SECTION;
            out[at..at + SECTION].copy_from_slice(bytes_of(&h));
        }
        Ok(out)
    }

    /// Appends `sections` to `out` with their file pointers moved by `shift` (the new section
    /// headers inserted at `table_end`); returns where their virtual addresses end.
    fn moved_sections(
        out: &mut Vec<u8>,
        sections: &[ImageSectionHeader],
        table_end: usize,
        shift: usize,
    ) -> Result<u64, FatObjectError> {
        let moved = |p: &mut U32<LE>| -> Result<(), FatObjectError> {
            let at = p.get(LE) as usize;
            if at == 0 {
                return Ok(());
            }
            if at < table_end {
                return Err(malformed("a file pointer points into the section table"));
            }
            p.set(LE, u32_of(at + shift)?);
            Ok(())
        };
        let mut va_end = 0u64;
        for section in sections {
            let mut h = *section;
            moved(&mut h.pointer_to_raw_data)?;
            moved(&mut h.pointer_to_relocations)?;
            moved(&mut h.pointer_to_linenumbers)?;
            let end = u64::from(h.virtual_address.get(LE)) + u64::from(h.virtual_size.get(LE));
            va_end = va_end.max(end);
            out.extend_from_slice(bytes_of(&h));
        }
        Ok(va_end)
    }

    /// The header of a new section of `size` bytes at `data_at`, named by the string table
    /// offset `name_offset`, at virtual address `va`.
    fn new_section(
        name_offset: usize,
        size: usize,
        va: u64,
        data_at: usize,
    ) -> Result<ImageSectionHeader, FatObjectError> {
        let name = format!("/{name_offset}");
        if name.len() > 8 {
            return Err(FatObjectError::TooLarge);
        }
        let mut h = *pod::from_bytes::<ImageSectionHeader>(&[0; SECTION])
            .unwrap()
            .0;
        h.name[..name.len()].copy_from_slice(name.as_bytes());
        let size32 = u32_of(size)?;
        h.virtual_size.set(LE, size32);
        h.virtual_address
            .set(LE, u32::try_from(va).map_err(|_| FatObjectError::TooLarge)?);
        h.size_of_raw_data.set(LE, size32);
        let ptr = u32_of(data_at)?;
        h.pointer_to_raw_data
            .set(LE, if size == 0 { 0 } else { ptr });
        h.characteristics.set(LE, CHARACTERISTICS);
        Ok(h)
    }

    pub(super) fn truncate_sections(
        data: &[u8],
        first: usize,
        count: usize,
    ) -> Result<Vec<u8>, FatObjectError> {
        let coff = Coff::parse(data)?;
        if first + count != coff.sections.len() {
            return Err(FatObjectError::NotRemovable(
                "they are not the last sections of the section table".into(),
            ));
        }
        let (syms, _) = coff.tables()?;
        let mut i = 0;
        while let Some(sym) = crate::raw::read_at::<ImageSymbol>(syms, i * SYMBOL) {
            let number = sym.section_number.get(LE) as i16;
            if number > 0 && number as usize > first {
                return Err(FatObjectError::NotRemovable(format!(
                    "symbol {i} is defined in section {number}"
                )));
            }
            i += 1 + sym.number_of_aux_symbols as usize;
        }
        let mut out = data.to_vec();
        let header: &mut ImageFileHeader = pod::from_bytes_mut(&mut out).unwrap().0;
        header.number_of_sections.set(LE, first as u16);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreadable_objects_keep_the_object_error() {
        use std::error::Error as _;
        let mut bad = tiny_elf();
        bad.truncate(100);
        let e = FatObject::parse(&bad).unwrap_err();
        let FatObjectError::Object {
            section: None,
            error,
        } = &e
        else {
            panic!("{e:?}");
        };
        assert_eq!(e.to_string(), format!("malformed object file: {error}"));
        assert_eq!(
            e.source()
                .and_then(|s| s.downcast_ref::<object::read::Error>()),
            Some(error)
        );
    }

    /// A minimal relocatable ELF64 LE object: null, .text ("ABCD"), .shstrtab.
    /// A 64-bit little-endian relocatable ELF file with `.text` ("ABCD") and `.shstrtab`.
    fn tiny_elf() -> Vec<u8> {
        use object::elf::{FileHeader64, SectionHeader64};
        use object::pod::{bytes_of, from_bytes_mut};
        let e = object::LittleEndian;
        let mut d = vec![0u8; size_of::<FileHeader64<object::LittleEndian>>()];
        let text_at = d.len();
        d.extend_from_slice(b"ABCD");
        let names_at = d.len();
        d.extend_from_slice(b"\0.text\0.shstrtab\0");
        let names_len = d.len() - names_at;
        d.resize(d.len().next_multiple_of(8), 0);
        let shoff = d.len();
        let sh = |name: u32, ty: u32, flags: u64, off: usize, size: usize, align: u64| {
            let mut h: SectionHeader64<object::LittleEndian> =
                *object::pod::from_bytes(&[0; 64]).unwrap().0;
            h.sh_name.set(e, name);
            h.sh_type.set(e, ty);
            h.sh_flags.set(e, flags);
            h.sh_offset.set(e, off as u64);
            h.sh_size.set(e, size as u64);
            h.sh_addralign.set(e, align);
            h
        };
        let hs = [
            sh(0, 0, 0, 0, 0, 0),
            sh(1, 1, 6, text_at, 4, 4),
            sh(7, 3, 0, names_at, names_len, 1),
        ];
        for h in hs {
            d.extend_from_slice(bytes_of(&h));
        }
        let h: &mut FileHeader64<object::LittleEndian> = from_bytes_mut(&mut d).unwrap().0;
        h.e_ident.magic = object::elf::ELFMAG;
        h.e_ident.class = object::elf::ELFCLASS64;
        h.e_ident.data = object::elf::ELFDATA2LSB;
        h.e_ident.version = 1;
        h.e_type.set(e, object::elf::ET_REL);
        h.e_machine.set(e, object::elf::EM_X86_64);
        h.e_ehsize.set(e, 64);
        h.e_shentsize.set(e, 64);
        h.e_shoff.set(e, shoff as u64);
        h.e_shnum.set(e, 3);
        h.e_shstrndx.set(e, 2);
        d
    }

    #[test]
    fn elf_round_trip() {
        let host = tiny_elf();
        let fat = write_fat_object(
            &host,
            &[
                ("host-x86_64-unknown-linux-gnu-", HOST_PLACEHOLDER),
                ("hip-amdgcn-amd-amdhsa--gfx90a:xnack+", b"device code"),
            ],
        )
        .unwrap();
        assert!(fat.starts_with(&host[..0x28]));
        let parsed = FatObject::parse(&fat).unwrap();
        assert_eq!(parsed.format(), ObjectFormat::Elf);
        let ids: Vec<_> = parsed.entries().iter().map(|e| e.id_str()).collect();
        assert_eq!(
            ids,
            [
                "host-x86_64-unknown-linux-gnu-",
                "hip-amdgcn-amd-amdhsa--gfx90a:xnack+"
            ]
        );
        assert!(parsed.entries()[0].is_host());
        assert_eq!(parsed.entries()[1].data, b"device code");
        assert_eq!(parsed.entries()[1].section, 4);

        let stripped = remove_bundle_sections(&fat).unwrap();
        let again = FatObject::parse(&stripped).unwrap();
        assert!(again.entries().is_empty());
        use object::{Object, ObjectSection};
        let f = object::File::parse(&*stripped).unwrap();
        let text = f.section_by_name(".text").unwrap();
        assert_eq!(text.data().unwrap(), b"ABCD");
    }

    #[test]
    fn unreadable_sections_are_listed_with_their_error() {
        let fat = write_fat_object(
            &tiny_elf(),
            &[
                ("hip-amdgcn-amd-amdhsa--gfx906", b"broken"),
                ("hip-amdgcn-amd-amdhsa--gfx1100", b"intact"),
            ],
        )
        .unwrap();
        let mut bad = fat.clone();
        let e = object::LittleEndian;
        let header: &object::elf::FileHeader64<object::LittleEndian> =
            object::pod::from_bytes(&bad).unwrap().0;
        // Section 3 (after null, .text, .shstrtab): sh_offset past the end.
        let at = header.e_shoff.get(e) as usize + 3 * 64;
        let section: &mut object::elf::SectionHeader64<object::LittleEndian> =
            object::pod::from_bytes_mut(&mut bad[at..]).unwrap().0;
        section.sh_offset.set(e, 0x10_0000);
        let e = FatObject::parse(&bad).unwrap_err();
        assert!(matches!(
            e,
            FatObjectError::UnreadableSection { section: 3, .. }
        ));
        assert_eq!(
            e.to_string(),
            format!(
                "section 3 '__CLANG_OFFLOAD_BUNDLE__hip-amdgcn-amd-amdhsa--gfx906': the end of the file was unexpectedly encountered: contents at offset 1048576 (0x100000), 6 bytes, but the file has {} bytes",
                bad.len()
            )
        );
        let (format, sections) = FatObject::parse_sections(&bad).unwrap();
        assert_eq!(format, ObjectFormat::Elf);
        assert_eq!(sections.len(), 2);
        assert_eq!(sections[0].id, b"hip-amdgcn-amd-amdhsa--gfx906");
        assert!(sections[0].contents.is_err());
        assert_eq!(sections[1].contents.as_ref().unwrap().data, b"intact");
        assert!(remove_bundle_sections(&bad).is_err());
    }

    #[test]
    fn unsupported_and_malformed() {
        assert!(matches!(
            write_fat_object(b"\xcf\xfa\xed\xfe\x07\0\0\x01", &[]),
            Err(FatObjectError::Unsupported(_))
        ));
        assert!(matches!(
            write_fat_object(b"not an object", &[]),
            Err(FatObjectError::Unsupported(_))
        ));
        let mut bad = tiny_elf();
        bad.truncate(100);
        assert!(write_fat_object(&bad, &[("x", b"y")]).is_err());
    }

    #[test]
    fn objcopy_commands() {
        let cmd = objcopy_add_command(
            "/usr/bin/llvm-objcopy",
            &[
                "host-x86_64-unknown-linux-gnu-",
                "hip-amdgcn-amd-amdhsa--gfx906",
            ],
            &["h.o", "d.bc"],
            0,
            "/tmp/t.tmp",
            "h.o",
            "out.o",
        );
        assert_eq!(
            cmd,
            "\"/usr/bin/llvm-objcopy\" \"--add-section=__CLANG_OFFLOAD_BUNDLE__host-x86_64-unknown-linux-gnu-=/tmp/t.tmp\" \"--set-section-flags=__CLANG_OFFLOAD_BUNDLE__host-x86_64-unknown-linux-gnu-=readonly,exclude\" \"--add-section=__CLANG_OFFLOAD_BUNDLE__hip-amdgcn-amd-amdhsa--gfx906=d.bc\" \"--set-section-flags=__CLANG_OFFLOAD_BUNDLE__hip-amdgcn-amd-amdhsa--gfx906=readonly,exclude\" \"--\" \"h.o\" \"out.o\"\n"
        );
        assert_eq!(
            objcopy_remove_command("llvm-objcopy", "a.o", "/tmp/x"),
            "\"llvm-objcopy\" \"--regex\" \"--remove-section=__CLANG_OFFLOAD_BUNDLE__.*\" \"--\" \"a.o\" \"/tmp/x\"\n"
        );
    }
}
