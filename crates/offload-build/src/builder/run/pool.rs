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
//! order, one that is not [`Error::Stopped`] first) is returned.
//!
//! A job may hand its slot on halfway ([`yield_slot`]): the jobs waiting to start take it
//! first, then the jobs that asked for more slots ([`lend`]), and the job goes on after
//! them, those with the most work left first; after a failure it is told to stop. A job
//! that waits on another job's output must not wait on one that handed its slot on (with one
//! slot nothing would move): today only nvcc compiles hand theirs on, and nothing waits on
//! them.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use jobserver::{Acquired, Client};

use crate::builder::error::Error;

/// One job: runs on its own thread.
pub(crate) type Job<'a, T> = Box<dyn FnOnce() -> Result<T, Error> + Send + 'a>;

enum Event {
    Token(std::io::Result<Acquired>),
    /// A job finished: its index, whether it failed, and the slot it held (`Some(None)`: the
    /// implicit one; `None`: none, when it was told to stop while it waited for one).
    Done(usize, bool, Option<Option<Acquired>>),
    /// A job handed its slot on ([`yield_slot`]): the token it held, where to send the one it
    /// goes on with, and how much work it has left.
    Yield(Option<Acquired>, mpsc::Sender<Resume>, u64),
    /// A job asks for one more slot ([`lend`]), to be sent there.
    Want(mpsc::Sender<Loan>),
    /// A lent slot came back.
    Return(Option<Acquired>),
}

/// What a job that handed its slot on gets back: the slot it goes on with, or word to stop
/// (a job failed meanwhile).
type Resume = Result<Option<Acquired>, Stop>;

/// Word to a job that handed its slot on that the build stops (a job failed).
struct Stop;

/// The slot the job of this thread holds: the pool's channel and its slot (`None` while it
/// holds none), and how long it waited for a slot after handing one on.
struct Held {
    tx: mpsc::Sender<Event>,
    slot: Option<Option<Acquired>>,
    waited: Duration,
}

thread_local! {
    static HELD: RefCell<Option<Held>> = const { RefCell::new(None) };
}

/// A slot lent to a job for more of its work at once ([`lend`]): back to the pool when
/// dropped.
pub(crate) struct Loan {
    tx: mpsc::Sender<Event>,
    slot: Option<Option<Acquired>>,
}

impl Drop for Loan {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            let _ = self.tx.send(Event::Return(slot));
        }
    }
}

/// Asks the pool of the job on this thread for up to `n` more slots, each lent when one is
/// free that no job waiting to start can take, before the jobs waiting to go on
/// ([`yield_slot`]) get it: a job whose parts can run at once (an nvcc compile's chains)
/// fills a core that would idle at the end of the build. The slots come on the channel;
/// dropping it says no more are wanted (one on its way goes back). `None` outside a pool job.
///
/// A slot may never come (every other job runs to its end, or one failed): wait on the
/// channel with a timeout, and drop it before [`yield_slot`] (else the job's own slot may be
/// lent to it while it waits).
///
/// ```ignore
/// if let Some(loans) = lend(1) {
///     if let Ok(loan) = loans.recv_timeout(Duration::from_millis(20)) { run_another_part(); drop(loan); }
/// }
/// ```
pub(crate) fn lend(n: usize) -> Option<mpsc::Receiver<Loan>> {
    HELD.with(|h| {
        let h = h.borrow();
        let held = h.as_ref()?;
        let (tx, rx) = mpsc::channel();
        for _ in 0..n {
            held.tx.send(Event::Want(tx.clone())).ok()?;
        }
        Some(rx)
    })
}

