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

use crate::builder::arch::Target;
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
use crate::builder::run::early::EarlyHosts;
use crate::builder::run::exec::Executor;
use crate::builder::run::job_out::JobOut;
use crate::builder::run::link::Linked;
use crate::builder::run::outputs::{refuse_clobbering, tell_headers};
use crate::builder::run::pool;
use crate::builder::run::schedule::{Done, Work, in_job_order, schedule};
use crate::builder::toolchain::Toolchain;

/// Runs the plan's compiles and device links; tells Cargo about every header read. In a
/// host-code build, `early` starts the host compiles beside them.
pub(crate) fn run(
    plan: &Plan,
    env: &Env<'_>,
    early: Option<&EarlyHosts<'_>>,
) -> Result<Built, Error> {
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
    run_jobs(plan, tc, settings, env, built, early)
}

/// Runs the host compiles of a host-code build (jobs of [`Target::Host`]), once its device
/// code is packed: as the device compiles run, under the same settings, with `pch_jobs`
/// (their [`CompileJob::pch`] indices).
pub(crate) fn run_host(
    plan: &Plan,
    jobs: Vec<CompileJob>,
    pch_jobs: Vec<PchJob>,
    env: &Env<'_>,
    early: Option<&EarlyHosts<'_>>,
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
    run_jobs(plan, tc, &host, env, Built::default(), early)
}

