//! The options every device compile of a build shares: the flags (the builder's, then
//! `HIPFLAGS`/`CUDAFLAGS`), includes, defines, environment and root.

use crate::builder::arch::Arch;
use crate::builder::config::Build;
use crate::builder::env::Env;
use crate::builder::job::{CompileOptions, LauncherKind};
use crate::builder::options::Language;
use crate::builder::plan::arch_flags;
use crate::builder::plan::sources::absolute;
use crate::builder::toolchain::nvcc;
use crate::builder::toolchain::{self, Toolchain};
use std::ffi::OsString;
use std::path::Path;

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
        host_code: build.host_code,
        rdc: build.host_code && build.rdc,
        min_ptx_isa,
        host_compiler,
        root: cwd.to_path_buf(),
        // Set by the caller with the launcher.
        sccache_extrafiles: None,
    }
}

/// The environment of every device compile: [`Build::env`], and for HIP with a ROCm install
/// `HIP_DEVICE_LIB_PATH` naming the `--rocm-device-lib-path` directory (unless `Build::env`
/// sets it). clang reads the variable only without that flag, so the device code is the same;
/// sccache reads only the variable (its reading of `--hip-device-lib-path=` and `--rocm-path=`
/// yields an empty path, `extract_rocm_arg` in its `src/compiler/c.rs`, 0.16), and so hashes
/// the device libraries and, with sccache-dist, sends them to the build server, where the
/// compile would otherwise fail with "cannot find ROCm device library".
pub(crate) fn compile_env(
    build: &Build,
    tc: &Toolchain,
    lang: Language,
) -> Vec<(OsString, Option<OsString>)> {
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
pub(crate) fn user_flags(
    build: &Build,
    env: &Env<'_>,
    tc: &Toolchain,
    lang: Language,
    arch: Option<&Arch>,
    cache_dir: &Path,
) -> Vec<OsString> {
    let extra_flags = arch_flags::env_flags(env, lang);
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
    // The architectures they choose are the build's (plan::archs), each compile given its own.
    flags.extend(arch_flags::strip(build.flags.clone(), lang));
    for f in &build.flags_if_supported {
        if toolchain::flag_supported(env, tc, lang, arch, f, cache_dir) {
            flags.push(f.clone());
        }
    }
    flags.extend(arch_flags::strip(extra_flags, lang));
    flags
}
