//! Heterogeneous device archives: `ar` archives whose members are fat objects or bundles,
//! unbundled per target into one device archive each (clang-offload-bundler `-type=a
//! -unbundle`, spec A.8).
//!
//! - [`Archive`] reads GNU (SysV) and BSD `ar` archives with `object`'s reader, the one the
//!   offload-binary scanner and `inspect` use: symbol tables are skipped, GNU long names
//!   (`//`, `/<offset>`) and BSD names (`#1/<len>`) resolved. Thin archives are refused, and
//!   so are long-name tables named over and over (`check_long_names`). A malformed archive
//!   is a [`DeviceArchiveError`] naming the member header's offset and what is wrong there. Member names must be plain file
//!   names: a name with `/` or `\`, or `.`/`..`, is an error (LLVM would quietly take the
//!   last path component).
//! - [`unbundle_archive`] applies LLVM's algorithm: for every member in archive order (CCOB
//!   members decompressed, see [`decompress_member`]), every bundle entry (fat-object
//!   sections in section order, binary bundle entries in LLVM's listing order) is copied
//!   into the archive of **every** compatible target, named
//!   `<stem>-<bundle ID><stem><ext>` with `:` replaced by `_` (`ext` = `.bc` when the
//!   entry's target ID contains `gfx`, `.cubin` for `sm_`, else the member's extension).
//!   Members that are neither (plain objects, other files) are skipped.
//! - [`write_gnu_archive`] writes what LLVM's `writeArchive(…, NormalSymtab, K_GNU,
//!   Deterministic)` writes, byte for byte: `!<arch>\n`, a symbol table `/` when any member
//!   is a symbolic file (bitcode via its embedded symbol table, see [`super::bitcode`], or an
//!   object file; 32-bit big-endian offsets, or `/SYM64/` past 4 GiB; names padded to an even
//!   size), the long-name table `//` (entries `name/\n`, deduplicated), then each member
//!   with mtime, uid and gid 0, mode 644 and a `\n` pad to an even size. An archive without
//!   members is the 8 bytes `!<arch>\n`. (The `ar` crate cannot write LLVM's symbol table,
//!   hence this writer.)
//!
//! A host entry (a fat-object section holding one zero byte) stands for the host object
//! with the bundle sections removed ([`super::fatobj::remove_bundle_sections`]); LLVM gets
//! those bytes from llvm-objcopy, so a host target's archive is not byte-identical to
//! LLVM's (device archives are).

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt;

use object::read::archive::ArchiveFile;

use super::bitcode::BitcodeError;
use super::compressed::CompressedError;
use super::fatobj::{self, FatObject, FatObjectError};
use super::{BinaryBundle, BundleReadError};
use crate::id::{EntryId, target_id};
use crate::kind::FileKind;
use object::archive;

pub use super::symbols::{SymbolRules, member_symbols};
pub use crate::raw::AR_MAGIC;

/// LLVM's message (`object::Archive::create`, LLVM 19 and 22) for an input that starts with
/// none of the archive magics, whatever it holds and however long it is: an empty file, one
/// shorter than the magic, text, an object and bitcode all get it.
pub const NOT_AN_ARCHIVE: &str = "file too small to be an archive";

/// Whether `data` starts with a magic LLVM's archive reader accepts (`!<arch>\n`,
/// `!<thin>\n` or AIX's `<bigaf>\n`); when it does not, LLVM reports [`NOT_AN_ARCHIVE`].
pub fn has_archive_magic(data: &[u8]) -> bool {
    Archive::is_archive(data) || crate::kind::is_big_archive(data)
}
const HEADER: usize = 60;

/// A malformed or unsupported archive, or a member that cannot be processed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceArchiveError {
    /// Byte offset of the member header concerned (0 for the archive as a whole).
    pub offset: u64,
    /// What is wrong.
    pub message: String,
}

impl DeviceArchiveError {
    fn new(offset: usize, message: impl Into<String>) -> Self {
        DeviceArchiveError {
            offset: offset as u64,
            message: message.into(),
        }
    }
}

impl fmt::Display for DeviceArchiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.offset == 0 {
            write!(f, "malformed archive: {}", self.message)
        } else {
            write!(
                f,
                "malformed archive: member header at offset {}: {}",
                self.offset, self.message
            )
        }
    }
}

impl std::error::Error for DeviceArchiveError {}

/// One member of an archive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member<'data> {
    /// The member's name, resolved from the long-name table where needed.
    pub name: &'data [u8],
    /// The member's contents.
    pub data: &'data [u8],
    /// Offset of its header in the archive.
    pub header_offset: u64,
}

impl Member<'_> {
    /// The name as text (lossy).
    pub fn name_str(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(self.name)
    }
}

/// A parsed `ar` archive (GNU or BSD); symbol tables and the long-name table are not
/// listed as members.
#[derive(Clone, Debug)]
pub struct Archive<'data> {
    members: Vec<Member<'data>>,
}

impl<'data> Archive<'data> {
    /// Whether `data` starts with an archive magic (regular or thin).
    pub fn is_archive(data: &[u8]) -> bool {
        FileKind::sniff(data).is_archive()
    }

