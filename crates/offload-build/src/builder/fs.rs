//! The crate's file helpers, in one place: atomic writes (a temporary file beside the target,
//! then a rename), so that builds sharing a cache or an output directory never read a
//! half-written file, and writes that leave an unchanged file alone; and lexical path
//! normalisation.

use std::path::{Component, Path, PathBuf};

use crate::builder::error::Error;

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

/// `path` with `.` and `..` resolved lexically (symlinks are not followed), as clang spells
/// headers in a depfile (`/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/cmath`
/// is `/usr/include/c++/12/cmath`).
pub(crate) fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match (c, out.components().next_back()) {
            (Component::CurDir, _) | (Component::ParentDir, Some(Component::RootDir)) => {}
            (Component::ParentDir, Some(Component::Normal(_))) => {
                out.pop();
            }
            (c, _) => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_resolves_dots() {
        let p = Path::new("/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/./cmath");
        assert_eq!(lexical(p), Path::new("/usr/include/c++/12/cmath"));
        assert_eq!(lexical(Path::new("../a/../b")), Path::new("../b"));
        assert_eq!(lexical(Path::new("/../x")), Path::new("/x"));
    }
}
