//! Compressed bundles that LLVM cannot read, mishandles or accepts silently, hand-built from
//! the library's own writer and then altered; ours alone is run. Every case pins the exact
//! outcome: exit status, the whole of stderr, the outputs, and that an error creates no output
//! (and leaves an existing one untouched).
//!
//! What LLVM 19/22 do with the same inputs (spec A.5.3, A.11): v1 is read by both; trailing
//! padding and concatenated CCOBs fail with `Src size is incorrect`; a wrong hash is accepted
//! silently; a too-small size fails (`Destination buffer is too small`), a too-large one is
//! accepted; an unknown version 0/4 fails with `Compressed bundle header size too small` (22);
//! a header claiming 1 TiB makes LLVM try to allocate it.

use std::time::Duration;

use offload_build::bundle::binary::write_bundle;
use offload_build::bundle::compressed::{self, CompressOptions, Method, Version, truncated_md5};
use offload_build::bundle::sequence::{Item, Sequence};

use crate::support::diff::show;
use crate::support::run::{RunDir, Status, Tool, run_tool_env, snapshot};

const HOST: &str = "host-x86_64-unknown-linux-gnu";
const DEV: &str = "hip-amdgcn-amd-amdhsa--gfx906";
const LIMIT: Duration = Duration::from_secs(10);
const PREVIOUS: &[u8] = b"previous contents, must survive\n";
const ERR: &str = "clang-offload-bundler: error: ";
const WARN: &str = "clang-offload-bundler: warning: ";

/// Host and device payloads of a test bundle (`tag` makes bundles distinguishable).
fn payloads(tag: &str) -> (Vec<u8>, Vec<u8>) {
    let host = format!("host payload {tag}\n").repeat(200).into_bytes();
    let dev = format!("device code object {tag}\n")
        .repeat(300)
        .into_bytes();
    (host, dev)
}

fn bundle(tag: &str) -> Vec<u8> {
    let (host, dev) = payloads(tag);
    let host_id = format!("{HOST}-");
    write_bundle(&[(host_id.as_bytes(), &host), (DEV.as_bytes(), &dev)], 1).expect("bundle")
}

fn ccob(tag: &str, method: Method, version: Version) -> Vec<u8> {
    let options = CompressOptions {
        method,
        version,
        ..CompressOptions::default()
    };
    compressed::compress(&bundle(tag), &options).expect("compress")
}

/// A v1 file: the 20-byte header LLVM 18 wrote, then the frame of a v3 file.
fn v1(method: Method) -> Vec<u8> {
    let v3 = ccob("a", method, Version::V3);
    let mut out = b"CCOB".to_vec();
    out.extend(1u16.to_le_bytes());
    out.extend(method.raw().to_le_bytes());
    out.extend((bundle("a").len() as u32).to_le_bytes());
    out.extend(&v3[24..32]);
    out.extend(&v3[32..]);
    out
}

/// `a` then `b`, `b` starting at the next multiple of 4096 (zero gap), as a linker leaves
/// sections of several translation units.
fn aligned_concat(parts: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in parts {
        out.resize(out.len().next_multiple_of(4096), 0);
        out.extend(p);
    }
    out
}

