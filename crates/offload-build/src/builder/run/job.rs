//! One compile job: its steps in a private directory, each output checked as soon as it is
//! written, then moved into place and recorded; or its result from a fresh cache record.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use foldhash::HashSet;
use xxhash_rust::xxh3::xxh3_128;

use crate::builder::arch::Target;
use crate::builder::cache::{self, Record};
use crate::builder::command::Command;
use crate::builder::error::Error;
use crate::builder::host::early::{self, Early, Hosts};
use crate::builder::job::{CompileJob, Way};
use crate::builder::job_out::JobOut;
use crate::builder::memory::Meter;
use crate::builder::pch::{self, PchJob};
use crate::builder::process;
use crate::builder::run::check::{check_output, target_mismatch};
use crate::builder::run::context::Runner;
use crate::builder::toolchain::direct;

/// What a job's steps printed, the content of each output, and whether the compile used a
/// precompiled preamble.
pub(super) type StepsOut = (Vec<String>, Vec<Vec<u8>>, bool);

/// A failed step's command as the user can run it again: with the cache's file names instead
/// of the job's private directory (removed when the job ends).
pub(super) fn public_paths(mut e: Error, private: &Path, base: &Path) -> Error {
    if let (Error::CompileFailed { command, .. }, Some(dir)) = (&mut e, base.parent()) {
        *command = command.replace(&private.display().to_string(), &dir.display().to_string());
    }
    e
}

/// A job's private directory: where each of its files (named after its cache base) is
/// written until all steps succeeded.
pub(super) struct Private<'a> {
    pub(super) dir: &'a Path,
    base: &'a Path,
}

impl<'a> Private<'a> {
    pub(super) fn new(job: &'a CompileJob, dir: &'a Path) -> Private<'a> {
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

    /// `c` as the job runs it: its files in the private directory, its temporary files too.
    pub(super) fn command(&self, c: &Command) -> Command {
        c.in_private(self.dir, |p| self.map(p))
    }

    /// Where the job writes `p`.
    pub(super) fn path(&self, p: &Path) -> PathBuf {
        self.map(p).unwrap_or_else(|| p.to_path_buf())
    }
}

/// The file where a compile job's last run time and peak memory are kept (`<base>.stats`:
/// milliseconds and bytes): named after the job's key, which the source's content does not
/// enter, so it outlives an edit.
pub(crate) fn stats_file(job: &CompileJob) -> PathBuf {
    job.base.with_extension("stats")
}

/// A job begun: its private directory (removed with it, and on cancellation) and when it
/// started.
pub(super) struct Begun {
    pub(super) tmp: cache::JobDir,
    _known: process::PrivateDir,
    pub(super) started: SystemTime,
    pub(super) start: Instant,
}

