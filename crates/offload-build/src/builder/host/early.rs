//! The host compiles of a host-code build with clang, as the host stage planned them
//! ([`Hosts`]): each source's host compile is a node of the job graph after its device
//! compiles, which packs their device code, names its file after its content and compiles
//! (or takes the cached object).
//!
//! Early host compiles: each source's host compile also starts beside its device compiles,
//! reading its device code from a named pipe that is filled once the last architecture is
//! done and packed. clang reads the file of `-fcuda-include-gpubinary` only when it writes
//! the module's constructor, at the end of its IR generation (before LLVM's optimization and
//! machine code generation, which follow: `convolution.hip` at `-O3` read the pipe halfway,
//! and took 1.2 s of its 2.4 s after it), so the parse of the host code no longer waits for
//! the device code: the cores a build's last device compile leaves idle go to its host
//! compile. Its optimization and code generation still come after the device code.
//! The host stage takes the early compile's object as its host compile's (the same command
//! but for where the device code lies, which clang does not write into the object) when its
//! cache misses and the early compile ran with the device code the host stage packed,
//! succeeded, and printed nothing with a PCH; otherwise the host compile runs as before.
//!
//! An early compile waits, holding its job slot, for its device compiles: it starts only
//! once all of them have started (its node's gate, [`crate::builder::graph`]), so it
//! never keeps one from a slot, and it gives up when a job must run alone (it is optional
//! work). Unix only (named pipes); not with a launcher, which would read the pipe.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, SystemTime};

use xxhash_rust::xxh3::xxh3_128;

use crate::builder::arch::{Arch, Target};
use crate::builder::cache::JobDir;
use crate::builder::command::Command;
use crate::builder::error::Error;
use crate::builder::job::CompileJob;
use crate::builder::job_out::JobOut;
use crate::builder::piece::Piece;
use crate::builder::process::{PrivateDir, Processes};

/// Packs a source's device code as its host compile embeds it (the host room's).
pub(crate) type Pack = dyn Fn(&Path, &BTreeMap<Arch, Vec<Piece>>) -> Result<Vec<u8>, Error> + Sync;

/// The host compile job of a source whose packed device code is in the given file (the host
/// room's: it writes the file, named after its content, and spells the job).
pub(crate) type HostJob<'a> = dyn Fn(&Path, &[u8]) -> Result<CompileJob, Error> + Sync + 'a;

/// The host compiles of a build with clang: how each source's device code is packed and its
/// host compile spelled, the early compiles (each source's host job planned with
/// [`Hosts::placeholder`] for its device code), and what they ran.
pub(crate) struct Hosts<'a> {
    jobs: BTreeMap<PathBuf, (CompileJob, PathBuf)>,
    pack: &'a Pack,
    host_job: &'a HostJob<'a>,
    /// Whether the early compiles run (named pipes, no launcher).
    pub(crate) early: bool,
    state: Mutex<State>,
    ready: Condvar,
    results: Mutex<BTreeMap<PathBuf, Early>>,
    /// The sources whose early compile, without a PCH, the host compile took.
    taken_without_pch: Mutex<std::collections::BTreeSet<PathBuf>>,
}

/// The device code of the sources, as their compiles end.
#[derive(Default)]
struct State {
    pieces: BTreeMap<PathBuf, BTreeMap<Arch, Vec<Piece>>>,
    /// Per source, the device compiles still running or to run.
    waiting: BTreeMap<PathBuf, usize>,
    /// A job of the stage failed: no device code comes.
    failed: bool,
}

/// What one early host compile ran.
pub(crate) struct Early {
    /// Its private directory, holding its object and depfile.
    dir: JobDir,
    pub(crate) started: SystemTime,
    /// How long it ran.
    pub(crate) took: Duration,
    /// What it printed, when it succeeded.
    printed: Option<Vec<String>>,
    used_pch: bool,
    /// The hash of the device code it read, when it read the whole of it.
    fed: Option<u128>,
}

