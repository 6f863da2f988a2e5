//! The golden tables of the triple port's unit tests: what LLVM 22 does with the inputs in
//! [`crate::probes`].
//!
//! - `BUNDLER_*`: `clang-offload-bundler` 22 itself, run on one-byte `-type=bc` files:
//!   bundling `host-<input>` and listing the entry back shows the normalized triple the bundler
//!   stores (or the "unknown target triple" rejection); bundling `openmp-<stored>-` and
//!   unbundling `openmp-<requested>-` shows which stored triples satisfy which requests.
//! - `LLVM_*`: `llvm::Triple` of `libLLVM` 22, through the small C++ program
//!   `triple_probe.cpp`, built with LLVM 22's `clang++` against its headers (`llvm-22-dev`):
//!   `normalize` in all four forms, the components `Triple(StringRef)` parses, and
//!   `isCompatibleWith`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use offload_formats::id::triple::{Arch, Environment, ObjectFormat, Os, SubArch, Vendor};

use crate::probes;
use crate::tools::{Llvm, par_map, run, run_ok};

/// How the bundler stored `host-<input>`.
enum Stored {
    FourIdent(String),
    ThreeIdent(String),
    UnknownArch,
}

fn bundler(llvm: &Llvm) -> Command {
    Command::new(llvm.bin("clang-offload-bundler"))
}

fn bundle_host(llvm: &Llvm, dir: &Path, i: usize, input: &str) -> Result<Stored, String> {
    if input.contains(',') {
        return Err(format!("probe {input:?}: -targets cannot carry a ','"));
    }
    let out = dir.join(format!("host{i}.bc"));
    let res = run(bundler(llvm)
        .arg("-type=bc")
        .arg(format!("-targets=host-{input}"))
        .arg(format!("-input={}", dir.join("in.bc").display()))
        .arg(format!("-output={}", out.display())))?;
    let err = String::from_utf8_lossy(&res.stderr);
    if !res.status.success() {
        return if err.contains(&format!("unknown target triple '{input}'")) {
            Ok(Stored::UnknownArch)
        } else {
            Err(format!("bundling host-{input}: {err}"))
        };
    }
    let list = run_ok(
        bundler(llvm)
            .args(["-type=bc", "-list"])
            .arg(format!("-input={}", out.display())),
    )?;
    let entry = list.trim_end_matches('\n');
    let stored = entry
        .strip_prefix("host-")
        .filter(|_| !entry.contains('\n'))
        .ok_or_else(|| format!("bundling host-{input}: unexpected -list output {list:?}"))?;
    Ok(match stored.strip_suffix("--") {
        Some(three) => Stored::ThreeIdent(three.to_string()),
        None => Stored::FourIdent(
            stored
                .strip_suffix('-')
                .ok_or_else(|| format!("bundling host-{input}: listed as {entry:?}"))?
                .to_string(),
        ),
    })
}

/// Bundles `openmp-<stored>-` (next to a host entry) and unbundles every `openmp-<request>-`.
fn compatible_row(
    llvm: &Llvm,
    dir: &Path,
    i: usize,
    stored: &str,
    requests: &[&str],
) -> Result<Vec<bool>, String> {
    let bundle = dir.join(format!("openmp{i}.bc"));
    let input = format!("-input={}", dir.join("in.bc").display());
    run_ok(
        bundler(llvm)
            .arg("-type=bc")
            .arg(format!(
                "-targets=host-x86_64-unknown-linux-gnu,openmp-{stored}-"
            ))
            .args([&input, &input])
            .arg(format!("-output={}", bundle.display())),
    )?;
    let list = run_ok(
        bundler(llvm)
            .args(["-type=bc", "-list"])
            .arg(format!("-input={}", bundle.display())),
    )?;
    if !list.lines().any(|l| l == format!("openmp-{stored}-")) {
        return Err(format!(
            "openmp-{stored}- is listed as {list:?}; pick a triple the bundler keeps as given"
        ));
    }
    let mut found = Vec::new();
    for (j, req) in requests.iter().enumerate() {
        let res = run(bundler(llvm)
            .args(["-type=bc", "-unbundle"])
            .arg(format!("-targets=openmp-{req}-"))
            .arg(format!("-input={}", bundle.display()))
            .arg(format!(
                "-output={}",
                dir.join(format!("out{i}_{j}.bc")).display()
            )))?;
        let err = String::from_utf8_lossy(&res.stderr);
        found.push(if res.status.success() {
            true
        } else if err.contains("Can't find bundles for") {
            false
        } else {
            return Err(format!(
                "unbundling openmp-{req}- from openmp-{stored}-: {err}"
            ));
        });
    }
    Ok(found)
}

