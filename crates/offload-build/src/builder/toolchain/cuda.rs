//! The CUDA headers clang compiles CUDA sources with ([`CudaHeaders`]): a CUDA toolkit, or,
//! without one, clang's own CUDA builtin headers behind this crate's prelude.
//!
//! The toolkit is a system install ([`toolchain::find_cuda`](crate::builder::toolchain::cuda::find_cuda): `CUDA_PATH`, `CUDA_HOME`,
//! `CUDA_ROOT`, `/usr/local/cuda`, `nvcc` on `PATH`), else NVIDIA's pip wheels in the
//! virtualenv of `VIRTUAL_ENV`, else in `python3`'s `site-packages`: CUDA 13's one tree
//! `nvidia/cu13/{bin,include,include/cccl,nvvm,lib}`, or CUDA 12's split wheels
//! (`nvidia/cuda_nvcc`, `nvidia/cuda_runtime/include`, `nvidia/cuda_cccl/include`, …).
//! clang's `--cuda-path` wants one root (`bin`, `include`, `nvvm/libdevice`, `lib`, the
//! version in `include/cuda.h`), so a toolkit whose headers are spread (the wheels; CUDA 13,
//! whose CCCL is under `include/cccl`; one without cuRAND's headers, which clang's
//! `__clang_cuda_runtime_wrapper.h` includes unconditionally) is laid out as a directory of
//! links in the cache, `cuda-toolkit-<key>` (the key covers the directories linked to and
//! their stamps; made in a temporary directory and renamed, so builds sharing the cache are
//! safe): `bin`, `nvvm`, `lib` link to the toolkit's, and `include` holds a link to every
//! entry of each include directory (the first one wins; directories of the same name are
//! merged), plus an empty `curand_mtgp32_kernel.h` when no cuRAND headers exist.
//!
//! A toolkit newer than the clang knows ([`newest_supported`]) is used with
//! `-Wno-unknown-cuda-version` and one warning per build; a compile that fails then gets a
//! hint naming both versions (and CUDA 13's `ptxas` refusing a GPU older than `sm_75` gets one
//! saying so). Without a toolkit, every compile force-includes the prelude
//! (`cuda_prelude.h`, written once into the cache), keeping `-nocudainc -nocudalib`, with one
//! warning per build; a source that includes a toolkit header then fails with a hint saying
//! where a toolkit was looked for and how to get one.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::builder::cache::settle_written;
use crate::builder::command::{Domain, KeyBuilder};
use crate::builder::env::{Directives, Env};
use crate::builder::error::Error;
use crate::builder::fs;
use crate::builder::toolchain::paths::{exe, python_site_packages, venv_site_packages};

/// The prelude force-included without a toolkit.
const PRELUDE: &str = include_str!("cuda_prelude.h");

/// Changes whenever the layout of a links directory changes (part of its key).
const LAYOUT: &str = "cuda-toolkit layout 1";

/// The pip wheels that make a CUDA toolkit for clang (CUDA 13).
pub(crate) const CUDA_WHEELS: &str =
    "nvidia-cuda-nvcc nvidia-nvvm nvidia-cuda-runtime nvidia-cuda-crt nvidia-cuda-cccl";

/// The newest CUDA release each clang major knows (its `CudaVersion::PARTIALLY_SUPPORTED` in
/// `clang/include/clang/Basic/Cuda.h`); a newer toolkit makes clang warn
/// (`-Wunknown-cuda-version`) and, for CUDA 13 with clang 19, fail on its headers. Measured
/// (clang's own warning with a toolkit of version 99.0): 15, 19, 22; read in `Cuda.h` of the
/// 18 branch: 18; from LLVM's and CCCL's history (the commits adding 11.8, 12.1, 12.8 and
/// CCCL's per-clang PTX ISA table): 16, 17, 20, 21.
const NEWEST_SUPPORTED: &[(u32, (u32, u32))] = &[
    (15, (11, 5)),
    (16, (11, 8)),
    (17, (12, 1)),
    (18, (12, 3)),
    (19, (12, 5)),
    (20, (12, 8)),
    (21, (12, 8)),
    (22, (12, 9)),
];

/// The newest CUDA release clang `major` knows, when this crate knows it.
pub(crate) fn newest_supported(major: u32) -> Option<(u32, u32)> {
    NEWEST_SUPPORTED
        .iter()
        .find(|(m, _)| *m == major)
        .map(|(_, v)| *v)
}

