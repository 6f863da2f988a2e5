//! Content hashes of the files jobs read, and the stamp table (`<cache>/stamps`: device,
//! inode, size and both times of each version hashed, as git's index keeps them) that spares
//! a no-op build from hashing unchanged files.

use crate::builder::cache::sealed;
use foldhash::{HashMap, HashMapExt};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// How long before a job starts a change to one of its inputs makes its result unrecorded:
/// the file systems' timestamps come from a clock that may lag the one read here by a tick.
pub(crate) const CHANGE_SLACK: std::time::Duration = std::time::Duration::from_millis(50);

/// Waits until files written before the call are older than the [`CHANGE_SLACK`] of any job
/// started after it (and a clock tick more): for a file a build writes itself and its jobs
/// then read, such as a toolkit's links directory.
pub(crate) fn settle_written() {
    std::thread::sleep(CHANGE_SLACK + std::time::Duration::from_millis(10));
}

/// What identifies one version of a file: device, inode, size, modification and change time
/// (the change time moves with every write and cannot be set back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    id: (u64, u64),
    size: u64,
    mtime: Option<std::time::SystemTime>,
    ctime: (i64, i64),
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        let m = std::fs::metadata(path).ok()?;
        #[cfg(unix)]
        let (id, ctime) = {
            use std::os::unix::fs::MetadataExt;
            ((m.dev(), m.ino()), (m.ctime(), m.ctime_nsec()))
        };
        #[cfg(not(unix))]
        let (id, ctime) = ((0, 0), (0, 0));
        Some(Stamp {
            id,
            size: m.len(),
            mtime: m.modified().ok(),
            ctime,
        })
    }

    /// Whether the file changed at `since` or later (or at an unknown time).
    fn changed_since(&self, since: std::time::SystemTime) -> bool {
        let since = since - CHANGE_SLACK;
        #[cfg(unix)]
        {
            let at = std::time::UNIX_EPOCH
                .checked_add(std::time::Duration::new(
                    self.ctime.0.max(0) as u64,
                    self.ctime.1.clamp(0, 999_999_999) as u32,
                ))
                .unwrap_or(std::time::UNIX_EPOCH);
            at >= since || self.mtime.is_none_or(|m| m >= since)
        }
        #[cfg(not(unix))]
        self.mtime.is_none_or(|m| m >= since)
    }
}

/// One line of the stamp table: the hash, device, inode, size, modification and change time
/// (seconds and nanoseconds) and the path (UTF-8 paths only; others are read every build).
pub(crate) fn stamp_line(path: &Path, s: &Stamp, h: u128) -> Option<String> {
    let m = s.mtime?.duration_since(std::time::UNIX_EPOCH).ok()?;
    let path = path.to_str().filter(|p| !p.contains('\n'))?;
    Some(format!(
        "{h:032x} {} {} {} {} {} {} {} {path}\n",
        s.id.0,
        s.id.1,
        s.size,
        m.as_secs(),
        m.subsec_nanos(),
        s.ctime.0,
        s.ctime.1
    ))
}

/// Reads a line of [`stamp_line`]; `None` when it is not one.
pub(crate) fn parse_stamp_line(line: &str) -> Option<(PathBuf, (Stamp, u128))> {
    let mut f = line.splitn(9, ' ');
    let h = u128::from_str_radix(f.next()?, 16).ok()?;
    let mut n = || f.next()?.parse::<u64>().ok();
    let (dev, ino, size, ms, mns) = (n()?, n()?, n()?, n()?, n()?);
    let (cs, cns) = (n()? as i64, n()? as i64);
    let path = PathBuf::from(f.next()?);
    let mtime = std::time::UNIX_EPOCH.checked_add(std::time::Duration::new(ms, mns as u32));
    let stamp = Stamp {
        id: (dev, ino),
        size,
        mtime: Some(mtime?),
        ctime: (cs, cns),
    };
    Some((path, (stamp, h)))
}

/// A file's content hash, with the version of the file it is of (`None` when the file
/// changed while it was read).
pub(crate) type Known = Option<(u128, Option<Stamp>)>;

/// Hashes of file contents, each file read at most once per build, and not at all when an
/// earlier build hashed the same version of it ([`ContentHashes::with_stamps`]).
#[derive(Debug, Default)]
pub(crate) struct ContentHashes {
    /// By path, as bytes: hashing a `Path` walks its components, and these maps are the
    /// no-op build's hot path (every header of every job).
    memo: Mutex<HashMap<OsString, Known>>,
    /// The versions earlier builds hashed (the cache's stamp table), by path.
    seen: HashMap<OsString, (Stamp, u128)>,
    /// Files read and hashed by this build.
    reads: std::sync::atomic::AtomicUsize,
}

/// How long a file must have been unchanged before a build began for the build to keep the
/// version it hashed in the stamp table: more than the coarsest timestamp granularity of a
/// file system (FAT's two seconds), so that no later write can leave the same stamp.
pub(crate) const STAMP_SETTLE: std::time::Duration = std::time::Duration::from_secs(3);

/// The first line of the stamp table.
pub(crate) const STAMPS_HEADER: &str = "offload-build stamps 1";

impl ContentHashes {
    /// Each of `deps` that exists with its content hash as a job that started at `started`
    /// read it; `None` when one changed since.
    pub(crate) fn hashed(
        &self,
        deps: &[PathBuf],
        started: SystemTime,
    ) -> Option<Vec<(PathBuf, u128)>> {
        let mut out = Vec::new();
        for dep in deps {
            if let Some(h) = self.as_read_since(dep, started).ok()? {
                out.push((dep.clone(), h));
            }
        }
        Some(out)
    }

