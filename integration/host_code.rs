//! Sources with their host code (`compile --host-code`, `Build::host_code`, CMake
//! `offload_add_library`), against Debian 12's ROCm 5.2 (`hipcc`, clang 15), which
//! `build-support/setup.sh` installs; no GPU needed:
//!
//! - eight AMD rocm-examples programs (upstream's text, `benches/make_style/`, MIT: seven of
//!   HIP-Basic and rocPRIM's `block_sum`; the first for two architectures, the others for
//!   one): `compile --host-code` writes the object `hipcc -c -cuid=X` writes, byte for byte; each links with `hipcc` and runs with the same
//!   exit status and output as hipcc's build (without a GPU: the runtime's error); the same
//!   programs built through a build.rs crate (`main` renamed with `-Dmain=...`, called from
//!   Rust) and through CMake's `offload_add_library` run the same too;
//! - a library of two sources with `extern "C"` functions through `Build`: per (source,
//!   architecture) device jobs and one host job per source, nothing run again on a rebuild, an
//!   edit of one source recompiling that source only; it links into a C++ program with `g++`;
//! - relocatable device code across two sources (`Build::rdc`) links into a C++ and a Rust
//!   program, and each architecture's linked code object holds both functions;
//! - the launch example `examples/hip-launch` (build.rs, Rust calling the wrapper) builds and
//!   runs;
//! - CMake's `offload_add_library` gives a target a C++ executable links;
//! - settings with no meaning for host code are refused at configuration; a failed host
//!   compile names the source and says "host".

use std::path::Path;
use std::process::{Command, Output};

use offload_build::builder::{Build, Embed, Error};

const EXE: &str = env!("CARGO_BIN_EXE_offload-build");
const HIPCC: &str = "/usr/bin/hipcc";

/// The rocm-examples programs compared with hipcc (their files in `benches/make_style/`).
const PROGRAMS: [&str; 8] = [
    "saxpy",
    "matrix_multiplication",
    "shared_memory",
    "dynamic_shared",
    "warp_shuffle",
    "bit_extract",
    "device_globals",
    "block_sum",
];

fn require_rocm() {
    crate::rocm::require_rocm();
    assert!(
        Path::new(HIPCC).is_file(),
        "{HIPCC} is missing: run build-support/setup.sh as root (Debian's hipcc)"
    );
}

/// Runs `c`; a failure to start or a non-zero exit is a panic with `what` and its output
/// ([`check`](crate::support::nvidia::check), for a command given by value).
pub(crate) fn ok(mut c: Command, what: &str) -> Output {
    crate::support::nvidia::check(&mut c, what)
}

/// A command with no compiler, architecture or cache choice from the test's environment, with
/// the reference compilers' `TMPDIR` ([`crate::support::compilers_tmpdir`]).
pub(crate) fn clean(program: impl AsRef<std::ffi::OsStr>, dir: &Path) -> Command {
    let mut c = Command::new(program);
    c.current_dir(dir);
    for var in crate::support::BUILD_ENV_VARS {
        c.env_remove(var);
    }
    crate::support::set_ci(&mut c);
    c.env("TMPDIR", crate::support::compilers_tmpdir());
    c
}

/// A program's source and the headers it includes, in a directory of its own.
fn program_dir(name: &str) -> tempfile::TempDir {
    let from = crate::support::repo_root().join("benches/make_style");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        from.join(format!("{name}.hip")),
        dir.path().join(format!("{name}.hip")),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("Common")).unwrap();
    for h in ["example_utils.hpp", "cmdparser.hpp"] {
        std::fs::copy(
            from.join("Common").join(h),
            dir.path().join("Common").join(h),
        )
        .unwrap();
    }
    dir
}

