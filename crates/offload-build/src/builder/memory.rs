//! Memory as a job resource: how much a build may use at once ([`Budget`]: the cgroup's
//! limit, v1 or v2, or `MemAvailable`, less headroom; `OFFLOAD_BUILD_MEMORY` overrides it),
//! what one job is expected to need ([`Need`]: its peak when it last ran, kept with its
//! record; else one measured for the same compiler on a similar source; else a cautious
//! default per kind of job), and whether the kernel killed a process for lack of memory
//! ([`oom_kills`]).
//!
//! The jobs stage starts a job while the predicted needs of the running ones and its own fit
//! the budget; one alone always starts. A job killed for lack of memory runs again alone.

use std::path::Path;

use crate::builder::env::Env;
use crate::builder::error::Error;
pub(crate) use crate::builder::error::human;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// How much memory the jobs of a build may use at once, and where that figure comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Budget {
    /// Bytes of resident memory the running jobs' processes may hold together.
    pub bytes: u64,
    /// Where it comes from, for messages: `the cgroup's limit (6.0 GiB)`, `MemAvailable`,
    /// `OFFLOAD_BUILD_MEMORY`.
    pub from: String,
}

/// The budget of a build: `OFFLOAD_BUILD_MEMORY` (a size such as `6G`, `6000M` or a number of
/// bytes; `0` or `off`: none), else what the machine has free for it now: the least of the
/// room left under each cgroup limit this process is under (v1 and v2; the limit less the
/// working set, page cache that can be dropped left out) and `MemAvailable`, less a headroom
/// of a tenth (at least 256 MiB) for the build itself and what else runs. `None`: no limit
/// (switched off, or nothing could be read).
pub(crate) fn budget(env: &Env<'_>) -> Result<Option<Budget>, Error> {
    if let Some(v) = env.get("OFFLOAD_BUILD_MEMORY") {
        return match v.trim() {
            "0" | "off" | "none" => Ok(None),
            t => match parse_size(t) {
                Some(bytes) if bytes > 0 => Ok(Some(Budget {
                    bytes,
                    from: "OFFLOAD_BUILD_MEMORY".into(),
                })),
                _ => Err(Error::Config(format!(
                    "OFFLOAD_BUILD_MEMORY=`{v}` is not a size (such as 6G, 6000M or a number \
                     of bytes; 0 or off for no limit)"
                ))),
            },
        };
    }
    Ok(machine_budget())
}

/// [`budget`] from the machine alone.
pub(crate) fn machine_budget() -> Option<Budget> {
    let available = mem_available();
    let cgroup = cgroup_room();
    let (room, from) = match (cgroup, available) {
        (Some((room, limit)), Some(a)) if room < a => (
            room,
            format!("the cgroup's memory limit ({})", human(limit)),
        ),
        (Some((room, limit)), None) => (
            room,
            format!("the cgroup's memory limit ({})", human(limit)),
        ),
        (_, Some(a)) => (a, "MemAvailable".to_string()),
        (None, None) => return None,
    };
    // A tenth, at least 256 MiB, at most a quarter (a small cgroup).
    let headroom = (room / 10).max(256 * MIB).min(room / 4);
    Some(Budget {
        bytes: room - headroom,
        from,
    })
}

/// `MemAvailable` of `/proc/meminfo`, in bytes.
fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The room left under the tightest cgroup memory limit this process is under, with that
/// limit: the limit less the cgroup's working set (its usage less its inactive page cache,
/// which the kernel drops before it kills). `None` when no limit applies or none can be read.
fn cgroup_room() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut best: Option<(u64, u64)> = None;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let found = if controllers.is_empty() {
            walk_up(Path::new("/sys/fs/cgroup"), path, room_v2)
                .or_else(|| walk_up(Path::new("/sys/fs/cgroup/unified"), path, room_v2))
        } else if controllers.split(',').any(|c| c == "memory") {
            walk_up(Path::new("/sys/fs/cgroup/memory"), path, room_v1)
        } else {
            None
        };
        if let Some(f) = found {
            best = Some(best.map_or(f, |b| if f.0 < b.0 { f } else { b }));
        }
    }
    best
}

