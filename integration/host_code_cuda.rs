//! CUDA sources with their host code, through nvcc and through clang 22, with NVIDIA's CUDA 13
//! wheels (which `build-support/setup.sh` installs): the four cuda-samples programs of
//! `integration/third-party/cuda-samples` (upstream's text, BSD-3-Clause) built by
//! `compile --host-code` and by `nvcc -c` with the same `-gencode`s have the same kernels per
//! architecture (cubin and PTX, as cuobjdump lists them) and the same global host symbols
//! (with clang: the same symbols but the kernels' host stubs, which are each compiler's own);
//! linked with `g++` and the wheels' static cudart, the programs behave the same (without a
//! GPU: the runtime's error). Each object of nvcc's is `nvcc -c --keep`'s byte for byte
//! (nvcc's steps run as nodes of the job graph, their chains at once); a source whose module
//! ID holds a process ID compiles once, with one ID. The same programs through a build.rs crate and CMake's
//! `offload_add_library`, each with nvcc and with clang 22, run as nvcc's build does. Relocatable code across two
//! sources (`Build::rdc`, nvcc: `-rdc=true` and one `nvcc -dlink`) links into a C++ and a Rust
//! program and its linked device code holds both functions. clang without a toolkit is
//! refused with host code, and clang with relocatable CUDA code.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::host_code::ok;

use crate::support::cuda_ref::{self, Program};
use crate::support::nvidia;

const EXE: &str = env!("CARGO_BIN_EXE_offload-build");
const ARCHS: [&str; 2] = ["sm_80", "sm_90"];

/// `offload-build` in `dir` with no compiler, toolkit, architecture or cache choice from the
/// test's environment ([`clean`](crate::host_code::clean), and the CUDA variables removed).
fn offload_build_in(dir: &Path) -> Command {
    let mut c = crate::host_code::clean(EXE, dir);
    for var in crate::support::CUDA_ENV_VARS {
        c.env_remove(var);
    }
    c
}

/// The compiler of a build.
#[derive(Clone, Copy, Debug, PartialEq)]
enum By {
    Nvcc,
    Clang22,
}

/// `nm -g --defined-only` of an object: its global symbols with their kinds, sorted; for an
/// object of clang's, only the strong ones that are not kernels (nvcc defines each kernel's
/// name as its host stub, clang a `__device_stub__` of its own, and each keeps other inline
/// functions weak or not).
fn global_symbols(obj: &Path, by: By, kernels: &BTreeSet<String>) -> Vec<String> {
    let mut c = Command::new("nm");
    c.args(["-g", "--defined-only"]).arg(obj);
    let out = ok(c, "nm");
    let mut syms: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace().rev();
            let name = w.next()?;
            let kind = w.next()?;
            let own = name.contains("__device_stub__") || kernels.contains(name);
            let strong = ["T", "D", "B", "R"].contains(&kind);
            (by == By::Nvcc || (strong && !own)).then(|| format!("{kind} {name}"))
        })
        .collect();
    syms.sort();
    syms
}

/// Links `obj` (with the program's C++ sources beside it) with g++ and the wheels' static
/// cudart, runs it: exit status and standard output.
fn link_and_run(p: &Program, obj: &Path, exe: &Path) -> (Option<i32>, String) {
    let lib = nvidia::nvidia_dir().join("cu13/lib");
    let mut link = Command::new("g++");
    link.arg(obj);
    let dir = p.source.parent().unwrap();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "cpp") {
            link.arg(e.path())
                .arg(format!("-I{}", p.includes[0].display()));
            link.arg(format!(
                "-I{}",
                nvidia::nvidia_dir().join("cu13/include").display()
            ));
        }
    }
    link.arg(format!("-L{}", lib.display()))
        .args(["-lcudart_static", "-ldl", "-lrt", "-lpthread", "-o"])
        .arg(exe);
    ok(link, &format!("g++ linking {}", obj.display()));
    let o = Command::new(exe).output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

/// `nvcc -c` of a cuda-samples program with the `-gencode`s of [`ARCHS`], made once per test
/// process (the tests of each program and the build.rs and CMake test share it): its path.
/// With `--keep`: its file symbol then names nvcc's kept file, not a temporary one that
/// changes with each run, and the object is the same at every run.
fn nvcc_object(p: &Program) -> PathBuf {
    cuda_ref::once_per_process(&format!("{}.o", p.name), |out| nvcc_object_into(p, out))
}