/// The CUDA headers of a CUDA build with clang.
#[derive(Clone, Debug)]
pub(crate) enum CudaHeaders {
    /// A CUDA toolkit, passed with `--cuda-path`.
    Toolkit(Toolkit),
    /// No toolkit: clang's builtin headers behind the prelude (`-include`).
    Builtins {
        /// The prelude in the cache directory.
        prelude: PathBuf,
        /// Where a toolkit was looked for, in order (for messages).
        looked: Vec<String>,
    },
}

/// A CUDA toolkit clang compiles with.
#[derive(Clone, Debug)]
pub(crate) struct Toolkit {
    /// The root passed with `--cuda-path`: the install, or the links directory.
    pub root: PathBuf,
    /// The toolkit's own directory (the install, or the wheels' `nvidia/cu13` or
    /// `nvidia/cuda_nvcc`).
    pub origin: PathBuf,
    /// How it was found (`CUDA_PATH`, `NVIDIA's wheels in <site-packages>`, …).
    pub found_by: String,
    /// Its version (major, minor), from `version.json` or `CUDA_VERSION` in `cuda.h`.
    pub version: Option<(u32, u32)>,
    /// The include directories the links point into (empty when the root is used as is).
    pub include_targets: Vec<PathBuf>,
}

impl Toolkit {
    /// The newest CUDA clang `major` knows, when this toolkit is newer.
    pub(crate) fn too_new_for(&self, major: u32) -> Option<(u32, u32)> {
        let newest = newest_supported(major)?;
        self.version.filter(|v| *v > newest).map(|_| newest)
    }

    fn version_text(&self) -> String {
        self.version
            .map_or_else(|| "of unknown version".into(), |(a, b)| format!("{a}.{b}"))
    }
}

impl CudaHeaders {
    /// The toolkit's root passed with `--cuda-path`, if any.
    pub(crate) fn root(&self) -> Option<&Path> {
        match self {
            CudaHeaders::Toolkit(t) => Some(&t.root),
            CudaHeaders::Builtins { .. } => None,
        }
    }

    /// What identifies the headers in the toolchain's identity: the root and version, or the
    /// prelude (named after its content).
    pub(crate) fn identity(&self) -> String {
        match self {
            CudaHeaders::Toolkit(t) => format!("{} {:?}", t.root.display(), t.version),
            CudaHeaders::Builtins { prelude, .. } => prelude.display().to_string(),
        }
    }

    /// The directories whose headers are system headers: the root's `include` and what its
    /// links point to, or the prelude.
    pub(crate) fn system_dirs(&self) -> Vec<PathBuf> {
        match self {
            CudaHeaders::Toolkit(t) => std::iter::once(t.root.join("include"))
                .chain(t.include_targets.iter().cloned())
                .collect(),
            CudaHeaders::Builtins { prelude, .. } => vec![prelude.clone()],
        }
    }
}

/// What the CUDA arguments and messages need of the toolchain: its CUDA headers, the
/// compiler's LLVM major version and path ([`Toolchain::cuda_use`](crate::builder::toolchain::found::Toolchain::cuda_use)).
pub(crate) struct CudaUse<'a> {
    pub cuda_headers: &'a Option<CudaHeaders>,
    pub major: u32,
    pub clang: &'a Path,
}

/// clang's arguments for the CUDA headers of `tc` (in every device compile).
pub(crate) fn clang_args(tc: &CudaUse<'_>) -> Vec<OsString> {
    let mut v: Vec<OsString> = Vec::new();
    match &tc.cuda_headers {
        Some(CudaHeaders::Toolkit(t)) => {
            v.push(format!("--cuda-path={}", t.root.display()).into());
            if t.too_new_for(tc.major).is_some() {
                v.push("-Wno-unknown-cuda-version".into());
            }
        }
        Some(CudaHeaders::Builtins { prelude, .. }) => {
            v.extend(["-nocudainc", "-nocudalib", "-include"].map(OsString::from));
            v.push(prelude.clone().into_os_string());
        }
        None => v.extend(["-nocudainc", "-nocudalib"].map(OsString::from)),
    }
    v
}

