//! A differential case: input files, a sequence of steps (argument lists) executed by each tool in
//! its own directory, which reference ours must match, and the two checks that run it:
//! [`check_references`] (LLVM 19 against LLVM 22: validates the case itself) and [`check_ours`]
//! (ours against the chosen reference).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::diff::{Scope, compare, describe, show};
use super::env_flag;
use super::run::{Output, RunDir, Status, Tool, run_tool_env, snapshot};

/// Which LLVM ours must match in a case.
#[derive(Clone, Copy, Debug)]
pub enum Reference {
    /// LLVM 19 and 22 agree (asserted by `references_agree`); ours is compared with LLVM 22.
    Both,
    /// LLVM 19 and 22 differ (asserted); ours follows LLVM 22 for the reason given.
    Llvm22(&'static str),
    /// LLVM 19 and 22 differ (asserted); ours follows LLVM 19 for the reason given.
    Llvm19(&'static str),
}

/// An expectation on one tool's result of one step, independent of the other tools: pins the
/// observed LLVM behaviour a case relies on (e.g. the exact text of a divergence).
#[derive(Clone, Debug)]
pub enum Check {
    Status(Status),
    Stdout(Vec<u8>),
    Stderr(Vec<u8>),
    StdoutContains(String),
    StderrContains(String),
    /// The run directory holds this file with exactly these bytes.
    File(String, Vec<u8>),
    /// The run directory holds this file (LLVM's partial outputs after an error).
    HasFile(String),
    /// The run directory lacks this file.
    NoFile(String),
}

#[derive(Clone, Debug)]
enum Source {
    Path(PathBuf),
    Bytes(Vec<u8>),
}

impl Source {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Source::Path(p) => std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
            Source::Bytes(b) => b.clone(),
        }
    }
}

#[derive(Clone, Debug)]
struct Step {
    args: Vec<String>,
    stdin: Option<Source>,
    /// Run by LLVM 22 in every directory, must succeed, not compared.
    setup: bool,
    expects: Vec<(Tool, Check)>,
}

impl Step {
    fn display(&self) -> String {
        let mut s = self.args.join(" ");
        if self.stdin.is_some() {
            s.push_str(" <stdin");
        }
        s
    }
}

/// One differential case.
#[derive(Clone, Debug)]
pub struct Case {
    name: String,
    inputs: Vec<(String, Source)>,
    steps: Vec<Step>,
    reference: Reference,
    scope: Scope,
    limit: Duration,
    env: Vec<(String, String)>,
}

/// Inputs above this size are hard-linked into the run directories instead of copied; cases
/// must not write to them.
const LINK_ABOVE: u64 = 1 << 20;

impl Case {
    pub fn new(name: impl Into<String>) -> Case {
        Case {
            name: name.into(),
            inputs: Vec::new(),
            steps: Vec::new(),
            reference: Reference::Both,
            scope: Scope::Everything,
            limit: Duration::from_secs(60),
            env: Vec::new(),
        }
    }

    /// The same case under another name.
    pub fn rename(mut self, name: impl Into<String>) -> Case {
        self.name = name.into();
        self
    }

    /// Place fixture file `src` in every run directory as `name`.
    pub fn input(mut self, name: &str, src: impl Into<PathBuf>) -> Case {
        self.inputs
            .push((name.to_string(), Source::Path(src.into())));
        self
    }

    /// Place a file with these bytes in every run directory (also used for pre-existing outputs).
    pub fn file(mut self, name: &str, bytes: impl Into<Vec<u8>>) -> Case {
        self.inputs
            .push((name.to_string(), Source::Bytes(bytes.into())));
        self
    }

    /// A compared step.
    pub fn step<S: AsRef<str>>(mut self, args: impl IntoIterator<Item = S>) -> Case {
        self.steps.push(Step {
            args: args.into_iter().map(|a| a.as_ref().to_string()).collect(),
            stdin: None,
            setup: false,
            expects: Vec::new(),
        });
        self
    }

    /// A step run by LLVM 22 for every tool (e.g. to make a bundle that LLVM wrote); it must
    /// succeed and is not compared.
    pub fn setup<S: AsRef<str>>(mut self, args: impl IntoIterator<Item = S>) -> Case {
        self = self.step(args);
        self.steps.last_mut().expect("step").setup = true;
        self
    }

