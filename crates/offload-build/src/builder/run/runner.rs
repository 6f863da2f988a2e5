//! The jobs stage: runs the plan's compile jobs, one per (source, architecture), in parallel
//! under Cargo's jobserver ([`crate::builder::run::pool`]), each skipped when its cache record says
//! its inputs are unchanged, after the precompiled preambles they use ([`Lifecycle`]); then
//! the device links. Every command comes from the plan; what becomes of a PCH is the PCH
//! room's decision. This stage runs them, checks what they wrote and records the results.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::SystemTime;

use crate::builder::arch::Arch;
use crate::builder::cache::lookup::Lookups;
use crate::builder::cache::{self, ContentHashes};
use crate::builder::diag;
use crate::builder::env::Env;
use crate::builder::error::Error;
use crate::builder::job::CompileJob;
use crate::builder::pch::PchJob;
use crate::builder::pch::lifecycle::{Lifecycle, PchState};
use crate::builder::plan::{JobSettings, Plan};
use crate::builder::progress::{Progress, ProgressStep};
use crate::builder::run::built::Built;
use crate::builder::run::context::Runner;
use crate::builder::run::direct::{DRIVER_VARS, Direct};
use crate::builder::run::exec::Executor;
use crate::builder::run::job::JobOut;
use crate::builder::run::link::Linked;
use crate::builder::run::outputs::{refuse_clobbering, tell_headers};
use crate::builder::run::pool;
use crate::builder::run::schedule::{Done, Work, in_job_order, schedule};
use crate::builder::toolchain::Toolchain;

/// Runs the plan's compiles and device links; tells Cargo about every header read.
pub(crate) fn run(plan: &Plan, env: &Env<'_>) -> Result<Built, Error> {
    let (Some(tc), Some(settings)) = (&plan.toolchain, &plan.jobs) else {
        // Nothing to compile (only images).
        return Ok(Built::default());
    };
    let sources: Vec<PathBuf> = plan.compiles.iter().map(|(s, _)| s.clone()).collect();
    refuse_clobbering(plan, &sources, "source", |_| None)?;
    cache::remove_leftovers(&plan.cache_dir);
    let built = Built {
        keep_per_source: settings.options.host_code,
        ..Built::default()
    };
    run_jobs(plan, tc, settings, env, built)
}

/// Runs the host compiles of a host-code build (jobs of [`Arch::host`]), once its device
/// code is packed: as the device compiles run, under the same settings, with `pch_jobs`
/// (their [`CompileJob::pch`] indices).
pub(crate) fn run_host(
    plan: &Plan,
    jobs: Vec<CompileJob>,
    pch_jobs: Vec<PchJob>,
    env: &Env<'_>,
) -> Result<Built, Error> {
    let (Some(tc), Some(settings)) = (&plan.toolchain, &plan.jobs) else {
        return Ok(Built::default());
    };
    let host = JobSettings {
        compile_jobs: jobs,
        links: Vec::new(),
        pch_jobs,
        ..settings.clone()
    };
    run_jobs(plan, tc, &host, env, Built::default())
}

