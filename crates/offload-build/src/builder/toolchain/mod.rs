//! Toolchain discovery: which clang compiles the device code, which ROCm / CUDA install it
//! uses, and what that compiler supports.
//!
//! The compiler is the first that exists of:
//!
//! 1. [`Build::compiler`](crate::builder::Build::compiler);
//! 2. `HIPCXX` (a path, or a name looked up on `PATH`);
//! 3. `HIP_CLANG_PATH/clang` (else the ROCm install's clang in that directory, else its
//!    newest `clang-NN`);
//! 4. the clang of a ROCm install named by `ROCM_PATH` / `HIP_PATH`;
//! 5. `CLANG` (a path, or a name looked up on `PATH`);
//! 6. the clang of the ROCm install found ([`find_rocm`]: `hipconfig`, `/opt/rocm*`, `/usr`);
//! 7. `clang-NN` on `PATH` and `/usr/lib/llvm-NN/bin/clang`, newest `NN` first, among those
//!    with `ld.lld` beside them (needed to link device code);
//! 8. `/opt/rocm/llvm/bin/clang`;
//! 9. `clang` on `PATH`.
//!
//! `HIPCXX`, `HIP_CLANG_PATH` or `CLANG` set to something that is no compiler is an error
//! naming the variable. The ROCm install is used (`--rocm-path`, …) only with the clang it was
//! built for (see [`Toolchain::rocm`]).
//!
//! What the compiler supports is asked once (`--version`, `--print-supported-cpus`) and kept in
//! the cache directory, keyed by the compiler's path, size and modification time, so an
//! unchanged rebuild starts no process.

pub(crate) mod clang;
pub(crate) mod cuda;
pub(crate) mod nvcc;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::builder::CompilerKind;
use crate::builder::Language;
use crate::builder::arch::Arch;
use crate::builder::command::{self, Domain, KeyBuilder};
use crate::builder::env::Env;
use crate::builder::error::Error;
use crate::builder::fs;
use crate::builder::process::{self, Processes};
use cuda::CudaHeaders;

/// The compiler and the installs around it.
#[derive(Clone, Debug)]
pub(crate) struct Toolchain {
    /// Which compiler it is: clang, or (CUDA) nvcc.
    pub kind: CompilerKind,
    /// The compiler (clang, or nvcc when `kind` says so).
    pub clang: PathBuf,
    /// The version line of `clang --version` (`nvcc --version`'s `release` line for nvcc).
    pub version: String,
    /// LLVM major version (0 when it cannot be read).
    pub major: u32,
    /// How the compiler was chosen (`HIPCXX`, `CLANG`, `the ROCm install's clang (…)`, …).
    pub origin: String,
    /// The ROCm install the compiles use (`--rocm-path`, …): the one found, when the compiler
    /// is the clang it was built for (or, when that is unknown, one named by `HIPCXX`,
    /// `HIP_CLANG_PATH` or [`Build::compiler`](crate::builder::Build::compiler)).
    pub rocm: Option<Rocm>,
    /// The ROCm install found, used or not (HIP only).
    pub rocm_found: Option<Rocm>,
    /// Where ROCm was looked for without success, in order (for messages).
    pub rocm_looked: Vec<String>,
    /// The CUDA toolkit's root passed with `--cuda-path`, if any: a system install, or the
    /// links directory laid out for NVIDIA's wheels ([`crate::builder::toolchain::cuda`]).
    pub cuda: Option<PathBuf>,
    /// The CUDA headers clang compiles with (CUDA only): a toolkit, or clang's builtins behind
    /// the prelude.
    pub cuda_headers: Option<CudaHeaders>,
    /// `ptxas`, when found ([`find_ptxas`]).
    pub ptxas: Option<PathBuf>,
    /// Where `ptxas` was looked for, in order (for messages).
    pub ptxas_searched: Vec<PathBuf>,
    /// Processors the compiler supports for the language's device target.
    pub supported: Vec<String>,
    /// Hash of everything that identifies the compiler.
    pub identity: u128,
    /// Directories holding helper tools (`amdgpu-arch`, `nvptx-arch`, `nvidia-smi`):
    /// the compiler's own directory, then `PATH`.
    pub tool_dirs: Vec<PathBuf>,
}

/// The Debian 12 packages of a ROCm install that offload-build uses.
pub(crate) const DEBIAN_ROCM_PACKAGES: &str = "hipcc libamdhip64-dev rocm-device-libs clang-15";

