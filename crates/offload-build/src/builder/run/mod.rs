//! The jobs stage: runs the plan's compile jobs, one per (source, architecture), in parallel
//! ([`crate::builder::run::pool`]: Cargo's jobserver, `OFFLOAD_BUILD_MAX_JOBS`), each skipped when its cache
//! record ([`crate::builder::cache`]) says its inputs are unchanged; then the plan's device links, one
//! per architecture compiled from several sources (`-fgpu-rdc`).
//!
//! Every command comes from the plan ([`crate::builder::command::Command`], built by [`crate::builder::toolchain::clang`]);
//! this stage only runs them, checks what they wrote and records the results: the images per
//! architecture, for [`crate::builder::pack`].

pub(crate) mod pool;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use foldhash::HashSet;

use xxhash_rust::xxh3::xxh3_128;

use offload_formats::package::ImageKind;

use crate::builder::Language;
use crate::builder::arch::Arch;
use crate::builder::cache::{self, ContentHashes, Record};
use crate::builder::toolchain::clang::{CompileJob, LinkJob};
use crate::builder::command::{self, Command, Domain, KeyBuilder};
use crate::builder::diag::{self, Diagnostic};
use crate::builder::env::Env;
use crate::builder::error::Error;
use crate::builder::fs;
use crate::builder::cache::lookup::Lookups;
use crate::builder::pack::Piece;
use crate::builder::plan::{JobSettings, Plan};
use crate::builder::pch::{self, PchJob};
use crate::builder::process::{self, Processes, RunError};
use crate::builder::toolchain::Toolchain;
use crate::builder::Progress;
use crate::builder::ProgressStep;

/// What the jobs produced.
#[derive(Debug, Default)]
pub(crate) struct Built {
    /// The images of each architecture (code objects; PTX and cubins for CUDA).
    pub per_arch: BTreeMap<Arch, Vec<Piece>>,
    /// Jobs (compiles and device links) that ran.
    pub jobs_run: usize,
    /// Jobs whose cached result was used.
    pub jobs_cached: usize,
    /// Precompiled preambles made.
    pub pch_made: usize,
    /// Compiles that used a precompiled preamble.
    pub pch_used: usize,
    /// Precompiled preambles started in the background, for the next build.
    pub pch_background: usize,
    /// What the compiler printed for the successful jobs (run or cached), deduplicated
    /// across architectures; empty when warnings are off ([`crate::builder::Build::warnings`]).
    pub diagnostics: Vec<Diagnostic>,
}

/// Runs the plan's compiles and device links; tells Cargo about every header read.
pub(crate) fn run(plan: &Plan, env: &Env<'_>) -> Result<Built, Error> {
    let mut built = Built::default();
    let (Some(tc), Some(settings)) = (&plan.toolchain, &plan.jobs) else {
        // Nothing to compile (only images).
        return Ok(built);
    };
    let sources: Vec<PathBuf> = plan.compiles.iter().map(|(s, _)| s.clone()).collect();
    refuse_clobbering(plan, &sources, "source", |_| None)?;
    cache::remove_leftovers(&plan.cache_dir);
    let started = SystemTime::now();
    let runner = Runner {
        processes: env.processes(),
        tc,
        lang: plan.lang,
        cache_dir: &plan.cache_dir,
        timeout: settings.timeout,
        hashes: ContentHashes::with_stamps(&plan.cache_dir),
        lookups: Lookups::new(env.compiler_vars()),
        no_depfile: AtomicBool::new(false),
        warnings: Mutex::new(Vec::new()),
        pch_made: AtomicUsize::new(0),
        pch_background: AtomicUsize::new(0),
    };
    let mut counter = Counter::new(settings);
    let mut outs = runner.compiles(settings, &mut counter)?;
    runner.flush_warnings(env);
    if runner.no_depfile.load(Ordering::Relaxed) {
        env.directives().warn(&format!(
            "offload-build: {} wrote no depfile (-MD -MF); header changes are not tracked",
            tc.clang.display()
        ));
    }
    let headers: Vec<PathBuf> = outs
        .iter()
        .flat_map(|o| o.deps.iter().skip(1))
        .cloned()
        .collect();
    refuse_clobbering(plan, &headers, "header", |p| runner.hashes.file_id(p))?;
    tell_headers(plan, tc, &outs, env)?;
    built.pch_made = runner.pch_made.load(Ordering::Relaxed);
    built.pch_background = runner.pch_background.load(Ordering::Relaxed);
    for o in &mut outs {
        built.count(o.ran);
        built.pch_used += usize::from(o.used_pch);
        if !o.rdc {
            built.add_images(o);
        }
    }
    let mut printed: Vec<(&str, Vec<String>)> = Vec::new();
    for o in &outs {
        printed.push((o.arch.as_str(), diag::group(&o.stderr)));
    }
    let linked = runner.links(settings, &mut counter)?;
    for l in &linked {
        printed.push((l.arch.as_str(), diag::group(&l.stderr)));
    }
    if settings.forward_warnings {
        built.diagnostics = diag::merge(printed);
    }
    runner.flush_warnings(env);
    let settled = started.checked_sub(cache::STAMP_SETTLE).unwrap_or(started);
    runner.hashes.save_stamps(&plan.cache_dir, settled);
    for l in linked {
        built.count(l.ran);
        built.per_arch.entry(l.arch).or_default().push(Piece {
            kind: ImageKind::Object,
            data: l.data,
        });
    }
    Ok(built)
}

/// An error when an output of the build (the container, the generated `<name>.rs`) is one
/// of `inputs` (`kind`: "source", "header"): an `out_dir` that holds the build's own inputs
/// under those names would have them overwritten.
fn refuse_clobbering(
    plan: &Plan,
    inputs: &[PathBuf],
    kind: &str,
    id_of: impl Fn(&Path) -> Option<(u64, u64)>,
) -> Result<(), Error> {
    let Some(out) = plan.outputs.as_ref() else {
        return Ok(());
    };
    // Each output's identity once, each input once (the jobs share most headers).
    let outputs = [&out.fatbin, &out.generated].map(|o| (o, file_id(o)));
    let mut seen = std::collections::HashSet::new();
    for input in inputs.iter().filter(|i| seen.insert(*i)) {
        let clobbered = outputs.iter().find(|(output, id)| {
            input == *output || (id.is_some() && id_of(input).or_else(|| file_id(input)) == *id)
        });
        if let Some((output, _)) = clobbered {
            return Err(Error::Config(format!(
                "{}: the build would overwrite this {kind} with its output {}; choose another \
                 out_dir or name",
                input.display(),
                output.display()
            )));
        }
    }
    Ok(())
}

/// The device and inode of a file; `None` when it does not exist (or off Unix).
fn file_id(path: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

impl Built {
    fn count(&mut self, ran: bool) {
        if ran {
            self.jobs_run += 1;
        } else {
            self.jobs_cached += 1;
        }
    }

    /// The images of a job that is not device-linked.
    fn add_images(&mut self, o: &mut JobOut) {
        for ((kind, _), data) in o.outputs.iter().zip(std::mem::take(&mut o.images)) {
            // CMake's `NN-real`: the cubin alone (the PTX was its intermediate).
            if *kind == ImageKind::Ptx && o.arch.is_real() {
                continue;
            }
            self.per_arch
                .entry(o.arch.clone())
                .or_default()
                .push(Piece { kind: *kind, data });
        }
    }
}

/// The progress count: the jobs that run (compiles not cached, and the links of their
/// architectures).
struct Counter<'a> {
    settings: &'a JobSettings,
    done: usize,
    total: usize,
    /// The architectures whose device link is counted.
    linked: BTreeSet<Arch>,
}

