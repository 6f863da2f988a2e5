//! The walk over a file: [`Scanner`] finds every container by its kind (archives, objects,
//! bundles, offload binaries, NVIDIA fat binaries), recursively, and reports each with its
//! entries, where it lies and how it failed.

use crate::kind::FileKind;
use std::borrow::Cow;

use object::read::archive::ArchiveFile;
use object::{Object, ObjectSection, SectionKind};

use crate::bundle::BinaryBundle;
use crate::bundle::binary::{Descriptor, HeaderRead, read_header};
use crate::bundle::compressed::CompressedBundle;
use crate::bundle::sequence::{Item, Segment, Sequence, SequenceError};
use crate::id::EntryId;
use crate::package::scan::split;
use crate::package::{LlvmVersion, OffloadBinary};
use crate::raw::SHT_LLVM_OFFLOADING;

use super::decode::{decompress, header_only, ratio};
use super::error::{InspectError, InspectSource};
use super::options::Options;
use super::report::{Compression, ContainerReport, EntryReport, uri};

pub(super) struct Scanner<'p, 'data> {
    pub(super) path: &'p str,
    pub(super) file: &'data [u8],
    pub(super) containers: Vec<ContainerReport>,
    pub(super) entries: usize,
    pub(super) options: Options,
    /// Compressed bundles listed from their headers that `verify` decodes whole.
    pub(super) pending: Vec<Pending<'data>>,
}

/// A compressed bundle to decode whole and hash, for [`Options::verify`].
pub(super) struct Pending<'data> {
    pub(super) container: usize,
    pub(super) bundle: CompressedBundle<'data>,
    pub(super) place: Place,
    pub(super) offset: u64,
}

/// Where a region lies: archive member and section.
#[derive(Clone, Default)]
pub(super) struct Place {
    pub(super) member: Option<String>,
    pub(super) section: Option<String>,
}

impl Place {
    fn describe(&self) -> Option<String> {
        match (&self.member, &self.section) {
            (None, None) => None,
            (Some(m), None) => Some(format!("member '{m}'")),
            (None, Some(s)) => Some(format!("section {s}")),
            (Some(m), Some(s)) => Some(format!("member '{m}', section {s}")),
        }
    }
}