/// Finds the CUDA headers for clang (see the [module docs](self)), laying out the links
/// directory or writing the prelude in `cache_dir`.
pub(crate) fn find(
    env: &Env<'_>,
    path: Option<&OsString>,
    cwd: &Path,
    cache_dir: &Path,
) -> Result<CudaHeaders, Error> {
    let mut looked = Vec::new();
    if let Some((root, found_by)) = find_cuda(env, path, cwd, &mut looked) {
        let parts = Parts::of_root(&root);
        return toolkit(parts, root, found_by, cache_dir).map(CudaHeaders::Toolkit);
    }
    let venv = venv_site_packages(env);
    if let Some(t) = in_sites(&venv, &mut looked, cache_dir)? {
        return Ok(CudaHeaders::Toolkit(t));
    }
    match env.get_os("VIRTUAL_ENV") {
        None => looked.push("VIRTUAL_ENV (unset)".into()),
        Some(v) if !venv.iter().any(|s| s.is_dir()) => looked.push(format!(
            "VIRTUAL_ENV={} (no site-packages)",
            Path::new(&v).display()
        )),
        Some(_) => {}
    }
    let python = python_site_packages(env, path, cwd);
    if python.is_empty() {
        looked.push("python3 on PATH (not found, or no site-packages)".into());
    }
    if let Some(t) = in_sites(&python, &mut looked, cache_dir)? {
        return Ok(CudaHeaders::Toolkit(t));
    }
    let prelude = write_prelude(cache_dir)?;
    Ok(CudaHeaders::Builtins { prelude, looked })
}

/// The first toolkit of NVIDIA's wheels in `sites`, recording the places looked at.
fn in_sites(
    sites: &[PathBuf],
    looked: &mut Vec<String>,
    cache_dir: &Path,
) -> Result<Option<Toolkit>, Error> {
    for site in sites.iter().filter(|s| s.is_dir()) {
        match Parts::of_wheels(site) {
            Ok(parts) => {
                let origin = parts.bin.parent().unwrap_or(site).to_path_buf();
                let by = format!("NVIDIA's wheels in {}", site.display());
                return toolkit(parts, origin, by, cache_dir).map(Some);
            }
            Err(why) => looked.push(why),
        }
    }
    Ok(None)
}

/// The prelude, written into `cache_dir` once under a name from its content.
fn write_prelude(cache_dir: &Path) -> Result<PathBuf, Error> {
    let key = KeyBuilder::new(Domain::CudaToolkit).str(PRELUDE).finish64();
    let p = cache_dir.join(format!("cuda-prelude-{key:016x}.h"));
    if std::fs::read(&p).ok().as_deref() != Some(PRELUDE.as_bytes()) {
        fs::write_atomic(&p, PRELUDE.as_bytes())?;
    }
    Ok(p)
}

/// The pieces of a toolkit, before they are laid out.
#[derive(Debug)]
struct Parts {
    bin: PathBuf,
    nvvm: PathBuf,
    lib: Option<PathBuf>,
    /// The include directories in search order (the toolkit's first).
    includes: Vec<PathBuf>,
    version_json: Option<PathBuf>,
}

impl Parts {
    /// A system install: its own directories, and its `include/cccl` (CUDA 13).
    fn of_root(root: &Path) -> Parts {
        let mut includes = vec![root.join("include")];
        includes.extend(Some(root.join("include/cccl")).filter(|d| d.is_dir()));
        Parts {
            bin: root.join("bin"),
            nvvm: root.join("nvvm"),
            lib: ["lib64", "lib"]
                .map(|l| root.join(l))
                .into_iter()
                .find(|l| l.is_dir()),
            includes,
            version_json: Some(root.join("version.json")).filter(|v| v.is_file()),
        }
    }

