//! File names, targets and image strings that are not UTF-8 (issue 16, finding 2): LLVM 22's
//! clang-offload-bundler and llvm-offload-binary treat them as bytes, and so must ours. Each
//! case runs the same argument lists (built from bytes) through LLVM's tool and ours, each in
//! its own directory, and compares every step's status, stdout and stderr (the tool's path
//! replaced) and then every file left in the directory, names and contents, byte for byte.
//! `offload-build inspect` and `extract` (no LLVM counterpart) read and write such names too.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::require;
use crate::support::run::RunDir;

/// An argument from bytes.
fn arg(b: &[u8]) -> OsString {
    OsString::from_vec(b.to_vec())
}

/// One step: its arguments.
type Step = Vec<OsString>;

/// What a run left: per step (status, stdout, stderr), then every file (name, contents).
type Outcome = (Vec<(i32, Vec<u8>, Vec<u8>)>, BTreeMap<Vec<u8>, Vec<u8>>);

fn replace(hay: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(hay.len());
    let mut i = 0;
    while i < hay.len() {
        if !needle.is_empty() && hay[i..].starts_with(needle) {
            out.extend_from_slice(with);
            i += needle.len();
        } else {
            out.push(hay[i]);
            i += 1;
        }
    }
    out
}

/// Runs `steps` with `tool` in a fresh directory prepared by `setup`.
fn run_steps(label: &str, tool: &Path, setup: fn(&Path), steps: &[Step]) -> Outcome {
    let dir = RunDir::new(label);
    let d = dir.path();
    setup(d);
    let mut results = Vec::new();
    for step in steps {
        let out = Command::new(tool)
            .current_dir(d)
            .args(step)
            .output()
            .expect("run the tool");
        let stderr = replace(&out.stderr, tool.as_os_str().as_bytes(), b"TOOL");
        results.push((out.status.code().unwrap_or(-1), out.stdout, stderr));
    }
    let mut files = BTreeMap::new();
    for e in std::fs::read_dir(d).unwrap() {
        let e = e.unwrap();
        files.insert(
            e.file_name().into_vec(),
            std::fs::read(e.path()).unwrap_or_default(),
        );
    }
    (results, files)
}

fn show(b: &[u8]) -> String {
    b.escape_ascii().to_string()
}

/// Runs `steps` with LLVM 22's `reference` and with `ours`, and requires the same outcome.
/// Returns ours.
fn same_as_llvm(
    label: &str,
    reference: &Path,
    ours: &Path,
    setup: fn(&Path),
    steps: &[Step],
) -> Outcome {
    let want = run_steps(&format!("{label}-llvm22"), reference, setup, steps);
    let got = run_steps(&format!("{label}-ours"), ours, setup, steps);
    for (i, (w, g)) in want.0.iter().zip(&got.0).enumerate() {
        let args: Vec<String> = steps[i].iter().map(|a| show(a.as_bytes())).collect();
        assert_eq!(
            w.0,
            g.0,
            "{label}: step {i} {args:?}: status; stderr ours: {}",
            show(&g.2)
        );
        assert_eq!(show(&w.1), show(&g.1), "{label}: step {i} {args:?}: stdout");
        assert_eq!(show(&w.2), show(&g.2), "{label}: step {i} {args:?}: stderr");
    }
    let names = |f: &BTreeMap<Vec<u8>, Vec<u8>>| f.keys().map(|k| show(k)).collect::<Vec<_>>();
    assert_eq!(names(&want.1), names(&got.1), "{label}: files");
    for (name, data) in &want.1 {
        assert!(got.1[name] == *data, "{label}: {} differs", show(name));
    }
    got
}

const HOST: &[u8] = b"host-x86_64-unknown-linux-gnu";
/// A triple whose OS has a byte that is not UTF-8: LLVM keeps it in the bundle ID.
const DEVICE: &[u8] = b"hip-amdgcn-amd-amdhsa\xff--gfx90a";

fn bundle_inputs(d: &Path) {
    std::fs::write(
        d.join(OsString::from_vec(b"h\xff.bin".to_vec())),
        b"host code",
    )
    .unwrap();
    std::fs::write(d.join("d.bin"), b"device code").unwrap();
}

fn targets(ts: &[&[u8]]) -> OsString {
    arg(&[b"-targets=".as_slice(), &ts.join(&b","[..])].concat())
}

