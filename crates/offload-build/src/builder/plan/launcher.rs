//! The compiler launcher a build's compiles run under (`OFFLOAD_BUILD_LAUNCHER`, a compiler
//! cache in `RUSTC_WRAPPER`), and what kind it is ([`LauncherKind`]).

use std::ffi::OsString;
use std::path::Path;

use crate::builder::env::Env;
use crate::builder::job::LauncherKind;

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

/// How many compiles a build farm takes from this build at once, beside its local job
/// slots: `OFFLOAD_BUILD_FARM_JOBS`, else, under sccache, what `sccache --dist-status` says
/// its scheduler has room for ([`farm_capacity`]); `0` without a farm, and without asking
/// when no compile of the build could go there (`wanted` false).
pub(crate) fn farm_jobs(
    env: &Env<'_>,
    launcher: &[OsString],
    kind: LauncherKind,
    wanted: bool,
) -> usize {
    if let Some(v) = env.get("OFFLOAD_BUILD_FARM_JOBS") {
        return v.trim().parse::<usize>().unwrap_or_else(|_| {
            env.directives().warn(&format!(
                "offload-build: OFFLOAD_BUILD_FARM_JOBS=`{v}` is not a number; ignored"
            ));
            0
        });
    }
    let (LauncherKind::Sccache, Some(program), true) = (kind, launcher.first(), wanted) else {
        return 0;
    };
    let mut cmd = std::process::Command::new(program);
    cmd.arg("--dist-status");
    match crate::builder::process::probe(env.processes(), &mut cmd) {
        Ok(Some(out)) => farm_capacity(&String::from_utf8_lossy(&out.stdout)).map_or(0, |f| f.0),
        _ => 0,
    }
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
}
