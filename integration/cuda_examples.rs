//! The CUDA examples built with Cargo as a user builds them (`cargo build --offline -p
//! <example>`, `RUSTFLAGS=-D warnings`), with nvcc from NVIDIA's CUDA 13 wheels (found
//! through `VIRTUAL_ENV`) and with clang 22 (`CUDACXX`), and run: `examples/cuda-kernels`
//! (fp16/bf16 arithmetic, shared memory, a cub block reduction, a template kernel) checks
//! its kernel names and image kinds itself and prints them; `cuobjdump` lists the same
//! images. `examples/cuda-saxpy` is built the same way by
//! `nvfatbin::cuda_saxpy_example_builds_runs_and_is_inspected`, through [`build_example`].
//!
//! Without a GPU the examples skip their launches (`no launch: ...`); with one they launch
//! every kernel and check the results.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Command;

use crate::support::nvidia;

/// The variables that choose or find a CUDA compiler or toolkit: removed from every example
/// build, which then sets only those it tests.
/// clang 22, as `CUDACXX` names it.
pub const CLANG22: &str = "/usr/lib/llvm-22/bin/clang";

/// Builds the workspace package `package` with Cargo (`--offline`, `RUSTFLAGS=-D warnings`,
/// [`crate::support::deny_warnings_target_dir`]) with `envs` set and the CUDA and
/// build variables of the test's environment removed; runs the executable and returns its
/// path and stdout. Fails with Cargo's or the program's output.
pub fn build_example(package: &str, envs: &[(&str, &OsStr)]) -> (PathBuf, String) {
    let target = crate::support::deny_warnings_target_dir();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(crate::support::repo_root())
        .args(["build", "--offline", "-p", package])
        .env("CARGO_TARGET_DIR", &target)
        .env("RUSTFLAGS", "-D warnings")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS");
    for var in crate::support::BUILD_ENV_VARS
        .iter()
        .chain(crate::support::CUDA_ENV_VARS)
    {
        build.env_remove(var);
    }
    build.envs(envs.iter().copied());
    let what = format!("cargo build -p {package} with {envs:?}");
    crate::support::nvidia::check(&mut build, &what);
    let exe = target.join("debug").join(package);
    let run = Command::new(&exe)
        .output()
        .unwrap_or_else(|e| panic!("{}: cannot run: {e}", exe.display()));
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(
        run.status.success(),
        "{package} (built by {what}) failed: {}\n{stdout}\n{}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );
    (exe, stdout)
}

/// The environment of a build with the wheels' nvcc: `VIRTUAL_ENV` names the virtualenv.
pub fn nvcc_env() -> Vec<(&'static str, std::ffi::OsString)> {
    // Fails with the setup hint when the wheels are missing.
    nvidia::nvcc();
    vec![("VIRTUAL_ENV", nvidia::venv().into_os_string())]
}

/// The kernels `examples/cuda-kernels` holds, as its `main.rs` prints them (source name and
/// signature).
const KERNELS: [&str; 7] = [
    "kernel transpose<double> (void transpose<double>(double*, double const*, int, int))",
    "kernel transpose<float> (void transpose<float>(float*, float const*, int, int))",
    "kernel axpy_bf16 (axpy_bf16)",
    "kernel axpy_half (axpy_half)",
    "kernel block_sum_shared (block_sum_shared)",
    "kernel cub_sum (cub_sum)",
    "kernel square_add_half2 (square_add_half2)",
];

/// What `cuobjdump --list-elf --list-ptx` lists in `examples/cuda-kernels`: per architecture
/// a cubin and a PTX image of each of the three sources.
fn kernels_listing() -> Vec<String> {
    let mut want = Vec::new();
    for (n, arch) in ["sm_80", "sm_90"].iter().enumerate() {
        for kind in ["ELF", "PTX"] {
            for (i, stem) in ["kernels", "kernels_1", "kernels_2"].iter().enumerate() {
                let ext = if kind == "ELF" { "cubin" } else { "ptx" };
                want.push(format!(
                    "{kind} file    {}: {stem}.{arch}.{ext}",
                    3 * n + i + 1
                ));
            }
        }
    }
    want
}

/// One build of `examples/cuda-kernels`: its own checks passed (every kernel by source name
/// in one cubin and one PTX image of each of sm_80 and sm_90), it printed its kernels, the
/// compiler that built it, and no launch or correct launches; cuobjdump lists the images.
fn check_kernels_build(envs: &[(&str, &OsStr)], compiler: &str) {
    let (exe, stdout) = build_example("cuda-kernels", envs);
    let first = stdout.lines().next().unwrap_or_default();
    assert!(
        first.contains("(cuda-fatbin), built by ") && first.contains(compiler),
        "{compiler}: {stdout}"
    );
    assert!(
        stdout.contains(
            "checked: 7 kernels, each in one cubin and one PTX image of sm_80 and sm_90\n"
        ),
        "{stdout}"
    );
    for k in KERNELS {
        assert!(stdout.contains(&format!("  {k}\n")), "{k}: {stdout}");
    }
    assert!(
        stdout.contains("no launch: ")
            || stdout.contains("all 7 kernels ran on sm_")
                && stdout.contains("cub_sum: 1 values correct"),
        "{stdout}"
    );
    assert_eq!(
        crate::support::nvidia::cuobjdump_list(&exe),
        kernels_listing()
    );
}

/// `examples/cuda-kernels` built with the wheels' nvcc, then with clang 22 using the wheels'
/// toolkit (`CUDACXX` and `VIRTUAL_ENV`), and run each time.
#[test]
fn cuda_kernels_example_builds_with_nvcc_and_clang_and_runs() {
    let nvcc = nvcc_env();
    let envs: Vec<(&str, &OsStr)> = nvcc.iter().map(|(k, v)| (*k, v.as_os_str())).collect();
    check_kernels_build(&envs, "Cuda compilation tools, release 13");
    // clang 22 with the same wheels as its CUDA toolkit (headers, cub, libdevice, ptxas).
    let mut envs = envs;
    envs.push(("CUDACXX", OsStr::new(CLANG22)));
    check_kernels_build(&envs, "clang version 22");
}