#[test]
fn bundler_names_and_targets_are_bytes() {
    let llvm = require("/usr/lib/llvm-22/bin/clang-offload-bundler");
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_offload-bundler"));
    let mut steps: Vec<Step> = Vec::new();
    for (ty, out) in [(&b"bc"[..], &b"out\xfe.bc"[..]), (b"ll", b"out\xfe.ll")] {
        let t = arg(&[b"-type=", ty].concat());
        let o = |prefix: &[u8]| arg(&[prefix, out].concat());
        // A non-UTF-8 input, output and target.
        steps.push(vec![
            t.clone(),
            targets(&[HOST, DEVICE]),
            arg(b"-input=h\xff.bin"),
            arg(b"-input=d.bin"),
            o(b"-output="),
        ]);
        steps.push(vec![t.clone(), arg(b"-list"), o(b"-input=")]);
        // Unbundled into non-UTF-8 outputs.
        steps.push(vec![
            t.clone(),
            arg(b"-unbundle"),
            targets(&[DEVICE, HOST]),
            o(b"-input="),
            arg(&[b"-output=dev\xfd.", ty].concat()),
            arg(&[b"-output=host\xfc.", ty].concat()),
        ]);
        // A target whose bytes differ: found as LLVM finds it, or missing as LLVM says.
        steps.push(vec![
            t.clone(),
            arg(b"-unbundle"),
            targets(&[b"hip-amdgcn-amd-amdhsa\xfe--gfx90a"]),
            o(b"-input="),
            arg(&[b"-output=other\xfb.", ty].concat()),
        ]);
        steps.push(vec![
            t.clone(),
            arg(b"-unbundle"),
            targets(&[b"hip-amdgcn-amd-amdhsa\xfe--gfx906"]),
            o(b"-input="),
            arg(&[b"-output=missing\xfb.", ty].concat()),
        ]);
    }
    // Compressed, and listed from there.
    steps.push(vec![
        arg(b"-type=bc"),
        arg(b"-compress"),
        targets(&[HOST, DEVICE]),
        arg(b"-input=h\xff.bin"),
        arg(b"-input=d.bin"),
        arg(b"-output=z\xfe.bc"),
    ]);
    steps.push(vec![
        arg(b"-type=bc"),
        arg(b"-list"),
        arg(b"-input=z\xfe.bc"),
    ]);
    // Errors that name the bytes: a missing input, an output in a missing directory, an
    // offload kind that is not one.
    steps.push(vec![
        arg(b"-type=bc"),
        arg(b"-list"),
        arg(b"-input=nope\xff.bc"),
    ]);
    steps.push(vec![
        arg(b"-type=bc"),
        targets(&[HOST, DEVICE]),
        arg(b"-input=h\xff.bin"),
        arg(b"-input=d.bin"),
        arg(b"-output=no\xffdir/out.bc"),
    ]);
    steps.push(vec![
        arg(b"-type=bc"),
        targets(&[HOST, b"hip\xff-amdgcn-amd-amdhsa--gfx90a"]),
        arg(b"-input=h\xff.bin"),
        arg(b"-input=d.bin"),
        arg(b"-output=kind.bc"),
    ]);
    let (results, files) = same_as_llvm("names-bundler", &llvm, &ours, bundle_inputs, &steps);
    // The cases did what they claim: the outputs exist under their bytes, the ID keeps its byte.
    assert_eq!(results[0].0, 0);
    assert!(files.contains_key(&b"out\xfe.bc"[..]) && files.contains_key(&b"dev\xfd.bc"[..]));
    assert_eq!(files[&b"dev\xfd.bc"[..]], b"device code");
    assert!(results[1].1.windows(DEVICE.len()).any(|w| w == DEVICE));
    assert!(
        results
            .iter()
            .any(|r| r.2.windows(8).any(|w| w == b"nope\xff.bc"))
    );
    let missing = b"Can't find bundles for hip-amdgcn-amd-amdhsa\xfe--gfx906";
    assert!(
        results[4].2.windows(missing.len()).any(|w| w == missing),
        "{}",
        show(&results[4].2)
    );
}

fn package_inputs(d: &Path) {
    std::fs::write(
        d.join(OsString::from_vec(b"in\xff.o".to_vec())),
        b"\x7fELF code",
    )
    .unwrap();
}