impl<'a> Counter<'a> {
    fn new(settings: &'a JobSettings) -> Counter<'a> {
        Counter {
            settings,
            done: 0,
            total: 0,
            linked: BTreeSet::new(),
        }
    }

    fn report(&mut self, arch: &Arch, step: ProgressStep, seconds: Option<f64>) {
        self.done += 1;
        if let Some(hook) = &self.settings.progress {
            hook.call(&Progress {
                done: self.done,
                total: self.total,
                arch: arch.to_string(),
                step,
                seconds,
            });
        }
    }
}

/// Tells Cargo of the headers the compiles read (`rerun-if-changed`), and of the directories
/// where a new header would change what they read (the directory of each absent probe,
/// [`crate::builder::cache::lookup::Lookups::probes`]: Cargo looks at a directory's files, so a header
/// created there reruns the build script). The cache records track every header and probe;
/// Cargo is told only of those outside the system include directories (hundreds of lines
/// otherwise), so an edit of a system header is caught by the next build that runs, not by
/// Cargo; nor of a directory that holds the output directory (Cargo would see every build's
/// own files as changes). The architectures of a source read the same headers: each is
/// looked at once.
fn tell_headers(plan: &Plan, tc: &Toolchain, outs: &[JobOut], env: &Env<'_>) -> Result<(), Error> {
    let system = tc.system_include_dirs();
    let outside = |p: &Path| !system.iter().any(|d| p.starts_with(d));
    let mut told: HashSet<&Path> = HashSet::default();
    for dep in outs.iter().flat_map(|o| o.deps.iter().skip(1)) {
        if told.insert(dep) && outside(&fs::lexical(&plan.cwd.join(dep))) {
            env.directives().push_path("rerun-if-changed", dep)?;
        }
    }
    let mut dirs: HashSet<PathBuf> = HashSet::default();
    for probe in outs.iter().flat_map(|o| &o.probes) {
        let Some(dir) = probe.parent().map(fs::lexical) else {
            continue;
        };
        if !dirs.contains(&dir)
            && outside(&dir)
            && !plan.cache_dir.starts_with(&dir)
            && dir.is_dir()
            && !probe.exists()
        {
            env.directives().push_path("rerun-if-changed", &dir)?;
            dirs.insert(dir);
        }
    }
    Ok(())
}

/// What `cmd` printed on standard error, as the build keeps it: names made absolute against
/// its directory, then cleaned ([`diag::clean`]).
fn printed_lines(stderr: &[u8], cmd: &Command, depfile: Option<&Path>) -> Vec<String> {
    let mut printed = String::from_utf8_lossy(stderr).into_owned();
    if let Some(dir) = &cmd.dir {
        printed = diag::absolute_names(&printed, dir);
    }
    diag::clean(&printed, depfile)
}

/// The results of the compile jobs in job order: `slots` holds those taken from the cache
/// and, for the `n` others, the job; `done` what ran.
fn in_job_order(
    slots: Vec<Result<JobOut, &CompileJob>>,
    done: Vec<Done>,
    n: usize,
) -> Result<Vec<JobOut>, Error> {
    let mut ran: Vec<Option<JobOut>> = (0..n).map(|_| None).collect();
    for d in done {
        if let Done::Compile(k, o) = d {
            ran[k] = Some(o);
        }
    }
    let mut ran = ran.into_iter();
    slots
        .into_iter()
        .map(|s| s.ok().or_else(|| ran.next().flatten()))
        .collect::<Option<_>>()
        .ok_or_else(|| Error::Config("a job did not run".into()))
}

/// What becomes of a precompiled preamble in this build ([`Runner::pch_states`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PchState {
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
    /// background ([`Runner::start_background`]), for the next build.
    Background,
}

impl PchState {
    /// Whether the compiles of this build use it (once made).
    fn used(self) -> bool {
        matches!(self, PchState::Cached | PchState::Make | PchState::Adopt)
    }

    /// Whether a job of this build makes (or adopts) it.
    fn made(self) -> bool {
        matches!(self, PchState::Make | PchState::Adopt)
    }
}

/// One job of the compile stage.
#[derive(Clone, Copy, Debug)]
enum Work {
    /// Making a precompiled preamble (an index into the plan's PCH jobs).
    Pch(usize),
    /// A compile (an index into the compiles to run).
    Compile(usize),
}

/// A finished [`Work`].
enum Done {
    Pch,
    Compile(usize, JobOut),
}

/// The directory where the PCH of `p` is made in the background
/// ([`Runner::start_background`]): beside its record, `.bg`.
fn background_dir(p: &PchJob) -> PathBuf {
    p.record.with_extension("bg")
}

/// Where a background PCH's clang writes its standard error, in [`background_dir`].
const BACKGROUND_STDERR: &str = "stderr";

/// The record of what a background PCH's clang is to read, in [`background_dir`].
const BACKGROUND_MANIFEST: &str = "manifest";

/// The process group of a background PCH's clang, in [`background_dir`].
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

/// The paths of `p`'s outputs (the PCH, its depfile) in `dir`, under their own file names.
fn in_dir<'p>(p: &'p PchJob, dir: &'p Path) -> impl Fn(&Path) -> Option<PathBuf> + 'p {
    move |q: &Path| {
        (q == p.pch || q == p.depfile).then(|| dir.join(q.file_name().unwrap_or_default()))
    }
}

/// The file where a compile job's last run time is kept (`<base>.ms`, milliseconds): named
/// after the job's key, which the source's content does not enter, so it outlives an edit.
fn time_file(job: &CompileJob) -> PathBuf {
    job.base.with_extension("ms")
}

/// How long `job` took when it last ran, if it did.
fn recorded_ms(job: &CompileJob) -> Option<u64> {
    std::fs::read_to_string(time_file(job))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The order the jobs start in, and what each waits for (an index into that order): the
/// precompiled preambles to make first, then the compiles, longest first: by the time each
/// took when it last ran ([`recorded_ms`]; one never timed counts as the longest), then the
/// larger source first; those that use a PCH, which parse less, after those that do not.
fn schedule(states: &[PchState], to_run: &[&CompileJob]) -> (Vec<Work>, Vec<Option<usize>>) {
    let mut work = Vec::new();
    let mut at = vec![None; states.len()];
    for (i, s) in states.iter().enumerate() {
        if s.made() {
            at[i] = Some(work.len());
            work.push(Work::Pch(i));
        }
    }
    let mut after = vec![None; work.len()];
    let sizes: Vec<u64> = to_run
        .iter()
        .map(|j| std::fs::metadata(&j.source).map_or(0, |m| m.len()))
        .collect();
    // A job never timed is taken to be as long as the longest timed one.
    let timed: Vec<Option<u64>> = to_run.iter().map(|j| recorded_ms(j)).collect();
    let longest = timed.iter().flatten().max().copied().unwrap_or(0);
    let with_pch = |j: &CompileJob| j.pch.is_some_and(|i| states[i].used());
    let mut order: Vec<usize> = (0..to_run.len()).collect();
    order.sort_by_key(|&k| {
        let ms = timed[k].unwrap_or(longest);
        (with_pch(to_run[k]), Reverse(ms), Reverse(sizes[k]))
    });
    for k in order {
        work.push(Work::Compile(k));
        after.push(to_run[k].pch.and_then(|i| at[i]));
    }
    (work, after)
}

/// What a job's steps printed, the content of each output, and whether the compile used a
/// precompiled preamble.
type StepsOut = (Vec<String>, Vec<Vec<u8>>, bool);

/// What the runs share.
struct Runner<'a> {
    processes: &'a Processes,
    tc: &'a Toolchain,
    lang: Language,
    cache_dir: &'a Path,
    /// The compile timeout, for every process a job runs.
    timeout: Option<Duration>,
    hashes: ContentHashes,
    /// The environment and include search the compiles depend on.
    lookups: Lookups,
    /// Set when a compile left no depfile.
    no_depfile: AtomicBool,
    /// Warnings for the build (damaged cached objects), in the order they came.
    warnings: Mutex<Vec<String>>,
    /// Precompiled preambles made.
    pch_made: AtomicUsize,
    /// Precompiled preambles started in the background.
    pch_background: AtomicUsize,
}

