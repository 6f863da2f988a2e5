//! Ordinary HIP sources (`#include <hip/hip_runtime.h>`, `threadIdx`, `__shared__`,
//! `__syncthreads()`, `expf`) with Debian 12's ROCm 5.2, which `build-support/setup.sh`
//! installs (`hipcc libamdhip64-dev rocm-device-libs clang-15`): no GPU needed.
//!
//! - a crate outside the repository (a temporary directory, depending on offload-build by
//!   path) builds such kernels for three architectures through `Build` with `cargo build`, and
//!   every code object carries the shared-memory tile, the barrier and the exponential from the
//!   device libraries, with no undefined symbol;
//! - the same sources through the CMake package's `offload_add_fatbin`;
//! - at `-O0` the kernel calls `__ocml_exp_f32`, a function the device libraries define;
//! - an `Embed::HipObject` or `ContainerOnly` build links `libamdhip64` (`Build::link_hip_runtime(false)`: not);
//! - gfx1100, which these device libraries lack, is refused naming what is installed;
//! - another clang (`CLANG=clang-19`) on such a source says the ROCm install is not used with
//!   it; `HIPCXX` / `HIP_CLANG_PATH` naming no compiler is an error naming the variable.
//!
//! The "no ROCm found" message (where discovery looked, the Debian packages) is checked by the
//! unit test `build::tool::tests::no_rocm_found_says_where_it_looked`, which can hide `/usr`.
//! A missing ROCm package fails these tests.

use std::path::Path;
use std::process::Command;

use offload_build::builder::{Build, Embed, Error};
use offload_build::bundle::BinaryBundle;

/// The clang Debian's ROCm 5.2 was built for (what its `hipconfig` reports).
const ROCM_CLANG: &str = "/usr/bin/clang-15";
const DEVICE_LIBS: &str = "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode";
const OBJDUMP: &str = "/usr/lib/llvm-19/bin/llvm-objdump";
const NM: &str = "/usr/lib/llvm-19/bin/llvm-nm";
const READELF: &str = "/usr/lib/llvm-19/bin/llvm-readelf";
/// Architectures these device libraries serve, sorted as a build reports them.
const ARCHS: [&str; 3] = ["gfx1030", "gfx906", "gfx90a"];
const EXE: &str = env!("CARGO_BIN_EXE_offload-build");

const HEADER: &str = "#pragma once\n#define TILE 256\n";

/// A block-wide softmax numerator: shared memory, a barrier, the thread index and `expf`.
const KERNEL: &str = r#"#include <hip/hip_runtime.h>
#include "tile.h"

extern "C" __global__ void __launch_bounds__(TILE)
softmax_numerators(const float* x, float* y, unsigned n) {
    __shared__ float tile[TILE];
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = expf(tile[threadIdx.x] - tile[0]);
}
"#;

pub(crate) fn require_rocm() {
    for f in [
        ROCM_CLANG,
        "/usr/bin/hipconfig",
        "/usr/include/hip/hip_runtime.h",
        &format!("{DEVICE_LIBS}/ocml.bc"),
        "/usr/lib/x86_64-linux-gnu/libamdhip64.so",
        OBJDUMP,
    ] {
        assert!(
            Path::new(f).exists(),
            "{f} is missing: run build-support/setup.sh as root (Debian's ROCm 5.2: \
             hipcc libamdhip64-dev rocm-device-libs clang-15)"
        );
    }
}

/// A directory with `k.hip` and `include/tile.h`.
fn sources() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("include")).unwrap();
    std::fs::write(dir.path().join("k.hip"), KERNEL).unwrap();
    std::fs::write(dir.path().join("include/tile.h"), HEADER).unwrap();
    dir
}

/// A builder with no compiler or architecture from the outer environment: discovery finds
/// Debian's ROCm and its clang.
fn build(dir: &Path) -> Build {
    let mut b = Build::new();
    b.out_dir(dir.join("out"))
        .cargo_metadata(false)
        .env("CARGO_MANIFEST_DIR", dir)
        .env("CARGO_PKG_NAME", "rocm-kernels")
        .env("TARGET", "x86_64-unknown-linux-gnu")
        .file("k.hip")
        .include("include")
        .jobserver(jobserver::Client::new(2).unwrap());
    let own = [
        "ROCM_KERNELS_OFFLOAD_ARCH",
        "CLANG",
        "OFFLOAD_BUILD_LAUNCHER",
    ];
    for &var in crate::support::BUILD_ENV_VARS.iter().chain(&own) {
        b.env_remove(var);
    }
    b
}