    /// NVIDIA's wheels in `site`: CUDA 13's `nvidia/cu13`, else CUDA 12's split wheels
    /// (`nvidia/cuda_nvcc` with `nvidia/cuda_runtime/include`, and every other
    /// `nvidia/*/include`); each needs `cuda.h`, `cuda_runtime.h` and `nvvm/libdevice`. Why
    /// not, when there is none.
    fn of_wheels(site: &Path) -> Result<Parts, String> {
        let nv = site.join("nvidia");
        let cu13 = nv.join("cu13");
        let complete = |root: &Path, inc: &Path| {
            inc.join("cuda.h").is_file()
                && inc.join("cuda_runtime.h").is_file()
                && root.join("nvvm/libdevice").is_dir()
        };
        if complete(&cu13, &cu13.join("include")) {
            return Ok(Parts::of_root(&cu13));
        }
        let nvcc = nv.join("cuda_nvcc");
        let runtime = nv.join("cuda_runtime");
        if complete(&nvcc, &runtime.join("include")) {
            let mut includes = vec![runtime.join("include")];
            let mut others: Vec<PathBuf> = std::fs::read_dir(&nv)
                .map(|rd| rd.flatten().map(|e| e.path().join("include")).collect())
                .unwrap_or_default();
            others.sort();
            others.retain(|d| d.is_dir() && !d.starts_with(&cu13) && !d.starts_with(&runtime));
            includes.extend(others);
            return Ok(Parts {
                bin: nvcc.join("bin"),
                nvvm: nvcc.join("nvvm"),
                lib: Some(runtime.join("lib")).filter(|l| l.is_dir()),
                includes,
                version_json: None,
            });
        }
        Err(format!("{} (no CUDA toolkit wheels)", site.display()))
    }

    /// Whether clang can take the toolkit's root as it is: one include directory that holds
    /// cuRAND's header too.
    fn usable_as_is(&self) -> bool {
        self.includes.len() == 1 && self.includes[0].join("curand_mtgp32_kernel.h").is_file()
    }

    /// The version: `version.json`'s `cuda` version, else `CUDA_VERSION` in `cuda.h`.
    fn version(&self) -> Option<(u32, u32)> {
        if let Some(v) = self.version_json.as_ref().and_then(|p| json_version(p)) {
            return Some(v);
        }
        let cuda_h = self
            .includes
            .iter()
            .map(|d| d.join("cuda.h"))
            .find(|p| p.is_file())?;
        cuda_h_version(&std::fs::read_to_string(cuda_h).ok()?)
    }
}

/// `"cuda": { ... "version": "12.4.1" }` of a toolkit's `version.json`.
fn json_version(path: &Path) -> Option<(u32, u32)> {
    let text = std::fs::read_to_string(path).ok()?;
    let after = text.split("\"cuda\"").nth(1)?;
    let v = after.split("\"version\"").nth(1)?.split('"').nth(1)?;
    let mut it = v.split('.').map(|n| n.trim().parse::<u32>().ok());
    Some((it.next()??, it.next()??))
}

/// `#define CUDA_VERSION 13050` → (13, 5).
pub(crate) fn cuda_h_version(text: &str) -> Option<(u32, u32)> {
    let n: u32 = text.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("#define")?.trim_start();
        rest.strip_prefix("CUDA_VERSION")?.trim().parse().ok()
    })?;
    Some((n / 1000, n % 1000 / 10))
}

/// The toolkit of `parts`: its root as it is, or the links directory laid out in `cache_dir`.
fn toolkit(
    parts: Parts,
    origin: PathBuf,
    found_by: String,
    cache_dir: &Path,
) -> Result<Toolkit, Error> {
    let version = parts.version();
    if parts.usable_as_is() {
        return Ok(Toolkit {
            root: origin.clone(),
            origin,
            found_by,
            version,
            include_targets: Vec::new(),
        });
    }
    let root = links_dir(&parts, cache_dir)?;
    Ok(Toolkit {
        root,
        origin,
        found_by,
        version,
        include_targets: parts.includes,
    })
}

/// The links directory of `parts` in `cache_dir`, laid out unless it exists: its key covers
/// the directories linked to and their stamps (size, modification time), so a toolkit
/// installed or updated in place gets a new one.
fn links_dir(parts: &Parts, cache_dir: &Path) -> Result<PathBuf, Error> {
    let mut k = KeyBuilder::new(Domain::CudaToolkit);
    k.str(LAYOUT);
    let dirs = [&parts.bin, &parts.nvvm].into_iter().chain(&parts.lib);
    for d in dirs.chain(&parts.includes).chain(&parts.version_json) {
        k.os(d.as_os_str());
        let _ = k.file_stamp(d);
    }
    for d in &parts.includes {
        let _ = k.file_stamp(&d.join("cuda.h"));
    }
    let dir = cache_dir.join(format!("cuda-toolkit-{:016x}", k.finish64()));
    if dir.join("include").is_dir() {
        return Ok(dir);
    }
    let tmp = tempfile::Builder::new()
        .prefix(".cuda-toolkit-")
        .tempdir_in(cache_dir)
        .map_err(|e| Error::io("creating a directory in", cache_dir, e))?;
    lay_out(parts, tmp.path())?;
    // A complete directory appears at once; another build that laid out the same one first
    // wins (the rename onto its non-empty directory fails, and ours is removed).
    match std::fs::rename(tmp.path(), &dir) {
        Ok(()) => {
            // Renamed away: nothing is left for the temporary directory to remove.
            let _ = tmp.keep();
        }
        Err(e) if !dir.join("include").is_dir() => return Err(Error::io("creating", &dir, e)),
        Err(_) => {}
    }
    // The cuRAND stand-in was written just now: a job that starts within the change slack
    // of a write would take it for an input changed under it and keep nothing it made (a
    // PCH of this build's first compiles, on a machine fast enough to start them at once).
    settle_written();
    Ok(dir)
}

