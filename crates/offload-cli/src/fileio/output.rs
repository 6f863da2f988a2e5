//! Output files that appear only when complete ([`OutputFile`]): written beside their target
//! and renamed into place, or written in place where the target must keep its identity.

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use super::os_path;
use super::temporaries;

/// An output file that appears only when complete.
///
/// The policy, the same for every tool:
/// - a symbolic link is followed to the file it names (a dangling link to the file it would
///   name), and that file is replaced, never the link;
/// - a target that is not a regular file (`/dev/null`, a FIFO, a terminal) or is reached
///   through `/proc` (`/dev/stdout`, `/proc/self/fd/N`) is opened and written in place, as
///   LLVM writes it;
/// - an existing regular file with more than one hard link, or owned by another user, is
///   written in place at [`commit`](OutputFile::commit) (from a finished temporary file), so
///   that its links, owner and mode stay as they are, as with LLVM;
/// - an existing file the caller may not write is refused with `Permission denied`, as LLVM
///   refuses it, before anything is written;
/// - anything else is written to a temporary file beside the target and renamed into place
///   at commit, keeping an existing target's permissions.
#[derive(Debug)]
pub struct OutputFile {
    kind: OutputKind,
    path: PathBuf,
}

#[derive(Debug)]
enum OutputKind {
    /// A temporary file renamed onto `target` at commit.
    Temp(tempfile::NamedTempFile, PathBuf),
    /// A temporary file copied into the existing `target` at commit.
    InPlace(tempfile::NamedTempFile, PathBuf),
    /// A `Temp` (`false`) or `InPlace` (`true`) output whose descriptor is closed
    /// ([`OutputFile::close`]) until it is reopened or committed.
    Closed(tempfile::TempPath, PathBuf, bool),
    /// Only while `close`/`reopen` move the state.
    Moving,
    Direct(File),
    Stdout(File),
}

/// Where writing `path` really goes: the end of its chain of symbolic links, or `None` when
/// the chain passes through `/proc` (magic links such as `/proc/self/fd/1`, which only
/// opening the original path follows correctly).
fn resolve_links(path: &Path) -> io::Result<Option<PathBuf>> {
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        if current.starts_with("/proc") {
            return Ok(None);
        }
        match fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => {
                let next = fs::read_link(&current)?;
                current = match current.parent() {
                    Some(dir) if next.is_relative() => dir.join(next),
                    _ => next,
                };
            }
            _ => return Ok(Some(current)),
        }
    }
    // ELOOP, as open(2) reports a cycle.
    Err(io::Error::from_raw_os_error(40))
}

/// The directory of `target` (`.` for a bare name) and the prefix of the temporary files
/// made beside it: `.<file name>.`.
fn beside(target: &Path) -> (&Path, std::ffi::OsString) {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(target.file_name().unwrap_or_default());
    prefix.push(".");
    (dir, prefix)
}

/// The length of the random part of a temporary file's name (tempfile's default).
const RANDOM: usize = 6;

/// A temporary file beside `target`: `.<file name>.<pid>.XXXXXX.tmp`, the process ID telling
/// [`remove_stale_temporaries`] whether its writer still runs.
fn temp_beside(target: &Path) -> io::Result<tempfile::NamedTempFile> {
    let (dir, mut prefix) = beside(target);
    prefix.push(format!("{}.", std::process::id()));
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).rand_bytes(RANDOM).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    temporaries::create(|| builder.tempfile_in(dir), |t| t.path())
}

