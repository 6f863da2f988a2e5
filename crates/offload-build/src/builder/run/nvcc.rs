//! An nvcc host-code compile run as the steps nvcc prints ([`Way::NvccSteps`](crate::builder::job::Way::NvccSteps)), each a node
//! of the job graph: the job's node asks nvcc for its steps (`--dryrun`), planned by
//! [`crate::builder::toolchain::nvcc_steps`], and adds one node per step (each chain's steps
//! one after another), one that makes the module IDs agree, and one that finishes the job
//! (its depfile, outputs and record). So the steps of all sources share the cores and the
//! memory as the graph orders them, a heavy `cicc` of one source beside the `ptxas` of
//! another. A step that fails makes the job run through nvcc itself, which says why; with no
//! plan (an unexpected `--dryrun`), the job node runs nvcc at once.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::builder::command::Command;
use crate::builder::error::Error;
use crate::builder::fs;
use crate::builder::graph::{Node, Slot};
use crate::builder::job::CompileJob;
use crate::builder::memory::{Meter, Need, NeedFrom};
use crate::builder::plan::estimate::{Kind, read_stats};
use crate::builder::process;
use crate::builder::run::context::Runner;
use crate::builder::run::job::{Begun, Private, StepsOut, public_paths, stats_file};
use crate::builder::run::nodes::Done;
use crate::builder::toolchain::direct;
use crate::builder::toolchain::nvcc_steps::{self, Step};

/// One nvcc job run as steps: what its nodes share.
struct Steps<'j> {
    job: &'j CompileJob,
    /// The job's index among the compiles.
    k: usize,
    begun: Begun,
    plan: nvcc_steps::Plan,
    /// What each step printed, by its index in nvcc's order.
    printed: Mutex<BTreeMap<usize, Vec<String>>>,
    /// A step failed: the job runs through nvcc instead.
    failed: AtomicBool,
    /// The highest peak of its steps.
    peak: AtomicU64,
}

impl<'j> Steps<'j> {
    /// `s` as a command: `sh -c <line>` in the compile's directory with nvcc's variables,
    /// its standard output with its standard error.
    fn command(&self, s: &Step) -> Command {
        let cmd = &self.job.steps[0];
        let mut c = Command::new("/bin/sh");
        c.dir = cmd.dir.clone();
        c.env = cmd.env.clone();
        for (n, v) in &self.plan.env {
            c.env.push((n.clone(), Some(v.clone())));
        }
        c.add_arg("-c").add_arg(format!("{} 1>&2", s.line));
        c
    }

    /// A file of the plan (named as nvcc printed it, relative to the compile's directory).
    fn file(&self, name: &str) -> std::path::PathBuf {
        match &self.job.steps[0].dir {
            Some(d) => d.join(name),
            None => Path::new(name).to_path_buf(),
        }
    }
}