/// Fills `at` with the links of `parts` (see the [module docs](self)).
fn lay_out(parts: &Parts, at: &Path) -> Result<(), Error> {
    link(&parts.bin, &at.join("bin"))?;
    link(&parts.nvvm, &at.join("nvvm"))?;
    if let Some(l) = &parts.lib {
        link(l, &at.join("lib"))?;
    }
    if let Some(v) = &parts.version_json {
        link(v, &at.join("version.json"))?;
    }
    let include = at.join("include");
    merge(&parts.includes, &include)?;
    let curand = include.join("curand_mtgp32_kernel.h");
    if std::fs::symlink_metadata(&curand).is_err() {
        fs::write_atomic(
            &curand,
            b"/* offload-build: an empty stand-in for cuRAND's header, which clang's\n \
              * __clang_cuda_runtime_wrapper.h includes unconditionally; no cuRAND headers\n \
              * were found beside this CUDA toolkit (pip install nvidia-curand for them). */\n",
        )?;
    }
    Ok(())
}

/// Links every entry of `sources` into `dst` (created): the first source that has a name
/// wins, except that directories of the same name in several sources are merged.
fn merge(sources: &[PathBuf], dst: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dst).map_err(|e| Error::io("creating", dst, e))?;
    let mut names: Vec<(OsString, Vec<PathBuf>)> = Vec::new();
    for s in sources {
        let Ok(rd) = std::fs::read_dir(s) else {
            continue;
        };
        let mut entries: Vec<_> = rd.flatten().map(|e| (e.file_name(), e.path())).collect();
        entries.sort();
        for (name, p) in entries {
            // The toolkit's include/cccl is a source of its own, not an entry.
            if sources.contains(&p) {
                continue;
            }
            match names.iter_mut().find(|(n, _)| *n == name) {
                Some((_, ps)) => ps.push(p),
                None => names.push((name, vec![p])),
            }
        }
    }
    for (name, ps) in names {
        let dirs: Vec<PathBuf> = ps.iter().filter(|p| p.is_dir()).cloned().collect();
        if ps.len() > 1 && dirs.len() == ps.len() {
            merge(&dirs, &dst.join(&name))?;
        } else {
            link(&ps[0], &dst.join(&name))?;
        }
    }
    Ok(())
}

/// A symbolic link at `at` to `target`.
fn link(target: &Path, at: &Path) -> Result<(), Error> {
    #[cfg(unix)]
    let r = std::os::unix::fs::symlink(target, at);
    #[cfg(windows)]
    let r = if target.is_dir() {
        std::os::windows::fs::symlink_dir(target, at)
    } else {
        std::os::windows::fs::symlink_file(target, at)
    };
    r.map_err(|e| Error::io("linking", at, e))
}

/// The one warning of a CUDA build about its headers: no toolkit (where one was looked for,
/// how to get one), or a toolkit newer than the compiler knows.
pub(crate) fn warn(tc: &CudaUse<'_>, d: &Directives) {
    match &tc.cuda_headers {
        Some(CudaHeaders::Builtins { looked, .. }) => d.warn(&format!(
            "offload-build: no CUDA toolkit found, so CUDA sources are compiled with clang's \
             own CUDA builtins only (__global__, threadIdx, __syncthreads, atomics; no \
             cuda_runtime.h, cuda_fp16.h, cub or libdevice math). Looked at: {}. For a \
             toolkit: `pip install {CUDA_WHEELS}` in a virtualenv (found through VIRTUAL_ENV \
             or python3), or install CUDA (CUDA_PATH, /usr/local/cuda)",
            looked.join("; ")
        )),
        Some(CudaHeaders::Toolkit(t)) => {
            if let Some((a, b)) = t.too_new_for(tc.major) {
                d.warn(&format!(
                    "offload-build: the CUDA toolkit at {} ({}) is CUDA {}, newer than the \
                     newest CUDA clang {} ({}) supports, {a}.{b}: compiling with \
                     -Wno-unknown-cuda-version; if a compile fails, use a newer clang, a CUDA \
                     {a}.{b} or older toolkit, or nvcc",
                    t.origin.display(),
                    t.found_by,
                    t.version_text(),
                    tc.major,
                    tc.clang.display(),
                ));
            }
        }
        None => {}
    }
}

