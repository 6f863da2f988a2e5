//! Precompiled preambles (issue 25): the commands `Build::try_get_preamble` spells, run by
//! hand, give device code byte-identical to the compile without PCH, and the same errors.
//!
//! For Debian's ROCm 5.2 with its clang 15 (`hip/hip_runtime.h`), and clang 19 and 22
//! (`-nogpulib -nogpuinc`), HIP for `gfx90a`: the preamble is written, precompiled (no
//! diagnostic allowed), and the source compiled without and with the PCH; the code objects
//! must be equal byte for byte. Sources: a saxpy, macros defined before the includes and read
//! by a header without include guards (included twice), a quoted include, `__FILE__` and
//! `__LINE__` in a kernel, `-D`/`-I`/`-std`/`-O` variations and `-fgpu-rdc` (C++20 and `-g`
//! turn the PCH off: clang 15 and 19 reject the preamble of `hip/hip_runtime.h` in C++20, and
//! with `-g` debug entries differ). A body with errors fails both ways with the same
//! `file:line:column: error: message` lines (the rest of clang's output may differ: the build
//! is to rerun without PCH a compile that printed anything; see the module `preamble` of the
//! build crate). The time of each step is printed, not
//! asserted (`-- --nocapture`).
//!
//! Then builds through `Build` and `offload-build compile` with PCH on (the default), counted
//! by `Compiled::pch_made`/`pch_used` (see the tests after `project`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use offload_build::builder::{Build, Command, PreambleCommands};

const CLANG19: &str = "/usr/lib/llvm-19/bin/clang";
const CLANG22: &str = "/usr/lib/llvm-22/bin/clang";

const SAXPY: &str = "#include <hip/hip_runtime.h>

__global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
";

/// No include guard: each inclusion declares what `SCALE` says.
const UNGUARDED: &str = "#ifdef SCALE
static __attribute__((device)) int scale_a = SCALE;
#else
static __attribute__((device)) int scale_b = 1;
#endif
";

const TWICE: &str = "#pragma once
#define N 4
template <class T> __attribute__((device)) T twice(T x) { return x * N; }
";

/// Macros before the includes, a header without guards twice, a quoted include through `-I`,
/// `__FILE__` and `__LINE__` in the kernel, a closed conditional, a macro from `-D`.
const MIXED: &str = "// leading comment
/* a block comment */
#define SCALE 7
#include \"unguarded.h\"
#undef SCALE
#include \"unguarded.h\"
#if defined(__HIP__) && EXTRA > 0
#include <twice.h>
#else
#define NO_HIP 1
#endif
#include <stddef.h>

__attribute__((global)) void k(int *p, const char **f) {
  p[0] = scale_a * __LINE__ + scale_b + twice(EXTRA);
  f[0] = __FILE__;
  p[1] = sizeof(size_t);
}
";

/// Errors in the body: a macro of the preamble, a template of a header.
const BROKEN: &str = "#include <twice.h>
#define BAD(x) (x + undeclared_thing)

__attribute__((global)) void k(int *p) {
  p[0] = BAD(1);
  p[1] = twice((void*)p);
}
";

/// A directory with the sources and `include/twice.h`.
fn sources() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let inc = dir.path().join("include");
    std::fs::create_dir_all(&inc).unwrap();
    for (name, text) in [
        ("saxpy.hip", SAXPY),
        ("mixed.hip", MIXED),
        ("broken.hip", BROKEN),
        ("unguarded.h", UNGUARDED),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    std::fs::write(inc.join("twice.h"), TWICE).unwrap();
    dir
}

/// A builder for `arch` (`build`: `gfx90a`) with `clang` (`None`: discovery, which finds Debian's ROCm) and
/// nothing from the outer environment.
fn build(dir: &Path, clang: Option<&str>, out: &str) -> Build {
    build_for(dir, clang, out, "gfx90a")
}

fn build_for(dir: &Path, clang: Option<&str>, out: &str, arch: &str) -> Build {
    let mut b = Build::new();
    b.out_dir(dir.join(out))
        .cargo_metadata(false)
        .env("CARGO_MANIFEST_DIR", dir)
        .env("CARGO_PKG_NAME", "pch-kernels")
        .env("TARGET", "x86_64-unknown-linux-gnu")
        .include(dir.join("include"))
        .define("EXTRA", Some("3"))
        .arch(arch);
    for &var in crate::support::BUILD_ENV_VARS.iter().chain(&["CLANG"]) {
        b.env_remove(var);
    }
    if let Some(c) = clang {
        b.env("CLANG", c);
    }
    b
}

struct Ran {
    ok: bool,
    stderr: String,
    object: Option<Vec<u8>>,
    seconds: f64,
}

