//! The registration constructor and destructor that `offload_build::embed` assembles by hand,
//! per host ABI (x86-64 System V, x86-64 Windows, AArch64, ppc64le):
//!
//! - golden disassembly: one object per ABI from a fixed input (two kernels, two variables:
//!   the unrolled loops, stack arguments and a variable size wider than 16 bits all show) is
//!   disassembled by `llvm-objdump -d -r` (LLVM 22) and compared with
//!   `integration/golden/ctor-<abi>.txt`; `OFFLOAD_BUILD_UPDATE=1` rewrites those files.
//! - execution: the same object linked by ld.lld (executable, PIE, shared library) with a
//!   recording stand-in of the HIP runtime, run natively on x86-64 and under qemu-user on
//!   AArch64 and ppc64le (Debian's cross glibc as the guest sysroot). The log must show the fat
//!   binary registered once through the `HIPF` wrapper whose pointer leads to the bundle's bytes,
//!   every kernel and variable registered with its names, its host address and the returned
//!   handle, every stack argument null, and the destructor unregistering at exit.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use offload_build::bundle::binary::write_bundle;
use offload_build::embed::{DeviceVariable, HOST_ENTRY_ID, HipObject};

use crate::hostobj_fixtures::run;
use crate::support::fixtures::process_dir;
use crate::support::{CLANG19, SETUP_HINT, env_flag, repo_root, require};

/// The disassembler of the golden files (its output format is part of them).
const OBJDUMP: &str = "/usr/lib/llvm-22/bin/llvm-objdump";

/// Set to rewrite the golden files from the current code generator.
const UPDATE_VAR: &str = "OFFLOAD_BUILD_UPDATE";

/// The start and size symbols the object exports (the test program compares the registered
/// bundle with them).
const START: &str = "ctor_fatbin_start";
const SIZE: &str = "ctor_fatbin_size";

/// The fixed bundle: the host entry and one (fake) code object.
fn bundle() -> Vec<u8> {
    write_bundle(
        &[
            (HOST_ENTRY_ID.as_bytes(), b""),
            (
                b"hipv4-amdgcn-amd-amdhsa--gfx1100",
                b"\x7fELF stand-in code object",
            ),
        ],
        4096,
    )
    .expect("bundle")
}

/// The object for `triple` from the fixed input.
fn object(triple: &str) -> Vec<u8> {
    let table = DeviceVariable {
        name: "dev_table".into(),
        size: 0x1_2345,
        external: true,
        constant: true,
    };
    let mut h = HipObject::new(triple).expect("target");
    h.bundle(bundle())
        .discover_symbols(false)
        .kernel("kern_a")
        .kernel("_Z6kern_bPfi")
        .variable(DeviceVariable::new("dev_var", 4))
        .variable(table)
        .start_symbol(START)
        .size_symbol(SIZE);
    h.write().expect("write")
}

/// A scratch directory per test, under one directory of this process.
fn scratch(name: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let d = DIR
        .get_or_init(|| process_dir("hostobj-codegen-"))
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("mkdir");
    d
}

// ---------------------------------------------------------------------------------------------
// Golden disassembly

/// `llvm-objdump -d -r` of `object` from the first "Disassembly of section" on (the file name
/// and format lines before it are dropped), with trailing blanks removed.
fn disassemble(dir: &Path, object: &[u8]) -> String {
    require(OBJDUMP);
    std::fs::write(dir.join("ctor.o"), object).expect("write");
    let out = run(dir, OBJDUMP, &["-d", "-r", "ctor.o"]);
    let text = String::from_utf8(out.stdout).expect("UTF-8 disassembly");
    let start = text
        .find("Disassembly of section")
        .unwrap_or_else(|| panic!("no disassembly in:\n{text}"));
    let mut s: String = text[start..]
        .lines()
        .map(|l| format!("{}\n", l.trim_end()))
        .collect();
    while s.ends_with("\n\n") {
        s.pop();
    }
    s
}