#[test]
fn packager_names_and_strings_are_bytes() {
    let llvm = require("/usr/lib/llvm-22/bin/llvm-offload-binary");
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_offload-packager"));
    let steps: Vec<Step> = vec![
        // A non-UTF-8 input (file=), output, triple and arch.
        vec![
            arg(b"-o"),
            arg(b"p\xfe.bin"),
            arg(b"--image=file=in\xff.o,triple=amdgcn-amd-amdhsa\xfa,arch=gfx90a\xff,kind=hip"),
        ],
        // Extracted by those strings into a named file, into the default name (made of the
        // input's stem, triple and arch) and into an archive (member named after the input).
        vec![
            arg(b"p\xfe.bin"),
            arg(b"--image=file=ex\xfd.o,triple=amdgcn-amd-amdhsa\xfa,arch=gfx90a\xff"),
        ],
        vec![
            arg(b"p\xfe.bin"),
            arg(b"--image=triple=amdgcn-amd-amdhsa\xfa"),
        ],
        vec![
            arg(b"p\xfe.bin"),
            arg(b"--image=file=ar\xfd.a,arch=gfx90a\xff"),
            arg(b"--archive"),
        ],
        // Errors naming the bytes.
        vec![
            arg(b"-o"),
            arg(b"x.bin"),
            arg(b"--image=file=missing\xff.o,triple=a,arch=b"),
        ],
        vec![arg(b"missing\xfe.bin"), arg(b"--image=file=x.o")],
    ];
    let (results, files) = same_as_llvm("names-packager", &llvm, &ours, package_inputs, &steps);
    assert_eq!(results[0].0, 0);
    assert_eq!(files[&b"ex\xfd.o"[..]], b"\x7fELF code");
    assert!(files.contains_key(&b"p\xfe-amdgcn-amd-amdhsa\xfa-gfx90a\xff.0.o"[..]));
}

#[test]
fn offload_build_reads_and_writes_names_as_bytes() {
    let llvm = require("/usr/lib/llvm-22/bin/clang-offload-bundler");
    let dir = RunDir::new("names-offload-build");
    let d = dir.path();
    bundle_inputs(d);
    let st = Command::new(&llvm)
        .current_dir(d)
        .args([
            arg(b"-type=bc"),
            targets(&[HOST, DEVICE]),
            arg(b"-input=h\xff.bin"),
            arg(b"-input=d.bin"),
            arg(b"-output=fat\xfe.bc"),
        ])
        .status()
        .unwrap();
    assert!(st.success());
    let exe = env!("CARGO_BIN_EXE_offload-build");
    let out = Command::new(exe)
        .current_dir(d)
        .args([arg(b"inspect"), arg(b"fat\xfe.bc")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out.stderr));
    assert!(
        out.stdout.starts_with(b"fat\xfe.bc: bundle"),
        "{}",
        show(&out.stdout)
    );
    let mut got = Vec::new();
    for (index, name) in [("0", &b"x\xfd.bin"[..]), ("1", b"y\xfc.bin")] {
        let out = Command::new(exe)
            .current_dir(d)
            .args([arg(b"extract"), arg(b"fat\xfe.bc"), arg(b"--index")])
            .arg(index)
            .args([arg(b"-o"), arg(name)])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", show(&out.stderr));
        got.push(std::fs::read(d.join(OsString::from_vec(name.to_vec()))).unwrap());
    }
    got.sort();
    assert_eq!(got, [&b"device code"[..], b"host code"]);
    let out = Command::new(exe)
        .current_dir(d)
        .args([arg(b"inspect"), arg(b"nope\xff.bc")])
        .output()
        .unwrap();
    assert_eq!(
        show(&out.stderr),
        show(b"offload-build: error: 'nope\xff.bc': No such file or directory\n")
    );
}

