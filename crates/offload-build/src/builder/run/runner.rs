//! The jobs stage: the build's job graph, run by [`crate::builder::graph`]. Its nodes are
//! the plan's work whose cache record is not fresh: the precompiled preambles made
//! ([`Lifecycle::states`] decides which), the compiles (one per source and architecture, or
//! nvcc's steps), the device links after their objects, and in a host-code build with clang
//! the host compiles the host stage planned ([`Hosts`]), each after its source's device
//! compiles, with an early one beside them. Every command comes from the plan; this stage
//! runs them, checks what they wrote and records the results.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::SystemTime;

use crate::builder::arch::Target;
use crate::builder::built::Built;
use crate::builder::cache::lookup::Lookups;
use crate::builder::cache::{self, ContentHashes};
use crate::builder::env::Env;
use crate::builder::error::Error;
use crate::builder::graph::{self, Note};
use crate::builder::host::HostPlan;
use crate::builder::host::early::Hosts;
use crate::builder::job::CompileJob;
use crate::builder::job_out::JobOut;
use crate::builder::memory;
use crate::builder::pch::lifecycle::{HostPchs, Lifecycle, PchState};
use crate::builder::plan::estimate::{Kind, estimates};
use crate::builder::plan::{JobSettings, Plan};
use crate::builder::progress::{Progress, ProgressStep};
use crate::builder::run::context::Runner;
use crate::builder::run::exec::Executor;
use crate::builder::run::job::stats_file;
use crate::builder::run::nodes::{Done, Made};
use crate::builder::run::outputs::{refuse_clobbering, tell_headers};
use crate::builder::toolchain::direct::{DRIVER_VARS, Direct};

/// Runs the plan's job graph, with the host stage's nodes (`host`: empty without host code);
/// tells Cargo about every header read.
pub(crate) fn run(plan: &Plan, env: &Env<'_>, host: &HostPlan<'_>) -> Result<Built, Error> {
    let (Some(tc), Some(settings)) = (&plan.toolchain, &plan.jobs) else {
        // Nothing to compile (only images).
        return Ok(Built::default());
    };
    let sources: Vec<PathBuf> = plan.compiles.iter().map(|(s, _)| s.clone()).collect();
    refuse_clobbering(plan, &sources, "source", |_| None)?;
    cache::remove_leftovers(&plan.cache_dir);
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
        hosts: host.after_device.as_ref(),
    };
    let mut built = Built {
        keep_per_source: settings.options.host_code,
        ..Built::default()
    };
    let ran = runner.run_graph(settings, host, &mut built);
    exec.flush_warnings(env);
    let (outs, host_outs) = ran?;
    if no_depfile.load(Ordering::Relaxed) {
        env.directives().warn(&format!(
            "offload-build: {} wrote no depfile (-MD -MF); header changes are not tracked",
            tc.clang.display()
        ));
    }
    let headers: Vec<PathBuf> = (outs.iter().chain(&host_outs))
        .flat_map(|o| o.deps.iter().skip(1))
        .cloned()
        .collect();
    refuse_clobbering(plan, &headers, "header", |p| hashes.file_id(p))?;
    tell_headers(plan, tc, &outs, env)?;
    tell_headers(plan, tc, &host_outs, env)?;
    built.pch_made = runner.pch.made.load(Ordering::Relaxed);
    built.pch_background = runner.pch.background.load(Ordering::Relaxed);
    let settled = started.checked_sub(cache::STAMP_SETTLE).unwrap_or(started);
    hashes.save_stamps(&plan.cache_dir, settled);
    lookups.save_scans(&plan.cache_dir);
    Ok(built)
}

/// The progress count: the nodes that report (compiles not cached, device links, host
/// compiles).
struct Counter<'a> {
    settings: &'a JobSettings,
    done: usize,
    total: usize,
    /// The compiles that ran on local slots though a build farm was there, by kind and
    /// reason ([`CompileJob::stays`]).
    stayed: BTreeMap<(&'static str, &'static str), usize>,
}

