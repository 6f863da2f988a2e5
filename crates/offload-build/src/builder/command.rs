//! The command model: every process a build runs is a [`Command`] value built before it runs
//! (as `cc::Tool`): the program, a launcher in front of it (`sccache`), its arguments, the
//! environment changes, the files it reads and writes and the depfile it is asked for. The
//! plan builds them ([`crate::builder::toolchain::clang`] for the device compiles, code generation and device
//! links, `ptxas` for CUDA); the jobs stage ([`crate::builder::run`]) only runs them.
//!
//! Every cache key and content stamp of the crate comes from one [`KeyBuilder`], started with
//! a [`Domain`] tag per kind of key, so that no two kinds of key can collide.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::Xxh3;

/// A complete command: what runs, with what, reading and writing which files.
///
/// [`Build::get_compiler`](crate::builder::Build::get_compiler) returns the device compile's command
/// (up to the user's flags: no source, output or depfile), as `cc::Build::get_compiler`
/// returns a `cc::Tool`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    pub(crate) program: PathBuf,
    pub(crate) launcher: Vec<OsString>,
    pub(crate) args: Vec<OsString>,
    pub(crate) env: Vec<(OsString, Option<OsString>)>,
    pub(crate) inputs: Vec<PathBuf>,
    pub(crate) outputs: Vec<PathBuf>,
    pub(crate) depfile: Option<PathBuf>,
    /// The working directory it runs in, where its arguments naming paths under it are
    /// spelled relative to it (see [`Command::to_command`]); `None`: this process's.
    pub(crate) dir: Option<PathBuf>,
}

impl Command {
    /// A command running `program` with nothing else set.
    pub(crate) fn new(program: impl Into<PathBuf>) -> Command {
        Command {
            program: program.into(),
            launcher: Vec::new(),
            args: Vec::new(),
            env: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            depfile: None,
            dir: None,
        }
    }

    /// Appends one argument.
    pub(crate) fn add_arg(&mut self, a: impl AsRef<OsStr>) -> &mut Command {
        self.args.push(a.as_ref().to_os_string());
        self
    }

    /// Appends arguments.
    pub(crate) fn add_args<S: AsRef<OsStr>>(
        &mut self,
        a: impl IntoIterator<Item = S>,
    ) -> &mut Command {
        self.args
            .extend(a.into_iter().map(|s| s.as_ref().to_os_string()));
        self
    }

    /// The program (the compiler, `ptxas`).
    pub fn path(&self) -> &Path {
        &self.program
    }

    /// The launcher put in front of the program (`sccache`, with its arguments); empty for
    /// none.
    pub fn launcher(&self) -> &[OsString] {
        &self.launcher
    }

    /// The arguments, in order.
    pub fn args(&self) -> &[OsString] {
        &self.args
    }

    /// The environment changes: a variable set (`Some`) or removed (`None`).
    pub fn env(&self) -> &[(OsString, Option<OsString>)] {
        &self.env
    }

    /// The whole command line, launcher first.
    pub fn argv(&self) -> Vec<OsString> {
        let mut v = self.launcher.clone();
        v.push(self.program.clone().into_os_string());
        v.extend(self.args.iter().cloned());
        v
    }