/// Hands the slot of the pool job running on this thread to the jobs still waiting to start,
/// and waits until a slot is free that none of them can take: a job whose rest matters less
/// than starting the others (an nvcc compile's host compile, which nothing else waits for,
/// after its device code) lets them fill the cores first, so that fewer cores idle at the
/// end of the build. The jobs that asked for more slots ([`lend`]) go before it, and of the
/// jobs waiting to go on, the one with the most work left (`weight`, in any unit the jobs
/// share) first; once as many wait as twice the slots, they go on before new jobs start.
/// `false` when a job failed meanwhile: the job should stop. Outside a pool job, `true` at
/// once.
///
/// ```ignore
/// let jobs: Vec<Job<'_, ()>> = vec![Box::new(|| {
///     first_half();
///     if !yield_slot(1) { return Err(Error::Stopped); }
///     second_half();
///     Ok(())
/// })];
/// ```
pub(crate) fn yield_slot(weight: u64) -> bool {
    let Some(mut held) = HELD.with(|h| h.borrow_mut().take()) else {
        return true;
    };
    let Some(slot) = held.slot.take() else {
        HELD.with(|h| *h.borrow_mut() = Some(held));
        return false;
    };
    let since = Instant::now();
    let (back, resume) = mpsc::channel();
    let mut go_on = true;
    if held.tx.send(Event::Yield(slot, back, weight)).is_ok() {
        // The pool answers every job that handed its slot on before it ends.
        match resume.recv() {
            Ok(Ok(slot)) => held.slot = Some(slot),
            Ok(Err(Stop)) | Err(_) => go_on = false,
        }
    }
    held.waited += since.elapsed();
    HELD.with(|h| *h.borrow_mut() = Some(held));
    go_on
}

/// How long the pool job running on this thread waited for a slot after handing its own on
/// ([`yield_slot`]): not time it worked (its timeout and its recorded time leave it out).
/// Zero on any other thread.
pub(crate) fn waited() -> Duration {
    HELD.with(|h| h.borrow().as_ref().map_or(Duration::ZERO, |h| h.waited))
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
        let mut slots = Slots::new(max);
        let mut failed = false;
        let results = &results;
        let spawn = |idx: usize, job: Job<'a, T>, token: Option<Acquired>| {
            let tx = tx.clone();
            s.spawn(move || {
                let held = Held {
                    tx: tx.clone(),
                    slot: Some(token),
                    waited: Duration::ZERO,
                };
                HELD.with(|h| *h.borrow_mut() = Some(held));
                let r = job();
                let slot = HELD.with(|h| h.borrow_mut().take()).and_then(|h| h.slot);
                let failed = r.is_err();
                *results[idx].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                let _ = tx.send(Event::Done(idx, failed, slot));
            });
        };
        loop {
            slots.hand_out(&mut queue, failed, &tx, spawn);
            let wanted = if failed {
                0
            } else {
                queue.ready() + slots.wanting.len()
            } + slots.waiting.len();
            slots.ask(helper.as_ref(), wanted);
            // Nothing running and nothing waiting: done (a job left waiting is an error below).
            if slots.running == 0 && slots.waiting.is_empty() {
                break;
            }
            match rx.recv() {
                Ok(Event::Done(idx, job_failed, slot)) => {
                    slots.running -= 1;
                    queue.finished[idx] = true;
                    if let Some(Ok(v)) = &*results[idx].lock().unwrap_or_else(|e| e.into_inner()) {
                        on_done(v);
                    }
                    if let Some(slot) = slot {
                        slots.give_back(slot);
                    }
                    failed |= job_failed;
                }
                Ok(event) => slots.on(event),
                Err(_) => break,
            }
        }
    });
    drop(helper);
    in_job_order(results)
}

/// The slots a pool holds and who holds them.
struct Slots {
    /// Whether the implicit slot (the token the process holds) is free.
    implicit_free: bool,
    /// Tokens from the jobserver held and not in use.
    spare: Vec<Acquired>,
    /// Jobs holding a slot.
    running: usize,
    /// Tokens asked for and not come yet.
    requested: usize,
    /// Jobs that handed their slot on ([`yield_slot`]), the next to go on first: where to
    /// send the slot each goes on with, and how much work it has left.
    waiting: VecDeque<(mpsc::Sender<Resume>, u64)>,
    /// Where to send each slot a running job asked for ([`lend`]), first first.
    wanting: VecDeque<mpsc::Sender<Loan>>,
    max: usize,
}