fn golden(abi: &str, triple: &str) {
    let dir = scratch(&format!("golden-{abi}"));
    let text = disassemble(&dir, &object(triple));
    for symbol in ["<__hip_module_ctor>:", "<__hip_module_dtor>:"] {
        assert!(text.contains(symbol), "{abi}: no {symbol} in:\n{text}");
    }
    let path = repo_root().join(format!("integration/golden/ctor-{abi}.txt"));
    if env_flag(UPDATE_VAR) {
        std::fs::create_dir_all(path.parent().unwrap()).expect("mkdir golden");
        std::fs::write(&path, &text).expect("write golden file");
        eprintln!("{UPDATE_VAR}: wrote {}", path.display());
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read the golden file {}: {e} (create it with {UPDATE_VAR}=1)",
            path.display()
        )
    });
    if text != want {
        let first = text
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| text.lines().count().min(want.lines().count()));
        panic!(
            "{abi}: the constructor/destructor code differs from {} from line {} on \
             (if the change is intended, rerun with {UPDATE_VAR}=1 and review the diff).\n\
             --- golden\n{}\n--- now\n{}",
            path.display(),
            first + 1,
            want.lines()
                .skip(first)
                .take(12)
                .collect::<Vec<_>>()
                .join("\n"),
            text.lines()
                .skip(first)
                .take(12)
                .collect::<Vec<_>>()
                .join("\n"),
        );
    }
}

#[test]
fn golden_x86_64_sysv() {
    golden("x86_64-sysv", "x86_64-unknown-linux-gnu");
}

#[test]
fn golden_x86_64_win64() {
    golden("x86_64-win64", "x86_64-pc-windows-msvc");
}

#[test]
fn golden_aarch64() {
    golden("aarch64", "aarch64-unknown-linux-gnu");
}

#[test]
fn golden_ppc64le() {
    golden("ppc64le", "powerpc64le-unknown-linux-gnu");
}

// ---------------------------------------------------------------------------------------------
// Execution

/// The recording HIP runtime stand-in (no comgr, which exists for x86-64 only). It writes one
/// line per call to `$HIP_SHIM_LOG` (and first fills the stack with a non-zero pattern); handles are named by the fat binary they were returned
/// for (`fatbin=-1`: a pointer the runtime never returned), host addresses by `dladdr`.
/// `shim_main` (called by the program's `main`) checks that the registered wrapper's binary
/// is the object's `ctor_fatbin_start` and writes that many bytes of it to `$HIP_SHIM_DUMP`.
const SHIM: &str = r#"#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct wrapper { uint32_t magic, version; const unsigned char *binary; const void *unused; };
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
/* Runs before the object's constructor (a library's initializers run before its users'):
   leaves a pattern on the stack, so that a stack argument the constructor fails to write
   reads as non-null rather than as a lucky zero. */
