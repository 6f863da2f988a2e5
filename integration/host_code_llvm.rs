//! `compile --host-code` of a HIP source with the user's `-cuid=` against the clang driver's own
//! `-c` of it, byte for byte, for the LLVM releases whose HIP objects differ (no ROCm: the
//! runtime's declarations are in the source, `-nogpulib -nogpuinc`):
//!
//! - Debian 12's clang 16: the bundle's host entry as the driver gives it
//!   (`host-x86_64-unknown-linux`; its bundler does not standardize IDs yet);
//! - clang 19: the entry standardized (`host-x86_64-unknown-linux--`), and the `__hip_cuid_`
//!   symbol of the host object, which its driver leaves out of a host-only compile;
//! - clang 22: the driver's four-field host triple (`host-x86_64-unknown-linux-gnu-`).

use std::path::Path;

use crate::host_code::{clean, hip_fatbin_entries, ok};
use crate::support::fixtures::RUNTIME_DECLS;
use crate::support::require;

const EXE: &str = env!("CARGO_BIN_EXE_offload-build");

const KERNEL: &str = "#define __global__ __attribute__((global))\n\
    __global__ void scale(float* x, float a, int n) { int i = 0; if (i < n) x[i] *= a; }\n\
    extern \"C\" int launch(float* x) { scale<<<1, 1, 0, 0>>>(x, 2.0f, 1); return 0; }\n";

/// The host entry ID of the bundle in the object's `.hip_fatbin` section.
fn host_entry(object: &Path) -> String {
    hip_fatbin_entries(object)
        .into_iter()
        .map(|(id, _)| id)
        .find(|id| id.starts_with("host-"))
        .expect("a host entry")
}

#[test]
fn host_code_objects_are_the_clang_drivers_for_llvm_16_19_and_22() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("k.hip"), format!("{RUNTIME_DECLS}{KERNEL}")).unwrap();
    let flags = ["-nogpulib", "-nogpuinc", "-cuid=abc", "-O3"];
    for (llvm, host) in [
        (16, "host-x86_64-unknown-linux"),
        (19, "host-x86_64-unknown-linux--"),
        (22, "host-x86_64-unknown-linux-gnu-"),
    ] {
        let clang = require(&format!("/usr/lib/llvm-{llvm}/bin/clang"));
        let theirs = d.join(format!("clang{llvm}.o"));
        let mut c = clean(&clang, d);
        c.args([
            "-x",
            "hip",
            "--offload-arch=gfx90a",
            "--offload-arch=gfx1030",
            "-c",
        ])
        .args(flags)
        .arg("k.hip")
        .arg("-o")
        .arg(&theirs);
        ok(c, &format!("clang {llvm} -c"));
        let ours = d.join(format!("ours{llvm}.o"));
        let mut c = clean(EXE, d);
        c.args(["compile", "--host-code", "-q", "--archs", "gfx90a;gfx1030"])
            .arg("--compiler")
            .arg(&clang)
            .arg("--out-dir")
            .arg(d.join(format!("out{llvm}")))
            .args(flags.iter().map(|f| format!("--flag={f}")))
            .arg("k.hip")
            .arg("-o")
            .arg(&ours);
        ok(c, &format!("compile --host-code with clang {llvm}"));
        assert_eq!(host_entry(&theirs), host, "clang {llvm}'s own object");
        assert!(
            std::fs::read(&ours).unwrap() == std::fs::read(&theirs).unwrap(),
            "clang {llvm}: compile --host-code differs from the driver's -c (host entry {})",
            host_entry(&ours)
        );
    }
}
