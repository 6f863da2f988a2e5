//! The README's quick starts, copied verbatim: its `Cargo.toml` lines, `build.rs` and
//! `src/main.rs` into a fresh crate, and its `CMakeLists.txt` into a fresh CMake project, each
//! with `examples/cmake-hip`'s kernels, built with the setup the README documents (Debian 12's
//! ROCm 5.2 and its clang 15, which `build-support/setup.sh` installs; no GPU needed).
//!
//! The blocks are the fenced code blocks that follow a `<!-- readme-test: NAME -->` line in
//! README.md, so an edit of the README is what these tests build. The checkout stands beside
//! the crate as `offload-build` (the README's path dependency) and in the CMake project as
//! `third_party/offload-build` (the `find_package` `PATHS`), through symbolic links. Time on
//! the 2-core machine at a load of 13 (2026-11-25): the crate 130 s the first time (the path
//! crates and six device compiles), 0.3 s after; the CMake project about 130 s.

use std::path::Path;
use std::process::Command;

use crate::cmake::{cmake, flat, text};

const EXE: &str = env!("CARGO_BIN_EXE_offload-build");

/// The contents of the fenced code block after the `<!-- readme-test: {name} -->` line.
fn block(name: &str) -> String {
    let readme = std::fs::read_to_string(crate::support::repo_root().join("README.md")).unwrap();
    let marker = format!("<!-- readme-test: {name} -->\n");
    let at = readme
        .find(&marker)
        .unwrap_or_else(|| panic!("README.md has no `{}` line", marker.trim()))
        + marker.len();
    let rest = &readme[at..];
    let open = rest.find('\n').filter(|_| rest.starts_with("```"));
    let open = open.unwrap_or_else(|| panic!("no code block right after {}", marker.trim()));
    let body = &rest[open + 1..];
    let close = body
        .find("\n```\n")
        .unwrap_or_else(|| panic!("the block after {} is not closed", marker.trim()));
    body[..close + 1].to_string()
}

/// Fails naming the packages when Debian's ROCm 5.2 is not installed.
fn require_rocm() {
    for f in [
        "/usr/bin/clang-15",
        "/usr/bin/hipconfig",
        "/usr/include/hip/hip_runtime.h",
        "/usr/lib/x86_64-linux-gnu/libamdhip64.so",
        "/usr/lib/x86_64-linux-gnu/cmake/hip/hip-config.cmake",
    ] {
        assert!(
            Path::new(f).exists(),
            "{f} is missing: run build-support/setup.sh as root (Debian's ROCm 5.2: \
             hipcc libamdhip64-dev rocm-device-libs clang-15)"
        );
    }
}

/// `dir/kernels`: the CMake example's two kernel files and their headers (files that are
/// there already with the same text are left alone).
fn copy_kernels(dir: &Path) {
    let example = crate::support::repo_root().join("examples/cmake-hip/kernels");
    for f in [
        "vector_add.hip",
        "scale.hip",
        "include/device.h",
        "include/scale.h",
        "include/vector_add.h",
    ] {
        let text = std::fs::read_to_string(example.join(f)).unwrap();
        write_if_changed(&dir.join("kernels").join(f), &text);
    }
}

fn link_checkout(link: &Path) {
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(crate::support::repo_root(), link).unwrap();
}

/// Writes `path` unless it holds `text` already (an unchanged file keeps its time, so cargo
/// does not rebuild what it did not change).
fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// The README's `Cargo.toml` lines, `build.rs` and `src/main.rs` in a new crate beside the
/// checkout: `cargo run` builds the kernels for the README's three archs and prints them.
/// The crate and the link to the checkout stay in `target/readme-quick-start/` and the
/// target directory is the one `rocm::outside_crate_builds_real_hip_for_three_archs` uses
/// (same lock file and environment), so a rerun compiles only what changed.
#[test]
fn quick_start_crate_builds_with_debian_rocm() {
    require_rocm();
    let root = crate::support::repo_root();
    let base = root.join("target/readme-quick-start");
    let link = base.join("offload-build");
    if std::fs::symlink_metadata(&link).is_err() {
        link_checkout(&link);
    }
    let dir = base.join("app");
    let manifest = format!(
        "[package]\nname = \"readme-quick-start\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
         publish = false\n\n[workspace]\n\n{}",
        block("Cargo.toml")
    );
    write_if_changed(&dir.join("Cargo.toml"), &manifest);
    write_if_changed(&dir.join("build.rs"), &block("build.rs"));
    write_if_changed(&dir.join("src/main.rs"), &block("main.rs"));
    copy_kernels(&dir);
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap();
    write_if_changed(&dir.join("Cargo.lock"), &lock);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut c = Command::new(cargo);
    c.current_dir(&dir)
        .args(["run", "--offline", "--quiet"])
        .env(
            "CARGO_TARGET_DIR",
            crate::support::outside_crate_target_dir(),
        )
        .env("CARGO_BUILD_JOBS", "1")
        .env("PKG_CONFIG", "/nonexistent/pkg-config");
    let own = ["CLANG", "RUSTFLAGS", "CARGO_MAKEFLAGS", "MAKEFLAGS"];
    for &var in crate::support::BUILD_ENV_VARS.iter().chain(&own) {
        c.env_remove(var);
    }
    let o = c.output().unwrap();
    let t = text(&o);
    assert!(o.status.success(), "the README's quick start failed: {t}");
    assert!(
        t.contains("archs: gfx1030 gfx906 gfx90a\nkernels: scale vector_add\n"),
        "{t}"
    );
}

/// The README's `CMakeLists.txt` with the CMake example's kernels and `main.cpp`: it
/// configures (no "Could NOT find"), builds with Ninja, links `hip::host` and runs, and the
/// program embeds the README's three archs.
#[test]
fn cmake_snippet_builds_links_and_runs_with_debian_rocm() {
    require_rocm();
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    link_checkout(&proj.join("third_party/offload-build"));
    std::fs::write(proj.join("CMakeLists.txt"), block("CMakeLists.txt")).unwrap();
    copy_kernels(&proj);
    std::fs::create_dir_all(proj.join("src")).unwrap();
    let example = crate::support::repo_root().join("examples/cmake-hip");
    std::fs::copy(example.join("src/main.cpp"), proj.join("src/main.cpp")).unwrap();
    let build = tmp.path().join("build");
    let mut configure = cmake();
    configure
        .arg("-S")
        .arg(&proj)
        .arg("-B")
        .arg(&build)
        .args(["-G", "Ninja"])
        .arg(format!("-DOFFLOAD_BUILD_EXECUTABLE={EXE}"))
        .env_remove("CLANG");
    let o = configure.output().expect("cmake");
    let t = flat(&text(&o));
    assert!(o.status.success(), "{t}");
    assert!(!t.contains("Could NOT find"), "{t}");
    assert!(
        t.contains("offload_add_fatbin(kernels): gfx90a;gfx1030;gfx906 with /usr/bin/clang-15"),
        "{t}"
    );
    let o = cmake().arg("--build").arg(&build).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let o = Command::new(build.join("app")).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "kernel handles: distinct\n"
    );
    let o = Command::new(EXE)
        .args(["inspect", "--archs"])
        .arg(build.join("app"))
        .output()
        .unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains(": gfx1030 gfx906 gfx90a\n"), "{t}");
}