fn run(c: &Command, output: &Path) -> Ran {
    let _ = std::fs::remove_file(output);
    let t = Instant::now();
    let o = c
        .to_command()
        .env("TMPDIR", crate::support::compilers_tmpdir())
        .output()
        .expect("the compiler runs");
    Ran {
        ok: o.status.success(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        object: std::fs::read(output).ok(),
        seconds: t.elapsed().as_secs_f64(),
    }
}

/// The commands for `source`, its PCH made (without a diagnostic), and the compile run
/// without and with it.
fn compile_both(b: &Build, source: &Path) -> (PreambleCommands, Ran, Ran, f64) {
    let p = b
        .try_get_preamble(source)
        .unwrap()
        .unwrap_or_else(|| panic!("{} has a preamble", source.display()));
    std::fs::create_dir_all(p.preamble_file().parent().unwrap()).unwrap();
    std::fs::write(p.preamble_file(), p.preamble()).unwrap();
    let made = run(p.make_pch(), p.pch());
    assert!(
        made.ok && made.stderr.is_empty() && p.pch().is_file(),
        "{:?}\n{}",
        p.make_pch().argv(),
        made.stderr
    );
    let plain = run(p.compile(), p.output());
    let with = run(p.compile_with_pch(), p.output());
    (p, plain, with, made.seconds)
}

/// Each case compiles the same bytes with and without PCH.
fn same_objects(clang: Option<&str>, name: &str, flags: &[&str]) {
    let dir = sources();
    for (i, source) in ["saxpy.hip", "mixed.hip"].iter().enumerate() {
        if clang.is_some() && *source == "saxpy.hip" {
            continue; // no HIP headers without ROCm
        }
        let mut b = build(dir.path(), clang, &format!("out{i}"));
        for f in flags {
            b.flag(f);
        }
        let (p, plain, with, pch_s) = compile_both(&b, &dir.path().join(source));
        assert!(plain.ok, "{:?}\n{}", p.compile().argv(), plain.stderr);
        assert!(
            with.ok,
            "{:?}\n{}",
            p.compile_with_pch().argv(),
            with.stderr
        );
        assert_eq!(plain.stderr, with.stderr, "{name} {source}");
        assert!(
            plain.object.is_some() && plain.object == with.object,
            "{name} {source} {flags:?}: the code objects differ\n{:?}\n{:?}",
            p.compile().argv(),
            p.compile_with_pch().argv()
        );
        println!(
            "{name} {source} {flags:?}: preamble {} bytes; compile {:.2} s, PCH {:.2} s, \
             compile with PCH {:.2} s",
            p.preamble().len(),
            plain.seconds,
            pch_s,
            with.seconds
        );
    }
}

/// The `file:line:column: error: message` lines of clang's output, with `root/` taken off
/// the file names: the compiles run in the build's root and name what is under it relative
/// to it, but a header read through the PCH is named as the PCH recorded it (absolute); a
/// build's diagnostics are shown with absolute names either way.
fn errors(stderr: &str, root: &Path) -> Vec<String> {
    let prefix = format!("{}/", root.display());
    stderr
        .lines()
        .filter(|l| l.contains(": error: "))
        .map(|l| l.strip_prefix(&prefix).unwrap_or(l).to_string())
        .collect()
}

fn same_errors(clang: Option<&str>, name: &str) {
    let dir = sources();
    let b = build(dir.path(), clang, "out");
    let source = dir.path().join("broken.hip");
    let (_, plain, with, _) = compile_both(&b, &source);
    assert!(!plain.ok && !with.ok, "{name}: both compiles fail");
    let errs = errors(&plain.stderr, dir.path());
    // The commands run in the build's root with the source named relative to it
    // (`Command::to_command`), so clang names it `broken.hip`, or absolutely outside the root.
    let at = "broken.hip:5:10: error: use of undeclared identifier";
    assert!(source.is_file());
    assert!(
        errs.iter().any(|l| l.contains(at)),
        "{name}:\n{}",
        plain.stderr
    );
    assert_eq!(
        errs,
        errors(&with.stderr, dir.path()),
        "{name}:\n{}\n---\n{}",
        plain.stderr,
        with.stderr
    );
}

fn require(clang: &str) -> Option<&str> {
    assert!(
        Path::new(clang).is_file(),
        "{clang} is missing: run build-support/setup.sh as root"
    );
    Some(clang)
}

#[test]
fn rocm_clang15_same_objects() {
    crate::rocm::require_rocm();
    same_objects(None, "clang-15+ROCm", &[]);
    same_objects(None, "clang-15+ROCm", &["-std=c++17", "-DMORE=1"]);
    // hipcc's `--hip-version` (passed by default) makes clang pre-include its HIP runtime
    // wrapper, whose weak functions an -fgpu-rdc or -O0 code object keeps and a PCH would
    // reorder: no preamble for those compiles; with clang's own HIP 3.5 they have one.
    let dir = sources();
    for flags in [&["-fgpu-rdc"][..], &["-O0"], &["-O3", "-fgpu-rdc"]] {
        let mut b = build(dir.path(), None, "wrapper");
        for f in flags {
            b.flag(f);
        }
        let p = b.try_get_preamble(dir.path().join("saxpy.hip")).unwrap();
        assert!(p.is_none(), "{flags:?}: a device PCH with the HIP wrapper");
    }
    same_objects(None, "clang-15+ROCm", &["-fgpu-rdc", "--hip-version=3.5"]);
}

#[test]
fn rocm_clang15_same_errors() {
    crate::rocm::require_rocm();
    same_errors(None, "clang-15+ROCm");
}

#[test]
fn clang19_same_objects_and_errors() {
    let c = require(CLANG19);
    same_objects(c, "clang-19", &[]);
    same_objects(c, "clang-19", &["-O1", "-DMORE=2", "-std=c++17"]);
    same_objects(c, "clang-19", &["-fgpu-rdc"]);
    same_errors(c, "clang-19");
}

#[test]
fn clang22_same_objects_and_errors() {
    let c = require(CLANG22);
    same_objects(c, "clang-22", &[]);
    same_objects(c, "clang-22", &["-fgpu-rdc", "-std=c++14"]);
    same_errors(c, "clang-22");
}

/// Two sources of one directory with the same preamble share one PCH; another directory,
/// another architecture or another flag gets another.
#[test]
fn pch_names_follow_their_inputs() {
    let c = require(CLANG19);
    let dir = sources();
    std::fs::write(dir.path().join("other.hip"), MIXED.replace("p[1]", "p[2]")).unwrap();
    let pch = |b: &Build, s: &str| -> PathBuf {
        let p = b.try_get_preamble(dir.path().join(s)).unwrap().unwrap();
        p.pch().file_name().unwrap().into()
    };
    let b = build(dir.path(), c, "out");
    assert_eq!(pch(&b, "mixed.hip"), pch(&b, "other.hip"));
    let arch = build_for(dir.path(), c, "out", "gfx1030");
    assert_ne!(pch(&b, "mixed.hip"), pch(&arch, "mixed.hip"));
    let mut flag = build(dir.path(), c, "out");
    flag.flag("-DMORE");
    assert_ne!(pch(&b, "mixed.hip"), pch(&flag, "mixed.hip"));
    let sub = dir.path().join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::copy(dir.path().join("mixed.hip"), sub.join("mixed.hip")).unwrap();
    assert_ne!(pch(&b, "mixed.hip"), pch(&b, "sub/mixed.hip"));
    // A flag that changes how a PCH is read turns it off.
    for f in ["-Weverything", "-std=c++20", "-g"] {
        let mut off = build(dir.path(), c, "out");
        off.flag(f);
        assert!(
            off.try_get_preamble(dir.path().join("mixed.hip"))
                .unwrap()
                .is_none()
        );
    }
}

// Builds with precompiled preambles (Debian's ROCm 5.2 and its clang 15, found by discovery).

const HEADER: &str = "#pragma once\n#define SCALE 3\n";

/// A kernel after the same leading includes (`hip/hip_runtime.h`, the quoted `common.h`).
fn kernel(name: &str, body: &str) -> String {
    format!(
        "#include <hip/hip_runtime.h>\n#include \"common.h\"\n\n\
         extern \"C\" __global__ void {name}(float* x, int n) {{\n  \
         int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) {{ {body} }}\n}}\n"
    )
}

/// `a.hip`, `b.hip` and `c.hip` sharing their preamble, and `common.h`.
fn project() -> tempfile::TempDir {
    crate::rocm::require_rocm();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("common.h"), HEADER).unwrap();
    for (s, body) in [
        ("a", "x[i] *= SCALE;"),
        ("b", "x[i] += SCALE;"),
        ("c", "x[i] -= 1;"),
    ] {
        std::fs::write(dir.path().join(format!("{s}.hip")), kernel(s, body)).unwrap();
    }
    settle();
    dir
}