impl<'a> Hosts<'a> {
    /// The file a source's early host job names for its device code (`<stem>.early.<ext>` in
    /// `cache_dir`): replaced by the pipe when it runs.
    pub(crate) fn placeholder(cache_dir: &Path, source: &Path, ext: &str) -> PathBuf {
        let stem = source.file_stem().unwrap_or_default().to_string_lossy();
        cache_dir.join(format!("{stem}.early.{ext}"))
    }

    /// The host compiles of `jobs` (each planned with its placeholder), packing with `pack`
    /// and spelled by `host_job`; early where named pipes are and no job has a launcher, and
    /// `early` allows it.
    pub(crate) fn new(
        jobs: Vec<(CompileJob, PathBuf)>,
        pack: &'a Pack,
        host_job: &'a HostJob<'a>,
        early: bool,
    ) -> Hosts<'a> {
        let bare = jobs.iter().all(|(j, _)| j.steps[0].launcher.is_empty());
        Hosts {
            jobs: jobs
                .into_iter()
                .map(|(j, p)| (j.source.clone(), (j, p)))
                .collect(),
            pack,
            host_job,
            early: early && cfg!(unix) && bare,
            state: Mutex::new(State::default()),
            ready: Condvar::new(),
            results: Mutex::new(BTreeMap::new()),
            taken_without_pch: Mutex::new(Default::default()),
        }
    }

    /// The host job of `source` as planned (its device code in the placeholder).
    pub(crate) fn planned(&self, source: &Path) -> Option<&CompileJob> {
        self.jobs.get(source).map(|(j, _)| j)
    }

    /// Where the time and peak of `source`'s host compile are kept: named after its planned
    /// job, whose key the device code does not enter.
    pub(crate) fn stats(&self, source: &Path) -> PathBuf {
        self.planned(source)
            .map_or_else(PathBuf::new, |j| j.base.with_extension("host.stats"))
    }

    /// The sources with a host compile, in order.
    pub(crate) fn sources(&self) -> impl Iterator<Item = &PathBuf> {
        self.jobs.keys()
    }

    /// The host compile job of `source`, its device code packed now (every device compile of
    /// it ended).
    pub(crate) fn host_job(&self, source: &Path) -> Result<CompileJob, Error> {
        let pieces = self.state().pieces.get(source).cloned().unwrap_or_default();
        let bytes = (self.pack)(source, &pieces)?;
        (self.host_job)(source, &bytes)
    }

    /// Whether the host compile of `source` took its early compile, which ran without a
    /// PCH.
    pub(crate) fn took_without_pch(&self, source: &Path) -> bool {
        let t = self
            .taken_without_pch
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        t.contains(source)
    }

    /// The early host job of `source`, if it has one.
    pub(crate) fn job(&self, source: &Path) -> Option<&CompileJob> {
        self.jobs.get(source).filter(|_| self.early).map(|(j, _)| j)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Before the device compiles of `to_run` start: each source waits for these, and has
    /// the images of `cached` (its compiles whose cache record held) already.
    pub(crate) fn expect(&self, to_run: &[&CompileJob], cached: &[&JobOut]) {
        let mut st = self.state();
        for j in to_run.iter().filter(|j| j.target.device().is_some()) {
            *st.waiting.entry(j.source.clone()).or_default() += 1;
        }
        for o in cached {
            add_pieces(&mut st, o);
        }
    }

    /// A device compile of the stage ended with `out` (an error: `None`).
    pub(crate) fn done(&self, out: Option<&JobOut>) {
        let mut st = self.state();
        match out {
            Some(o) if o.target.device().is_some() => {
                add_pieces(&mut st, o);
                if let Some(n) = st.waiting.get_mut(&o.source) {
                    *n = n.saturating_sub(1);
                }
            }
            Some(_) => {}
            None => st.failed = true,
        }
        drop(st);
        self.ready.notify_all();
    }

    /// The device code of `source`, packed, once all its compiles ended; `None` when one
    /// failed, or `running` went false (the host compile ended first), the build stopped or
    /// `stop` says to give up.
    fn device_code(
        &self,
        source: &Path,
        running: &AtomicBool,
        p: &Processes,
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Option<Vec<u8>> {
        let mut st = self.state();
        loop {
            if st.failed || !running.load(Ordering::SeqCst) || p.is_cancelled() || stop() {
                return None;
            }
            if st.waiting.get(source).copied().unwrap_or(0) == 0 {
                let pieces = st.pieces.get(source).cloned().unwrap_or_default();
                drop(st);
                return (self.pack)(source, &pieces).ok();
            }
            st = self
                .ready
                .wait_timeout(st, Duration::from_millis(20))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Keeps what the early compile of `source` ran.
    pub(crate) fn keep(&self, source: &Path, early: Early) {
        let mut r = self.results.lock().unwrap_or_else(|e| e.into_inner());
        r.insert(source.to_path_buf(), early);
    }

    /// What the early compile of `job`'s source ran, when the host stage can take it as
    /// `job`'s first step: the same command but for the device code's file, which held what
    /// the early compile read; one that used a PCH only when the host stage has it too
    /// (`with_pch`; one without is the compile without PCH, whichever the host stage has).
    pub(crate) fn take(&self, job: &CompileJob, with_pch: bool) -> Option<Early> {
        let early = self
            .results
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&job.source)?;
        let (planned, placeholder) = self.jobs.get(&job.source)?;
        let gpubinary = job.steps[0].inputs.last()?;
        let same = same_compile(planned, placeholder, job, gpubinary);
        let fed = std::fs::read(gpubinary).ok().map(|d| xxh3_128(&d));
        // Without its PCH, the compile as planned: what the host stage would run without one.
        // With it, only one that printed nothing (else the compile runs again without, whose
        // diagnostics are the ones a build without PCH prints).
        let quiet = early.printed.as_ref().is_some_and(Vec::is_empty);
        let pch_agrees = !early.used_pch || (with_pch && quiet);
        let taken = same && early.fed.is_some() && early.fed == fed && pch_agrees;
        if taken && !early.used_pch {
            let mut t = self
                .taken_without_pch
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            t.insert(job.source.clone());
        }
        taken.then_some(early)
    }
}

/// Adds the images of a finished device compile to its source's.
fn add_pieces(st: &mut State, o: &JobOut) {
    let Target::Device(arch) = &o.target else {
        return;
    };
    let per_arch = st.pieces.entry(o.source.clone()).or_default();
    for ((kind, _), data) in o.outputs.iter().zip(&o.images) {
        if !Piece::packed(*kind, arch) {
            continue;
        }
        let piece = Piece {
            kind: *kind,
            data: data.clone(),
        };
        per_arch.entry(arch.clone()).or_default().push(piece);
    }
}

/// Whether `planned` (naming `placeholder` for its device code) runs the compile of `job`
/// (naming `gpubinary`): the same program, launcher, environment, directory and arguments,
/// once its object, depfile and device code are those of `job`.
fn same_compile(
    planned: &CompileJob,
    placeholder: &Path,
    job: &CompileJob,
    gpubinary: &Path,
) -> bool {
    let (Some((_, from)), Some((_, to))) = (planned.outputs.first(), job.outputs.first()) else {
        return false;
    };
    let map = [
        (from.as_path(), to.as_path()),
        (planned.depfile.as_path(), job.depfile.as_path()),
        (placeholder, gpubinary),
    ];
    let mapped = planned.steps[0].map_paths(|p| {
        map.iter()
            .find(|(a, _)| *a == p)
            .map(|(_, b)| b.to_path_buf())
    });
    let (a, b): (&Command, &Command) = (&mapped, &job.steps[0]);
    a.program == b.program
        && a.launcher == b.launcher
        && a.args == b.args
        && a.env == b.env
        && a.dir == b.dir
}

impl Early {
    /// Where the early compile wrote `file` of its job (`planned`'s object or depfile).
    fn file(&self, planned: &Path) -> PathBuf {
        self.dir
            .path()
            .join(planned.file_name().unwrap_or_default())
    }

    /// Moves its object and depfile to where `job`'s first step writes them (`object`,
    /// `depfile`): what it printed and whether it used the PCH; `None` when it failed or
    /// a file cannot be moved.
    pub(crate) fn adopt(
        self,
        hosts: &Hosts<'_>,
        job: &CompileJob,
        object: &Path,
        depfile: &Path,
    ) -> Option<(Vec<String>, bool)> {
        let (planned, _) = hosts.jobs.get(&job.source)?;
        let printed = self.printed.clone()?;
        let from_object = self.file(&planned.outputs.first()?.1);
        std::fs::rename(from_object, object).ok()?;
        let from_depfile = self.file(&planned.depfile);
        if from_depfile.is_file() {
            std::fs::rename(from_depfile, depfile).ok()?;
        }
        Some((printed, self.used_pch))
    }
}

/// One early host compile: of `source`, with its PCH when `used_pch`; `stop` says when to
/// give up waiting for the device code.
pub(crate) struct Run<'r> {
    pub(crate) hosts: &'r Hosts<'r>,
    pub(crate) source: &'r Path,
    pub(crate) used_pch: bool,
    pub(crate) processes: &'r Processes,
    pub(crate) stop: &'r (dyn Fn() -> bool + Sync),
}

impl Run<'_> {
    /// Runs the early host compile `cmd` (the planned job's command, its files in `dir`): a
    /// named pipe stands for the device code, filled by a thread of its own once the device
    /// compiles ended; `exec` runs the command.
    pub(crate) fn run(
        &self,
        cmd: &Command,
        dir: JobDir,
        exec: impl FnOnce(&Command) -> Result<Vec<String>, Error>,
    ) {
        let Run {
            hosts,
            source,
            used_pch,
            processes,
            stop,
        } = *self;
        run(hosts, source, cmd, dir, used_pch, processes, stop, exec);
    }
}