    /// Parses and validates the whole archive with `object`'s reader (the workspace's one
    /// `ar` reader), refusing thin archives, member names that are not plain file names and
    /// long-name tables read over and over (`check_long_names`). When `object` refuses the
    /// archive, the failing member header is found again to say what was wrong and where.
    pub fn parse(data: &'data [u8]) -> Result<Self, DeviceArchiveError> {
        let kind = FileKind::sniff(data);
        if kind == FileKind::ThinArchive {
            return Err(DeviceArchiveError::new(
                0,
                "thin archives are not supported (their members live in other files)",
            ));
        }
        if kind != FileKind::Archive {
            return Err(DeviceArchiveError::new(
                0,
                "file does not start with !<arch>",
            ));
        }
        check_long_names(data).map_err(|m| DeviceArchiveError::new(0, m))?;
        let file = ArchiveFile::parse(data).map_err(|e| diagnose(data, AR_MAGIC.len(), e))?;
        // Where the next member's header starts, as far as is known: the failing header is
        // looked for from here.
        let mut next = AR_MAGIC.len();
        let mut members = Vec::new();
        for member in file.members() {
            let member = member.map_err(|e| diagnose(data, next, e))?;
            let Some(header) = member.header() else {
                // Only AIX big archives lack a common header, and they do not start with
                // `!<arch>`.
                return Err(DeviceArchiveError::new(next, "not a common archive member"));
            };
            let pos = (header as *const archive::Header as usize) - (data.as_ptr() as usize);
            let contents = member.data(data).map_err(|e| diagnose(data, pos, e))?;
            let (start, size) = member.file_range();
            let end = (start + size) as usize;
            next = end + (end & 1);
            let name = member.name();
            if name == b"/"
                || name == b"/SYM64/"
                || name == b"/<ECSYMBOLS>/"
                || name.starts_with(b"__.SYMDEF")
            {
                continue;
            }
            if name == b"//" {
                return Err(DeviceArchiveError::new(
                    pos,
                    "long-name table after the first members (only the first ones may be tables)",
                ));
            }
            check_short_name(&header.name, name).map_err(|m| DeviceArchiveError::new(pos, m))?;
            check_member_name(name).map_err(|m| DeviceArchiveError::new(pos, m))?;
            members.push(Member {
                name,
                data: contents,
                header_offset: pos as u64,
            });
        }
        Ok(Archive { members })
    }

    /// The members in archive order.
    pub fn members(&self) -> &[Member<'data>] {
        &self.members
    }
}

/// `object` ends a plain (not `/…` or `#1/<len>`) name at its first `/`, or without one at
/// its first space, and would quietly shorten `a/b/` or `a b` to `a`: such a name field is
/// refused instead.
fn check_short_name(field: &[u8; 16], name: &[u8]) -> Result<(), String> {
    if field[0] == b'/' || (field.starts_with(b"#1/") && field[3].is_ascii_digit()) {
        return Ok(());
    }
    let full = trim_spaces(field);
    let full = full.strip_suffix(b"/").unwrap_or(full);
    if full == name {
        return Ok(());
    }
    check_member_name(full)?;
    Err(format!(
        "member name field '{}' holds a space inside the name",
        full.escape_ascii()
    ))
}

/// Words the error of an archive `object` refused: walks the member headers from the start,
/// as `object` reads them, and describes the first bad one at or after `from` (the end of
/// the last member read, or the header concerned). `object`'s own message, which says
/// neither where nor what exactly, is the fallback.
fn diagnose(data: &[u8], from: usize, error: object::read::Error) -> DeviceArchiveError {
    let mut pos = AR_MAGIC.len();
    let mut long_names: Option<&[u8]> = None;
    while pos < data.len() {
        let found = |message: String| DeviceArchiveError::new(pos, message);
        let left = data.len() - pos;
        let Some(header) = data.get(pos..pos + HEADER) else {
            return found(format!(
                "truncated member header: {left} bytes left, a header needs {HEADER}"
            ));
        };
        if &header[58..60] != b"`\n" {
            return found("member header does not end in `\\n".into());
        }
        let Some(size) = decimal(&header[48..58]) else {
            return found("member size is not a decimal number".into());
        };
        let start = pos + HEADER;
        let Some(end) = start.checked_add(size).filter(|&e| e <= data.len()) else {
            return found(format!(
                "member size {size} runs past the end of the archive ({} bytes left)",
                data.len() - start
            ));
        };
        let name = &header[..16];
        if name.starts_with(b"// ") {
            long_names.get_or_insert(&data[start..end]);
        } else if name[0] == b'/' && name[1].is_ascii_digit() {
            let shown = trim_spaces(&name[1..]).escape_ascii();
            let Some(index) = decimal(&name[1..]) else {
                return found(format!("bad long-name reference '/{shown}'"));
            };
            let Some(table) = long_names else {
                return found("long-name reference without a long-name table".into());
            };
            match table.get(index..).filter(|r| !r.is_empty()) {
                None => {
                    return found(format!(
                        "long-name index {shown} is past the end of the long-name table ({} bytes)",
                        table.len()
                    ));
                }
                Some(rest) => match rest.iter().position(|&b| b == b'\n' || b == 0) {
                    None => {
                        return found(format!("long name at index {shown} is not terminated"));
                    }
                    Some(stop) if rest[stop] == b'\n' && (stop == 0 || rest[stop - 1] != b'/') => {
                        return found(format!("long name at index {shown} does not end in /\\n"));
                    }
                    Some(_) => {}
                },
            }
        } else if name.starts_with(b"#1/") && name[3].is_ascii_digit() {
            match decimal(&name[3..]) {
                None => return found("BSD name length is not a decimal number".into()),
                Some(len) if len > size => {
                    return found(format!(
                        "BSD name length {len} exceeds the member size {size}"
                    ));
                }
                Some(_) => {}
            }
        }
        pos = end + (end & 1);
    }
    DeviceArchiveError::new(from, error.to_string())
}

fn trim_spaces(s: &[u8]) -> &[u8] {
    let end = s.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1);
    &s[..end]
}

