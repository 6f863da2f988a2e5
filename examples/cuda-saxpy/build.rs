//! Compiles `kernels/saxpy.cu`, standard CUDA (`__global__`, `blockIdx`, `threadIdx`), for
//! `sm_80` and `sm_90` into an NVIDIA fat binary (`Container::CudaFatbin`): a cubin and the
//! PTX for each architecture. No GPU is needed to build it.
//!
//! The CUDA compiler is found as CMake finds it. nvcc is the default when one is found:
//! `CUDACXX`, a CUDA install (`CUDA_PATH`, `PATH`, `/usr/local/cuda`), or NVIDIA's wheels
//! (`pip install nvidia-cuda-nvcc nvidia-nvvm nvidia-cuda-runtime nvidia-cuda-crt`) in the
//! virtualenv of `VIRTUAL_ENV` or in `python3`'s `site-packages`:
//!
//! ```text
//! VIRTUAL_ENV=/opt/offload-build/nvidia-venv cargo run -p cuda-saxpy
//! ```
//!
//! clang builds it too: `CUDACXX=clang-22` (or `Build::cuda_compiler(CompilerKind::Clang)`
//! here), with a CUDA toolkit when one is found (an install or the wheels), else with clang's
//! own CUDA headers; the cubins then need `ptxas` (without one, each architecture is packed
//! as PTX alone, with one warning).

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