fn nvcc_object_into(p: &Program, out: &Path) {
    let keep = out.with_extension("kept");
    std::fs::create_dir_all(&keep).unwrap();
    let mut nvcc = Command::new(nvidia::nvcc());
    nvcc.env(
        "PATH",
        format!("{}:/usr/bin:/bin", nvidia::cu13_bin().display()),
    )
    .env_remove("NVCC_PREPEND_FLAGS")
    .env_remove("NVCC_APPEND_FLAGS")
    .arg("-c")
    .arg("--keep")
    .arg("--keep-dir")
    .arg(&keep)
    .args(cuda_ref::gencodes(&ARCHS))
    .arg(format!("-I{}", p.includes[0].display()))
    .arg(&p.source)
    .arg("-o")
    .arg(out);
    ok(nvcc, &format!("nvcc -c {}", p.name));
}

/// One cuda-samples program: nvcc -c and compile --host-code (nvcc found through
/// `VIRTUAL_ENV`, or clang 22 with the wheels' toolkit) against each other.
fn check_program(name: &str, by: By) {
    let p = cuda_ref::program(name);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let include = format!("-I{}", p.includes[0].display());
    let theirs = nvcc_object(&p);

    let mut ours = offload_build_in(d);
    ours.env("VIRTUAL_ENV", nvidia::venv()).args([
        "compile",
        "--host-code",
        "--archs",
        "sm_80;sm_90",
        "-q",
    ]);
    if by == By::Clang22 {
        ours.args([
            "--cuda-compiler",
            "clang",
            "--compiler",
            crate::cuda_examples::CLANG22,
        ]);
    }
    ours.arg(&include).arg(&p.source).args(["-o", "ours.o"]);
    ok(ours, &format!("compile --host-code {name}"));

    let mine = d.join("ours.o");
    if by == By::Nvcc {
        nvcc_steps_ran(name, &mine, &theirs);
    }
    assert_eq!(
        cuda_ref::images(&mine),
        cuda_ref::images(&theirs),
        "{name}: the images per architecture"
    );
    assert_eq!(
        cuda_ref::kernel_names(&mine),
        cuda_ref::kernel_names(&theirs),
        "{name}: the kernels per architecture"
    );
    let kernels: BTreeSet<String> = cuda_ref::kernel_names(&theirs)
        .into_values()
        .flatten()
        .collect();
    assert_eq!(
        global_symbols(&mine, by, &kernels),
        global_symbols(&theirs, by, &kernels),
        "{name}: the global host symbols ({by:?})"
    );
    let a = link_and_run(&p, &theirs, &d.join("nvcc-built"));
    let b = link_and_run(&p, &mine, &d.join("ours-built"));
    assert_eq!(a, b, "{name}: the programs behave differently");
}

/// nvcc's steps ran as nodes of the job graph, the host side and each architecture at once
/// (`builder/toolchain/nvcc_steps.rs`), rather than one nvcc: the file symbol names the kept
/// file (`<stem>.compute_90.cudafe1.cpp`), not nvcc's temporary one (`tmpxft_…`).
fn steps_ran(name: &str, mine: &Path) {
    let mut nm = Command::new("nm");
    nm.arg("-a").arg(mine);
    let syms = String::from_utf8(ok(nm, "nm -a").stdout).unwrap();
    let file = syms
        .lines()
        .find_map(|l| l.strip_suffix(".cudafe1.cpp"))
        .unwrap_or_else(|| panic!("{name}: no file symbol of nvcc's host compile in\n{syms}"));
    assert!(
        file.ends_with(&format!(" {name}.compute_90")),
        "{name}: nvcc ran the compile itself: {file}"
    );
}

/// nvcc's steps ran ([`steps_ran`]), and the object is `nvcc -c --keep`'s byte for byte.
fn nvcc_steps_ran(name: &str, mine: &Path, theirs: &Path) {
    steps_ran(name, mine);
    assert!(
        std::fs::read(mine).unwrap() == std::fs::read(theirs).unwrap(),
        "{name}: the object differs from nvcc -c --keep's"
    );
}

