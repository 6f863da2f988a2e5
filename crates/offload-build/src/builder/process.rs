//! The processes a build starts (compilers, `ptxas`, device links, the version and `native`
//! probes): each with an optional timeout, each remembered while it runs by the build's
//! [`CancelToken`], so that cancelling it ends them.
//!
//! Each runs in a process group of its own (on Unix), so that killing it kills what it
//! started too (clang's `cc1`, a launcher's compiler, a shell script's `sleep`). Those groups
//! die with the tool even when it is killed with `kill -9`: a watchdog (a shell started once
//! per process, [`watchdog`]) holds the list of running groups on its standard input and kills
//! them when that pipe closes, which the kernel does when the tool ends, however it ends. The
//! direct child is also killed by the kernel when the thread that started it ends (Linux's
//! `PR_SET_PDEATHSIG`). A terminal's Ctrl-C reaches the tool, whose end ends them.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// How long a probe (`clang --version`, `--print-supported-cpus`, `hipconfig`, `amdgpu-arch`,
/// `nvptx-arch`, `nvidia-smi`) may run.
pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// What a finished process left.
#[derive(Debug)]
pub(crate) struct Output {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// The peak resident memory of its process group, in bytes: the most its processes held
    /// together when sampled ([`peaks`]), or the most one of them held (the kernel's count,
    /// which catches a peak between samples), whichever is more. 0 where not measured.
    pub peak: u64,
}

/// Why a process gave no [`Output`].
#[derive(Debug)]
pub(crate) enum RunError {
    /// It could not be started.
    Spawn(io::Error),
    /// It ran past its timeout and was killed (with its process group).
    TimedOut,
    /// The build was cancelled ([`CancelToken::cancel`]): it was killed, or not started.
    Stopped,
}

/// A handle that stops the builds it is given to ([`Build::cancel_token`](crate::builder::Build::cancel_token)),
/// from another thread or a signal handler's thread: [`cancel`](CancelToken::cancel) kills
/// their running compilers (and probes) with their children, removes the temporary
/// directories of the compiles in progress, and makes every later start fail, so that those
/// builds end with [`Error::Stopped`](crate::builder::Error::Stopped). Clones share the state.
///
/// Compilers run in process groups of their own, which a terminal's Ctrl-C does not reach:
/// the program ends on the signal and its compilers with it (a watchdog kills their groups),
/// or, to end the build and go on, holds a token and cancels it on the signal
/// (`offload-build compile` does). A `build.rs` needs none.
///
/// # Example
///
/// ```no_run
/// let cancel = offload_build::builder::CancelToken::new();
/// let on_signal = cancel.clone(); // cancelled from a signal handler's thread
/// # std::thread::spawn(move || on_signal.cancel());
/// let result = offload_build::Build::new()
///     .file("k.hip")
///     .cancel_token(&cancel)
///     .try_compile("kernels");
/// if cancel.is_cancelled() {
///     // The build ended with Error::Stopped.
/// }
/// # let _ = result;
/// ```
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<State>);

#[derive(Debug, Default)]
struct State {
    stopped: AtomicBool,
    registry: Mutex<Registry>,
}

#[derive(Debug, Default)]
struct Registry {
    /// Running processes: (pid, whether it leads a group of its own).
    running: Vec<(u32, bool)>,
    /// The private directories of the jobs in progress ([`PrivateDir`]).
    dirs: Vec<PathBuf>,
}

impl CancelToken {
    /// A token that nothing has cancelled.
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Kills every running compiler (and probe) of the builds given this token, with its
    /// process group, removes the temporary directories of their compiles in progress, and
    /// makes every later start fail. Cannot be undone: a new build takes a new token.
    pub fn cancel(&self) {
        let reg = self.registry();
        self.0.stopped.store(true, Ordering::SeqCst);
        for &(pid, group) in &reg.running {
            kill(pid, group);
        }
        for d in &reg.dirs {
            let _ = std::fs::remove_dir_all(d);
        }
    }

    /// Whether [`cancel`](CancelToken::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.stopped.load(Ordering::SeqCst)
    }

    fn registry(&self) -> MutexGuard<'_, Registry> {
        self.0.registry.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The processes of one build: its token.
#[derive(Clone, Debug, Default)]
pub(crate) struct Processes {
    token: CancelToken,
}

impl Processes {
    /// The processes of a build given `token` (`None`: a token of its own).
    pub(crate) fn new(token: Option<&CancelToken>) -> Processes {
        Processes {
            token: token.cloned().unwrap_or_default(),
        }
    }