impl<'data> Scanner<'_, 'data> {
    fn err(&self, place: &Place, message: impl Into<String>) -> InspectError {
        InspectError {
            path: self.path.to_owned(),
            location: place.describe(),
            message: message.into(),
            source: None,
        }
    }

    /// The error of a reader that failed on `context` (empty when its message says it all).
    pub(super) fn failed(
        &self,
        place: &Place,
        context: impl Into<String>,
        source: impl Into<InspectSource>,
    ) -> InspectError {
        InspectError {
            source: Some(Box::new(source.into())),
            ..self.err(place, context)
        }
    }

    /// File offset of `part`, a slice of the file.
    fn offset_of(&self, part: &[u8]) -> u64 {
        (part.as_ptr() as usize - self.file.as_ptr() as usize) as u64
    }

    pub(super) fn scan(
        &mut self,
        data: &'data [u8],
        member: Option<String>,
        depth: usize,
    ) -> Result<&'static str, InspectError> {
        let place = Place {
            member,
            section: None,
        };
        match FileKind::sniff(data) {
            FileKind::Bundle => {
                self.bundles(data, &place)?;
                return Ok("bundle");
            }
            FileKind::CompressedBundle => {
                self.bundles(data, &place)?;
                return Ok("compressed-bundle");
            }
            FileKind::OffloadBinary => {
                self.offload_binaries(data, &place)?;
                return Ok("offload-binary");
            }
            FileKind::Archive | FileKind::ThinArchive => {
                self.archive(data, &place, depth)?;
                return Ok("archive");
            }
            FileKind::NvFatbin => {
                self.nv_fatbins(data, &place, true)?;
                return Ok("nv-fatbin");
            }
            _ => {}
        }
        match object::FileKind::parse(data) {
            Ok(
                object::FileKind::Elf32
                | object::FileKind::Elf64
                | object::FileKind::Coff
                | object::FileKind::CoffBig
                | object::FileKind::Pe32
                | object::FileKind::Pe64
                | object::FileKind::MachO32
                | object::FileKind::MachO64,
            ) => self.object(data, &place),
            _ => {
                // As cuobjdump: an NVIDIA fat binary anywhere in a file of no other kind.
                self.nv_fatbins(data, &place, false)?;
                Ok("other")
            }
        }
    }

    fn archive(
        &mut self,
        data: &'data [u8],
        place: &Place,
        depth: usize,
    ) -> Result<(), InspectError> {
        let archive = ArchiveFile::parse(data).map_err(|e| self.failed(place, "", e))?;
        if archive.is_thin() {
            return Err(self.err(place, "thin archives are not supported"));
        }
        if depth > 8 {
            return Err(self.err(place, "archives nested more than 8 deep"));
        }
        crate::bundle::archive::check_long_names(data).map_err(|m| self.err(place, m))?;
        for member in archive.members() {
            let member = member.map_err(|e| self.failed(place, "", e))?;
            let name = String::from_utf8_lossy(member.name()).into_owned();
            let body = member
                .data(data)
                .map_err(|e| self.failed(place, format!("member '{name}'"), e))?;
            self.scan(body, Some(name), depth + 1)?;
        }
        Ok(())
    }

    fn object(&mut self, data: &'data [u8], place: &Place) -> Result<&'static str, InspectError> {
        let file = object::File::parse(data).map_err(|e| self.failed(place, "", e))?;
        let format = match file.format() {
            object::BinaryFormat::Elf => "elf",
            object::BinaryFormat::Coff | object::BinaryFormat::Pe => "coff",
            object::BinaryFormat::MachO => "macho",
            _ => "other",
        };
        let elf = format == "elf";
        let found_before = self.containers.len();
        let mut data_sections = Vec::new();
        for section in file.sections() {
            let name = section
                .name()
                .map(str::to_owned)
                .unwrap_or_else(|_| format!("[{}]", section.index().0));
            let here = Place {
                member: place.member.clone(),
                section: Some(name.clone()),
            };
            let Some((off, size)) = section.file_range() else {
                continue;
            };
            let contents = usize::try_from(off)
                .ok()
                .zip(usize::try_from(size).ok())
                .and_then(|(o, n)| data.get(o..o.checked_add(n)?))
                .ok_or_else(|| self.err(&here, "section contents lie outside the file"))?;
            let offloading = if elf {
                section.kind() == SectionKind::Elf(SHT_LLVM_OFFLOADING)
            } else {
                format == "coff" && name.starts_with(".llvm.offloading")
            };
            if offloading {
                self.offload_binaries(contents, &here)?;
            } else if let Some(id) = crate::kind::bundle_section_id_str(&name) {
                self.fat_object_section(contents, id, &here);
            } else if name == ".hip_fatbin" || Sequence::starts_with_bundle(contents) {
                self.bundles(contents, &here)?;
            } else if name == crate::nvfatbin::SECTION
                || name == "__nv_fatbin"
                || crate::nvfatbin::Fatbin::is_fatbin(contents)
            {
                self.nv_fatbins(contents, &here, true)?;
            } else if matches!(
                section.kind(),
                SectionKind::ReadOnlyData | SectionKind::Data | SectionKind::ReadOnlyString
            ) {
                data_sections.push((contents, here));
            }
        }
        // An NVIDIA fat binary embedded in data (include_bytes!, a C array), as cuobjdump finds it:
        // 8-byte aligned in the file, well-formed. Looked for only in an object where no
        // container was found by its section: reading every data page of a large library
        // that has its device code in `.hip_fatbin` would cost what the data costs.
        if self.containers.len() == found_before {
            for (contents, here) in data_sections {
                self.nv_fatbins(contents, &here, false)?;
            }
        }
        Ok(format)
    }

    fn next_entry(&mut self) -> usize {
        self.entries += 1;
        self.entries - 1
    }

    fn fat_object_section(&mut self, contents: &'data [u8], id: &str, place: &Place) {
        let offset = self.offset_of(contents);
        let size = contents.len() as u64;
        let (kind, triple, arch) = split_id(id.as_bytes());
        let entry = EntryReport {
            index: self.next_entry(),
            id: id.to_owned(),
            offload_kind: kind,
            triple,
            arch,
            image_kind: None,
            compression: None,
            offset: Some(offset),
            size,
            uri: Some(uri(self.path, offset, size)),
            position: 0,
        };
        self.push(place, "fat-object-section", offset, size, None, vec![entry]);
    }

    fn push(
        &mut self,
        place: &Place,
        kind: &'static str,
        offset: u64,
        size: u64,
        compression: Option<Compression>,
        entries: Vec<EntryReport>,
    ) {
        self.containers.push(ContainerReport {
            index: self.containers.len(),
            kind,
            member: place.member.clone(),
            section: place.section.clone(),
            offset,
            size,
            compression,
            uri: uri(self.path, offset, size),
            entries,
        });
    }

    fn bundle_entries(&mut self, bundle: &BinaryBundle<'_>, base: Option<u64>) -> Vec<EntryReport> {
        let descriptors = bundle.entries().iter().map(|e| Descriptor {
            id: e.id,
            offset: e.offset,
            size: e.size(),
        });
        self.descriptor_entries(descriptors, base)
    }

    fn descriptor_entries<'a>(
        &mut self,
        descriptors: impl IntoIterator<Item = Descriptor<'a>>,
        base: Option<u64>,
    ) -> Vec<EntryReport> {
        let mut out = Vec::new();
        for (position, e) in descriptors.into_iter().enumerate() {
            let (kind, triple, arch) = split_id(e.id);
            let offset = base.map(|b| b + e.offset);
            out.push(EntryReport {
                index: self.next_entry(),
                id: String::from_utf8_lossy(e.id).into_owned(),
                offload_kind: kind,
                triple,
                arch,
                image_kind: None,
                compression: None,
                offset,
                size: e.size,
                uri: offset.map(|o| uri(self.path, o, e.size)),
                position,
            });
        }
        out
    }

    /// A compressed bundle of a sequence, at `offset` in the file: listed from its header
    /// when its entry table can be read that way (decoded whole later with
    /// [`Options::verify`]), else decoded whole now.
    fn compressed_bundle(
        &mut self,
        c: &CompressedBundle<'data>,
        seg: &Segment<'data>,
        offset: u64,
        place: &Place,
    ) -> Result<(), InspectError> {
        if self.listed_from_header(c, seg.len, offset, place) {
            return Ok(());
        }
        // The whole decode, with the checks a headers-only walk skipped.
        let strict;
        let c = if self.options.verify {
            c
        } else {
            strict = CompressedBundle::parse(seg.data).map_err(|error| {
                let error = SequenceError::Compressed {
                    offset: seg.offset,
                    error,
                };
                self.failed(place, "", error)
            })?;
            &strict
        };
        let context = || format!("compressed bundle at offset {offset}");
        let (compression, data) = decompress(c).map_err(|e| self.failed(place, context(), e))?;
        let bundle = BinaryBundle::parse(&data)
            .map_err(|e| self.failed(place, context(), e))?
            .ok_or_else(|| {
                let message = format!("{} does not hold a binary bundle", context());
                self.err(place, message)
            })?;
        let entries = self.bundle_entries(&bundle, None);
        let compression = Some(compression);
        self.push(
            place,
            "compressed-bundle",
            offset,
            seg.len,
            compression,
            entries,
        );
        Ok(())
    }

    /// Lists a compressed bundle of `len` bytes at `offset` from its entry table, decoding
    /// only that far; false when the table cannot be read that way.
    fn listed_from_header(
        &mut self,
        c: &CompressedBundle<'data>,
        len: u64,
        offset: u64,
        place: &Place,
    ) -> bool {
        let Some((compression, header)) = header_only(c) else {
            return false;
        };
        let descriptors = read_header(&header, compression.uncompressed_size);
        let Ok(Some(HeaderRead::Complete(descriptors, _))) = descriptors else {
            return false;
        };
        let entries = self.descriptor_entries(descriptors, None);
        let compression = Some(compression);
        self.push(
            place,
            "compressed-bundle",
            offset,
            len,
            compression,
            entries,
        );
        if self.options.verify {
            // Decoded whole and hashed later, beside the others.
            self.pending.push(Pending {
                container: self.containers.len() - 1,
                bundle: *c,
                place: place.clone(),
                offset,
            });
        }
        true
    }

    fn bundles(&mut self, region: &'data [u8], place: &Place) -> Result<(), InspectError> {
        let region_offset = self.offset_of(region);
        let sequence = if self.options.verify {
            Sequence::new(region)
        } else {
            Sequence::headers_only(region)
        };
        for seg in sequence {
            let seg = seg.map_err(|e| self.failed(place, "", e))?;
            let offset = region_offset + seg.offset;
            match &seg.item {
                Item::Binary(b) => {
                    let entries = self.bundle_entries(b, Some(offset));
                    self.push(place, "bundle", offset, seg.len, None, entries);
                }
                Item::Compressed(c) => self.compressed_bundle(c, &seg, offset, place)?,
            }
        }
        Ok(())
    }

    fn offload_binaries(&mut self, region: &'data [u8], place: &Place) -> Result<(), InspectError> {
        let region_offset = self.offset_of(region);
        let binaries = split(region).map_err(|e| self.failed(place, "", e))?;
        for (at, data) in binaries {
            let offset = region_offset + at;
            let borrowed = matches!(data, Cow::Borrowed(_));
            let bin = OffloadBinary::parse(&data).map_err(|e| self.failed(place, "", e))?;
            let stored = if borrowed {
                data.len() as u64
            } else {
                crate::package::read::Header::read(&region[at as usize..])
                    .map(|h| h.size)
                    .unwrap_or(0)
            };
            let compression = (!borrowed).then(|| Compression {
                method: "zstd/zlib",
                version: 3,
                compressed_size: stored,
                uncompressed_size: data.len() as u64,
                ratio: ratio(data.len() as u64, stored),
                hash_matches: None,
            });
            let mut entries = Vec::new();
            for (position, e) in bin.entries().enumerate() {
                let image = e.image();
                let image_offset = borrowed
                    .then(|| offset + (image.as_ptr() as usize - data.as_ptr() as usize) as u64);
                let kind = e.offload_kind();
                let kind_name = match (kind.up_to_llvm20(), kind.from_llvm21()) {
                    (Some(k), _) | (None, Some(k)) => k.name().to_owned(),
                    (None, None) => format!("kind{}", kind.raw()),
                };
                let triple = String::from_utf8_lossy(e.triple()).into_owned();
                let arch = String::from_utf8_lossy(e.arch()).into_owned();
                entries.push(EntryReport {
                    index: self.next_entry(),
                    id: format!("{kind_name}-{triple}-{arch}"),
                    offload_kind: kind_name,
                    triple,
                    arch,
                    image_kind: e
                        .image_kind()
                        .kind()
                        .map(|k| k.name(LlvmVersion::NEWEST_RELEASE)),
                    compression: None,
                    offset: image_offset,
                    size: image.len() as u64,
                    uri: image_offset.map(|o| uri(self.path, o, image.len() as u64)),
                    position,
                });
            }
            self.push(
                place,
                "offload-binary",
                offset,
                stored,
                compression,
                entries,
            );
        }
        Ok(())
    }
}