impl<'r> Runner<'r> {
    /// The node work of the nvcc job `job` (the `k`-th compile): its steps as nodes added to
    /// the graph, or, without a plan, nvcc run at once.
    pub(super) fn nvcc_job<'s>(
        &'s self,
        k: usize,
        job: &'s CompileJob,
        slot: &Slot<'_, 's, Done>,
    ) -> Result<Done, Error> {
        let b = self.begin(job)?;
        let private = Private::new(job, b.tmp.path());
        let Some(plan) = self.nvcc_plan(job, &private) else {
            let depfile = private.path(&job.depfile);
            let cmd = private.command(&job.steps[0]);
            let printed = (self.exec).exec_launched(&cmd, &job.target, &job.source, &depfile, slot);
            let printed =
                printed.map_err(|e| self.explain(public_paths(e, private.dir, &job.base)))?;
            let out = self.checked(job, &private, printed)?;
            return Ok(Done::Compile(k, self.finish_nvcc(job, &b, out, slot)?));
        };
        let steps = Arc::new(Steps {
            job,
            k,
            begun: b,
            plan,
            printed: Mutex::new(BTreeMap::new()),
            failed: AtomicBool::new(false),
            peak: AtomicU64::new(0),
        });
        let n = steps.plan.chains.iter().map(Vec::len).sum::<usize>() + steps.plan.tail.len() + 3;
        slot.add(n, |base| self.step_nodes(&steps, base));
        Ok(Done::Nothing)
    }

    /// nvcc's plan of `job`'s steps, its files kept in the job's directory: `None` when nvcc
    /// printed something unexpected (then nvcc runs it).
    fn nvcc_plan(&self, job: &CompileJob, private: &Private<'_>) -> Option<nvcc_steps::Plan> {
        let cmd = private.command(&job.steps[0]);
        let keep = private.dir.join("steps");
        std::fs::create_dir(&keep).ok()?;
        let mut ask = nvcc_steps::dryrun(&cmd, &keep)?.to_command();
        let limit = (self.exec.timeout).map_or(direct::ASK_LIMIT, |t| t.min(direct::ASK_LIMIT));
        let out = process::run(self.exec.processes, &mut ask, Some(limit)).ok()?;
        if !out.status.success() {
            return None; // nvcc runs it and says why
        }
        // As nvcc prints it: relative to the compile's directory, as `to_command` passed it.
        let spelled = direct::spelled(&cmd, keep.as_os_str());
        nvcc_steps::plan(std::str::from_utf8(&out.stderr).ok()?, spelled.to_str()?)
    }

    /// The nodes of `steps`, from index `base` on: each chain's steps in order; the host
    /// side's module ID made to agree with the first architecture's once both ran, and the
    /// other architectures' once every chain ran; the tail after them, then the job's end.
    fn step_nodes<'s>(&'s self, steps: &Arc<Steps<'s>>, base: usize) -> Vec<Node<'s, Done>> {
        let job = steps.job;
        let plan = &steps.plan;
        let mut nodes = Vec::new();
        let mut chain_ends = Vec::new();
        let mut at: Vec<Vec<usize>> = Vec::new();
        for chain in &plan.chains {
            let mut ids = Vec::new();
            for (i, s) in chain.iter().enumerate() {
                let mut n = self.step_node(steps, s.clone());
                if i > 0 {
                    n.after = vec![base + nodes.len() - 1];
                }
                ids.push(base + nodes.len());
                nodes.push(n);
            }
            chain_ends.push(base + nodes.len() - 1);
            at.push(ids);
        }
        let first_cicc = plan
            .first_id()
            .and_then(|(c, i)| at.get(c)?.get(i).copied());
        let light = Need {
            bytes: crate::builder::memory::default::LIGHT,
            from: NeedFrom::Default,
        };
        let st = steps.clone();
        let mut host_ids = Node::new(
            format!("{} (module ID)", name(job)),
            light,
            Box::new(move |slot: &Slot<'_, 's, Done>| {
                self.agree_ids(&st, |f| st.plan.fix_host_id(f), slot)
            }),
        );
        host_ids.after = [chain_ends.first().copied(), first_cicc]
            .into_iter()
            .flatten()
            .collect();
        nodes.push(host_ids);
        let st = steps.clone();
        let mut device_ids = Node::new(
            format!("{} (module IDs)", name(job)),
            light,
            Box::new(move |slot: &Slot<'_, 's, Done>| {
                self.agree_ids(&st, |f| st.plan.fix_device_ids(f), slot)
            }),
        );
        device_ids.after = chain_ends;
        nodes.push(device_ids);
        let mut after = vec![base + nodes.len() - 2, base + nodes.len() - 1];
        for s in &plan.tail {
            let mut n = self.step_node(steps, s.clone());
            n.after = std::mem::take(&mut after);
            after = vec![base + nodes.len()];
            nodes.push(n);
        }
        let st = steps.clone();
        let mut end = Node::new(
            name(job),
            Need {
                bytes: 0,
                from: NeedFrom::Recorded,
            },
            Box::new(move |slot: &Slot<'_, 's, Done>| self.end_steps(&st, slot)),
        );
        end.after = after;
        nodes.push(end);
        nodes
    }

    /// The node of step `s`: run unless a step failed.
    fn step_node<'s>(&'s self, steps: &Arc<Steps<'s>>, s: Step) -> Node<'s, Done> {
        let kind = Kind::NvccStep(s.kind());
        let stats = steps.job.base.with_extension(format!("s{}.stats", s.index));
        let recorded = read_stats(&stats);
        let need = match recorded {
            Some((_, peak)) if peak > 0 => Need {
                bytes: crate::builder::memory::with_margin(peak),
                from: NeedFrom::Recorded,
            },
            _ => Need {
                bytes: s.kind().default_need(),
                from: NeedFrom::Default,
            },
        };
        let label = format!("{} ({:?})", name(steps.job), s.kind());
        let default_ms = s.kind().default_ms();
        let st = steps.clone();
        let mut n = Node::new(
            label,
            need,
            Box::new(move |slot: &Slot<'_, 's, Done>| {
                if !st.failed.load(Ordering::SeqCst) {
                    self.run_step(&st, &s, slot)?;
                }
                Ok(Done::Nothing)
            }),
        );
        n.ms = recorded.map_or(default_ms, |r| r.0);
        n.class = kind.class();
        n.stats = Some(stats);
        n
    }

    /// Runs one step; a failure that nvcc itself would report marks the job failed.
    fn run_step(&self, st: &Steps<'_>, s: &Step, meter: &dyn Meter) -> Result<(), Error> {
        let depfile = Private::new(st.job, st.begun.tmp.path()).path(&st.job.depfile);
        let c = st.command(s);
        let before = Instant::now();
        match self.run_within(st.job, &c, &depfile, before, &PeakOf(meter, &st.peak)) {
            Ok(p) => {
                lock(&st.printed).insert(s.index, p);
                Ok(())
            }
            Err(
                e @ (Error::Stopped | Error::CompileTimedOut { .. } | Error::OutOfMemory { .. }),
            ) => Err(e),
            Err(_) => {
                st.failed.store(true, Ordering::SeqCst);
                Ok(())
            }
        }
    }

    /// The steps `fix` gives, to run again so that they used the first architecture's
    /// module ID ([`nvcc_steps::Plan::fix_host_id`], [`nvcc_steps::Plan::fix_device_ids`]);
    /// when it cannot tell, nvcc runs the job.
    fn agree_ids(
        &self,
        st: &Steps<'_>,
        fix: impl FnOnce(&dyn Fn(&str) -> Option<Vec<u8>>) -> Option<Vec<Step>>,
        meter: &dyn Meter,
    ) -> Result<Done, Error> {
        if st.failed.load(Ordering::SeqCst) {
            return Ok(Done::Nothing);
        }
        let Some(again) = fix(&|f: &str| std::fs::read(st.file(f)).ok()) else {
            st.failed.store(true, Ordering::SeqCst);
            return Ok(Done::Nothing);
        };
        for s in &again {
            if st.failed.load(Ordering::SeqCst) {
                break;
            }
            self.run_step(st, s, meter)?;
        }
        Ok(Done::Nothing)
    }

    /// The job's end: its depfile from the preprocessing steps', its object checked, moved
    /// into place and recorded; or, when a step failed, nvcc run as planned (which says why,
    /// or compiles it).
    fn end_steps(&self, st: &Steps<'_>, meter: &dyn Meter) -> Result<Done, Error> {
        let job = st.job;
        let private = Private::new(job, st.begun.tmp.path());
        let depfile = private.path(&job.depfile);
        let printed = if st.failed.load(Ordering::SeqCst) {
            let cmd = private.command(&job.steps[0]);
            let printed =
                (self.exec).exec_launched(&cmd, &job.target, &job.source, &depfile, meter);
            printed.map_err(|e| self.explain(public_paths(e, private.dir, &job.base)))?
        } else {
            // Without one of them, the job's dependency pass writes the depfile.
            let deps: Option<Vec<Vec<u8>>> = (st.plan.depfiles.iter())
                .map(|d| std::fs::read(st.file(d)).ok())
                .collect();
            if let Some(deps) = deps {
                let _ = std::fs::write(&depfile, deps.concat());
            }
            std::mem::take(&mut *lock(&st.printed))
                .into_values()
                .flatten()
                .collect()
        };
        meter.peak(st.peak.load(Ordering::Relaxed));
        let out = self.checked(job, &private, printed)?;
        Ok(Done::Compile(
            st.k,
            self.finish_nvcc(job, &st.begun, out, meter)?,
        ))
    }

    /// What `job`'s step wrote, checked, with what it printed.
    fn checked(
        &self,
        job: &CompileJob,
        private: &Private<'_>,
        printed: Vec<String>,
    ) -> Result<StepsOut, Error> {
        let mut images = vec![Vec::new(); job.outputs.len()];
        let mut checked = vec![false; job.outputs.len()];
        self.check_written(job, private, job.steps.len() - 1, &mut checked, &mut images)?;
        Ok((printed, images, false))
    }

    /// Ends an nvcc job: moved into place and recorded, its time and peak kept in its stats
    /// file for the next build's order.
    fn finish_nvcc(
        &self,
        job: &CompileJob,
        b: &Begun,
        out: StepsOut,
        meter: &dyn Meter,
    ) -> Result<crate::builder::job_out::JobOut, Error> {
        let peak = meter.peak_so_far();
        let o = self.finish(
            job,
            b,
            b.started,
            None,
            out,
            std::time::Duration::ZERO,
            meter,
        )?;
        let ms = b.start.elapsed().as_millis();
        let _ = fs::write_atomic(&stats_file(job), format!("{ms} {peak}\n").as_bytes());
        Ok(o)
    }
}

/// A meter that also keeps the highest peak of a job's steps.
struct PeakOf<'m>(&'m dyn Meter, &'m AtomicU64);

impl Meter for PeakOf<'_> {
    fn peak(&self, bytes: u64) {
        self.1.fetch_max(bytes, Ordering::Relaxed);
        self.0.peak(bytes);
    }
    fn peak_so_far(&self) -> u64 {
        self.1.load(Ordering::Relaxed).max(self.0.peak_so_far())
    }
    fn alone(&self, label: &str, peak: u64) -> Option<Box<dyn Send + '_>> {
        self.0.alone(label, peak)
    }
    fn budget(&self) -> Option<&crate::builder::memory::Budget> {
        self.0.budget()
    }
}

/// `k.cu (host code)`, for progress lines.
fn name(job: &CompileJob) -> String {
    let n = job.source.file_name().unwrap_or_default().to_string_lossy();
    format!("{n} ({})", job.target)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