/// Runs a linked program: its exit status, standard output and standard error.
pub(crate) fn run_program(exe: &Path) -> (Option<i32>, String, String) {
    let o = Command::new(exe)
        .current_dir(exe.parent().unwrap())
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Eight rocm-examples programs: `compile --host-code` and `hipcc -c` with the same `-cuid`
/// write the same object; linked by hipcc, the two programs behave the same.
#[test]
fn rocm_examples_objects_are_hipccs_byte_for_byte_and_run_alike() {
    require_rocm();
    let mut hipcc_runs = Vec::new();
    for name in PROGRAMS {
        let dir = program_dir(name);
        let d = dir.path();
        let src = format!("{name}.hip");
        let cuid = format!("-cuid={name}");
        // Two architectures for the first (the bundle's order), one for the others (time).
        let archs: &[&str] = if name == PROGRAMS[0] {
            &["gfx90a", "gfx1030"]
        } else {
            &["gfx90a"]
        };
        let mut hipcc = clean(HIPCC, d);
        hipcc
            .arg("-c")
            .args(archs.iter().map(|a| format!("--offload-arch={a}")));
        hipcc.args(["-std=c++17", "-I", "Common", &cuid, &src, "-o", "hipcc.o"]);
        ok(hipcc, &format!("hipcc -c {src}"));
        let mut ours = clean(EXE, d);
        ours.args(["compile", "--host-code", "--archs", &archs.join(";"), "-q"]);
        ours.args([
            "-I",
            "Common",
            "--flag=-std=c++17",
            &format!("--flag={cuid}"),
        ]);
        ours.args([&src, "-o", "ours.o"]);
        // What the compilers leave in TMPDIR (clang 15 keeps an empty directory per device
        // compile) goes with the job's private directory.
        let tmp = d.join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        ours.env("TMPDIR", &tmp);
        ok(ours, &format!("compile --host-code {src}"));
        let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().collect();
        assert!(left.is_empty(), "{name}: the build left {left:?} in TMPDIR");
        let (h, o) = (
            std::fs::read(d.join("hipcc.o")).unwrap(),
            std::fs::read(d.join("ours.o")).unwrap(),
        );
        assert!(
            h == o,
            "{name}: compile --host-code wrote {} bytes, hipcc -c {} bytes, not the same",
            o.len(),
            h.len()
        );
        let mut runs = Vec::new();
        for obj in ["hipcc", "ours"] {
            let mut link = clean(HIPCC, d);
            link.args([&format!("{obj}.o"), "-o", obj]);
            ok(link, &format!("hipcc linking {name}'s {obj}.o"));
            runs.push(run_program(&d.join(obj)));
        }
        assert_eq!(runs[0], runs[1], "{name}: the programs behave differently");
        hipcc_runs.push((runs[0].0, runs[0].1.clone()));
    }
    let (through_cargo, through_cmake) = through_build_rs_and_cmake();
    for (i, name) in PROGRAMS.iter().enumerate() {
        assert_eq!(
            through_cargo[i], hipcc_runs[i],
            "{name}: the build.rs program and hipcc's"
        );
        assert_eq!(
            through_cmake[i], hipcc_runs[i],
            "{name}: the CMake program and hipcc's"
        );
    }
}

/// Configures the CMake project of `dir` into `build` (Ninja, this offload-build) and builds
/// it, two jobs at a time, with `env` set for both.
pub(crate) fn cmake_build(dir: &Path, build: &Path, env: &[(&str, &std::ffi::OsStr)]) {
    let mut configure = clean("cmake", dir);
    configure.envs(env.iter().copied());
    configure
        .args(["-S", ".", "-B"])
        .arg(build)
        .args(["-G", "Ninja"]);
    configure.arg(format!("-DOFFLOAD_BUILD_EXECUTABLE={EXE}"));
    ok(configure, &format!("cmake configure of {}", dir.display()));
    let mut make = clean("cmake", dir);
    make.envs(env.iter().copied());
    make.args(["--build"]).arg(build).args(["-j", "2"]);
    ok(make, &format!("cmake --build of {}", dir.display()));
}

/// Cargo in `dir`, as [`clean`] runs a program, with the target directory the ROCm tests'
/// crates share (`target/rocm-outside-crate`, one job) and no make jobserver, compiler or
/// flags from the test's own Cargo.
pub(crate) fn outside_cargo(dir: &Path) -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut c = clean(cargo, dir);
    let target = crate::support::outside_crate_target_dir();
    c.env("CARGO_TARGET_DIR", target)
        .env("CARGO_BUILD_JOBS", "1");
    for var in [
        "CLANG",
        "CARGO_MAKEFLAGS",
        "MAKEFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
    ] {
        c.env_remove(var);
    }
    c
}

/// A program's exit status and standard output.
type Run = (Option<i32>, String);

/// The member names of the archive `lib`, in order.
pub(crate) fn members(lib: &Path) -> Vec<String> {
    let data = std::fs::read(lib).unwrap();
    offload_formats::bundle::archive::Archive::parse(&data[..])
        .unwrap()
        .members()
        .iter()
        .map(|m| String::from_utf8_lossy(m.name).into_owned())
        .collect()
}