impl Slots {
    fn new(max: usize) -> Slots {
        Slots {
            implicit_free: true,
            spare: Vec::new(),
            running: 0,
            requested: 0,
            waiting: VecDeque::new(),
            wanting: VecDeque::new(),
            max,
        }
    }

    /// The free slots handed out: to the jobs of `queue` ready to start (by `spawn`), then
    /// to those that want more, then to those that handed theirs on (those first once as
    /// many wait as twice the slots, so that the jobs begun and not ended stay bounded). After
    /// a failure none starts and the jobs that handed their slot on are told to stop.
    fn hand_out<J>(
        &mut self,
        queue: &mut Queue<'_, J>,
        failed: bool,
        tx: &mpsc::Sender<Event>,
        spawn: impl Fn(usize, J, Option<Acquired>),
    ) {
        if failed {
            self.wanting.clear();
            while let Some((back, _)) = self.waiting.pop_front() {
                let _ = self.resume(&back, Err(Stop));
            }
        }
        while let Some(slot) = self.free() {
            let crowded = self.waiting.len() >= self.max.saturating_mul(2);
            let slot = if crowded { self.go_on(slot) } else { Err(slot) };
            let Err(slot) = slot else { continue };
            if let Some((i, job)) = (!failed).then(|| queue.take()).flatten() {
                self.running += 1;
                spawn(i, job, slot);
                continue;
            }
            if let Err(slot) = self.lend(slot, tx).or_else(|slot| self.go_on(slot)) {
                self.give_back(slot);
                return;
            }
        }
    }

    /// What an event other than a job's end changes.
    fn on(&mut self, event: Event) {
        match event {
            Event::Token(t) => {
                self.requested = self.requested.saturating_sub(1);
                if let Ok(t) = t {
                    self.spare.push(t);
                }
            }
            Event::Yield(token, back, weight) => {
                self.running -= 1;
                self.give_back(token);
                // After those with more work left, before those with as much.
                let at = self.waiting.partition_point(|&(_, w)| w >= weight);
                self.waiting.insert(at, (back, weight));
            }
            Event::Want(to) => self.wanting.push_back(to),
            Event::Return(slot) => {
                self.running -= 1;
                self.give_back(slot);
            }
            Event::Done(..) => {}
        }
    }

    /// A free slot taken (`Some(None)`: the implicit one), while fewer than `max` run.
    fn free(&mut self) -> Option<Option<Acquired>> {
        if self.running >= self.max {
            return None;
        }
        if std::mem::take(&mut self.implicit_free) {
            return Some(None);
        }
        self.spare.pop().map(Some)
    }

    /// A slot no longer used.
    fn give_back(&mut self, slot: Option<Acquired>) {
        match slot {
            None => self.implicit_free = true,
            Some(t) => self.spare.push(t),
        }
    }

    /// `slot` lent to the first job that wants one and still listens; back when none does.
    fn lend(
        &mut self,
        slot: Option<Acquired>,
        tx: &mpsc::Sender<Event>,
    ) -> Result<(), Option<Acquired>> {
        let mut slot = Some(slot);
        while let Some(to) = self.wanting.pop_front() {
            let loan = Loan {
                tx: tx.clone(),
                slot: slot.take(),
            };
            self.running += 1;
            match to.send(loan) {
                Ok(()) => return Ok(()),
                Err(mpsc::SendError(mut loan)) => {
                    self.running -= 1;
                    slot = loan.slot.take();
                }
            }
        }
        Err(slot.flatten())
    }

