//! `offload-build compile`'s cache against the seven cases of issue 27 where it used to give
//! stale device code with exit status 0: an edit that lands during a compile (a launcher that
//! edits the source or a header once, right after the compiler ran), four concurrent runs
//! sharing one `--out-dir` with same-named outputs, damaged cached objects (corrupt, empty,
//! swapped between architectures, truncated) in every embedding mode, a header shadowed by a
//! new file earlier in the `-I` list and a changed `CPATH`, outputs that name an input,
//! a depfile that cannot be committed, and `kill -9` of the command while its compiler runs.
//!
//! Every case must give the bytes a clean build (an empty cache) gives, or an error naming the
//! file with no output replaced. clang 19 without ROCm (`-nogpulib`), tiny sources.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const CLANG: &str = "/usr/lib/llvm-19/bin/clang";

/// The embedding modes: (arguments, output name).
const MODES: [(&[&str], &str); 4] = [
    (&["--embed", "fatbin"], "k.hipfb"),
    (&["--embed", "object"], "libk.a"),
    (
        &["--container", "offload-binary", "--embed", "fatbin"],
        "k.bin",
    ),
    (
        &["--container", "offload-binary", "--embed", "object"],
        "libk.a",
    ),
];

fn script(path: &Path, body: &str) -> PathBuf {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_path_buf()
}

/// A kernel that stores `value` (a number or a macro from a header).
fn kernel(value: &str) -> String {
    format!(
        "#define __global__ __attribute__((global))\n\
         extern \"C\" __global__ void k(int* x) {{ x[0] = {value}; }}\n"
    )
}

fn kernel_with(header: &str) -> String {
    format!("#include \"{header}\"\n{}", kernel("VALUE"))
}

fn compile_cmd(dir: &Path) -> Command {
    compile_with(dir, Path::new(CLANG))
}

fn compile_with(dir: &Path, compiler: &Path) -> Command {
    assert!(
        Path::new(CLANG).is_file(),
        "{CLANG} missing: run build-support/setup.sh"
    );
    let mut c = crate::compile_faults::compile_cmd(dir);
    c.arg("--compiler").arg(compiler);
    // The search path variables too: the cases set them on purpose.
    for var in ["CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH"] {
        c.env_remove(var);
    }
    // The configuration users get, or CI=1 (`in_both_configs`), whatever CI runs with.
    c.env_remove("OFFLOAD_BUILD_PCH_BACKGROUND");
    crate::support::set_ci(&mut c);
    c
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(o: Output) -> Output {
    assert!(o.status.success(), "{:?}: {}", o.status, text(&o));
    o
}

/// Runs `args` in `dir`, then the same with an empty cache of its own: the output bytes of
/// both must be the same (a stale cached result shows as a difference).
fn same_as_clean(dir: &Path, args: &[&str], env: &[(&str, &Path)], out: &str) -> Output {
    let run = |cache: Option<&Path>| {
        let mut c = compile_cmd(dir);
        c.args(args);
        for (k, v) in env {
            c.env(k, v);
        }
        if let Some(cache) = cache {
            c.env("OFFLOAD_BUILD_CACHE_DIR", cache);
        }
        let o = ok(c.output().unwrap());
        (o, std::fs::read(dir.join(out)).unwrap())
    };
    let (o, built) = run(None);
    let fresh = tempfile::tempdir().unwrap();
    let (_, clean) = run(Some(fresh.path()));
    assert!(
        built == clean,
        "{args:?}: the build's {out} differs from a clean build's (stale device code)"
    );
    o
}

/// The number of lines in a counting launcher's log.
fn count(log: &Path) -> usize {
    std::fs::read_to_string(log).map_or(0, |t| t.lines().count())
}

#[test]
fn an_edit_during_the_compile_is_not_recorded() {
    crate::support::in_both_configs(|| {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("k.hip"), kernel_with("v.h")).unwrap();
        std::fs::write(d.join("v.h"), "#define VALUE 1\n").unwrap();
        // Runs the compiler, then (once) edits a file: the compile read the old content.
        let launcher = script(
            &d.join("edit.sh"),
            "\"$@\" || exit $?\n\
             if [ ! -e \"$MARK\" ]; then : > \"$MARK\"; printf '%s\\n' \"$EDIT\" > \"$FILE\"; fi",
        );
        // A header edited after the first architecture's compile read it (the second reads
        // the new one), then the source.
        let edits = [
            ("v.h", "#define VALUE 3\n".to_string()),
            ("k.hip", kernel("2")),
        ];
        let args = [
            "--archs",
            "gfx90a;gfx1030",
            "-j",
            "1",
            "--embed",
            "fatbin",
            "k.hip",
            "-o",
            "k.hipfb",
        ];
        for (i, (file, edit)) in edits.iter().enumerate() {
            let mark = d.join(format!("mark{i}"));
            // A source not compiled yet: the first build compiles.
            std::fs::write(d.join("k.hip"), format!("{}// {i}\n", kernel_with("v.h"))).unwrap();
            // The launcher is part of the job key: every build runs under it.
            let run = |cache: Option<&Path>| {
                let mut c = compile_cmd(d);
                c.args(args)
                    .env("OFFLOAD_BUILD_LAUNCHER", &launcher)
                    .env("MARK", &mark)
                    .env("FILE", d.join(file))
                    .env("EDIT", edit);
                if let Some(cache) = cache {
                    c.env("OFFLOAD_BUILD_CACHE_DIR", cache);
                }
                ok(c.output().unwrap());
                std::fs::read(d.join("k.hipfb")).unwrap()
            };
            run(None);
            assert!(mark.exists());
            // The file changed after the compile read it: the next build compiles again and
            // gives the code of the edited file, as a clean build does.
            let built = run(None);
            let fresh = tempfile::tempdir().unwrap();
            let clean = run(Some(fresh.path()));
            assert!(built == clean, "edit {i} of {file}: stale device code kept");
        }
    });
}

