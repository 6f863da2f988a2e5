//! The tools under an address-space limit (`setrlimit(RLIMIT_AS)`, what `ulimit -v` and
//! `prlimit --as` set), on compressed bundles that decompress to more than the limit (issue
//! 16, finding 6). An allocation the system refuses must be the one-line "out of memory"
//! error that an unreadable `/dev/zero` input already gives, status 1, no output: never
//! Rust's "memory allocation of N bytes failed" abort (status 134).
//!
//! The inputs are zstd frames built by hand from RLE blocks (4 bytes for 128 KiB of zeros),
//! so that a file of a few hundred KiB holds gigabytes:
//!
//! - the finding's case: a ~600 KB CCOB whose header claims 16 GiB and whose frame records
//!   no content size (nothing tells the reader the real size but decoding it);
//! - an honest one: header and frame both give the real size (1 GiB), a valid bundle;
//! - the same honest kind at 32 MiB, which must unbundle under the same limit.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

use crate::support::ARGV0;
use crate::support::run::RunDir;

const BUNDLER: &str = env!("CARGO_BIN_EXE_offload-bundler");
const OFFLOAD_BUILD: &str = env!("CARGO_BIN_EXE_offload-build");
/// The address-space limit of the runs: room for the tool, far less than the data.
const LIMIT: u64 = 512 << 20;
const HOST: &str = "host-x86_64-unknown-linux-gnu-";
const BLOCK: usize = 128 << 10;

/// A zstd frame of `rle` blocks of 128 KiB zeros after `raw` (stored as a raw block); the
/// content size is recorded when `content_size` is set.
fn zstd_frame(raw: &[u8], rle: usize, content_size: Option<u64>) -> Vec<u8> {
    let mut f = vec![0x28, 0xb5, 0x2f, 0xfd];
    match content_size {
        // Frame header descriptor: 8-byte content size, no single segment; window 128 KiB.
        Some(n) => {
            f.extend([0xc0, 7 << 3]);
            f.extend(n.to_le_bytes());
        }
        None => f.extend([0x00, 7 << 3]),
    }
    let block = |f: &mut Vec<u8>, kind: u32, size: usize, last: bool| {
        let h = ((size as u32) << 3) | (kind << 1) | u32::from(last);
        f.extend(&h.to_le_bytes()[..3]);
    };
    assert!(raw.len() <= BLOCK);
    if !raw.is_empty() {
        block(&mut f, 0, raw.len(), rle == 0);
        f.extend(raw);
    }
    for i in 0..rle {
        block(&mut f, 1, BLOCK, i + 1 == rle);
        f.push(0);
    }
    f
}

/// A CCOB v3 (zstd) around `frame` whose header claims `claimed` uncompressed bytes.
fn ccob(frame: &[u8], claimed: u64) -> Vec<u8> {
    let mut c = b"CCOB".to_vec();
    c.extend(3u16.to_le_bytes());
    c.extend(1u16.to_le_bytes());
    c.extend((32 + frame.len() as u64).to_le_bytes());
    c.extend(claimed.to_le_bytes());
    c.extend(0u64.to_le_bytes());
    c.extend(frame);
    c
}

/// An honest compressed bundle of `blocks` × 128 KiB: one host entry of zeros after the
/// 4096-byte bundle header block; header and frame give the real size.
fn honest(blocks: usize) -> (Vec<u8>, u64) {
    let mut head = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
    head.extend(1u64.to_le_bytes());
    let total = (4096 + blocks * BLOCK) as u64;
    head.extend(4096u64.to_le_bytes());
    head.extend((total - 4096).to_le_bytes());
    head.extend((HOST.len() as u64).to_le_bytes());
    head.extend(HOST.as_bytes());
    head.resize(4096, 0);
    (
        ccob(&zstd_frame(&head, blocks, Some(total)), total),
        total - 4096,
    )
}

