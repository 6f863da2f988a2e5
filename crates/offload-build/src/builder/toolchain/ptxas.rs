//! Where `ptxas` is found, for CUDA cubins compiled by clang.

use crate::builder::env::Env;
use crate::builder::error::Error;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::builder::toolchain::paths::{exe, path_or_name, wheel_tool};

/// Finds `ptxas`, recording every place looked at: [`Build::ptxas`](crate::builder::Build::ptxas);
/// `PTXAS` (a path or a name on `PATH`; naming none is an error, not a fallback); the CUDA install's
/// `bin/ptxas`; `ptxas` on `PATH`; NVIDIA's wheels ([`WHEEL_BIN_DIRS`](crate::builder::toolchain::paths::WHEEL_BIN_DIRS)) in the virtualenv of
/// `VIRTUAL_ENV` (`lib/python3*/site-packages`), then in the `site-packages` of the `python3`
/// on `PATH` (asked with a 30 s timeout).
pub(crate) fn find_ptxas(
    env: &Env<'_>,
    explicit: Option<&Path>,
    cuda: Option<&Path>,
    path: Option<&OsString>,
    cwd: &Path,
) -> Result<(Option<PathBuf>, Vec<PathBuf>), Error> {
    let mut searched = Vec::new();
    if let Some(p) = explicit {
        searched.push(p.to_path_buf());
        if p.is_file() {
            return Ok((Some(p.to_path_buf()), searched));
        }
        return Err(Error::ToolNotFound {
            tool: "ptxas (set with Build::ptxas)".into(),
            searched,
        });
    }
    if let Some(v) = env.get("PTXAS") {
        let mut tried = Vec::new();
        return match path_or_name(&v, path, cwd, &mut tried) {
            Some(p) => Ok((Some(p), tried)),
            None => Err(Error::ToolNotFound {
                tool: format!("ptxas (PTXAS=`{v}` names none; it is not looked for elsewhere)"),
                searched: tried,
            }),
        };
    }
    if let Some(c) = cuda {
        let p = c.join("bin").join(exe("ptxas"));
        searched.push(p.clone());
        if p.is_file() {
            return Ok((Some(p), searched));
        }
    }
    if let Some(p) = path_or_name(&exe("ptxas"), path, cwd, &mut searched) {
        return Ok((Some(p), searched));
    }
    let found = wheel_tool(env, "ptxas", path, cwd, &mut searched);
    Ok((found, searched))
}