/// A decimal header field as `object` reads it: digits up to the first space, at least one.
fn decimal(s: &[u8]) -> Option<usize> {
    let digits = &s[..s.iter().position(|&b| b == b' ').unwrap_or(s.len())];
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

fn check_member_name(name: &[u8]) -> Result<(), String> {
    let shown = name.escape_ascii();
    if name.is_empty() {
        return Err("member has an empty name".into());
    }
    if name.contains(&b'/') || name.contains(&b'\\') {
        return Err(format!("member name '{shown}' contains a path separator"));
    }
    if name == b"." || name == b".." {
        return Err(format!("member name '{shown}' is not a file name"));
    }
    if name.contains(&0) {
        return Err(format!("member name '{shown}' contains a NUL byte"));
    }
    Ok(())
}

/// Bounds the work of reading a GNU archive's member names. Each `/<offset>` name is read from
/// the long-name table up to the next newline (object's reader does, once per member), so
/// members that all point into one long line cost that line's length each: quadratic in the
/// input. Legitimate archives name each member once, so their names add up to at most the
/// table; more than twice the input (plus 1 MiB) is refused before any name is read.
pub(crate) fn check_long_names(data: &[u8]) -> Result<(), String> {
    const HEADER: usize = 60;
    if FileKind::sniff(data) != FileKind::Archive {
        return Ok(());
    }
    let number = |field: &[u8]| -> Option<usize> {
        let end = field.iter().rposition(|&b| b != b' ')? + 1;
        std::str::from_utf8(&field[..end]).ok()?.parse().ok()
    };
    let budget = (data.len() as u64).saturating_mul(2) + (1 << 20);
    let mut table: Option<(&[u8], Vec<usize>)> = None;
    let (mut pos, mut total) = (8usize, 0u64);
    while let Some(header) = data.get(pos..pos + HEADER) {
        // Anything malformed is left to the real reader.
        let Some(size) = number(&header[48..58]) else {
            return Ok(());
        };
        let start = pos + HEADER;
        let end = start.saturating_add(size).min(data.len());
        let name = &header[..16];
        if name.starts_with(b"// ") {
            let t = &data[start..end];
            let stops = (0..t.len())
                .filter(|&i| matches!(t[i], b'\n' | 0))
                .collect();
            table = Some((t, stops));
        } else if let (Some(index), Some((t, stops))) =
            (name.strip_prefix(b"/").and_then(number), table.as_ref())
        {
            let stop = stops
                .get(stops.partition_point(|&s| s < index))
                .copied()
                .unwrap_or(t.len());
            total += stop.saturating_sub(index) as u64;
            if total > budget {
                return Err(format!(
                    "archive member names repeat its long-name table: more than {budget} bytes \
                     of names in {} bytes",
                    data.len()
                ));
            }
        }
        pos = end + (end & 1);
    }
    Ok(())
}

/// A compressed archive member that cannot be decompressed; displayed with LLVM's prefix,
/// `Failed to decompress code object: `.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecompressMemberError(pub CompressedError);

impl fmt::Display for DecompressMemberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Failed to decompress code object: {}", self.0)
    }
}

impl std::error::Error for DecompressMemberError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// A member's contents, decompressed when it is a compressed bundle (by LLVM 22's test,
/// [`llvm_decompresses`](super::compressed::llvm_decompresses)).
pub fn decompress_member(data: &[u8]) -> Result<Cow<'_, [u8]>, DecompressMemberError> {
    if !super::compressed::llvm_decompresses(data) {
        return Ok(Cow::Borrowed(data));
    }
    let bundle = super::compressed::CompressedBundle::parse(data).map_err(DecompressMemberError)?;
    Ok(Cow::Owned(
        bundle.decompress().map_err(DecompressMemberError)?.data,
    ))
}

/// Why an archive member cannot be unbundled. Displayed as the wrapped error.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemberError {
    /// A compressed member that cannot be decompressed.
    Decompress(DecompressMemberError),
    /// A malformed bundle.
    Bundle(BundleReadError),
    /// A fat object whose host object cannot be extracted.
    FatObject(FatObjectError),
    /// The symbols of an extracted member cannot be listed.
    Symbols(SymbolsError),
}

impl MemberError {
    /// The wrapped error.
    pub fn inner(&self) -> &(dyn std::error::Error + 'static) {
        match self {
            MemberError::Decompress(e) => e,
            MemberError::Bundle(e) => e,
            MemberError::FatObject(e) => e,
            MemberError::Symbols(e) => e,
        }
    }
}

impl fmt::Display for MemberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.inner(), f)
    }
}

impl std::error::Error for MemberError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner().source()
    }
}

/// Options of [`unbundle_archive`].
#[derive(Clone, Copy, Debug, Default)]
pub struct UnbundleOptions {
    /// `-allow-missing-bundles`: a target without code objects gets an empty archive.
    pub allow_missing: bool,
    /// `-hip-openmp-compatible`.
    pub hip_openmp: bool,
}

/// Why an archive cannot be unbundled.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UnbundleError {
    /// The archive is malformed.
    Archive(DeviceArchiveError),
    /// A member cannot be processed (`member`: its name).
    Member {
        /// The member's name.
        member: String,
        /// What went wrong.
        error: MemberError,
    },
    /// No entry of the archive is compatible with this (standardized) target; LLVM's
    /// message `no compatible code object found for the target '<T>' in heterogeneous
    /// archive library: <path>` when displayed with the path.
    NoCompatible {
        /// The standardized target.
        target: String,
        /// Its index in the targets given.
        index: usize,
    },
    /// The archive would exceed the format's limits.
    TooLarge,
}

