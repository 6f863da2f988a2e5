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