/// Writes `<name>_shim.<ext>` into `d`: `extern "C" int run_<name>()`, which calls the
/// program's `main` as renamed by `-Dmain=<name>_main`, with no parameters (`argv` `None`)
/// or with `argc` 1 and an `argv` of type `argv` (`char**`, `const char**`) naming it.
pub(crate) fn write_shim(d: &Path, name: &str, ext: &str, argv: Option<&str>) {
    let (decl, call) = match argv {
        None => (format!("int {name}_main();"), format!("{name}_main()")),
        Some(t) => (
            format!("int {name}_main(int, {t});"),
            format!("{name}_main(1, ({t})argv)"),
        ),
    };
    std::fs::write(
        d.join(format!("{name}_shim.{ext}")),
        format!(
            "{decl}\nextern \"C\" int run_{name}() {{\n    \
             static char arg0[] = \"{name}\";\n    char* argv[] = {{arg0, nullptr}};\n    \
             (void)argv;\n    return {call};\n}}\n"
        ),
    )
    .unwrap();
}

/// A crate in `d`, `name`, whose build.rs runs `build_rs` (statements) and whose `main` runs
/// the program its argument names (`run_<program>()`, an `extern "C"` function of the
/// libraries build.rs makes; 2 for another name), built by `cargo` (an [`outside_cargo`]
/// command, with the crate's environment set); its executable.
pub(crate) fn runner_crate(
    d: &Path,
    name: &str,
    build_rs: &str,
    programs: &[&str],
    mut cargo: Command,
) -> std::path::PathBuf {
    let root = crate::support::repo_root();
    std::fs::write(d.join("build.rs"), format!("fn main() {{\n{build_rs}}}\n")).unwrap();
    let externs: String = programs
        .iter()
        .map(|p| format!("    fn run_{p}() -> i32;\n"))
        .collect();
    let arms: String = programs
        .iter()
        .map(|p| format!("        \"{p}\" => run_{p}(),\n"))
        .collect();
    std::fs::write(
        d.join("main.rs"),
        format!(
            "unsafe extern \"C\" {{\n{externs}}}\n\
             fn main() {{\n    let which = std::env::args().nth(1).unwrap_or_default();\n    \
             let code = unsafe {{ match which.as_str() {{\n{arms}        _ => 2,\n    }} }};\n    \
             std::process::exit(code);\n}}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        d.join("Cargo.toml"),
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
             publish = false\n\n[[bin]]\nname = \"{name}\"\npath = \"main.rs\"\n\n\
             [workspace]\n\n[build-dependencies]\noffload-build = {{ path = \"{}\" }}\n",
            root.join("crates/offload-build").display()
        ),
    )
    .unwrap();
    std::fs::copy(root.join("Cargo.lock"), d.join("Cargo.lock")).unwrap();
    cargo
        .args(["build", "--offline", "--quiet"])
        .env("PKG_CONFIG", "/nonexistent/pkg-config")
        .env_remove("RUSTFLAGS");
    ok(cargo, &format!("cargo build of the {name} crate"));
    root.join("target/rocm-outside-crate/debug").join(name)
}

