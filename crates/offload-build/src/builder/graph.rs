//! The job graph's executor: runs a build's nodes ([`Node`]: a compile, a PCH, a device link,
//! one of nvcc's steps, a pack, a host compile) each on a thread of its own, as many at once
//! as job slots and memory allow.
//!
//! **Slots.** A build script holds one job token implicitly (Cargo acquired it to run the
//! script); every further node that runs at once needs a token from the jobserver Cargo passes
//! in `CARGO_MAKEFLAGS` (asked for through the `jobserver` crate's helper thread, so that
//! waiting for one never keeps finished nodes from being reaped). `OFFLOAD_BUILD_MAX_JOBS`
//! caps them further. A running node holds its slot as a value ([`Slot`]), given back when
//! the node ends, as cc-rs holds its tokens.
//!
//! **Order.** Of the nodes whose inputs are done (`after`) and whose gate started (`gate`: a
//! node that waits, holding its slot, for what those make), the one with the longest way to
//! the build's end starts first: its own expected time and that of the longest chain of nodes
//! after it (each node's time as it last ran, kept with its record).
//!
//! **Memory.** A node starts while the memory the running nodes are expected to need, and its
//! own, fit the build's budget ([`crate::builder::memory`]); a node alone always starts.
//! When the first node in that order does not fit, smaller ones may start beside the running
//! ones, unless it needs more than the budget: then nothing starts until it can run alone.
//! What each node's processes held at their peak is kept with its record for the next build,
//! and a node without a record of its own expects what the nodes of its class measured.
//! A node whose process the kernel killed for lack of memory asks to run again alone
//! ([`Slot::alone`]): no node starts until it is alone, optional nodes ([`Node::optional`],
//! which wait on others while they hold a slot) are told to stop, and it goes on.
//!
//! **Failures.** After the first failure no new node starts; running ones finish, and the
//! first error in node order (one that is not [`Error::Stopped`] first) is returned.
//!
//! **A build farm.** A node that may run on a build farm ([`Node::remote`]: a compile under
//! sccache with a scheduler) takes one of the farm's slots when one is free, without a local
//! token and without counting against the memory budget: the local limits are for local work.
//! When the farm's slots are taken it waits for a local slot as any node does. How many slots
//! the farm has is asked once, when the first remote node is ready (a build that runs none
//! asks nothing).
//!
//! A running node may add nodes ([`Slot::add`]): what it found out it has to do (nvcc's
//! steps, once nvcc printed them).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use jobserver::{Acquired, Client};

use crate::builder::error::Error;
use crate::builder::memory::{Budget, Meter, Need, NeedFrom, with_margin};

/// What a node runs, on a thread of its own, given its slot.
pub(crate) type Work<'a, T> =
    Box<dyn for<'x> FnOnce(&Slot<'x, 'a, T>) -> Result<T, Error> + Send + 'a>;

/// One node of the job graph.
pub(crate) struct Node<'a, T> {
    /// What it runs.
    pub work: Work<'a, T>,
    /// The nodes that must have finished before it starts.
    pub after: Vec<usize>,
    /// The nodes that must have started before it starts.
    pub gate: Vec<usize>,
    /// How long it is expected to take, in milliseconds (its last run's time).
    pub ms: u64,
    /// The memory it is expected to need.
    pub need: Need,
    /// Nodes of one class (one kind of job of one compiler) expect, without a record of their
    /// own, the most one of them measured.
    pub class: u32,
    /// Whether it may be told to stop ([`Slot::should_stop`]) when a node must run alone: work
    /// the build can do without, which waits on other nodes while it holds its slot.
    pub optional: bool,
    /// Where its time and peak memory are kept when it succeeds (`<ms> <bytes>`).
    pub stats: Option<PathBuf>,
    /// What it is, for messages (`k.hip for gfx90a`).
    pub label: String,
    /// Whether it may run on a build farm: it then takes a farm slot when one is free.
    pub remote: bool,
}

impl<'a, T> Node<'a, T> {
    /// A node running `work`, after nothing, expected to take `ms` and need `need`.
    pub(crate) fn new(label: impl Into<String>, need: Need, work: Work<'a, T>) -> Node<'a, T> {
        Node {
            work,
            after: Vec::new(),
            gate: Vec::new(),
            ms: 0,
            need,
            class: 0,
            optional: false,
            stats: None,
            label: label.into(),
            remote: false,
        }
    }
}

/// What the executor tells its caller besides finished results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Note {
    /// Nodes are ready and a slot is free, but the first of them waits for memory.
    WaitsForMemory {
        label: String,
        need: Need,
        /// Bytes the running nodes are expected to need.
        in_use: u64,
        budget: u64,
    },
    /// The node was killed for lack of memory (its peak so far) and runs again alone.
    RunsAlone { label: String, peak: u64 },
    /// The build ended with a build farm's `slots`: at `most`, this many nodes ran there at
    /// once.
    Farm { slots: usize, most: usize },
}

/// Nodes added while running: by whom, from which index on.
type Added<'a, T> = Vec<(usize, usize, Vec<Node<'a, T>>)>;

