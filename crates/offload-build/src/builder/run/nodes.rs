//! The nodes of a build's job graph, made of the plan's jobs ([`crate::builder::run::runner`]),
//! and what their results become ([`Built`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::builder::arch::Target;
use crate::builder::built::Built;
use crate::builder::diag;
use crate::builder::error::Error;
use crate::builder::graph::{Node, Slot, Work};
use crate::builder::job::{CompileJob, LinkJob, Way};
use crate::builder::job_out::{JobOut, Linked};
use crate::builder::pch::PchJob;
use crate::builder::pch::lifecycle::{HostPchs, PchState};
use crate::builder::plan::JobSettings;
use crate::builder::plan::estimate::{Estimate, Kind, estimates, read_stats};
use crate::builder::run::context::Runner;
use crate::builder::run::job::stats_file;
use crate::builder::toolchain::nvcc_steps::StepKind;

/// What a node of the graph gives back.
pub(crate) enum Done {
    /// A node whose work is elsewhere (a PCH, an early host compile, a step of nvcc's).
    Nothing,
    /// The `k`-th compile job's result.
    Compile(usize, JobOut),
    /// A source's host compile, and the PCH its job names.
    Host(JobOut, Option<usize>),
    /// A device link.
    Link(Linked),
}

/// What the graph is made of: the compile jobs to run (with their index among the plan's),
/// what becomes of each PCH, and whether each can be used once made.
pub(super) struct Made<'p> {
    /// Every compile job: the plan's, then the host stage's.
    pub(super) jobs: Vec<&'p CompileJob>,
    /// Every device link: the plan's, then the host stage's.
    pub(super) links: Vec<&'p LinkJob>,
    pub(super) to_run: Vec<(usize, &'p CompileJob)>,
    pub(super) states: Vec<PchState>,
    pub(super) usable: Vec<AtomicBool>,
    /// The PCHs this build makes.
    pub(super) also: Vec<&'p PchJob>,
}

/// Where the nodes of each job went.
#[derive(Default)]
pub(super) struct Index {
    pch: BTreeMap<usize, usize>,
    /// The node of each compile to run, by its index among the plan's.
    compile: BTreeMap<usize, usize>,
    early: BTreeMap<PathBuf, usize>,
}

impl<'p> Made<'p> {
    /// The PCH `job` uses when this build makes it or has it, and whether it can be used.
    fn pch_of<'s>(
        &'s self,
        settings: &'s JobSettings,
        job: &CompileJob,
    ) -> Option<(&'s PchJob, &'s AtomicBool)> {
        job.pch
            .filter(|&i| self.states[i].used())
            .map(|i| (&settings.pch_jobs[i], &self.usable[i]))
    }
}

impl Index {
    /// The node making the PCH of `job`, when this build makes it: what `job` starts after.
    fn pch_of(&self, job: &CompileJob) -> Vec<usize> {
        job.pch
            .and_then(|i| self.pch.get(&i))
            .copied()
            .into_iter()
            .collect()
    }
}

/// The graph's nodes as they are made, each with what it is expected to take.
struct Nodes<'s> {
    nodes: Vec<Node<'s, Done>>,
}

impl<'s> Nodes<'s> {
    /// Adds a node of `kind` (`size`: of what it compiles) with its stats file `stats`,
    /// after `after`: its index.
    fn push(
        &mut self,
        label: String,
        (kind, size, stats): (Kind, u64, PathBuf),
        after: Vec<usize>,
        work: Work<'s, Done>,
    ) -> usize {
        let e: Estimate = estimates(&[(kind, size, stats.as_path())])[0];
        let mut n = Node::new(label, e.need, work);
        n.ms = e.ms;
        n.class = kind.class();
        n.stats = Some(stats);
        n.after = after;
        self.nodes.push(n);
        self.nodes.len() - 1
    }
}

/// `k.hip for gfx90a`, for progress lines.
fn label(source: &Path, target: &Target) -> String {
    let n = source.file_name().unwrap_or_default().to_string_lossy();
    format!("{n} for {target}")
}

fn size_of(p: &Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}