/// The tightest room of `room` over the cgroup at `path` under `root` and its ancestors.
fn walk_up(root: &Path, path: &str, room: fn(&Path) -> Option<(u64, u64)>) -> Option<(u64, u64)> {
    let mut best: Option<(u64, u64)> = None;
    let mut p = Path::new(path.trim_start_matches('/'));
    loop {
        if let Some(r) = room(&root.join(p)) {
            best = Some(best.map_or(r, |b| if r.0 < b.0 { r } else { b }));
        }
        match p.parent() {
            Some(up) if p != Path::new("") => p = up,
            _ => break,
        }
    }
    best
}

/// A number in a cgroup file (`max` and v1's huge "no limit" are `None`).
fn read_num(p: &Path) -> Option<u64> {
    let t = std::fs::read_to_string(p).ok()?;
    let n: u64 = t.trim().parse().ok()?;
    // cgroup v1 writes "no limit" as the largest page-aligned i64.
    (n < (1 << 62)).then_some(n)
}

/// A field of a cgroup's `memory.stat`.
fn stat_field(dir: &Path, name: &str) -> Option<u64> {
    let t = std::fs::read_to_string(dir.join("memory.stat")).ok()?;
    t.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == name).then(|| v.trim().parse().ok()).flatten()
    })
}

/// cgroup v2: `memory.max` less `memory.current` without `inactive_file`.
fn room_v2(dir: &Path) -> Option<(u64, u64)> {
    let limit = read_num(&dir.join("memory.max"))?;
    let used = read_num(&dir.join("memory.current")).unwrap_or(0);
    let inactive = stat_field(dir, "inactive_file").unwrap_or(0);
    Some((limit.saturating_sub(used.saturating_sub(inactive)), limit))
}

/// cgroup v1: `memory.limit_in_bytes` less `memory.usage_in_bytes` without
/// `total_inactive_file`.
fn room_v1(dir: &Path) -> Option<(u64, u64)> {
    let limit = read_num(&dir.join("memory.limit_in_bytes"))?;
    let used = read_num(&dir.join("memory.usage_in_bytes")).unwrap_or(0);
    let inactive = stat_field(dir, "total_inactive_file").unwrap_or(0);
    Some((limit.saturating_sub(used.saturating_sub(inactive)), limit))
}

/// How many processes the kernel has killed for lack of memory since boot (`oom_kill` of
/// `/proc/vmstat`, which counts the kills of cgroup limits too); `None` where it cannot be
/// read. A job that failed while it grew is one that was killed for memory.
pub(crate) fn oom_kills() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/vmstat").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("oom_kill "))
        .and_then(|v| v.trim().parse().ok())
}

/// A size: a number of bytes, or with a unit `K`, `M`, `G`, `T` (powers of 1024, with or
/// without `iB`/`B`).
pub(crate) fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let at = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(at);
    let n: f64 = num.parse().ok()?;
    let unit = unit.trim().to_ascii_uppercase();
    let scale = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 1.0,
        "K" => 1024.0,
        "M" => MIB as f64,
        "G" => GIB as f64,
        "T" => (GIB as f64) * 1024.0,
        _ => return None,
    };
    (n.is_finite() && n >= 0.0).then_some((n * scale) as u64)
}

/// What a job is expected to need, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Need {
    /// Bytes of resident memory at its peak.
    pub bytes: u64,
    /// Where the figure comes from.
    pub from: NeedFrom,
}

/// Where a [`Need`] comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NeedFrom {
    /// The job's own peak when it last ran.
    Recorded,
    /// The peak of a job of the same kind and compiler (a similar source's).
    Similar,
    /// A cautious default for its kind.
    Default,
}

