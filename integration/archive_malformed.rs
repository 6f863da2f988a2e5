//! Malformed archives given to `-type=a -unbundle` (and `-check-input-archive`): ours must
//! exit 1 with one line `clang-offload-bundler: error: …` that names the archive, never
//! panic, and leave its directory exactly as it was (no output created, an existing output
//! untouched, nothing written under a member's name). LLVM is not run: its messages differ
//! and for names with `/` or `..` it quietly uses the last path component.

use std::time::Duration;

use offload_build::bundle::archive::{NewMember, write_gnu_archive};

use crate::support::diff::show;
use crate::support::run::{RunDir, Status, Tool, run_tool, snapshot};

const LIMIT: Duration = Duration::from_secs(10);

/// A valid GNU archive with one long-named member (a binary bundle for gfx906).
fn good_archive() -> Vec<u8> {
    let bundle = offload_build::bundle::binary::write_bundle(
        &[(b"hip-amdgcn-amd-amdhsa--gfx906", b"device code")],
        1,
    )
    .expect("bundle");
    write_gnu_archive(&[NewMember {
        name: b"a-long-member-name.bc".to_vec(),
        data: bundle.into(),
    }])
    .expect("archive")
}

fn expect_clean_error(label: &str, archive: &[u8], needle: &str) {
    expect_error(label, archive, &|err| {
        err.starts_with("clang-offload-bundler: error: 'bad.a': ")
            && err.matches('\n').count() == 1
            && err.contains(needle)
    });
}

/// Like [`expect_clean_error`], for an exact message.
fn expect_clean_error_with(label: &str, archive: &[u8], message: &str) {
    expect_error(label, archive, &|err| err == message);
}

fn expect_error(label: &str, archive: &[u8], accept: &dyn Fn(&str) -> bool) {
    for check in [false, true] {
        let dir = RunDir::new(&format!("archive-malformed-{label}"));
        std::fs::write(dir.path().join("bad.a"), archive).expect("write");
        std::fs::write(dir.path().join("out1.a"), b"previous").expect("write");
        let before = snapshot(dir.path());
        let mut args = vec![
            "-type=a".to_string(),
            "-targets=hip-amdgcn-amd-amdhsa--gfx906,hip-amdgcn-amd-amdhsa--gfx1100".into(),
            "-input=bad.a".into(),
            "-unbundle".into(),
            "-output=out0.a".into(),
            "-output=out1.a".into(),
            "-allow-missing-bundles".into(),
        ];
        if check {
            args.push("-check-input-archive".into());
        }
        let out = run_tool(Tool::Ours, dir.path(), &args, b"", LIMIT);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status,
            Status::Exit(1),
            "{label}: {}",
            show(&out.stderr)
        );
        assert!(
            accept(&err),
            "{label}: not the error line expected: {}",
            show(&out.stderr)
        );
        assert_eq!(
            snapshot(dir.path()),
            before,
            "{label}: the directory changed"
        );
    }
}

#[test]
fn good_archive_unbundles() {
    // The base of the malformed cases is itself valid: only the damage makes them fail.
    let dir = RunDir::new("archive-malformed-good");
    std::fs::write(dir.path().join("good.a"), good_archive()).expect("write");
    let args = [
        "-type=a",
        "-targets=hip-amdgcn-amd-amdhsa--gfx906",
        "-input=good.a",
        "-unbundle",
        "-output=out.a",
    ]
    .map(String::from);
    let out = run_tool(Tool::Ours, dir.path(), &args, b"", LIMIT);
    assert_eq!(out.status, Status::Exit(0), "{}", show(&out.stderr));
    let files: Vec<String> = snapshot(dir.path()).into_keys().collect();
    assert_eq!(
        files,
        ["good.a", "out.a"],
        "nothing but the requested output is written"
    );
}

#[test]
fn truncated_member_header() {
    let a = good_archive();
    expect_clean_error("truncated-header", &a[..8 + 30], "truncated member header");
}

#[test]
fn member_size_past_end() {
    let mut a = good_archive();
    a.truncate(a.len() - 4);
    expect_clean_error("size-past-end", &a, "runs past the end");
}

#[test]
fn bad_size_field() {
    let mut a = good_archive();
    // The first header is the long-name table `//`; its size field starts at 8 + 48.
    a[8 + 48] = b'x';
    expect_clean_error("bad-size", &a, "not a decimal number");
}

#[test]
fn bad_long_name_index() {
    let a = good_archive();
    let at = a
        .windows(3)
        .position(|w| w == b"/0 ")
        .expect("long-name reference");
    let mut bad = a.clone();
    bad[at + 1..at + 4].copy_from_slice(b"999");
    expect_clean_error("long-name-index", &bad, "long-name index 999");
    let mut no_table = a;
    // Rename the `//` table so that the reference has nothing to point into.
    no_table[8..10].copy_from_slice(b"x/");
    expect_clean_error("no-long-name-table", &no_table, "bad.a");
}

#[test]
fn member_names_with_path_components() {
    let bundle = offload_build::bundle::binary::write_bundle(
        &[(b"hip-amdgcn-amd-amdhsa--gfx906", b"device code")],
        1,
    )
    .expect("bundle");
    for (label, name) in [
        ("slash", &b"dir/evil.bc"[..]),
        ("dotdot-slash", b"../../evil.bc"),
        ("dotdot", b".."),
        ("backslash", b"..\\evil.bc"),
    ] {
        let a = write_gnu_archive(&[NewMember {
            name: name.to_vec(),
            data: bundle.clone().into(),
        }])
        .expect("archive");
        let needle = if name.contains(&b'/') || name.contains(&b'\\') {
            "path separator"
        } else {
            "not a file name"
        };
        expect_clean_error(label, &a, needle);
    }
}

#[test]
fn thin_and_foreign_archives() {
    expect_clean_error("thin", b"!<thin>\n", "thin archives");
    // An input without an archive magic gets LLVM's message, which names no file (issue 19;
    // ours was "'bad.a': malformed archive: file does not start with !<arch>" before; the
    // differential cases are `archive_diff::archive_not_an_archive`). Still one line, exit
    // 1 and nothing written.
    expect_clean_error_with(
        "not-an-archive",
        b"\x7fELF not an archive",
        "clang-offload-bundler: error: file too small to be an archive\n",
    );
}
