//! The content-hash cache in `OUT_DIR` and the compiler's depfiles.
//!
//! Each (source, arch) job has a stable *job key* ([`crate::builder::command::KeyBuilder`] with the
//! `Job` domain): the compiler identity, the launcher and the ordered arguments (output paths
//! as placeholders), source path and architecture included. Its record
//! `<cache>/<stem>-<arch>-<key>.rec` holds:
//! - the context: the compiler's environment variables and the include search, with the
//!   search directories that hold a file of each header's name ([`crate::builder::cache::lookup`]);
//! - every output with its size and content hash;
//! - every input the compile read — the source and every header from the depfile — with a
//!   hash of its content as the compiler read it ([`ContentHashes::as_read_since`]: a record
//!   is written only when no input changed after the job started, else the result is used
//!   once and the next build compiles again);
//! - the compiler's warnings, replayed on a cache hit.
//!
//! Content hashes of unchanged files are not computed again: the stamp table `<cache>/stamps`
//! ([`ContentHashes::with_stamps`]) keeps each version hashed (device, inode, size, both
//! times), as git's index does.
//!
//! A job whose record exists, whose context and inputs are unchanged and whose outputs are
//! still what it wrote is not run. Touching a file without changing it therefore does not
//! recompile; changing a header recompiles exactly the jobs that read it, for every
//! architecture. Jobs write in private `.job-*` directories ([`JobDir`], locked while they
//! run); [`remove_leftovers`] removes those of killed runs.

pub(crate) mod lookup;

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use xxhash_rust::xxh3::xxh3_128;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use crate::builder::error::Error;

// Version 2 added the compiler's diagnostics (`! ` lines), replayed on a cache hit; version 3
// the context (`= `) and each output's size and content hash (`> `).
const RECORD_HEADER: &str = "offload-build cache record 4";

/// How long before a job starts a change to one of its inputs makes its result unrecorded:
/// the file systems' timestamps come from a clock that may lag the one read here by a tick.
const CHANGE_SLACK: std::time::Duration = std::time::Duration::from_millis(50);

