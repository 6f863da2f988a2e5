//! The output policy of the tools against the file system and other processes (issue 16),
//! each case run by LLVM 22's clang-offload-bundler and ours where LLVM's behaviour is the
//! reference: symbolic links written through, `/proc/self/fd/1` written in place, hard links
//! and other owners' files kept, a read-only output refused (as an unprivileged user, through
//! `setpriv`), a reader that goes away ending the tool as SIGPIPE ends LLVM's, and any
//! number of inputs and outputs under a small descriptor limit.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::require;
use crate::support::run::{RunDir, Tool};

const TARGETS: &str = "-targets=host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx906";

/// Writes the two inputs of a small `-type=bc` bundle into `dir`.
fn inputs(dir: &Path) {
    fs::write(dir.join("h.bin"), b"host").unwrap();
    fs::write(dir.join("d.bin"), b"device code").unwrap();
}

fn bundle_args(output: &str) -> Vec<String> {
    [
        "-type=bc",
        TARGETS,
        "-input=h.bin",
        "-input=d.bin",
        &format!("-output={output}"),
    ]
    .map(String::from)
    .to_vec()
}

/// Runs `tool` in `dir`; returns (exit code or -signal, stderr).
fn run(tool: Tool, dir: &Path, args: &[String]) -> (i32, String) {
    let out = Command::new(tool.path())
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run the bundler");
    (
        status_code(out.status),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn status_code(s: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    s.code().unwrap_or_else(|| -s.signal().unwrap_or(0))
}

/// Leaves no hidden temporary file behind.
fn no_temporaries(dir: &Path) {
    let left: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporaries left: {left:?}");
}

#[test]
fn symlinked_outputs_are_written_through() {
    let mut results = Vec::new();
    for tool in [Tool::Llvm22, Tool::Ours] {
        let dir = RunDir::new(&format!("outputs-symlink-{}", tool.name()));
        let d = dir.path();
        inputs(d);
        fs::write(d.join("real.bc"), b"old").unwrap();
        std::os::unix::fs::symlink("real.bc", d.join("link.bc")).unwrap();
        std::os::unix::fs::symlink("made.bc", d.join("dangling.bc")).unwrap();
        let a = run(tool, d, &bundle_args("link.bc"));
        let b = run(tool, d, &bundle_args("dangling.bc"));
        assert_eq!((a.0, b.0), (0, 0), "{}: {} {}", tool.name(), a.1, b.1);
        for link in ["link.bc", "dangling.bc"] {
            let m = fs::symlink_metadata(d.join(link)).unwrap();
            assert!(
                m.file_type().is_symlink(),
                "{}: {link} replaced",
                tool.name()
            );
        }
        no_temporaries(d);
        results.push((
            fs::read(d.join("real.bc")).unwrap(),
            fs::read(d.join("made.bc")).unwrap(),
        ));
    }
    assert_eq!(
        results[0], results[1],
        "ours wrote other bytes than LLVM 22"
    );
}

#[test]
fn proc_self_fd_output_is_written_in_place() {
    let mut results = Vec::new();
    for tool in [Tool::Llvm22, Tool::Ours] {
        let dir = RunDir::new(&format!("outputs-procfd-{}", tool.name()));
        let d = dir.path();
        inputs(d);
        let stdout = fs::File::create(d.join("redirected.bc")).unwrap();
        let out = Command::new(tool.path())
            .current_dir(d)
            .args(bundle_args("/proc/self/fd/1"))
            .stdout(stdout)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            tool.name(),
            String::from_utf8_lossy(&out.stderr)
        );
        results.push(fs::read(d.join("redirected.bc")).unwrap());
    }
    assert!(!results[0].is_empty());
    assert_eq!(results[0], results[1]);
}

#[test]
fn hard_linked_output_keeps_its_inode() {
    for tool in [Tool::Llvm22, Tool::Ours] {
        let dir = RunDir::new(&format!("outputs-hardlink-{}", tool.name()));
        let d = dir.path();
        inputs(d);
        fs::write(d.join("a.bc"), b"old").unwrap();
        fs::hard_link(d.join("a.bc"), d.join("b.bc")).unwrap();
        let inode = fs::metadata(d.join("a.bc")).unwrap().ino();
        let (code, err) = run(tool, d, &bundle_args("a.bc"));
        assert_eq!(code, 0, "{}: {err}", tool.name());
        assert_eq!(
            fs::metadata(d.join("a.bc")).unwrap().ino(),
            inode,
            "{}",
            tool.name()
        );
        assert_eq!(
            fs::read(d.join("a.bc")).unwrap(),
            fs::read(d.join("b.bc")).unwrap(),
            "{}: the other link does not see the new contents",
            tool.name()
        );
        no_temporaries(d);
    }
}

#[test]
fn read_only_output_is_refused_for_an_unprivileged_user() {
    let setpriv = require("/usr/bin/setpriv");
    let mut seen = Vec::new();
    for tool in [Tool::Llvm22, Tool::Ours] {
        let dir = RunDir::new(&format!("outputs-readonly-{}", tool.name()));
        let d = dir.path();
        inputs(d);
        fs::write(d.join("ro.bc"), b"old").unwrap();
        // The unprivileged user may create files in the directory, but not write ro.bc.
        fs::set_permissions(d, fs::Permissions::from_mode(0o777)).unwrap();
        for f in ["h.bin", "d.bin"] {
            fs::set_permissions(d.join(f), fs::Permissions::from_mode(0o644)).unwrap();
        }
        fs::set_permissions(d.join("ro.bc"), fs::Permissions::from_mode(0o444)).unwrap();
        let out = Command::new(&setpriv)
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(tool.path())
            .args(bundle_args("ro.bc"))
            .current_dir(d)
            .output()
            .unwrap();
        assert_eq!(
            fs::read(d.join("ro.bc")).unwrap(),
            b"old",
            "{}",
            tool.name()
        );
        no_temporaries(d);
        // Messages start with argv[0], the tool's path here.
        let err =
            String::from_utf8_lossy(&out.stderr).replace(tool.path().to_str().unwrap(), "TOOL");
        seen.push((status_code(out.status), err));
    }
    assert_eq!(seen[0].0, 1, "LLVM 22 refuses: {:?}", seen[0]);
    assert_eq!(seen[1], seen[0], "ours vs LLVM 22");
}

#[test]
fn a_reader_that_goes_away_ends_the_tool_as_it_ends_llvm() {
    // A bundle with enough entries that -list fills the pipe.
    let dir = RunDir::new("outputs-sigpipe");
    let d = dir.path();
    let ids: Vec<Vec<u8>> = (0..20_000)
        .map(|i| format!("hip-amdgcn-amd-amdhsa--gfx906-{i:06}").into_bytes())
        .collect();
    let entries: Vec<(&[u8], &[u8])> = ids.iter().map(|i| (&i[..], &b""[..])).collect();
    let bundle = offload_build::bundle::binary::write_bundle(&entries, 1).unwrap();
    fs::write(d.join("many.bc"), bundle).unwrap();
    let mut codes = Vec::new();
    for tool in [Tool::Llvm22, Tool::Ours] {
        let mut child = Command::new(tool.path())
            .current_dir(d)
            .args(["-list", "-type=bc", "-input=many.bc"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        // The reader is dropped here: the rest of the listing meets a closed pipe.
        let out = child.wait_with_output().unwrap();
        let _ = std::io::stdout().flush();
        codes.push((
            status_code(out.status),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ));
    }
    assert_eq!(
        codes[0].0, -13,
        "LLVM 22 is ended by SIGPIPE: {:?}",
        codes[0]
    );
    assert_eq!(codes[1], codes[0], "ours vs LLVM 22");
}

/// Runs `tool` in `dir` with the response file `rsp`, under `ulimit -n <limit>` when given;
/// returns (exit code, stderr).
fn run_limited(tool: Tool, dir: &Path, rsp: &str, limit: Option<u32>) -> (i32, String) {
    let ulimit = limit.map_or(String::new(), |n| format!("ulimit -n {n} && "));
    let out = Command::new("/bin/sh")
        .current_dir(dir)
        .arg("-c")
        .arg(format!("{ulimit}exec \"$0\" @{rsp}"))
        .arg(tool.path())
        .output()
        .unwrap();
    (
        status_code(out.status),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn any_number_of_inputs_and_outputs_under_a_small_descriptor_limit() {
    let n_inputs = 1_030;
    let n_outputs = 10_001;
    let mut results = Vec::new();
    for tool in [Tool::Llvm22, Tool::Ours] {
        let dir = RunDir::new(&format!("outputs-descriptors-{}", tool.name()));
        let d = dir.path();
        let mut targets = vec!["host-x86_64-unknown-linux-gnu".to_string()];
        let mut args = String::from("-type=bc\n-output=fat.bc\n");
        for i in 0..n_inputs {
            let name = format!("in{i}.bin");
            fs::write(d.join(&name), format!("payload {i}")).unwrap();
            args += &format!("-input={name}\n");
            if i > 0 {
                targets.push(format!("openmp-x86_64-unknown-linux{i}.0-gnu"));
            }
        }
        args += &format!("-targets={}\n", targets.join(","));
        fs::write(d.join("bundle.rsp"), args).unwrap();
        // LLVM is the reference and runs without the limit.
        let limit = (tool == Tool::Ours).then_some(256);
        let (code, err) = run_limited(tool, d, "bundle.rsp", limit);
        assert_eq!(code, 0, "{} bundling {n_inputs} inputs: {err}", tool.name());
        // Unbundle into 10,001 outputs (most of them missing, hence empty).
        let mut targets = vec!["host-x86_64-unknown-linux-gnu".to_string()];
        let mut args = String::from(
            "-type=bc\n-input=fat.bc\n-unbundle\n-allow-missing-bundles\n-output=out0\n",
        );
        for i in 1..n_outputs {
            targets.push(format!("openmp-x86_64-unknown-linux{i}.0-gnu"));
            args += &format!("-output=out{i}\n");
        }
        args += &format!("-targets={}\n", targets.join(","));
        fs::write(d.join("unbundle.rsp"), args).unwrap();
        let (code, err) = run_limited(tool, d, "unbundle.rsp", limit);
        assert_eq!(
            code,
            0,
            "{} unbundling into {n_outputs} outputs: {err}",
            tool.name()
        );
        no_temporaries(d);
        let outputs: Vec<Vec<u8>> = (0..n_outputs)
            .map(|i| fs::read(d.join(format!("out{i}"))).unwrap())
            .collect();
        assert!(outputs.iter().any(|o| !o.is_empty()), "{}", tool.name());
        results.push((fs::read(d.join("fat.bc")).unwrap(), outputs));
    }
    assert!(
        results[0].0 == results[1].0,
        "ours vs LLVM 22: the bundles differ"
    );
    let differing: Vec<usize> = (0..n_outputs)
        .filter(|&i| results[0].1[i] != results[1].1[i])
        .collect();
    assert!(
        differing.is_empty(),
        "ours vs LLVM 22: outputs {differing:?} differ"
    );
}

#[test]
fn signals_leave_no_temporary_and_the_old_outputs() {
    use std::os::unix::process::ExitStatusExt;
    use std::time::Duration;
    let dir = RunDir::new("outputs-signals");
    let d = dir.path();
    let big: Vec<u8> = (0..150u32 << 20).map(|i| (i ^ (i >> 11)) as u8).collect();
    fs::write(d.join("h.bin"), &big).unwrap();
    fs::write(d.join("d.bin"), &big[..100 << 20]).unwrap();
    drop(big);
    let bundle = |out: &str| bundle_args(out);
    let unbundle = || {
        [
            "-type=bc",
            TARGETS,
            "-input=fat.bc",
            "-unbundle",
            "-output=u0",
            "-output=u1",
        ]
        .map(String::from)
        .to_vec()
    };
    // The complete bundle, to unbundle from.
    let (code, err) = run(Tool::Ours, d, &bundle("fat.bc"));
    assert_eq!(code, 0, "{err}");
    let mut interrupted = 0;
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        for delay_ms in [5, 40, 150] {
            for (args, outputs) in [
                (bundle("out.bc"), &["out.bc"][..]),
                (unbundle(), &["u0", "u1"][..]),
            ] {
                for o in outputs {
                    fs::write(d.join(o), b"old").unwrap();
                }
                let mut child = Command::new(Tool::Ours.path())
                    .current_dir(d)
                    .args(&args)
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap();
                std::thread::sleep(Duration::from_millis(delay_ms));
                // SAFETY: kill(2) on our own child, which has not been waited for yet.
                unsafe { libc::kill(child.id() as i32, signal) };
                let status = child.wait().unwrap();
                no_temporaries(d);
                if status.signal() == Some(signal) {
                    interrupted += 1;
                    // All outputs old, or all complete (the signal came while they were
                    // renamed, which it waits for): never a mix, never a partial file.
                    let old: Vec<bool> = outputs
                        .iter()
                        .map(|o| fs::read(d.join(o)).unwrap() == b"old")
                        .collect();
                    let complete = outputs.iter().all(|o| {
                        let len = fs::metadata(d.join(o)).unwrap().len();
                        len == 150 << 20 || len == 100 << 20 || len > 200 << 20
                    });
                    assert!(
                        old.iter().all(|&x| x) || complete,
                        "interrupted run left a mix (old: {old:?}) or a partial file: {args:?}"
                    );
                } else {
                    assert!(status.success(), "{args:?}: {status}");
                    for o in outputs {
                        assert!(fs::metadata(d.join(o)).unwrap().len() > 3, "{o}");
                    }
                }
            }
        }
    }
    assert!(interrupted >= 6, "only {interrupted} runs were interrupted");
}

#[test]
fn a_failing_standard_output_is_reported_as_llvm_reports_it() {
    let dir = RunDir::new("outputs-dev-full");
    let d = dir.path();
    inputs(d);
    let (code, err) = run(Tool::Ours, d, &bundle_args("fat.bc"));
    assert_eq!(code, 0, "{err}");
    let mut seen = Vec::new();
    for tool in [Tool::Llvm22, Tool::Ours] {
        let out = Command::new(tool.path())
            .current_dir(d)
            .args(["-list", "-type=bc", "-input=fat.bc"])
            .stdout(
                fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            )
            .output()
            .unwrap();
        seen.push((
            status_code(out.status),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ));
    }
    assert_eq!(seen[0].0, 1, "LLVM 22: {:?}", seen[0]);
    assert_eq!(seen[1], seen[0], "ours vs LLVM 22");
}

/// Unbundles three entries into `a.bc`, `b.bc` and `c.bc` (old contents on disk), plus a
/// missing fourth target into the FIFO `pipe`, as root or (with `setpriv`) as an unprivileged
/// user (outputs are committed in the bundle's listing order: gfx906, gfx900, host). While
/// the tool waits for the FIFO's reader, every output is staged; `c.bc` is then
/// made a directory, so that its commit fails after `a.bc` and `b.bc` were moved into place.
fn unbundle_with_failing_third(setpriv: Option<&Path>, b_hard_linked: bool) {
    use std::time::{Duration, Instant};
    let who = if setpriv.is_some() { "nobody" } else { "root" };
    let dir = RunDir::new(&format!("outputs-rollback-{who}"));
    let d = dir.path();
    let entries: [(&[u8], &[u8]); 3] = [
        (b"hip-amdgcn-amd-amdhsa--gfx906", b"new a"),
        (b"hip-amdgcn-amd-amdhsa--gfx900", b"new b"),
        (b"host-x86_64-unknown-linux-gnu", b"new c"),
    ];
    let bundle = offload_build::bundle::binary::write_bundle(&entries, 1).unwrap();
    fs::write(d.join("fat.bc"), bundle).unwrap();
    for (f, old) in [("a.bc", "old a"), ("b.bc", "old b"), ("c.bc", "old c")] {
        fs::write(d.join(f), old).unwrap();
    }
    if b_hard_linked {
        fs::hard_link(d.join("b.bc"), d.join("b-link.bc")).unwrap();
    }
    let fifo = std::ffi::CString::new(d.join("pipe").as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo(3) on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o666) }, 0);
    let mut cmd = match setpriv {
        Some(setpriv) => {
            fs::set_permissions(d, fs::Permissions::from_mode(0o777)).unwrap();
            for e in fs::read_dir(d).unwrap() {
                std::os::unix::fs::chown(e.unwrap().path(), Some(65534), Some(65534)).unwrap();
            }
            let mut c = Command::new(setpriv);
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
                .arg(Tool::Ours.path());
            c
        }
        None => Command::new(Tool::Ours.path()),
    };
    let child = cmd
        .current_dir(d)
        .args([
            "-type=bc",
            "-unbundle",
            "-allow-missing-bundles",
            "-input=fat.bc",
            "-targets=hip-amdgcn-amd-amdhsa--gfx906,hip-amdgcn-amd-amdhsa--gfx900,host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx908",
            "-output=a.bc",
            "-output=b.bc",
            "-output=c.bc",
            "-output=pipe",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Staged: a temporary for each regular output.
    let staged = |d: &Path| {
        fs::read_dir(d)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".tmp")
            })
            .count()
    };
    let started = Instant::now();
    while staged(d) < 3 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{who}: never staged"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    fs::remove_file(d.join("c.bc")).unwrap();
    fs::create_dir(d.join("c.bc")).unwrap();
    fs::write(d.join("c.bc/keep"), b"").unwrap();
    // Let the tool open the FIFO, then read it to its end.
    let mut reader = fs::File::open(d.join("pipe")).unwrap();
    let mut sink = Vec::new();
    std::io::Read::read_to_end(&mut reader, &mut sink).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status_code(out.status), 1, "{who}: {err}");
    assert!(err.contains("'c.bc': Is a directory"), "{who}: {err}");
    assert_eq!(fs::read(d.join("a.bc")).unwrap(), b"old a", "{who}: a.bc");
    assert_eq!(fs::read(d.join("b.bc")).unwrap(), b"old b", "{who}: b.bc");
    if b_hard_linked {
        assert_eq!(fs::read(d.join("b-link.bc")).unwrap(), b"old b", "{who}");
        assert_eq!(fs::metadata(d.join("b.bc")).unwrap().nlink(), 2, "{who}");
    }
    no_temporaries(d);
    let left: Vec<String> = fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "{who}: hidden files left: {left:?}");
}

#[test]
fn a_failing_third_output_leaves_the_first_two_untouched() {
    unbundle_with_failing_third(None, false);
    unbundle_with_failing_third(None, true);
    let setpriv = require("/usr/bin/setpriv");
    unbundle_with_failing_third(Some(&setpriv), false);
}
