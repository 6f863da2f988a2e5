//! The compiler launcher a build's compiles run under (`OFFLOAD_BUILD_LAUNCHER`, a compiler
//! cache in `RUSTC_WRAPPER`), and what kind it is ([`LauncherKind`]).

use std::ffi::OsString;
use std::path::Path;

use crate::builder::env::Env;
use crate::builder::job::LauncherKind;
use crate::builder::process::Processes;

/// The launcher: `OFFLOAD_BUILD_LAUNCHER`, else a caching `RUSTC_WRAPPER`.
pub(crate) fn launcher(env: &Env<'_>) -> (Vec<OsString>, LauncherKind) {
    if let Some(v) = env.get("OFFLOAD_BUILD_LAUNCHER") {
        let l: Vec<OsString> = v.split_whitespace().map(OsString::from).collect();
        let kind = kind_of(&l);
        return (l, kind);
    }
    if let Some(w) = env.get_os("RUSTC_WRAPPER") {
        let stem = Path::new(&w)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if matches!(stem.as_str(), "sccache" | "cachepot" | "buildcache") {
            let l = vec![w];
            let kind = kind_of(&l);
            return (l, kind);
        }
    }
    (Vec::new(), LauncherKind::None)
}

/// What the launcher `l` is, by its program's file stem.
pub(crate) fn kind_of(l: &[OsString]) -> LauncherKind {
    let stem = l
        .first()
        .and_then(|p| Path::new(p).file_stem())
        .map(|s| s.to_string_lossy().into_owned());
    match stem.as_deref() {
        None => LauncherKind::None,
        Some("sccache") => LauncherKind::Sccache,
        Some("ccache") => LauncherKind::Ccache,
        Some("cachepot" | "buildcache") => LauncherKind::OtherCache,
        Some(_) => LauncherKind::Other,
    }
}

/// A build farm's slots: how many compiles it takes from this build at once, beside the local
/// job slots. Decided in the plan ([`farm`]); sccache is asked ([`Farm::ask`]) when the job
/// graph has a compile ready that may go there (or, once the build ran compiles that may not,
/// to say why they did not), so that a build whose compiles all come from the cache spawns
/// nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Farm {
    /// No farm (no sccache).
    None,
    /// `OFFLOAD_BUILD_FARM_JOBS` (under sccache).
    Set(usize),
    /// What this sccache's `--dist-status` says its scheduler has room for
    /// ([`farm_capacity`]).
    Ask(OsString),
}

impl Farm {
    /// Whether a compile that sccache can send may take a farm slot (then
    /// [`CompileJob::remote`](crate::builder::job::CompileJob::remote) is set).
    pub(crate) fn may_take(&self) -> bool {
        !matches!(self, Farm::None | Farm::Set(0))
    }

    /// The farm's slots now: `OFFLOAD_BUILD_FARM_JOBS`, or what sccache's scheduler has
    /// room for.
    pub(crate) fn ask(&self, p: &Processes) -> usize {
        match self {
            Farm::None => 0,
            Farm::Set(n) => *n,
            Farm::Ask(program) => {
                let mut cmd = std::process::Command::new(program);
                cmd.arg("--dist-status");
                match crate::builder::process::probe(p, &mut cmd) {
                    Ok(Some(out)) => {
                        farm_capacity(&String::from_utf8_lossy(&out.stdout)).map_or(0, |f| f.0)
                    }
                    _ => 0,
                }
            }
        }
    }
}

/// The build farm of a build under `launcher`: under sccache, `OFFLOAD_BUILD_FARM_JOBS`, else
/// its scheduler's room when asked ([`Farm::Ask`]); without sccache [`Farm::None`] (no other
/// launcher sends compiles to a farm).
pub(crate) fn farm(env: &Env<'_>, launcher: &[OsString], kind: LauncherKind) -> Farm {
    if kind != LauncherKind::Sccache {
        return Farm::None;
    }
    if let Some(v) = env.get("OFFLOAD_BUILD_FARM_JOBS") {
        return Farm::Set(v.trim().parse::<usize>().unwrap_or_else(|_| {
            env.directives().warn(&format!(
                "offload-build: OFFLOAD_BUILD_FARM_JOBS=`{v}` is not a number; ignored"
            ));
            0
        }));
    }
    launcher
        .first()
        .map_or(Farm::None, |program| Farm::Ask(program.clone()))
}