/// A source whose kernels are all internal or template instantiations (as CUTLASS's):
/// nvcc's module ID then ends with a process ID, so `cudafe++` and each `cicc` write
/// different ones. The build still runs each step once (no nvcc compiling the source again:
/// the object names the kept file), with one ID throughout: every kernel name of every
/// architecture's device code, which holds the ID, is one the host code registers.
#[test]
fn a_source_whose_module_id_holds_a_process_id_is_compiled_once_with_one_id() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = d.join("anon.cu");
    std::fs::write(
        &src,
        "namespace {\n__global__ void scale(float *x, float a) { x[threadIdx.x] *= a; }\n}\n\
         template <typename T> void run(T *x);\n\
         template <> void run<float>(float *x) { scale<<<1, 32>>>(x, 2.0f); }\n",
    )
    .unwrap();
    let mut c = offload_build_in(d);
    c.env("VIRTUAL_ENV", nvidia::venv())
        .args(["compile", "--host-code", "--archs", "sm_80;sm_90", "-q"])
        .arg(&src)
        .args(["-o", "anon.o"]);
    ok(c, "compile --host-code anon.cu");
    let obj = d.join("anon.o");
    steps_ran("anon", &obj);
    let names = cuda_ref::kernel_names(&obj);
    assert_eq!(
        names.len(),
        4,
        "a cubin and PTX per architecture: {names:?}"
    );
    let all: BTreeSet<&String> = names.values().flatten().collect();
    assert_eq!(
        all.len(),
        1,
        "one kernel, named alike for every architecture: {names:?}"
    );
    let kernel = all.into_iter().next().unwrap();
    assert!(kernel.contains("_GLOBAL__N__"), "{kernel}");
    let bytes = std::fs::read(&obj).unwrap();
    let registered = bytes.windows(kernel.len()).any(|w| w == kernel.as_bytes());
    assert!(registered, "the host code registers {kernel}");
}

#[test]
fn vector_add_is_nvccs() {
    check_program("vectorAdd", By::Nvcc);
    check_program("vectorAdd", By::Clang22);
}

#[test]
fn matrix_mul_is_nvccs() {
    check_program("matrixMul", By::Nvcc);
    check_program("matrixMul", By::Clang22);
}

#[test]
fn simple_atomic_intrinsics_is_nvccs() {
    check_program("simpleAtomicIntrinsics", By::Nvcc);
    check_program("simpleAtomicIntrinsics", By::Clang22);
}

#[test]
fn simple_templates_is_nvccs() {
    check_program("simpleTemplates", By::Nvcc);
    check_program("simpleTemplates", By::Clang22);
}

/// clang as the CUDA compiler with host code and no toolkit (no runtime headers or library):
/// refused before anything compiles, naming what to install.
#[test]
fn clang_without_a_toolkit_for_cuda_host_code_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.cu"), "__global__ void k() {}\n").unwrap();
    let mut c = offload_build_in(dir.path());
    // No toolkit to be found: no PATH entries, no python3 site-packages.
    c.env("PATH", dir.path().join("empty"));
    c.args([
        "compile",
        "--host-code",
        "--cuda-compiler",
        "clang",
        "--arch",
        "sm_80",
    ])
    .args([
        "--compiler",
        crate::cuda_examples::CLANG22,
        "k.cu",
        "-o",
        "k.o",
    ]);
    let o = c.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no CUDA toolkit") || err.contains("none was found"),
        "{err}"
    );
    assert!(err.contains("nvidia-cuda-runtime"), "{err}");
    assert!(!dir.path().join("k.o").exists());
}

/// The CUDA launch example: build.rs compiles `kernels/scale.cu` with its host code through
/// the wheels' nvcc, Rust calls `launch_scale`; without a GPU it reports the runtime's error
/// and exits 0, with one it checks the values.
#[test]
fn the_cuda_launch_example_builds_and_runs() {
    let venv = nvidia::venv();
    let (_, out) =
        crate::cuda_examples::build_example("cuda-launch", &[("VIRTUAL_ENV", venv.as_os_str())]);
    assert!(
        out.contains("cuda-launch: no launch: launch_scale returned") || out.contains("all right"),
        "{out}"
    );
}