impl Toolchain {
    /// Whether the compiler is nvcc (else a clang).
    pub(crate) fn is_nvcc(&self) -> bool {
        self.kind == CompilerKind::Nvcc
    }

    /// The processors code can be built for: those the compiler supports and, with a ROCm
    /// install in use, its device libraries serve (for the default set).
    pub(crate) fn buildable(&self) -> Vec<String> {
        match &self.rocm {
            Some(r) if self.supported.is_empty() => r.served(),
            Some(r) => self
                .supported
                .iter()
                .filter(|p| r.serves(p))
                .cloned()
                .collect(),
            None => self.supported.clone(),
        }
    }

    /// The system include directories, whose headers get no `rerun-if-changed` (as `-MMD`
    /// leaves them out of a depfile): the compiler's resource directory (`<prefix>/lib/clang`
    /// of its real path, where clang looks for it), `/usr/include`, `/usr/lib/gcc`
    /// (libstdc++), the `include` directories of the ROCm install in use and the CUDA headers
    /// directories (the toolkit's `include` and what its links point to, or the prelude).
    pub(crate) fn system_include_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = vec![PathBuf::from("/usr/include"), PathBuf::from("/usr/lib/gcc")];
        let real = self.clang.canonicalize().ok();
        if let Some(prefix) = real.as_deref().and_then(|c| c.parent()?.parent()) {
            dirs.push(prefix.join("lib/clang"));
        }
        if let Some(r) = &self.rocm {
            dirs.push(r.root.join("include"));
            dirs.extend(r.hip.as_ref().map(|h| h.join("include")));
        }
        dirs.extend(self.cuda_headers.iter().flat_map(CudaHeaders::system_dirs));
        dirs.iter().map(|d| fs::lexical(d)).collect()
    }

    /// Why a source that includes `hip/hip_runtime.h` cannot be compiled: no ROCm install was
    /// found (where discovery looked, how to install one), or the one found is not used with
    /// this compiler.
    pub(crate) fn no_rocm_hint(&self) -> String {
        match &self.rocm_found {
            Some(r) => format!(
                "the source needs the HIP headers; a ROCm install was found at {} (by {}), but \
                 it is not used with {} (chosen by {}): its headers need the clang they were \
                 built for{}. Unset that choice, or set HIPCXX to that clang",
                r.root.display(),
                r.found_by,
                self.clang.display(),
                self.origin,
                r.clang
                    .as_ref()
                    .map(|c| format!(" ({})", c.display()))
                    .unwrap_or_default()
            ),
            None => format!(
                "the source needs the HIP headers, but no ROCm install was found, so it was \
                 compiled with -nogpulib -nogpuinc (no HIP headers, no device libraries). \
                 Looked at: {}. Install ROCm (Debian 12: apt-get install {DEBIAN_ROCM_PACKAGES}) \
                 or set ROCM_PATH to an install",
                self.rocm_looked.join("; ")
            ),
        }
    }
}

fn path_dirs(path: Option<&OsString>) -> Vec<PathBuf> {
    path.map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default()
}

/// A value that is a path (has a separator) or a name to look up on `PATH`.
pub(crate) fn path_or_name(
    value: &str,
    path: Option<&OsString>,
    cwd: &Path,
    searched: &mut Vec<PathBuf>,
) -> Option<PathBuf> {
    let p = Path::new(value);
    if p.components().count() > 1 || p.is_absolute() {
        searched.push(p.to_path_buf());
        return p.is_file().then(|| p.to_path_buf());
    }
    for d in path_dirs(path) {
        searched.push(d.join(value));
    }
    which::which_in(value, path, cwd).ok()
}

fn version_of(name: &str, prefix: &str) -> Option<u32> {
    let rest = name.strip_prefix(prefix)?;
    (!rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
        .then(|| rest.parse().ok())
        .flatten()
}

/// The newest `clang-NN` in `dir`, if any.
fn newest_versioned_in(dir: &Path) -> Option<PathBuf> {
    let mut best: Option<(u32, PathBuf)> = None;
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let name = e.file_name();
        if let Some(n) = name.to_str().and_then(|n| version_of(n, "clang-")) {
            if best.as_ref().is_none_or(|(b, _)| n > *b) {
                best = Some((n, e.path()));
            }
        }
    }
    best.map(|(_, p)| p)
}

