//! Inputs of the host-object and inspection tests, built once per test process with the real
//! tools: a HIP translation unit with two kernels and one device variable compiled by clang 19
//! for `gfx90a:xnack+` and `gfx1100` (its object, its `.hipfb` bundle and its two code objects),
//! a second translation unit with one kernel, the same source through the new offload driver
//! of clang 19 and of clang 22,
//! and a HIP runtime shim, `libamdhip64.so`, that records every registration call and looks
//! each code object up through comgr (ROCm 5.2, Debian's `libamd-comgr-dev`).
//!
//! The shim writes one line per call to `$HIP_SHIM_LOG`; for each fat binary it asks comgr
//! for every ISA in `$HIP_SHIM_ISAS` — one ISA per call, because comgr 5.2 misses matches when
//! given several (host-objects §6) — passing the first 4096 bytes as the CLR does, and writes
//! the code object comgr points at to `$HIP_SHIM_DUMP/fatbin<N>-isa<M>.co`. Kernel handles are
//! named through `dladdr`, so executables are linked with `-rdynamic`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::support::fixtures::{RUNTIME_DECLS, process_dir};
use crate::support::{CLANG19, SETUP_HINT, require};

pub const LLVM19_BIN: &str = "/usr/lib/llvm-19/bin";
/// clang 22, whose linker wrapper reads the LLVM 21+ entry layout.
pub const CLANG22: &str = "/usr/lib/llvm-22/bin/clang";
/// The ISAs the shim looks up: the xnack+ code object matches a device with xnack+.
pub const ISAS: &str = "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack+,amdgcn-amd-amdhsa--gfx1100";
/// Code objects in the order of `ISAS`.
pub const ARCHS: [&str; 2] = ["gfx90a:xnack+", "gfx1100"];

const TU_K: &str = r#"__attribute__((device)) int dev_var;
extern "C" __attribute__((global)) void kern_c(float *p) { p[0] = dev_var; }
__attribute__((global)) void kern_cpp(float *p, int n) { p[n] = 1.0f; }
"#;

const TU_K2: &str = r#"extern "C" __attribute__((global)) void kern_two(int *p) { p[1] = 2; }
"#;

/// The recording HIP runtime stand-in.
pub const SHIM: &str = r#"#define _GNU_SOURCE
#include <amd_comgr.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct wrapper { uint32_t magic, version; const unsigned char *binary; void *unused; };
static FILE *log_file(void) {
  static FILE *f;
  if (!f) { const char *p = getenv("HIP_SHIM_LOG"); f = p ? fopen(p, "w") : stderr; if (!f) abort(); setvbuf(f, NULL, _IOLBF, 0); }
  return f;
}
static const char *sym(const void *p) {
  Dl_info i;
  if (p && dladdr(p, &i) && i.dli_sname && i.dli_saddr == p) return i.dli_sname;
  return "?";
}
static int fatbins;
void **__hipRegisterFatBinary(const void *w) {
  const struct wrapper *wr = w;
  FILE *f = log_file();
  int id = fatbins++;
  fprintf(f, "fatbin %d magic=%08x version=%u\n", id, wr->magic, wr->version);
  const char *isas = getenv("HIP_SHIM_ISAS");
  const char *dump = getenv("HIP_SHIM_DUMP");
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", isas ? isas : "");
  int n = 0;
  for (char *isa = strtok(buf, ","); isa; isa = strtok(NULL, ","), n++) {
    amd_comgr_data_t data;
    amd_comgr_code_object_info_t info = {isa, 0, 0};
    amd_comgr_status_t st = amd_comgr_create_data(AMD_COMGR_DATA_KIND_FATBIN, &data);
    if (!st) st = amd_comgr_set_data(data, 4096, (const char *)wr->binary);
    if (!st) st = amd_comgr_lookup_code_object(data, &info, 1);
    amd_comgr_release_data(data);
    fprintf(f, "lookup %d %s status=%d size=%llu\n", id, isa, (int)st, (unsigned long long)info.size);
    if (!st && info.size && dump) {
      char path[4096];
      snprintf(path, sizeof path, "%s/fatbin%d-isa%d.co", dump, id, n);
      FILE *o = fopen(path, "wb");
      if (!o || fwrite(wr->binary + info.offset, 1, info.size, o) != info.size) abort();
      fclose(o);
    }
  }
  int *h = malloc(sizeof(int) * 2);
  *h = id;
  return (void **)h;
}
int __hipRegisterFunction(void **h, const void *host, char *dev, const char *name, int limit,
                          void *tid, void *bid, void *bdim, void *gdim, int *wsize) {
  fprintf(log_file(), "function %d host=%s dev=%s name=%s limit=%d rest=%d\n", *(int *)h, sym(host),
          dev, name, limit, tid || bid || bdim || gdim || wsize);
  return 0;
}
void __hipRegisterVar(void **h, void *var, char *host, char *dev, int ext, size_t size, int constant,
                      int global) {
  fprintf(log_file(), "var %d host=%s dev=%s ext=%d size=%zu constant=%d global=%d nonnull=%d\n",
          *(int *)h, host, dev, ext, size, constant, global, var != NULL);
}
void __hipUnregisterFatBinary(void **h) { fprintf(log_file(), "unregister %d\n", *(int *)h); }
void __hipRegisterSurface(void) { fprintf(log_file(), "surface\n"); }
void __hipRegisterTexture(void) { fprintf(log_file(), "texture\n"); }
void __hipRegisterManagedVar(void) { fprintf(log_file(), "managed\n"); }
int __hipPopCallConfiguration(void *a, void *b, void *c, void *d) { return 0; }
int __hipPushCallConfiguration(void) { return 0; }
int hipLaunchKernel(const void *f) { return 0; }
"#;