    /// Whether the build was cancelled (every later start fails).
    pub(crate) fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }
}

/// A job's private directory, known to the build's token (which removes it when cancelled)
/// until dropped.
pub(crate) struct PrivateDir(CancelToken, PathBuf);

impl PrivateDir {
    pub(crate) fn new(p: &Processes, path: &Path) -> PrivateDir {
        p.token.registry().dirs.push(path.to_path_buf());
        PrivateDir(p.token.clone(), path.to_path_buf())
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let mut reg = self.0.registry();
        if let Some(i) = reg.dirs.iter().rposition(|d| *d == self.1) {
            reg.dirs.swap_remove(i);
        }
    }
}

#[cfg(unix)]
fn kill(pid: u32, group: bool) {
    use rustix::process::{Pid, Signal, kill_process, kill_process_group};
    let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return;
    };
    let _ = if group {
        kill_process_group(pid, Signal::KILL)
    } else {
        kill_process(pid, Signal::KILL)
    };
}

#[cfg(not(unix))]
fn kill(_pid: u32, _group: bool) {}

/// Kills the process group `pgid` (a background PCH's clang, taken over).
#[cfg(unix)]
pub(crate) fn kill_group(pgid: u32) {
    kill(pgid, true);
}

/// Runs `cmd` to its end (standard input closed, standard output and error collected), or
/// kills it (and its process group) after `timeout`.
pub(crate) fn run(
    p: &Processes,
    cmd: &mut Command,
    timeout: Option<Duration>,
) -> Result<Output, RunError> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let group = cfg!(unix);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    die_with_parent(cmd);
    // The child lists its group with the watchdog itself, before it execs: a tool killed
    // the moment `spawn` returns leaves nothing unlisted.
    watchdog::listed_by_child(cmd);
    // Started and registered with the registry held: a kill cannot come between the two.
    let (child, pid) = {
        let mut reg = p.token.registry();
        if p.token.is_cancelled() {
            return Err(RunError::Stopped);
        }
        let child = cmd.spawn().map_err(RunError::Spawn)?;
        let pid = child.id();
        reg.running.push((pid, group));
        (child, pid)
    };
    let forget = || {
        watchdog::unlist(pid);
        let mut reg = p.token.registry();
        if let Some(i) = reg.running.iter().position(|&(p, _)| p == pid) {
            reg.running.swap_remove(i);
        }
    };
    let watch = peaks::watch(pid);
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = std::thread::Builder::new()
        .name("offload-build-child".into())
        .spawn(move || {
            let _ = tx.send(wait_measured(child));
        });
    if let Err(e) = waiter {
        // No thread for the wait: end the process rather than leave it unwatched.
        kill(pid, group);
        forget();
        return Err(RunError::Spawn(e));
    }
    let result = match timeout {
        None => rx.recv().map_err(|_| None),
        Some(t) => rx.recv_timeout(t).map_err(|e| match e {
            std::sync::mpsc::RecvTimeoutError::Timeout => Some(()),
            std::sync::mpsc::RecvTimeoutError::Disconnected => None,
        }),
    };
    let out = match result {
        Ok(r) => r,
        Err(Some(())) => {
            kill(pid, group);
            // Reaped by the waiter once the group is gone (a child that left the group and
            // holds the pipes is not waited for).
            let _ = rx.recv_timeout(Duration::from_secs(5));
            forget();
            return Err(RunError::TimedOut);
        }
        Err(None) => Err(io::Error::other("the process could not be waited for")),
    };
    forget();
    if p.token.is_cancelled() {
        return Err(RunError::Stopped);
    }
    let (o, maxrss) = out.map_err(RunError::Spawn)?;
    Ok(Output {
        status: o.status,
        stdout: o.stdout,
        stderr: o.stderr,
        peak: watch.peak().max(maxrss),
    })
}