    /// A [`std::process::Command`] that runs it (launcher first, environment applied).
    ///
    /// A device compile runs in the build's root directory (`CARGO_MANIFEST_DIR`, else the
    /// current directory), with every argument that names a path under it (the source, `-I`
    /// directories, outputs) spelled relative to it: the command line, what the compiler
    /// writes into the code (`__FILE__`) and what a compiler cache hashes are then the same
    /// in every checkout. [`Command::args`] keeps the absolute paths.
    ///
    /// # Example
    ///
    /// ```no_run
    /// let mut b = offload_build::builder::Build::new();
    /// b.file("k.hip").arch("gfx90a");
    /// let status = b.get_compiler().to_command().arg("--version").status();
    /// ```
    pub fn to_command(&self) -> std::process::Command {
        let mut argv = self.launcher.clone();
        argv.push(self.program.clone().into_os_string());
        match &self.dir {
            Some(dir) => argv.extend(self.args.iter().map(|a| relative_arg(a, dir))),
            None => argv.extend(self.args.iter().cloned()),
        }
        let mut cmd = std::process::Command::new(&argv[0]);
        cmd.args(&argv[1..]);
        if let Some(dir) = &self.dir {
            cmd.current_dir(dir);
        }
        for (k, v) in &self.env {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        cmd
    }

    /// The same command without its launcher.
    pub(crate) fn without_launcher(&self) -> Command {
        Command {
            launcher: Vec::new(),
            ..self.clone()
        }
    }

    /// The same command run in a job's private directory `dir`: its paths mapped by `f`
    /// ([`Command::map_paths`]) and its temporary files there ([`Command::with_tmpdir`]).
    pub(crate) fn in_private(&self, dir: &Path, f: impl Fn(&Path) -> Option<PathBuf>) -> Command {
        self.map_paths(f).with_tmpdir(dir)
    }

    /// The same command with its temporary files (`TMPDIR`) in `dir`, a job's private
    /// directory: removed with it, so that what a compiler leaves there (clang 15 keeps an
    /// empty directory per architecture and compile in `/tmp`) goes too.
    fn with_tmpdir(mut self, dir: &Path) -> Command {
        self.env.retain(|(k, _)| k != "TMPDIR");
        self.env.push((
            OsString::from("TMPDIR"),
            Some(dir.as_os_str().to_os_string()),
        ));
        self
    }

    /// The same command with every path argument, output and depfile for which `f` gives
    /// another path replaced by it (a job's private directory).
    pub(crate) fn map_paths(&self, f: impl Fn(&Path) -> Option<PathBuf>) -> Command {
        let map = |p: &Path| f(p).unwrap_or_else(|| p.to_path_buf());
        Command {
            args: self
                .args
                .iter()
                .map(|a| {
                    // A path alone, or after a joined `-Xclang=` (not after `-I`).
                    let (flag, path) = match a.to_str().map(path_of_arg) {
                        Some(("-Xclang=", path)) => ("-Xclang=", path),
                        _ => ("", Path::new(a)),
                    };
                    f(path).map_or_else(|| a.clone(), |p| flagged(flag, &p))
                })
                .collect(),
            outputs: self.outputs.iter().map(|o| map(o)).collect(),
            depfile: self.depfile.as_deref().map(map),
            ..self.clone()
        }
    }

    /// The command line as a shell would take it back (for messages).
    pub(crate) fn line(&self) -> String {
        command_line(&self.argv())
    }

    /// Adds the command to a key: launcher, arguments (each input replaced by its content
    /// hash from `content`, so that a key follows what a file holds, not where it lies).
    pub(crate) fn add_to_key(&self, k: &mut KeyBuilder, content: impl Fn(&Path) -> Option<u128>) {
        k.u64(self.launcher.len() as u64);
        for a in self.launcher.iter() {
            k.bytes(a.as_encoded_bytes());
        }
        k.u64(self.args.len() as u64);
        for a in &self.args {
            match self.inputs.iter().find(|i| i.as_os_str() == a) {
                Some(i) => k.bytes(b"<input>").u128(content(i).unwrap_or(0)),
                None => k.bytes(a.as_encoded_bytes()),
            };
        }
    }
}

/// What [`deps_only`] does with one argument of a compile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DepsArg {
    /// Kept.
    Keep,
    /// Left out, with this many arguments after it (`-o <file>`: 1).
    Drop(usize),
    /// Replaced by another (`--cuda-device-only` by `--cuda-host-only`).
    Replace(&'static str),
}

/// The compile's dependency generation alone: its program (without the launcher) in the
/// compile's environment and directory, with its inputs, its arguments each rewritten by
/// `rule` (given the argument and the next one), then `-M -MF <depfile>`. For compilers that write no depfile in some
/// compiles (clang 22's device-only ones, nvcc's when a step fails to).
pub(crate) fn deps_only(
    compile: &Command,
    depfile: &Path,
    rule: impl Fn(&OsStr, Option<&OsStr>) -> DepsArg,
) -> Command {
    let mut c = Command::new(&compile.program);
    c.env = compile.env.clone();
    c.dir = compile.dir.clone();
    c.inputs = compile.inputs.clone();
    let args = &compile.args;
    let mut skip = 0;
    for (i, a) in args.iter().enumerate() {
        if skip > 0 {
            skip -= 1;
            continue;
        }
        match rule(a, args.get(i + 1).map(OsString::as_os_str)) {
            DepsArg::Keep => {
                c.add_arg(a);
            }
            DepsArg::Drop(n) => skip = n,
            DepsArg::Replace(by) => {
                c.add_arg(by);
            }
        }
    }
    c.add_args(["-M", "-MF"]).add_arg(depfile);
    c.depfile = Some(depfile.to_path_buf());
    c
}

/// The flag before the path an argument names, and the path: `-I<dir>`, `-Xclang=<file>` (the
/// joined spelling of a cc1 argument, [`crate::builder::toolchain::clang::host_job`]) or the
/// path alone.
fn path_of_arg(text: &str) -> (&'static str, &Path) {
    for flag in ["-I", "-Xclang="] {
        if let Some(rest) = text.strip_prefix(flag) {
            return (flag, Path::new(rest));
        }
    }
    ("", Path::new(text))
}

/// `flag` joined with `path` (the inverse of [`path_of_arg`]).
fn flagged(flag: &str, path: &Path) -> OsString {
    let mut out = OsString::from(flag);
    out.push(path);
    out
}

/// `arg` with the path it names (itself, or after `-I` or a joined `-Xclang=`) relative to
/// `dir` when it lies under `dir`; any other argument (and one that is not UTF-8) as it is.
pub(crate) fn relative_arg(arg: &OsStr, dir: &Path) -> OsString {
    let Some(text) = arg.to_str() else {
        return arg.to_os_string();
    };
    let (flag, path) = path_of_arg(text);
    match path.strip_prefix(dir) {
        Ok(rel) if path.is_absolute() => {
            let rel = if rel.as_os_str().is_empty() {
                Path::new(".")
            } else {
                rel
            };
            flagged(flag, rel)
        }
        _ => arg.to_os_string(),
    }
}

/// What a key is for; its tag starts the key, so keys of different kinds never collide.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Domain {
    /// A (source, architecture) compile job: its cache files.
    Job,
    /// A HIP compile's `-cuid`: its command as it runs and its source's content.
    Cuid,
    /// A device link: its cached code object.
    Link,
    /// What the compiler said about itself (`--version`, `--print-supported-cpus`), by its
    /// path, size and modification time.
    CompilerStamp,
    /// Everything that identifies the toolchain a job uses.
    Toolchain,
    /// What `hipconfig` said, by its path, size and modification time.
    HipConfig,
    /// The host symbols and library name of one build.
    HostSymbols,
    /// A crash log's name, from what the compiler printed.
    CrashLog,
    /// Whether the compiler accepts a flag
    /// ([`Build::flag_if_supported`](crate::builder::Build::flag_if_supported)).
    FlagProbe,
    /// A CUDA toolkit's links directory (the directories linked to and their stamps) and the
    /// CUDA prelude's name ([`crate::builder::toolchain::cuda`]).
    CudaToolkit,
    /// What a compile depends on beside its command and its inputs' content (the
    /// compiler's environment variables, the include search: [`crate::builder::cache::lookup`]).
    Context,
    /// A precompiled preamble ([`crate::builder::pch`]): its cache files.
    Preamble,
    /// The commands a clang driver runs for a compile ([`crate::builder::toolchain::direct`]).
    Driver,
}

