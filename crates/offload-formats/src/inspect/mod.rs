//! Finding every embedded device-code container in any file, and extracting entries.
//!
//! [`inspect`] lists, for a raw bundle, a compressed bundle (CCOB), an offload binary, an
//! object file, an executable, a shared library or a static archive, every container and
//! every entry in it, with file offsets and `file://<path>#offset=<n>&size=<m>` URIs (the
//! URI form of LLVM's `OffloadBundle` library and of `roc-obj-ls`). What is looked at:
//!
//! - sections named `.hip_fatbin`, and any other section whose contents start with a bundle
//!   or `CCOB` magic (PE images truncate the name to `.hip_fat`): walked as a
//!   [`Sequence`] of bundles, so the several bundles a linker concatenates, with zero
//!   padding between them, are all found;
//! - `__CLANG_OFFLOAD_BUNDLE__<ID>` sections (fat objects): one entry each;
//! - ELF sections of type `SHT_LLVM_OFFLOADING` whatever their name, and COFF sections named
//!   `.llvm.offloading*`: offload binaries back to back;
//! - archive members, recursively;
//! - NVIDIA fat binaries ([`crate::nvfatbin`]): a raw fat binary file, sections named
//!   `.nv_fatbin` (`__nv_fatbin` in Mach-O) or starting with the magic `0xBA55ED50`, and, as
//!   `cuobjdump` does, any 8-byte aligned fat binary in the data sections of an object where
//!   no container was found by its sections, or in a file of no other kind. Each cubin and PTX entry is listed with its architecture
//!   (`sm_80` for a cubin, `compute_80` for PTX) and image kind (`cubin`, `ptx`); entries
//!   compressed by NVIDIA's tools (LZ4, zstd) are listed with their compression and stored
//!   size, and extracted by decompressing them.
//!
//! Entries stored uncompressed have a file offset and a URI; entries inside a compressed
//! container have neither (their container has both) and are extracted by decompressing it.
//! Malformed input is an [`InspectError`], never a panic.

mod extract;

use crate::kind::FileKind;
use std::borrow::Cow;
use std::fmt;

use object::read::archive::ArchiveFile;
use object::{Object, ObjectSection, SectionKind};

use crate::bundle::BinaryBundle;
use crate::bundle::binary::{Descriptor, HeaderRead, read_header};
use crate::bundle::compressed::{CompressedBundle, CompressedError, Limits};
use crate::bundle::sequence::{Item, Segment, Sequence, SequenceError};
use crate::id::EntryId;
use crate::package::scan::split;
use crate::package::{LlvmVersion, OffloadBinary};
use crate::raw::SHT_LLVM_OFFLOADING;

pub use extract::{ExtractError, Selected, Selector, entry_bytes, range, select};

/// Everything found in one file.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Report {
    /// The path as given.
    pub path: String,
    /// What the file is: `bundle`, `compressed-bundle`, `offload-binary`, `nv-fatbin`, `elf`,
    /// `coff`, `macho`, `archive` or `other`.
    pub format: &'static str,
    /// File size in bytes.
    pub size: u64,
    /// The containers, in file order (archive members in member order).
    pub containers: Vec<ContainerReport>,
}

impl Report {
    /// All entries of all containers, with their container.
    pub fn entries(&self) -> impl Iterator<Item = (&ContainerReport, &EntryReport)> {
        self.containers
            .iter()
            .flat_map(|c| c.entries.iter().map(move |e| (c, e)))
    }
}

/// One container: a bundle, a compressed bundle, an offload binary, an NVIDIA fat binary or a
/// fat-object section.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ContainerReport {
    /// Position in [`Report::containers`].
    pub index: usize,
    /// `bundle`, `compressed-bundle`, `offload-binary`, `nv-fatbin` (an NVIDIA fat binary) or
    /// `fat-object-section`.
    pub kind: &'static str,
    /// The archive member holding it, if any.
    pub member: Option<String>,
    /// The section holding it, if any.
    pub section: Option<String>,
    /// File offset of the container.
    pub offset: u64,
    /// Size in bytes (as stored, i.e. compressed for a compressed bundle).
    pub size: u64,
    /// Compression details of a compressed container.
    pub compression: Option<Compression>,
    /// `file://<path>#offset=<offset>&size=<size>`.
    pub uri: String,
    /// Its entries.
    pub entries: Vec<EntryReport>,
}