fn run(tool: &str, args: &[&Path]) -> String {
    let o = Command::new(tool).args(args).output().unwrap();
    assert!(o.status.success(), "{tool} {args:?}: {o:?}");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Every architecture's code object of a bundle: the kernel with its 1 KiB shared tile, the
/// barrier, LDS accesses and the exponential inlined from ocml; nothing left undefined.
fn check_bundle(fatbin: &[u8]) {
    let bundle = BinaryBundle::parse(fatbin)
        .expect("a valid bundle")
        .expect("a bundle");
    let mut seen = Vec::new();
    let dir = tempfile::tempdir().unwrap();
    for e in bundle.entries() {
        let id = e.id_str().into_owned();
        let Some(arch) = id.strip_prefix("hipv4-amdgcn-amd-amdhsa--") else {
            assert!(id.starts_with("host-"), "{id}");
            continue;
        };
        seen.push(arch.to_string());
        let co = dir.path().join(format!("{arch}.co"));
        std::fs::write(&co, e.data).unwrap();
        let notes = run(READELF, &[Path::new("-n"), &co]);
        assert!(
            notes.contains(&format!("amdhsa.target:   amdgcn-amd-amdhsa--{arch}"))
                && notes.contains(".group_segment_fixed_size: 1024")
                && notes.contains("softmax_numerators"),
            "{arch}: {notes}"
        );
        let asm = run(OBJDUMP, &[Path::new("-d"), &co]);
        for want in ["<softmax_numerators>:", "s_barrier", "v_exp_f32", "ds_"] {
            assert!(asm.contains(want), "{arch}: no {want} in\n{asm}");
        }
        let undefined = run(NM, &[Path::new("-u"), &co]);
        assert!(
            undefined.trim().is_empty(),
            "{arch}: undefined: {undefined}"
        );
    }
    assert_eq!(seen, ARCHS);
}

/// A crate outside the repository whose build.rs compiles the kernels for three
/// architectures; `cargo build` with no GPU, then the program prints its archs and writes the
/// fat binary for the checks. Its target directory is kept under the workspace's, so a rerun
/// compiles only what changed.
#[test]
fn outside_crate_builds_real_hip_for_three_archs() {
    require_rocm();
    let src = sources();
    let dir = src.path();
    let root = crate::support::repo_root();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"rocm-kernels\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
             publish = false\n\n[workspace]\n\n[build-dependencies]\n\
             offload-build = {{ path = \"{}\" }}\n",
            root.join("crates/offload-build").display()
        ),
    )
    .unwrap();
    // The workspace's lock file: the same dependency versions, already downloaded.
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::write(
        dir.join("build.rs"),
        "fn main() {\n    offload_build::Build::new()\n        .file(\"k.hip\")\n        \
         .include(\"include\")\n        .archs(\"gfx90a;gfx1030;gfx906\")\n        \
         .compile(\"kernels\");\n}\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("src/main.rs"),
        "mod kernels {\n    include!(concat!(env!(\"OUT_DIR\"), \"/kernels.rs\"));\n}\n\
         fn main() {\n    println!(\"archs: {}\", kernels::ARCHS.join(\" \"));\n    \
         println!(\"kernels: {}\", kernels::KERNELS.join(\" \"));\n    \
         std::fs::write(std::env::args().nth(1).unwrap(), kernels::container()).unwrap();\n}\n",
    )
    .unwrap();
    let target = crate::support::outside_crate_target_dir();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut c = Command::new(cargo);
    c.current_dir(dir)
        .args(["run", "--offline", "--quiet", "--"])
        .arg(dir.join("k.hipfb"))
        .env("CARGO_TARGET_DIR", &target)
        .env("CARGO_BUILD_JOBS", "1")
        // No pkg-config to be found: as a dependency, offload-build needs only a C compiler
        // (the bundled zstd; zlib found by a test compile or built).
        .env("PKG_CONFIG", "/nonexistent/pkg-config");
    for &var in crate::support::BUILD_ENV_VARS.iter().chain(&[
        "CLANG",
        "RUSTFLAGS",
        "CARGO_MAKEFLAGS",
        "MAKEFLAGS",
    ]) {
        c.env_remove(var);
    }
    let o = c.output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "cargo run of the outside crate failed:\n{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.contains("archs: gfx1030 gfx906 gfx90a") && out.contains("kernels: softmax_numerators"),
        "{out}"
    );
    check_bundle(&std::fs::read(dir.join("k.hipfb")).unwrap());
}