/// The eight programs again, through a build.rs crate and through CMake; each run's exit
/// status and standard output, in [`PROGRAMS`] order.
///
/// - build.rs: one `Build::host_code` library per program, its `main` renamed with
///   `-Dmain=<name>_main` and a shim source of ours (`extern "C" int run_<name>()`, calling
///   it); the crate's Rust `main` runs the program its argument names. One executable links
///   them all, so `warp_shuffle`'s kernel and a function of it are renamed too (`-D`):
///   `dynamic_shared` and `shared_memory` define the same names, as two programs may.
/// - CMake: one `offload_add_library` per program, linked into an executable whose only
///   source is empty (`main` comes from the library).
fn through_build_rs_and_cmake() -> (Vec<Run>, Vec<Run>) {
    let root = crate::support::repo_root();
    let from = root.join("benches/make_style");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("Common")).unwrap();
    for h in ["example_utils.hpp", "cmdparser.hpp"] {
        std::fs::copy(from.join("Common").join(h), d.join("Common").join(h)).unwrap();
    }
    let mut build_rs = String::new();
    let mut called = Vec::new();
    let mut cmake = format!(
        "cmake_minimum_required(VERSION 3.20)\nproject(p LANGUAGES CXX)\ninclude(\"{}\")\n",
        root.join("build-support/cmake/OffloadBuild.cmake")
            .display()
    );
    std::fs::write(d.join("empty.cpp"), "").unwrap();
    for name in PROGRAMS {
        let src = format!("{name}.hip");
        std::fs::copy(from.join(&src), d.join(&src)).unwrap();
        cmake.push_str(&format!(
            "offload_add_library({name} STATIC SOURCES {src} INCLUDE_DIRECTORIES \
             \"${{CMAKE_CURRENT_SOURCE_DIR}}/Common\" COMPILE_OPTIONS -std=c++17 \
             ARCHITECTURES gfx90a)\nadd_executable({name}_prog empty.cpp)\n\
             target_link_libraries({name}_prog PRIVATE {name})\n"
        ));
        // One executable links every program: what warp_shuffle defines as dynamic_shared and
        // shared_memory do (a kernel, a function; as two programs may) is renamed there, as
        // `main` is in each.
        let rename = match name {
            "warp_shuffle" => {
                ".define(\"matrix_transpose_kernel\", Some(\"ws_transpose\"))\
                 .define(\"expected_matrix_transpose\", Some(\"ws_expected\"))"
            }
            _ => "",
        };
        let text = std::fs::read_to_string(d.join(&src)).unwrap();
        let argv = (!text.contains("int main()")).then_some("const char**");
        write_shim(d, name, "hip", argv);
        build_rs.push_str(&format!(
            "    offload_build::Build::new().files([\"{src}\", \"{name}_shim.hip\"])\
             .include(\"Common\").flag(\"-std=c++17\").define(\"main\", Some(\"{name}_main\"))\
             {rename}.archs(\"gfx90a\").host_code(true).compile(\"{name}\");\n"
        ));
        called.push(name);
    }
    let exe = runner_crate(d, "rocm-examples", &build_rs, &called, outside_cargo(d));
    let through_cargo = PROGRAMS
        .iter()
        .map(|name| {
            let o = Command::new(&exe)
                .arg(name)
                .current_dir(d)
                .output()
                .unwrap();
            (
                o.status.code(),
                String::from_utf8_lossy(&o.stdout).into_owned(),
            )
        })
        .collect();

    std::fs::write(d.join("CMakeLists.txt"), cmake).unwrap();
    let build = d.join("build");
    cmake_build(d, &build, &[]);
    let through_cmake = PROGRAMS
        .iter()
        .map(|name| {
            let (status, out, _) = run_program(&build.join(format!("{name}_prog")));
            (status, out)
        })
        .collect();
    (through_cargo, through_cmake)
}

const LIB_A: &str = r#"#include <hip/hip_runtime.h>
#include "factor.h"
__global__ void twice(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= FACTOR;
}
extern "C" int launch_twice(float* x, int n) {
    twice<<<(n + 63) / 64, 64>>>(x, n);
    return static_cast<int>(hipGetLastError());
}
"#;

const LIB_B: &str = r#"#include <hip/hip_runtime.h>
__global__ void fill(float* x, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = v;
}
extern "C" int device_count() {
    int n = 0;
    hipError_t e = hipGetDeviceCount(&n);
    return e == hipSuccess ? n : -static_cast<int>(e);
}
"#;

const MAIN_CPP: &str = r#"#include <cstdio>
extern "C" int device_count();
extern "C" int launch_twice(float*, int);
int main() {
    int n = device_count();
    std::printf("devices: %d\n", n);
    return n > 0 ? launch_twice(nullptr, 0) : 0;
}
"#;

/// A directory with the library's two sources, its header and the C++ program calling it.
fn library_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a.hip"), LIB_A).unwrap();
    std::fs::write(d.join("b.hip"), LIB_B).unwrap();
    std::fs::write(d.join("factor.h"), "#define FACTOR 2.0f\n").unwrap();
    std::fs::write(d.join("main.cpp"), MAIN_CPP).unwrap();
    dir
}

/// Runs the C++ program `exe` calling the library: it finds no device without a GPU, and
/// exits 0 either way.
fn assert_program_runs(exe: &Path) {
    let (status, out, _) = run_program(exe);
    assert_eq!(status, Some(0), "{out}");
    assert!(out.starts_with("devices: "), "{out}");
}