__attribute__((constructor)) static void paint_stack(void) {
  volatile unsigned char a[16384];
  for (unsigned i = 0; i < sizeof a; i++) a[i] = 0xa5;
}
#define MAX 8
static int fatbins;
static int handles[MAX];
static const unsigned char *binaries[MAX];
static int id_of(void **h) {
  for (int i = 0; i < fatbins; i++) if ((void *)h == (void *)&handles[i]) return i;
  return -1;
}
void **__hipRegisterFatBinary(const void *w) {
  const struct wrapper *wr = w;
  if (fatbins == MAX) abort();
  int id = fatbins++;
  binaries[id] = wr->binary;
  handles[id] = id;
  fprintf(log_file(), "fatbin %d magic=%08x version=%u unused=%d bundle=%.24s\n", id, wr->magic,
          wr->version, wr->unused != NULL, (const char *)wr->binary);
  return (void **)&handles[id];
}
int __hipRegisterFunction(void **h, const void *host, char *dev, const char *name, int limit,
                          void *tid, void *bid, void *bdim, void *gdim, int *wsize) {
  fprintf(log_file(),
          "function fatbin=%d host=%s dev=%s name=%s same=%d limit=%d tid=%d bid=%d bdim=%d gdim=%d wsize=%d\n",
          id_of(h), sym(host), dev, name, dev == name, limit, tid != NULL, bid != NULL,
          bdim != NULL, gdim != NULL, wsize != NULL);
  return 0;
}
void __hipRegisterVar(void **h, void *var, char *host, char *dev, int ext, size_t size, int constant,
                      int global) {
  fprintf(log_file(), "var fatbin=%d shadow=%s host=%s dev=%s same=%d ext=%d size=%zu constant=%d global=%d\n",
          id_of(h), sym(var), host, dev, host == dev, ext, size, constant, global);
}
void __hipUnregisterFatBinary(void **h) { fprintf(log_file(), "unregister fatbin=%d\n", id_of(h)); }
void shim_main(const unsigned char *start, unsigned long long size) {
  FILE *f = log_file();
  fprintf(f, "main fatbins=%d start=%d size=%llu\n", fatbins, fatbins && binaries[0] == start, size);
  const char *dump = getenv("HIP_SHIM_DUMP");
  if (fatbins && dump) {
    FILE *o = fopen(dump, "wb");
    if (!o || fwrite(binaries[0], 1, size, o) != size || fclose(o)) abort();
  }
}
"#;

/// The test program: all registration happens before and after `main`.
const MAIN: &str = r#"extern const unsigned char ctor_fatbin_start[];
extern const unsigned long long ctor_fatbin_size;
void shim_main(const unsigned char *start, unsigned long long size);
int main(void) { shim_main(ctor_fatbin_start, ctor_fatbin_size); return 0; }
"#;

/// One host to run on: its triple, and the qemu-user emulator and guest sysroot (none:
/// native).
struct Host {
    triple: &'static str,
    qemu: Option<(&'static str, &'static str)>,
}

/// Files the cross builds need beyond clang 19 and ld.lld: the emulator, the guest's glibc
/// (`libc6-dev-*-cross`) and GCC's start files and libgcc (`libgcc-12-dev-*-cross`), which
/// clang finds in `/usr/lib/gcc-cross`.
fn require_host(h: &Host) {
    require(CLANG19);
    require("/usr/lib/llvm-19/bin/ld.lld");
    if let Some((qemu, sysroot)) = h.qemu {
        require(qemu);
        let gnu = h.triple.replace("-unknown", "");
        for file in [
            format!("{sysroot}/lib/libc.so.6"),
            format!("{sysroot}/lib/crt1.o"),
            format!("{sysroot}/include/stdio.h"),
            format!("/usr/lib/gcc-cross/{gnu}/12/crtbeginS.o"),
            format!("/usr/lib/gcc-cross/{gnu}/12/libgcc.a"),
        ] {
            assert!(
                Path::new(&file).is_file(),
                "{file} is missing (the cross glibc and libgcc of {}): {SETUP_HINT}",
                h.triple
            );
        }
    }
}

/// The log every program must write (the names of `object`'s input, in registration order).
fn expected_log(bundle_size: usize) -> String {
    format!(
        "fatbin 0 magic=48495046 version=1 unused=0 bundle=__CLANG_OFFLOAD_BUNDLE__
function fatbin=0 host=kern_a dev=kern_a name=kern_a same=1 limit=-1 tid=0 bid=0 bdim=0 gdim=0 wsize=0
function fatbin=0 host=_Z6kern_bPfi dev=_Z6kern_bPfi name=_Z6kern_bPfi same=1 limit=-1 tid=0 bid=0 bdim=0 gdim=0 wsize=0
var fatbin=0 shadow=dev_var host=dev_var dev=dev_var same=1 ext=0 size=4 constant=0 global=0
var fatbin=0 shadow=dev_table host=dev_table dev=dev_table same=1 ext=1 size=74565 constant=1 global=0
main fatbins=1 start=1 size={bundle_size}
unregister fatbin=0
"
    )
}

