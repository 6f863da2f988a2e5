//! The architectures a build compiles for, resolved in the documented order (the
//! architecture section of the [builder docs](crate::builder)), checked against what the
//! compiler and its install support.

use crate::builder::arch::{self, Arch};
use crate::builder::config::Build;
use crate::builder::env::{Directives, Env};
use crate::builder::error::Error;
use crate::builder::options::Language;
use crate::builder::plan::arch_flags::{self, ArchFlags, env_flags};
use crate::builder::toolchain::Toolchain;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Expands one list (from `origin`) into architectures, resolving `native` and `default`.
pub(crate) fn expand(
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
pub(crate) fn arch_lists(
    build: &Build,
    env: &Env<'_>,
    lang: Language,
    crate_var: Option<&str>,
    flag_archs: Option<&ArchFlags>,
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
    // The crate's choice: its builder list, else the architectures its flags choose
    // (`-gencode`, `-arch`, `--offload-arch`; checked against each other by resolve_archs).
    let builder = (!build.archs.is_empty())
        .then(|| (String::from("Build::archs"), build.archs.join(";")))
        .or_else(|| {
            let f = flag_archs.filter(|f| !f.archs.is_empty())?;
            Some((
                format!("the flags {}", f.spelled.join(" ")),
                f.archs.join(";"),
            ))
        });
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
pub(crate) fn resolve_archs(
    build: &Build,
    env: &Env<'_>,
    lang: Language,
    tc: &Toolchain,
    crate_var: Option<&str>,
) -> Result<(Vec<Arch>, String), Error> {
    let mut flags = build.flags.clone();
    flags.extend(env_flags(env, lang));
    let flag_archs = arch_flags::parse(&flags, lang).map_err(Error::Config)?;
    if let Some(f) = flag_archs.as_ref().filter(|_| !build.archs.is_empty()) {
        let set = |list: &[String]| -> BTreeSet<String> {
            (list.iter())
                .map(|a| Arch::new(a).map_or_else(|_| a.clone(), |a| a.as_str().to_string()))
                .collect()
        };
        if set(&f.archs) != set(&build.archs) {
            return Err(Error::Config(format!(
                "the flags {} choose the architectures {}, Build::archs (`--archs`) chooses {}: \
                 name them in one place",
                f.spelled.join(" "),
                f.archs.join(";"),
                build.archs.join(";")
            )));
        }
    }
    for (origin, list) in arch_lists(build, env, lang, crate_var, flag_archs.as_ref()) {
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

pub(crate) fn join(archs: &[Arch]) -> String {
    archs
        .iter()
        .map(Arch::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

/// [`check_supported`] for every architecture of a list: all those that cannot be built for
/// the same reason are reported at once (their names `;`-separated in the error's `arch`),
/// not one per build.
pub(crate) fn check_all_supported(
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

pub(crate) fn check_supported(
    a: &Arch,
    tc: &Toolchain,
    lang: Language,
    origin: &str,
) -> Result<(), Error> {
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
pub(crate) fn check_ptxas(
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