impl UnbundleError {
    /// The message as clang-offload-bundler words it, `archive` being the input path.
    pub fn message(&self, archive: &str) -> String {
        match self {
            UnbundleError::Archive(e) => format!("'{archive}': {e}"),
            UnbundleError::Member { member, error } => {
                format!("'{archive}': member '{member}': {error}")
            }
            UnbundleError::NoCompatible { target, .. } => format!(
                "no compatible code object found for the target '{target}' in heterogeneous archive library: {archive}"
            ),
            UnbundleError::TooLarge => format!("'{archive}': the output archive is too large"),
        }
    }
}

impl fmt::Display for UnbundleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message("<archive>"))
    }
}

impl std::error::Error for UnbundleError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            UnbundleError::Archive(e) => Some(e),
            UnbundleError::Member { error, .. } => Some(error.inner()),
            _ => None,
        }
    }
}

impl From<DeviceArchiveError> for UnbundleError {
    fn from(e: DeviceArchiveError) -> Self {
        UnbundleError::Archive(e)
    }
}

/// A bundle entry of one member: its ID and contents.
struct Entry<'a> {
    id: &'a [u8],
    /// `None` for the host entry of a fat object: the object without its bundle sections,
    /// made on first use and once per member (a crafted object with thousands of host
    /// sections would otherwise be rewritten once per section).
    data: Option<&'a [u8]>,
}

/// The bundle entries of a member in LLVM's order, or none when it is not a bundle.
fn member_entries<'a>(data: &'a [u8]) -> Result<Vec<Entry<'a>>, BundleReadError> {
    if fatobj::detect(data).is_some() {
        if let Ok(fat) = FatObject::parse(data) {
            let mut out = Vec::new();
            for e in fat.entries() {
                out.push(Entry {
                    id: e.id,
                    data: (!e.is_host()).then_some(e.data),
                });
            }
            return Ok(out);
        }
    }
    match BinaryBundle::parse(data) {
        Ok(None) => Ok(Vec::new()),
        Ok(Some(b)) => Ok(b
            .llvm_order()
            .into_iter()
            .map(|e| Entry {
                id: e.id,
                data: Some(&data[e.offset as usize..(e.offset + e.size()) as usize]),
            })
            .collect()),
        Err(e) => Err(e),
    }
}

/// The bundle IDs of a member, as `-check-input-archive` collects them (LLVM does not
/// decompress members there: a compressed member has no IDs).
fn member_ids(data: &[u8]) -> Result<BTreeSet<&[u8]>, BundleReadError> {
    if fatobj::detect(data).is_some() {
        if let Ok(fat) = FatObject::parse(data) {
            return Ok(fat.entries().iter().map(|e| e.id).collect());
        }
    }
    match BinaryBundle::parse(data) {
        Ok(None) => Ok(BTreeSet::new()),
        Ok(Some(b)) => Ok(b.entries().iter().map(|e| e.id).collect()),
        Err(e) => Err(e),
    }
}

/// Why [`check_archive`] refuses an archive.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CheckArchiveError {
    /// The archive is malformed.
    Archive {
        /// The archive's path, as given.
        path: String,
        /// What is wrong.
        error: DeviceArchiveError,
    },
    /// A member is a malformed bundle.
    Member {
        /// The archive's path, as given.
        path: String,
        /// The member's name.
        member: String,
        /// What is wrong.
        error: BundleReadError,
    },
    /// A member combines target IDs inconsistently (LLVM's message `conflicting TargetIDs
    /// [<A>, <B>] found in <member> of <archive>`).
    Conflict {
        /// The archive's path, as given.
        path: String,
        /// The member's name.
        member: String,
        /// The two conflicting target IDs.
        ids: [String; 2],
    },
}

impl fmt::Display for CheckArchiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckArchiveError::Archive { path, error } => write!(f, "'{path}': {error}"),
            CheckArchiveError::Member {
                path,
                member,
                error,
            } => write!(f, "'{path}': member '{member}': {error}"),
            CheckArchiveError::Conflict {
                path,
                member,
                ids: [a, b],
            } => write!(
                f,
                "conflicting TargetIDs [{a}, {b}] found in {member} of {path}"
            ),
        }
    }
}

impl std::error::Error for CheckArchiveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CheckArchiveError::Archive { error, .. } => Some(error),
            CheckArchiveError::Member { error, .. } => Some(error),
            CheckArchiveError::Conflict { .. } => None,
        }
    }
}

/// `-check-input-archive`: within each member, the bundle IDs (whole IDs, compared up to
/// the first `:`) must not combine target IDs inconsistently. Fails with LLVM's message
/// `conflicting TargetIDs [<A>, <B>] found in <member> of <archive>` for the first
/// conflict ([`CheckArchiveError::Conflict`]).
pub fn check_archive(data: &[u8], archive_path: &str) -> Result<(), CheckArchiveError> {
    let archive = Archive::parse(data).map_err(|error| CheckArchiveError::Archive {
        path: archive_path.to_owned(),
        error,
    })?;
    for m in archive.members() {
        let ids = member_ids(m.data).map_err(|error| CheckArchiveError::Member {
            path: archive_path.to_owned(),
            member: m.name_str().into_owned(),
            error,
        })?;
        let ids: Vec<std::borrow::Cow<'_, str>> =
            ids.iter().map(|id| crate::id::spell::text(id)).collect();
        let ids: Vec<&str> = ids.iter().map(|id| &**id).collect();
        if let Some((a, b)) = target_id::find_conflict(&ids) {
            return Err(CheckArchiveError::Conflict {
                path: archive_path.to_owned(),
                member: m.name_str().into_owned(),
                ids: [a.to_string(), b.to_string()],
            });
        }
    }
    Ok(())
}

/// `sys::path::stem` and `sys::path::extension` of a file name.
fn stem_and_extension(name: &[u8]) -> (&[u8], &[u8]) {
    if name == b"." || name == b".." {
        return (name, b"");
    }
    match name.iter().rposition(|&b| b == b'.') {
        None => (name, b""),
        Some(i) => (&name[..i], &name[i..]),
    }
}

