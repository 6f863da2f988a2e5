//! The jobs of a build: one compile per (source, architecture), the device links, the PCH
//! jobs that pay, and the settings they run under (job slots, timeout, launcher).

use crate::builder::arch::{Arch, Target};
use crate::builder::config::Build;
use crate::builder::env::Env;
use crate::builder::error::Error;
use crate::builder::job::{CompileJob, CompileOptions, LauncherKind, LinkJob, Way};
use crate::builder::job_slots;
use crate::builder::options::CompilerKind;
use crate::builder::options::Language;
use crate::builder::pch::{self, PchJob};
use crate::builder::plan::flags::compile_options;
use crate::builder::plan::launcher;
use crate::builder::toolchain::Toolchain;
use crate::builder::toolchain::clang;
use crate::builder::toolchain::nvcc;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
    pub progress: Option<crate::builder::progress::ProgressHook>,
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
    /// The precompiled preamble of each source's host compile in a host-code build with
    /// clang (an index into [`JobSettings::pch_jobs`], and the bytes of the source it stands
    /// for): made while the device compiles run, used by the host compile after them.
    pub host_pchs: BTreeMap<PathBuf, (usize, usize)>,
    /// Whether a HIP device compile runs as its driver's two commands, without the driver
    /// (`OFFLOAD_BUILD_DIRECT`, on unless switched off: [`crate::builder::toolchain::direct`]).
    pub direct: bool,
    /// What every compile of the build was decided to be: the host compiles of a host-code
    /// build are spelled from it once the device code is packed.
    pub options: CompileOptions,
    /// How much memory the jobs may use at once (`OFFLOAD_BUILD_MEMORY`, the cgroup's limit,
    /// `MemAvailable`); `None`: no limit.
    pub budget: Option<crate::builder::memory::Budget>,
    /// How many compiles a build farm takes at once beside the local slots
    /// ([`CompileJob::remote`] ones; `OFFLOAD_BUILD_FARM_JOBS`, `sccache --dist-status`).
    pub farm: launcher::Farm,
}

/// Launcher, parallelism and compiler arguments shared by the jobs, and the jobs.
pub(crate) fn job_settings(
    build: &Build,
    env: &Env<'_>,
    tc: &Toolchain,
    lang: Language,
    compiles: &[(PathBuf, Vec<Arch>)],
    (cwd, cache_dir): (&Path, &Path),
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
    let first = compiles.iter().find_map(|(_, a)| a.first());
    let mut compile = compile_options(build, env, tc, lang, cwd, first, cache_dir);
    (compile.launcher, compile.launcher_kind) = launcher;
    if compile.launcher_kind == LauncherKind::Sccache {
        compile.sccache_extrafiles = env.get_os("SCCACHE_EXTRAFILES");
    }
    // A compiler cache in front of the compiles shares them between out-dirs, checkouts and
    // machines; a compile with a PCH is one it cannot cache (sccache refuses its `-Xclang`
    // pairs, ccache `-preamble-bytes`), so under one offload-build makes no preambles.
    let cached_by_launcher = compile.launcher_kind.is_cache();
    let pch = build.pch && pch_enabled(env) && !cached_by_launcher && !tc.is_nvcc();
    let (mut compile_jobs, links) = jobs_of(compiles, &compile, tc, cache_dir);
    let hints = pch::Hints {
        first_of_make: compiles.len() == 1 && pch && run_by_make(build, env),
        includes: &compile.includes,
    };
    let weights = pch::Weights::new(env.processes());
    let first = (hints, cache_dir, &weights);
    let mut pch_jobs = if pch {
        pch_jobs_of(&mut compile_jobs, &compile, tc, first)
    } else {
        Vec::new()
    };
    let host_pchs = if pch && compile.host_code {
        host_pchs_of(compiles, &compile, tc, first, &mut pch_jobs)
    } else {
        BTreeMap::new()
    };
    let direct = on_unless_switched_off(env, "OFFLOAD_BUILD_DIRECT");
    let budget = crate::builder::memory::budget(env)?;
    ways_and_threads(&mut compile_jobs, lang, tc, direct, budget.as_ref());
    let farm = farm(env, &compile, tc, &mut compile_jobs);
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
        host_pchs,
        direct,
        budget,
        farm,
        options: compile,
    })
}

