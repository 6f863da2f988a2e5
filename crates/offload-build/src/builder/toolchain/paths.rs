//! Where the toolchain's programs are looked for: `PATH`, versioned names (`clang-NN`), NVIDIA's
//! Python wheels (a virtualenv, the user's and the system's site-packages).

use crate::builder::env::Env;
use crate::builder::error::Error;
use crate::builder::process::{self, Processes};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) fn path_dirs(path: Option<&OsString>) -> Vec<PathBuf> {
    path.map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default()
}

/// A value that is a path (has a separator) or a name to look up on `PATH`.
pub(crate) fn path_or_name(
    value: &str,
    path: Option<&OsString>,
    cwd: &Path,
    searched: &mut Vec<PathBuf>,
) -> Option<PathBuf> {
    let p = Path::new(value);
    if p.components().count() > 1 || p.is_absolute() {
        searched.push(p.to_path_buf());
        return p.is_file().then(|| p.to_path_buf());
    }
    for d in path_dirs(path) {
        searched.push(d.join(value));
    }
    which::which_in(value, path, cwd).ok()
}

pub(crate) fn version_of(name: &str, prefix: &str) -> Option<u32> {
    let rest = name.strip_prefix(prefix)?;
    (!rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
        .then(|| rest.parse().ok())
        .flatten()
}

/// The newest `clang-NN` in `dir`, if any.
pub(crate) fn newest_versioned_in(dir: &Path) -> Option<PathBuf> {
    let mut best: Option<(u32, PathBuf)> = None;
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let name = e.file_name();
        if let Some(n) = name.to_str().and_then(|n| version_of(n, "clang-")) {
            if best.as_ref().is_none_or(|(b, _)| n > *b) {
                best = Some((n, e.path()));
            }
        }
    }
    best.map(|(_, p)| p)
}

/// Whether two compilers are the same installation (same directory once symlinks are
/// resolved: `clang`, `clang++` and `clang-NN` of one LLVM are).
pub(crate) fn same_install(a: &Path, b: &Path) -> bool {
    let dir = |p: &Path| {
        p.canonicalize()
            .ok()
            .and_then(|c| c.parent().map(Path::to_path_buf))
    };
    matches!((dir(a), dir(b)), (Some(x), Some(y)) if x == y)
}

/// The newest `clang-NN` on `PATH` or `/usr/lib/llvm-NN/bin/clang` (`PATH` first on a tie)
/// that has `ld.lld` beside it, recording where it looked.
pub(crate) fn newest_versioned(
    path: Option<&OsString>,
    searched: &mut Vec<PathBuf>,
) -> Option<PathBuf> {
    let mut versioned: Vec<(u32, u8, PathBuf)> = Vec::new();
    for d in path_dirs(path) {
        searched.push(d.join("clang-[0-9]*"));
        if let Ok(rd) = std::fs::read_dir(&d) {
            for e in rd.flatten() {
                let name = e.file_name();
                if let Some(n) = name.to_str().and_then(|n| version_of(n, "clang-")) {
                    versioned.push((n, 0, e.path()));
                }
            }
        }
    }
    searched.push(PathBuf::from("/usr/lib/llvm-[0-9]*/bin/clang"));
    if let Ok(rd) = std::fs::read_dir("/usr/lib") {
        for e in rd.flatten() {
            let name = e.file_name();
            if let Some(n) = name.to_str().and_then(|n| version_of(n, "llvm-")) {
                versioned.push((n, 1, e.path().join("bin/clang")));
            }
        }
    }
    versioned.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    // A versioned clang without its ld.lld (Debian's clang-NN without lld-NN) cannot link
    // device code: skip it rather than fail every compile.
    versioned
        .into_iter()
        .map(|(_, _, p)| p)
        .find(|p| p.is_file() && has_lld(p))
}

/// Whether `ld.lld` sits next to the (symlink-resolved) compiler.
pub(crate) fn has_lld(clang: &Path) -> bool {
    let real = clang.canonicalize().unwrap_or_else(|_| clang.to_path_buf());
    real.parent()
        .is_some_and(|d| d.join(exe("ld.lld")).is_file())
}

pub(crate) fn exe(name: &str) -> String {
    format!("{name}{}", std::env::consts::EXE_SUFFIX)
}

