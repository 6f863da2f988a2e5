//! The one place where [`Build`](crate::builder::Build) reads the environment, and where it talks to
//! Cargo.
//!
//! Every variable read goes through [`Env::get`], which records a
//! `cargo:rerun-if-env-changed=NAME` line (`PATH` included, so a changed toolchain on `PATH`
//! reruns the build script) unless Cargo itself sets the variable for build scripts (`OUT_DIR`,
//! `TARGET`, `CARGO_*`, …): those are part of Cargo's own fingerprint. A unit test checks that
//! no other file of this module reads the environment directly.
//!
//! Values given with [`Build::env`](crate::builder::Build::env) take precedence over the process
//! environment (and are still reported to Cargo), so tests and tools that drive a build outside
//! Cargo do not have to change the process environment.

use crate::builder::process::{CancelToken, Processes};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::sync::Mutex;

use crate::builder::error::Error;

/// Variables Cargo sets for build scripts itself; reading them needs no rerun directive.
fn set_by_cargo(name: &str) -> bool {
    name.starts_with("CARGO_")
        || matches!(
            name,
            "OUT_DIR"
                | "TARGET"
                | "HOST"
                | "NUM_JOBS"
                | "OPT_LEVEL"
                | "DEBUG"
                | "PROFILE"
                | "RUSTC"
        )
}

/// The Cargo directives and warnings of one build, printed as they come (when enabled) and
/// kept for [`Compiled`](crate::builder::Compiled).
#[derive(Debug, Default)]
pub(crate) struct Directives {
    emit: bool,
    state: Mutex<DirectivesState>,
}

#[derive(Debug, Default)]
struct DirectivesState {
    seen: BTreeSet<String>,
    lines: Vec<String>,
    warnings: Vec<String>,
}

impl Directives {
    pub(crate) fn new(emit: bool) -> Directives {
        Directives {
            emit,
            state: Mutex::default(),
        }
    }

    /// Records `cargo:<key>=<path>`, refusing a path with a line break: Cargo reads one
    /// directive per line, so such a name cannot be expressed, and printed as it is its second
    /// line would be a directive of its own (`x\ncargo:rustc-env=…`).
    pub(crate) fn push_path(&self, key: &str, path: &std::path::Path) -> Result<(), Error> {
        // A name that is not UTF-8 is kept as text that holds its bytes (Cargo, which reads
        // text, sees a file that does not exist and reruns the build script, as with a lossy
        // name; `offload-build compile --depfile` writes the real bytes).
        let text = offload_formats::id::spell::text_of_os(path.as_os_str());
        if text.contains(['\n', '\r']) {
            return Err(Error::Config(format!(
                "{}: a file name with a line break cannot be passed to Cargo \
                 (cargo:{key}); rename the file",
                text.escape_debug()
            )));
        }
        self.push(format!("{key}={text}"));
        Ok(())
    }

    /// Records `cargo:<line>` once (later duplicates are dropped). A line break would start
    /// another directive: one left in `line` (a carriage return inside a warning line, a
    /// variable's value) is written escaped, `\r` or `\n` as two characters (paths go
    /// through `push_path`, which refuses them; warnings are split into lines first).
    pub(crate) fn push(&self, line: String) {
        let line = if line.contains(['\n', '\r']) {
            line.replace('\r', "\\r").replace('\n', "\\n")
        } else {
            line
        };
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if !st.seen.insert(line.clone()) {
            return;
        }
        if self.emit {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "cargo:{line}");
        }
        st.lines.push(line);
    }

    /// Records a `cargo:warning=` (one per line of `msg`).
    pub(crate) fn warn(&self, msg: &str) {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .warnings
            .push(msg.to_string());
        for line in msg.lines() {
            self.push(format!("warning={line}"));
        }
    }

    /// Prints a compiler diagnostic as `cargo:warning=` lines, one per line of it (Cargo
    /// reads one directive per line). Not deduplicated line by line: two diagnostics may share
    /// a caret line; [`crate::builder::diag::merge`] already made the diagnostics distinct.
    pub(crate) fn diagnostic(&self, d: &crate::builder::diag::Diagnostic) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        for line in d.lines() {
            let line = format!("warning={line}");
            if self.emit {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "cargo:{line}");
            }
            st.lines.push(line);
        }
    }

    pub(crate) fn take(&self) -> (Vec<String>, Vec<String>) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        (
            std::mem::take(&mut st.lines),
            std::mem::take(&mut st.warnings),
        )
    }
}

/// What one build reads from outside (variables, recording the directives) and the handle
/// of the processes it starts.
#[derive(Debug)]
pub(crate) struct Env<'a> {
    overrides: &'a BTreeMap<OsString, Option<OsString>>,
    out: &'a Directives,
    processes: Processes,
}

