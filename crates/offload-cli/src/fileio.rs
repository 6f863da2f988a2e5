//! File handling shared by the command-line tools and the build layer: inputs are
//! mapped rather than read, and outputs appear atomically.
//!
//! [`OutputFile`] writes to a temporary file beside the target and renames it into
//! place on [`OutputFile::commit`]; dropped without a commit, it leaves nothing
//! behind and an existing target untouched. Symbolic links are followed to their file;
//! targets that are not regular files (`/dev/null`, a FIFO, `-` for standard output,
//! `/dev/stdout`) are written directly, and shared files (hard links, another owner's)
//! in place at commit: see [`OutputFile`] for the whole policy.

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// The text of an I/O error as LLVM prints it: the C library's message, without
/// Rust's ` (os error N)` suffix.
pub fn error_text(e: &io::Error) -> String {
    if let Some(code) = e.raw_os_error() {
        return strip_os_suffix(io::Error::from_raw_os_error(code).to_string());
    }
    // tempfile wraps the OS error with the temporary file's path: report the cause.
    let cause = e
        .get_ref()
        .and_then(|inner| inner.source())
        .and_then(|s| s.downcast_ref::<io::Error>());
    match cause {
        Some(cause) => error_text(cause),
        None => strip_os_suffix(e.to_string()),
    }
}

/// Cuts Rust's ` (os error N)` and anything after it (tempfile adds ` at path …`).
fn strip_os_suffix(s: String) -> String {
    match s.find(" (os error ") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}

/// The file a path argument names: arguments are text holding the bytes given (see
/// [`offload_formats::id::spell`]), so a name that is not UTF-8 is the same name here.
pub fn os_path(path: &str) -> PathBuf {
    PathBuf::from(offload_formats::id::spell::os(path))
}

/// A path as the tools' text holds it (its bytes, for messages; the inverse of [`os_path`]).
pub fn path_text(path: &Path) -> String {
    offload_formats::id::spell::text_of_os(path.as_os_str()).into_owned()
}

/// The bytes of an input file: mapped when it is a regular file, read otherwise.
#[derive(Debug)]
pub enum InputData {
    /// A memory-mapped regular file.
    Mapped(memmap2::Mmap),
    /// Bytes read from standard input or a special file.
    Owned(Vec<u8>),
    /// A regular file opened only to be copied from (see [`Input::open_unmapped`]):
    /// its bytes are not in memory and read as empty here.
    Unmapped,
}

impl std::ops::Deref for InputData {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            InputData::Mapped(m) => m,
            InputData::Owned(v) => v,
            InputData::Unmapped => &[],
        }
    }
}

/// An opened input: its bytes, and the file itself when there is one (for copies
/// that go through the kernel).
#[derive(Debug)]
pub struct Input {
    /// The file, when the input is a regular file.
    pub file: Option<File>,
    /// Its contents.
    pub data: InputData,
    len: u64,
}

impl Input {
    /// Opens `path` (or standard input for `-`) for copying only: a regular file is
    /// not mapped, since it is copied by positioned reads ([`Input::copy_range`]); read its first
    /// bytes with [`Input::head`]. Other inputs are read into memory as by [`Input::open`].
    pub fn open_unmapped(path: &str) -> io::Result<Input> {
        Input::open_with(path, false)
    }

    /// Up to `n` bytes from the start of the input (for recognizing its format).
    pub fn head(&self, n: usize) -> io::Result<Vec<u8>> {
        match (&self.data, &self.file) {
            (InputData::Unmapped, Some(f)) => {
                let mut buf = vec![0; n.min(self.len as usize)];
                read_exact_at(f, &mut buf, 0)?;
                Ok(buf)
            }
            (data, _) => Ok(data[..n.min(data.len())].to_vec()),
        }
    }

    /// Opens `path`, or standard input for `-`.
    pub fn open(path: &str) -> io::Result<Input> {
        Input::open_with(path, true)
    }

    fn open_with(path: &str, map: bool) -> io::Result<Input> {
        if path == "-" {
            let mut v = Vec::new();
            io::stdin().lock().read_to_end(&mut v)?;
            return Ok(Input::owned(v));
        }
        let file = File::open(os_path(path))?;
        let meta = file.metadata()?;
        if meta.is_dir() {
            return Err(io::Error::from_raw_os_error(21)); // EISDIR, as LLVM reports it
        }
        if meta.is_file() && !map {
            return Ok(Input {
                file: Some(file),
                data: InputData::Unmapped,
                len: meta.len(),
            });
        }
        if meta.is_file() {
            if meta.len() == 0 {
                return Ok(Input {
                    file: Some(file),
                    data: InputData::Owned(Vec::new()),
                    len: 0,
                });
            }
            // SAFETY: the mapping is read-only and private to this process. A file
            // truncated by another process while mapped can fault; this is the same
            // trade-off ripgrep and LLVM's MemoryBuffer make for regular files.
            let mapping = unsafe { memmap2::Mmap::map(&file)? };
            return Ok(Input {
                file: Some(file),
                len: mapping.len() as u64,
                data: InputData::Mapped(mapping),
            });
        }
        let mut v = Vec::new();
        (&file).read_to_end(&mut v)?;
        Ok(Input::owned(v))
    }