#[allow(clippy::too_many_arguments)]
fn run(
    hosts: &Hosts<'_>,
    source: &Path,
    cmd: &Command,
    dir: JobDir,
    used_pch: bool,
    processes: &Processes,
    stop: &(dyn Fn() -> bool + Sync),
    exec: impl FnOnce(&Command) -> Result<Vec<String>, Error>,
) {
    let started = SystemTime::now();
    let clock = std::time::Instant::now();
    let _known = PrivateDir::new(processes, dir.path());
    let Some((_, placeholder)) = hosts.jobs.get(source) else {
        return;
    };
    let pipe = dir.path().join(placeholder.file_name().unwrap_or_default());
    if make_pipe(&pipe).is_err() {
        return;
    }
    let mut cmd = cmd.clone();
    for a in &mut cmd.args {
        if Path::new(a) == placeholder.as_path() {
            *a = pipe.clone().into_os_string();
        }
    }
    let running = AtomicBool::new(true);
    let fed = Mutex::new(None);
    let printed = std::thread::scope(|s| {
        s.spawn(|| {
            let code = hosts.device_code(source, &running, processes, stop);
            let hash = code.as_deref().map(xxh3_128);
            if feed(&pipe, code.as_deref(), &running) {
                *fed.lock().unwrap_or_else(|e| e.into_inner()) = hash;
            }
        });
        let printed = exec(&cmd);
        running.store(false, Ordering::SeqCst);
        printed
    });
    let fed = fed.into_inner().unwrap_or_else(|e| e.into_inner());
    let early = Early {
        dir,
        started,
        took: clock.elapsed(),
        printed: printed.ok(),
        used_pch,
        fed,
    };
    hosts.keep(source, early);
}

