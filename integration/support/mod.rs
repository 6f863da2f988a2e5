//! Shared machinery of the integration tests: where the tools are, the fixtures they read, a
//! runner that executes one argument list per tool in a fresh directory, and the comparison that
//! explains a mismatch byte by byte.
//!
//! Environment knobs (all optional):
//! - `OFFLOAD_CASE=<substring>`: run only the cases whose name contains it.
//! - `OFFLOAD_HARNESS_VERBOSE=1`: print every step of every case with what each tool did.
//! - `OFFLOAD_HARNESS_KEEP=1`: keep the per-tool run directories (their paths are printed).
//! - `OFFLOAD_BUNDLER_UNDER_TEST=<path>`: test this binary as "ours" instead of the crate's
//!   `offload-bundler` (e.g. a release build; or LLVM 22 itself, to check the harness: then only
//!   the declared differences of ours fail).

pub mod args;
pub mod case;
pub(crate) mod cuda_ref;
pub mod diff;
pub mod fixtures;
pub mod nvidia;
pub mod run;

use std::path::{Path, PathBuf};

pub use case::{Case, Check, Reference, check_ours, check_references};
pub use fixtures::{CODE_OBJECT_ARCHS, Role, TEXT_TYPES, fixtures};
pub use run::{Status, Tool};

/// The names of the files in `dir` ending in one of `ends`, sorted (none when `dir` is missing).
pub fn file_names(dir: &Path, ends: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| ends.iter().any(|e| n.ends_with(e)))
        .collect();
    names.sort();
    names
}

/// The Cargo target directory the tests' crates outside the workspace share (`RUSTFLAGS`
/// unset): offload-build and its dependencies are compiled once for them.
pub fn outside_crate_target_dir() -> PathBuf {
    repo_root().join("target/rocm-outside-crate")
}

/// The Cargo target directory of the test builds that run with `RUSTFLAGS=-D warnings` (the
/// CUDA examples, the host-object crates): shared, so that offload-build and its dependencies
/// are compiled once for them (a different `RUSTFLAGS` would rebuild everything in another's).
pub fn deny_warnings_target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("deny-warnings-target")
}

/// The `TMPDIR` of the reference compilers this test process runs: hipcc and clang 15 leave
/// an empty directory there for every device compile, which would pile up in `/tmp`. Under
/// `$CARGO_TARGET_TMPDIR`; a later test process removes it ([`fixtures::process_dir`]).
pub fn compilers_tmpdir() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| fixtures::process_dir("compilers-tmp-"))
}

/// The repository root (the workspace; this suite belongs to `crates/offload-cli`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

/// Every file under `dir` (its folders walked, not listed), sorted; none when `dir` is missing.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(e.path());
            } else {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// A copy of the directory `from` (its files and folders) at `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// The name every tool is started under (`argv[0]`), so that the `<argv0>: error: …` prefixes of
/// all three tools are the same bytes.
pub const ARGV0: &str = "clang-offload-bundler";

/// What to tell someone whose machine lacks a reference tool: a missing tool fails the test.
pub const SETUP_HINT: &str = "run `build-support/setup.sh` as root to install the LLVM 19 and 22 reference tools \
     (clang-offload-bundler 19 and 22, clang 19 with the AMDGPU backend and lld)";

/// LLVM 19's clang, used to compile the AMDGPU code objects of the fixtures.
pub const CLANG19: &str = "/usr/lib/llvm-19/bin/clang";

/// What the host stub of a HIP kernel calls, declared for a source without HIP headers
/// (clang `-nogpulib -nogpuinc`).
pub const HIP_LAUNCH_DECL: &str = "struct dim3 { unsigned x, y, z; };\n\
    extern \"C\" int hipLaunchKernel(const void*, dim3, dim3, void**, unsigned long, void*);\n";

/// Path of an installed reference tool, or a test failure that says how to install it.
pub fn require(path: &str) -> PathBuf {
    let p = Path::new(path);
    assert!(
        p.is_file(),
        "reference tool {path} is missing: {SETUP_HINT}"
    );
    p.to_path_buf()
}

/// True when the environment variable is set to something other than "" or "0".
pub fn env_flag(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Variables of the outer environment that choose the CUDA compiler, toolkit, `ptxas`, flags
/// or a launcher: CUDA tests remove them so that only what a test sets counts.
pub const CUDA_ENV_VARS: &[&str] = &[
    "CUDACXX",
    "CUDA_PATH",
    "CUDA_HOME",
    "CUDA_ROOT",
    "VIRTUAL_ENV",
    "PTXAS",
    "CUDAFLAGS",
    "NVCC_CCBIN",
    "CUDAHOSTCXX",
    "OFFLOAD_BUILD_LAUNCHER",
];

/// Variables of the outer environment that choose architectures, compilers or caches for
/// `offload_build::Build` (and so for the CMake package): tests of the build layer remove
/// them so that only what a test sets counts.
pub const BUILD_ENV_VARS: &[&str] = &[
    "OFFLOAD_ARCH",
    "AMDGPU_TARGETS",
    "GPU_TARGETS",
    "PYTORCH_ROCM_ARCH",
    "HIP_ARCHITECTURES",
    "HIPCXX",
    "HIP_CLANG_PATH",
    "ROCM_PATH",
    "HIP_PATH",
    "HIPFLAGS",
    "OFFLOAD_BUILD_CACHE_DIR",
    "OFFLOAD_BUILD_PCH",
    "OFFLOAD_BUILD_DIRECT",
    "OFFLOAD_BUILD_FARM_JOBS",
];

thread_local! {
    /// Whether the builds of this thread's test run with `CI=1` ([`in_both_configs`]).
    static UNDER_CI: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` in the two configurations the cache and PCH tests cover: what a user gets (`CI`
/// unset: precompiled preambles are made in the background after a cold build), then `CI=1`
/// (none in the background). The builds `f` starts take the configuration from [`ci_value`]:
/// CI itself runs the suite with `CI=true`, so they must set or remove `CI` themselves.
pub fn in_both_configs(f: impl Fn()) {
    for ci in [false, true] {
        UNDER_CI.set(ci);
        f();
    }
    UNDER_CI.set(false);
}

/// Runs `f` in the default configuration only (`CI` unset), for a test whose builds do the
/// same under `CI=1` ([`in_both_configs`] runs both).
pub fn in_default_config(f: impl Fn()) {
    UNDER_CI.set(false);
    f();
}

/// The value of `CI` a build of this test gets: `None` (removed: the default configuration)
/// unless [`in_both_configs`] runs its `CI=1` round.
pub fn ci_value() -> Option<&'static str> {
    UNDER_CI.get().then_some("1")
}

/// Sets `CI` on a command as [`ci_value`] says.
pub fn set_ci(c: &mut std::process::Command) {
    match ci_value() {
        Some(v) => c.env("CI", v),
        None => c.env_remove("CI"),
    };
}

/// Sets `CI` on a build as [`ci_value`] says ([`set_ci`] for a `Build`).
pub fn set_build_ci(b: &mut offload_build::Build) {
    match ci_value() {
        Some(v) => b.env("CI", v),
        None => b.env_remove("CI"),
    };
}