    /// `slot` given to the first job waiting to go on; back when none waits.
    fn go_on(&mut self, slot: Option<Acquired>) -> Result<(), Option<Acquired>> {
        let Some((back, _)) = self.waiting.pop_front() else {
            return Err(slot);
        };
        // What comes back is what was sent: `Ok(slot)`.
        self.resume(&back, Ok(slot)).map_err(|r| r.unwrap_or(None))
    }

    /// `r` sent to a job that handed its slot on, which counts as running again (it goes on
    /// or stops, and its `Done` comes as any job's); `r` back when the job is gone. A job
    /// waits in `recv` until it gets its answer, so the send fails only if it ended.
    fn resume(&mut self, back: &mpsc::Sender<Resume>, r: Resume) -> Result<(), Resume> {
        self.running += 1;
        back.send(r).map_err(|mpsc::SendError(r)| {
            self.running -= 1;
            r
        })
    }

    /// Asks the jobserver for what `wanted` jobs need beyond the slots held; spare tokens
    /// that nothing wants go back.
    fn ask(&mut self, helper: Option<&jobserver::HelperThread>, wanted: usize) {
        if wanted == 0 {
            self.spare.clear();
        }
        let Some(h) = helper else {
            return;
        };
        while self.requested < wanted && self.running + self.requested < self.max {
            h.request_token();
            self.requested += 1;
        }
    }
}

/// The jobserver's helper thread, sending each token it gets to `tx`.
fn token_helper(c: &Client, tx: mpsc::Sender<Event>) -> Option<jobserver::HelperThread> {
    c.clone()
        .into_helper_thread(move |t| {
            let _ = tx.send(Event::Token(t));
        })
        .ok()
}

