//! Toolchain discovery: the compiler for the language, then the installs around it and what
//! it supports (see the [room docs](crate::builder::toolchain) for the order).

use crate::builder::arch::Arch;
use crate::builder::command::{Domain, KeyBuilder};
use crate::builder::env::Env;
use crate::builder::error::Error;
use crate::builder::fs;
use crate::builder::options::CompilerKind;
use crate::builder::options::Language;
use crate::builder::process::{self};
use crate::builder::toolchain::{cuda, nvcc};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::builder::toolchain::clang::find_clang;
use crate::builder::toolchain::cuda::CudaHeaders;
use crate::builder::toolchain::found::Toolchain;
use crate::builder::toolchain::info::{compiler_info, parse_major};
use crate::builder::toolchain::paths::{exe, path_dirs, same_install};
use crate::builder::toolchain::ptxas::find_ptxas;
use crate::builder::toolchain::rocm::find_rocm;

/// What a build asks of discovery: the compiler, the CUDA compiler kind and `ptxas` it names.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Wanted<'a> {
    /// [`Build::compiler`](crate::builder::Build::compiler).
    pub compiler: Option<&'a Path>,
    /// [`Build::cuda_compiler`](crate::builder::Build::cuda_compiler).
    pub cuda_compiler: Option<CompilerKind>,
    /// [`Build::ptxas`](crate::builder::Build::ptxas).
    pub ptxas: Option<&'a Path>,
}

/// Discovers the toolchain for `lang`, using `cache_dir` to remember what the compiler said.
pub(crate) fn discover(
    env: &Env<'_>,
    lang: Language,
    wanted: Wanted<'_>,
    cache_dir: &Path,
    cwd: &Path,
) -> Result<Toolchain, Error> {
    let path = env.get_os("PATH");
    if lang == Language::Cuda {
        match nvcc::choose(
            env,
            wanted.cuda_compiler,
            wanted.compiler,
            path.as_ref(),
            cwd,
        )? {
            nvcc::Choice::Nvcc(p, origin) => return discover_nvcc(env, p, origin, cache_dir),
            nvcc::Choice::Clang(Some((p, origin))) => {
                return discover_clang(env, lang, Some((p, origin)), wanted, cache_dir, cwd);
            }
            nvcc::Choice::Clang(None) => {}
        }
    }
    discover_clang(env, lang, None, wanted, cache_dir, cwd)
}

/// The toolchain of nvcc `nvcc` (CUDA): its toolkit (`--cuda-path`'s equivalent, for the
/// system headers) and the `ptxas` beside it.
pub(crate) fn discover_nvcc(
    env: &Env<'_>,
    nvcc_path: PathBuf,
    origin: String,
    cache_dir: &Path,
) -> Result<Toolchain, Error> {
    let (stamp, version, supported) = compiler_info(
        env,
        &nvcc_path,
        CompilerKind::Nvcc,
        Language::Cuda,
        cache_dir,
    )?;
    let mut id = KeyBuilder::new(Domain::Toolchain);
    id.u128(stamp).str(&version);
    nvcc::identity(&mut id, &nvcc_path);
    let root = nvcc::root(&nvcc_path);
    // nvcc's own headers (`<root>/include`, CCCL's under it): system headers, as for clang.
    let cuda_headers = root.as_ref().map(|r| {
        CudaHeaders::Toolkit(cuda::Toolkit {
            root: r.clone(),
            origin: r.clone(),
            found_by: origin.clone(),
            version: nvcc::release(&version),
            include_targets: r.join("include").canonicalize().into_iter().collect(),
        })
    });
    let ptxas = nvcc_path.with_file_name(exe("ptxas"));
    let mut tool_dirs: Vec<PathBuf> = nvcc_path
        .parent()
        .map(Path::to_path_buf)
        .into_iter()
        .collect();
    tool_dirs.extend(path_dirs(env.get_os("PATH").as_ref()));
    Ok(Toolchain {
        kind: CompilerKind::Nvcc,
        major: parse_major(&version.replace("release ", "version ")),
        clang: nvcc_path,
        version,
        origin,
        rocm: None,
        rocm_found: None,
        rocm_looked: Vec::new(),
        cuda: root,
        cuda_headers,
        ptxas_searched: vec![ptxas.clone()],
        ptxas: ptxas.is_file().then_some(ptxas),
        supported,
        identity: id.finish(),
        tool_dirs,
    })
}

