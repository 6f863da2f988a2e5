//! Reading: [`Archive`], a GNU or BSD `ar` archive read with `object`'s reader and checked
//! beyond it (member names, short-name fields, long-name tables), with a diagnosis of the
//! member header `object` refuses.

use std::borrow::Cow;

use object::archive;
use object::read::archive::ArchiveFile;

use crate::kind::FileKind;
use crate::raw::AR_MAGIC;

use super::error::DeviceArchiveError;

/// LLVM's message (`object::Archive::create`, LLVM 19 and 22) for an input that starts with
/// none of the archive magics, whatever it holds and however long it is: an empty file, one
/// shorter than the magic, text, an object and bitcode all get it.
pub const NOT_AN_ARCHIVE: &str = "file too small to be an archive";

/// Whether `data` starts with a magic LLVM's archive reader accepts (`!<arch>\n`,
/// `!<thin>\n` or AIX's `<bigaf>\n`); when it does not, LLVM reports [`NOT_AN_ARCHIVE`].
pub fn has_archive_magic(data: &[u8]) -> bool {
    Archive::is_archive(data) || crate::kind::is_big_archive(data)
}

pub(super) const HEADER: usize = 60;

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
