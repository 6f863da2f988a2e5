//! The jobs stage: one compile per (source, architecture) of the [`Plan`], in parallel
//! ([`super::jobs`]: Cargo's jobserver, `OFFLOAD_BUILD_MAX_JOBS`), each skipped when its cache
//! record ([`super::cache`]) says its inputs are unchanged; then one device link per
//! architecture compiled from several sources (`-fgpu-rdc`).
//!
//! Reads only the plan; the result is the images per architecture, for [`super::pack`].

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use xxhash_rust::xxh3::Xxh3;

use offload_formats::package::ImageKind;

use super::Language;
use super::arch::Arch;
use super::cache::{self, Hasher, Record};
use super::diag::{self, Diagnostic};
use super::env::Env;
use super::error::Error;
use super::jobs;
use super::pack::Piece;
use super::plan::Plan;
use super::process::{self, RunError};
use super::tool::Toolchain;
use super::{Progress, ProgressStep};

/// What the jobs produced.
#[derive(Debug, Default)]
pub(crate) struct Built {
    /// The images of each architecture (code objects; PTX and cubins for CUDA).
    pub per_arch: BTreeMap<Arch, Vec<Piece>>,
    /// Jobs (compiles and device links) that ran.
    pub jobs_run: usize,
    /// Jobs whose cached result was used.
    pub jobs_cached: usize,
    /// What the compiler printed for the successful jobs (run or cached), deduplicated
    /// across architectures; empty when warnings are off ([`super::Build::warnings`]).
    pub diagnostics: Vec<Diagnostic>,
}

