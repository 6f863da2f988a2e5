//! What a `build.rs` user compiles: the dependency tree of the `offload-build` crate (issue 17:
//! no CLI stack, and no compression library unless its `compression` feature asks for one)
//! and that zstd (issue 14: the bundled copy, so that no `libzstd-dev` or `pkg-config` is
//! needed), read from `cargo tree` over the workspace's lock file.

use std::process::Command;

use crate::support::repo_root;

/// `cargo tree -p <package> <args>` over the workspace, offline.
fn cargo_tree(package: &str, args: &[&str]) -> String {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(repo_root())
        .args(["tree", "--offline", "--locked", "-p", package])
        .args(args)
        .output()
        .expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 cargo tree output")
}

#[test]
fn the_build_crate_compiles_no_cli_stack() {
    let tree = cargo_tree("offload-build", &["-e", "normal", "--prefix", "none"]);
    let names: Vec<&str> = tree.lines().filter_map(|l| l.split(' ').next()).collect();
    for banned in [
        "clap",
        "clap_derive",
        "serde",
        "serde_derive",
        "serde_json",
        "syn",
        "memmap2",
    ] {
        assert!(
            !names.contains(&banned),
            "offload-build depends on {banned}:\n{tree}"
        );
    }
    // The CLI does pull them in: the check above can see them.
    let cli = cargo_tree("offload-cli", &["-e", "normal", "--prefix", "none"]);
    assert!(cli.lines().any(|l| l.starts_with("clap ")), "{cli}");
}

#[test]
fn the_build_crate_builds_the_bundled_zstd() {
    // By default the build crate compiles no compression library at all...
    let tree = cargo_tree("offload-build", &["-e", "normal", "--prefix", "none"]);
    for lib in ["zstd-sys", "libz-sys", "flate2"] {
        assert!(
            !tree.lines().any(|l| l.starts_with(&format!("{lib} "))),
            "offload-build depends on {lib} by default:\n{tree}"
        );
    }
    // ...and with `compression` the bundled zstd, which needs no pkg-config or libzstd-dev.
    let build = cargo_tree(
        "offload-build",
        &[
            "--features",
            "compression",
            "-e",
            "features",
            "-i",
            "zstd-sys",
            "--prefix",
            "none",
        ],
    );
    assert!(build.contains("zstd-sys feature \"std\""), "{build}");
    assert!(
        !build.contains("zstd-sys feature \"pkg-config\""),
        "offload-build would need pkg-config and libzstd-dev:\n{build}"
    );
    // The drop-in tools link the system libzstd LLVM links, for LLVM's compressed bytes.
    let cli = cargo_tree(
        "offload-cli",
        &["-e", "features", "-i", "zstd-sys", "--prefix", "none"],
    );
    assert!(cli.contains("zstd-sys feature \"pkg-config\""), "{cli}");
}