/// What identifies one version of a file: device, inode, size, modification and change time
/// (the change time moves with every write and cannot be set back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
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
fn stamp_line(path: &Path, s: &Stamp, h: u128) -> Option<String> {
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
fn parse_stamp_line(line: &str) -> Option<(PathBuf, (Stamp, u128))> {
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
type Known = Option<(u128, Option<Stamp>)>;

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
const STAMPS_HEADER: &str = "offload-build stamps 1";

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
        // The last line is the hash of the others: a damaged table is not used at all.
        let body = text.trim_end_matches('\n').rsplit_once('\n');
        let whole = body.is_some_and(|(rest, last)| {
            last.strip_prefix("# ")
                .and_then(|h| u128::from_str_radix(h, 16).ok())
                == Some(xxh3_128(&text.as_bytes()[..=rest.len()]))
        });
        let mut lines = body.map_or("", |(rest, _)| rest).lines();
        let seen = if whole && lines.next() == Some(STAMPS_HEADER) {
            lines
                .filter_map(parse_stamp_line)
                .map(|(p, v)| (p.into_os_string(), v))
                .collect()
        } else {
            HashMap::new()
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
        let mut text = format!("{STAMPS_HEADER}\n");
        for (path, stamp, h) in table {
            if let Some(line) = stamp_line(Path::new(path), &stamp, h) {
                text.push_str(&line);
            }
        }
        text.push_str(&format!("# {:032x}\n", xxh3_128(text.as_bytes())));
        let _ = crate::builder::fs::write_atomic(&cache_dir.join("stamps"), text.as_bytes());
    }

    /// How many files this build read to hash them.
    #[cfg(test)]
    fn reads(&self) -> usize {
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
        let known = std::fs::read(path).ok().map(|d| {
            let after = Stamp::of(path);
            (xxh3_128(&d), after.filter(|a| before == Some(*a)))
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

/// What a successful job read and wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Record {
    /// What the result depends on beside the inputs' content ([`crate::builder::cache::lookup::Lookups`]).
    pub context: u128,
    /// Every output with its size and content hash, in the job's order.
    pub outputs: Vec<(PathBuf, u64, u128)>,
    /// Every input with its content hash, the source first.
    pub deps: Vec<(PathBuf, u128)>,
    /// The paths whose existence decided what the compile read ([`crate::builder::cache::lookup::Lookups::probes`]).
    pub probes: Vec<PathBuf>,
    /// What the compiler printed on a successful compile (its warnings), one line each, so
    /// that a cache hit shows the same warnings as the compile did.
    pub stderr: Vec<String>,
}

impl Record {
    fn render(&self) -> String {
        let mut s = format!("{RECORD_HEADER}\n= {:032x}\n", self.context);
        for (p, size, h) in &self.outputs {
            s.push_str(&format!("> {size} {h:032x} {}\n", p.display()));
        }
        for (p, h) in &self.deps {
            s.push_str(&format!("{h:032x} {}\n", p.display()));
        }
        for p in &self.probes {
            s.push_str(&format!("? {}\n", p.display()));
        }
        for line in &self.stderr {
            s.push_str(&format!("! {line}\n"));
        }
        s
    }

    fn parse(text: &str) -> Option<Record> {
        let mut lines = text.lines();
        if lines.next()? != RECORD_HEADER {
            return None;
        }
        let context = u128::from_str_radix(lines.next()?.strip_prefix("= ")?, 16).ok()?;
        let mut rec = Record {
            context,
            outputs: Vec::new(),
            deps: Vec::new(),
            probes: Vec::new(),
            stderr: Vec::new(),
        };
        for line in lines {
            if let Some(l) = line.strip_prefix("! ") {
                rec.stderr.push(l.to_string());
            } else if let Some(l) = line.strip_prefix("? ") {
                rec.probes.push(PathBuf::from(l));
            } else if let Some(l) = line.strip_prefix("> ") {
                let (size, rest) = l.split_once(' ')?;
                let (h, p) = rest.split_once(' ')?;
                let h = u128::from_str_radix(h, 16).ok()?;
                rec.outputs.push((PathBuf::from(p), size.parse().ok()?, h));
            } else {
                let (h, p) = line.split_once(' ')?;
                rec.deps
                    .push((PathBuf::from(p), u128::from_str_radix(h, 16).ok()?));
            }
        }
        Some(rec)
    }

    /// Reads a record; `None` when missing or unreadable (the job then runs).
    pub(crate) fn load(path: &Path) -> Option<Record> {
        Record::parse(&std::fs::read_to_string(path).ok()?)
    }

    /// Writes the record atomically.
    pub(crate) fn store(&self, path: &Path) -> Result<(), Error> {
        crate::builder::fs::write_atomic(path, self.render().as_bytes())
    }

    /// Whether every input still has the recorded content.
    pub(crate) fn is_fresh(&self, hashes: &ContentHashes) -> bool {
        !self.deps.is_empty() && self.deps.iter().all(|(p, h)| hashes.file(p) == Some(*h))
    }

    /// Why `data` is not the recorded content of output `i`; `None` when it is.
    pub(crate) fn output_mismatch(&self, i: usize, data: &[u8]) -> Option<String> {
        let Some((_, size, h)) = self.outputs.get(i) else {
            return Some("the record does not list it".into());
        };
        if data.len() as u64 != *size {
            return Some(format!("{} bytes where {size} were written", data.len()));
        }
        (xxh3_128(data) != *h).then(|| "its content is not what was written".to_string())
    }
}

/// A job's private directory in the cache (`.job-*`), locked (`lock`, an exclusive file lock)
/// for as long as the job runs, so that [`remove_leftovers`] can tell a killed run's directory
/// from a running job's. Removed when dropped.
#[derive(Debug)]
pub(crate) struct JobDir {
    dir: tempfile::TempDir,
    _lock: std::fs::File,
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

const JOB_PREFIX: &str = ".job-";
/// The lock file of a job's private directory (and of a background PCH's).
pub(crate) const LOCK: &str = "lock";

/// How old an unlocked leftover without a lock (a job directory of an older version, a
/// device link's temporary file) must be before it is removed: longer than any compile.
const LEFTOVER_AGE: std::time::Duration = std::time::Duration::from_secs(3600);

/// How old a background PCH's directory that no build adopted must be before it is removed:
/// it waits for the first edit after a cold build, which may come days later (a build that
/// compiles nothing adopts nothing).
const BACKGROUND_AGE: std::time::Duration = std::time::Duration::from_secs(14 * 24 * 3600);

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

/// The prerequisites of a Make-style depfile (`out.o: a.hip b.h \` …), unescaped as GNU make
/// and Ninja read what clang writes: `2N+1` backslashes before a space are `N` backslashes and
/// a space within the name (`2N` end it after `N`), `\#` is `#` (other backslashes before it
/// kept), `$$` is `$`, and any other backslash is itself. Names are bytes (a file name need
/// not be UTF-8).
pub(crate) fn parse_depfile(text: &[u8]) -> Vec<PathBuf> {
    let mut deps: Vec<PathBuf> = Vec::new();
    // Hundreds of headers: a set keeps the first of each, in order, in linear time.
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let mut cur: Vec<u8> = Vec::new();
    let mut seen_colon = false;
    let mut flush = |cur: &mut Vec<u8>, seen_colon: bool, deps: &mut Vec<PathBuf>| {
        if seen_colon && !cur.is_empty() {
            let p = path_from_bytes(std::mem::take(cur));
            if seen.insert(p.clone()) {
                deps.push(p);
            }
        }
        cur.clear();
    };
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        i += 1;
        match c {
            b'\\' => {
                let mut n = 1;
                while text.get(i) == Some(&b'\\') {
                    n += 1;
                    i += 1;
                }
                match text.get(i) {
                    Some(b' ') => {
                        cur.extend(std::iter::repeat_n(b'\\', n / 2));
                        i += 1;
                        if n % 2 == 1 {
                            cur.push(b' ');
                        } else {
                            flush(&mut cur, seen_colon, &mut deps);
                        }
                    }
                    Some(b'#') => {
                        cur.extend(std::iter::repeat_n(b'\\', n - 1));
                        cur.push(b'#');
                        i += 1;
                    }
                    Some(b'\n') | Some(b'\r') => {
                        // A line continuation (after any literal backslashes).
                        cur.extend(std::iter::repeat_n(b'\\', n - 1));
                        if text.get(i) == Some(&b'\r') {
                            i += 1;
                        }
                        if text.get(i) == Some(&b'\n') {
                            i += 1;
                        }
                        flush(&mut cur, seen_colon, &mut deps);
                    }
                    _ => cur.extend(std::iter::repeat_n(b'\\', n)),
                }
            }
            b'$' if text.get(i) == Some(&b'$') => {
                i += 1;
                cur.push(b'$');
            }
            b':' if !seen_colon
                && matches!(text.get(i), Some(b' ' | b'\n' | b'\r' | b'\t') | None) =>
            {
                seen_colon = true;
                cur.clear();
            }
            b' ' | b'\t' | b'\r' => flush(&mut cur, seen_colon, &mut deps),
            b'\n' => {
                flush(&mut cur, seen_colon, &mut deps);
                // A new rule (for example `-MP` phony targets) starts on the next line.
                seen_colon = false;
            }
            _ => cur.push(c),
        }
    }
    flush(&mut cur, seen_colon, &mut deps);
    deps
}

#[cfg(unix)]
fn path_from_bytes(b: Vec<u8>) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    PathBuf::from(std::ffi::OsString::from_vec(b))
}

#[cfg(not(unix))]
fn path_from_bytes(b: Vec<u8>) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(&b).into_owned())
}

/// The file a depfile names when clang changed its backslashes: clang writes file names
/// through `llvm::sys::path::native`, which on POSIX turns each `\\` into `/`, so that
/// `inc/a\\b.h` is listed as `inc/a/b.h`. For a `path` that does not exist, every `/` after
/// the first existing directory is tried as either (a `/` only where the name so far is a
/// directory); the first existing file is returned, `None` when there is none.
pub(crate) fn restore_backslashes(path: &Path) -> Option<PathBuf> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        if path.exists() {
            return None;
        }
        let bytes = path.as_os_str().as_bytes();
        let parts: Vec<&[u8]> = bytes.split(|&b| b == b'/').collect();
        if parts.len() < 2 {
            return None;
        }
        fn search(prefix: Vec<u8>, rest: &[&[u8]], budget: &mut usize) -> Option<PathBuf> {
            let Some((next, rest)) = rest.split_first() else {
                let p = path_from_bytes(prefix);
                return p.is_file().then_some(p);
            };
            if *budget == 0 {
                return None;
            }
            *budget -= 1;
            let is_dir = prefix.is_empty() || path_from_bytes(prefix.clone()).is_dir();
            if is_dir {
                let mut slash = prefix.clone();
                slash.push(b'/');
                slash.extend_from_slice(next);
                if let Some(p) = search(slash, rest, budget) {
                    return Some(p);
                }
            }
            if prefix.is_empty() || prefix.ends_with(b"/") {
                return None;
            }
            let mut backslash = prefix;
            backslash.push(b'\\');
            backslash.extend_from_slice(next);
            search(backslash, rest, budget)
        }
        let mut budget = 4096;
        search(parts[0].to_vec(), &parts[1..], &mut budget)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// A job's inputs: its source, then every file its depfile names (`no_depfile` set when
/// there is none) (a relative name is
/// taken from `dir`, the directory the command ran in, else this process's).
pub(crate) fn read_deps(
    no_depfile: &AtomicBool,
    source: &Path,
    depfile: &Path,
    dir: Option<&Path>,
) -> Vec<PathBuf> {
    let text = std::fs::read(depfile).unwrap_or_else(|_| {
        no_depfile.store(true, Ordering::Relaxed);
        Vec::new()
    });
    let mut deps = vec![source.to_path_buf()];
    let mut seen: HashSet<PathBuf> = deps.iter().cloned().collect();
    for dep in parse_depfile(&text) {
        let dep = if dep.is_absolute() {
            dep
        } else {
            // The compiler ran in the job's directory (the root), else in this process's.
            match dir {
                Some(d) => d.join(&dep),
                None => std::env::current_dir().map(|c| c.join(&dep)).unwrap_or(dep),
            }
        };
        // A name with a backslash, which clang listed with a `/` instead.
        let dep = restore_backslashes(&dep).unwrap_or(dep);
        if seen.insert(dep.clone()) {
            deps.push(dep);
        }
    }
    deps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamp_table_spares_reading_unchanged_files_and_never_hides_a_change() {
        use std::time::{Duration, SystemTime};
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.h"), dir.path().join("b.h"));
        std::fs::write(&a, "one").unwrap();
        std::fs::write(&b, "two").unwrap();
        // Older than the build by more than a tick.
        std::thread::sleep(Duration::from_millis(120));
        let started = SystemTime::now();
        let h = ContentHashes::with_stamps(dir.path());
        let (ha, hb) = (h.file(&a).unwrap(), h.file(&b).unwrap());
        assert_eq!(h.reads(), 2);
        h.save_stamps(dir.path(), started);
        // The next build reads neither.
        let h = ContentHashes::with_stamps(dir.path());
        assert_eq!((h.file(&a), h.file(&b)), (Some(ha), Some(hb)));
        assert_eq!(h.reads(), 0);
        // A write of the same size moves the change time: read again, the new hash.
        std::fs::write(&a, "ONE").unwrap();
        let started = SystemTime::now();
        let h = ContentHashes::with_stamps(dir.path());
        let new_a = h.file(&a);
        assert!(new_a.is_some() && new_a != Some(ha));
        assert_eq!(h.file(&b), Some(hb));
        assert_eq!(h.reads(), 1);
        // a.h changed less than a tick before that build: not kept, read again.
        h.save_stamps(dir.path(), started);
        let h = ContentHashes::with_stamps(dir.path());
        assert_eq!((h.file(&a), h.file(&b)), (new_a, Some(hb)));
        assert_eq!(h.reads(), 1);
        // A damaged table (one digit of a hash changed) is not used.
        let table = dir.path().join("stamps");
        let text = std::fs::read_to_string(&table).unwrap();
        assert!(text.lines().count() == 4 && text.lines().last().unwrap().starts_with("# "));
        let line = text.lines().nth(1).unwrap();
        let flipped = if line.starts_with('0') { "1" } else { "0" };
        let damaged = format!("{flipped}{}", &line[1..]);
        std::fs::write(&table, text.replacen(line, &damaged, 1)).unwrap();
        let h = ContentHashes::with_stamps(dir.path());
        assert_eq!((h.file(&a), h.file(&b)), (new_a, Some(hb)));
        assert_eq!(h.reads(), 2);
    }

    #[test]
    fn depfiles() {
        let d = parse_depfile(b"out/k.o: src/k.hip inc/a.h \\\n  inc/my\\ dir/b.h C:/x/c.h\n");
        assert_eq!(
            d,
            ["src/k.hip", "inc/a.h", "inc/my dir/b.h", "C:/x/c.h"]
                .map(PathBuf::from)
                .to_vec()
        );
        let d = parse_depfile(b"C:/out/k.o: C:/src/k.hip\n");
        assert_eq!(d, [PathBuf::from("C:/src/k.hip")]);
        let d = parse_depfile(b"k.o: k.hip a.h\na.h:\n");
        assert_eq!(d, ["k.hip", "a.h"].map(PathBuf::from).to_vec());
        // Backslashes as make and Ninja read clang's escaping.
        let d = parse_depfile(b"k.o: a\\\\\\ b.h c\\d.h e\\\\f\\#g.h h\\\\ $$i.h\n");
        assert_eq!(
            d,
            ["a\\ b.h", "c\\d.h", "e\\\\f#g.h", "h\\", "$i.h"]
                .map(PathBuf::from)
                .to_vec()
        );
    }

    #[test]
    fn records_round_trip_and_freshness() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.h");
        std::fs::write(&a, "one").unwrap();
        let h = ContentHashes::default();
        let rec = Record {
            context: 7,
            outputs: vec![(dir.path().join("k.o"), 3, 9)],
            deps: vec![(a.clone(), h.file(&a).unwrap())],
            probes: vec![PathBuf::from("/x/y.h")],
            stderr: vec!["k.hip:1:2: warning: w".into(), "    1 | int x;".into()],
        };
        let rp = dir.path().join("r.rec");
        rec.store(&rp).unwrap();
        let back = Record::load(&rp).unwrap();
        assert_eq!(back, rec);
        assert!(back.is_fresh(&ContentHashes::default()));
        std::fs::write(&a, "two").unwrap();
        assert!(!back.is_fresh(&ContentHashes::default()));
    }

    #[test]
    fn leftovers_of_killed_runs_go_and_running_jobs_stay() {
        let dir = tempfile::tempdir().unwrap();
        let running = JobDir::new(dir.path()).unwrap();
        let killed = JobDir::new(dir.path()).unwrap();
        let killed_path = killed.path().to_path_buf();
        // A killed run: its directory stays, its lock is released with the process.
        let _ = killed.dir.keep();
        drop(killed._lock);
        let young = dir.path().join(".job-without-lock");
        std::fs::create_dir(&young).unwrap();
        remove_leftovers(dir.path());
        assert!(running.path().is_dir());
        assert!(!killed_path.exists());
        assert!(
            young.is_dir(),
            "a young directory without a lock may be a job starting"
        );
    }

    #[test]
    fn a_file_changed_after_the_job_started_is_not_vouched_for() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.h");
        std::fs::write(&a, "one").unwrap();
        let hashes = ContentHashes::default();
        let before = hashes.file(&a).unwrap();
        std::thread::sleep(CHANGE_SLACK * 2);
        let started = std::time::SystemTime::now();
        // Unchanged since the job started: the hash known from before stands.
        assert_eq!(hashes.as_read_since(&a, started), Ok(Some(before)));
        // Changed during the job: what the compiler read is not known.
        std::fs::write(&a, "two").unwrap();
        assert_eq!(hashes.as_read_since(&a, started), Err(()));
        let missing = dir.path().join("gone.h");
        assert_eq!(hashes.as_read_since(&missing, started), Ok(None));
    }
}