/// How a container is compressed.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Compression {
    /// `zstd` or `zlib`.
    pub method: &'static str,
    /// Format version (CCOB 1–3, offload binary 3).
    pub version: u16,
    /// Stored size, header included.
    pub compressed_size: u64,
    /// Size once decompressed.
    pub uncompressed_size: u64,
    /// `uncompressed_size / compressed_size` (LLVM's "compression rate").
    pub ratio: f64,
    /// Whether the MD5 stored in a compressed bundle's header matches its contents: checked
    /// only when [`Options::verify`] asks (`None` otherwise, and for formats without a stored
    /// hash).
    pub hash_matches: Option<bool>,
}

/// One entry: a code object (or other payload) for one target.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct EntryReport {
    /// Position among all entries of the report (what `extract --index` takes).
    pub index: usize,
    /// The bundle entry ID (`hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+`); for an offload
    /// binary `<offload-kind>-<triple>-<arch>`.
    pub id: String,
    /// Offload kind (`hip`, `hipv4`, `host`, `openmp`, …).
    pub offload_kind: String,
    /// Target triple.
    pub triple: String,
    /// Target ID or architecture (`gfx90a:xnack+`), empty for none.
    pub arch: String,
    /// Image kind of an offload-binary entry (`o`, `bc`, …) or of an NVIDIA fat binary entry
    /// (`cubin`, `ptx`, `other`).
    pub image_kind: Option<&'static str>,
    /// How an NVIDIA fat binary entry is compressed (`lz4`, `zstd`): such an entry is listed
    /// with its stored (compressed) size and no offset; extracting it decompresses it.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub compression: Option<&'static str>,
    /// File offset of the payload; `None` inside a compressed container.
    pub offset: Option<u64>,
    /// Payload size.
    pub size: u64,
    /// `file://` URI of the payload; `None` inside a compressed container.
    pub uri: Option<String>,
    /// Position of the entry in its container (header order).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub(crate) position: usize,
}

/// A file that cannot be inspected. Displayed as `'<path>'[, <location>]: <message>[: <source>]`
/// (the message alone, or the source alone when the message is empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InspectError {
    /// The file.
    pub path: String,
    /// Where in it: archive member and/or section, when known.
    pub location: Option<String>,
    /// What is wrong, or what was being read when `source` failed (may be empty then).
    pub message: String,
    /// The error of the reader that refused the file, when one did (boxed: the errors of
    /// the readers are large, and most inspections succeed).
    pub source: Option<Box<InspectSource>>,
}

impl fmt::Display for InspectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}'", self.path)?;
        if let Some(l) = &self.location {
            write!(f, ", {l}")?;
        }
        match &self.source {
            None => write!(f, ": {}", self.message),
            Some(s) if self.message.is_empty() => write!(f, ": {s}"),
            Some(s) => write!(f, ": {}: {s}", self.message),
        }
    }
}

impl std::error::Error for InspectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(InspectSource::inner)
    }
}

/// The error of the reader that refused an inspected file. Displayed as that error.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InspectSource {
    /// An object file or archive the `object` crate cannot read.
    Object(object::read::Error),
    /// A bundle sequence that cannot be walked.
    Sequence(SequenceError),
    /// A compressed bundle that cannot be decompressed.
    Compressed(CompressedError),
    /// A malformed bundle.
    Bundle(crate::bundle::BundleReadError),
    /// A malformed offload binary.
    OffloadBinary(crate::package::PackageReadError),
    /// A malformed NVIDIA fat binary.
    NvFatbin(crate::nvfatbin::FatbinError),
}

impl InspectSource {
    /// The wrapped error.
    pub fn inner(&self) -> &(dyn std::error::Error + 'static) {
        match self {
            InspectSource::Object(e) => e,
            InspectSource::Sequence(e) => e,
            InspectSource::Compressed(e) => e,
            InspectSource::Bundle(e) => e,
            InspectSource::OffloadBinary(e) => e,
            InspectSource::NvFatbin(e) => e,
        }
    }
}

impl fmt::Display for InspectSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.inner(), f)
    }
}

impl std::error::Error for InspectSource {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner().source()
    }
}

macro_rules! inspect_source_from {
    ($($variant:ident($ty:ty)),* $(,)?) => {$(
        impl From<$ty> for InspectSource {
            fn from(e: $ty) -> Self {
                InspectSource::$variant(e)
            }
        }
    )*};
}

inspect_source_from!(
    Object(object::read::Error),
    Sequence(SequenceError),
    Compressed(CompressedError),
    Bundle(crate::bundle::BundleReadError),
    OffloadBinary(crate::package::PackageReadError),
    NvFatbin(crate::nvfatbin::FatbinError),
);