/// Waits for `child` to end, its standard output and error collected: what it left, and the
/// most resident memory one of its processes held (its own, or that of a descendant it
/// waited for: `wait4`'s count), in bytes.
#[cfg(target_os = "linux")]
fn wait_measured(mut child: std::process::Child) -> io::Result<(std::process::Output, u64)> {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    let mut out_pipe = child.stdout.take();
    let mut err_pipe = child.stderr.take();
    let reader = std::thread::Builder::new()
        .name("offload-build-stdout".into())
        .spawn(move || {
            let mut v = Vec::new();
            if let Some(p) = &mut out_pipe {
                let _ = p.read_to_end(&mut v);
            }
            v
        })?;
    let mut stderr = Vec::new();
    if let Some(p) = &mut err_pipe {
        let _ = p.read_to_end(&mut stderr);
    }
    let stdout = reader.join().unwrap_or_default();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: waits for our own child, whose handle is not waited for elsewhere (the
        // `Child` is dropped unwaited, which neither waits nor kills).
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            break;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    let status = ExitStatus::from_raw(status);
    let maxrss = u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024;
    Ok((
        std::process::Output {
            status,
            stdout,
            stderr,
        },
        maxrss,
    ))
}

#[cfg(not(target_os = "linux"))]
fn wait_measured(child: std::process::Child) -> io::Result<(std::process::Output, u64)> {
    child.wait_with_output().map(|o| (o, 0))
}

/// The peak resident memory of the process groups of running compilers, sampled by one
/// thread of the process (every 100 ms while any is watched) from `/proc/<pid>/stat`: the
/// resident pages of every process of the group, added up (shared pages count in each
/// process, so the sum errs high). Linux only; elsewhere nothing is measured.
pub(crate) mod peaks {
    use std::collections::HashMap;
    use std::sync::{Arc, Condvar, Mutex, OnceLock};
    use std::time::Duration;

    /// How often the groups are sampled.
    const EVERY: Duration = Duration::from_millis(100);

    #[derive(Default)]
    struct Watched {
        /// The peak so far of each watched process group.
        groups: HashMap<u32, u64>,
    }

    struct Sampler {
        watched: Mutex<Watched>,
        wake: Condvar,
    }

    fn sampler() -> &'static Arc<Sampler> {
        static S: OnceLock<Arc<Sampler>> = OnceLock::new();
        S.get_or_init(|| {
            let s = Arc::new(Sampler {
                watched: Mutex::new(Watched::default()),
                wake: Condvar::new(),
            });
            let t = s.clone();
            if cfg!(target_os = "linux") {
                let _ = std::thread::Builder::new()
                    .name("offload-build-peaks".into())
                    .spawn(move || t.run());
            }
            s
        })
    }

    impl Sampler {
        fn lock(&self) -> std::sync::MutexGuard<'_, Watched> {
            self.watched.lock().unwrap_or_else(|e| e.into_inner())
        }

        fn run(&self) {
            let page = page_size();
            loop {
                {
                    let mut w = self.lock();
                    while w.groups.is_empty() {
                        w = self.wake.wait(w).unwrap_or_else(|e| e.into_inner());
                    }
                }
                let sums = group_rss(page);
                {
                    let mut w = self.lock();
                    for (g, peak) in w.groups.iter_mut() {
                        if let Some(&now) = sums.get(g) {
                            *peak = (*peak).max(now);
                        }
                    }
                }
                std::thread::sleep(EVERY);
            }
        }
    }

    /// The resident bytes of every process group, from `/proc/<pid>/stat`.
    fn group_rss(page: u64) -> HashMap<u32, u64> {
        let mut sums: HashMap<u32, u64> = HashMap::new();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return sums;
        };
        for e in dir.flatten() {
            let name = e.file_name();
            let Some(pid) = name
                .to_str()
                .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
            else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            if let Some((group, pages)) = parse_stat(&stat) {
                *sums.entry(group).or_default() += pages * page;
            }
        }
        sums
    }

    /// The process group and resident pages of a `/proc/<pid>/stat` line (fields 5 and 24;
    /// the command name, field 2, may hold spaces and parentheses: counted from its end).
    pub(super) fn parse_stat(stat: &str) -> Option<(u32, u64)> {
        let rest = &stat[stat.rfind(')')? + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let group = fields.get(2)?.parse().ok()?;
        let pages = fields.get(21)?.parse().ok()?;
        Some((group, pages))
    }

    fn page_size() -> u64 {
        #[cfg(unix)]
        // SAFETY: sysconf reads a constant of the system.
        let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        #[cfg(not(unix))]
        let n = 4096;
        u64::try_from(n).unwrap_or(4096)
    }

    /// A process group watched until dropped.
    pub(crate) struct Watch(u32);

    /// Starts watching the process group `pgid`.
    pub(crate) fn watch(pgid: u32) -> Watch {
        let s = sampler();
        s.lock().groups.insert(pgid, 0);
        s.wake.notify_one();
        Watch(pgid)
    }

    impl Watch {
        /// The group's peak so far, in bytes.
        pub(crate) fn peak(&self) -> u64 {
            sampler().lock().groups.get(&self.0).copied().unwrap_or(0)
        }
    }

    impl Drop for Watch {
        fn drop(&mut self) {
            sampler().lock().groups.remove(&self.0);
        }
    }
}

