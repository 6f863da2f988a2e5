//! `offload-build compile` and `Build` against compilers that misbehave (issue 16, finding
//! 11): fake compilers as shell scripts (they answer the version and processor probes with
//! clang 19's answers) that hang, write garbage, or sit behind a launcher that fails. A
//! hanging compile is killed at the timeout with its children, SIGTERM/SIGINT to the command
//! kill the compiler's process group, garbage is refused in every container and embedding
//! mode with the same message, and a failing launcher is one line.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const CLANG: &str = "/usr/lib/llvm-19/bin/clang";
const EXE: &str = env!("CARGO_BIN_EXE_offload-build");

/// A fake compiler: clang 19's answers to the probes, else `body`.
fn fake(dir: &Path, name: &str, body: &str) -> PathBuf {
    assert!(
        Path::new(CLANG).is_file(),
        "{CLANG} missing: run build-support/setup.sh"
    );
    script(
        dir,
        name,
        &format!(
            "case \"$*\" in *--version*|*--print-supported-cpus*) exec {CLANG} \"$@\";; esac\n{body}\n"
        ),
    )
}

/// An executable shell script `dir/name` running `body`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// The embedding mode of most tests: a fat binary.
const FATBIN: &[&str] = &["--embed", "fatbin"];

/// A compiler that starts a child (`sleep`), records its pid in `$PIDFILE` and waits.
const HANG: &str = "sleep 300 &\necho $! > \"$PIDFILE\"\nwait";

/// A compiler that writes `garbage` to its `-o` output.
const GARBAGE: &str =
    "while [ $# -gt 0 ]; do [ \"$1\" = -o ] && echo garbage > \"$2\"; shift; done; exit 0";

fn source(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(
        &p,
        "#define __global__ __attribute__((global))\n\
         extern \"C\" __global__ void k(float* x) { x[0] = 1; }\n",
    )
    .unwrap();
    p
}

/// `offload-build compile --quiet` in `dir`, with none of the variables that choose archs,
/// a launcher, a timeout or a compiler from the outer environment.
pub(crate) fn compile_cmd(dir: &Path) -> Command {
    let mut c = compile_cmd_with_progress(dir);
    c.arg("--quiet");
    c
}

/// [`compile_cmd`] printing its progress lines.
pub(crate) fn compile_cmd_with_progress(dir: &Path) -> Command {
    let mut c = Command::new(EXE);
    c.current_dir(dir).arg("compile");
    for &var in crate::support::BUILD_ENV_VARS {
        c.env_remove(var);
    }
    for var in [
        "OFFLOAD_BUILD_LAUNCHER",
        "OFFLOAD_BUILD_COMPILE_TIMEOUT",
        "RUSTC_WRAPPER",
        "CLANG",
    ] {
        c.env_remove(var);
    }
    c
}

/// `offload-build compile --compiler <compiler> --archs <archs> <mode…> <src> -o <out>`.
fn compile_to(
    dir: &Path,
    compiler: impl AsRef<OsStr>,
    archs: &str,
    mode: &[&str],
    src: &Path,
    out: &str,
) -> Command {
    let mut c = compile_cmd(dir);
    c.arg("--compiler")
        .arg(compiler)
        .args(["--archs", archs])
        .args(mode)
        .arg(src)
        .args(["-o", out]);
    c
}