/// `file://<path>#offset=<offset>&size=<size>`.
pub fn uri(path: &str, offset: u64, size: u64) -> String {
    format!("file://{path}#offset={offset}&size={size}")
}

/// Parses a URI made by [`uri`] into (path, offset, size).
pub fn parse_uri(uri: &str) -> Option<(&str, u64, u64)> {
    let rest = uri.strip_prefix("file://")?;
    let (path, frag) = rest.rsplit_once('#')?;
    let mut offset = None;
    let mut size = None;
    for kv in frag.split('&') {
        let (k, v) = kv.split_once('=')?;
        match k {
            "offset" => offset = Some(v.parse().ok()?),
            "size" => size = Some(v.parse().ok()?),
            _ => return None,
        }
    }
    Some((path, offset?, size?))
}

/// What [`inspect_with`] does beyond listing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// Decompress every compressed bundle whole and check the MD5 its header stores
    /// ([`Compression::hash_matches`]). Off by default: a listing then decodes each
    /// compressed bundle only as far as its header (a few kilobytes), so its cost follows
    /// the headers, not the payload.
    pub verify: bool,
}

impl Options {
    /// Options that also verify every compressed bundle's MD5.
    pub fn verify() -> Options {
        Options { verify: true }
    }
}

/// Inspects `data`, the contents of the file `path`, with the default [`Options`] (no MD5
/// verification; compressed bundles decoded only as far as their headers).
pub fn inspect(data: &[u8], path: &str) -> Result<Report, InspectError> {
    inspect_with(data, path, &Options::default())
}

/// Inspects `data`, the contents of the file `path`. With [`Options::verify`] the compressed
/// bundles are decoded one after the other on the calling thread; a caller that wants them
/// decoded side by side uses [`Unverified`].
pub fn inspect_with(data: &[u8], path: &str, options: &Options) -> Result<Report, InspectError> {
    let unverified = Unverified::scan(data, path, options)?;
    let bundles: Vec<_> = unverified.bundles().copied().collect();
    let limits = Limits::default();
    unverified.finish(bundles.iter().map(|b| verify_bundle(b, &limits)))
}

/// An inspection whose compressed bundles are listed from their headers, not yet decoded
/// whole: what [`Options::verify`] still has to decode and hash. The caller decodes
/// [`Unverified::bundles`] with [`verify_bundle`] in any order, on any threads, and hands the
/// results back in the same order to [`Unverified::finish`].
pub struct Unverified<'p, 'data> {
    scanner: Scanner<'p, 'data>,
    format: &'static str,
}

impl fmt::Debug for Unverified<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Unverified")
            .field("path", &self.scanner.path)
            .field("bundles", &self.scanner.pending.len())
            .finish_non_exhaustive()
    }
}

impl<'p, 'data> Unverified<'p, 'data> {
    /// Lists `data`, the contents of the file `path`, leaving the whole decoding that
    /// [`Options::verify`] asks for to the caller (none without it).
    pub fn scan(
        data: &'data [u8],
        path: &'p str,
        options: &Options,
    ) -> Result<Unverified<'p, 'data>, InspectError> {
        let mut scanner = Scanner {
            path,
            file: data,
            containers: Vec::new(),
            entries: 0,
            options: *options,
            pending: Vec::new(),
        };
        let format = scanner.scan(data, None, 0)?;
        Ok(Unverified { scanner, format })
    }

    /// The compressed bundles to decode whole, in file order.
    pub fn bundles(&self) -> impl ExactSizeIterator<Item = &CompressedBundle<'data>> + '_ {
        self.scanner.pending.iter().map(|p| &p.bundle)
    }

    /// The report, with what decoding each of [`Unverified::bundles`] gave ([`verify_bundle`]),
    /// in the same order. The first failure, in file order, is the error; the results after it
    /// are not looked at.
    pub fn finish(
        mut self,
        results: impl IntoIterator<Item = Result<Compression, CompressedError>>,
    ) -> Result<Report, InspectError> {
        let pending = std::mem::take(&mut self.scanner.pending);
        let s = &mut self.scanner;
        for (p, r) in pending.iter().zip(results) {
            match r {
                Ok(compression) => s.containers[p.container].compression = Some(compression),
                Err(e) => {
                    let context = format!("compressed bundle at offset {}", p.offset);
                    return Err(s.failed(&p.place, context, e));
                }
            }
        }
        Ok(Report {
            path: s.path.to_owned(),
            format: self.format,
            size: s.file.len() as u64,
            containers: std::mem::take(&mut s.containers),
        })
    }
}