/// What offload-build knows about a failed CUDA compile (its `command` and `stderr`): a toolkit
/// header missing without a toolkit, or a toolkit newer than the compiler supports (for a
/// failure of the compiler, not of `ptxas`).
pub(crate) fn hint(tc: &CudaUse<'_>, command: &str, stderr: &str) -> Option<String> {
    match tc.cuda_headers.as_ref()? {
        CudaHeaders::Builtins { looked, .. } => {
            let header = missing_header(stderr)?;
            Some(format!(
                "the source needs the CUDA toolkit's headers ('{header}' and others: \
                 cuda_runtime.h, cuda_fp16.h, cub, …), but no CUDA toolkit was found, so it was \
                 compiled with -nocudainc -nocudalib and clang's own CUDA builtins only. Looked \
                 at: {}. Get one with `pip install {CUDA_WHEELS}` in a virtualenv (found through \
                 VIRTUAL_ENV, or python3's site-packages), or install CUDA and set CUDA_PATH",
                looked.join("; ")
            ))
        }
        CudaHeaders::Toolkit(t)
            if t.version >= Some((13, 0))
                && command.contains(&*t.root.join("bin").to_string_lossy())
                && stderr.contains("is not defined for option 'gpu-name'") =>
        {
            Some(format!(
                "this ptxas does not know the architecture: CUDA 13's (the toolkit at {} is \
                 CUDA {}) builds sm_75 and newer only. Build older GPUs as PTX only \
                 (`70-virtual`, `compute_70`), or name a CUDA 12 ptxas (PTXAS, Build::ptxas)",
                t.origin.display(),
                t.version_text()
            ))
        }
        CudaHeaders::Toolkit(t) => {
            let (a, b) = t.too_new_for(tc.major)?;
            if !command.contains(&*tc.clang.to_string_lossy()) {
                return None;
            }
            Some(format!(
                "{} is clang {}, which supports CUDA up to {a}.{b}, but the CUDA toolkit is \
                 CUDA {} ({}, {}): its headers may be beyond this clang. Use a newer clang \
                 (Build::compiler, CLANG), a CUDA {a}.{b} or older toolkit (CUDA_PATH, or the \
                 CUDA 12 wheels), or nvcc",
                tc.clang.display(),
                tc.major,
                t.version_text(),
                t.origin.display(),
                t.found_by
            ))
        }
    }
}