/// Runs the plan's compiles and device links; tells Cargo about every header read.
pub(crate) fn run(plan: &Plan, env: &Env<'_>) -> Result<Built, Error> {
    let mut built = Built::default();
    let (Some(tc), Some(settings)) = (&plan.toolchain, &plan.jobs) else {
        // Nothing to compile (only images).
        return Ok(built);
    };
    let d = env.directives();
    let lang = plan.lang;
    let mut sources_per_arch: BTreeMap<&Arch, usize> = BTreeMap::new();
    for (_, archs) in &plan.compiles {
        for a in archs {
            *sources_per_arch.entry(a).or_default() += 1;
        }
    }
    cache::remove_leftovers(&plan.cache_dir);
    let hasher = Hasher::default();
    let ctx = JobCtx {
        tc,
        lang,
        cache_dir: &plan.cache_dir,
        launcher: &settings.launcher,
        hasher: &hasher,
        env_overrides: &settings.env_overrides,
        includes: settings.includes.clone(),
        defines: &settings.defines,
        flags: settings.flags.clone(),
        timeout: settings.timeout,
        no_depfile: Default::default(),
    };
    let client = settings.client.as_ref();
    // Jobs in (source, arch) order; those whose cache record is fresh are done already, so
    // the progress count covers only the compiles that run.
    let mut slots: Vec<Result<JobOut, Spec>> = Vec::new();
    for (src, archs) in &plan.compiles {
        for a in archs {
            let rdc = lang == Language::Hip && sources_per_arch[a] > 1;
            let spec = ctx.spec(src, a, rdc);
            slots.push(ctx.cached(&spec).ok_or(spec));
        }
    }
    let to_run = slots.iter().filter(|s| s.is_err()).count();
    let rdc_archs_to_link: BTreeSet<Arch> = slots
        .iter()
        .filter_map(|s| s.as_ref().err())
        .filter(|s| s.rdc)
        .map(|s| s.arch.clone())
        .collect();
    let total = to_run + rdc_archs_to_link.len();
    let mut done = 0usize;
    let mut report = |arch: &Arch, step: ProgressStep, seconds: Option<f64>| {
        done += 1;
        if let Some(hook) = &settings.progress {
            hook.call(&Progress {
                done,
                total,
                arch: arch.to_string(),
                step,
                seconds,
            });
        }
    };
    let mut outs: Vec<Option<JobOut>> = Vec::new();
    let mut specs = Vec::new();
    for slot in slots {
        match slot {
            Ok(out) => outs.push(Some(out)),
            Err(spec) => {
                outs.push(None);
                specs.push(spec);
            }
        }
    }
    let job_list: Vec<jobs::Job<'_, JobOut>> = specs
        .into_iter()
        .map(|spec| {
            let ctx = &ctx;
            Box::new(move || ctx.run(spec)) as jobs::Job<'_, JobOut>
        })
        .collect();
    let mut ran = jobs::run(job_list, client, settings.max_jobs, &mut |o: &JobOut| {
        report(
            &o.arch,
            ProgressStep::Compile(o.source.clone()),
            Some(o.seconds),
        )
    })?
    .into_iter();
    let outs: Vec<JobOut> = outs
        .into_iter()
        .map(|o| o.or_else(|| ran.next()))
        .collect::<Option<_>>()
        .ok_or_else(|| Error::Config("a job did not run".into()))?;
    if ctx.no_depfile.load(std::sync::atomic::Ordering::Relaxed) {
        d.warn(&format!(
            "offload-build: {} wrote no depfile (-MD -MF); header changes are not tracked",
            tc.clang.display()
        ));
    }
    let mut to_link: BTreeMap<Arch, Vec<PathBuf>> = BTreeMap::new();
    let mut printed: Vec<(&str, Vec<String>)> = Vec::new();
    for o in &outs {
        printed.push((o.arch.as_str(), diag::group(&o.stderr)));
        if o.ran {
            built.jobs_run += 1;
        } else {
            built.jobs_cached += 1;
        }
        for dep in o.deps.iter().skip(1) {
            d.push_path("rerun-if-changed", dep)?;
        }
        if o.rdc {
            to_link
                .entry(o.arch.clone())
                .or_default()
                .push(o.outputs[0].clone());
        } else {
            for (kind, path) in &o.outputs_kinds() {
                // CMake's `NN-real`: the cubin alone (the PTX was its intermediate).
                if *kind == ImageKind::Ptx && o.arch.is_real() {
                    continue;
                }
                built
                    .per_arch
                    .entry(o.arch.clone())
                    .or_default()
                    .push(Piece {
                        kind: *kind,
                        data: std::fs::read(path).map_err(|e| Error::io("reading", path, e))?,
                    });
            }
        }
    }
    // Device links, one per architecture compiled from several sources.
    let link_jobs: Vec<jobs::Job<'_, Linked>> = to_link
        .into_iter()
        .map(|(a, objs)| {
            let ctx = &ctx;
            Box::new(move || ctx.link(a, objs)) as jobs::Job<'_, Linked>
        })
        .collect();
    let linked = jobs::run(link_jobs, client, settings.max_jobs, &mut |l: &Linked| {
        if rdc_archs_to_link.contains(&l.arch) {
            report(&l.arch, ProgressStep::Link, l.ran.then_some(l.seconds));
        }
    })?;
    let mut link_printed: Vec<(&str, Vec<String>)> = Vec::new();
    for l in &linked {
        link_printed.push((l.arch.as_str(), diag::group(&l.stderr)));
    }
    if settings.forward_warnings {
        built.diagnostics = diag::merge(printed.into_iter().chain(link_printed));
    }
    for Linked {
        arch: a, co, ran, ..
    } in linked
    {
        if ran {
            built.jobs_run += 1;
        } else {
            built.jobs_cached += 1;
        }
        built.per_arch.entry(a).or_default().push(Piece {
            kind: ImageKind::Object,
            data: std::fs::read(&co).map_err(|e| Error::io("reading", &co, e))?,
        });
    }
    Ok(built)
}

/// Everything the jobs share.
struct JobCtx<'a> {
    tc: &'a Toolchain,
    lang: Language,
    cache_dir: &'a Path,
    launcher: &'a [OsString],
    hasher: &'a Hasher,
    env_overrides: &'a BTreeMap<OsString, Option<OsString>>,
    includes: Vec<PathBuf>,
    defines: &'a [(String, Option<String>)],
    flags: Vec<String>,
    /// The compile timeout, for every process a job runs.
    timeout: Option<Duration>,
    no_depfile: std::sync::atomic::AtomicBool,
}

/// A finished device link.
struct Linked {
    arch: Arch,
    co: PathBuf,
    ran: bool,
    seconds: f64,
    stderr: Vec<String>,
}