impl Runner<'_> {
    /// The graph of `made`: the PCHs made, the compiles, the early host compiles, the device
    /// links and the host compiles, in that order.
    pub(super) fn nodes<'s>(
        &'s self,
        settings: &'s JobSettings,
        made: &'s Made<'s>,
    ) -> (Vec<Node<'s, Done>>, Index) {
        let mut g = Nodes { nodes: Vec::new() };
        let mut at = Index::default();
        let also: &'s [&'s PchJob] = &made.also;
        for (i, p) in settings.pch_jobs.iter().enumerate() {
            if !made.states[i].made() {
                continue;
            }
            let adopt = made.states[i] == PchState::Adopt;
            let usable = &made.usable[i];
            let stats = p.record.with_extension("stats");
            let work: Work<'s, Done> = Box::new(move |slot: &Slot<'_, 's, Done>| {
                let ok = self.pch.make(p, adopt, also, slot);
                if ok.is_err() {
                    self.tell_hosts(None);
                }
                usable.store(ok?, Ordering::SeqCst);
                Ok(Done::Nothing)
            });
            let n = g.push(
                label(&p.preamble_file, &p.target),
                (Kind::Pch, 0, stats),
                Vec::new(),
                work,
            );
            at.pch.insert(i, n);
        }
        for &(k, job) in &made.to_run {
            let after = at.pch_of(job);
            let kind = match (&job.target, job.ways[0]) {
                (Target::Device(_), _) => Kind::DeviceCompile,
                (_, Way::NvccSteps | Way::Driver) if self.tc.is_nvcc() => Kind::Nvcc,
                _ => Kind::HostCompile,
            };
            let pch = made.pch_of(settings, job);
            let work: Work<'s, Done> = if job.ways[0] == Way::NvccSteps {
                Box::new(move |slot: &Slot<'_, 's, Done>| self.nvcc_job(k, job, slot))
            } else {
                Box::new(move |slot: &Slot<'_, 's, Done>| {
                    let out = self.run_job(job, usable(pch), slot);
                    self.tell_hosts(out.as_ref().ok());
                    Ok(Done::Compile(k, out?))
                })
            };
            let stats = (kind, size_of(&job.source), stats_file(job));
            let n = g.push(label(&job.source, &job.target), stats, after, work);
            g.nodes[n].remote = job.on_farm();
            if job.ways[0] == Way::NvccSteps {
                // It asks nvcc for its steps, each a node with its own stats; the job's are
                // written when it ends.
                g.nodes[n].stats = None;
                g.nodes[n].class = 0;
                // It stands for its steps until they are known: their time as a whole (the
                // job's last run), so that asking nvcc for a source's steps goes before
                // another source's steps that are shorter than them.
                g.nodes[n].ms = read_stats(&stats_file(job))
                    .map_or_else(StepKind::default_job_ms, |(ms, _)| ms);
                g.nodes[n].need = crate::builder::memory::Need {
                    bytes: crate::builder::memory::default::LIGHT,
                    from: crate::builder::memory::NeedFrom::Default,
                };
            }
            at.compile.insert(k, n);
        }
        self.early_nodes(settings, made, &mut g, &mut at);
        self.link_nodes(made, &mut g, &at);
        self.host_nodes(settings, made, &mut g, &at);
        (g.nodes, at)
    }

    /// The compile nodes of `source` (those that run).
    fn compiles_of(made: &Made<'_>, at: &Index, source: &Path) -> Vec<usize> {
        (made.to_run.iter())
            .filter(|(_, j)| j.source == source && j.target.device().is_some())
            .filter_map(|(k, _)| at.compile.get(k).copied())
            .collect()
    }

    /// The early host compiles: each after its host PCH (when this build makes it) and once
    /// every device compile of its source started; optional work.
    fn early_nodes<'s>(
        &'s self,
        settings: &'s JobSettings,
        made: &'s Made<'s>,
        g: &mut Nodes<'s>,
        at: &mut Index,
    ) {
        let Some(hosts) = self.hosts.filter(|h| h.early) else {
            return;
        };
        let sources: BTreeSet<&PathBuf> = (made.to_run.iter())
            .filter(|(_, j)| j.target.device().is_some())
            .map(|(_, j)| &j.source)
            .collect();
        for source in sources {
            let Some(job) = hosts.job(source) else {
                continue;
            };
            let after = at.pch_of(job);
            let pch = made.pch_of(settings, job);
            let work: Work<'s, Done> = Box::new(move |slot: &Slot<'_, 's, Done>| {
                let stop = || slot.should_stop();
                self.run_early(hosts, job, usable(pch), slot, &stop);
                Ok(Done::Nothing)
            });
            let stats = job.base.with_extension("early.stats");
            let kind = (Kind::HostCompile, size_of(source), stats);
            let n = g.push(label(source, &job.target), kind, after, work);
            g.nodes[n].gate = Self::compiles_of(made, at, source);
            g.nodes[n].optional = true;
            at.early.insert(source.clone(), n);
        }
    }

    /// The device links, each after the compiles of its objects.
    fn link_nodes<'s>(&'s self, made: &'s Made<'s>, g: &mut Nodes<'s>, at: &Index) {
        for &l in &made.links {
            let after: Vec<usize> = (made.jobs.iter().enumerate())
                .filter(|(_, j)| j.outputs.iter().any(|(_, o)| l.command.inputs.contains(o)))
                .filter_map(|(k, _)| at.compile.get(&k).copied())
                .collect();
            let stats = (self.exec.cache_dir).join(format!("link-{}.stats", l.target.file_tag()));
            let work: Work<'s, Done> =
                Box::new(move |slot: &Slot<'_, 's, Done>| Ok(Done::Link(self.link(l, slot)?)));
            let what = format!("the device link for {}", l.target);
            g.push(what, (Kind::Link, 0, stats), after, work);
        }
    }

    /// The host compiles the host stage planned: each after its source's device compiles,
    /// its early compile and its PCH.
    fn host_nodes<'s>(
        &'s self,
        settings: &'s JobSettings,
        made: &'s Made<'s>,
        g: &mut Nodes<'s>,
        at: &Index,
    ) {
        let Some(hosts) = self.hosts else {
            return;
        };
        for source in hosts.sources() {
            let mut after = Self::compiles_of(made, at, source);
            // A host compile whose device compiles all came from the cache is most likely a
            // hit too: it does not wake the build farm (a miss takes a local slot).
            let device_ran = !after.is_empty();
            after.extend(at.early.get(source));
            let pch_at = (hosts.planned(source))
                .and_then(|j| j.pch)
                .and_then(|i| at.pch.get(&i));
            after.extend(pch_at);
            let work: Work<'s, Done> = Box::new(move |slot: &Slot<'_, 's, Done>| {
                let job = hosts.host_job(source)?;
                if let Some(out) = self.cached(&job) {
                    return Ok(Done::Host(out, job.pch));
                }
                let out = self.run_job(&job, usable(made.pch_of(settings, &job)), slot)?;
                Ok(Done::Host(out, job.pch))
            });
            let stats = hosts.stats(source);
            let n = g.push(
                label(source, &Target::Host),
                (Kind::HostCompile, size_of(source), stats),
                after,
                work,
            );
            g.nodes[n].remote =
                device_ran && hosts.planned(source).is_some_and(CompileJob::on_farm);
        }
    }

    /// The device links whose objects a compile of this build makes: those the progress
    /// counts.
    pub(super) fn counted_links(&self, made: &Made<'_>) -> BTreeSet<Target> {
        (made.links.iter())
            .filter(|l| {
                (made.to_run.iter())
                    .any(|(_, j)| j.outputs.iter().any(|(_, o)| l.command.inputs.contains(o)))
            })
            .map(|l| l.target.clone())
            .collect()
    }

    /// Tells the host compiles that a device compile ended: with its result, or failed
    /// (`None`).
    pub(super) fn tell_hosts(&self, out: Option<&JobOut>) {
        if let Some(hosts) = self.hosts {
            hosts.done(out);
        }
    }

    /// What the graph's nodes gave (`done`), with the compiles taken from the cache
    /// (`cached`), into `built`: the compiles' results in job order and the host compiles';
    /// the PCHs left to the background started.
    pub(super) fn collect(
        &self,
        settings: &JobSettings,
        built: &mut Built,
        mut cached: Vec<Option<JobOut>>,
        done: Vec<Done>,
        made: &Made<'_>,
    ) -> Result<(Vec<JobOut>, Vec<JobOut>), Error> {
        let mut links = Vec::new();
        let mut hosts = Vec::new();
        for d in done {
            match d {
                Done::Compile(k, o) => cached[k] = Some(o),
                Done::Host(o, pch) => hosts.push((o, pch)),
                Done::Link(l) => links.push(l),
                Done::Nothing => {}
            }
        }
        let mut outs: Vec<JobOut> = cached
            .into_iter()
            .collect::<Option<_>>()
            .ok_or_else(|| Error::Config("a job did not run".into()))?;
        let jobs = &made.jobs;
        self.pch
            .start_backgrounds(&settings.pch_jobs, &made.states, |i| {
                (jobs.iter().zip(&outs))
                    .find(|(j, o)| o.ran && j.pch == Some(i))
                    .map(|(_, o)| o.deps.as_slice())
            });
        self.host_backgrounds(settings, &hosts);
        let mut host_outs: Vec<JobOut> = hosts.into_iter().map(|(o, _)| o).collect();
        let mut compiles: Vec<(&std::path::Path, Vec<String>)> = (outs.iter().chain(&host_outs))
            .map(|o| (o.source.as_path(), diag::group(&o.stderr)))
            .collect();
        diag::as_one_driver(&mut compiles);
        let mut printed: Vec<(String, Vec<String>)> = (outs.iter().chain(&host_outs))
            .zip(compiles)
            .map(|(o, (_, blocks))| (o.target.to_string(), blocks))
            .collect();
        for l in &links {
            printed.push((l.target.to_string(), diag::group(&l.stderr)));
        }
        if settings.forward_warnings {
            built.diagnostics = diag::merge(printed.iter().map(|(t, d)| (t.as_str(), d.clone())));
        }
        built.add_compiles(&mut outs);
        built.add_compiles(&mut host_outs);
        built.add_links(links);
        Ok((outs, host_outs))
    }

    /// The host PCHs after the host compiles ran, as a build that compiled them would decide
    /// (each compiled once, so none pays now): started in the background for the next build,
    /// with what the compile read; not when its early compile ran without it and one runs.
    fn host_backgrounds(&self, settings: &JobSettings, hosts: &[(JobOut, Option<usize>)]) {
        let (Some(h), false) = (self.hosts, hosts.is_empty()) else {
            return;
        };
        let ran: Vec<(&JobOut, usize)> = (hosts.iter())
            .filter(|(o, _)| o.ran)
            .filter_map(|(o, p)| Some((o, (*p)?)))
            .collect();
        let users: Vec<CompileJob> = (ran.iter())
            .filter_map(|(o, _)| h.planned(&o.source).cloned())
            .collect();
        let users: Vec<&CompileJob> = users.iter().collect();
        let mut ran_early = vec![false; settings.pch_jobs.len()];
        for (o, i) in &ran {
            if let Some(r) = ran_early.get_mut(*i) {
                *r = h.took_without_pch(&o.source);
            }
        }
        let states = (self.pch).states(
            &settings.pch_jobs,
            settings.pch_background,
            &users,
            HostPchs::after(&ran_early),
        );
        let only_background: Vec<PchState> = (states.iter())
            .map(|s| match s {
                PchState::Background => PchState::Background,
                _ => PchState::Off,
            })
            .collect();
        self.pch
            .start_backgrounds(&settings.pch_jobs, &only_background, |i| {
                ran.iter()
                    .find(|(_, p)| *p == i)
                    .map(|(o, _)| o.deps.as_slice())
            });
    }
}

/// The PCH of a job when it was made and can be used by the time the job starts.
fn usable<'p>(pch: Option<(&'p PchJob, &AtomicBool)>) -> Option<&'p PchJob> {
    pch.filter(|(_, u)| u.load(Ordering::SeqCst))
        .map(|(p, _)| p)
}