/// The toolchain of clang: `named` when the CUDA compiler choice named one, else found by
/// [`find_clang`]'s rules.
pub(crate) fn discover_clang(
    env: &Env<'_>,
    lang: Language,
    named: Option<(PathBuf, String)>,
    wanted: Wanted<'_>,
    cache_dir: &Path,
    cwd: &Path,
) -> Result<Toolchain, Error> {
    let path = env.get_os("PATH");
    let explicit_ptxas = wanted.ptxas;
    let (rocm_found, rocm_looked) = match lang {
        Language::Hip => find_rocm(env, path.as_ref(), cwd, cache_dir),
        Language::Cuda => (None, Vec::new()),
    };
    let (clang, origin) = match named {
        Some(n) => n,
        None => find_clang(
            env,
            wanted.compiler,
            rocm_found.as_ref(),
            path.as_ref(),
            cwd,
        )?,
    };
    let rocm = rocm_found.clone().filter(|r| match &r.clang {
        Some(c) => same_install(c, &clang),
        None => matches!(
            origin.as_str(),
            "Build::compiler" | "HIPCXX" | "HIP_CLANG_PATH"
        ),
    });
    let (cuda_headers, ptxas, ptxas_searched) = match lang {
        Language::Hip => (None, None, Vec::new()),
        Language::Cuda => {
            let headers = cuda::find(env, path.as_ref(), cwd, cache_dir)?;
            let (ptxas, searched) =
                find_ptxas(env, explicit_ptxas, headers.root(), path.as_ref(), cwd)?;
            (Some(headers), ptxas, searched)
        }
    };
    let cuda = cuda_headers
        .as_ref()
        .and_then(|h| h.root())
        .map(Path::to_path_buf);
    let (stamp, version, supported) =
        compiler_info(env, &clang, CompilerKind::Clang, lang, cache_dir)?;
    let mut id = KeyBuilder::new(Domain::Toolchain);
    id.u128(stamp).str(&version);
    for p in [&cuda, &ptxas].into_iter().flatten() {
        id.os(p);
    }
    if let Some(h) = &cuda_headers {
        id.str(&h.identity());
    }
    if let Some(r) = &rocm {
        for a in r.args() {
            id.str(&a);
        }
    }
    let mut tool_dirs: Vec<PathBuf> = clang.parent().map(Path::to_path_buf).into_iter().collect();
    tool_dirs.extend(path_dirs(path.as_ref()));
    Ok(Toolchain {
        kind: CompilerKind::Clang,
        major: parse_major(&version),
        clang,
        version,
        origin,
        rocm,
        rocm_found,
        rocm_looked,
        cuda,
        cuda_headers,
        ptxas,
        ptxas_searched,
        supported,
        identity: id.finish(),
        tool_dirs,
    })
}