/// Lets the clock move on after writing sources or headers: a file changed less than a tick
/// before a job starts is not trusted (the job may have read either version), so its PCH or
/// cache record is not kept, which would make the counts below depend on timing.
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(200));
}

/// A build of `sources` for gfx90a and gfx1030 into `out` (its cache inside, unless
/// `OFFLOAD_BUILD_CACHE_DIR` is set), two jobs.
/// The HIP version clang 15 assumes for Debian's ROCm when none is given.
const OLD_HIP: &str = "--hip-version=3.5";

fn project_build(dir: &Path, out: &str, sources: &[&str]) -> Build {
    let mut b = Build::new();
    b.out_dir(dir.join(out))
        .cargo_metadata(false)
        .env("CARGO_MANIFEST_DIR", dir)
        .env("CARGO_PKG_NAME", "pch-project")
        .env("TARGET", "x86_64-unknown-linux-gnu")
        .archs(["gfx90a", "gfx1030"])
        .jobserver(jobserver::Client::new(1).unwrap());
    for &var in crate::support::BUILD_ENV_VARS.iter().chain(&["CLANG"]) {
        b.env_remove(var);
    }
    // The configuration users get, or CI=1 (`in_both_configs`), whatever CI runs with.
    b.env_remove("OFFLOAD_BUILD_PCH_BACKGROUND");
    // These builds are -fgpu-rdc (several sources): with hipcc's `--hip-version` (passed by
    // default; clang then pre-includes its HIP runtime wrapper, whose weak functions a PCH
    // would reorder in such a code object) their device compiles get no PCH
    // (`pch_realapps.rs` tests that); clang's own HIP 3.5 for Debian's install keeps it.
    b.flag(OLD_HIP);
    crate::support::set_build_ci(&mut b);
    for s in sources {
        b.file(s);
    }
    b
}

