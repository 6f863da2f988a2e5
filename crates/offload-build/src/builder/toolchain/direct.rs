//! A HIP device compile run as the two commands its clang driver runs (cc1, then lld), without
//! the driver.
//!
//! clang keeps cc1 in the driver's process only when a compile has one job; a HIP device
//! compile has two (cc1 and the lld link of the code object), so the driver starts cc1 as a
//! process of its own, and each of the three processes loads libLLVM. Running the two commands
//! the driver prints with `-###` saves the driver's process: about 45 ms of each 0.2 s compile
//! with a PCH (`benches/make_style.sh`).
//!
//! What the driver prints depends on the compile through a few values only: the source, its
//! file name (`-main-file-name`), the output, the depfile, `-cuid=`, the PCH and
//! `-preamble-bytes=`, and the driver's temporary object. A [`Template`] is what it printed with those values left
//! open ([`Arg`]); it is kept in the cache directory under a key over the compiler, the
//! working directory, the compiler's variables and every other argument, so that the sources
//! of a project (and the builds `make -j` runs) share one `-###` per architecture. A template
//! also holds a stamp of the toolchain files and directories the driver found (the device
//! libraries, the include directories, lld, and every directory above them): a toolchain
//! installed or removed there gives another stamp, and the driver is asked again.
//!
//! Anything unexpected (another number of commands, a warning from the driver, a value of the
//! compile left in another argument) makes no template: the driver runs as before. A compile
//! that fails this way runs again through the driver, whose message the user gets.

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crate::builder::command::{Command, Domain, KeyBuilder, relative_arg};
use crate::builder::fs;
use crate::builder::process::{self, Processes};

/// One argument of a [`Template`]: as the driver printed it, or a value of the compile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Arg {
    /// Printed as it is.
    Lit(String),
    /// The source, as the compile names it.
    Src,
    /// The source's file name (`-main-file-name`).
    SrcName,
    /// The output (the code object).
    Out,
    /// The depfile.
    Dep,
    /// The object cc1 writes and lld reads.
    Tmp,
    /// `-cuid=<value>`.
    Cuid,
    /// `-preamble-bytes=<n>,<m>` (with a PCH).
    Preamble,
    /// The PCH (`-include-pch <file>`): the sources of every family share one template.
    Pch,
}

/// The holes, each read back from a kept template by its [`Arg::name`].
const HOLES: [Arg; 8] = [
    Arg::Src,
    Arg::SrcName,
    Arg::Out,
    Arg::Dep,
    Arg::Tmp,
    Arg::Cuid,
    Arg::Preamble,
    Arg::Pch,
];

impl Arg {
    /// A hole's name in a kept template and in its key; `None` for a literal.
    fn name(&self) -> Option<&'static str> {
        Some(match self {
            Arg::Lit(_) => return None,
            Arg::Src => "Src",
            Arg::SrcName => "SrcName",
            Arg::Out => "Out",
            Arg::Dep => "Dep",
            Arg::Tmp => "Tmp",
            Arg::Cuid => "Cuid",
            Arg::Preamble => "Preamble",
            Arg::Pch => "Pch",
        })
    }

    /// The argument as one line of a kept template: `L<text>`, or `T<the hole's name>`.
    fn line(&self) -> String {
        match self {
            Arg::Lit(l) => format!("L{l}"),
            hole => format!("T{}", hole.name().unwrap_or_default()),
        }
    }

    /// The argument of one line of a kept template ([`Arg::line`]).
    fn of_line(line: &str) -> Option<Arg> {
        match line.split_at_checked(1)? {
            ("L", l) => Some(Arg::Lit(l.to_string())),
            ("T", t) => HOLES.iter().find(|h| h.name() == Some(t)).cloned(),
            _ => None,
        }
    }
}

/// The commands a driver runs for a compile, with the compile's own values left open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Template {
    /// The programs and their arguments, in order.
    pub(crate) cmds: Vec<(String, Vec<Arg>)>,
    /// The stamp of the toolchain paths the driver found ([`stamp`]).
    pub(crate) stamp: u128,
}

