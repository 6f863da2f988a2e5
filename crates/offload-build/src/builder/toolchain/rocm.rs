//! A ROCm install: where it is found (`ROCM_PATH`, `HIP_PATH`, `hipconfig`, `/opt/rocm*`,
//! `/usr`), its clang, its device libraries, and the arguments that point clang at it.

use crate::builder::command::{Domain, KeyBuilder};
use crate::builder::env::Env;
use crate::builder::error::Error;
use crate::builder::fs;
use crate::builder::process;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::builder::toolchain::paths::{exe, newest_versioned_in, same_dir};

/// The Debian 12 packages of a ROCm install that offload-build uses.
pub(crate) const DEBIAN_ROCM_PACKAGES: &str = "hipcc libamdhip64-dev rocm-device-libs clang-15";

/// A ROCm install: HIP headers, the device libraries and, when known, the clang it was built
/// for (see [`find_rocm`]).
#[derive(Clone, Debug)]
pub(crate) struct Rocm {
    /// The install root, passed with `--rocm-path` (`/opt/rocm`, or `/usr` for the distro
    /// layout).
    pub root: PathBuf,
    /// A HIP directory apart from the root (`<rocm>/hip` of older installs), passed with
    /// `--hip-path`. `None` when the headers are the root's: clang 15 rejects `--hip-path=/usr`.
    pub hip: Option<PathBuf>,
    /// The device libraries (`ocml.bc`, `oclc_isa_version_<N>.bc`, …), passed with
    /// `--rocm-device-lib-path`.
    pub device_libs: PathBuf,
    /// The clang the install was built for, when known (`<root>/llvm/bin/clang`, or the clang
    /// `hipconfig` reports).
    pub clang: Option<PathBuf>,
    /// The directory holding `libamdhip64.so`, when there is one.
    pub hip_lib_dir: Option<PathBuf>,
    /// HIP's version as the install's `bin/.hipVersion` or `share/hip/version` gives it
    /// (`6.1.40091`), passed with `--hip-version` as hipcc passes it ([`hip_version`]).
    pub version: Option<String>,
    /// How it was found (`ROCM_PATH`, `hipconfig`, `/opt/rocm`, `/usr`).
    pub found_by: String,
    /// Whether `ROCM_PATH` or `HIP_PATH` named it.
    pub from_env: bool,
}

