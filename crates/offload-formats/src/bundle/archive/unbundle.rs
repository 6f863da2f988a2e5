//! Unbundling ([`unbundle_archive`]): every bundle entry of every member copied into the
//! device archive of each compatible target, under the name LLVM gives it.

use std::borrow::Cow;

use crate::bundle::fatobj;
use crate::id::EntryId;

use super::error::{MemberError, UnbundleError, WriteArchiveError};
use super::members::{decompress_member, member_entries};
use super::reader::Archive;
use super::writer::{NewMember, write_gnu_archive};

/// Options of [`unbundle_archive`].
#[derive(Clone, Copy, Debug, Default)]
pub struct UnbundleOptions {
    /// `-allow-missing-bundles`: a target without code objects gets an empty archive.
    pub allow_missing: bool,
    /// `-hip-openmp-compatible`.
    pub hip_openmp: bool,
}

/// `sys::path::stem` and `sys::path::extension` of a file name.
pub(super) fn stem_and_extension(name: &[u8]) -> (&[u8], &[u8]) {
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