/// What the running nodes share with the executor: the nodes they add, and their results.
struct Shared<'a, T> {
    added: Mutex<Added<'a, T>>,
    results: Mutex<BTreeMap<usize, Result<T, Error>>>,
    next: AtomicUsize,
    stop: AtomicBool,
}

/// The job slot a running node holds, given back when it ends: a jobserver token (or the
/// process's implicit one) and the memory it was expected to need.
pub(crate) struct Slot<'x, 'a, T> {
    index: usize,
    tx: mpsc::Sender<Event>,
    shared: &'x Shared<'a, T>,
    /// The highest peak of the node's processes so far.
    peak: AtomicU64,
    /// Time the node spent waiting to run alone (not its own time).
    waited: Mutex<Duration>,
    budget: Option<&'x Budget>,
    /// Whether another node ran beside this one since it started.
    crowded: Arc<AtomicBool>,
}

impl<'a, T> Slot<'_, 'a, T> {
    /// Records the peak memory of one of the node's processes (bytes).
    pub(crate) fn peak(&self, bytes: u64) {
        self.peak.fetch_max(bytes, Ordering::Relaxed);
    }

    /// The highest peak recorded so far.
    pub(crate) fn peak_so_far(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }

    /// Whether an optional node should stop: a node must run alone.
    pub(crate) fn should_stop(&self) -> bool {
        self.shared.stop.load(Ordering::SeqCst)
    }

    /// How long the node waited to run alone.
    pub(crate) fn waited(&self) -> Duration {
        *self.waited.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until this node is the only one that runs (the others ended, or wait for the
    /// same), optional nodes told to stop; no other node starts until the guard is dropped.
    /// `peak`: what its processes held when they were killed, for the message.
    pub(crate) fn alone(&self, label: &str, peak: u64) -> Alone<'_> {
        let since = Instant::now();
        let (back, wait) = mpsc::channel();
        let note = Note::RunsAlone {
            label: label.to_string(),
            peak,
        };
        if self.tx.send(Event::Alone(self.index, back, note)).is_ok() {
            let _ = wait.recv();
        }
        *self.waited.lock().unwrap_or_else(|e| e.into_inner()) += since.elapsed();
        Alone(&self.tx, self.index)
    }

    /// Adds `n` nodes to the graph, part of this one: the nodes after this one start only once
    /// they all finished too. `make` gets the index the first of them will have (their `after`
    /// and `gate` name nodes by index, theirs included).
    pub(crate) fn add(&self, n: usize, make: impl FnOnce(usize) -> Vec<Node<'a, T>>) {
        let base = self.shared.next.fetch_add(n, Ordering::SeqCst);
        let nodes = make(base);
        debug_assert_eq!(nodes.len(), n);
        lock(&self.shared.added).push((self.index, base, nodes));
        let _ = self.tx.send(Event::Added);
    }
}

impl<T: Send> Meter for Slot<'_, '_, T> {
    fn peak(&self, bytes: u64) {
        Slot::peak(self, bytes);
    }
    fn peak_so_far(&self) -> u64 {
        Slot::peak_so_far(self)
    }
    fn alone(&self, label: &str, peak: u64) -> Option<Box<dyn Send + '_>> {
        if !self.crowded.load(Ordering::SeqCst) {
            return None;
        }
        Some(Box::new(Slot::alone(self, label, peak)))
    }
    fn budget(&self) -> Option<&Budget> {
        self.budget
    }
}

/// A node running alone ([`Slot::alone`]) until dropped.
pub(crate) struct Alone<'s>(&'s mpsc::Sender<Event>, usize);

impl Drop for Alone<'_> {
    fn drop(&mut self) {
        let _ = self.0.send(Event::AloneDone(self.1));
    }
}

fn lock<X>(m: &Mutex<X>) -> std::sync::MutexGuard<'_, X> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

enum Event {
    Token(std::io::Result<Acquired>),
    /// A node ended (its result is in [`Shared::results`]): its index, time (ms, waits left
    /// out) and peak (bytes).
    Done(usize, u64, u64),
    /// A node asks to run alone; answered on the channel once it does.
    Alone(usize, mpsc::Sender<()>, Note),
    AloneDone(usize),
    /// Nodes were added ([`Shared::added`]).
    Added,
}

/// The slot a running node holds.
enum Held {
    /// The process's implicit job token.
    Implicit,
    /// A token of the jobserver.
    Token(Acquired),
    /// One of the build farm's slots.
    Farm,
}

/// Where a node is.
enum State<'a, T> {
    /// Not known yet (an index a running node reserved).
    Reserved,
    Pending(Node<'a, T>),
    /// Started, holding this slot and this much memory; whether another node ran beside it.
    Running(Held, u64, Arc<AtomicBool>),
    /// Ended, with nodes it added still to finish.
    Expanded,
    Finished,
}

/// What the executor keeps of each node besides its state.
struct Info {
    after: Vec<usize>,
    gate: Vec<usize>,
    ms: u64,
    need: Need,
    class: u32,
    optional: bool,
    stats: Option<PathBuf>,
    label: String,
    remote: bool,
    /// The expected time from its start to the build's end (its own and the longest chain
    /// after it).
    rank: u64,
}

