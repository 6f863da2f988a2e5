//! nvcc as the CUDA compiler: where it is found, which CUDA compiler a build uses, and how
//! nvcc's commands are built from what the plan decided ([`CompileOptions`]).
//!
//! One job per (source, architecture), like clang's: `nvcc -ptx -arch=compute_NN` writes the
//! PTX and the depfile, then, for an architecture with machine code, `nvcc -cubin
//! -arch=sm_NN` turns that PTX into the cubin. That is the pipeline `nvcc -cubin` and
//! `nvcc -fatbin` run themselves (one `cicc`, then `ptxas` with the options nvcc derives from
//! the user's flags: `-Xptxas`, `-lineinfo`, `-G`), so the cubin is byte-identical to
//! `nvcc -cubin -arch=sm_NN` of the source, with one front-end pass per architecture.
//!
//! nvcc is found as CMake and the `cc` crate find it: [`Build::compiler`](crate::builder::Build::compiler)
//! naming an `nvcc`; `CUDACXX`; `CUDA_PATH`, `CUDA_HOME`, `CUDA_ROOT` (`bin/nvcc`); `nvcc` on
//! `PATH`; `/usr/local/cuda/bin/nvcc`; then NVIDIA's wheels (`nvidia/cu13/bin/nvcc` of
//! `nvidia-cuda-nvcc`, with `nvidia-nvvm` for `cicc`) in the virtualenv of `VIRTUAL_ENV`, else
//! in the `site-packages` of `python3`. When nvcc is found it is the default CUDA compiler,
//! as in CMake; [`Build::cuda_compiler`](crate::builder::Build::cuda_compiler) chooses.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use offload_formats::package::ImageKind;

use crate::builder::arch::{Arch, Target};
use crate::builder::command::{self, Command, DepsArg, KeyBuilder};
use crate::builder::env::Env;
use crate::builder::error::Error;
use crate::builder::job::{CompileJob, CompileOptions, DEP, LauncherKind, LinkJob, OUT};
use crate::builder::options::CompilerKind;
use crate::builder::toolchain::Toolchain;
use crate::builder::toolchain::paths::{exe, path_or_name, wheel_tool};

/// Whether `path` names nvcc (its file name starts with `nvcc`).
pub(crate) fn is_nvcc(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("nvcc"))
}

/// The compiler a CUDA build uses: nvcc (its path and how it was chosen), or clang (found by
/// [`find_clang`](crate::builder::toolchain::clang::find_clang)'s rules, from `explicit` when that is set).
pub(crate) enum Choice {
    /// nvcc, with how it was chosen (`CUDACXX`, `NVIDIA's wheels (…)`, …).
    Nvcc(PathBuf, String),
    /// clang; `Some` when the choice names it (`Build::compiler`, `CUDACXX`), with the origin.
    Clang(Option<(PathBuf, String)>),
}

/// Chooses the CUDA compiler: `kind` ([`Build::cuda_compiler`](crate::builder::Build::cuda_compiler))
/// and `explicit` ([`Build::compiler`](crate::builder::Build::compiler)) first, then `CUDACXX` (nvcc or
/// a clang), then nvcc wherever it is found, else clang.
pub(crate) fn choose(
    env: &Env<'_>,
    kind: Option<CompilerKind>,
    explicit: Option<&Path>,
    path: Option<&OsString>,
    cwd: &Path,
) -> Result<Choice, Error> {
    let named = match (explicit, env.get("CUDACXX")) {
        (Some(p), _) => Some((p.to_path_buf(), "Build::compiler".to_string())),
        (None, Some(v)) => {
            let mut tried = Vec::new();
            match path_or_name(&v, path, cwd, &mut tried) {
                Some(p) => Some((p, "CUDACXX".to_string())),
                None => {
                    return Err(Error::CompilerVar {
                        var: "CUDACXX".into(),
                        value: v,
                        searched: tried,
                    });
                }
            }
        }
        (None, None) => None,
    };
    if let Some((p, origin)) = named {
        let nvcc = is_nvcc(&p);
        return match (kind, nvcc) {
            (Some(CompilerKind::Clang), true) | (Some(CompilerKind::Nvcc), false) => {
                Err(Error::Config(format!(
                    "{origin} names {}, which is not the CUDA compiler Build::cuda_compiler \
                     asks for ({:?})",
                    p.display(),
                    kind.unwrap_or_default()
                )))
            }
            (_, true) => Ok(Choice::Nvcc(p, origin)),
            (_, false) => Ok(Choice::Clang(Some((p, origin)))),
        };
    }
    if kind == Some(CompilerKind::Clang) {
        return Ok(Choice::Clang(None));
    }
    let mut searched = Vec::new();
    match find(env, path, cwd, &mut searched) {
        Some((p, origin)) => Ok(Choice::Nvcc(p, origin)),
        None if kind == Some(CompilerKind::Nvcc) => Err(Error::ToolNotFound {
            tool: "nvcc (asked for by Build::cuda_compiler)".into(),
            searched,
        }),
        None => Ok(Choice::Clang(None)),
    }
}

