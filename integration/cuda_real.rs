//! Real CUDA on code nobody in the project wrote (issue 24's acceptance): the four NVIDIA
//! cuda-samples programs and candle's nine kernel files vendored verbatim in
//! `integration/third-party/` (see `support::cuda_ref`), built for `sm_80;sm_90` three ways
//! with the nvcc of NVIDIA's CUDA 13 wheels: `offload-build compile`, a `build.rs` through
//! `offload_build::Build`, and CMake's `offload_add_fatbin`. For each, `cuobjdump` lists a
//! cubin and a PTX per architecture for every source, and the kernel names per architecture
//! equal those of `nvcc -fatbin` of the same sources with the same `-gencode`s. Then the same
//! through clang 22 with the wheels' headers, for `sm_90`, for every program clang accepts (the README of
//! `integration/third-party/` lists those it does not, and why).
//!
//! The three ways share one cache directory and one root directory (where compiles run), as
//! the builds of one project on one machine do: the first compiles (one parallel job per
//! source and architecture), the other two find every job in the cache (checked: no new PTX
//! or cubin in it) and still pack, embed and write their own outputs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::cuda_ref::{self, Image, ImageKind, Program};
use crate::support::{BUILD_ENV_VARS, nvidia, repo_root, require};

const EXE: &str = env!("CARGO_BIN_EXE_offload-build");
const ARCHS: [&str; 2] = ["sm_80", "sm_90"];

/// One group of programs built by one command: the same include directories and flags.
struct Group {
    name: &'static str,
    programs: Vec<Program>,
}

impl Group {
    fn includes(&self) -> Vec<PathBuf> {
        self.programs[0].includes.clone()
    }
    fn flags(&self) -> Vec<String> {
        self.programs[0]
            .flags
            .iter()
            .map(|f| f.to_string())
            .collect()
    }
    fn sources(&self) -> Vec<PathBuf> {
        self.programs.iter().map(|p| p.source.clone()).collect()
    }
}

fn groups() -> Vec<Group> {
    vec![
        Group {
            name: "samples",
            programs: cuda_ref::cuda_samples(),
        },
        Group {
            name: "candle",
            programs: cuda_ref::candle_kernels(),
        },
    ]
}

/// The kernel names per image architecture (`sm_80` cubins, `compute_80` PTX) of `nvcc
/// -fatbin` of every program of `programs`, merged.
fn reference(programs: &[&Program]) -> BTreeMap<String, BTreeSet<String>> {
    let mut names: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for p in programs {
        let fatbin = cuda_ref::reference_fatbin(p, &ARCHS);
        for (arch, n) in cuda_ref::kernel_names(&fatbin) {
            names.entry(arch).or_default().extend(n);
        }
    }
    names
}

/// What a fat binary of `sources` must hold: a cubin and a PTX per architecture per source.
fn check_images(file: &Path, (sources, archs): (usize, &[&str]), what: &str) {
    let mut want: Vec<Image> = Vec::new();
    for _ in 0..sources {
        for &a in archs {
            want.push(Image::of(ImageKind::Elf, a));
            want.push(Image::of(ImageKind::Ptx, a));
        }
    }
    want.sort();
    let mut got = cuda_ref::images(file);
    got.sort();
    assert_eq!(
        got,
        want,
        "{what}: cuobjdump's images of {}",
        file.display()
    );
}

fn check_names(file: &Path, reference: &BTreeMap<String, BTreeSet<String>>, what: &str) {
    let got = cuda_ref::kernel_names(file);
    assert_eq!(
        &got, reference,
        "{what}: kernel names per architecture differ from nvcc -fatbin's"
    );
}

/// `cmd` with the outer environment's build variables removed and the wheels' virtualenv in
/// `VIRTUAL_ENV` (where nvcc is found), sharing `cache`.
fn scrubbed(mut cmd: Command, cache: &Path) -> Command {
    for &var in BUILD_ENV_VARS.iter().chain(&[
        "CLANG",
        "CUDACXX",
        "CUDA_PATH",
        "CUDA_HOME",
        "CUDAFLAGS",
        "RUSTFLAGS",
        "CARGO_MAKEFLAGS",
        "MAKEFLAGS",
    ]) {
        cmd.env_remove(var);
    }
    cmd.env("VIRTUAL_ENV", nvidia::venv())
        .env("OFFLOAD_BUILD_CACHE_DIR", cache);
    cmd
}

