//! What becomes of each precompiled preamble in a build ([`PchState`]: used from the cache,
//! made, adopted from the background, left to the background) and the making of one: clang
//! writes it in a private directory, the headers it read are recorded by content, and it
//! is moved into place, or what clang said is kept as its refusal. The commands run through
//! [`RunCommand`], which the jobs stage implements; the background half is in
//! [`crate::builder::pch::background`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use xxhash_rust::xxh3::xxh3_128;

use crate::builder::arch::Target;
use crate::builder::cache::lookup::Lookups;
use crate::builder::cache::{self, ContentHashes, Record};
use crate::builder::command::Command;
use crate::builder::error::Error;
use crate::builder::fs;
use crate::builder::job::CompileJob;
use crate::builder::memory::Meter;
use crate::builder::pch::PchJob;
use crate::builder::process::{self, Processes};

/// How the PCH lifecycle runs a command: as a compile job's step runs (timeout, crash log);
/// what it printed on standard error, cleaned.
pub(crate) trait RunCommand: Sync {
    fn run_command(
        &self,
        cmd: &Command,
        target: &Target,
        source: Option<&Path>,
        depfile: Option<&Path>,
        meter: &dyn Meter,
    ) -> Result<Vec<String>, Error>;
}

/// The PCHs of one build: what they share with its compile jobs.
pub(crate) struct Lifecycle<'a> {
    pub(crate) processes: &'a Processes,
    pub(crate) cache_dir: &'a Path,
    pub(crate) hashes: &'a ContentHashes,
    pub(crate) lookups: &'a Lookups,
    pub(crate) run: &'a dyn RunCommand,
    /// Set when a compiler wrote no depfile.
    pub(crate) no_depfile: &'a AtomicBool,
    /// Precompiled preambles made.
    pub(crate) made: AtomicUsize,
    /// Precompiled preambles started in the background.
    pub(crate) background: AtomicUsize,
    /// The PCHs (by key) this build made while waiting for another build to make one, and
    /// whether each can be used ([`Lifecycle::make`]).
    pub(crate) helped: Mutex<BTreeMap<u128, bool>>,
}

/// The PCHs of a host-code build's host compiles, as [`Lifecycle::states`] weighs them: the
/// host stage's compiles run after the device compiles of their source, so their PCHs are
/// decided either while the device compiles are planned ([`HostPchs::during`]) or after the
/// host compiles ran ([`HostPchs::after`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct HostPchs<'a> {
    /// The PCHs of host compiles still to come (one entry per source).
    later: &'a [usize],
    /// Whether those host compiles start early, beside the device compiles of their source.
    early: bool,
    /// Per PCH: its host compile already ran early without it.
    ran_early: &'a [bool],
}

impl<'a> HostPchs<'a> {
    /// Before the device compiles: the PCHs of the host compiles to come (`later`), which
    /// start early beside them or not (`early`).
    pub(crate) fn during(later: &'a [usize], early: bool) -> HostPchs<'a> {
        HostPchs {
            later,
            early,
            ran_early: &[],
        }
    }

    /// After the host compiles: per PCH, whether its compile ran early without it.
    pub(crate) fn after(ran_early: &'a [bool]) -> HostPchs<'a> {
        HostPchs {
            later: &[],
            early: false,
            ran_early,
        }
    }
}

/// What becomes of a precompiled preamble in this build ([`Lifecycle::states`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PchState {
    /// Not used: no compile of it runs, it will not pay, or clang refused it.
    Off,
    /// In the cache, fresh: used as it is.
    Cached,
    /// Made before the compiles that use it.
    Make,
    /// Made in the background by an earlier build: waited for and adopted before the
    /// compiles that use it (or made, when it cannot be adopted).
    Adopt,
    /// Not used by this build, which would not pay for it: made after it, in the
    /// background ([`Lifecycle::start_background`]), for the next build.
    Background,
}

impl PchState {
    /// Whether the compiles of this build use it (once made).
    pub(crate) fn used(self) -> bool {
        matches!(self, PchState::Cached | PchState::Make | PchState::Adopt)
    }

    /// The PCHs of `pchs` that this build makes (`states`: what becomes of each).
    pub(crate) fn to_make<'p>(pchs: &'p [PchJob], states: &[PchState]) -> Vec<&'p PchJob> {
        (pchs.iter().zip(states))
            .filter(|(_, s)| **s == PchState::Make)
            .map(|(p, _)| p)
            .collect()
    }

    /// Whether a job of this build makes (or adopts) it.
    pub(crate) fn made(self) -> bool {
        matches!(self, PchState::Make | PchState::Adopt)
    }
}

