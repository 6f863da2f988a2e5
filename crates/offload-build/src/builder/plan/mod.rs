//! The plan: everything a build decides before any compile runs.
//!
//! A build runs in four stages: **plan** (this module, with [`crate::builder::toolchain::clang`]) → **jobs**
//! ([`crate::builder::run`]: runs the planned compiles and device links, with the cache) → **pack**
//! ([`crate::builder::pack`]: the container bytes) → **emit** ([`crate::builder::emit`]: the files in the output
//! directory and the Cargo directives). [`Plan::new`] is the one place that reads the
//! [`Build`]'s settings and the environment and turns them into decisions: the toolchain, the
//! language, the architectures (globally and per source), the sources, the container and
//! embedding, the output names, and every job's complete command
//! ([`Command`]): [`compile_options`] decides the compiler's
//! arguments (optimization, debug information, flags, the depfile request, `-cuid`, the PTX
//! ISA) and [`crate::builder::toolchain::clang`] spells them out, per (source, architecture) and per device link.
//! The later stages read only the [`Plan`]. [`Build::try_compile`],
//! [`Build::try_resolve_archs`], [`Build::try_get_compiler`] and the `offload-build compile`
//! command (through those) all plan with [`Plan::new`], so they agree on every decision.
//!
//! To add a builder option: 1) a field and a setter in [`Build`], 2) the decision in [`Plan`]
//! (read from the `Build` in [`Plan::new`], or in [`compile_options`] for the compiler's
//! arguments; the later stages see only the plan), 3) the CLI flag and its mapping in one place
//! (`builder` in `crates/offload-cli/src/helper.rs`), 4) the CMake argument
//! (`_offload_add_fatbin_command` in `build-support/cmake/OffloadBuild.cmake`).

pub(crate) mod commands;
pub(crate) mod launcher;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use offload_formats::bundle::compressed::CompressOptions;
use offload_formats::package::ImageKind;

use crate::builder::Build;
use crate::builder::CompilerKind;
use crate::builder::Container;
use crate::builder::Embed;
use crate::builder::Language;
use crate::builder::arch::{self, Arch};
use crate::builder::env::{Directives, Env};
use crate::builder::error::Error;
use crate::builder::job::{CompileJob, CompileOptions, LauncherKind, LinkJob};
use crate::builder::job_slots;
use crate::builder::pch::{self, PchJob};
use crate::builder::toolchain::clang;
use crate::builder::toolchain::nvcc;
use crate::builder::toolchain::{self, Toolchain};

/// What the plan is for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Purpose<'a> {
    /// A full build of the library `name` ([`Build::try_compile`]).
    Compile(&'a str),
    /// Only the toolchain and the global architectures ([`Build::try_resolve_archs`]): no
    /// output directory is needed, sources need not exist, nothing is checked that only a
    /// build needs.
    Resolve,
}

/// Where the outputs go (compile plans only).
#[derive(Clone, Debug)]
pub(crate) struct Outputs {
    /// The library name (`lib<name>.a`, `<name>.rs`).
    pub name: String,
    /// The output directory (created).
    pub out_dir: PathBuf,
    /// The container file: `<name>.hipfb` or `<name>.offloadbin`.
    pub fatbin: PathBuf,
    /// The generated `<name>.rs`.
    pub generated: PathBuf,
}

/// The settings shared by every compile job (only when there are sources).
#[derive(Clone, Debug)]
pub(crate) struct JobSettings {
    /// At most this many jobs at once (besides the jobserver).
    pub max_jobs: usize,
    /// The jobserver the jobs take tokens from; `None`: one job at a time.
    pub client: Option<jobserver::Client>,
    /// Whether the compiler's warnings are shown ([`Build::warnings`]).
    pub forward_warnings: bool,
    /// Called as each compile finishes ([`Build::on_progress`]).
    pub progress: Option<crate::builder::ProgressHook>,
    /// How long one compile (each process of a job) may run ([`Build::timeout`],
    /// `OFFLOAD_BUILD_COMPILE_TIMEOUT`); `None`: no limit.
    pub timeout: Option<std::time::Duration>,
    /// The compile jobs, one per (source, architecture), in that order.
    pub compile_jobs: Vec<CompileJob>,
    /// The device links, one per architecture compiled from several sources (`-fgpu-rdc`).
    pub links: Vec<LinkJob>,
    /// The precompiled preambles the compile jobs may use ([`CompileJob::pch`]), one per
    /// key; the jobs stage decides which are made ([`crate::builder::pch`]).
    pub pch_jobs: Vec<PchJob>,
    /// Whether a PCH that would not pay in this build is made after it, in the background
    /// ([`Build::pch_background`]).
    pub pch_background: bool,
}

/// A code object built elsewhere ([`Build::image`]).
#[derive(Clone, Debug)]
pub(crate) struct PlannedImage {
    /// Its architecture.
    pub arch: Arch,
    /// The path as given (for `rerun-if-changed`).
    pub given: PathBuf,
    /// The path to read (absolute).
    pub path: PathBuf,
    /// What it holds.
    pub kind: ImageKind,
}