/// The build farm ([`launcher::farm`]), and which of `jobs` may take one of its slots (the
/// others say why they take a local one: [`CompileJob::stays`]). Under sccache the farm is
/// asked about whenever compiles run, also when none may go there, so that the build can say
/// why.
fn farm(
    env: &Env<'_>,
    o: &CompileOptions,
    tc: &Toolchain,
    jobs: &mut [CompileJob],
) -> launcher::Farm {
    let farm = launcher::farm(env, &o.launcher, o.launcher_kind);
    for job in jobs {
        set_remote(job, &farm, o, tc);
    }
    farm
}

/// Sets whether `job` may take a slot of `farm` ([`CompileJob::remote`]), and if not, under
/// sccache with a farm, why ([`CompileJob::stays`]). Call it once the job's steps are known.
pub(crate) fn set_remote(
    job: &mut CompileJob,
    farm: &launcher::Farm,
    o: &CompileOptions,
    tc: &Toolchain,
) {
    let why = why_local(&job.target, o, tc);
    job.remote = farm.may_take() && why.is_none();
    job.stays = match why {
        _ if !farm.may_take() => None,
        Some(why) => Some(why),
        None if !job.on_farm() => Some(
            "its code generation runs here after sccache's compile (a -fgpu-rdc compile writes \
             bitcode first)",
        ),
        None => None,
    };
}

/// Why a compile for `target` takes a local job slot under sccache with a farm (the only
/// launcher with one: [`launcher::farm`]); `None` when it may take a farm slot: a HIP compile,
/// for the host only with clang 16 or later (whose `-Xclang=` spelling sccache accepts: clang
/// 15's host compile, [`crate::builder::toolchain::clang::host_job`]).
pub(crate) fn why_local(
    target: &Target,
    o: &CompileOptions,
    tc: &Toolchain,
) -> Option<&'static str> {
    if tc.is_nvcc() {
        return Some(
            "offload-build does not count nvcc's compiles as the farm's (sccache 0.16 and 0.17 \
             send none from nvcc 13.3 on)",
        );
    }
    if o.lang != Language::Hip {
        return Some("sccache compiles clang's CUDA on this machine");
    }
    if target.device().is_none() && tc.major < 16 {
        return Some(
            "sccache refuses the -Xclang pairs of a host compile with clang 15 (clang 16 and \
             later spell them -Xclang=)",
        );
    }
    None
}

/// How each job's first step runs ([`Way`]): nvcc's printed steps for an nvcc host-code
/// compile (not relocatable, no launcher, the compiler nvcc itself: a `ccache` link named
/// nvcc would be skipped by them), the two commands of a HIP device compile's driver, or the
/// driver; `direct` (`OFFLOAD_BUILD_DIRECT`) off leaves the driver alone. A compile that runs
/// as one nvcc gets `--threads` for its architectures, as many as the cores its jobs share
/// and the memory `budget` holds (each of nvcc's threads runs a `cicc`).
pub(crate) fn ways_and_threads(
    jobs: &mut [CompileJob],
    lang: Language,
    tc: &Toolchain,
    direct: bool,
    budget: Option<&crate::builder::memory::Budget>,
) {
    let real_nvcc = tc.is_nvcc()
        && tc.clang.canonicalize().ok().is_some_and(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("nvcc"))
        });
    for job in jobs.iter_mut() {
        let bare = job.steps[0].launcher.is_empty();
        let first = match (lang, &job.target) {
            (Language::Cuda, Target::Host) if real_nvcc && !job.rdc && bare => Some(Way::NvccSteps),
            (Language::Hip, Target::Device(_)) if !job.rdc && job.steps.len() == 1 => {
                Some(Way::Direct)
            }
            _ => None,
        };
        job.ways = first
            .filter(|_| direct)
            .into_iter()
            .chain([Way::Driver])
            .collect();
    }
    let threaded = jobs.iter().filter(|j| j.threads > 1).count();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let fit = budget.map_or(usize::MAX, |b| {
        usize::try_from(b.bytes / crate::builder::memory::default::NVCC).unwrap_or(1)
    });
    let per_job = cores.div_ceil(threaded.max(1)).min(fit.max(1));
    for job in jobs.iter_mut().filter(|j| j.ways[0] == Way::Driver) {
        if let Some(with) = job.with_threads(per_job) {
            *job = with;
        }
    }
}

/// Whether a switch's value turns it off: `0`, `false`, `off` or `no`.
pub(crate) fn switched_off(v: &str) -> bool {
    ["0", "false", "off", "no"].contains(&v.trim().to_ascii_lowercase().as_str())
}

/// `OFFLOAD_BUILD_PCH`: on unless `0`, `false`, `off` or `no`.
pub(crate) fn pch_enabled(env: &Env<'_>) -> bool {
    on_unless_switched_off(env, "OFFLOAD_BUILD_PCH")
}