/// One (source, arch) compile, planned.
struct Spec {
    source: PathBuf,
    arch: Arch,
    rdc: bool,
    /// A command that writes only the depfile, for compilers that ignore `-MD` in the compile.
    deps_only: Vec<OsString>,
    /// The commands (program first); output paths already filled in.
    steps: Vec<Vec<OsString>>,
    /// Outputs: the object (HIP), or PTX then cubin (CUDA).
    outputs: Vec<PathBuf>,
    depfile: PathBuf,
    record: PathBuf,
    /// The cache path every file of the job is named after (`<stem>-<arch>-<key>`).
    base: PathBuf,
}

/// A finished job.
struct JobOut {
    source: PathBuf,
    arch: Arch,
    rdc: bool,
    lang: Language,
    outputs: Vec<PathBuf>,
    deps: Vec<PathBuf>,
    ran: bool,
    /// Seconds the compile took (0 for a cache hit).
    seconds: f64,
    /// What the compiler printed (cleaned; replayed from the record on a cache hit).
    stderr: Vec<String>,
}

impl JobOut {
    fn outputs_kinds(&self) -> Vec<(ImageKind, &PathBuf)> {
        kinds(self.lang, &self.outputs)
    }
}

/// A failed step's command as the user can run it again: with the cache's file names instead
/// of the job's private directory (removed when the job ends).
fn public_paths(mut e: Error, private: &Path, base: &Path) -> Error {
    if let (Error::CompileFailed { command, .. }, Some(dir)) = (&mut e, base.parent()) {
        *command = command.replace(&private.display().to_string(), &dir.display().to_string());
    }
    e
}

/// The kind of each output of a job: the object (HIP), or PTX then the cubin (CUDA).
fn kinds(lang: Language, outputs: &[PathBuf]) -> Vec<(ImageKind, &PathBuf)> {
    match lang {
        Language::Hip => vec![(ImageKind::Object, &outputs[0])],
        Language::Cuda => {
            let mut v = vec![(ImageKind::Ptx, &outputs[0])];
            if let Some(c) = outputs.get(1) {
                v.push((ImageKind::Cubin, c));
            }
            v
        }
    }
}