/// Whether the compiler accepts `flag` in a device compile for `arch` (asked once: the answer
/// is kept in `cache_dir`, keyed by the toolchain, the language, the architecture and the
/// flag).
pub(crate) fn flag_supported(
    env: &Env<'_>,
    tc: &Toolchain,
    lang: Language,
    arch: Option<&Arch>,
    flag: &OsString,
    cache_dir: &Path,
) -> bool {
    let mut k = KeyBuilder::new(Domain::FlagProbe);
    k.u128(tc.identity)
        .str(&format!("{lang:?}"))
        .str(arch.map_or("", Arch::as_str))
        .os(flag);
    let answer = cache_dir.join(format!("flag-{:032x}.txt", k.finish()));
    if let Ok(t) = std::fs::read_to_string(&answer) {
        return t.trim() == "yes";
    }
    let Ok(dir) = tempfile::Builder::new()
        .prefix(".flag-")
        .tempdir_in(cache_dir)
    else {
        return false;
    };
    let source = dir.path().join(match lang {
        Language::Hip => "empty.hip",
        Language::Cuda => "empty.cu",
    });
    if std::fs::write(&source, "").is_err() {
        return false;
    }
    let out = dir.path().join("empty.o");
    let cmd = match tc.kind {
        CompilerKind::Nvcc => nvcc::flag_probe(tc, arch, flag, &source, &out),
        _ => crate::builder::toolchain::clang::flag_probe(tc, lang, arch, flag, &source, &out),
    };
    let ok = matches!(
        process::probe(env.processes(), &mut cmd.to_command()),
        Ok(Some(o)) if o.status.success()
    );
    let _ = fs::write_atomic(&answer, if ok { b"yes\n" } else { b"no\n" });
    ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::toolchain::found::Toolchain;
    use crate::builder::toolchain::{info::*, paths::*, rocm::*};

    #[test]
    fn reads_versions_and_cpu_lists() {
        assert_eq!(parse_major("Debian clang version 19.1.7 (3~deb12u1)"), 19);
        assert_eq!(parse_major("AMD clang version 18.0.0git (https://...)"), 18);
        let text = "clang version 19\nAvailable CPUs for this target:\n\n\tfiji\n\tgfx90a\n\tgfx1100\n\nUse -mcpu\n";
        assert_eq!(parse_supported(text, Language::Hip), ["gfx1100", "gfx90a"]);
        assert_eq!(version_of("clang-19", "clang-"), Some(19));
        assert_eq!(version_of("clang-cl", "clang-"), None);
    }

    fn toolchain(rocm_found: Option<Rocm>, looked: Vec<String>) -> Toolchain {
        Toolchain {
            rocm_found,
            rocm_looked: looked,
            ..Toolchain::for_test(CompilerKind::Clang, 19)
        }
    }

    /// A machine without ROCm: discovery finds nothing, and the hint says where it looked and
    /// how to install one.
    #[test]
    fn no_rocm_found_says_where_it_looked() {
        let dir = std::env::temp_dir().join(format!("offload-build-norocm-{}", std::process::id()));
        let empty = dir.join("root");
        std::fs::create_dir_all(empty.join("include")).unwrap();
        let mut o = std::collections::BTreeMap::new();
        o.insert(OsString::from("ROCM_PATH"), None);
        o.insert(
            OsString::from("HIP_PATH"),
            Some(OsString::from("/nonexistent/hip")),
        );
        let d = crate::builder::env::Directives::new(false);
        let env = Env::new(&o, &d);
        let no_path = OsString::from(dir.join("bin"));
        let find = || {
            find_rocm_in(
                &env,
                Some(&no_path),
                &dir,
                &dir,
                std::slice::from_ref(&empty),
            )
        };
        let (found, looked) = find();
        assert!(found.is_none());
        let hint = toolchain(None, looked).no_rocm_hint();
        for want in [
            "no ROCm install was found",
            "-nogpulib -nogpuinc",
            "ROCM_PATH (unset)",
            "HIP_PATH=/nonexistent/hip (no include/hip/hip_runtime.h)",
            "hipconfig on PATH (not found)",
            &format!("{} (no include/hip/hip_runtime.h)", empty.display()),
            "apt-get install hipcc libamdhip64-dev rocm-device-libs clang-15",
        ] {
            assert!(hint.contains(want), "{want:?} missing from: {hint}");
        }

        // Headers without device libraries are no install either; with them, one is found, and
        // its served processors come from the oclc_isa_version files.
        std::fs::create_dir_all(empty.join("include/hip")).unwrap();
        std::fs::write(empty.join("include/hip/hip_runtime.h"), "").unwrap();
        let (found, looked) = find();
        assert!(found.is_none());
        assert!(
            looked.last().unwrap().contains("no device libraries"),
            "{looked:?}"
        );
        let libs = empty.join("lib/x86_64-linux-gnu/amdgcn/bitcode");
        std::fs::create_dir_all(&libs).unwrap();
        for f in [
            "ocml.bc",
            "oclc_isa_version_1030.bc",
            "oclc_isa_version_90a.bc",
            "oclc_isa_version_906.bc",
        ] {
            std::fs::write(libs.join(f), "").unwrap();
        }
        let (found, _) = find();
        let r = found.expect("an install with headers and device libraries");
        assert_eq!(r.device_libs, libs);
        assert_eq!(r.served(), ["gfx906", "gfx90a", "gfx1030"]);
        assert!(r.serves("gfx90a") && !r.serves("gfx1100"));
        assert!(
            r.args()
                .contains(&format!("--rocm-device-lib-path={}", libs.display()))
        );
        // Found but not used with another compiler: the hint says so.
        let hint = toolchain(Some(r), Vec::new()).no_rocm_hint();
        assert!(hint.contains("a ROCm install was found at"), "{hint}");
        assert!(hint.contains("chosen by CLANG"), "{hint}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The version hipcc passes (`--hip-version`): ROCm's `bin/.hipVersion`, else the distro
    /// layout's `share/hip/version` (Debian's ROCm 5.2), the HIP directory's before the
    /// root's; nothing from a file without the three numbers.
    #[test]
    fn hip_version_comes_from_the_install() {
        let dir = tempfile::tempdir().unwrap();
        let (hip, root) = (dir.path().join("hip"), dir.path().join("rocm"));
        std::fs::create_dir_all(root.join("share/hip")).unwrap();
        std::fs::create_dir_all(root.join("bin")).unwrap();
        std::fs::create_dir_all(hip.join("bin")).unwrap();
        let debian = "# Auto-generated by cmake\nHIP_PACKAGING_VERSION_PATCH=0\n\
                      HIP_VERSION_MAJOR=5\nHIP_VERSION_MINOR=2\nHIP_VERSION_PATCH=21153\n\
                      HIP_VERSION_GITHASH=\n";
        assert_eq!(hip_version(&[&root]), None);
        std::fs::write(root.join("share/hip/version"), debian).unwrap();
        assert_eq!(hip_version(&[&root]).as_deref(), Some("5.2.21153"));
        std::fs::write(
            root.join("bin/.hipVersion"),
            "HIP_VERSION_MAJOR=5\nHIP_VERSION_MINOR=3\nHIP_VERSION_PATCH=1\n",
        )
        .unwrap();
        assert_eq!(hip_version(&[&root]).as_deref(), Some("5.3.1"));
        std::fs::write(root.join("bin/.hipVersion"), debian).unwrap();
        assert_eq!(hip_version(&[&root]).as_deref(), Some("5.2.21153"));
        std::fs::write(
            hip.join("bin/.hipVersion"),
            "HIP_VERSION_MAJOR=6\nHIP_VERSION_MINOR=1\nHIP_VERSION_PATCH=40091\n",
        )
        .unwrap();
        assert_eq!(hip_version(&[&hip, &root]).as_deref(), Some("6.1.40091"));
        std::fs::write(hip.join("bin/.hipVersion"), "HIP_VERSION_MAJOR=6\n").unwrap();
        assert_eq!(hip_version(&[&hip, &root]).as_deref(), Some("5.2.21153"));
        let r = Rocm {
            root: root.clone(),
            hip: None,
            device_libs: root.clone(),
            clang: None,
            hip_lib_dir: None,
            version: hip_version(&[&root]),
            found_by: String::new(),
            from_env: false,
        };
        assert!(r.args().contains(&"--hip-version=5.2.21153".to_string()));
    }

    /// hipconfig's answers are remembered per value of the variables it reads: a script
    /// that prints `HIP_PLATFORM` answers again when that changes, and each such variable
    /// but PATH names a rerun directive.
    #[cfg(unix)]
    #[test]
    fn hipconfig_answers_are_keyed_by_its_variables() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("hipconfig");
        std::fs::write(
            &script,
            "#!/bin/sh\ncase $1 in --rocmpath) echo /r-${HIP_PLATFORM:-none};; \
             --hipclangpath) echo /b;; *) echo;; esac\n",
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let cache = dir.path().join("cache");
        std::fs::create_dir_all(&cache).unwrap();
        let ask = |platform: Option<&str>| {
            let mut o = std::collections::BTreeMap::new();
            o.insert(OsString::from("HIP_PLATFORM"), platform.map(OsString::from));
            let d = crate::builder::env::Directives::new(false);
            let env = Env::new(&o, &d);
            let c = hipconfig(&env, &script, &cache).unwrap();
            let (lines, _) = d.take();
            (c.rocm, lines)
        };
        let (amd, lines) = ask(Some("amd"));
        assert_eq!(amd, PathBuf::from("/r-amd"));
        assert!(
            lines
                .iter()
                .any(|l| l == "rerun-if-env-changed=HIP_PLATFORM"),
            "{lines:?}"
        );
        assert!(
            !lines.iter().any(|l| l == "rerun-if-env-changed=PATH"),
            "{lines:?}"
        );
        assert_eq!(ask(Some("nvidia")).0, PathBuf::from("/r-nvidia"));
        assert_eq!(ask(None).0, PathBuf::from("/r-none"));
        // One record per value; the same value again reads its record.
        let records = || {
            (std::fs::read_dir(&cache).unwrap().flatten())
                .filter(|e| e.file_name().to_string_lossy().ends_with(".txt"))
                .count()
        };
        assert_eq!(records(), 3);
        assert_eq!(ask(Some("amd")).0, PathBuf::from("/r-amd"));
        assert_eq!(records(), 3);
    }

    #[test]
    fn hipconfig_clang_follows_the_resource_dir_version() {
        let dir = std::env::temp_dir().join(format!("offload-build-hipcfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("clang-15"), "").unwrap();
        std::fs::write(dir.join("clang-19"), "").unwrap();
        let cpp = " -D__HIP_PLATFORM_AMD__= -I/usr/include -I/usr/bin/../lib/clang/15.0.6 -I/usr/hsa/include";
        assert_eq!(hipconfig_clang(&dir, cpp), Some(dir.join("clang-15")));
        assert_eq!(hipconfig_clang(&dir, ""), None);
        std::fs::write(dir.join("clang"), "").unwrap();
        assert_eq!(hipconfig_clang(&dir, ""), Some(dir.join("clang")));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
