//! `Embed::HipObject` through Cargo, as crates use it: one workspace (under
//! `CARGO_TARGET_TMPDIR/hostobj-crates`, its target directory kept between runs) with
//!
//! - `ka` (edition 2024, `gfx1100`) and `kb` (edition 2021, `gfx90a;gfx1100`): library crates
//!   whose `build.rs` compile a kernel named `saxpy` with clang 19 (`Build` +
//!   `Embed::HipObject`, `-nogpulib -nogpuinc` whether or not a ROCm is installed: the kernel
//!   defines what it needs) and whose `lib.rs` includes the generated module;
//! - `app`: a program naming both crates' `kernels::SAXPY` handles and `container()`s, and a
//!   program (`quiet`) naming no kernel, only the crates' `ARCHS`;
//! - `clib`: a `cdylib` using only `ka::ARCHS`, loaded by a C program;
//!
//! all built by one `cargo build` with `RUSTFLAGS=-D warnings` (the generated module compiles
//! without a warning in both editions) and linked with a stand-in `libamdhip64.so` that logs
//! every registration with the addresses it was given. Checked: both fat binaries register, in
//! every program, whether or not it names a kernel; each crate's `SAXPY.handle()` is registered
//! for the fat binary at its own `container()` (with its own architectures); the handles differ;
//! each bundle is in the executable once, in `.hip_fatbin`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use object::{Object, ObjectSection};

use crate::support::{BUILD_ENV_VARS, CLANG19, SETUP_HINT, repo_root, require};

/// The stand-in runtime: one line per call, with the addresses it receives.
const SHIM: &str = r#"#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct wrapper { uint32_t magic, version; const unsigned char *binary; void *unused; };
static FILE *log_file(void) {
  static FILE *f;
  if (!f) { const char *p = getenv("HIP_SHIM_LOG"); f = p ? fopen(p, "w") : stderr; if (!f) abort(); setvbuf(f, NULL, _IOLBF, 0); }
  return f;
}
static int handles[16], fatbins;
void **__hipRegisterFatBinary(const void *w) {
  const struct wrapper *wr = w;
  uint64_t entries;
  if (fatbins == 16) abort();
  memcpy(&entries, wr->binary + 24, 8);
  fprintf(log_file(), "fatbin %d binary=%p magic=%08x entries=%llu bundle=%.24s\n", fatbins,
          (const void *)wr->binary, wr->magic, (unsigned long long)entries, (const char *)wr->binary);
  handles[fatbins] = fatbins;
  return (void **)&handles[fatbins++];
}
int __hipRegisterFunction(void **h, const void *host, char *dev, const char *name, int limit,
                          void *tid, void *bid, void *bdim, void *gdim, int *wsize) {
  fprintf(log_file(), "function %d host=%p name=%s\n", *(int *)h, host, name);
  return 0;
}
void __hipRegisterVar(void **h, void *var, char *host, char *dev, int ext, size_t size,
                      int constant, int global) {}
void __hipUnregisterFatBinary(void **h) { fprintf(log_file(), "unregister %d\n", *(int *)h); }
"#;

const KERNEL: &str = "#define __global__ __attribute__((global))\n\
                      extern \"C\" __global__ void saxpy(float a, const float* x, float* y) {\n  \
                      y[0] = a * x[0] + BODY;\n}\n";

fn kernel_crate(name: &str, edition: &str, archs: &str, body: &str) -> Vec<(String, String)> {
    let build_dep = repo_root().join("crates/offload-build");
    vec![
        (
            format!("{name}/Cargo.toml"),
            format!(
                "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"{edition}\"\n\
                 publish = false\n\n[build-dependencies]\noffload-build = {{ path = {:?} }}\n",
                build_dep.display().to_string()
            ),
        ),
        (
            format!("{name}/build.rs"),
            format!(
                "fn main() {{\n    offload_build::Build::new()\n        .file(\"saxpy.hip\")\n        \
                 .archs({archs:?})\n        .compiler({CLANG19:?})\n        \
                 .flag(\"-nogpulib\")\n        .flag(\"-nogpuinc\")\n        \
                 .embed(offload_build::Embed::HipObject)\n        .compile(\"kernels\");\n}}\n"
            ),
        ),
        (format!("{name}/saxpy.hip"), KERNEL.replace("BODY", body)),
        (
            format!("{name}/src/lib.rs"),
            "//! Kernels.\ninclude!(concat!(env!(\"OUT_DIR\"), \"/kernels.rs\"));\n".into(),
        ),
    ]
}