fn set_u64(data: &mut [u8], at: usize, v: u64) {
    data[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

struct Expect {
    status: i32,
    stderr: String,
    /// Exact stdout, when it matters.
    stdout: Option<String>,
    /// Output name and its expected bytes.
    outputs: Vec<(&'static str, Vec<u8>)>,
}

fn unbundle() -> Vec<String> {
    [
        "-type=bc",
        &format!("-targets={HOST},{DEV}"),
        "-input=fat.bc",
        "-unbundle",
        "-output=u0",
        "-output=u1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn ok_outputs(tag: &str) -> Vec<(&'static str, Vec<u8>)> {
    let (host, dev) = payloads(tag);
    vec![("u0", host), ("u1", dev)]
}

/// Run ours on `fat.bc` = `input` with `args` (and `env`); return what differs from `want`.
fn check(
    label: &str,
    input: &[u8],
    args: &[String],
    env: &[(&str, &str)],
    want: Expect,
) -> Vec<String> {
    let dir = RunDir::new(&format!("ccob-{label}"));
    std::fs::write(dir.path().join("fat.bc"), input).expect("write input");
    // An output that exists before: an error must leave it as it was.
    std::fs::write(dir.path().join("u0"), PREVIOUS).expect("write previous");
    let before = snapshot(dir.path());
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let out = run_tool_env(Tool::Ours, dir.path(), args, b"", LIMIT, &env);
    let mut problems = Vec::new();
    let what = format!("{label}: `{}`", args.join(" "));
    if out.status != Status::Exit(want.status) {
        problems.push(format!(
            "{what}: status {:?}, expected {}; stderr {}",
            out.status,
            want.status,
            show(&out.stderr)
        ));
    }
    if let Some(stdout) = &want.stdout {
        if out.stdout != stdout.as_bytes() {
            problems.push(format!(
                "{what}: stdout {}\n    expected {}",
                show(&out.stdout),
                show(stdout.as_bytes())
            ));
        }
    }
    if out.stderr != want.stderr.as_bytes() {
        problems.push(format!(
            "{what}: stderr {}\n    expected {}",
            show(&out.stderr),
            show(want.stderr.as_bytes())
        ));
    }
    if want.status == 0 {
        for (name, bytes) in &want.outputs {
            match std::fs::read(dir.path().join(name)) {
                Ok(b) if b == *bytes => {}
                Ok(b) => problems.push(format!(
                    "{what}: {name} has {} bytes, expected {}",
                    b.len(),
                    bytes.len()
                )),
                Err(e) => problems.push(format!("{what}: {name}: {e}")),
            }
        }
    } else if snapshot(dir.path()) != before {
        problems.push(format!("{what}: the failed run changed the directory"));
    }
    problems
}

fn error(msg: &str) -> Expect {
    Expect {
        status: 1,
        stderr: format!("{ERR}'fat.bc': {msg}\n"),
        stdout: Some(String::new()),
        outputs: Vec::new(),
    }
}

fn success(tag: &str, stderr: String) -> Expect {
    Expect {
        status: 0,
        stderr,
        stdout: Some(String::new()),
        outputs: ok_outputs(tag),
    }
}

fn finish(problems: Vec<String>) {
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn versions_and_padding() {
    let mut p = Vec::new();
    let args = unbundle();
    p.extend(check(
        "v1-zstd",
        &v1(Method::Zstd),
        &args,
        &[],
        success("a", String::new()),
    ));
    p.extend(check(
        "v1-zlib",
        &v1(Method::Zlib),
        &args,
        &[],
        success("a", String::new()),
    ));
    for version in [Version::V2, Version::V3] {
        for method in [Method::Zstd, Method::Zlib] {
            let mut padded = ccob("a", method, version);
            padded.resize(padded.len().next_multiple_of(4096), 0);
            let label = format!("padded-{}-v{}", method.name(), version.raw());
            p.extend(check(
                &label,
                &padded,
                &args,
                &[],
                success("a", String::new()),
            ));
        }
    }
    // Versions 0 and 4, and a method LLVM does not know.
    for v in [0u16, 4] {
        let mut bad = ccob("a", Method::Zstd, Version::V3);
        bad[4..6].copy_from_slice(&v.to_le_bytes());
        p.extend(check(
            &format!("version-{v}"),
            &bad,
            &args,
            &[],
            error(&format!(
                "compressed bundle format version {v} at offset 4 is not supported (known: 1, 2, 3)"
            )),
        ));
    }
    let mut bad = ccob("a", Method::Zstd, Version::V3);
    bad[6] = 7;
    p.extend(check(
        "method-7",
        &bad,
        &args,
        &[],
        error("unknown compression method 7 at offset 6 (known: 0 = zlib, 1 = zstd)"),
    ));
    finish(p);
}

#[test]
fn concatenated() {
    let args = unbundle();
    let list: Vec<String> = ["-type=bc", "-list", "-input=fat.bc"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut p = Vec::new();
    // 2 and 10 CCOBs, 4096-aligned: the tool reads the first (LLVM 19/22 fail), the library
    // every one.
    for n in [2usize, 10] {
        let parts: Vec<Vec<u8>> = (0..n)
            .map(|i| {
                let v = if i % 2 == 0 { Version::V3 } else { Version::V2 };
                ccob(&format!("{i}"), Method::Zstd, v)
            })
            .collect();
        let joined = aligned_concat(&parts);
        p.extend(check(
            &format!("concat-{n}"),
            &joined,
            &args,
            &[],
            success("0", String::new()),
        ));
        p.extend(check(
            &format!("concat-{n}-list"),
            &joined,
            &list,
            &[],
            Expect {
                status: 0,
                stderr: String::new(),
                // The first bundle's IDs, in LLVM's listing order.
                stdout: Some(format!("{DEV}\n{HOST}-\n")),
                outputs: Vec::new(),
            },
        ));
        // The library sees them all.
        let mut seen = 0;
        for segment in Sequence::new(&joined) {
            let Item::Compressed(b) = segment.expect("segment").item else {
                panic!("bundle {seen} of {n} is not compressed");
            };
            let d = b.decompress().expect("decompress");
            assert_eq!(d.data, bundle(&seen.to_string()), "bundle {seen} of {n}");
            seen += 1;
        }
        assert_eq!(seen, n);
    }
    // A compressed bundle after an uncompressed one: the tool reads the uncompressed one
    // (LLVM does the same); the library finds the compressed one after it.
    let plain = bundle("0");
    let joined = aligned_concat(&[plain.clone(), ccob("1", Method::Zstd, Version::V3)]);
    p.extend(check(
        "plain-then-ccob",
        &joined,
        &args,
        &[],
        success("0", String::new()),
    ));
    let items: Vec<Item<'_>> = Sequence::new(&joined)
        .map(|s| s.expect("segment").item)
        .collect();
    let [Item::Binary(first), Item::Compressed(second)] = &items[..] else {
        panic!("expected a binary then a compressed bundle");
    };
    assert_eq!(first.entries().len(), 2);
    assert_eq!(second.decompress().expect("decompress").data, bundle("1"));
    finish(p);
}

#[test]
fn lying_headers() {
    let args = unbundle();
    let mut p = Vec::new();
    let good = ccob("a", Method::Zstd, Version::V3);
    let real = bundle("a").len() as u64;
    let md5 = truncated_md5(&bundle("a"));

    // Wrong hash: unchecked by default, as LLVM; a warning with -verify-hash (or
    // OFFLOAD_BUNDLER_VERIFY_HASH=1, or -verbose, which prints the recalculated hash as
    // LLVM does); under -strict-hash an error and no output.
    let mut bad_hash = good.clone();
    bad_hash[24] ^= 0xff;
    let stored = u64::from_le_bytes(bad_hash[24..32].try_into().unwrap());
    let msg =
        format!("hash mismatch: the header stores {stored:#x} but the data hashes to {md5:#x}");
    p.extend(check(
        "wrong-hash-default",
        &bad_hash,
        &args,
        &[],
        success("a", String::new()),
    ));
    let mut verified = args.clone();
    verified.push("-verify-hash".into());
    p.extend(check(
        "wrong-hash-verified",
        &bad_hash,
        &verified,
        &[],
        success("a", format!("{WARN}'fat.bc': {msg}\n")),
    ));
    p.extend(check(
        "wrong-hash-env",
        &bad_hash,
        &args,
        &[("OFFLOAD_BUNDLER_VERIFY_HASH", "1")],
        success("a", format!("{WARN}'fat.bc': {msg}\n")),
    ));
    let mut unchecked = args.clone();
    unchecked.push("-verify-hash=false".into());
    p.extend(check(
        "wrong-hash-flag-over-env",
        &bad_hash,
        &unchecked,
        &[("OFFLOAD_BUNDLER_VERIFY_HASH", "1")],
        success("a", String::new()),
    ));
    let mut strict = args.clone();
    strict.push("-strict-hash".into());
    p.extend(check(
        "wrong-hash-strict",
        &bad_hash,
        &strict,
        &[],
        error(&msg),
    ));

    // Uncompressed size too small (LLVM: "Destination buffer is too small") and too large
    // (LLVM: accepted silently).
    let mut small = good.clone();
    set_u64(&mut small, 16, 10);
    p.extend(check(
        "size-too-small",
        &small,
        &args,
        &[],
        error(&format!(
            "the header claims 10 uncompressed bytes but the data holds {real}"
        )),
    ));
    let mut large = good.clone();
    set_u64(&mut large, 16, real + 1000);
    p.extend(check(
        "size-too-large",
        &large,
        &args,
        &[],
        success(
            "a",
            format!(
                "{WARN}'fat.bc': the header claims {} uncompressed bytes but the data holds only {real}\n",
                real + 1000
            ),
        ),
    ));
    // 1 TiB claimed: nothing of that size is allocated; zstd knows the real size, zlib is
    // bounded by deflate's largest expansion.
    for method in [Method::Zstd, Method::Zlib] {
        let mut huge = ccob("a", method, Version::V3);
        set_u64(&mut huge, 16, 1 << 40);
        p.extend(check(
            &format!("1-tib-{}", method.name()),
            &huge,
            &args,
            &[],
            success(
                "a",
                format!(
                    "{WARN}'fat.bc': the header claims 1099511627776 uncompressed bytes but the data holds only {real}\n"
                ),
            ),
        ));
    }
    // 1 TiB claimed by our header and by the zstd frame's own header (LLVM: an out-of-memory
    // abort): the frame's 17 bytes cannot hold it, so it is corrupt before anything is
    // allocated.
    let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0xe0];
    frame.extend_from_slice(&(1u64 << 40).to_le_bytes());
    frame.extend_from_slice(&[16 << 3 | 1 << 1 | 1, 0, 0, b'x']);
    let mut tib = compressed::Header {
        version: Version::V3,
        method: Method::Zstd,
        total_size: Some(32 + frame.len() as u64),
        uncompressed_size: 1 << 40,
        hash: 0,
    }
    .to_bytes()
    .expect("a v3 header");
    tib.extend_from_slice(&frame);
    p.extend(check(
        "1-tib-frame",
        &tib,
        &args,
        &[],
        error(
            "compressed data is corrupt: zstd: the frame claims 1099511627776 bytes, more than its 17 compressed bytes can hold",
        ),
    ));
    // The configurable cap.
    p.extend(check(
        "over-the-cap",
        &good,
        &args,
        &[("OFFLOAD_BUNDLER_MAX_UNCOMPRESSED_SIZE", "1000")],
        error(&format!(
            "uncompressed size {real} is above the limit of 1000 bytes"
        )),
    ));

    // Truncated: inside the header, by the total size, and inside the frame of a v1 file.
    p.extend(check(
        "truncated-header",
        &good[..20],
        &args,
        &[],
        error("compressed bundle header is truncated: it needs 32 bytes but only 20 are present"),
    ));
    let cut = good.len() - 7;
    p.extend(check(
        "truncated-total",
        &good[..cut],
        &args,
        &[],
        error(&format!(
            "compressed bundle is truncated: its header (offset 8) gives a total size of {} bytes but only {cut} are present",
            good.len()
        )),
    ));
    let mut short_total = good[..cut].to_vec();
    set_u64(&mut short_total, 8, cut as u64);
    p.extend(check(
        "truncated-frame",
        &short_total,
        &args,
        &[],
        error("compressed data is truncated: the frame ends before it is complete"),
    ));
    let v1 = v1(Method::Zstd);
    p.extend(check(
        "truncated-v1-frame",
        &v1[..v1.len() - 7],
        &args,
        &[],
        error("compressed data is truncated: the frame ends before it is complete"),
    ));
    let zlib = ccob("a", Method::Zlib, Version::V2);
    let mut zcut = zlib[..zlib.len() - 9].to_vec();
    let zlen = zcut.len() as u32;
    zcut[8..12].copy_from_slice(&zlen.to_le_bytes());
    p.extend(check(
        "truncated-zlib",
        &zcut,
        &args,
        &[],
        error("compressed data is truncated: the frame ends before it is complete"),
    ));
    // Garbage instead of a frame.
    let mut garbage = good.clone();
    for b in &mut garbage[32..48] {
        *b = 0xa5;
    }
    p.extend(check(
        "not-a-frame",
        &garbage,
        &args,
        &[],
        error("compressed data is corrupt: zstd: Unknown frame descriptor"),
    ));
    finish(p);
}