    /// Feed this fixture file to the last step's stdin.
    pub fn stdin_file(mut self, src: impl Into<PathBuf>) -> Case {
        self.last_step().stdin = Some(Source::Path(src.into()));
        self
    }

    /// Feed these bytes to the last step's stdin.
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Case {
        self.last_step().stdin = Some(Source::Bytes(bytes.into()));
        self
    }

    /// Expect `check` of `tool`'s result of the last step.
    pub fn expect(mut self, tool: Tool, check: Check) -> Case {
        self.last_step().expects.push((tool, check));
        self
    }

    /// Expect `check` of both LLVM versions' results of the last step.
    pub fn expect_llvm(self, check: Check) -> Case {
        self.expect(Tool::Llvm19, check.clone())
            .expect(Tool::Llvm22, check)
    }

    pub fn reference(mut self, r: Reference) -> Case {
        self.reference = r;
        self
    }

    /// Compare only exit statuses.
    pub fn status_only(mut self) -> Case {
        self.scope = Scope::Status;
        self
    }

    /// Set an environment variable for every step of every tool.
    pub fn env(mut self, name: &str, value: &str) -> Case {
        self.env.push((name.to_string(), value.to_string()));
        self
    }

    /// Per-step time limit (default 60 s).
    pub fn limit(mut self, limit: Duration) -> Case {
        self.limit = limit;
        self
    }

    fn last_step(&mut self) -> &mut Step {
        self.steps.last_mut().expect("add a step first")
    }

    fn stage(&self, label: &str) -> RunDir {
        let dir = RunDir::new(&format!("{}-{label}", self.name));
        for (name, src) in &self.inputs {
            let dst = dir.path().join(name);
            if let Some(parent) = dst.parent() {
                std::fs::create_dir_all(parent).expect("create input dir");
            }
            match src {
                Source::Path(p) if p.metadata().map(|m| m.len()).unwrap_or(0) > LINK_ABOVE => {
                    std::fs::hard_link(p, &dst)
                        .or_else(|_| std::fs::copy(p, &dst).map(drop))
                        .expect("link input");
                }
                _ => std::fs::write(&dst, src.bytes()).expect("write input"),
            }
        }
        dir
    }

    fn run(&self, tool: Tool, dir: &Path, step: &Step) -> Output {
        let stdin = step.stdin.as_ref().map(Source::bytes).unwrap_or_default();
        run_tool_env(tool, dir, &step.args, &stdin, self.limit, &self.env)
    }

    /// Run a setup step with LLVM 22; a failure is a broken case.
    fn run_setup(&self, dir: &Path, step: &Step) -> Result<(), String> {
        let out = self.run(Tool::Llvm22, dir, step);
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "setup step `{}` failed under llvm22 ({:?}): {}",
                step.display(),
                out.status,
                show(&out.stderr)
            ))
        }
    }
}

fn selected(group: &str, cases: Vec<Case>) -> Vec<Case> {
    let filter = std::env::var("OFFLOAD_CASE").unwrap_or_default();
    let cases: Vec<Case> = cases
        .into_iter()
        .filter(|c| format!("{group}/{}", c.name).contains(&filter))
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    for c in &cases {
        assert!(
            seen.insert(c.name.clone()),
            "duplicate case name {}",
            c.name
        );
        assert!(
            c.steps.iter().any(|s| !s.setup),
            "case {} compares nothing",
            c.name
        );
    }
    cases
}

fn check_expects(tool: Tool, step: &Step, out: &Output, dir: &Path, problems: &mut Vec<String>) {
    for (t, check) in &step.expects {
        if *t != tool {
            continue;
        }
        let failed = match check {
            Check::Status(s) => (out.status != *s).then(|| format!("status {:?}", out.status)),
            Check::Stdout(b) => describe("stdout", "actual", &out.stdout, "expected", b),
            Check::Stderr(b) => describe("stderr", "actual", &out.stderr, "expected", b),
            Check::StdoutContains(s) => {
                (!contains(&out.stdout, s)).then(|| format!("stdout {}", show(&out.stdout)))
            }
            Check::StderrContains(s) => {
                (!contains(&out.stderr, s)).then(|| format!("stderr {}", show(&out.stderr)))
            }
            Check::File(name, b) => match std::fs::read(dir.join(name)) {
                Ok(x) => describe(&format!("file {name}"), "actual", &x, "expected", b),
                Err(e) => Some(format!("file {name}: {e}")),
            },
            Check::HasFile(name) => (!dir.join(name).exists()).then(|| "no such file".into()),
            Check::NoFile(name) => dir.join(name).exists().then(|| "file exists".into()),
        };
        if let Some(why) = failed {
            problems.push(format!(
                "step `{}`: {} does not meet {}: {why}",
                step.display(),
                tool.name(),
                check.summary()
            ));
        }
    }
}