/// The compiles a scheduler's farm has room for, and its number of servers, from
/// `sccache --dist-status`'s JSON (`{"SchedulerStatus":[url,{"num_servers":N,"num_cpus":C,
/// "in_progress":J}]}`): a build server takes jobs while it runs fewer than its cores plus
/// one plus an eighth of them (sccache-dist's `load_weight`), less the jobs of every client
/// in progress. `None` when the scheduler is not reached or distribution is off. Read by
/// hand: the build crate takes no JSON parser (`integration/deps.rs`), and these are three
/// unsigned numbers after their names.
pub(crate) fn farm_capacity(status: &str) -> Option<(usize, usize)> {
    let s = &status[status.find("{\"SchedulerStatus\"")?..];
    let field = |k: &str| -> Option<usize> {
        let at = s.find(&format!("\"{k}\""))? + k.len() + 2;
        let rest = s[at..].trim_start().strip_prefix(':')?.trim_start();
        let end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        rest[..end].parse().ok()
    };
    let (servers, cpus, busy) = (
        field("num_servers")?,
        field("num_cpus")?,
        field("in_progress")?,
    );
    let room = cpus + servers + cpus / 8;
    Some((room.saturating_sub(busy), servers))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_farms_room_comes_from_its_scheduler_status() {
        let s = r#"{"SchedulerStatus":["http://127.0.0.1:10600/",{"num_servers":2,"num_cpus":16,"in_progress":3}]}"#;
        assert_eq!(farm_capacity(s), Some((16 + 2 + 2 - 3, 2)));
        let full = r#"{"SchedulerStatus":["u",{"num_servers":1,"num_cpus":2,"in_progress":9}]}"#;
        assert_eq!(farm_capacity(full), Some((0, 1)));
        assert_eq!(farm_capacity(r#"{"Disabled":"disabled"}"#), None);
        assert_eq!(
            farm_capacity(r#"{"NotConnected":["u","connection refused"]}"#),
            None
        );
        assert_eq!(farm_capacity("not json"), None);
        let spaced =
            r#"{"SchedulerStatus": ["u", {"num_servers": 1, "num_cpus": 8, "in_progress": 0}]}"#;
        assert_eq!(farm_capacity(spaced), Some((8 + 1 + 1, 1)));
        let cut = r#"{"SchedulerStatus":["u",{"num_servers":1,"num_cpus":"#;
        assert_eq!(farm_capacity(cut), None);
    }

    /// The farm's answer: sccache's `--dist-status`, asked when [`Farm::ask`] is called (the
    /// job graph calls it only when a compile that may go there is ready).
    #[cfg(unix)]
    #[test]
    fn the_farm_asks_sccache_its_room() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let asked = dir.path().join("asked");
        let sccache = dir.path().join("sccache");
        let status = r#"{"SchedulerStatus":["u",{"num_servers":1,"num_cpus":4,"in_progress":1}]}"#;
        std::fs::write(
            &sccache,
            format!(
                "#!/bin/sh\necho \"$1\" >> '{}'\necho '{status}'\n",
                asked.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&sccache, std::fs::Permissions::from_mode(0o755)).unwrap();
        let p = Processes::default();
        let farm = Farm::Ask(sccache.into_os_string());
        assert!(farm.may_take());
        assert!(!asked.exists(), "made without asking");
        assert_eq!(farm.ask(&p), 4 + 1 - 1);
        assert_eq!(std::fs::read_to_string(&asked).unwrap(), "--dist-status\n");
        assert!(!Farm::Set(0).may_take() && !Farm::None.may_take());
        assert_eq!(Farm::Set(3).ask(&p), 3);
        assert_eq!(Farm::None.ask(&p), 0);
    }
}