/// The executor's state.
struct Exec<'a, T> {
    states: Vec<State<'a, T>>,
    info: Vec<Option<Info>>,
    results: Vec<Option<Result<T, Error>>>,
    started: Vec<bool>,
    /// The implicit slot is free.
    implicit_free: bool,
    spare: Vec<Acquired>,
    running: usize,
    requested: usize,
    max: usize,
    /// The build farm's slots (`None` until a remote node was ready), and how many of them
    /// running nodes hold.
    farm: Option<usize>,
    on_farm: usize,
    /// The most nodes that held farm slots at once.
    farm_peak: usize,
    budget: Option<u64>,
    /// Memory the running nodes are expected to need.
    in_use: u64,
    /// The most each class measured.
    class_peak: BTreeMap<u32, u64>,
    /// Nodes waiting to run alone, first first, and where to tell each.
    alone_queue: Vec<(usize, mpsc::Sender<()>)>,
    /// The node running alone now.
    alone_now: Option<usize>,
    failed: bool,
    /// The node last reported waiting for memory (reported once).
    told_waiting: Option<usize>,
    /// The node that added each added node.
    parent: BTreeMap<usize, usize>,
    /// How many nodes each node added that have not finished.
    children: BTreeMap<usize, usize>,
}

/// Runs `nodes` with at most `max` at once, one jobserver token per node beyond the first,
/// within `budget`, and besides them as many remote nodes on a build farm as `farm` says
/// (asked once, when the first remote node is ready: a build that runs none asks nothing).
/// Results come
/// back in node order (the nodes added while running after the others); `on_done` sees each
/// successful result as it finishes and `on_note` what the executor tells, both on the
/// calling thread.
pub(crate) fn run<'a, T: Send + 'a>(
    nodes: Vec<Node<'a, T>>,
    client: Option<&Client>,
    (max, farm): (usize, &dyn Fn() -> usize),
    budget: Option<&Budget>,
    on_done: &mut dyn FnMut(&T),
    on_note: &mut dyn FnMut(Note),
) -> Result<Vec<T>, Error> {
    let max = max.max(1);
    let (tx, rx) = mpsc::channel::<Event>();
    let helper = client
        .filter(|_| max > 1)
        .and_then(|c| token_helper(c, tx.clone()));
    let shared = Shared {
        added: Mutex::new(Vec::new()),
        results: Mutex::new(BTreeMap::new()),
        next: AtomicUsize::new(nodes.len()),
        stop: AtomicBool::new(false),
    };
    let shared = &shared;
    let mut ex = Exec::new(max, budget.map(|b| b.bytes));
    ex.add(0, nodes);
    std::thread::scope(|s| {
        loop {
            while let Some((i, (work, need), token)) = ex.next_to_start(farm, on_note) {
                let crowded = ex.crowd();
                let slot = Slot {
                    index: i,
                    tx: tx.clone(),
                    shared,
                    peak: AtomicU64::new(0),
                    waited: Mutex::new(Duration::ZERO),
                    budget,
                    crowded: crowded.clone(),
                };
                ex.states[i] = State::Running(token, need, crowded);
                s.spawn(move || {
                    let start = Instant::now();
                    let r = work(&slot);
                    let ms = start.elapsed().saturating_sub(slot.waited()).as_millis() as u64;
                    lock(&shared.results).insert(i, r);
                    let _ = slot.tx.send(Event::Done(i, ms, slot.peak_so_far()));
                });
            }
            shared.stop.store(ex.stopping(), Ordering::SeqCst);
            ex.answer_alone();
            let wanted = ex.wanted();
            ex.ask(helper.as_ref(), wanted);
            if ex.running == 0 && !ex.any_pending_startable() {
                break;
            }
            match rx.recv() {
                Ok(event) => ex.on(event, shared, on_done, on_note),
                Err(_) => break,
            }
        }
    });
    drop(helper);
    if let Some(slots) = ex.farm.filter(|&n| n > 0) {
        on_note(Note::Farm {
            slots,
            most: ex.farm_peak,
        });
    }
    ex.into_results()
}