impl std::fmt::Display for NeedFrom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NeedFrom::Recorded => "its recorded peak",
            NeedFrom::Similar => "the peak of a similar job",
            NeedFrom::Default => "a default for its kind",
        })
    }
}

/// The margin over a measured peak: the same compile peaks within a few percent.
pub(crate) fn with_margin(peak: u64) -> u64 {
    peak + peak / 20
}

/// Cautious defaults, for a job no build has measured: what heavy sources of each kind
/// were seen to take (flash-attention-class CUDA sources: `cicc` 3 GiB, `ptxas` 0.6 GiB).
pub(crate) mod default {
    use super::{GIB, MIB};
    /// A device compile by clang (HIP or CUDA), or a host compile.
    pub(crate) const CLANG: u64 = 2 * GIB;
    /// A whole `nvcc -c` or nvcc's device front end (`cicc`).
    pub(crate) const NVCC: u64 = 4 * GIB;
    /// nvcc's other steps: `cudafe++`, `ptxas`, the host compiler (0.6 GiB for the heavy
    /// sources above).
    pub(crate) const NVCC_STEP: u64 = 768 * MIB;
    /// A preprocessing step (`gcc -E`), `fatbinary`, asking nvcc for its steps.
    pub(crate) const LIGHT: u64 = 256 * MIB;
    /// A device link.
    pub(crate) const LINK: u64 = GIB;
}

/// What the commands of a running job report to the job's slot: each process's peak; and,
/// after a kill for lack of memory, the wait to run alone.
pub(crate) trait Meter: Sync {
    /// Records the peak resident memory of one of the job's processes (bytes).
    fn peak(&self, bytes: u64);
    /// The highest peak recorded so far (bytes).
    fn peak_so_far(&self) -> u64;
    /// Waits until the job runs alone (the others ended); it runs alone until the guard is
    /// dropped. `label` and `peak` (what was killed, and how much it held) are for the
    /// progress line that says so. `None` when no other job ran beside it since it started:
    /// alone again, it would be killed again.
    fn alone(&self, label: &str, peak: u64) -> Option<Box<dyn Send + '_>>;
    /// The build's budget, if it has one.
    fn budget(&self) -> Option<&Budget>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_and_without_units() {
        assert_eq!(parse_size("123"), Some(123));
        assert_eq!(parse_size("6G"), Some(6 << 30));
        assert_eq!(parse_size("6GiB"), Some(6 << 30));
        assert_eq!(parse_size("1.5g"), Some(3 << 29));
        assert_eq!(parse_size("600M"), Some(600 << 20));
        assert_eq!(parse_size("64kb"), Some(64 << 10));
        assert_eq!(parse_size("6X"), None);
        assert_eq!(parse_size("G"), None);
        assert_eq!(human(412 << 20), "412 MiB");
        assert_eq!(human(3 << 30), "3.0 GiB");
    }

    #[test]
    fn the_machine_has_a_budget_and_a_kill_count() {
        // Linux: MemAvailable and /proc/vmstat are always there.
        let b = machine_budget().expect("a budget");
        assert!(b.bytes >= 256 * MIB, "{b:?}");
        assert!(oom_kills().is_some());
    }

    #[test]
    fn a_cgroup_limit_is_read_less_its_working_set() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("memory.max"), "1073741824\n").unwrap();
        std::fs::write(d.join("memory.current"), "536870912\n").unwrap();
        std::fs::write(d.join("memory.stat"), "anon 1\ninactive_file 268435456\n").unwrap();
        assert_eq!(room_v2(d), Some((768 << 20, 1 << 30)));
        std::fs::write(d.join("memory.max"), "max\n").unwrap();
        assert_eq!(room_v2(d), None);
        std::fs::write(d.join("memory.limit_in_bytes"), "9223372036854771712\n").unwrap();
        assert_eq!(room_v1(d), None, "v1's no-limit value");
    }
}
