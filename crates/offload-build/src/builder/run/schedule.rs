//! The order the compile jobs start in: the PCHs to make first, then the compiles, longest
//! first (by the time each took when it last ran).

use std::cmp::Reverse;

use crate::builder::error::Error;
use crate::builder::job::CompileJob;
use crate::builder::pch::lifecycle::PchState;
use crate::builder::run::job::time_file;
use crate::builder::run::job_out::JobOut;

/// One job of the compile stage.
#[derive(Clone, Copy, Debug)]
pub(super) enum Work {
    /// Making a precompiled preamble (an index into the plan's PCH jobs).
    Pch(usize),
    /// A compile (an index into the compiles to run).
    Compile(usize),
    /// An early host compile ([`crate::builder::run::early`]; an index into those of the
    /// stage).
    Early(usize),
}

/// A finished [`Work`].
pub(super) enum Done {
    Pch,
    Compile(usize, JobOut),
    Early,
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
/// The PCHs of `later` (those of the host compiles after these) come last: no compile of
/// these waits for one while another build makes it.
pub(super) fn schedule(
    states: &[PchState],
    to_run: &[&CompileJob],
    later: &[usize],
) -> (Vec<Work>, Vec<Option<usize>>) {
    let mut work = Vec::new();
    let mut at = vec![None; states.len()];
    let (last, first): (Vec<usize>, Vec<usize>) = (0..states.len())
        .filter(|&i| states[i].made())
        .partition(|i| later.contains(i));
    for i in first {
        at[i] = Some(work.len());
        work.push(Work::Pch(i));
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
    for (n, &i) in last.iter().enumerate() {
        at[i] = Some(work.len() + order.len() + n);
    }
    for k in order {
        work.push(Work::Compile(k));
        after.push(to_run[k].pch.and_then(|i| at[i]));
    }
    for i in last {
        work.push(Work::Pch(i));
        after.push(None);
    }
    (work, after)
}

/// The results of the compile jobs in job order: `slots` holds those taken from the cache
/// and, for the `n` others, the job; `done` what ran.
pub(super) fn in_job_order(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::arch::{Arch, Target};
    use crate::builder::command::Command;

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
                target: Target::Device(Arch::new("gfx90a").unwrap()),
                rdc: false,
                steps: Vec::new(),
                deps_only: Command::new("clang"),
                outputs: Vec::new(),
                depfile: base.with_extension("d"),
                record: base.with_extension("rec"),
                base,
                pch,
                pch_skip: 0,
                threads: 1,
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
        let (work, after) = schedule(&[PchState::Make], &to_run, &[]);
        let order: Vec<String> = work
            .iter()
            .map(|w| match *w {
                Work::Pch(i) => format!("pch{i}"),
                Work::Compile(k) => to_run[k].base.file_name().unwrap().to_string_lossy().into(),
                Work::Early(n) => format!("early{n}"),
            })
            .collect();
        assert_eq!(order, ["pch0", "newer", "new", "long", "short", "with_pch"]);
        assert_eq!(after, [None, None, None, None, None, Some(0)]);
    }
}