#[test]
fn concurrent_runs_sharing_an_out_dir_keep_their_own_outputs() {
    crate::support::in_both_configs(|| {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let mut expected = Vec::new();
        for i in 0..4 {
            std::fs::create_dir_all(d.join(format!("s{i}"))).unwrap();
            std::fs::create_dir_all(d.join(format!("d{i}"))).unwrap();
            std::fs::write(
                d.join(format!("s{i}/k.hip")),
                kernel(&format!("{}", 10 + i)),
            )
            .unwrap();
        }
        let cmd = |i: usize| {
            let mut c = compile_cmd(d);
            c.args(["--archs", "gfx90a", "--out-dir", "shared"])
                .arg(format!("s{i}/k.hip"))
                .arg("-o")
                .arg(format!("d{i}/libk.a"))
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            c
        };
        for i in 0..4 {
            ok(cmd(i).output().unwrap());
            expected.push(std::fs::read(d.join(format!("d{i}/libk.a"))).unwrap());
        }
        assert!(expected.windows(2).all(|w| w[0] != w[1]));
        for round in 0..20 {
            for i in 0..4 {
                let _ = std::fs::remove_file(d.join(format!("d{i}/libk.a")));
            }
            let children: Vec<_> = (0..4).map(|i| cmd(i).spawn().unwrap()).collect();
            for c in children {
                ok(c.wait_with_output().unwrap());
            }
            for (i, want) in expected.iter().enumerate() {
                let got = std::fs::read(d.join(format!("d{i}/libk.a"))).unwrap();
                assert!(
                    &got == want,
                    "round {round}: d{i}/libk.a holds another run's code"
                );
            }
        }
    });
}

/// The cached code object of `arch` (`k-<arch>-<key>.o`) in `cache`.
fn cached_object(cache: &Path, arch: &str) -> PathBuf {
    let prefix = format!("k-{arch}-");
    std::fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with(&prefix) && n.ends_with(".o")
        })
        .unwrap_or_else(|| panic!("no cached object for {arch} in {}", cache.display()))
}

/// Damages a cached object (given the other architecture's).
type Damage = fn(&Path, &Path);

#[test]
fn damaged_cached_objects_are_compiled_again_in_every_mode() {
    crate::support::in_both_configs(|| {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("k.hip"), kernel("5")).unwrap();
        let damages: [(&str, Damage); 4] = [
            ("corrupt", |o, _| std::fs::write(o, b"garbage").unwrap()),
            ("empty", |o, _| std::fs::write(o, b"").unwrap()),
            ("swapped", |o, other| {
                std::fs::copy(other, o).unwrap();
            }),
            ("truncated", |o, _| {
                let data = std::fs::read(o).unwrap();
                std::fs::write(o, &data[..100]).unwrap();
            }),
        ];
        for (m, (mode, out)) in MODES.into_iter().enumerate() {
            let cache = d.join(format!("cache-{m}"));
            let mut args: Vec<&str> = vec!["--archs", "gfx90a;gfx1030", "k.hip", "-o", out];
            args.extend(mode);
            let env = [("OFFLOAD_BUILD_CACHE_DIR", cache.as_path())];
            same_as_clean(d, &args, &env, out);
            let good = std::fs::read(d.join(out)).unwrap();
            for (what, damage) in damages {
                let obj = cached_object(&cache, "gfx90a");
                damage(&obj, &cached_object(&cache, "gfx1030"));
                let o = same_as_clean(d, &args, &env, out);
                assert_eq!(
                    std::fs::read(d.join(out)).unwrap(),
                    good,
                    "{mode:?} {what}: not the code of the first build"
                );
                let e = text(&o);
                assert!(
                    e.lines().count() == 1
                        && e.contains("warning")
                        && e.contains(&obj.display().to_string()),
                    "{mode:?} {what}: one warning naming the cached object expected: {e}"
                );
                // Healed: the next build uses the cache again, silently.
                let o = ok(compile_cmd(d).args(&args).envs(env).output().unwrap());
                assert!(o.stderr.is_empty(), "{mode:?} {what}: {}", text(&o));
            }
        }
    });
}