fn stderr_lines(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Whether the process is gone (or a zombie no one has reaped yet: it runs no more).
fn gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

fn wait_gone(pid: &str) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        if gone(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn read_pid(pidfile: &Path) -> String {
    let start = Instant::now();
    loop {
        if let Ok(t) = std::fs::read_to_string(pidfile) {
            if t.ends_with('\n') {
                return t;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the compiler never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_hanging_compile_is_killed_at_the_timeout_with_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cc = fake(d, "hang.sh", HANG);
    let src = source(d, "k.hip");
    let pidfile = d.join("pid");
    let start = Instant::now();
    let mode = ["--embed", "fatbin", "--timeout", "1"];
    let o = compile_to(d, &cc, "gfx90a", &mode, &src, "k.hipfb")
        .env("PIDFILE", &pidfile)
        .output()
        .unwrap();
    assert!(start.elapsed() < Duration::from_secs(30), "no timeout");
    let lines = stderr_lines(&o);
    assert_eq!(o.status.code(), Some(1), "{lines:?}");
    assert_eq!(lines.len(), 1, "{lines:?}");
    let l = &lines[0];
    assert!(
        l.contains(&format!("compiling {} for gfx90a", src.display()))
            && l.contains("timeout of 1 s")
            && l.contains("--timeout"),
        "{l}"
    );
    let pid = read_pid(&pidfile);
    assert!(
        wait_gone(&pid),
        "the compiler's child {pid} was left running"
    );
    assert!(!d.join("k.hipfb").exists());

    // The library, with the timeout from the environment: the typed error.
    let pidfile = d.join("pid2");
    let mut b = offload_build::builder::Build::new();
    b.out_dir(d.join("out"))
        .cargo_metadata(false)
        .compiler(&cc)
        .file(&src)
        .archs("gfx1100")
        .env("OFFLOAD_BUILD_COMPILE_TIMEOUT", "0.5")
        .env("PIDFILE", &pidfile)
        .env_remove("OFFLOAD_BUILD_LAUNCHER");
    let e = b.try_compile("k").unwrap_err();
    assert!(
        matches!(&e, offload_build::builder::Error::CompileTimedOut { arch, .. } if arch == "gfx1100"),
        "{e}"
    );
    assert!(e.to_string().contains("timeout of 0.5 s"), "{e}");
    let pid = read_pid(&pidfile);
    assert!(
        wait_gone(&pid),
        "the compiler's child {pid} was left running"
    );

    // A bad value is an error naming the variable.
    b.env("OFFLOAD_BUILD_COMPILE_TIMEOUT", "soon");
    let e = b.try_compile("k").unwrap_err().to_string();
    assert!(e.contains("OFFLOAD_BUILD_COMPILE_TIMEOUT=`soon`"), "{e}");
}

#[test]
fn sigterm_and_sigint_kill_the_compilers_children() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cc = fake(d, "hang.sh", HANG);
    let src = source(d, "k.hip");
    for (signal, name) in [(libc::SIGTERM, "TERM"), (libc::SIGINT, "INT")] {
        let pidfile = d.join(format!("pid-{name}"));
        let child = compile_to(d, &cc, "gfx90a;gfx1100", FATBIN, &src, "k.hipfb")
            .env("PIDFILE", &pidfile)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = read_pid(&pidfile);
        assert!(!gone(&pid));
        unsafe {
            libc::kill(child.id() as i32, signal);
        }
        let o = child.wait_with_output().unwrap();
        assert_eq!(
            o.status.signal(),
            Some(signal),
            "SIG{name}: {:?} {}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            o.stderr.is_empty(),
            "SIG{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            wait_gone(&pid),
            "SIG{name}: the compiler's child {pid} was left running"
        );
        assert!(!d.join("k.hipfb").exists());
        // The jobs' private directories went too.
        let left: Vec<String> =
            std::fs::read_dir(d.join("k.hipfb.offload-build/offload-build-cache"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".job-"))
                .collect();
        assert!(left.is_empty(), "SIG{name}: left {left:?}");
    }
}

#[test]
fn garbage_device_code_is_refused_in_every_mode() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cc = fake(d, "garbage.sh", GARBAGE);
    let hip = source(d, "k.hip");
    let cu = source(d, "v.cu");
    let modes: [&[&str]; 4] = [
        &["--embed", "fatbin"],
        &["--embed", "object"],
        &["--container", "offload-binary", "--embed", "fatbin"],
        &["--container", "offload-binary", "--embed", "object"],
    ];
    let mut messages = Vec::new();
    for (src, arch, expected) in [
        (&hip, "gfx90a", "not an AMDGPU ELF code object"),
        (&cu, "sm_80", "not a PTX text"),
    ] {
        for mode in modes {
            let out = if mode.contains(&"fatbin") {
                "k.bin"
            } else {
                "libk.a"
            };
            let o = compile_to(d, &cc, arch, mode, src, out)
                .env("CUDA_PATH", d.join("no-cuda"))
                .output()
                .unwrap();
            let lines = stderr_lines(&o);
            assert_eq!(o.status.code(), Some(1), "{mode:?}: {lines:?}");
            assert_eq!(lines.len(), 1, "{mode:?}: {lines:?}");
            assert!(
                lines[0].contains(&format!("compiling {} for {arch} wrote", src.display()))
                    && lines[0].contains("8 bytes starting with 67 61 72 62 61 67 65 0a")
                    && lines[0].contains(expected),
                "{mode:?}: {}",
                lines[0]
            );
            assert!(!d.join(out).exists(), "{mode:?}: an output was written");
            // The same message whatever the mode (the cache file name aside).
            let m = lines[0].split(" as ").next().unwrap().to_string();
            messages.push((src.clone(), m));
        }
    }
    for w in messages.windows(2) {
        if w[0].0 == w[1].0 {
            assert_eq!(w[0].1, w[1].1);
        }
    }
}

#[test]
fn a_failing_launcher_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = source(d, "k.hip");
    let failing = script(d, "launch.sh", "echo 'cache is broken' >&2\nexit 3\n");
    for (launcher, want) in [
        (
            d.join("no-such-ccache"),
            "cannot be run: No such file or directory".to_string(),
        ),
        (
            failing.clone(),
            format!(
                "failed (exit status 3: cache is broken) compiling {} for gfx90a, which \
                 succeeds without it",
                src.display()
            ),
        ),
    ] {
        let o = compile_to(d, CLANG, "gfx90a", FATBIN, &src, "k.hipfb")
            .env("OFFLOAD_BUILD_LAUNCHER", &launcher)
            .output()
            .unwrap();
        let lines = stderr_lines(&o);
        assert_eq!(o.status.code(), Some(1), "{lines:?}");
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].starts_with(&format!(
                "offload-build: error: the compiler launcher `{}` ",
                launcher.display()
            )) && lines[0].contains(&want),
            "{}",
            lines[0]
        );
    }
    // A launcher that works but a source that does not compile: the compiler's error, with
    // its command and messages, as before.
    std::fs::write(&src, "this is not C++\n").unwrap();
    let ok = script(d, "pass.sh", "exec \"$@\"\n");
    let o = compile_to(d, CLANG, "gfx90a", FATBIN, &src, "k.hipfb")
        .env("OFFLOAD_BUILD_LAUNCHER", &ok)
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("for gfx90a failed (exit status 1)") && e.contains("error:"),
        "{e}"
    );
}