/// Everything decided before any compile (see the [module docs](self)).
#[derive(Debug)]
pub(crate) struct Plan {
    /// Output names and directory; `None` for [`Purpose::Resolve`].
    pub outputs: Option<Outputs>,
    /// The directory relative paths are taken from (`CARGO_MANIFEST_DIR`, else the current
    /// directory).
    pub cwd: PathBuf,
    /// Where compiled objects and cache records are kept.
    pub cache_dir: PathBuf,
    /// The source language.
    pub lang: Language,
    /// The container.
    pub container: Container,
    /// Bundle compression, if any.
    pub compress: Option<CompressOptions>,
    /// Whether the compressed-bundle format version follows the compiler's LLVM version.
    pub compress_auto_version: bool,
    /// How the container reaches the program.
    pub embed: Embed,
    /// The compiler and the installs around it; `None` when nothing is compiled.
    pub toolchain: Option<Toolchain>,
    /// The global architecture list (before [`Build::file_archs`] overrides).
    pub archs: Vec<Arch>,
    /// Where [`Plan::archs`] came from (`Build::archs`, `OFFLOAD_ARCH`, `native`, …; or
    /// `Build::image` when nothing is compiled).
    pub arch_origin: String,
    /// Each source (absolute) with the architectures it is compiled for.
    pub compiles: Vec<(PathBuf, Vec<Arch>)>,
    /// The shared job settings; `None` when there is nothing to compile.
    pub jobs: Option<JobSettings>,
    /// Code objects built elsewhere.
    pub images: Vec<PlannedImage>,
    /// The directory of the HIP runtime library (`libamdhip64.so`) to link: an
    /// [`Embed::HipObject`] build with a ROCm install in use, unless
    /// [`Build::link_hip_runtime`] turned it off.
    pub hip_runtime_dir: Option<PathBuf>,
}

