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

use object::Endian as _;

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
    /// The ID as text (bytes that are not UTF-8 held as [`crate::id::raw`] holds them).
    pub fn id_str(&self) -> std::borrow::Cow<'_, str> {
        crate::id::raw::text(self.id)
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

/// Little helpers over byte slices in the object's byte order (`object`'s [`Endianness`]).
///
/// [`Endianness`]: object::Endianness
#[derive(Clone, Copy)]
struct Endian {
    order: object::Endianness,
}

impl Endian {
    fn u16(self, d: &[u8], at: usize) -> Option<u16> {
        Some(
            self.order
                .read_u16_bytes(d.get(at..at + 2)?.try_into().ok()?),
        )
    }
    fn u32(self, d: &[u8], at: usize) -> Option<u32> {
        Some(
            self.order
                .read_u32_bytes(d.get(at..at + 4)?.try_into().ok()?),
        )
    }
    fn u64(self, d: &[u8], at: usize) -> Option<u64> {
        Some(
            self.order
                .read_u64_bytes(d.get(at..at + 8)?.try_into().ok()?),
        )
    }
    fn put16(self, d: &mut [u8], at: usize, v: u16) {
        d[at..at + 2].copy_from_slice(&self.order.write_u16_bytes(v));
    }
    fn put32(self, d: &mut [u8], at: usize, v: u32) {
        d[at..at + 4].copy_from_slice(&self.order.write_u32_bytes(v));
    }
    fn put64(self, d: &mut [u8], at: usize, v: u64) {
        d[at..at + 8].copy_from_slice(&self.order.write_u64_bytes(v));
    }
}

mod elf {
    //! The ELF section appender and remover.

    use super::{Endian, FatObjectError, malformed, section_name};

    const SHT_PROGBITS: u32 = 1;
    const SHF_EXCLUDE: u64 = 0x8000_0000;
    const SHN_LORESERVE: u64 = 0xff00;
    const SHN_XINDEX: u16 = 0xffff;

    /// Where the fields of the ELF header and of a section header are, per class.
    struct Layout {
        is64: bool,
        e: Endian,
    }