impl<'data> Scanner<'_, 'data> {
    /// The NVIDIA fat binaries in `region`; `strict`: a region meant to hold them (a raw fat
    /// binary, `.nv_fatbin`), where a malformed one is an error; otherwise malformed
    /// candidates are skipped, as cuobjdump skips them.
    fn nv_fatbins(
        &mut self,
        region: &'data [u8],
        place: &Place,
        strict: bool,
    ) -> Result<(), InspectError> {
        use crate::nvfatbin::{EntryKind, scan};
        let region_offset = self.offset_of(region);
        let (found, errors) = scan(region);
        if strict {
            if let Some((at, e)) = errors.into_iter().next() {
                return Err(self.failed(
                    place,
                    format!(
                        "NVIDIA fat binary at file offset {}",
                        region_offset + at as u64
                    ),
                    e,
                ));
            }
        }
        for f in found {
            let offset = region_offset + f.offset as u64;
            let mut entries = Vec::new();
            for (position, e) in f.fatbin.entries().iter().enumerate() {
                let compression = e.compression().map(|c| match c {
                    crate::nvfatbin::Compression::Lz4 => "lz4",
                    crate::nvfatbin::Compression::Zstd => "zstd",
                });
                let stored = e.stored();
                let at = offset + e.payload_offset() as u64;
                let arch = e.arch_name();
                let image_offset = compression.is_none().then_some(at);
                entries.push(EntryReport {
                    index: self.next_entry(),
                    id: format!("cuda-nvptx64-nvidia-cuda-{arch}"),
                    offload_kind: "cuda".to_owned(),
                    triple: "nvptx64-nvidia-cuda".to_owned(),
                    arch,
                    image_kind: Some(match e.kind() {
                        EntryKind::Elf => "cubin",
                        EntryKind::Ptx => "ptx",
                        EntryKind::Other(_) => "other",
                    }),
                    compression,
                    offset: image_offset,
                    size: stored.len() as u64,
                    uri: image_offset.map(|o| uri(self.path, o, stored.len() as u64)),
                    position,
                });
            }
            self.push(
                place,
                "nv-fatbin",
                offset,
                f.fatbin.size() as u64,
                None,
                entries,
            );
        }
        Ok(())
    }
}

/// (offload kind, triple, target ID) of a bundle entry ID.
fn split_id(id: &[u8]) -> (String, String, String) {
    let id = String::from_utf8_lossy(id);
    let parsed = EntryId::parse(&id);
    (
        parsed.kind().as_str().to_owned(),
        parsed.triple().to_string(),
        parsed.target_id().to_owned(),
    )
}