/// A finished device link.
struct Linked {
    arch: Arch,
    /// The linked code object, as checked (read once: another build may replace the file
    /// meanwhile, as with a compile job's images).
    data: Vec<u8>,
    ran: bool,
    seconds: f64,
    stderr: Vec<String>,
}

/// A finished compile job.
struct JobOut {
    source: PathBuf,
    arch: Arch,
    rdc: bool,
    outputs: Vec<(ImageKind, PathBuf)>,
    /// The content of each output, as checked (read once: another build may replace the
    /// files meanwhile).
    images: Vec<Vec<u8>>,
    deps: Vec<PathBuf>,
    ran: bool,
    /// Seconds the compile took (0 for a cache hit).
    seconds: f64,
    /// What the compiler printed (cleaned; replayed from the record on a cache hit).
    stderr: Vec<String>,
    /// Whether the compile used a precompiled preamble.
    used_pch: bool,
    /// The paths whose existence decided what the compile read (from its record).
    probes: Vec<PathBuf>,
}

impl JobOut {
    /// The result of `job`: compiled in `seconds` (`Some`), or taken from the cache (`None`).
    fn of(
        job: &CompileJob,
        images: Vec<Vec<u8>>,
        deps: Vec<PathBuf>,
        stderr: Vec<String>,
        seconds: Option<f64>,
    ) -> JobOut {
        JobOut {
            source: job.source.clone(),
            arch: job.arch.clone(),
            rdc: job.rdc,
            outputs: job.outputs.clone(),
            images,
            deps,
            ran: seconds.is_some(),
            seconds: seconds.unwrap_or(0.0),
            stderr,
            used_pch: false,
            probes: Vec::new(),
        }
    }
}

/// A failed step's command as the user can run it again: with the cache's file names instead
/// of the job's private directory (removed when the job ends).
fn public_paths(mut e: Error, private: &Path, base: &Path) -> Error {
    if let (Error::CompileFailed { command, .. }, Some(dir)) = (&mut e, base.parent()) {
        *command = command.replace(&private.display().to_string(), &dir.display().to_string());
    }
    e
}

/// Whether `data` is the device code `kind` says (for an NVIDIA or AMDGPU `arch`): an AMDGPU
/// ELF code object, a PTX text, or a cubin (an NVIDIA ELF); else what is expected and what
/// was found. The same check for every container and embedding mode, before packing.
pub(crate) fn check_device_code(
    kind: ImageKind,
    nvidia: bool,
    data: &[u8],
) -> Result<(), (String, String)> {
    use object::LittleEndian as LE;
    use object::elf::{ELFCLASS64, ELFDATA2LSB, ELFMAG, EM_AMDGPU, EM_CUDA, FileHeader64};
    // The machine of a 64-bit little-endian ELF file.
    let elf_machine = |data: &[u8]| -> Option<u16> {
        let (h, _) = object::pod::from_bytes::<FileHeader64<LE>>(data).ok()?;
        let id = &h.e_ident;
        (id.magic == ELFMAG && id.class == ELFCLASS64 && id.data == ELFDATA2LSB)
            .then(|| h.e_machine.get(LE))
    };
    let head = || {
        let n = data.len().min(8);
        if n == 0 {
            return "an empty file".to_string();
        }
        let hex: Vec<String> = data[..n].iter().map(|b| format!("{b:02x}")).collect();
        format!("{} bytes starting with {}", data.len(), hex.join(" "))
    };
    let (expected, ok) = match kind {
        ImageKind::Ptx => {
            let text = std::str::from_utf8(data).ok();
            let ok = text.is_some_and(|t| {
                !t.contains('\0')
                    && t.lines().any(|l| l.trim_start().starts_with(".version"))
                    && t.lines().any(|l| l.trim_start().starts_with(".target"))
            });
            ("a PTX text (.version, .target)", ok)
        }
        ImageKind::Cubin => (
            "a cubin (a 64-bit NVIDIA ELF, EM_CUDA)",
            elf_machine(data) == Some(EM_CUDA),
        ),
        _ if nvidia => (
            "a cubin (a 64-bit NVIDIA ELF, EM_CUDA)",
            elf_machine(data) == Some(EM_CUDA),
        ),
        _ => (
            "an AMDGPU ELF code object (64-bit ELF, EM_AMDGPU)",
            elf_machine(data) == Some(EM_AMDGPU),
        ),
    };
    if ok {
        return Ok(());
    }
    let found = match elf_machine(data) {
        Some(m) => format!("an ELF file for machine {m}"),
        None => head(),
    };
    Err((expected.to_string(), found))
}

/// Why `data`, a cached output of kind `kind` that passed [`check_device_code`] when it was
/// written, is not device code for `arch`: an AMDGPU code object whose ELF header names
/// another processor or other `xnack`/`sramecc` settings (as the HIP runtime reads them).
/// `None` when it is, or when the header names a processor this crate does not know.
fn target_mismatch(kind: ImageKind, arch: &Arch, data: &[u8]) -> Option<String> {
    use offload_formats::id::target_id::TargetId;
    if kind != ImageKind::Object || arch.is_nvidia() {
        return None;
    }
    let Some(found) = offload_formats::compat::code_object_target_id(data) else {
        return check_device_code(kind, false, data)
            .err()
            .map(|(expected, found)| format!("{found}, not {expected}"));
    };
    let (Ok(want), Ok(got)) = (TargetId::parse(arch.as_str()), TargetId::parse(&found)) else {
        return None;
    };
    let same = want.processor() == got.processor()
        && ["xnack", "sramecc"]
            .iter()
            .all(|f| want.feature(f) == got.feature(f));
    (!same).then(|| format!("a code object for {found}, not {arch}"))
}

