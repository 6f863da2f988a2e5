//! Running one tool once: a fresh working directory per tool, `argv[0]` forced to
//! `clang-offload-bundler`, stdin fed from memory, stdout and stderr captured, and a wall-clock
//! limit enforced by killing the child.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use super::{ARGV0, require};

/// One of the three bundlers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// Debian clang-offload-bundler 19.1.7.
    Llvm19,
    /// Debian clang-offload-bundler 22.1.8.
    Llvm22,
    /// Our `offload-bundler` (or the binary named by `OFFLOAD_BUNDLER_UNDER_TEST`).
    Ours,
}

impl Tool {
    /// Short name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Llvm19 => "llvm19",
            Tool::Llvm22 => "llvm22",
            Tool::Ours => "ours",
        }
    }

    /// The executable; a missing reference tool fails the test with the setup hint.
    pub fn path(self) -> PathBuf {
        match self {
            Tool::Llvm19 => require("/usr/lib/llvm-19/bin/clang-offload-bundler"),
            Tool::Llvm22 => require("/usr/lib/llvm-22/bin/clang-offload-bundler"),
            Tool::Ours => std::env::var_os("OFFLOAD_BUNDLER_UNDER_TEST").map_or_else(
                || PathBuf::from(env!("CARGO_BIN_EXE_offload-bundler")),
                PathBuf::from,
            ),
        }
    }
}

/// How a child ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Normal exit with this code.
    Exit(i32),
    /// Killed by this signal (LLVM: 8 = SIGFPE, 11 = SIGSEGV).
    Signal(i32),
    /// Still running at the time limit; it was killed.
    TimedOut,
}

impl Status {
    /// Exit code 0.
    pub fn success(self) -> bool {
        self == Status::Exit(0)
    }
}

/// What one run produced (files are compared on disk, see [`list_dir`]).
#[derive(Debug)]
pub struct Output {
    pub status: Status,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub elapsed: Duration,
}

/// At most this much of stdout/stderr is kept; the rest is drained and counted, so a tool that
/// loops printing cannot exhaust memory.
const CAPTURE_LIMIT: usize = 256 << 20;

/// Run `tool` with `args` in `dir`, feeding `stdin`, killing it after `limit`.
pub fn run_tool(tool: Tool, dir: &Path, args: &[String], stdin: &[u8], limit: Duration) -> Output {
    run_tool_env(tool, dir, args, stdin, limit, &[])
}

/// [`run_tool`] with extra environment variables.
pub fn run_tool_env(
    tool: Tool,
    dir: &Path,
    args: &[String],
    stdin: &[u8],
    limit: Duration,
    env: &[(String, String)],
) -> Output {
    let exe = tool.path();
    let mut cmd = Command::new(&exe);
    cmd.arg0(ARGV0)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so that a time-out kills whatever it started too (a child
        // that outlived it would hold the pipes open).
        .process_group(0);
    // Environment that changes LLVM's output (compression, verbosity) must not leak in.
    for var in [
        "OFFLOAD_BUNDLER_COMPRESS",
        "OFFLOAD_BUNDLER_VERBOSE",
        "OFFLOAD_BUNDLER_COMPRESSION_LEVEL",
        "OFFLOAD_BUNDLER_IGNORE_ENV_VAR",
        "COMPRESSED_BUNDLE_FORMAT_VERSION",
        "OFFLOAD_BUNDLER_COMPRESSION_THREADS",
        "OFFLOAD_BUNDLER_MAX_UNCOMPRESSED_SIZE",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("RUST_BACKTRACE", "0");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {} ({}): {e}", tool.name(), exe.display()));

    let mut child_stdin = child.stdin.take().expect("piped stdin");
    let input = stdin.to_vec();
    let feeder = thread::spawn(move || {
        // A tool that does not read stdin closes the pipe: that is not an error here.
        let _ = child_stdin.write_all(&input);
    });
    let out_reader = spawn_reader(child.stdout.take().expect("piped stdout"));
    let err_reader = spawn_reader(child.stderr.take().expect("piped stderr"));

    let status = loop {
        match child.try_wait().expect("waiting for child") {
            Some(st) => break convert(st),
            None if start.elapsed() >= limit => {
                let pgid = i32::try_from(child.id()).expect("pid fits i32");
                // SAFETY: sends SIGKILL to the process group created for this child above.
                unsafe {
                    libc::kill(-pgid, libc::SIGKILL);
                }
                let _ = child.wait();
                break Status::TimedOut;
            }
            None => thread::sleep(Duration::from_millis(2)),
        }
    };
    let elapsed = start.elapsed();
    let _ = feeder.join();
    Output {
        status,
        stdout: out_reader.join().expect("stdout reader"),
        stderr: err_reader.join().expect("stderr reader"),
        elapsed,
    }
}

fn convert(st: std::process::ExitStatus) -> Status {
    match (st.code(), st.signal()) {
        (Some(c), _) => Status::Exit(c),
        (None, Some(s)) => Status::Signal(s),
        (None, None) => unreachable!("exit status without code or signal"),
    }
}

fn spawn_reader(mut r: impl Read + Send + 'static) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = CAPTURE_LIMIT.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
            }
        }
        kept
    })
}

