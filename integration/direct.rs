//! HIP device compiles run as the two commands their clang driver would run (cc1, then lld),
//! without the driver (`offload_build::builder`'s `toolchain::direct`), against the driver's own
//! run: the same library; the template's commands are what runs (a mark added to the kept
//! template shows in the next build's device code); the driver is asked again when the stamp
//! of the toolchain paths it found changes; a wrapper script as the compiler gets no template.

use std::path::{Path, PathBuf};
use std::process::Command;

const EXE: &str = env!("CARGO_BIN_EXE_offload-build");
const CLANG: &str = "/usr/lib/llvm-19/bin/clang";

/// A kernel that needs no HIP header (its host stub's `hipLaunchKernel` declared), with a
/// host function that names it; with `DIRECT_MARK` defined (on the device side alone), a
/// second kernel `direct_marked`.
fn kernel(name: &str, edit: usize) -> String {
    let decl = crate::support::HIP_LAUNCH_DECL;
    format!(
        "{decl}extern \"C\" __attribute__((global)) void {name}(float* x) {{ x[0] *= 2.0f; }}\n\
         extern \"C\" const void* {name}_address() {{ return (const void*){name}; }}\n\
         #if defined(DIRECT_MARK) && defined(__HIP_DEVICE_COMPILE__)\n\
         extern \"C\" __attribute__((global)) void direct_marked(float* x) {{ x[0] = 1.0f; }}\n\
         #endif\n// edit {edit}\n"
    )
}

/// The tool run in `d`, without the build variables of this process (the compiler's, a
/// launcher, a jobserver).
fn tool(d: &Path) -> Command {
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
    c
}

/// Builds `a.hip`, `b.hip` and `c.hip` with their host code for gfx90a into `lib<out>.a`
/// (out-dir `<out>`) with `compiler`; `direct`: `OFFLOAD_BUILD_DIRECT` unset, else `0`.
/// Returns the library's bytes.
fn build(d: &Path, out: &str, compiler: &Path, direct: bool) -> Vec<u8> {
    let mut c = tool(d);
    c.args(["compile", "--host-code", "a.hip", "b.hip", "c.hip"])
        .args(["--arch", "gfx90a", "-q", "--compiler"])
        .arg(compiler)
        .args(["--out-dir", out, "-o", &format!("lib{out}.a")])
        .env("OFFLOAD_BUILD_PCH_BACKGROUND", "0");
    if !direct {
        c.env("OFFLOAD_BUILD_DIRECT", "0");
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read(d.join(format!("lib{out}.a"))).unwrap()
}

/// The driver templates kept in the cache of out-dir `out`, with their texts.
fn templates(d: &Path, out: &str) -> Vec<(PathBuf, String)> {
    let cache = d.join(out).join("offload-build-cache");
    let mut found: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("driver-"))
        })
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect();
    found.sort();
    found
}

fn holds(lib: &[u8], what: &str) -> bool {
    lib.windows(what.len()).any(|w| w == what.as_bytes())
}

fn write_sources(d: &Path, edit: usize) {
    for s in ["a", "b", "c"] {
        std::fs::write(d.join(format!("{s}.hip")), kernel(s, edit)).unwrap();
    }
    // A file changed less than a tick before a job starts is not trusted.
    std::thread::sleep(std::time::Duration::from_millis(200));
}