/// Decodes a compressed bundle whole within `limits` and hashes it, for
/// [`Unverified::finish`]: its compression details, with whether the hash matches.
pub fn verify_bundle(
    bundle: &CompressedBundle<'_>,
    limits: &Limits,
) -> Result<Compression, CompressedError> {
    decompress_within(bundle, limits).map(|(compression, _)| compression)
}

struct Scanner<'p, 'data> {
    path: &'p str,
    file: &'data [u8],
    containers: Vec<ContainerReport>,
    entries: usize,
    options: Options,
    /// Compressed bundles listed from their headers that `verify` decodes whole.
    pending: Vec<Pending<'data>>,
}

/// A compressed bundle to decode whole and hash, for [`Options::verify`].
struct Pending<'data> {
    container: usize,
    bundle: CompressedBundle<'data>,
    place: Place,
    offset: u64,
}

/// Where a region lies: archive member and section.
#[derive(Clone, Default)]
struct Place {
    member: Option<String>,
    section: Option<String>,
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
    fn failed(
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

    fn scan(
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

fn ratio(uncompressed: u64, compressed: u64) -> f64 {
    if compressed == 0 {
        0.0
    } else {
        // Two decimals, as LLVM prints it.
        ((uncompressed as f64 / compressed as f64) * 100.0).round() / 100.0
    }
}

/// Decompresses a compressed bundle, with its compression details.
pub(crate) fn decompress(
    c: &CompressedBundle<'_>,
) -> Result<(Compression, Vec<u8>), CompressedError> {
    decompress_within(c, &Limits::default())
}

/// [`decompress`] within `limits`.
fn decompress_within(
    c: &CompressedBundle<'_>,
    limits: &Limits,
) -> Result<(Compression, Vec<u8>), CompressedError> {
    let (d, ()) = c.decompress_with(limits, |_| ())?;
    let h = c.header();
    let compressed = c.len() as u64;
    Ok((
        Compression {
            method: h.method.name(),
            version: h.version.raw(),
            compressed_size: compressed,
            uncompressed_size: d.data.len() as u64,
            ratio: ratio(d.data.len() as u64, compressed),
            hash_matches: d.hash.map(|computed| computed == h.hash),
        },
        d.data,
    ))
}

/// The decoded size of a compressed bundle whose entry table may be read without decoding it
/// whole: the size its zstd frame records, when that equals the header's claim and is within
/// the default limit. `None` otherwise (zlib, a frame that does not record its size, a size
/// that disagrees): the caller decodes the whole bundle, which reports any problem exactly as
/// before.
pub(crate) fn trusted_size(c: &CompressedBundle<'_>) -> Option<u64> {
    c.content_size()
        .filter(|&n| n == c.header().uncompressed_size)
        .filter(|&n| n <= crate::bundle::compressed::Limits::default().max_size)
}

/// The first bytes of a compressed bundle of `size` decoded bytes: decoded until its entry
/// table is complete, then up to what `end` asks of the table (`None`: no further). `None`
/// when decoding fails or the table is malformed (the caller then decodes the whole bundle).
pub(crate) fn decode_table(
    c: &CompressedBundle<'_>,
    size: u64,
    end: impl Fn(&[Descriptor<'_>]) -> Option<u64>,
) -> Option<Vec<u8>> {
    // The table is read once complete; what it asks for is kept for the steps after.
    let mut wanted = None;
    let prefix = c
        .decompress_prefix(|d| {
            if wanted.is_some() {
                return wanted;
            }
            match read_header(d, size) {
                Ok(Some(HeaderRead::NeedMore(n))) => Some(n),
                Ok(Some(HeaderRead::Complete(descriptors, _))) => {
                    wanted = end(&descriptors);
                    wanted
                }
                _ => None,
            }
        })
        .ok()?;
    Some(prefix.data)
}

/// The compression details and the decoded entry table of a compressed bundle, decoding no
/// further than the table; `None` when [`trusted_size`] or [`decode_table`] says so.
pub(crate) fn header_only(c: &CompressedBundle<'_>) -> Option<(Compression, Vec<u8>)> {
    let size = trusted_size(c)?;
    let header = decode_table(c, size, |_| None)?;
    let h = c.header();
    let compressed = c.len() as u64;
    Some((
        Compression {
            method: h.method.name(),
            version: h.version.raw(),
            compressed_size: compressed,
            uncompressed_size: size,
            ratio: ratio(size, compressed),
            hash_matches: None,
        },
        header,
    ))
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

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn reader_errors_are_the_source() {
        // A compressed bundle with an unknown format version.
        let e = inspect(b"CCOB\x09\x00\x01\x00", "x.hipfb").unwrap_err();
        let Some(InspectSource::Sequence(inner)) = e.source.as_deref() else {
            panic!("{e:?}");
        };
        assert_eq!(e.message, "");
        assert_eq!(e.to_string(), format!("'x.hipfb': {inner}"));
        assert_eq!(
            e.source().and_then(|s| s.downcast_ref::<SequenceError>()),
            Some(inner)
        );
    }

    /// `verify` decodes the bundles of one file side by side and reports each one's hash,
    /// and the first bundle that fails to decode, in file order, is the error.
    #[cfg(feature = "compression")]
    #[test]
    fn verify_decodes_every_bundle_and_reports_the_first_failure() {
        use crate::bundle::binary::write_bundle;
        use crate::bundle::compressed::{CompressOptions, compress};
        let ccob = |tag: &[u8]| {
            let payload: Vec<u8> = tag.iter().cycle().take(300_000).copied().collect();
            let plain = write_bundle(&[(b"hipv4-amdgcn-amd-amdhsa--gfx90a", &payload)], 1).unwrap();
            compress(&plain, &CompressOptions::default()).unwrap()
        };
        let parts: Vec<Vec<u8>> = [b"a".as_slice(), b"bc", b"def", b"ghij"]
            .iter()
            .map(|t| ccob(t))
            .collect();
        let mut file = Vec::new();
        let mut starts = Vec::new();
        for p in &parts {
            starts.push(file.len());
            file.extend(p);
        }
        // v3 hash at bytes 24..32: wrong for the second bundle only.
        file[starts[1] + 24] ^= 1;
        let r = inspect_with(&file, "x.ccob", &Options::verify()).unwrap();
        let hashes: Vec<_> = r
            .containers
            .iter()
            .map(|c| c.compression.as_ref().unwrap().hash_matches)
            .collect();
        assert_eq!(hashes, [Some(true), Some(false), Some(true), Some(true)]);
        // The last block of the third and fourth bundles' frames cut to garbage: the third
        // is the error.
        for &k in &[2usize, 3] {
            let end = starts.get(k + 1).copied().unwrap_or(file.len());
            for b in &mut file[end - 6..end - 3] {
                *b = 0xff;
            }
        }
        let e = inspect_with(&file, "x.ccob", &Options::verify()).unwrap_err();
        assert!(
            e.to_string()
                .contains(&format!("compressed bundle at offset {}: ", starts[2])),
            "{e}"
        );
    }

    /// A listing reads each compressed bundle's entry table only: damage past it shows with
    /// `verify` alone, and extracting the first entry still works.
    #[cfg(feature = "compression")]
    #[test]
    fn listing_decodes_only_the_entry_table() {
        use crate::bundle::binary::write_bundle;
        use crate::bundle::compressed::{CompressOptions, compress};
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let noise: Vec<u8> = (0..1_000_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let plain = write_bundle(
            &[
                (
                    b"hipv4-amdgcn-amd-amdhsa--gfx90a".as_slice(),
                    b"first".as_slice(),
                ),
                (b"hipv4-amdgcn-amd-amdhsa--gfx942", &noise),
            ],
            1,
        )
        .unwrap();
        let mut stored = compress(&plain, &CompressOptions::default()).unwrap();
        let n = stored.len();
        // Inside a raw block of the incompressible part: the frame stays well-formed, only
        // the contents (so the MD5) change.
        stored[n - 300_000] ^= 0xff;
        let r = inspect(&stored, "x.ccob").unwrap();
        let ids: Vec<&str> = r.entries().map(|(_, e)| e.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "hipv4-amdgcn-amd-amdhsa--gfx90a",
                "hipv4-amdgcn-amd-amdhsa--gfx942"
            ]
        );
        let z = r.containers[0].compression.as_ref().unwrap();
        assert_eq!(
            (z.uncompressed_size, z.hash_matches),
            (plain.len() as u64, None)
        );
        let (c, e) = r.entries().next().unwrap();
        assert_eq!(&entry_bytes(&stored, c, e).unwrap()[..], b"first");
        let verified = inspect_with(&stored, "x.ccob", &Options::verify()).unwrap();
        let z = verified.containers[0].compression.as_ref().unwrap();
        assert_eq!(z.hash_matches, Some(false));
    }
}