const RDC_A: &str = r#"__device__ float twice(float x);
__global__ void k(float* x) { x[threadIdx.x] = twice(x[threadIdx.x]); }
extern "C" int launch(float* x) {
    k<<<1, 32>>>(x);
    return static_cast<int>(cudaGetLastError());
}
"#;

const RDC_B: &str = "__device__ float twice(float x) { return 2 * x; }\n";

/// Compiles `main.rs` into `d/<exe>`: a Rust program that declares `decl` (an `extern "C"`
/// function of `lib`) and prints `<label>: <call's value>`, linked with `lib` and `libs`
/// (rustc `-l` values, from `libdir`), then the C++ standard library.
fn rust_program(
    d: &Path,
    exe: &str,
    (decl, label, call): (&str, &str, &str),
    lib: &Path,
    libdir: &Path,
    libs: &[&str],
) {
    std::fs::write(
        d.join("main.rs"),
        format!(
            "unsafe extern \"C\" {{ {decl} }}\n\
             fn main() {{ println!(\"{label}: {{}}\", unsafe {{ {call} }}); }}\n"
        ),
    )
    .unwrap();
    let mut rust = Command::new("rustc");
    rust.current_dir(d)
        .args(["--edition", "2021", "main.rs", "-L"])
        .arg(lib.parent().unwrap())
        .args(["-l", "static=gpu", "-L"])
        .arg(libdir);
    for l in libs {
        rust.args(["-l", l]);
    }
    rust.args(["-l", "stdc++", "-o", exe]);
    ok(rust, &format!("rustc linking {exe}"));
}

/// A relocatable CUDA build of `a.cu` and `b.cu` in `d` (nvcc of the wheels, sm_80 and
/// sm_90) into `d/out`.
fn rdc_build(d: &Path) -> offload_build::Build {
    let mut b = offload_build::Build::new();
    b.out_dir(d.join("out"))
        .cargo_metadata(false)
        .env("CARGO_MANIFEST_DIR", d)
        .env("TARGET", "x86_64-unknown-linux-gnu")
        .files(["a.cu", "b.cu"])
        .archs("sm_80;sm_90")
        .host_code(true)
        .rdc(true)
        .jobserver(jobserver::Client::new(2).unwrap());
    for var in crate::support::BUILD_ENV_VARS
        .iter()
        .chain(crate::support::CUDA_ENV_VARS)
    {
        b.env_remove(var);
    }
    b.env("VIRTUAL_ENV", nvidia::venv())
        .env("PATH", "/usr/bin:/bin");
    crate::support::set_build_ci(&mut b);
    b
}