/// The values of one compile a template leaves open, as its command spells them.
#[derive(Clone, Debug)]
pub(crate) struct Holes {
    /// The source.
    pub(crate) src: String,
    /// The source's file name.
    pub(crate) src_name: String,
    /// The code object the compile writes.
    pub(crate) out: String,
    /// The depfile.
    pub(crate) dep: String,
    /// `-cuid=<value>`, when given.
    pub(crate) cuid: Option<String>,
    /// `-preamble-bytes=<n>,<m>`, with a PCH.
    pub(crate) preamble: Option<String>,
    /// The PCH, with one.
    pub(crate) pch: Option<String>,
    /// Where cc1's object goes (in the job's private directory).
    pub(crate) tmp: String,
    /// The name of the job's private directory: a template that names it anywhere (a make
    /// target escaped from the output's path) would carry this job's paths to others.
    pub(crate) private_name: String,
}

impl Holes {
    /// The holes of `cmd` (a device compile of `source` writing `depfile`, its paths mapped
    /// into the job's private directory `private`): `None` when an argument is not UTF-8 or a
    /// value is missing.
    pub(crate) fn of(
        cmd: &Command,
        source: &Path,
        depfile: &Path,
        private: &Path,
    ) -> Option<Holes> {
        let spelled = |p: &Path| spelled(cmd, p.as_os_str()).into_string().ok();
        let src_name = source.file_name()?.to_str()?.to_string();
        let mut h = Holes {
            src: spelled(source)?,
            src_name: src_name.clone(),
            out: spelled(cmd.outputs.first()?)?,
            dep: spelled(depfile)?,
            cuid: None,
            preamble: None,
            pch: None,
            private_name: private.file_name()?.to_str()?.to_string(),
            tmp: private
                .join(format!("{src_name}.direct.o"))
                .into_os_string()
                .into_string()
                .ok()?,
        };
        let args: Vec<&str> = cmd
            .args()
            .iter()
            .map(|a| a.to_str())
            .collect::<Option<_>>()?;
        for (i, &a) in args.iter().enumerate() {
            if a == "-include-pch" {
                let next = args[i + 1..].iter().find(|n| **n != "-Xclang")?;
                h.pch = Some(spelled(Path::new(next))?);
            } else if a.starts_with("-cuid=") {
                h.cuid = Some(a.to_string());
            } else if a.starts_with("-preamble-bytes=") {
                h.preamble = Some(a.to_string());
            }
        }
        Some(h)
    }

    /// The driver's arguments with the holes named: what the template's key is made of.
    fn driver_args(&self, cmd: &Command) -> Option<Vec<Arg>> {
        cmd.args()
            .iter()
            .map(|a| {
                let a = spelled(cmd, a).into_string().ok()?;
                Some(self.named(&a, false).unwrap_or(Arg::Lit(a)))
            })
            .collect()
    }

    /// The hole `a` is, if it is one (`name`: it follows `-main-file-name`).
    fn named(&self, a: &str, name: bool) -> Option<Arg> {
        Some(match a {
            _ if name && a == self.src_name => Arg::SrcName,
            _ if a == self.src => Arg::Src,
            _ if a == self.out => Arg::Out,
            _ if a == self.dep => Arg::Dep,
            _ if self.cuid.as_deref() == Some(a) => Arg::Cuid,
            _ if self.preamble.as_deref() == Some(a) => Arg::Preamble,
            _ if self.pch.as_deref() == Some(a) => Arg::Pch,
            _ => return None,
        })
    }

    /// The value of `a` for this compile.
    fn fill<'a>(&'a self, a: &'a Arg) -> Option<&'a str> {
        Some(match a {
            Arg::Lit(s) => s,
            Arg::Src => &self.src,
            Arg::SrcName => &self.src_name,
            Arg::Out => &self.out,
            Arg::Dep => &self.dep,
            Arg::Tmp => &self.tmp,
            Arg::Cuid => self.cuid.as_deref()?,
            Arg::Preamble => self.preamble.as_deref()?,
            Arg::Pch => self.pch.as_deref()?,
        })
    }
}

/// `a` as `cmd` passes it to its program ([`Command::to_command`]: relative to its directory).
pub(crate) fn spelled(cmd: &Command, a: &std::ffi::OsStr) -> OsString {
    match &cmd.dir {
        Some(dir) => relative_arg(a, dir),
        None => a.to_os_string(),
    }
}

