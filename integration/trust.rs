//! The default build is never wrong and never waits (issue 36): the ten cases where the
//! default configuration (background PCHs on: `CI` unset) gave stale device code with exit
//! status 0, broke a promise or panicked, each run in that configuration and with `CI=1`.
//!
//! Every build of a case is compared with a clean build of the same inputs (an empty cache of
//! its own, no PCH): a stale cached result, PCH or record, shows as a difference. In the
//! default configuration the cold build must have started a background PCH, and the next
//! build finds it made (the test waits for it), so adoption is what is tested.
//! clang 19 without ROCm (`-nogpulib`), header-free kernels, `gfx90a;gfx1030`.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CLANG: &str = "/usr/lib/llvm-19/bin/clang";

/// The two configurations every case runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Config {
    /// What a user gets: `CI` unset, background PCHs on.
    Default,
    /// `CI=1`: no background PCH.
    Ci,
}

const CONFIGS: [Config; 2] = [Config::Default, Config::Ci];

/// `offload-build compile` in `dir` with clang 19, in `config`, with `env` set.
fn compile(dir: &Path, config: Config, env: &[(&str, &OsStr)]) -> Command {
    compile_by(dir, Path::new(CLANG), config, env)
}

/// [`compile`] with `compiler` (clang 19 or a script in front of it).
fn compile_by(dir: &Path, compiler: &Path, config: Config, env: &[(&str, &OsStr)]) -> Command {
    assert!(
        Path::new(CLANG).is_file(),
        "{CLANG} missing: run build-support/setup.sh"
    );
    let mut c = crate::compile_faults::compile_cmd(dir);
    c.arg("--compiler").arg(compiler);
    for var in [
        "CPATH",
        "C_INCLUDE_PATH",
        "CPLUS_INCLUDE_PATH",
        "CI",
        "OFFLOAD_BUILD_PCH_BACKGROUND",
    ] {
        c.env_remove(var);
    }
    if config == Config::Ci {
        c.env("CI", "1");
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

/// Lets the clock move on after a change, as a person would before building again (a file
/// changed less than a tick before a job is not trusted).
fn settle() {
    std::thread::sleep(Duration::from_millis(200));
}

fn write(path: &Path, text: &str) {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

/// A kernel storing `value` after `includes` (its preamble).
fn kernel(includes: &str, value: &str) -> String {
    format!(
        "{includes}\n#define __global__ __attribute__((global))\n\
         extern \"C\" __global__ void k(int* x) {{ x[0] = {value}; }}\n"
    )
}

/// The background PCH directories under `dir`, each waited for (its clang holds the lock).
fn wait_background(dir: &Path) -> usize {
    let mut n = 0;
    for lock in crate::support::files_under(dir).into_iter().filter(|p| {
        p.ends_with("lock")
            && p.parent()
                .is_some_and(|d| d.extension() == Some("bg".as_ref()))
    }) {
        if let Ok(f) = std::fs::File::open(&lock) {
            rustix::fs::flock(&f, rustix::fs::FlockOperation::LockShared).unwrap();
            n += 1;
        }
    }
    n
}

/// One case in one configuration: a project directory and the arguments of its builds.
struct Case {
    dir: tempfile::TempDir,
    config: Config,
    compiler: PathBuf,
    args: Vec<String>,
    builds: usize,
    /// Whether the last build adopted a background PCH (used the very file).
    adopted: bool,
}

/// The PCH files under `dir` (inode and modification time): in background directories
/// (`bg`) or not.
fn pch_inodes(dir: &Path, bg: bool) -> Vec<(u64, i64, i64)> {
    use std::os::unix::fs::MetadataExt;
    crate::support::files_under(dir)
        .into_iter()
        .filter(|p| p.extension() == Some("pch".as_ref()))
        .filter(|p| {
            p.parent()
                .is_some_and(|d| (d.extension() == Some("bg".as_ref())) == bg)
        })
        // With the modification time: a PCH made after the background one was removed may
        // get its inode number, and is a new file all the same.
        .filter_map(|p| {
            p.metadata()
                .ok()
                .map(|m| (m.ino(), m.mtime(), m.mtime_nsec()))
        })
        .collect()
}

impl Case {
    /// `k.hip` holding `source`, built with `-I` for each of `includes`.
    fn new(config: Config, source: &str, includes: &[&str]) -> Case {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("k.hip"), source);
        let mut args: Vec<String> = ["--archs", "gfx90a;gfx1030", "--embed", "fatbin"]
            .map(String::from)
            .to_vec();
        for i in includes {
            args.extend(["-I".to_string(), i.to_string()]);
        }
        Case {
            dir,
            config,
            compiler: PathBuf::from(CLANG),
            args,
            builds: 0,
            adopted: false,
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn run(&self, out: &str, env: &[(&str, &OsStr)], extra: &[&str]) -> Vec<u8> {
        let o = compile_by(self.dir.path(), &self.compiler, self.config, env)
            .args(&self.args)
            .args(extra)
            .args(["k.hip", "-o", out])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{:?}: {}",
            self.config,
            String::from_utf8_lossy(&o.stderr)
        );
        std::fs::read(self.path(out)).unwrap()
    }

    /// Builds with `env` and checks the container against a clean build's; then waits for
    /// the background PCHs it started (in the default configuration the first build must
    /// start one). The container.
    fn build(&mut self, env: &[(&str, &OsStr)]) -> Vec<u8> {
        let pending = pch_inodes(self.dir.path(), true);
        let built = self.run("k.hipfb", env, &[]);
        self.adopted = pch_inodes(self.dir.path(), false)
            .iter()
            .any(|i| pending.contains(i));
        let started = wait_background(self.dir.path());
        if self.builds == 0 {
            match self.config {
                Config::Default => assert!(started > 0, "the cold build started no background PCH"),
                Config::Ci => assert_eq!(started, 0, "a background PCH under CI"),
            }
        }
        self.builds += 1;
        let clean = tempfile::tempdir().unwrap();
        let mut env = env.to_vec();
        env.push(("OFFLOAD_BUILD_CACHE_DIR", clean.path().as_os_str()));
        let out_dir = clean.path().join("out");
        let clean = self.run(
            "clean.hipfb",
            &env,
            &["--no-pch", "--out-dir", out_dir.to_str().unwrap()],
        );
        assert!(
            built == clean,
            "{:?}, build {}: the container differs from a clean build's (stale device code)",
            self.config,
            self.builds
        );
        built
    }
}

/// Case 1: `CPATH` changes between two builds (each directory holding a `val.h`).
#[test]
fn a_changed_cpath_is_never_served_from_a_background_pch() {
    for config in CONFIGS {
        let mut c = Case::new(config, &kernel("#include \"val.h\"", "VALUE"), &[]);
        write(&c.path("i1/val.h"), "#define VALUE 1\n");
        write(&c.path("i2/val.h"), "#define VALUE 2\n");
        let (i1, i2) = (c.path("i1"), c.path("i2"));
        let one = c.build(&[("CPATH", i1.as_os_str())]);
        let two = c.build(&[("CPATH", i2.as_os_str())]);
        assert!(one != two, "the two headers give the same code");
    }
}

/// Case 2: a header of the same name appears in the source directory, shadowing the one
/// found through `-I inc` (quoted includes look there first).
#[test]
fn a_header_appearing_beside_the_source_is_read() {
    for config in CONFIGS {
        let mut c = Case::new(config, &kernel("#include \"val.h\"", "VALUE"), &["inc"]);
        write(&c.path("inc/val.h"), "#define VALUE 1\n");
        let one = c.build(&[]);
        write(&c.path("val.h"), "#define VALUE 2\n");
        settle();
        assert!(one != c.build(&[]));
    }
}

/// Gives `b` the modification time of `a`: with the same size too, clang's own check of a
/// PCH's inputs (size and time) cannot tell them apart; only the content can.
fn same_times(a: &Path, b: &Path) {
    let t = std::fs::metadata(a).unwrap().modified().unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(b).unwrap();
    f.set_modified(t).unwrap();
}

/// Case 3: an included header is a symbolic link pointed elsewhere, and then the kernel's
/// body changes (a later build must not trust what the first one adopted).
#[test]
fn a_repointed_symlink_is_its_new_content() {
    for config in CONFIGS {
        let mut c = Case::new(config, &kernel("#include \"cfg.h\"", "VALUE"), &["inc"]);
        write(&c.path("inc/cfg_off.h"), "#define VALUE 1\n");
        write(&c.path("inc/cfg_on.h"), "#define VALUE 2\n");
        same_times(&c.path("inc/cfg_off.h"), &c.path("inc/cfg_on.h"));
        std::os::unix::fs::symlink("cfg_off.h", c.path("inc/cfg.h")).unwrap();
        settle();
        let one = c.build(&[]);
        std::fs::remove_file(c.path("inc/cfg.h")).unwrap();
        std::os::unix::fs::symlink("cfg_on.h", c.path("inc/cfg.h")).unwrap();
        settle();
        let two = c.build(&[]);
        assert!(one != two);
        assert!(!c.adopted, "a PCH of the old target was adopted");
        write(&c.path("k.hip"), &kernel("#include \"cfg.h\"", "VALUE + 1"));
        settle();
        c.build(&[]);
    }
}

/// Case 3, the other way: an include directory swapped by two renames.
#[test]
fn an_include_directory_renamed_over_is_its_new_content() {
    for config in CONFIGS {
        let mut c = Case::new(config, &kernel("#include \"val.h\"", "VALUE"), &["inc"]);
        write(&c.path("inc/val.h"), "#define VALUE 1\n");
        write(&c.path("inc_new/val.h"), "#define VALUE 2\n");
        same_times(&c.path("inc/val.h"), &c.path("inc_new/val.h"));
        settle();
        let one = c.build(&[]);
        std::fs::rename(c.path("inc"), c.path("inc_old")).unwrap();
        std::fs::rename(c.path("inc_new"), c.path("inc")).unwrap();
        settle();
        assert!(one != c.build(&[]));
        assert!(!c.adopted, "a PCH of the old directory was adopted");
    }
}

/// Case 4: `__has_include("extra.h")`, and `extra.h` is created later.
#[test]
fn a_header_that_has_include_asked_for_is_read_once_it_exists() {
    let source = kernel(
        "#if __has_include(\"extra.h\")\n#include \"extra.h\"\n#else\n#define VALUE 1\n#endif",
        "VALUE",
    );
    for config in CONFIGS {
        let mut c = Case::new(config, &source, &[]);
        let one = c.build(&[]);
        write(&c.path("extra.h"), "#define VALUE 2\n");
        settle();
        assert!(one != c.build(&[]));
    }
}

/// Case 5: a header appears in the directory of the header that includes it (`inc/a.h`
/// includes `"val.h"`, found in `-I dir2`; then `inc/val.h` is created).
#[test]
fn a_header_appearing_beside_its_includer_is_read() {
    for config in CONFIGS {
        let mut c = Case::new(config, &kernel("#include \"inc/a.h\"", "VALUE"), &["dir2"]);
        write(&c.path("inc/a.h"), "#include \"val.h\"\n");
        write(&c.path("dir2/val.h"), "#define VALUE 1\n");
        settle();
        let one = c.build(&[]);
        write(&c.path("inc/val.h"), "#define VALUE 2\n");
        settle();
        assert!(one != c.build(&[]));
    }
}

/// Case 6: under Cargo, the build script is rerun when a variable the compiler reads changes
/// (`rerun-if-env-changed` for each, set or not), and when a header appears where the
/// compile looked for one (`rerun-if-changed` for the source's and the includer's
/// directories).
#[test]
fn cargo_is_told_every_variable_and_every_directory_looked_in() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        &d.join("src/k.hip"),
        &kernel(
            "#include \"inc/a.h\"\n#if __has_include(\"opt.h\")\n#endif",
            "VALUE",
        ),
    );
    write(&d.join("src/inc/a.h"), "#include \"val.h\"\n");
    write(&d.join("dir2/val.h"), "#define VALUE 1\n");
    settle();
    let mut b = offload_build::Build::new();
    b.out_dir(d.join("out"))
        .cargo_metadata(false)
        .compiler(CLANG)
        .env("CARGO_MANIFEST_DIR", d)
        .env("CARGO_PKG_NAME", "trust")
        .env("TARGET", "x86_64-unknown-linux-gnu")
        .env("CPATH", d.join("nothing-here"))
        .archs(["gfx90a"])
        .embed(offload_build::Embed::ContainerOnly)
        .include(d.join("dir2"))
        .file("src/k.hip")
        .jobserver(jobserver::Client::new(1).unwrap());
    for &var in crate::support::BUILD_ENV_VARS {
        b.env_remove(var);
    }
    let c = b.try_compile("k").unwrap();
    let lines = &c.cargo_directives;
    for var in [
        "CPATH",
        "C_INCLUDE_PATH",
        "CPLUS_INCLUDE_PATH",
        "CCC_OVERRIDE_OPTIONS",
        "DEVICE_LIB_PATH",
        "SOURCE_DATE_EPOCH",
    ] {
        let want = format!("rerun-if-env-changed={var}");
        assert!(lines.contains(&want), "no {want} in {lines:#?}");
    }
    for dir in ["src", "src/inc"] {
        let want = format!("rerun-if-changed={}", d.join(dir).display());
        assert!(lines.contains(&want), "no {want} in {lines:#?}");
    }
    let out = format!("rerun-if-changed={}", d.join("out").display());
    assert!(
        !lines.iter().any(|l| l.starts_with(&out)),
        "the output directory is watched: {lines:#?}"
    );
}

fn script(path: &Path, body: &str) -> PathBuf {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_path_buf()
}

/// The process IDs written into the files of `dir`, once `n` are there.
fn pids(dir: &Path, n: usize) -> Vec<String> {
    let start = Instant::now();
    loop {
        let found: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .filter(|e| e.path().extension() == Some("pid".as_ref()))
            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
            .filter(|t| t.ends_with('\n'))
            .collect();
        if found.len() >= n {
            return found;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "nothing started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Case 7: `kill -9` of `compile` while a launcher runs the compiler and has a child of its
/// own (as clang's driver has `cc1`): soon after, nothing of the build runs (within a second
/// on an idle machine; five are allowed, as a loaded one schedules the reaper late).
#[test]
fn kill_9_leaves_nothing_running() {
    for config in CONFIGS {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(&d.join("k.hip"), &kernel("", "1"));
        std::fs::create_dir(d.join("pids")).unwrap();
        let launcher = script(
            &d.join("launch.sh"),
            "sleep 300 &\necho $! > \"$PIDS/$$.sleep.pid\"\necho $$ > \"$PIDS/$$.pid\"\n\"$@\"\nwait",
        );
        let mut child = compile(d, config, &[("PIDS", d.join("pids").as_os_str())])
            .env("OFFLOAD_BUILD_LAUNCHER", &launcher)
            .args(["--archs", "gfx90a;gfx1030", "--embed", "fatbin", "-j", "2"])
            .args(["k.hip", "-o", "k.hipfb"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = pids(&d.join("pids"), 4);
        // SAFETY: kill(2) on our own child, not yet waited for.
        unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
        child.wait().unwrap();
        let killed = std::time::Instant::now();
        let still = || -> Vec<&String> {
            started
                .iter()
                .filter(|p| !crate::cache_faults::gone(p))
                .collect()
        };
        let mut left = still();
        while !left.is_empty() && killed.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(100));
            left = still();
        }
        for p in &left {
            let _ = Command::new("kill").args(["-9", p.trim()]).status();
        }
        assert!(
            left.is_empty(),
            "{config:?}: {left:?} outlived kill -9 of the tool by five seconds"
        );
    }
}

/// Case 8: a build never waits on a background PCH's clang (at a lower priority, which
/// its own compiles would starve): the build after the cold one takes it over — its process
/// group is killed; its one compile goes without (a PCH would not pay for it) and the PCH
/// starts again in the background — and gives the clean build's code. The background clang
/// here sleeps for five minutes before compiling.
#[test]
fn a_running_background_pch_is_taken_over_not_waited_for() {
    let mut c = Case::new(Config::Default, &kernel("#include \"val.h\"", "VALUE"), &[]);
    write(&c.path("val.h"), "#define VALUE 1\n");
    std::fs::create_dir(c.path("pids")).unwrap();
    let slow = c.path("slow");
    std::fs::write(&slow, "").unwrap();
    let wrapper = script(
        &c.path("clang.sh"),
        &format!(
            "case \"$*\" in *-emit-pch*) if [ -e \"{}\" ]; then\n\
             echo $$ > \"$PIDS/$$.pid\"; sleep 300; fi;; esac\nexec {CLANG} \"$@\"",
            slow.display()
        ),
    );
    c.compiler = wrapper;
    let pids_dir = c.path("pids");
    let env = [("PIDS", pids_dir.as_os_str())];
    settle();
    c.run("k.hipfb", &env, &[]);
    let sleeping = pids(&pids_dir, 1);
    std::fs::remove_file(&slow).unwrap();
    write(&c.path("k.hip"), &kernel("#include \"val.h\"", "VALUE + 1"));
    settle();
    let start = Instant::now();
    let built = c.run("k.hipfb", &env, &[]);
    let waited = start.elapsed();
    assert!(
        wait_background(c.dir.path()) >= 1,
        "the PCH taken over was not started again"
    );
    let left: Vec<&String> = sleeping
        .iter()
        .filter(|p| !crate::cache_faults::gone(p))
        .collect();
    for p in &left {
        let _ = Command::new("kill").args(["-9", p.trim()]).status();
    }
    assert!(left.is_empty(), "the background clang {left:?} still runs");
    assert!(
        waited < Duration::from_secs(200),
        "the build waited for the background clang ({waited:?})"
    );
    let clean = tempfile::tempdir().unwrap();
    let out_dir = clean.path().join("out");
    let again = c.run(
        "clean.hipfb",
        &[("OFFLOAD_BUILD_CACHE_DIR", clean.path().as_os_str())],
        &["--no-pch", "--out-dir", out_dir.to_str().unwrap()],
    );
    assert!(built == again, "the container differs from a clean build's");
}

/// Case 9: directive text with a line break (here a carriage return in a variable the build
/// warns about) never panics a build script, and Cargo gets it on one line.
#[test]
fn a_line_break_in_a_warning_is_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(&d.join("k.hip"), &kernel("", "1"));
    for config in CONFIGS {
        let mut b = offload_build::Build::new();
        b.out_dir(d.join("out"))
            .cargo_metadata(false)
            .compiler(CLANG)
            .env("CARGO_MANIFEST_DIR", d)
            .env("CARGO_PKG_NAME", "trust")
            .env("TARGET", "x86_64-unknown-linux-gnu")
            .env("OFFLOAD_BUILD_MAX_JOBS", "2\rx\ncargo:rustc-env=INJECTED=1")
            .archs(["gfx90a"])
            .embed(offload_build::Embed::ContainerOnly)
            .file("k.hip")
            .jobserver(jobserver::Client::new(1).unwrap());
        if config == Config::Ci {
            b.env("CI", "1");
        }
        for &var in crate::support::BUILD_ENV_VARS {
            b.env_remove(var);
        }
        let c = b.try_compile("k").unwrap();
        let warning = c
            .cargo_directives
            .iter()
            .find(|l| l.starts_with("warning=") && l.contains("OFFLOAD_BUILD_MAX_JOBS"))
            .expect("a warning about OFFLOAD_BUILD_MAX_JOBS");
        assert!(warning.contains(r"2\rx"), "{warning:?}");
        assert!(
            c.cargo_directives
                .iter()
                .all(|l| !l.contains(['\r', '\n']) && !l.starts_with("rustc-env")),
            "{:#?}",
            c.cargo_directives
        );
    }
}

/// Case 10: targets whose object is not ELF64 (x32, ILP32) or not ELF (UEFI) get a clear
/// error naming the target, not an object the linker refuses later.
#[test]
fn targets_of_other_object_classes_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(&d.join("k.hip"), &kernel("", "1"));
    for target in [
        "x86_64-unknown-linux-gnux32",
        "aarch64-unknown-linux-gnu_ilp32",
        "x86_64-unknown-uefi",
    ] {
        let o = compile(d, Config::Default, &[])
            .args([
                "--archs", "gfx90a", "--target", target, "k.hip", "-o", "libk.a",
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{target}: {err}");
        assert!(err.contains(target), "{target}: {err}");
        assert!(
            !d.join("libk.a").exists(),
            "{target}: an output was written"
        );
    }
}

/// Issue 49, case 2: `kill -9` of `compile` leaves its staged output
/// (`.libk.a.<pid>.XXXXXX.tmp`, made before the compiles run) beside the output; the next
/// build removes it, and leaves a running build's own.
#[test]
fn a_killed_builds_staged_output_is_removed_by_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(&d.join("k.hip"), &kernel("", "1"));
    std::fs::create_dir(d.join("pids")).unwrap();
    let launcher = script(
        &d.join("launch.sh"),
        "echo $$ > \"$PIDS/$$.pid\"\nexec sleep 300",
    );
    let temporaries = || -> Vec<String> {
        std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    };
    let mut child = compile(d, Config::Ci, &[("PIDS", d.join("pids").as_os_str())])
        .env("OFFLOAD_BUILD_LAUNCHER", &launcher)
        .args(["--archs", "gfx90a", "k.hip", "-o", "libk.a"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = pids(&d.join("pids"), 1);
    // SAFETY: kill(2) on our own child, not yet waited for.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
    for p in &started {
        let _ = Command::new("kill").args(["-9", p.trim()]).status();
    }
    let left = temporaries();
    assert!(
        left.len() == 1 && left[0].starts_with(".libk.a."),
        "the killed build staged {left:?}"
    );
    // A running writer's staged file (this test's own process ID) is left alone.
    let running = format!(".libk.a.{}.aB3dE9.tmp", std::process::id());
    write(&d.join(&running), "");
    for config in CONFIGS {
        let o = compile(d, config, &[])
            .args(["--archs", "gfx90a", "k.hip", "-o", "libk.a"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(temporaries(), std::slice::from_ref(&running), "{config:?}");
    }
}

/// Issue 49, case 3: a directory given as a source is named as a directory.
#[test]
fn a_directory_as_a_source_is_named_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("dsrc.hip")).unwrap();
    let o = compile(d, Config::Default, &[])
        .args(["--archs", "gfx90a", "dsrc.hip", "-o", "libd.a"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("dsrc.hip") && err.contains("a directory") && !err.contains("no such file"),
        "{err}"
    );
}

/// A CUDA kernel (no headers) adding `value` times `SCALE` (a define the build gives).
fn cuda_kernel(name: &str, value: &str) -> String {
    format!(
        "#define __global__ __attribute__((global))\n\
         extern \"C\" __global__ void {name}(float* x) {{ x[0] += {value} * SCALE; }}\n"
    )
}

/// The build `name` of `common.cu` and `own_<name>.cu` under `src` into `out` (its cache
/// there), with `-DSCALE=<scale>`: clang 22 for `sm_75;sm_90` (PTX and cubins, the wheels'
/// ptxas), in the default configuration (`CI` unset). `-nocudainc`: the kernels need no
/// header, and clang's CUDA wrapper headers took 1.1 of a compile's 1.2 s.
fn cuda_build(src: &Path, out: &Path, name: &str, scale: u32) -> offload_build::Build {
    const VENV: &str = "/opt/offload-build/nvidia-venv";
    let clang = "/usr/lib/llvm-22/bin/clang";
    assert!(
        Path::new(clang).is_file() && Path::new(VENV).is_dir(),
        "{clang} or {VENV} missing: run build-support/setup.sh"
    );
    let mut b = offload_build::Build::new();
    b.out_dir(out)
        .cargo_metadata(false)
        .compiler(clang)
        .files([src.join("common.cu"), src.join(format!("own_{name}.cu"))])
        .define("SCALE", Some(scale.to_string().as_str()))
        .flag("-nocudainc")
        .archs("sm_75;sm_90")
        .jobserver(jobserver::Client::new(2).unwrap());
    for var in crate::support::CUDA_ENV_VARS.iter().chain(&[
        "CI",
        "OFFLOAD_BUILD_CACHE_DIR",
        "OFFLOAD_BUILD_LAUNCHER",
    ]) {
        b.env_remove(var);
    }
    b.env("VIRTUAL_ENV", VENV);
    b
}

/// Each image (architecture, kind, bytes) of a build's container.
fn cuda_images(c: &offload_build::builder::Compiled) -> Vec<(String, String, Vec<u8>)> {
    crate::cuda_compile::images(c)
        .into_iter()
        .map(|(a, k, d)| (a, format!("{k:?}"), d))
        .collect()
}

/// Trust case 4 (issue 49): two `Build`s of one build script run at once in two threads with
/// one `OUT_DIR`, so one cache: `common.cu` both compile with the same flags (the same jobs,
/// whose PTX and cubins they write at once), and a source of each own. Each build's images
/// are those a build of its own gives in a clean out-dir: cold, after an edit of the shared
/// source, and after every cached cubin was damaged without changing its size (a record
/// names each output's size and content hash: the damaged ones are compiled again, not
/// packed). Clang 22's CUDA with the wheels' ptxas, default configuration.
#[test]
fn two_builds_at_once_in_one_out_dir_are_each_a_clean_builds() {
    let dir = tempfile::tempdir().unwrap();
    let (src, shared) = (dir.path().join("src"), dir.path().join("out"));
    let builds = [("a", 2), ("b", 3)];
    let round = |label: &str| {
        let together: Vec<_> = std::thread::scope(|s| {
            let running: Vec<_> = builds
                .iter()
                .map(|&(name, scale)| {
                    let (src, shared) = (&src, &shared);
                    s.spawn(move || {
                        cuda_build(src, shared, name, scale)
                            .try_compile(name)
                            .map_err(|e| e.to_string())
                    })
                })
                .collect();
            running.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (&(name, scale), got) in builds.iter().zip(together) {
            let got = got.unwrap_or_else(|e| panic!("{label}: build {name}: {e}"));
            let clean = dir.path().join(format!("clean-{label}-{name}"));
            let want = cuda_build(&src, &clean, name, scale)
                .try_compile(name)
                .unwrap_or_else(|e| panic!("{label}: clean build {name}: {e}"));
            let (got, want) = (cuda_images(&got), cuda_images(&want));
            assert_eq!(
                got.len(),
                8,
                "{label}: {name}: two sources, PTX and cubin for two archs"
            );
            assert!(
                got == want,
                "{label}: build {name}, run beside the other in one out-dir, differs from a \
                 clean build"
            );
        }
    };
    write(&src.join("common.cu"), &cuda_kernel("common", "1.0f"));
    for (name, _) in builds {
        write(
            &src.join(format!("own_{name}.cu")),
            &cuda_kernel(&format!("own_{name}"), "4.0f"),
        );
    }
    settle();
    round("cold");
    write(&src.join("common.cu"), &cuda_kernel("common", "7.0f"));
    settle();
    round("edited");
    let cubins: Vec<PathBuf> = crate::support::files_under(&shared)
        .into_iter()
        .filter(|p| p.extension() == Some(OsStr::new("cubin")))
        .collect();
    assert!(
        !cubins.is_empty(),
        "no cached cubin under {}",
        shared.display()
    );
    for c in &cubins {
        let mut data = std::fs::read(c).unwrap();
        let mid = data.len() / 2;
        data[mid] ^= 0x55;
        std::fs::write(c, data).unwrap();
    }
    settle();
    round("damaged");
}