/// Relocatable CUDA code (`Build::rdc` with nvcc): a kernel of one source calls a `__device__`
/// function of another. Each source compiles with `-rdc=true`, one `nvcc -dlink` links them
/// (its object holds, for each architecture, the kernel and the function); a rebuild runs
/// nothing, an edit of one source recompiles it and links again. The library links into a C++
/// program (g++) and a Rust one (rustc) with the static runtime, which behave the same.
/// With clang as the CUDA compiler, relocatable code is refused.
#[test]
fn rdc_across_two_cuda_sources_links_into_cpp_and_rust_and_holds_both_functions() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a.cu"), RDC_A).unwrap();
    std::fs::write(d.join("b.cu"), RDC_B).unwrap();
    // Sources changed within the cache's slack of a compile's start are not trusted to it.
    let settle = || std::thread::sleep(std::time::Duration::from_millis(200));
    settle();
    let c = rdc_build(d).try_compile("gpu").unwrap();
    assert_eq!(c.jobs_run, 3, "2 host-code compiles, 1 device link");
    let lib = c.library.expect("a library");
    assert_eq!(
        crate::host_code::members(&lib),
        ["a.o", "b.o", "cuda_dlink.o"]
    );
    let again = rdc_build(d).try_compile("gpu").unwrap();
    assert_eq!((again.jobs_run, again.jobs_cached), (0, 3));
    settle();
    std::fs::write(d.join("b.cu"), RDC_B.replace("2 * x", "3 * x")).unwrap();
    settle();
    let edited = rdc_build(d).try_compile("gpu").unwrap();
    assert_eq!(
        (edited.jobs_run, edited.jobs_cached),
        (2, 1),
        "b.cu and the link"
    );

    // The linked device code: both functions for each architecture.
    let mut ar = Command::new("ar");
    ar.current_dir(d).arg("x").arg(&lib).arg("cuda_dlink.o");
    ok(ar, "ar x");
    let mut dump = Command::new(nvidia::cu13_bin().join("cuobjdump"));
    dump.arg("-symbols").arg(d.join("cuda_dlink.o"));
    let listing = String::from_utf8_lossy(&ok(dump, "cuobjdump -symbols").stdout).into_owned();
    let per_arch: Vec<&str> = listing.split("arch = ").skip(1).collect();
    assert_eq!(per_arch.len(), 2, "{listing}");
    for (part, arch) in per_arch.iter().zip(["sm_80", "sm_90"]) {
        assert!(part.starts_with(arch), "{listing}");
        assert!(
            part.contains("ENTRY") && part.contains("_Z1kPf"),
            "{arch}: {listing}"
        );
        assert!(part.contains("_Z5twicef"), "{arch}: {listing}");
    }

    let libdir = nvidia::nvidia_dir().join("cu13/lib");
    std::fs::write(
        d.join("main.cpp"),
        "#include <cstdio>\nextern \"C\" int launch(float*);\n\
         int main() { std::printf(\"launch: %d\\n\", launch(nullptr)); }\n",
    )
    .unwrap();
    let mut cpp = Command::new("g++");
    cpp.current_dir(d).arg("main.cpp").arg(&lib);
    cpp.arg(format!("-L{}", libdir.display()));
    cpp.args([
        "-lcudart_static",
        "-lcudadevrt",
        "-ldl",
        "-lrt",
        "-lpthread",
    ]);
    cpp.args(["-o", "cpp-main"]);
    ok(cpp, "g++ linking the rdc library");
    let libs = [
        "static=cudart_static",
        "static=cudadevrt",
        "dl",
        "rt",
        "pthread",
    ];
    let decl = "fn launch(x: *mut f32) -> i32;";
    let call = "launch(std::ptr::null_mut())";
    rust_program(d, "rust-main", (decl, "launch", call), &lib, &libdir, &libs);
    let run = |exe: &str| {
        let o = Command::new(d.join(exe)).output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    };
    let (cpp_run, rust_run) = (run("cpp-main"), run("rust-main"));
    assert_eq!(cpp_run.0, Some(0), "{cpp_run:?}");
    assert!(cpp_run.1.starts_with("launch: "), "{cpp_run:?}");
    assert_eq!(cpp_run, rust_run, "the C++ and Rust programs");

    let err = rdc_build(d)
        .cuda_compiler(offload_build::CompilerKind::Clang)
        .compiler(crate::cuda_examples::CLANG22)
        .try_compile("gpu")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("Build::rdc(true) for CUDA is driven through nvcc"),
        "{err}"
    );
}

/// The cuda-samples programs of [`cuda_ref::cuda_samples`].
const PROGRAMS: [&str; 4] = [
    "vectorAdd",
    "matrixMul",
    "simpleAtomicIntrinsics",
    "simpleTemplates",
];

/// A program's exit status and standard output.
type Run = (Option<i32>, String);

/// The `.cu` and `.cpp` files of a cuda-samples program, by name, sorted.
fn program_sources(p: &Program) -> Vec<String> {
    crate::support::file_names(p.source.parent().unwrap(), &[".cu", ".cpp"])
}

