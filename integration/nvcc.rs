//! nvcc as the CUDA compiler (issue 24, item 1), with the nvcc of NVIDIA's CUDA 13 wheels in
//! the setup script's virtualenv: found through `VIRTUAL_ENV` and used by default; one PTX
//! and one cubin job per (source, architecture) whose cubin is byte-identical to `nvcc
//! -cubin` of the source and whose PTX is `nvcc -ptx`'s; CMake's `NN-real` / `NN-virtual`;
//! nvcc's own flags and host compiler reaching its commands; cached rebuilds; clang still
//! chosen by `cuda_compiler`, `compiler` or `CUDACXX`; nvcc asked for but missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use offload_build::builder::{Build, Error};
use offload_build::package::ImageKind;
use offload_build::{CompilerKind, Container};

use crate::cuda_compile::images;
use crate::support::nvidia;

const KERNEL: &str = r#"#include <cuda_fp16.h>
extern "C" __global__ void scale(float *a, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= s;
}
extern "C" __global__ void half_add(__half *a, const __half *b) {
  a[threadIdx.x] = __hadd(a[threadIdx.x], b[threadIdx.x]);
}
"#;

struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("k.cu"), KERNEL).unwrap();
        std::fs::create_dir(dir.path().join("empty-path")).unwrap();
        // A source changed less than a tick before a compile starts is not recorded in the
        // cache (the compile may have read either version): let the clock move on.
        std::thread::sleep(std::time::Duration::from_millis(200));
        Project { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A build of `k.cu` with the wheels' virtualenv as `VIRTUAL_ENV` and nothing else to find
    /// (`PATH`: `/usr/bin` for nvcc's host compiler `gcc`, which holds no nvcc).
    fn build(&self, archs: &str) -> Build {
        let mut b = Build::new();
        b.out_dir(self.path("out"))
            .cargo_metadata(false)
            .file(self.path("k.cu"))
            .archs(archs)
            .env("PATH", "/usr/bin:/bin")
            .jobserver(jobserver::Client::new(2).unwrap());
        for var in crate::support::CUDA_ENV_VARS {
            b.env_remove(var);
        }
        b.env_remove("CXX")
            .env_remove("OFFLOAD_BUILD_CACHE_DIR")
            .env("VIRTUAL_ENV", nvidia::venv());
        b
    }
}

/// Runs the wheels' nvcc in `dir` with `args`; returns the bytes it writes. The output goes
/// to another directory: a new file beside the sources would (rightly) invalidate the
/// cache's record of the directories searched for headers.
fn nvcc(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("out");
    let status = Command::new(nvidia::nvcc())
        .args(args)
        .arg("-o")
        .arg(&file)
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(status.success(), "nvcc {args:?}");
    std::fs::read(file).unwrap()
}

#[test]
fn nvcc_from_the_wheels_is_the_default_and_matches_nvcc_cubin() {
    let p = Project::new();
    let c = p
        .build("sm_80;sm_90;90-virtual;75-real")
        .try_compile("k")
        .unwrap();
    let compiler = c.compiler.clone().unwrap();
    assert!(compiler.ends_with("nvidia/cu13/bin/nvcc"), "{compiler:?}");
    let version = c.compiler_version.clone().unwrap();
    assert!(version.contains("release 13."), "{version}");
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    let imgs = images(&c);
    let mut kinds: Vec<(&str, ImageKind)> = imgs.iter().map(|(a, k, _)| (a.as_str(), *k)).collect();
    kinds.sort_by_key(|(a, k)| (a.to_string(), format!("{k:?}")));
    // 75-real: the cubin alone; 90-virtual: one more PTX.
    assert_eq!(
        kinds,
        [
            ("sm_75", ImageKind::Cubin),
            ("sm_80", ImageKind::Cubin),
            ("sm_80", ImageKind::Ptx),
            ("sm_90", ImageKind::Cubin),
            ("sm_90", ImageKind::Ptx),
            ("sm_90", ImageKind::Ptx),
        ],
        "{kinds:?}"
    );
    let dir = p.path("");
    let cubin = nvcc(&dir, &["-cubin", "-arch=sm_90", "k.cu"]);
    let ptx = nvcc(&dir, &["-ptx", "-arch=compute_90", "k.cu"]);
    assert!(
        imgs.iter()
            .any(|(a, k, b)| a == "sm_90" && *k == ImageKind::Cubin && *b == cubin),
        "the sm_90 cubin differs from nvcc -cubin -arch=sm_90's"
    );
    assert!(
        imgs.iter()
            .any(|(a, k, b)| a == "sm_90" && *k == ImageKind::Ptx && *b == ptx),
        "the sm_90 PTX differs from nvcc -ptx -arch=compute_90's"
    );
    assert_eq!(c.kernels, ["half_add", "scale"]);

    // Unchanged: every job from the cache.
    let again = p
        .build("sm_80;sm_90;90-virtual;75-real")
        .try_compile("k")
        .unwrap();
    assert_eq!(again.jobs_run, 0);
    assert_eq!(
        std::fs::read(&again.container_file).unwrap(),
        std::fs::read(&c.container_file).unwrap()
    );
}