impl Runner<'_> {
    /// The compile jobs: those whose cache record is fresh are done already; the others run
    /// in parallel, after the precompiled preambles they use ([`Runner::pch_states`]), longest
    /// first. Results in job order.
    fn compiles(
        &self,
        settings: &JobSettings,
        counter: &mut Counter<'_>,
    ) -> Result<Vec<JobOut>, Error> {
        let slots: Vec<Result<JobOut, &CompileJob>> = settings
            .compile_jobs
            .iter()
            .map(|job| self.cached(job).ok_or(job))
            .collect();
        let to_run: Vec<&CompileJob> = slots
            .iter()
            .filter_map(|s| s.as_ref().err().copied())
            .collect();
        counter.linked = to_run
            .iter()
            .filter(|j| j.rdc)
            .map(|j| j.arch.clone())
            .collect();
        counter.total = to_run.len() + counter.linked.len();
        let states = self.pch_states(settings, &to_run);
        let usable: Vec<AtomicBool> = states
            .iter()
            .map(|s| AtomicBool::new(*s == PchState::Cached))
            .collect();
        let (work, after) = schedule(&states, &to_run);
        let job_list: Vec<pool::Job<'_, Done>> = work
            .iter()
            .map(|w| match *w {
                Work::Pch(i) => {
                    let (p, usable) = (&settings.pch_jobs[i], &usable[i]);
                    let adopt = states[i] == PchState::Adopt;
                    Box::new(move || {
                        let adopted = if adopt { self.adopt_pch(p)? } else { None };
                        let ok = match adopted {
                            Some(ok) => ok,
                            None => self.run_pch(p)?,
                        };
                        usable.store(ok, Ordering::SeqCst);
                        Ok(Done::Pch)
                    }) as pool::Job<'_, Done>
                }
                Work::Compile(k) => {
                    let job = to_run[k];
                    let pch = job
                        .pch
                        .filter(|&i| states[i].used())
                        .map(|i| (&settings.pch_jobs[i], &usable[i]));
                    Box::new(move || {
                        let pch = pch
                            .filter(|(_, u)| u.load(Ordering::SeqCst))
                            .map(|(p, _)| p);
                        Ok(Done::Compile(k, self.run_job(job, pch)?))
                    }) as pool::Job<'_, Done>
                }
            })
            .collect();
        let client = settings.client.as_ref();
        let done = pool::run_after(job_list, &after, client, settings.max_jobs, &mut |d| {
            if let Done::Compile(_, o) = d {
                let step = ProgressStep::Compile(o.source.clone());
                counter.report(&o.arch, step, Some(o.seconds));
            }
        })?;
        self.start_backgrounds(settings, &states, &to_run, &done);
        in_job_order(slots, done, to_run.len())
    }

    /// Starts the PCHs this build left to the background ([`Runner::start_background`]),
    /// each with what a compile of this build read through its preamble (`done`): what the
    /// background clang will read, as it is now.
    fn start_backgrounds(
        &self,
        settings: &JobSettings,
        states: &[PchState],
        to_run: &[&CompileJob],
        done: &[Done],
    ) {
        for (i, p) in settings.pch_jobs.iter().enumerate() {
            if states[i] != PchState::Background {
                continue;
            }
            let read = done.iter().find_map(|d| match d {
                Done::Compile(k, o) if to_run[*k].pch == Some(i) => Some(&o.deps),
                _ => None,
            });
            if let Some(read) = read {
                if self.start_background(p, read).unwrap_or(false) {
                    self.pch_background.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// What becomes of each precompiled preamble, given the compiles that run. One pays
    /// where it is used again: a PCH fresh in the cache is used; one that an earlier build
    /// started in the background is adopted; one that two or more of these compiles share
    /// is made; one that a single compile would use is made when an earlier build compiled
    /// the same preamble (its `.seen` mark: the edit after a build), else only marked, so
    /// that a cold build of one source is not slower, and made after this build in the
    /// background ([`JobSettings::pch_background`]). One whose background clang still runs
    /// is taken over ([`Runner::take_over_running`]): made when two or more compiles use
    /// it, else started again after this build, whose one compile goes without. One that
    /// clang refused (its `.refused` record, fresh) is not tried again.
    fn pch_states(&self, settings: &JobSettings, to_run: &[&CompileJob]) -> Vec<PchState> {
        let pchs = &settings.pch_jobs;
        let mut users = vec![0usize; pchs.len()];
        for i in to_run.iter().filter_map(|j| j.pch) {
            users[i] += 1;
        }
        let states = pchs.iter().zip(users).map(|(p, n)| {
            if n == 0 {
                return PchState::Off;
            }
            if self.pch_cached(p) {
                return PchState::Cached;
            }
            let refused = Record::load(&p.record.with_extension("refused"));
            if refused.is_some_and(|r| r.is_fresh(&self.hashes)) {
                return PchState::Off;
            }
            let mut taken_over = false;
            if background_dir(p).is_dir() {
                if !self.take_over_running(p) {
                    return PchState::Adopt;
                }
                taken_over = true;
            }
            let seen = p.record.with_extension("seen");
            // A background PCH just taken over for a single compile: making it now would
            // cost more than that compile saves (as on a cold build); it starts again after.
            let single_after_take_over = taken_over && n < 2 && settings.pch_background;
            if (n >= 2 || seen.is_file()) && !single_after_take_over {
                return PchState::Make;
            }
            let _ = fs::write_atomic(&seen, b"");
            if settings.pch_background && cfg!(unix) {
                PchState::Background
            } else {
                PchState::Off
            }
        });
        states.collect()
    }

    /// Whether the PCH of `p` is in the cache, made from what its headers hold now.
    fn pch_cached(&self, p: &PchJob) -> bool {
        let Some(rec) = Record::load(&p.record) else {
            return false;
        };
        rec.is_fresh(&self.hashes)
            && self.context_holds(&rec, &p.command, &p.preamble_file)
            && rec.outputs.first().map(|o| o.2) == self.hashes.file(&p.pch)
    }

    /// Makes the PCH of `p` (in a private directory, as a compile): whether it can be used.
    /// It can when clang succeeded and printed nothing; otherwise what clang said is kept in
    /// the `.refused` record beside it (the one place a refusal is told), and the compiles
    /// run without it.
    fn run_pch(&self, p: &PchJob) -> Result<bool, Error> {
        if self.pch_cached(p) {
            return Ok(true);
        }
        // One build makes it at a time (builds sharing the cache: make -j's invocations);
        // the others wait for that one, a foreground compiler, and use what it made.
        let _making = self.making_lock(p)?;
        if self.pch_cached(p) {
            return Ok(true);
        }
        let started = SystemTime::now();
        self.write_preamble(p)?;
        let tmp = cache::JobDir::new(self.cache_dir)?;
        let _known = process::PrivateDir::new(self.processes, tmp.path());
        if self.processes.is_cancelled() {
            return Err(Error::Stopped); // the directory goes with `tmp`
        }
        let cmd = p.command.map_paths(in_dir(p, tmp.path()));
        let depfile = tmp.path().join(p.depfile.file_name().unwrap_or_default());
        let result = self.exec(&cmd, &p.arch, Some(&p.preamble_file), Some(&depfile));
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
        Ok(self.keep_pch(p, tmp.path(), started, why)?.unwrap_or(false))
    }

    /// The lock of making the PCH of `p` (`<record>.making`), held once taken (the wait is
    /// cancellable); `None` where it cannot be taken (then this build makes it too).
    fn making_lock(&self, p: &PchJob) -> Result<Option<std::fs::File>, Error> {
        #[cfg(unix)]
        {
            use rustix::fs::{FlockOperation, flock};
            let path = p.record.with_extension("making");
            let Ok(file) = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
            else {
                return Ok(None);
            };
            while flock(&file, FlockOperation::NonBlockingLockExclusive).is_err() {
                if self.processes.is_cancelled() {
                    return Err(Error::Stopped);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            // The hashes of what the other build wrote are not those this one remembers.
            self.hashes.forget(&p.pch);
            Ok(Some(file))
        }
        #[cfg(not(unix))]
        {
            let _ = p;
            Ok(None)
        }
    }

    /// The record of the PCH of `p` made from `deps` (the preamble file first), which hold
    /// `hashed`: their probes and the context, no output yet; `None` when a probe cannot be
    /// followed ([`Lookups::probes`]).
    fn pch_record(
        &self,
        p: &PchJob,
        deps: &[PathBuf],
        hashed: Vec<(PathBuf, u128)>,
    ) -> Option<Record> {
        let probes = self.lookups.probes(&p.command, &p.preamble_file, deps)?;
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
    fn write_preamble(&self, p: &PchJob) -> Result<(), Error> {
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
    fn keep_pch(
        &self,
        p: &PchJob,
        dir: &Path,
        started: SystemTime,
        why: Option<Vec<String>>,
    ) -> Result<Option<bool>, Error> {
        let depfile = dir.join(p.depfile.file_name().unwrap_or_default());
        if !depfile.is_file() {
            let deps_only = p.deps_only.map_paths(in_dir(p, dir));
            let _ = self.exec(&deps_only, &p.arch, None, None);
        }
        let mut deps = self.read_deps(&p.preamble_file, &depfile, p.command.dir.as_deref());
        // The preamble file was just written (its content is known; the depfile may name it
        // again, absolute); the headers must not have changed since the PCH began.
        let preamble_name = p.preamble_file.file_name();
        deps.retain(|d| d == &p.preamble_file || d.file_name() != preamble_name);
        let Some(headers) = self.hashed(&deps[1..], started) else {
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
        let data = std::fs::read(&written).map_err(|e| Error::io("reading", &written, e))?;
        rec.outputs
            .push((p.pch.clone(), data.len() as u64, xxh3_128(&data)));
        self.hashes.forget(&p.pch);
        std::fs::rename(&written, &p.pch).map_err(|e| Error::io("renaming", &written, e))?;
        rec.store(&p.record)?;
        self.pch_made.fetch_add(1, Ordering::Relaxed);
        Ok(Some(true))
    }

    /// Starts making the PCH of `p` after this build, in the background: clang detached
    /// ([`process::spawn_detached`]), writing into `p`'s background directory
    /// ([`background_dir`]), whose `lock` it holds while it runs (as its standard input),
    /// and which records when it started, its process group (`pid`) and what it is to read
    /// (`manifest`: a record of the headers a compile of this build read through the
    /// preamble, `read` with the source first, their content now, and the context). The next
    /// build adopts it ([`Runner::adopt_pch`]). Whether it started (not when one runs already,
    /// nor when a header cannot be read).
    #[cfg(unix)]
    fn start_background(&self, p: &PchJob, read: &[PathBuf]) -> Result<bool, Error> {
        if self.processes.is_cancelled() {
            return Err(Error::Stopped);
        }
        self.write_preamble(p)?;
        let dir = background_dir(p);
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
        let cmd = p.command.map_paths(in_dir(p, &dir));
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
    /// ([`Runner::start_background`]). One whose clang still runs is taken over: this build
    /// never waits on a process of the lowest priority, which its own compiles would starve;
    /// it kills that clang's process group and makes the PCH itself. One that ended is kept
    /// as [`Runner::run_pch`] keeps one it made, after the check a cached PCH passes: every
    /// header it read is one its manifest lists, with the content it had when the clang
    /// started (content decides: a link pointed elsewhere or a directory renamed over another
    /// is a change), and the context (variables, include search, probes) is what it was.
    /// `None` when there is nothing to adopt: taken over, ended without a PCH, or anything it
    /// read or depended on changed. The directory goes in every case.
    #[cfg(unix)]
    fn adopt_pch(&self, p: &PchJob) -> Result<Option<bool>, Error> {
        let dir = background_dir(p);
        let kept = self.adoptable(p, &dir);
        let _ = std::fs::remove_dir_all(&dir);
        kept
    }

    #[cfg(not(unix))]
    fn adopt_pch(&self, _p: &PchJob) -> Result<Option<bool>, Error> {
        Ok(None)
    }

    /// Whether the background clang of `p` still ran: then it is killed with its process
    /// group and its directory removed ([`take_over`]), for this build never waits on a
    /// process of the lowest priority that its own compiles would starve.
    #[cfg(unix)]
    fn take_over_running(&self, p: &PchJob) -> bool {
        let dir = background_dir(p);
        let Some(Err(lock)) = cache::try_lock(&dir) else {
            return false;
        };
        let _ = take_over(&dir, &lock, self.processes);
        let _ = std::fs::remove_dir_all(&dir);
        true
    }

    #[cfg(not(unix))]
    fn take_over_running(&self, _p: &PchJob) -> bool {
        false
    }

    /// [`Runner::adopt_pch`] of the background directory `dir`.
    #[cfg(unix)]
    fn adoptable(&self, p: &PchJob, dir: &Path) -> Result<Option<bool>, Error> {
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
        let why = Some(printed_lines(&printed, &p.command, Some(&depfile)));
        let why = why.filter(|w| !w.is_empty());
        let made = dir.join(p.pch.file_name().unwrap_or_default()).is_file();
        if !(made || why.is_some()) || !self.as_manifest_says(p, dir, &manifest) {
            return Ok(None);
        }
        self.keep_pch(p, dir, started, why)
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
            && self.context_holds(manifest, &p.command, &p.preamble_file)
    }

    /// Whether the context `rec` was made in (variables, include search, probes) holds for
    /// `cmd` compiling `source` now, over the inputs `rec` lists.
    fn context_holds(&self, rec: &Record, cmd: &Command, source: &Path) -> bool {
        let deps: Vec<PathBuf> = rec.deps.iter().map(|(d, _)| d.clone()).collect();
        rec.context == self.lookups.context(cmd, source, &deps, &rec.probes)
    }

    /// The device links, in parallel.
    fn links(
        &self,
        settings: &JobSettings,
        counter: &mut Counter<'_>,
    ) -> Result<Vec<Linked>, Error> {
        let link_jobs: Vec<pool::Job<'_, Linked>> = settings
            .links
            .iter()
            .map(|l| Box::new(move || self.link(l)) as pool::Job<'_, Linked>)
            .collect();
        let client = settings.client.as_ref();
        pool::run(link_jobs, client, settings.max_jobs, &mut |l: &Linked| {
            if counter.linked.contains(&l.arch) {
                counter.report(&l.arch, ProgressStep::Link, l.ran.then_some(l.seconds));
            }
        })
    }

    /// Runs one command (under the compile timeout); returns what it printed on standard
    /// error (see [`diag::clean`]).
    fn exec(
        &self,
        cmd: &Command,
        arch: &Arch,
        source: Option<&Path>,
        depfile: Option<&Path>,
    ) -> Result<Vec<String>, Error> {
        let out = match process::run(self.processes, &mut cmd.to_command(), self.timeout) {
            Ok(o) => o,
            Err(RunError::Spawn(error)) => {
                return Err(Error::Spawn {
                    command: cmd.line(),
                    error,
                });
            }
            Err(RunError::TimedOut) => {
                return Err(Error::CompileTimedOut {
                    arch: arch.to_string(),
                    source: source.map(Path::to_path_buf),
                    program: command::quoted_program(cmd),
                    timeout: self.timeout.unwrap_or_default(),
                });
            }
            Err(RunError::Stopped) => return Err(Error::Stopped),
        };
        let stderr = printed_lines(&out.stderr, cmd, depfile);
        if out.status.success() {
            return Ok(stderr);
        }
        let mut text = match self.crash_summary(&out.stderr, arch) {
            Some(summary) => summary,
            None => stderr.join("\n"),
        };
        if !text.is_empty() {
            text.push('\n');
        }
        Err(Error::CompileFailed {
            arch: arch.to_string(),
            source: source.map(Path::to_path_buf),
            command: cmd.line(),
            status: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: text,
            hint: None,
        })
    }

    /// A compiler crash (a stack dump) in two lines: clang's error, and the file in the cache
    /// directory that keeps everything it printed. `None` when it did not crash.
    fn crash_summary(&self, stderr: &[u8], arch: &Arch) -> Option<String> {
        let text = String::from_utf8_lossy(stderr);
        let at = text
            .find("PLEASE submit a bug report")
            .or_else(|| text.find("Stack dump:"))?;
        let summary = text[..at]
            .lines()
            .map(str::trim)
            .find(|l| l.contains("error"))
            .or_else(|| text[..at].lines().map(str::trim).find(|l| !l.is_empty()))
            .unwrap_or("the compiler crashed")
            .to_string();
        let key = KeyBuilder::new(Domain::CrashLog).bytes(stderr).finish64();
        let log = self
            .cache_dir
            .join(format!("crash-{}-{key:016x}.log", arch.file_tag()));
        let place = match fs::write_atomic(&log, stderr) {
            Ok(()) => format!(
                "its full output (with the stack dump) is in {}",
                log.display()
            ),
            Err(_) => "its full output could not be kept".to_string(),
        };
        Some(format!("{summary}\n(the compiler crashed; {place})"))
    }

    /// Runs a step that may start with a launcher; a launcher that cannot be run, or that
    /// fails where the same compile without it succeeds, is one line
    /// ([`Error::LauncherFailed`]).
    fn exec_launched(
        &self,
        cmd: &Command,
        arch: &Arch,
        source: &Path,
        depfile: &Path,
    ) -> Result<Vec<String>, Error> {
        let result = self.exec(cmd, arch, Some(source), Some(depfile));
        if cmd.launcher().is_empty() {
            return result;
        }
        let launcher = command::command_line(cmd.launcher());
        match result {
            Err(Error::Spawn { error, .. }) => Err(Error::LauncherFailed {
                launcher,
                reason: format!("cannot be run: {error}"),
            }),
            Err(e @ Error::CompileFailed { .. }) => {
                // Without the launcher: when that compile succeeds, the launcher failed.
                let bare = cmd.without_launcher();
                if self.exec(&bare, arch, Some(source), Some(depfile)).is_err() {
                    return Err(e);
                }
                let Error::CompileFailed { status, stderr, .. } = &e else {
                    return Err(e);
                };
                let said = stderr
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .map(|l| format!(": {l}"))
                    .unwrap_or_default();
                let status = match status {
                    Some(c) => format!("exit status {c}"),
                    None => "killed by a signal".to_string(),
                };
                Err(Error::LauncherFailed {
                    launcher,
                    reason: format!(
                        "failed ({status}{said}) compiling {} for {arch}, which succeeds without it",
                        source.display()
                    ),
                })
            }
            Ok(printed) if cmd.outputs.iter().all(|o| o.is_file()) => Ok(printed),
            Ok(_) => {
                // A launcher that says it succeeded but wrote no output (sccache 0.16 with
                // nvcc's `-ptx`): the compile runs again without it, once per job.
                let mut warnings = self.warnings.lock().unwrap_or_else(|e| e.into_inner());
                let w = format!(
                    "offload-build: the compiler launcher `{launcher}` exited successfully \
                     without writing the output of {} (it does not support this compile): \
                     compiled without it",
                    cmd.program.display()
                );
                if !warnings.contains(&w) {
                    warnings.push(w);
                }
                drop(warnings);
                self.exec(&cmd.without_launcher(), arch, Some(source), Some(depfile))
            }
            other => other,
        }
    }

    /// The job's result from its cache record, when the record is fresh (inputs, context)
    /// and every output is what the job wrote (size, content hash) and device code for the
    /// job's architecture; the warnings the compile printed are replayed from the record. A
    /// damaged output is a miss, with a warning.
    fn cached(&self, job: &CompileJob) -> Option<JobOut> {
        let rec = Record::load(&job.record)?;
        if !rec.is_fresh(&self.hashes) || !self.context_holds(&rec, &job.steps[0], &job.source) {
            return None;
        }
        let deps: Vec<PathBuf> = rec.deps.iter().map(|(p, _)| p.clone()).collect();
        let mut images = Vec::new();
        for (i, (kind, out)) in job.outputs.iter().enumerate() {
            let data = std::fs::read(out).ok()?;
            let damage = rec
                .output_mismatch(i, &data)
                .or_else(|| target_mismatch(*kind, &job.arch, &data));
            if let Some(why) = damage {
                self.warn(out, &why);
                return None;
            }
            images.push(data);
        }
        let mut out = JobOut::of(job, images, deps, rec.stderr, None);
        out.probes = rec.probes;
        Some(out)
    }

    /// Passes on the warnings gathered so far.
    fn flush_warnings(&self, env: &Env<'_>) {
        let mut warnings = self.warnings.lock().unwrap_or_else(|e| e.into_inner());
        for w in warnings.drain(..) {
            env.directives().warn(&w);
        }
    }

    /// A warning for a damaged cached file, compiled again.
    fn warn(&self, path: &Path, why: &str) {
        self.warnings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(format!(
                "offload-build: the cached {} is damaged ({why}): compiled again",
                path.display()
            ));
    }

    /// The record of a job that started at `started`, wrote `images` and read `deps`; `None`
    /// when an input changed since the job started (then what the compiler read is not
    /// known: the result is used for this build, and the next one compiles again).
    fn record_of(
        &self,
        job: &CompileJob,
        deps: &[PathBuf],
        images: &[Vec<u8>],
        started: SystemTime,
        stderr: &[String],
    ) -> Option<Record> {
        let probes = self.lookups.probes(&job.steps[0], &job.source, deps)?;
        let mut rec = Record {
            context: self
                .lookups
                .context(&job.steps[0], &job.source, deps, &probes),
            outputs: Vec::new(),
            deps: Vec::new(),
            probes,
            stderr: stderr.to_vec(),
        };
        for ((_, out), data) in job.outputs.iter().zip(images) {
            rec.outputs
                .push((out.clone(), data.len() as u64, xxh3_128(data)));
        }
        rec.deps = self.hashed(deps, started)?;
        Some(rec)
    }

    /// Each of `deps` that exists with its content hash as a job that started at `started`
    /// read it; `None` when one changed since.
    fn hashed(&self, deps: &[PathBuf], started: SystemTime) -> Option<Vec<(PathBuf, u128)>> {
        let mut out = Vec::new();
        for dep in deps {
            if let Some(h) = self.hashes.as_read_since(dep, started).ok()? {
                out.push((dep.clone(), h));
            }
        }
        Some(out)
    }

    /// Runs a compile job: its steps in a private directory, each output checked as soon as
    /// it is written, then moved into place, and the cache record written.
    fn run_job(&self, job: &CompileJob, pch: Option<&PchJob>) -> Result<JobOut, Error> {
        let start = Instant::now();
        let started = SystemTime::now();
        let _ = std::fs::remove_file(&job.record);
        // Every file of the job is written in a directory of its own and renamed into place
        // once all steps succeeded: compiles that share the cache (two builds of the same
        // sources at once) never read each other's half-written files.
        let tmp = cache::JobDir::new(self.cache_dir)?;
        // Removed on cancellation too (see `CancelToken`).
        let _known = process::PrivateDir::new(self.processes, tmp.path());
        if self.processes.is_cancelled() {
            return Err(Error::Stopped); // the directory goes with `tmp`
        }
        let private = Private::new(job, tmp.path());
        let depfile = private.path(&job.depfile);
        let (stderr, images, used_pch) = self.run_steps(job, &private, &depfile, pch)?;
        // A compiler that ignores -MD for device-only compiles (clang 22's new offload driver)
        // leaves no depfile: then the host-side preprocessing writes it.
        if !depfile.is_file() {
            let deps_only = job.deps_only.map_paths(|p| private.map(p));
            let _ = self.exec(&deps_only, &job.arch, Some(&job.source), None);
        }
        for (_, out) in &job.outputs {
            let written = private.path(out);
            self.hashes.forget(out);
            std::fs::rename(&written, out).map_err(|e| Error::io("renaming", &written, e))?;
        }
        let mut deps = self.read_deps(&job.source, &depfile, job.steps[0].dir.as_deref());
        // With a PCH: the headers it read, not the PCH and its preamble file (named after
        // their key); unknown headers leave the result unrecorded.
        let pch_deps = pch.filter(|_| used_pch).map(|p| {
            let ours = [p.pch.file_name(), p.preamble_file.file_name()];
            deps.retain(|d| !ours.contains(&d.file_name()));
            Record::load(&p.record).map(|r| r.deps)
        });
        if let Some(Some(pch_deps)) = &pch_deps {
            let mut seen: HashSet<PathBuf> = deps.iter().cloned().collect();
            for (d, _) in pch_deps.iter().skip(1) {
                if seen.insert(d.clone()) {
                    deps.push(d.clone());
                }
            }
        }
        let mut probes = Vec::new();
        if !matches!(pch_deps, Some(None)) {
            if let Some(rec) = self.record_of(job, &deps, &images, started, &stderr) {
                rec.store(&job.record)?;
                probes = rec.probes;
            }
        }
        let seconds = start.elapsed().as_secs_f64();
        let ms = format!("{}\n", (seconds * 1000.0) as u64);
        let _ = fs::write_atomic(&time_file(job), ms.as_bytes());
        let mut out = JobOut::of(job, images, deps, stderr, Some(seconds));
        out.used_pch = used_pch;
        out.probes = probes;
        Ok(out)
    }

    /// Runs the job's steps in its private directory; each output is checked to be the device
    /// code it should be as soon as a step wrote it (before `ptxas` reads the PTX).
    fn run_steps(
        &self,
        job: &CompileJob,
        private: &Private<'_>,
        depfile: &Path,
        pch: Option<&PchJob>,
    ) -> Result<StepsOut, Error> {
        let mut images = vec![Vec::new(); job.outputs.len()];
        let mut checked = vec![false; job.outputs.len()];
        let mut stderr = Vec::new();
        let mut used_pch = false;
        for (i, step) in job.steps.iter().enumerate() {
            let cmd = step.map_paths(|p| private.map(p));
            let printed = if i == 0 {
                let with_pch = pch.map(|p| pch::compile_with_pch(job, p));
                let with_pch = with_pch.map(|c| c.map_paths(|p| private.map(p)));
                let (printed, used) = self.first_step(job, &cmd, with_pch.as_ref(), depfile);
                used_pch = used;
                printed
            } else {
                self.exec(&cmd, &job.arch, Some(&job.source), Some(depfile))
            };
            stderr.extend(
                printed.map_err(|e| self.explain(public_paths(e, private.dir, &job.base)))?,
            );
            for (j, (kind, out)) in job.outputs.iter().enumerate() {
                let written = private.path(out);
                if checked[j] || !(written.is_file() || i + 1 == job.steps.len()) {
                    continue;
                }
                checked[j] = true;
                let data =
                    std::fs::read(&written).map_err(|e| Error::io("reading", &written, e))?;
                check_device_code(*kind, job.arch.is_nvidia(), &data).map_err(
                    |(expected, found)| Error::BadDeviceCode {
                        arch: job.arch.to_string(),
                        source: Some(job.source.clone()),
                        path: out.clone(),
                        expected,
                        found,
                    },
                )?;
                images[j] = data;
            }
        }
        Ok((stderr, images, used_pch))
    }

    /// The compile: with the precompiled preamble when there is one, and its result used
    /// only when it succeeded and printed nothing; otherwise (or without) the compile as
    /// planned, whose result and diagnostics are those of a build without PCH. Whether the
    /// PCH was used.
    fn first_step(
        &self,
        job: &CompileJob,
        cmd: &Command,
        with_pch: Option<&Command>,
        depfile: &Path,
    ) -> (Result<Vec<String>, Error>, bool) {
        if let Some(with_pch) = with_pch {
            match self.exec(with_pch, &job.arch, Some(&job.source), Some(depfile)) {
                Ok(printed) if printed.is_empty() => return (Ok(printed), true),
                Err(Error::Stopped) => return (Err(Error::Stopped), false),
                _ if self.processes.is_cancelled() => return (Err(Error::Stopped), false),
                _ => {}
            }
        }
        let printed = self.exec_launched(cmd, &job.arch, &job.source, depfile);
        (printed, false)
    }

    /// A job's inputs: its source, then every file its depfile names (a relative name is
    /// taken from `dir`, the directory the command ran in, else this process's).
    fn read_deps(&self, source: &Path, depfile: &Path, dir: Option<&Path>) -> Vec<PathBuf> {
        let text = std::fs::read(depfile).unwrap_or_else(|_| {
            self.no_depfile.store(true, Ordering::Relaxed);
            Vec::new()
        });
        let mut deps = vec![source.to_path_buf()];
        let mut seen: HashSet<PathBuf> = deps.iter().cloned().collect();
        for dep in cache::parse_depfile(&text) {
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
            let dep = cache::restore_backslashes(&dep).unwrap_or(dep);
            if seen.insert(dep.clone()) {
                deps.push(dep);
            }
        }
        deps
    }

    /// Adds what offload-build knows to a failed compile: a source that needs the HIP headers
    /// while no ROCm install is in use; a CUDA source that needs a toolkit's headers while none
    /// was found, or a toolkit newer than the compiler ([`crate::builder::toolchain::cuda::hint`]).
    fn explain(&self, mut e: Error) -> Error {
        if let Error::CompileFailed {
            stderr,
            hint,
            command,
            ..
        } = &mut e
        {
            if self.lang == Language::Hip
                && self.tc.rocm.is_none()
                && stderr.contains("hip/hip_runtime.h")
            {
                *hint = Some(self.tc.no_rocm_hint());
            }
            if self.lang == Language::Cuda {
                *hint = hint
                    .take()
                    .or_else(|| crate::builder::toolchain::cuda::hint(self.tc, command, stderr));
            }
        }
        e
    }

    /// The cached device link `co`, when it is a code object for `arch` (a damaged one is
    /// linked again, with a warning).
    fn cached_link(&self, co: &Path, arch: &Arch) -> Option<Vec<u8>> {
        let data = std::fs::read(co).ok()?;
        match target_mismatch(ImageKind::Object, arch, &data) {
            None => Some(data),
            Some(why) => {
                self.warn(co, &why);
                None
            }
        }
    }

    /// Runs a device link, or takes its cached object: the key covers the command and its
    /// inputs' content.
    fn link(&self, job: &LinkJob) -> Result<Linked, Error> {
        let start = Instant::now();
        let arch = job.arch.clone();
        for o in &job.command.inputs {
            self.hashes.forget(o);
            if self.hashes.file(o).is_none() {
                return Err(Error::io("reading", o, std::io::ErrorKind::NotFound.into()));
            }
        }
        let mut k = KeyBuilder::new(Domain::Link);
        k.u128(self.tc.identity);
        job.command.add_to_key(&mut k, |p| self.hashes.file(p));
        let co = self.cache_dir.join(format!(
            "linked-{}-{:016x}.co",
            arch.file_tag(),
            k.finish64()
        ));
        // What the link printed is kept beside it, to replay on a cache hit.
        let printed = co.with_extension("co.stderr");
        if let Some(data) = self.cached_link(&co, &arch) {
            let stderr = std::fs::read_to_string(&printed)
                .map(|t| t.lines().map(str::to_string).collect())
                .unwrap_or_default();
            return Ok(Linked {
                arch,
                data,
                ran: false,
                seconds: 0.0,
                stderr,
            });
        }
        // A name of its own: compiles that share the cache link the same object at once, and
        // the first rename must not take another's half-written file (removed if the link
        // fails).
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".linked-{}-", arch.file_tag()))
            .suffix(".co.tmp")
            .tempfile_in(self.cache_dir)
            .map_err(|e| Error::io("creating a temporary file in", self.cache_dir, e))?
            .into_temp_path();
        let placeholder = &job.command.outputs[0];
        let cmd = job
            .command
            .map_paths(|p| (p == placeholder).then(|| tmp.to_path_buf()));
        let stderr = self.exec(&cmd, &arch, None, None)?;
        let data = std::fs::read(&tmp).map_err(|e| Error::io("reading", &tmp, e))?;
        check_device_code(ImageKind::Object, false, &data).map_err(|(expected, found)| {
            Error::BadDeviceCode {
                arch: arch.to_string(),
                source: None,
                path: co.clone(),
                expected,
                found,
            }
        })?;
        if stderr.is_empty() {
            let _ = std::fs::remove_file(&printed);
        } else {
            fs::write_atomic(&printed, (stderr.join("\n") + "\n").as_bytes())?;
        }
        tmp.persist(&co)
            .map_err(|e| Error::io("renaming", e.path.to_path_buf(), e.error))?;
        Ok(Linked {
            arch,
            data,
            ran: true,
            seconds: start.elapsed().as_secs_f64(),
            stderr,
        })
    }
}

/// A job's private directory: where each of its files (named after its cache base) is
/// written until all steps succeeded.
struct Private<'a> {
    dir: &'a Path,
    base: &'a Path,
}

impl<'a> Private<'a> {
    fn new(job: &'a CompileJob, dir: &'a Path) -> Private<'a> {
        Private {
            dir,
            base: &job.base,
        }
    }

    /// Where the job writes `p`, when `p` is one of its files.
    fn map(&self, p: &Path) -> Option<PathBuf> {
        let name = p.file_name()?;
        let base_name = self.base.file_name()?;
        (p.parent() == self.base.parent()
            && name
                .as_encoded_bytes()
                .starts_with(base_name.as_encoded_bytes()))
        .then(|| self.dir.join(name))
    }

    /// Where the job writes `p`.
    fn path(&self, p: &Path) -> PathBuf {
        self.map(p).unwrap_or_else(|| p.to_path_buf())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_starts_pchs_then_the_longest_compiles() {
        let dir = tempfile::tempdir().unwrap();
        let job = |name: &str, size: usize, ms: Option<u64>, pch: Option<usize>| {
            let source = dir.path().join(format!("{name}.hip"));
            std::fs::write(&source, vec![b' '; size]).unwrap();
            let base = dir.path().join(name);
            if let Some(ms) = ms {
                std::fs::write(base.with_extension("ms"), format!("{ms}\n")).unwrap();
            }
            CompileJob {
                source,
                arch: Arch::new("gfx90a").unwrap(),
                rdc: false,
                steps: Vec::new(),
                deps_only: Command::new("clang"),
                outputs: Vec::new(),
                depfile: base.with_extension("d"),
                record: base.with_extension("rec"),
                base,
                pch,
                pch_skip: 0,
            }
        };
        // Timed jobs by their times; one never timed counts as the longest (then by size);
        // those waiting for a PCH last.
        let jobs = [
            job("short", 900, Some(100), None),
            job("long", 10, Some(800), None),
            job("new", 500, None, None),
            job("with_pch", 5000, Some(2000), Some(0)),
            job("newer", 700, None, None),
        ];
        let to_run: Vec<&CompileJob> = jobs.iter().collect();
        let (work, after) = schedule(&[PchState::Make], &to_run);
        let order: Vec<String> = work
            .iter()
            .map(|w| match *w {
                Work::Pch(i) => format!("pch{i}"),
                Work::Compile(k) => to_run[k].base.file_name().unwrap().to_string_lossy().into(),
            })
            .collect();
        assert_eq!(order, ["pch0", "newer", "new", "long", "short", "with_pch"]);
        assert_eq!(after, [None, None, None, None, None, Some(0)]);
    }

    #[test]
    fn device_code_is_checked_by_kind() {
        let elf = |machine: u16| {
            let mut v = vec![0u8; 64];
            v[..4].copy_from_slice(b"\x7fELF");
            v[4] = 2;
            v[5] = 1;
            v[18..20].copy_from_slice(&machine.to_le_bytes());
            v
        };
        assert!(check_device_code(ImageKind::Object, false, &elf(224)).is_ok());
        assert!(check_device_code(ImageKind::Cubin, true, &elf(190)).is_ok());
        let (expected, found) = check_device_code(ImageKind::Object, false, &elf(62)).unwrap_err();
        assert!(expected.contains("AMDGPU") && found == "an ELF file for machine 62");
        assert!(check_device_code(ImageKind::Cubin, true, &elf(224)).is_err());
        let ptx = b"//\n.version 7.8\n.target sm_80\n.address_size 64\n";
        assert!(check_device_code(ImageKind::Ptx, true, ptx).is_ok());
        let (_, found) = check_device_code(ImageKind::Ptx, true, b"").unwrap_err();
        assert_eq!(found, "an empty file");
        assert!(check_device_code(ImageKind::Ptx, true, &elf(190)).is_err());
    }
}
