//! Jobs scheduled by memory (issue 48), in a memory cgroup (v1 or v2) as a small machine or a
//! container gives: sources whose device compile takes a few hundred MB (clang 19 without
//! ROCm instantiating templates, `HEAVY` of them), built by `offload-build compile` inside a
//! cgroup whose limit this test sets.
//!
//! - a compile the kernel kills for lack of memory (more ran at once than the cgroup holds,
//!   the build told it had more) runs again alone: the build passes, with one warning
//!   naming the source, and gives the objects of an unlimited build;
//! - a compile that cannot fit alone is a clear error: the source, its peak, the budget;
//! - the second build uses the peaks the first measured (its progress lines say "its
//!   recorded peak"), and the memory its compiles hold, sampled every 20 ms, stays within the
//!   budget set for the build, with no process killed.
//!
//! These need root (a cgroup of their own) and fail without it, as a missing reference tool
//! does.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

const CLANG: &str = "/usr/lib/llvm-19/bin/clang";
const MIB: u64 = 1 << 20;

/// A HIP source whose device compile holds about `heavy * 0.42` MB (1000: 420 MB, 3.5 s on
/// one core): instantiations of templates, `heavy` of them deep; its kernel `k<n>` stores
/// `value`.
fn heavy_source(heavy: u32, n: usize, value: u32) -> String {
    format!(
        "#define __global__ __attribute__((global))\n\
         template <unsigned long N> struct F {{ static constexpr unsigned long v = F<N - 1>::v * 3 + N; }};\n\
         template <> struct F<0> {{ static constexpr unsigned long v = 1; }};\n\
         template <unsigned long A, int B> struct G {{ static constexpr unsigned long v = F<A>::v + G<A, B - 1>::v; }};\n\
         template <unsigned long A> struct G<A, 0> {{ static constexpr unsigned long v = 0; }};\n\
         template <unsigned long... I> struct Sum;\n\
         template <> struct Sum<> {{ static constexpr unsigned long v = 0; }};\n\
         template <unsigned long H, unsigned long... T> struct Sum<H, T...> {{\n\
           static constexpr unsigned long v = G<H, 40>::v + Sum<T...>::v; }};\n\
         template <class T, T... I> struct Seq {{}};\n\
         template <class S> struct SumOf;\n\
         template <unsigned long... I> struct SumOf<Seq<unsigned long, I...>> {{\n\
           static constexpr unsigned long v = Sum<I...>::v; }};\n\
         extern \"C\" __global__ void k{n}(unsigned long* x) {{\n\
           x[0] = SumOf<__make_integer_seq<Seq, unsigned long, {heavy}>>::v + {value}; }}\n"
    )
}

/// A memory cgroup of this test's, removed when dropped.
struct Cgroup {
    dir: PathBuf,
    v2: bool,
}

