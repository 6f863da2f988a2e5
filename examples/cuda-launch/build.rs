//! Compiles `kernels/scale.cu` with its host code, as `nvcc -c` does (and the `cc` crate's
//! `.cuda(true)`): the kernel for `sm_80` and `sm_90` and the host side (`launch_scale`, the
//! kernel's stub and registration) in one cached nvcc job, into `libscale.a`, which Cargo
//! links with the toolkit's static CUDA runtime and the C++ standard library. Needs nvcc: a
//! CUDA install or NVIDIA's wheels (`VIRTUAL_ENV=/opt/offload-build/nvidia-venv cargo run -p
//! cuda-launch`); not a default member of the workspace for that reason.

fn main() {
    offload_build::Build::new()
        .file("kernels/scale.cu")
        .archs("sm_80;sm_90")
        .host_code(true)
        .compile("scale");
}