/// The results in job order; the first error in job order (one that is not
/// [`Error::Stopped`], which follows another's failure or a cancel, first), or an error when
/// a job did not run.
fn in_job_order<T>(results: Vec<Mutex<Option<Result<T, Error>>>>) -> Result<Vec<T>, Error> {
    let n = results.len();
    let mut out = Vec::with_capacity(n);
    let mut stopped = None;
    for r in results {
        match r.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(Ok(v)) => out.push(v),
            Some(Err(Error::Stopped)) => stopped = Some(Error::Stopped),
            Some(Err(e)) => return Err(e),
            None => {}
        }
    }
    if let Some(e) = stopped {
        return Err(e);
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

    /// The most of `jobs` that ran at once; each runs in `halves` parts, handing its slot on
    /// between them.
    fn peak_of(client: Option<&Client>, max: usize, jobs: usize, halves: usize) -> usize {
        let now = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let list: Vec<Job<'_, usize>> = (0..jobs)
            .map(|i| {
                let (now, peak) = (&now, &peak);
                Box::new(move || {
                    for half in 0..halves {
                        if half > 0 {
                            yield_slot(i as u64);
                        }
                        let c = now.fetch_add(1, Ordering::SeqCst) + 1;
                        peak.fetch_max(c, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(60 / halves as u64));
                        now.fetch_sub(1, Ordering::SeqCst);
                    }
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

    fn peak(client: Option<&Client>, max: usize, jobs: usize) -> usize {
        peak_of(client, max, jobs, 1)
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
    fn a_job_that_yields_goes_on_after_the_jobs_to_start_the_heaviest_first() {
        let log = Mutex::new(Vec::new());
        let list: Vec<Job<'_, usize>> = (0..3usize)
            .map(|i| {
                let log = &log;
                Box::new(move || {
                    log.lock().unwrap().push(format!("{i}a"));
                    if i < 2 {
                        yield_slot([5, 9][i]);
                        log.lock().unwrap().push(format!("{i}b"));
                    }
                    Ok(i)
                }) as Job<'_, usize>
            })
            .collect();
        // One slot: jobs 0 and 1 hand it on; job 2 starts; then job 1, which has more left.
        let out = run(list, None, 4, &mut |_| {}).unwrap();
        assert_eq!(out, vec![0, 1, 2]);
        assert_eq!(log.into_inner().unwrap(), ["0a", "1a", "2a", "1b", "0b"]);
        // Four slots from the jobserver, two allowed: never more than two at once.
        assert_eq!(peak_of(Some(&Client::new(3).unwrap()), 2, 6, 2), 2);
        // Outside a pool it returns at once.
        assert!(yield_slot(1));
        assert_eq!(waited(), Duration::ZERO);
    }

    #[test]
    fn a_free_slot_is_lent_before_a_job_that_yielded_goes_on() {
        let log = Mutex::new(Vec::new());
        let say = |m: &str| log.lock().unwrap().push(m.to_string());
        let list: Vec<Job<'_, usize>> = vec![
            Box::new(|| {
                std::thread::sleep(Duration::from_millis(60));
                yield_slot(1);
                say("0 goes on");
                Ok(0)
            }),
            Box::new(|| {
                let loans = lend(1).expect("in a pool job");
                let loan = loans.recv_timeout(Duration::from_secs(10)).unwrap();
                say("1 lent");
                drop(loan);
                std::thread::sleep(Duration::from_millis(30));
                Ok(1)
            }),
        ];
        // Two slots: job 0 hands its slot on while job 1 wants one more; job 1 gets it first.
        let two = Client::new(1).unwrap();
        let out = run(list, Some(&two), 2, &mut |_| {}).unwrap();
        assert_eq!(out, vec![0, 1]);
        assert_eq!(log.into_inner().unwrap(), ["1 lent", "0 goes on"]);
        assert!(lend(1).is_none(), "outside a pool");
    }

    /// `run` of `jobs` on another thread: its result, or `None` when it did not end within
    /// 10 s (a pool that hangs fails the test instead of hanging it).
    fn within_10s<T: Send + 'static>(
        jobs: impl FnOnce() -> Vec<Job<'static, T>> + Send + 'static,
        max: usize,
    ) -> Option<Result<Vec<T>, Error>> {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let client = Client::new(max - 1).unwrap();
            let _ = tx.send(run(jobs(), Some(&client), max, &mut |_| {}));
        });
        rx.recv_timeout(Duration::from_secs(10)).ok()
    }

    #[test]
    fn jobs_waiting_after_handing_their_slot_on_stop_when_one_fails() {
        static GONE_ON: AtomicUsize = AtomicUsize::new(0);
        let jobs = || {
            (0..3usize)
                .map(|i| {
                    Box::new(move || {
                        if i == 1 {
                            return Err(Error::Config("job 1".into()));
                        }
                        if !yield_slot(1) {
                            return Err(Error::Stopped);
                        }
                        GONE_ON.fetch_add(1, Ordering::SeqCst);
                        Ok(i)
                    }) as Job<'static, usize>
                })
                .collect()
        };
        // One slot: job 0 hands it on, job 1 fails; job 0 is told to stop, job 2 never
        // starts, and the error is job 1's, not job 0's stop before it.
        let out = within_10s(jobs, 1).expect("the pool ends");
        assert_eq!(out.unwrap_err().to_string(), "job 1");
        assert_eq!(GONE_ON.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_loan_on_its_way_when_its_job_stops_listening_comes_back() {
        let jobs = || {
            vec![
                Box::new(|| {
                    let loans = lend(1).expect("in a pool job");
                    // Job 1 ends meanwhile: its slot is lent here, and never taken.
                    std::thread::sleep(Duration::from_millis(150));
                    drop(loans);
                    Ok(0usize)
                }) as Job<'static, usize>,
                Box::new(|| {
                    std::thread::sleep(Duration::from_millis(20));
                    Ok(1)
                }),
            ]
        };
        // Two slots: job 1's, once it ends, is lent to job 0, which never takes it; the pool
        // ends only if it comes back.
        let out = within_10s(jobs, 2).expect("the pool ends");
        assert_eq!(out.unwrap(), vec![0, 1]);
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