    impl Layout {
        fn shoff_at(&self) -> usize {
            if self.is64 { 0x28 } else { 0x20 }
        }
        fn shentsize_at(&self) -> usize {
            if self.is64 { 0x3a } else { 0x2e }
        }
        fn shnum_at(&self) -> usize {
            self.shentsize_at() + 2
        }
        fn shstrndx_at(&self) -> usize {
            self.shentsize_at() + 4
        }
        fn shentsize(&self) -> usize {
            if self.is64 { 64 } else { 40 }
        }
        /// (offset, width) of a section header field: name, type, flags, addr, offset,
        /// size, link, info, addralign, entsize.
        fn field(&self, f: Field) -> (usize, usize) {
            let w = if self.is64 { 8 } else { 4 };
            match f {
                Field::Name => (0, 4),
                Field::Type => (4, 4),
                Field::Flags => (8, w),
                Field::Offset => (if self.is64 { 24 } else { 16 }, w),
                Field::Size => (if self.is64 { 32 } else { 20 }, w),
                Field::Link => (if self.is64 { 40 } else { 24 }, 4),
                Field::Align => (if self.is64 { 48 } else { 32 }, w),
            }
        }
        fn get(&self, d: &[u8], at: usize, width: usize) -> Option<u64> {
            if width == 8 {
                self.e.u64(d, at)
            } else {
                self.e.u32(d, at).map(u64::from)
            }
        }
        fn set(&self, d: &mut [u8], at: usize, width: usize, v: u64) -> Result<(), FatObjectError> {
            if width == 8 {
                self.e.put64(d, at, v);
            } else {
                let v = u32::try_from(v).map_err(|_| FatObjectError::TooLarge)?;
                self.e.put32(d, at, v);
            }
            Ok(())
        }
        fn sh(&self, header: &[u8], f: Field) -> u64 {
            let (at, w) = self.field(f);
            self.get(header, at, w).unwrap_or(0)
        }
        fn set_sh(&self, header: &mut [u8], f: Field, v: u64) -> Result<(), FatObjectError> {
            let (at, w) = self.field(f);
            self.set(header, at, w, v)
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
            let is64 = match data[4] {
                1 => false,
                2 => true,
                c => return Err(malformed(format!("unknown ELF class {c}"))),
            };
            let order = match data[5] {
                1 => object::Endianness::Little,
                2 => object::Endianness::Big,
                c => return Err(malformed(format!("unknown ELF data encoding {c}"))),
            };
            let l = Layout {
                is64,
                e: Endian { order },
            };
            if data.len() < if is64 { 64 } else { 52 } {
                return Err(malformed("truncated ELF header"));
            }
            let shoff = l.get(data, l.shoff_at(), if is64 { 8 } else { 4 });
            let shoff = shoff.ok_or_else(|| malformed("truncated ELF header"))?;
            if shoff == 0 {
                return Err(malformed("the object has no section header table"));
            }
            let shoff =
                usize::try_from(shoff).map_err(|_| malformed("section header table offset"))?;
            let entsize = l.e.u16(data, l.shentsize_at()).unwrap_or(0) as usize;
            if entsize != l.shentsize() {
                return Err(malformed(format!(
                    "section header size {entsize}, expected {}",
                    l.shentsize()
                )));
            }
            let first = data
                .get(shoff..shoff.saturating_add(entsize))
                .ok_or_else(|| malformed("section header table past the end of the file"))?;
            let mut shnum = l.e.u16(data, l.shnum_at()).unwrap_or(0) as u64;
            let extended_shnum = shnum == 0;
            if extended_shnum {
                shnum = l.sh(first, Field::Size);
            }
            let mut shstrndx = l.e.u16(data, l.shstrndx_at()).unwrap_or(0) as u64;
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
            out.extend_from_slice(&crate::id::raw::bytes(&section_name(id)));
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
        let (at, w) = (l.shoff_at(), if l.is64 { 8 } else { 4 });
        l.set(&mut out, at, w, shoff)?;
        let shnum_field = if total as u64 >= SHN_LORESERVE {
            0
        } else {
            total as u16
        };
        l.e.put16(&mut out, l.shnum_at(), shnum_field);
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
            // SHT_SYMTAB (2) and SHT_DYNSYM (11): symbols defined in a removed section.
            if ty == 2 || ty == 11 {
                check_symbols(&elf, h, first)?;
            }
        }
        let mut out = data.to_vec();
        let total = first;
        if elf.extended_shnum || total as u64 >= SHN_LORESERVE {
            let size_at = elf.shoff + l.field(Field::Size).0;
            let w = l.field(Field::Size).1;
            let v = if total as u64 >= SHN_LORESERVE {
                total as u64
            } else {
                0
            };
            l.set(&mut out, size_at, w, v)?;
        }
        let shnum_field = if total as u64 >= SHN_LORESERVE {
            0
        } else {
            total as u16
        };
        l.e.put16(&mut out, l.shnum_at(), shnum_field);
        Ok(out)
    }

