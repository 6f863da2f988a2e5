//! Compiles the two kernel files (ordinary HIP: `hip/hip_runtime.h`, `threadIdx`, `__shared__`,
//! `expf`) for three AMD GPU architectures, in parallel and cached, into
//! `$OUT_DIR/kernels.hipfb` and `$OUT_DIR/kernels.rs`. They need a ROCm install (Debian 12:
//! `apt-get install hipcc libamdhip64-dev rocm-device-libs clang-15`, which
//! `build-support/setup.sh` installs); offload-build finds it and its clang.
//!
//! The architectures given here are this crate's default: whoever builds overrides them with
//! `OFFLOAD_ARCH` (or `HIP_VECTOR_ADD_OFFLOAD_ARCH`); drop the `.archs(..)` line to take them
//! from the rest of offload-build's resolution order (`AMDGPU_TARGETS`, …, the machine's GPUs,
//! the default set) as well.

fn main() {
    let compiled = offload_build::Build::new()
        .files(["kernels/vector_add.hip", "kernels/scale.hip"])
        .include("kernels")
        .define("VECTOR_ADD_BLOCK", "256")
        // Architectures Debian 12's ROCm 5.2 device libraries serve (it has no gfx1100).
        .archs("gfx90a;gfx1030;gfx906")
        .compile("kernels");
    println!(
        "cargo:rustc-env=HIP_VECTOR_ADD_COMPILER={}",
        compiled.compiler_version.unwrap_or_default()
    );
}