/// nvcc from `CUDA_PATH`, `CUDA_HOME`, `CUDA_ROOT`, `PATH`, `/usr/local/cuda` or NVIDIA's
/// wheels, in that order, recording every place looked at.
fn find(
    env: &Env<'_>,
    path: Option<&OsString>,
    cwd: &Path,
    searched: &mut Vec<PathBuf>,
) -> Option<(PathBuf, String)> {
    let nvcc = exe("nvcc");
    for var in ["CUDA_PATH", "CUDA_HOME", "CUDA_ROOT"] {
        if let Some(v) = env.get_os(var) {
            let p = Path::new(&v).join("bin").join(&nvcc);
            searched.push(p.clone());
            if p.is_file() {
                return Some((p, var.to_string()));
            }
        }
    }
    if let Some(p) = path_or_name(&nvcc, path, cwd, searched) {
        return Some((p, "nvcc on PATH".into()));
    }
    let usr = Path::new("/usr/local/cuda/bin").join(&nvcc);
    searched.push(usr.clone());
    if usr.is_file() {
        return Some((usr, "/usr/local/cuda".into()));
    }
    wheel_tool(env, "nvcc", path, cwd, searched).map(|p| (p, "NVIDIA's wheels".into()))
}

/// The toolkit files beside nvcc that decide its output (`cicc`, `ptxas`, libdevice), for the
/// toolchain's identity.
pub(crate) fn toolkit_files(nvcc: &Path) -> Vec<PathBuf> {
    let Some(bin) = nvcc.parent() else {
        return Vec::new();
    };
    let root = bin.parent().unwrap_or(bin);
    vec![
        root.join("nvvm/bin").join(exe("cicc")),
        bin.join(exe("ptxas")),
        root.join("nvvm/libdevice/libdevice.10.bc"),
    ]
}

/// The toolkit root of nvcc (`<root>/bin/nvcc`), whose `include` holds the CUDA headers.
pub(crate) fn root(nvcc: &Path) -> Option<PathBuf> {
    Some(nvcc.parent()?.parent()?.to_path_buf())
}

