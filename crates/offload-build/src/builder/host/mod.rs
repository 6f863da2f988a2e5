//! The host stage of a host-code build ([`Build::host_code`](crate::Build::host_code)): it
//! plans its own nodes of the job graph, in one place ([`plan`]): per source, the bundle of
//! its device code as its compiler's HIP driver would write it (the `.hipfb` clang embeds;
//! for CUDA with clang, its NVIDIA fat binary), named after its content, then one host compile
//! that embeds it ([`clang::host_job`]), with an early one beside the device compiles; the
//! jobs stage runs them ([`crate::builder::run::early::Hosts`]) as it runs the device
//! compiles: cached by content, under the jobserver and the launcher. nvcc's host-code jobs
//! and the relocatable host compiles are the plan's compile jobs already. After the graph,
//! [`objects`] names what the host compiles made.
//!
//! Reads the [`Plan`] and what the jobs built; the objects go to [`crate::builder::emit`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use offload_formats::bundle::hipfb;
use xxhash_rust::xxh3::xxh3_64;

use crate::builder::arch::Arch;
use crate::builder::env::Env;
use crate::builder::error::Error;
use crate::builder::fs;
use crate::builder::job::CompileJob;
use crate::builder::options::{Container, Language};
use crate::builder::pack;
use crate::builder::plan::Plan;
use crate::builder::run::built::{Built, Piece};
use crate::builder::run::early::{HostJob, Hosts, Pack};
use crate::builder::toolchain::clang;

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

/// The host compiles of a host-code build with clang (not nvcc, whose host-code jobs are the
/// device jobs; not relocatable device code, whose host compiles are the plan's jobs): each
/// source's, planned with a placeholder for its device code, early beside its device compiles
/// with the tool's own ways of running commands on (`OFFLOAD_BUILD_DIRECT`). `None`
/// otherwise.
pub(crate) fn plan<'a>(plan: &Plan, pack: &'a Pack, job: &'a HostJob<'a>) -> Option<Hosts<'a>> {
    let (Some(tc), Some(settings)) = (&plan.toolchain, &plan.jobs) else {
        return None;
    };
    if !plan.host_code || tc.is_nvcc() || settings.options.rdc {
        return None;
    }
    let ext = binary_ext(plan.lang);
    let jobs = plan
        .compiles
        .iter()
        .map(|(source, archs)| {
            let placeholder = Hosts::placeholder(&plan.cache_dir, source, ext);
            (host_job(plan, source, archs, &placeholder), placeholder)
        })
        .collect();
    Some(Hosts::new(jobs, pack, job, settings.direct))
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
