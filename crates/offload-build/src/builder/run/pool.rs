//! Running the per-(source, arch) jobs in parallel under Cargo's jobserver.
//!
//! A build script holds one job token implicitly (Cargo acquired it to run the script); every
//! further concurrent job needs a token from the jobserver that Cargo passes in
//! `CARGO_MAKEFLAGS` (sized by `-j` / `NUM_JOBS`). Tokens are asked for through the `jobserver`
//! crate's helper thread, so waiting for a token never blocks finished jobs from being reaped.
//! `OFFLOAD_BUILD_MAX_JOBS` caps the number of concurrent jobs further (device compiles of big
//! kernels can take gigabytes each). Outside Cargo, `NUM_JOBS` or the number of CPUs is used.
//!
//! After the first failure no new job starts; running ones finish, and the first error (in job
//! order) is returned.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::mpsc;

use jobserver::{Acquired, Client};

use crate::builder::error::Error;

/// One job: runs on its own thread.
pub(crate) type Job<'a, T> = Box<dyn FnOnce() -> Result<T, Error> + Send + 'a>;

enum Event {
    Token(std::io::Result<Acquired>),
    /// A job finished: its index, whether it failed, and the token it held (`None`: the
    /// implicit one).
    Done(usize, bool, Option<Acquired>),
}

/// Runs `jobs` with at most `max` at once, one jobserver token per job beyond the first.
/// Results come back in job order; `on_done` sees each successful result as it finishes, on
/// the calling thread (for progress lines).
pub(crate) fn run<'a, T: Send + 'a>(
    jobs: Vec<Job<'a, T>>,
    client: Option<&Client>,
    max: usize,
    on_done: &mut dyn FnMut(&T),
) -> Result<Vec<T>, Error> {
    run_after(jobs, &[], client, max, on_done)
}

/// The jobs not started yet, in start order, and which jobs have started and finished.
struct Queue<'x, J> {
    pending: VecDeque<(usize, J)>,
    /// The job each one waits for (by index), if any.
    after: &'x [Option<usize>],
    /// The jobs each one starts after (by index): they have started, not necessarily ended.
    gate: &'x [Vec<usize>],
    started: Vec<bool>,
    finished: Vec<bool>,
}

impl<'x, J> Queue<'x, J> {
    fn new(jobs: Vec<J>, after: &'x [Option<usize>], gate: &'x [Vec<usize>]) -> Queue<'x, J> {
        let finished = vec![false; jobs.len()];
        Queue {
            pending: jobs.into_iter().enumerate().collect(),
            after,
            gate,
            started: finished.clone(),
            finished,
        }
    }

    fn is_ready(&self, i: usize) -> bool {
        let after = self.after.get(i).copied().flatten();
        let gate = self.gate.get(i).map_or(&[][..], Vec::as_slice);
        after.is_none_or(|d| self.finished[d]) && gate.iter().all(|&g| self.started[g])
    }

    /// How many pending jobs could start now.
    fn ready(&self) -> usize {
        self.pending
            .iter()
            .filter(|(i, _)| self.is_ready(*i))
            .count()
    }

    /// The first pending job that can start, taken out.
    fn take(&mut self) -> Option<(usize, J)> {
        let at = self.pending.iter().position(|(i, _)| self.is_ready(*i))?;
        let taken = self.pending.remove(at)?;
        self.started[taken.0] = true;
        Some(taken)
    }
}

/// As [`run`], where job `i` starts only after job `after[i]` (an earlier one, if any)
/// finished, and in list order otherwise: the jobs that are ready take the tokens; a
/// token that comes while none is ready goes back.
pub(crate) fn run_after<'a, T: Send + 'a>(
    jobs: Vec<Job<'a, T>>,
    after: &[Option<usize>],
    client: Option<&Client>,
    max: usize,
    on_done: &mut dyn FnMut(&T),
) -> Result<Vec<T>, Error> {
    run_gated(jobs, after, &[], client, max, on_done)
}

/// As [`run_after`], where job `i` also starts only once every job of `gate[i]` has started:
/// a job that waits, holding its token, for what those jobs make (an early host compile
/// reading its device code from a pipe) never keeps them from a token.
pub(crate) fn run_gated<'a, T: Send + 'a>(
    jobs: Vec<Job<'a, T>>,
    after: &[Option<usize>],
    gate: &[Vec<usize>],
    client: Option<&Client>,
    max: usize,
    on_done: &mut dyn FnMut(&T),
) -> Result<Vec<T>, Error> {
    let n = jobs.len();
    let max = max.max(1);
    let results: Vec<Mutex<Option<Result<T, Error>>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let (tx, rx) = mpsc::channel::<Event>();
    let helper = client
        .filter(|_| max > 1 && n > 1)
        .and_then(|c| token_helper(c, tx.clone()));
    std::thread::scope(|s| {
        let mut queue = Queue::new(jobs, after, gate);
        let mut implicit_free = true;
        let mut running = 0usize;
        let mut requested = 0usize;
        let mut failed = false;
        let results = &results;
        let spawn = |idx: usize, job: Job<'a, T>, token: Option<Acquired>| {
            let tx = tx.clone();
            s.spawn(move || {
                let r = job();
                let failed = r.is_err();
                *results[idx].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                let _ = tx.send(Event::Done(idx, failed, token));
            });
        };
        loop {
            if implicit_free && !failed && running < max {
                if let Some((i, job)) = queue.take() {
                    implicit_free = false;
                    running += 1;
                    spawn(i, job, None);
                }
            }
            if let Some(h) = &helper {
                while !failed && requested < queue.ready() && running + requested < max {
                    h.request_token();
                    requested += 1;
                }
            }
            // Nothing running and nothing ready: done (a job left waiting is an error below).
            if running == 0 {
                break;
            }
            match rx.recv() {
                Ok(Event::Token(t)) => {
                    requested = requested.saturating_sub(1);
                    let t = t.ok().filter(|_| !failed && running < max);
                    if let Some((t, (i, job))) = t.and_then(|t| Some((t, queue.take()?))) {
                        running += 1;
                        spawn(i, job, Some(t));
                    }
                }
                Ok(Event::Done(idx, job_failed, token)) => {
                    running -= 1;
                    queue.finished[idx] = true;
                    if let Some(Ok(v)) = &*results[idx].lock().unwrap_or_else(|e| e.into_inner()) {
                        on_done(v);
                    }
                    // The implicit token is free again; another goes back to the jobserver.
                    implicit_free |= token.is_none();
                    drop(token);
                    failed |= job_failed;
                }
                Err(_) => break,
            }
        }
    });
    drop(helper);
    in_job_order(results)
}