fn executes(h: &Host) {
    require_host(h);
    let arch = h.triple.split('-').next().unwrap();
    let dir = scratch(&format!("run-{arch}"));
    let dirs = dir.to_str().unwrap();
    std::fs::write(dir.join("shim.c"), SHIM).expect("write");
    std::fs::write(dir.join("main.c"), MAIN).expect("write");
    std::fs::write(dir.join("ours.o"), object(h.triple)).expect("write");
    let target = format!("--target={}", h.triple);
    let cc = |args: &[&str]| {
        let mut all = vec![target.as_str(), "-fuse-ld=lld", "-O1"];
        all.extend(args);
        run(&dir, CLANG19, &all);
    };
    cc(&["-shared", "-fPIC", "-o", "libamdhip64.so", "shim.c"]);
    let rpath = format!("-Wl,-rpath,{dirs}");
    let common = ["-Wl,--gc-sections", "-L.", "-lamdhip64", rpath.as_str()];
    let mut programs = Vec::new();
    for kind in ["exe", "pie", "shared"] {
        let exe = format!("m-{kind}");
        match kind {
            "exe" | "pie" => {
                let pic: &[&str] = if kind == "exe" {
                    &["-no-pie", "-fno-pie"]
                } else {
                    &["-pie", "-fPIE"]
                };
                let mut args = vec!["-rdynamic", "-o", &exe, "main.c", "ours.o"];
                args.extend(pic);
                args.extend(common);
                cc(&args);
            }
            _ => {
                let mut args = vec!["-shared", "-o", "libours.so", "ours.o"];
                args.extend(common);
                cc(&args);
                let mut args = vec!["-o", &exe, "main.c", "-lours"];
                args.extend(common);
                cc(&args);
            }
        }
        programs.push((kind, exe));
    }
    let bundle = bundle();
    let want = expected_log(bundle.len());
    for (kind, exe) in programs {
        let log = dir.join(format!("{kind}.log"));
        let dump = dir.join(format!("{kind}.bundle"));
        let mut cmd = match h.qemu {
            Some((qemu, sysroot)) => {
                let mut c = Command::new(qemu);
                c.args(["-L", sysroot]).arg(dir.join(&exe));
                c
            }
            None => Command::new(dir.join(&exe)),
        };
        let out = cmd
            .current_dir(&dir)
            .env("HIP_SHIM_LOG", &log)
            .env("HIP_SHIM_DUMP", &dump)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {exe} ({SETUP_HINT}): {e}"));
        assert!(
            out.status.success(),
            "{} {kind}: {exe} failed ({}):\n{}{}",
            h.triple,
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let got = std::fs::read_to_string(&log)
            .unwrap_or_else(|e| panic!("{} {kind}: no shim log: {e}", h.triple));
        assert_eq!(got, want, "{} {kind}: registration log", h.triple);
        let registered = std::fs::read(&dump).expect("registered bundle");
        assert!(
            registered == bundle,
            "{} {kind}: the registered wrapper does not lead to the bundle's bytes",
            h.triple
        );
    }
}

#[test]
fn executes_x86_64() {
    executes(&Host {
        triple: "x86_64-unknown-linux-gnu",
        qemu: None,
    });
}

#[test]
fn executes_aarch64_under_qemu() {
    executes(&Host {
        triple: "aarch64-unknown-linux-gnu",
        qemu: Some(("/usr/bin/qemu-aarch64", "/usr/aarch64-linux-gnu")),
    });
}

#[test]
fn executes_ppc64le_under_qemu() {
    executes(&Host {
        triple: "powerpc64le-unknown-linux-gnu",
        qemu: Some(("/usr/bin/qemu-ppc64le", "/usr/powerpc64le-linux-gnu")),
    });
}
