//! `offload-build inspect`, `inspect --archs` and `check` on libraries others ship: Debian's
//! rocRAND 5.3.3 (`librocrand.so.1.1`, one bundle of 8 entries stored with the 3-field host ID
//! of older clang) and rocSPARSE 5.3.0 (`librocsparse.so.0.1`, 1.3 GB, 111 bundles
//! concatenated in `.hip_fatbin`), installed by `build-support/setup.sh`. Every container is
//! compared with what clang-offload-bundler 22 `-list`s for the same bytes: rocRAND's
//! `.hip_fatbin` as `llvm-objcopy-22 --dump-section` writes it, and each rocSPARSE bundle as
//! its header over a sparse file of the bundle's size (`-list` reads only the header; the
//! 1.2 GB of payload would make the test slow). `--archs` must print the union of the target
//! IDs LLVM lists, and `check` must answer what LLVM's lists imply for a GPU every bundle
//! has code for, one none has, and an xnack setting none was built for.

use std::collections::BTreeSet;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::fixtures::process_dir;
use crate::support::require;
use crate::support::run::offload_build;

const BUNDLER22: &str = "/usr/lib/llvm-22/bin/clang-offload-bundler";
const OBJCOPY22: &str = "/usr/lib/llvm-22/bin/llvm-objcopy";
const ROCRAND: &str = "/usr/lib/x86_64-linux-gnu/librocrand.so.1.1";
const ROCSPARSE: &str = "/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1";
const HINT: &str = "install Debian's librocrand1 and librocsparse0 with build-support/setup.sh";

fn ours(args: &[&str]) -> (i32, String, String) {
    offload_build(Path::new("."), args, &[])
}

