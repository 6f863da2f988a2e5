//! The jobs the plan hands the jobs stage, beside [`Command`]: what every device compile of a
//! build was decided to be ([`CompileOptions`]), one (source, architecture) compile
//! ([`CompileJob`]) and one device link ([`LinkJob`]). The toolchain's files fill them in.

use std::ffi::OsString;
use std::path::PathBuf;

use offload_formats::package::ImageKind;

use crate::builder::arch::Target;
use crate::builder::command::Command;
use crate::builder::options::Language;

/// What a compiler launcher is, for the commands spelled under it: the plan finds it from the
/// launcher's program name; each compiler's file spells what that kind needs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum LauncherKind {
    /// No launcher.
    #[default]
    None,
    /// sccache: caches a command only with `-c`, refuses `-Xclang` pairs it does not know.
    Sccache,
    /// ccache: caches a command only with `-c`; takes `-Xclang` pairs.
    Ccache,
    /// Another compiler cache (cachepot, buildcache): taken to refuse `-Xclang` pairs.
    OtherCache,
    /// Any other program (a distributed-compile client, a wrapper).
    Other,
}

impl LauncherKind {
    /// Whether it is a compiler cache. Such a tool caches only the commands it understands
    /// (neither sccache nor ccache caches a compile using a PCH), so under one the compiles
    /// keep to the driver's own flags.
    pub(crate) fn is_cache(self) -> bool {
        matches!(self, Self::Sccache | Self::Ccache | Self::OtherCache)
    }

    /// Whether it refuses to cache a command with an `-Xclang` pair it does not know: every
    /// compiler cache but ccache (sccache 0.16: "Can't handle UnknownFlag arguments with
    /// -Xclang"; the caches derived from it, or untested here).
    pub(crate) fn refuses_xclang(self) -> bool {
        self.is_cache() && self != Self::Ccache
    }
}

/// What the plan decided for every device compile of a build.
#[derive(Clone, Debug)]
pub(crate) struct CompileOptions {
    /// The language.
    pub lang: Language,
    /// A compiler launcher (`sccache`), program first; empty for none.
    pub launcher: Vec<OsString>,
    /// What the launcher is, as the plan found it ([`LauncherKind`]).
    pub launcher_kind: LauncherKind,
    /// Include directories, absolute.
    pub includes: Vec<PathBuf>,
    /// Macros.
    pub defines: Vec<(String, Option<String>)>,
    /// The warning switches, the builder's flags, then `HIPFLAGS`/`CUDAFLAGS`.
    pub flags: Vec<OsString>,
    /// Environment variables set or removed for every process ([`crate::builder::Build::env`]).
    pub env: Vec<(OsString, Option<OsString>)>,
    /// The optimization flag of the compile and the code generation (`-O3`).
    pub opt_flag: String,
    /// The optimization flag of `ptxas` (`-O3`; it knows 0 to 3 only).
    pub ptxas_opt_flag: String,
    /// Whether device debug information is asked for (`-g`).
    pub debug: bool,
    /// Whether the compile is asked for a depfile (`-MD -MF`): clang 22 ignores it in
    /// device-only compiles, and says so in a warning that `-Werror` would make an error.
    pub depfile_in_compile: bool,
    /// Whether a HIP compile gets a `-cuid` from its job key (unless a flag sets one).
    pub cuid_from_key: bool,
    /// Whether the sources are compiled with their host code
    /// ([`Build::host_code`](crate::Build::host_code)): then every compile of a source, the
    /// host one included, gets the same `-cuid`, from the source's key (no architecture).
    pub host_code: bool,
    /// Whether a host-code build's device code is relocatable, linked per architecture
    /// across its sources ([`Build::rdc`](crate::Build::rdc)).
    pub rdc: bool,
    /// Whether a CUDA compile without a CUDA install gets the oldest PTX ISA its
    /// architecture needs (unless a flag chooses one: `--cuda-feature=+ptx78`).
    pub min_ptx_isa: bool,
    /// nvcc's host compiler (`-ccbin <path>`), when the environment chooses one.
    pub host_compiler: Vec<OsString>,
    /// The directory the device compiles run in, with the paths under it spelled relative
    /// to it ([`Command::to_command`]): the build's root (`CARGO_MANIFEST_DIR`, else the
    /// current directory), so that two checkouts give the same commands and bytes.
    pub root: PathBuf,
    /// `SCCACHE_EXTRAFILES` as the build has it (set only under sccache): the files sccache
    /// hashes into every key and ships to a build server, to which a host compile adds the
    /// device code it embeds ([`crate::builder::toolchain::clang::host_job`]).
    pub sccache_extrafiles: Option<OsString>,
}