fn library_build(d: &Path) -> Build {
    let mut b = Build::new();
    b.out_dir(d.join("out"))
        .cargo_metadata(false)
        .env("CARGO_MANIFEST_DIR", d)
        .env("TARGET", "x86_64-unknown-linux-gnu")
        .files(["a.hip", "b.hip"])
        .include(".")
        .archs("gfx90a;gfx1030")
        .host_code(true)
        .jobserver(jobserver::Client::new(2).unwrap());
    for var in crate::support::BUILD_ENV_VARS {
        b.env_remove(var);
    }
    crate::support::set_build_ci(&mut b);
    b
}

/// Two sources through `Build::host_code`: device jobs per (source, architecture) and one host
/// job per source; a rebuild runs nothing, an edit of one source recompiles that source (its
/// two architectures and its host side) only; the library links into a C++ program with the
/// HIP runtime and runs (without a GPU it finds no device).
#[test]
fn a_host_code_library_rebuilds_only_what_changed_and_links_into_cpp() {
    require_rocm();
    crate::support::in_both_configs(|| {
        let dir = library_dir();
        let d = dir.path();
        let c = library_build(d).try_compile("gpu").unwrap();
        assert_eq!((c.jobs_run, c.jobs_cached), (6, 0), "2 × 2 device + 2 host");
        let lib = c.library.clone().expect("a library");
        assert_eq!(lib, d.join("out/libgpu.a"));
        let again = library_build(d).try_compile("gpu").unwrap();
        assert_eq!((again.jobs_run, again.jobs_cached), (0, 6));
        std::thread::sleep(std::time::Duration::from_millis(200));
        std::fs::write(d.join("a.hip"), LIB_A.replace("64", "128")).unwrap();
        let edited = library_build(d).try_compile("gpu").unwrap();
        assert_eq!(
            (edited.jobs_run, edited.jobs_cached),
            (3, 3),
            "a.hip's two architectures and its host side"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
        std::fs::write(d.join("factor.h"), "#define FACTOR 3.0f\n").unwrap();
        let header = library_build(d).try_compile("gpu").unwrap();
        assert_eq!(
            (header.jobs_run, header.jobs_cached),
            (3, 3),
            "a header of a.hip"
        );

        let mut link = clean("g++", d);
        link.args(["main.cpp", "-Lout", "-lgpu", "-L/usr/lib/x86_64-linux-gnu"]);
        link.args(["-lamdhip64", "-o", "main"]);
        ok(link, "g++ linking libgpu.a");
        assert_program_runs(&d.join("main"));
    });
}

/// The launch example: build.rs compiles `kernels/scale.hip` with its host code, Rust calls
/// `launch_scale`; without a GPU it reports the runtime's error and exits 0, with one it
/// checks the values.
#[test]
fn the_hip_launch_example_builds_and_runs() {
    require_rocm();
    let root = crate::support::repo_root();
    let mut c = outside_cargo(&root);
    c.args(["run", "--offline", "--quiet", "-p", "hip-launch"])
        .env("RUSTFLAGS", "-D warnings");
    let o = ok(c, "cargo run -p hip-launch");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("hip-launch: no launch: launch_scale returned") || out.contains("all right"),
        "{out}"
    );
}