impl Cgroup {
    /// A new cgroup with a memory limit of `limit` bytes: cgroup v2 where its memory
    /// controller is enabled, else v1's memory hierarchy.
    fn new(name: &str, limit: u64) -> Cgroup {
        let v2_root = Path::new("/sys/fs/cgroup");
        let v2 = std::fs::read_to_string(v2_root.join("cgroup.controllers"))
            .is_ok_and(|c| c.split_whitespace().any(|x| x == "memory"));
        let root = if v2 {
            v2_root.to_path_buf()
        } else {
            PathBuf::from("/sys/fs/cgroup/memory")
        };
        assert!(
            root.is_dir(),
            "no memory cgroup hierarchy (v2 with the memory controller, or v1 at {}): these \
             tests need one, and root",
            root.display()
        );
        let dir = root.join(format!("offload-build-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir(&dir);
        std::fs::create_dir(&dir).unwrap_or_else(|e| {
            panic!(
                "creating the cgroup {}: {e} (these tests run as root)",
                dir.display()
            )
        });
        let cg = Cgroup { dir, v2 };
        let file = if v2 {
            "memory.max"
        } else {
            "memory.limit_in_bytes"
        };
        std::fs::write(cg.dir.join(file), limit.to_string()).unwrap();
        if v2 {
            let _ = std::fs::write(cg.dir.join("memory.swap.max"), "0");
        }
        cg
    }

    /// `cmd` run inside this cgroup (its shell joins it, then execs the command).
    fn run(&self, cmd: &mut Command) -> Output {
        let procs = self.dir.join("cgroup.procs");
        let program = cmd.get_program().to_owned();
        let mut sh = Command::new("/bin/sh");
        sh.arg("-c")
            .arg("echo $$ > \"$0\" && exec \"$@\"")
            .arg(&procs)
            .arg(program)
            .args(cmd.get_args());
        if let Some(d) = cmd.get_current_dir() {
            sh.current_dir(d);
        }
        for (k, v) in cmd.get_envs() {
            match v {
                Some(v) => sh.env(k, v),
                None => sh.env_remove(k),
            };
        }
        sh.output().unwrap()
    }

    /// The kernel's count of processes it killed in this cgroup for lack of memory.
    fn oom_kills(&self) -> u64 {
        let (file, key) = if self.v2 {
            ("memory.events", "oom_kill ")
        } else {
            ("memory.oom_control", "oom_kill ")
        };
        let text = std::fs::read_to_string(self.dir.join(file)).unwrap_or_default();
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    }

    /// The resident memory of the cgroup's processes now (anonymous memory: page cache,
    /// which the kernel drops before it kills, left out).
    fn resident(&self) -> u64 {
        let stat = std::fs::read_to_string(self.dir.join("memory.stat")).unwrap_or_default();
        let field = |name: &str| {
            stat.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
                .unwrap_or(0u64)
        };
        if self.v2 {
            field("anon")
        } else {
            field("total_rss") + field("total_rss_huge")
        }
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // Empty once its processes ended.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// A project of `n` heavy sources (`h0.hip`…), each `heavy` and storing its own value.
fn project(d: &Path, n: usize, heavy: u32) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            let p = d.join(format!("h{i}.hip"));
            std::fs::write(&p, heavy_source(heavy, i, i as u32)).unwrap();
            p
        })
        .collect()
}

/// `offload-build compile` of `sources` for gfx90a with clang 19 into `out` (a device
/// library's fat binary; its cache in `<out>.offload-build`), with `jobs` at once and its progress lines, none of the variables
/// that choose archs, a launcher, a compiler or a budget from the outer environment.
fn compile(d: &Path, sources: &[PathBuf], jobs: usize, out: &Path) -> Command {
    crate::support::require(CLANG);
    let mut c = Command::new(env!("CARGO_BIN_EXE_offload-build"));
    c.current_dir(d).arg("compile");
    for &var in crate::support::BUILD_ENV_VARS {
        c.env_remove(var);
    }
    for var in [
        "OFFLOAD_BUILD_LAUNCHER",
        "OFFLOAD_BUILD_COMPILE_TIMEOUT",
        "OFFLOAD_BUILD_MEMORY",
        "OFFLOAD_BUILD_MAX_JOBS",
        "RUSTC_WRAPPER",
        "CLANG",
    ] {
        c.env_remove(var);
    }
    c.arg("--compiler")
        .arg(CLANG)
        .args(["--archs", "gfx90a", "--embed", "fatbin"])
        .args([
            "--flag=-nogpulib",
            "--flag=-nogpuinc",
            "--flag=-ftemplate-depth=5000",
        ])
        .arg(format!("-j{jobs}"))
        .args(sources)
        .arg("-o")
        .arg(out);
    crate::support::set_ci(&mut c);
    c
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// While `f` runs, the most resident memory the cgroup held, sampled every 20 ms.
fn sampled<T>(cg: &Cgroup, f: impl FnOnce() -> T) -> (T, u64) {
    let peak = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    let out = std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::SeqCst) {
                peak.fetch_max(cg.resident(), Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let out = f();
        done.store(true, Ordering::SeqCst);
        out
    });
    (out, peak.into_inner())
}

#[test]
fn a_compile_killed_for_memory_runs_again_alone_and_the_build_passes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sources = project(d, 3, 1000);
    // An unlimited build's bytes.
    let o = compile(d, &sources, 2, &d.join("clean.hipfb"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let want = std::fs::read(d.join("clean.hipfb")).unwrap();
    // Told it has 4 GiB, the build runs three compiles of 420 MB at once in a cgroup of
    // 560 MB: the kernel kills some, which run again alone (one fits).
    let cg = Cgroup::new("rerun", 560 * MIB);
    let mut c = compile(d, &sources, 3, &d.join("h.hipfb"));
    c.env("OFFLOAD_BUILD_MEMORY", "4G");
    let o = cg.run(&mut c);
    let err = text(&o);
    assert!(o.status.success(), "{:?}: {err}", o.status);
    assert!(cg.oom_kills() >= 1, "nothing was killed: {err}");
    let warned: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("was killed for lack of memory"))
        .collect();
    assert!(!warned.is_empty(), "{err}");
    assert!(
        warned.iter().all(|l| l.contains(".hip for gfx90a")),
        "{err}"
    );
    assert_eq!(
        std::fs::read(d.join("h.hipfb")).unwrap(),
        want,
        "the objects of an unlimited build"
    );
}

#[test]
fn a_compile_that_cannot_fit_alone_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sources = project(d, 1, 1000);
    let cg = Cgroup::new("alone", 200 * MIB);
    let mut c = compile(d, &sources, 2, &d.join("h.hipfb"));
    let o = cg.run(&mut c);
    let err = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("compiling ") && err.contains("h0.hip for gfx90a"),
        "{err}"
    );
    assert!(err.contains("ran out of memory"), "{err}");
    assert!(err.contains("memory budget of"), "{err}");
    assert!(
        err.contains("cgroup"),
        "the budget says where it comes from: {err}"
    );
    assert!(!d.join("h.hipfb").exists(), "no output");
}

#[test]
fn the_second_build_uses_the_recorded_peaks_and_stays_within_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sources = project(d, 4, 1000);
    let cg = Cgroup::new("peaks", 2048 * MIB);
    let budget = 1000 * MIB;
    let build = || {
        let mut c = compile(d, &sources, 4, &d.join("h.hipfb"));
        c.env("OFFLOAD_BUILD_MEMORY", budget.to_string());
        cg.run(&mut c)
    };
    let first = build();
    let err = text(&first);
    assert!(first.status.success(), "{err}");
    assert!(err.contains("waits for memory"), "{err}");
    assert!(err.contains("a default for its kind"), "{err}");
    // The same jobs again (their keys do not change with the sources' text).
    for (i, s) in sources.iter().enumerate() {
        std::fs::write(s, heavy_source(1000, i, 10 + i as u32)).unwrap();
    }
    let kills = cg.oom_kills();
    let (second, peak) = sampled(&cg, build);
    let err = text(&second);
    assert!(second.status.success(), "{err}");
    assert!(
        err.lines()
            .any(|l| l.contains("waits for memory") && l.contains("its recorded peak")),
        "the second build expects what the first measured: {err}"
    );
    assert_eq!(cg.oom_kills(), kills, "a process was killed: {err}");
    assert!(
        peak <= budget,
        "the compiles held {} MiB at once, more than the {} MiB budget: {err}",
        peak >> 20,
        budget >> 20
    );
    assert!(
        peak > 300 * MIB,
        "the sampling saw the compiles ({} MiB)",
        peak >> 20
    );
}
