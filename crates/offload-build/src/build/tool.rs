//! Toolchain discovery: which clang compiles the device code, which ROCm / CUDA install it
//! uses, and what that compiler supports.
//!
//! The compiler is the first that exists of:
//!
//! 1. [`Build::compiler`](super::Build::compiler);
//! 2. `HIPCXX` (a path, or a name looked up on `PATH`);
//! 3. `HIP_CLANG_PATH/clang`;
//! 4. `ROCM_PATH/llvm/bin/clang`, then `HIP_PATH/llvm/bin/clang`;
//! 5. `CLANG` (a path, or a name looked up on `PATH`);
//! 6. `clang-NN` on `PATH` and `/usr/lib/llvm-NN/bin/clang`, newest `NN` first, among those
//!    with `ld.lld` beside them (needed to link device code);
//! 7. `/opt/rocm/llvm/bin/clang`;
//! 8. `clang` on `PATH`.
//!
//! What the compiler supports is asked once (`--version`, `--print-supported-cpus`) and kept in
//! the cache directory, keyed by the compiler's path, size and modification time, so an
//! unchanged rebuild starts no process.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use xxhash_rust::xxh3::Xxh3;

use super::Language;
use super::env::Env;
use super::error::Error;

/// The compiler and the installs around it.
#[derive(Clone, Debug)]
pub(crate) struct Toolchain {
    /// The compiler.
    pub clang: PathBuf,
    /// First line of `clang --version`.
    pub version: String,
    /// LLVM major version (0 when it cannot be read).
    pub major: u32,
    /// The ROCm install passed with `--rocm-path`, if any.
    pub rocm: Option<PathBuf>,
    /// The CUDA install passed with `--cuda-path`, if any.
    pub cuda: Option<PathBuf>,
    /// `ptxas`, when found.
    pub ptxas: Option<PathBuf>,
    /// Processors the compiler supports for the language's device target.
    pub supported: Vec<String>,
    /// Hash of everything that identifies the compiler.
    pub identity: u128,
    /// Directories holding helper tools (`amdgpu-arch`, `nvptx-arch`, `nvidia-smi`):
    /// the compiler's own directory, then `PATH`.
    pub tool_dirs: Vec<PathBuf>,
}

fn path_dirs(path: Option<&OsString>) -> Vec<PathBuf> {
    path.map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default()
}

