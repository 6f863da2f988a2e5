//! The CMake package (`build-support/cmake/`) and `examples/cmake-hip`, configured and built
//! with Ninja and with Unix Makefiles against this build's `offload-build` (passed as
//! `OFFLOAD_BUILD_EXECUTABLE`, so no cargo build runs at configure time) and clang 19 (the
//! example's ordinary HIP kernels with the ROCm install and clang 15 that discovery finds), with a
//! counting launcher (`OFFLOAD_BUILD_LAUNCHER`) that logs every device compile: the program
//! runs and prints what it registered, an unchanged rebuild does nothing, a header edit
//! recompiles only its includer (once per architecture); a missing compiler and an unknown
//! architecture are CMake errors naming the cause; no GPU is a warning and the default set;
//! `build-support/install.sh` installs a package that `find_package` finds with its tools; from
//! a checkout without a helper, the package builds it with cargo once, into the CMake build
//! directory (a stand-in cargo here), and a package that is found prints no "Could NOT find".
//! CUDA: `CUDA_COMPILER nvcc` with NVIDIA's wheels in `VIRTUAL_ENV`, and `CMAKE_CUDA_COMPILER`
//! naming that nvcc, build standard CUDA that cuobjdump lists (a cubin and the PTX per arch).
//! Also `offload-build compile` alone: depfile, object output and one-line errors.
//!
//! cmake and ninja are required (`build-support/setup.sh`): a missing one fails the tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CLANG: &str = "/usr/lib/llvm-19/bin/clang";
/// The clang Debian's ROCm 5.2 was built for (what its `hipconfig` reports).
const ROCM_CLANG: &str = "/usr/bin/clang-15";
const EXE: &str = env!("CARGO_BIN_EXE_offload-build");

fn checkout() -> PathBuf {
    crate::support::repo_root()
}

fn require(tool: &str) {
    let ok = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "{tool} is missing: run build-support/setup.sh (as root)"
    );
}