/// Runs the jobs of `settings` into `built`.
fn run_jobs(
    plan: &Plan,
    tc: &Toolchain,
    settings: &JobSettings,
    env: &Env<'_>,
    mut built: Built,
    early: Option<&EarlyHosts<'_>>,
) -> Result<Built, Error> {
    let started = SystemTime::now();
    let hashes = ContentHashes::with_stamps(&plan.cache_dir);
    let lookups = Lookups::new(env.compiler_vars()).load_scans(&plan.cache_dir);
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
        early,
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
    let mut printed: Vec<(String, Vec<String>)> = Vec::new();
    for o in &outs {
        printed.push((o.target.to_string(), diag::group(&o.stderr)));
    }
    let linked = runner.links(settings, &mut counter)?;
    for l in &linked {
        printed.push((l.target.to_string(), diag::group(&l.stderr)));
    }
    if settings.forward_warnings {
        built.diagnostics = diag::merge(printed.iter().map(|(t, d)| (t.as_str(), d.clone())));
    }
    exec.flush_warnings(env);
    let settled = started.checked_sub(cache::STAMP_SETTLE).unwrap_or(started);
    hashes.save_stamps(&plan.cache_dir, settled);
    lookups.save_scans(&plan.cache_dir);
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
        .filter(|(s, _)| {
            to_run
                .iter()
                .any(|j| &j.source == *s && j.target.device().is_some())
        })
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
    linked: BTreeSet<Target>,
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
            .map(|j| match &j.target {
                Target::Device(a) => Target::Device(a.clone()),
                Target::Host | Target::DeviceLink => Target::DeviceLink,
            })
            .collect();
        self.total = to_run.len() + self.linked.len();
    }

    fn report(&mut self, target: &Target, step: ProgressStep, seconds: Option<f64>) {
        self.done += 1;
        if let Some(hook) = &self.settings.progress {
            hook.call(&Progress {
                done: self.done,
                total: self.total,
                arch: target.to_string(),
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
        let states = self.pch.states(
            &settings.pch_jobs,
            settings.pch_background,
            &to_run,
            (
                &later,
                self.early.is_some(),
                &self.ran_early(settings, &to_run),
            ),
        );
        let usable: Vec<AtomicBool> = states
            .iter()
            .map(|s| AtomicBool::new(*s == PchState::Cached))
            .collect();
        let (mut work, mut after) = schedule(&states, &to_run, &later);
        let early = self.early_work(&slots, &to_run, &mut work, &mut after);
        let gate = gates(&work, &to_run, &early);
        let made = PchState::to_make(&settings.pch_jobs, &states);
        let job_list: Vec<pool::Job<'_, Done>> = work
            .iter()
            .map(|&w| {
                let (pch_jobs, usable, made, states) =
                    (&settings.pch_jobs, &usable, &made, &states);
                let pch_of = move |j: &CompileJob| {
                    j.pch
                        .filter(|&i| states[i].used())
                        .map(|i| (&pch_jobs[i], &usable[i]))
                };
                match w {
                    Work::Pch(i) => {
                        let adopt = states[i] == PchState::Adopt;
                        self.pch_work(&pch_jobs[i], adopt, made, &usable[i])
                    }
                    Work::Compile(k) => self.compile_work(k, to_run[k], pch_of(to_run[k])),
                    Work::Early(n) => self.early_job(early[n], pch_of(early[n])),
                }
            })
            .collect();
        let client = settings.client.as_ref();
        let max = settings.max_jobs;
        let done = pool::run_gated(job_list, &after, &gate, client, max, &mut |d| {
            if let Done::Compile(_, o) = d {
                let step = ProgressStep::Compile(o.source.clone());
                counter.report(&o.target, step, Some(o.seconds));
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

    /// Making the PCH `p` (or adopting it from the background): whether it can be used goes
    /// into `usable`.
    fn pch_work<'s>(
        &'s self,
        p: &'s PchJob,
        adopt: bool,
        made: &'s [&'s PchJob],
        usable: &'s AtomicBool,
    ) -> pool::Job<'s, Done> {
        Box::new(move || {
            let ok = self.pch.make(p, adopt, made);
            if ok.is_err() {
                self.tell_early(None);
            }
            usable.store(ok?, Ordering::SeqCst);
            Ok(Done::Pch)
        })
    }

    /// The compile `job` (the `k`-th to run), with its PCH when that is made and usable by
    /// then; its device code goes to the early host compile of its source too.
    fn compile_work<'s>(
        &'s self,
        k: usize,
        job: &'s CompileJob,
        pch: Option<(&'s PchJob, &'s AtomicBool)>,
    ) -> pool::Job<'s, Done> {
        Box::new(move || {
            let out = self.run_job(job, usable(pch));
            self.tell_early(out.as_ref().ok());
            Ok(Done::Compile(k, out?))
        })
    }

    /// The early host compile `job` (never a failure of the stage: the host stage compiles
    /// again what it cannot take).
    fn early_job<'s>(
        &'s self,
        job: &'s CompileJob,
        pch: Option<(&'s PchJob, &'s AtomicBool)>,
    ) -> pool::Job<'s, Done> {
        Box::new(move || {
            if let Some(hosts) = self.early {
                self.run_early(hosts, job, usable(pch));
            }
            Ok(Done::Early)
        })
    }

    /// Per PCH of `settings`, whether every compile of `to_run` that would use it ran early
    /// without it, its object to be taken ([`EarlyHosts::ran_without_pch`]): the host stage
    /// does not make it for them.
    fn ran_early(&self, settings: &JobSettings, to_run: &[&CompileJob]) -> Vec<bool> {
        let Some(hosts) = self.early else {
            return Vec::new();
        };
        let mut ran = vec![None; settings.pch_jobs.len()];
        for j in to_run.iter().filter(|j| j.target == Target::Host) {
            if let Some(i) = j.pch.filter(|&i| i < ran.len()) {
                let this = hosts.ran_without_pch(&j.source);
                ran[i] = Some(ran[i].unwrap_or(true) && this);
            }
        }
        ran.into_iter().map(|r| r.unwrap_or(false)).collect()
    }

    /// Tells the early host compiles that a job ended: a compile with its result, or a job
    /// that failed (`None`).
    fn tell_early(&self, out: Option<&JobOut>) {
        if let Some(hosts) = self.early {
            hosts.done(out);
        }
    }

    /// The early host compiles of the sources whose device compiles run now, added to `work`
    /// after the host PCH each uses (when this stage makes it); the device compiles' results
    /// taken from the cache go to them first. Their jobs, by [`Work::Early`] index.
    fn early_work(
        &self,
        slots: &[Result<JobOut, &CompileJob>],
        to_run: &[&CompileJob],
        work: &mut Vec<Work>,
        after: &mut Vec<Option<usize>>,
    ) -> Vec<&CompileJob> {
        let Some(hosts) = self.early else {
            return Vec::new();
        };
        let sources: BTreeSet<&PathBuf> = to_run
            .iter()
            .filter(|j| j.target.device().is_some())
            .map(|j| &j.source)
            .collect();
        let jobs: Vec<&CompileJob> = sources.iter().filter_map(|s| hosts.job(s)).collect();
        if jobs.is_empty() {
            return jobs;
        }
        let cached: Vec<&JobOut> = slots.iter().filter_map(|s| s.as_ref().ok()).collect();
        hosts.expect(to_run, &cached);
        for (n, job) in jobs.iter().enumerate() {
            // After its PCH when this stage makes it.
            let pch_at = job.pch.and_then(|i| {
                work.iter()
                    .position(|w| matches!(w, Work::Pch(p) if *p == i))
            });
            work.push(Work::Early(n));
            after.push(pch_at);
        }
        jobs
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
            if counter.linked.contains(&l.target) {
                counter.report(&l.target, ProgressStep::Link, l.ran.then_some(l.seconds));
            }
        })
    }
}

/// What each job of `work` starts after, besides what it waits for: an early host compile,
/// after every device compile of its source started (it waits for their device code).
fn gates(work: &[Work], to_run: &[&CompileJob], early: &[&CompileJob]) -> Vec<Vec<usize>> {
    work.iter()
        .map(|w| match *w {
            Work::Early(n) => work
                .iter()
                .enumerate()
                .filter(
                    |(_, v)| matches!(v, Work::Compile(k) if to_run[*k].source == early[n].source),
                )
                .map(|(at, _)| at)
                .collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// The PCH of a job when it was made and can be used by the time the job starts.
fn usable<'p>(pch: Option<(&'p PchJob, &AtomicBool)>) -> Option<&'p PchJob> {
    pch.filter(|(_, u)| u.load(Ordering::SeqCst))
        .map(|(p, _)| p)
}