/// Reads what `clang -###` printed: its commands (each line that starts with a space and a
/// quote), each argument unquoted (`\` escapes `"`, `\` and `$`). `None` when it printed
/// anything else than its four header lines and the commands (a warning).
pub(crate) fn parse_commands(printed: &str) -> Option<Vec<Vec<String>>> {
    let mut cmds = Vec::new();
    for (n, line) in printed.lines().enumerate() {
        let Some(rest) = line.strip_prefix(" \"") else {
            // A configuration file is not accepted: its content is in no key or stamp.
            let header = (n == 0 && line.contains("clang version "))
                || ["Target:", "Thread model:", "InstalledDir:"]
                    .iter()
                    .any(|h| line.starts_with(h));
            if header || line.trim().is_empty() {
                continue;
            }
            return None;
        };
        let mut args = Vec::new();
        let mut cur = String::new();
        let mut chars = rest.chars();
        let mut quoted = true;
        while let Some(c) = chars.next() {
            match (quoted, c) {
                (true, '\\') => cur.push(chars.next()?),
                (true, '"') => {
                    args.push(std::mem::take(&mut cur));
                    quoted = false;
                }
                (true, c) => cur.push(c),
                (false, ' ') => {}
                (false, '"') => quoted = true,
                (false, _) => return None, // `(in-process)` or anything unexpected
            }
        }
        if quoted || args.is_empty() {
            return None;
        }
        cmds.push(args);
    }
    Some(cmds)
}

/// The template of `printed` (the driver's commands for a compile with the values `h`): cc1,
/// then lld; `None` when they are not those two or a value of the compile is left in another
/// argument.
pub(crate) fn template_of(
    printed: &[Vec<String>],
    h: &Holes,
    driver: &[Arg],
    dir: Option<&Path>,
) -> Option<Template> {
    let [cc1, link] = printed else {
        return None;
    };
    if cc1.get(1).map(String::as_str) != Some("-cc1")
        || !Path::new(&link[0]).file_name()?.to_str()?.contains("lld")
    {
        return None;
    }
    // The object cc1 writes, which lld reads.
    let tmp = cc1.iter().skip_while(|a| *a != "-o").nth(1)?.clone();
    if tmp == h.out || !link.contains(&tmp) {
        return None;
    }
    let mut cmds = Vec::new();
    for cmd in [cc1, link] {
        let mut args = Vec::new();
        for (i, a) in cmd.iter().enumerate().skip(1) {
            let name = cmd[i - 1] == "-main-file-name";
            let arg = match h.named(a, name) {
                Some(hole) => hole,
                None if *a == tmp => Arg::Tmp,
                None => {
                    let left = [&h.src, &h.out, &h.dep, &h.src_name, &h.private_name]
                        .into_iter()
                        .chain(&h.pch)
                        .any(|v| a.contains(v.as_str()))
                        || a.starts_with("-cuid=")
                        || a.starts_with("-preamble-bytes=")
                        || a.contains(&tmp);
                    if left {
                        return None;
                    }
                    Arg::Lit(a.clone())
                }
            };
            args.push(arg);
        }
        cmds.push((cmd[0].clone(), args));
    }
    let stamp = stamp(&cmds, driver, dir);
    Some(Template { cmds, stamp })
}

/// The stamp of the paths a template names that its driver arguments do not (what the driver
/// found: its programs, the device libraries, the include directories), each with every
/// directory above it, and the GCC installations beside the one it took: their canonical
/// paths, sizes and modification times, or that they are missing.
pub(crate) fn stamp(cmds: &[(String, Vec<Arg>)], driver: &[Arg], dir: Option<&Path>) -> u128 {
    let mut paths = BTreeSet::new();
    let literal = |s: &str| driver.iter().any(|d| *d == Arg::Lit(s.to_string()));
    for (program, args) in cmds {
        let lits = args.iter().filter_map(|a| match a {
            Arg::Lit(s) => Some(s.as_str()),
            _ => None,
        });
        for s in std::iter::once(program.as_str()).chain(lits) {
            if literal(s) {
                continue;
            }
            let path = match s.find("=/") {
                Some(at) if !s.starts_with('/') => &s[at + 1..],
                _ => s,
            };
            // The working directory's paths are the key's (`-fcoverage-compilation-dir=`), and
            // its modification time changes with every output written there.
            if !path.starts_with('/') || dir.is_some_and(|d| Path::new(path).starts_with(d)) {
                continue;
            }
            let mut p = Some(Path::new(path));
            while let Some(q) = p {
                paths.insert(q.to_path_buf());
                p = q.parent();
            }
        }
    }
    let canonical: BTreeSet<PathBuf> = paths
        .iter()
        .map(|p| p.canonicalize().unwrap_or_else(|_| p.clone()))
        .collect();
    let mut k = KeyBuilder::new(Domain::Driver);
    let mut stamp_of = |p: &Path| {
        if k.file_stamp(p).is_err() {
            k.os(p).u64(u64::MAX); // missing
        }
    };
    for p in &canonical {
        stamp_of(p);
        // The driver takes the newest GCC installation that has its files: the version
        // directories beside the one it took count too (a `crtbegin.o` installed into one
        // changes that directory alone).
        let gcc = p.parent().and_then(Path::file_name);
        if gcc.is_some_and(|n| n == "gcc" || n == "gcc-cross") {
            let mut versions: Vec<PathBuf> = std::fs::read_dir(p)
                .map(|rd| rd.flatten().map(|e| e.path()).collect())
                .unwrap_or_default();
            versions.sort();
            for v in &versions {
                stamp_of(v);
            }
        }
    }
    k.finish()
}

