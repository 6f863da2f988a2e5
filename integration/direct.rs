//! HIP device compiles run as the two commands their clang driver would run (cc1, then lld),
//! without the driver (`offload_build::builder`'s `run::direct`), against the driver's own
//! run: the same objects, the driver asked once per architecture (`-###`), and asked again
//! when the toolchain paths it found change.

use std::path::Path;
use std::process::Command;

const EXE: &str = env!("CARGO_BIN_EXE_offload-build");

/// A clang that logs each call's arguments (a line in `$DRIVER_LOG`) and runs clang 19 (no
/// ROCm: `-nogpulib -nogpuinc`).
const LOGGING_CLANG: &str =
    "#!/bin/sh\necho \"$*\" >> \"$DRIVER_LOG\"\nexec /usr/lib/llvm-19/bin/clang \"$@\"\n";

/// A kernel that needs no HIP header (its host stub's `hipLaunchKernel` declared), with a
/// host function that names it.
fn kernel(name: &str) -> String {
    format!(
        "struct dim3 {{ unsigned x, y, z; }};\n\
         extern \"C\" int hipLaunchKernel(const void*, dim3, dim3, void**, unsigned long, void*);\n\
         extern \"C\" __attribute__((global)) void {name}(float* x) {{ x[0] *= 2.0f; }}\n\
         extern \"C\" const void* {name}_address() {{ return (const void*){name}; }}\n"
    )
}

/// What the logging clang was asked by a build: its `-###` calls and its device compiles.
struct Calls {
    asked: usize,
    compiles: Vec<String>,
}

/// Builds `a.hip`, `b.hip` and `c.hip` with their host code for gfx90a into `lib<out>.a`
/// (out-dir `<out>`) with the logging clang; `direct`: `OFFLOAD_BUILD_DIRECT` unset, else `0`.
fn build(d: &Path, out: &str, direct: bool) -> Calls {
    let log = d.join("driver.log");
    let mut c = Command::new(EXE);
    c.current_dir(d);
    for var in crate::support::BUILD_ENV_VARS.iter().chain(&[
        "CLANG",
        "RUSTC_WRAPPER",
        "MAKEFLAGS",
        "CARGO_MAKEFLAGS",
    ]) {
        c.env_remove(var);
    }
    c.args([
        "compile",
        "--host-code",
        "a.hip",
        "b.hip",
        "c.hip",
        "--arch",
        "gfx90a",
        "-q",
    ])
    .arg("--compiler")
    .arg(d.join("bin/clang"))
    .args(["--out-dir", out, "-o", &format!("lib{out}.a")])
    .env("DRIVER_LOG", &log)
    .env("OFFLOAD_BUILD_PCH_BACKGROUND", "0");
    if !direct {
        c.env("OFFLOAD_BUILD_DIRECT", "0");
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines = std::fs::read_to_string(&log).unwrap_or_default();
    std::fs::remove_file(&log).ok();
    let device = |l: &&str| l.contains("--cuda-device-only") && !l.contains("-emit-pch");
    Calls {
        asked: lines.lines().filter(|l| l.ends_with("-###")).count(),
        compiles: lines
            .lines()
            .filter(device)
            .filter(|l| !l.ends_with("-###"))
            .map(str::to_string)
            .collect(),
    }
}

/// Three sources built cold with their host code: each device compile runs as cc1 and lld (no
/// device compile through the driver), the driver asked for its commands once and kept them in
/// the cache directory; the library is the driver's byte for byte (`OFFLOAD_BUILD_DIRECT=0`). After an edit, with the stamp of the
/// toolchain paths the driver found no longer matching (as after a toolchain change), the
/// driver is asked again and the template kept anew.
#[test]
fn hip_device_compiles_run_without_the_driver_and_write_its_bytes() {
    crate::support::require("/usr/lib/llvm-19/bin/clang");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("bin")).unwrap();
    let clang = d.join("bin/clang");
    std::fs::write(&clang, LOGGING_CLANG).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&clang, std::fs::Permissions::from_mode(0o755)).unwrap();
    for s in ["a", "b", "c"] {
        std::fs::write(d.join(format!("{s}.hip")), kernel(s)).unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(200));

    let direct = build(d, "direct", true);
    assert!(direct.compiles.is_empty(), "{:#?}", direct.compiles);
    assert_eq!(direct.asked, 1);
    let cache = d.join("direct/offload-build-cache");
    let templates: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("driver-"))
        })
        .collect();
    assert!(!templates.is_empty(), "no template in {}", cache.display());
    let kept: Vec<_> = templates
        .iter()
        .filter(|t| std::fs::read_to_string(t).unwrap() != "none\n")
        .collect();
    assert_eq!(kept.len(), direct.asked, "{templates:?}");

    let driver = build(d, "driver", false);
    assert_eq!(driver.asked, 0);
    assert_eq!(driver.compiles.len(), 3, "{:#?}", driver.compiles);
    assert!(
        std::fs::read(d.join("libdirect.a")).unwrap()
            == std::fs::read(d.join("libdriver.a")).unwrap(),
        "the library built without the driver differs from the driver's"
    );

    // Another stamp, as after a toolchain change: the driver is asked again.
    for t in &kept {
        let text = std::fs::read_to_string(t).unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        let zero = "0".repeat(32);
        lines[1] = &zero;
        std::fs::write(t, lines.join("\n") + "\n").unwrap();
    }
    std::fs::write(d.join("a.hip"), kernel("a") + "// edited\n").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let again = build(d, "direct", true);
    assert!(again.compiles.is_empty(), "{:#?}", again.compiles);
    assert_eq!(again.asked, 1, "the changed stamp was not noticed");
    assert!(
        kept.iter().any(|t| !std::fs::read_to_string(t)
            .unwrap()
            .contains(&"0".repeat(32))),
        "the template was not kept anew"
    );
}
