//! Issue 49, acceptance item 1: published HIP sources with half-precision math, compiled with
//! their host code, against Debian 12's ROCm 5.2 (`hipcc`, clang 15), which
//! `build-support/setup.sh` installs; no GPU needed.
//!
//! The sources are the 20 of `integration/third-party/hecbench/` (HeCBench, BSD-3-Clause and
//! the programs' own permissive licences; see its `PROVENANCE.md`), from its HIP programs that
//! Debian's ROCm 5.2 compiles: 17 with half-precision math (14 in their kernels: `__half`,
//! `__half2`, `__hadd2`, `__hmul2`, `__hfma2`, `hexp`, `half2` loads and stores, conversions;
//! 3 on the host only), `reverse2D` (includes `hip_fp16.h`, reverses integers), `groupnorm` and
//! `rmsnorm` (fp32); 17 have device code. Each is compiled by `hipcc -c` with HeCBench's HIP
//! flags (`-std=c++17 -Wall -O3`) for gfx1030 and gfx90a, and all of them by ONE
//! `offload-build compile --host-code` with the same flags: every archive member is hipcc's
//! object byte for byte, and so is each architecture's code object in its bundle; offload-build
//! prints no warning hipcc did not print, and every one hipcc printed.
//!
//! Those sources compile to the same device code with and without `--hip-version` (hipcc
//! passes `--hip-version=5.2.21153`; without it clang 15 reads Debian's HIP as 3.5 and does not
//! include `__clang_hip_runtime_wrapper.h`); `__frcp_rn`, `__frsqrt_rn` and `__drcp_rn` compile
//! differently (`h2rcp` too, which ROCm 5.2 cannot link: `__llvm_amdgcn_rcp_f16`). A second
//! test compiles such a source (ours, not third-party) both ways, and shows that the build
//! passes hipcc's `--hip-version` by itself (from Debian's `share/hip/version`): a build that
//! loses it fails there. With it, these optimized whole-program device compiles use their PCH
//! (the wrapper's weak functions, which a PCH reorders, are internalized away).
//!
//! Time on this machine (2 cores, idle): hipcc 60 s for the 20 sources one at a time (the test
//! runs two at a time), `offload-build compile` 66 s with `-j 1` (the test lets it use both).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::host_code::{clean, hip_fatbin_entries, ok, warning_lines};

const EXE: &str = env!("CARGO_BIN_EXE_offload-build");
const HIPCC: &str = "/usr/bin/hipcc";
/// The clang that Debian's hipcc runs.
const ROCM_CLANGXX: &str = "/usr/bin/clang++-15";
const DEVICE_LIBS: &str = "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode";
/// What Debian's hipcc 5.2.3 passes (`HIPCC_VERBOSE=1`; `hipconfig --version`).
const HIP_VERSION: &str = "--hip-version=5.2.21153";

const ARCHS: [&str; 2] = ["gfx1030", "gfx90a"];
/// HeCBench's HIP Makefiles: `CFLAGS := -std=c++17 -Wall`, and `-O3` (`OPTIMIZE=yes`).
const FLAGS: [&str; 3] = ["-std=c++17", "-Wall", "-O3"];

/// The sources, relative to `integration/third-party/hecbench/`, in byte order (the order of
/// the library's members).
const SOURCES: [&str; 20] = [
    "conversion-hip/main.cu",
    "crossEntropy-hip/main.cu",
    "ert-hip/main.cu",
    "f16max-hip/main.cu",
    "gelu-hip/main.cu",
    "gemv-hip/gemv.cu",
    "gemv-hip/main.cu",
    "groupnorm-hip/main.cu",
    "gru-hip/main.cu",
    "logprob-hip/main.cu",
    "lut-gemm-hip/nQWeight_fp16.cu",
    "mf-sgd-hip/src/main.cpp",
    "mf-sgd-hip/src/sgd.cu",
    "quant3MatMul-hip/main.cu",
    "quantAQLM-hip/main.cu",
    "relu-hip/main.cu",
    "reverse2D-hip/main.cu",
    "rmsnorm-hip/main.cu",
    "vadd-hip/main.cu",
    "voxelization-hip/main.cu",
];

/// The sources with no device code: hipcc's object has no `.hip_fatbin`, nor must ours.
const HOST_ONLY: [&str; 3] = [
    "gemv-hip/main.cu",
    "lut-gemm-hip/nQWeight_fp16.cu",
    "mf-sgd-hip/src/main.cpp",
];