/// The container's bytes, and how many PCHs the build made and used.
fn built(b: &Build) -> (Vec<u8>, usize, usize) {
    let c = b.try_compile("k").unwrap();
    (
        std::fs::read(&c.container_file).unwrap(),
        c.pch_made,
        c.pch_used,
    )
}

const ABC: [&str; 3] = ["a.hip", "b.hip", "c.hip"];

/// Three sources with the same preamble, two architectures: one PCH per architecture, every
/// compile uses it, and the container is byte-identical to a build without PCH; an edit of
/// one kernel body uses the PCH again (none made) and equals a build without PCH of the
/// edited source; a change of a header the preamble includes makes the PCHs again. In the
/// default configuration only (`CI` unset): a preamble shared by several compiles has its
/// PCH made by the build itself in both, so a `CI=1` round would repeat the same builds (the
/// tests of single-use preambles, whose PCHs the background makes, run in both).
#[test]
fn build_makes_one_pch_per_arch_with_the_same_bytes() {
    crate::support::in_default_config(|| {
        let dir = project();
        let d = dir.path();
        let (with, made, used) = built(&project_build(d, "pch", &ABC));
        assert_eq!((made, used), (2, 6));
        let (without, made, used) = built(project_build(d, "plain", &ABC).pch(false));
        assert_eq!((made, used), (0, 0));
        assert!(with == without, "the containers differ");

        std::fs::write(d.join("a.hip"), kernel("a", "x[i] = x[i] * SCALE + 1.0f;")).unwrap();
        settle();
        let (with, made, used) = built(&project_build(d, "pch", &ABC));
        assert_eq!((made, used), (0, 2), "the edit reuses the PCHs");
        let (without, ..) = built(project_build(d, "plain", &ABC).pch(false));
        assert!(with == without, "the containers differ after the edit");

        std::fs::write(d.join("common.h"), "#pragma once\n#define SCALE 5\n").unwrap();
        settle();
        let (with, made, used) = built(&project_build(d, "pch", &ABC));
        assert_eq!((made, used), (2, 6), "a header change invalidates the PCHs");
        let (without, ..) = built(project_build(d, "plain", &ABC).pch(false));
        assert!(
            with == without,
            "the containers differ after the header change"
        );
    });
}

/// One source: the cold build makes no PCH (it would not pay), the build after an edit of
/// its body makes one per architecture (or adopts those the cold build left to the
/// background, once they ended, as a person's first edit comes later), and the next edit
/// uses them.
#[test]
fn single_source_gets_its_pch_on_the_second_build() {
    crate::support::in_both_configs(|| {
        let dir = project();
        let d = dir.path();
        let b = project_build(d, "out", &["a.hip"]);
        assert_eq!(built(&b).1, 0);
        background_pchs(&d.join("out"));
        std::fs::write(d.join("a.hip"), kernel("a", "x[i] *= 2.0f;")).unwrap();
        settle();
        let (_, made, used) = built(&b);
        assert_eq!((made, used), (2, 2));
        std::fs::write(d.join("a.hip"), kernel("a", "x[i] *= 4.0f;")).unwrap();
        settle();
        let (with, made, used) = built(&b);
        assert_eq!((made, used), (0, 2));
        let (without, ..) = built(project_build(d, "plain", &["a.hip"]).pch(false));
        assert!(with == without);
    });
}

/// Whether `p` is in a background PCH's directory (`<name>.bg`).
fn in_bg(p: &Path) -> bool {
    p.parent()
        .is_some_and(|d| d.extension() == Some("bg".as_ref()))
}

/// The PCHs that background compilers made in `out`'s cache (in `.bg` directories), by file
/// name, with their inodes; each waited for first (its clang holds the directory's lock
/// while it runs).
fn background_pchs(out: &Path) -> BTreeMap<OsString, u64> {
    let mut found = BTreeMap::new();
    for lock in crate::support::files_under(out)
        .into_iter()
        .filter(|p| in_bg(p) && p.ends_with("lock"))
    {
        let f = std::fs::File::open(&lock).unwrap();
        rustix::fs::flock(&f, rustix::fs::FlockOperation::LockShared).unwrap();
        for e in std::fs::read_dir(lock.parent().unwrap()).unwrap().flatten() {
            if e.path().extension() == Some("pch".as_ref()) {
                found.insert(e.file_name(), e.metadata().unwrap().ino());
            }
        }
    }
    found
}