/// CMake: `offload_add_library(gpu STATIC ...)` is a target that `target_link_libraries`
/// links into a C++ executable, which runs; so is one with relocatable device code (`RDC`),
/// and an `OBJECT` one, whose objects are linked themselves: one that nothing calls is in
/// the program too (a second `a.hip`, of another directory, is `a-2.o`). `OBJECT` with `RDC`
/// is refused at configure time.
#[test]
fn offload_add_library_links_into_a_cmake_executable() {
    require_rocm();
    let dir = library_dir();
    let d = dir.path();
    let module = crate::support::repo_root().join("build-support/cmake/OffloadBuild.cmake");
    // Beside it, relocatable device code (RDC) across two sources of a directory of its own.
    std::fs::create_dir(d.join("rdc")).unwrap();
    std::fs::write(d.join("rdc/a.hip"), RDC_A).unwrap();
    std::fs::write(d.join("rdc/b.hip"), RDC_B).unwrap();
    std::fs::write(
        d.join("rdc/main.cpp"),
        "extern \"C\" int launch(float*);\nint main() { float x[32] = {1}; launch(x); }\n",
    )
    .unwrap();
    // An OBJECT library's third source: a kernel and a function nothing calls.
    std::fs::create_dir(d.join("obj")).unwrap();
    std::fs::write(
        d.join("obj/a.hip"),
        "#include <hip/hip_runtime.h>\n__global__ void unused_kernel(int* x) { *x = 7; }\n\
         extern \"C\" int offload_object_marker() { return 7; }\n",
    )
    .unwrap();
    let lists = |libraries: &str| {
        format!(
            "cmake_minimum_required(VERSION 3.20)\nproject(p LANGUAGES CXX)\n\
             include(\"{}\")\n{libraries}",
            module.display()
        )
    };
    std::fs::write(
        d.join("CMakeLists.txt"),
        lists(
            "offload_add_library(gpu STATIC SOURCES a.hip b.hip \
             INCLUDE_DIRECTORIES \"${CMAKE_CURRENT_SOURCE_DIR}\" ARCHITECTURES gfx90a gfx1030)\n\
             add_executable(main main.cpp)\ntarget_link_libraries(main PRIVATE gpu)\n\
             offload_add_library(gpurdc STATIC RDC SOURCES rdc/a.hip rdc/b.hip \
             ARCHITECTURES gfx90a)\n\
             add_executable(rdcmain rdc/main.cpp)\ntarget_link_libraries(rdcmain PRIVATE gpurdc)\n\
             offload_add_library(gpuobj OBJECT SOURCES a.hip b.hip obj/a.hip \
             INCLUDE_DIRECTORIES \"${CMAKE_CURRENT_SOURCE_DIR}\" ARCHITECTURES gfx90a gfx1030)\n\
             add_executable(objmain main.cpp)\ntarget_link_libraries(objmain PRIVATE gpuobj)\n",
        ),
    )
    .unwrap();
    let build = d.join("build");
    cmake_build(d, &build, &[]);
    assert_program_runs(&build.join("main"));
    let (status, out, err) = run_program(&build.join("rdcmain"));
    assert_eq!(status, Some(0), "{out}{err}");
    assert_program_runs(&build.join("objmain"));
    let objects = build.join("gpuobj.offload-build/objects");
    for o in ["a.o", "b.o", "a-2.o"] {
        assert!(objects.join(o).is_file(), "{o}");
    }
    let symbols = |exe: &str| {
        let mut nm = Command::new("nm");
        nm.arg(build.join(exe));
        let o = ok(nm, "nm");
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert!(symbols("objmain").contains(" T offload_object_marker"));
    assert!(!symbols("main").contains("offload_object_marker"));

    // OBJECT with RDC: refused when CMake configures.
    let refused = tempfile::tempdir().unwrap();
    let r = refused.path();
    std::fs::write(
        r.join("CMakeLists.txt"),
        lists("offload_add_library(x OBJECT RDC SOURCES a.hip ARCHITECTURES gfx90a)\n"),
    )
    .unwrap();
    std::fs::write(r.join("a.hip"), LIB_A).unwrap();
    // This offload-build, as above: without it the module would build one from source first.
    let o = crate::cmake::cmake()
        .arg("-S")
        .arg(r)
        .arg("-B")
        .arg(r.join("build"))
        .arg(format!("-DOFFLOAD_BUILD_EXECUTABLE={EXE}"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("OBJECT with RDC is not supported"), "{err}");
}

/// An embedding or a container set with host code is refused before anything compiles; a host
/// compile that fails names the source and "host", with the compiler's output once.
#[test]
fn host_code_refuses_what_it_cannot_honour_and_names_a_failed_host_compile() {
    require_rocm();
    let dir = library_dir();
    let d = dir.path();
    let e = library_build(d)
        .embed(Embed::ContainerOnly)
        .try_compile("gpu")
        .unwrap_err();
    assert!(
        matches!(&e, Error::Config(m) if m.contains("host_code(true)") && m.contains("Build::embed")),
        "{e}"
    );
    assert!(
        !d.join("out/offload-build-cache")
            .read_dir()
            .is_ok_and(|mut r| r
                .any(|e| { e.is_ok_and(|e| e.path().extension().is_some_and(|x| x == "o")) }))
    );
    let e = library_build(d)
        .compress(true)
        .try_compile("gpu")
        .unwrap_err();
    assert!(e.to_string().contains("Build::compress"), "{e}");

    // Valid device code, an error in the host code only.
    let host_only = "#include <hip/hip_runtime.h>\n__global__ void k(int* x) { *x = 1; }\n\
                     #ifndef __HIP_DEVICE_COMPILE__\nhost_side_error here;\n#endif\n";
    std::fs::write(d.join("b.hip"), host_only).unwrap();
    let e = library_build(d).try_compile("gpu").unwrap_err();
    let text = e.to_string();
    assert!(text.starts_with("compiling the host code of "), "{text}");
    assert!(text.contains("b.hip"), "{text}");
    let said = "unknown type name 'host_side_error'";
    assert_eq!(text.matches(said).count(), 1, "{text}");
    assert!(!text.contains("for gfx"), "{text}");
}

/// `--host-code` with `--embed`, or an object output for two sources: refused.
#[test]
fn compile_host_code_refuses_an_embed_mode_and_one_object_for_two_sources() {
    let dir = library_dir();
    let d = dir.path();
    let mut c = clean(EXE, d);
    c.args([
        "compile",
        "--host-code",
        "--embed",
        "fatbin",
        "--arch",
        "gfx90a",
    ]);
    c.args(["a.hip", "-o", "a.o"]);
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--embed has no meaning"));
    let mut c = clean(EXE, d);
    c.args([
        "compile",
        "--host-code",
        "--arch",
        "gfx90a",
        "a.hip",
        "b.hip",
        "-o",
        "x.o",
    ]);
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("an object holds one source"));
    assert!(!d.join("x.o").exists());
}

const RDC_A: &str = r#"#include <hip/hip_runtime.h>
__device__ float twice(float x);
__global__ void k(float* x) { x[threadIdx.x] = twice(x[threadIdx.x]); }
extern "C" int launch(float* x) {
    k<<<1, 32>>>(x);
    return static_cast<int>(hipGetLastError());
}
"#;

const RDC_B: &str = r#"#include <hip/hip_runtime.h>
__device__ __attribute__((noinline)) float twice(float x) { return 2 * x; }
"#;

/// Relocatable device code (`Build::rdc`): a kernel of one source calls a `__device__`
/// function of another; the library links into a C++ program (g++) and a Rust one (rustc),
/// which run; each architecture's linked code object holds both functions and leaves nothing
/// undefined.
#[test]
fn rdc_across_two_sources_links_into_cpp_and_rust_and_holds_both_functions() {
    require_rocm();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a.hip"), RDC_A).unwrap();
    std::fs::write(d.join("b.hip"), RDC_B).unwrap();
    // library_build's two sources are a.hip and b.hip: here the relocatable pair.
    let c = library_build(d).rdc(true).try_compile("gpu").unwrap();
    assert_eq!(c.jobs_run, 8, "2 × 2 device, 2 device links, 2 host");
    let lib = c.library.expect("a library");
    assert_eq!(members(&lib), ["a.o", "b.o", "hip_fatbin.o"]);

    std::fs::write(
        d.join("main.cpp"),
        "#include <cstdio>\nextern \"C\" int launch(float*);\n\
         int main() { float x[32] = {1}; std::printf(\"launch: %d\\n\", launch(x)); }\n",
    )
    .unwrap();
    let mut cpp = clean("g++", d);
    cpp.args(["main.cpp", "-Lout", "-lgpu", "-L/usr/lib/x86_64-linux-gnu"]);
    cpp.args(["-lamdhip64", "-o", "cpp-main"]);
    ok(cpp, "g++ linking the rdc library");
    std::fs::write(
        d.join("main.rs"),
        "unsafe extern \"C\" { fn launch(x: *mut f32) -> i32; }\n\
         fn main() { let mut x = [1.0f32; 32]; println!(\"launch: {}\", unsafe { launch(x.as_mut_ptr()) }); }\n",
    )
    .unwrap();
    let mut rust = clean("rustc", d);
    rust.args([
        "--edition",
        "2021",
        "main.rs",
        "-L",
        "out",
        "-l",
        "static=gpu",
    ]);
    rust.args(["-L", "/usr/lib/x86_64-linux-gnu", "-l", "dylib=amdhip64"]);
    rust.args(["-l", "dylib=stdc++", "-o", "rust-main"]);
    ok(rust, "rustc linking the rdc library");
    let cpp_run = run_program(&d.join("cpp-main"));
    let rust_run = run_program(&d.join("rust-main"));
    assert_eq!(cpp_run.0, Some(0), "{cpp_run:?}");
    assert_eq!(cpp_run, rust_run, "the C++ and Rust programs");
    assert!(cpp_run.1.starts_with("launch: "), "{cpp_run:?}");

    // The linked bundle: both functions in every architecture's code object.
    let fatbin = std::fs::read_dir(d.join("out/offload-build-cache"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("hip_fatbin-")
        })
        .expect("the linked bundle's object");
    let mut archs = Vec::new();
    for (id, data) in hip_fatbin_entries(&fatbin) {
        let Some(arch) = id.strip_prefix("hipv4-amdgcn-amd-amdhsa--") else {
            continue;
        };
        archs.push(arch.to_string());
        let co = d.join(format!("{arch}.co"));
        std::fs::write(&co, data).unwrap();
        let mut nm = Command::new("/usr/lib/llvm-19/bin/llvm-nm");
        nm.arg(&co);
        let listing = String::from_utf8_lossy(&ok(nm, "llvm-nm").stdout).into_owned();
        assert!(listing.contains(" T _Z1kPf"), "{arch}: {listing}");
        assert!(listing.contains("_Z5twicef"), "{arch}: {listing}");
        assert!(
            !listing.lines().any(|l| l.trim_start().starts_with("U ")),
            "{arch}: {listing}"
        );
    }
    assert_eq!(archs, ["gfx1030", "gfx90a"]);
}

/// The entries (ID, payload) of the bundle in the `.hip_fatbin` section of the object `path`.
pub(crate) fn hip_fatbin_entries(path: &Path) -> Vec<(String, Vec<u8>)> {
    use object::{Object, ObjectSection};
    use offload_build::bundle::BinaryBundle;
    let data = std::fs::read(path).unwrap();
    let file = object::File::parse(&data[..]).unwrap();
    let section = file
        .section_by_name(".hip_fatbin")
        .unwrap_or_else(|| panic!("{}: no .hip_fatbin section", path.display()));
    let bundle = BinaryBundle::parse(section.data().unwrap())
        .unwrap()
        .unwrap_or_else(|| panic!("{}: .hip_fatbin holds no bundle", path.display()));
    bundle
        .entries()
        .iter()
        .map(|e| (e.id_str().into_owned(), e.data.to_vec()))
        .collect()
}

/// The `warning:` lines of a compiler's standard error, each once, without the architecture
/// list offload-build puts before them (`[gfx90a, host] `) and with the directories `roots`
/// (with their `/`) taken out of paths, as hipcc prints them for relative sources.
pub(crate) fn warning_lines(stderr: &str, roots: &[String]) -> std::collections::BTreeSet<String> {
    stderr
        .lines()
        .filter(|l| l.contains("warning:"))
        .map(|l| {
            let mut l = match (l.starts_with('['), l.find("] ")) {
                (true, Some(end)) => l[end + 2..].to_string(),
                _ => l.to_string(),
            };
            for r in roots {
                l = l.replace(r.as_str(), "");
            }
            l.trim_end().to_string()
        })
        .collect()
}

/// Issue 49: the flags a HIP crate passes (device-only ones that only the device compiles
/// use, a linker input no compile uses) give the warnings `hipcc -c` gives on the same
/// flags: the unused-argument warning of a device-only flag is not shown for the host
/// compile, the linker input's is shown (once).
#[test]
fn host_code_warns_as_hipcc_warns_on_the_same_flags() {
    require_rocm();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("k.hip"),
        "#include <hip/hip_runtime.h>\n\
         extern \"C\" __global__ void k(float* x) { atomicAdd(x, 1.0f); }\n",
    )
    .unwrap();
    let flags = [
        "-munsafe-fp-atomics",
        "-fgpu-flush-denormals-to-zero",
        "-lfoo",
    ];
    let mut h = clean(HIPCC, d);
    h.args(["-c", "--offload-arch=gfx90a", "--offload-arch=gfx1030"])
        .args(flags)
        .args(["k.hip", "-o", "hipcc.o"]);
    let theirs = warning_lines(&String::from_utf8_lossy(&ok(h, "hipcc -c").stderr), &[]);
    let mut c = clean(EXE, d);
    c.args(["compile", "--host-code", "-q", "--archs", "gfx90a;gfx1030"])
        .args(flags.map(|f| format!("--flag={f}")))
        .args(["k.hip", "-o", "ours.o"]);
    let ours = warning_lines(
        &String::from_utf8_lossy(&ok(c, "compile --host-code").stderr),
        &[],
    );
    assert!(
        theirs.iter().any(|w| w.contains("-lfoo")),
        "hipcc warns about -lfoo: {theirs:?}"
    );
    assert_eq!(ours, theirs);
}