/// Whether two compilers are the same installation (same directory once symlinks are
/// resolved: `clang`, `clang++` and `clang-NN` of one LLVM are).
pub(crate) fn same_install(a: &Path, b: &Path) -> bool {
    let dir = |p: &Path| {
        p.canonicalize()
            .ok()
            .and_then(|c| c.parent().map(Path::to_path_buf))
    };
    matches!((dir(a), dir(b)), (Some(x), Some(y)) if x == y)
}

/// Finds the compiler, recording every place looked at; returns it with how it was chosen.
///
/// A variable that names a compiler (`HIPCXX`, `HIP_CLANG_PATH`, `CLANG`) and names none is an
/// error ([`Error::CompilerVar`]), never a silent fallback to another clang. `rocm` (HIP only)
/// is the install discovery found: its clang comes after those variables.
fn find_clang(
    env: &Env<'_>,
    explicit: Option<&Path>,
    rocm: Option<&Rocm>,
    path: Option<&OsString>,
    cwd: &Path,
) -> Result<(PathBuf, String), Error> {
    let mut searched = Vec::new();
    if let Some(p) = explicit {
        searched.push(p.to_path_buf());
        if p.is_file() {
            return Ok((p.to_path_buf(), "Build::compiler".into()));
        }
        return Err(Error::ToolNotFound {
            tool: "clang (set with Build::compiler)".into(),
            searched,
        });
    }
    let bad_var = |var: &str, value: String, searched: Vec<PathBuf>| Error::CompilerVar {
        var: var.to_string(),
        value,
        searched,
    };
    if let Some(v) = env.get("HIPCXX") {
        let mut tried = Vec::new();
        return match path_or_name(&v, path, cwd, &mut tried) {
            Some(p) => Ok((p, "HIPCXX".into())),
            None => Err(bad_var("HIPCXX", v, tried)),
        };
    }
    if let Some(v) = env.get_os("HIP_CLANG_PATH") {
        return hip_clang_path(&v, rocm);
    }
    // A ROCm install named by ROCM_PATH / HIP_PATH brings its clang.
    if let Some(r) = rocm.filter(|r| r.from_env) {
        if let Some(c) = &r.clang {
            return Ok((
                c.clone(),
                format!("the ROCm install's clang ({})", r.found_by),
            ));
        }
    }
    if let Some(v) = env.get("CLANG") {
        let mut tried = Vec::new();
        return match path_or_name(&v, path, cwd, &mut tried) {
            Some(p) => Ok((p, "CLANG".into())),
            None => Err(bad_var("CLANG", v, tried)),
        };
    }
    if let Some(r) = rocm {
        if let Some(c) = &r.clang {
            searched.push(c.clone());
            if c.is_file() {
                return Ok((
                    c.clone(),
                    format!("the ROCm install's clang ({})", r.found_by),
                ));
            }
        }
    }
    if let Some(p) = newest_versioned(path, &mut searched) {
        return Ok((p, "the newest clang-NN with ld.lld".into()));
    }
    let rocm = PathBuf::from("/opt/rocm/llvm/bin/clang");
    searched.push(rocm.clone());
    if rocm.is_file() {
        return Ok((rocm, "/opt/rocm".into()));
    }
    if let Some(p) = path_or_name(&exe("clang"), path, cwd, &mut searched) {
        return Ok((p, "clang on PATH".into()));
    }
    Err(Error::ToolNotFound {
        tool: "clang".into(),
        searched,
    })
}