/// The contents of the PCHs in `out`'s cache by file name: those in background
/// directories (`background`) or the others.
fn pch_contents(out: &Path, background: bool) -> BTreeMap<OsString, Vec<u8>> {
    crate::support::files_under(out)
        .into_iter()
        .filter(|p| in_bg(p) == background && p.extension() == Some("pch".as_ref()))
        .map(|p| {
            (
                p.file_name().unwrap().to_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

/// The PCHs in `out`'s cache, by file name, with their inodes; and whether a background
/// directory is left.
fn cached_pchs(out: &Path) -> (BTreeMap<OsString, u64>, bool) {
    let files = crate::support::files_under(out);
    let pchs = files
        .iter()
        .filter(|p| !in_bg(p) && p.extension() == Some("pch".as_ref()))
        .map(|p| {
            (
                p.file_name().unwrap().to_owned(),
                p.metadata().unwrap().ino(),
            )
        })
        .collect();
    (pchs, files.iter().any(|p| in_bg(p)))
}

/// The cold build of `a.hip` in `d` with `pch_background(true)`: it makes no PCH for its
/// compiles and starts one per architecture after them. The build, and those PCHs once made.
fn cold_with_background(d: &Path) -> (Build, BTreeMap<OsString, u64>) {
    let mut b = project_build(d, "out", &["a.hip"]);
    b.pch_background(true);
    let c = b.try_compile("k").unwrap();
    assert_eq!((c.pch_made, c.pch_used, c.pch_background), (0, 0, 2));
    let pending = background_pchs(&d.join("out"));
    assert_eq!(pending.len(), 2, "{pending:?}");
    (b, pending)
}

/// The build after the cold one: no background directory is left, and the container equals
/// a build of `a.hip` without PCH.
fn same_as_without_pch(d: &Path, c: &offload_build::builder::Compiled) {
    assert!(
        !cached_pchs(&d.join("out")).1,
        "a background directory is left"
    );
    let with = std::fs::read(&c.container_file).unwrap();
    let (without, ..) = built(project_build(d, "plain", &["a.hip"]).pch(false));
    assert!(with == without, "the containers differ");
}

/// With `pch_background(true)`: the cold build of one source makes no PCH for its compiles
/// and starts one per architecture after them, in the background; the build after an edit
/// of the body waits for them, adopts them (the very files, moved into place) and uses them,
/// and its container is byte-identical to a build without PCH.
#[test]
fn background_pch_serves_the_first_edit() {
    let dir = project();
    let d = dir.path();
    let (b, pending) = cold_with_background(d);
    std::fs::write(d.join("a.hip"), kernel("a", "x[i] *= 2.0f;")).unwrap();
    settle();
    let c = b.try_compile("k").unwrap();
    assert_eq!((c.pch_made, c.pch_used, c.pch_background), (2, 2, 0));
    let (adopted, _) = cached_pchs(&d.join("out"));
    assert_eq!(adopted, pending, "the background PCHs are the ones used");
    same_as_without_pch(d, &c);
}

/// A header the preamble reads changes after the background PCH started: clang may have
/// read either version, so the next build does not adopt it but makes the PCHs again, and
/// its container is that of the new header (equal to a build without PCH).
#[test]
fn background_pch_is_not_adopted_after_a_header_change() {
    let dir = project();
    let d = dir.path();
    let (b, pending) = cold_with_background(d);
    // By content, not inode: the file system may give a new PCH the inode the removed
    // background one had.
    let pending_bytes = pch_contents(&d.join("out"), true);
    assert_eq!(pending_bytes.len(), pending.len());
    std::fs::write(d.join("common.h"), "#pragma once\n#define SCALE 7\n").unwrap();
    settle();
    let c = b.try_compile("k").unwrap();
    assert_eq!((c.pch_made, c.pch_used), (2, 2));
    let made = pch_contents(&d.join("out"), false);
    assert_eq!(made.len(), 2);
    assert!(
        made.iter()
            .all(|(name, bytes)| pending_bytes.get(name) != Some(bytes)),
        "adopted"
    );
    same_as_without_pch(d, &c);
}

/// Two out-dirs sharing a cache (`OFFLOAD_BUILD_CACHE_DIR`) make one PCH per architecture
/// between them, not two.
#[test]
fn shared_cache_makes_one_pch_per_arch() {
    crate::support::in_both_configs(|| {
        let dir = project();
        let d = dir.path();
        let cache = d.join("cache");
        let mut first = project_build(d, "one", &["a.hip", "b.hip"]);
        first.env("OFFLOAD_BUILD_CACHE_DIR", &cache);
        let mut second = project_build(d, "two", &["b.hip", "c.hip"]);
        second.env("OFFLOAD_BUILD_CACHE_DIR", &cache);
        let (_, made1, _) = built(&first);
        let (_, made2, used2) = built(&second);
        assert_eq!((made1, made2), (2, 0));
        assert_eq!(used2, 2, "c.hip uses the PCHs the first out-dir made");
    });
}

/// Three sources whose preambles differ after the same first includes, each built on its
/// own (as `make -j` builds a project: one build per source) into out-dirs sharing a cache:
/// the first has nothing to share with; the second shares its first includes with the first
/// source, so it makes the PCH of that prefix (of the prefixes both share, the shortest that
/// includes more than the standard library: `hip/hip_runtime.h` alone); the third, whose
/// licence comment and a comment after an include differ (other byte offsets), uses it; so
/// does a fourth, which includes `common.h` after another header (a PCH of the longer shared
/// prefix would serve the second and third only). Every container equals the build without
/// PCH of the same source.
#[test]
fn separate_builds_share_the_pch_of_their_first_includes() {
    crate::support::in_both_configs(|| {
        let dir = project();
        let d = dir.path();
        let cache = d.join("cache");
        for (s, extra) in [
            ("p", "<cstddef>"),
            ("q", "<climits>"),
            ("r", "<cstdint>"),
            ("s", "<cstdint>"),
        ] {
            let with_extra = if s == "s" {
                format!("#include {extra}\n#include \"common.h\"\n")
            } else {
                format!("#include \"common.h\"\n#include {extra}\n")
            };
            let text =
                kernel(s, "x[i] *= SCALE;").replacen("#include \"common.h\"\n", &with_extra, 1);
            let text = if s == "r" {
                format!("// Copyright (c) another year\n//\n{}", text).replacen(
                    "<hip/hip_runtime.h>",
                    "<hip/hip_runtime.h> // the runtime",
                    1,
                )
            } else {
                text
            };
            std::fs::write(d.join(format!("{s}.hip")), text).unwrap();
        }
        settle();
        let mut expected = [(0, 0), (2, 2), (0, 2), (0, 2)].into_iter();
        for s in ["p.hip", "q.hip", "r.hip", "s.hip"] {
            let mut b = project_build(d, &format!("out-{s}"), &[s]);
            b.env("OFFLOAD_BUILD_CACHE_DIR", &cache);
            let (with, made, used) = built(&b);
            assert_eq!((made, used), expected.next().unwrap(), "{s}");
            let (without, ..) = built(project_build(d, &format!("plain-{s}"), &[s]).pch(false));
            assert!(with == without, "{s}: the containers differ");
        }
    });
}

/// Two sources share their whole preamble, `heavy.h` (several standard headers) and then
/// `<vector>`, which `heavy.h` includes already; a third starts with `heavy.h` and goes on
/// otherwise, so the build makes the PCH of `heavy.h` alone for it. The two take that one too
/// rather than a PCH of their own (their preamble reads nothing more: the weights the build
/// asks clang for): one PCH made, three compiles use it, and the container is the one of the
/// build without PCH. With clang 22 (`-nogpulib -nogpuinc`), in the default configuration
/// (the build makes these PCHs itself in both).
#[test]
fn sources_sharing_a_preamble_take_the_shorter_pch_it_adds_nothing_to() {
    let c = require(CLANG22);
    crate::support::in_default_config(|| {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("include")).unwrap();
        let heavy = "#pragma once\n#include <map>\n#include <sstream>\n#include <string>\n\
                     #include <vector>\n";
        std::fs::write(d.join("heavy.h"), heavy).unwrap();
        for (s, then) in [("a", "<vector>"), ("b", "<vector>"), ("c", "<functional>")] {
            let text = format!(
                "#include \"heavy.h\"\n#include {then}\n\n\
                 extern \"C\" __attribute__((global)) void {s}(float* x) {{ x[0] *= 2.0f; }}\n"
            );
            std::fs::write(d.join(format!("{s}.hip")), text).unwrap();
        }
        settle();
        let of = |out: &str, pch: bool| {
            let mut b = build(d, c, out);
            b.flag("-nogpulib").flag("-nogpuinc").pch(pch);
            for s in ABC {
                b.file(s);
            }
            built(&b)
        };
        let (with, made, used) = of("pch", true);
        assert_eq!((made, used), (1, 3), "one PCH, of heavy.h, for the three");
        let (without, ..) = of("plain", false);
        assert!(with == without, "the containers differ");
    });
}

/// Three sources in directories of their own, each including other standard headers before
/// `<hip/hip_runtime.h>` (no shared prefix), built with their host code (whole-program
/// device compiles): with Debian's ROCm (clang 15 pre-includes its HIP runtime wrapper) the
/// three device compiles take one PCH of the wrapper and `hip_runtime.h` (its preamble file
/// holds that include alone), not the wrapper's alone, and so do the three host compiles; the
/// library is the one of the build without PCH. In the default configuration (`CI` unset).
#[test]
fn sources_including_hips_runtime_after_standard_headers_share_its_pch() {
    crate::rocm::require_rocm();
    crate::support::in_default_config(|| {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("include")).unwrap();
        let mut files = Vec::new();
        for (s, first) in [("a", "<cstdio>"), ("b", "<vector>"), ("c", "<stdlib.h>")] {
            std::fs::create_dir(d.join(s)).unwrap();
            let text = format!(
                "#include {first}\n#include <hip/hip_runtime.h>\n\n\
                 __global__ void {s}(float* x) {{ x[threadIdx.x] *= EXTRA; }}\n"
            );
            let f = d.join(s).join(format!("{s}.hip"));
            std::fs::write(&f, text).unwrap();
            files.push(f);
        }
        settle();
        let of = |out: &str, pch: bool| {
            let mut b = build(d, None, out);
            b.flag("-O3").host_code(true).pch(pch);
            b.env("OFFLOAD_BUILD_PCH_BACKGROUND", "0");
            for f in &files {
                b.file(f);
            }
            let c = b.try_compile("k").unwrap();
            let library = std::fs::read(c.library.as_ref().unwrap()).unwrap();
            (library, c.pch_made, c.pch_used)
        };
        let (with, made, used) = of("pch", true);
        assert_eq!(
            (made, used),
            (2, 6),
            "one PCH for the device compiles, one for the host's"
        );
        let preambles: Vec<String> = crate::support::files_under(&d.join("pch"))
            .into_iter()
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy();
                name.starts_with("preamble-") && name.ends_with(".hip")
            })
            .map(|p| std::fs::read_to_string(p).unwrap())
            .collect();
        assert_eq!(
            preambles, ["#include <hip/hip_runtime.h>\n"; 2],
            "the PCHs' preamble"
        );
        let (without, ..) = of("plain", false);
        assert!(with == without, "the libraries differ");
    });
}