    /// Hashes that start from the stamp table in `cache_dir` (`stamps`), written by
    /// [`ContentHashes::save_stamps`]: a file whose device, inode, size, modification and
    /// change time are those of a version an earlier build hashed has that hash, without
    /// being read (as git's index does). A write moves the change time, which cannot be set
    /// back, so a changed file never matches; the table keeps only versions that had not
    /// changed for [`STAMP_SETTLE`] before the build that hashed them began, so that a write
    /// in the same timestamp tick as the hashing cannot hide either, even where the file
    /// system keeps whole seconds (or FAT's two). A missing or damaged table is an empty one.
    pub(crate) fn with_stamps(cache_dir: &Path) -> ContentHashes {
        let text = std::fs::read_to_string(cache_dir.join("stamps")).unwrap_or_default();
        // A damaged table is not used at all.
        let seen = match sealed::unseal(STAMPS_HEADER, &text) {
            Some(body) => body
                .lines()
                .filter_map(parse_stamp_line)
                .map(|(p, v)| (p.into_os_string(), v))
                .collect(),
            None => HashMap::new(),
        };
        ContentHashes {
            seen,
            ..ContentHashes::default()
        }
    }

    /// Writes the stamp table of `cache_dir`: the versions this build hashed that had not
    /// changed since `settled` (for a build, [`STAMP_SETTLE`] before it began), and those of
    /// the earlier table this build did not replace. Not written when it would say nothing
    /// new.
    pub(crate) fn save_stamps(&self, cache_dir: &Path, settled: std::time::SystemTime) {
        let memo = self.memo();
        let mut table: Vec<(&OsStr, Stamp, u128)> = Vec::new();
        let mut new = 0;
        for (path, known) in memo.iter() {
            if let Some((h, Some(stamp))) = known {
                if !stamp.changed_since(settled) {
                    new += usize::from(self.seen.get(path) != Some(&(*stamp, *h)));
                    table.push((path.as_os_str(), *stamp, *h));
                }
            }
        }
        if new == 0 {
            return;
        }
        for (path, (stamp, h)) in &self.seen {
            if !memo.contains_key(path) {
                table.push((path.as_os_str(), *stamp, *h));
            }
        }
        let mut body = String::new();
        for (path, stamp, h) in table {
            if let Some(line) = stamp_line(Path::new(path), &stamp, h) {
                body.push_str(&line);
            }
        }
        let text = sealed::seal(STAMPS_HEADER, &body);
        let _ = crate::builder::fs::write_atomic(&cache_dir.join("stamps"), text.as_bytes());
    }

    /// How many files this build read to hash them.
    #[cfg(test)]
    pub(crate) fn reads(&self) -> usize {
        self.reads.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn memo(&self) -> std::sync::MutexGuard<'_, HashMap<OsString, Known>> {
        self.memo.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn known(&self, path: &Path) -> Known {
        if let Some(k) = self.memo().get(path.as_os_str()) {
            return *k;
        }
        if let Some((stamp, h)) = self.seen.get(path.as_os_str()) {
            if Stamp::of(path) == Some(*stamp) {
                let known = Some((*h, Some(*stamp)));
                self.memo().insert(path.as_os_str().to_owned(), known);
                return known;
            }
        }
        self.reads
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let before = Stamp::of(path);
        let known = crate::builder::fs::hash_file(path).ok().map(|(h, _)| {
            let after = Stamp::of(path);
            (h, after.filter(|a| before == Some(*a)))
        });
        self.memo().insert(path.as_os_str().to_owned(), known);
        known
    }

    /// Hash of a file's content; `None` when it cannot be read (then nothing matches it).
    pub(crate) fn file(&self, path: &Path) -> Option<u128> {
        self.known(path).map(|(h, _)| h)
    }

    /// Hash of a file's content as a compile that started at `start` read it: `Err(())` when
    /// the file changed since (or while it was hashed), so that what the compile read is not
    /// known; `Ok(None)` when it cannot be read.
    pub(crate) fn as_read_since(
        &self,
        path: &Path,
        start: std::time::SystemTime,
    ) -> Result<Option<u128>, ()> {
        let Some(now) = Stamp::of(path) else {
            return Ok(None);
        };
        if now.changed_since(start) {
            return Err(());
        }
        self.current(path, now)
    }

    /// Hash of the content `path` holds now (the version stamped `now`): `Err(())` when it
    /// changed while it was hashed; `Ok(None)` when it cannot be read.
    fn current(&self, path: &Path, now: Stamp) -> Result<Option<u128>, ()> {
        if let Some((h, Some(stamp))) = self.known(path) {
            if stamp == now {
                return Ok(Some(h));
            }
        }
        // Known from an older version of the file: read it again.
        self.forget(path);
        match self.known(path) {
            Some((h, Some(stamp))) if stamp == now => Ok(Some(h)),
            None => Ok(None),
            Some(_) => Err(()),
        }
    }

    /// Hash of the content `path` holds now (read again unless this version was hashed):
    /// `None` when it cannot be read or changes while it is read. Symbolic links are followed
    /// and the file now at the path decides, so a link pointed elsewhere or a directory
    /// renamed over another gives the new content.
    pub(crate) fn now(&self, path: &Path) -> Option<u128> {
        self.current(path, Stamp::of(path)?).ok().flatten()
    }

    /// The device and inode of `path` as it was hashed, without touching the file system;
    /// `None` when it was not hashed (or off Unix).
    pub(crate) fn file_id(&self, path: &Path) -> Option<(u64, u64)> {
        match self.memo().get(path.as_os_str()) {
            Some(Some((_, Some(stamp)))) if cfg!(unix) => Some(stamp.id),
            _ => None,
        }
    }

    /// Forgets what is known of `path` (after it was written).
    pub(crate) fn forget(&self, path: &Path) {
        self.memo().remove(path.as_os_str());
    }
}