#[test]
fn nvcc_flags_and_host_compiler_reach_its_commands() {
    let p = Project::new();
    let mut b = p.build("sm_90");
    b.flag("-lineinfo")
        .flag("--use_fast_math")
        .env("CUDAHOSTCXX", "/usr/bin/g++");
    let c = b.try_compile("k").unwrap();
    let ptx = images(&c)
        .into_iter()
        .find(|(_, k, _)| *k == ImageKind::Ptx)
        .unwrap()
        .2;
    let ptx = String::from_utf8(ptx).unwrap();
    assert!(ptx.contains(".loc"), "-lineinfo gives line locations");
    let cmd = b.try_get_compiler().unwrap();
    let args: Vec<String> = cmd
        .args()
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let at = args.iter().position(|a| a == "-ccbin").expect("-ccbin");
    assert_eq!(args[at + 1], "/usr/bin/g++");
    assert!(args.iter().any(|a| a == "-arch=compute_90"), "{args:?}");
    assert!(args.iter().any(|a| a == "--use_fast_math"), "{args:?}");

    // A flag nvcc rejects fails the build with nvcc's message.
    let mut bad = p.build("sm_90");
    bad.flag("--no-such-nvcc-flag");
    let e = bad.try_compile("k").unwrap_err().to_string();
    assert!(e.contains("no-such-nvcc-flag"), "{e}");
}

#[test]
fn clang_stays_selectable() {
    let p = Project::new();
    let mut b = p.build("sm_90");
    b.cuda_compiler(CompilerKind::Clang)
        .env("PATH", p.path("empty-path"));
    let c = b.try_compile("k_clang");
    // Which clang and whether it compiles this source with the wheels is the clang tests'
    // business: here only that clang, not nvcc, was asked.
    let used = match &c {
        Ok(c) => c.compiler.clone().unwrap(),
        Err(e) => PathBuf::from(e.to_string()),
    };
    assert!(
        !used.to_string_lossy().contains("nvcc"),
        "cuda_compiler(Clang) ran {used:?}"
    );

    let mut b = p.build("sm_90");
    b.env("CUDACXX", "/usr/lib/llvm-22/bin/clang");
    let cmd = b.try_get_compiler().unwrap();
    assert_eq!(cmd.path(), Path::new("/usr/lib/llvm-22/bin/clang"));

    let mut b = p.build("sm_90");
    b.env("CUDACXX", nvidia::nvcc());
    assert_eq!(b.try_get_compiler().unwrap().path(), nvidia::nvcc());

    let mut b = p.build("sm_90");
    b.env("CUDACXX", "/no/such/nvcc");
    let e = b.try_compile("k").unwrap_err();
    assert!(
        matches!(&e, Error::CompilerVar { var, .. } if var == "CUDACXX"),
        "{e}"
    );
}

#[test]
fn nvcc_asked_for_but_missing_says_where_it_looked() {
    let p = Project::new();
    let mut b = p.build("sm_90");
    b.env("VIRTUAL_ENV", p.path("empty-venv"))
        .env("PATH", p.path("empty-path"))
        .cuda_compiler(CompilerKind::Nvcc);
    let e = b.try_compile("k").unwrap_err();
    match &e {
        Error::ToolNotFound { tool, searched } => {
            assert!(tool.contains("nvcc"), "{tool}");
            assert!(
                searched.iter().any(|s| s.ends_with("nvidia/cu13/bin/nvcc")),
                "{searched:?}"
            );
        }
        other => panic!("expected ToolNotFound, got {other}"),
    }
    let msg = e.to_string();
    assert!(msg.contains("nvidia-cuda-nvcc"), "{msg}");
}

#[test]
fn nvcc_fat_binary_lists_each_image_in_cuobjdump() {
    let p = Project::new();
    // sm_90a: nvcc's architecture-specific variant, which `--list-gpu-code` does not list.
    let mut b = p.build("sm_80;sm_90a");
    b.container(Container::CudaFatbin)
        .embed(offload_build::Embed::ContainerOnly);
    let c = b.try_compile("k").unwrap();
    let out = Command::new(nvidia::cuobjdump())
        .args(["--list-elf", "--list-ptx"])
        .arg(&c.container_file)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for want in ["sm_80.cubin", "sm_90a.cubin", "sm_80.ptx", "sm_90a.ptx"] {
        assert!(text.contains(want), "{want} not in\n{text}");
    }
}