/// Logs each compile's arguments (one line) to `$PCH_LOG`, then runs it.
const LOG_LAUNCHER: &str = "#!/bin/sh\necho \"$*\" >> \"$PCH_LOG\"\nexec \"$@\"\n";

/// `make -j2` of a project built one source per `offload-build compile` (recipes marked `+`:
/// they take make's jobserver), cold, into one out-dir. The first two builds start at once,
/// with no earlier build to share with: each is the first of its family run by make, and
/// makes the PCHs of its first includes beyond the standard library: `light.h` (which
/// includes `<cstddef>` alone) and `hip/hip_runtime.h`, not `light.h` alone. Between them
/// one PCH per architecture; all four compiles use them (the launcher's log), and so do the
/// compiles of a third source built after. The same cold build of one source without make
/// uses none (a lone build would not pay for it). The objects equal `--no-pch` builds'.
#[test]
fn make_j2_builds_share_the_pch_of_their_first_includes_from_the_start() {
    crate::support::in_both_configs(|| {
        let dir = project();
        let d = dir.path();
        std::fs::write(d.join("light.h"), "#pragma once\n#include <cstddef>\n").unwrap();
        for (s, body) in [
            ("a", "x[i] *= SCALE;"),
            ("b", "x[i] += SCALE;"),
            ("c", "x[i] -= 1;"),
        ] {
            let text = format!("#include \"light.h\"\n{}", kernel(s, body));
            std::fs::write(d.join(format!("{s}.hip")), text).unwrap();
        }
        let launcher = d.join("log.sh");
        std::fs::write(&launcher, LOG_LAUNCHER).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755)).unwrap();
        let exe = env!("CARGO_BIN_EXE_offload-build");
        std::fs::write(
            d.join("Makefile"),
            format!(
                "%.o: %.hip\n\t+'{exe}' compile $< --archs 'gfx90a;gfx1030' -o $@ \
                 --out-dir od -q $(NOPCH)\n"
            ),
        )
        .unwrap();
        settle();
        let log = d.join("compiles.log");
        let run = |mut c: std::process::Command| {
            for var in crate::support::BUILD_ENV_VARS.iter().chain(&[
                "CLANG",
                "RUSTC_WRAPPER",
                "MAKEFLAGS",
                "MFLAGS",
                "MAKELEVEL",
                "CARGO_MAKEFLAGS",
            ]) {
                c.env_remove(var);
            }
            c.current_dir(d)
                .env("OFFLOAD_BUILD_LAUNCHER", &launcher)
                .env("PCH_LOG", &log);
            crate::support::set_ci(&mut c);
            let o = c.output().unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let lines = std::fs::read_to_string(&log).unwrap_or_default();
            std::fs::remove_file(&log).ok();
            // Each compile's PCH (`None`: it used none), by source.
            lines
                .lines()
                .map(|l| {
                    let mut args = l.split(' ');
                    let source = l.split(' ').find(|a| a.ends_with(".hip")).unwrap();
                    let pch = args.find(|a| *a == "-include-pch").and(args.nth(1));
                    (source.to_string(), pch.map(PathBuf::from))
                })
                .collect::<Vec<_>>()
        };
        let make = |targets: &[&str]| {
            let mut c = std::process::Command::new("make");
            c.args(["-r", "-j2"]).args(targets);
            run(c)
        };
        let first = make(&["a.o", "b.o"]);
        assert_eq!(first.len(), 4, "{first:?}");
        let mut pchs: BTreeMap<&Path, usize> = BTreeMap::new();
        for (source, pch) in &first {
            let pch = pch.as_deref();
            *pchs
                .entry(pch.unwrap_or_else(|| panic!("{source} used no PCH")))
                .or_default() += 1;
        }
        assert_eq!(pchs.len(), 2, "one PCH per architecture: {pchs:?}");
        assert!(pchs.values().all(|&n| n == 2), "{pchs:?}");
        for pch in pchs.keys() {
            let preamble = std::fs::read_to_string(d.join(pch).with_extension("hip"))
                .unwrap_or_else(|e| panic!("{}: {e}", pch.display()));
            assert_eq!(
                preamble,
                "#include \"light.h\"\n#include <hip/hip_runtime.h>\n"
            );
        }
        let third = make(&["c.o"]);
        assert_eq!(third.len(), 2, "{third:?}");
        assert!(
            third
                .iter()
                .all(|(_, p)| p.as_deref().is_some_and(|p| pchs.contains_key(p)))
        );
        // Without make: a lone cold build.
        let mut lone = std::process::Command::new(exe);
        lone.args(["compile", "a.hip", "--archs", "gfx90a;gfx1030", "-q"])
            .args(["-o", "a-lone.o", "--out-dir", "lone"]);
        let alone = run(lone);
        assert_eq!(alone.len(), 2, "{alone:?}");
        assert!(alone.iter().all(|(_, p)| p.is_none()), "{alone:?}");
        std::fs::rename(d.join("a.o"), d.join("a-pch.o")).unwrap();
        std::fs::rename(d.join("c.o"), d.join("c-pch.o")).unwrap();
        make(&["NOPCH=--no-pch", "a.o", "c.o"]);
        for s in ["a", "c"] {
            let with = std::fs::read(d.join(format!("{s}-pch.o"))).unwrap();
            let without = std::fs::read(d.join(format!("{s}.o"))).unwrap();
            assert!(with == without, "{s}.o differs with and without PCH");
        }
        for out in ["od", "lone"] {
            background_pchs(&d.join(out));
        }
    });
}