impl Lifecycle<'_> {
    /// What becomes of each precompiled preamble, given the compiles that run. One pays
    /// where it is used again: a PCH fresh in the cache is used; one that an earlier build
    /// started in the background is adopted; one that two or more of these compiles share
    /// is made; one that a single compile would use is made when an earlier build compiled
    /// the same preamble (its `.seen` mark: the edit after a build), else only marked, so
    /// that a cold build of one source is not slower, and made after this build in the
    /// background ([`JobSettings::pch_background`](crate::builder::plan::jobs::JobSettings::pch_background)). One whose background clang still runs
    /// is taken over ([`Lifecycle::take_over_running`]): made when two or more compiles use
    /// it, else started again after this build, whose one compile goes without. One that
    /// clang refused (its `.refused` record, fresh) is not tried again.
    pub(crate) fn states(
        &self,
        pchs: &[PchJob],
        background: bool,
        to_run: &[&CompileJob],
        host: HostPchs<'_>,
    ) -> Vec<PchState> {
        let mut users = vec![0usize; pchs.len()];
        for i in to_run.iter().filter_map(|j| j.pch) {
            users[i] += 1;
        }
        // A PCH of a later stage's compile (the host compile of a host-code build, after the
        // device compiles of its source, one entry per source): with early host compiles
        // (`early`), each is a compile of this stage, which uses it if it is there or made
        // now; one no build has seen is left to the host stage (which starts it in the
        // background, as for any single compile). Without, it is made now, beside this
        // stage's compiles, which leave a core idle when they are fewer than the cores:
        // counted as one two compiles use.
        let mut deferred = vec![false; pchs.len()];
        for &i in host.later {
            let n = users[i];
            users[i] = if host.early { n + 1 } else { n.max(2) };
            deferred[i] = host.early;
        }
        // Marked seen (the next build makes it), and made after this build in the background.
        let after_this = |p: &PchJob| {
            let _ = fs::write_atomic(&p.record.with_extension("seen"), b"");
            if background && cfg!(unix) {
                PchState::Background
            } else {
                PchState::Off
            }
        };
        let states = pchs.iter().zip(users).enumerate().map(|(i, (p, n))| {
            if n == 0 {
                return PchState::Off;
            }
            if self.pch_cached(p) {
                return PchState::Cached;
            }
            let refused = Record::load(&p.record.with_extension("refused"));
            if refused.is_some_and(|r| r.is_fresh(self.hashes)) {
                return PchState::Off;
            }
            // Its compiles ran early without it (the host stage takes their objects): not made
            // now; one in the background goes on, else it starts after this build.
            if host.ran_early.get(i).copied().unwrap_or(false) {
                if p.background_dir().is_dir() {
                    return PchState::Off;
                }
                return after_this(p);
            }
            let mut taken_over = false;
            // A PCH left to the host stage whose background clang still runs goes on.
            let running = || matches!(cache::try_lock(&p.background_dir()), Some(Err(_)));
            if deferred[i] && n < 2 && running() {
                return PchState::Off;
            }
            if p.background_dir().is_dir() {
                if !self.take_over_running(p) {
                    return PchState::Adopt;
                }
                taken_over = true;
            }
            let seen = p.record.with_extension("seen");
            // A background PCH just taken over for a single compile: making it now would
            // cost more than that compile saves (as on a cold build); it starts again after.
            let single_after_take_over = taken_over && n < 2 && background;
            if (n >= 2 || seen.is_file()) && !single_after_take_over {
                return PchState::Make;
            }
            if deferred[i] && n < 2 {
                return PchState::Off;
            }
            after_this(p)
        });
        states.collect()
    }

    /// Makes the PCH of `p`, or adopts it (`adopt`: an earlier build started it in the
    /// background, [`PchState::Adopt`]): whether the compiles can use it. While another
    /// build makes it (make's builds of a project start at once, and want the same PCHs of
    /// their shared includes), this one makes one of `also`, the other PCHs it makes, that no
    /// build is making, rather than wait idle: two builds make two architectures' at once.
    pub(crate) fn make(
        &self,
        p: &PchJob,
        adopt: bool,
        also: &[&PchJob],
        meter: &dyn Meter,
    ) -> Result<bool, Error> {
        if let Some(&ok) = self.helped().get(&p.key) {
            return Ok(ok);
        }
        let adopted = if adopt {
            self.adopt_pch(p, meter)?
        } else {
            None
        };
        match adopted {
            Some(ok) => Ok(ok),
            None => self.run_pch(p, also, meter),
        }
    }

    fn helped(&self) -> std::sync::MutexGuard<'_, BTreeMap<u128, bool>> {
        self.helped.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the PCH of `p` is in the cache, made from what its headers hold now.
    pub(crate) fn pch_cached(&self, p: &PchJob) -> bool {
        let Some(rec) = Record::load(&p.record) else {
            return false;
        };
        rec.is_fresh(self.hashes)
            && self.lookups.holds(&rec, &p.command, &p.preamble_file)
            && rec.outputs.first().map(|o| o.2) == self.hashes.file(&p.pch)
    }

    /// Makes the PCH of `p` (in a private directory, as a compile): whether it can be used.
    /// It can when clang succeeded and printed nothing; otherwise what clang said is kept in
    /// the `.refused` record beside it (the one place a refusal is told), and the compiles
    /// run without it.
    fn run_pch(&self, p: &PchJob, also: &[&PchJob], meter: &dyn Meter) -> Result<bool, Error> {
        if self.pch_cached(p) {
            return Ok(true);
        }
        // One build makes it at a time (builds sharing the cache: make -j's invocations);
        // the others wait for that one, a foreground compiler, and use what it made.
        let _making = self.making_lock(p, also, meter)?;
        if self.pch_cached(p) {
            return Ok(true);
        }
        self.make_locked(p, meter)
    }

    /// While another build holds the lock of `p`: makes the first of `also` that no build is
    /// making and this one has not made (holding its lock); whether it made one.
    fn help(&self, p: &PchJob, also: &[&PchJob], meter: &dyn Meter) -> Result<bool, Error> {
        for q in also.iter().filter(|q| q.key != p.key) {
            if self.helped().contains_key(&q.key) {
                continue;
            }
            let Some(_lock) = self.try_lock(q) else {
                continue;
            };
            let ok = self.pch_cached(q) || self.make_locked(q, meter)?;
            self.helped().insert(q.key, ok);
            return Ok(true);
        }
        Ok(false)
    }

    /// Makes the PCH of `p`, whose making lock this build holds: whether it can be used.
    fn make_locked(&self, p: &PchJob, meter: &dyn Meter) -> Result<bool, Error> {
        let started = SystemTime::now();
        self.write_preamble(p)?;
        let tmp = cache::JobDir::new(self.cache_dir)?;
        let _known = process::PrivateDir::new(self.processes, tmp.path());
        if self.processes.is_cancelled() {
            return Err(Error::Stopped); // the directory goes with `tmp`
        }
        let cmd = p.command.in_private(tmp.path(), p.in_dir(tmp.path()));
        let depfile = tmp.path().join(p.depfile.file_name().unwrap_or_default());
        let result = self.run.run_command(
            &cmd,
            &p.target,
            Some(&p.preamble_file),
            Some(&depfile),
            meter,
        );
        // A PCH killed with the build is no refusal, and nothing starts after it.
        if self.processes.is_cancelled() {
            return Err(Error::Stopped);
        }
        let why = match result {
            Err(Error::Stopped) => return Err(Error::Stopped),
            Ok(printed) if printed.is_empty() => None,
            Ok(printed) => Some(printed),
            Err(e) => Some(e.to_string().lines().map(str::to_string).collect()),
        };
        Ok(self
            .keep_pch(p, tmp.path(), started, why, meter)?
            .unwrap_or(false))
    }

    /// The lock of making the PCH of `p` (`<record>.making`), held once taken (the wait is
    /// cancellable; while it lasts, this build makes others of `also`, [`Lifecycle::help`]);
    /// `None` where it cannot be taken (then this build makes it too).
    fn making_lock(
        &self,
        p: &PchJob,
        also: &[&PchJob],
        meter: &dyn Meter,
    ) -> Result<Option<std::fs::File>, Error> {
        #[cfg(unix)]
        {
            use rustix::fs::{FlockOperation, flock};
            let Some(file) = making_file(p) else {
                return Ok(None);
            };
            while flock(&file, FlockOperation::NonBlockingLockExclusive).is_err() {
                if self.processes.is_cancelled() {
                    return Err(Error::Stopped);
                }
                if !self.help(p, also, meter)? {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
            // The hashes of what the other build wrote are not those this one remembers.
            self.hashes.forget(&p.pch);
            Ok(Some(file))
        }
        #[cfg(not(unix))]
        {
            let _ = (p, also, meter);
            Ok(None)
        }
    }

    /// The making lock of `p` when no build holds it: taken, without waiting.
    fn try_lock(&self, p: &PchJob) -> Option<std::fs::File> {
        #[cfg(unix)]
        {
            use rustix::fs::{FlockOperation, flock};
            let file = making_file(p)?;
            flock(&file, FlockOperation::NonBlockingLockExclusive).ok()?;
            self.hashes.forget(&p.pch);
            Some(file)
        }
        #[cfg(not(unix))]
        {
            let _ = p;
            None
        }
    }

    /// The record of the PCH of `p` made from `deps` (the preamble file first), which hold
    /// `hashed`: their probes and the context, no output yet; `None` when a probe cannot be
    /// followed ([`Lookups::probes`]).
    pub(super) fn pch_record(
        &self,
        p: &PchJob,
        deps: &[PathBuf],
        hashed: Vec<(PathBuf, u128)>,
    ) -> Option<Record> {
        let probes = self
            .lookups
            .probes(&p.command, &p.preamble_file, deps, self.hashes)?;
        Some(Record {
            context: self
                .lookups
                .context(&p.command, &p.preamble_file, deps, &probes),
            outputs: Vec::new(),
            deps: hashed,
            probes,
            stderr: Vec::new(),
        })
    }

    /// Writes the preamble file of `p`, unless it holds the preamble already.
    pub(super) fn write_preamble(&self, p: &PchJob) -> Result<(), Error> {
        if std::fs::read(&p.preamble_file).ok().as_deref() != Some(p.preamble.as_slice()) {
            fs::write_atomic(&p.preamble_file, &p.preamble)?;
            self.hashes.forget(&p.preamble_file);
        }
        Ok(())
    }

    /// After clang made the PCH of `p` and its depfile in `dir` (under their own file names),
    /// having started at `started` and printed `why` (`None`: nothing, it succeeded):
    /// records the headers it read, by content, and moves the PCH into place (whether it can
    /// be used), or keeps what clang said in the `.refused` record. `None` when a header
    /// changed since it started (clang may have read either version): nothing kept.
    pub(super) fn keep_pch(
        &self,
        p: &PchJob,
        dir: &Path,
        started: SystemTime,
        why: Option<Vec<String>>,
        meter: &dyn Meter,
    ) -> Result<Option<bool>, Error> {
        let depfile = dir.join(p.depfile.file_name().unwrap_or_default());
        if !depfile.is_file() {
            let deps_only = p.deps_only.map_paths(p.in_dir(dir));
            let _ = (self.run).run_command(&deps_only, &p.target, None, None, meter);
        }
        let mut deps = self.read_deps(&p.preamble_file, &depfile, p.command.dir.as_deref());
        // The preamble file was just written (its content is known; the depfile may name it
        // again, absolute); the headers must not have changed since the PCH began.
        let preamble_name = p.preamble_file.file_name();
        deps.retain(|d| d == &p.preamble_file || d.file_name() != preamble_name);
        let Some(headers) = self.hashes.hashed(&deps[1..], started) else {
            return Ok(None);
        };
        let mut hashed = vec![(p.preamble_file.clone(), xxh3_128(&p.preamble))];
        hashed.extend(headers);
        let Some(mut rec) = self.pch_record(p, &deps, hashed) else {
            return Ok(None);
        };
        if let Some(why) = why {
            rec.stderr = why;
            let _ = rec.store(&p.record.with_extension("refused"));
            return Ok(Some(false));
        }
        let written = dir.join(p.pch.file_name().unwrap_or_default());
        let (hash, len) = crate::builder::fs::hash_file(&written)
            .map_err(|e| Error::io("reading", &written, e))?;
        rec.outputs.push((p.pch.clone(), len, hash));
        self.hashes.forget(&p.pch);
        std::fs::rename(&written, &p.pch).map_err(|e| Error::io("renaming", &written, e))?;
        rec.store(&p.record)?;
        self.made.fetch_add(1, Ordering::Relaxed);
        Ok(Some(true))
    }

    /// The inputs the depfile of a PCH names ([`cache::read_deps`]).
    pub(super) fn read_deps(
        &self,
        source: &Path,
        depfile: &Path,
        dir: Option<&Path>,
    ) -> Vec<PathBuf> {
        cache::read_deps(self.no_depfile, source, depfile, dir)
    }
}

/// The file whose lock a build holds while it makes the PCH of `p` (`<record>.making`).
fn making_file(p: &PchJob) -> Option<std::fs::File> {
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(p.record.with_extension("making"))
        .ok()
}