/// The file a template is kept in (or a refusal: `none`).
fn file_of(cache_dir: &Path, key: u128) -> PathBuf {
    cache_dir.join(format!("driver-{:016x}.txt", key as u64))
}

const HEADER: &str = "offload-build driver template 1";

/// A template as text: a header, the stamp, then per command a `C` line, the program, and a
/// line per argument (`L` and the text, or `T` and the hole's name).
pub(crate) fn to_text(t: &Template) -> Option<String> {
    let mut s = format!("{HEADER}\n{:032x}\n", t.stamp);
    for (program, args) in &t.cmds {
        s += &format!("C\nL{program}\n");
        for a in args {
            let line = a.line();
            if line.contains('\n') {
                return None;
            }
            s += &line;
            s.push('\n');
        }
    }
    Some(s)
}

/// The template of [`to_text`]'s text.
pub(crate) fn from_text(s: &str) -> Option<Template> {
    let mut lines = s.lines();
    if lines.next()? != HEADER {
        return None;
    }
    let stamp = u128::from_str_radix(lines.next()?, 16).ok()?;
    let mut cmds: Vec<(String, Vec<Arg>)> = Vec::new();
    while let Some(line) = lines.next() {
        if line == "C" {
            cmds.push((lines.next()?.strip_prefix('L')?.to_string(), Vec::new()));
            continue;
        }
        cmds.last_mut()?.1.push(Arg::of_line(line)?);
    }
    Some(Template { cmds, stamp })
}

/// Variables the driver reads besides the compiler's ([`crate::builder::env::read_by_compiler`]):
/// in a template's key.
pub(crate) const DRIVER_VARS: [&str; 13] = [
    "PATH",
    "COMPILER_PATH",
    "GCC_EXEC_PREFIX",
    "LIBRARY_PATH",
    "CLANG_NO_DEFAULT_CONFIG",
    "CC_PRINT_HEADERS",
    "CC_PRINT_HEADERS_FILE",
    "CC_LOG_DIAGNOSTICS",
    "CC_LOG_DIAGNOSTICS_FILE",
    "CC_PRINT_OPTIONS",
    "CC_PRINT_OPTIONS_FILE",
    "CC_PRINT_PROC_STAT",
    "CC_PRINT_PROC_STAT_FILE",
];

/// How long the driver may take to print its commands (it runs none): a compiler that hangs
/// is then compiled through, under the compile timeout.
pub(crate) const ASK_LIMIT: Duration = Duration::from_secs(20);

/// The templates of one build: found in memory, in the cache directory, or asked of the
/// driver.
pub(crate) struct Direct {
    /// Off (`OFFLOAD_BUILD_DIRECT=0`): every compile runs through the driver.
    enabled: bool,
    /// The [`DRIVER_VARS`] that are set, with their values.
    driver_vars: Vec<(OsString, OsString)>,
    /// Per key, the template once known (the jobs of one key wait for the first to ask).
    memo: Mutex<HashMap<u128, Arc<OnceLock<Option<Template>>>>>,
}

impl Direct {
    /// The templates of a build, none found yet; `enabled`: whether they are used;
    /// `driver_vars`: the [`DRIVER_VARS`] that are set.
    pub(crate) fn new(enabled: bool, driver_vars: Vec<(OsString, OsString)>) -> Direct {
        Direct {
            enabled,
            driver_vars,
            memo: Mutex::new(HashMap::new()),
        }
    }