/// The four programs through a build.rs crate (compiled `build_rs_by`, with the wheels' toolkit;
/// one `Build::host_code` library per program with its `main` renamed by `-Dmain=<name>_main`
/// and called from Rust through a shim of ours) and through CMake's `offload_add_library`
/// (compiled `cmake_by`; the first an `OBJECT` library, the others `STATIC`; each linked into an
/// executable whose only source is empty); each run,
/// in [`PROGRAMS`] order. With nvcc, the CMake project also builds an `RDC` library, which a
/// C++ program links and runs.
fn through_build_rs_and_cmake(build_rs_by: By, cmake_by: By) -> (Vec<Run>, Vec<Run>) {
    // How each front end names the compiler.
    let (rs_compiler, crate_name) = match build_rs_by {
        By::Nvcc => (String::new(), "cuda-samples-nvcc"),
        By::Clang22 => (
            format!(
                ".cuda_compiler(offload_build::CompilerKind::Clang).compiler({:?})",
                crate::cuda_examples::CLANG22
            ),
            "cuda-samples-clang",
        ),
    };
    let cmake_compiler = match cmake_by {
        By::Nvcc => "CUDA_COMPILER nvcc".to_string(),
        By::Clang22 => format!(
            "CUDA_COMPILER clang COMPILER {}",
            crate::cuda_examples::CLANG22
        ),
    };
    let root = crate::support::repo_root();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let common = cuda_ref::third_party_dir().join("cuda-samples/Common");
    std::fs::create_dir(d.join("Common")).unwrap();
    for e in std::fs::read_dir(&common).unwrap().flatten() {
        std::fs::copy(e.path(), d.join("Common").join(e.file_name())).unwrap();
    }
    std::fs::write(d.join("empty.cpp"), "").unwrap();
    let mut build_rs = String::new();
    let mut cmake = format!(
        "cmake_minimum_required(VERSION 3.20)\nproject(p LANGUAGES CXX)\ninclude(\"{}\")\n",
        root.join("build-support/cmake/OffloadBuild.cmake")
            .display()
    );
    for name in PROGRAMS {
        let p = cuda_ref::program(name);
        for e in std::fs::read_dir(p.source.parent().unwrap())
            .unwrap()
            .flatten()
        {
            std::fs::copy(e.path(), d.join(e.file_name())).unwrap();
        }
        let sources = program_sources(&p);
        // The first program as an OBJECT library: its objects go into the executable, with the
        // runtime the library names; the others STATIC.
        let kind = if name == PROGRAMS[0] {
            "OBJECT"
        } else {
            "STATIC"
        };
        cmake.push_str(&format!(
            "offload_add_library({name} {kind} LANGUAGE CUDA {cmake_compiler} \
             SOURCES {} INCLUDE_DIRECTORIES \"${{CMAKE_CURRENT_SOURCE_DIR}}/Common\" \
             ARCHITECTURES sm_80 sm_90)\nadd_executable({name}_prog empty.cpp)\n\
             target_link_libraries({name}_prog PRIVATE {name})\n",
            sources.join(" ")
        ));
        let text = std::fs::read_to_string(&p.source).unwrap();
        let argv = (!text.contains("int main(void)")).then_some("char**");
        crate::host_code::write_shim(d, name, "cu", argv);
        let files: Vec<String> = sources
            .iter()
            .chain([&format!("{name}_shim.cu")])
            .map(|s| format!("{s:?}"))
            .collect();
        build_rs.push_str(&format!(
            "    offload_build::Build::new().files([{}]).include(\"Common\")\
             .define(\"main\", Some(\"{name}_main\")).language(offload_build::Language::Cuda)\
             {rs_compiler}.archs(\"sm_80;sm_90\").host_code(true).compile(\"{name}\");\n",
            files.join(", ")
        ));
    }
    let mut cargo = crate::host_code::outside_cargo(d);
    for var in crate::support::CUDA_ENV_VARS {
        cargo.env_remove(var);
    }
    cargo.env("VIRTUAL_ENV", nvidia::venv());
    let exe = crate::host_code::runner_crate(d, crate_name, &build_rs, &PROGRAMS, cargo);
    let run = |c: &mut Command| {
        let o = c.current_dir(d).output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    };
    let through_cargo = PROGRAMS
        .iter()
        .map(|name| run(Command::new(&exe).arg(name)))
        .collect();

    // Relocatable code through CMake too (nvcc: RDC needs it), linked into a C++ program.
    let rdc = cmake_by == By::Nvcc;
    if rdc {
        std::fs::write(d.join("rdc_a.cu"), RDC_A).unwrap();
        std::fs::write(d.join("rdc_b.cu"), RDC_B).unwrap();
        std::fs::write(
            d.join("rdc_main.cpp"),
            "#include <cstdio>\nextern \"C\" int launch(float*);\n\
             int main() { std::printf(\"launch: %d\\n\", launch(nullptr)); }\n",
        )
        .unwrap();
        cmake.push_str(
            "offload_add_library(rdc STATIC RDC LANGUAGE CUDA CUDA_COMPILER nvcc \
             SOURCES rdc_a.cu rdc_b.cu ARCHITECTURES sm_80)\n\
             add_executable(rdc_prog rdc_main.cpp)\ntarget_link_libraries(rdc_prog PRIVATE rdc)\n",
        );
    }
    std::fs::write(d.join("CMakeLists.txt"), cmake).unwrap();
    let build = d.join("build");
    let venv = nvidia::venv();
    crate::host_code::cmake_build(d, &build, &[("VIRTUAL_ENV", venv.as_os_str())]);
    let objects = build.join(format!("{}.offload-build/objects", PROGRAMS[0]));
    assert!(
        objects.join(format!("{}.o", PROGRAMS[0])).is_file(),
        "the OBJECT library's object in {}",
        objects.display()
    );
    let through_cmake = PROGRAMS
        .iter()
        .map(|name| run(&mut Command::new(build.join(format!("{name}_prog")))))
        .collect();
    if rdc {
        let rdc = run(&mut Command::new(build.join("rdc_prog")));
        assert_eq!(rdc.0, Some(0), "CMake's RDC library: {rdc:?}");
        assert!(
            rdc.1.starts_with("launch: "),
            "CMake's RDC library: {rdc:?}"
        );
    }
    (through_cargo, through_cmake)
}

