//! The host stage of a host-code build ([`Build::host_code`](crate::Build::host_code)): it
//! plans its own nodes of the job graph, in one place ([`plan`], a [`HostPlan`]):
//! - with clang, per source, the bundle of its device code as its compiler's HIP driver would
//!   write it (the `.hipfb` clang embeds; for CUDA with clang, its NVIDIA fat binary), named
//!   after its content, then one host compile that embeds it ([`clang::host_job`]), with an
//!   early one beside the device compiles ([`early::Hosts`]);
//! - with relocatable device code, one host compile per source that embeds nothing, beside the
//!   device compiles ([`clang::host_job_rdc`]);
//! - with nvcc, one host-code compile per source (`nvcc -c`: every architecture and the host
//!   side, [`nvcc::host_job`]), and with relocatable code nvcc's device link.
//!
//! The jobs stage runs them with the device compiles, in one graph: cached by content, under
//! the jobserver and the launcher. After the graph, [`objects`] names what they made.
//!
//! Reads the [`Plan`] and what the jobs built; the objects go to [`crate::builder::emit`].

pub(crate) mod early;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use offload_formats::bundle::hipfb;
use xxhash_rust::xxh3::xxh3_64;

use crate::builder::arch::Arch;
use crate::builder::built::{Built, Piece};
use crate::builder::env::Env;
use crate::builder::error::Error;
use crate::builder::fs;
use crate::builder::host::early::{HostJob, Hosts, Pack};
use crate::builder::job::CompileJob;
use crate::builder::job::LinkJob;
use crate::builder::options::{Container, Language};
use crate::builder::pack;
use crate::builder::plan::Plan;
use crate::builder::plan::jobs::{set_remote, ways_and_threads};
use crate::builder::toolchain::{clang, nvcc};

/// The host stage's nodes ([`plan`]).
#[derive(Default)]
pub(crate) struct HostPlan<'a> {
    /// Host compiles that need no device code of this build (nvcc's host-code compiles, the
    /// relocatable host compiles).
    pub(crate) compiles: Vec<CompileJob>,
    /// nvcc's device link of the relocatable host-code objects.
    pub(crate) links: Vec<LinkJob>,
    /// Host compiles that embed their source's packed device code (clang).
    pub(crate) after_device: Option<Hosts<'a>>,
}

/// The objects of a host-code build with their names in the library, in source order (and
/// for relocatable device code, the object of the linked device code last: `hip_fatbin.o`,
/// or nvcc's `cuda_dlink.o`).
pub(crate) fn objects(
    plan: &Plan,
    built: &mut Built,
    env: &Env<'_>,
) -> Result<Vec<(String, PathBuf)>, Error> {
    let (Some(tc), Some(settings)) = (&plan.toolchain, &plan.jobs) else {
        return Ok(Vec::new());
    };
    let mut objects = named(std::mem::take(&mut built.host_objects));
    if let Some(linked) = built.device_linked.take() {
        // nvcc's device link (`nvcc -dlink`) of the relocatable objects.
        objects.push(("cuda_dlink.o".into(), linked));
    } else if settings.options.rdc && !tc.is_nvcc() {
        objects.push((
            "hip_fatbin.o".into(),
            linked_bundle(plan, tc.major, built, env)?,
        ));
    }
    Ok(objects)
}

/// The host compile of `source` embedding `gpubinary`, with its preamble's PCH (made while
/// the device compiles ran: the plan's).
fn host_job(plan: &Plan, source: &Path, archs: &[Arch], gpubinary: &Path) -> CompileJob {
    let (Some(tc), Some(settings)) = (&plan.toolchain, &plan.jobs) else {
        unreachable!("a host stage without a toolchain or jobs");
    };
    let o = &settings.options;
    let mut job = clang::host_job(o, tc, &plan.cache_dir, source, archs, gpubinary);
    if let Some(&(i, skip)) = settings.host_pchs.get(source) {
        job.pch = Some(i);
        job.pch_skip = skip;
    }
    set_remote(&mut job, &settings.farm, o, tc);
    job
}

/// How the host stage packs a source's device code ([`gpu_binary`]).
pub(crate) fn packer(
    plan: &Plan,
) -> impl Fn(&Path, &BTreeMap<Arch, Vec<Piece>>) -> Result<Vec<u8>, Error> + Sync + use<> {
    let (lang, major) = (plan.lang, plan.toolchain.as_ref().map_or(0, |t| t.major));
    move |source, pieces| gpu_binary(lang, major, source, pieces)
}

/// How the host stage spells a source's host compile once its device code is packed: the
/// file of that code written in the cache, named after its content ([`binary_file`]), so
/// that the host compile is keyed by what it embeds.
pub(crate) fn job_maker(
    plan: &Plan,
) -> impl Fn(&Path, &[u8]) -> Result<CompileJob, Error> + Sync + '_ {
    move |source, bytes| {
        let gpubinary = binary_file(&plan.cache_dir, source, bytes, binary_ext(plan.lang))?;
        let archs = (plan.compiles.iter())
            .find(|(s, _)| s == source)
            .map_or(&[][..], |(_, a)| a.as_slice());
        Ok(host_job(plan, source, archs, &gpubinary))
    }
}