    /// The commands to run instead of `cmd` (a HIP device compile without launcher, with
    /// `env` the compiler's variables and `identity` the compiler's; `timeout`, the compile
    /// timeout, also bounds the driver's `-###`): `None` when the driver should run it.
    pub(crate) fn commands(
        &self,
        (p, cache_dir, timeout): (&Processes, &Path, Option<Duration>),
        identity: u128,
        env: &[(OsString, OsString)],
        cmd: &Command,
        holes: &Holes,
    ) -> Option<Vec<Command>> {
        if !self.enabled || !cmd.launcher().is_empty() || cmd.args().iter().any(|a| a == "-v") {
            return None;
        }
        let driver = holes.driver_args(cmd)?;
        let mut k = KeyBuilder::new(Domain::Driver);
        k.u128(identity).os(&cmd.program);
        k.os(cmd.dir.as_deref().unwrap_or(Path::new("")));
        for (n, v) in env {
            k.os(n).os(v);
        }
        // What else the driver reads: where it looks for programs (lld) and libraries.
        for (n, v) in &self.driver_vars {
            k.os(n).os(v);
        }
        for a in &driver {
            k.str(&a.line());
        }
        let key = k.finish();
        let slot = Arc::clone(
            self.memo
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(key)
                .or_default(),
        );
        let t = slot
            .get_or_init(|| load_or_ask((p, cache_dir, timeout), key, cmd, holes, &driver))
            .as_ref()?;
        t.cmds
            .iter()
            .map(|(program, args)| {
                let mut c = Command::new(program);
                c.env = cmd.env.clone();
                c.dir = cmd.dir.clone();
                for a in args {
                    c.add_arg(holes.fill(a)?);
                }
                Some(c)
            })
            .collect()
    }
}

/// The template kept under `key` when its stamp still holds, else the driver's (kept for the
/// next build; a refusal is kept too, so that the driver is not asked at every compile).
fn load_or_ask(
    (p, cache_dir, timeout): (&Processes, &Path, Option<Duration>),
    key: u128,
    cmd: &Command,
    holes: &Holes,
    driver: &[Arg],
) -> Option<Template> {
    let file = file_of(cache_dir, key);
    if let Ok(text) = std::fs::read_to_string(&file) {
        if text == "none\n" {
            return None;
        }
        if let Some(t) =
            from_text(&text).filter(|t| stamp(&t.cmds, driver, cmd.dir.as_deref()) == t.stamp)
        {
            return Some(t);
        }
    }
    let mut ask = cmd.clone();
    ask.add_arg("-###");
    let limit = timeout.map_or(ASK_LIMIT, |t| t.min(ASK_LIMIT));
    let out = process::run(p, &mut ask.to_command(), Some(limit)).ok()?;
    if !out.status.success() {
        return None; // the compile runs through the driver, which says why
    }
    let t = String::from_utf8(out.stderr)
        .ok()
        .and_then(|printed| parse_commands(&printed))
        .and_then(|printed| template_of(&printed, holes, driver, cmd.dir.as_deref()))
        .filter(|t| runs_itself(cmd, t) && paths_kept(cmd, t));
    let text = t.as_ref().and_then(to_text);
    let _ = fs::write_atomic(&file, text.as_deref().unwrap_or("none\n").as_bytes());
    t.filter(|_| text.is_some())
}

/// Whether the driver's cc1 is the compiler itself (its canonical path): a wrapper script or a
/// `ccache` link named like the compiler would be skipped by the template's commands, and what
/// it does at each call with them.
fn runs_itself(cmd: &Command, t: &Template) -> bool {
    let canonical = |p: &Path| p.canonicalize().ok();
    let compiler = canonical(&cmd.program);
    compiler.is_some() && t.cmds.first().map(|(p, _)| canonical(Path::new(p))) == Some(compiler)
}

/// Whether every argument the template keeps is passed as it is ([`Command::to_command`]
/// spells the paths under the working directory relatively: a toolchain inside the project
/// would be named otherwise than the driver named it).
fn paths_kept(cmd: &Command, t: &Template) -> bool {
    t.cmds.iter().all(|(_, args)| {
        args.iter().all(|a| match a {
            Arg::Lit(l) => spelled(cmd, l.as_ref()) == OsString::from(l),
            _ => true,
        })
    })
}

