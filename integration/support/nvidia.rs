//! NVIDIA's CUDA tools from PyPI, the references of the NVIDIA fat binary tests: the
//! virtualenv `build-support/setup.sh` makes (`/opt/offload-build/nvidia-venv`, or where
//! `OFFLOAD_BUILD_NVIDIA_VENV` points). A missing tool fails the test with the setup hint.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The default virtualenv of NVIDIA's wheels.
pub const DEFAULT_VENV: &str = "/opt/offload-build/nvidia-venv";

/// What to tell someone whose machine lacks NVIDIA's wheels.
pub const NVIDIA_SETUP_HINT: &str = "run `build-support/setup.sh` as root: it makes the virtualenv \
     /opt/offload-build/nvidia-venv with NVIDIA's wheels (nvidia-cuda-nvcc-cu12, \
     nvidia-cuda-cuobjdump, nvidia-nvfatbin-cu12, and CUDA 13.5's nvidia-cuda-nvcc, \
     nvidia-nvvm, nvidia-cuda-runtime, nvidia-cuda-crt, nvidia-cuda-cccl, \
     nvidia-cuda-profiler-api); \
     OFFLOAD_BUILD_NVIDIA_VENV=DIR names another virtualenv";

/// The virtualenv: `OFFLOAD_BUILD_NVIDIA_VENV`, else [`DEFAULT_VENV`].
pub fn venv() -> PathBuf {
    std::env::var_os("OFFLOAD_BUILD_NVIDIA_VENV")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from(DEFAULT_VENV), PathBuf::from)
}

/// The virtualenv's `site-packages/nvidia` directory.
pub fn nvidia_dir() -> PathBuf {
    let venv = venv();
    let lib = venv.join("lib");
    let found = std::fs::read_dir(&lib).ok().and_then(|rd| {
        rd.filter_map(Result::ok)
            .map(|e| e.path().join("site-packages/nvidia"))
            .find(|p| p.is_dir())
    });
    found.unwrap_or_else(|| {
        panic!(
            "no {}/python3*/site-packages/nvidia: {NVIDIA_SETUP_HINT}",
            lib.display()
        )
    })
}

fn file(rel: &str) -> PathBuf {
    let p = nvidia_dir().join(rel);
    assert!(
        p.is_file(),
        "{} is missing: {NVIDIA_SETUP_HINT}",
        p.display()
    );
    p
}

/// `ptxas` of CUDA 12.9 (`nvidia-cuda-nvcc-cu12`).
pub fn ptxas() -> PathBuf {
    file("cuda_nvcc/bin/ptxas")
}

/// `cuobjdump` (`nvidia-cuda-cuobjdump`).
pub fn cuobjdump() -> PathBuf {
    file("cu13/bin/cuobjdump")
}

/// `nvcc` of CUDA 13 (`nvidia-cuda-nvcc`); run it with [`cu13_bin`] first on `PATH`.
pub fn nvcc() -> PathBuf {
    file("cu13/bin/nvcc")
}

/// `fatbinary` of CUDA 13 (`nvidia-cuda-nvcc`).
pub fn fatbinary() -> PathBuf {
    file("cu13/bin/fatbinary")
}

/// The directory of CUDA 13's tools (nvcc finds ptxas and fatbinary on `PATH`).
pub fn cu13_bin() -> PathBuf {
    nvcc().parent().unwrap().to_path_buf()
}

/// `libnvfatbin.so.12` (`nvidia-nvfatbin-cu12`).
pub fn libnvcontainer() -> PathBuf {
    file("nvfatbin/lib/libnvfatbin.so.12")
}

/// The virtualenv's Python.
pub fn python() -> PathBuf {
    let p = venv().join("bin/python3");
    assert!(
        p.is_file(),
        "{} is missing: {NVIDIA_SETUP_HINT}",
        p.display()
    );
    p
}

/// Runs `cmd`, failing the test (naming `what`, with its status, stdout and stderr) unless
/// it succeeds.
pub fn check(cmd: &mut Command, what: &str) -> std::process::Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `cuobjdump --list-elf --list-ptx` of `file`, one line per entry.
pub fn cuobjdump_list(file: &Path) -> Vec<String> {
    let out = check(
        Command::new(cuobjdump())
            .args(["--list-elf", "--list-ptx"])
            .arg(file),
        "cuobjdump --list-elf --list-ptx",
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}
