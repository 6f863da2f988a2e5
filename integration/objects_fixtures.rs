//! Inputs of the fat-object and archive tests, built once per test process with the
//! reference tools: two HIP `-fgpu-rdc` translation units compiled by clang 19 into fat
//! objects (device bitcode for gfx906, gfx90a:xnack+ and gfx1100 in
//! `__CLANG_OFFLOAD_BUNDLE__` sections), their device payloads as unbundled by LLVM 19, plain
//! host objects for x86-64, AArch64, ppc64le, COFF and Mach-O, stubs for a HIP link without
//! ROCm, and archives made by llvm-ar 19 (GNU and BSD format). A missing tool fails the test.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::support::fixtures::{RUNTIME_DECLS, process_dir};
use crate::support::{CLANG19, SETUP_HINT, require};

/// Processors of the HIP fat objects, in the order clang lists them in the sections.
pub const ARCHS: [&str; 3] = ["gfx1100", "gfx906", "gfx90a:xnack+"];
/// The host entry clang 19 writes on this machine.
pub const HOST_TARGET: &str = "host-x86_64-pc-linux-gnu";
pub const LLVM_AR: &str = "/usr/lib/llvm-19/bin/llvm-ar";
pub const OBJCOPY19: &str = "/usr/lib/llvm-19/bin/llvm-objcopy";
pub const READELF19: &str = "/usr/lib/llvm-19/bin/llvm-readelf";
pub const READOBJ19: &str = "/usr/lib/llvm-19/bin/llvm-readobj";
pub const BUNDLER19: &str = "/usr/lib/llvm-19/bin/clang-offload-bundler";

/// Declarations clang's HIP host code needs (no HIP headers are installed).
const TU_A: &str = r#"extern "C" __attribute__((device)) int dev_helper(int x);
extern "C" __attribute__((global)) void ka(int *p) { p[__builtin_amdgcn_workitem_id_x()] = dev_helper(42); }
int host_a(void) { return 1; }
"#;

const TU_B: &str = r#"extern "C" __attribute__((device)) int dev_helper(int x) { return x + 1; }
extern "C" __attribute__((global)) void kb(int *p) { p[0] = 7; }
__attribute__((device)) int dev_counter = 3;
int host_b(void) { return 2; }
"#;

/// The HIP runtime entry points the host objects call, as no-ops, and a `main`.
const STUBS: &str = "int __hipPopCallConfiguration(void) { return 0; }
int __hipPushCallConfiguration(void) { return 0; }
int hipLaunchKernel(void) { return 0; }
void __hipRegisterFunction(void) {}
void __hipRegisterVar(void) {}
void **__hipRegisterFatBinary(const void *p) { (void)p; return 0; }
void __hipUnregisterFatBinary(void) {}
int main(void) { return 0; }
";

pub struct ObjectFixtures {
    dir: PathBuf,
}

pub fn objects() -> &'static ObjectFixtures {
    static F: OnceLock<ObjectFixtures> = OnceLock::new();
    F.get_or_init(build)
}

impl ObjectFixtures {
    /// A file of the fixture directory.
    pub fn path(&self, name: &str) -> PathBuf {
        let p = self.dir.join(name);
        assert!(p.is_file(), "fixture {name} missing");
        p
    }
}

/// `gfx90a:xnack+` -> `gfx90a_xnackp`.
pub fn safe(arch: &str) -> String {
    arch.replace(':', "_").replace('+', "p").replace('-', "m")
}

