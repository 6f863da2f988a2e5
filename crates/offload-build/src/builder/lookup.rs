//! What a compile's result depends on beside its command and the content of the files it
//! read: the environment variables the compiler reads (`CPATH`, `CPLUS_INCLUDE_PATH`,
//! `HIP_*`, `ROCM_*`, `CUDA_*`, …) and the include search. A header found in one directory of
//! the search list would be shadowed by a new file of the same name in another: the cache
//! record keeps a hash ([`Lookups::context`]) over those variables, the search list and, for
//! every header it read, which search directories hold a file of that relative name, so that
//! a new shadowing header or a changed `CPATH` makes the record stale.

use foldhash::{HashMap, HashMapExt};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::command::{Command, Domain, KeyBuilder};

/// Variables clang (and the HIP and CUDA toolchains it finds) read, by name.
const VARS: &[&str] = &[
    "CPATH",
    "C_INCLUDE_PATH",
    "CPLUS_INCLUDE_PATH",
    "OBJC_INCLUDE_PATH",
    "CCC_OVERRIDE_OPTIONS",
    "DEVICE_LIB_PATH",
    "SOURCE_DATE_EPOCH",
];

/// Variables clang and the toolchains read, by prefix (`*_VISIBLE_DEVICES` aside: they
/// choose GPUs at run time).
const PREFIXES: &[&str] = &["HIP_", "HIPCC_", "ROCM_", "CUDA_", "NVCC_"];

/// The search path variables, in the order clang searches them after `-I`.
const PATH_VARS: &[&str] = &["CPATH", "CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH"];

/// The environment and file-existence answers of one build, shared by its jobs.
#[derive(Debug)]
pub(crate) struct Lookups {
    /// The variables that matter, as this process has them.
    env: Vec<(OsString, OsString)>,
    exists: Mutex<HashMap<PathBuf, bool>>,
    cwd: PathBuf,
}

fn read_by_compiler(name: &OsStr) -> bool {
    let n = name.to_string_lossy();
    VARS.contains(&n.as_ref())
        || (PREFIXES.iter().any(|p| n.starts_with(p)) && !n.ends_with("_VISIBLE_DEVICES"))
}

impl Lookups {
    /// Takes this process's environment and working directory.
    pub(crate) fn new() -> Lookups {
        let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
            .filter(|(k, _)| read_by_compiler(k))
            .collect();
        env.sort();
        Lookups {
            env,
            exists: Mutex::new(HashMap::new()),
            cwd: std::env::current_dir().unwrap_or_default(),
        }
    }

    fn exists(&self, p: &Path) -> bool {
        let mut memo = self.exists.lock().unwrap_or_else(|e| e.into_inner());
        *memo.entry(p.to_path_buf()).or_insert_with(|| p.exists())
    }

    /// The variables `cmd` runs with (its own settings over this process's).
    fn env_of(&self, cmd: &Command) -> Vec<(OsString, OsString)> {
        let mut env = self.env.clone();
        for (k, v) in cmd.env() {
            if !read_by_compiler(k) {
                continue;
            }
            env.retain(|(n, _)| n != k);
            if let Some(v) = v {
                env.push((k.clone(), v.clone()));
            }
        }
        env.sort();
        env
    }

    /// The include search list of `cmd` compiling `source`: the source's directory, the
    /// `-iquote`, `-I`, `-isystem` and `-idirafter` directories, then the search path
    /// variables' (an empty entry is the working directory); absolute.
    fn search_list(
        &self,
        cmd: &Command,
        source: &Path,
        env: &[(OsString, OsString)],
    ) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = source.parent().map(Path::to_path_buf).into_iter().collect();
        let args = cmd.args();
        const FLAGS: [&str; 5] = [
            "-iquote",
            "-isystem",
            "-idirafter",
            "--include-directory=",
            "-I",
        ];
        let mut i = 0;
        while i < args.len() {
            let a = args[i].as_encoded_bytes();
            if let Some(flag) = FLAGS.iter().find(|f| a.starts_with(f.as_bytes())) {
                let rest = &a[flag.len()..];
                if !rest.is_empty() {
                    dirs.push(path_of(rest));
                } else if let Some(next) = args.get(i + 1).filter(|_| !flag.ends_with('=')) {
                    dirs.push(PathBuf::from(next));
                    i += 1;
                }
            }
            i += 1;
        }
        for var in PATH_VARS {
            if let Some((_, v)) = env.iter().find(|(k, _)| k == var) {
                dirs.extend(std::env::split_paths(v).map(|p| {
                    if p.as_os_str().is_empty() {
                        PathBuf::from(".")
                    } else {
                        p
                    }
                }));
            }
        }
        dirs.into_iter().map(|d| self.cwd.join(d)).collect()
    }

    /// The hash over what a compile by `cmd` of `source` that read `deps` depends on beside
    /// their content: the variables, the search list, and for each header under a search
    /// directory which search directories hold a file of its name relative to that one.
    pub(crate) fn context(&self, cmd: &Command, source: &Path, deps: &[PathBuf]) -> u128 {
        let env = self.env_of(cmd);
        let dirs = self.search_list(cmd, source, &env);
        let mut k = KeyBuilder::new(Domain::Context);
        k.u64(env.len() as u64);
        for (n, v) in &env {
            k.os(n).os(v);
        }
        k.u64(dirs.len() as u64);
        for d in &dirs {
            k.os(d);
        }
        for dep in deps.iter().skip(1) {
            for found_in in dirs.iter().filter(|d| dep.starts_with(d)) {
                let Ok(rel) = dep.strip_prefix(found_in) else {
                    continue;
                };
                for other in &dirs {
                    let candidate = other.join(rel);
                    k.u64(u64::from(candidate != *dep && self.exists(&candidate)));
                }
            }
        }
        k.finish()
    }
}

/// A path from the bytes of an argument (after a flag).
fn path_of(bytes: &[u8]) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(OsStr::from_bytes(bytes))
    }
    #[cfg(not(unix))]
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shadowing_header_or_a_changed_cpath_changes_the_context() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for sub in ["inc1", "inc2"] {
            std::fs::create_dir(d.join(sub)).unwrap();
        }
        std::fs::write(d.join("inc2/a.h"), "").unwrap();
        let source = d.join("k.hip");
        let mut cmd = Command::new("clang");
        cmd.add_arg(format!("-I{}", d.join("inc1").display()))
            .add_args(["-I".into(), d.join("inc2").into_os_string()]);
        let deps = [source.clone(), d.join("inc2/a.h")];
        let context = |cmd: &Command| Lookups::new().context(cmd, &source, &deps);
        let before = context(&cmd);
        assert_eq!(before, context(&cmd));
        std::fs::write(d.join("inc1/a.h"), "").unwrap();
        let shadowed = context(&cmd);
        assert_ne!(before, shadowed);
        let mut with_cpath = cmd.clone();
        with_cpath
            .env
            .push(("CPATH".into(), Some(d.as_os_str().into())));
        assert_ne!(shadowed, context(&with_cpath));
        let mut with_other = cmd.clone();
        with_other
            .env
            .push(("MAKEFLAGS".into(), Some("-j3".into())));
        assert_eq!(shadowed, context(&with_other));
    }
}