impl Counter<'_> {
    /// Reports the finished node `d` (a compile of `jobs` or a host compile of `hosts`, a
    /// device link of `linked`), and counts its run on a local slot when it could not take the
    /// farm's.
    fn on_done(
        &mut self,
        d: &Done,
        (jobs, hosts): (&[&CompileJob], Option<&Hosts<'_>>),
        linked: &BTreeSet<Target>,
    ) {
        match d {
            Done::Compile(k, o) if o.ran => self.stayed(jobs.get(*k).copied()),
            Done::Host(o, _) if o.ran => self.stayed(hosts.and_then(|h| h.planned(&o.source))),
            _ => {}
        }
        match d {
            Done::Compile(_, o) | Done::Host(o, _) => {
                let step = ProgressStep::Compile(o.source.clone());
                self.report(&o.target, step, o.ran.then_some(o.seconds));
            }
            Done::Link(l) if linked.contains(&l.target) => {
                self.report(&l.target, ProgressStep::Link, l.ran.then_some(l.seconds));
            }
            Done::Link(_) => {}
            Done::Nothing => {}
        }
    }

    /// After the graph: a build none of whose compiles could take the farm's slots did not
    /// ask the farm (`asked` false); it says why, when there is a farm.
    fn farm_after(&self, asked: bool, farm: &dyn Fn() -> usize) {
        if asked || self.stayed.is_empty() {
            return;
        }
        let slots = farm();
        if slots > 0 {
            self.note(Note::Farm { slots, most: 0 });
        }
    }

    /// Counts `job`'s run on a local slot when it could not take the farm's.
    fn stayed(&mut self, job: Option<&CompileJob>) {
        let Some((j, why)) = job.and_then(|j| Some((j, j.stays?))) else {
            return;
        };
        let kind = if j.target.device().is_some() {
            "device"
        } else {
            "host"
        };
        *self.stayed.entry((kind, why)).or_default() += 1;
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

    fn note(&self, note: Note) {
        let Some(hook) = &self.settings.progress else {
            return;
        };
        let (label, step) = match note {
            Note::WaitsForMemory {
                label,
                need,
                in_use,
                budget,
            } => {
                let free = budget.saturating_sub(in_use);
                let why = format!(
                    "waits for memory: needs {} ({}); {} of the {} budget free",
                    memory::human(need.bytes),
                    need.from,
                    memory::human(free),
                    memory::human(budget)
                );
                (label, ProgressStep::Memory(why))
            }
            Note::RunsAlone { label, peak } => {
                let why = format!(
                    "killed for lack of memory at {}: runs again alone",
                    memory::human(peak)
                );
                (label, ProgressStep::Memory(why))
            }
            Note::Farm { slots, most } => {
                let mut what = format!(
                    "took up to {slots} compiles at once beside the local jobs; {most} ran there \
                     at once at most"
                );
                for ((kind, why), n) in &self.stayed {
                    let took = if *n == 1 {
                        "took a local slot"
                    } else {
                        "took local slots"
                    };
                    let s = if *n == 1 { "" } else { "s" };
                    what += &format!("; {n} {kind} compile{s} {took}: {why}");
                }
                ("build farm".to_string(), ProgressStep::Farm(what))
            }
        };
        hook.call(&Progress {
            done: self.done,
            total: self.total,
            arch: label,
            step,
            seconds: None,
        });
    }
}

impl Runner<'_> {
    /// Runs the graph of `settings`' jobs, filling `built`: the compiles' results (taken from
    /// the cache or run) in job order, and the host compiles'.
    fn run_graph(
        &self,
        settings: &JobSettings,
        host: &HostPlan<'_>,
        built: &mut Built,
    ) -> Result<(Vec<JobOut>, Vec<JobOut>), Error> {
        let jobs: Vec<&CompileJob> = settings.compile_jobs.iter().chain(&host.compiles).collect();
        let links = settings.links.iter().chain(&host.links).collect();
        let cached: Vec<Option<JobOut>> = jobs.iter().map(|job| self.cached(job)).collect();
        let mut to_run: Vec<(usize, &CompileJob)> = (jobs.iter().copied().enumerate())
            .filter(|(k, _)| cached[*k].is_none())
            .collect();
        if let Some(hosts) = self.hosts {
            let running: Vec<&CompileJob> = to_run.iter().map(|(_, j)| *j).collect();
            hosts.expect(&running, &cached.iter().flatten().collect::<Vec<_>>());
        }
        let later = self.later_pchs(settings, &to_run);
        let running: Vec<&CompileJob> = to_run.iter().map(|(_, j)| *j).collect();
        let early = self.hosts.is_some_and(|h| h.early);
        let states = (self.pch).states(
            &settings.pch_jobs,
            settings.pch_background,
            &running,
            HostPchs::during(&later, early),
        );
        order_compiles(&mut to_run, &states);
        let usable = (states.iter())
            .map(|s| AtomicBool::new(*s == PchState::Cached))
            .collect();
        let also = PchState::to_make(&settings.pch_jobs, &states);
        let made = Made {
            jobs,
            links,
            to_run,
            states,
            usable,
            also,
        };
        let (nodes, _) = self.nodes(settings, &made);
        let linked = self.counted_links(&made);
        let counter = Mutex::new(Counter {
            settings,
            done: 0,
            total: made.to_run.len() + linked.len() + self.hosts.map_or(0, |h| h.sources().count()),
            stayed: BTreeMap::new(),
        });
        let asked = std::sync::OnceLock::new();
        let farm = || *asked.get_or_init(|| settings.farm.ask(self.exec.processes));
        let done = graph::run(
            nodes,
            settings.client.as_ref(),
            (settings.max_jobs, &farm),
            settings.budget.as_ref(),
            &mut |d: &Done| {
                let mut c = counter.lock().unwrap_or_else(|e| e.into_inner());
                c.on_done(d, (&made.jobs, self.hosts), &linked);
            },
            &mut |n| counter.lock().unwrap_or_else(|e| e.into_inner()).note(n),
        )?;
        let c = counter.lock().unwrap_or_else(|e| e.into_inner());
        c.farm_after(asked.get().is_some(), &farm);
        drop(c);
        self.collect(settings, built, cached, done, &made)
    }

    /// The host PCHs of the sources whose device compiles run now (a host-code build): their
    /// host compiles come after them ([`Lifecycle::states`]' `later`).
    fn later_pchs(&self, settings: &JobSettings, to_run: &[(usize, &CompileJob)]) -> Vec<usize> {
        (settings.host_pchs.iter())
            .filter(|(s, _)| {
                (to_run.iter()).any(|(_, j)| &j.source == *s && j.target.device().is_some())
            })
            .map(|(_, &(i, _))| i)
            .collect()
    }
}