    fn check_symbols(elf: &Elf<'_>, h: &[u8], first: usize) -> Result<(), FatObjectError> {
        let l = &elf.l;
        let (off, size) = (l.sh(h, Field::Offset), l.sh(h, Field::Size));
        let (entsize, shndx_at) = if l.is64 { (24, 6) } else { (16, 14) };
        let syms = usize::try_from(off)
            .ok()
            .zip(usize::try_from(size).ok())
            .and_then(|(o, s)| elf.data.get(o..o.checked_add(s)?))
            .ok_or_else(|| malformed("symbol table past the end of the file"))?;
        for (n, sym) in syms.chunks_exact(entsize).enumerate() {
            let shndx = l.e.u16(sym, shndx_at).unwrap_or(0) as usize;
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

    use super::{Endian, FatObjectError, malformed, section_name};

    const HEADER: usize = 20;
    const SECTION: usize = 40;
    const SYMBOL: usize = 18;
    /// `IMAGE_SCN_LNK_REMOVE | IMAGE_SCN_MEM_READ`, what llvm-objcopy writes for
    /// `readonly,exclude`.
    const CHARACTERISTICS: u32 = 0x4000_0800;
    const LE: Endian = Endian {
        order: object::Endianness::Little,
    };

    struct Coff<'a> {
        data: &'a [u8],
        nsections: usize,
        symtab: usize,
        nsymbols: usize,
    }

    impl<'a> Coff<'a> {
        fn parse(data: &'a [u8]) -> Result<Self, FatObjectError> {
            if data.len() < HEADER {
                return Err(malformed("truncated COFF header"));
            }
            if LE.u16(data, 0) == Some(0) && LE.u16(data, 2) == Some(0xffff) {
                return Err(FatObjectError::Unsupported(
                    "fat objects are not supported for COFF bigobj or import files".into(),
                ));
            }
            if LE.u16(data, 16) != Some(0) {
                return Err(FatObjectError::Unsupported(
                    "fat objects need a COFF object file, not an image with an optional header"
                        .into(),
                ));
            }
            let nsections = LE.u16(data, 2).unwrap_or(0) as usize;
            let symtab = LE.u32(data, 8).unwrap_or(0) as usize;
            let nsymbols = LE.u32(data, 12).unwrap_or(0) as usize;
            if HEADER + nsections * SECTION > data.len() {
                return Err(malformed("section table past the end of the file"));
            }
            if symtab != 0 && symtab.saturating_add(nsymbols.saturating_mul(SYMBOL)) > data.len() {
                return Err(malformed("symbol table past the end of the file"));
            }
            Ok(Coff {
                data,
                nsections,
                symtab,
                nsymbols,
            })
        }

        fn section(&self, i: usize) -> &'a [u8] {
            &self.data[HEADER + i * SECTION..HEADER + (i + 1) * SECTION]
        }

        /// The symbol table bytes and the string table (with its size field).
        fn tables(&self) -> Result<(&'a [u8], &'a [u8]), FatObjectError> {
            if self.symtab == 0 {
                return Ok((&[], &[]));
            }
            let syms = &self.data[self.symtab..self.symtab + self.nsymbols * SYMBOL];
            let str_at = self.symtab + self.nsymbols * SYMBOL;
            let strings = match LE.u32(self.data, str_at) {
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
        let total = coff.nsections + entries.len();
        if total > 65279 {
            return Err(FatObjectError::TooLarge);
        }
        let shift = entries.len() * SECTION;
        let table_end = HEADER + coff.nsections * SECTION;
        let moved = |p: u32| -> Result<u32, FatObjectError> {
            if p == 0 {
                return Ok(0);
            }
            let p = p as usize;
            if p < table_end {
                return Err(malformed("a file pointer points into the section table"));
            }
            u32::try_from(p + shift).map_err(|_| FatObjectError::TooLarge)
        };
        let (syms, strings) = coff.tables()?;

        let mut out = Vec::with_capacity(host.len() + shift + 4096);
        out.extend_from_slice(&host[..HEADER]);
        LE.put16(&mut out, 2, total as u16);
        let mut va_end = 0u64;
        for i in 0..coff.nsections {
            let mut h = coff.section(i).to_vec();
            for at in [20, 24, 28] {
                let p = LE.u32(&h, at).unwrap_or(0);
                LE.put32(&mut h, at, moved(p)?);
            }
            va_end = va_end.max(
                u64::from(LE.u32(&h, 12).unwrap_or(0)) + u64::from(LE.u32(&h, 8).unwrap_or(0)),
            );
            out.extend_from_slice(&h);
        }
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
            out.extend_from_slice(&crate::id::raw::bytes(&section_name(id)));
            out.push(0);
        }
        let strings_len =
            u32::try_from(out.len() - strings_at).map_err(|_| FatObjectError::TooLarge)?;
        LE.put32(&mut out, strings_at, strings_len);
        let symtab_field = u32::try_from(symtab_at).map_err(|_| FatObjectError::TooLarge)?;
        LE.put32(&mut out, 8, symtab_field);

        let mut va = va_end;
        for (i, (_, payload)) in entries.iter().enumerate() {
            let data_at = out.len();
            out.extend_from_slice(payload);
            let mut h = [0u8; SECTION];
            let name = format!("/{}", name_offsets[i]);
            if name.len() > 8 {
                return Err(FatObjectError::TooLarge);
            }
            h[..name.len()].copy_from_slice(name.as_bytes());
            let size = u32::try_from(payload.len()).map_err(|_| FatObjectError::TooLarge)?;
            LE.put32(&mut h, 8, size);
            LE.put32(
                &mut h,
                12,
                u32::try_from(va).map_err(|_| FatObjectError::TooLarge)?,
            );
            LE.put32(&mut h, 16, size);
            let ptr = u32::try_from(data_at).map_err(|_| FatObjectError::TooLarge)?;
            LE.put32(&mut h, 20, if payload.is_empty() { 0 } else { ptr });
            LE.put32(&mut h, 36, CHARACTERISTICS);
            va += u64::from(size);
            let at = new_headers_at + i * SECTION;
            out[at..at + SECTION].copy_from_slice(&h);
        }
        Ok(out)
    }

    pub(super) fn truncate_sections(
        data: &[u8],
        first: usize,
        count: usize,
    ) -> Result<Vec<u8>, FatObjectError> {
        let coff = Coff::parse(data)?;
        if first + count != coff.nsections {
            return Err(FatObjectError::NotRemovable(
                "they are not the last sections of the section table".into(),
            ));
        }
        let (syms, _) = coff.tables()?;
        let mut i = 0;
        while i + SYMBOL <= syms.len() {
            let sym = &syms[i..i + SYMBOL];
            let number = LE.u16(sym, 12).unwrap_or(0) as i16;
            if number > 0 && number as usize > first {
                return Err(FatObjectError::NotRemovable(format!(
                    "symbol {} is defined in section {number}",
                    i / SYMBOL
                )));
            }
            i += SYMBOL * (1 + sym[17] as usize);
        }
        let mut out = data.to_vec();
        LE.put16(&mut out, 2, first as u16);
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
    fn tiny_elf() -> Vec<u8> {
        let mut d = vec![0u8; 64];
        d[..4].copy_from_slice(b"\x7fELF");
        d[4] = 2;
        d[5] = 1;
        d[6] = 1;
        d[16] = 1; // ET_REL
        d[18] = 62; // EM_X86_64
        d[0x34] = 64; // e_ehsize
        d[0x3a] = 64;
        let text_at = d.len();
        d.extend_from_slice(b"ABCD");
        let names_at = d.len();
        d.extend_from_slice(b"\0.text\0.shstrtab\0");
        let names_len = d.len() - names_at;
        while d.len() % 8 != 0 {
            d.push(0);
        }
        let shoff = d.len();
        let sh = |name: u32, ty: u32, flags: u64, off: usize, size: usize, align: u64| {
            let mut h = [0u8; 64];
            h[0..4].copy_from_slice(&name.to_le_bytes());
            h[4..8].copy_from_slice(&ty.to_le_bytes());
            h[8..16].copy_from_slice(&flags.to_le_bytes());
            h[24..32].copy_from_slice(&(off as u64).to_le_bytes());
            h[32..40].copy_from_slice(&(size as u64).to_le_bytes());
            h[48..56].copy_from_slice(&align.to_le_bytes());
            h
        };
        let hs = [
            [0u8; 64],
            sh(1, 1, 6, text_at, 4, 4),
            sh(7, 3, 0, names_at, names_len, 1),
        ];
        for h in hs {
            d.extend_from_slice(&h);
        }
        d[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
        d[0x3c] = 3;
        d[0x3e] = 2;
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
        let shoff = u64::from_le_bytes(bad[0x28..0x30].try_into().unwrap()) as usize;
        // Section 3 (after null, .text, .shstrtab): sh_offset past the end.
        let field = shoff + 3 * 64 + 24;
        bad[field..field + 8].copy_from_slice(&0x10_0000u64.to_le_bytes());
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