/// Removes the temporary files beside `target` ([`OutputFile::create`]'s
/// `.<file name>.<pid>.XXXXXX.tmp`) whose process no longer runs: those of a writer killed
/// with `SIGKILL` (a terminating signal the process can catch removes its own). A file whose
/// process runs, or whose name holds no process ID, is left. Returns how many were removed;
/// errors (an unreadable directory, a file removed meanwhile) remove nothing more.
///
/// A directory scan: for a tool that writes few outputs per run (`offload-build compile`),
/// not for one writing thousands into one directory.
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// let dir = tempfile::tempdir()?;
/// let target = dir.path().join("libk.a");
/// // A process ID no process has (Linux's PID_MAX_LIMIT is 2^22).
/// std::fs::write(dir.path().join(".libk.a.99999999.a1B2c3.tmp"), b"")?;
/// assert_eq!(offload_cli::fileio::remove_stale_temporaries(&target), 1);
/// # Ok(())
/// # }
/// ```
pub fn remove_stale_temporaries(target: &Path) -> usize {
    let (dir, prefix) = beside(target);
    let Some(prefix) = prefix.to_str() else {
        return 0;
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|n| n.strip_suffix(".tmp"))
        else {
            continue;
        };
        let Some(pid) = rest
            .split_once('.')
            .and_then(|(pid, random)| (random.len() == RANDOM).then_some(pid))
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !process_runs(pid) && fs::remove_file(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Whether a process `pid` runs (signal 0: `ESRCH` when none; `EPERM` is another user's).
#[cfg(unix)]
fn process_runs(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    !matches!(
        rustix::process::test_kill_process(pid),
        Err(rustix::io::Errno::SRCH)
    )
}

#[cfg(not(unix))]
fn process_runs(_pid: u32) -> bool {
    true
}

/// Whether an existing regular file must be written in place rather than replaced: it has
/// other hard links, or another owner (replacing it would make it ours).
#[cfg(unix)]
fn keep_inode(m: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    m.nlink() > 1 || m.uid() != rustix::process::geteuid().as_raw()
}

#[cfg(not(unix))]
fn keep_inode(_: &fs::Metadata) -> bool {
    false
}

/// Refuses a file the caller may not write (`EACCES`), as opening it for writing would.
#[cfg(unix)]
fn check_writable(path: &Path) -> io::Result<()> {
    rustix::fs::access(path, rustix::fs::Access::WRITE_OK).map_err(io::Error::from)
}

#[cfg(not(unix))]
fn check_writable(path: &Path) -> io::Result<()> {
    match fs::metadata(path) {
        Ok(m) if m.permissions().readonly() => Err(io::ErrorKind::PermissionDenied.into()),
        _ => Ok(()),
    }
}

impl OutputFile {
    /// Prepares `path` for writing (`-` is standard output), following the policy above.
    /// Fails as opening the target would: a missing directory gives `NotFound`.
    pub fn create(path: &str) -> io::Result<OutputFile> {
        let direct = |p: &Path| -> io::Result<OutputKind> {
            Ok(OutputKind::Direct(
                fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(p)?,
            ))
        };
        let kind = if path == "-" {
            OutputKind::Stdout(stdout_file()?)
        } else {
            let os = os_path(path);
            match resolve_links(&os)? {
                None => direct(&os)?,
                Some(target) => match fs::metadata(&target) {
                    Ok(m) if m.is_dir() => return Err(io::Error::from_raw_os_error(21)),
                    Ok(m) if !m.is_file() => direct(&target)?,
                    Ok(m) => {
                        check_writable(&target)?;
                        if keep_inode(&m) {
                            OutputKind::InPlace(temp_beside(&target)?, target)
                        } else {
                            OutputKind::Temp(temp_beside(&target)?, target)
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        OutputKind::Temp(temp_beside(&target)?, target)
                    }
                    Err(e) => return Err(e),
                },
            }
        };
        Ok(OutputFile {
            kind,
            path: os_path(path),
        })
    }

    /// The file to write to.
    ///
    /// # Panics
    ///
    /// After [`close`](OutputFile::close) without a [`reopen`](OutputFile::reopen).
    pub fn file(&mut self) -> &mut File {
        match &mut self.kind {
            OutputKind::Temp(t, _) | OutputKind::InPlace(t, _) => t.as_file_mut(),
            OutputKind::Direct(f) | OutputKind::Stdout(f) => f,
            OutputKind::Closed(..) | OutputKind::Moving => panic!("OutputFile::file after close"),
        }
    }

    /// Closes the descriptor of a staged output, keeping what was written, so that any
    /// number of outputs can be staged under a small descriptor limit; [`reopen`] or
    /// [`commit`] later. Outputs written directly keep their descriptor.
    ///
    /// [`reopen`]: OutputFile::reopen
    /// [`commit`]: OutputFile::commit
    pub fn close(&mut self) {
        let kind = std::mem::replace(&mut self.kind, OutputKind::Moving);
        self.kind = match kind {
            OutputKind::Temp(t, target) => OutputKind::Closed(t.into_temp_path(), target, false),
            OutputKind::InPlace(t, target) => OutputKind::Closed(t.into_temp_path(), target, true),
            other => other,
        };
    }

    /// Opens a closed output again, positioned at its end (call [`preallocate`] after it,
    /// not before [`close`]).
    ///
    /// [`preallocate`]: OutputFile::preallocate
    /// [`close`]: OutputFile::close
    pub fn reopen(&mut self) -> io::Result<()> {
        if let OutputKind::Closed(path, _, _) = &self.kind {
            // Not O_APPEND: a preallocated file is longer than what was written to it.
            let mut file = fs::OpenOptions::new().write(true).open(path)?;
            io::Seek::seek(&mut file, io::SeekFrom::End(0))?;
            let kind = std::mem::replace(&mut self.kind, OutputKind::Moving);
            if let OutputKind::Closed(path, target, in_place) = kind {
                let t = tempfile::NamedTempFile::from_parts(file, path);
                self.kind = if in_place {
                    OutputKind::InPlace(t, target)
                } else {
                    OutputKind::Temp(t, target)
                };
            }
        }
        Ok(())
    }

    /// Reserves `len` bytes of disk space for the file when it is a new regular file,
    /// which saves the file system from growing it block by block. Best effort: file
    /// systems without `fallocate` are simply written to.
    pub fn preallocate(&mut self, len: u64) {
        #[cfg(target_os = "linux")]
        if let OutputKind::Temp(t, _) | OutputKind::InPlace(t, _) = &self.kind {
            if len > 0 {
                let _ =
                    rustix::fs::fallocate(t.as_file(), rustix::fs::FallocateFlags::empty(), 0, len);
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = len;
    }

    /// The target path, as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file a staged output replaces at commit (`None` for one written directly).
    pub fn target(&self) -> Option<&Path> {
        match &self.kind {
            OutputKind::Temp(_, t) | OutputKind::InPlace(_, t) | OutputKind::Closed(_, t, _) => {
                Some(t)
            }
            _ => None,
        }
    }

    /// The temporary file of a staged output.
    fn temporary(&self) -> Option<&Path> {
        match &self.kind {
            OutputKind::Temp(t, _) | OutputKind::InPlace(t, _) => Some(t.path()),
            OutputKind::Closed(p, _, _) => Some(p),
            _ => None,
        }
    }

    /// Moves the finished file into place.
    pub fn commit(self) -> io::Result<()> {
        let mut live = temporaries::lock();
        self.commit_with(&mut live)
    }

    /// Moves every output into place, in order, with signals held off meanwhile: an
    /// interrupted tool leaves all of them renamed or none. When one fails, the outputs
    /// already moved into place are rolled back: before anything is replaced, each existing
    /// target is kept aside (hard-linked to a hidden `.<name>.XXXXXX.old` beside it, or
    /// copied to an anonymous temporary file when it is written in place or cannot be
    /// linked), and restored from there; a target that did not exist is removed again.
    /// Outputs written directly (standard output, devices, FIFOs) cannot be taken back.
    /// Every staged temporary and every kept copy is removed in the end. Returns the first
    /// failure with its target path.
    pub fn commit_all(outputs: Vec<OutputFile>) -> Result<(), (PathBuf, io::Error)> {
        let mut outputs = outputs.into_iter();
        let result = {
            let mut live = temporaries::lock();
            let mut kept: Vec<Kept> = Vec::new();
            let mut result = Ok(());
            // Every old target is kept aside before the first is replaced; a lone output
            // moved into place by a rename needs none (the rename replaces it or fails
            // whole), which spares a no-op build a link and the unlink of the old file.
            let all: Vec<OutputFile> = outputs.by_ref().collect();
            let lone_rename = all.len() == 1
                && matches!(
                    all[0].kind,
                    OutputKind::Temp(..) | OutputKind::Closed(_, _, false)
                );
            for o in all.iter().filter(|_| !lone_rename) {
                match Kept::keep(o) {
                    Ok(k) => kept.push(k),
                    Err(e) => {
                        result = Err((o.path.clone(), e));
                        break;
                    }
                }
            }
            let mut remaining = all.into_iter();
            let mut committed = 0;
            if result.is_ok() {
                for o in remaining.by_ref() {
                    let path = o.path.clone();
                    if let Err(e) = o.commit_with(&mut live) {
                        result = Err((path, e));
                        break;
                    }
                    committed += 1;
                }
            }
            if result.is_err() {
                // Newest first, so that a target named twice ends with its oldest contents.
                for k in kept[..committed].iter_mut().rev() {
                    k.restore();
                }
            }
            for k in kept {
                k.discard();
            }
            // The outputs not committed are dropped after the lock is released.
            (result, remaining.collect::<Vec<_>>())
        };
        // Their temporaries are removed (their drop takes the lock).
        drop(result.1);
        drop(outputs);
        result.0
    }

    fn commit_with(mut self, live: &mut BTreeSet<PathBuf>) -> io::Result<()> {
        let temporary = self.temporary().map(Path::to_path_buf);
        let result = match std::mem::replace(&mut self.kind, OutputKind::Moving) {
            OutputKind::Temp(t, target) => {
                // An existing target keeps its permissions, as when LLVM truncates it.
                if let Ok(m) = fs::metadata(&target) {
                    let _ = t.as_file().set_permissions(m.permissions());
                }
                t.persist(&target).map(drop).map_err(|e| e.error)
            }
            OutputKind::Closed(path, target, false) => {
                if let Ok(m) = fs::metadata(&target) {
                    let _ = fs::set_permissions(&path, m.permissions());
                }
                path.persist(&target).map_err(|e| e.error)
            }
            OutputKind::Closed(path, target, true) => copy_into(File::open(&path)?, &target),
            OutputKind::InPlace(t, target) => copy_into(t.reopen()?, &target),
            OutputKind::Direct(mut f) | OutputKind::Stdout(mut f) => f.flush(),
            OutputKind::Moving => Ok(()),
        };
        if let Some(p) = temporary {
            temporaries::forget(live, &p);
        }
        result
    }
}

/// The previous contents of one target of [`OutputFile::commit_all`], kept until every
/// output is in place.
enum Kept {
    /// Nothing to restore (an output written directly).
    Nothing,
    /// The target did not exist: rolling back removes it.
    Absent(PathBuf),
    /// The old file, hard-linked beside the target: rolling back renames it over it.
    Linked { old: PathBuf, target: PathBuf },
    /// A copy of the old contents: rolling back writes them into the target in place.
    Copied { copy: File, target: PathBuf },
}

impl Kept {
    fn keep(o: &OutputFile) -> io::Result<Kept> {
        let (target, in_place) = match &o.kind {
            OutputKind::Temp(_, t) | OutputKind::Closed(_, t, false) => (t, false),
            OutputKind::InPlace(_, t) | OutputKind::Closed(_, t, true) => (t, true),
            _ => return Ok(Kept::Nothing),
        };
        match fs::symlink_metadata(target) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(Kept::Absent(target.clone()));
            }
            Err(e) => return Err(e),
            Ok(_) => {}
        }
        if !in_place {
            let (dir, prefix) = beside(target);
            let linked = tempfile::Builder::new()
                .prefix(&prefix)
                .suffix(".old")
                .make_in(dir, |p| fs::hard_link(target, p));
            if let Ok(t) = linked {
                return Ok(Kept::Linked {
                    old: t.into_temp_path().keep().map_err(|e| e.error)?,
                    target: target.clone(),
                });
            }
        }
        let mut copy = tempfile::tempfile()?;
        io::copy(&mut File::open(target)?, &mut copy)?;
        Ok(Kept::Copied {
            copy,
            target: target.clone(),
        })
    }

    /// Puts the old target back (best effort: the error reported is the commit's).
    fn restore(&mut self) {
        match self {
            Kept::Nothing => {}
            Kept::Absent(target) => {
                let _ = fs::remove_file(target);
            }
            Kept::Linked { old, target } => {
                if fs::rename(&*old, &*target).is_ok() {
                    *self = Kept::Nothing;
                }
            }
            Kept::Copied { copy, target } => {
                let _ = io::Seek::seek(copy, io::SeekFrom::Start(0))
                    .and_then(|_| copy_into(&mut *copy, target));
            }
        }
    }

    /// Removes what was kept.
    fn discard(self) {
        if let Kept::Linked { old, .. } = self {
            let _ = fs::remove_file(old);
        }
    }
}

/// Writes the finished temporary file `from` over the existing `target`, in place.
fn copy_into(mut from: impl Read, target: &Path) -> io::Result<()> {
    let mut to = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(target)?;
    io::copy(&mut from, &mut to)?;
    to.flush()
}

impl Drop for OutputFile {
    /// An output dropped without a commit leaves nothing behind (its temporary file is
    /// removed by `tempfile`) and is forgotten by the signal handler.
    fn drop(&mut self) {
        let temporary = self.temporary().map(Path::to_path_buf);
        // Removed first, forgotten after: a signal in between finds no file to remove.
        drop(std::mem::replace(&mut self.kind, OutputKind::Moving));
        if let Some(p) = temporary {
            temporaries::forget(&mut temporaries::lock(), &p);
        }
    }
}

#[cfg(unix)]
fn stdout_file() -> io::Result<File> {
    use std::os::fd::AsFd;
    Ok(File::from(io::stdout().as_fd().try_clone_to_owned()?))
}

#[cfg(not(unix))]
fn stdout_file() -> io::Result<File> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "writing to standard output",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fileio::error_text;

    #[test]
    fn output_appears_only_on_commit() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.bin");
        fs::write(&target, b"old").unwrap();
        let mut out = OutputFile::create(target.to_str().unwrap()).unwrap();
        out.file().write_all(b"new contents").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"old");
        drop(out);
        assert_eq!(fs::read(&target).unwrap(), b"old");
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "temporary file left behind"
        );
        let mut out = OutputFile::create(target.to_str().unwrap()).unwrap();
        out.file().write_all(b"new").unwrap();
        out.commit().unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new");
    }

    #[test]
    fn missing_directory_is_not_found() {
        let e = OutputFile::create("/nonexistent-dir-offload-build/x").unwrap_err();
        assert_eq!(error_text(&e), "No such file or directory");
    }

    #[test]
    fn special_files_are_written_directly() {
        let mut out = OutputFile::create("/dev/null").unwrap();
        out.file().write_all(b"x").unwrap();
        out.commit().unwrap();
        assert!(!fs::metadata("/dev/null").unwrap().file_type().is_file());
    }

    fn write(path: &Path, bytes: &[u8]) {
        let mut out = OutputFile::create(path.to_str().unwrap()).unwrap();
        out.file().write_all(bytes).unwrap();
        out.commit().unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.bin");
        fs::write(&real, b"old").unwrap();
        let link = dir.path().join("link.bin");
        std::os::unix::fs::symlink("real.bin", &link).unwrap();
        write(&link, b"new");
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(&real).unwrap(), b"new");
        // A dangling link: the file it names is created, the link stays a link.
        let dangling = dir.path().join("dangling.bin");
        std::os::unix::fs::symlink("sub/../created.bin", &dangling).unwrap();
        fs::create_dir(dir.path().join("sub")).unwrap();
        write(&dangling, b"made");
        assert!(
            fs::symlink_metadata(&dangling)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(dir.path().join("created.bin")).unwrap(), b"made");
        // A cycle is an error, as open(2) reports it.
        let a = dir.path().join("a");
        std::os::unix::fs::symlink("b", &a).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        assert_eq!(
            OutputFile::create(a.to_str().unwrap())
                .unwrap_err()
                .raw_os_error(),
            Some(40)
        );
    }

    #[cfg(unix)]
    #[test]
    fn hard_linked_outputs_are_written_in_place() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.bin");
        let b = dir.path().join("b.bin");
        fs::write(&a, b"old contents").unwrap();
        fs::hard_link(&a, &b).unwrap();
        let inode = fs::metadata(&a).unwrap().ino();
        let mut out = OutputFile::create(a.to_str().unwrap()).unwrap();
        out.file().write_all(b"new").unwrap();
        // Nothing is touched before the commit.
        assert_eq!(fs::read(&b).unwrap(), b"old contents");
        out.commit().unwrap();
        assert_eq!(fs::metadata(&a).unwrap().ino(), inode);
        assert_eq!(fs::read(&b).unwrap(), b"new");
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            2,
            "no temporary left"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn proc_links_are_opened_not_resolved() {
        assert_eq!(resolve_links(Path::new("/dev/stdout")).unwrap(), None);
        assert_eq!(resolve_links(Path::new("/proc/self/fd/1")).unwrap(), None);
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        assert_eq!(resolve_links(&f).unwrap(), Some(f));
    }

    #[test]
    fn closed_outputs_reopen_where_they_were() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.bin");
        let mut out = OutputFile::create(target.to_str().unwrap()).unwrap();
        out.close();
        out.reopen().unwrap();
        // Preallocated space is written over, not appended after.
        out.preallocate(3);
        out.file().write_all(b"abc").unwrap();
        out.close();
        out.reopen().unwrap();
        out.file().write_all(b"def").unwrap();
        out.close();
        assert!(!target.exists());
        out.commit().unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"abcdef");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