/// Whether `data` is the device code `kind` says (for an NVIDIA or AMDGPU `arch`): an AMDGPU
/// ELF code object, a PTX text, or a cubin (an NVIDIA ELF); else what is expected and what
/// was found. The same check for every container and embedding mode, before packing.
pub(crate) fn check_device_code(
    kind: ImageKind,
    nvidia: bool,
    data: &[u8],
) -> Result<(), (String, String)> {
    const EM_CUDA: u16 = 190;
    const EM_AMDGPU: u16 = 224;
    let elf_machine = |data: &[u8]| -> Option<u16> {
        (data.len() >= 64 && data.starts_with(b"\x7fELF") && data[4] == 2 && data[5] == 1)
            .then(|| u16::from_le_bytes([data[18], data[19]]))
    };
    let head = || {
        let n = data.len().min(8);
        if n == 0 {
            return "an empty file".to_string();
        }
        let hex: Vec<String> = data[..n].iter().map(|b| format!("{b:02x}")).collect();
        format!("{} bytes starting with {}", data.len(), hex.join(" "))
    };
    let (expected, ok) = match kind {
        ImageKind::Ptx => {
            let text = std::str::from_utf8(data).ok();
            let ok = text.is_some_and(|t| {
                !t.contains('\0')
                    && t.lines().any(|l| l.trim_start().starts_with(".version"))
                    && t.lines().any(|l| l.trim_start().starts_with(".target"))
            });
            ("a PTX text (.version, .target)", ok)
        }
        ImageKind::Cubin => (
            "a cubin (a 64-bit NVIDIA ELF, EM_CUDA)",
            elf_machine(data) == Some(EM_CUDA),
        ),
        _ if nvidia => (
            "a cubin (a 64-bit NVIDIA ELF, EM_CUDA)",
            elf_machine(data) == Some(EM_CUDA),
        ),
        _ => (
            "an AMDGPU ELF code object (64-bit ELF, EM_AMDGPU)",
            elf_machine(data) == Some(EM_AMDGPU),
        ),
    };
    if ok {
        return Ok(());
    }
    let found = match elf_machine(data) {
        Some(m) => format!("an ELF file for machine {m}"),
        None => head(),
    };
    Err((expected.to_string(), found))
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

fn command_line(argv: &[OsString]) -> String {
    argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")
}

impl JobCtx<'_> {
    fn spec(&self, source: &Path, arch: &Arch, rdc: bool) -> Spec {
        const OUT: &str = "<out>";
        const DEP: &str = "<depfile>";
        let mut args: Vec<OsString> = Vec::new();
        let s = |v: &str| OsString::from(v);
        match self.lang {
            Language::Hip => {
                args.extend(["-x", "hip"].map(s));
                args.push(s(&format!("--offload-arch={arch}")));
                args.extend(["--cuda-device-only", "--no-gpu-bundle-output"].map(s));
                if rdc {
                    args.push(s("-fgpu-rdc"));
                }
                match &self.tc.rocm {
                    Some(r) => args.extend(r.args().iter().map(|a| s(a))),
                    None => args.extend(["-nogpulib", "-nogpuinc"].map(s)),
                }
                args.push(s("-c"));
            }
            Language::Cuda => {
                args.extend(["-x", "cuda"].map(s));
                args.push(s(&format!("--offload-arch={}", arch.offload_arch())));
                args.push(s("--cuda-device-only"));
                match &self.tc.cuda {
                    Some(c) => args.push(s(&format!("--cuda-path={}", c.display()))),
                    None => {
                        args.extend(["-nocudainc", "-nocudalib"].map(s));
                        // Without a CUDA install clang 22 defaults to PTX ISA 4.2, which no
                        // current processor accepts: the oldest ISA this one needs, unless a
                        // flag chooses one (`--cuda-feature=+ptx78`).
                        if let Some(v) = arch.min_ptx() {
                            if !self.flags.iter().any(|f| f.contains("+ptx")) {
                                args.extend(["-Xclang", "-target-feature", "-Xclang"].map(s));
                                args.push(s(&format!("+ptx{v}")));
                            }
                        }
                    }
                }
                args.push(s("-S"));
            }
        }
        args.push(s("-O3"));
        for i in &self.includes {
            args.push(s(&format!("-I{}", i.display())));
        }
        for (n, v) in self.defines {
            args.push(s(&match v {
                Some(v) => format!("-D{n}={v}"),
                None => format!("-D{n}"),
            }));
        }
        args.extend(self.flags.iter().map(|f| s(f)));
        args.push(source.as_os_str().to_os_string());
        args.extend([s("-o"), s(OUT)]);
        // clang 22 ignores `-MD -MF` in device-only compiles (and says so, as a warning that
        // -Werror would make an error): it gets no depfile flags, and the dependencies come
        // from the host-side preprocessing below. Older (and unknown) versions write it.
        if !self.depfile_ignored() {
            args.extend([s("-MD"), s("-MF"), s(DEP)]);
        }

        // The job key: compiler identity, launcher, arguments (with placeholders for paths).
        let mut h = Xxh3::new();
        h.update(b"offload-build job 1\0");
        h.update(&self.tc.identity.to_le_bytes());
        for a in self.launcher.iter().chain(&args) {
            h.update(a.as_encoded_bytes());
            h.update(b"\0");
        }
        let key = h.digest128();
        // clang derives the HIP compilation unit ID (the `__hip_cuid_*` symbol) from the whole
        // command line, output path included: one from the job key instead keeps the device
        // code the same whatever the output's (private, temporary) name and cache directory.
        if self.lang == Language::Hip
            && !self
                .flags
                .iter()
                .any(|f| f.starts_with("-cuid=") || f.starts_with("-fuse-cuid="))
        {
            let at = args.iter().position(|a| a == "-O3").unwrap_or(args.len());
            args.insert(at, s(&format!("-cuid={key:032x}")));
        }
        let stem = source
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let base = self
            .cache_dir
            .join(format!("{stem}-{}-{:016x}", arch.file_tag(), key as u64));
        let ext = match (self.lang, rdc) {
            (Language::Hip, false) => "o",
            (Language::Hip, true) => "bc",
            (Language::Cuda, _) => "ptx",
        };
        let first_out = base.with_extension(ext);
        let depfile = base.with_extension("d");
        for a in args.iter_mut() {
            if a == OUT {
                *a = first_out.clone().into_os_string();
            } else if a == DEP {
                *a = depfile.clone().into_os_string();
            }
        }
        // clang 22 writes no depfile for device-only compiles: then the dependencies come from
        // a host-side preprocessing of the same source with the same flags.
        let mut deps_only: Vec<OsString> = vec![self.tc.clang.clone().into_os_string()];
        let mut skip = 0;
        for a in &args {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            match a.to_str() {
                Some("--cuda-device-only") => deps_only.push(s("--cuda-host-only")),
                Some("--no-gpu-bundle-output" | "-c" | "-S" | "-MD" | "-fgpu-rdc") => {}
                Some("-o" | "-MF") => skip = 1,
                _ => deps_only.push(a.clone()),
            }
        }
        deps_only.extend([s("-M"), s("-MF"), depfile.clone().into_os_string()]);
        let mut step1: Vec<OsString> = self.launcher.to_vec();
        step1.push(self.tc.clang.clone().into_os_string());
        step1.extend(args);
        let mut steps = vec![step1];
        let mut outputs = vec![first_out.clone()];
        if rdc {
            // Code generation of the bitcode, still in this (parallel) job.
            let obj = base.with_extension("o");
            let mut step = vec![
                self.tc.clang.clone().into_os_string(),
                s("--target=amdgcn-amd-amdhsa"),
                s(&format!("-mcpu={arch}")),
            ];
            // The device libraries were linked into the bitcode by the compile (clang links
            // them into every translation unit): code generation needs none, and clang 15
            // would look for them for a bare amdgcn target. hipcc's code-generation options
            // apply here, where the code is generated.
            step.push(s("-nogpulib"));
            if let Some(r) = &self.tc.rocm {
                step.extend(r.codegen_args().iter().map(|a| s(a)));
            }
            step.extend([
                s("-O3"),
                s("-c"),
                first_out.into_os_string(),
                s("-o"),
                obj.clone().into_os_string(),
            ]);
            steps.push(step);
            outputs = vec![obj];
        }
        if self.lang == Language::Cuda && !arch.is_virtual() {
            if let Some(ptxas) = &self.tc.ptxas {
                let cubin = base.with_extension("cubin");
                steps.push(vec![
                    ptxas.clone().into_os_string(),
                    s(&format!("-arch={}", arch.offload_arch())),
                    s("-O3"),
                    outputs[0].clone().into_os_string(),
                    s("-o"),
                    cubin.clone().into_os_string(),
                ]);
                outputs.push(cubin);
            }
        }
        Spec {
            source: source.to_path_buf(),
            arch: arch.clone(),
            rdc,
            deps_only,
            steps,
            outputs,
            depfile,
            record: base.with_extension("rec"),
            base,
        }
    }

    /// Whether the compiler ignores `-MD` in device-only compiles (LLVM 22 and newer).
    fn depfile_ignored(&self) -> bool {
        self.tc.major >= 22
    }

    /// Runs one command (under the compile timeout); returns what it printed on standard
    /// error (see [`diag::clean`]).
    fn exec(
        &self,
        argv: &[OsString],
        arch: &Arch,
        source: Option<&Path>,
        depfile: Option<&Path>,
    ) -> Result<Vec<String>, Error> {
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]);
        for (k, v) in self.env_overrides {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        let out = match process::run(&mut cmd, self.timeout) {
            Ok(o) => o,
            Err(RunError::Spawn(error)) => {
                return Err(Error::Spawn {
                    command: command_line(argv),
                    error,
                });
            }
            Err(RunError::TimedOut) => {
                return Err(Error::CompileTimedOut {
                    arch: arch.to_string(),
                    source: source.map(Path::to_path_buf),
                    program: quote(&argv[0]),
                    timeout: self.timeout.unwrap_or_default(),
                });
            }
            Err(RunError::Stopped) => return Err(Error::Stopped),
        };
        let stderr = diag::clean(&String::from_utf8_lossy(&out.stderr), depfile);
        if out.status.success() {
            return Ok(stderr);
        }
        let mut text = match self.crash_summary(&out.stderr, arch) {
            Some(summary) => summary,
            None => stderr.join("\n"),
        };
        if !text.is_empty() {
            text.push('\n');
        }
        Err(Error::CompileFailed {
            arch: arch.to_string(),
            source: source.map(Path::to_path_buf),
            command: command_line(argv),
            status: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: text,
            hint: None,
        })
    }

    /// A compiler crash (a stack dump) in two lines: clang's error, and the file in the cache
    /// directory that keeps everything it printed. `None` when it did not crash.
    fn crash_summary(&self, stderr: &[u8], arch: &Arch) -> Option<String> {
        let text = String::from_utf8_lossy(stderr);
        let at = text
            .find("PLEASE submit a bug report")
            .or_else(|| text.find("Stack dump:"))?;
        let summary = text[..at]
            .lines()
            .map(str::trim)
            .find(|l| l.contains("error"))
            .or_else(|| text[..at].lines().map(str::trim).find(|l| !l.is_empty()))
            .unwrap_or("the compiler crashed")
            .to_string();
        let log = self.cache_dir.join(format!(
            "crash-{}-{:016x}.log",
            arch.file_tag(),
            xxhash_rust::xxh3::xxh3_64(stderr)
        ));
        let place = match cache::write_atomic(&log, stderr) {
            Ok(()) => format!(
                "its full output (with the stack dump) is in {}",
                log.display()
            ),
            Err(_) => "its full output could not be kept".to_string(),
        };
        Some(format!("{summary}\n(the compiler crashed; {place})"))
    }

    /// Runs the step that starts with the launcher; a launcher that cannot be run, or that
    /// fails where the same compile without it succeeds, is one line
    /// ([`Error::LauncherFailed`]).
    fn exec_launched(
        &self,
        argv: &[OsString],
        arch: &Arch,
        source: &Path,
        depfile: &Path,
    ) -> Result<Vec<String>, Error> {
        let n = self.launcher.len();
        let result = self.exec(argv, arch, Some(source), Some(depfile));
        if n == 0 {
            return result;
        }
        let launcher = command_line(self.launcher);
        match result {
            Err(Error::Spawn { error, .. }) => Err(Error::LauncherFailed {
                launcher,
                reason: format!("cannot be run: {error}"),
            }),
            Err(e) if matches!(e, Error::CompileFailed { .. }) => {
                // Without the launcher: when that compile succeeds, the launcher failed.
                if self
                    .exec(&argv[n..], arch, Some(source), Some(depfile))
                    .is_err()
                {
                    return Err(e);
                }
                let Error::CompileFailed { status, stderr, .. } = &e else {
                    return Err(e);
                };
                let said = stderr
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .map(|l| format!(": {l}"))
                    .unwrap_or_default();
                Err(Error::LauncherFailed {
                    launcher,
                    reason: format!(
                        "failed ({}{said}) compiling {} for {arch}, which succeeds without it",
                        match status {
                            Some(c) => format!("exit status {c}"),
                            None => "killed by a signal".to_string(),
                        },
                        source.display()
                    ),
                })
            }
            other => other,
        }
    }

    /// The job's result from its cache record, when the record is fresh and the outputs
    /// exist (the warnings the compile printed are replayed from the record).
    fn cached(&self, spec: &Spec) -> Option<JobOut> {
        let rec = Record::load(&spec.record)?;
        if !(spec.outputs.iter().all(|o| o.is_file()) && rec.is_fresh(self.hasher)) {
            return None;
        }
        Some(JobOut {
            source: spec.source.clone(),
            arch: spec.arch.clone(),
            rdc: spec.rdc,
            lang: self.lang,
            outputs: spec.outputs.clone(),
            deps: rec.deps.into_iter().map(|(p, _)| p).collect(),
            ran: false,
            seconds: 0.0,
            stderr: rec.stderr,
        })
    }

    fn run(&self, spec: Spec) -> Result<JobOut, Error> {
        let start = Instant::now();
        let _ = std::fs::remove_file(&spec.record);
        // Every file of the job is written in a directory of its own and renamed into place
        // once all steps succeeded: compiles that share the cache (two builds of the same
        // sources at once) never read each other's half-written files.
        let tmp = cache::JobDir::new(self.cache_dir)?;
        // Removed by a signal's handler too (`offload-build compile`, see `kill_compilers`).
        let _known = process::PrivateDir::new(tmp.path());
        let base_name = spec
            .base
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_default();
        let private = |p: &Path| -> Option<PathBuf> {
            let name = p.file_name()?;
            (p.parent() == spec.base.parent()
                && name
                    .as_encoded_bytes()
                    .starts_with(base_name.as_encoded_bytes()))
            .then(|| tmp.path().join(name))
        };
        let rewrite = |argv: &[OsString]| -> Vec<OsString> {
            argv.iter()
                .map(|a| {
                    private(Path::new(a))
                        .map(PathBuf::into_os_string)
                        .unwrap_or_else(|| a.clone())
                })
                .collect()
        };
        let depfile = private(&spec.depfile).unwrap_or_else(|| spec.depfile.clone());
        // Each output is checked to be the device code it should be as soon as a step wrote
        // it (before `ptxas` reads the PTX), then moved into place once all succeeded.
        let mut checked = vec![false; spec.outputs.len()];
        let mut stderr = Vec::new();
        for (i, step) in spec.steps.iter().enumerate() {
            let argv = rewrite(step);
            let printed = if i == 0 {
                self.exec_launched(&argv, &spec.arch, &spec.source, &depfile)
            } else {
                self.exec(&argv, &spec.arch, Some(&spec.source), Some(&depfile))
            };
            stderr.extend(
                printed.map_err(|e| self.explain(public_paths(e, tmp.path(), &spec.base)))?,
            );
            for (j, (kind, out)) in kinds(self.lang, &spec.outputs).into_iter().enumerate() {
                let written = private(out).unwrap_or_else(|| out.clone());
                if checked[j] || !(written.is_file() || i + 1 == spec.steps.len()) {
                    continue;
                }
                checked[j] = true;
                let data =
                    std::fs::read(&written).map_err(|e| Error::io("reading", &written, e))?;
                check_device_code(kind, spec.arch.is_nvidia(), &data).map_err(
                    |(expected, found)| Error::BadDeviceCode {
                        arch: spec.arch.to_string(),
                        source: Some(spec.source.clone()),
                        path: out.clone(),
                        expected,
                        found,
                    },
                )?;
            }
        }
        // A compiler that ignores -MD for device-only compiles (clang 22's new offload driver)
        // leaves no depfile: then the host-side preprocessing writes it.
        if !depfile.is_file() {
            let _ = self.exec(
                &rewrite(&spec.deps_only),
                &spec.arch,
                Some(&spec.source),
                None,
            );
        }
        for out in &spec.outputs {
            let written = private(out).unwrap_or_else(|| out.clone());
            self.hasher.forget(out);
            std::fs::rename(&written, out).map_err(|e| Error::io("renaming", &written, e))?;
        }
        let text = match std::fs::read(&depfile) {
            Ok(t) => t,
            Err(_) => {
                self.no_depfile
                    .store(true, std::sync::atomic::Ordering::Relaxed);
                Vec::new()
            }
        };
        let mut deps = vec![spec.source.clone()];
        for dep in cache::parse_depfile(&text) {
            let dep = if dep.is_absolute() {
                dep
            } else {
                // The compiler ran in this process's working directory.
                std::env::current_dir().map(|c| c.join(&dep)).unwrap_or(dep)
            };
            // A name with a backslash, which clang listed with a `/` instead.
            let dep = cache::restore_backslashes(&dep).unwrap_or(dep);
            if !deps.contains(&dep) {
                deps.push(dep);
            }
        }
        let mut rec = Record {
            deps: Vec::new(),
            stderr: stderr.clone(),
        };
        for dep in &deps {
            if let Some(h) = self.hasher.file(dep) {
                rec.deps.push((dep.clone(), h));
            }
        }
        rec.store(&spec.record)?;
        Ok(JobOut {
            source: spec.source,
            arch: spec.arch,
            rdc: spec.rdc,
            lang: self.lang,
            outputs: spec.outputs,
            deps,
            ran: true,
            seconds: start.elapsed().as_secs_f64(),
            stderr,
        })
    }

    /// Adds what offload-build knows to a failed compile: a source that needs the HIP headers
    /// while no ROCm install is in use.
    fn explain(&self, mut e: Error) -> Error {
        if let Error::CompileFailed { stderr, hint, .. } = &mut e {
            if self.lang == Language::Hip
                && self.tc.rocm.is_none()
                && stderr.contains("hip/hip_runtime.h")
            {
                *hint = Some(self.tc.no_rocm_hint());
            }
        }
        e
    }

    /// Device link of one architecture's relocatable objects into a code object.
    fn link(&self, arch: Arch, objs: Vec<PathBuf>) -> Result<Linked, Error> {
        let start = Instant::now();
        let mut h = Xxh3::new();
        h.update(b"offload-build link 1\0");
        h.update(&self.tc.identity.to_le_bytes());
        h.update(arch.as_str().as_bytes());
        for o in &objs {
            self.hasher.forget(o);
            let content = self
                .hasher
                .file(o)
                .ok_or_else(|| Error::io("reading", o, std::io::ErrorKind::NotFound.into()))?;
            h.update(&content.to_le_bytes());
        }
        let co = self.cache_dir.join(format!(
            "linked-{}-{:016x}.co",
            arch.file_tag(),
            h.digest128() as u64
        ));
        // What the link printed is kept beside it, to replay on a cache hit.
        let printed = co.with_extension("co.stderr");
        if co.is_file() {
            let stderr = std::fs::read_to_string(&printed)
                .map(|t| t.lines().map(str::to_string).collect())
                .unwrap_or_default();
            return Ok(Linked {
                arch,
                co,
                ran: false,
                seconds: 0.0,
                stderr,
            });
        }
        // A name of its own: compiles that share the cache link the same object at once, and
        // the first rename must not take another's half-written file (removed if the link
        // fails).
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".linked-{}-", arch.file_tag()))
            .suffix(".co.tmp")
            .tempfile_in(self.cache_dir)
            .map_err(|e| Error::io("creating a temporary file in", self.cache_dir, e))?
            .into_temp_path();
        let mut argv: Vec<OsString> = vec![
            self.tc.clang.clone().into_os_string(),
            OsString::from("--target=amdgcn-amd-amdhsa"),
            OsString::from(format!("-mcpu={arch}")),
            OsString::from("-nogpulib"),
            // clang 15 needs -nogpulib here, later clangs call it unused: the link step has
            // no flags of the user's, so nothing else is silenced.
            OsString::from("-Wno-unused-command-line-argument"),
        ];
        argv.extend(objs.iter().map(|o| o.clone().into_os_string()));
        argv.extend([OsString::from("-o"), tmp.as_os_str().to_os_string()]);
        let stderr = self.exec(&argv, &arch, None, None)?;
        let data = std::fs::read(&tmp).map_err(|e| Error::io("reading", &tmp, e))?;
        check_device_code(ImageKind::Object, false, &data).map_err(|(expected, found)| {
            Error::BadDeviceCode {
                arch: arch.to_string(),
                source: None,
                path: co.clone(),
                expected,
                found,
            }
        })?;
        if stderr.is_empty() {
            let _ = std::fs::remove_file(&printed);
        } else {
            cache::write_atomic(&printed, (stderr.join("\n") + "\n").as_bytes())?;
        }
        tmp.persist(&co)
            .map_err(|e| Error::io("renaming", e.path.to_path_buf(), e.error))?;
        Ok(Linked {
            arch,
            co,
            ran: true,
            seconds: start.elapsed().as_secs_f64(),
            stderr,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_code_is_checked_by_kind() {
        let elf = |machine: u16| {
            let mut v = vec![0u8; 64];
            v[..4].copy_from_slice(b"\x7fELF");
            v[4] = 2;
            v[5] = 1;
            v[18..20].copy_from_slice(&machine.to_le_bytes());
            v
        };
        assert!(check_device_code(ImageKind::Object, false, &elf(224)).is_ok());
        assert!(check_device_code(ImageKind::Cubin, true, &elf(190)).is_ok());
        let (expected, found) = check_device_code(ImageKind::Object, false, &elf(62)).unwrap_err();
        assert!(expected.contains("AMDGPU") && found == "an ELF file for machine 62");
        assert!(check_device_code(ImageKind::Cubin, true, &elf(224)).is_err());
        let ptx = b"//\n.version 7.8\n.target sm_80\n.address_size 64\n";
        assert!(check_device_code(ImageKind::Ptx, true, ptx).is_ok());
        let (_, found) = check_device_code(ImageKind::Ptx, true, b"").unwrap_err();
        assert_eq!(found, "an empty file");
        assert!(check_device_code(ImageKind::Ptx, true, &elf(190)).is_err());
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
}
