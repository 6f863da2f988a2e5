//! The crate's file helpers, in one place: atomic writes (a temporary file beside the target,
//! then a rename), so that builds sharing a cache or an output directory never read a
//! half-written file, and writes that leave an unchanged file alone; a file's content hash,
//! streamed; and lexical path normalisation.

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

/// The content hash (XXH3-128) of the file at `path` and its length: read whole when small,
/// else streamed through a buffer of [`STREAM`] bytes, so that hashing a precompiled preamble
/// of megabytes allocates no copy of it (the same hash either way).
pub(crate) fn hash_file(path: &Path) -> std::io::Result<(u128, u64)> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut buf = vec![0u8; STREAM];
    let mut filled = 0;
    // The first buffer: a small file is hashed in one call.
    while filled < buf.len() {
        match f.read(&mut buf[filled..]) {
            Ok(0) => return Ok((xxhash_rust::xxh3::xxh3_128(&buf[..filled]), filled as u64)),
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let mut h = xxhash_rust::xxh3::Xxh3Default::new();
    let mut len = filled as u64;
    h.update(&buf[..filled]);
    loop {
        match f.read(&mut buf) {
            Ok(0) => return Ok((h.digest128(), len)),
            Ok(n) => {
                h.update(&buf[..n]);
                len += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// How much of a file [`hash_file`] reads at a time.
const STREAM: usize = 256 * 1024;

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
    fn a_streamed_hash_is_the_whole_files() {
        let dir = tempfile::tempdir().unwrap();
        for len in [0, 5, STREAM, STREAM + 1, 3 * STREAM + 7] {
            let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let p = dir.path().join(format!("f{len}"));
            std::fs::write(&p, &data).unwrap();
            assert_eq!(
                hash_file(&p).unwrap(),
                (xxhash_rust::xxh3::xxh3_128(&data), len as u64),
                "{len} bytes"
            );
        }
        assert!(hash_file(&dir.path().join("none")).is_err());
    }

    #[test]
    fn lexical_resolves_dots() {
        let p = Path::new("/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/./cmath");
        assert_eq!(lexical(p), Path::new("/usr/include/c++/12/cmath"));
        assert_eq!(lexical(Path::new("../a/../b")), Path::new("../b"));
        assert_eq!(lexical(Path::new("/../x")), Path::new("/x"));
    }
}