impl Domain {
    fn tag(self) -> &'static [u8] {
        match self {
            Domain::Job => b"offload-build job 3",
            Domain::Cuid => b"offload-build cuid 1",
            Domain::Link => b"offload-build link 2",
            Domain::CompilerStamp => b"offload-build compiler 1",
            Domain::Toolchain => b"offload-build toolchain 1",
            Domain::CudaToolkit => b"offload-build cuda toolkit 1",
            Domain::HipConfig => b"offload-build hipconfig 1",
            Domain::HostSymbols => b"offload-build host symbols 2",
            Domain::CrashLog => b"offload-build crash 1",
            Domain::FlagProbe => b"offload-build flag probe 1",
            Domain::Context => b"offload-build context 1",
            Domain::Preamble => b"offload-build preamble 1",
            Domain::Driver => b"offload-build driver 1",
        }
    }
}

/// The one way to make a key: a domain tag, then fields, each length-prefixed (so that
/// `["ab", "c"]` and `["a", "bc"]` differ).
#[derive(Clone)]
pub(crate) struct KeyBuilder(Xxh3);

impl KeyBuilder {
    /// A key of `domain`.
    pub(crate) fn new(domain: Domain) -> KeyBuilder {
        let mut k = KeyBuilder(Xxh3::new());
        k.bytes(domain.tag());
        k
    }

    /// Adds a byte string.
    pub(crate) fn bytes(&mut self, b: &[u8]) -> &mut KeyBuilder {
        self.0.update(&(b.len() as u64).to_le_bytes());
        self.0.update(b);
        self
    }

    /// Adds a string.
    pub(crate) fn str(&mut self, s: &str) -> &mut KeyBuilder {
        self.bytes(s.as_bytes())
    }

    /// Adds an OS string (a path).
    pub(crate) fn os(&mut self, s: impl AsRef<OsStr>) -> &mut KeyBuilder {
        self.bytes(s.as_ref().as_encoded_bytes())
    }

