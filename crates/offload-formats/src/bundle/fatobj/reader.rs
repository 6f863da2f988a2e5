//! Reading: the bundle sections of an object file ([`FatObject`]), in section-table order,
//! each with its contents or why they cannot be read.

use super::error::FatObjectError;
use super::section::{ObjectFormat, is_host_placeholder};

/// One bundle section of a fat object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FatObjectEntry<'data> {
    /// The bundle ID: the section name after the 24-byte magic.
    pub id: &'data [u8],
    /// The section contents ([`HOST_PLACEHOLDER`](super::HOST_PLACEHOLDER) for the host entry).
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
