//! `offload-packager` against clang-offload-packager 19 and llvm-offload-binary 22.
//!
//! Each case runs the same argument list in a fresh directory holding the same input
//! files, once per tool, all started as `llvm-offload-binary` (so the `<argv0>:`
//! prefixes agree and LLVM 22 prints no deprecation warning). Ours runs twice: with
//! `OFFLOAD_PACKAGER_LLVM_VERSION=19` against LLVM 19 and by default against LLVM 22.
//! Exit status, stdout, stderr and every file of the directory must be identical.
//!
//! Also: `llvm-objdump --offloading` (19 and 22) on our output embedded in an ELF
//! section, and our reader on what clang 19 embeds in a `-fgpu-rdc` HIP object and
//! on `ld -r` of two such objects.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use offload_build::package::{ImageKind, LlvmVersion, scan};

use crate::support::{CLANG19, require};

/// The name every packager is started under.
pub const ARGV0: &str = "llvm-offload-binary";

/// One packager.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packager {
    /// Debian clang-offload-packager 19.1.7.
    Llvm19,
    /// Debian llvm-offload-binary 22.1.8.
    Llvm22,
    /// Ours with LLVM 19's offload-kind numbering.
    Ours19,
    /// Ours, default settings (LLVM 22).
    Ours22,
}

impl Packager {
    fn exe(self) -> PathBuf {
        match self {
            Packager::Llvm19 => require("/usr/lib/llvm-19/bin/clang-offload-packager"),
            Packager::Llvm22 => require("/usr/lib/llvm-22/bin/llvm-offload-binary"),
            Packager::Ours19 | Packager::Ours22 => {
                PathBuf::from(env!("CARGO_BIN_EXE_offload-packager"))
            }
        }
    }
}

/// What a run left behind.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// Every file in the run directory (inputs included), by relative path.
    pub files: BTreeMap<String, Vec<u8>>,
}

fn snapshot(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Vec<u8>>) {
    for ent in std::fs::read_dir(dir).expect("read_dir") {
        let ent = ent.expect("entry");
        let name = format!("{prefix}{}", ent.file_name().to_string_lossy());
        if ent.file_type().expect("type").is_dir() {
            snapshot(&ent.path(), &format!("{name}/"), out);
        } else {
            out.insert(name, std::fs::read(ent.path()).expect("read output"));
        }
    }
}

/// Runs `tool` with `args` in a fresh directory holding `inputs`.
pub fn run(tool: Packager, inputs: &[(&str, Vec<u8>)], args: &[String]) -> Outcome {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, data) in inputs {
        let path = dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, data).expect("write input");
    }
    let mut cmd = Command::new(tool.exe());
    cmd.arg0(ARGV0).args(args).current_dir(dir.path());
    cmd.env_remove("OFFLOAD_PACKAGER_LLVM_VERSION")
        .env("RUST_BACKTRACE", "0");
    if tool == Packager::Ours19 {
        cmd.env("OFFLOAD_PACKAGER_LLVM_VERSION", "19");
    }
    let out = cmd.output().expect("start packager");
    let mut files = BTreeMap::new();
    snapshot(dir.path(), "", &mut files);
    Outcome {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        files,
    }
}

fn describe(o: &Outcome) -> String {
    let files: Vec<String> = o
        .files
        .iter()
        .map(|(k, v)| format!("{k} ({} bytes)", v.len()))
        .collect();
    format!(
        "exit {:?}\nstdout: {:?}\nstderr: {:?}\nfiles: {files:?}",
        o.code, o.stdout, o.stderr
    )
}