/// The jobserver's helper thread, sending each token it gets to `tx`.
fn token_helper(c: &Client, tx: mpsc::Sender<Event>) -> Option<jobserver::HelperThread> {
    c.clone()
        .into_helper_thread(move |t| {
            let _ = tx.send(Event::Token(t));
        })
        .ok()
}

/// The results in job order; the first error in job order, or an error when a job did not
/// run.
fn in_job_order<T>(results: Vec<Mutex<Option<Result<T, Error>>>>) -> Result<Vec<T>, Error> {
    let n = results.len();
    let mut out = Vec::with_capacity(n);
    for r in results {
        match r.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(Ok(v)) => out.push(v),
            Some(Err(e)) => return Err(e),
            None => {}
        }
    }
    if out.len() != n {
        return Err(Error::Config("a job did not run".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    fn peak(client: Option<&Client>, max: usize, jobs: usize) -> usize {
        let now = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let list: Vec<Job<'_, usize>> = (0..jobs)
            .map(|i| {
                let (now, peak) = (&now, &peak);
                Box::new(move || {
                    let c = now.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(c, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(60));
                    now.fetch_sub(1, Ordering::SeqCst);
                    Ok(i)
                }) as Job<'_, usize>
            })
            .collect();
        let mut seen = 0;
        let out = run(list, client, max, &mut |_| seen += 1).unwrap();
        assert_eq!(seen, jobs, "on_done sees every finished job");
        assert_eq!(out, (0..jobs).collect::<Vec<_>>());
        peak.load(Ordering::SeqCst)
    }

    #[test]
    fn tokens_bound_concurrency() {
        assert_eq!(peak(None, 8, 4), 1);
        let two = Client::new(1).unwrap(); // 1 token + the implicit one
        assert_eq!(peak(Some(&two), 8, 6), 2);
        let four = Client::new(3).unwrap();
        assert_eq!(peak(Some(&four), 2, 6), 2, "OFFLOAD_BUILD_MAX_JOBS caps");
    }

    #[test]
    fn a_job_starts_after_the_one_it_waits_for() {
        let log = Mutex::new(Vec::new());
        let list: Vec<Job<'_, usize>> = (0..4usize)
            .map(|i| {
                let log = &log;
                Box::new(move || {
                    if i == 0 {
                        std::thread::sleep(Duration::from_millis(80));
                    }
                    log.lock().unwrap().push(i);
                    Ok(i)
                }) as Job<'_, usize>
            })
            .collect();
        let four = Client::new(3).unwrap();
        // Jobs 2 and 3 wait for job 0; job 1 need not.
        let after = [None, None, Some(0), Some(0)];
        let out = run_after(list, &after, Some(&four), 4, &mut |_| {}).unwrap();
        assert_eq!(out, vec![0, 1, 2, 3]);
        let log = log.into_inner().unwrap();
        let at = |j| log.iter().position(|&x| x == j).unwrap();
        assert!(at(0) < at(2) && at(0) < at(3), "{log:?}");
    }

    #[test]
    fn a_gated_job_starts_only_once_the_jobs_of_its_gate_started() {
        let log = Mutex::new(Vec::new());
        let list: Vec<Job<'_, usize>> = (0..3usize)
            .map(|i| {
                let log = &log;
                Box::new(move || {
                    log.lock().unwrap().push(i);
                    std::thread::sleep(Duration::from_millis(if i == 0 { 120 } else { 20 }));
                    Ok(i)
                }) as Job<'_, usize>
            })
            .collect();
        // Job 1 waits for job 0 to end; job 2, ready at once, is gated on job 1's start: with
        // two slots it does not take the second one while job 1 cannot start.
        let two = Client::new(1).unwrap();
        let (after, gate) = ([None, Some(0), None], [vec![], vec![], vec![1]]);
        let out = run_gated(list, &after, &gate, Some(&two), 2, &mut |_| {}).unwrap();
        assert_eq!(out, vec![0, 1, 2]);
        assert_eq!(log.into_inner().unwrap(), vec![0, 1, 2]);
    }

    #[test]
    fn first_error_in_job_order_and_no_new_jobs_after_it() {
        let started = AtomicUsize::new(0);
        let list: Vec<Job<'_, ()>> = (0..5)
            .map(|i| {
                let started = &started;
                Box::new(move || {
                    started.fetch_add(1, Ordering::SeqCst);
                    if i == 1 {
                        Err(Error::Config(format!("job {i}")))
                    } else {
                        Ok(())
                    }
                }) as Job<'_, ()>
            })
            .collect();
        let e = run(list, None, 1, &mut |_| {}).unwrap_err();
        assert_eq!(e.to_string(), "job 1");
        assert_eq!(started.load(Ordering::SeqCst), 2);
    }
}