impl Rocm {
    /// The processors the device libraries serve (from `oclc_isa_version_<N>.bc`), sorted.
    pub(crate) fn served(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.device_libs)
            .map(|rd| {
                rd.flatten()
                    .filter_map(|e| {
                        let n = e.file_name().into_string().ok()?;
                        let isa = n.strip_prefix("oclc_isa_version_")?.strip_suffix(".bc")?;
                        Some(format!("gfx{isa}"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        v.sort_by(|a, b| (a.len(), a).cmp(&(b.len(), b)));
        v
    }

    /// Whether the device libraries serve `processor` (`gfx90a`; features stripped).
    pub(crate) fn serves(&self, processor: &str) -> bool {
        processor.strip_prefix("gfx").is_some_and(|isa| {
            self.device_libs
                .join(format!("oclc_isa_version_{isa}.bc"))
                .is_file()
        })
    }

    /// The arguments that point the compiler at this install, as `hipcc` passes them.
    pub(crate) fn args(&self) -> Vec<String> {
        let mut v = vec![format!("--rocm-path={}", self.root.display())];
        if let Some(h) = &self.hip {
            v.push(format!("--hip-path={}", h.display()));
        }
        // hipcc's `--hip-version` ([`hip_version`]): clang reads `bin/.hipVersion` itself, not
        // the distro layout's file; said explicitly for the PCH stage too.
        if let Some(version) = &self.version {
            v.push(format!("--hip-version={version}"));
        }
        v.push(format!(
            "--rocm-device-lib-path={}",
            self.device_libs.display()
        ));
        v.extend(self.codegen_args());
        v
    }

    /// hipcc's code-generation options: everything inlined into the kernels (ROCm's default).
    pub(crate) fn codegen_args(&self) -> Vec<String> {
        [
            "-mllvm",
            "-amdgpu-early-inline-all=true",
            "-mllvm",
            "-amdgpu-function-calls=false",
        ]
        .map(String::from)
        .to_vec()
    }
}

/// `lib/<multiarch>` of a root, Debian's place for libraries and the device libraries
/// (`lib/x86_64-linux-gnu`): looked at before the other directories of `lib`, which are listed
/// only when it has not the file sought (`/usr/lib` has a hundred of them).
pub(crate) fn multiarch_lib(root: &Path) -> PathBuf {
    root.join("lib")
        .join(format!("{}-linux-gnu", std::env::consts::ARCH))
}

/// The directory with the device libraries (`ocml.bc`) of a ROCm root: `amdgcn/bitcode` under
/// the root, its `lib`, `lib/<multiarch>` (Debian), another directory of `lib`, or the resource
/// directory of its clang (ROCm 6).
pub(crate) fn device_lib_dir(root: &Path) -> Option<PathBuf> {
    let has = |d: &PathBuf| d.join("ocml.bc").is_file();
    let first = [
        root.join("amdgcn/bitcode"),
        root.join("lib/amdgcn/bitcode"),
        multiarch_lib(root).join("amdgcn/bitcode"),
    ];
    first
        .into_iter()
        .find(has)
        .or_else(|| device_lib_dirs(root).into_iter().find(has))
}

/// The other places [`device_lib_dir`] looks, in order.
pub(crate) fn device_lib_dirs(root: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    let mut subdirs = |base: PathBuf, tail: &str| {
        if let Ok(rd) = std::fs::read_dir(&base) {
            let mut found: Vec<PathBuf> = rd.flatten().map(|e| e.path().join(tail)).collect();
            found.sort();
            found.reverse();
            v.extend(found);
        }
    };
    subdirs(root.join("lib"), "amdgcn/bitcode");
    subdirs(root.join("lib/llvm/lib/clang"), "lib/amdgcn/bitcode");
    subdirs(root.join("llvm/lib/clang"), "lib/amdgcn/bitcode");
    v
}

/// The directory with `libamdhip64.so` of a ROCm root: its `lib`, `lib64`, `lib/<multiarch>`
/// or another directory of `lib`.
pub(crate) fn hip_lib_dir(root: &Path) -> Option<PathBuf> {
    let has = |d: &PathBuf| d.join("libamdhip64.so").is_file();
    let first = [root.join("lib"), root.join("lib64"), multiarch_lib(root)];
    first.into_iter().find(has).or_else(|| {
        let rd = std::fs::read_dir(root.join("lib")).ok()?;
        rd.flatten().map(|e| e.path()).find(has)
    })
}

/// The install at `root`, when it has the HIP headers and the device libraries; otherwise
/// why not.
pub(crate) fn probe_root(root: &Path, found_by: &str, from_env: bool) -> Result<Rocm, String> {
    if !root.join("include/hip/hip_runtime.h").is_file() {
        return Err(format!("{} (no include/hip/hip_runtime.h)", root.display()));
    }
    let Some(device_libs) = device_lib_dir(root) else {
        return Err(format!(
            "{} (HIP headers, but no device libraries: no amdgcn/bitcode/ocml.bc under it)",
            root.display()
        ));
    };
    let clang = [root.join("llvm/bin/clang"), root.join("lib/llvm/bin/clang")]
        .into_iter()
        .find(|c| c.is_file());
    Ok(Rocm {
        root: root.to_path_buf(),
        hip: None,
        device_libs,
        clang,
        hip_lib_dir: hip_lib_dir(root),
        version: hip_version(&[root]),
        found_by: found_by.to_string(),
        from_env,
    })
}

/// HIP's version (`major.minor.patch`) as hipcc passes it with `--hip-version`: from the first
/// `bin/.hipVersion` (the file clang also reads itself) or, in the distro layout (Debian's
/// ROCm 5.2, whose hipcc passes `--hip-version=5.2.21153`), `share/hip/version`, of the
/// directories given (a HIP directory, a ROCm root). Without it clang 15 takes Debian's HIP
/// for 3.5, does not pre-include its HIP runtime wrapper, and compiles some functions of
/// `<hip/hip_fp16.h>` and the math headers (`__frcp_rn`, `__frsqrt_rn`, `__drcp_rn`) other
/// than hipcc. With it the wrapper is pre-included, which keeps some device compiles off PCH
/// ([`crate::builder::pch::job::preincludes_hip_wrapper`]). `None` when no file gives the
/// three numbers.
pub(crate) fn hip_version(dirs: &[&Path]) -> Option<String> {
    dirs.iter()
        .flat_map(|d| [d.join("bin/.hipVersion"), d.join("share/hip/version")])
        .find_map(|f| {
            let text = std::fs::read_to_string(f).ok()?;
            let field = |key: &str| {
                text.lines().find_map(|l| {
                    let (k, v) = l.split_once('=')?;
                    let v = v.trim();
                    (k.trim() == key && !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                        .then(|| v.to_string())
                })
            };
            Some(format!(
                "{}.{}.{}",
                field("HIP_VERSION_MAJOR")?,
                field("HIP_VERSION_MINOR")?,
                field("HIP_VERSION_PATCH")?
            ))
        })
}

/// What `hipconfig` says: its ROCm path and the clang its `hipcc` runs.
pub(crate) struct HipConfig {
    pub(crate) rocm: PathBuf,
    clang: Option<PathBuf>,
}

/// The variables `hipconfig` (its `hipvars.pm`) reads to choose the platform, the install and
/// its clang; with `PATH`, where it looks for `clang++` and `nvcc` when `HIP_PLATFORM` is
/// unset. Its answers are remembered under their values.
pub(crate) const HIPCONFIG_VARS: &[&str] = &[
    "HIP_PLATFORM",
    "HIP_PATH",
    "ROCM_PATH",
    "HIP_CLANG_PATH",
    "HIP_COMPILER",
    "HIP_RUNTIME",
    "HIP_ROCCLR_HOME",
    "HSA_PATH",
    "CUDA_PATH",
    "PATH",
];

/// Runs `hipconfig --rocmpath`, `--hipclangpath` and `--cpp_config` at once (never `hipcc --version`,
/// which prints a traceback on a machine without a GPU), remembering the answers in
/// `cache_dir` keyed by the script's path, size and modification time and by the values of
/// [`HIPCONFIG_VARS`], which it is run with (each but `PATH` recorded as a rerun directive:
/// `HIP_PLATFORM=nvidia` changes the answer).
pub(crate) fn hipconfig(env: &Env<'_>, program: &Path, cache_dir: &Path) -> Option<HipConfig> {
    let p = env.processes();
    let canon = program.canonicalize().ok()?;
    let mut key = KeyBuilder::new(Domain::HipConfig);
    key.file_stamp(&canon).ok()?;
    // The values keyed are the values the script is given.
    let mut vars: Vec<(&str, Option<OsString>)> = Vec::new();
    for &name in HIPCONFIG_VARS {
        // PATH keys the answer but names no rerun directive (Cargo's own PATH differs from
        // one shell to the next; the discovery of the build script's next run looks again).
        let value = if name == "PATH" {
            env.peek(&[name]).pop().map(|(_, v)| v)
        } else {
            env.get_os(name)
        };
        key.str(name);
        match &value {
            Some(v) => key.u64(1).os(v),
            None => key.u64(0),
        };
        vars.push((name, value));
    }
    let stamp = key.finish();
    let record = cache_dir.join(format!("hipconfig-{stamp:032x}.txt"));
    let read = || {
        std::fs::read_to_string(&record)
            .ok()
            .filter(|t| t.lines().count() == 3)
    };
    let text = crate::builder::cache::read_or_ask(&record, read, || {
        let ask = |flag: &str| {
            let mut cmd = Command::new(program);
            for (name, value) in &vars {
                match value {
                    Some(v) => cmd.env(name, v),
                    None => cmd.env_remove(name),
                };
            }
            process::probe(p, cmd.arg(flag))
                .ok()
                .flatten()
                .filter(|o| o.status.success())
                .map(|o| {
                    String::from_utf8_lossy(&o.stdout)
                        .replace('\n', " ")
                        .trim()
                        .to_string()
                })
        };
        // Three runs of a Perl script that each start the compiler: at once.
        let (rocm, clang_dir, cpp) = std::thread::scope(|s| {
            let rocm = s.spawn(|| ask("--rocmpath"));
            let clang_dir = s.spawn(|| ask("--hipclangpath"));
            let cpp = ask("--cpp_config");
            let join =
                |h: std::thread::ScopedJoinHandle<'_, Option<String>>| h.join().ok().flatten();
            (join(rocm), join(clang_dir), cpp)
        });
        let t = format!(
            "{}\n{}\n{}\n",
            rocm?,
            clang_dir.unwrap_or_default(),
            cpp.unwrap_or_default()
        );
        let _ = fs::write_atomic(&record, t.as_bytes());
        Some(t)
    })?;
    let mut lines = text.lines();
    let rocm = PathBuf::from(lines.next()?.trim());
    let clang_dir = lines.next().map(str::trim).unwrap_or_default();
    let cpp = lines.next().unwrap_or_default();
    let clang = (!clang_dir.is_empty())
        .then(|| hipconfig_clang(Path::new(clang_dir), cpp))
        .flatten();
    Some(HipConfig { rocm, clang })
}

/// The clang in `dir` that `hipcc` runs: `clang-<major>` when the version of its resource
/// directory shows in `cpp_config` (`-I/usr/bin/../lib/clang/15.0.6`; Debian's `hipcc` runs
/// `/usr/bin/clang++-15`), else `clang`.
pub(crate) fn hipconfig_clang(dir: &Path, cpp_config: &str) -> Option<PathBuf> {
    let major = cpp_config
        .split("lib/clang/")
        .nth(1)
        .and_then(|v| v.split(['.', ' ', '/']).next())
        .and_then(|m| m.parse::<u32>().ok());
    let versioned = major.map(|m| dir.join(exe(&format!("clang-{m}"))));
    versioned
        .into_iter()
        .chain([dir.join(exe("clang"))])
        .find(|p| p.is_file())
}

/// Finds a ROCm install (for HIP), recording where it looked: `ROCM_PATH`, `HIP_PATH` (or its
/// parent), `hipconfig` on `PATH`, `/opt/rocm`, `/opt/rocm-*` (newest first) and the distro
/// layout under `/usr` (`/usr/include/hip`, `/usr/lib/<multiarch>/amdgcn/bitcode`). An install
/// needs `include/hip/hip_runtime.h` and the device libraries (`ocml.bc`).
pub(crate) fn find_rocm(
    env: &Env<'_>,
    path: Option<&OsString>,
    cwd: &Path,
    cache_dir: &Path,
) -> (Option<Rocm>, Vec<String>) {
    let mut roots = vec![PathBuf::from("/opt/rocm")];
    if let Ok(rd) = std::fs::read_dir("/opt") {
        let mut more: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("rocm-"))
            })
            .collect();
        more.sort();
        more.reverse();
        roots.extend(more);
    }
    roots.push(PathBuf::from("/usr"));
    find_rocm_in(env, path, cwd, cache_dir, &roots)
}

/// [`find_rocm`] with the fixed places to look at given (`/opt/rocm*`, `/usr`).
pub(crate) fn find_rocm_in(
    env: &Env<'_>,
    path: Option<&OsString>,
    cwd: &Path,
    cache_dir: &Path,
    roots: &[PathBuf],
) -> (Option<Rocm>, Vec<String>) {
    let mut looked = Vec::new();
    let hipconfig = match which::which_in(exe("hipconfig"), path, cwd) {
        Ok(p) => {
            let c = hipconfig(env, &p, cache_dir);
            if c.is_none() {
                looked.push(format!("{} (no answer to --rocmpath)", p.display()));
            }
            c
        }
        Err(_) => {
            looked.push("hipconfig on PATH (not found)".into());
            None
        }
    };
    // The clang of an install: its own (llvm/bin/clang), else the one hipconfig reports
    // when hipconfig describes that same install.
    let with_clang = |mut r: Rocm| {
        if r.clang.is_none() {
            if let Some(h) = &hipconfig {
                if h.rocm.canonicalize().ok() == r.root.canonicalize().ok() {
                    r.clang = h.clang.clone();
                }
            }
        }
        r
    };
    for var in ["ROCM_PATH", "HIP_PATH"] {
        let Some(v) = env.get_os(var) else {
            looked.push(format!("{var} (unset)"));
            continue;
        };
        let root = PathBuf::from(&v);
        match probe_root(&root, var, true) {
            Ok(r) => return (Some(with_clang(r)), looked),
            Err(why) => {
                // HIP_PATH of older installs is <rocm>/hip.
                if var == "HIP_PATH" && root.join("include/hip/hip_runtime.h").is_file() {
                    if let Some(parent) = root.parent() {
                        if let Ok(mut r) = probe_root(parent, var, true) {
                            if !same_dir(parent, &root) {
                                r.version = hip_version(&[&root, parent]);
                                r.hip = Some(root.clone());
                            }
                            return (Some(with_clang(r)), looked);
                        }
                    }
                }
                looked.push(format!("{var}={why}"));
            }
        }
    }
    if let Some(h) = &hipconfig {
        match probe_root(&h.rocm, "hipconfig", false) {
            Ok(r) => return (Some(with_clang(r)), looked),
            Err(why) => looked.push(format!("hipconfig --rocmpath: {why}")),
        }
    }
    for root in roots {
        let by = root.display().to_string();
        match probe_root(root, &by, false) {
            Ok(r) => return (Some(with_clang(r)), looked),
            Err(why) => looked.push(why),
        }
    }
    (None, looked)
}

/// The compiler `HIP_CLANG_PATH` (a directory) names: its `clang`, else the ROCm install's
/// `clang-NN` there, else the newest `clang-NN` there.
pub(crate) fn hip_clang_path(
    v: &OsString,
    rocm: Option<&Rocm>,
) -> Result<(PathBuf, String), Error> {
    let dir = PathBuf::from(&v);
    let plain = dir.join(exe("clang"));
    if plain.is_file() {
        return Ok((plain, "HIP_CLANG_PATH".into()));
    }
    // Debian's HIP_CLANG_PATH is /usr/bin, which holds clang-15 (and other clang-NN) but no
    // plain clang: the ROCm install's own clang when it lives there, else the newest.
    let canon_dir = dir.canonicalize().ok();
    if let Some(c) = rocm.and_then(|r| r.clang.as_ref()).filter(|c| {
        c.parent()
            .and_then(|d| d.canonicalize().ok())
            .is_some_and(|d| Some(d) == canon_dir)
    }) {
        return Ok((c.clone(), "HIP_CLANG_PATH".into()));
    }
    if let Some(p) = newest_versioned_in(&dir) {
        return Ok((p, "HIP_CLANG_PATH".into()));
    }
    Err(Error::CompilerVar {
        var: "HIP_CLANG_PATH".into(),
        value: v.to_string_lossy().into_owned(),
        searched: vec![plain, dir.join("clang-[0-9]*")],
    })
}