impl<'a, T> Exec<'a, T> {
    fn new(max: usize, budget: Option<u64>) -> Exec<'a, T> {
        Exec {
            states: Vec::new(),
            info: Vec::new(),
            results: Vec::new(),
            started: Vec::new(),
            implicit_free: true,
            spare: Vec::new(),
            running: 0,
            requested: 0,
            max,
            farm: None,
            on_farm: 0,
            farm_peak: 0,
            budget,
            in_use: 0,
            class_peak: BTreeMap::new(),
            alone_queue: Vec::new(),
            alone_now: None,
            failed: false,
            told_waiting: None,
            parent: BTreeMap::new(),
            children: BTreeMap::new(),
        }
    }

    /// A node starts: every running node now ran beside another; the new one's flag, set
    /// when others run.
    fn crowd(&self) -> Arc<AtomicBool> {
        for st in &self.states {
            if let State::Running(_, _, c) = st {
                c.store(true, Ordering::SeqCst);
            }
        }
        Arc::new(AtomicBool::new(self.running > 1))
    }

    /// What an event changes: a node ended, a token came, a node asks to run alone or ran
    /// alone, nodes were added.
    fn on(
        &mut self,
        event: Event,
        shared: &Shared<'a, T>,
        on_done: &mut dyn FnMut(&T),
        on_note: &mut dyn FnMut(Note),
    ) {
        match event {
            Event::Done(i, ms, peak) => {
                let r = lock(&shared.results).remove(&i);
                let r = r.unwrap_or_else(|| Err(Error::Config("a job did not run".into())));
                if let Ok(v) = &r {
                    on_done(v);
                }
                self.finish(i, r, ms, peak);
            }
            Event::Token(t) => {
                self.requested = self.requested.saturating_sub(1);
                if let Ok(t) = t {
                    self.spare.push(t);
                }
            }
            Event::Alone(i, back, note) => {
                on_note(note);
                self.alone_queue.push((i, back));
            }
            Event::AloneDone(i) => {
                if self.alone_now == Some(i) {
                    self.alone_now = None;
                }
            }
            Event::Added => {
                let added = std::mem::take(&mut *lock(&shared.added));
                for (by, base, nodes) in added {
                    self.parent
                        .extend((base..base + nodes.len()).map(|c| (c, by)));
                    *self.children.entry(by).or_default() += nodes.len();
                    self.add(base, nodes);
                }
            }
        }
    }

    /// Places `nodes` from index `base` on and ranks every node again.
    fn add(&mut self, base: usize, nodes: Vec<Node<'a, T>>) {
        let end = base + nodes.len();
        while self.states.len() < end {
            self.states.push(State::Reserved);
            self.info.push(None);
            self.results.push(None);
            self.started.push(false);
        }
        for (k, mut n) in nodes.into_iter().enumerate() {
            if let Some(&p) = self.class_peak.get(&n.class) {
                learn(&mut n.need, p);
            }
            self.info[base + k] = Some(Info {
                after: std::mem::take(&mut n.after),
                gate: std::mem::take(&mut n.gate),
                ms: n.ms,
                need: n.need,
                class: n.class,
                optional: n.optional,
                stats: n.stats.take(),
                label: std::mem::take(&mut n.label),
                remote: n.remote,
                rank: 0,
            });
            self.states[base + k] = State::Pending(n);
        }
        self.rank();
    }

    /// Each node's rank: its time and the longest chain of nodes after it.
    fn rank(&mut self) {
        let n = self.info.len();
        let mut rank = vec![None::<u64>; n];
        let mut after_of: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, inf) in self.info.iter().enumerate() {
            for &d in inf.iter().flat_map(|x| &x.after) {
                if d < n {
                    after_of[d].push(i);
                }
            }
        }
        // Nodes only ever come after nodes of lower index, or nodes added later after those
        // added earlier: from the last to the first, every follower is ranked already.
        for i in (0..n).rev() {
            let own = self.info[i].as_ref().map_or(0, |x| x.ms);
            let tail = after_of[i]
                .iter()
                .filter_map(|&f| rank[f])
                .max()
                .unwrap_or(0);
            rank[i] = Some(own + tail);
        }
        for (inf, r) in self.info.iter_mut().zip(rank) {
            if let Some(inf) = inf {
                inf.rank = r.unwrap_or(0);
            }
        }
    }

    fn is_ready(&self, i: usize) -> bool {
        let Some(inf) = &self.info[i] else {
            return false;
        };
        let done = |d: &usize| matches!(self.states.get(*d), Some(State::Finished));
        let started = |g: &usize| self.started.get(*g).copied().unwrap_or(false);
        inf.after.iter().all(done) && inf.gate.iter().all(started)
    }

    /// The pending nodes that are ready, by rank (highest first), then index.
    fn ready(&self) -> Vec<usize> {
        let mut r: Vec<usize> = (0..self.states.len())
            .filter(|&i| matches!(self.states[i], State::Pending(_)) && self.is_ready(i))
            .collect();
        r.sort_by_key(|&i| {
            let inf = self.info[i].as_ref();
            (std::cmp::Reverse(inf.map_or(0, |x| x.rank)), i)
        });
        r
    }

    fn need_of(&self, i: usize) -> u64 {
        self.info[i].as_ref().map_or(0, |x| x.need.bytes)
    }

    fn is_remote(&self, i: usize) -> bool {
        self.info[i].as_ref().is_some_and(|x| x.remote)
    }

    /// The ready remote nodes that free farm slots take, best first.
    fn to_farm(&self, ready: &[usize]) -> Vec<usize> {
        let free = self.farm.unwrap_or(0).saturating_sub(self.on_farm);
        (ready.iter().copied())
            .filter(|&i| self.is_remote(i))
            .take(free)
            .collect()
    }

    /// Whether a node waits to run alone, or runs alone: then nothing else starts.
    fn stopping(&self) -> bool {
        !self.alone_queue.is_empty() || self.alone_now.is_some()
    }

    /// The next node to start and the slot it takes, if one can start now.
    #[allow(clippy::type_complexity)]
    fn next_to_start(
        &mut self,
        farm: &dyn Fn() -> usize,
        on_note: &mut dyn FnMut(Note),
    ) -> Option<(usize, (Work<'a, T>, u64), Held)> {
        if self.failed || self.stopping() {
            return None;
        }
        let ready = self.ready();
        // The farm's slots, asked once, when a remote node is first ready.
        if self.farm.is_none() && ready.iter().any(|&i| self.is_remote(i)) {
            self.farm = Some(farm());
        }
        // A remote node on a free farm slot: no local token, no local memory.
        if let Some(&i) = self.to_farm(&ready).first() {
            return self.start(i, Held::Farm, 0);
        }
        if self.running - self.on_farm >= self.max {
            return None;
        }
        let first = *ready.first()?;
        let fits = |ex: &Self, i: usize| {
            ex.running == ex.on_farm || ex.budget.is_none_or(|b| ex.in_use + ex.need_of(i) <= b)
        };
        let pick = if fits(self, first) {
            Some(first)
        } else if self.budget.is_some_and(|b| self.need_of(first) > b) {
            // It can only run alone: nothing else starts until it does.
            None
        } else {
            ready.iter().copied().find(|&i| fits(self, i))
        };
        // Memory, not a slot, keeps it: tokens are asked for only for the nodes that fit.
        if !fits(self, first) && self.told_waiting != Some(first) {
            self.told_waiting = Some(first);
            let inf = self.info[first].as_ref()?;
            on_note(Note::WaitsForMemory {
                label: inf.label.clone(),
                need: inf.need,
                in_use: self.in_use,
                budget: self.budget.unwrap_or(0),
            });
        }
        let i = pick?;
        let token = self.take_slot()?;
        let need = self.need_of(i);
        self.start(i, token, need)
    }

    /// Node `i` starts, holding `held` and expected to need `need` bytes.
    #[allow(clippy::type_complexity)]
    fn start(
        &mut self,
        i: usize,
        held: Held,
        need: u64,
    ) -> Option<(usize, (Work<'a, T>, u64), Held)> {
        let State::Pending(node) = std::mem::replace(&mut self.states[i], State::Reserved) else {
            unreachable!("a ready node is pending");
        };
        self.running += 1;
        self.on_farm += usize::from(matches!(held, Held::Farm));
        self.farm_peak = self.farm_peak.max(self.on_farm);
        self.in_use += need;
        self.started[i] = true;
        Some((i, (node.work, need), held))
    }

    /// A free local slot.
    fn take_slot(&mut self) -> Option<Held> {
        if std::mem::take(&mut self.implicit_free) {
            return Some(Held::Implicit);
        }
        self.spare.pop().map(Held::Token)
    }

    fn give_back(&mut self, slot: Held) {
        match slot {
            Held::Implicit => self.implicit_free = true,
            Held::Token(t) => self.spare.push(t),
            Held::Farm => self.on_farm -= 1,
        }
    }

    /// A node ended.
    fn finish(&mut self, i: usize, r: Result<T, Error>, ms: u64, peak: u64) {
        if let State::Running(token, need, _) =
            std::mem::replace(&mut self.states[i], State::Finished)
        {
            self.running -= 1;
            self.in_use = self.in_use.saturating_sub(need);
            self.give_back(token);
        }
        self.settle(i);
        if self.alone_now == Some(i) {
            self.alone_now = None;
        }
        self.alone_queue.retain(|(n, _)| *n != i);
        if let Some(inf) = &self.info[i] {
            if r.is_ok() {
                if let Some(path) = &inf.stats {
                    let _ =
                        crate::builder::fs::write_atomic(path, format!("{ms} {peak}\n").as_bytes());
                }
                if peak > 0 {
                    let class = inf.class;
                    let best = self.class_peak.entry(class).or_default();
                    *best = (*best).max(peak);
                    let best = *best;
                    for (j, other) in self.info.iter_mut().enumerate() {
                        match other {
                            Some(o)
                                if o.class == class
                                    && matches!(self.states[j], State::Pending(_)) =>
                            {
                                learn(&mut o.need, best)
                            }
                            _ => {}
                        }
                    }
                }
            }
        }
        self.failed |= r.is_err();
        self.results[i] = Some(r);
    }

    /// A node that ended counts as finished once the nodes it added did, and so, up the
    /// line, does the node that added it.
    fn settle(&mut self, i: usize) {
        let left = self.children.get(&i).copied().unwrap_or(0);
        self.states[i] = if left > 0 {
            State::Expanded
        } else {
            State::Finished
        };
        if left > 0 {
            return;
        }
        if let Some(&p) = self.parent.get(&i) {
            if let Some(n) = self.children.get_mut(&p) {
                *n = n.saturating_sub(1);
            }
            if matches!(self.states[p], State::Expanded) {
                self.settle(p);
            }
        }
    }

    /// Answers the first node waiting to run alone once every other running node ended or
    /// waits to run alone too.
    fn answer_alone(&mut self) {
        if self.alone_now.is_some() || self.alone_queue.is_empty() {
            return;
        }
        let waiting = self.alone_queue.len();
        let optional_running = (0..self.states.len())
            .filter(|&i| matches!(self.states[i], State::Running(..)))
            .filter(|&i| self.info[i].as_ref().is_some_and(|x| x.optional))
            .count();
        if self.running > waiting + optional_running || optional_running > 0 {
            return;
        }
        let (i, back) = self.alone_queue.remove(0);
        self.alone_now = Some(i);
        let _ = back.send(());
    }

    /// How many slots the nodes could use now.
    fn wanted(&self) -> usize {
        if self.failed || self.stopping() {
            return 0;
        }
        let mut in_use = self.in_use;
        let mut n = 0;
        let ready = self.ready();
        let farm = self.to_farm(&ready);
        for i in ready.into_iter().filter(|i| !farm.contains(i)) {
            let need = self.need_of(i);
            if self.budget.is_none_or(|b| in_use + need <= b)
                || self.running - self.on_farm + n == 0
            {
                in_use += need;
                n += 1;
            }
        }
        n
    }

    /// Asks the jobserver for what `wanted` nodes need beyond the slots held; spare tokens
    /// that nothing wants go back.
    fn ask(&mut self, helper: Option<&jobserver::HelperThread>, wanted: usize) {
        let held = usize::from(self.implicit_free) + self.spare.len();
        if wanted <= held {
            let keep = wanted.saturating_sub(usize::from(self.implicit_free));
            self.spare.truncate(keep);
            return;
        }
        let Some(h) = helper else {
            return;
        };
        let local = self.running - self.on_farm;
        while self.requested < wanted - held && local + held + self.requested < self.max {
            h.request_token();
            self.requested += 1;
        }
    }

    /// Whether a pending node could still start (none after a failure).
    fn any_pending_startable(&self) -> bool {
        !self.failed
            && self
                .states
                .iter()
                .any(|s| matches!(s, State::Pending(_) | State::Reserved))
            && !self.ready().is_empty()
    }

    fn into_results(self) -> Result<Vec<T>, Error> {
        let n = self.results.len();
        let mut out = Vec::with_capacity(n);
        let mut stopped = None;
        for r in self.results {
            match r {
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
}

/// A need without a record of its own, raised to what its class measured.
fn learn(need: &mut Need, class_peak: u64) {
    if need.from != NeedFrom::Recorded {
        let learned = with_margin(class_peak);
        if need.from == NeedFrom::Default || learned > need.bytes {
            need.bytes = learned;
            need.from = NeedFrom::Similar;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    const MB: u64 = 1 << 20;

    fn need(bytes: u64) -> Need {
        Need {
            bytes,
            from: NeedFrom::Recorded,
        }
    }

    /// A node named `label` that sleeps `ms` and returns its index `i`, counting how many run
    /// at once (`now`, `peak`) and how much memory they were expected to need (`mem`).
    fn sleeper<'a>(
        i: usize,
        ms: u64,
        bytes: u64,
        counts: &'a (AtomicUsize, AtomicUsize, AtomicU64, AtomicU64),
    ) -> Node<'a, usize> {
        let work: Work<'a, usize> = Box::new(move |_slot| {
            let (now, peak, mem, mem_peak) = counts;
            peak.fetch_max(now.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
            mem_peak.fetch_max(
                mem.fetch_add(bytes, Ordering::SeqCst) + bytes,
                Ordering::SeqCst,
            );
            std::thread::sleep(Duration::from_millis(ms));
            mem.fetch_sub(bytes, Ordering::SeqCst);
            now.fetch_sub(1, Ordering::SeqCst);
            Ok(i)
        });
        let mut n = Node::new(format!("node {i}"), need(bytes), work);
        n.ms = ms;
        n
    }

    fn counts() -> (AtomicUsize, AtomicUsize, AtomicU64, AtomicU64) {
        Default::default()
    }

    fn run_all<'a>(
        nodes: Vec<Node<'a, usize>>,
        client: Option<&Client>,
        max: usize,
        budget: Option<u64>,
    ) -> (Result<Vec<usize>, Error>, Vec<Note>) {
        run_with_farm(nodes, client, (max, 0), budget)
    }

    fn run_with_farm<'a>(
        nodes: Vec<Node<'a, usize>>,
        client: Option<&Client>,
        (max, farm): (usize, usize),
        budget: Option<u64>,
    ) -> (Result<Vec<usize>, Error>, Vec<Note>) {
        let budget = budget.map(|bytes| Budget {
            bytes,
            from: "test".into(),
        });
        let mut notes = Vec::new();
        let mut done = 0;
        let r = run(
            nodes,
            client,
            (max, &|| farm),
            budget.as_ref(),
            &mut |_| done += 1,
            &mut |n| notes.push(n),
        );
        (r, notes)
    }

    #[test]
    fn tokens_bound_concurrency() {
        let c = counts();
        let nodes = (0..4).map(|i| sleeper(i, 30, 0, &c)).collect();
        assert_eq!(run_all(nodes, None, 8, None).0.unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(c.1.load(Ordering::SeqCst), 1, "no jobserver: one at a time");
        let c = counts();
        let two = Client::new(1).unwrap(); // 1 token + the implicit one
        let nodes = (0..6).map(|i| sleeper(i, 30, 0, &c)).collect();
        run_all(nodes, Some(&two), 8, None).0.unwrap();
        assert_eq!(c.1.load(Ordering::SeqCst), 2);
        let c = counts();
        let four = Client::new(3).unwrap();
        let nodes = (0..6).map(|i| sleeper(i, 30, 0, &c)).collect();
        run_all(nodes, Some(&four), 2, None).0.unwrap();
        assert_eq!(c.1.load(Ordering::SeqCst), 2, "OFFLOAD_BUILD_MAX_JOBS caps");
    }

    #[test]
    fn remote_nodes_take_the_farms_slots_beside_the_local_ones() {
        // No jobserver (one local slot), a farm of three: four remote nodes and a local one
        // run four at once (three on the farm, one local), and the farm's nodes count against
        // neither the local slot nor the memory budget.
        let c = counts();
        let mut nodes: Vec<_> = (0..4).map(|i| sleeper(i, 60, 300 * MB, &c)).collect();
        for n in &mut nodes {
            n.remote = true;
        }
        nodes.push(sleeper(4, 60, 300 * MB, &c));
        let (r, notes) = run_with_farm(nodes, None, (1, 3), Some(400 * MB));
        assert_eq!(r.unwrap(), vec![0, 1, 2, 3, 4]);
        assert_eq!(c.1.load(Ordering::SeqCst), 4);
        assert_eq!(notes, [Note::Farm { slots: 3, most: 3 }]);
        // Without a farm the same nodes run one at a time.
        let c = counts();
        let mut nodes: Vec<_> = (0..4).map(|i| sleeper(i, 10, 0, &c)).collect();
        for n in &mut nodes {
            n.remote = true;
        }
        run_with_farm(nodes, None, (1, 0), None).0.unwrap();
        assert_eq!(c.1.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn the_farm_is_asked_once_when_a_remote_node_is_ready() {
        let asked = std::cell::Cell::new(0);
        let farm = || {
            asked.set(asked.get() + 1);
            2
        };
        let run_these = |nodes| {
            let mut notes = Vec::new();
            let r = run(nodes, None, (1, &farm), None, &mut |_| {}, &mut |n| {
                notes.push(n)
            });
            (r.unwrap(), notes)
        };
        // No remote node: not asked, and no farm note.
        let c = counts();
        let nodes = (0..2).map(|i| sleeper(i, 5, 0, &c)).collect();
        assert_eq!(run_these(nodes), (vec![0, 1], vec![]));
        assert_eq!(asked.get(), 0);
        // A remote node after a local one: asked once, when it is ready.
        let c = counts();
        let mut nodes: Vec<_> = (0..3).map(|i| sleeper(i, 5, 0, &c)).collect();
        for n in &mut nodes[1..] {
            n.remote = true;
            n.after = vec![0];
        }
        let (r, notes) = run_these(nodes);
        assert_eq!(r, vec![0, 1, 2]);
        assert_eq!(notes, [Note::Farm { slots: 2, most: 2 }]);
        assert_eq!(asked.get(), 1);
    }

    #[test]
    fn the_memory_of_the_running_nodes_stays_within_the_budget() {
        // Six nodes of 300 MB, four slots, 700 MB: two at a time, and a note says why.
        let c = counts();
        let four = Client::new(3).unwrap();
        let nodes = (0..6).map(|i| sleeper(i, 40, 300 * MB, &c)).collect();
        let (r, notes) = run_all(nodes, Some(&four), 4, Some(700 * MB));
        assert_eq!(r.unwrap().len(), 6);
        assert_eq!(c.1.load(Ordering::SeqCst), 2);
        assert!(c.3.load(Ordering::SeqCst) <= 700 * MB);
        assert!(
            notes
                .iter()
                .any(|n| matches!(n, Note::WaitsForMemory { .. })),
            "{notes:?}"
        );
        // A node bigger than the budget runs alone; smaller ones go beside each other.
        let c = counts();
        let mut nodes: Vec<_> = (0..3).map(|i| sleeper(i, 40, 100 * MB, &c)).collect();
        nodes.insert(0, sleeper(3, 40, 900 * MB, &c));
        let (r, _) = run_all(nodes, Some(&four), 4, Some(700 * MB));
        assert_eq!(r.unwrap(), vec![3, 0, 1, 2]);
        assert!(c.3.load(Ordering::SeqCst) <= 900 * MB, "the big one alone");
    }

    #[test]
    fn the_longest_chain_starts_first() {
        // One slot. Node 0 is short, but node 2 (long) comes after it: 0 first, then the
        // longest of what is left; node 1 last.
        let log = Mutex::new(Vec::new());
        let mk = |i: usize, ms: u64| {
            let log = &log;
            let mut n = Node::new(
                format!("{i}"),
                need(0),
                Box::new(move |_: &Slot<'_, '_, usize>| {
                    lock(log).push(i);
                    Ok(i)
                }) as Work<'_, usize>,
            );
            n.ms = ms;
            n
        };
        let mut nodes = vec![mk(0, 10), mk(1, 50), mk(2, 100), mk(3, 20)];
        nodes[2].after = vec![0];
        run_all(nodes, None, 1, None).0.unwrap();
        assert_eq!(lock(&log).clone(), vec![0, 2, 1, 3]);
    }

    #[test]
    fn a_node_starts_after_its_inputs_and_once_its_gate_started() {
        let log = Mutex::new(Vec::new());
        let mk = |i: usize, ms: u64| {
            let log = &log;
            Node::new(
                format!("{i}"),
                need(0),
                Box::new(move |_: &Slot<'_, '_, usize>| {
                    lock(log).push(i);
                    std::thread::sleep(Duration::from_millis(ms));
                    Ok(i)
                }) as Work<'_, usize>,
            )
        };
        // Node 1 waits for node 0 to end; node 2, ready at once, is gated on node 1's start:
        // with two slots it does not take the second one while node 1 cannot start.
        let mut nodes = vec![mk(0, 120), mk(1, 20), mk(2, 20)];
        nodes[1].after = vec![0];
        nodes[2].gate = vec![1];
        let two = Client::new(1).unwrap();
        assert_eq!(
            run_all(nodes, Some(&two), 2, None).0.unwrap(),
            vec![0, 1, 2]
        );
        assert_eq!(lock(&log).clone(), vec![0, 1, 2]);
    }

    #[test]
    fn the_first_error_in_node_order_and_no_new_nodes_after_it() {
        let started = AtomicUsize::new(0);
        let nodes: Vec<Node<'_, usize>> = (0..5usize)
            .map(|i| {
                let started = &started;
                Node::new(
                    format!("{i}"),
                    need(0),
                    Box::new(move |_: &Slot<'_, '_, usize>| {
                        started.fetch_add(1, Ordering::SeqCst);
                        if i == 1 {
                            Err(Error::Config(format!("node {i}")))
                        } else {
                            Ok(i)
                        }
                    }) as Work<'_, usize>,
                )
            })
            .collect();
        let e = run_all(nodes, None, 1, None).0.unwrap_err();
        assert_eq!(e.to_string(), "node 1");
        assert_eq!(started.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_node_that_must_run_alone_waits_for_the_others_and_stops_optional_ones() {
        let log = Mutex::new(Vec::new());
        let say = |m: String| lock(&log).push(m);
        let say = &say;
        let nodes: Vec<Node<'_, usize>> = vec![
            // Node 0: killed for memory at once; runs again alone.
            Node::new(
                "big",
                need(0),
                Box::new(move |slot: &Slot<'_, '_, usize>| {
                    std::thread::sleep(Duration::from_millis(10));
                    let _alone = slot.alone("big", 500 * MB);
                    say("0 alone".into());
                    Ok(0)
                }),
            ),
            // Node 1: runs its course.
            Node::new(
                "other",
                need(0),
                Box::new(move |_: &Slot<'_, '_, usize>| {
                    std::thread::sleep(Duration::from_millis(80));
                    say("1 ends".into());
                    Ok(1)
                }),
            ),
            // Node 2: optional, waits until told to stop.
            {
                let mut n = Node::new(
                    "optional",
                    need(0),
                    Box::new(move |slot: &Slot<'_, '_, usize>| {
                        while !slot.should_stop() {
                            std::thread::sleep(Duration::from_millis(2));
                        }
                        say("2 stops".into());
                        Ok(2usize)
                    }) as Work<'_, usize>,
                );
                n.optional = true;
                n
            },
        ];
        let four = Client::new(3).unwrap();
        let (r, notes) = run_all(nodes, Some(&four), 4, None);
        assert_eq!(r.unwrap(), vec![0, 1, 2]);
        let log = lock(&log).clone();
        assert_eq!(log.last().map(String::as_str), Some("0 alone"), "{log:?}");
        assert!(matches!(&notes[..], [Note::RunsAlone { label, .. }] if label == "big"));
    }

    #[test]
    fn nodes_added_by_a_node_run_before_the_nodes_after_it() {
        let log = Mutex::new(Vec::new());
        let log = &log;
        let leaf = |name: &'static str| -> Node<'_, usize> {
            Node::new(
                name,
                need(0),
                Box::new(move |_: &Slot<'_, '_, usize>| {
                    std::thread::sleep(Duration::from_millis(20));
                    lock(log).push(name);
                    Ok(9)
                }),
            )
        };
        let mut nodes: Vec<Node<'_, usize>> = vec![
            Node::new(
                "parent",
                need(0),
                Box::new(move |slot: &Slot<'_, '_, usize>| {
                    slot.add(2, |base| {
                        let mut b = leaf("child b");
                        b.after = vec![base];
                        vec![leaf("child a"), b]
                    });
                    lock(log).push("parent");
                    Ok(0)
                }),
            ),
            leaf("after"),
        ];
        nodes[1].after = vec![0];
        let four = Client::new(3).unwrap();
        let out = run_all(nodes, Some(&four), 4, None).0.unwrap();
        assert_eq!(out, vec![0, 9, 9, 9]);
        assert_eq!(
            lock(log).clone(),
            vec!["parent", "child a", "child b", "after"]
        );
    }

    #[test]
    fn nodes_without_a_record_learn_from_their_class() {
        // Budget 500 MB; every node defaults to 400 MB but measures 100 MB: once the first
        // ends, the others run four at a time.
        let c = counts();
        let nodes = (0..8)
            .map(|i| {
                let mut n = sleeper(i, 30, 0, &c);
                n.need = Need {
                    bytes: 400 * MB,
                    from: NeedFrom::Default,
                };
                let work = std::mem::replace(&mut n.work, Box::new(|_| Ok(0)));
                n.work = Box::new(move |slot| {
                    slot.peak(100 * MB);
                    work(slot)
                });
                n
            })
            .collect();
        let four = Client::new(3).unwrap();
        run_all(nodes, Some(&four), 4, Some(500 * MB)).0.unwrap();
        assert_eq!(c.1.load(Ordering::SeqCst), 4);
    }
}