/// The process groups of this process's running compilers, killed when it ends however it
/// ends: a shell reads `+ PGID` and `- PGID` lines on its standard input (this process holds
/// the only writing end, closed by the kernel when the process ends) and, at the end of that
/// input, kills the groups still listed. It ignores the terminal's signals and runs in a
/// group of its own, so that it outlives a Ctrl-C of the tool to do its work.
#[cfg(unix)]
pub(crate) mod watchdog {
    use std::io::Write;
    use std::process::{ChildStdin, Command, Stdio};
    use std::sync::{Mutex, OnceLock};

    const SCRIPT: &str = "trap '' INT TERM HUP QUIT; g=; \
        while read -r op p; do case $op in \
          +) g=\"$g $p\" ;; \
          -) n=; for q in $g; do [ \"$q\" = \"$p\" ] || n=\"$n $q\"; done; g=$n ;; \
        esac; done; \
        for q in $g; do kill -s KILL -- \"-$q\" 2>/dev/null; done";

    static INPUT: OnceLock<Option<Mutex<ChildStdin>>> = OnceLock::new();

    fn start() -> Option<Mutex<ChildStdin>> {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new("/bin/sh");
        cmd.args(["-c", SCRIPT])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        // SAFETY: only fcntl calls between fork and exec (see `close_inherited`).
        unsafe {
            cmd.pre_exec(|| {
                super::close_inherited();
                Ok(())
            });
        }
        let mut child = cmd.spawn().ok()?;
        let input = child.stdin.take()?;
        // Reaped by nobody until this process ends: it ends with it.
        std::mem::forget(child);
        Some(Mutex::new(input))
    }

    /// Makes the child of `cmd` add its own process group (it leads one: `process_group(0)`
    /// comes before) to the groups killed at the end, between fork and exec. Listed by the
    /// parent once `spawn` returned, a group was missed when the tool was killed in between:
    /// a launcher's `sleep` outlived `kill -9` on a loaded machine (the first listing also
    /// starts the watchdog, which takes a fork and an exec).
    pub(crate) fn listed_by_child(cmd: &mut Command) {
        use std::os::fd::AsRawFd;
        let Some(input) = INPUT.get_or_init(start) else {
            return;
        };
        // Open for as long as this process runs (never dropped); close-on-exec, so open in
        // the child until its exec.
        let fd = input.lock().unwrap_or_else(|e| e.into_inner()).as_raw_fd();
        list_in_child(cmd, fd);
    }

    /// Makes the child of `cmd` write `+ <its pid>` to the pipe `fd` before it execs.
    fn list_in_child(cmd: &mut Command, fd: std::os::fd::RawFd) {
        use std::os::unix::process::CommandExt;
        // SAFETY: the closure runs in the child between fork and exec and makes only
        // async-signal-safe system calls (getpid, signal, one write of under PIPE_BUF bytes,
        // atomic on a pipe) with its line on the stack: no allocation, no lock. `fd` stays
        // open in the parent.
        unsafe {
            cmd.pre_exec(move || {
                let mut line = [0u8; 24];
                let pid = rustix::process::getpid().as_raw_nonzero().get() as u32;
                let n = line_of('+', pid, &mut line);
                // A watchdog that is gone (killed by hand) costs the listing, not the
                // compile: no SIGPIPE (std resets it to the default before this runs), and
                // the write's error is dropped, as the parent's were.
                let old = libc::signal(libc::SIGPIPE, libc::SIG_IGN);
                let _ = rustix::io::write(rustix::fd::BorrowedFd::borrow_raw(fd), &line[..n]);
                libc::signal(libc::SIGPIPE, old);
                Ok(())
            });
        }
    }

    /// Removes the process group `pgid` from the groups killed at the end (its leader ended).
    pub(crate) fn unlist(pgid: u32) {
        if let Some(Some(input)) = INPUT.get() {
            let mut line = [0u8; 24];
            let n = line_of('-', pgid, &mut line);
            let mut input = input.lock().unwrap_or_else(|e| e.into_inner());
            // One write: a child's line cannot fall inside it.
            let _ = input.write_all(&line[..n]);
        }
    }