impl<'a> Env<'a> {
    pub(crate) fn new(
        overrides: &'a BTreeMap<OsString, Option<OsString>>,
        out: &'a Directives,
    ) -> Env<'a> {
        Env {
            overrides,
            out,
            processes: Processes::default(),
        }
    }

    /// The same, with the processes of a build given `token` ([`Processes::new`]).
    pub(crate) fn with_cancel(self, token: Option<&CancelToken>) -> Env<'a> {
        Env {
            processes: Processes::new(token),
            ..self
        }
    }

    /// The processes the build starts.
    pub(crate) fn processes(&self) -> &Processes {
        &self.processes
    }

    /// The variable's value (an empty value counts as unset), recording the rerun directive.
    pub(crate) fn get_os(&self, name: &str) -> Option<OsString> {
        if !set_by_cargo(name) {
            self.out.push(format!("rerun-if-env-changed={name}"));
        }
        self.value(name).filter(|v| !v.is_empty())
    }

    /// The variable's value: [`Build::env`](crate::builder::Build::env)'s over the process's.
    fn value(&self, name: &str) -> Option<OsString> {
        match self.overrides.get(OsStr::new(name)) {
            Some(v) => v.clone(),
            None => std::env::var_os(name),
        }
    }

    /// The values of `names` the compiles see, for a key alone: no rerun directive (they
    /// choose how a compile runs, as [`crate::builder::toolchain::direct`]'s driver variables, not
    /// what it writes).
    pub(crate) fn peek(&self, names: &[&str]) -> Vec<(OsString, OsString)> {
        names
            .iter()
            .filter_map(|&n| self.value(n).map(|v| (OsString::from(n), v)))
            .collect()
    }

    /// As [`Env::get_os`], as UTF-8 text (a non-UTF-8 value counts as unset), trimmed.
    pub(crate) fn get(&self, name: &str) -> Option<String> {
        self.get_os(name)
            .and_then(|v| v.into_string().ok())
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    }

    /// The variables the compilers read ([`read_by_compiler`]) with the values
    /// they will see, recording a rerun directive for each: every name of
    /// [`VARS`], set or not, and each set one of the prefixes (`HIP_*`, …; one
    /// set only later cannot be named to Cargo ahead of time).
    pub(crate) fn compiler_vars(&self) -> Vec<(OsString, OsString)> {
        let mut names: std::collections::BTreeSet<OsString> =
            VARS.iter().map(OsString::from).collect();
        names.extend(
            std::env::vars_os()
                .map(|(k, _)| k)
                .chain(self.overrides.keys().cloned())
                .filter(|k| read_by_compiler(k)),
        );
        names
            .into_iter()
            .filter_map(|name| {
                let value = match name.to_str() {
                    Some(n) => self.get_os(n),
                    None => std::env::var_os(&name),
                };
                value.map(|v| (name, v))
            })
            .collect()
    }

    pub(crate) fn directives(&self) -> &'a Directives {
        self.out
    }
}

/// Variables clang (and the HIP and CUDA toolchains it finds) read, by name: the one table
/// the context and Cargo's `rerun-if-env-changed` lines ([`Env::compiler_vars`])
/// are derived from.
pub(crate) const VARS: &[&str] = &[
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
pub(crate) const PREFIXES: &[&str] = &["HIP_", "HIPCC_", "ROCM_", "CUDA_", "NVCC_"];

/// Whether the compiler (or a toolchain it finds) reads the variable `name`.
pub(crate) fn read_by_compiler(name: &OsStr) -> bool {
    let n = name.to_string_lossy();
    VARS.contains(&n.as_ref())
        || (PREFIXES.iter().any(|p| n.starts_with(p)) && !n.ends_with("_VISIBLE_DEVICES"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file name with a line break would print a directive of its own: refused, nothing
    /// recorded or printed.
    #[test]
    fn paths_with_line_breaks_are_refused() {
        let d = Directives::new(false);
        let evil = std::path::Path::new("x\ncargo:rustc-env=INJECTED=pwned\ny.hip");
        let e = d.push_path("rerun-if-changed", evil).unwrap_err();
        assert!(
            e.to_string()
                .contains(r"x\ncargo:rustc-env=INJECTED=pwned\ny.hip")
                && e.to_string().contains("line break"),
            "{e}"
        );
        d.push_path("rerun-if-changed", std::path::Path::new("ok.hip"))
            .unwrap();
        let st = d.state.lock().unwrap();
        assert_eq!(st.lines, ["rerun-if-changed=ok.hip"]);
    }

    #[test]
    fn reads_record_rerun_directives_except_cargo_vars() {
        let mut o = BTreeMap::new();
        o.insert(
            OsString::from("OFFLOAD_ARCH"),
            Some(OsString::from(" gfx90a ")),
        );
        o.insert(OsString::from("EMPTY"), Some(OsString::new()));
        let d = Directives::new(false);
        let env = Env::new(&o, &d);
        assert_eq!(env.get("OFFLOAD_ARCH").as_deref(), Some("gfx90a"));
        assert_eq!(env.get("EMPTY"), None);
        let _ = env.get("OUT_DIR");
        let _ = env.get("PATH");
        let (lines, _) = d.take();
        assert_eq!(
            lines,
            [
                "rerun-if-env-changed=OFFLOAD_ARCH",
                "rerun-if-env-changed=EMPTY",
                "rerun-if-env-changed=PATH"
            ]
        );
    }

    /// The gateway is the only reader of the environment in this module.
    #[test]
    fn no_other_file_reads_the_environment() {
        fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    files(&path, out);
                } else if path.extension() == Some(OsStr::new("rs")) {
                    out.push(path);
                }
            }
        }
        let mut all = Vec::new();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/builder");
        files(&dir, &mut all);
        assert!(
            all.len() > 20,
            "the builder's files are not where this test looks"
        );
        for path in all {
            if path == dir.join("env.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for bad in ["env::var(", "env::var_os(", "env::vars("] {
                assert!(!text.contains(bad), "{} calls {bad}", path.display());
            }
        }
    }
}