/// Three sources built cold with their host code: the driver is asked once for its commands
/// (`-###`, one template kept) and the library is the driver's byte for byte
/// (`OFFLOAD_BUILD_DIRECT=0`). A `-DDIRECT_MARK` added to the kept template's cc1 command
/// shows in the next build's device code: its commands are what runs, not the driver. With
/// the template's stamp changed (as after a toolchain change), the driver is asked again
/// and the mark is gone. A wrapper script as the compiler gets no template.
#[test]
fn hip_device_compiles_run_without_the_driver_and_write_its_bytes() {
    let clang = crate::support::require(CLANG);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_sources(d, 0);

    let direct = build(d, "direct", &clang, true);
    let kept = templates(d, "direct");
    assert_eq!(kept.len(), 1, "{kept:#?}");
    let (template, text) = &kept[0];
    assert!(text.starts_with("offload-build driver template"), "{text}");
    let driver = build(d, "driver", &clang, false);
    assert!(templates(d, "driver").is_empty());
    assert!(
        direct == driver,
        "the library built without the driver differs from the driver's"
    );
    assert!(!holds(&direct, "direct_marked"));

    // The kept commands are what runs.
    let marked = text.replacen("\nL-cc1\n", "\nL-cc1\nL-DDIRECT_MARK\n", 1);
    assert_ne!(&marked, text);
    std::fs::write(template, &marked).unwrap();
    write_sources(d, 1);
    let lib = build(d, "direct", &clang, true);
    assert!(
        holds(&lib, "direct_marked"),
        "the build did not run the kept template's commands"
    );

    // Another stamp: the driver is asked again.
    let mut lines: Vec<&str> = marked.lines().collect();
    let zero = "0".repeat(32);
    lines[1] = &zero;
    std::fs::write(template, lines.join("\n") + "\n").unwrap();
    write_sources(d, 2);
    let lib = build(d, "direct", &clang, true);
    assert!(
        !holds(&lib, "direct_marked"),
        "a template whose stamp no longer holds was used"
    );
    let again = std::fs::read_to_string(template).unwrap();
    assert!(
        !again.contains(&zero) && !again.contains("DIRECT_MARK"),
        "{again}"
    );

    // A wrapper script named like a compiler: every compile through it.
    std::fs::create_dir(d.join("bin")).unwrap();
    let wrapper = d.join("bin/clang");
    std::fs::write(&wrapper, format!("#!/bin/sh\nexec {CLANG} \"$@\"\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let wrapped = build(d, "wrapped", &wrapper, true);
    let refused = templates(d, "wrapped");
    assert!(
        !refused.is_empty() && refused.iter().all(|(_, t)| t == "none\n"),
        "{refused:#?}"
    );
    assert!(!holds(&wrapped, "direct_marked"));
}

/// Builds `sources` with their host code for `archs`, two jobs at a time, with `compiler`,
/// into `lib<out>.a`; `direct` as for [`build`]. The tool's output.
fn build_host(
    d: &Path,
    out: &str,
    compiler: &Path,
    sources: &[&str],
    archs: &str,
    direct: bool,
) -> std::process::Output {
    let mut c = tool(d);
    c.args(["compile", "--host-code", "--arch", archs, "-j", "2", "-q"])
        .args(sources)
        .arg("--compiler")
        .arg(compiler)
        .args(["--out-dir", out, "-o", &format!("lib{out}.a")]);
    if !direct {
        c.env("OFFLOAD_BUILD_DIRECT", "0");
    }
    c.output().unwrap()
}

/// The early host compiles (`run::early`): with two jobs, each source's host compile runs
/// once, beside its device compiles, reading its device code from the pipe that stands for
/// it (a wrapper script logs every compiler command), and the library is the one built
/// with each host compile after its device code (`OFFLOAD_BUILD_DIRECT=0`), byte for byte.
/// A device compile that fails for one architecture fails the build with that compile's
/// error, and a host side that fails names the host; neither hangs, and no private
/// directory is left in the cache.
#[test]
fn host_compiles_start_beside_their_device_compiles_and_write_the_same_objects() {
    let clang = crate::support::require(CLANG);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_sources(d, 0);
    std::fs::create_dir(d.join("bin")).unwrap();
    let wrapper = d.join("bin/clang");
    let log = d.join("commands.log");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            clang.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let sources = ["a.hip", "b.hip", "c.hip"];
    let o = build_host(d, "early", &wrapper, &sources, "gfx90a;gfx1030", true);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&log).unwrap();
    let host: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("--cuda-host-only") && !l.contains("-emit-pch"))
        .collect();
    assert_eq!(host.len(), 3, "one host compile per source:\n{text}");
    assert!(
        host.iter().all(|l| l.contains(".early.hipfb")),
        "every host compile read its device code from the pipe:\n{text}"
    );
    let o = build_host(d, "after", &clang, &sources, "gfx90a;gfx1030", false);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (early, after) = (
        std::fs::read(d.join("libearly.a")).unwrap(),
        std::fs::read(d.join("libafter.a")).unwrap(),
    );
    assert!(
        early == after,
        "the early host compiles wrote other objects"
    );

    std::fs::write(
        d.join("bad.hip"),
        format!(
            "{}#if defined(__gfx1030__)\n#error only gfx1030 fails\n#endif\n",
            kernel("bad", 0)
        ),
    )
    .unwrap();
    std::fs::write(
        d.join("host.hip"),
        format!(
            "{}#if !defined(__HIP_DEVICE_COMPILE__)\n#error the host side fails\n#endif\n",
            kernel("host", 0)
        ),
    )
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    for (source, says, names) in [
        ("bad.hip", "only gfx1030 fails", "gfx1030"),
        ("host.hip", "the host side fails", "host"),
    ] {
        let o = build_host(
            d,
            "fail",
            &clang,
            &["a.hip", source],
            "gfx90a;gfx1030",
            true,
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        let said = format!("error: {says}");
        assert_eq!(err.matches(&said).count(), 1, "{err}");
        assert!(err.contains(names) && err.contains(source), "{err}");
        let cache = d.join("fail/offload-build-cache");
        let left: Vec<_> = std::fs::read_dir(&cache)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(".job-"))
            .map(|e| e.file_name())
            .collect();
        assert!(left.is_empty(), "{source}: left {left:?}");
    }
}