/// Runs the case on LLVM 19 and ours (19 numbering), and on LLVM 22 and ours;
/// returns a description of every mismatch.
pub fn differences(name: &str, inputs: &[(&str, Vec<u8>)], args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for (reference, ours) in [
        (Packager::Llvm19, Packager::Ours19),
        (Packager::Llvm22, Packager::Ours22),
    ] {
        let r = run(reference, inputs, args);
        let o = run(ours, inputs, args);
        if r != o {
            let mut bad: Vec<&String> = r
                .files
                .keys()
                .chain(o.files.keys())
                .filter(|k| r.files.get(*k) != o.files.get(*k))
                .collect();
            bad.dedup();
            out.push(format!(
                "{name}: {ours:?} differs from {reference:?} (args {args:?}; differing files {bad:?})\n--- {reference:?}\n{}\n--- {ours:?}\n{}",
                describe(&r),
                describe(&o)
            ));
        }
    }
    out
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// Input files covering every image kind (by extension and by bitcode magic).
fn image_inputs() -> Vec<(&'static str, Vec<u8>)> {
    let big: Vec<u8> = (0..5000u32).map(|i| (i * 7 + i / 13) as u8).collect();
    vec![
        ("img.o", b"ABCDEFGHIJ".to_vec()),
        ("dev.bc", b"BC\xc0\xde\x35\x14\0\0\x05\0\0\0".to_vec()),
        ("lto.o", b"BC\xc0\xde-lto-bitcode-with-o-suffix".to_vec()),
        ("wrapped.o", b"\xde\xc0\x17\x0b\0\0\0\0\x14\0\0\0".to_vec()),
        ("k.cubin", b"\x7fELF cubin".to_vec()),
        ("k.fatbin", b"\x50\xed\x55\xba fatbin".to_vec()),
        ("k.s", b".version 7.0\n.target sm_70\n".to_vec()),
        ("k.spv", b"\x03\x02\x23\x07 spirv".to_vec()),
        ("noext", b"no extension".to_vec()),
        ("odd.xyz", b"unknown extension".to_vec()),
        ("dir.d/file", b"extension only in the directory".to_vec()),
        (".o", b"hidden-looking name".to_vec()),
        ("empty.o", Vec::new()),
        ("big.o", big),
    ]
}

/// At least 20 image sets: 1 to 9 keys (plus `file` and `kind`), several files per
/// image, every image kind, offload kinds openmp/cuda/hip/none/sycl/unknown, repeated
/// keys, empty values, keys of every hash length class, and a map that grows.
fn image_sets() -> Vec<Vec<String>> {
    const KEYS: [&str; 12] = [
        "arch",
        "feature",
        "zeta",
        "alpha",
        "beta",
        "gamma",
        "delta",
        "triple2",
        "x",
        "abcdefghijklmnopqrstuvwxyz",
        "a-key-of-forty-bytes-to-hit-the-33-to-64",
        "a-key-longer-than-sixty-four-bytes-uses-the-block-loop-of-hash-combine",
    ];
    const FILES: [&str; 14] = [
        "img.o",
        "dev.bc",
        "lto.o",
        "k.cubin",
        "k.fatbin",
        "k.s",
        "k.spv",
        "noext",
        "odd.xyz",
        "dir.d/file",
        ".o",
        "empty.o",
        "big.o",
        "wrapped.o",
    ];
    const KINDS: [&str; 7] = ["openmp", "cuda", "hip", "none", "sycl", "HIP", ""];
    let mut sets = Vec::new();
    for i in 0..24usize {
        let nkeys = 1 + i % 9;
        let mut items = vec![format!("triple=t{i}-unknown-linux")];
        for k in 0..nkeys - 1 {
            let key = KEYS[(i + k * 5) % KEYS.len()];
            items.push(format!("{key}=v{}", (i * 3 + k) % 4));
        }
        items.push(format!("file={}", FILES[i % FILES.len()]));
        if i % 3 == 0 {
            items.push(format!("file={}", FILES[(i + 5) % FILES.len()]));
        }
        if i % 4 != 3 {
            items.push(format!("kind={}", KINDS[i % KINDS.len()]));
        }
        let len = items.len();
        items.rotate_left(i % len);
        let mut set = vec![format!("--image={}", items.join(","))];
        if i % 5 == 0 {
            set.push(format!(
                "--image=file={},triple=amdgcn-amd-amdhsa,arch=gfx90a:xnack+,kind=hip",
                FILES[(i + 1) % FILES.len()]
            ));
        }
        sets.push(set);
    }
    // Fixed sets from the spec and edge cases.
    sets.push(strings(&[
        "--image=file=img.o,triple=amdgcn-amd-amdhsa,arch=gfx906,kind=openmp",
    ]));
    sets.push(strings(&[
        "--image=triple=nvptx64-nvidia-cuda,arch=sm_70,arch=sm_80,kind=cuda,feature=+ptx,x=,file=k.cubin,file=k.s",
    ]));
    sets.push(strings(&[
        "--image=file=img.o,triple=t,k==v,noeq,=empty-key,kind=openmp,kind=cuda",
    ]));
    let many: Vec<String> = (0..60).map(|i| format!("key{i}=value{}", i % 7)).collect();
    sets.push(vec![format!(
        "--image=file=img.o,triple=t,kind=hip,{}",
        many.join(",")
    )]);
    sets.push(Vec::new());
    sets
}

#[test]
fn package_image_sets_byte_identical() {
    let inputs = image_inputs();
    let sets = image_sets();
    assert!(sets.len() >= 20);
    let mut failures = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        let mut args = strings(&["-o", "out.bin"]);
        args.extend(set.iter().cloned());
        failures.extend(differences(&format!("set {i}"), &inputs, &args));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn package_errors_and_help_match() {
    let inputs = image_inputs();
    let cases: Vec<Vec<&str>> = vec![
        vec!["-o", "out.bin", "--image=file=missing.o,triple=t"],
        vec![
            "-o",
            "out.bin",
            "--image=file=img.o,triple=t,file=missing.o",
        ],
        vec!["-o", "nodir/out.bin", "--image=file=img.o,triple=t"],
        vec!["-o", "out.bin", "in.bin"],
        vec!["-o"],
        vec!["--image"],
        vec!["-x"],
        vec!["--imag=a"],
        vec!["--arch"],
        vec!["--archive=yes"],
        vec!["a", "b", "-foo"],
        vec!["-h"],
        vec!["-h", "-o", "x.bin", "--image=file=img.o,triple=t"],
        vec!["--help-list"],
        vec![
            "-o",
            "out.bin",
            "--image=file=img.o,triple=t",
            "-o",
            "second.bin",
        ],
        vec!["--image=file=img.o,triple=t", "-o=eq.bin"],
        vec!["-o", "out.bin", "--", "--image=file=img.o,triple=t"],
    ];
    let mut failures = Vec::new();
    for args in cases {
        failures.extend(differences("errors", &inputs, &strings(&args)));
    }
    // A response file.
    let mut with_rsp = inputs.clone();
    with_rsp.push((
        "args.rsp",
        b"-o out.bin\n'--image=file=img.o,triple=t,arch=a b'\n".to_vec(),
    ));
    failures.extend(differences("rsp", &with_rsp, &strings(&["@args.rsp"])));
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Where LLVM 19 and 22 differ, ours follows 22 (the project's default reference).
#[test]
fn divergences_follow_llvm22() {
    let inputs = image_inputs();
    for args in [
        strings(&["-o", "out.bin", "--image=file=img.o,arch=gfx90a"]),
        strings(&["-o", "out.bin", "--image=triple=t,arch=x"]),
        Vec::new(),
        strings(&["--help"]),
    ] {
        let r19 = run(Packager::Llvm19, &inputs, &args);
        let r22 = run(Packager::Llvm22, &inputs, &args);
        let ours = run(Packager::Ours22, &inputs, &args);
        assert_ne!(
            r19, r22,
            "LLVM 19 and 22 agree on {args:?}: not a divergence"
        );
        assert_eq!(ours, r22, "{args:?}");
    }
}

/// Output of LLVM 22 holding images of every kind and three triples, for extraction.
fn packaged_by_llvm22(inputs: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let args = strings(&[
        "-o",
        "pk.bin",
        "--image=file=img.o,file=k.s,triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=hip",
        "--image=file=dev.bc,triple=amdgcn-amd-amdhsa,arch=gfx1100,kind=openmp",
        "--image=file=k.cubin,file=k.fatbin,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=cuda",
        "--image=file=noext,triple=spirv64,kind=sycl",
        "--image=file=host.o,triple=x86_64-unknown-linux-gnu,arch=generic,kind=openmp",
        "--image=file=host.bc,triple=x86_64-unknown-linux-gnu,arch=generic,kind=openmp",
    ]);
    let r = run(Packager::Llvm22, inputs, &args);
    assert_eq!(r.code, Some(0), "{}", describe(&r));
    r.files["pk.bin"].clone()
}

/// An x86-64 ELF object and its bitcode twin with global, weak, local and common
/// symbols, compiled by clang 19 (archive members need real symbol tables).
fn host_objects() -> Vec<(&'static str, Vec<u8>)> {
    let clang = require(CLANG19);
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("h.c");
    std::fs::write(
        &src,
        "int f(void){return 1;} int g; static int h(void){return 2;}\n\
         int (*p)(void)=h; __attribute__((weak)) int w(void){return 3;} extern int u(void);\n\
         int call(void){return u();}\n",
    )
    .expect("write h.c");
    let mut out = Vec::new();
    for (name, extra) in [("host.o", None), ("host.bc", Some("-emit-llvm"))] {
        let obj = dir.path().join(name);
        let mut cmd = Command::new(&clang);
        cmd.arg("-c").arg(&src).arg("-o").arg(&obj);
        cmd.args(extra);
        let st = cmd.status().expect("run clang 19");
        assert!(st.success(), "clang 19 failed on h.c");
        out.push((name, std::fs::read(&obj).expect("read object")));
    }
    out
}

#[test]
fn extract_names_files_and_archives_match() {
    let mut inputs = image_inputs();
    inputs.extend(host_objects());
    let pk = packaged_by_llvm22(&inputs);
    let ins = vec![("pk.bin", pk.clone()), ("sub/dir.x/pk.bin", pk)];
    let cases: Vec<Vec<&str>> = vec![
        vec!["pk.bin", "--image=arch=gfx90a"],
        vec![
            "pk.bin",
            "--image=triple=amdgcn-amd-amdhsa",
            "--image=kind=cuda",
        ],
        vec!["pk.bin", "--image=kind=hip"],
        vec!["pk.bin", "--image=kind=openmp,file=last.o"],
        vec!["pk.bin", "--image=kind=sycl"],
        vec!["pk.bin", "--image=kind=none"],
        vec!["pk.bin", "--image=arch="],
        vec!["pk.bin", "--image=arch=nothing"],
        vec![
            "pk.bin",
            "--image=triple=nvptx64-nvidia-cuda,file=one.cubin",
        ],
        vec!["sub/dir.x/pk.bin", "--image=kind=openmp"],
        vec![
            "sub/dir.x/pk.bin",
            "--image=triple=amdgcn-amd-amdhsa,file=amd.a",
            "--archive",
        ],
        vec![
            "sub/dir.x/pk.bin",
            "--image=triple=x86_64-unknown-linux-gnu,file=host.a",
            "--archive",
        ],
        vec!["pk.bin", "--image=arch=generic,file=host.a", "--archive"],
        vec!["pk.bin", "--image=kind=openmp,file=omp.a", "--archive"],
        vec!["pk.bin", "--image=kind=cuda", "--archive"],
        vec!["pk.bin"],
        vec!["missing.bin", "--image=kind=hip"],
        vec!["pk.bin", "--image=file=sub"],
    ];
    let mut failures = Vec::new();
    for args in cases {
        failures.extend(differences("extract", &ins, &strings(&args)));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn extract_from_archives_and_objects_matches() {
    let mut inputs = image_inputs();
    inputs.extend(host_objects());
    let pk = packaged_by_llvm22(&inputs);
    // An archive of two binaries (as members) built by ours, read by both.
    let archive = offload_build::package::archive::write_archive(&[
        ("a.bin", &pk),
        ("b/long-member-name.bin", &pk),
    ])
    .expect("archive");
    let embedded = embed(&pk);
    let ins = vec![("lib.a", archive), ("w.o", embedded)];
    let mut failures = Vec::new();
    for args in [
        vec!["lib.a", "--image=kind=cuda"],
        vec!["lib.a", "--image=arch=gfx90a,file=gfx.a", "--archive"],
        vec!["w.o", "--image=triple=amdgcn-amd-amdhsa"],
        vec![
            "w.o",
            "--image=triple=amdgcn-amd-amdhsa,file=w.a",
            "--archive",
        ],
    ] {
        failures.extend(differences("containers", &ins, &strings(&args)));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `bin` in a `.llvm.offloading` section (type SHT_LLVM_OFFLOADING, exclude) of an
/// x86-64 object, through LLVM 19's llvm-objcopy.
fn embed(bin: &[u8]) -> Vec<u8> {
    let objcopy = require("/usr/lib/llvm-19/bin/llvm-objcopy");
    let clang = require(CLANG19);
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("e.c"), "int e;\n").expect("write");
    std::fs::write(dir.path().join("sec.bin"), bin).expect("write");
    let st = Command::new(&clang)
        .args(["-c", "e.c", "-o", "e.o"])
        .current_dir(dir.path())
        .status()
        .expect("clang");
    assert!(st.success());
    let st = Command::new(&objcopy)
        .args([
            "--add-section",
            ".llvm.offloading=sec.bin",
            "--set-section-type",
            ".llvm.offloading=0x6fff4c0b",
            "--set-section-flags",
            ".llvm.offloading=exclude",
            "--set-section-alignment",
            ".llvm.offloading=8",
            "e.o",
            "w.o",
        ])
        .current_dir(dir.path())
        .status()
        .expect("llvm-objcopy");
    assert!(st.success(), "llvm-objcopy failed");
    std::fs::read(dir.path().join("w.o")).expect("read w.o")
}

fn objdump(version: u32, object: &[u8]) -> String {
    let exe = require(&format!("/usr/lib/llvm-{version}/bin/llvm-objdump"));
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("w.o"), object).expect("write");
    let out = Command::new(exe)
        .args(["--offloading", "w.o"])
        .current_dir(dir.path())
        .output()
        .expect("llvm-objdump");
    assert!(
        out.status.success(),
        "llvm-objdump {version}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `(kind, arch, triple, producer)` per image of an `llvm-objdump --offloading` listing.
fn parse_listing(text: &str) -> Vec<[String; 4]> {
    let mut out: Vec<[String; 4]> = Vec::new();
    for line in text.lines() {
        if line.starts_with("OFFLOADING IMAGE [") {
            out.push(Default::default());
            continue;
        }
        let Some(cur) = out.last_mut() else { continue };
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        let slot = match key {
            "kind" => 0,
            "arch" => 1,
            "triple" => 2,
            "producer" => 3,
            _ => continue,
        };
        cur[slot] = value.trim().to_owned();
    }
    out
}

fn objdump_kind_name(kind: Option<ImageKind>) -> &'static str {
    match kind {
        Some(ImageKind::Object) => "elf",
        Some(ImageKind::Bitcode) => "llvm ir",
        Some(ImageKind::Cubin) => "cubin",
        Some(ImageKind::Fatbinary) => "fatbinary",
        Some(ImageKind::Ptx) => "ptx",
        _ => "<none>",
    }
}

/// What our reader finds in `object`, listed as llvm-objdump `version` would.
fn our_listing(object: &[u8], version: u32) -> Vec<[String; 4]> {
    let llvm = LlvmVersion::new(version);
    let found = scan(object, "w.o").expect("our scan");
    let mut out = Vec::new();
    for f in &found {
        for e in f.binary().entries() {
            out.push([
                objdump_kind_name(e.image_kind().kind()).to_owned(),
                String::from_utf8_lossy(e.arch()).into_owned(),
                String::from_utf8_lossy(e.triple()).into_owned(),
                e.offload_kind().name(llvm).to_owned(),
            ]);
        }
    }
    out
}

#[test]
fn objdump_lists_what_we_write() {
    let inputs = image_inputs();
    let args = strings(&[
        "-o",
        "out.bin",
        "--image=file=img.o,file=dev.bc,triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=hip",
        "--image=file=k.cubin,file=k.fatbin,file=k.s,triple=nvptx64-nvidia-cuda,arch=sm_90,kind=cuda",
        "--image=file=noext,triple=x86_64-unknown-linux-gnu,arch=generic,kind=openmp,feature=+x",
    ]);
    for (ours, reference, version) in [
        (Packager::Ours19, Packager::Llvm19, 19),
        (Packager::Ours22, Packager::Llvm22, 22),
    ] {
        let o = run(ours, &inputs, &args);
        let r = run(reference, &inputs, &args);
        assert_eq!(o.code, Some(0), "{}", describe(&o));
        let ours_obj = embed(&o.files["out.bin"]);
        let listing = objdump(version, &ours_obj);
        let entries = parse_listing(&listing);
        assert_eq!(
            entries.len(),
            6,
            "llvm-objdump {version} listed:\n{listing}"
        );
        assert_eq!(entries, our_listing(&ours_obj, version), "{listing}");
        assert_eq!(
            entries[0],
            ["elf", "gfx90a", "amdgcn-amd-amdhsa", "hip"].map(String::from),
            "{listing}"
        );
        assert_eq!(entries[4][0], "ptx");
        assert_eq!(entries[5][3], "openmp");
        // The same listing as for the reference tool's output.
        assert_eq!(listing, objdump(version, &embed(&r.files["out.bin"])));
    }
}

/// Compiles `k.hip` (device variable and function only) with clang 19's new offload
/// driver in RDC mode, for the given architectures.
fn hip_object(dir: &Path, out: &str, archs: &[&str], prefix: &str) -> Vec<u8> {
    let clang = require(CLANG19);
    let src = dir.join(format!("{out}.hip"));
    std::fs::write(
        &src,
        format!(
            "__attribute__((device)) int {prefix}v = 1;\n\
             __attribute__((device)) int {prefix}f(int x) {{ return x + {prefix}v; }}\n"
        ),
    )
    .expect("write hip");
    let mut cmd = Command::new(clang);
    cmd.args([
        "-x",
        "hip",
        "--offload-new-driver",
        "-fgpu-rdc",
        "-nogpulib",
        "-nogpuinc",
        "-c",
    ])
    .arg(&src)
    .arg("-o")
    .arg(dir.join(out));
    for a in archs {
        cmd.arg(format!("--offload-arch={a}"));
    }
    let o = cmd.output().expect("clang 19");
    assert!(
        o.status.success(),
        "clang 19 -x hip: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::read(dir.join(out)).expect("read object")
}

#[test]
fn reader_lists_clang19_hip_objects_and_ld_r() {
    let dir = tempfile::tempdir().expect("tempdir");
    let k1 = hip_object(dir.path(), "k1.o", &["gfx90a"], "a");
    let k2 = hip_object(dir.path(), "k2.o", &["gfx90a", "gfx1100"], "b");
    require("/usr/bin/ld");
    let st = Command::new("/usr/bin/ld")
        .args(["-r", "k1.o", "k2.o", "-o", "kr.o"])
        .current_dir(dir.path())
        .status()
        .expect("ld -r");
    assert!(st.success(), "ld -r failed");
    let kr = std::fs::read(dir.path().join("kr.o")).expect("kr.o");
    for (name, obj, n) in [("k1.o", &k1, 1), ("k2.o", &k2, 2), ("kr.o", &kr, 3)] {
        let listing = objdump(19, obj);
        let reference = parse_listing(&listing);
        assert_eq!(reference.len(), n, "{name}: {listing}");
        let ours = our_listing(obj, 19);
        assert_eq!(ours, reference, "{name}");
        // HIP from clang 19 is 3: LLVM 22 sees producer `none`, and says so too.
        assert!(ours.iter().all(|e| e[0] == "llvm ir" && e[3] == "hip"));
        assert_eq!(
            parse_listing(&objdump(22, obj)),
            our_listing(obj, 22),
            "{name}"
        );
        let found = scan(obj, name).expect("scan");
        assert_eq!(found.len(), n, "{name}: one binary per image");
        assert!(found.iter().all(|f| {
            f.section
                .as_deref()
                .is_some_and(|s| s.starts_with(".llvm.offloading"))
        }));
    }
    // Extraction from the objects matches LLVM 19 and 22 byte for byte.
    let ins = vec![("k1.o", k1), ("kr.o", kr)];
    let mut failures = Vec::new();
    for args in [
        vec!["kr.o", "--image=arch=gfx90a"],
        vec![
            "kr.o",
            "--image=triple=amdgcn-amd-amdhsa,file=dev.a",
            "--archive",
        ],
        vec!["k1.o", "--image=kind=hip"],
    ] {
        failures.extend(differences("hip objects", &ins, &strings(&args)));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