/// The name LLVM gives an extracted code object in a device archive.
pub fn device_member_name(member: &[u8], entry_id: &[u8]) -> Vec<u8> {
    let (stem, ext) = stem_and_extension(member);
    let target_id = EntryId::parse(&crate::id::spell::text(entry_id))
        .target_id()
        .to_owned();
    let ext: &[u8] = if target_id.contains("gfx") {
        b".bc"
    } else if target_id.contains("sm_") {
        b".cubin"
    } else {
        ext
    };
    let mut name = Vec::with_capacity(2 * stem.len() + entry_id.len() + ext.len() + 1);
    name.extend_from_slice(stem);
    name.push(b'-');
    name.extend_from_slice(entry_id);
    name.extend_from_slice(stem);
    name.extend_from_slice(ext);
    for b in &mut name {
        if *b == b':' {
            *b = b'_';
        }
    }
    name
}

/// A member of an archive to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewMember<'a> {
    /// The member name.
    pub name: Vec<u8>,
    /// Its contents.
    pub data: Cow<'a, [u8]>,
}

/// Unbundles the archive `data` for `targets` (standardized entry IDs, in `-targets`
/// order): one archive per target, in the same order, each the bytes LLVM writes.
pub fn unbundle_archive(
    data: &[u8],
    targets: &[EntryId],
    options: UnbundleOptions,
) -> Result<Vec<Vec<u8>>, UnbundleError> {
    let archive = Archive::parse(data)?;
    let mut lists: Vec<Vec<NewMember<'_>>> = vec![Vec::new(); targets.len()];
    for m in archive.members() {
        let member_error = |error: MemberError| UnbundleError::Member {
            member: m.name_str().into_owned(),
            error,
        };
        let contents =
            decompress_member(m.data).map_err(|e| member_error(MemberError::Decompress(e)))?;
        let entries =
            member_entries(&contents).map_err(|e| member_error(MemberError::Bundle(e)))?;
        let mut host: Option<Vec<u8>> = None;
        for entry in entries {
            let id = EntryId::parse(&crate::id::spell::text(entry.id));
            let name = device_member_name(m.name, entry.id);
            for (t, target) in targets.iter().enumerate() {
                if id.is_compatible(target, options.hip_openmp) {
                    let data = match entry.data {
                        Some(d) => d,
                        None => {
                            if host.is_none() {
                                let stripped = fatobj::remove_bundle_sections(&contents)
                                    .map_err(|e| member_error(MemberError::FatObject(e)))?;
                                host = Some(stripped);
                            }
                            host.as_deref().unwrap_or_default()
                        }
                    };
                    lists[t].push(NewMember {
                        name: name.clone(),
                        data: Cow::Owned(data.to_vec()),
                    });
                }
            }
        }
    }
    let mut out = Vec::with_capacity(targets.len());
    for (t, members) in lists.iter().enumerate() {
        if members.is_empty() && !options.allow_missing {
            return Err(UnbundleError::NoCompatible {
                target: targets[t].as_str().to_owned(),
                index: t,
            });
        }
        out.push(write_gnu_archive(members).map_err(|e| match e {
            WriteArchiveError::Symbols { member, error } => UnbundleError::Member {
                member,
                error: MemberError::Symbols(error),
            },
            WriteArchiveError::TooLarge => UnbundleError::TooLarge,
        })?);
    }
    Ok(out)
}

/// Why an archive cannot be written.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteArchiveError {
    /// A member's symbols cannot be read (LLVM fails the same way).
    Symbols {
        /// The member name.
        member: String,
        /// What is wrong.
        error: SymbolsError,
    },
    /// A size does not fit the format.
    TooLarge,
}

impl fmt::Display for WriteArchiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteArchiveError::Symbols { member, error } => {
                write!(f, "member '{member}': {error}")
            }
            WriteArchiveError::TooLarge => f.write_str("archive too large"),
        }
    }
}

impl std::error::Error for WriteArchiveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WriteArchiveError::Symbols { error, .. } => Some(error.inner()),
            WriteArchiveError::TooLarge => None,
        }
    }
}

/// Why a member's archive symbols cannot be listed. Displayed as the wrapped error or the
/// message.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SymbolsError {
    /// Bitcode whose symbol table cannot be read.
    Bitcode(BitcodeError),
    /// An object file the `object` crate cannot read.
    Object(object::read::Error),
    /// A member the writer cannot list (the message says why).
    Unsupported(String),
}

impl SymbolsError {
    /// The wrapped error (the error itself for [`SymbolsError::Unsupported`]).
    pub fn inner(&self) -> &(dyn std::error::Error + 'static) {
        match self {
            SymbolsError::Bitcode(e) => e,
            SymbolsError::Object(e) => e,
            SymbolsError::Unsupported(_) => self,
        }
    }
}

impl fmt::Display for SymbolsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SymbolsError::Bitcode(e) => fmt::Display::fmt(e, f),
            SymbolsError::Object(e) => fmt::Display::fmt(e, f),
            SymbolsError::Unsupported(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for SymbolsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SymbolsError::Bitcode(e) => e.source(),
            SymbolsError::Object(e) => e.source(),
            SymbolsError::Unsupported(_) => None,
        }
    }
}

impl From<BitcodeError> for SymbolsError {
    fn from(e: BitcodeError) -> Self {
        SymbolsError::Bitcode(e)
    }
}

impl From<object::read::Error> for SymbolsError {
    fn from(e: object::read::Error) -> Self {
        SymbolsError::Object(e)
    }
}