#[cfg(unix)]
fn make_pipe(path: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
    // SAFETY: a NUL-terminated path that lives across the call.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(unix))]
fn make_pipe(_path: &Path) -> std::io::Result<()> {
    Err(std::io::Error::other("no named pipes"))
}

/// Writes `code` into the pipe once its reader opened it, then closes it; without `code`
/// (no device code), closes it at once (the compile reads nothing and is not taken). Gives
/// up once `running` goes false with the pipe never opened. Whether all of `code` went in.
/// `SIGPIPE` is blocked on this thread: a compiler that dies while it reads makes the write
/// fail (`EPIPE`) instead of ending the tool, whose `SIGPIPE` may be the default's.
#[cfg(unix)]
fn feed(pipe: &Path, code: Option<&[u8]>, running: &AtomicBool) -> bool {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    block_sigpipe();
    loop {
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(pipe);
        match opened {
            Ok(f) => {
                if rustix::fs::fcntl_setfl(&f, rustix::fs::OFlags::empty()).is_err() {
                    return false;
                }
                return code.is_some_and(|c| (&f).write_all(c).is_ok());
            }
            // No reader yet: the compile has not reached the end of its IR generation.
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                if !running.load(Ordering::SeqCst) {
                    return false;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(_) => return false,
        }
    }
}

/// Blocks `SIGPIPE` on the calling thread (a pending one goes with the thread).
#[cfg(unix)]
fn block_sigpipe() {
    // SAFETY: plain calls on a local signal set; only this thread's mask changes.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

#[cfg(not(unix))]
fn feed(_pipe: &Path, _code: Option<&[u8]>, _running: &AtomicBool) -> bool {
    false
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use offload_formats::package::ImageKind;
    use std::io::Read;

    fn job(base: &Path, gpubinary: &Path) -> CompileJob {
        let out = base.with_extension("o");
        let mut c = Command::new("clang");
        c.add_args(["-Xclang", "-fcuda-include-gpubinary", "-Xclang"]);
        c.add_arg(gpubinary);
        c.add_args(["k.hip", "-o"]);
        c.add_arg(&out);
        c.inputs.push(gpubinary.to_path_buf());
        CompileJob {
            source: PathBuf::from("/s/k.hip"),
            target: Target::Host,
            rdc: false,
            steps: vec![c],
            deps_only: Command::new("clang"),
            outputs: vec![(ImageKind::Object, out)],
            depfile: base.with_extension("d"),
            record: base.with_extension("rec"),
            base: base.to_path_buf(),
            pch: None,
            pch_skip: 0,
            threads: 1,
            ways: vec![crate::builder::job::Way::Driver],
            remote: false,
            stays: None,
        }
    }

    #[test]
    fn the_planned_compile_is_the_host_stages_but_for_its_files() {
        let placeholder = Path::new("/c/k.early.hipfb");
        let planned = job(Path::new("/c/k-host-1111"), placeholder);
        let gpubinary = Path::new("/c/k-2222.hipfb");
        let fin = job(Path::new("/c/k-host-3333"), gpubinary);
        assert!(same_compile(&planned, placeholder, &fin, gpubinary));
        let mut other = fin.clone();
        other.steps[0].add_arg("-O2");
        assert!(!same_compile(&planned, placeholder, &other, gpubinary));
        let elsewhere = job(Path::new("/c/k-host-3333"), Path::new("/c/k-4444.hipfb"));
        assert!(!same_compile(&planned, placeholder, &elsewhere, gpubinary));
    }

    #[test]
    fn an_early_compile_with_a_pch_is_taken_only_when_it_printed_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let placeholder = d.join("k.early.hipfb");
        let gpubinary = d.join("k-2222.hipfb");
        std::fs::write(&gpubinary, b"device code").unwrap();
        let fin = job(&d.join("k-host-3333"), &gpubinary);
        let pack: &Pack = &|_: &Path, _: &BTreeMap<Arch, Vec<Piece>>| Ok(Vec::new());
        let host_job: &HostJob = &|_: &Path, _: &[u8]| Err(Error::Stopped);
        let hosts = Hosts::new(
            vec![(job(&d.join("k-host-1111"), &placeholder), placeholder)],
            pack,
            host_job,
            true,
        );
        let early = |used_pch: bool, printed: &[&str]| Early {
            dir: JobDir::new(d).unwrap(),
            started: SystemTime::now(),
            took: Duration::ZERO,
            printed: Some(printed.iter().map(|s| s.to_string()).collect()),
            used_pch,
            fed: Some(xxh3_128(b"device code")),
        };
        let source = fin.source.clone();
        let cases = [
            (true, &["warning: w"][..], true, false),
            (true, &[][..], true, true),
            (true, &[][..], false, false),
            (false, &["warning: w"][..], true, true),
            (false, &["warning: w"][..], false, true),
        ];
        for (used_pch, printed, with_pch, taken) in cases {
            hosts.keep(&source, early(used_pch, printed));
            assert_eq!(
                hosts.take(&fin, with_pch).is_some(),
                taken,
                "used_pch {used_pch}, printed {printed:?}, host stage with PCH {with_pch}"
            );
        }
    }

    fn pipe() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("k.early.hipfb");
        make_pipe(&p).unwrap();
        (dir, p)
    }

    #[test]
    fn the_device_code_goes_through_the_pipe_to_its_reader() {
        let (_dir, p) = pipe();
        let code: Vec<u8> = (0..300_000u32).map(|i| i as u8).collect();
        let running = AtomicBool::new(true);
        let read = std::thread::scope(|s| {
            let reader = s.spawn(|| {
                std::thread::sleep(Duration::from_millis(50));
                let mut v = Vec::new();
                std::fs::File::open(&p)
                    .unwrap()
                    .read_to_end(&mut v)
                    .unwrap();
                v
            });
            assert!(feed(&p, Some(&code), &running));
            reader.join().unwrap()
        });
        assert_eq!(read, code, "bigger than a pipe's buffer, whole");
        // No device code: the reader gets an empty file, and nothing counts as fed.
        let read = std::thread::scope(|s| {
            let reader = s.spawn(|| {
                let mut v = Vec::new();
                std::fs::File::open(&p)
                    .unwrap()
                    .read_to_end(&mut v)
                    .unwrap();
                v
            });
            assert!(!feed(&p, None, &running));
            reader.join().unwrap()
        });
        assert!(read.is_empty());
    }

    #[test]
    fn a_pipe_nobody_opens_is_given_up_once_the_compile_ended() {
        let (_dir, p) = pipe();
        let running = AtomicBool::new(true);
        let t = std::time::Instant::now();
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(60));
                running.store(false, Ordering::SeqCst);
            });
            assert!(!feed(&p, Some(b"code"), &running));
        });
        assert!(
            t.elapsed() >= Duration::from_millis(60),
            "it waited for a reader"
        );
    }

    #[test]
    fn a_reader_that_goes_away_fails_the_write_and_not_the_tool() {
        let (_dir, p) = pipe();
        let running = AtomicBool::new(true);
        // As the offload-build tool runs: SIGPIPE's default disposition ends the process.
        // SAFETY: restores what Rust's runtime set (ignored) before the test returns.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
        let fed = std::thread::scope(|s| {
            s.spawn(|| {
                let f = std::fs::File::open(&p).unwrap();
                std::thread::sleep(Duration::from_millis(30));
                drop(f);
            });
            feed(&p, Some(&vec![7u8; 4 << 20]), &running)
        });
        // SAFETY: as above.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
        assert!(!fed);
    }
}