/// The reference tools, or a failure naming the setup script.
fn require_tools() {
    crate::rocm::require_rocm();
    let isa = |a: &str| format!("{DEVICE_LIBS}/oclc_isa_version_{}.bc", &a[3..]);
    let mut files = vec![HIPCC.to_string(), ROCM_CLANGXX.to_string()];
    files.extend(ARCHS.map(isa));
    for f in files {
        assert!(
            Path::new(&f).exists(),
            "{f} is missing: run build-support/setup.sh as root (Debian's ROCm 5.2: hipcc \
             libamdhip64-dev rocm-device-libs clang-15)"
        );
    }
}

/// The members a host-code library names after `sources`, in order: `<stem>.o`, and
/// `<stem>-<n>.o` for the n-th source of a stem already taken.
fn member_names(sources: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for s in sources {
        let stem = Path::new(s).file_stem().unwrap().to_string_lossy();
        let mut name = format!("{stem}.o");
        let mut n = 1;
        while names.contains(&name) {
            n += 1;
            name = format!("{stem}-{n}.o");
        }
        names.push(name);
    }
    names
}

/// `hipcc -c` of every source in `d` with [`ARCHS`] and `flags`, two at a time: per source its
/// object and its standard error.
fn hipcc_each(d: &Path, sources: &[&str], flags: &[&str]) -> Vec<(Vec<u8>, String)> {
    std::fs::create_dir_all(d.join("hipcc")).unwrap();
    let next = AtomicUsize::new(0);
    let results = Mutex::new(vec![None; sources.len()]);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(&src) = sources.get(i) else { break };
                    let obj = format!("hipcc/{i}.o");
                    let mut c = clean(HIPCC, d);
                    c.arg("-c")
                        .args(ARCHS.iter().map(|a| format!("--offload-arch={a}")))
                        .args(flags)
                        .args([src, "-o", obj.as_str()]);
                    let out = ok(c, &format!("hipcc -c {src}"));
                    let bytes = std::fs::read(d.join(&obj)).unwrap();
                    let err = String::from_utf8_lossy(&out.stderr).into_owned();
                    results.lock().unwrap()[i] = Some((bytes, err));
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every hipcc ran"))
        .collect()
}