/// The compiles in the order they start when their ranks tie: those that do not use a PCH
/// first (those that do parse less), then the longest by their last time, then the larger
/// source.
fn order_compiles(to_run: &mut [(usize, &CompileJob)], states: &[PchState]) {
    let items: Vec<(Kind, u64, PathBuf)> = (to_run.iter())
        .map(|(_, j)| (Kind::DeviceCompile, size_of(&j.source), stats_file(j)))
        .collect();
    let refs: Vec<(Kind, u64, &Path)> = items
        .iter()
        .map(|(k, s, p)| (*k, *s, p.as_path()))
        .collect();
    let est = estimates(&refs);
    let keys: Vec<(bool, Reverse<u64>, Reverse<u64>)> = (to_run.iter().zip(&est))
        .map(|(&(_, j), e)| {
            let with_pch = j.pch.is_some_and(|i| states[i].used());
            (with_pch, Reverse(e.ms), Reverse(size_of(&j.source)))
        })
        .collect();
    let mut order: Vec<usize> = (0..to_run.len()).collect();
    order.sort_by_key(|&i| keys[i]);
    let sorted: Vec<(usize, &CompileJob)> = order.iter().map(|&i| to_run[i]).collect();
    to_run.copy_from_slice(&sorted);
}

fn size_of(p: &Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}