/// The switch `name`: on unless `0`, `false`, `off` or `no`.
fn on_unless_switched_off(env: &Env<'_>, name: &str) -> bool {
    env.get(name).is_none_or(|v| !switched_off(&v))
}

/// `OFFLOAD_BUILD_PCH_BACKGROUND`: on unless `0`, `false`, `off` or `no`; when unset, on
/// unless `CI` is set (to anything but `0` or `false`): a one-off build never edits.
pub(crate) fn background_default(env: &Env<'_>) -> bool {
    match env.get("OFFLOAD_BUILD_PCH_BACKGROUND") {
        Some(v) => !switched_off(&v),
        None => env.get("CI").is_none_or(|v| switched_off(&v)),
    }
}

/// The precompiled preamble of each compile job that has one ([`pch::pch_job`], with
/// the job's own `-fgpu-rdc`; a prefix shared with other sources where that pays,
/// [`pch::prefer_shared`]), one per key: sources with the same preamble share it. A
/// source that cannot be read gets none (its compile says why). `hints`: what the choice of a
/// shared prefix goes by besides the sources ([`pch::prefer_shared`]).
pub(crate) fn pch_jobs_of(
    jobs: &mut [CompileJob],
    o: &CompileOptions,
    tc: &Toolchain,
    (hints, cache_dir, weights): (pch::Hints<'_>, &Path, &pch::Weights<'_>),
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
            let arch = job.target.device()?;
            pch::pch_job(o, tc, cache_dir, &job.source, text, arch, job.rdc)
        })
        .collect();
    let jobs_sources: Vec<PathBuf> = jobs.iter().map(|j| j.source.clone()).collect();
    let mut choices: Vec<Option<pch::Choice>> = Vec::new();
    for (k, (job, full)) in jobs.iter().zip(&whole).enumerate() {
        choices.push(None);
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
        let Some(arch) = job.target.device() else {
            continue;
        };
        let (p, skip) = pch::prefer_shared(
            full.clone(),
            cache_dir,
            &job.source,
            text,
            &siblings,
            hints,
            |n| pch::prefix_job(o, tc, cache_dir, &job.source, n, arch, job.rdc),
        );
        let prefix =
            |n: &[u8]| pch::prefix_job(o, tc, cache_dir, &job.source, n.to_vec(), arch, job.rdc);
        choices[k] = Some(pch::Choice {
            full: full.clone(),
            chosen: p,
            skip,
            wrapper: prefix(b""),
            hoisted: pch::hoists_runtime(text)
                .then(|| prefix(pch::RUNTIME_PREAMBLE))
                .flatten(),
        });
    }
    let job_texts: Vec<Option<&[u8]>> = jobs
        .iter()
        .map(|j| texts.get(&j.source).and_then(|t| t.as_deref()))
        .collect();
    pch::prefer_fewer(&mut choices, &job_texts, &|p| weights.of(p));
    pch::prefer_wrapper(&mut choices, texts.len() > 1);
    let mut pchs: Vec<PchJob> = Vec::new();
    for (job, c) in jobs.iter_mut().zip(choices) {
        let Some(c) = c else {
            continue;
        };
        job.pch = Some(index_in(&mut pchs, c.chosen));
        job.pch_skip = c.skip;
    }
    pchs
}

/// The index of `p` in `pchs` (one per key), added when it is not there.
fn index_in(pchs: &mut Vec<PchJob>, p: PchJob) -> usize {
    match pchs.iter().position(|q| q.key == p.key) {
        Some(i) => i,
        None => {
            pchs.push(p);
            pchs.len() - 1
        }
    }
}