/// The workspace's files (relative path, text); `shim` is the stand-in runtime's directory.
fn workspace(shim: &Path) -> Vec<(String, String)> {
    let link = format!(
        "fn main() {{\n    println!(\"cargo:rustc-link-search=native={0}\");\n    \
         println!(\"cargo:rustc-link-lib=dylib=amdhip64\");\n    \
         println!(\"cargo:rustc-link-arg=-Wl,-rpath,{0}\");\n}}\n",
        shim.display()
    );
    let mut files = vec![(
        "Cargo.toml".to_string(),
        "[workspace]\nresolver = \"2\"\nmembers = [\"ka\", \"kb\", \"app\", \"clib\"]\n\n\
         [profile.dev]\ndebug = false\n"
            .to_string(),
    )];
    files.extend(kernel_crate("ka", "2024", "gfx1100", "y[0]"));
    files.extend(kernel_crate("kb", "2021", "gfx90a;gfx1100", "2.0f * y[0]"));
    let deps = "[dependencies]\nka = { path = \"../ka\" }\nkb = { path = \"../kb\" }\n";
    files.extend([
        (
            "app/Cargo.toml".into(),
            format!(
                "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\
                 publish = false\n\n{deps}"
            ),
        ),
        ("app/build.rs".into(), link.clone()),
        (
            "app/src/main.rs".into(),
            "fn main() {\n    \
             for (name, fatbin, handle, archs) in [\n        \
             (\"ka\", ka::container(), ka::kernels::SAXPY.handle(), ka::ARCHS),\n        \
             (\"kb\", kb::container(), kb::kernels::SAXPY.handle(), kb::ARCHS),\n    ] {\n        \
             println!(\"{name} fatbin={:p} len={} handle={handle:p} archs={}\", \
             fatbin.as_ptr(), fatbin.len(), archs.join(\",\"));\n    }\n    \
             assert_eq!(ka::kernels::SAXPY, ka::kernels::SAXPY);\n}\n"
                .into(),
        ),
        (
            "app/src/bin/quiet.rs".into(),
            "fn main() {\n    println!(\"archs {:?} {:?}\", ka::ARCHS, kb::ARCHS);\n}\n".into(),
        ),
        (
            "clib/Cargo.toml".into(),
            "[package]\nname = \"clib\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
             publish = false\n\n[lib]\ncrate-type = [\"cdylib\"]\n\n\
             [dependencies]\nka = { path = \"../ka\" }\n"
                .into(),
        ),
        ("clib/build.rs".into(), link),
        (
            "clib/src/lib.rs".into(),
            "#[unsafe(no_mangle)]\npub extern \"C\" fn clib_archs() -> usize {\n    \
             ka::ARCHS.len()\n}\n"
                .into(),
        ),
    ]);
    files
}

/// A fatbin registration of the log: id → (binary address, entries).
type Fatbins = BTreeMap<String, (String, u64)>;

/// The registrations in a shim log: fat binaries, and the (fatbin id, host address, name) of
/// every function; checks the wrapper and that every fat binary is unregistered at exit.
fn registrations(log: &str) -> (Fatbins, Vec<(String, String, String)>) {
    let mut fatbins = Fatbins::new();
    let mut functions = Vec::new();
    let mut unregistered = Vec::new();
    for line in log.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let field = |key: &str| {
            words
                .iter()
                .find_map(|w| w.strip_prefix(key))
                .unwrap_or_else(|| panic!("no {key} in {line:?}"))
                .to_string()
        };
        match words.first() {
            Some(&"fatbin") => {
                assert_eq!(field("magic="), "48495046", "{line}");
                assert_eq!(field("bundle="), "__CLANG_OFFLOAD_BUNDLE__", "{line}");
                let entries = field("entries=").parse().expect("entries");
                fatbins.insert(words[1].to_string(), (field("binary="), entries));
            }
            Some(&"function") => {
                functions.push((words[1].to_string(), field("host="), field("name=")))
            }
            Some(&"unregister") => unregistered.push(words[1].to_string()),
            _ => panic!("unexpected shim line {line:?}"),
        }
    }
    let ids: Vec<String> = fatbins.keys().cloned().collect();
    unregistered.sort();
    assert_eq!(
        unregistered, ids,
        "every fat binary unregistered at exit:\n{log}"
    );
    (fatbins, functions)
}