/// `OFFLOAD_BUILD_PCH=0` and `offload-build compile --no-pch` make no PCH. The default
/// configuration only: the builds do the same under `CI=1` (the PCHs of a preamble the three
/// sources share are the build's own, not the background's).
#[test]
fn pch_switches_turn_it_off() {
    crate::support::in_default_config(|| {
        let dir = project();
        let d = dir.path();
        let (_, made, used) = built(project_build(d, "env", &ABC).env("OFFLOAD_BUILD_PCH", "0"));
        assert_eq!((made, used), (0, 0));
        let pchs = |out: &str| {
            crate::support::files_under(&d.join(out))
                .into_iter()
                .filter(|p| p.extension().is_some_and(|e| e == "pch"))
                .count()
        };
        for (out, flag, expected) in [("cli", None, 2), ("cli-off", Some("--no-pch"), 0)] {
            std::fs::create_dir_all(d.join(out)).unwrap();
            let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_offload-build"));
            c.current_dir(d)
                .args([
                    "compile",
                    "a.hip",
                    "b.hip",
                    "c.hip",
                    "--archs",
                    "gfx90a;gfx1030",
                ])
                .args(["-q", "-o", &format!("{out}/k.hipfb"), "--out-dir", out])
                .arg(format!("--flag={OLD_HIP}"))
                .args(flag);
            for var in crate::support::BUILD_ENV_VARS.iter().chain(&["CLANG"]) {
                c.env_remove(var);
            }
            crate::support::set_ci(&mut c);
            let o = c.output().unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            assert_eq!(pchs(out), expected, "{flag:?}");
        }
    });
}