/// Builds `triple_probe.cpp` against LLVM and answers `requests` (one per line) with it.
fn llvm_probe(llvm: &Llvm, dir: &Path, requests: &[String]) -> Result<Vec<String>, String> {
    let src = dir.join("triple_probe.cpp");
    let exe = dir.join("triple_probe");
    std::fs::write(&src, include_str!("triple_probe.cpp")).map_err(|e| e.to_string())?;
    let config = |arg: &str| -> Result<String, String> {
        Ok(run_ok(Command::new(llvm.bin("llvm-config")).arg(arg))?
            .trim()
            .to_string())
    };
    let (include, libdir) = (config("--includedir")?, config("--libdir")?);
    run_ok(
        Command::new(llvm.bin("clang++"))
            .args(["-std=c++17", "-O1", "-w"])
            .arg(format!("-I{include}"))
            .arg(&src)
            .arg(format!("-L{libdir}"))
            .arg("-lLLVM")
            .arg(format!("-Wl,-rpath,{libdir}"))
            .arg("-o")
            .arg(&exe),
    )
    .map_err(|e| {
        format!(
            "building the llvm::Triple probe (needs llvm-{}-dev): {e}",
            llvm.major
        )
    })?;
    let mut child = Command::new(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = requests.join("\n") + "\n";
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    writer
        .join()
        .expect("writer thread")
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "triple_probe failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let lines: Vec<String> = String::from_utf8(out.stdout)
        .map_err(|e| e.to_string())?
        .lines()
        .map(str::to_string)
        .collect();
    if lines.len() != requests.len() {
        return Err(format!(
            "triple_probe answered {} of {} requests",
            lines.len(),
            requests.len()
        ));
    }
    Ok(lines)
}

/// `Kind::Variant` of the value LLVM names `name`.
fn by_name<T: Copy + std::fmt::Debug>(
    kind: &str,
    all: &[T],
    name_of: fn(T) -> &'static str,
    name: &str,
) -> Result<String, String> {
    all.iter()
        .find(|&&v| name_of(v) == name)
        .map(|v| format!("{kind}::{v:?}"))
        .ok_or_else(|| format!("LLVM's {kind} {name:?} is not in offload-formats' {kind} enum"))
}

fn lit(s: &str) -> String {
    format!("{s:?}")
}

/// The whole `triple_golden.rs`.
pub fn render(llvm: &Llvm, header: &str) -> Result<String, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let dir = dir.path();
    std::fs::write(dir.join("in.bc"), b"x").map_err(|e| e.to_string())?;

    let inputs: Vec<(usize, &str)> = probes::BUNDLER_HOST_TRIPLES
        .iter()
        .copied()
        .enumerate()
        .collect();
    let stored = par_map(&inputs, |&(i, t)| bundle_host(llvm, dir, i, t));
    let (mut four, mut three, mut unknown) = (String::new(), String::new(), String::new());
    for (&(_, input), s) in inputs.iter().zip(stored) {
        match s? {
            Stored::FourIdent(s) => writeln!(four, "    ({}, {}),", lit(input), lit(&s)),
            Stored::ThreeIdent(s) => writeln!(three, "    ({}, {}),", lit(input), lit(&s)),
            Stored::UnknownArch => writeln!(unknown, "    {},", lit(input)),
        }
        .unwrap();
    }

    let rows: Vec<(usize, &str, &[&str])> = probes::BUNDLER_COMPATIBLE_GROUPS
        .iter()
        .flat_map(|g| g.iter().map(move |s| (*s, *g)))
        .enumerate()
        .map(|(i, (s, g))| (i, s, g))
        .collect();
    let found = par_map(&rows, |&(i, s, g)| compatible_row(llvm, dir, i, s, g));
    let mut compatible = String::new();
    for (&(_, stored, requests), found) in rows.iter().zip(found) {
        for (req, f) in requests.iter().zip(found?) {
            writeln!(compatible, "    ({}, {}, {f}),", lit(stored), lit(req)).unwrap();
        }
    }

    let mut requests: Vec<String> = Vec::new();
    requests.extend(probes::LLVM_NORMALIZE.iter().map(|s| format!("N\t{s}")));
    requests.extend(probes::LLVM_PARSE.iter().map(|s| format!("P\t{s}")));
    requests.extend(
        probes::LLVM_COMPATIBLE
            .iter()
            .map(|(a, b)| format!("C\t{a}\t{b}")),
    );
    if requests.iter().any(|r| r.contains('\n')) {
        return Err("probe inputs cannot contain newlines".into());
    }
    let answers = llvm_probe(llvm, dir, &requests)?;
    let (norm, rest) = answers.split_at(probes::LLVM_NORMALIZE.len());
    let (parse, compat) = rest.split_at(probes::LLVM_PARSE.len());

    let mut normalize = String::new();
    for (input, a) in probes::LLVM_NORMALIZE.iter().zip(norm) {
        let forms: Vec<String> = a.split('\t').map(lit).collect();
        if forms.len() != 4 {
            return Err(format!("normalize({input:?}): unexpected answer {a:?}"));
        }
        writeln!(normalize, "    ({}, [{}]),", lit(input), forms.join(", ")).unwrap();
    }
    let mut parsed = String::new();
    for (input, a) in probes::LLVM_PARSE.iter().zip(parse) {
        let f: Vec<&str> = a.split('\t').collect();
        let [arch, sub, vendor, os, env, format] = f[..] else {
            return Err(format!("Triple({input:?}): unexpected answer {a:?}"));
        };
        // LLVM has no name for sub-architectures; SubArch follows LLVM's declaration order.
        let sub = sub
            .parse::<usize>()
            .ok()
            .and_then(|i| SubArch::ALL.get(i))
            .ok_or_else(|| format!("Triple({input:?}): sub-arch {sub} is not in SubArch"))?;
        writeln!(
            parsed,
            "    ({}, {}, SubArch::{sub:?}, {}, {}, {}, {}),",
            lit(input),
            by_name("Arch", Arch::ALL, Arch::name, arch)?,
            by_name("Vendor", Vendor::ALL, Vendor::name, vendor)?,
            by_name("Os", Os::ALL, Os::name, os)?,
            by_name("Environment", Environment::ALL, Environment::name, env)?,
            by_name(
                "ObjectFormat",
                ObjectFormat::ALL,
                ObjectFormat::name,
                format
            )?,
        )
        .unwrap();
    }
    let mut llvm_compatible = String::new();
    for ((a, b), c) in probes::LLVM_COMPATIBLE.iter().zip(compat) {
        let c = match c.as_str() {
            "1" => true,
            "0" => false,
            _ => {
                return Err(format!(
                    "isCompatibleWith({a:?}, {b:?}): unexpected answer {c:?}"
                ));
            }
        };
        writeln!(llvm_compatible, "    ({}, {}, {c}),", lit(a), lit(b)).unwrap();
    }

    let mut s = header.to_string();
    s += "//! Golden tables for the triple port's unit tests (`id/triple/tests.rs`): what LLVM 22's\n\
          //! `clang-offload-bundler` and `llvm::Triple` do with the inputs listed in\n\
          //! `dev-tools/gen-tables/src/probes.rs`. Test data only.\n\
          \n\
          use crate::id::triple::{Arch, Environment, ObjectFormat, Os, SubArch, Vendor};\n";
    let mut table = |doc: &str, decl: &str, body: &str| {
        write!(s, "\n{doc}pub(crate) const {decl} = &[\n{body}];\n").unwrap();
    };
    table(
        "/// `(A-B-C-D, stored)`: clang-offload-bundler 22 run with `-targets=host-A-B-C-D`\n\
         /// lists the entry `host-<stored>-`, i.e. `normalize(A-B-C-D, FourIdent)`.\n",
        "BUNDLER_FOUR_IDENT: &[(&str, &str)]",
        &four,
    );
    table(
        "/// `(A-B-C-D, stored)` for `amdhsa` triples, which the bundler lists as\n\
         /// `host-<stored>--`, i.e. `normalize(A-B-C-D, ThreeIdent)`.\n",
        "BUNDLER_THREE_IDENT: &[(&str, &str)]",
        &three,
    );
    table(
        "/// `A-B-C-D` that the bundler rejects with \"unknown target triple\": exactly\n\
         /// the ones whose positional arch does not parse.\n",
        "BUNDLER_UNKNOWN_ARCH: &[&str]",
        &unknown,
    );
    table(
        "/// `(stored, requested, found)`: a bundle holding `openmp-<stored>-` (as listed\n\
         /// by the bundler) unbundled with `-targets=openmp-<requested>-` (requested as the\n\
         /// bundler standardizes it) extracts the entry, or fails with \"Can't find bundles\".\n",
        "BUNDLER_COMPATIBLE: &[(&str, &str, bool)]",
        &compatible,
    );
    table(
        "/// `(input, [Any, ThreeIdent, FourIdent, FiveIdent])` from LLVM 22's\n\
         /// `Triple::normalize`, called directly.\n",
        "LLVM_NORMALIZE: &[(&str, [&str; 4])]",
        &normalize,
    );
    table(
        "/// `(input, arch, sub-arch, vendor, OS, environment, object format)` from\n\
         /// LLVM 22's `Triple(StringRef)`.\n",
        "LLVM_PARSE: &[(&str, Arch, SubArch, Vendor, Os, Environment, ObjectFormat)]",
        &parsed,
    );
    table(
        "/// `(a, b, Triple(a).isCompatibleWith(Triple(b)))` from LLVM 22.\n",
        "LLVM_COMPATIBLE: &[(&str, &str, bool)]",
        &llvm_compatible,
    );
    Ok(s)
}