    /// An input held in memory (a decompressed bundle, for example).
    pub fn from_vec(v: Vec<u8>) -> Input {
        Input::owned(v)
    }

    fn owned(v: Vec<u8>) -> Input {
        Input {
            file: None,
            len: v.len() as u64,
            data: InputData::Owned(v),
        }
    }

    /// The input read whole into memory and its file closed, when it is an unmapped regular
    /// file of at most `max` bytes (one open per small input instead of two); `self`
    /// otherwise.
    pub fn into_memory_if_small(self, max: u64) -> io::Result<Input> {
        if matches!(self.data, InputData::Unmapped) && self.len <= max {
            return Ok(Input::owned(self.head(self.len as usize)?));
        }
        Ok(self)
    }

    /// Length of the input in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the input is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies `len` bytes starting at `offset` into `out` at its current position.
    ///
    /// Regular files are read in 1 MiB pieces into a buffer kept per thread and written
    /// from there (positioned reads, so several threads may copy from one input at once);
    /// other inputs are written from memory. On ext4 this is about a third faster than
    /// `copy_file_range`, whose splice moves 64 KiB at a time, and faster than writing
    /// from a mapping, which faults every page in first (`cargo bench --bench bundler`).
    pub fn copy_range(&self, offset: u64, len: u64, out: &mut File) -> io::Result<()> {
        let end = offset.checked_add(len).filter(|&e| e <= self.len());
        let Some(end) = end else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "range past the end of the input",
            ));
        };
        match &self.file {
            Some(f) => copy_by_reads(f, offset, end, out),
            None => out.write_all(&self.data[offset as usize..end as usize]),
        }
    }
}

/// Size of the per-thread buffer that file copies go through: large enough that each
/// write fills whole large folios, small enough to stay in the CPU's cache.
const COPY_BUFFER: usize = 1 << 20;

/// Copies bytes `pos..end` of `f` to `out` through the calling thread's copy buffer.
fn copy_by_reads(f: &File, mut pos: u64, end: u64, out: &mut File) -> io::Result<()> {
    thread_local! {
        static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BUFFER.with(|buf| {
        let mut buf = buf.borrow_mut();
        if buf.len() < COPY_BUFFER {
            buf.resize(COPY_BUFFER, 0);
        }
        while pos < end {
            let k = (end - pos).min(COPY_BUFFER as u64) as usize;
            read_exact_at(f, &mut buf[..k], pos).map_err(|e| {
                if e.kind() == io::ErrorKind::UnexpectedEof {
                    io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "input changed while it was read",
                    )
                } else {
                    e
                }
            })?;
            out.write_all(&buf[..k])?;
            pos += k as u64;
        }
        Ok(())
    })
}

/// Bytes that can be copied into files by range: a mapped or unmapped [`Input`], or bytes
/// in memory ([`Memory`], a decompressed bundle).
pub trait CopySource: Sync {
    /// Length in bytes.
    fn len(&self) -> u64;

    /// Whether there are no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies `len` bytes starting at `offset` into `out` at its current position.
    fn copy_range(&self, offset: u64, len: u64, out: &mut File) -> io::Result<()>;

    /// Whether copies into several files gain from running on several threads (kernel
    /// copies do; writes from memory that another thread is still hashing do not).
    fn parallel_copies(&self) -> bool {
        true
    }
}

impl CopySource for Input {
    fn len(&self) -> u64 {
        Input::len(self)
    }

    fn copy_range(&self, offset: u64, len: u64, out: &mut File) -> io::Result<()> {
        Input::copy_range(self, offset, len, out)
    }
}

/// Bytes in memory as a [`CopySource`].
#[derive(Clone, Copy, Debug)]
pub struct Memory<'a>(pub &'a [u8]);

impl CopySource for Memory<'_> {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }

    fn parallel_copies(&self) -> bool {
        false
    }

    fn copy_range(&self, offset: u64, len: u64, out: &mut File) -> io::Result<()> {
        let range = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(len).ok())
            .and_then(|(o, l)| Some(o..o.checked_add(l)?))
            .filter(|r| r.end <= self.0.len());
        match range {
            Some(r) => out.write_all(&self.0[r]),
            None => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "range past the end of the input",
            )),
        }
    }
}

