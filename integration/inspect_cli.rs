//! `offload-build inspect` and `extract` on what clang and the linkers make: clang 19's HIP
//! object, an executable and a shared library linked from two translation units (two bundles
//! in one `.hip_fatbin`), a `.hip_fatbin` of three concatenated compressed bundles, a static
//! archive, raw bundles and offload binaries. Every entry must be found, extracted bytes must
//! equal the original code objects, and the `--json` output is checked field by field.
//! Malformed and truncated inputs must give errors, never a panic.

use std::path::Path;

use serde_json::Value;

use offload_build::embed::HipObject;

use crate::hostobj_fixtures::{ARCHS, HostFixtures, LLVM19_BIN, host, run};
use crate::support::run::offload_build;

fn tool(dir: &Path, args: &[&str]) -> (i32, String, String) {
    offload_build(dir, args, &[])
}

fn json(dir: &Path, file: &Path) -> Value {
    json_with(dir, file, &[])
}

fn json_with(dir: &Path, file: &Path, options: &[&str]) -> Value {
    let mut args = vec!["inspect", "--json"];
    args.extend(options);
    args.push(file.to_str().unwrap());
    let (code, out, err) = tool(dir, &args);
    assert_eq!(code, 0, "inspect {}: {err}", file.display());
    let v: Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(v.as_array().map(Vec::len), Some(1));
    v[0].clone()
}

fn extract(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = dir.join("extracted");
    let _ = std::fs::remove_file(&out);
    let mut all = vec!["extract"];
    all.extend(args);
    all.extend(["-o", out.to_str().unwrap()]);
    let (code, _, err) = tool(dir, &all);
    assert_eq!(code, 0, "extract {args:?}: {err}");
    std::fs::read(out).unwrap()
}

/// Device entries (not host) of a report, as (id, index).
fn device_entries(report: &Value) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for c in report["containers"].as_array().unwrap() {
        for e in c["entries"].as_array().unwrap() {
            if e["offload_kind"] != "host" {
                out.push((
                    e["id"].as_str().unwrap().to_owned(),
                    e["index"].as_u64().unwrap(),
                ));
            }
        }
    }
    out
}

fn id(arch: &str) -> String {
    format!("hipv4-amdgcn-amd-amdhsa--{arch}")
}