/// Runtime entry points as no-ops for COFF (the DLL link has no CRT).
pub const COFF_STUBS: &str = "void **__hipRegisterFatBinary(const void *p) { return (void **)p; }
int __hipRegisterFunction(void) { return 0; }
void __hipRegisterVar(void) {}
void __hipUnregisterFatBinary(void) {}
int atexit(void (*f)(void)) { (void)f; return 0; }
";

pub struct HostFixtures {
    pub dir: PathBuf,
}

pub fn host() -> &'static HostFixtures {
    static F: OnceLock<HostFixtures> = OnceLock::new();
    F.get_or_init(build)
}

impl HostFixtures {
    pub fn path(&self, name: &str) -> PathBuf {
        let p = self.dir.join(name);
        assert!(p.is_file(), "fixture {name} missing");
        p
    }

    pub fn read(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.path(name)).expect("read fixture")
    }

    /// The clang 19 code object of `arch` (from `-save-temps`).
    pub fn code_object(&self, tu: &str, arch: &str) -> Vec<u8> {
        self.read(&format!("{tu}-hip-amdgcn-amd-amdhsa-{arch}.out"))
    }

    /// A fresh scratch directory for one test.
    pub fn scratch(&self, name: &str) -> PathBuf {
        let d = self.dir.join(name);
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("mkdir");
        d
    }
}

/// Runs a program; a failure fails the test with its output.
pub fn run(dir: &Path, exe: &str, args: &[&str]) -> Output {
    let out = Command::new(exe)
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {exe}: {e} ({SETUP_HINT})"));
    assert!(
        out.status.success(),
        "{exe} {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs `exe` with the shim's environment; returns its registration log.
pub fn run_with_shim(dir: &Path, exe: &Path, tag: &str) -> String {
    let log = dir.join(format!("{tag}.log"));
    let dump = dir.join(format!("{tag}.dump"));
    std::fs::create_dir_all(&dump).expect("mkdir");
    let out = Command::new(exe)
        .current_dir(dir)
        .env("HIP_SHIM_LOG", &log)
        .env("HIP_SHIM_DUMP", &dump)
        .env("HIP_SHIM_ISAS", ISAS)
        .env("LD_LIBRARY_PATH", dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()));
    assert!(
        out.status.success(),
        "{} failed: {}",
        exe.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(&log).expect("shim log")
}

fn build() -> HostFixtures {
    for tool in [
        CLANG19,
        "/usr/lib/llvm-19/bin/ld.lld",
        "/usr/lib/llvm-19/bin/lld-link",
        "/usr/lib/llvm-19/bin/clang-linker-wrapper",
        CLANG22,
        "/usr/lib/llvm-22/bin/clang-linker-wrapper",
        "/usr/lib/llvm-22/bin/ld.lld",
        "/usr/bin/gcc",
        "/usr/bin/ld.bfd",
        "/usr/include/amd_comgr.h",
    ] {
        require(tool);
    }
    let dir = process_dir("hostobj-fixtures-");
    std::fs::write(dir.join("rt.h"), RUNTIME_DECLS).expect("write");
    std::fs::write(dir.join("k.hip"), format!("#include \"rt.h\"\n{TU_K}")).expect("write");
    std::fs::write(dir.join("k2.hip"), format!("#include \"rt.h\"\n{TU_K2}")).expect("write");
    std::fs::write(dir.join("shim.c"), SHIM).expect("write");
    std::fs::write(dir.join("stubw.c"), COFF_STUBS).expect("write");
    std::fs::write(
        dir.join("main.c"),
        "#include <stdio.h>\nint main(void) { puts(\"main\"); return 0; }\n",
    )
    .expect("write");
    let hip = [
        "-x",
        "hip",
        "--offload-arch=gfx90a:xnack+",
        "--offload-arch=gfx1100",
        "-nogpulib",
        "-nogpuinc",
        "-O2",
        "-save-temps=obj",
    ];
    for tu in ["k", "k2"] {
        let src = format!("{tu}.hip");
        let obj = format!("{tu}.o");
        let mut args = hip.to_vec();
        args.extend(["-c", &src, "-o", &obj]);
        run(&dir, CLANG19, &args);
    }
    // clang 19's and clang 22's new driver (22: 56-byte `llvm_offload_entries`, HIP kind 4).
    for (clang, out) in [(CLANG19, "knd.o"), (CLANG22, "knd22.o")] {
        run(
            &dir,
            clang,
            &[
                "-x",
                "hip",
                "--offload-new-driver",
                "-fgpu-rdc",
                "--offload-arch=gfx90a",
                "-nogpulib",
                "-nogpuinc",
                "-O2",
                "-c",
                "k.hip",
                "-o",
                out,
            ],
        );
    }
    run(
        &dir,
        "/usr/bin/gcc",
        &[
            "-shared",
            "-fPIC",
            "-o",
            "libamdhip64.so",
            "shim.c",
            "-lamd_comgr",
        ],
    );
    run(
        &dir,
        CLANG19,
        &[
            "--target=x86_64-pc-windows-msvc",
            "-c",
            "stubw.c",
            "-o",
            "stubw.obj",
        ],
    );
    HostFixtures { dir }
}