/// Runs the jobs of `settings` into `built`.
fn run_jobs(
    plan: &Plan,
    tc: &Toolchain,
    settings: &JobSettings,
    env: &Env<'_>,
    mut built: Built,
) -> Result<Built, Error> {
    let started = SystemTime::now();
    let hashes = ContentHashes::with_stamps(&plan.cache_dir);
    let lookups = Lookups::new(env.compiler_vars());
    let no_depfile = AtomicBool::new(false);
    let exec = Executor {
        processes: env.processes(),
        cache_dir: &plan.cache_dir,
        timeout: settings.timeout,
        warnings: Mutex::new(Vec::new()),
    };
    let runner = Runner {
        tc,
        lang: plan.lang,
        hashes: &hashes,
        lookups: &lookups,
        no_depfile: &no_depfile,
        exec: &exec,
        pch: Lifecycle {
            processes: env.processes(),
            cache_dir: &plan.cache_dir,
            hashes: &hashes,
            lookups: &lookups,
            run: &exec,
            no_depfile: &no_depfile,
            made: AtomicUsize::new(0),
            background: AtomicUsize::new(0),
            helped: Mutex::new(BTreeMap::new()),
        },
        direct: Direct::new(settings.direct, env.peek(&DRIVER_VARS)),
    };
    let mut counter = Counter::new(settings);
    let mut outs = runner.compiles(settings, &mut counter)?;
    exec.flush_warnings(env);
    if no_depfile.load(Ordering::Relaxed) {
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
    refuse_clobbering(plan, &headers, "header", |p| hashes.file_id(p))?;
    tell_headers(plan, tc, &outs, env)?;
    built.pch_made = runner.pch.made.load(Ordering::Relaxed);
    built.pch_background = runner.pch.background.load(Ordering::Relaxed);
    built.add_compiles(&mut outs);
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
    exec.flush_warnings(env);
    let settled = started.checked_sub(cache::STAMP_SETTLE).unwrap_or(started);
    hashes.save_stamps(&plan.cache_dir, settled);
    built.add_links(linked);
    Ok(built)
}

/// The jobs to run that may use threads (nvcc's host-code jobs) given the cores the others
/// leave ([`CompileJob::with_threads`]), in the order of `to_run`; `None` for the others.
fn threaded(to_run: &[&CompileJob]) -> Vec<Option<CompileJob>> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let per_job = cores.div_ceil(to_run.len().max(1));
    to_run.iter().map(|j| j.with_threads(per_job)).collect()
}

/// The host PCHs of the sources whose device compiles run now (a host-code build): their host
/// compiles come after, and each will run ([`Lifecycle::states`]' `later`).
fn later_pchs(settings: &JobSettings, to_run: &[&CompileJob]) -> Vec<usize> {
    settings
        .host_pchs
        .iter()
        .filter(|(s, _)| to_run.iter().any(|j| &j.source == *s && !j.arch.is_host()))
        .map(|(_, &(i, _))| i)
        .collect()
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

    /// Counts the compiles of `to_run` and the device links of their architectures.
    fn count(&mut self, to_run: &[&CompileJob]) {
        self.linked = to_run
            .iter()
            .filter(|j| j.rdc)
            .map(|j| j.arch.clone())
            .collect();
        self.total = to_run.len() + self.linked.len();
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

impl Runner<'_> {
    /// The compile jobs: those whose cache record is fresh are done already; the others run
    /// in parallel, after the precompiled preambles they use ([`Lifecycle::states`]), longest
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
        let threaded = threaded(&to_run);
        let to_run: Vec<&CompileJob> = to_run
            .iter()
            .zip(&threaded)
            .map(|(j, t)| t.as_ref().unwrap_or(j))
            .collect();
        counter.count(&to_run);
        let later = later_pchs(settings, &to_run);
        let states = self
            .pch
            .states(&settings.pch_jobs, settings.pch_background, &to_run, &later);
        let usable: Vec<AtomicBool> = states
            .iter()
            .map(|s| AtomicBool::new(*s == PchState::Cached))
            .collect();
        let (work, after) = schedule(&states, &to_run, &later);
        let made = PchState::to_make(&settings.pch_jobs, &states);
        let job_list: Vec<pool::Job<'_, Done>> = work
            .iter()
            .map(|w| match *w {
                Work::Pch(i) => {
                    let (p, usable) = (&settings.pch_jobs[i], &usable[i]);
                    let adopt = states[i] == PchState::Adopt;
                    let made = &made;
                    Box::new(move || {
                        let ok = self.pch.make(p, adopt, made)?;
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
        self.pch
            .start_backgrounds(&settings.pch_jobs, &states, |i| {
                done.iter().find_map(|d| match d {
                    Done::Compile(k, o) if to_run[*k].pch == Some(i) => Some(o.deps.as_slice()),
                    _ => None,
                })
            });
        in_job_order(slots, done, to_run.len())
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
}