/// A compile error in a body after a shared preamble: the build with PCH fails with the
/// same error lines (file, line, column, message) as the build without. The default
/// configuration (the shared preamble's PCH is the build's own in both).
#[test]
fn body_error_reads_the_same_with_pch() {
    crate::support::in_default_config(|| {
        let dir = project();
        let d = dir.path();
        std::fs::write(d.join("b.hip"), kernel("b", "x[i] += undeclared_thing;")).unwrap();
        settle();
        let err = |b: &Build| b.try_compile("k").unwrap_err().to_string();
        let with = err(&project_build(d, "pch", &ABC));
        let without = err(project_build(d, "plain", &ABC).pch(false));
        let at = format!(
            "{}:6:24: error: use of undeclared identifier",
            d.join("b.hip").display()
        );
        assert!(with.contains(&at), "{with}");
        assert_eq!(
            errors(&with, d),
            errors(&without, d),
            "{with}\n---\n{without}"
        );
    });
}

/// A CUDA source of real shape: the toolkit's runtime and fp16 headers and a header of its
/// own in the preamble.
fn cuda_kernel(i: u32) -> String {
    format!(
        "#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n#include \"common.h\"\n\n\
         __global__ void scale{i}(const __half* x, float* y, int n) {{\n  \
         __shared__ float t[256];\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  \
         t[threadIdx.x] = i < n ? __half2float(x[i]) * SCALE + {i} : 0.0f;\n  \
         __syncthreads();\n  if (i < n) y[i] = t[threadIdx.x] + t[0] + __LINE__;\n}}\n"
    )
}

/// CUDA with clang 22 and NVIDIA's wheels (`VIRTUAL_ENV`, CUDA 13): two sources sharing a
/// preamble of `cuda_runtime.h`, `cuda_fp16.h` and a header, `sm_80` and `sm_90`: one PCH
/// per architecture, every compile uses it, and the PTX and cubins are byte-identical to a
/// build without PCH. (Without a toolkit, clang's CUDA builtins come with an `-include`d
/// prelude, which turns PCH off.)
#[test]
fn cuda_clang22_with_the_wheels_toolkit_same_bytes() {
    crate::cuda_toolkit::require_cu13();
    let p = crate::cuda_compile::Project::new();
    std::fs::write(p.path("v.cu"), cuda_kernel(1)).unwrap();
    std::fs::write(p.path("w.cu"), cuda_kernel(2)).unwrap();
    std::fs::write(p.path("common.h"), HEADER).unwrap();
    settle();
    let build = |out: &str| {
        let mut b = p.build(22, "sm_80;sm_90");
        b.out_dir(p.path(out))
            .file(p.path("w.cu"))
            .env("VIRTUAL_ENV", crate::cuda_toolkit::VENV);
        b
    };
    let (with, made, used) = built(&build("pch"));
    assert_eq!((made, used), (2, 4));
    let (without, made, used) = built(build("plain").pch(false));
    assert_eq!((made, used), (0, 0));
    assert!(with == without, "the containers differ");
}