/// Runs a reference tool in `dir`; a failure fails the test with its stderr.
pub fn tool(dir: &Path, exe: &str, args: &[&str]) -> Vec<u8> {
    let out = Command::new(require(exe))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {exe}: {e}"));
    assert!(
        out.status.success(),
        "{exe} {args:?} failed ({SETUP_HINT}):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn build() -> ObjectFixtures {
    let dir = process_dir("object-fixtures-");
    std::fs::write(dir.join("rt.h"), RUNTIME_DECLS).expect("write");
    std::fs::write(dir.join("a.hip"), format!("#include \"rt.h\"\n{TU_A}")).expect("write");
    std::fs::write(dir.join("b.hip"), format!("#include \"rt.h\"\n{TU_B}")).expect("write");
    std::fs::write(dir.join("stubs.c"), STUBS).expect("write");
    std::fs::write(
        dir.join("host.c"),
        "int host_fn(void) { return 3; }\nint host_data = 4;\n",
    )
    .expect("write");
    let archs: Vec<String> = ARCHS
        .iter()
        .map(|a| format!("--offload-arch={a}"))
        .collect();
    let archs: Vec<&str> = archs.iter().map(String::as_str).collect();
    for tu in ["a", "b"] {
        let src = format!("{tu}.hip");
        let obj = format!("{tu}.o");
        let mut args = vec!["-x", "hip", "-fgpu-rdc", "-nogpulib", "-nogpuinc"];
        args.extend(&archs);
        args.extend(["-c", &src, "-o", &obj]);
        tool(&dir, CLANG19, &args);
        for arch in ARCHS {
            let out = format!("-output={tu}-{}.bc", safe(arch));
            let target = format!("-targets=hip-amdgcn-amd-amdhsa--{arch}");
            let input = format!("-input={obj}");
            tool(
                &dir,
                BUNDLER19,
                &["-type=o", &target, &input, "-unbundle", &out],
            );
        }
        // The host object without bundle sections, as LLVM extracts it.
        let host = format!("{tu}-host.o");
        tool(
            &dir,
            OBJCOPY19,
            &[
                "--regex",
                "--remove-section=__CLANG_OFFLOAD_BUNDLE__.*",
                &obj,
                &host,
            ],
        );
    }
    tool(&dir, CLANG19, &["-c", "stubs.c", "-o", "stubs.o"]);
    for (target, out) in [
        ("x86_64-pc-linux-gnu", "host-x86_64.o"),
        ("aarch64-linux-gnu", "host-aarch64.o"),
        ("powerpc64le-linux-gnu", "host-ppc64le.o"),
        ("x86_64-pc-windows-msvc", "host-coff.obj"),
        ("x86_64-apple-macos", "host-macho.o"),
    ] {
        let t = format!("--target={target}");
        tool(&dir, CLANG19, &[&t, "-c", "host.c", "-o", out]);
    }
    // A binary bundle (not an object) as an archive member: LLVM 19 bundles raw payloads.
    tool(
        &dir,
        BUNDLER19,
        &[
            "-type=bc",
            "-targets=hip-amdgcn-amd-amdhsa--gfx906,hip-amdgcn-amd-amdhsa--gfx1100",
            "-input=b-gfx906.bc",
            "-input=b-gfx1100.bc",
            "-output=bundled-device-code.bc",
        ],
    );
    tool(&dir, LLVM_AR, &["rcs", "libab.a", "a.o", "b.o", "stubs.o"]);
    tool(
        &dir,
        LLVM_AR,
        &[
            "rcs",
            "--format=bsd",
            "libab-bsd.a",
            "a.o",
            "b.o",
            "stubs.o",
        ],
    );
    tool(
        &dir,
        LLVM_AR,
        &[
            "rc",
            "libmixed.a",
            "bundled-device-code.bc",
            "a.o",
            "host-x86_64.o",
        ],
    );
    // A binary bundle with two target IDs for one processor (LLVM refuses to bundle them;
    // this crate's writer does not check), as an archive member.
    let conflicting = offload_build::bundle::binary::write_bundle(
        &[
            (b"hip-amdgcn-amd-amdhsa--gfx906:xnack+", b"dev-xnack"),
            (b"hip-amdgcn-amd-amdhsa--gfx906", b"dev-any"),
        ],
        1,
    )
    .expect("bundle");
    std::fs::write(dir.join("conflicting-member.bc"), conflicting).expect("write");
    tool(
        &dir,
        LLVM_AR,
        &["rc", "libconflict.a", "conflicting-member.bc"],
    );
    ObjectFixtures { dir }
}