    /// Writes `op pgid\n` into `buf`, without allocating; its length.
    fn line_of(op: char, pgid: u32, buf: &mut [u8; 24]) -> usize {
        buf[0] = op as u8;
        buf[1] = b' ';
        let mut digits = [0u8; 10];
        let (mut n, mut v) = (0, pgid);
        loop {
            digits[n] = b'0' + (v % 10) as u8;
            n += 1;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        for i in 0..n {
            buf[2 + i] = digits[n - 1 - i];
        }
        buf[2 + n] = b'\n';
        3 + n
    }

    #[cfg(test)]
    mod tests {
        use std::process::Command;

        #[test]
        fn lines_are_an_op_and_a_number() {
            let mut b = [0u8; 24];
            let n = super::line_of('+', 0, &mut b);
            assert_eq!(&b[..n], b"+ 0\n");
            let n = super::line_of('-', u32::MAX, &mut b);
            assert_eq!(&b[..n], b"- 4294967295\n");
        }

        /// The line is in the pipe when `spawn` returns: written before the exec, so a tool
        /// killed at once has its child's group listed.
        #[test]
        fn a_child_lists_its_group_before_it_runs() {
            use rustix::pipe::{PipeFlags, pipe_with};
            use std::io::Read;
            use std::os::fd::AsRawFd;
            use std::os::unix::process::CommandExt;
            let (r, w) = pipe_with(PipeFlags::CLOEXEC).unwrap();
            let mut r = std::fs::File::from(r);
            let mut cmd = Command::new("sleep");
            cmd.arg("5").process_group(0);
            super::list_in_child(&mut cmd, w.as_raw_fd());
            let mut child = cmd.spawn().unwrap();
            drop(cmd);
            drop(w);
            let pid = child.id();
            // The only writers were this process (closed above) and the child before its
            // exec (close-on-exec): the read ends with what the child wrote.
            let mut got = String::new();
            r.read_to_string(&mut got).unwrap();
            let _ = child.kill();
            let _ = child.wait();
            assert_eq!(got, format!("+ {pid}\n"));
        }

        /// With the watchdog gone (the pipe's reading end closed), the child still runs.
        #[test]
        fn a_child_runs_when_the_watchdog_is_gone() {
            use rustix::pipe::{PipeFlags, pipe_with};
            use std::os::fd::AsRawFd;
            use std::os::unix::process::ExitStatusExt;
            let (r, w) = pipe_with(PipeFlags::CLOEXEC).unwrap();
            drop(r);
            let mut cmd = Command::new("true");
            super::list_in_child(&mut cmd, w.as_raw_fd());
            let status = cmd.status().unwrap();
            assert!(
                status.success(),
                "{status:?} (signal {:?})",
                status.signal()
            );
        }
    }
}

#[cfg(not(unix))]
pub(crate) mod watchdog {
    pub(crate) fn listed_by_child(_cmd: &mut std::process::Command) {}
    pub(crate) fn unlist(_pgid: u32) {}
}

/// Makes the process die (SIGKILL) when the thread that starts it ends, so that a tool killed
/// with `kill -9` leaves no compiler running on its own (Linux's `PR_SET_PDEATHSIG`; the
/// thread that starts a process waits for it in [`run`]). Elsewhere nothing.
fn die_with_parent(cmd: &mut Command) {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use std::os::unix::process::CommandExt;
        let parent = rustix::process::getpid();
        // SAFETY: the closure runs in the child between fork and exec and makes only two
        // system calls (no allocation, no lock).
        unsafe {
            cmd.pre_exec(move || {
                rustix::process::set_parent_process_death_signal(Some(
                    rustix::process::Signal::KILL,
                ))?;
                // The parent may have died before the call: then end now.
                if rustix::process::getppid() != Some(parent) {
                    return Err(io::Error::other("the build ended"));
                }
                Ok(())
            });
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = cmd;
}

/// The priority of a detached process ([`spawn_detached`]): a little below the build's. On a
/// machine other work keeps busy, the lowest priority (19) gets almost nothing (2 of its
/// cores busy, four PCHs at 19 had 3% of a core between them, and the edit a few seconds
/// later found none made); at 5 they take a fifth of a core each, the busy work keeps the
/// rest, and they are made before the next edit.
pub(crate) const BACKGROUND_NICE: i32 = 5;

/// Starts `cmd` on its own, to outlive the build: in a process group of its own (a terminal's
/// Ctrl-C and the build's token do not reach it), at once and at a lower priority than the
/// build's ([`BACKGROUND_NICE`]), with `stdin` as its standard input (the build hands it a
/// locked file: the lock lasts as long as the process and its children), its standard output
/// closed, its standard error in `stderr` and no other descriptor the build inherited. Not
/// waited for; Unix only. Its process ID, which is its group's.
#[cfg(unix)]
pub(crate) fn spawn_detached(
    cmd: &Command,
    stdin: std::fs::File,
    stderr: std::fs::File,
) -> io::Result<u32> {
    use std::os::unix::process::CommandExt;
    let mut detached = Command::new(cmd.get_program());
    detached.args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => detached.env(k, v),
            None => detached.env_remove(k),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        detached.current_dir(dir);
    }
    detached
        .stdin(stdin)
        .stdout(Stdio::null())
        .stderr(stderr)
        .process_group(0);
    // SAFETY: the closure runs in the child between fork and exec and makes only fcntl and
    // setpriority calls (no allocation, no lock).
    unsafe {
        detached.pre_exec(|| {
            close_inherited();
            let _ = rustix::process::setpriority_process(None, BACKGROUND_NICE);
            Ok(())
        });
    }
    let child = detached.spawn()?;
    Ok(child.id())
}

/// Marks every descriptor above standard error close-on-exec, in a child before it execs:
/// what the build inherited open (a make jobserver's pipe ends, which make waits on until
/// every holder ends) must not be held by a process that outlives the build.
#[cfg(unix)]
fn close_inherited() {
    use rustix::io::{FdFlags, fcntl_getfd, fcntl_setfd};
    for raw in 3..1024 {
        // SAFETY: the descriptor is only looked at and flagged, never closed or kept.
        let fd = unsafe { rustix::fd::BorrowedFd::borrow_raw(raw) };
        if let Ok(flags) = fcntl_getfd(fd) {
            if !flags.contains(FdFlags::CLOEXEC) {
                let _ = fcntl_setfd(fd, flags | FdFlags::CLOEXEC);
            }
        }
    }
}

/// stdout and stderr of a probe, or `None` when it cannot run or runs past
/// [`PROBE_TIMEOUT`] (`Err(())`).
pub(crate) fn probe(p: &Processes, cmd: &mut Command) -> Result<Option<Output>, ()> {
    match run(p, cmd, Some(PROBE_TIMEOUT)) {
        Ok(o) => Ok(Some(o)),
        Err(RunError::TimedOut) => Err(()),
        Err(_) => Ok(None),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn the_peak_of_a_process_group_adds_up_its_processes() {
        // Two processes holding 150 MiB each for a second, at once: the group peaked at about
        // 300 MiB, which no single process's count shows.
        let hog = "python3 -c 'import time; b = bytearray(150 << 20); \
                   [b.__setitem__(i, 1) for i in range(0, len(b), 4096)]; time.sleep(1)'";
        let p = Processes::default();
        let o = run(
            &p,
            Command::new("/bin/sh").args(["-c", &format!("{hog} & {hog}; wait")]),
            None,
        )
        .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(o.peak > 280 << 20, "peak {} MiB", o.peak >> 20);
        assert!(o.peak < 1 << 30, "peak {} MiB", o.peak >> 20);
        assert_eq!(
            peaks::parse_stat("42 (a) b) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9 9 123 0"),
            Some((7, 123))
        );
    }

    #[test]
    fn a_timeout_kills_the_process_group() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let start = std::time::Instant::now();
        let p = Processes::default();
        let r = run(
            &p,
            Command::new("/bin/sh").args([
                "-c",
                &format!("sleep 30 & echo $! > {}; wait", pidfile.display()),
            ]),
            Some(Duration::from_millis(300)),
        );
        assert!(matches!(r, Err(RunError::TimedOut)), "{r:?}");
        assert!(start.elapsed() < Duration::from_secs(10));
        let pid = std::fs::read_to_string(&pidfile).unwrap();
        // The grandchild (`sleep`) went with the group.
        std::thread::sleep(Duration::from_millis(100));
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
        assert!(
            stat.is_err() || stat.unwrap().contains(") Z "),
            "sleep {pid} survived"
        );
        let o = run(&p, Command::new("/bin/sh").args(["-c", "echo hi"]), None).unwrap();
        assert_eq!(o.stdout, b"hi\n");
        assert!(o.status.success());
    }
}