/// The same sources through the CMake package: no compiler named, discovery finds ROCm.
#[test]
fn offload_add_fatbin_builds_the_same_sources() {
    require_rocm();
    let src = sources();
    let dir = src.path();
    std::fs::write(
        dir.join("CMakeLists.txt"),
        format!(
            "cmake_minimum_required(VERSION 3.20)\nproject(p LANGUAGES NONE)\n\
             include(\"{}\")\n\
             offload_add_fatbin(k SOURCES k.hip INCLUDE_DIRECTORIES include \
             ARCHITECTURES gfx90a gfx1030 gfx906 EMBED FATBIN)\n\
             add_custom_target(all_k ALL DEPENDS k_offload_build)\n",
            crate::support::repo_root()
                .join("build-support/cmake/OffloadBuild.cmake")
                .display()
        ),
    )
    .unwrap();
    let cmake = || {
        let mut c = Command::new("cmake");
        for &var in
            crate::support::BUILD_ENV_VARS
                .iter()
                .chain(&["CLANG", "MAKEFLAGS", "CARGO_MAKEFLAGS"])
        {
            c.env_remove(var);
        }
        c
    };
    let o = cmake()
        .arg("-S")
        .arg(dir)
        .arg("-B")
        .arg(dir.join("b"))
        .args(["-G", "Ninja"])
        .arg(format!("-DOFFLOAD_BUILD_EXECUTABLE={EXE}"))
        .output()
        .expect("cmake");
    let t = format!("{o:?}");
    assert!(o.status.success(), "{t}");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&format!("with {ROCM_CLANG}")),
        "{t}"
    );
    let o = cmake()
        .arg("--build")
        .arg(dir.join("b"))
        .output()
        .expect("cmake --build");
    assert!(o.status.success(), "{o:?}");
    check_bundle(&std::fs::read(dir.join("b/k.hipfb")).unwrap());
}

/// With function calls kept (`-O0`, and hipcc's inline-everything options turned back off, as
/// user flags come after them), the kernel calls `__ocml_exp_f32`, which the device libraries
/// define in the code object itself.
#[test]
fn device_math_is_ocml_from_the_device_libraries() {
    require_rocm();
    let src = sources();
    let mut b = build(src.path());
    b.arch("gfx90a").flags([
        "-O0",
        "-mllvm",
        "-amdgpu-early-inline-all=false",
        "-mllvm",
        "-amdgpu-function-calls=true",
    ]);
    let c = b.try_compile("k").unwrap();
    assert!(
        c.compiler
            .as_deref()
            .is_some_and(|p| p == Path::new(ROCM_CLANG)),
        "{:?}",
        c.compiler
    );
    let fatbin = std::fs::read(&c.container_file).unwrap();
    let bundle = BinaryBundle::parse(&fatbin).unwrap().unwrap();
    let e = bundle
        .entries()
        .iter()
        .find(|e| e.id_str().ends_with("gfx90a"))
        .unwrap();
    let co = src.path().join("k-O0.co");
    std::fs::write(&co, e.data).unwrap();
    let syms = run(NM, &[&co]);
    assert!(
        syms.lines()
            .any(|l| l.ends_with(" t __ocml_exp_f32") || l.ends_with(" T __ocml_exp_f32")),
        "{syms}"
    );
    let asm = run(OBJDUMP, &[Path::new("-d"), &co]);
    assert!(
        asm.contains("<__ocml_exp_f32>:") && asm.contains("s_swappc"),
        "{asm}"
    );
}

/// An `Embed::HipObject` or `ContainerOnly` build links the HIP runtime of the install it compiled
/// with.
#[test]
fn hip_object_links_the_hip_runtime_unless_turned_off() {
    require_rocm();
    let src = sources();
    let mut b = build(src.path());
    b.arch("gfx90a").embed(Embed::HipObject);
    let c = b.try_compile("k").unwrap();
    let links = |d: &[String]| {
        d.iter().any(|l| l == "rustc-link-lib=dylib=amdhip64")
            && d.iter()
                .any(|l| l == "rustc-link-search=native=/usr/lib/x86_64-linux-gnu")
    };
    assert!(links(&c.cargo_directives), "{:?}", c.cargo_directives);
    b.link_hip_runtime(false);
    let c = b.try_compile("k").unwrap();
    assert!(
        !c.cargo_directives.iter().any(|d| d.contains("amdhip64")),
        "{:?}",
        c.cargo_directives
    );
    // The fat binary alone (ContainerOnly) is loaded with the runtime's hipModuleLoadData: it
    // links the runtime too (issue 28), unless turned off.
    let mut b = build(src.path());
    b.arch("gfx90a");
    let c = b.try_compile("k").unwrap();
    assert!(links(&c.cargo_directives), "{:?}", c.cargo_directives);
    b.link_hip_runtime(false);
    let c = b.try_compile("k").unwrap();
    assert!(!c.cargo_directives.iter().any(|d| d.contains("amdhip64")));
}