/// Writes a deterministic GNU archive exactly as LLVM's `writeArchive` does (see the
/// module documentation).
pub fn write_gnu_archive(members: &[NewMember<'_>]) -> Result<Vec<u8>, WriteArchiveError> {
    write_gnu_archive_with(members, |data| member_symbols(data, SymbolRules::Bundler))
}

/// [`write_gnu_archive`] with the caller's rule for a member's symbols: `symbols(data)`
/// gives `None` for a member that is not a symbolic file, else its archive symbols in order
/// (clang-offload-packager, for one, refuses what it cannot list).
pub fn write_gnu_archive_with(
    members: &[NewMember<'_>],
    symbols_of: impl Fn(&[u8]) -> Result<Option<Vec<Vec<u8>>>, SymbolsError>,
) -> Result<Vec<u8>, WriteArchiveError> {
    if members.is_empty() {
        return Ok(AR_MAGIC.to_vec());
    }
    let t = ArchiveTables::build(members, symbols_of)?;
    let num_syms: usize = t.symbols.iter().map(Vec::len).sum();
    let member_len =
        |i: usize| t.headers[i].len() + members[i].data.len() + (members[i].data.len() & 1);
    let string_member = if t.long_names.is_empty() {
        0
    } else {
        HEADER + t.long_names.len() + (t.long_names.len() & 1)
    };
    let symtab_size = |offset_size: usize| {
        let s = offset_size + num_syms * offset_size + t.sym_names.len();
        s + (s & 1)
    };
    let last_header: usize = (0..members.len().saturating_sub(1)).map(member_len).sum();
    let headers_size32 = AR_MAGIC.len() + HEADER + symtab_size(4) + string_member;
    let sym64 = headers_size32 + last_header >= 1 << 32;
    let offset_size = if sym64 { 8 } else { 4 };
    let headers_size = AR_MAGIC.len() + HEADER + symtab_size(offset_size) + string_member;

    let total: usize = headers_size + (0..members.len()).map(member_len).sum::<usize>();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(AR_MAGIC);
    if !t.sym_names.is_empty() {
        let size = symtab_size(offset_size);
        let name = if sym64 { "/SYM64/" } else { "/" };
        out.extend_from_slice(
            format!("{name:<16}{:<12}{:<6}{:<6}{:<8o}{size:<10}`\n", 0, 0, 0, 0).as_bytes(),
        );
        let offsets = (0..members.len()).scan(headers_size, |pos, i| {
            let at = *pos;
            *pos += member_len(i);
            Some(std::iter::repeat_n(at, t.symbols[i].len()))
        });
        write_symbol_table(&mut out, sym64, num_syms, offsets.flatten(), &t.sym_names)?;
    }
    if !t.long_names.is_empty() {
        let size = t.long_names.len() + (t.long_names.len() & 1);
        out.extend_from_slice(format!("{:<48}{size:<10}`\n", "//").as_bytes());
        out.extend_from_slice(&t.long_names);
        if t.long_names.len() & 1 == 1 {
            out.push(b'\n');
        }
    }
    for (h, m) in t.headers.iter().zip(members) {
        out.extend_from_slice(h);
        out.extend_from_slice(&m.data);
        if m.data.len() & 1 == 1 {
            out.push(b'\n');
        }
    }
    Ok(out)
}

/// The parts of a GNU archive that depend on every member: the long-name table, the symbol
/// names, and per member its header and the offsets of its symbols' names.
struct ArchiveTables {
    long_names: Vec<u8>,
    sym_names: Vec<u8>,
    headers: Vec<Vec<u8>>,
    symbols: Vec<Vec<usize>>,
}

impl ArchiveTables {
    fn build(
        members: &[NewMember<'_>],
        symbols_of: impl Fn(&[u8]) -> Result<Option<Vec<Vec<u8>>>, SymbolsError>,
    ) -> Result<ArchiveTables, WriteArchiveError> {
        let mut t = ArchiveTables {
            long_names: Vec::new(),
            sym_names: Vec::new(),
            headers: Vec::with_capacity(members.len()),
            symbols: Vec::with_capacity(members.len()),
        };
        let mut long_seen: Vec<(&[u8], usize)> = Vec::new();
        let mut has_object = false;
        for m in members {
            let header = t.member_header(m, &mut long_seen);
            t.headers.push(header);
            let syms = symbols_of(&m.data).map_err(|error| WriteArchiveError::Symbols {
                member: String::from_utf8_lossy(&m.name).into_owned(),
                error,
            })?;
            let mut offsets = Vec::new();
            if let Some(names) = syms {
                has_object = true;
                for name in names {
                    offsets.push(t.sym_names.len());
                    t.sym_names.extend_from_slice(&name);
                    t.sym_names.push(0);
                }
            }
            t.symbols.push(offsets);
        }
        if has_object && t.sym_names.is_empty() {
            t.sym_names.extend_from_slice(&[0, 0, 0]);
        }
        Ok(t)
    }

    /// The header of member `m`; a name of 16 bytes or more, or with a `/`, goes to the
    /// long-name table once (`long_seen`: the names already there, with their offsets).
    fn member_header<'m>(
        &mut self,
        m: &'m NewMember<'_>,
        long_seen: &mut Vec<(&'m [u8], usize)>,
    ) -> Vec<u8> {
        let mut h = Vec::with_capacity(HEADER);
        if m.name.len() >= 16 || m.name.contains(&b'/') {
            let at = match long_seen.iter().find(|(n, _)| *n == &m.name[..]) {
                Some(&(_, at)) => at,
                None => {
                    let at = self.long_names.len();
                    self.long_names.extend_from_slice(&m.name);
                    self.long_names.extend_from_slice(b"/\n");
                    long_seen.push((&m.name, at));
                    at
                }
            };
            h.extend_from_slice(format!("/{at:<15}").as_bytes());
        } else {
            let mut n = m.name.clone();
            n.push(b'/');
            h.extend_from_slice(&n);
            h.resize(16, b' ');
        }
        let size = m.data.len();
        h.extend_from_slice(
            format!("{:<12}{:<6}{:<6}{:<8o}{:<10}`\n", 0, 0, 0, 0o644, size).as_bytes(),
        );
        h
    }
}

/// The symbol table member's contents (after its header): the count, each symbol's member
/// offset, the names, padded to an even size. Big-endian 32-bit offsets, or 64-bit ones for
/// `/SYM64/`.
fn write_symbol_table(
    out: &mut Vec<u8>,
    sym64: bool,
    num_syms: usize,
    offsets: impl Iterator<Item = usize>,
    names: &[u8],
) -> Result<(), WriteArchiveError> {
    let put = |out: &mut Vec<u8>, v: usize| -> Result<(), WriteArchiveError> {
        if sym64 {
            out.extend_from_slice(&(v as u64).to_be_bytes());
        } else {
            let v = u32::try_from(v).map_err(|_| WriteArchiveError::TooLarge)?;
            out.extend_from_slice(&v.to_be_bytes());
        }
        Ok(())
    };
    put(out, num_syms)?;
    for offset in offsets {
        put(out, offset)?;
    }
    out.extend_from_slice(names);
    let offset_size = if sym64 { 8 } else { 4 };
    let written = offset_size + num_syms * offset_size + names.len();
    if written & 1 == 1 {
        out.push(0);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    /// The wrappers keep the typed error they wrap, and show it as before.
    #[test]
    fn errors_keep_their_source() {
        // A compressed member whose header is cut short.
        let e = decompress_member(b"CCOB\x03\x00\x01\x00\x10").unwrap_err();
        assert!(matches!(e.0, CompressedError::TruncatedHeader { .. }));
        assert_eq!(
            e.to_string(),
            format!("Failed to decompress code object: {}", e.0)
        );
        let inner = e.source().and_then(|s| s.downcast_ref::<CompressedError>());
        assert_eq!(inner, Some(&e.0));

        let archive = write_gnu_archive(&[member(b"m.o", b"CCOB\x03\x00\x01\x00\x10")]).unwrap();
        let u = unbundle_archive(
            &archive,
            &[EntryId::parse("hip-amdgcn-amd-amdhsa--gfx90a")],
            UnbundleOptions::default(),
        )
        .unwrap_err();
        assert_eq!(
            u.message("x.a"),
            format!(
                "'x.a': member 'm.o': Failed to decompress code object: {}",
                e.0
            )
        );
        let source = u
            .source()
            .and_then(|s| s.downcast_ref::<DecompressMemberError>());
        assert_eq!(source, Some(&e));

        let c = check_archive(b"!<arch>\nshort", "x.a").unwrap_err();
        let CheckArchiveError::Archive { error, .. } = &c else {
            panic!("{c:?}");
        };
        assert_eq!(c.to_string(), format!("'x.a': {error}"));
        assert_eq!(
            c.source()
                .and_then(|s| s.downcast_ref::<DeviceArchiveError>()),
            Some(error)
        );

        let w =
            write_gnu_archive(&[member(b"b.bc", b"BC\xc0\xde\x35\x14\x00\x00\x05")]).unwrap_err();
        let WriteArchiveError::Symbols {
            error: SymbolsError::Bitcode(bitcode),
            ..
        } = &w
        else {
            panic!("{w:?}");
        };
        assert_eq!(
            w.source().and_then(|s| s.downcast_ref::<BitcodeError>()),
            Some(bitcode)
        );
    }

    /// Resource budget: 20,000 members naming themselves through one 1 MiB long-name line
    /// would cost 20 GiB of name reading (object's reader finds each name's end anew): the
    /// archive is refused by [`check_long_names`] before any name is read, while 20,000
    /// members with long names of their own are read as usual.
    #[test]
    fn long_name_lookups_are_bounded() {
        let members = 20_000usize;
        let mut table = vec![b'a'; 1 << 20];
        table.extend_from_slice(b"/\n");
        let mut a = b"!<arch>\n".to_vec();
        a.extend_from_slice(format!("{:<16}{:<32}{:<10}`\n", "//", "", table.len()).as_bytes());
        a.extend_from_slice(&table);
        for i in 0..members {
            let name = format!("/{}", i % 1000);
            a.extend_from_slice(format!("{name:<16}{:<32}{:<10}`\n", "", 0).as_bytes());
        }
        let start = std::time::Instant::now();
        let e = Archive::parse(&a).unwrap_err();
        assert_eq!(e.offset, 0, "{e}");
        assert!(e.message.contains("long-name table"), "{e}");
        let elapsed = start.elapsed();
        assert!(elapsed.as_secs() < 2, "{elapsed:?}");

        let names: Vec<Vec<u8>> = (0..members)
            .map(|i| format!("a-long-member-name-{i:08}.o").into_bytes())
            .collect();
        let news: Vec<NewMember<'_>> = names
            .iter()
            .map(|n| NewMember {
                name: n.clone(),
                data: Cow::Borrowed(b"x"),
            })
            .collect();
        let bytes = write_gnu_archive(&news).unwrap();
        let start = std::time::Instant::now();
        let archive = Archive::parse(&bytes).unwrap();
        let elapsed = start.elapsed();
        let got: Vec<&[u8]> = archive.members().iter().map(|m| m.name).collect();
        assert_eq!(got, names);
        assert!(elapsed.as_secs() < 2, "{elapsed:?}");
    }

    /// Resource budget: the host entry of a fat-object member (the object without its bundle
    /// sections) used to be made for every host section, wanted or not, and kept: a crafted
    /// object with thousands of host sections cost thousands of copies of itself. It is now
    /// made once per member, and only when a target asks for it.
    #[test]
    fn many_host_sections_are_not_copied_each() {
        let host = include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../..",
            "/fuzz/seeds/fat_object/clang19-fat.o"
        ));
        let ids: Vec<String> = (0..3000)
            .map(|i| format!("host-x86_64-unknown-linux-gnu-{i}"))
            .collect();
        let mut entries: Vec<(&str, &[u8])> = ids
            .iter()
            .map(|id| (id.as_str(), fatobj::HOST_PLACEHOLDER))
            .collect();
        entries.push(("hip-amdgcn-amd-amdhsa--gfx906", b"device code"));
        let fat = fatobj::write_fat_object(host, &entries).unwrap();
        let archive = write_gnu_archive(&[NewMember {
            name: b"fat.o".to_vec(),
            data: Cow::Borrowed(&fat),
        }])
        .unwrap();
        let target = EntryId::parse("hip-amdgcn-amd-amdhsa--gfx906").standardized();
        let start = std::time::Instant::now();
        let out = unbundle_archive(&archive, &[target], UnbundleOptions::default()).unwrap();
        assert!(out[0].windows(11).any(|w| w == b"device code"));
        let elapsed = start.elapsed();
        assert!(elapsed.as_secs() < 3, "{elapsed:?}");
    }

    fn member(name: &[u8], data: &'static [u8]) -> NewMember<'static> {
        NewMember {
            name: name.to_vec(),
            data: Cow::Borrowed(data),
        }
    }

    #[test]
    fn names_as_llvm() {
        assert_eq!(
            device_member_name(b"fatg.o", b"openmp-amdgcn-amd-amdhsa--gfx906:xnack+"),
            b"fatg-openmp-amdgcn-amd-amdhsa--gfx906_xnack+fatg.bc"
        );
        assert_eq!(
            device_member_name(b"fatf.o", b"openmp-nvptx64-nvidia-cuda--sm_70"),
            b"fatf-openmp-nvptx64-nvidia-cuda--sm_70fatf.cubin"
        );
        assert_eq!(
            device_member_name(b"h.obj", b"host-x86_64-unknown-linux-gnu-"),
            b"h-host-x86_64-unknown-linux-gnu-h.obj"
        );
        assert_eq!(stem_and_extension(b".x"), (&b""[..], &b".x"[..]));
        assert_eq!(stem_and_extension(b"noext"), (&b"noext"[..], &b""[..]));
    }

    #[test]
    fn write_and_read_back() {
        let members = [
            member(b"short.bin", b"abc"),
            member(b"a-very-long-member-name.bin", b"defg"),
            member(b"a-very-long-member-name.bin", b"h"),
        ];
        let bytes = write_gnu_archive(&members).unwrap();
        // Raw blobs are not symbolic files: no symbol table.
        assert!(bytes.starts_with(b"!<arch>\n//      "));
        let archive = Archive::parse(&bytes).unwrap();
        let got: Vec<(&[u8], &[u8])> = archive.members().iter().map(|m| (m.name, m.data)).collect();
        assert_eq!(
            got,
            [
                (&b"short.bin"[..], &b"abc"[..]),
                (b"a-very-long-member-name.bin", b"defg"),
                (b"a-very-long-member-name.bin", b"h"),
            ]
        );
        // The long name is stored once.
        assert_eq!(
            bytes
                .windows(27)
                .filter(|w| w == b"a-very-long-member-name.bin")
                .count(),
            1
        );
        assert_eq!(write_gnu_archive(&[]).unwrap(), AR_MAGIC);
    }

    #[test]
    fn malformed_archives() {
        let good = write_gnu_archive(&[member(b"a-long-member-name.o", b"xyz")]).unwrap();
        for cut in [10, 60, good.len() - 2] {
            let e = Archive::parse(&good[..cut]).unwrap_err();
            assert!(e.offset > 0, "{e}");
        }
        let mut bad_index = good.clone();
        let at = bad_index.windows(3).position(|w| w == b"/0 ").unwrap();
        bad_index[at + 1..at + 3].copy_from_slice(b"90");
        let e = Archive::parse(&bad_index).unwrap_err();
        assert!(e.message.contains("long-name index 90"), "{e}");
        let slash = write_gnu_archive(&[member(b"../x.o", b"1")]).unwrap();
        let e = Archive::parse(&slash).unwrap_err();
        assert!(e.message.contains("path separator"), "{e}");
        // Where object reads a plain name up to its first `/` or space, the rest of the
        // field is not dropped quietly.
        let mut short = write_gnu_archive(&[member(b"ab.o", b"1")]).unwrap();
        let at = short.windows(5).position(|w| w == b"ab.o/").unwrap();
        short[at + 1] = b'/';
        let e = Archive::parse(&short).unwrap_err();
        assert!(e.message.contains("path separator"), "{e}");
        short[at + 1] = b' ';
        short[at + 4] = b' ';
        let e = Archive::parse(&short).unwrap_err();
        assert!(e.message.contains("space"), "{e}");
        // A long-name reference without a table, at the header concerned.
        let mut no_table = good.clone();
        no_table[8..10].copy_from_slice(b"x/");
        let e = Archive::parse(&no_table).unwrap_err();
        assert!(e.message.contains("without a long-name table"), "{e}");
        assert_eq!(e.offset as usize, no_table.len() - 60 - 4, "{e}");
        assert!(Archive::parse(b"!<thin>\n").is_err());
        assert!(Archive::parse(b"garbage!").is_err());
        assert!(Archive::parse(AR_MAGIC).unwrap().members().is_empty());
    }
}