/// The four cuda-samples programs through a build.rs crate and CMake's
/// `offload_add_library`, each front end with nvcc and with clang 22 (build.rs with nvcc and
/// CMake with clang, then the other way round): each links with the static CUDA runtime and
/// runs with the exit status and output of nvcc's build of it (`nvcc -c`, linked by g++;
/// without a GPU: the runtime's error).
#[test]
fn cuda_samples_through_build_rs_and_cmake_run_as_nvccs_build() {
    let dir = tempfile::tempdir().unwrap();
    let theirs: Vec<Run> = PROGRAMS
        .iter()
        .map(|name| {
            let p = cuda_ref::program(name);
            let obj = nvcc_object(&p);
            let run = link_and_run(&p, &obj, &dir.path().join(name));
            assert!(!run.1.is_empty(), "{name} printed nothing: {run:?}");
            run
        })
        .collect();
    for (rs, cm) in [(By::Nvcc, By::Clang22), (By::Clang22, By::Nvcc)] {
        let (cargo, cmake) = through_build_rs_and_cmake(rs, cm);
        for (i, name) in PROGRAMS.iter().enumerate() {
            assert_eq!(cargo[i], theirs[i], "{name} through build.rs ({rs:?})");
            assert_eq!(cmake[i], theirs[i], "{name} through CMake ({cm:?})");
        }
    }
}

/// `Build::cudart("shared")` with NVIDIA's wheels, which ship `libcudart.so.13` and no
/// `libcudart.so`: the runtime is linked by that file's name (`dylib:+verbatim=`), and a Rust
/// program linked with what the build resolves runs (without a GPU: the runtime's error).
#[test]
fn shared_cudart_of_the_wheels_links_by_its_versioned_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("a.cu"),
        "extern \"C\" int count() { int n = 0; return (int)cudaGetDeviceCount(&n); }\n",
    )
    .unwrap();
    std::fs::write(d.join("b.cu"), "__global__ void k() {}\n").unwrap();
    let mut b = rdc_build(d);
    b.rdc(false).cudart("shared");
    let (libdir, libs) = b
        .try_resolve_archs()
        .unwrap()
        .cuda_runtime
        .expect("a runtime");
    assert_eq!(
        libdir,
        nvidia::nvidia_dir()
            .join("cu13/lib")
            .canonicalize()
            .unwrap()
    );
    assert_eq!(libs, ["dylib:+verbatim=libcudart.so.13"]);
    let lib = b.try_compile("gpu").unwrap().library.expect("a library");
    let call = ("fn count() -> i32;", "count", "count()");
    rust_program(d, "main", call, &lib, &libdir, &[libs[0].as_str()]);
    let o = Command::new(d.join("main"))
        .env("LD_LIBRARY_PATH", &libdir)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.starts_with("count: "), "{out}");
}