impl CompileOptions {
    /// The include directories (`-I`), macros (`-D`) and flags, as every compiler here spells
    /// them, in that order: the end of a device compile's arguments before its source.
    pub(crate) fn source_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        for i in &self.includes {
            args.push(format!("-I{}", i.display()).into());
        }
        for (n, v) in &self.defines {
            args.push(match v {
                Some(v) => format!("-D{n}={v}").into(),
                None => format!("-D{n}").into(),
            });
        }
        args.extend(self.flags.iter().cloned());
        args
    }
}

/// How a compile's first step runs, as the plan decided; a way that cannot run this compile
/// (its driver printed something unexpected, a step failed) gives way to the next of
/// [`CompileJob::ways`], the last being the compiler's driver (with its launcher, retried
/// without it when the launcher fails: [`crate::builder::run::exec`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Way {
    /// The steps nvcc prints, each a node of the job graph
    /// ([`crate::builder::toolchain::nvcc_steps`]).
    NvccSteps,
    /// The two commands a HIP device compile's clang driver prints, cc1 then lld, without the
    /// driver ([`crate::builder::toolchain::direct`]).
    Direct,
    /// The compiler's driver, as planned.
    Driver,
}

/// One planned (source, architecture) compile: its commands, outputs and cache files.
#[derive(Clone, Debug)]
pub(crate) struct CompileJob {
    /// The source (absolute).
    pub source: PathBuf,
    /// What it builds: device code for an architecture, or a source's host object.
    pub target: Target,
    /// Compiled as relocatable device code (`-fgpu-rdc`), device-linked later.
    pub rdc: bool,
    /// The commands in order: the compile (with the launcher), then code generation or
    /// `ptxas`; each writes into the cache directory.
    pub steps: Vec<Command>,
    /// The host-side preprocessing that writes the depfile, run when the compile wrote none.
    pub deps_only: Command,
    /// The outputs with their kinds: the object (HIP), or PTX then the cubin (CUDA).
    pub outputs: Vec<(ImageKind, PathBuf)>,
    /// The depfile.
    pub depfile: PathBuf,
    /// The cache record.
    pub record: PathBuf,
    /// The cache path every file of the job is named after (`<stem>-<arch>-<key>`).
    pub base: PathBuf,
    /// Its precompiled preamble: an index into [`crate::builder::plan::JobSettings::pch_jobs`].
    pub pch: Option<usize>,
    /// How many bytes of the source that PCH stands for (`-preamble-bytes`).
    pub pch_skip: usize,
    /// How many threads the compile may use: its architectures, for an nvcc host-code job
    /// (nvcc's `--threads`, which changes no byte and is not in the key), else 1; the plan
    /// spells what it gives ([`CompileJob::with_threads`]).
    pub threads: usize,
    /// The ways its first step is tried in ([`Way`]), the driver last.
    pub ways: Vec<Way>,
    /// Whether its compile may run on a build farm (sccache with a scheduler, a compiler it
    /// distributes): then it takes one of the farm's slots ([`CompileJob::on_farm`]).
    pub remote: bool,
    /// Under sccache with a farm, why the compile takes a local slot instead (the build's
    /// last progress line says it); `None` when it may take the farm's.
    pub stays: Option<&'static str>,
}

impl CompileJob {
    /// Whether the job takes a build farm's slot instead of a local one: its one step may run
    /// remotely (a later step, `ptxas` or code generation, runs here).
    pub(crate) fn on_farm(&self) -> bool {
        self.remote && self.steps.len() == 1
    }

    /// This job with its compile given up to `n` threads (at most [`CompileJob::threads`]):
    /// `--threads=<n>` after the program's first argument when more than one; `None` when
    /// it takes no threads.
    pub(crate) fn with_threads(&self, n: usize) -> Option<CompileJob> {
        let n = n.min(self.threads);
        (n > 1).then(|| {
            let mut job = self.clone();
            job.steps[0]
                .args
                .insert(1, OsString::from(format!("--threads={n}")));
            job
        })
    }
}

/// One planned device link: one architecture's relocatable objects into a code object.
#[derive(Clone, Debug)]
pub(crate) struct LinkJob {
    /// What it links: an architecture's code object, or nvcc's host object of every
    /// architecture ([`Target::DeviceLink`]).
    pub target: Target,
    /// The link; its output is a placeholder in the cache directory, replaced by the cached
    /// object's name (from the key over the command and its inputs' content) when it runs.
    pub command: Command,
}

impl LinkJob {
    /// The link `command` for `target`, with `objs` its inputs and `out` its output (named
    /// in the command already).
    pub(crate) fn new(
        target: Target,
        mut command: Command,
        objs: Vec<PathBuf>,
        out: PathBuf,
    ) -> LinkJob {
        command.inputs = objs;
        command.outputs = vec![out];
        LinkJob { target, command }
    }
}

/// The placeholder of a compile's output in its arguments, until the job key names it.
pub(crate) const OUT: &str = "<out>";
/// The placeholder of a compile's depfile in its arguments.
pub(crate) const DEP: &str = "<depfile>";