/// A value that is a path (has a separator) or a name to look up on `PATH`.
fn path_or_name(
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

/// Finds the compiler, recording every place looked at.
fn find_clang(
    env: &Env<'_>,
    explicit: Option<&Path>,
    path: Option<&OsString>,
    cwd: &Path,
) -> Result<PathBuf, Error> {
    let mut searched = Vec::new();
    if let Some(p) = explicit {
        searched.push(p.to_path_buf());
        if p.is_file() {
            return Ok(p.to_path_buf());
        }
        return Err(Error::ToolNotFound {
            tool: "clang (set with Build::compiler)".into(),
            searched,
        });
    }
    if let Some(v) = env.get("HIPCXX") {
        if let Some(p) = path_or_name(&v, path, cwd, &mut searched) {
            return Ok(p);
        }
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(v) = env.get_os("HIP_CLANG_PATH") {
        dirs.push(PathBuf::from(v));
    }
    for var in ["ROCM_PATH", "HIP_PATH"] {
        if let Some(v) = env.get_os(var) {
            dirs.push(Path::new(&v).join("llvm/bin"));
        }
    }
    for d in dirs {
        let p = d.join(exe("clang"));
        searched.push(p.clone());
        if p.is_file() {
            return Ok(p);
        }
    }
    if let Some(v) = env.get("CLANG") {
        if let Some(p) = path_or_name(&v, path, cwd, &mut searched) {
            return Ok(p);
        }
    }
    // clang-NN on PATH and /usr/lib/llvm-NN/bin/clang, newest first (PATH first on a tie).
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
    if let Some((_, _, p)) = versioned
        .into_iter()
        .find(|(_, _, p)| p.is_file() && has_lld(p))
    {
        return Ok(p);
    }
    let rocm = PathBuf::from("/opt/rocm/llvm/bin/clang");
    searched.push(rocm.clone());
    if rocm.is_file() {
        return Ok(rocm);
    }
    if let Some(p) = path_or_name(&exe("clang"), path, cwd, &mut searched) {
        return Ok(p);
    }
    Err(Error::ToolNotFound {
        tool: "clang".into(),
        searched,
    })
}

/// Whether `ld.lld` sits next to the (symlink-resolved) compiler.
fn has_lld(clang: &Path) -> bool {
    let real = clang.canonicalize().unwrap_or_else(|_| clang.to_path_buf());
    real.parent()
        .is_some_and(|d| d.join(exe("ld.lld")).is_file())
}

fn exe(name: &str) -> String {
    format!("{name}{}", std::env::consts::EXE_SUFFIX)
}

fn find_rocm(env: &Env<'_>, clang: &Path) -> Option<PathBuf> {
    let ok = |r: &Path| r.join("include/hip/hip_runtime.h").is_file();
    for var in ["ROCM_PATH", "HIP_PATH"] {
        if let Some(v) = env.get_os(var) {
            let r = PathBuf::from(v);
            if ok(&r) {
                return Some(r);
            }
        }
    }
    // <rocm>/llvm/bin/clang
    let canon = clang.canonicalize().unwrap_or_else(|_| clang.to_path_buf());
    if let Some(r) = canon.parent().and_then(Path::parent).and_then(Path::parent) {
        if ok(r) {
            return Some(r.to_path_buf());
        }
    }
    let opt = Path::new("/opt/rocm");
    ok(opt).then(|| opt.to_path_buf())
}

fn find_cuda(env: &Env<'_>) -> Option<PathBuf> {
    let ok = |r: &Path| r.join("include/cuda.h").is_file() && r.join("nvvm/libdevice").is_dir();
    for var in ["CUDA_PATH", "CUDA_HOME", "CUDA_ROOT"] {
        if let Some(v) = env.get_os(var) {
            let r = PathBuf::from(v);
            if ok(&r) {
                return Some(r);
            }
        }
    }
    let usr = Path::new("/usr/local/cuda");
    ok(usr).then(|| usr.to_path_buf())
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

/// Discovers the toolchain for `lang`, using `cache_dir` to remember what the compiler said.
pub(crate) fn discover(
    env: &Env<'_>,
    lang: Language,
    explicit: Option<&Path>,
    cache_dir: &Path,
    cwd: &Path,
) -> Result<Toolchain, Error> {
    let path = env.get_os("PATH");
    let clang = find_clang(env, explicit, path.as_ref(), cwd)?;
    let (rocm, cuda, ptxas) = match lang {
        Language::Hip => (find_rocm(env, &clang), None, None),
        Language::Cuda => {
            let cuda = find_cuda(env);
            let ptxas = cuda
                .as_ref()
                .map(|c| c.join("bin").join(exe("ptxas")))
                .filter(|p| p.is_file())
                .or_else(|| which::which_in(exe("ptxas"), path.as_ref(), cwd).ok());
            (None, cuda, ptxas)
        }
    };
    let meta = std::fs::metadata(&clang).map_err(|e| Error::io("reading", &clang, e))?;
    let canon = clang.canonicalize().unwrap_or_else(|_| clang.clone());
    let mut h = Xxh3::new();
    h.update(canon.as_os_str().as_encoded_bytes());
    h.update(&meta.len().to_le_bytes());
    if let Ok(m) = meta.modified() {
        if let Ok(d) = m.duration_since(std::time::UNIX_EPOCH) {
            h.update(&d.as_nanos().to_le_bytes());
        }
    }
    h.update(format!("{lang:?}").as_bytes());
    let stamp = h.digest128();
    let info_path = cache_dir.join(format!("compiler-{stamp:032x}.txt"));
    let (version, supported) = match std::fs::read_to_string(&info_path) {
        Ok(text) if text.contains("\n--\n") => {
            let (v, s) = text.split_once("\n--\n").unwrap_or_default();
            (v.to_string(), s.lines().map(str::to_string).collect())
        }
        _ => {
            let version = run_text(Command::new(&clang).arg("--version"))
                .lines()
                .next()
                .unwrap_or_default()
                .to_string();
            let target = match lang {
                Language::Hip => "--target=amdgcn-amd-amdhsa",
                Language::Cuda => "--target=nvptx64-nvidia-cuda",
            };
            let supported = parse_supported(
                &run_text(Command::new(&clang).args([
                    target,
                    "-nogpulib",
                    "--print-supported-cpus",
                ])),
                lang,
            );
            let _ = std::fs::create_dir_all(cache_dir);
            let _ = std::fs::write(
                &info_path,
                format!("{version}\n--\n{}", supported.join("\n")),
            );
            (version, supported)
        }
    };
    let mut h = Xxh3::new();
    h.update(&stamp.to_le_bytes());
    h.update(version.as_bytes());
    for p in [&rocm, &cuda, &ptxas].into_iter().flatten() {
        h.update(p.as_os_str().as_encoded_bytes());
    }
    let mut tool_dirs: Vec<PathBuf> = clang.parent().map(Path::to_path_buf).into_iter().collect();
    tool_dirs.extend(path_dirs(path.as_ref()));
    Ok(Toolchain {
        major: parse_major(&version),
        clang,
        version,
        rocm,
        cuda,
        ptxas,
        supported,
        identity: h.digest128(),
        tool_dirs,
    })
}

/// stdout and stderr of a command, or empty when it cannot run.
fn run_text(cmd: &mut Command) -> String {
    match cmd.output() {
        Ok(o) => {
            let mut s = String::from_utf8_lossy(&o.stdout).into_owned();
            s.push_str(&String::from_utf8_lossy(&o.stderr));
            s
        }
        Err(_) => String::new(),
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
}
