//! The crate's file helpers, in one place: atomic writes (a temporary file beside the target,
//! then a rename), so that builds sharing a cache or an output directory never read a
//! half-written file, and writes that leave an unchanged file alone.

use std::path::Path;

use super::error::Error;

/// Writes `data` to `path` through a temporary file in the same directory and a rename.
pub(crate) fn write_atomic(path: &Path, data: &[u8]) -> Result<(), Error> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| Error::io("creating", dir, e))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| Error::io("creating a file in", dir, e))?;
    std::io::Write::write_all(&mut tmp, data).map_err(|e| Error::io("writing", tmp.path(), e))?;
    tmp.persist(path)
        .map_err(|e| Error::io("writing", path, e.error))?;
    Ok(())
}

/// Writes `data` only when the file's content differs, so that an unchanged output keeps its
/// modification time (and Cargo does not rebuild what depends on it). Returns whether it wrote.
pub(crate) fn write_if_changed(path: &Path, data: &[u8]) -> Result<bool, Error> {
    if std::fs::read(path).is_ok_and(|old| old == data) {
        return Ok(false);
    }
    write_atomic(path, data)?;
    Ok(true)
}