/// One `offload-build compile --host-code` of `sources` in `d` with [`ARCHS`] and `flags` into
/// `out`, with its `TMPDIR` in `d/tmp`, which it must leave empty; its standard error.
fn ours(d: &Path, sources: &[&str], flags: &[&str], out: &str) -> String {
    let mut c = clean(EXE, d);
    c.args(["compile", "--host-code", "--language", "hip"]);
    c.args(["--archs", &ARCHS.join(";"), "-q"]);
    c.args(flags.iter().map(|f| format!("--flag={f}")));
    c.args(sources).args(["-o", out]);
    let tmp = d.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    c.env("TMPDIR", &tmp);
    let o = ok(c, &format!("offload-build compile --host-code -o {out}"));
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().collect();
    assert!(left.is_empty(), "the build left {left:?} in TMPDIR");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Whether the object `data` has a `.hip_fatbin` section.
fn has_bundle(data: &[u8]) -> bool {
    use object::Object;
    object::File::parse(data)
        .unwrap()
        .section_by_name(".hip_fatbin")
        .is_some()
}

/// How the object `ours` of `src` differs from hipcc's `theirs`: per bundle entry (each
/// architecture's code object, the host entry), then as a whole; empty when byte-identical.
/// `scratch` is a directory for the objects the bundle reader opens.
fn differences(src: &str, theirs: &[u8], ours: &[u8], scratch: &Path) -> Vec<String> {
    let mut found = Vec::new();
    match (has_bundle(theirs), has_bundle(ours)) {
        (false, false) => {}
        (true, true) => {
            let name = src.replace('/', "_");
            let (h, o) = (
                scratch.join(format!("{name}.hipcc.o")),
                scratch.join(format!("{name}.ours.o")),
            );
            std::fs::write(&h, theirs).unwrap();
            std::fs::write(&o, ours).unwrap();
            let (h, o) = (hip_fatbin_entries(&h), hip_fatbin_entries(&o));
            let ids = |e: &[(String, Vec<u8>)]| -> Vec<String> {
                e.iter().map(|(id, _)| id.clone()).collect()
            };
            let (hi, oi) = (ids(&h), ids(&o));
            if hi != oi {
                found.push(format!("{src}: bundle entries {oi:?}, hipcc's {hi:?}"));
            }
            for ((id, hd), (_, od)) in h.iter().zip(&o).filter(|((a, _), (b, _))| a == b) {
                if hd != od {
                    found.push(format!(
                        "{src}: {id}: {} bytes, hipcc's {} bytes, not the same",
                        od.len(),
                        hd.len()
                    ));
                }
            }
        }
        (h, o) => found.push(format!("{src}: .hip_fatbin in ours: {o}, in hipcc's: {h}")),
    }
    if theirs != ours {
        found.push(format!(
            "{src}: the object: {} bytes, hipcc's {} bytes, not the same",
            ours.len(),
            theirs.len()
        ));
    }
    found
}

/// The 20 vendored sources: each member of one `compile --host-code` library is `hipcc -c`'s
/// object of its source, byte for byte, and so is each architecture's code object in it; the
/// build warns exactly where hipcc warns.
#[test]
fn hecbench_fp16_sources_are_hipccs_objects_per_object_and_per_arch() {
    require_tools();
    assert!(
        SOURCES.windows(2).all(|w| w[0] < w[1]),
        "SOURCES must stay in byte order: the library's members are in that order"
    );
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("hecbench");
    crate::support::copy_dir(
        &crate::support::repo_root().join("integration/third-party/hecbench"),
        &d,
    );

    let reference = hipcc_each(&d, &SOURCES, &FLAGS);
    let stderr = ours(&d, &SOURCES, &FLAGS, "libhecbench.a");

    let data = std::fs::read(d.join("libhecbench.a")).unwrap();
    let archive = offload_formats::bundle::archive::Archive::parse(&data[..]).unwrap();
    let members = archive.members();
    let names: Vec<String> = members
        .iter()
        .map(|m| String::from_utf8_lossy(m.name).into_owned())
        .collect();
    assert_eq!(
        names,
        member_names(&SOURCES),
        "the library's members, one per source in source order"
    );

    let scratch = d.join("compare");
    std::fs::create_dir(&scratch).unwrap();
    let mut found = Vec::new();
    for ((src, (theirs, _)), m) in SOURCES.iter().zip(&reference).zip(members) {
        if !HOST_ONLY.contains(src) {
            let e = {
                let p = scratch.join("reference.o");
                std::fs::write(&p, theirs).unwrap();
                hip_fatbin_entries(&p)
            };
            for a in ARCHS {
                let id = format!("hipv4-amdgcn-amd-amdhsa--{a}");
                assert!(
                    e.iter().any(|(i, data)| *i == id && !data.is_empty()),
                    "{src}: hipcc's bundle has no {id} code object: {:?}",
                    e.iter().map(|(i, _)| i).collect::<Vec<_>>()
                );
            }
        }
        found.extend(differences(src, theirs, m.data, &scratch));
    }
    assert!(
        found.is_empty(),
        "compile --host-code against hipcc -c, {} differences:\n{}",
        found.len(),
        found.join("\n")
    );

    let mut roots = vec![format!("{}/", d.display())];
    if let Ok(c) = d.canonicalize() {
        roots.push(format!("{}/", c.display()));
    }
    let hipcc_warned: BTreeSet<String> = reference
        .iter()
        .flat_map(|(_, err)| warning_lines(err, &[]))
        .collect();
    let ours_warned = warning_lines(&stderr, &roots);
    let extra: Vec<&str> = ours_warned
        .difference(&hipcc_warned)
        .map(String::as_str)
        .collect();
    assert!(
        extra.is_empty(),
        "offload-build printed {} warning lines hipcc did not print:\n{}",
        extra.len(),
        extra.join("\n")
    );
    let missing: Vec<&str> = hipcc_warned
        .difference(&ours_warned)
        .map(String::as_str)
        .collect();
    assert!(
        missing.is_empty(),
        "offload-build did not report {} warning lines hipcc printed:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

/// A source whose device code depends on `--hip-version` (clang 15 includes
/// `__clang_hip_runtime_wrapper.h` only for a HIP newer than the 3.5 it reads from Debian's
/// install, and the wrapper's `__frcp_rn`, `__frsqrt_rn` and `__drcp_rn` divide where HIP's
/// own headers call the `rcp`/`rsq` instructions).
const RECIP: &str = r#"#include <hip/hip_runtime.h>
__global__ void recip(float* f, double* d) {
    f[0] = __frcp_rn(f[0]) + __frsqrt_rn(f[1]);
    d[0] = __drcp_rn(d[0]);
}
"#;

/// `RECIP`'s device code differs with and without `--hip-version` (so the comparison means
/// something); Debian's hipcc passes it, and so does this crate by default (`rocm::hip_version`
/// of the build crate reads Debian's `share/hip/version`). `compile --host-code` of two sources
/// sharing their preamble (one device PCH serves both), with hipcc's flags and no version
/// given, writes hipcc's objects, each architecture's code object included.
#[test]
fn a_source_that_needs_hip_version_is_hipccs_object() {
    require_tools();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("recip.hip"), RECIP).unwrap();

    let device = |with_version: bool, out: &str| -> Vec<u8> {
        let mut c = clean(ROCM_CLANGXX, d);
        c.args(["-x", "hip", "--cuda-device-only", "--offload-arch=gfx1030"]);
        c.args([
            "--rocm-path=/usr",
            &format!("--rocm-device-lib-path={DEVICE_LIBS}"),
        ]);
        if with_version {
            c.arg(HIP_VERSION);
        }
        c.args(["-O3", "-c", "recip.hip", "-o", out]);
        ok(
            c,
            &format!("clang-15 --cuda-device-only (--hip-version: {with_version})"),
        );
        std::fs::read(d.join(out)).unwrap()
    };
    assert!(
        device(true, "with.o") != device(false, "without.o"),
        "{HIP_VERSION} no longer changes the device code of recip.hip: the test below would \
         not catch a build that loses it"
    );

    let second = RECIP.replace("recip(", "recip2(");
    std::fs::write(d.join("recip2.hip"), second).unwrap();
    let sources = ["recip.hip", "recip2.hip"];
    let reference = hipcc_each(d, &sources, &["-O3"]);
    let stderr = ours(d, &sources, &["-O3"], "librecip.a");
    let lib = std::fs::read(d.join("librecip.a")).unwrap();
    let archive = offload_formats::bundle::archive::Archive::parse(&lib[..]).unwrap();
    let members = archive.members();
    assert_eq!(members.len(), 2);
    for ((src, (theirs, hipcc_err)), m) in sources.iter().zip(&reference).zip(members) {
        let found = differences(src, theirs, m.data, d);
        assert!(found.is_empty(), "{}", found.join("\n"));
        assert!(!hipcc_err.contains("warning:"), "{hipcc_err}");
    }
    assert!(!stderr.contains("warning:"), "{stderr}");
}

/// Two of the programs, linked from this crate's libraries into a Rust program (each `main`
/// renamed with `-Dmain=<name>_main` and called through a shim, as a build.rs crate calls C++
/// code; one `Build::host_code` library per program), run as the C++ programs hipcc links from
/// its own objects run: the same exit status and output (without arguments they print their
/// usage, after the HIP runtime registered their kernels at load).
#[test]
fn hecbench_programs_run_from_rust_as_from_hipccs_objects() {
    use std::os::unix::process::CommandExt;
    require_tools();
    const PROGRAMS: [(&str, &str); 2] = [("vadd", "vadd-hip"), ("f16max", "f16max-hip")];
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let from = crate::support::repo_root().join("integration/third-party/hecbench");
    let mut build_rs = String::new();
    let mut cpp = Vec::new();
    for (name, program) in PROGRAMS {
        crate::support::copy_dir(&from.join(program), &d.join(program));
        let src = format!("{program}/main.cu");
        let obj = format!("{name}.hipcc.o");
        let mut c = clean(HIPCC, d);
        c.arg("-c")
            .args(ARCHS.iter().map(|a| format!("--offload-arch={a}")))
            .args(FLAGS)
            .args([src.as_str(), "-o", obj.as_str()]);
        ok(c, &format!("hipcc -c {src}"));
        let mut link = clean(HIPCC, d);
        link.args([obj.as_str(), "-o", name]);
        ok(link, &format!("hipcc {obj}"));
        let o = Command::new(d.join(name)).arg0(name).output().unwrap();
        cpp.push((
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        ));
        crate::host_code::write_shim(d, name, "hip", Some("char**"));
        build_rs.push_str(&format!(
            "    offload_build::Build::new().files([\"{src}\", \"{name}_shim.hip\"])\
             .language(offload_build::Language::Hip).flag(\"-std=c++17\").flag(\"-O3\")\
             .define(\"main\", Some(\"{name}_main\")).archs(\"{}\").host_code(true)\
             .compile(\"{name}\");\n",
            ARCHS.join(";")
        ));
    }
    let names = PROGRAMS.map(|(n, _)| n);
    let exe = crate::host_code::runner_crate(
        d,
        "hecbench-runner",
        &build_rs,
        &names,
        crate::host_code::outside_cargo(d),
    );
    for ((name, _), expected) in PROGRAMS.iter().zip(&cpp) {
        let o = Command::new(&exe)
            .arg(name)
            .current_dir(d)
            .output()
            .unwrap();
        let rust = (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        );
        assert!(expected.1.contains("Usage"), "{name}: {expected:?}");
        assert_eq!(&rust, expected, "{name}: Rust against C++");
    }
}