/// The compiler `HIP_CLANG_PATH` (a directory) names: its `clang`, else the ROCm install's
/// `clang-NN` there, else the newest `clang-NN` there.
fn hip_clang_path(v: &OsString, rocm: Option<&Rocm>) -> Result<(PathBuf, String), Error> {
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

/// The newest `clang-NN` on `PATH` or `/usr/lib/llvm-NN/bin/clang` (`PATH` first on a tie)
/// that has `ld.lld` beside it, recording where it looked.
fn newest_versioned(path: Option<&OsString>, searched: &mut Vec<PathBuf>) -> Option<PathBuf> {
    let mut versioned: Vec<(u32, u8, PathBuf)> = Vec::new();
    for d in path_dirs(path) {
        searched.push(d.join("clang-[0-9]*"));
        if let Ok(rd) = std::fs::read_dir(&d) {
            for e in rd.flatten() {
                let name = e.file_name();
                if let Some(n) = name.to_str().and_then(|n| version_of(n, "clang-")) {
                    versioned.push((n, 0, e.path()));
                }
            }
        }
    }
    searched.push(PathBuf::from("/usr/lib/llvm-[0-9]*/bin/clang"));
    if let Ok(rd) = std::fs::read_dir("/usr/lib") {
        for e in rd.flatten() {
            let name = e.file_name();
            if let Some(n) = name.to_str().and_then(|n| version_of(n, "llvm-")) {
                versioned.push((n, 1, e.path().join("bin/clang")));
            }
        }
    }
    versioned.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    // A versioned clang without its ld.lld (Debian's clang-NN without lld-NN) cannot link
    // device code: skip it rather than fail every compile.
    versioned
        .into_iter()
        .map(|(_, _, p)| p)
        .find(|p| p.is_file() && has_lld(p))
}

/// Whether `ld.lld` sits next to the (symlink-resolved) compiler.
fn has_lld(clang: &Path) -> bool {
    let real = clang.canonicalize().unwrap_or_else(|_| clang.to_path_buf());
    real.parent()
        .is_some_and(|d| d.join(exe("ld.lld")).is_file())
}

pub(crate) fn exe(name: &str) -> String {
    format!("{name}{}", std::env::consts::EXE_SUFFIX)
}

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
fn multiarch_lib(root: &Path) -> PathBuf {
    root.join("lib")
        .join(format!("{}-linux-gnu", std::env::consts::ARCH))
}

/// The directory with the device libraries (`ocml.bc`) of a ROCm root: `amdgcn/bitcode` under
/// the root, its `lib`, `lib/<multiarch>` (Debian), another directory of `lib`, or the resource
/// directory of its clang (ROCm 6).
fn device_lib_dir(root: &Path) -> Option<PathBuf> {
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
fn device_lib_dirs(root: &Path) -> Vec<PathBuf> {
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
fn hip_lib_dir(root: &Path) -> Option<PathBuf> {
    let has = |d: &PathBuf| d.join("libamdhip64.so").is_file();
    let first = [root.join("lib"), root.join("lib64"), multiarch_lib(root)];
    first.into_iter().find(has).or_else(|| {
        let rd = std::fs::read_dir(root.join("lib")).ok()?;
        rd.flatten().map(|e| e.path()).find(has)
    })
}

/// The install at `root`, when it has the HIP headers and the device libraries; otherwise
/// why not.
fn probe_root(root: &Path, found_by: &str, from_env: bool) -> Result<Rocm, String> {
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
        found_by: found_by.to_string(),
        from_env,
    })
}

/// What `hipconfig` says: its ROCm path and the clang its `hipcc` runs.
struct HipConfig {
    rocm: PathBuf,
    clang: Option<PathBuf>,
}

/// Runs `hipconfig --rocmpath`, `--hipclangpath` and `--cpp_config` at once (never `hipcc --version`,
/// which prints a traceback on a machine without a GPU), remembering the answers in
/// `cache_dir` keyed by the script's path, size and modification time.
fn hipconfig(p: &Processes, program: &Path, cache_dir: &Path) -> Option<HipConfig> {
    let canon = program.canonicalize().ok()?;
    let stamp = KeyBuilder::new(Domain::HipConfig)
        .file_stamp(&canon)
        .ok()?
        .finish();
    let record = cache_dir.join(format!("hipconfig-{stamp:032x}.txt"));
    let text = match std::fs::read_to_string(&record) {
        Ok(t) if t.lines().count() == 3 => t,
        _ => {
            let ask = |flag: &str| {
                process::probe(p, Command::new(program).arg(flag))
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
            t
        }
    };
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
fn hipconfig_clang(dir: &Path, cpp_config: &str) -> Option<PathBuf> {
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
fn find_rocm_in(
    env: &Env<'_>,
    path: Option<&OsString>,
    cwd: &Path,
    cache_dir: &Path,
    roots: &[PathBuf],
) -> (Option<Rocm>, Vec<String>) {
    let mut looked = Vec::new();
    let hipconfig = match which::which_in(exe("hipconfig"), path, cwd) {
        Ok(p) => {
            let c = hipconfig(env.processes(), &p, cache_dir);
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

fn same_dir(a: &Path, b: &Path) -> bool {
    matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// A CUDA install on the system, with how it was found: `CUDA_PATH`, `CUDA_HOME`,
/// `CUDA_ROOT`, `/usr/local/cuda`, then the install of `nvcc` on `PATH` (`<root>/bin/nvcc`).
/// An install has `include/cuda.h` and `nvvm/libdevice`; every place looked at without one is
/// recorded in `looked` (for messages). NVIDIA's wheels are looked for after this
/// ([`crate::builder::toolchain::cuda::find`]).
pub(crate) fn find_cuda(
    env: &Env<'_>,
    path: Option<&OsString>,
    cwd: &Path,
    looked: &mut Vec<String>,
) -> Option<(PathBuf, String)> {
    let ok = |r: &Path| r.join("include/cuda.h").is_file() && r.join("nvvm/libdevice").is_dir();
    const NOT_ONE: &str = "no include/cuda.h and nvvm/libdevice";
    for var in ["CUDA_PATH", "CUDA_HOME", "CUDA_ROOT"] {
        match env.get_os(var) {
            Some(v) if ok(Path::new(&v)) => return Some((PathBuf::from(v), var.to_string())),
            Some(v) => looked.push(format!("{var}={} ({NOT_ONE})", Path::new(&v).display())),
            None => looked.push(format!("{var} (unset)")),
        }
    }
    let usr = Path::new("/usr/local/cuda");
    if ok(usr) {
        return Some((usr.to_path_buf(), "/usr/local/cuda".into()));
    }
    looked.push(format!("/usr/local/cuda ({NOT_ONE})"));
    let Ok(nvcc) = which::which_in(exe("nvcc"), path, cwd) else {
        looked.push("nvcc on PATH (not found)".into());
        return None;
    };
    let root = nvcc
        .canonicalize()
        .ok()
        .and_then(|n| Some(n.parent()?.parent()?.to_path_buf()));
    match root {
        Some(r) if ok(&r) => Some((r, format!("nvcc on PATH ({})", nvcc.display()))),
        _ => {
            looked.push(format!("{} ({NOT_ONE} in its install)", nvcc.display()));
            None
        }
    }
}

/// The directories of NVIDIA's Python wheels that hold the CUDA tools (`ptxas`, `nvcc`) under
/// a `site-packages`: `nvidia/cuda_nvcc/bin` (CUDA 12's `nvidia-cuda-nvcc-cu12`), then
/// `nvidia/cu13/bin` (CUDA 13's `nvidia-cuda-nvcc`).
pub(crate) const WHEEL_BIN_DIRS: &[&str] = &["nvidia/cuda_nvcc/bin", "nvidia/cu13/bin"];

/// Finds `ptxas`, recording every place looked at: [`Build::ptxas`](crate::builder::Build::ptxas);
/// `PTXAS` (a path or a name on `PATH`; naming none is an error, not a fallback); the CUDA install's
/// `bin/ptxas`; `ptxas` on `PATH`; NVIDIA's wheels ([`WHEEL_BIN_DIRS`]) in the virtualenv of
/// `VIRTUAL_ENV` (`lib/python3*/site-packages`), then in the `site-packages` of the `python3`
/// on `PATH` (asked with a 30 s timeout).
pub(crate) fn find_ptxas(
    env: &Env<'_>,
    explicit: Option<&Path>,
    cuda: Option<&Path>,
    path: Option<&OsString>,
    cwd: &Path,
) -> Result<(Option<PathBuf>, Vec<PathBuf>), Error> {
    let mut searched = Vec::new();
    if let Some(p) = explicit {
        searched.push(p.to_path_buf());
        if p.is_file() {
            return Ok((Some(p.to_path_buf()), searched));
        }
        return Err(Error::ToolNotFound {
            tool: "ptxas (set with Build::ptxas)".into(),
            searched,
        });
    }
    if let Some(v) = env.get("PTXAS") {
        let mut tried = Vec::new();
        return match path_or_name(&v, path, cwd, &mut tried) {
            Some(p) => Ok((Some(p), tried)),
            None => Err(Error::ToolNotFound {
                tool: format!("ptxas (PTXAS=`{v}` names none; it is not looked for elsewhere)"),
                searched: tried,
            }),
        };
    }
    if let Some(c) = cuda {
        let p = c.join("bin").join(exe("ptxas"));
        searched.push(p.clone());
        if p.is_file() {
            return Ok((Some(p), searched));
        }
    }
    if let Some(p) = path_or_name(&exe("ptxas"), path, cwd, &mut searched) {
        return Ok((Some(p), searched));
    }
    let found = wheel_tool(env, "ptxas", path, cwd, &mut searched);
    Ok((found, searched))
}

/// The tool `name` (`ptxas`, `nvcc`) from NVIDIA's wheels ([`WHEEL_BIN_DIRS`]): in the
/// virtualenv of `VIRTUAL_ENV` ([`venv_site_packages`]), then in the `site-packages` of the
/// `python3` on `PATH` ([`python_site_packages`]); every place looked at is recorded.
pub(crate) fn wheel_tool(
    env: &Env<'_>,
    name: &str,
    path: Option<&OsString>,
    cwd: &Path,
    searched: &mut Vec<PathBuf>,
) -> Option<PathBuf> {
    let in_site = |site: &Path, searched: &mut Vec<PathBuf>| -> Option<PathBuf> {
        WHEEL_BIN_DIRS.iter().find_map(|d| {
            let p = site.join(d).join(exe(name));
            searched.push(p.clone());
            p.is_file().then_some(p)
        })
    };
    for site in venv_site_packages(env) {
        if let Some(p) = in_site(&site, searched) {
            return Some(p);
        }
    }
    python_site_packages(env, path, cwd)
        .iter()
        .find_map(|site| in_site(site, searched))
}

/// The `site-packages` directories of the virtualenv `VIRTUAL_ENV` names, if any:
/// `lib/python3*/site-packages` (newest first; `lib/python3/site-packages` when there is none),
/// then Windows' `Lib/site-packages`.
pub(crate) fn venv_site_packages(env: &Env<'_>) -> Vec<PathBuf> {
    let Some(venv) = env.get_os("VIRTUAL_ENV") else {
        return Vec::new();
    };
    let lib = Path::new(&venv).join("lib");
    let mut sites: Vec<PathBuf> = std::fs::read_dir(&lib)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
                .map(|e| e.path().join("site-packages"))
                .collect()
        })
        .unwrap_or_default();
    sites.sort();
    sites.reverse();
    if sites.is_empty() {
        sites.push(lib.join("python3/site-packages"));
    }
    // Windows virtualenvs: Lib/site-packages.
    sites.push(Path::new(&venv).join("Lib").join("site-packages"));
    sites
}

/// The `site-packages` directories of the `python3` on `PATH` (`site.getsitepackages()` and
/// the user's), asked with the probe timeout once per `python3` in a process (the CUDA toolkit
/// and `ptxas` are both looked for there); empty without a `python3`.
pub(crate) fn python_site_packages(
    env: &Env<'_>,
    path: Option<&OsString>,
    cwd: &Path,
) -> Vec<PathBuf> {
    type Answers = std::sync::Mutex<Vec<(PathBuf, Vec<PathBuf>)>>;
    static ASKED: std::sync::OnceLock<Answers> = std::sync::OnceLock::new();
    let Ok(python) = which::which_in(exe("python3"), path, cwd) else {
        return Vec::new();
    };
    let asked = ASKED.get_or_init(Default::default);
    let known = asked.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, sites)) = known.iter().find(|(p, _)| *p == python) {
        return sites.clone();
    }
    drop(known);
    let mut cmd = Command::new(&python);
    cmd.args([
        "-c",
        "import site, sys\n\
         for p in site.getsitepackages() + [site.getusersitepackages()]: print(p)",
    ]);
    let sites: Vec<PathBuf> = match process::probe(env.processes(), &mut cmd) {
        Ok(Some(o)) => String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| PathBuf::from(l.trim()))
            .filter(|p| p.is_absolute())
            .collect(),
        _ => Vec::new(),
    };
    let mut known = asked.lock().unwrap_or_else(|e| e.into_inner());
    known.push((python, sites.clone()));
    sites
}

fn parse_major(version: &str) -> u32 {
    version
        .split("version ")
        .nth(1)
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.trim().parse().ok())
        .unwrap_or(0)
}

/// Parses `--print-supported-cpus` output: the tab-indented lines after the heading.
pub(crate) fn parse_supported(text: &str, lang: Language) -> Vec<String> {
    let prefix = match lang {
        Language::Hip => "gfx",
        Language::Cuda => "sm_",
    };
    let mut v: Vec<String> = text
        .lines()
        .skip_while(|l| !l.starts_with("Available CPUs"))
        .filter(|l| l.starts_with('\t') || l.starts_with(' '))
        .map(|l| l.trim().to_string())
        .filter(|l| l.starts_with(prefix))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// What the compiler says about itself (`--version`, `--print-supported-cpus` for the
/// language's device target), asked once and kept in `cache_dir` under a stamp of the
/// compiler file (path, size, modification time): the stamp, the version line and the
/// processors.
fn compiler_info(
    env: &Env<'_>,
    clang: &Path,
    kind: CompilerKind,
    lang: Language,
    cache_dir: &Path,
) -> Result<(u128, String, Vec<String>), Error> {
    let stamp = KeyBuilder::new(Domain::CompilerStamp)
        .file_stamp(clang)
        .map_err(|e| Error::io("reading", clang, e))?
        .str(&format!(
            "{lang:?}{}",
            if kind == CompilerKind::Nvcc {
                " nvcc (with the sm_NNa variants)"
            } else {
                ""
            }
        ))
        .finish();
    let info_path = cache_dir.join(format!("compiler-{stamp:032x}.txt"));
    if let Ok(text) = std::fs::read_to_string(&info_path) {
        if let Some((v, s)) = text.split_once("\n--\n") {
            return Ok((
                stamp,
                v.to_string(),
                s.lines().map(str::to_string).collect(),
            ));
        }
    }
    // The two questions at once: each starts the compiler.
    let (version, supported) = std::thread::scope(|scope| {
        let version = scope.spawn(|| {
            let mut version = command::Command::new(clang);
            version.add_arg("--version");
            run_text(env.processes(), &mut version.to_command(), clang)
        });
        let supported = if kind == CompilerKind::Nvcc {
            let mut codes = command::Command::new(clang);
            codes.add_arg("--list-gpu-code");
            run_text(env.processes(), &mut codes.to_command(), clang)
                .map(|codes| nvcc::parse_gpu_code(&codes))
        } else {
            supported_cpus(env, clang, lang)
        };
        let version = version
            .join()
            .unwrap_or_else(|_| Err(Error::Config("a compiler probe failed".into())));
        (version, supported)
    });
    let version = version?;
    let supported = supported?;
    let version = if kind == CompilerKind::Nvcc {
        nvcc::version_line(&version)
    } else {
        version.lines().next().unwrap_or_default().to_string()
    };
    // Atomically: builds sharing the cache read it while another writes it.
    let _ = fs::write_atomic(
        &info_path,
        format!("{version}\n--\n{}", supported.join("\n")).as_bytes(),
    );
    Ok((stamp, version, supported))
}

/// The processors clang supports for `lang`'s device target (`--print-supported-cpus`).
fn supported_cpus(env: &Env<'_>, clang: &Path, lang: Language) -> Result<Vec<String>, Error> {
    let mut cpus = command::Command::new(clang);
    cpus.add_arg(match lang {
        Language::Hip => "--target=amdgcn-amd-amdhsa",
        Language::Cuda => "--target=nvptx64-nvidia-cuda",
    })
    .add_args(["-nogpulib", "--print-supported-cpus"]);
    let text = run_text(env.processes(), &mut cpus.to_command(), clang)?;
    Ok(parse_supported(&text, lang))
}

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
fn discover_nvcc(
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
fn discover_clang(
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

/// stdout and stderr of a probe of the compiler, or empty when it cannot run; an error when
/// it runs past [`process::PROBE_TIMEOUT`] (a compiler that hangs).
fn run_text(p: &Processes, cmd: &mut Command, clang: &Path) -> Result<String, Error> {
    let args: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    match process::probe(p, cmd) {
        Ok(Some(o)) => {
            let mut s = String::from_utf8_lossy(&o.stdout).into_owned();
            s.push_str(&String::from_utf8_lossy(&o.stderr));
            Ok(s)
        }
        Ok(None) => Ok(String::new()),
        Err(()) => Err(Error::Config(format!(
            "`{} {}` did not answer within {} s and was killed: is it a working compiler?",
            clang.display(),
            args.join(" "),
            process::PROBE_TIMEOUT.as_secs()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            kind: CompilerKind::Clang,
            clang: PathBuf::from("/usr/lib/llvm-19/bin/clang"),
            version: String::new(),
            major: 19,
            origin: "CLANG".into(),
            rocm: None,
            rocm_found,
            rocm_looked: looked,
            cuda: None,
            cuda_headers: None,
            ptxas: None,
            ptxas_searched: Vec::new(),
            supported: Vec::new(),
            identity: 0,
            tool_dirs: Vec::new(),
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
