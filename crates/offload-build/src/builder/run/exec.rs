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
    ) -> Result<Vec<String>, Error> {
        self.exec(cmd, target, source, depfile)
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
    ) -> Result<Vec<String>, Error> {
        self.exec_within(cmd, target, source, depfile, self.timeout)
    }

    /// [`Executor::exec`] killed after `limit` (what is left of the compile timeout for a
    /// job's later command); a timeout still reports the compile timeout.
    pub(crate) fn exec_within(
        &self,
        cmd: &Command,
        target: &Target,
        source: Option<&Path>,
        depfile: Option<&Path>,
        limit: Option<Duration>,
    ) -> Result<Vec<String>, Error> {
        let out = match process::run(self.processes, &mut cmd.to_command(), limit) {
            Ok(o) => o,
            Err(RunError::Spawn(error)) => {
                return Err(Error::Spawn {
                    command: cmd.line(),
                    error,
                });
            }
            Err(RunError::TimedOut) => {
                return Err(Error::CompileTimedOut {
                    arch: target.to_string(),
                    source: source.map(Path::to_path_buf),
                    program: command::quoted_program(cmd),
                    timeout: self.timeout.unwrap_or_default(),
                });
            }
            Err(RunError::Stopped) => return Err(Error::Stopped),
        };
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
    ) -> Result<Vec<String>, Error> {
        let result = self.exec(cmd, target, Some(source), Some(depfile));
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
                    .exec(&bare, target, Some(source), Some(depfile))
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
                let mut warnings = self.warnings.lock().unwrap_or_else(|e| e.into_inner());
                let w = format!(
                    "offload-build: the compiler launcher `{launcher}` exited successfully \
                     without writing the output of {} (it does not support this compile): \
                     compiled without it",
                    cmd.program.display()
                );
                if !warnings.contains(&w) {
                    warnings.push(w);
                }
                drop(warnings);
                self.exec(&cmd.without_launcher(), target, Some(source), Some(depfile))
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
