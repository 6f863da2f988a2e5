//! The private `.job-*` directories jobs write in, their locks, and the removal of what
//! killed runs left behind.

use crate::builder::error::Error;
use std::path::Path;

/// A job's private directory in the cache (`.job-*`), locked (`lock`, an exclusive file lock)
/// for as long as the job runs, so that [`remove_leftovers`] can tell a killed run's directory
/// from a running job's. Removed when dropped.
#[derive(Debug)]
pub(crate) struct JobDir {
    pub(super) dir: tempfile::TempDir,
    pub(super) _lock: std::fs::File,
}

impl JobDir {
    /// Creates and locks a new private directory in `cache_dir`.
    pub(crate) fn new(cache_dir: &Path) -> Result<JobDir, Error> {
        let dir = tempfile::Builder::new()
            .prefix(JOB_PREFIX)
            .tempdir_in(cache_dir)
            .map_err(|e| Error::io("creating a temporary directory in", cache_dir, e))?;
        let lock = new_lock(dir.path(), b"")?;
        Ok(JobDir { dir, _lock: lock })
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Creates the [`LOCK`] of `dir`, holding `content`, locked (exclusively) by the file returned:
/// made and locked under another name, then renamed, so that a `lock` a build finds is always
/// held by its owner while that runs (a job, a background PCH's clang), or by nothing.
pub(crate) fn new_lock(dir: &Path, content: &[u8]) -> Result<std::fs::File, Error> {
    use std::io::Write;
    let new = dir.join(".lock-new");
    let mut lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&new)
        .map_err(|e| Error::io("creating", &new, e))?;
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive)
        .map_err(|e| Error::io("locking", &new, e.into()))?;
    lock.write_all(content)
        .map_err(|e| Error::io("writing", &new, e))?;
    let path = dir.join(LOCK);
    std::fs::rename(&new, &path).map_err(|e| Error::io("renaming", &new, e))?;
    Ok(lock)
}

/// What `read` finds in a record of the cache, or else what `ask` answers (and writes into
/// it), asked while holding the lock `<record>.asking`: builds that share the cache and start
/// together (`make -j`) ask a tool once instead of each, the others reading the record once
/// the lock is free. Without the lock (it cannot be made), `ask` runs as it is.
pub(crate) fn read_or_ask<T>(
    record: &Path,
    read: impl Fn() -> Option<T>,
    ask: impl FnOnce() -> Option<T>,
) -> Option<T> {
    if let Some(v) = read() {
        return Some(v);
    }
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(record.with_extension("asking"))
        .ok();
    let held = lock
        .as_ref()
        .is_some_and(|l| rustix::fs::flock(l, rustix::fs::FlockOperation::LockExclusive).is_ok());
    if held {
        if let Some(v) = read() {
            return Some(v);
        }
    }
    ask()
}

pub(crate) const JOB_PREFIX: &str = ".job-";

/// The lock file of a job's private directory (and of a background PCH's).
pub(crate) const LOCK: &str = "lock";

/// How old an unlocked leftover without a lock (a job directory of an older version, a
/// device link's temporary file) must be before it is removed: longer than any compile.
pub(crate) const LEFTOVER_AGE: std::time::Duration = std::time::Duration::from_secs(3600);

/// How old a background PCH's directory that no build adopted must be before it is removed:
/// it waits for the first edit after a cold build, which may come days later (a build that
/// compiles nothing adopts nothing).
pub(crate) const BACKGROUND_AGE: std::time::Duration =
    std::time::Duration::from_secs(14 * 24 * 3600);

/// The `lock` of `dir` (a job's or a background PCH's directory): taken here (`Ok`, held
/// while the file is open) or held by a process that still runs (`Err`); `None` when there is
/// none.
pub(crate) fn try_lock(dir: &Path) -> Option<Result<std::fs::File, std::fs::File>> {
    let lock = std::fs::File::open(dir.join(LOCK)).ok()?;
    let free = rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive);
    Some(if free.is_ok() { Ok(lock) } else { Err(lock) })
}

/// Removes what killed runs left in the cache: `.job-*` directories whose lock no job holds,
/// and (after [`LEFTOVER_AGE`]) job directories without a lock and `.linked-*` temporary
/// files; (after [`BACKGROUND_AGE`]) the `.bg` directories of background PCHs that no build
/// adopted and whose lock nothing holds. Running jobs, of this or another process, hold
/// their lock and are left alone.
pub(crate) fn remove_leftovers(cache_dir: &Path) {
    let Ok(entries) = std::fs::read_dir(cache_dir) else {
        return;
    };
    let older = |p: &Path, than| {
        std::fs::symlink_metadata(p)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > than))
    };
    let old = |p: &Path| older(p, LEFTOVER_AGE);
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let path = entry.path();
        if name.ends_with(".bg") && older(&path, BACKGROUND_AGE) {
            if !matches!(try_lock(&path), Some(Err(_))) {
                let _ = std::fs::remove_dir_all(&path);
            }
        } else if name.starts_with(JOB_PREFIX) {
            match try_lock(&path) {
                // Held while removing, so that a job that somehow still runs would show.
                Some(Ok(_held)) => {
                    let _ = std::fs::remove_dir_all(&path);
                }
                None if old(&path) => {
                    let _ = std::fs::remove_dir_all(&path);
                }
                Some(Err(_)) | None => {}
            }
        } else if name.starts_with(".linked-") && old(&path) {
            let _ = std::fs::remove_file(&path);
        }
    }
}