    /// Adds a number.
    pub(crate) fn u64(&mut self, n: u64) -> &mut KeyBuilder {
        self.0.update(&n.to_le_bytes());
        self
    }

    /// Adds a 128-bit number (another key, a content hash).
    pub(crate) fn u128(&mut self, n: u128) -> &mut KeyBuilder {
        self.0.update(&n.to_le_bytes());
        self
    }

    /// Adds a file's identity without reading it: its canonical path, size and modification
    /// time (an error when it cannot be read).
    pub(crate) fn file_stamp(&mut self, path: &Path) -> std::io::Result<&mut KeyBuilder> {
        let meta = std::fs::metadata(path)?;
        let canon = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        self.os(&canon).u64(meta.len());
        let nanos = meta
            .modified()
            .ok()
            .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        Ok(self.u128(nanos))
    }

    /// The 128-bit key.
    pub(crate) fn finish(&self) -> u128 {
        self.0.digest128()
    }

    /// The key's low 64 bits (for names).
    pub(crate) fn finish64(&self) -> u64 {
        self.finish() as u64
    }
}

fn quote(arg: &OsStr) -> String {
    let s = arg.to_string_lossy();
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_=+./:,@%".contains(&b))
    {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// `argv` as a shell would take it back.
pub(crate) fn command_line(argv: &[OsString]) -> String {
    argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")
}

/// The program of `argv` quoted as in [`command_line`].
pub(crate) fn quoted_program(c: &Command) -> String {
    quote(c.argv()[0].as_os_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Paths under the root are spelled relative, after `-I` and the joined `-Xclang=` too;
    /// `map_paths` maps the path of a joined `-Xclang=` as it maps a path alone.
    #[test]
    fn paths_in_joined_arguments_are_relative_and_mapped() {
        let root = Path::new("/r");
        let rel = |a: &str| relative_arg(OsStr::new(a), root);
        assert_eq!(rel("/r/t/k.hipfb"), "t/k.hipfb");
        assert_eq!(rel("-I/r/include"), "-Iinclude");
        assert_eq!(rel("-Xclang=/r/t/k.hipfb"), "-Xclang=t/k.hipfb");
        assert_eq!(
            rel("-Xclang=/elsewhere/k.hipfb"),
            "-Xclang=/elsewhere/k.hipfb"
        );
        assert_eq!(
            rel("-Xclang=-fcuda-include-gpubinary"),
            "-Xclang=-fcuda-include-gpubinary"
        );
        let mut c = Command::new("clang");
        c.add_args(["-Xclang=/c/in.hipfb", "/c/in.hipfb", "-Xclang=-cuid=1"]);
        let moved = c.map_paths(|p| (p == Path::new("/c/in.hipfb")).then(|| "/p/in.hipfb".into()));
        assert_eq!(
            moved.args,
            ["-Xclang=/p/in.hipfb", "/p/in.hipfb", "-Xclang=-cuid=1"].map(OsString::from)
        );
    }

    #[test]
    fn quoting() {
        let argv: Vec<OsString> = ["clang", "-DX=a b", "--offload-arch=gfx90a:xnack+"]
            .map(OsString::from)
            .to_vec();
        assert_eq!(
            command_line(&argv),
            "clang '-DX=a b' --offload-arch=gfx90a:xnack+"
        );
    }

    #[test]
    fn keys_differ_by_domain_and_field_boundaries() {
        let key = |d, parts: &[&str]| {
            let mut k = KeyBuilder::new(d);
            for p in parts {
                k.str(p);
            }
            k.finish()
        };
        assert_ne!(
            key(Domain::Job, &["ab", "c"]),
            key(Domain::Job, &["a", "bc"])
        );
        assert_ne!(key(Domain::Job, &["a"]), key(Domain::Link, &["a"]));
        assert_eq!(key(Domain::Job, &["a"]), key(Domain::Job, &["a"]));
    }

    #[test]
    fn inputs_are_keyed_by_content() {
        let mut c = Command::new("clang");
        c.add_args(["-c", "/a/x.o"]);
        c.inputs.push(PathBuf::from("/a/x.o"));
        let mut moved = Command::new("clang");
        moved.add_args(["-c", "/b/x.o"]);
        moved.inputs.push(PathBuf::from("/b/x.o"));
        let key = |c: &Command, h: u128| {
            let mut k = KeyBuilder::new(Domain::Link);
            c.add_to_key(&mut k, |_| Some(h));
            k.finish()
        };
        assert_eq!(key(&c, 1), key(&moved, 1));
        assert_ne!(key(&c, 1), key(&c, 2));
    }
}