/// Runs `exe` (as `argv0`) in `dir` under the address-space limit.
fn limited(exe: &str, argv0: &str, dir: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(exe);
    cmd.arg0(argv0)
        .args(args)
        .current_dir(dir)
        .env("RUST_BACKTRACE", "0");
    // SAFETY: setrlimit is async-signal-safe and touches no state of the parent.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: LIMIT,
                rlim_max: LIMIT,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.output().expect("run under a memory limit")
}

/// `out` is exactly the one-line out-of-memory error for `file`, status 1.
fn assert_out_of_memory(out: &Output, prefix: &str, file: &str, what: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        (out.status.code(), err.as_ref()),
        (
            Some(1),
            format!("{prefix}: error: '{file}': out of memory\n").as_str()
        ),
        "{what}: {:?}",
        out.status
    );
}

fn unbundle_args(file: &str) -> Vec<String> {
    vec![
        "-type=o".into(),
        format!("-targets={}", HOST.trim_end_matches('-')),
        format!("-input={file}"),
        "-unbundle".into(),
        "-output=host.out".into(),
    ]
}

/// The reference: reading `/dev/zero` into memory under the same limit.
#[test]
fn dev_zero_is_out_of_memory() {
    let dir = RunDir::new("memory-dev-zero");
    let out = limited(
        BUNDLER,
        ARGV0,
        dir.path(),
        &["-type=o", "-list", "-input=/dev/zero"],
    );
    assert_out_of_memory(&out, ARGV0, "/dev/zero", "-list /dev/zero");
}

#[test]
fn ccob_claiming_16_gib_without_content_size() {
    let dir = RunDir::new("memory-16gib-claim");
    // 150,000 RLE blocks: 600 KB holding 18.75 GiB; the header claims 16 GiB.
    let file = ccob(&zstd_frame(&[], 150_000, None), 16 << 30);
    assert!((590_000..610_000).contains(&file.len()), "{}", file.len());
    std::fs::write(dir.path().join("claim.ccob"), &file).expect("write");
    let unbundle = unbundle_args("claim.ccob");
    let unbundle: Vec<&str> = unbundle.iter().map(String::as_str).collect();
    for args in [&["-type=o", "-list", "-input=claim.ccob"][..], &unbundle] {
        let out = limited(BUNDLER, ARGV0, dir.path(), args);
        assert_out_of_memory(&out, ARGV0, "claim.ccob", &format!("{args:?}"));
        assert!(out.stdout.is_empty());
        assert!(!dir.path().join("host.out").exists(), "an output was left");
    }
    let out = limited(
        OFFLOAD_BUILD,
        "offload-build",
        dir.path(),
        &["inspect", "claim.ccob"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "inspect: {err}");
    assert!(
        err.lines().count() == 1 && err.contains("out of memory") && err.contains("claim.ccob"),
        "inspect: {err}"
    );
}

#[test]
fn honest_large_ccob_under_a_small_limit() {
    let dir = RunDir::new("memory-honest");
    // 1 GiB (8192 blocks) does not fit the limit; 32 MiB does and must unbundle.
    let (big, _) = honest(8192);
    std::fs::write(dir.path().join("big.ccob"), &big).expect("write");
    let args = unbundle_args("big.ccob");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = limited(BUNDLER, ARGV0, dir.path(), &args);
    assert_out_of_memory(&out, ARGV0, "big.ccob", "unbundle 1 GiB");
    assert!(!dir.path().join("host.out").exists(), "an output was left");

    let (small, payload) = honest(256);
    std::fs::write(dir.path().join("small.ccob"), &small).expect("write");
    let args = unbundle_args("small.ccob");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = limited(BUNDLER, ARGV0, dir.path(), &args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "unbundle 32 MiB: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let host = std::fs::read(dir.path().join("host.out")).expect("host output");
    assert_eq!(host.len() as u64, payload);
    assert!(host.iter().all(|&b| b == 0));
}
