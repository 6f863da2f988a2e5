//! Compiles `kernels/scale.hip` with its host code, as `hipcc -c` does: the kernel for three
//! AMD GPU architectures (in parallel, cached), then the host side (`launch_scale`, the
//! kernel's host stub and the constructor that registers it) with that device code embedded,
//! into `libscale.a`, which Cargo links with the HIP runtime and the C++ standard library.
//! Needs a ROCm install (Debian 12: `apt-get install hipcc libamdhip64-dev rocm-device-libs
//! clang-15`, which `build-support/setup.sh` installs).

fn main() {
    offload_build::Build::new()
        .file("kernels/scale.hip")
        // Architectures Debian 12's ROCm 5.2 device libraries serve (it has no gfx1100).
        .archs("gfx90a;gfx1030;gfx906")
        .host_code(true)
        .compile("scale");
}
