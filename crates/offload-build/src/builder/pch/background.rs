//! PCHs made in the background, for the next build: started detached after a build that
//! would not pay for making one, adopted by the next build when what the clang read is what
//! its manifest says, taken over (killed) when its clang still runs, for a build never waits
//! on a process of a lower priority ([`crate::builder::process::BACKGROUND_NICE`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use foldhash::HashSet;

use crate::builder::cache::{self, Record};
use crate::builder::diag;
use crate::builder::error::Error;
use crate::builder::fs;
use crate::builder::memory::Meter;
use crate::builder::pch::PchJob;
use crate::builder::pch::lifecycle::{Lifecycle, PchState};
use crate::builder::process::{self, Processes};

/// Where a background PCH's clang writes its standard error, in [`background_dir`](crate::builder::pch::job::PchJob::background_dir).
const BACKGROUND_STDERR: &str = "stderr";

/// The record of what a background PCH's clang is to read, in [`background_dir`](crate::builder::pch::job::PchJob::background_dir).
const BACKGROUND_MANIFEST: &str = "manifest";

/// The process group of a background PCH's clang, in [`background_dir`](crate::builder::pch::job::PchJob::background_dir).
const BACKGROUND_PID: &str = "pid";

/// Ends the background PCH's clang of `dir`, whose `lock` it holds: kills its process group
/// and waits for the lock (the group's end; a few seconds at the most). `Err(Stopped)` when
/// the build is cancelled meanwhile.
#[cfg(unix)]
fn take_over(dir: &Path, lock: &std::fs::File, processes: &Processes) -> Result<(), Error> {
    use rustix::fs::{FlockOperation, flock};
    let waited = Instant::now();
    let mut killed = false;
    while flock(lock, FlockOperation::NonBlockingLockExclusive).is_err() {
        if processes.is_cancelled() {
            return Err(Error::Stopped);
        }
        if !killed {
            // Written just after the clang started: a moment may pass before it is there.
            let pid = std::fs::read_to_string(dir.join(BACKGROUND_PID));
            if let Some(pid) = pid.ok().and_then(|t| t.trim().parse::<u32>().ok()) {
                process::kill_group(pid);
                killed = true;
            }
        }
        if waited.elapsed() > Duration::from_secs(10) {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Ok(())
}

impl Lifecycle<'_> {
    /// Starts the PCHs this build left to the background ([`Lifecycle::start_background`]),
    /// each with what a compile of this build read through its preamble (`done`): what the
    /// background clang will read, as it is now.
    pub(crate) fn start_backgrounds<'r>(
        &self,
        pchs: &[PchJob],
        states: &[PchState],
        read: impl Fn(usize) -> Option<&'r [PathBuf]>,
    ) {
        for (i, p) in pchs.iter().enumerate() {
            if states[i] != PchState::Background {
                continue;
            }
            let read = read(i);
            if let Some(read) = read {
                if self.start_background(p, read).unwrap_or(false) {
                    self.background.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// Starts making the PCH of `p` after this build, in the background: clang detached
    /// ([`process::spawn_detached`]), writing into `p`'s background directory
    /// ([`background_dir`](crate::builder::pch::job::PchJob::background_dir)), whose `lock` it holds while it runs (as its standard input),
    /// and which records when it started, its process group (`pid`) and what it is to read
    /// (`manifest`: a record of the headers a compile of this build read through the
    /// preamble, `read` with the source first, their content now, and the context). The next
    /// build adopts it ([`Lifecycle::adopt_pch`]). Whether it started (not when one runs already,
    /// nor when a header cannot be read).
    #[cfg(unix)]
    fn start_background(&self, p: &PchJob, read: &[PathBuf]) -> Result<bool, Error> {
        if self.processes.is_cancelled() {
            return Err(Error::Stopped);
        }
        self.write_preamble(p)?;
        let dir = p.background_dir();
        if dir.is_dir() {
            // One that runs holds its lock; one that does not is a leftover.
            if let Some(Err(_)) = cache::try_lock(&dir) {
                return Ok(false);
            }
            std::fs::remove_dir_all(&dir).map_err(|e| Error::io("removing", &dir, e))?;
        }
        let started_at = SystemTime::now();
        let mut deps = vec![p.preamble_file.clone()];
        deps.extend(read.iter().skip(1).cloned());
        let hashed = deps
            .iter()
            .map(|d| Some((d.clone(), self.hashes.now(d)?)))
            .collect::<Option<Vec<_>>>();
        let Some(manifest) = hashed.and_then(|h| self.pch_record(p, &deps, h)) else {
            return Ok(false);
        };
        std::fs::create_dir(&dir).map_err(|e| Error::io("creating", &dir, e))?;
        manifest.store(&dir.join(BACKGROUND_MANIFEST))?;
        let started = started_at
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        // The clang holds it from here (its standard input), the time it started inside.
        let lock = cache::new_lock(&dir, started.to_string().as_bytes())?;
        let stderr_path = dir.join(BACKGROUND_STDERR);
        let stderr = std::fs::File::create(&stderr_path)
            .map_err(|e| Error::io("creating", &stderr_path, e))?;
        let cmd = p.command.in_private(&dir, p.in_dir(&dir));
        let pid = process::spawn_detached(&cmd.to_command(), lock, stderr).map_err(|error| {
            Error::Spawn {
                command: cmd.line(),
                error,
            }
        })?;
        fs::write_atomic(&dir.join(BACKGROUND_PID), pid.to_string().as_bytes())?;
        Ok(true)
    }

    #[cfg(not(unix))]
    fn start_background(&self, _p: &PchJob, _read: &[PathBuf]) -> Result<bool, Error> {
        Err(Error::Config("no background PCH here".into()))
    }

    /// Adopts the PCH of `p` that an earlier build started in the background
    /// ([`Lifecycle::start_background`]). One whose clang still runs is taken over: this build
    /// never waits on a process of a lower priority, which its own compiles would starve;
    /// it kills that clang's process group and makes the PCH itself. One that ended is kept
    /// as [`Lifecycle::run_pch`] keeps one it made, after the check a cached PCH passes: every
    /// header it read is one its manifest lists, with the content it had when the clang
    /// started (content decides: a link pointed elsewhere or a directory renamed over another
    /// is a change), and the context (variables, include search, probes) is what it was.
    /// `None` when there is nothing to adopt: taken over, ended without a PCH, or anything it
    /// read or depended on changed. The directory goes in every case.
    #[cfg(unix)]
    pub(super) fn adopt_pch(&self, p: &PchJob, meter: &dyn Meter) -> Result<Option<bool>, Error> {
        let dir = p.background_dir();
        let kept = self.adoptable(p, &dir, meter);
        let _ = std::fs::remove_dir_all(&dir);
        kept
    }

    #[cfg(not(unix))]
    pub(super) fn adopt_pch(&self, _p: &PchJob, _meter: &dyn Meter) -> Result<Option<bool>, Error> {
        Ok(None)
    }

    /// Whether the background clang of `p` still ran: then it is killed with its process
    /// group and its directory removed ([`take_over`]), for this build never waits on a
    /// process of a lower priority that its own compiles would starve.
    #[cfg(unix)]
    pub(super) fn take_over_running(&self, p: &PchJob) -> bool {
        let dir = p.background_dir();
        let Some(Err(lock)) = cache::try_lock(&dir) else {
            return false;
        };
        let _ = take_over(&dir, &lock, self.processes);
        let _ = std::fs::remove_dir_all(&dir);
        true
    }

    #[cfg(not(unix))]
    pub(super) fn take_over_running(&self, _p: &PchJob) -> bool {
        false
    }

    /// [`Lifecycle::adopt_pch`] of the background directory `dir`.
    #[cfg(unix)]
    fn adoptable(&self, p: &PchJob, dir: &Path, meter: &dyn Meter) -> Result<Option<bool>, Error> {
        let _lock = match cache::try_lock(dir) {
            None => return Ok(None),
            Some(Err(running)) => {
                take_over(dir, &running, self.processes)?;
                return Ok(None);
            }
            Some(Ok(held)) => held,
        };
        let started = std::fs::read_to_string(dir.join(cache::LOCK))
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
            .map(|ns| SystemTime::UNIX_EPOCH + Duration::from_nanos(ns));
        let (Some(started), Some(manifest)) =
            (started, Record::load(&dir.join(BACKGROUND_MANIFEST)))
        else {
            return Ok(None);
        };
        let printed = std::fs::read(dir.join(BACKGROUND_STDERR)).unwrap_or_default();
        let depfile = dir.join(p.depfile.file_name().unwrap_or_default());
        let why = Some(diag::printed_lines(&printed, &p.command, Some(&depfile)));
        let why = why.filter(|w| !w.is_empty());
        let made = dir.join(p.pch.file_name().unwrap_or_default()).is_file();
        if !(made || why.is_some()) || !self.as_manifest_says(p, dir, &manifest) {
            return Ok(None);
        }
        self.keep_pch(p, dir, started, why, meter)
    }

    /// Whether what the background clang in `dir` read and depended on is what `manifest`
    /// says it was when it started: the headers its depfile lists are among the manifest's
    /// and hold the content they had, and the context is the same.
    #[cfg(unix)]
    fn as_manifest_says(&self, p: &PchJob, dir: &Path, manifest: &Record) -> bool {
        let depfile = dir.join(p.depfile.file_name().unwrap_or_default());
        let listed: HashSet<&Path> = manifest.deps.iter().map(|(d, _)| d.as_path()).collect();
        let preamble_name = p.preamble_file.file_name();
        let read = self.read_deps(&p.preamble_file, &depfile, p.command.dir.as_deref());
        let unlisted = read
            .iter()
            .any(|d| !listed.contains(d.as_path()) && d.file_name() != preamble_name);
        !unlisted
            && depfile.is_file()
            && manifest
                .deps
                .iter()
                .all(|(d, h)| self.hashes.now(d) == Some(*h))
            && self.lookups.holds(manifest, &p.command, &p.preamble_file)
    }
}