impl Check {
    /// The expectation in a few words (byte strings shown only when short).
    fn summary(&self) -> String {
        let bytes = |b: &[u8]| {
            if b.len() <= 256 {
                show(b)
            } else {
                format!("<{} bytes>", b.len())
            }
        };
        match self {
            Check::Status(s) => format!("status {s:?}"),
            Check::Stdout(b) => format!("stdout {}", bytes(b)),
            Check::Stderr(b) => format!("stderr {}", bytes(b)),
            Check::StdoutContains(s) => format!("stdout containing {s:?}"),
            Check::StderrContains(s) => format!("stderr containing {s:?}"),
            Check::File(name, b) => format!("file {name} = {}", bytes(b)),
            Check::HasFile(name) => format!("file {name} exists"),
            Check::NoFile(name) => format!("no file {name}"),
        }
    }
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len().max(1))
        .any(|w| w == needle.as_bytes())
}

/// Reference runs must end normally: the differential cases avoid inputs that crash LLVM.
fn check_sane(tool: Tool, step: &Step, out: &Output, problems: &mut Vec<String>) {
    if !matches!(out.status, Status::Exit(_)) {
        problems.push(format!(
            "step `{}`: {} ended with {:?}",
            step.display(),
            tool.name(),
            out.status
        ));
    }
}

fn verbose_step(tool: Tool, step: &Step, out: &Output) {
    if env_flag("OFFLOAD_HARNESS_VERBOSE") {
        println!(
            "    {:<6} {:?} in {:?}: `{}`\n           stdout {} bytes, stderr {}",
            tool.name(),
            out.status,
            out.elapsed,
            step.display(),
            out.stdout.len(),
            show(&out.stderr)
        );
    }
}

/// Print the per-case verdicts and fail the test if any case failed.
fn finish(group: &str, what: &str, results: Vec<(String, Vec<String>)>) {
    let failed: Vec<&str> = results
        .iter()
        .filter(|(_, p)| !p.is_empty())
        .map(|(n, _)| n.as_str())
        .collect();
    for (name, problems) in &results {
        if problems.is_empty() {
            println!("ok   {group}/{name}");
        } else {
            println!("FAIL {group}/{name}");
            for p in problems {
                println!("  - {}", p.replace('\n', "\n    "));
            }
        }
    }
    assert!(
        failed.is_empty(),
        "{what}: {} of {} cases of group {group} failed: {failed:?} (details above)",
        failed.len(),
        results.len()
    );
}