/// Both streams; CMake wraps messages, so [`flat`] joins the lines for matching.
pub(crate) fn text(o: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `offload-build compile <source> --arch gfx90a --compiler <clang 19> -o k.o --depfile k.d
/// -j 1` in `dir`, without a launcher.
fn compile_k(dir: &Path, source: &str) -> Output {
    Command::new(EXE)
        .current_dir(dir)
        .args(["compile", source, "--arch", "gfx90a", "--compiler", CLANG])
        .args(["-o", "k.o", "--depfile", "k.d", "-j", "1"])
        .env_remove("OFFLOAD_BUILD_LAUNCHER")
        .output()
        .unwrap()
}

/// `t` with every run of white space made one space.
pub(crate) fn flat(t: &str) -> String {
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `cmake` with the outer environment's architecture and jobserver variables removed.
pub(crate) fn cmake() -> Command {
    let mut c = Command::new("cmake");
    let own = ["MAKEFLAGS", "CARGO_MAKEFLAGS"];
    for &var in crate::support::BUILD_ENV_VARS.iter().chain(&own) {
        c.env_remove(var);
    }
    c
}

/// `c` configuring the project in `src` into `build`.
fn configure_project(mut c: Command, src: &Path, build: &Path) -> Command {
    c.arg("-S").arg(src).arg("-B").arg(build);
    c
}

/// Writes `dir/CMakeLists.txt`: a project without languages running `body`.
fn write_project(dir: &Path, body: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("CMakeLists.txt"),
        format!("cmake_minimum_required(VERSION 3.20)\nproject(p LANGUAGES NONE)\n{body}"),
    )
    .unwrap();
}

/// The CMake line that includes the package from this checkout.
fn include_module() -> String {
    format!(
        "include(\"{}\")\n",
        checkout()
            .join("build-support/cmake/OffloadBuild.cmake")
            .display()
    )
}

/// A copy of `examples/cmake-hip` (its headers get edited) in a temporary directory, with a
/// counting launcher.
struct Example {
    dir: tempfile::TempDir,
}

impl Example {
    fn new() -> Example {
        require("cmake");
        require("ninja");
        assert!(
            Path::new(CLANG).is_file(),
            "{CLANG} missing: run build-support/setup.sh"
        );
        let dir = tempfile::tempdir().unwrap();
        crate::support::copy_dir(
            &checkout().join("examples/cmake-hip"),
            &dir.path().join("src"),
        );
        let launcher = dir.path().join("count.sh");
        std::fs::write(
            &launcher,
            "#!/bin/sh\necho \"start $*\" >> \"$COUNT_LOG\"\nexec \"$@\"\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755)).unwrap();
        Example { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `cmake` with the outer environment's architecture variables removed and the launcher
    /// set (it is read at build time, by the custom command).
    fn cmake(&self) -> Command {
        let mut c = cmake();
        c.env("OFFLOAD_BUILD_LAUNCHER", self.path("count.sh"))
            .env("COUNT_LOG", self.path("compiles.log"));
        c
    }

    fn configure(&self, generator: &str, extra: &[&str]) -> Output {
        configure_project(self.cmake(), &self.path("src"), &self.path("build"))
            .arg("-G")
            .arg(generator)
            .arg(format!("-DOFFLOAD_BUILD_EXECUTABLE={EXE}"))
            .arg(format!(
                "-DOffloadBuild_DIR={}",
                checkout().join("build-support/cmake").display()
            ))
            .args(extra)
            .output()
            .expect("cmake")
    }

    fn build(&self) -> Output {
        let o = self
            .cmake()
            .arg("--build")
            .arg(self.path("build"))
            .output()
            .expect("cmake --build");
        assert!(o.status.success(), "build failed: {}", text(&o));
        o
    }

    /// The device compiles logged since the last call, as `source@arch`, sorted.
    fn take_compiles(&self) -> Vec<String> {
        let log = self.path("compiles.log");
        let t = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_file(&log);
        let mut v: Vec<String> = t
            .lines()
            .filter_map(|l| {
                let src = l.split_whitespace().find(|w| w.ends_with(".hip"))?;
                let arch = l
                    .split_whitespace()
                    .find_map(|w| w.strip_prefix("--offload-arch="))
                    .unwrap_or("?");
                let name = Path::new(src).file_name()?.to_string_lossy().into_owned();
                Some(format!("{name}@{arch}"))
            })
            .collect();
        v.sort();
        v
    }

    fn run_program(&self) -> String {
        let o = Command::new(self.path("build/cmake-hip"))
            .output()
            .expect("run cmake-hip");
        assert!(o.status.success(), "{}", text(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    }
}

fn build_edit_rebuild(generator: &str) {
    let ex = Example::new();
    // The example's kernels are ordinary HIP: no compiler is named, discovery finds Debian's
    // ROCm 5.2 (setup.sh installs it) and the clang it was built for.
    let c = ex.configure(generator, &["-DCMAKE_HIP_ARCHITECTURES=gfx90a;gfx1030"]);
    assert!(c.status.success(), "configure failed: {}", text(&c));
    ex.build();
    let log = std::fs::read_to_string(ex.path("compiles.log")).unwrap_or_default();
    assert!(
        log.lines().all(|l| l.contains(ROCM_CLANG)
            && l.contains("--rocm-path=/usr")
            && l.contains("--rocm-device-lib-path=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode")),
        "every compile runs ROCm's clang with its device libraries:\n{log}"
    );
    assert_eq!(
        ex.take_compiles(),
        [
            "scale.hip@gfx1030",
            "scale.hip@gfx90a",
            "vector_add.hip@gfx1030",
            "vector_add.hip@gfx90a"
        ]
    );
    let out = ex.run_program();
    assert_eq!(
        out,
        "kernel handles: distinct\nembedded archs: gfx1030 gfx90a\n\
         registered kernel: vector_add\nregistered kernel: scale\n",
    );

    // Nothing changed: no compile (and with Ninja, no command at all).
    let o = ex.build();
    assert!(ex.take_compiles().is_empty());
    if generator == "Ninja" {
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("no work to do"),
            "{}",
            text(&o)
        );
    }

    // A header of scale.hip only: scale.hip again for each arch, vector_add.hip not.
    let header = ex.path("src/kernels/include/scale.h");
    let mut h = std::fs::read_to_string(&header).unwrap();
    h.push_str(
        "__device__ inline float scale_twice(float x) { return scale_one(scale_one(x)); }\n",
    );
    std::fs::write(&header, h).unwrap();
    ex.build();
    assert_eq!(
        ex.take_compiles(),
        ["scale.hip@gfx1030", "scale.hip@gfx90a"],
        "only the includer of the edited header recompiles"
    );
    assert_eq!(ex.run_program(), out);

    // The header that both include: both, for each arch.
    let header = ex.path("src/kernels/include/device.h");
    let mut h = std::fs::read_to_string(&header).unwrap();
    h.push_str("// edited\n");
    std::fs::write(&header, h).unwrap();
    ex.build();
    assert_eq!(ex.take_compiles().len(), 4);
}

#[test]
fn example_with_ninja_builds_runs_and_tracks_headers() {
    build_edit_rebuild("Ninja");
}

#[test]
fn example_with_makefiles_builds_runs_and_tracks_headers() {
    build_edit_rebuild("Unix Makefiles");
}

#[test]
fn missing_compiler_and_unknown_arch_are_cmake_errors_naming_the_cause() {
    let ex = Example::new();
    let c = ex.configure(
        "Ninja",
        &[
            "-DOFFLOAD_HIP_COMPILER=/nonexistent/bin/clang",
            "-DCMAKE_HIP_ARCHITECTURES=gfx90a",
        ],
    );
    let t = flat(&text(&c));
    assert!(!c.status.success(), "{t}");
    assert!(
        t.contains("CMake Error") && t.contains("offload_add_fatbin(kernels): no clang"),
        "{t}"
    );
    assert!(
        t.contains("(set with OFFLOAD_HIP_COMPILER)") && t.contains("/nonexistent/bin/clang"),
        "{t}"
    );

    let ex = Example::new();
    let c = ex.configure(
        "Ninja",
        &[
            &format!("-DOFFLOAD_HIP_COMPILER={CLANG}"),
            "-DCMAKE_HIP_ARCHITECTURES=gfx90a;gfx9999",
        ],
    );
    let t = flat(&text(&c));
    assert!(!c.status.success(), "{t}");
    assert!(
        t.contains("CMake Error")
            && t.contains("`gfx9999` (from CMAKE_HIP_ARCHITECTURES) is not supported"),
        "{t}"
    );
}

#[test]
fn no_gpu_is_a_warning_and_the_default_set() {
    if Path::new("/sys/class/kfd").exists() {
        eprintln!("skipped: this machine has an AMD GPU driver");
        return;
    }
    let ex = Example::new();
    // No architecture anywhere: offload-build's resolution finds no GPU.
    let c = ex.configure("Ninja", &[&format!("-DOFFLOAD_HIP_COMPILER={CLANG}")]);
    let t = flat(&text(&c));
    assert!(c.status.success(), "{t}");
    assert!(
        t.contains("CMake Warning")
            && t.contains("no GPU found; using the default set")
            && t.contains("set CMAKE_HIP_ARCHITECTURES, ARCHITECTURES or OFFLOAD_ARCH"),
        "{t}"
    );
    assert!(
        t.contains("offload_add_fatbin(kernels): gfx90a;gfx942;gfx1030;gfx1100"),
        "{t}"
    );

    // offload_detect_architectures and the bundler target, in a project of their own.
    let proj = ex.path("detect");
    write_project(
        &proj,
        &format!(
            "{}offload_detect_architectures(A FALLBACK gfx90a gfx1100)\n\
             message(STATUS \"detected=${{A}}\")\n\
             get_target_property(B OffloadBuild::bundler IMPORTED_LOCATION)\n\
             message(STATUS \"bundler=${{B}}\")\n",
            include_module()
        ),
    );
    let o = configure_project(ex.cmake(), &proj, &proj.join("b"))
        .arg(format!("-DOFFLOAD_BUILD_EXECUTABLE={EXE}"))
        .arg(format!("-DOFFLOAD_HIP_COMPILER={CLANG}"))
        .output()
        .unwrap();
    let t = flat(&text(&o));
    assert!(o.status.success(), "{t}");
    assert!(t.contains("detected=gfx90a;gfx1100"), "{t}");
    assert!(t.contains("no GPU found on this machine"), "{t}");
    let bundler = Path::new(EXE).with_file_name("offload-bundler");
    assert!(t.contains(&format!("bundler={}", bundler.display())), "{t}");
}

#[test]
fn compile_cli_writes_object_and_depfile_and_fails_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    std::fs::write(
        p("k.h"),
        "#pragma once\n#define __global__ __attribute__((global))\n",
    )
    .unwrap();
    std::fs::write(
        p("my k.hip"),
        "#include \"k.h\"\nextern \"C\" __global__ void k(float* x) { x[0] = 1; }\n",
    )
    .unwrap();
    let o = compile_k(dir.path(), "my k.hip");
    assert!(o.status.success(), "{}", text(&o));
    assert!(o.stdout.is_empty(), "no cargo directives: {}", text(&o));
    let obj = std::fs::read(p("k.o")).unwrap();
    assert!(obj.starts_with(b"\x7fELF"));
    let dep = std::fs::read_to_string(p("k.d")).unwrap();
    assert!(dep.starts_with("k.o:"), "{dep}");
    assert!(dep.contains("my\\ k.hip") && dep.contains("k.h"), "{dep}");

    let o = Command::new(EXE)
        .current_dir(dir.path())
        .args([
            "compile",
            "my k.hip",
            "--arch",
            "gfx9999",
            "--compiler",
            CLANG,
        ])
        .args(["-o", "libk.a"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("offload-build: error: offload arch `gfx9999`"),
        "{err}"
    );
    assert!(!p("libk.a").exists());
}

/// `compile --depfile` for a source and a header whose names hold a backslash before a space
/// (clang lists the header with a `/` for its backslash; the build finds the real file): GNU
/// make (`include`) and Ninja (`depfile =`) both read the depfile, find every file it names
/// (nothing to do on a second run), and rebuild once the header or the source is touched.
#[test]
fn compile_depfile_is_read_by_make_and_ninja() {
    require("make");
    require("ninja");
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    std::fs::write(
        p("my h\\ dr.h"),
        "#pragma once\n#define __global__ __attribute__((global))\n",
    )
    .unwrap();
    let source = "my s\\ rc.hip";
    std::fs::write(
        p(source),
        "#include \"my h\\ dr.h\"\nextern \"C\" __global__ void k(float* x) { x[0] = 1; }\n",
    )
    .unwrap();
    let o = compile_k(dir.path(), source);
    assert!(o.status.success(), "{}", text(&o));
    let dep = std::fs::read_to_string(p("k.d")).unwrap();
    assert!(dep.contains("/my\\ h\\\\\\ dr.h"), "{dep}");
    assert!(dep.contains(" my\\ s\\\\\\ rc.hip"), "{dep}");
    std::fs::write(
        p("Makefile"),
        "k.o:\n\ttouch k.o && echo built >> make.log\ninclude k.d\n",
    )
    .unwrap();
    std::fs::write(
        p("build.ninja"),
        "rule touch\n  command = touch k.o && echo built >> ninja.log\n  depfile = k.d\n\
         build k.o: touch\n",
    )
    .unwrap();
    let run = |tool: &str| {
        let mut c = Command::new(tool);
        c.current_dir(dir.path());
        for var in ["MAKEFLAGS", "MFLAGS", "MAKELEVEL", "CARGO_MAKEFLAGS"] {
            c.env_remove(var);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{tool}: {}", text(&o));
        let log = std::fs::read_to_string(p(&format!("{tool}.log"))).unwrap_or_default();
        log.lines().count()
    };
    // Ninja has no log yet: it builds once; then k.o is newer than every file named.
    assert_eq!(run("ninja"), 1);
    // Sets a file's modification time `secs` from now (in the past when negative).
    let touch = |name: &str, secs: i64| {
        let now = std::time::SystemTime::now();
        let d = std::time::Duration::from_secs(secs.unsigned_abs());
        let later = if secs < 0 { now - d } else { now + d };
        std::fs::File::options()
            .write(true)
            .open(p(name))
            .unwrap()
            .set_modified(later)
            .unwrap();
    };
    touch("k.o", 10);
    assert_eq!(run("make"), 0, "make rebuilt an up-to-date output");
    assert_eq!(run("ninja"), 1, "ninja rebuilt an up-to-date output");
    touch("my h\\ dr.h", 20);
    assert_eq!(run("make"), 1, "make missed the header");
    assert_eq!(run("ninja"), 2, "ninja missed the header");
    // The header old again: nothing to do.
    touch("my h\\ dr.h", -100);
    assert_eq!((run("make"), run("ninja")), (1, 2));
    touch(source, 30);
    assert_eq!(run("make"), 2, "make missed the source");
    assert_eq!(run("ninja"), 3, "ninja missed the source");
}

/// Architectures set after the call (the target's `HIP_ARCHITECTURES`, a source's
/// `OFFLOAD_ARCHITECTURES`) are the ones compiled, and `EMBED FATBIN` writes the container.
#[test]
fn properties_set_after_the_call_choose_the_archs() {
    let ex = Example::new();
    let proj = ex.path("props");
    write_project(
        &proj,
        &format!(
            "{}offload_add_fatbin(k SOURCES a.hip b.hip ARCHITECTURES gfx942 EMBED FATBIN)\n\
             set_target_properties(k PROPERTIES HIP_ARCHITECTURES gfx1100)\n\
             set_source_files_properties(b.hip PROPERTIES OFFLOAD_ARCHITECTURES gfx90a)\n\
             add_custom_target(all_k ALL DEPENDS k_offload_build)\n",
            include_module()
        ),
    );
    write_trivial_kernels(&proj, &["a", "b"]);
    let o = configure_project(ex.cmake(), &proj, &ex.path("build"))
        .args(["-G", "Ninja"])
        .arg(format!("-DOFFLOAD_BUILD_EXECUTABLE={EXE}"))
        .arg(format!("-DOFFLOAD_HIP_COMPILER={CLANG}"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    ex.build();
    assert_eq!(ex.take_compiles(), ["a.hip@gfx1100", "b.hip@gfx90a"]);
    let fatbin = std::fs::read(ex.path("build/k.hipfb")).unwrap();
    assert!(fatbin.starts_with(b"__CLANG_OFFLOAD_BUNDLE__"));
}

#[test]
fn installed_package_is_found_with_its_tools() {
    require("cmake");
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("prefix");
    let bins = Path::new(EXE).parent().unwrap();
    let o = Command::new("sh")
        .arg(checkout().join("build-support/install.sh"))
        .arg("--prefix")
        .arg(&prefix)
        .arg("--bin-dir")
        .arg(bins)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    for tool in ["offload-build", "offload-bundler", "offload-packager"] {
        assert!(
            prefix.join("bin").join(tool).is_file(),
            "{tool} not installed"
        );
    }
    // A project that knows only the prefix: find_package finds the package and the package
    // finds the installed helper and bundler, not this build's.
    let proj = dir.path().join("proj");
    write_project(
        &proj,
        "find_package(OffloadBuild 0.1 CONFIG REQUIRED)\n\
         get_target_property(B OffloadBuild::bundler IMPORTED_LOCATION)\n\
         message(STATUS \"helper=${OFFLOAD_BUILD_EXECUTABLE}\")\n\
         message(STATUS \"bundler=${B}\")\n",
    );
    let o = configure_project(cmake(), &proj, &proj.join("b"))
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()))
        .arg(format!("-DOFFLOAD_HIP_COMPILER={CLANG}"))
        .output()
        .unwrap();
    let t = flat(&text(&o));
    assert!(o.status.success(), "{t}");
    assert!(!t.contains("Could NOT find"), "{t}");
    let bin = prefix.join("bin");
    assert!(
        t.contains(&format!("helper={}", bin.join("offload-build").display())),
        "{t}"
    );
    assert!(
        t.contains(&format!(
            "bundler={}",
            bin.join("offload-bundler").display()
        )),
        "{t}"
    );
    // A newer version than the package's is refused.
    write_project(&proj, "find_package(OffloadBuild 9.0 CONFIG REQUIRED)\n");
    let o = configure_project(cmake(), &proj, &proj.join("b2"))
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()))
        .output()
        .unwrap();
    let t = flat(&text(&o));
    assert!(!o.status.success(), "{t}");
    assert!(t.contains("0.1.0"), "{t}");
}

/// A scratch checkout in `dir/checkout` (the package's files and a `Cargo.toml`, nothing else)
/// and a stand-in cargo in `dir/home/.cargo/bin` (found through CARGO_HOME, as the package looks
/// for it) that logs its call and "builds" by copying this build's tools into its
/// `--target-dir`; with FAIL set it fails as cargo does.
fn scratch_checkout(dir: &Path) -> PathBuf {
    let root = dir.join("checkout");
    let package = root.join("build-support/cmake");
    std::fs::create_dir_all(&package).unwrap();
    for f in [
        "OffloadBuild.cmake",
        "OffloadBuildConfig.cmake",
        "OffloadBuildConfigVersion.cmake",
    ] {
        std::fs::copy(
            checkout().join("build-support/cmake").join(f),
            package.join(f),
        )
        .unwrap();
    }
    std::fs::write(root.join("Cargo.toml"), "[workspace]\n").unwrap();
    let cargo_home = dir.join("home/.cargo");
    std::fs::create_dir_all(cargo_home.join("bin")).unwrap();
    let bins = Path::new(EXE).parent().unwrap();
    let fake = cargo_home.join("bin/cargo");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\necho \"$PWD $*\" >> \"$CARGO_LOG\"\n\
             if [ -n \"$FAIL\" ]; then echo 'error: could not compile `offload-build`' >&2; exit 101; fi\n\
             while [ \"$1\" != --target-dir ]; do shift; done\n\
             mkdir -p \"$2/release\"\n\
             cp '{0}/offload-build' '{0}/offload-bundler' \"$2/release/\"\n",
            bins.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    root
}

/// Configures `proj` into `build` with the stand-in cargo of [`scratch_checkout`] in `dir`
/// (logging to `dir/cargo.log`; failing with `fail`), and CARGO_TARGET_DIR set to the
/// checkout's `target/`, which the package must not use.
fn configure_with_cargo(dir: &Path, proj: &Path, build: &Path, fail: bool) -> Output {
    let mut c = configure_project(cmake(), proj, build);
    c.env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", dir.join("home"))
        .env("CARGO_HOME", dir.join("home/.cargo"))
        .env("CARGO_TARGET_DIR", dir.join("checkout/target"))
        .env("CARGO_LOG", dir.join("cargo.log"))
        .env_remove("FAIL");
    if fail {
        c.env("FAIL", "1");
    }
    c.output().unwrap()
}

/// From a checkout without a helper, both ways of using the package (`include()` and a
/// non-QUIET `find_package(... CONFIG PATHS <checkout>)`) build the helper with cargo once,
/// into the CMake build directory: the checkout is not written (no `target/`), and a package
/// that is found prints no "Could NOT find".
#[test]
fn from_a_checkout_the_helper_is_built_with_cargo_once_into_the_build_directory() {
    require("cmake");
    let dir = tempfile::tempdir().unwrap();
    let root = scratch_checkout(dir.path());
    let package = root.join("build-support/cmake");
    let log = dir.path().join("cargo.log");
    let configure =
        |proj: &Path, build: &Path| configure_with_cargo(dir.path(), proj, build, false);
    let report = "message(STATUS \"helper=${OFFLOAD_BUILD_EXECUTABLE}\")\n";
    let uses = [
        (
            "include",
            format!("include(\"{}/OffloadBuild.cmake\")\n", package.display()),
        ),
        (
            "find-package",
            format!(
                "find_package(OffloadBuild 0.1 CONFIG PATHS \"{}\")\n",
                package.display()
            ),
        ),
    ];
    for (name, use_line) in uses {
        let proj = dir.path().join(name);
        write_project(&proj, &format!("{use_line}{report}"));
        let build = proj.join("b");
        let o = configure(&proj, &build);
        let t = flat(&text(&o));
        assert!(o.status.success(), "{t}");
        let target_dir = build.join("offload-build-cargo");
        assert!(
            t.contains(&format!(
                "Building offload-build from {} with cargo into {} (once per build directory;",
                root.display(),
                target_dir.display()
            )),
            "{t}"
        );
        assert!(!t.contains("Could NOT find"), "{t}");
        let exe = target_dir.join("release/offload-build");
        assert!(t.contains(&format!("helper={}", exe.display())), "{t}");
        assert!(exe.is_file(), "{t}");
        assert!(
            !root.join("target").exists(),
            "the checkout was written: {t}"
        );
        let calls = std::fs::read_to_string(&log).unwrap();
        assert_eq!(
            calls,
            format!(
                "{0} build --release --manifest-path {0}/Cargo.toml --target-dir {1} \
                 -p offload-cli --bin offload-build --bin offload-bundler\n",
                root.display(),
                target_dir.display()
            )
        );
        // Configuring again uses the cached helper: no second build.
        let o = configure(&proj, &build);
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(std::fs::read_to_string(&log).unwrap(), calls);
        std::fs::remove_file(&log).unwrap();
    }
}

/// From a checkout, a failed cargo build of the helper is a CMake error with cargo's message.
#[test]
fn from_a_checkout_a_failed_cargo_build_is_a_cmake_error() {
    require("cmake");
    let dir = tempfile::tempdir().unwrap();
    let package = scratch_checkout(dir.path()).join("build-support/cmake");
    let proj = dir.path().join("proj");
    write_project(
        &proj,
        &format!("include(\"{}/OffloadBuild.cmake\")\n", package.display()),
    );
    let o = configure_with_cargo(dir.path(), &proj, &proj.join("b"), true);
    let t = flat(&text(&o));
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("cargo build of offload-build failed (101):")
            && t.contains("error: could not compile `offload-build`"),
        "{t}"
    );
}

/// A kernel with a warning clang prints by default (-Wconstant-conversion).
const WARNING_KERNEL: &str = "#define __global__ __attribute__((global))\n\
     extern \"C\" __global__ void kw(float* x) {\n\
     \x20 int n = 10000000000;\n\
     \x20 x[0] = n;\n\
     }\n";

/// A quoted list (as `"${GPU_TARGETS}"` gives), an unquoted one and generator expressions
/// choose the archs; the compiler's warning shows in CMake's build output once, with the
/// archs; a progress line per compile.
#[test]
fn quoted_variable_and_generator_expression_lists_and_warnings_in_the_build_output() {
    let ex = Example::new();
    let proj = ex.path("lists");
    write_project(
        &proj,
        &format!(
            "{}set(GPU_TARGETS \"gfx90a:xnack+;gfx1100\")\n\
             offload_add_fatbin(q SOURCES q.hip ARCHITECTURES \"${{GPU_TARGETS}}\" EMBED FATBIN)\n\
             offload_add_fatbin(u SOURCES u.hip ARCHITECTURES gfx90a gfx1030 EMBED FATBIN QUIET)\n\
             offload_add_fatbin(g SOURCES g.hip EMBED FATBIN QUIET ARCHITECTURES gfx90a\n\
             \x20 \"$<$<CONFIG:Debug>:gfx1100;gfx942>\" \"$<IF:$<CONFIG:Debug>,gfx1030,gfx1031>\")\n\
             add_custom_target(all_k ALL DEPENDS q_offload_build u_offload_build g_offload_build)\n",
            include_module()
        ),
    );
    std::fs::write(proj.join("q.hip"), WARNING_KERNEL).unwrap();
    write_trivial_kernels(&proj, &["u", "g"]);
    let o = configure_project(ex.cmake(), &proj, &ex.path("build"))
        .args(["-G", "Ninja", "-DCMAKE_BUILD_TYPE=Debug"])
        .arg(format!("-DOFFLOAD_BUILD_EXECUTABLE={EXE}"))
        .arg(format!("-DOFFLOAD_HIP_COMPILER={CLANG}"))
        .output()
        .unwrap();
    let t = flat(&text(&o));
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("offload_add_fatbin(q): gfx90a:xnack+;gfx1100 with"),
        "{t}"
    );
    let o = ex.build();
    assert_eq!(
        ex.take_compiles(),
        [
            "g.hip@gfx1030",
            "g.hip@gfx1100",
            "g.hip@gfx90a",
            "g.hip@gfx942",
            "q.hip@gfx1100",
            "q.hip@gfx90a:xnack+",
            "u.hip@gfx1030",
            "u.hip@gfx90a",
        ]
    );
    let out = text(&o);
    let warning = format!(
        "[gfx90a:xnack+, gfx1100] {}:3:11: warning: implicit conversion from 'long' to 'int'",
        proj.join("q.hip").display()
    );
    assert_eq!(out.matches(&warning).count(), 1, "{out}");
    assert!(out.contains("int n = 10000000000;"), "{out}");
    assert!(!out.contains("generated when compiling"), "{out}");
    // Progress lines for q only (u and g are QUIET).
    let progress: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("[1/2] ") || l.starts_with("[2/2] "))
        .filter(|l| l.contains(".hip "))
        .collect();
    assert_eq!(progress.len(), 2, "{out}");
    assert!(
        progress
            .iter()
            .all(|l| l.contains(" q.hip ") && l.ends_with(" s"))
    );
}

#[test]
fn compile_cli_prints_progress_and_warnings_unless_told_not_to() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("w.hip"), WARNING_KERNEL).unwrap();
    let run = |archs: &str, extra: &[&str]| {
        let o = Command::new(EXE)
            .current_dir(dir.path())
            .args(["compile", "w.hip", "--archs", archs, "--compiler", CLANG])
            .args(["-o", "libk.a", "-j", "1"])
            .args(extra)
            .env_remove("OFFLOAD_BUILD_LAUNCHER")
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (rc, err) = run("gfx90a;gfx1100", &[]);
    assert_eq!(rc, Some(0), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines[0].starts_with("[1/2] gfx") && lines[0].contains(" w.hip "),
        "{err}"
    );
    assert!(lines[1].starts_with("[2/2] gfx"), "{err}");
    assert_eq!(
        err.matches("[gfx90a, gfx1100] w.hip:3:11: warning: implicit conversion")
            .count()
            + err
                .matches(&format!(
                    "[gfx90a, gfx1100] {}:3:11: warning: implicit conversion",
                    dir.path().join("w.hip").display()
                ))
                .count(),
        1,
        "{err}"
    );
    // Cached: no progress, the warning again.
    let (rc, err) = run("gfx90a;gfx1100", &[]);
    assert_eq!(rc, Some(0), "{err}");
    assert!(!err.contains("[1/"), "{err}");
    assert_eq!(
        err.matches("warning: implicit conversion").count(),
        1,
        "{err}"
    );
    // --quiet: the warning, no progress; --no-warnings: neither.
    let (_, err) = run("gfx942", &["--quiet"]);
    assert!(!err.contains("[1/1]") && err.contains("[gfx942] "), "{err}");
    let (rc, err) = run("gfx1030", &["--quiet", "--no-warnings"]);
    assert_eq!((rc, err.as_str()), (Some(0), ""));
    // --warnings-into-errors: the warning is an error, exit status 1.
    let (rc, err) = run("gfx1031", &["--warnings-into-errors"]);
    assert_eq!(rc, Some(1), "{err}");
    assert!(
        err.contains("-Werror") && err.contains("error: implicit conversion"),
        "{err}"
    );
}