/// A file or directory found in a run directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Dir,
    File(u64),
    Other,
}

/// Every entry under `dir`, recursively, keyed by its `/`-separated relative path.
pub fn list_dir(dir: &Path) -> BTreeMap<String, Entry> {
    let mut out = BTreeMap::new();
    walk(dir, "", &mut out);
    out
}

fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Entry>) {
    let rd = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("read_dir {}: {e}", dir.display()));
    for ent in rd {
        let ent = ent.expect("dir entry");
        let name = format!("{prefix}{}", ent.file_name().to_string_lossy());
        let md = ent.path().symlink_metadata().expect("metadata");
        if md.is_dir() {
            out.insert(name.clone(), Entry::Dir);
            walk(&ent.path(), &format!("{name}/"), out);
        } else if md.is_file() {
            out.insert(name, Entry::File(md.len()));
        } else {
            out.insert(name, Entry::Other);
        }
    }
}

/// The exact contents of every file under `dir` (directories map to `None`).
pub fn snapshot(dir: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    list_dir(dir)
        .into_iter()
        .map(|(name, e)| {
            let bytes = match e {
                Entry::File(_) => Some(std::fs::read(dir.join(&name)).expect("read file")),
                _ => None,
            };
            (name, bytes)
        })
        .collect()
}

/// A fresh, empty working directory under the cargo target tmpdir, removed on drop unless
/// `OFFLOAD_HARNESS_KEEP` is set.
pub struct RunDir {
    /// Dropping it removes the directory; `None` when kept.
    _dir: Option<tempfile::TempDir>,
    path: PathBuf,
}

impl RunDir {
    pub fn new(label: &str) -> RunDir {
        let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("runs");
        std::fs::create_dir_all(&base).expect("create runs dir");
        let safe: String = label
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let dir = tempfile::Builder::new()
            .prefix(&format!("{safe}-"))
            .tempdir_in(&base)
            .expect("create run dir");
        let path = dir.path().to_path_buf();
        if super::env_flag("OFFLOAD_HARNESS_KEEP") {
            println!("    kept run dir {}", path.display());
            let _ = dir.keep();
            return RunDir { _dir: None, path };
        }
        RunDir {
            _dir: Some(dir),
            path,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Runs the crate's `offload-build` with `args` in `dir` (plus the variables `env`, and no
/// backtraces) and returns its exit code (-1 when a signal ended it), stdout and stderr as
/// text: the runner of the `inspect`, `extract` and `check` tests.
pub fn offload_build(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_offload-build"))
        .current_dir(dir)
        .args(args)
        .envs(env.iter().copied())
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("run offload-build");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