impl Runner<'_> {
    /// The job's result from its cache record, when the record is fresh (inputs, context)
    /// and every output is what the job wrote (size, content hash) and device code for the
    /// job's architecture; the warnings the compile printed are replayed from the record. A
    /// damaged output is a miss, with a warning.
    pub(super) fn cached(&self, job: &CompileJob) -> Option<JobOut> {
        let rec = Record::load(&job.record)?;
        if !rec.is_fresh(self.hashes) || !self.lookups.holds(&rec, &job.steps[0], &job.source) {
            return None;
        }
        let deps: Vec<PathBuf> = rec.deps.iter().map(|(p, _)| p.clone()).collect();
        let mut images = Vec::new();
        for (i, (kind, out)) in job.outputs.iter().enumerate() {
            let data = std::fs::read(out).ok()?;
            let damage = rec
                .output_mismatch(i, &data)
                .or_else(|| target_mismatch(*kind, &job.target, &data));
            if let Some(why) = damage {
                self.exec.warn(out, &why);
                return None;
            }
            images.push(data);
        }
        let mut out = JobOut::of(job, images, deps, rec.stderr, None);
        out.probes = rec.probes;
        Some(out)
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
        let probes = self
            .lookups
            .probes(&job.steps[0], &job.source, deps, self.hashes)?;
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
        rec.deps = self.hashes.hashed(deps, started)?;
        Some(rec)
    }

    /// Begins `job`: its private directory. Every file of the job is written there and
    /// renamed into place once all steps succeeded: compiles that share the cache (two
    /// builds of the same sources at once) never read each other's half-written files.
    pub(super) fn begin(&self, job: &CompileJob) -> Result<Begun, Error> {
        let start = Instant::now();
        let started = SystemTime::now();
        let _ = std::fs::remove_file(&job.record);
        let tmp = cache::JobDir::new(self.exec.cache_dir)?;
        // Removed on cancellation too (see `CancelToken`).
        let known = process::PrivateDir::new(self.exec.processes, tmp.path());
        if self.exec.processes.is_cancelled() {
            return Err(Error::Stopped); // the directory goes with `tmp`
        }
        Ok(Begun {
            tmp,
            _known: known,
            started,
            start,
        })
    }

    /// Runs a compile job: its steps in a private directory, each output checked as soon as
    /// it is written, then moved into place, and the cache record written.
    pub(super) fn run_job(
        &self,
        job: &CompileJob,
        pch: Option<&PchJob>,
        meter: &dyn Meter,
    ) -> Result<JobOut, Error> {
        let b = self.begin(job)?;
        let private = Private::new(job, b.tmp.path());
        let depfile = private.path(&job.depfile);
        // An early host compile ran it already (then what it read is as of its start).
        let early = (self.hosts)
            .filter(|_| job.target == Target::Host)
            .and_then(|hosts| hosts.take(job, pch.is_some()));
        let started = early.as_ref().map_or(b.started, |e| e.started);
        let earlier = early.as_ref().map_or(Duration::ZERO, |e| e.took);
        let out = self.run_steps(job, &private, &depfile, pch, early, meter)?;
        self.finish(job, &b, started, pch, out, earlier, meter)
    }

    /// Ends a job whose steps wrote `out` in the private directory of `b`: its depfile (the
    /// host-side preprocessing writes one when the compile did not), its outputs moved into
    /// place, its record (`started`: when what it read was read) and its stats.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn finish(
        &self,
        job: &CompileJob,
        b: &Begun,
        started: SystemTime,
        pch: Option<&PchJob>,
        (stderr, images, used_pch): StepsOut,
        earlier: Duration,
        meter: &dyn Meter,
    ) -> Result<JobOut, Error> {
        let private = Private::new(job, b.tmp.path());
        let depfile = private.path(&job.depfile);
        // A compiler that ignores -MD for device-only compiles (clang 22's new offload driver)
        // leaves no depfile: then the host-side preprocessing writes it.
        if !depfile.is_file() {
            let deps_only = private.command(&job.deps_only);
            let _ = (self.exec).exec(&deps_only, &job.target, Some(&job.source), None, meter);
        }
        for (_, out) in &job.outputs {
            let written = private.path(out);
            self.hashes.forget(out);
            std::fs::rename(&written, out).map_err(|e| Error::io("renaming", &written, e))?;
        }
        let mut deps = cache::read_deps(
            self.no_depfile,
            &job.source,
            &depfile,
            job.steps[0].dir.as_deref(),
        );
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
        let seconds = (b.start.elapsed() + earlier).as_secs_f64();
        let mut out = JobOut::of(job, images, deps, stderr, Some(seconds));
        out.used_pch = used_pch;
        out.probes = probes;
        Ok(out)
    }

    /// Runs the early host compile `job` ([`early`]), with `pch`: in a private directory of
    /// its own, kept for the host stage. `stop`: whether it should give up (a job must run
    /// alone).
    pub(super) fn run_early(
        &self,
        hosts: &Hosts<'_>,
        job: &CompileJob,
        pch: Option<&PchJob>,
        meter: &dyn Meter,
        stop: &(dyn Fn() -> bool + Sync),
    ) {
        let Ok(dir) = cache::JobDir::new(self.exec.cache_dir) else {
            return;
        };
        let private = Private::new(job, dir.path());
        let planned = pch.map_or_else(|| job.steps[0].clone(), |p| pch::compile_with_pch(job, p));
        let cmd = private.command(&planned);
        let depfile = private.path(&job.depfile);
        let processes = self.exec.processes;
        let run = early::Run {
            hosts,
            source: &job.source,
            used_pch: pch.is_some(),
            processes,
            stop,
        };
        run.run(&cmd, dir, |c| {
            (self.exec).exec(c, &job.target, Some(&job.source), Some(&depfile), meter)
        });
    }

    /// Runs the job's steps in its private directory; each output is checked to be the device
    /// code it should be as soon as a step wrote it (before `ptxas` reads the PTX).
    fn run_steps(
        &self,
        job: &CompileJob,
        private: &Private<'_>,
        depfile: &Path,
        pch: Option<&PchJob>,
        mut early: Option<Early>,
        meter: &dyn Meter,
    ) -> Result<StepsOut, Error> {
        let mut images = vec![Vec::new(); job.outputs.len()];
        let mut checked = vec![false; job.outputs.len()];
        let mut stderr = Vec::new();
        let mut used_pch = false;
        for (i, step) in job.steps.iter().enumerate() {
            let cmd = private.command(step);
            let adopted = early.take().zip(self.hosts).and_then(|(e, hosts)| {
                let object = private.path(&job.outputs.first()?.1);
                e.adopt(hosts, job, &object, depfile)
            });
            let printed = if let Some((printed, used)) = adopted {
                used_pch = used;
                Ok(printed)
            } else if i == 0 {
                let with_pch = pch.map(|p| pch::compile_with_pch(job, p));
                let with_pch = with_pch.map(|c| private.command(&c));
                let (printed, used) =
                    self.first_step(job, &cmd, with_pch.as_ref(), private, depfile, meter);
                used_pch = used;
                printed
            } else {
                (self.exec).exec(&cmd, &job.target, Some(&job.source), Some(depfile), meter)
            };
            stderr.extend(
                printed.map_err(|e| self.explain(public_paths(e, private.dir, &job.base)))?,
            );
            self.check_written(job, private, i, &mut checked, &mut images)?;
        }
        Ok((stderr, images, used_pch))
    }

    /// Reads and checks each output of `job` its step `i` wrote (the last step: every one
    /// left), into `images`.
    pub(super) fn check_written(
        &self,
        job: &CompileJob,
        private: &Private<'_>,
        i: usize,
        checked: &mut [bool],
        images: &mut [Vec<u8>],
    ) -> Result<(), Error> {
        for (j, (kind, out)) in job.outputs.iter().enumerate() {
            let written = private.path(out);
            if checked[j] || !(written.is_file() || i + 1 == job.steps.len()) {
                continue;
            }
            checked[j] = true;
            let data = std::fs::read(&written).map_err(|e| Error::io("reading", &written, e))?;
            check_output(*kind, &job.target, &data).map_err(|(expected, found)| {
                Error::BadDeviceCode {
                    arch: job.target.to_string(),
                    source: Some(job.source.clone()),
                    path: out.clone(),
                    expected,
                    found,
                }
            })?;
            images[j] = data;
        }
        Ok(())
    }

    /// The compile: with the precompiled preamble when there is one, and its result used
    /// only when it succeeded and printed nothing; otherwise (or without) the compile in the
    /// ways the plan gave ([`CompileJob::ways`]), whose result and diagnostics are those of a
    /// build without PCH. Whether the PCH was used.
    fn first_step(
        &self,
        job: &CompileJob,
        cmd: &Command,
        with_pch: Option<&Command>,
        private: &Private<'_>,
        depfile: &Path,
        meter: &dyn Meter,
    ) -> (Result<Vec<String>, Error>, bool) {
        let cancelled = || self.exec.processes.is_cancelled();
        if let Some(with_pch) = with_pch {
            let printed = match self.direct_commands(job, with_pch, private, depfile) {
                Some(cmds) => self.run_direct(job, &cmds, depfile, meter),
                None => (self.exec).exec(
                    with_pch,
                    &job.target,
                    Some(&job.source),
                    Some(depfile),
                    meter,
                ),
            };
            match printed {
                Ok(printed) if printed.is_empty() => return (Ok(printed), true),
                Err(e @ (Error::Stopped | Error::OutOfMemory { .. })) => return (Err(e), false),
                _ if cancelled() => return (Err(Error::Stopped), false),
                _ => {}
            }
        }
        for way in &job.ways {
            let tried = match way {
                Way::Direct => self
                    .direct_commands(job, cmd, private, depfile)
                    .map(|cmds| self.run_direct(job, &cmds, depfile, meter)),
                // Run as nodes of their own ([`crate::builder::run::nvcc`]); here only when
                // nvcc printed no plan.
                Way::NvccSteps => None,
                Way::Driver => {
                    let printed =
                        (self.exec).exec_launched(cmd, &job.target, &job.source, depfile, meter);
                    return (printed, false);
                }
            };
            match tried {
                Some(Ok(printed)) => return (Ok(printed), false),
                Some(Err(
                    e
                    @ (Error::Stopped | Error::CompileTimedOut { .. } | Error::OutOfMemory { .. }),
                )) => return (Err(e), false),
                _ if cancelled() => return (Err(Error::Stopped), false),
                // The next way runs it, the driver last, which says why it fails.
                _ => {}
            }
        }
        let printed = (self.exec).exec_launched(cmd, &job.target, &job.source, depfile, meter);
        (printed, false)
    }

    /// The commands a HIP device compile's driver would run (cc1, then lld), to run without
    /// it ([`crate::builder::toolchain::direct`]); `None` for a compile the plan runs through
    /// its driver, or one whose driver said anything else.
    fn direct_commands(
        &self,
        job: &CompileJob,
        cmd: &Command,
        private: &Private<'_>,
        depfile: &Path,
    ) -> Option<Vec<Command>> {
        if !job.ways.contains(&Way::Direct) {
            return None;
        }
        let holes = direct::Holes::of(cmd, &job.source, depfile, private.dir)?;
        let env = self.lookups.env_of(cmd);
        let run = (self.exec.processes, self.exec.cache_dir, self.exec.timeout);
        self.direct
            .commands(run, self.tc.identity, &env, cmd, &holes)
    }

    /// Runs a driver's commands in order: what they printed. They share the compile timeout,
    /// as within the driver's one process.
    fn run_direct(
        &self,
        job: &CompileJob,
        cmds: &[Command],
        depfile: &Path,
        meter: &dyn Meter,
    ) -> Result<Vec<String>, Error> {
        let mut printed = Vec::new();
        let deadline = Instant::now();
        for c in cmds {
            printed.extend(self.run_within(job, c, depfile, deadline, meter)?);
        }
        Ok(printed)
    }

    /// Runs one of the commands a compile's driver would run, with what is left since
    /// `started` of the compile timeout; a timeout names the user's compiler, as the driver's
    /// run would.
    pub(super) fn run_within(
        &self,
        job: &CompileJob,
        c: &Command,
        depfile: &Path,
        started: Instant,
        meter: &dyn Meter,
    ) -> Result<Vec<String>, Error> {
        let limit = self
            .exec
            .timeout
            .map(|t| t.saturating_sub(started.elapsed()));
        let out = (self.exec).exec_within(
            c,
            &job.target,
            Some(&job.source),
            Some(depfile),
            meter,
            limit,
        );
        out.map_err(|e| match e {
            Error::CompileTimedOut {
                program: _,
                arch,
                source,
                timeout,
            } => Error::CompileTimedOut {
                program: crate::builder::command::quoted_program(&job.steps[0]),
                arch,
                source,
                timeout,
            },
            other => other,
        })
    }

    /// Adds what offload-build knows to a failed compile: a source that needs the HIP headers
    /// while no ROCm install is in use; a CUDA source that needs a toolkit's headers while none
    /// was found, or a toolkit newer than the compiler ([`crate::builder::toolchain::cuda::hint`]).
    pub(super) fn explain(&self, mut e: Error) -> Error {
        use crate::builder::options::Language;
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
                *hint = hint.take().or_else(|| {
                    crate::builder::toolchain::cuda::hint(&self.tc.cuda_use(), command, stderr)
                });
            }
        }
        e
    }
}