#[test]
fn arch_without_device_library_is_refused_naming_what_is_installed() {
    require_rocm();
    let src = sources();
    let mut b = build(src.path());
    b.archs("gfx90a;gfx1100");
    match b.try_compile("k") {
        Err(e @ Error::DeviceLibMissing { .. }) => {
            let t = e.to_string();
            assert!(
                t.contains("`gfx1100` (from Build::archs)")
                    && t.contains(DEVICE_LIBS)
                    && t.contains("gfx90a")
                    && t.contains("gfx1030"),
                "{t}"
            );
        }
        other => panic!("{other:?}"),
    }
}

/// clang 19 chosen by `CLANG` is not the clang the install was built for: the install is not
/// used, and the failed compile says so.
#[test]
fn another_clang_says_the_rocm_install_is_not_used() {
    require_rocm();
    let src = sources();
    let mut b = build(src.path());
    b.arch("gfx90a").env("CLANG", crate::support::CLANG19);
    match b.try_compile("k") {
        Err(e @ Error::CompileFailed { .. }) => {
            let t = e.to_string();
            assert!(
                t.contains("a ROCm install was found at /usr (by hipconfig)")
                    && t.contains("chosen by CLANG")
                    && t.contains(ROCM_CLANG),
                "{t}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn compiler_variable_naming_no_compiler_is_an_error_naming_it() {
    require_rocm();
    let src = sources();
    for (var, value) in [
        ("HIPCXX", "/nowhere/clang"),
        ("HIP_CLANG_PATH", "/nowhere/bin"),
    ] {
        let mut b = build(src.path());
        b.arch("gfx90a").env(var, value);
        match b.try_compile("k") {
            Err(e @ Error::CompilerVar { .. }) => {
                let t = e.to_string();
                assert!(
                    t.starts_with(&format!("{var}=`{value}` names no compiler"))
                        && t.contains(&format!("or unset it; offload-build does not fall back to another clang when {var} is set")),
                    "{t}"
                );
            }
            other => panic!("{var}: {other:?}"),
        }
    }
    // The command line says the same.
    let o = Command::new(EXE)
        .args(["compile", "--archs", "gfx90a", "-o"])
        .arg(src.path().join("k.hipfb"))
        .arg(src.path().join("k.hip"))
        .env("HIPCXX", "/nowhere/clang")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("HIPCXX=`/nowhere/clang` names no compiler"),
        "{err}"
    );
}

/// Issue 49, case 1: a variable that changes what `hipconfig` says (`HIP_PLATFORM` here)
/// switched between two builds into one out-dir gives what a clean build with it gives (exit
/// status and bytes): the remembered answer is keyed by it.
#[test]
fn hip_platform_switched_into_one_out_dir_is_a_clean_build() {
    let dir = sources();
    let d = dir.path();
    // (exit status, output bytes) of `compile` into `out` with HIP_PLATFORM as given.
    let compile = |out: &str, platform: Option<&str>| {
        let _ = std::fs::remove_file(d.join("k.hipfb"));
        let mut c = Command::new(EXE);
        c.current_dir(d)
            .args([
                "compile", "--archs", "gfx90a", "--embed", "fatbin", "-I", "include",
            ])
            .args(["--out-dir", out, "-o", "k.hipfb", "k.hip"]);
        for &var in crate::support::BUILD_ENV_VARS
            .iter()
            .chain(&["CLANG", "HIP_PLATFORM"])
        {
            c.env_remove(var);
        }
        if let Some(p) = platform {
            c.env("HIP_PLATFORM", p);
        }
        let o = c.output().unwrap();
        (o.status.code(), std::fs::read(d.join("k.hipfb")).ok())
    };
    for (first, then) in [(None, Some("nvidia")), (Some("nvidia"), None)] {
        let clean = compile(&format!("clean-{then:?}"), then);
        compile("shared", first);
        assert_eq!(
            compile("shared", then),
            clean,
            "HIP_PLATFORM {first:?} then {then:?} into one out-dir"
        );
        let _ = std::fs::remove_dir_all(d.join("shared"));
    }
}