fn llvm_list(bundle: &Path) -> BTreeSet<String> {
    let out = Command::new(require(BUNDLER22))
        .args(["-type=o", "-list"])
        .arg(format!("-input={}", bundle.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// SHA-256 of the libraries of Debian 12's librocrand1 5.3.3-4 and librocsparse0
/// 5.3.0+dfsg-2: the files these tests were checked against.
fn pinned_sha256(lib: &str) -> &'static str {
    match lib {
        ROCRAND => "e7a80b47fbc76e22e1052c2c0d6c87f0a4f311e45c1e8649f36120bf5e10fe27",
        ROCSPARSE => "5d8aa37681179fb8234b52fe1afc8f7e16757b72bfa2409032f5de87e7e5bc4a",
        _ => unreachable!("{lib} is not pinned"),
    }
}

fn report(lib: &str, size: u64) -> Value {
    assert!(Path::new(lib).is_file(), "{lib} is missing: {HINT}");
    // The packages' versions are pinned by the file sizes and hashes (rocRAND 5.3.3-4,
    // rocSPARSE 5.3.0+dfsg-2 of Debian 12).
    assert_eq!(
        std::fs::metadata(lib).unwrap().len(),
        size,
        "{lib}: another version"
    );
    let sum = Command::new("sha256sum")
        .arg(lib)
        .output()
        .expect("sha256sum");
    assert!(
        String::from_utf8_lossy(&sum.stdout).starts_with(pinned_sha256(lib)),
        "{lib}: not the pinned file (SHA-256 {})",
        String::from_utf8_lossy(&sum.stdout)
    );
    let (code, out, err) = ours(&["inspect", "--json", lib]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    v[0].clone()
}

fn ids(container: &Value) -> BTreeSet<String> {
    container["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect()
}

/// LLVM 22's listing of every container of `lib`, by header over a sparse file.
fn llvm_lists(lib: &str, r: &Value, dir: &Path) -> Vec<BTreeSet<String>> {
    let mut f = std::fs::File::open(lib).unwrap();
    let mut lists = Vec::new();
    for c in r["containers"].as_array().unwrap() {
        assert_eq!(c["kind"], "bundle");
        let (offset, size) = (c["offset"].as_u64().unwrap(), c["size"].as_u64().unwrap());
        let mut head = vec![0; size.min(1 << 16) as usize];
        f.seek(SeekFrom::Start(offset)).unwrap();
        f.read_exact(&mut head).unwrap();
        let path = dir.join("bundle.hipfb");
        let mut out = std::fs::File::create(&path).unwrap();
        out.write_all(&head).unwrap();
        out.set_len(size).unwrap();
        drop(out);
        lists.push(llvm_list(&path));
    }
    lists
}

/// The target IDs of LLVM-listed entry IDs (`hipv4-amdgcn-amd-amdhsa--gfx906:xnack-` →
/// `gfx906:xnack-`), host entries left out.
fn target_ids(lists: &[BTreeSet<String>]) -> BTreeSet<String> {
    lists
        .iter()
        .flatten()
        .filter(|id| !id.starts_with("host-"))
        .map(|id| id.rsplit_once("--").unwrap().1.to_owned())
        .collect()
}

/// What LLVM's lists imply for `check`: every bundle must list the GPU's processor with no
/// feature or with exactly the GPU's setting.
fn llvm_says_loads(lists: &[BTreeSet<String>], accepted: &[&str]) -> bool {
    lists.iter().all(|l| {
        l.iter().any(|id| {
            accepted
                .iter()
                .any(|a| id == &format!("hipv4-amdgcn-amd-amdhsa--{a}"))
        })
    })
}

fn compare(lib: &str, lists: &[BTreeSet<String>], r: &Value) {
    let containers = r["containers"].as_array().unwrap();
    assert_eq!(containers.len(), lists.len());
    for (c, l) in containers.iter().zip(lists) {
        assert_eq!(&ids(c), l, "{lib}, container {}", c["index"]);
    }
    // --archs: the union of LLVM's target IDs.
    let (code, out, err) = ours(&["inspect", "--archs", lib]);
    assert_eq!(code, 0, "{err}");
    let archs: Vec<String> = target_ids(lists).into_iter().collect();
    assert_eq!(out, format!("{lib}: {}\n", archs.join(" ")));
    // check, for GPUs with code in every bundle, in none, and an unbuilt xnack setting.
    for (gpu, accepted) in [
        ("gfx1030", &["gfx1030"][..]),
        ("gfx1100", &["gfx1100"][..]),
        ("gfx906:xnack-", &["gfx906", "gfx906:xnack-"][..]),
        ("gfx906:xnack+", &["gfx906", "gfx906:xnack+"][..]),
        ("gfx90a:xnack+", &["gfx90a", "gfx90a:xnack+"][..]),
    ] {
        let expected = llvm_says_loads(lists, accepted);
        let (code, out, err) = ours(&["check", "--gpu", gpu, "--json", lib]);
        assert_eq!(
            code,
            if expected { 0 } else { 1 },
            "{lib} on {gpu}: {out}{err}"
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        let g = &v[0]["gpus"][0];
        assert_eq!(g["loads"], expected, "{lib} on {gpu}");
        assert_eq!(g["containers"], lists.len());
        if !expected {
            let missing = lists
                .iter()
                .filter(|l| !llvm_says_loads(std::slice::from_ref(*l), accepted))
                .count();
            assert_eq!(g["missing_containers"].as_array().unwrap().len(), missing);
        }
    }
}

#[test]
fn rocrand_against_llvm22() {
    let r = report(ROCRAND, 25_384_336);
    let dir = process_dir("shipped-rocrand-");
    // The section as llvm-objcopy dumps it, listed by LLVM 22.
    let section = dir.join("hip_fatbin");
    let st = Command::new(require(OBJCOPY22))
        .arg(format!("--dump-section=.hip_fatbin={}", section.display()))
        .args([ROCRAND, "/dev/null"])
        .status()
        .unwrap();
    assert!(st.success());
    let containers = r["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1);
    assert_eq!(containers[0]["section"], ".hip_fatbin");
    let lists = vec![llvm_list(&section)];
    // The 3-field host ID of older clang, as stored.
    assert!(lists[0].contains("host-x86_64-unknown-linux"));
    compare(ROCRAND, &lists, &r);
    // The bundle is the section's start (the section is padded to its alignment).
    let sec = std::fs::read(&section).unwrap();
    let lib = std::fs::read(ROCRAND).unwrap();
    let (off, size) = (
        containers[0]["offset"].as_u64().unwrap() as usize,
        containers[0]["size"].as_u64().unwrap() as usize,
    );
    assert_eq!(&lib[off..off + size], &sec[..size]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn rocsparse_against_llvm22() {
    let r = report(ROCSPARSE, 1_310_496_488);
    let dir = process_dir("shipped-rocsparse-");
    let lists = llvm_lists(ROCSPARSE, &r, &dir);
    assert_eq!(lists.len(), 111);
    compare(ROCSPARSE, &lists, &r);
    let _ = std::fs::remove_dir_all(dir);
}
