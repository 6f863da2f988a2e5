//! Runs one command of a job, under the compile timeout: what it printed, cleaned; a crash
//! summed up in two lines with its full output kept in the cache; a compiler launcher that
//! fails where the compile succeeds without it named as such.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use crate::builder::arch::Target;
use crate::builder::command::{self, Command, Domain, KeyBuilder};
use crate::builder::diag;
use crate::builder::env::Env;
use crate::builder::error::Error;
use crate::builder::fs;
use crate::builder::memory::{self, Meter};
use crate::builder::pch::lifecycle::RunCommand;
use crate::builder::process::{self, Processes, RunError};

/// What the commands of one build share.
pub(crate) struct Executor<'a> {
    pub(crate) processes: &'a Processes,
    pub(crate) cache_dir: &'a Path,
    /// The compile timeout, for every process a job runs.
    pub(crate) timeout: Option<Duration>,
    /// Warnings for the build (damaged cached objects, launchers), in the order they came.
    pub(crate) warnings: Mutex<Vec<String>>,
}

impl RunCommand for Executor<'_> {
    fn run_command(
        &self,
        cmd: &Command,
        target: &Target,
        source: Option<&Path>,
        depfile: Option<&Path>,
        meter: &dyn Meter,
    ) -> Result<Vec<String>, Error> {
        self.exec(cmd, target, source, depfile, meter)
    }
}

/// Whether `out`, a process that failed, was killed for lack of memory: the kernel's count
/// of such kills went up while it ran (`kills_before`), or, where that count cannot be read,
/// it died of `SIGKILL` (a shell's status 137) that nothing here sent.
fn killed_for_memory(out: &process::Output, kills_before: Option<u64>) -> bool {
    if out.status.success() {
        return false;
    }
    match (kills_before, memory::oom_kills()) {
        (Some(a), Some(b)) => b > a,
        _ => {
            #[cfg(unix)]
            {
                use std::os::unix::process::ExitStatusExt;
                out.status.signal() == Some(9) || out.status.code() == Some(137)
            }
            #[cfg(not(unix))]
            false
        }
    }
}

/// What a job is, for messages: `k.hip for gfx90a`, `the host code of k.hip`.
pub(crate) fn job_name(target: &Target, source: Option<&Path>) -> String {
    let name = source
        .and_then(Path::file_name)
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    match (target, source) {
        (Target::Host, Some(_)) => format!("the host code of {name}"),
        (_, Some(_)) => format!("{name} for {target}"),
        (_, None) => format!("the device link for {target}"),
    }
}