/// Whether `a` is an argument a template can name (for the tests).
#[cfg(test)]
fn is_hole(a: &Arg) -> bool {
    !matches!(a, Arg::Lit(_))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holes() -> Holes {
        Holes {
            src: "src/k.hip".into(),
            src_name: "k.hip".into(),
            out: "c/.job-1/k-gfx90a-1.o".into(),
            dep: "c/.job-1/k-gfx90a-1.d".into(),
            cuid: Some("-cuid=abc".into()),
            preamble: None,
            pch: None,
            tmp: "/w/c/.job-1/k.hip.direct.o".into(),
            private_name: ".job-1".into(),
        }
    }

    const PRINTED: &str = "Debian clang version 15.0.6\nTarget: x86_64-pc-linux-gnu\nThread model: posix\n\
InstalledDir: /usr/bin\n \"/usr/lib/llvm-15/bin/clang\" \"-cc1\" \"-main-file-name\" \"k.hip\" \
\"-cuid=abc\" \"-dependency-file\" \"c/.job-1/k-gfx90a-1.d\" \"-MT\" \"c/.job-1/k-gfx90a-1.o\" \
\"-D\" \"Q=\\\"x\\\\y\\$\\\"\" \"-o\" \"/tmp/k-0ab12c/k-gfx90a.o\" \"-x\" \"hip\" \"src/k.hip\"\n \
\"/usr/lib/llvm-15/bin/lld\" \"-flavor\" \"gnu\" \"-shared\" \"-o\" \"c/.job-1/k-gfx90a-1.o\" \
\"/tmp/k-0ab12c/k-gfx90a.o\"\n";

    /// The two commands are read back, quotes and escapes undone; the compile's values are
    /// named, the rest kept; a driver's warning makes no template.
    #[test]
    fn a_drivers_commands_become_a_template_with_the_compiles_values_named() {
        let printed = parse_commands(PRINTED).unwrap();
        assert_eq!(printed.len(), 2);
        assert_eq!(printed[0][9], "-D");
        assert_eq!(printed[0][10], "Q=\"x\\y$\"");
        let t = template_of(&printed, &holes(), &[], None).unwrap();
        let cc1 = &t.cmds[0].1;
        assert_eq!(cc1[1], Arg::Lit("-main-file-name".into()));
        assert_eq!(
            cc1.iter().filter(|a| is_hole(a)).collect::<Vec<_>>(),
            [
                &Arg::SrcName,
                &Arg::Cuid,
                &Arg::Dep,
                &Arg::Out,
                &Arg::Tmp,
                &Arg::Src
            ]
        );
        assert_eq!(t.cmds[1].1[4..], [Arg::Out, Arg::Tmp]);
        // Kept as text and read back.
        assert_eq!(from_text(&to_text(&t).unwrap()).unwrap(), t);
        // Another source fills the same template.
        let warned = format!("clang: warning: argument unused during compilation: '-x'\n{PRINTED}");
        assert!(parse_commands(&warned).is_none());
        let in_process = PRINTED.replace("\"src/k.hip\"\n", "\"src/k.hip\" (in-process)\n");
        assert!(parse_commands(&in_process).is_none());
    }

    /// The PCH a compile includes is a hole too: the families of a project share a template.
    #[test]
    fn the_pch_is_left_open() {
        let with_pch = PRINTED.replace(
            "\"-x\" \"hip\"",
            "\"-include-pch\" \"c/pre-gfx90a-1.pch\" \"-preamble-bytes=29,1\" \"-x\" \"hip\"",
        );
        let printed = parse_commands(&with_pch).unwrap();
        let mut h = holes();
        h.pch = Some("c/pre-gfx90a-1.pch".into());
        h.preamble = Some("-preamble-bytes=29,1".into());
        let t = template_of(&printed, &h, &[], None).unwrap();
        let cc1 = &t.cmds[0].1;
        assert!(
            cc1.contains(&Arg::Pch) && cc1.contains(&Arg::Preamble),
            "{cc1:?}"
        );
        assert_eq!(from_text(&to_text(&t).unwrap()).unwrap(), t);
        // Not known as the PCH: no template (the path would be kept for other families).
        h.pch = None;
        h.src_name = "other.hip".into();
        let t = template_of(&printed, &h, &[], None);
        assert!(t.is_none_or(|t| t.cmds[0].1.contains(&Arg::Lit("c/pre-gfx90a-1.pch".into()))));
    }

    /// A value of the compile the template would keep (a derived `-cuid`, the source named in
    /// another argument), or a third command, makes no template.
    #[test]
    fn a_compiles_value_left_in_another_argument_makes_no_template() {
        let printed = parse_commands(PRINTED).unwrap();
        let mut h = holes();
        h.cuid = None; // the driver derived one from the source
        assert!(template_of(&printed, &h, &[], None).is_none());
        let mut other = printed.clone();
        other[0].push("-dwarf-debug-flags=clang src/k.hip".into());
        assert!(template_of(&other, &holes(), &[], None).is_none());
        // A make target escaped from the output's path (a space in it) names the job's
        // directory: it would carry this job's output to the next.
        let mut escaped = printed.clone();
        escaped[0][8] = "c/.job-1/k\\ gfx90a-1.o".into();
        assert!(template_of(&escaped, &holes(), &[], None).is_none());
        // A configuration file, or a version line that is not the first, is refused.
        let config = PRINTED.replace(
            "Thread model",
            "Configuration file: /etc/c.cfg\nThread model",
        );
        assert!(parse_commands(&config).is_none());
        let late = PRINTED.replace(
            "Thread model: posix",
            "Thread model: posix\nclang version 2",
        );
        assert!(parse_commands(&late).is_none());
        let mut three = printed.clone();
        three.push(vec!["/usr/bin/true".into()]);
        assert!(template_of(&three, &holes(), &[], None).is_none());
        let one = vec![printed[0].clone()];
        assert!(template_of(&one, &holes(), &[], None).is_none());
    }

    /// The stamp follows the paths the driver found and the directories above them: a new
    /// entry in a directory above a device library changes it; a path the driver was given
    /// does not count.
    #[test]
    fn the_stamp_follows_the_toolchain_directories_the_driver_found() {
        let d = tempfile::tempdir().unwrap();
        let lib = d.path().join("gcc/x86_64-linux-gnu/12");
        std::fs::create_dir_all(&lib).unwrap();
        let isys = format!("{}/../../../include", lib.display());
        let cmds = vec![(
            "/usr/bin/true".to_string(),
            vec![Arg::Lit("-internal-isystem".into()), Arg::Lit(isys.clone())],
        )];
        let before = stamp(&cmds, &[], None);
        assert_eq!(stamp(&cmds, &[], None), before);
        // A newer gcc installed beside it: the driver might choose it.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::create_dir(d.path().join("gcc/x86_64-linux-gnu/13")).unwrap();
        let after = stamp(&cmds, &[], None);
        assert_ne!(after, before);
        // Its start files installed: that directory alone changes.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(d.path().join("gcc/x86_64-linux-gnu/13/crtbegin.o"), b"").unwrap();
        assert_ne!(stamp(&cmds, &[], None), after);
        // The same path given to the driver is the user's: not stamped.
        let given = [Arg::Lit(isys)];
        let mine = stamp(&cmds, &given, None);
        std::fs::create_dir(d.path().join("gcc/x86_64-linux-gnu/14")).unwrap();
        assert_eq!(stamp(&cmds, &given, None), mine);
        // The working directory (`-fcoverage-compilation-dir=`) is the key's, not stamped:
        // outputs are written there.
        let cwd = d.path().join("project");
        std::fs::create_dir(&cwd).unwrap();
        let with_cwd = vec![(
            "/usr/bin/true".to_string(),
            vec![Arg::Lit(format!(
                "-fcoverage-compilation-dir={}",
                cwd.display()
            ))],
        )];
        let clean = stamp(&with_cwd, &[], Some(&cwd));
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(cwd.join("lib.a"), b"").unwrap();
        assert_eq!(stamp(&with_cwd, &[], Some(&cwd)), clean);
    }

    /// A template's commands, filled for another source: its values in the holes.
    #[test]
    fn a_template_is_filled_with_another_compiles_values() {
        let printed = parse_commands(PRINTED).unwrap();
        let t = template_of(&printed, &holes(), &[], None).unwrap();
        let mut h = holes();
        h.src = "src/other.hip".into();
        h.src_name = "other.hip".into();
        h.out = "o.o".into();
        h.tmp = "/w/c/.job-2/other.hip.direct.o".into();
        let cc1: Vec<&str> = t.cmds[0].1.iter().map(|a| h.fill(a).unwrap()).collect();
        assert_eq!(cc1[2], "other.hip");
        assert_eq!(cc1.last().copied(), Some("src/other.hip"));
        assert!(cc1.contains(&"o.o") && !cc1.iter().any(|a| a.contains("k.hip")));
    }
}
