//! `-check-input-archive`: the target IDs of each member's bundles checked for conflicts.

use crate::id::target_id;

use super::error::CheckArchiveError;
use super::members::member_ids;
use super::reader::Archive;

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