impl Executor<'_> {
    /// Runs one command (under the compile timeout); returns what it printed on standard
    /// error (see [`diag::clean`]).
    pub(crate) fn exec(
        &self,
        cmd: &Command,
        target: &Target,
        source: Option<&Path>,
        depfile: Option<&Path>,
        meter: &dyn Meter,
    ) -> Result<Vec<String>, Error> {
        self.exec_within(cmd, target, source, depfile, meter, self.timeout)
    }

    /// [`Executor::exec`] killed after `limit` (what is left of the compile timeout for a
    /// job's later command); a timeout still reports the compile timeout. A command killed
    /// for lack of memory runs again once the job runs alone ([`Meter::alone`]); killed again
    /// alone, it is [`Error::OutOfMemory`].
    pub(crate) fn exec_within(
        &self,
        cmd: &Command,
        target: &Target,
        source: Option<&Path>,
        depfile: Option<&Path>,
        meter: &dyn Meter,
        limit: Option<Duration>,
    ) -> Result<Vec<String>, Error> {
        let mut alone = None;
        let out = loop {
            let kills = memory::oom_kills();
            let out = self.run(cmd, target, source, limit)?;
            meter.peak(out.peak);
            if !killed_for_memory(&out, kills) {
                break out;
            }
            // Killed beside other jobs: again, alone, once they ended (one warning); killed
            // alone, it cannot fit.
            let what = job_name(target, source);
            let again = alone
                .is_none()
                .then(|| meter.alone(&what, out.peak))
                .flatten();
            let Some(again) = again else {
                return Err(Error::OutOfMemory {
                    arch: target.to_string(),
                    source: source.map(Path::to_path_buf),
                    program: command::quoted_program(cmd),
                    peak: out.peak,
                    budget: meter.budget().map(|b| (b.bytes, b.from.clone())),
                });
            };
            self.warn_once(format!(
                "offload-build: {what} was killed for lack of memory (its processes held {} \
                 with other jobs running beside it); compiled again alone",
                memory::human(out.peak)
            ));
            alone = Some(again);
        };
        drop(alone);
        let stderr = diag::printed_lines(&out.stderr, cmd, depfile);
        if out.status.success() {
            return Ok(stderr);
        }
        let mut text = match self.crash_summary(&out.stderr, target) {
            Some(summary) => summary,
            None => stderr.join("\n"),
        };
        if !text.is_empty() {
            text.push('\n');
        }
        Err(Error::CompileFailed {
            arch: target.to_string(),
            source: source.map(Path::to_path_buf),
            command: cmd.line(),
            status: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: text,
            hint: None,
        })
    }

    /// Runs `cmd` under `limit`: what it left, or the error of a start, a timeout, a stop.
    fn run(
        &self,
        cmd: &Command,
        target: &Target,
        source: Option<&Path>,
        limit: Option<Duration>,
    ) -> Result<process::Output, Error> {
        match process::run(self.processes, &mut cmd.to_command(), limit) {
            Ok(o) => Ok(o),
            Err(RunError::Spawn(error)) => Err(Error::Spawn {
                command: cmd.line(),
                error,
            }),
            Err(RunError::TimedOut) => Err(Error::CompileTimedOut {
                arch: target.to_string(),
                source: source.map(Path::to_path_buf),
                program: command::quoted_program(cmd),
                timeout: self.timeout.unwrap_or_default(),
            }),
            Err(RunError::Stopped) => Err(Error::Stopped),
        }
    }

    /// A compiler crash (a stack dump) in two lines: clang's error, and the file in the cache
    /// directory that keeps everything it printed. `None` when it did not crash.
    fn crash_summary(&self, stderr: &[u8], target: &Target) -> Option<String> {
        let text = String::from_utf8_lossy(stderr);
        let at = text
            .find("PLEASE submit a bug report")
            .or_else(|| text.find("Stack dump:"))?;
        let summary = text[..at]
            .lines()
            .map(str::trim)
            .find(|l| l.contains("error"))
            .or_else(|| text[..at].lines().map(str::trim).find(|l| !l.is_empty()))
            .unwrap_or("the compiler crashed")
            .to_string();
        let key = KeyBuilder::new(Domain::CrashLog).bytes(stderr).finish64();
        let log = self
            .cache_dir
            .join(format!("crash-{}-{key:016x}.log", target.file_tag()));
        let place = match fs::write_atomic(&log, stderr) {
            Ok(()) => format!(
                "its full output (with the stack dump) is in {}",
                log.display()
            ),
            Err(_) => "its full output could not be kept".to_string(),
        };
        Some(format!("{summary}\n(the compiler crashed; {place})"))
    }

    /// Runs a step that may start with a launcher; a launcher that cannot be run, or that
    /// fails where the same compile without it succeeds, is one line
    /// ([`Error::LauncherFailed`]).
    pub(crate) fn exec_launched(
        &self,
        cmd: &Command,
        target: &Target,
        source: &Path,
        depfile: &Path,
        meter: &dyn Meter,
    ) -> Result<Vec<String>, Error> {
        let result = self.exec(cmd, target, Some(source), Some(depfile), meter);
        if cmd.launcher().is_empty() {
            return result;
        }
        let launcher = command::command_line(cmd.launcher());
        match result {
            Err(Error::Spawn { error, .. }) => Err(Error::LauncherFailed {
                launcher,
                reason: format!("cannot be run: {error}"),
            }),
            Err(e @ Error::CompileFailed { .. }) => {
                // Without the launcher: when that compile succeeds, the launcher failed.
                let bare = cmd.without_launcher();
                if self
                    .exec(&bare, target, Some(source), Some(depfile), meter)
                    .is_err()
                {
                    return Err(e);
                }
                let Error::CompileFailed { status, stderr, .. } = &e else {
                    return Err(e);
                };
                let said = stderr
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .map(|l| format!(": {l}"))
                    .unwrap_or_default();
                let status = match status {
                    Some(c) => format!("exit status {c}"),
                    None => "killed by a signal".to_string(),
                };
                Err(Error::LauncherFailed {
                    launcher,
                    reason: format!(
                        "failed ({status}{said}) compiling {} for {target}, which succeeds without it",
                        source.display()
                    ),
                })
            }
            Ok(printed) if cmd.outputs.iter().all(|o| o.is_file()) => Ok(printed),
            Ok(_) => {
                // A launcher that says it succeeded but wrote no output (sccache 0.16 with
                // nvcc's `-ptx`): the compile runs again without it, once per job.
                self.warn_once(format!(
                    "offload-build: the compiler launcher `{launcher}` exited successfully \
                     without writing the output of {} (it does not support this compile): \
                     compiled without it",
                    cmd.program.display()
                ));
                let bare = cmd.without_launcher();
                self.exec(&bare, target, Some(source), Some(depfile), meter)
            }
            other => other,
        }
    }

    /// Passes on the warnings gathered so far.
    pub(crate) fn flush_warnings(&self, env: &Env<'_>) {
        let mut warnings = self.warnings.lock().unwrap_or_else(|e| e.into_inner());
        for w in warnings.drain(..) {
            env.directives().warn(&w);
        }
    }

    /// A warning for the build, once.
    pub(crate) fn warn_once(&self, w: String) {
        let mut warnings = self.warnings.lock().unwrap_or_else(|e| e.into_inner());
        if !warnings.contains(&w) {
            warnings.push(w);
        }
    }

    /// A warning for a damaged cached file, compiled again.
    pub(crate) fn warn(&self, path: &Path, why: &str) {
        self.warnings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(format!(
                "offload-build: the cached {} is damaged ({why}): compiled again",
                path.display()
            ));
    }
}
