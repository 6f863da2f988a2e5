//! Compiles the kernels of `kernels/` — standard CUDA that includes `cuda_fp16.h`,
//! `cuda_bf16.h` and cub — for `sm_80` and `sm_90` into an NVIDIA fat binary
//! (`Container::CudaFatbin`): a cubin and the PTX for each architecture. No GPU is needed to
//! build it, but a CUDA toolkit is (the headers):
//!
//! - nvcc, the default when one is found: `CUDACXX`, a CUDA install (`CUDA_PATH`, `PATH`,
//!   `/usr/local/cuda`), or NVIDIA's wheels (`pip install nvidia-cuda-nvcc nvidia-nvvm
//!   nvidia-cuda-runtime nvidia-cuda-crt nvidia-cuda-cccl`) in the virtualenv of
//!   `VIRTUAL_ENV` or in `python3`'s `site-packages`:
//!   `VIRTUAL_ENV=/opt/offload-build/nvidia-venv cargo run -p cuda-kernels`;
//! - clang: `CUDACXX=clang-22` (or `Build::cuda_compiler(CompilerKind::Clang)` here), with
//!   the toolkit of a CUDA install or of the same wheels.

use offload_build::{Build, Container};

fn main() {
    let compiled = Build::new()
        .files(["kernels/half.cu", "kernels/shared.cu", "kernels/reduce.cu"])
        .archs("sm_80;sm_90")
        .container(Container::CudaFatbin)
        .compile("kernels");
    println!(
        "cargo:rustc-env=CUDA_KERNELS_COMPILER={}",
        compiled.compiler_version.unwrap_or_default()
    );
}