fn run(cmd: &mut Command, what: &str) {
    let o = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        o.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `offload-build compile` of the group for `archs` into `out` (an NVIDIA fat binary), run in
/// `root`.
fn compile_cli(
    g: &Group,
    cache: &Path,
    (out, archs): (&Path, &[&str]),
    compiler: &[&str],
    root: &Path,
) {
    let mut c = scrubbed(Command::new(EXE), cache);
    c.current_dir(root)
        .arg("compile")
        .args(["--archs", &archs.join(";")])
        .args(["--container", "cuda-fatbin", "--embed", "fatbin", "-q"])
        .args(compiler);
    for i in g.includes() {
        c.arg("-I").arg(i);
    }
    for f in g.flags() {
        c.arg(format!("--flag={f}"));
    }
    c.args(g.sources()).arg("-o").arg(out);
    run(&mut c, &format!("offload-build compile of {}", g.name));
}

/// A crate outside the repository whose `build.rs` builds the group with `Build` and copies
/// the fat binary to `out`.
fn compile_build_rs(g: &Group, cache: &Path, dir: &Path, out: &Path) {
    let root = repo_root();
    let manifest = format!(
        "[package]\nname = \"cuda-real-{}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
         publish = false\n\n[workspace]\n\n[build-dependencies]\n\
         offload-build = {{ path = {:?} }}\n",
        g.name,
        root.join("crates/offload-build").display().to_string()
    );
    let mut build_rs = String::from(
        "fn main() {\n    let c = offload_build::Build::new()\n        .archs(\"sm_80;sm_90\")\n",
    );
    for s in g.sources() {
        build_rs += &format!("        .file({:?})\n", s.display().to_string());
    }
    for i in g.includes() {
        build_rs += &format!("        .include({:?})\n", i.display().to_string());
    }
    for f in g.flags() {
        build_rs += &format!("        .flag({f:?})\n");
    }
    build_rs += &format!(
        "        .container(offload_build::Container::CudaFatbin)\n        \
         .embed(offload_build::Embed::ContainerOnly)\n        .compile(\"kernels\");\n    \
         std::fs::copy(&c.container_file, {:?}).unwrap();\n}}\n",
        out.display().to_string()
    );
    let files = [
        ("Cargo.toml", manifest.as_str()),
        ("build.rs", build_rs.as_str()),
        ("src/main.rs", "fn main() {}\n"),
    ];
    for (name, text) in files {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut c = scrubbed(Command::new(cargo), cache);
    // The target directory of the other outside crates: offload-build is built once.
    c.current_dir(dir)
        .args(["build", "--offline", "--quiet"])
        .env(
            "CARGO_TARGET_DIR",
            crate::support::outside_crate_target_dir(),
        )
        .env("CARGO_BUILD_JOBS", "1")
        .env("PKG_CONFIG", "/nonexistent/pkg-config");
    run(&mut c, &format!("cargo build of the {} crate", g.name));
}

/// CMake's `offload_add_fatbin` of the group (`CONTAINER CUDA_FATBIN EMBED FATBIN`), the
/// project in `dir` (its compiles run there) built into `dir/b`; returns the fat binary.
fn compile_cmake(g: &Group, cache: &Path, dir: &Path) -> PathBuf {
    require("/usr/bin/cmake");
    require("/usr/bin/ninja");
    let list = |v: Vec<String>| {
        v.iter()
            .map(|s| format!("{s:?}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut lists = format!(
        "cmake_minimum_required(VERSION 3.20)\nproject(p LANGUAGES NONE)\ninclude({:?})\n\
         offload_add_fatbin({} LANGUAGE CUDA CUDA_COMPILER nvcc\n  SOURCES {}\n  \
         ARCHITECTURES sm_80 sm_90 CONTAINER CUDA_FATBIN EMBED FATBIN QUIET",
        repo_root()
            .join("build-support/cmake/OffloadBuild.cmake")
            .display()
            .to_string(),
        g.name,
        list(
            g.sources()
                .iter()
                .map(|s| s.display().to_string())
                .collect()
        ),
    );
    if !g.includes().is_empty() {
        lists += &format!(
            "\n  INCLUDE_DIRECTORIES {}",
            list(
                g.includes()
                    .iter()
                    .map(|s| s.display().to_string())
                    .collect()
            )
        );
    }
    if !g.flags().is_empty() {
        lists += &format!("\n  COMPILE_OPTIONS {}", list(g.flags()));
    }
    lists += ")\n";
    std::fs::write(dir.join("CMakeLists.txt"), lists).unwrap();
    let mut configure = scrubbed(Command::new("cmake"), cache);
    configure
        .arg("-S")
        .arg(dir)
        .arg("-B")
        .arg(dir.join("b"))
        .args(["-G", "Ninja"])
        .arg(format!("-DOFFLOAD_BUILD_EXECUTABLE={EXE}"));
    run(&mut configure, "cmake configure");
    let mut build = scrubbed(Command::new("cmake"), cache);
    build
        .arg("--build")
        .arg(dir.join("b"))
        .args(["--target", &format!("{}_offload_build", g.name)]);
    run(&mut build, "cmake --build");
    dir.join("b").join(format!("{}.fatbin", g.name))
}

#[test]
fn third_party_cuda_builds_three_ways_with_nvcc_as_nvcc_fatbin_does() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    for g in groups() {
        let dir = tmp.path().join(g.name);
        std::fs::create_dir_all(&dir).unwrap();
        let reference = reference(&g.programs.iter().collect::<Vec<_>>());
        assert!(
            reference
                .keys()
                .eq(["compute_80", "compute_90", "sm_80", "sm_90"].iter()),
            "{reference:?}"
        );

        // One root for the three (the CLI's working directory, the crate's manifest directory,
        // CMake's source directory): the job keys cover the directory compiles run in.
        let root = dir.join("crate");
        std::fs::create_dir_all(&root).unwrap();
        let cli = dir.join("cli.fatbin");
        let before = compiled_in(&cache).len();
        compile_cli(
            &g,
            &cache,
            (&cli, &ARCHS),
            &["--cuda-compiler", "nvcc"],
            &root,
        );
        let compiled = compiled_in(&cache);
        assert_eq!(
            compiled.len() - before,
            2 * ARCHS.len() * g.programs.len(),
            "{}: a PTX and a cubin per source and architecture: {compiled:?}",
            g.name
        );
        let from_build_rs = dir.join("build-rs.fatbin");
        compile_build_rs(&g, &cache, &root, &from_build_rs);
        let from_cmake = compile_cmake(&g, &cache, &root);
        assert_eq!(
            compiled_in(&cache),
            compiled,
            "{}: build.rs and CMake compiled again what the CLI had compiled",
            g.name
        );
        for (what, file) in [
            ("offload-build compile", &cli),
            ("build.rs", &from_build_rs),
            ("offload_add_fatbin", &from_cmake),
        ] {
            let what = format!("{} through {what}", g.name);
            check_images(file, (g.programs.len(), &ARCHS), &what);
            check_names(file, &reference, &what);
        }
    }
}

/// The compiled images kept in the cache directory `cache` (`.ptx` and `.cubin`, of every
/// group built so far), sorted.
fn compiled_in(cache: &Path) -> Vec<String> {
    crate::support::file_names(cache, &[".ptx", ".cubin"])
}

/// The programs clang 22 does not compile, and why (integration/third-party/README.md).
const CLANG_REFUSES: &[(&str, &str)] = &[(
    "candle-indexing",
    "uses assert without <assert.h>, which nvcc's headers include for every source",
)];

/// The architecture clang 22 builds for (one: the nvcc test above covers both, and every
/// compile of this one takes the suite's time; its kernel names are compared with nvcc's for
/// that architecture).
const CLANG_ARCH: &str = "sm_90";

/// nvcc's flags that clang does not know (candle's `--expt-relaxed-constexpr`: clang's CUDA
/// allows constexpr host functions on the device by default).
const NVCC_ONLY_FLAGS: &[&str] = &["--expt-relaxed-constexpr"];

#[test]
fn third_party_cuda_builds_with_clang_22_and_the_wheels_headers() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    for g in groups() {
        let accepted: Vec<Program> = g
            .programs
            .iter()
            .filter(|p| !CLANG_REFUSES.iter().any(|(n, _)| *n == p.name))
            .map(|p| Program {
                flags: &[],
                ..p.clone()
            })
            .collect();
        let flags: Vec<String> = g
            .flags()
            .into_iter()
            .filter(|f| !NVCC_ONLY_FLAGS.contains(&f.as_str()))
            .collect();
        let group = Group {
            name: g.name,
            programs: accepted,
        };
        let mut reference = reference(
            &g.programs
                .iter()
                .filter(|p| group.programs.iter().any(|a| a.name == p.name))
                .collect::<Vec<_>>(),
        );
        reference.retain(|arch, _| arch.ends_with(CLANG_ARCH.trim_start_matches("sm_")));
        let out = tmp.path().join(format!("{}-clang.fatbin", g.name));
        let mut args: Vec<String> = vec![
            "--cuda-compiler".into(),
            "clang".into(),
            "--compiler".into(),
            "/usr/lib/llvm-22/bin/clang".into(),
        ];
        args.extend(flags.iter().map(|f| format!("--flag={f}")));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        compile_cli(&group, &cache, (&out, &[CLANG_ARCH]), &args, tmp.path());
        let what = format!("{} through clang 22", g.name);
        check_images(&out, (group.programs.len(), &[CLANG_ARCH]), &what);
        check_names(&out, &reference, &what);
    }
}
