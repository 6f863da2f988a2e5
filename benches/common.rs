//! Helpers shared by the benchmarks: running a child with its peak RSS, medians, the
//! machine line of the tables in docs/performance.md.
#![allow(dead_code)]

use std::ffi::OsString;
use std::fs::{self, File};
use std::io;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub type Result<T> = std::result::Result<T, String>;

/// One timed run: wall time and the child's peak RSS.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub wall: Duration,
    pub max_rss_kib: u64,
}

/// Spawns `program args`, waits with `wait4`, and returns the wall time and the
/// child's `ru_maxrss`. Stdout and stderr go to files in `log_dir`, shown on failure.
pub fn measure(
    program: &Path,
    args: &[OsString],
    env: &[(&str, &str)],
    log_dir: &Path,
    cwd: &Path,
) -> Result<Sample> {
    let stdout_path = log_dir.join("child.stdout");
    let stderr_path = log_dir.join("child.stderr");
    let stdout = File::create(&stdout_path).map_err(|e| e.to_string())?;
    let stderr = File::create(&stderr_path).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .envs(env.iter().copied())
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr);

    let start = Instant::now();
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    let pid = libc::pid_t::try_from(child.id()).map_err(|e| e.to_string())?;
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain old data; all-zero is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: pid is our own unwaited child; status and usage are valid for writes.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            break;
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(format!("wait4({pid}): {err}"));
        }
    }
    let wall = start.elapsed();
    // Reaped by wait4 above: dropping `child` does not wait again.
    drop(child);

    let exited_ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    if !exited_ok {
        let how = if libc::WIFEXITED(status) {
            format!("exit status {}", libc::WEXITSTATUS(status))
        } else if libc::WIFSIGNALED(status) {
            format!("killed by signal {}", libc::WTERMSIG(status))
        } else {
            format!("wait status {status:#x}")
        };
        let err = fs::read_to_string(&stderr_path).unwrap_or_default();
        let out = fs::read_to_string(&stdout_path).unwrap_or_default();
        return Err(format!(
            "{} failed ({how})\n  command: {} {}\n  stdout: {}\n  stderr: {}",
            program.display(),
            program.display(),
            args.iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" "),
            out.trim(),
            err.trim()
        ));
    }
    Ok(Sample {
        wall,
        max_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
    })
}

pub fn median(samples: &[Sample]) -> Duration {
    let mut v: Vec<Duration> = samples.iter().map(|s| s.wall).collect();
    v.sort();
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2
    }
}

pub fn min_max(samples: &[Sample]) -> String {
    let walls = samples.iter().map(|s| ms(s.wall));
    let min = walls.clone().fold(f64::INFINITY, f64::min);
    let max = walls.fold(0.0, f64::max);
    format!("{min:.1}–{max:.1}")
}

pub fn peak(samples: &[Sample]) -> u64 {
    samples.iter().map(|s| s.max_rss_kib).max().unwrap_or(0)
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub fn kib_to_mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

pub fn bytes_to_mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// The first line of `tool --version` that names a version.
pub fn tool_version(tool: &Path) -> String {
    Command::new(tool)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .ok()
        .and_then(|o| {
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            text.lines()
                .find(|l| l.contains("version"))
                .map(|l| l.trim().to_string())
        })
        .unwrap_or_else(|| "version unknown".to_string())
}

pub fn machine_line(target_dir: &Path, runs: usize) -> String {
    let nproc = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpu = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string());
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".to_string());
    format!(
        "Machine: {cpu}, nproc {nproc}, Linux {kernel}, target/ on {}; {} (UTC). \
         Median of {runs} runs per cell after 1 warm-up, the two tools interleaved; \
         peak RSS is the child's largest `ru_maxrss`.",
        filesystem_of(target_dir),
        today_utc()
    )
}

/// The filesystem type of the mount that holds `path` (longest mount point prefix).
pub fn filesystem_of(path: &Path) -> String {
    let path = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mounts = fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let mut best: Option<(usize, String)> = None;
    for line in mounts.lines() {
        let mut fields = line.split(' ');
        let (Some(_dev), Some(mount), Some(fstype)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let mount = unescape_mount(mount);
        if path.starts_with(&mount) {
            let depth = Path::new(&mount).components().count();
            if best.as_ref().is_none_or(|(d, _)| depth >= *d) {
                best = Some((depth, fstype.to_string()));
            }
        }
    }
    best.map_or_else(|| "unknown filesystem".to_string(), |(_, t)| t)
}

/// /proc/self/mounts writes space, tab, newline and backslash as octal escapes.
pub fn unescape_mount(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Today's date, YYYY-MM-DD in UTC, without a date crate (days-to-civil conversion).
pub fn today_utc() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