/// A fat object (`-type=o`, an ELF host) whose device target holds a byte that is not UTF-8:
/// its section is named with the same bytes, so LLVM 22 lists ours as its own and extracts
/// the same device code from it (fat objects match LLVM's section by section, not byte for
/// byte: `fatobj_diff`).
#[test]
fn fat_object_section_names_are_bytes() {
    let llvm = require("/usr/lib/llvm-22/bin/clang-offload-bundler");
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_offload-bundler"));
    let clang = require(crate::support::CLANG19);
    let dir = RunDir::new("names-fatobj");
    let d = dir.path();
    std::fs::write(d.join("f.c"), "int f(void) { return 1; }\n").unwrap();
    let st = Command::new(&clang)
        .current_dir(d)
        .args(["-c", "f.c", "-o"])
        .arg(arg(b"h\xff.o"))
        .status()
        .unwrap();
    assert!(st.success());
    std::fs::write(d.join("d.bin"), b"device code").unwrap();
    let run = |tool: &Path, args: &[OsString]| {
        let out = Command::new(tool)
            .current_dir(d)
            .env("PATH", "/usr/lib/llvm-22/bin:/usr/bin:/bin")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", show(&out.stderr));
        out.stdout
    };
    for (tool, name) in [(&llvm, &b"llvm"[..]), (&ours, b"ours")] {
        run(
            tool,
            &[
                arg(b"-type=o"),
                targets(&[HOST, DEVICE]),
                arg(b"-input=h\xff.o"),
                arg(b"-input=d.bin"),
                arg(&[b"-output=fat-", name, b"\xfe.o"].concat()),
            ],
        );
    }
    let list = |file: &[u8]| {
        run(
            &llvm,
            &[
                arg(b"-type=o"),
                arg(b"-list"),
                arg(&[b"-input=", file].concat()),
            ],
        )
    };
    let listed = list(b"fat-ours\xfe.o");
    assert_eq!(show(&listed), show(&list(b"fat-llvm\xfe.o")));
    assert!(listed.windows(DEVICE.len()).any(|w| w == DEVICE));
    run(
        &llvm,
        &[
            arg(b"-type=o"),
            arg(b"-unbundle"),
            targets(&[DEVICE]),
            arg(b"-input=fat-ours\xfe.o"),
            arg(b"-output=dev\xfd.bin"),
        ],
    );
    let got = std::fs::read(d.join(OsString::from_vec(b"dev\xfd.bin".to_vec()))).unwrap();
    assert_eq!(got, b"device code");
}

/// `offload-build compile` with a source, a header, an output and a depfile whose names are not
/// UTF-8: the depfile names the files with their bytes, so GNU make finds every one (nothing
/// to do on a second run) and rebuilds once the header is touched.
#[test]
fn compile_depfile_names_are_bytes() {
    let clang = require(crate::support::CLANG19);
    let dir = RunDir::new("names-compile");
    let d = dir.path();
    let p = |b: &[u8]| d.join(OsString::from_vec(b.to_vec()));
    std::fs::write(
        p(b"h\xfe.h"),
        "#pragma once\n#define __global__ __attribute__((global))\n",
    )
    .unwrap();
    std::fs::write(
        p(b"k\xff.hip"),
        [
            &b"#include \"h\xfe.h\"\n"[..],
            b"extern \"C\" __global__ void k(float* x) { x[0] = 1; }\n",
        ]
        .concat(),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_offload-build"))
        .current_dir(d)
        .args([arg(b"compile"), arg(b"k\xff.hip"), arg(b"--arch=gfx90a")])
        .arg("--compiler")
        .arg(&clang)
        .args([
            arg(b"-o"),
            arg(b"k\xfd.o"),
            arg(b"--depfile"),
            arg(b"k\xfc.d"),
        ])
        .args(["-j", "1"])
        .env_remove("OFFLOAD_BUILD_LAUNCHER")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out.stderr));
    let dep = std::fs::read(p(b"k\xfc.d")).unwrap();
    assert!(dep.starts_with(b"k\xfd.o:"), "{}", show(&dep));
    assert!(
        dep.windows(9).any(|w| w == b"k\xff.hip \\\n"),
        "{}",
        show(&dep)
    );
    assert!(dep.ends_with(b"/h\xfe.h\n"), "{}", show(&dep));
    std::fs::write(
        d.join("Makefile"),
        [&b"k\xfd.o:\n\ttouch 'k\xfd.o' && echo built >> make.log\ninclude k\xfc.d\n"[..]].concat(),
    )
    .unwrap();
    let make = || {
        let o = Command::new("make")
            .current_dir(d)
            .env_remove("MAKEFLAGS")
            .env_remove("MAKELEVEL")
            .env_remove("MFLAGS")
            .output()
            .unwrap();
        assert!(o.status.success(), "make: {}", show(&o.stderr));
        std::fs::read_to_string(d.join("make.log"))
            .unwrap_or_default()
            .lines()
            .count()
    };
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(20);
    std::fs::File::options()
        .write(true)
        .open(p(b"k\xfd.o"))
        .unwrap()
        .set_modified(later)
        .unwrap();
    assert_eq!(make(), 0, "make rebuilt an up-to-date output");
    std::fs::File::options()
        .write(true)
        .open(p(b"h\xfe.h"))
        .unwrap()
        .set_modified(later + std::time::Duration::from_secs(10))
        .unwrap();
    assert_eq!(make(), 1, "make missed the header");
}