#[test]
fn a_shadowing_header_and_a_changed_cpath_compile_again() {
    crate::support::in_both_configs(|| {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for sub in ["inc1", "inc2", "cp1", "cp2"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        std::fs::write(d.join("k.hip"), kernel_with("a.h")).unwrap();
        std::fs::write(d.join("inc2/a.h"), "#define VALUE 1\n").unwrap();
        let args = [
            "--archs", "gfx90a", "-I", "inc1", "-I", "inc2", "--embed", "fatbin", "k.hip", "-o",
            "k.hipfb",
        ];
        same_as_clean(d, &args, &[], "k.hipfb");
        // A new header earlier in the search list: the compiler would read it.
        std::fs::write(d.join("inc1/a.h"), "#define VALUE 2\n").unwrap();
        same_as_clean(d, &args, &[], "k.hipfb");

        std::fs::write(d.join("c.hip"), kernel_with("c.h")).unwrap();
        std::fs::write(d.join("cp1/c.h"), "#define VALUE 3\n").unwrap();
        std::fs::write(d.join("cp2/c.h"), "#define VALUE 4\n").unwrap();
        let args = [
            "--archs", "gfx90a", "--embed", "fatbin", "c.hip", "-o", "c.hipfb",
        ];
        let cp1 = d.join("cp1");
        let cp2 = d.join("cp2");
        same_as_clean(d, &args, &[("CPATH", &cp1)], "c.hipfb");
        let one = std::fs::read(d.join("c.hipfb")).unwrap();
        same_as_clean(d, &args, &[("CPATH", &cp2)], "c.hipfb");
        assert!(one != std::fs::read(d.join("c.hipfb")).unwrap());
    });
}

#[test]
fn outputs_that_name_an_input_are_refused_before_anything_runs() {
    crate::support::in_both_configs(|| {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let source = kernel_with("v.h");
        std::fs::write(d.join("k.hip"), &source).unwrap();
        std::fs::write(d.join("v.h"), "#define VALUE 1\n").unwrap();
        let cases: [(&[&str], &str); 4] = [
            (&["--embed", "fatbin", "-o", "k.hip"], "k.hip"),
            (&["--embed", "fatbin", "-o", "./v.h"], "v.h"),
            (&["-o", "libk.a", "--depfile", "k.hip"], "k.hip"),
            (&["-o", "libk.a", "--depfile", "libk.a"], "libk.a"),
        ];
        for (args, named) in cases {
            let _ = std::fs::remove_file(d.join("libk.a"));
            let o = compile_cmd(d)
                .args(["--archs", "gfx90a", "k.hip"])
                .args(args)
                .output()
                .unwrap();
            let e = text(&o);
            assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
            assert!(
                e.lines().count() == 1 && e.contains(named),
                "{args:?}: one error naming {named}: {e}"
            );
            assert_eq!(std::fs::read_to_string(d.join("k.hip")).unwrap(), source);
            assert_eq!(
                std::fs::read_to_string(d.join("v.h")).unwrap(),
                "#define VALUE 1\n"
            );
            assert!(!d.join("libk.a").exists(), "{args:?}");
        }
    });
}

#[test]
fn the_output_and_its_depfile_are_committed_together() {
    crate::support::in_both_configs(|| {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("k.hip"), kernel("1")).unwrap();
        let log = d.join("log");
        let counting = script(&d.join("count.sh"), "echo x >> \"$LOG\"\nexec \"$@\"");
        let run = |extra: &[&str]| {
            let output = if extra.contains(&"-o") {
                &[][..]
            } else {
                &["-o", "libk.a"][..]
            };
            compile_cmd(d)
                .args(["--archs", "gfx90a", "k.hip"])
                .args(output)
                .args(extra)
                .env("OFFLOAD_BUILD_LAUNCHER", &counting)
                .env("LOG", &log)
                .output()
                .unwrap()
        };
        ok(run(&["--depfile", "k.d"]));
        let (lib, dep) = (
            std::fs::read(d.join("libk.a")).unwrap(),
            std::fs::read(d.join("k.d")).unwrap(),
        );
        std::fs::write(d.join("k.hip"), kernel("2")).unwrap();
        let before = count(&log);
        // The depfile's directory is missing: an error before any compile, nothing replaced.
        let o = run(&["--depfile", "no-dir/k.d"]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(text(&o).contains("no-dir"), "{}", text(&o));
        assert_eq!(count(&log), before, "a compile ran before the error");
        // The depfile cannot be replaced (a directory of that name): the old pair stays.
        std::fs::create_dir(d.join("k2.d")).unwrap();
        let o = run(&["--depfile", "k2.d"]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(text(&o).contains("k2.d"), "{}", text(&o));
        assert_eq!(std::fs::read(d.join("libk.a")).unwrap(), lib);
        assert_eq!(std::fs::read(d.join("k.d")).unwrap(), dep);
        // A missing output directory with --out-dir: an error before any compile.
        let before = count(&log);
        let o = run(&["--out-dir", "od", "-o", "no-dir/libk.a"]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(text(&o).contains("no-dir"), "{}", text(&o));
        assert_eq!(count(&log), before, "a compile ran before the error");
    });
}

/// Whether the process `pid` has ended (gone, or a zombie).
pub(crate) fn gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

#[test]
fn kill_9_takes_the_compiler_along_and_the_next_run_removes_the_leftovers() {
    crate::support::in_both_configs(|| {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("k.hip"), kernel("1")).unwrap();
        let pidfile = d.join("pid");
        // The compiler (clang 19's probe answers, then a long sleep in its place).
        let hang = script(
            &d.join("hang.sh"),
            &format!(
                "case \"$*\" in *--version*|*--print-supported-cpus*) exec {CLANG} \"$@\";; esac\n\
                 echo $$ > \"$PIDFILE.tmp\"; mv \"$PIDFILE.tmp\" \"$PIDFILE\"; exec sleep 300"
            ),
        );
        let cache = d.join("cache");
        let mut child = compile_with(d, &hang)
            .args([
                "--archs", "gfx90a", "--embed", "fatbin", "k.hip", "-o", "k.hipfb",
            ])
            .env("PIDFILE", &pidfile)
            .env("OFFLOAD_BUILD_CACHE_DIR", &cache)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while !pidfile.exists() {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "no compile started"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let pid = std::fs::read_to_string(&pidfile).unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        let start = Instant::now();
        while !gone(&pid) && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let survived = !gone(&pid);
        if survived {
            let _ = Command::new("kill").args(["-9", pid.trim()]).status();
        }
        assert!(
            !survived,
            "the compiler {} outlived kill -9 of the tool",
            pid.trim()
        );
        let jobs = || -> Vec<String> {
            std::fs::read_dir(&cache)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".job-"))
                .collect()
        };
        assert_eq!(jobs().len(), 1, "the killed job's directory");
        ok(compile_cmd(d)
            .args([
                "--archs", "gfx90a", "--embed", "fatbin", "k.hip", "-o", "k.hipfb",
            ])
            .env("OFFLOAD_BUILD_CACHE_DIR", &cache)
            .output()
            .unwrap());
        assert!(jobs().is_empty(), "left: {:?}", jobs());
    });
}

#[test]
fn a_build_rs_out_dir_that_holds_an_input_is_refused() {
    crate::support::in_both_configs(|| {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        // A header named as the generated `<name>.rs`, in the out_dir.
        std::fs::write(d.join("k.hip"), kernel_with("k.rs")).unwrap();
        std::fs::write(d.join("k.rs"), "#define VALUE 1\n").unwrap();
        let mut b = offload_build::builder::Build::new();
        b.out_dir(d)
            .cargo_metadata(false)
            .compiler(CLANG)
            .file(d.join("k.hip"))
            .archs("gfx90a")
            .env_remove("OFFLOAD_BUILD_LAUNCHER")
            .env_remove("OFFLOAD_BUILD_CACHE_DIR");
        let e = b.try_compile("k").unwrap_err().to_string();
        assert!(e.contains("k.rs") && e.contains("overwrite"), "{e}");
        assert_eq!(
            std::fs::read_to_string(d.join("k.rs")).unwrap(),
            "#define VALUE 1\n"
        );
    });
}
