//! The installed LLVM tools the tables are read from, and helpers to run them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

/// One installed LLVM release (`/usr/lib/llvm-<major>`).
pub struct Llvm {
    /// The major version, 19 or 22.
    pub major: u32,
    /// Full version as `clang --version` prints it, e.g. `19.1.7`.
    pub version: String,
    /// `/usr/lib/llvm-<major>`, or `$GEN_TABLES_LLVM<major>` when set.
    pub prefix: PathBuf,
}

impl Llvm {
    /// Finds LLVM `major`; a missing tool is an error (the tables must not silently go stale).
    pub fn find(major: u32) -> Result<Llvm, String> {
        let prefix = std::env::var_os(format!("GEN_TABLES_LLVM{major}"))
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(format!("/usr/lib/llvm-{major}")));
        let clang = prefix.join("bin/clang");
        let out = run(Command::new(&clang).arg("--version"))
            .map_err(|e| format!("{e} (install LLVM {major} with build-support/setup.sh)"))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let version = text
            .split_whitespace()
            .skip_while(|w| *w != "version")
            .nth(1)
            .filter(|v| v.starts_with(&format!("{major}.")))
            .ok_or_else(|| format!("{}: unexpected --version output: {text}", clang.display()))?
            .to_string();
        Ok(Llvm {
            major,
            version,
            prefix,
        })
    }

    /// `<prefix>/bin/<name>`.
    pub fn bin(&self, name: &str) -> PathBuf {
        self.prefix.join("bin").join(name)
    }

    /// `<prefix>/lib`.
    pub fn lib(&self) -> PathBuf {
        self.prefix.join("lib")
    }
}

/// Runs `cmd` to completion with stdin closed; only a failure to start is an error.
pub fn run(cmd: &mut Command) -> Result<Output, String> {
    cmd.stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))
}

/// `f` over `items` on all cores, results in input order (the probes are independent tool
/// runs).
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len().max(1));
    let next = AtomicUsize::new(0);
    let mut results: Vec<(usize, R)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        done.push((i, f(item)));
                    }
                    done
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("probe thread panicked"))
            .collect()
    });
    results.sort_by_key(|&(i, _)| i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// The first file in `dir` whose name starts with `prefix` (sorted, for determinism).
pub fn find_file(dir: &Path, prefix: &str) -> Result<PathBuf, String> {
    let mut hits: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .map(|e| e.path())
        .collect();
    hits.sort();
    hits.into_iter()
        .next()
        .ok_or_else(|| format!("no {prefix}* in {}", dir.display()))
}
/// Runs `cmd` and returns its stdout; a non-zero exit is an error.
pub fn run_ok(cmd: &mut Command) -> Result<String, String> {
    let out = run(cmd)?;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8(out.stdout).map_err(|e| format!("{cmd:?}: output is not UTF-8: {e}"))
}