/// The toolkit header a compile could not find (`'cuda_fp16.h' file not found`), if any.
fn missing_header(stderr: &str) -> Option<String> {
    const TOOLKIT: &[&str] = &[
        "cuda",
        "cub/",
        "thrust/",
        "cooperative_groups",
        "curand",
        "cublas",
        "cufft",
        "cusparse",
        "cusolver",
        "nvrtc",
        "nvtx3/",
        "nv/target",
        "crt/",
        "mma.h",
        "sm_",
        "vector_types.h",
        "vector_functions.h",
        "device_functions.h",
        "device_launch_parameters.h",
        "device_atomic_functions.h",
        "math_constants.h",
    ];
    stderr.lines().find_map(|l| {
        let name = l
            .split(" fatal error: '")
            .nth(1)?
            .strip_suffix("' file not found")?;
        TOOLKIT
            .iter()
            .any(|t| name.starts_with(t))
            .then(|| name.to_string())
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_missing_headers() {
        assert_eq!(
            cuda_h_version("/* x */\n#define CUDA_VERSION 13050\n"),
            Some((13, 5))
        );
        assert_eq!(cuda_h_version("#define CUDA_VERSION 12090"), Some((12, 9)));
        assert_eq!(newest_supported(22), Some((12, 9)));
        assert_eq!(newest_supported(19), Some((12, 5)));
        assert_eq!(newest_supported(99), None);
        let e = "k.cu:1:10: fatal error: 'cuda_fp16.h' file not found\n    1 | #include";
        assert_eq!(missing_header(e).as_deref(), Some("cuda_fp16.h"));
        let mine = "k.cu:1:10: fatal error: 'my.h' file not found";
        assert_eq!(missing_header(mine), None);
    }

    /// What a links directory's layout just wrote is already older than the change slack of a
    /// job starting now (else the first jobs, PCHs among them, would not be kept).
    fn assert_settled(written: &Path) {
        let at = std::fs::metadata(written).unwrap().modified().unwrap();
        let age = std::time::SystemTime::now().duration_since(at).unwrap();
        assert!(age > crate::builder::cache::stamps::CHANGE_SLACK, "{age:?}");
    }

    /// CUDA 12's split wheels: one links directory with the runtime's headers first, the other
    /// wheels' include directories merged (a directory in two of them merged too), the cuRAND
    /// stand-in, and the version from cuda.h.
    #[test]
    fn cuda_12_split_wheels_are_laid_out_as_one_root() {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path().join("site-packages");
        let nv = site.join("nvidia");
        let files = [
            "cuda_nvcc/bin/ptxas",
            "cuda_nvcc/nvvm/libdevice/libdevice.10.bc",
            "cuda_nvcc/include/crt/host_config.h",
            "cuda_runtime/include/cuda.h",
            "cuda_runtime/include/cuda_runtime.h",
            "cuda_runtime/include/crt/host_defines.h",
            "cuda_runtime/lib/libcudart.so.12",
            "cuda_cccl/include/cub/cub.cuh",
        ];
        for f in files {
            let p = nv.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "").unwrap();
        }
        std::fs::write(
            nv.join("cuda_runtime/include/cuda.h"),
            "#define CUDA_VERSION 12090\n",
        )
        .unwrap();
        let cache = dir.path().join("cache");
        std::fs::create_dir_all(&cache).unwrap();
        let mut looked = Vec::new();
        let t = in_sites(std::slice::from_ref(&site), &mut looked, &cache)
            .unwrap()
            .expect("a toolkit");
        assert_eq!(t.version, Some((12, 9)));
        assert_eq!(t.origin, nv.join("cuda_nvcc"));
        assert!(t.root.starts_with(&cache));
        assert_settled(&t.root.join("include/curand_mtgp32_kernel.h"));
        for f in [
            "bin/ptxas",
            "nvvm/libdevice/libdevice.10.bc",
            "lib/libcudart.so.12",
            "include/cuda_runtime.h",
            "include/cub/cub.cuh",
            "include/crt/host_config.h",
            "include/crt/host_defines.h",
            "include/curand_mtgp32_kernel.h",
        ] {
            assert!(t.root.join(f).is_file(), "{f}");
        }
        assert_eq!(newest_supported(22), Some((12, 9)));
        assert_eq!(t.too_new_for(22), None);
        assert_eq!(t.too_new_for(19), Some((12, 5)));
        // The same wheels again: the same directory.
        let again = in_sites(std::slice::from_ref(&site), &mut looked, &cache)
            .unwrap()
            .unwrap();
        assert_eq!(again.root, t.root);
        // Builds laying out the same directory at once (a fresh cache): one directory, every
        // one gets it complete, no temporary directory is left.
        let cache2 = dir.path().join("cache2");
        std::fs::create_dir_all(&cache2).unwrap();
        let parts = Parts::of_wheels(&site).unwrap();
        let roots: Vec<PathBuf> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|_| s.spawn(|| links_dir(&parts, &cache2).unwrap()))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(roots.iter().all(|r| *r == roots[0]));
        assert!(roots[0].join("include/cub/cub.cuh").is_file());
        let left: Vec<_> = std::fs::read_dir(&cache2).unwrap().flatten().collect();
        assert_eq!(left.len(), 1, "{left:?}");
        // Without the runtime's headers there is no toolkit, and the reason is recorded.
        std::fs::remove_file(nv.join("cuda_runtime/include/cuda_runtime.h")).unwrap();
        let none = in_sites(std::slice::from_ref(&site), &mut looked, &cache).unwrap();
        assert!(none.is_none());
        assert!(
            looked.last().unwrap().contains("no CUDA toolkit wheels"),
            "{looked:?}"
        );
    }
}