/// The precompiled preamble of each source's host compile in a host-code build, added to
/// `pchs` (one per key): its own preamble, or the first includes it shares with other
/// sources, of this build or of earlier ones sharing the cache ([`pch::prefer_shared`]), as
/// for the device compiles. An index into `pchs`, and the bytes it stands for, per source.
fn host_pchs_of(
    compiles: &[(PathBuf, Vec<Arch>)],
    o: &CompileOptions,
    tc: &Toolchain,
    (hints, cache_dir, weights): (pch::Hints<'_>, &Path, &pch::Weights<'_>),
    pchs: &mut Vec<PchJob>,
) -> BTreeMap<PathBuf, (usize, usize)> {
    let texts: Vec<Option<Vec<u8>>> = compiles
        .iter()
        .map(|(s, _)| std::fs::read(s).ok())
        .collect();
    let whole: Vec<Option<PchJob>> = compiles
        .iter()
        .zip(&texts)
        .map(|((s, archs), t)| pch::host_pch_job(o, tc, cache_dir, s, t.as_ref()?, archs))
        .collect();
    let mut choices: Vec<Option<pch::Choice>> = Vec::new();
    for (k, ((src, archs), (full, text))) in
        compiles.iter().zip(whole.iter().zip(&texts)).enumerate()
    {
        choices.push(None);
        let (Some(full), Some(text)) = (full, text) else {
            continue;
        };
        let siblings: Vec<(&Path, &[u8])> = whole
            .iter()
            .zip(compiles)
            .enumerate()
            .filter_map(|(i, (w, (s, _)))| {
                let w = w.as_ref().filter(|w| i != k && w.family == full.family)?;
                Some((s.as_path(), w.preamble.as_slice()))
            })
            .collect();
        let (p, skip) =
            pch::prefer_shared(full.clone(), cache_dir, src, text, &siblings, hints, |n| {
                pch::host_prefix_job(o, tc, cache_dir, src, n, archs)
            });
        let prefix = |n: &[u8]| pch::host_prefix_job(o, tc, cache_dir, src, n.to_vec(), archs);
        choices[k] = Some(pch::Choice {
            full: full.clone(),
            chosen: p,
            skip,
            wrapper: prefix(b""),
            hoisted: pch::hoists_runtime(text)
                .then(|| prefix(pch::RUNTIME_PREAMBLE))
                .flatten(),
        });
    }
    let source_texts: Vec<Option<&[u8]>> = texts.iter().map(|t| t.as_deref()).collect();
    pch::prefer_fewer(&mut choices, &source_texts, &|p| weights.of(p));
    pch::prefer_wrapper(&mut choices, compiles.len() > 1);
    let mut out = BTreeMap::new();
    for ((src, _), c) in compiles.iter().zip(choices) {
        let Some(c) = c else {
            continue;
        };
        out.insert(src.clone(), (index_in(pchs, c.chosen), c.skip));
    }
    out
}

/// Whether make runs this build, one of a project's (its jobserver, in `MAKEFLAGS`, is the
/// one the jobs take tokens from): not Cargo's (`CARGO_MAKEFLAGS`, read first so that a
/// build script gets no rerun directive for `MAKEFLAGS`), nor one given with
/// [`Build::jobserver`].
fn run_by_make(build: &Build, env: &Env<'_>) -> bool {
    build.jobserver.is_none()
        && env.get("CARGO_MAKEFLAGS").is_none()
        && env
            .get("MAKEFLAGS")
            .is_some_and(|m| m.contains("--jobserver-"))
        && job_slots::inherited().is_some()
}

/// `OFFLOAD_BUILD_MAX_JOBS`, else no limit.
pub(crate) fn max_jobs(env: &Env<'_>) -> usize {
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

/// The device compile jobs in (source, architecture) order, and the device links: HIP code
/// of an architecture compiled from several sources is relocatable (`-fgpu-rdc`) and linked
/// once. The host compiles of a host-code build are the host stage's
/// ([`crate::builder::host::plan`]).
pub(crate) fn jobs_of(
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
    let mut to_link: BTreeMap<&Arch, Vec<PathBuf>> = BTreeMap::new();
    for (src, archs) in compiles {
        if o.host_code && tc.kind == CompilerKind::Nvcc {
            // nvcc compiles a source's architectures and host side in one process: the host
            // stage plans it.
            continue;
        }
        for a in archs {
            // With host code, each source's device code is its own (`hipcc -c`), unless
            // relocatable (`hipcc -fgpu-rdc`).
            let rdc = o.lang == Language::Hip
                && if o.host_code {
                    o.rdc
                } else {
                    sources_per_arch[a] > 1
                };
            let job = match tc.kind {
                CompilerKind::Nvcc => nvcc::compile_job(o, tc, cache_dir, src, a),
                _ => clang::compile_job(o, tc, cache_dir, src, a, rdc),
            };
            if rdc {
                to_link.entry(a).or_default().push(job.outputs[0].1.clone());
            }
            jobs.push(job);
        }
    }
    let links = to_link
        .into_iter()
        .map(|(a, objs)| clang::device_link(o, tc, cache_dir, a, objs))
        .collect();
    (jobs, links)
}

/// `OFFLOAD_BUILD_COMPILE_TIMEOUT`: seconds (a decimal number; 0 means none).
pub(crate) fn compile_timeout(env: &Env<'_>) -> Result<Option<std::time::Duration>, Error> {
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