/// The host stage's nodes of a host-code build (empty otherwise): see the [module
/// docs](self).
pub(crate) fn plan<'a>(plan: &Plan, pack: &'a Pack, job: &'a HostJob<'a>) -> HostPlan<'a> {
    let (Some(tc), Some(settings), true) = (&plan.toolchain, &plan.jobs, plan.host_code) else {
        return HostPlan::default();
    };
    let o = &settings.options;
    let cache = &plan.cache_dir;
    // How each host compile runs, and whether it may take a build farm's slot, decided as the
    // plan decides the device compiles'.
    let decide = |compiles: &mut Vec<CompileJob>| {
        ways_and_threads(
            compiles,
            plan.lang,
            tc,
            settings.direct,
            settings.budget.as_ref(),
        );
        for job in compiles {
            set_remote(job, &settings.farm, o, tc);
        }
    };
    if tc.is_nvcc() {
        let mut compiles: Vec<CompileJob> = (plan.compiles.iter())
            .map(|(src, archs)| nvcc::host_job(o, tc, cache, src, archs))
            .collect();
        decide(&mut compiles);
        // nvcc's one device link covers every architecture of the build.
        let links = if o.rdc {
            let mut archs: Vec<Arch> = plan.compiles.iter().flat_map(|(_, a)| a.clone()).collect();
            archs.sort();
            archs.dedup();
            let objs = compiles.iter().map(|j| j.outputs[0].1.clone()).collect();
            vec![nvcc::device_link(o, tc, cache, &archs, objs)]
        } else {
            Vec::new()
        };
        return HostPlan {
            compiles,
            links,
            after_device: None,
        };
    }
    if o.rdc {
        // The host side of relocatable code needs nothing of the device compiles' output: it
        // runs beside them.
        let mut compiles: Vec<CompileJob> = (plan.compiles.iter())
            .map(|(src, archs)| {
                let mut job = clang::host_job_rdc(o, tc, cache, src, archs);
                if let Some(&(i, skip)) = settings.host_pchs.get(src) {
                    (job.pch, job.pch_skip) = (Some(i), skip);
                }
                job
            })
            .collect();
        decide(&mut compiles);
        return HostPlan {
            compiles,
            ..HostPlan::default()
        };
    }
    let ext = binary_ext(plan.lang);
    let jobs = plan
        .compiles
        .iter()
        .map(|(source, archs)| {
            let placeholder = Hosts::placeholder(cache, source, ext);
            (host_job(plan, source, archs, &placeholder), placeholder)
        })
        .collect();
    HostPlan {
        after_device: Some(Hosts::new(jobs, pack, job, settings.direct)),
        ..HostPlan::default()
    }
}

/// Each object named after its source (`k.hip` → `k.o`), as the library's member.
fn named(objects: Vec<(PathBuf, PathBuf)>) -> Vec<(String, PathBuf)> {
    objects
        .into_iter()
        .map(|(source, o)| {
            let stem = source.file_stem().map(|s| s.to_string_lossy().into_owned());
            (format!("{}.o", stem.unwrap_or_default()), o)
        })
        .collect()
}

/// The object defining `__hip_fatbin` for relocatable device code ([`Build::rdc`]): the
/// bundle of each architecture's linked code object (the host entry as the bundler of LLVM
/// `llvm_major` writes it) in `.hip_fatbin`, in `<cache>/hip_fatbin-<hash>.o`.
///
/// [`Build::rdc`]: crate::Build::rdc
fn linked_bundle(
    plan: &Plan,
    llvm_major: u32,
    built: &Built,
    env: &Env<'_>,
) -> Result<PathBuf, Error> {
    let bytes = gpu_binary(Language::Hip, llvm_major, Path::new(""), &built.per_arch)?;
    let target = env.get("TARGET").unwrap_or_default();
    let host = crate::embed::HostTarget::parse(&target).map_err(|e| Error::Pack(e.into()))?;
    let object =
        crate::embed::rdc_fatbin_object(host, &bytes).map_err(|e| Error::Pack(e.into()))?;
    binary_file(&plan.cache_dir, Path::new("hip_fatbin"), &object, "o")
}

/// What the host compile of `source` embeds: for HIP the bundle of
/// its code objects as the bundler of LLVM `llvm_major` writes it (its host entry), for CUDA
/// the NVIDIA fat binary of its cubins and PTX (as the device-only build packs one).
fn gpu_binary(
    lang: Language,
    llvm_major: u32,
    source: &Path,
    pieces: &BTreeMap<Arch, Vec<Piece>>,
) -> Result<Vec<u8>, Error> {
    match lang {
        Language::Hip => {
            let ids: Vec<(String, &[u8])> = pieces
                .iter()
                .flat_map(|(a, ps)| ps.iter().map(move |p| (a.to_string(), &p.data[..])))
                .collect();
            let host_id = hipfb::host_entry_id(llvm_major);
            let bytes = hipfb::write_with_host(host_id, ids.iter().map(|(a, d)| (a.as_str(), *d)))
                .map_err(|e| Error::Pack(e.into()))?;
            Ok(bytes)
        }
        Language::Cuda => {
            let name = source
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let (bytes, ..) = pack::pack(
                pieces,
                lang,
                Container::CudaFatbin,
                None,
                false,
                llvm_major,
                &name,
            )?;
            Ok(bytes)
        }
    }
}

/// The file extension of what a host compile of `lang` embeds ([`gpu_binary`]).
fn binary_ext(lang: Language) -> &'static str {
    match lang {
        Language::Hip => "hipfb",
        Language::Cuda => "fatbin",
    }
}

/// The file of `bytes` (device code of `source`, or an object) in `cache_dir`, named after
/// its content (`<stem>-<hash>.<ext>`), so the host compile that embeds it is keyed by what
/// it embeds; written unless there.
fn binary_file(cache_dir: &Path, source: &Path, bytes: &[u8], ext: &str) -> Result<PathBuf, Error> {
    let stem = source
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let path = cache_dir.join(format!("{stem}-{:016x}.{ext}", xxh3_64(bytes)));
    if std::fs::read(&path).ok().as_deref() != Some(bytes) {
        fs::write_atomic(&path, bytes)?;
    }
    Ok(path)
}