/// Every `offload-build compile --<flag>` the docs name is a flag of the command.
#[test]
fn documented_compile_flags_exist() {
    let root = checkout();
    let help = Command::new(EXE)
        .args(["compile", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    let mut files = vec![
        root.join("README.md"),
        root.join("build-support/cmake/OffloadBuild.cmake"),
    ];
    for (dir, ext) in [
        ("docs", "md"),
        ("crates/offload-cli/src", "rs"),
        ("crates/offload-build/src", "rs"),
    ] {
        let under = crate::support::files_under(&root.join(dir));
        files.extend(
            under
                .into_iter()
                .filter(|p| p.extension().is_some_and(|x| x == ext)),
        );
    }
    let mut checked = 0;
    for f in files {
        let t = std::fs::read_to_string(&f).unwrap();
        for (i, _) in t.match_indices("offload-build compile --") {
            let flag: String = t[i + "offload-build compile ".len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            assert!(
                help.contains(&format!("{flag} ")) || help.contains(&format!("{flag}\n")),
                "{} names `offload-build compile {flag}`, which is not a flag:\n{help}",
                f.display()
            );
            checked += 1;
        }
    }
    assert!(checked > 0);
}

/// Writes `<n>.hip` with one trivial kernel `k<n>` for each name (no HIP headers needed).
fn write_trivial_kernels(proj: &Path, names: &[&str]) {
    for n in names {
        std::fs::write(
            proj.join(format!("{n}.hip")),
            format!(
                "#define __global__ __attribute__((global))\n\
                 extern \"C\" __global__ void k{n}(float* x) {{ x[0] = 1; }}\n"
            ),
        )
        .unwrap();
    }
}

/// A source named with a line break (which would inject `cargo:rustc-env` into a build script's
/// output, and break a depfile) is refused with one line naming it; no depfile is written.
#[test]
fn compile_cli_refuses_a_file_name_with_a_line_break() {
    let dir = tempfile::tempdir().unwrap();
    let name = "x\ncargo:rustc-env=INJECTED=pwned\ny.hip";
    std::fs::write(
        dir.path().join(name),
        "#define __global__ __attribute__((global))\n\
         extern \"C\" __global__ void k(float* x) { x[0] = 1; }\n",
    )
    .unwrap();
    let o = compile_k(dir.path(), name);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(o.stdout.is_empty(), "{}", text(&o));
    assert!(
        err.contains("line break") && err.contains(r"x\ncargo:rustc-env=INJECTED=pwned\ny.hip"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!dir.path().join("k.d").exists() && !dir.path().join("k.o").exists());
}

/// Compiles that share a cache directory (CMake targets of one project, parallel builds) each
/// link the same device code at once: 8 concurrent two-source runs all succeed (issue 16,
/// finding 7: the link's temporary file had one fixed name, and 7 of 24 runs failed renaming
/// it).
#[test]
fn concurrent_compiles_share_a_cache() {
    let dir = tempfile::tempdir().unwrap();
    write_trivial_kernels(dir.path(), &["a", "b"]);
    let runs: Vec<_> = (0..8)
        .map(|i| {
            Command::new(EXE)
                .current_dir(dir.path())
                .args([
                    "compile",
                    "a.hip",
                    "b.hip",
                    "--arch",
                    "gfx90a",
                    "--compiler",
                    CLANG,
                ])
                .args([
                    "--out-dir",
                    "shared",
                    "-o",
                    &format!("k{i}.hipfb"),
                    "-j",
                    "1",
                ])
                .args(["--embed", "fatbin", "--quiet"])
                .env_remove("OFFLOAD_BUILD_LAUNCHER")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outputs: Vec<_> = runs
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    for (i, o) in outputs.iter().enumerate() {
        assert!(o.status.success(), "run {i}: {}", text(o));
        // Nothing printed under --quiet: the device link gave clang 19 `-nogpulib`, which
        // it called unused.
        assert!(o.stderr.is_empty(), "run {i}: {}", text(o));
    }
    let first = std::fs::read(dir.path().join("k0.hipfb")).unwrap();
    for i in 1..8 {
        assert_eq!(
            std::fs::read(dir.path().join(format!("k{i}.hipfb"))).unwrap(),
            first
        );
    }
    let left: Vec<_> = std::fs::read_dir(dir.path().join("shared/offload-build-cache"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".tmp"))
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "temporaries left: {left:?}");
}

/// `TIMEOUT` reaches the command (`--timeout`): a hanging compiler is killed after it, with
/// its child, and the build fails with the one line naming the source and architecture.
#[test]
fn timeout_argument_kills_a_hanging_compile() {
    let ex = Example::new();
    let proj = ex.path("hang");
    write_project(
        &proj,
        &format!(
            "{}offload_add_fatbin(k SOURCES a.hip ARCHITECTURES gfx90a EMBED FATBIN TIMEOUT 1 \
             COMPILER \"${{CMAKE_CURRENT_SOURCE_DIR}}/hang.sh\")\n\
             add_custom_target(all_k ALL DEPENDS k_offload_build)\n",
            include_module()
        ),
    );
    write_trivial_kernels(&proj, &["a"]);
    let hang = proj.join("hang.sh");
    std::fs::write(
        &hang,
        format!(
            "#!/bin/sh\ncase \"$*\" in *--version*|*--print-supported-cpus*) exec {CLANG} \"$@\";; esac\n\
             sleep 300 &\necho $! > \"$PIDFILE\"\nwait\n"
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hang, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = configure_project(ex.cmake(), &proj, &ex.path("build"))
        .args(["-G", "Ninja"])
        .arg(format!("-DOFFLOAD_BUILD_EXECUTABLE={EXE}"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let pidfile = ex.path("pid");
    let start = std::time::Instant::now();
    let o = ex
        .cmake()
        .env("PIDFILE", &pidfile)
        .arg("--build")
        .arg(ex.path("build"))
        .output()
        .unwrap();
    assert!(start.elapsed() < std::time::Duration::from_secs(60));
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains(&format!(
            "offload-build: error: compiling {} for gfx90a did not finish within the compile \
             timeout of 1 s (--timeout, OFFLOAD_BUILD_COMPILE_TIMEOUT)",
            proj.join("a.hip").display()
        )),
        "{t}"
    );
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
    assert!(
        stat.is_empty() || stat.contains(") Z "),
        "the compiler's child {pid} was left running: {stat}"
    );
}

/// A standard CUDA source (`cuda_fp16.h`, `__global__`, `threadIdx`) for the CUDA compiler
/// tests.
const STANDARD_CUDA: &str = r#"#include <cuda_fp16.h>
extern "C" __global__ void scale(int n, float s, float *a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= s;
}
extern "C" __global__ void half_add(__half *a, const __half *b) {
  a[threadIdx.x] = __hadd(a[threadIdx.x], b[threadIdx.x]);
}
"#;

/// `cmake` configuring `proj` into `build` with Ninja and this build's helper, every CUDA
/// variable of the test's environment removed.
fn cuda_configure(proj: &Path, build: &Path, args: &[String]) -> Command {
    let mut c = configure_project(cmake(), proj, build);
    for var in crate::support::CUDA_ENV_VARS {
        c.env_remove(var);
    }
    c.args(["-G", "Ninja"])
        .arg(format!("-DOFFLOAD_BUILD_EXECUTABLE={EXE}"))
        .args(args);
    c
}

/// `offload_add_fatbin(... CUDA_COMPILER nvcc)` with NVIDIA's wheels in `VIRTUAL_ENV` builds
/// standard CUDA for `sm_80;sm_90`: cuobjdump lists a cubin and the PTX per architecture.
/// Without `CUDA_COMPILER`, `CMAKE_CUDA_COMPILER` naming that nvcc is the compiler (no
/// `VIRTUAL_ENV` then); `CUDA_COMPILER clang` passes over it for a clang.
#[test]
fn cuda_compiler_nvcc_and_cmake_cuda_compiler() {
    require("cmake");
    require("ninja");
    let nvcc = crate::support::nvidia::nvcc();
    let dir = tempfile::tempdir().unwrap();
    let proj = dir.path().join("proj");
    write_project(
        &proj,
        &format!(
            "{}offload_add_fatbin(k_nvcc LANGUAGE CUDA SOURCES k.cu ARCHITECTURES sm_80 sm_90\n  \
             CONTAINER CUDA_FATBIN EMBED FATBIN CUDA_COMPILER nvcc QUIET)\n\
             offload_add_fatbin(k_default LANGUAGE CUDA SOURCES k.cu ARCHITECTURES sm_80 sm_90\n  \
             CONTAINER CUDA_FATBIN EMBED FATBIN QUIET)\n\
             offload_add_fatbin(k_clang LANGUAGE CUDA SOURCES k.cu ARCHITECTURES sm_80 sm_90\n  \
             CONTAINER CUDA_FATBIN EMBED FATBIN CUDA_COMPILER clang QUIET)\n",
            include_module()
        ),
    );
    std::fs::write(proj.join("k.cu"), STANDARD_CUDA).unwrap();
    let build = dir.path().join("b");
    let o = cuda_configure(&proj, &build, &[])
        .env("VIRTUAL_ENV", crate::support::nvidia::venv())
        .output()
        .unwrap();
    let t = flat(&text(&o));
    assert!(o.status.success(), "{t}");
    let with_nvcc = format!("sm_80;sm_90 with {}", nvcc.display());
    assert!(
        t.contains(&format!("offload_add_fatbin(k_nvcc): {with_nvcc}")),
        "{t}"
    );
    let o = cmake()
        .args(["--build"])
        .arg(&build)
        .args(["--target", "k_nvcc_offload_build"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let ninja = std::fs::read_to_string(build.join("build.ninja")).unwrap();
    assert!(ninja.contains("--cuda-compiler nvcc"), "{ninja}");
    assert_eq!(
        crate::support::nvidia::cuobjdump_list(&build.join("k_nvcc.fatbin")),
        [
            "ELF file    1: k_nvcc.sm_80.cubin",
            "PTX file    1: k_nvcc.sm_80.ptx",
            "ELF file    2: k_nvcc.sm_90.cubin",
            "PTX file    2: k_nvcc.sm_90.ptx",
        ]
    );

    // CMAKE_CUDA_COMPILER, no VIRTUAL_ENV: that nvcc by default, a clang for CUDA_COMPILER
    // clang.
    let build = dir.path().join("b2");
    let o = cuda_configure(
        &proj,
        &build,
        &[format!("-DCMAKE_CUDA_COMPILER={}", nvcc.display())],
    )
    .output()
    .unwrap();
    let t = flat(&text(&o));
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains(&format!("offload_add_fatbin(k_default): {with_nvcc}")),
        "{t}"
    );
    let clang = t
        .split("offload_add_fatbin(k_clang): sm_80;sm_90 with ")
        .nth(1);
    let clang = clang
        .and_then(|c| c.split_whitespace().next())
        .unwrap_or("");
    assert!(clang.contains("clang"), "{t}");
    let o = cmake()
        .args(["--build"])
        .arg(&build)
        .args(["--target", "k_default_offload_build"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let listing = crate::support::nvidia::cuobjdump_list(&build.join("k_default.fatbin"));
    assert_eq!(
        listing.iter().filter(|l| l.starts_with("ELF")).count(),
        2,
        "{listing:?}"
    );
}

/// `CMAKE_HIP_COMPILER_LAUNCHER`, else `CMAKE_CXX_COMPILER_LAUNCHER`, is put in front of every
/// device compile of `offload_add_fatbin` (as `OFFLOAD_BUILD_LAUNCHER`, over the
/// environment's).
#[test]
fn compiler_launcher_variables_reach_the_device_compiles() {
    let ex = Example::new();
    let proj = ex.path("launch");
    write_project(
        &proj,
        &format!(
            "{}offload_add_fatbin(k SOURCES a.hip ARCHITECTURES gfx90a EMBED FATBIN)\n\
             add_custom_target(all_k ALL DEPENDS k_offload_build)\n",
            include_module()
        ),
    );
    write_trivial_kernels(&proj, &["a"]);
    for (i, var) in ["CMAKE_HIP_COMPILER_LAUNCHER", "CMAKE_CXX_COMPILER_LAUNCHER"]
        .iter()
        .enumerate()
    {
        let build = ex.path(&format!("build-{i}"));
        let launcher = ex.path("count.sh").display().to_string();
        let mut c = ex.cmake();
        c.env_remove("OFFLOAD_BUILD_LAUNCHER");
        let o = configure_project(c, &proj, &build)
            .args(["-G", "Ninja"])
            .arg(format!("-DOFFLOAD_BUILD_EXECUTABLE={EXE}"))
            .arg(format!("-DOFFLOAD_HIP_COMPILER={CLANG}"))
            .arg(format!("-D{var}={launcher}"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        let mut c = ex.cmake();
        let o = c
            .env_remove("OFFLOAD_BUILD_LAUNCHER")
            .arg("--build")
            .arg(&build)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        let log = std::fs::read_to_string(ex.path("compiles.log")).unwrap_or_default();
        let _ = std::fs::remove_file(ex.path("compiles.log"));
        assert!(
            log.lines()
                .any(|l| l.starts_with("start ") && l.contains("a.hip")),
            "{var}: {log}"
        );
    }
}

/// The same project in two checkouts (different directories), each configured into a build
/// directory inside it: `offload_add_fatbin` writes byte-identical libraries and containers
/// (its command runs in the top source directory, so offload-build spells the sources and
/// include directories under it relative, and the `-cuid` of `-fgpu-rdc` HIP compiles and the
/// host symbols do not depend on where the checkout is).
#[test]
fn two_checkouts_build_the_same_bytes_through_cmake() {
    require("cmake");
    require("ninja");
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let mut outputs = Vec::new();
    for d in &dirs {
        let proj = d.path().join("checkout");
        write_project(
            &proj,
            &format!(
                "{}offload_add_fatbin(k SOURCES a.hip b.hip ARCHITECTURES gfx90a gfx1100\n  \
                 INCLUDE_DIRECTORIES inc)\n\
                 offload_add_fatbin(k_fb SOURCES a.hip b.hip ARCHITECTURES gfx90a gfx1100\n  \
                 INCLUDE_DIRECTORIES inc EMBED FATBIN)\n\
                 add_custom_target(all_k ALL DEPENDS k_offload_build k_fb_offload_build)\n",
                include_module()
            ),
        );
        write_trivial_kernels(&proj, &["a", "b"]);
        std::fs::create_dir_all(proj.join("inc")).unwrap();
        std::fs::write(proj.join("inc/common.h"), "#define ONE 1\n").unwrap();
        let build = proj.join("build");
        let mut c = cmake();
        c.env_remove("OFFLOAD_BUILD_LAUNCHER")
            .env_remove("OFFLOAD_BUILD_CACHE_DIR");
        let o = configure_project(c, &proj, &build)
            .args(["-G", "Ninja"])
            .arg(format!("-DOFFLOAD_BUILD_EXECUTABLE={EXE}"))
            .arg(format!("-DOFFLOAD_HIP_COMPILER={CLANG}"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        let o = cmake()
            .env_remove("OFFLOAD_BUILD_LAUNCHER")
            .env_remove("OFFLOAD_BUILD_CACHE_DIR")
            .arg("--build")
            .arg(&build)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        let read =
            |name: &str| std::fs::read(build.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        outputs.push((read("libk.a"), read("k_fb.hipfb")));
    }
    assert!(
        outputs[0].0 == outputs[1].0,
        "libk.a differs between checkouts"
    );
    assert!(
        outputs[0].1 == outputs[1].1,
        "k_fb.hipfb differs between checkouts"
    );
}
