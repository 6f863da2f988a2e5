//! Compiles `kernels/saxpy.cu` for `sm_80` and `sm_90` into an NVIDIA fat binary
//! (`Container::CudaFatbin`): PTX from clang for each architecture, and a cubin too when
//! `ptxas` is found (a CUDA install, or NVIDIA's `nvidia-cuda-nvcc-cu12` wheel). No CUDA
//! install and no GPU are needed to build it.

use offload_build::{Build, Container};

fn main() {
    let compiled = Build::new()
        .file("kernels/saxpy.cu")
        .archs("sm_80;sm_90")
        .container(Container::CudaFatbin)
        .compile("kernels");
    println!(
        "cargo:rustc-env=CUDA_SAXPY_COMPILER={}",
        compiled.compiler_version.unwrap_or_default()
    );
}