/// Runs a program with the shim; returns its stdout and the shim's log.
fn run_with_shim(dir: &Path, exe: &Path, tag: &str) -> (String, String) {
    let log = dir.join(format!("{tag}.log"));
    let _ = std::fs::remove_file(&log);
    let out = Command::new(exe)
        .env("HIP_SHIM_LOG", &log)
        .env("LD_LIBRARY_PATH", dir.join("shim"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()));
    assert!(
        out.status.success(),
        "{} failed: {}",
        exe.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let log = std::fs::read_to_string(&log)
        .unwrap_or_else(|e| panic!("{tag}: no shim log ({e}): nothing registered"));
    (String::from_utf8_lossy(&out.stdout).into_owned(), log)
}

/// Occurrences of the bundle magic in the file, and in its `.hip_fatbin` section.
fn bundle_magics(exe: &Path) -> (usize, usize) {
    let bytes = std::fs::read(exe).expect("read executable");
    let count = |data: &[u8]| {
        let magic = b"__CLANG_OFFLOAD_BUNDLE__";
        data.windows(magic.len()).filter(|w| w == magic).count()
    };
    let file = object::File::parse(&*bytes).expect("parse executable");
    let section = file
        .section_by_name(".hip_fatbin")
        .map_or(0, |s| count(s.data().expect("section data")));
    (count(&bytes), section)
}

#[test]
fn two_crates_with_a_saxpy_kernel_register_their_own_fat_binaries_once() {
    require(CLANG19);
    require("/usr/bin/cc");
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hostobj-crates");
    let ws = base.join("ws");
    let _ = std::fs::remove_dir_all(&ws);
    let shim = ws.join("shim");
    std::fs::create_dir_all(&shim).expect("mkdir");
    std::fs::write(shim.join("shim.c"), SHIM).expect("write");
    let cc = |args: &[&str]| {
        let out = Command::new("/usr/bin/cc")
            .current_dir(&ws)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run cc: {e} ({SETUP_HINT})"));
        assert!(
            out.status.success(),
            "cc {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    cc(&[
        "-shared",
        "-fPIC",
        "-o",
        "shim/libamdhip64.so",
        "shim/shim.c",
    ]);
    // Whatever name a program records for the runtime, the loader finds the shim first.
    std::os::unix::fs::symlink("libamdhip64.so", shim.join("libamdhip64.so.5")).expect("link");
    for (path, text) in workspace(&shim) {
        let path = ws.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    // The workspace's versions of offload-build's dependencies, from the local registry.
    std::fs::copy(repo_root().join("Cargo.lock"), ws.join("Cargo.lock")).expect("Cargo.lock");

    let target = crate::support::deny_warnings_target_dir();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(&ws)
        .args(["build", "--offline", "--workspace"])
        .env("CARGO_TARGET_DIR", &target)
        .env("RUSTFLAGS", "-D warnings")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS");
    for var in BUILD_ENV_VARS {
        build.env_remove(var);
    }
    let out = build.output().expect("cargo");
    assert!(
        out.status.success(),
        "cargo build with RUSTFLAGS=-D warnings failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bin = target.join("debug");

    // `app`: both crates' kernels and fat binaries.
    let (stdout, log) = run_with_shim(&ws, &bin.join("app"), "app");
    let (fatbins, functions) = registrations(&log);
    assert_eq!(fatbins.len(), 2, "both fat binaries registered:\n{log}");
    let mut handles = Vec::new();
    for (name, archs, entries) in [("ka", "gfx1100", 2), ("kb", "gfx1100,gfx90a", 3)] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} line in:\n{stdout}"));
        let field = |key: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(key))
                .unwrap_or_else(|| panic!("no {key} in {line:?}"))
                .to_string()
        };
        assert_eq!(field("archs="), archs, "{line}");
        // `container()` is the very bundle the runtime registered (the object's `.hip_fatbin`),
        // with the crate's own architectures (host entry + one per arch).
        let fatbin = field("fatbin=");
        let (id, (_, n)) = fatbins
            .iter()
            .find(|(_, (binary, _))| *binary == fatbin)
            .unwrap_or_else(|| panic!("{name}: container() {fatbin} was not registered:\n{log}"));
        assert_eq!(
            *n, entries,
            "{name}: entries of the registered bundle:\n{log}"
        );
        // Its handle is registered for that fat binary, under the kernel's name.
        let handle = field("handle=");
        assert!(
            functions.contains(&(id.clone(), handle.clone(), "saxpy".into())),
            "{name}: SAXPY.handle() {handle} not registered for fat binary {id}:\n{log}"
        );
        handles.push(handle);
    }
    assert_ne!(handles[0], handles[1], "one handle per crate");
    assert_eq!(functions.len(), 2, "{log}");

    // `quiet`: names no kernel and no fat binary; both still register.
    let (_, log) = run_with_shim(&ws, &bin.join("quiet"), "quiet");
    let (fatbins, functions) = registrations(&log);
    assert_eq!((fatbins.len(), functions.len()), (2, 2), "{log}");

    // Each bundle once, in `.hip_fatbin` (not a second copy for `container()`).
    for exe in ["app", "quiet"] {
        assert_eq!(bundle_magics(&bin.join(exe)), (2, 2), "{exe}");
    }

    // A shared library using only `ka::ARCHS`, loaded by a C program: ka registers.
    std::fs::write(
        ws.join("main.c"),
        "#include <stdio.h>\n#include <stddef.h>\nsize_t clib_archs(void);\n\
         int main(void) { printf(\"%zu\\n\", clib_archs()); return 0; }\n",
    )
    .expect("write");
    let lib = bin.display().to_string();
    cc(&[
        "main.c",
        "-o",
        "cprog",
        &format!("-L{lib}"),
        "-lclib",
        &format!("-Wl,-rpath,{lib}"),
    ]);
    let (stdout, log) = run_with_shim(&ws, &ws.join("cprog"), "cprog");
    assert_eq!(stdout.trim(), "1");
    let (fatbins, functions) = registrations(&log);
    assert_eq!((fatbins.len(), functions.len()), (1, 1), "{log}");
    assert_eq!(fatbins.values().next().map(|f| f.1), Some(2), "{log}");
    assert_eq!(bundle_magics(&bin.join("libclib.so")), (1, 1));
}