pub(crate) fn same_dir(a: &Path, b: &Path) -> bool {
    matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// The directories of NVIDIA's Python wheels that hold the CUDA tools (`ptxas`, `nvcc`) under
/// a `site-packages`: `nvidia/cuda_nvcc/bin` (CUDA 12's `nvidia-cuda-nvcc-cu12`), then
/// `nvidia/cu13/bin` (CUDA 13's `nvidia-cuda-nvcc`).
pub(crate) const WHEEL_BIN_DIRS: &[&str] = &["nvidia/cuda_nvcc/bin", "nvidia/cu13/bin"];

/// The tool `name` (`ptxas`, `nvcc`) from NVIDIA's wheels ([`WHEEL_BIN_DIRS`]): in the
/// virtualenv of `VIRTUAL_ENV` ([`venv_site_packages`]), then in the `site-packages` of the
/// `python3` on `PATH` ([`python_site_packages`]); every place looked at is recorded.
pub(crate) fn wheel_tool(
    env: &Env<'_>,
    name: &str,
    path: Option<&OsString>,
    cwd: &Path,
    searched: &mut Vec<PathBuf>,
) -> Option<PathBuf> {
    let in_site = |site: &Path, searched: &mut Vec<PathBuf>| -> Option<PathBuf> {
        WHEEL_BIN_DIRS.iter().find_map(|d| {
            let p = site.join(d).join(exe(name));
            searched.push(p.clone());
            p.is_file().then_some(p)
        })
    };
    for site in venv_site_packages(env) {
        if let Some(p) = in_site(&site, searched) {
            return Some(p);
        }
    }
    python_site_packages(env, path, cwd)
        .iter()
        .find_map(|site| in_site(site, searched))
}

/// The `site-packages` directories of the virtualenv `VIRTUAL_ENV` names, if any:
/// `lib/python3*/site-packages` (newest first; `lib/python3/site-packages` when there is none),
/// then Windows' `Lib/site-packages`.
pub(crate) fn venv_site_packages(env: &Env<'_>) -> Vec<PathBuf> {
    let Some(venv) = env.get_os("VIRTUAL_ENV") else {
        return Vec::new();
    };
    let lib = Path::new(&venv).join("lib");
    let mut sites: Vec<PathBuf> = std::fs::read_dir(&lib)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
                .map(|e| e.path().join("site-packages"))
                .collect()
        })
        .unwrap_or_default();
    sites.sort();
    sites.reverse();
    if sites.is_empty() {
        sites.push(lib.join("python3/site-packages"));
    }
    // Windows virtualenvs: Lib/site-packages.
    sites.push(Path::new(&venv).join("Lib").join("site-packages"));
    sites
}

/// The `site-packages` directories of the `python3` on `PATH` (`site.getsitepackages()` and
/// the user's), asked with the probe timeout once per `python3` in a process (the CUDA toolkit
/// and `ptxas` are both looked for there); empty without a `python3`.
pub(crate) fn python_site_packages(
    env: &Env<'_>,
    path: Option<&OsString>,
    cwd: &Path,
) -> Vec<PathBuf> {
    type Answers = std::sync::Mutex<Vec<(PathBuf, Vec<PathBuf>)>>;
    static ASKED: std::sync::OnceLock<Answers> = std::sync::OnceLock::new();
    let Ok(python) = which::which_in(exe("python3"), path, cwd) else {
        return Vec::new();
    };
    let asked = ASKED.get_or_init(Default::default);
    let known = asked.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, sites)) = known.iter().find(|(p, _)| *p == python) {
        return sites.clone();
    }
    drop(known);
    let mut cmd = Command::new(&python);
    cmd.args([
        "-c",
        "import site, sys\n\
         for p in site.getsitepackages() + [site.getusersitepackages()]: print(p)",
    ]);
    let sites: Vec<PathBuf> = match process::probe(env.processes(), &mut cmd) {
        Ok(Some(o)) => String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| PathBuf::from(l.trim()))
            .filter(|p| p.is_absolute())
            .collect(),
        _ => Vec::new(),
    };
    let mut known = asked.lock().unwrap_or_else(|e| e.into_inner());
    known.push((python, sites.clone()));
    sites
}

/// stdout and stderr of a probe of the compiler, or empty when it cannot run; an error when
/// it runs past [`process::PROBE_TIMEOUT`] (a compiler that hangs).
pub(crate) fn run_text(p: &Processes, cmd: &mut Command, clang: &Path) -> Result<String, Error> {
    let args: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    match process::probe(p, cmd) {
        Ok(Some(o)) => {
            let mut s = String::from_utf8_lossy(&o.stdout).into_owned();
            s.push_str(&String::from_utf8_lossy(&o.stderr));
            Ok(s)
        }
        Ok(None) => Ok(String::new()),
        Err(()) => Err(Error::Config(format!(
            "`{} {}` did not answer within {} s and was killed: is it a working compiler?",
            clang.display(),
            args.join(" "),
            process::PROBE_TIMEOUT.as_secs()
        ))),
    }
}