impl Plan {
    /// Reads `build` and the environment and decides everything (see the [module
    /// docs](self)). Reports directives (`rerun-if-changed`, warnings) through `env`.
    pub(crate) fn new(build: &Build, env: &Env<'_>, purpose: Purpose<'_>) -> Result<Plan, Error> {
        let compile = matches!(purpose, Purpose::Compile(_));
        if let Purpose::Compile(name) = purpose {
            check_name(name)?;
        }
        let out_dir = match &build.out_dir {
            Some(d) => Some(d.clone()),
            None => env.get_os("OUT_DIR").map(PathBuf::from),
        };
        if compile {
            let dir = out_dir.as_ref().ok_or_else(|| {
                Error::Config("OUT_DIR is not set: run from build.rs or call Build::out_dir".into())
            })?;
            std::fs::create_dir_all(dir).map_err(|e| Error::io("creating", dir, e))?;
        }
        let cwd = cwd(env);
        let cache_dir = env
            .get_os("OFFLOAD_BUILD_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| out_dir.as_ref().map(|d| d.join("offload-build-cache")))
            .unwrap_or_else(|| std::env::temp_dir().join("offload-build-cache"));
        let d = env.directives();

        // Sources.
        let sources = sources(build, &cwd, d)?;
        if compile {
            check_sources(build, &cwd, &sources, d)?;
        }

        // Language, container, embedding, output names.
        let lang = language(build.language, &sources);
        let container = default_container(build, lang);
        if compile {
            check_container(build, lang, container)?;
        }
        let outputs = match (purpose, out_dir) {
            (Purpose::Compile(name), Some(out_dir)) => Some(outputs(name, out_dir, container)),
            _ => None,
        };

        let mut plan = Plan {
            outputs,
            cwd,
            cache_dir,
            lang,
            container,
            compress: build.compress,
            compress_auto_version: build.compress_auto_version,
            embed: build.embed,
            toolchain: None,
            archs: Vec::new(),
            arch_origin: String::from("Build::image"),
            compiles: Vec::new(),
            jobs: None,
            images: Vec::new(),
            hip_runtime_dir: None,
        };

        // Toolchain and architectures (only when there is something to compile, or to
        // resolve).
        if !compile || !sources.is_empty() {
            plan.resolve(build, env, compile, &sources)?;
        }

        if compile {
            plan.images = images(build, &plan)?;
        }
        Ok(plan)
    }

    /// The toolchain, the architectures and (for a compile) the jobs.
    fn resolve(
        &mut self,
        build: &Build,
        env: &Env<'_>,
        compile: bool,
        sources: &[PathBuf],
    ) -> Result<(), Error> {
        let lang = self.lang;
        std::fs::create_dir_all(&self.cache_dir)
            .map_err(|e| Error::io("creating", &self.cache_dir, e))?;
        let wanted = toolchain::Wanted {
            compiler: build.compiler.as_deref(),
            cuda_compiler: build.cuda_compiler,
            ptxas: build.ptxas.as_deref(),
        };
        let tc = toolchain::discover(env, lang, wanted, &self.cache_dir, &self.cwd)?;
        let crate_var = env
            .get("CARGO_PKG_NAME")
            .map(|n| format!("{}_OFFLOAD_ARCH", n.to_ascii_uppercase().replace('-', "_")));
        let (global, origin) = resolve_archs(build, env, lang, &tc, crate_var.as_deref())?;
        if compile {
            self.compiles =
                per_source_archs(build, env, lang, &tc, &self.cwd, sources, &global, &origin)?;
            self.jobs = Some(job_settings(build, env, &tc, lang, self)?);
            if lang == Language::Cuda {
                check_ptxas(&self.compiles, &tc, env.directives())?;
                crate::builder::toolchain::cuda::warn(&tc.cuda_use(), env.directives());
            }
        } else {
            check_all_supported(&global, &tc, lang, &origin)?;
        }
        // HipObject's constructor calls the HIP runtime; a FatbinOnly HIP build's program
        // loads `fatbin()` with it (`hipModuleLoadData`).
        if build.link_hip_runtime
            && lang == Language::Hip
            && matches!(self.embed, Embed::HipObject | Embed::FatbinOnly)
        {
            self.hip_runtime_dir = tc.rocm.as_ref().and_then(|r| r.hip_lib_dir.clone());
        }
        self.archs = global;
        self.arch_origin = origin;
        self.toolchain = Some(tc);
        Ok(())
    }

    /// The outputs of a compile plan.
    pub(crate) fn outputs(&self) -> &Outputs {
        self.outputs
            .as_ref()
            .expect("only compile plans reach the emit stage, and they have outputs")
    }
}

/// A compile has something to build, and every source exists (each watched for changes).
fn check_sources(
    build: &Build,
    cwd: &Path,
    sources: &[PathBuf],
    d: &Directives,
) -> Result<(), Error> {
    if sources.is_empty() && build.images.is_empty() {
        return Err(Error::Config(
            "nothing to build: add sources with Build::file/files/glob or images with Build::image"
                .into(),
        ));
    }
    for s in sources {
        if !absolute(cwd, s).is_file() {
            return Err(Error::io(
                "reading source",
                s,
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            ));
        }
        d.push_path("rerun-if-changed", s)?;
    }
    Ok(())
}

/// Why a compressed bundle cannot be written.
const NEEDS_COMPRESSION: &str = "compressed bundles need the `compression` feature of offload-build \
     (offload-build = { version = \"0.1\", features = [\"compression\"] })";

/// The container and compression settings a compile can use with `lang`.
fn check_container(build: &Build, lang: Language, container: Container) -> Result<(), Error> {
    if lang == Language::Cuda && container == Container::Bundle {
        return Err(Error::Config(
            "CUDA device code is packed as offload binaries or an NVIDIA fat binary: \
             use Container::OffloadBinary or Container::CudaFatbin"
                .into(),
        ));
    }
    if container == Container::CudaFatbin {
        if lang != Language::Cuda {
            return Err(Error::Config(
                "Container::CudaFatbin holds CUDA device code (cubins, PTX): \
                 compile CUDA sources (Language::Cuda)"
                    .into(),
            ));
        }
        if build.embed != Embed::FatbinOnly {
            return Err(Error::Config(
                "Container::CudaFatbin is loaded at run time (cuModuleLoadData): \
                 use Embed::FatbinOnly"
                    .into(),
            ));
        }
    }
    if build.compress.is_some() && container != Container::Bundle {
        return Err(Error::Config(
            "compression applies to bundles (Container::Bundle) only".into(),
        ));
    }
    if build.compress.is_some() && !offload_formats::bundle::compressed::SUPPORTED {
        return Err(Error::Config(NEEDS_COMPRESSION.into()));
    }
    Ok(())
}

/// The container as a plan decides it, without checking anything or reporting directives
/// (for [`Build::object_embed`]).
pub(crate) fn container(build: &Build, env: &Env<'_>) -> Container {
    let cwd = cwd(env);
    let sources = sources(build, &cwd, env.directives()).unwrap_or_else(|_| build.files.clone());
    default_container(build, language(build.language, &sources))
}

/// The directory relative paths are taken from: `CARGO_MANIFEST_DIR`, else the current one.
fn cwd(env: &Env<'_>) -> PathBuf {
    env.get_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The container set, else the language's: a bundle for HIP, offload binaries for CUDA.
fn default_container(build: &Build, lang: Language) -> Container {
    build.container.unwrap_or(match lang {
        Language::Hip => Container::Bundle,
        Language::Cuda => Container::OffloadBinary,
    })
}

/// The language: the one set, else CUDA when every source ends in `.cu`, HIP otherwise.
pub(crate) fn language(set: Option<Language>, sources: &[PathBuf]) -> Language {
    set.unwrap_or_else(|| {
        if !sources.is_empty()
            && sources
                .iter()
                .all(|s| s.extension().is_some_and(|e| e == "cu"))
        {
            Language::Cuda
        } else {
            Language::Hip
        }
    })
}

fn check_name(name: &str) -> Result<(), Error> {
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(Error::Config(format!(
            "library name `{name}` must be non-empty ASCII letters, digits, `_` or `-`"
        )));
    }
    Ok(())
}

fn outputs(name: &str, out_dir: PathBuf, container: Container) -> Outputs {
    let ext = match container {
        Container::Bundle => "hipfb",
        Container::OffloadBinary => "offloadbin",
        Container::CudaFatbin => "fatbin",
    };
    Outputs {
        name: name.to_string(),
        fatbin: out_dir.join(format!("{name}.{ext}")),
        generated: out_dir.join(format!("{name}.rs")),
        out_dir,
    }
}

/// `p` relative to `cwd` when it is relative.
pub(crate) fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

/// The files and the expanded globs, as given (relative paths stay relative to `cwd`), without
/// duplicates (first occurrence kept).
fn sources(build: &Build, cwd: &Path, d: &Directives) -> Result<Vec<PathBuf>, Error> {
    let mut sources: Vec<PathBuf> = build.files.clone();
    for pattern in &build.globs {
        let full = if Path::new(pattern).is_absolute() {
            pattern.clone()
        } else {
            format!("{}/{pattern}", cwd.display())
        };
        let paths = glob::glob(&full)
            .map_err(|e| Error::Config(format!("bad glob pattern `{pattern}`: {e}")))?;
        let mut found: Vec<PathBuf> = paths.filter_map(Result::ok).collect();
        found.sort();
        if found.is_empty() {
            d.warn(&format!("offload-build: glob `{pattern}` matches no file"));
        }
        sources.extend(found);
        let literal: PathBuf = Path::new(&full)
            .components()
            .take_while(|c| !c.as_os_str().to_string_lossy().contains(['*', '?', '[']))
            .collect();
        d.push_path("rerun-if-changed", &literal)?;
    }
    let mut seen = BTreeSet::new();
    sources.retain(|s| seen.insert(absolute(cwd, s)));
    Ok(sources)
}

/// Each source with its architectures: a matching [`Build::file_archs`] override, else the
/// global list; every one checked against the compiler.
#[allow(clippy::too_many_arguments)]
fn per_source_archs(
    build: &Build,
    env: &Env<'_>,
    lang: Language,
    tc: &Toolchain,
    cwd: &Path,
    sources: &[PathBuf],
    global: &[Arch],
    origin: &str,
) -> Result<Vec<(PathBuf, Vec<Arch>)>, Error> {
    let mut out = Vec::new();
    for s in sources {
        // A pattern names the source relative to the working directory or absolutely (CMake
        // passes absolute paths and runs in the top source directory).
        let abs = absolute(cwd, s);
        let rel = abs.strip_prefix(cwd).unwrap_or(&abs).to_path_buf();
        let over = build.file_archs.iter().find(|(pat, _)| {
            [&rel, &abs].iter().any(|name| {
                Path::new(pat) == name.as_path()
                    || glob::Pattern::new(pat).is_ok_and(|p| p.matches_path(name))
            })
        });
        let archs = match over {
            Some((pat, list)) => {
                let origin = format!("Build::file_archs(\"{pat}\")");
                let (a, _) = expand(env, lang, tc, list, &origin)?;
                a
            }
            None => global.to_vec(),
        };
        check_all_supported(&archs, tc, lang, origin)?;
        out.push((abs, archs));
    }
    Ok(out)
}

/// Launcher, parallelism and compiler arguments shared by the jobs, and the jobs.
fn job_settings(
    build: &Build,
    env: &Env<'_>,
    tc: &Toolchain,
    lang: Language,
    plan: &Plan,
) -> Result<JobSettings, Error> {
    // Read in this order, as the `rerun-if-env-changed` lines have always come.
    let launcher = launcher::launcher(env);
    let timeout = match build.timeout {
        Some(t) => Some(t),
        None => compile_timeout(env)?,
    }
    .filter(|t| !t.is_zero());
    let max_jobs = max_jobs(env);
    let client = build
        .jobserver
        .clone()
        .or_else(job_slots::inherited)
        .or_else(|| {
            let n = env
                .get("NUM_JOBS")
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
            job_slots::local(n)
        });
    let first = plan.compiles.iter().find_map(|(_, a)| a.first());
    let mut compile = compile_options(build, env, tc, lang, &plan.cwd, first, &plan.cache_dir);
    (compile.launcher, compile.launcher_kind) = launcher;
    // A compiler cache in front of the compiles shares them between out-dirs, checkouts and
    // machines; a compile with a PCH is one it cannot cache (sccache refuses its `-Xclang`
    // pairs, ccache `-preamble-bytes`), so under one offload-build makes no preambles.
    let cached_by_launcher = compile.launcher_kind.is_cache();
    let pch = build.pch && pch_enabled(env) && !cached_by_launcher && !tc.is_nvcc();
    let (mut compile_jobs, links) = jobs_of(&plan.compiles, &compile, tc, &plan.cache_dir);
    let pch_jobs = if pch {
        pch_jobs_of(&mut compile_jobs, &compile, tc, &plan.cache_dir)
    } else {
        Vec::new()
    };
    Ok(JobSettings {
        max_jobs,
        client,
        forward_warnings: build.warnings,
        progress: build.progress.clone(),
        timeout,
        compile_jobs,
        links,
        pch_jobs,
        pch_background: pch
            && build
                .pch_background
                .unwrap_or_else(|| background_default(env)),
    })
}

/// Whether a switch's value turns it off: `0`, `false`, `off` or `no`.
fn switched_off(v: &str) -> bool {
    ["0", "false", "off", "no"].contains(&v.trim().to_ascii_lowercase().as_str())
}

/// `OFFLOAD_BUILD_PCH`: on unless `0`, `false`, `off` or `no`.
fn pch_enabled(env: &Env<'_>) -> bool {
    env.get("OFFLOAD_BUILD_PCH")
        .is_none_or(|v| !switched_off(&v))
}

/// `OFFLOAD_BUILD_PCH_BACKGROUND`: on unless `0`, `false`, `off` or `no`; when unset, on
/// unless `CI` is set (to anything but `0` or `false`): a one-off build never edits.
fn background_default(env: &Env<'_>) -> bool {
    match env.get("OFFLOAD_BUILD_PCH_BACKGROUND") {
        Some(v) => !switched_off(&v),
        None => env.get("CI").is_none_or(|v| switched_off(&v)),
    }
}

/// The precompiled preamble of each compile job that has one ([`pch::pch_job`], with
/// the job's own `-fgpu-rdc`; a prefix shared with other sources where that pays,
/// [`pch::prefer_shared`]), one per key: sources with the same preamble share it. A
/// source that cannot be read gets none (its compile says why).
fn pch_jobs_of(
    jobs: &mut [CompileJob],
    o: &CompileOptions,
    tc: &Toolchain,
    cache_dir: &Path,
) -> Vec<PchJob> {
    let mut texts: BTreeMap<PathBuf, Option<Vec<u8>>> = BTreeMap::new();
    for job in jobs.iter() {
        texts
            .entry(job.source.clone())
            .or_insert_with(|| std::fs::read(&job.source).ok());
    }
    let whole: Vec<Option<PchJob>> = jobs
        .iter()
        .map(|job| {
            let text = texts.get(&job.source)?.as_ref()?;
            pch::pch_job(o, tc, cache_dir, &job.source, text, &job.arch, job.rdc)
        })
        .collect();
    let jobs_sources: Vec<PathBuf> = jobs.iter().map(|j| j.source.clone()).collect();
    let mut pchs: Vec<PchJob> = Vec::new();
    let mut by_key: BTreeMap<u128, usize> = BTreeMap::new();
    for (k, (job, full)) in jobs.iter_mut().zip(&whole).enumerate() {
        let (Some(full), Some(Some(text))) = (full, texts.get(&job.source)) else {
            continue;
        };
        let siblings: Vec<(&Path, &[u8])> = whole
            .iter()
            .zip(jobs_sources.iter())
            .enumerate()
            .filter_map(|(i, (w, s))| {
                let w = w.as_ref().filter(|w| i != k && w.family == full.family)?;
                Some((s.as_path(), w.preamble.as_slice()))
            })
            .collect();
        let (p, skip) = pch::prefer_shared(
            full.clone(),
            o,
            tc,
            cache_dir,
            &job.source,
            text,
            job.rdc,
            &siblings,
        );
        let next = pchs.len();
        let i = *by_key.entry(p.key).or_insert(next);
        if i == next {
            pchs.push(p);
        }
        job.pch = Some(i);
        job.pch_skip = skip;
    }
    pchs
}

/// `OFFLOAD_BUILD_MAX_JOBS`, else no limit.
fn max_jobs(env: &Env<'_>) -> usize {
    let Some(v) = env.get("OFFLOAD_BUILD_MAX_JOBS") else {
        return usize::MAX;
    };
    match v.parse::<usize>() {
        Ok(n) if n > 0 => n,
        _ => {
            env.directives().warn(&format!(
                "offload-build: OFFLOAD_BUILD_MAX_JOBS=`{v}` is not a positive number; ignored"
            ));
            usize::MAX
        }
    }
}

/// Every decision about the device compiles' commands: flags, optimization, debug
/// information, the depfile request, `-cuid`, the PTX ISA.
pub(crate) fn compile_options(
    build: &Build,
    env: &Env<'_>,
    tc: &Toolchain,
    lang: Language,
    cwd: &Path,
    arch: Option<&Arch>,
    cache_dir: &Path,
) -> CompileOptions {
    let nvcc = tc.is_nvcc();
    let flags = user_flags(build, env, tc, lang, arch, cache_dir);
    // Device code is optimized whatever Cargo's profile (OPT_LEVEL is not read, as nvcc and
    // hipcc do not).
    let level = build.opt_level.as_deref().unwrap_or("3");
    let any_flag = |f: &dyn Fn(&str) -> bool| flags.iter().any(|a| f(&a.to_string_lossy()));
    // clang derives the HIP compilation unit ID (the `__hip_cuid_*` symbol) from the whole
    // command line, output path included: one from the job key instead keeps the device code
    // the same whatever the output's (private, temporary) name and cache directory.
    let cuid_from_key = lang == Language::Hip
        && !any_flag(&|f| f.starts_with("-cuid=") || f.starts_with("-fuse-cuid="));
    // Without a CUDA install clang 22 defaults to PTX ISA 4.2, which no current processor
    // accepts: the oldest ISA each architecture needs, unless a flag chooses one.
    let min_ptx_isa =
        lang == Language::Cuda && !nvcc && tc.cuda.is_none() && !any_flag(&|f| f.contains("+ptx"));
    let host_compiler = if nvcc {
        nvcc::ccbin_args(env, &flags)
    } else {
        Vec::new()
    };
    CompileOptions {
        lang,
        // Set by the caller, which reads the launcher's variables in the order of Cargo's
        // `rerun-if-env-changed` lines ([`launcher::launcher`]).
        launcher: Vec::new(),
        launcher_kind: LauncherKind::None,
        includes: build.includes.iter().map(|i| absolute(cwd, i)).collect(),
        defines: build.defines.clone(),
        flags,
        env: compile_env(build, tc, lang),
        opt_flag: format!("-O{level}"),
        // ptxas knows -O0 to -O3 only.
        ptxas_opt_flag: format!(
            "-O{}",
            if ["0", "1", "2", "3"].contains(&level) {
                level
            } else {
                "3"
            }
        ),
        debug: build.debug,
        // clang 22 ignores `-MD -MF` in device-only compiles (and says so, as a warning that
        // -Werror would make an error): it gets no depfile flags, and the dependencies come
        // from a host-side preprocessing. Older (and unknown) versions write it.
        depfile_in_compile: nvcc || tc.major < 22,
        cuid_from_key,
        min_ptx_isa,
        host_compiler,
        root: cwd.to_path_buf(),
    }
}

/// The environment of every device compile: [`Build::env`], and for HIP with a ROCm install
/// `HIP_DEVICE_LIB_PATH` naming the `--rocm-device-lib-path` directory (unless `Build::env`
/// sets it). clang reads the variable only without that flag, so the device code is the same;
/// sccache reads only the variable (its reading of `--hip-device-lib-path=` and `--rocm-path=`
/// yields an empty path, `extract_rocm_arg` in its `src/compiler/c.rs`, 0.16), and so hashes
/// the device libraries and, with sccache-dist, sends them to the build server, where the
/// compile would otherwise fail with "cannot find ROCm device library".
fn compile_env(build: &Build, tc: &Toolchain, lang: Language) -> Vec<(OsString, Option<OsString>)> {
    let mut env: Vec<(OsString, Option<OsString>)> = build
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let var = OsString::from("HIP_DEVICE_LIB_PATH");
    let set = env.iter().any(|(k, _)| *k == var);
    if let (Language::Hip, Some(r), false) = (lang, &tc.rocm, set) {
        env.push((var, Some(r.device_libs.clone().into_os_string())));
    }
    env
}

/// The flags of every device compile: the warning switches, the builder's flags, those of
/// `flag_if_supported` the compiler accepts, then `HIPFLAGS`/`CUDAFLAGS`.
fn user_flags(
    build: &Build,
    env: &Env<'_>,
    tc: &Toolchain,
    lang: Language,
    arch: Option<&Arch>,
    cache_dir: &Path,
) -> Vec<OsString> {
    let extra_flags: Vec<OsString> = env
        .get(match lang {
            Language::Hip => "HIPFLAGS",
            Language::Cuda => "CUDAFLAGS",
        })
        .map(|v| v.split_whitespace().map(OsString::from).collect())
        .unwrap_or_default();
    // The warning switches come first, so that the builder's flags and HIPFLAGS can refine
    // them (`-Wno-error=...`).
    let mut flags: Vec<OsString> = Vec::new();
    if !build.warnings {
        flags.push("-w".into());
    }
    let nvcc = tc.is_nvcc();
    if build.warnings_into_errors {
        // nvcc's -Werror takes the kinds of warnings to make errors.
        flags.extend(if nvcc {
            vec!["-Werror".into(), "all-warnings".into()]
        } else {
            vec![OsString::from("-Werror")]
        });
    }
    flags.extend(build.flags.iter().cloned());
    for f in &build.flags_if_supported {
        if toolchain::flag_supported(env, tc, lang, arch, f, cache_dir) {
            flags.push(f.clone());
        }
    }
    flags.extend(extra_flags);
    flags
}

impl Plan {
    /// The toolchain and the first architecture of a resolve plan: what one device command
    /// is spelled for ([`Build::try_get_compiler`], [`Build::try_get_preamble`]).
    pub(crate) fn first_compile(&self) -> Result<(&Toolchain, &Arch), Error> {
        let tc = self
            .toolchain
            .as_ref()
            .expect("a resolve plan always discovers the toolchain");
        let arch = self.archs.first().ok_or_else(|| {
            Error::Config("no architecture to compile for: set one with Build::arch".into())
        })?;
        Ok((tc, arch))
    }
}

/// The compile jobs in (source, architecture) order, and the device links: HIP code of an
/// architecture compiled from several sources is relocatable (`-fgpu-rdc`) and linked once.
fn jobs_of(
    compiles: &[(PathBuf, Vec<Arch>)],
    o: &CompileOptions,
    tc: &Toolchain,
    cache_dir: &Path,
) -> (Vec<CompileJob>, Vec<LinkJob>) {
    let mut sources_per_arch: BTreeMap<&Arch, usize> = BTreeMap::new();
    for (_, archs) in compiles {
        for a in archs {
            *sources_per_arch.entry(a).or_default() += 1;
        }
    }
    let mut jobs = Vec::new();
    let mut to_link: BTreeMap<Arch, Vec<PathBuf>> = BTreeMap::new();
    for (src, archs) in compiles {
        for a in archs {
            let rdc = o.lang == Language::Hip && sources_per_arch[a] > 1;
            let job = match tc.kind {
                CompilerKind::Nvcc => nvcc::compile_job(o, tc, cache_dir, src, a),
                _ => clang::compile_job(o, tc, cache_dir, src, a, rdc),
            };
            if rdc {
                to_link
                    .entry(a.clone())
                    .or_default()
                    .push(job.outputs[0].1.clone());
            }
            jobs.push(job);
        }
    }
    let links = to_link
        .into_iter()
        .map(|(a, objs)| clang::device_link(o, tc, cache_dir, &a, objs))
        .collect();
    (jobs, links)
}

/// The images with their architectures and kinds. A bundle holds one code object per
/// architecture: an image for an architecture that sources are compiled for, or two images
/// for one architecture, are an error.
fn images(build: &Build, plan: &Plan) -> Result<Vec<PlannedImage>, Error> {
    let mut taken: BTreeSet<Arch> = plan
        .compiles
        .iter()
        .flat_map(|(_, archs)| archs.iter().cloned())
        .collect();
    let mut out = Vec::new();
    for (arch, given) in &build.images {
        let origin = format!("Build::image(\"{arch}\", …)");
        let a = Arch::new(arch).map_err(|reason| Error::InvalidArch {
            arch: arch.clone(),
            origin: origin.clone(),
            reason,
        })?;
        let path = absolute(&plan.cwd, given);
        let kind = match path.extension().and_then(OsStr::to_str) {
            Some("ptx") | Some("s") if a.is_nvidia() => ImageKind::Ptx,
            Some("cubin") => ImageKind::Cubin,
            _ => ImageKind::Object,
        };
        if plan.container == Container::Bundle && !taken.insert(a.clone()) {
            return Err(Error::Config(format!(
                "architecture {a} has both compiled sources and an image (or two images); \
                 a bundle holds one code object per architecture"
            )));
        }
        out.push(PlannedImage {
            arch: a,
            given: given.clone(),
            path,
            kind,
        });
    }
    Ok(out)
}

/// Expands one list (from `origin`) into architectures, resolving `native` and `default`.
fn expand(
    env: &Env<'_>,
    lang: Language,
    tc: &Toolchain,
    list: &str,
    origin: &str,
) -> Result<(Vec<Arch>, bool), Error> {
    let items = arch::parse_list(list).map_err(|(arch, reason)| Error::InvalidArch {
        arch,
        origin: origin.to_string(),
        reason,
    })?;
    let mut out: Vec<Arch> = Vec::new();
    for item in items {
        match item {
            arch::Item::Arch(a) => out.push(a),
            arch::Item::Default => out.extend(arch::default_set(lang, &tc.buildable())),
            arch::Item::AllMajor if lang == Language::Cuda => {
                out.extend(arch::all_major(&tc.supported))
            }
            arch::Item::AllMajor => {
                return Err(Error::InvalidArch {
                    arch: "all-major".into(),
                    origin: origin.to_string(),
                    reason: arch::ArchError::Unrecognized,
                });
            }
            arch::Item::Native => {
                let (found, how) = arch::probe_native(env.processes(), lang, &tc.tool_dirs);
                if found.is_empty() {
                    let def = arch::default_set(lang, &tc.buildable());
                    env.directives().warn(&format!(
                        "offload-build: `native` (from {origin}) found no GPU on this machine; \
                         using the default set: {}",
                        join(&def)
                    ));
                    out.extend(def);
                } else {
                    env.directives().warn(&format!(
                        "offload-build: `native` (from {origin}) is {} (found with {how})",
                        join(&found)
                    ));
                    out.extend(found);
                }
            }
        }
    }
    let mut seen = BTreeSet::new();
    out.retain(|a| seen.insert(a.clone()));
    let nonempty = !out.is_empty();
    Ok((out, nonempty))
}

/// The lists that name architectures, in the order they are tried, each with its origin:
/// `<CRATE>_OFFLOAD_ARCH` and `OFFLOAD_ARCH` (whoever builds), the builder's list (the
/// crate's default), then the conventional variables. An exact builder list
/// ([`Build::archs_exact`]) comes first, and a set override is reported as ignored. Every
/// variable of the order is read, so each is registered with `rerun-if-env-changed`.
fn arch_lists(
    build: &Build,
    env: &Env<'_>,
    lang: Language,
    crate_var: Option<&str>,
) -> Vec<(String, String)> {
    let overrides: Vec<&str> = crate_var.into_iter().chain(["OFFLOAD_ARCH"]).collect();
    let conventional: &[&str] = match lang {
        Language::Hip => &[
            "AMDGPU_TARGETS",
            "GPU_TARGETS",
            "PYTORCH_ROCM_ARCH",
            "HIP_ARCHITECTURES",
        ],
        Language::Cuda => &["CUDAARCHS", "CUDA_COMPUTE_CAP"],
    };
    let read = |vars: &[&str]| -> Vec<(String, String)> {
        vars.iter()
            .filter_map(|&v| env.get(v).map(|value| (v.to_string(), value)))
            .collect()
    };
    let overrides = read(&overrides);
    let conventional = read(conventional);
    let builder =
        (!build.archs.is_empty()).then(|| (String::from("Build::archs"), build.archs.join(";")));
    let mut lists = Vec::new();
    if build.archs_exact && builder.is_some() {
        for (var, value) in &overrides {
            env.directives().warn(&format!(
                "offload-build: {var}={value} is ignored: the architectures {} are exact \
                 (Build::archs_exact, `offload-build compile --archs`)",
                build.archs.join(";")
            ));
        }
        lists.extend(builder);
    } else {
        lists.extend(overrides);
        lists.extend(builder);
    }
    lists.extend(conventional);
    lists
}

/// The global architecture list and where it came from.
fn resolve_archs(
    build: &Build,
    env: &Env<'_>,
    lang: Language,
    tc: &Toolchain,
    crate_var: Option<&str>,
) -> Result<(Vec<Arch>, String), Error> {
    for (origin, list) in arch_lists(build, env, lang, crate_var) {
        let (a, ok) = expand(env, lang, tc, &list, &origin)?;
        if ok {
            return Ok((a, origin));
        }
    }
    let (found, how) = arch::probe_native(env.processes(), lang, &tc.tool_dirs);
    let hint = format!(
        "set {} or OFFLOAD_ARCH (e.g. \"{}\") to choose",
        crate_var.unwrap_or("<CRATE>_OFFLOAD_ARCH"),
        match lang {
            Language::Hip => "gfx90a;gfx1100",
            Language::Cuda => "sm_80;sm_90",
        }
    );
    if !found.is_empty() {
        env.directives().warn(&format!(
            "offload-build: no offload architecture set; compiling for this machine's GPUs: {} \
             (found with {how}); {hint}",
            join(&found)
        ));
        return Ok((found, "native".into()));
    }
    let def = arch::default_set(lang, &tc.buildable());
    env.directives().warn(&format!(
        "offload-build: no offload architecture set and no GPU found; using the default set: {}; {hint}",
        join(&def)
    ));
    Ok((def, "default".into()))
}

fn join(archs: &[Arch]) -> String {
    archs
        .iter()
        .map(Arch::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

/// [`check_supported`] for every architecture of a list: all those that cannot be built for
/// the same reason are reported at once (their names `;`-separated in the error's `arch`),
/// not one per build.
fn check_all_supported(
    archs: &[Arch],
    tc: &Toolchain,
    lang: Language,
    origin: &str,
) -> Result<(), Error> {
    let mut first: Option<Error> = None;
    for a in archs {
        let Err(e) = check_supported(a, tc, lang, origin) else {
            continue;
        };
        match (&mut first, e) {
            (None, e) => first = Some(e),
            (
                Some(Error::ArchUnsupported { arch, .. }),
                Error::ArchUnsupported { arch: more, .. },
            )
            | (
                Some(Error::DeviceLibMissing { arch, .. }),
                Error::DeviceLibMissing { arch: more, .. },
            ) => {
                arch.push(';');
                arch.push_str(&more);
            }
            _ => {}
        }
    }
    first.map_or(Ok(()), Err)
}

fn check_supported(a: &Arch, tc: &Toolchain, lang: Language, origin: &str) -> Result<(), Error> {
    let wrong_vendor = match lang {
        Language::Hip => a.is_nvidia(),
        Language::Cuda => !a.is_nvidia(),
    };
    let processor = a.offload_arch();
    let processor = processor.split(':').next().unwrap_or_default();
    if wrong_vendor || (!tc.supported.is_empty() && !tc.supported.iter().any(|s| s == processor)) {
        return Err(Error::ArchUnsupported {
            arch: a.to_string(),
            compiler: tc.clang.clone(),
            origin: origin.to_string(),
            supported: tc.supported.clone(),
        });
    }
    // With a ROCm install every code object links its device libraries: one without the
    // processor's oclc_isa_version file cannot build it (clang would say "cannot find ROCm
    // device library for gfx1100").
    if let (Language::Hip, Some(r)) = (lang, &tc.rocm) {
        if !r.serves(processor) {
            return Err(Error::DeviceLibMissing {
                arch: a.to_string(),
                origin: origin.to_string(),
                device_libs: r.device_libs.clone(),
                served: r.served(),
            });
        }
    }
    Ok(())
}

/// CUDA images per architecture need `ptxas` for cubins: an `NN-real` architecture (a cubin
/// only) without it is an error; `sm_NN` without it is packed as PTX only, with one warning
/// for the whole build.
fn check_ptxas(
    compiles: &[(PathBuf, Vec<Arch>)],
    tc: &Toolchain,
    d: &Directives,
) -> Result<(), Error> {
    if tc.ptxas.is_some() {
        return Ok(());
    }
    let mut real = BTreeSet::new();
    let mut cubin = BTreeSet::new();
    for (_, archs) in compiles {
        for a in archs {
            if a.is_real() {
                real.insert(a.clone());
            } else if !a.is_virtual() {
                cubin.insert(a.clone());
            }
        }
    }
    let names = |s: &BTreeSet<Arch>| s.iter().map(Arch::as_str).collect::<Vec<_>>().join(", ");
    if !real.is_empty() {
        return Err(Error::ToolNotFound {
            tool: format!(
                "ptxas, which the cubin-only (NN-real) architectures {} need",
                names(&real)
            ),
            searched: tc.ptxas_searched.clone(),
        });
    }
    if !cubin.is_empty() {
        d.warn(&format!(
            "offload-build: no ptxas found, so {} are packed as PTX only (the driver compiles \
             it when loading); for cubins install NVIDIA's wheel (`pip install \
             nvidia-cuda-nvcc-cu12` in a virtualenv, found through VIRTUAL_ENV or python3) or \
             set PTXAS",
            names(&cubin)
        ));
    }
    Ok(())
}

/// `OFFLOAD_BUILD_COMPILE_TIMEOUT`: seconds (a decimal number; 0 means none).
fn compile_timeout(env: &Env<'_>) -> Result<Option<std::time::Duration>, Error> {
    let Some(v) = env.get("OFFLOAD_BUILD_COMPILE_TIMEOUT") else {
        return Ok(None);
    };
    match v.parse::<f64>() {
        Ok(s) if (0.0..1e9).contains(&s) => Ok(Some(std::time::Duration::from_secs_f64(s))),
        _ => Err(Error::Config(format!(
            "OFFLOAD_BUILD_COMPILE_TIMEOUT=`{v}` is not a number of seconds (such as 600; 0 for \
             no timeout)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn language_and_container_defaults() {
        let cu = [PathBuf::from("a.cu"), PathBuf::from("b.cu")];
        let mixed = [PathBuf::from("a.cu"), PathBuf::from("b.hip")];
        assert_eq!(language(None, &cu), Language::Cuda);
        assert_eq!(language(None, &mixed), Language::Hip);
        assert_eq!(language(None, &[]), Language::Hip);
        assert_eq!(language(Some(Language::Hip), &cu), Language::Hip);

        let mut b = Build::new();
        assert_eq!(b.object_embed(), Embed::HipObject);
        b.files(["k.cu"]);
        assert_eq!(b.object_embed(), Embed::NewDriverObject);
        b.container(Container::Bundle);
        assert_eq!(b.object_embed(), Embed::HipObject);
        let mut b = Build::new();
        b.container(Container::OffloadBinary);
        assert_eq!(b.object_embed(), Embed::NewDriverObject);
    }

    #[test]
    fn compile_plans_check_what_a_build_needs() {
        let dir = std::env::temp_dir().join(format!("offload-build-plan-{}", std::process::id()));
        let mut b = Build::new();
        b.cargo_metadata(false)
            .env_remove("OUT_DIR")
            .env("CARGO_MANIFEST_DIR", &dir)
            .file("missing.hip");
        let directives = Directives::new(false);
        let plan = |b: &Build, name| {
            let env = Env::new(&b.env, &directives);
            Plan::new(b, &env, Purpose::Compile(name))
                .unwrap_err()
                .to_string()
        };
        // A build needs an output directory and existing sources; the plan says which.
        let e = plan(&b, "k");
        assert!(e.contains("OUT_DIR is not set"), "{e}");
        b.out_dir(&dir);
        let e = plan(&b, "k");
        assert!(e.contains("missing.hip"), "{e}");
        let e = plan(&b, "bad name");
        assert!(e.contains("library name"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