#[test]
fn clang_object_json_and_extract() {
    let f = host();
    let dir = f.scratch("inspect-object");
    let k = f.path("k.o");
    let r = json(&dir, &k);
    assert_eq!(r["format"], "elf");
    let c = &r["containers"][0];
    assert_eq!(r["containers"].as_array().unwrap().len(), 1);
    assert_eq!(c["kind"], "bundle");
    assert_eq!(c["section"], ".hip_fatbin");
    assert_eq!(c["compression"], Value::Null);
    let data = std::fs::read(&k).unwrap();
    let (off, size) = (c["offset"].as_u64().unwrap(), c["size"].as_u64().unwrap());
    assert_eq!(
        &data[off as usize..(off + size) as usize],
        &f.read("k.hip-hip-amdgcn-amd-amdhsa.hipfb")[..]
    );
    assert_eq!(
        c["uri"].as_str().unwrap(),
        format!("file://{}#offset={off}&size={size}", k.display())
    );
    let entries = c["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0]["id"], "host-x86_64-unknown-linux--");
    assert_eq!(entries[0]["size"], 0);
    for arch in ARCHS {
        let e = entries
            .iter()
            .find(|e| e["arch"] == arch)
            .expect("arch entry");
        assert_eq!(e["triple"], "amdgcn-amd-amdhsa-");
        assert_eq!(e["offload_kind"], "hipv4");
        assert_eq!(e["id"].as_str().unwrap(), id(arch));
        let original = f.code_object("k", arch);
        assert_eq!(e["size"].as_u64().unwrap(), original.len() as u64);
        assert_eq!(
            extract(&dir, &[k.to_str().unwrap(), "--id", &id(arch)]),
            original
        );
        assert_eq!(
            extract(&dir, &["--uri", e["uri"].as_str().unwrap()]),
            original
        );
        let index = e["index"].as_u64().unwrap().to_string();
        assert_eq!(
            extract(&dir, &[k.to_str().unwrap(), "--index", &index]),
            original
        );
    }
    // The text listing names the same things.
    let (code, text, _) = tool(&dir, &["inspect", k.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(text.contains("section=.hip_fatbin"), "{text}");
    assert!(text.contains(&id("gfx90a:xnack+")), "{text}");
    // New-driver object: .llvm.offloading found by type.
    let r = json(&dir, &f.path("knd.o"));
    let c = &r["containers"][0];
    assert_eq!(c["kind"], "offload-binary");
    assert_eq!(c["entries"][0]["arch"], "gfx90a");
    assert_eq!(c["entries"][0]["image_kind"], "bc");
    assert_eq!(c["entries"][0]["offload_kind"], "hip");
}

#[test]
fn linked_programs_with_two_bundles() {
    let f = host();
    let dir = f.scratch("inspect-linked");
    let (k, k2) = (f.path("k.o"), f.path("k2.o"));
    let exe = dir.join("two.exe");
    let so = dir.join("libtwo.so");
    let fxs = format!("-L{}", f.dir.display());
    run(
        &dir,
        "/usr/bin/gcc",
        &[
            "-fuse-ld=bfd",
            "-o",
            exe.to_str().unwrap(),
            f.path("main.c").to_str().unwrap(),
            k.to_str().unwrap(),
            k2.to_str().unwrap(),
            &fxs,
            "-lamdhip64",
        ],
    );
    run(
        &dir,
        &format!("{LLVM19_BIN}/ld.lld"),
        &[
            "-shared",
            "-o",
            so.to_str().unwrap(),
            k.to_str().unwrap(),
            k2.to_str().unwrap(),
        ],
    );
    for file in [&exe, &so] {
        let r = json(&dir, file);
        let containers = r["containers"].as_array().unwrap();
        assert_eq!(containers.len(), 2, "{}: two bundles", file.display());
        assert!(containers.iter().all(|c| c["section"] == ".hip_fatbin"));
        assert_eq!(containers[1]["offset"].as_u64().unwrap() % 4096, 0);
        let entries = device_entries(&r);
        assert_eq!(entries.len(), 4);
        for (nth, tu) in ["k", "k2"].into_iter().enumerate() {
            for arch in ARCHS {
                let got = extract(
                    &dir,
                    &[
                        file.to_str().unwrap(),
                        "--id",
                        &id(arch),
                        "--nth",
                        &nth.to_string(),
                    ],
                );
                assert!(
                    got == f.code_object(tu, arch),
                    "{} {tu} {arch}",
                    file.display()
                );
            }
        }
        // An ambiguous ID is an error naming the choices.
        let (code, _, err) = tool(
            &dir,
            &[
                "extract",
                file.to_str().unwrap(),
                "--id",
                &id("gfx1100"),
                "-o",
                "x",
            ],
        );
        assert_eq!(code, 1);
        assert!(err.contains("2 entries have ID"), "{err}");
    }
}

/// Our objects for k, k2 and k again, compressed, with prefixed symbols so they link together.
fn compressed_objects(f: &HostFixtures, dir: &Path) -> Vec<String> {
    let mut paths = Vec::new();
    for (i, tu) in ["k", "k2", "k"].into_iter().enumerate() {
        let mut h = HipObject::new("x86_64-unknown-linux-gnu").unwrap();
        for arch in ARCHS {
            h.code_object(arch, f.code_object(tu, arch)).unwrap();
        }
        h.compress_v2(true).symbol_prefix(&format!("t{i}_"));
        let p = dir.join(format!("z{i}.o"));
        std::fs::write(&p, h.write().unwrap()).unwrap();
        paths.push(p.to_str().unwrap().to_owned());
    }
    paths
}

#[test]
fn three_concatenated_compressed_bundles_and_archives() {
    let f = host();
    let dir = f.scratch("inspect-ccob");
    let objs = compressed_objects(f, &dir);
    let lld = format!("{LLVM19_BIN}/ld.lld");
    let merged = dir.join("three.o");
    let so = dir.join("libthree.so");
    let mut args = vec!["-r", "-o", merged.to_str().unwrap()];
    args.extend(objs.iter().map(String::as_str));
    run(&dir, &lld, &args);
    let mut args = vec!["-shared", "-o", so.to_str().unwrap()];
    args.extend(objs.iter().map(String::as_str));
    run(&dir, &lld, &args);
    let tus = ["k", "k2", "k"];
    for file in [&merged, &so] {
        // A listing decodes each bundle only as far as its entry table: no MD5 verdict.
        let listed = json(&dir, file);
        let r = json_with(&dir, file, &["--verify"]);
        for (c, l) in r["containers"]
            .as_array()
            .unwrap()
            .iter()
            .zip(listed["containers"].as_array().unwrap())
        {
            assert_eq!(l["compression"]["hash_matches"], Value::Null, "{l}");
            let mut verified = c.clone();
            verified["compression"]["hash_matches"] = Value::Null;
            assert_eq!(&verified, l, "the listing differs from the verified report");
        }
        let containers = r["containers"].as_array().unwrap();
        assert_eq!(containers.len(), 3, "{}", file.display());
        for (i, c) in containers.iter().enumerate() {
            assert_eq!(c["kind"], "compressed-bundle");
            assert_eq!(c["section"], ".hip_fatbin");
            let z = &c["compression"];
            assert_eq!(z["method"], "zstd");
            assert_eq!(z["version"], 2);
            assert_eq!(z["compressed_size"], c["size"]);
            assert!(z["ratio"].as_f64().unwrap() > 1.0, "{z}");
            assert_eq!(z["hash_matches"], true, "{z}");
            assert!(z["uncompressed_size"].as_u64().unwrap() > c["size"].as_u64().unwrap());
            for e in c["entries"].as_array().unwrap() {
                assert_eq!(e["offset"], Value::Null);
                assert_eq!(e["uri"], Value::Null);
                if e["offload_kind"] == "host" {
                    continue;
                }
                let arch = e["arch"].as_str().unwrap();
                let index = e["index"].as_u64().unwrap().to_string();
                let got = extract(&dir, &[file.to_str().unwrap(), "--index", &index]);
                assert!(got == f.code_object(tus[i], arch), "container {i} {arch}");
            }
        }
        // The container URI gives back the compressed bundle itself.
        let c = &containers[2];
        let ccob = extract(&dir, &["--uri", c["uri"].as_str().unwrap()]);
        assert_eq!(&ccob[..4], b"CCOB");
        assert_eq!(ccob.len() as u64, c["size"].as_u64().unwrap());
        // inspect --verify checks the stored MD5 (v2: bytes 16..24) and says when it is wrong.
        let mut bad = ccob.clone();
        bad[16] ^= 1;
        let bad_path = dir.join("bad-hash.ccob");
        std::fs::write(&bad_path, &bad).unwrap();
        let r = json_with(&dir, &bad_path, &["--verify"]);
        assert_eq!(r["containers"][0]["compression"]["hash_matches"], false);
        let (code, out, err) = tool(&dir, &["inspect", "--verify", bad_path.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains("(stored MD5 does not match the contents)"),
            "{out}"
        );
        let (_, out, _) = tool(&dir, &["inspect", bad_path.to_str().unwrap()]);
        assert!(!out.contains("MD5"), "{out}");
        let z0 = dir.join("z0.o");
        let (_, out, _) = tool(&dir, &["inspect", "--verify", z0.to_str().unwrap()]);
        assert!(out.contains("(MD5 verified)"), "{out}");
        let (_, out, _) = tool(&dir, &["inspect", z0.to_str().unwrap()]);
        assert!(!out.contains("MD5"), "{out}");
    }
    // A static archive of clang's object, ours and the new-driver object.
    let archive = dir.join("libmix.a");
    run(
        &dir,
        &format!("{LLVM19_BIN}/llvm-ar"),
        &[
            "rcs",
            archive.to_str().unwrap(),
            f.path("k.o").to_str().unwrap(),
            &objs[1],
            f.path("knd.o").to_str().unwrap(),
        ],
    );
    let r = json(&dir, &archive);
    assert_eq!(r["format"], "archive");
    let containers = r["containers"].as_array().unwrap();
    let members: Vec<&str> = containers
        .iter()
        .map(|c| c["member"].as_str().unwrap())
        .collect();
    assert_eq!(members, ["k.o", "z1.o", "knd.o"]);
    assert_eq!(containers[0]["kind"], "bundle");
    assert_eq!(containers[1]["kind"], "compressed-bundle");
    assert_eq!(containers[2]["kind"], "offload-binary");
    let data = std::fs::read(&archive).unwrap();
    for e in containers[0]["entries"].as_array().unwrap() {
        if e["offload_kind"] == "host" {
            continue;
        }
        let original = f.code_object("k", e["arch"].as_str().unwrap());
        let off = e["offset"].as_u64().unwrap() as usize;
        assert!(data[off..off + original.len()] == original[..]);
        assert_eq!(
            extract(&dir, &["--uri", e["uri"].as_str().unwrap()]),
            original
        );
    }
    let index = containers[1]["entries"][1]["index"]
        .as_u64()
        .unwrap()
        .to_string();
    assert_eq!(
        extract(&dir, &[archive.to_str().unwrap(), "--index", &index]),
        f.code_object("k2", containers[1]["entries"][1]["arch"].as_str().unwrap())
    );
    // Raw files: a bundle, a compressed bundle, an offload binary.
    let raw = f.path("k.hip-hip-amdgcn-amd-amdhsa.hipfb");
    assert_eq!(json(&dir, &raw)["format"], "bundle");
    let ccob = dir.join("one.ccob");
    std::fs::write(
        &ccob,
        extract(&dir, &["--uri", containers[1]["uri"].as_str().unwrap()]),
    )
    .unwrap();
    assert_eq!(json(&dir, &ccob)["format"], "compressed-bundle");
    let bin = dir.join("one.bin");
    std::fs::write(
        &bin,
        extract(&dir, &["--uri", containers[2]["uri"].as_str().unwrap()]),
    )
    .unwrap();
    let r = json(&dir, &bin);
    assert_eq!(r["format"], "offload-binary");
    assert_eq!(r["containers"][0]["entries"][0]["arch"], "gfx90a");
}

#[test]
fn malformed_inputs_are_errors_not_panics() {
    let f = host();
    let dir = f.scratch("inspect-malformed");
    let k = f.read("k.o");
    let so = {
        let p = dir.join("lib.so");
        run(
            &dir,
            &format!("{LLVM19_BIN}/ld.lld"),
            &[
                "-shared",
                "-o",
                p.to_str().unwrap(),
                f.path("k.o").to_str().unwrap(),
            ],
        );
        std::fs::read(p).unwrap()
    };
    let ccob = {
        let mut h = HipObject::new("x86_64-unknown-linux-gnu").unwrap();
        h.code_object("gfx1100", f.code_object("k", "gfx1100"))
            .unwrap();
        h.compress_v2(true);
        h.bundle_bytes().unwrap().into_owned()
    };
    let mut errors = 0;
    for (name, data) in [("k.o", &k), ("lib.so", &so), ("ccob", &ccob)] {
        let n = data.len();
        let mut cuts: Vec<usize> = (0..64).map(|i| i * n / 64).collect();
        cuts.extend([1, 4, 23, 24, 31, 33, 0x1000 + 40, n - 1]);
        for cut in cuts {
            if cut >= n {
                continue;
            }
            if offload_build::inspect::inspect(&data[..cut], name).is_err() {
                errors += 1;
            }
        }
        // Flipped bytes across the headers and the bundle header.
        for at in (0..n.min(0x1100)).step_by(7) {
            let mut d = data.clone();
            d[at] ^= 0xa5;
            let _ = offload_build::inspect::inspect(&d, name);
        }
    }
    assert!(
        errors > 50,
        "truncations should mostly be reported: {errors}"
    );
    // Through the CLI: a one-line error and exit status 1, the other files still listed.
    let cut = dir.join("cut.o");
    let hf = k
        .windows(24)
        .position(|w| w == b"__CLANG_OFFLOAD_BUNDLE__")
        .unwrap();
    std::fs::write(&cut, &k[..hf + 100]).unwrap();
    let good = f.path("k.o");
    let (code, out, err) = tool(
        &dir,
        &["inspect", cut.to_str().unwrap(), good.to_str().unwrap()],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.starts_with("offload-build: error: '"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.contains("k.o: elf"), "{out}");
    let (code, _, err) = tool(
        &dir,
        &["extract", cut.to_str().unwrap(), "--index", "1", "-o", "x"],
    );
    assert_eq!(code, 1, "{err}");
    assert!(!dir.join("x").exists(), "no output on error");
}

/// Issue 16, finding 11: 20,000 tiny compressed bundles back to back (a `.hip_fatbin` of
/// many translation units) are each decoded on the calling thread, without threads per
/// bundle; every container and entry is listed at its offset with its size. (Its time is
/// measured by `benches/bundler.rs`, not asserted here.)
#[test]
fn many_tiny_compressed_bundles() {
    use offload_build::bundle::binary::write_bundle;
    use offload_build::bundle::compressed::{CompressOptions, compress};
    // 20,000 keep the debug-build test quick; the bench runs 100,000.
    const N: usize = 20_000;
    const VARIANTS: usize = 7;
    let host = b"host-x86_64-unknown-linux-gnu-";
    let ccobs: Vec<(Vec<u8>, Vec<u8>)> = (0..VARIANTS)
        .map(|v| {
            let id = format!("hip-amdgcn-amd-amdhsa--gfx90{v}");
            let code = format!("device code {v}\n").repeat(v + 1).into_bytes();
            let b =
                write_bundle(&[(&host[..], b"host\n"), (id.as_bytes(), &code)], 1).expect("bundle");
            let c = compress(&b, &CompressOptions::default()).expect("compress");
            (c, code)
        })
        .collect();
    let mut file = Vec::new();
    let mut want = Vec::with_capacity(N);
    for i in 0..N {
        let (c, code) = &ccobs[i % VARIANTS];
        want.push((file.len(), c.len(), i % VARIANTS, code.len()));
        file.extend(c);
    }
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("many.bin"), &file).expect("write");
    let (code, out, err) = tool(dir.path(), &["inspect", "many.bin"]);
    assert_eq!(code, 0, "{err}");
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some(
            format!(
                "many.bin: compressed-bundle ({} bytes), {N} container(s), {} entries",
                file.len(),
                2 * N
            )
            .as_str()
        )
    );
    for (i, &(offset, size, v, code_len)) in want.iter().enumerate() {
        let c = lines.next().expect("container line");
        let head =
            format!("  container {i} compressed-bundle offset={offset} size={size} zstd v3 ");
        assert!(c.starts_with(&head), "{c}\nexpected {head}");
        let e0 = lines.next().expect("host entry");
        assert_eq!(
            e0,
            format!(
                "    entry {} host-x86_64-unknown-linux-gnu- offset=- size=5 (compressed)",
                2 * i
            )
        );
        let e1 = lines.next().expect("device entry");
        assert_eq!(
            e1,
            format!(
                "    entry {} hip-amdgcn-amd-amdhsa--gfx90{v} offset=- size={code_len} (compressed)",
                2 * i + 1
            )
        );
    }
    assert_eq!(lines.next(), None);
}