#[cfg(unix)]
fn read_exact_at(f: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(f, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(f: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match f.seek_read(buf, offset)? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

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

/// Calls `hook` when a terminating signal (SIGINT, SIGTERM, SIGHUP) arrives, before the
/// temporary files are removed and the signal ends the process (`offload-build compile` kills
/// its compilers so). Starts watching the signals now.
pub fn on_terminating_signal(hook: fn()) {
    temporaries::HOOKS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(hook);
    #[cfg(unix)]
    temporaries::WATCH.call_once(temporaries::watch);
}

/// The temporary files of outputs not yet committed, removed when a terminating signal
/// (SIGINT, SIGTERM, SIGHUP) arrives: a thread of `signal-hook` receives the signal, calls the
/// hooks ([`on_terminating_signal`]), removes them, then lets the signal end the process as it
/// would have (its status says so).
mod temporaries {
    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};
    use std::sync::{Mutex, Once};

    /// A set, so that forgetting each of 100,000 outputs is not a search of all the others.
    static LIVE: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
    pub(super) static HOOKS: Mutex<Vec<fn()>> = Mutex::new(Vec::new());
    pub(super) static WATCH: Once = Once::new();

    /// Creates a temporary file with `create` and registers it, with the registry held
    /// meanwhile so that a signal cannot come between the two (and, the first time, starts
    /// watching the signals, before anything exists to remove).
    pub(super) fn create<T>(
        create: impl FnOnce() -> std::io::Result<T>,
        path: impl Fn(&T) -> &Path,
    ) -> std::io::Result<T> {
        #[cfg(unix)]
        WATCH.call_once(watch);
        let mut live = lock();
        let t = create()?;
        live.insert(path(&t).to_path_buf());
        Ok(t)
    }

    /// The registry, held: while it is, a signal waits (so outputs committed together are
    /// all renamed, or none).
    pub(super) fn lock() -> std::sync::MutexGuard<'static, BTreeSet<PathBuf>> {
        LIVE.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forgets a temporary file that was renamed into place or removed.
    pub(super) fn forget(live: &mut BTreeSet<PathBuf>, path: &Path) {
        live.remove(path);
    }

    #[cfg(unix)]
    pub(super) fn watch() {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        let spawned = std::thread::Builder::new()
            .name("offload-signals".into())
            .spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    for hook in HOOKS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                        hook();
                    }
                    // Held until the process ends: no new temporary is registered, none is
                    // renamed half-way through the removal.
                    let live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
                    for p in live.iter() {
                        let _ = std::fs::remove_file(p);
                    }
                    let _ = signal_hook::low_level::emulate_default_handler(signal);
                    std::process::exit(128 + signal);
                }
            });
        drop(spawned);
    }
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

fn temp_beside(target: &Path) -> io::Result<tempfile::NamedTempFile> {
    let (dir, prefix) = beside(target);
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    temporaries::create(|| builder.tempfile_in(dir), |t| t.path())
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

    #[test]
    fn inputs_map_and_copy_ranges() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("in");
        let data: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
        fs::write(&p, &data).unwrap();
        let input = Input::open(p.to_str().unwrap()).unwrap();
        assert_eq!(&*input.data, &data[..]);
        let unmapped = Input::open_unmapped(p.to_str().unwrap()).unwrap();
        assert_eq!(unmapped.len(), data.len() as u64);
        assert_eq!(unmapped.head(4).unwrap(), &data[..4]);
        let mut v = Vec::new();
        let r = dir.path().join("via-pread");
        let mut rf = File::create(&r).unwrap();
        unmapped.copy_range(7, 100_000, &mut rf).unwrap();
        drop(rf);
        v.extend(fs::read(&r).unwrap());
        assert_eq!(v, &data[7..100_007]);
        let q = dir.path().join("out");
        let mut f = File::create(&q).unwrap();
        input.copy_range(1000, 150_000, &mut f).unwrap();
        input.copy_range(5, 10, &mut f).unwrap();
        drop(f);
        let got = fs::read(&q).unwrap();
        assert_eq!(&got[..150_000], &data[1000..151_000]);
        assert_eq!(&got[150_000..], &data[5..15]);
        assert_eq!(
            error_text(&Input::open("/nonexistent").unwrap_err()),
            "No such file or directory"
        );
        assert_eq!(error_text(&Input::open("/").unwrap_err()), "Is a directory");
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