/// Run every case with LLVM 19 and LLVM 22 and check that they agree exactly where the case
/// says so (`Reference::Both`) and differ where it says they do, plus the case's expectations.
pub fn check_references(group: &str, cases: Vec<Case>) {
    let mut results = Vec::new();
    for case in selected(group, cases) {
        let mut problems = Vec::new();
        let (d19, d22) = (case.stage("llvm19"), case.stage("llvm22"));
        let mut first_diff: Option<(String, Vec<String>)> = None;
        let last = case
            .steps
            .iter()
            .rposition(|s| !s.setup)
            .expect("a compared step");
        for (i, step) in case.steps.iter().enumerate() {
            if step.setup {
                for d in [&d19, &d22] {
                    if let Err(e) = case.run_setup(d.path(), step) {
                        problems.push(e);
                    }
                }
                continue;
            }
            let o19 = case.run(Tool::Llvm19, d19.path(), step);
            let o22 = case.run(Tool::Llvm22, d22.path(), step);
            for (t, o, d) in [(Tool::Llvm19, &o19, &d19), (Tool::Llvm22, &o22, &d22)] {
                verbose_step(t, step, o);
                check_sane(t, step, o, &mut problems);
                check_expects(t, step, o, d.path(), &mut problems);
            }
            let diffs = compare(
                (Tool::Llvm19, &o19, d19.path()),
                (Tool::Llvm22, &o22, d22.path()),
                case.scope,
            );
            if !diffs.is_empty() && first_diff.is_none() {
                first_diff = Some((step.display(), diffs));
            }
            let followed_fails = match case.reference {
                Reference::Both => !(o19.status.success() && o22.status.success()),
                Reference::Llvm19(_) => !o19.status.success(),
                Reference::Llvm22(_) => !o22.status.success(),
            };
            if i != last && case.scope != Scope::Status && followed_fails {
                problems.push(format!(
                    "harness: step `{}` fails but is not the last step (ours creates no files on \
                     error, so later steps would differ for that reason alone)",
                    step.display()
                ));
            }
        }
        match (case.reference, first_diff) {
            (Reference::Both, Some((step, diffs))) => problems.push(format!(
                "LLVM 19 and 22 disagree at step `{step}`:\n{}",
                diffs.join("\n")
            )),
            (Reference::Llvm19(why) | Reference::Llvm22(why), None) => problems.push(format!(
                "the case says 19 and 22 differ ({why}), but they agree: mark it Reference::Both"
            )),
            (Reference::Llvm19(_) | Reference::Llvm22(_), Some((step, diffs))) => {
                if env_flag("OFFLOAD_HARNESS_VERBOSE") {
                    println!(
                        "    expected divergence at `{step}`:\n    {}",
                        diffs.join("\n    ")
                    );
                }
            }
            (Reference::Both, None) => {}
        }
        results.push((case.name.clone(), problems));
    }
    finish(group, "LLVM 19 vs LLVM 22", results);
}

/// Run every case with ours and with the case's reference, comparing each step. Where the
/// reference fails, ours must fail with the same status, stdout and stderr and leave its run
/// directory exactly as it was (ours never creates or truncates outputs on error, whereas LLVM
/// may leave partial outputs behind).
pub fn check_ours(group: &str, cases: Vec<Case>) {
    let mut results = Vec::new();
    for case in selected(group, cases) {
        let reference = match case.reference {
            Reference::Both | Reference::Llvm22(_) => Tool::Llvm22,
            Reference::Llvm19(_) => Tool::Llvm19,
        };
        let (dr, dours) = (case.stage(reference.name()), case.stage("ours"));
        let mut problems = Vec::new();
        for step in &case.steps {
            if step.setup {
                for d in [&dr, &dours] {
                    if let Err(e) = case.run_setup(d.path(), step) {
                        problems.push(e);
                    }
                }
                continue;
            }
            let or = case.run(reference, dr.path(), step);
            verbose_step(reference, step, &or);
            let error_step = !or.status.success() && case.scope != Scope::Status;
            let before = error_step.then(|| snapshot(dours.path()));
            let oo = case.run(Tool::Ours, dours.path(), step);
            verbose_step(Tool::Ours, step, &oo);
            check_expects(Tool::Ours, step, &oo, dours.path(), &mut problems);
            let scope = if error_step {
                Scope::Streams
            } else {
                case.scope
            };
            let mut diffs = compare(
                (reference, &or, dr.path()),
                (Tool::Ours, &oo, dours.path()),
                scope,
            );
            if let Some(before) = before {
                diffs.extend(changed_files(&before, &snapshot(dours.path())));
            }
            if !diffs.is_empty() {
                problems.push(format!(
                    "step `{}` (reference {}):\n{}",
                    step.display(),
                    reference.name(),
                    diffs.join("\n")
                ));
                break;
            }
        }
        results.push((case.name.clone(), problems));
    }
    finish(group, "ours vs reference", results);
}

/// What a failing run of ours changed in its directory (it must change nothing).
fn changed_files(
    before: &BTreeMap<String, Option<Vec<u8>>>,
    after: &BTreeMap<String, Option<Vec<u8>>>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (name, content) in after {
        match before.get(name) {
            None => out.push(format!("ours created {name} although the step failed")),
            Some(old) if old != content => {
                out.push(format!("ours modified {name} although the step failed"))
            }
            Some(_) => {}
        }
    }
    for name in before.keys().filter(|n| !after.contains_key(*n)) {
        out.push(format!("ours removed {name} although the step failed"));
    }
    out
}