/// The CUDA release of nvcc's version line (`release 13.5` → `(13, 5)`).
pub(crate) fn release(version: &str) -> Option<(u32, u32)> {
    let rest = version.split("release ").nth(1)?;
    let v = rest.split(|c: char| c == ',' || c.is_whitespace()).next()?;
    let (a, b) = v.split_once('.')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// The host compiler nvcc preprocesses with, as `-ccbin` arguments: none when a flag sets one
/// (`-ccbin`, `--compiler-bindir`); else `NVCC_CCBIN`, `CUDAHOSTCXX`, then `CXX` (a single
/// word), as CMake and the `cc` crate pass it; else nvcc's own default (`gcc` on `PATH`).
pub(crate) fn ccbin_args(env: &Env<'_>, flags: &[OsString]) -> Vec<OsString> {
    let set_by_flag = flags.iter().any(|f| {
        let f = f.to_string_lossy();
        f == "-ccbin" || f.starts_with("-ccbin=") || f.starts_with("--compiler-bindir")
    });
    if set_by_flag {
        return Vec::new();
    }
    ["NVCC_CCBIN", "CUDAHOSTCXX", "CXX"]
        .iter()
        .find_map(|var| {
            env.get(var)
                .filter(|v| !v.trim().is_empty() && !v.contains(' '))
        })
        .map(|v| vec![OsString::from("-ccbin"), OsString::from(v)])
        .unwrap_or_default()
}

/// The virtual architecture whose PTX nvcc writes for `arch` (`compute_90a` for `sm_90a`).
fn virtual_arch(arch: &Arch) -> String {
    let sm = arch.offload_arch();
    match sm.strip_prefix("sm_") {
        Some(n) => format!("compute_{n}"),
        None => sm,
    }
}

/// nvcc's arguments for the PTX of `arch`, up to the user's flags (no source, output or
/// depfile).
pub(crate) fn device_args(o: &CompileOptions, arch: &Arch) -> Vec<OsString> {
    let mut c = Command::new("nvcc");
    c.add_arg("-ptx")
        .add_arg(format!("-arch={}", virtual_arch(arch)));
    c.add_args(&o.host_compiler);
    if o.debug {
        c.add_arg("-G");
    }
    c.add_args(o.source_args());
    c.args
}

/// The compile job of `source` for `arch` with nvcc, its files named in `cache_dir` after
/// its key: the PTX (and the depfile), then the cubin unless `arch` is virtual.
pub(crate) fn compile_job(
    o: &CompileOptions,
    tc: &Toolchain,
    cache_dir: &Path,
    source: &Path,
    arch: &Arch,
) -> CompileJob {
    let mut args = device_args(o, arch);
    if o.launcher_kind == LauncherKind::Ccache {
        // The same PTX (nvcc's last phase option wins), but ccache caches a command only
        // with `-c`: without it ccache takes `-ptx` for a link. sccache 0.16 fails with it
        // (it replays nvcc's steps and looks for a fatbinary), so only for ccache.
        args.insert(1, OsString::from("-c"));
    }
    args.push(source.as_os_str().to_os_string());
    args.extend(["-o", OUT, "-MD", "-MF", DEP].map(OsString::from));
    let target = Target::Device(arch.clone());
    let (mut job, _) = crate::builder::toolchain::clang::new_job(
        o, tc, cache_dir, source, &target, false, args, "ptx",
    );
    job.steps[0].depfile = Some(job.depfile.clone());
    job.deps_only = deps_only(&job.steps[0], &job.depfile);
    let ptx = job.steps[0].outputs[0].clone();
    job.outputs.push((ImageKind::Ptx, ptx.clone()));
    if !arch.is_virtual() {
        let cubin = job.base.with_extension("cubin");
        let mut c = Command::new(&tc.clang);
        c.env = o.env.clone();
        c.add_arg("-cubin")
            .add_arg(format!("-arch={}", arch.offload_arch()));
        if o.debug {
            c.add_arg("-G");
        }
        c.add_args(&o.flags)
            .add_arg(&ptx)
            .add_arg("-o")
            .add_arg(&cubin);
        c.inputs = vec![ptx];
        c.outputs = vec![cubin.clone()];
        job.steps.push(c);
        job.outputs.push((ImageKind::Cubin, cubin));
    }
    job
}

/// nvcc's `-gencode` of `arch`: the cubin and the PTX (`sm_90`), the cubin alone (CMake's
/// `90-real`), or the PTX alone (`compute_90`).
pub(crate) fn gencode(arch: &Arch) -> String {
    let virt = virtual_arch(arch);
    let code = if arch.is_virtual() {
        virt.clone()
    } else if arch.is_real() {
        arch.offload_arch()
    } else {
        format!("[{},{virt}]", arch.offload_arch())
    };
    format!("arch={virt},code={code}")
}

/// The host-code job of `source` with nvcc ([`Build::host_code`](crate::Build::host_code)):
/// one `nvcc -c` with a `-gencode` per architecture, the depfile in the same pass; its object
/// has nvcc's own fat binary (nvcc takes none written elsewhere into its host pass). nvcc may
/// compile its architectures at once ([`CompileJob::threads`]: the jobs stage adds
/// `--threads` when fewer jobs run than there are cores). Filed under [`Target::Host`].
pub(crate) fn host_job(
    o: &CompileOptions,
    tc: &Toolchain,
    cache_dir: &Path,
    source: &Path,
    archs: &[Arch],
) -> CompileJob {
    let mut c = Command::new("nvcc");
    c.add_arg("-c");
    if o.rdc {
        // Relocatable device code, device-linked by [`device_link`] (`nvcc -dc`).
        c.add_arg("-rdc=true");
    }
    for a in archs {
        c.add_arg("-gencode").add_arg(gencode(a));
    }
    c.add_args(&o.host_compiler);
    if o.debug {
        c.add_arg("-G");
    }
    c.add_args(o.source_args());
    let mut job = crate::builder::toolchain::clang::host_object_job(
        o, tc, cache_dir, source, c.args, deps_only,
    );
    job.threads = archs.len().max(1);
    job.rdc = o.rdc;
    job
}

/// nvcc's device link of the relocatable host-code objects `objs` (`Build::rdc`): one
/// `nvcc -dlink` with a `-gencode` per architecture of the build, which links each
/// architecture's device code (and `cudadevrt`) and writes the host object that registers
/// it, as CMake's CUDA separable compilation and the `cc` crate do. Filed under
/// [`Target::DeviceLink`]; its output is a placeholder until the link's key names it.
pub(crate) fn device_link(
    o: &CompileOptions,
    tc: &Toolchain,
    cache_dir: &Path,
    archs: &[Arch],
    objs: Vec<PathBuf>,
) -> LinkJob {
    let out = cache_dir.join("linked-host.o");
    let mut c = Command::new(&tc.clang);
    c.env = o.env.clone();
    c.add_arg("-dlink");
    for a in archs {
        c.add_arg("-gencode").add_arg(gencode(a));
    }
    c.add_args(&o.host_compiler)
        .add_args(&objs)
        .add_arg("-o")
        .add_arg(&out);
    LinkJob::new(Target::DeviceLink, c, objs, out)
}

/// nvcc's dependency generation alone (`-M -MF`), for when the compile wrote no depfile.
fn deps_only(compile: &Command, depfile: &Path) -> Command {
    command::deps_only(compile, depfile, |a, _| match a.to_str() {
        Some("-ptx" | "-c" | "-MD") => DepsArg::Drop(0),
        Some("-o" | "-MF") => DepsArg::Drop(1),
        _ => DepsArg::Keep,
    })
}

/// A PTX compile of the empty `source` with `flag`: whether nvcc accepts the flag (it rejects
/// unknown options).
pub(crate) fn flag_probe(
    tc: &Toolchain,
    arch: Option<&Arch>,
    flag: &OsString,
    source: &Path,
    out: &Path,
) -> Command {
    let mut c = Command::new(&tc.clang);
    c.add_arg("-ptx");
    if let Some(a) = arch {
        c.add_arg(format!("-arch={}", virtual_arch(a)));
    }
    c.add_arg(flag).add_arg(source).add_arg("-o").add_arg(out);
    c.inputs = vec![source.to_path_buf()];
    c.outputs = vec![out.to_path_buf()];
    c
}

/// The identity of nvcc and the toolkit files beside it, for the toolchain key.
pub(crate) fn identity(k: &mut KeyBuilder, nvcc: &Path) {
    for f in toolkit_files(nvcc) {
        // A missing file is part of the identity too (its absence).
        if k.file_stamp(&f).is_err() {
            k.str("absent").os(&f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::toolchain::info::{parse_gpu_code, version_line};

    #[test]
    fn reads_nvcc_version_and_architectures() {
        let v = "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2026 NVIDIA \
                 Corporation\nBuilt on Mon_Oct_12\nCuda compilation tools, release 13.5, \
                 V13.5.37\nBuild cuda_13.5.r13.5/compiler.39125733_0\n";
        assert_eq!(
            version_line(v),
            "Cuda compilation tools, release 13.5, V13.5.37"
        );
        assert_eq!(release(&version_line(v)), Some((13, 5)));
        assert_eq!(
            parse_gpu_code("sm_90\nsm_75\nsm_80\nsm_100\n"),
            ["sm_100", "sm_100a", "sm_75", "sm_80", "sm_90", "sm_90a"]
        );
    }

    #[test]
    fn virtual_architectures_follow_the_real_ones() {
        let a = |s: &str| virtual_arch(&Arch::new(s).unwrap());
        assert_eq!(a("sm_90"), "compute_90");
        assert_eq!(a("sm_90a"), "compute_90a");
        assert_eq!(a("90-real"), "compute_90");
        assert_eq!(a("compute_80"), "compute_80");
        let g = |s: &str| gencode(&Arch::new(s).unwrap());
        assert_eq!(g("sm_90"), "arch=compute_90,code=[sm_90,compute_90]");
        assert_eq!(g("90-real"), "arch=compute_90,code=sm_90");
        assert_eq!(g("compute_80"), "arch=compute_80,code=compute_80");
    }

    #[test]
    fn names_of_nvcc() {
        assert!(is_nvcc(Path::new("/usr/local/cuda/bin/nvcc")));
        assert!(is_nvcc(Path::new("nvcc.exe")));
        assert!(!is_nvcc(Path::new("/usr/bin/clang-19")));
    }
}
