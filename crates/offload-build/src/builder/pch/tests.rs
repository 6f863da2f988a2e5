//! The PCH room's unit tests.

use super::{job::*, preamble::*};
use std::ffi::OsStr;

fn b(s: &str) -> Bounds {
    clang_bounds(s.as_bytes())
}

// Each case's size is what `clang-19 -cc1 -print-preamble` printed for the same text.
#[test]
fn clang_bounds_follow_clang() {
    let cases: &[(&str, usize)] = &[
        (
            "#include <hip/hip_runtime.h>\n\n__global__ void k() {}\n",
            30,
        ),
        (
            "// c\n#define A 1\n#if A\n#include <x.h>\n#endif\n/* doc */\nint x;\n",
            45,
        ),
        ("#ifdef FOO\n#include <stddef.h>\nint x;\n#endif\n", 31),
        ("int x;\n#include <a.h>\n", 0),
        ("/* c */ int x;\n", 0),
        ("#include <a.h>\n#\n#include <b.h>\n", 15),
        ("#include <a.h>\n#foo\n", 15),
        ("#include <a.h> /* multi\nline */ int x;\nint y;\n", 39),
        ("#define A \\\n  1\nint x;\n", 16),
        ("#include <a.h>\n#pragma once\n  int x;\n", 30),
        ("%:include <a.h>\nint x;\n", 16),
        ("#in\\\nclude <a.h>\nint x;\n", 0),
        ("#include <a.h>\n# /*c*/ define X\nint x;\n", 15),
        ("#include <a.h>", 14),
        ("\u{feff}#include <a.h>\nint x;\n", 18),
        ("#define S \"/*\"\nint x;\n", 15),
        ("#include <a.h>\r\nint x;\r\n", 16),
        ("#include <a.h>\n// one\n// two\nint x;\n", 15),
    ];
    for (src, size) in cases {
        assert_eq!(b(src).size, *size, "{src:?}");
    }
    assert!(b("#include <a.h>\n  int x;\n").ends_at_start_of_line);
    assert!(!b("/* c */ int x;\n").ends_at_start_of_line);
}

#[test]
fn preamble_len_keeps_whole_safe_lines_outside_conditionals() {
    let len = |s: &str| preamble_len(s.as_bytes());
    assert_eq!(
        len("#include <hip/hip_runtime.h>\n\n__global__ void k() {}\n"),
        29
    );
    // An `#if` open where clang's preamble ends: back to before it.
    assert_eq!(
        len("#include <a.h>\n#ifdef FOO\n#include <b.h>\nint x;\n#endif\n"),
        15
    );
    // A pragma, a line marker or a warning stops it.
    assert_eq!(
        len("#include <a.h>\n#pragma once\n#include <b.h>\nint x;\n"),
        15
    );
    assert_eq!(len("#define A 1\n#line 7\nint x;\n"), 12);
    // A conditional reading a place-dependent macro stops it; a definition does not.
    assert_eq!(
        len("#define F __FILE__\n#if __LINE__ > 1\n#endif\nint x;\n"),
        19
    );
    // A directive continued by a comment or a splice counts whole.
    let s = "#include <a.h> /* multi\nline */ int x;\nint y;\n";
    assert_eq!(len(s), 39);
    assert_eq!(len("#define A \\\n  1\nint x;\n"), 16);
    // A closed conditional is kept; a file of directives only without a final newline
    // keeps its complete lines.
    assert_eq!(len("#if A\n#include <a.h>\n#else\n#endif\nint x;\n"), 34);
    assert_eq!(len("#include <a.h>\n#include <b.h>"), 15);
    assert_eq!(len("int x;\n"), 0);
    assert_eq!(len("#endif\nint x;\n"), 0);
}

/// The cut points are the lengths a shared prefix may take: after each whole directive
/// line outside a conditional, the last one the preamble's length.
#[test]
fn cut_points_end_every_whole_line_outside_conditionals() {
    let s = b"#include <a.h>\n#include \"b.h\"\n#if A\n#include <c.h>\n#endif\nint x;\n";
    assert_eq!(cut_points(s), [15, 30, 58]);
    assert_eq!(preamble_len(s), 58);
    assert!(cut_points(b"int x;\n").is_empty());
}

/// Sources that differ only in comments around and after their directives have the same
/// normalized prefix.
#[test]
fn normalized_prefixes_ignore_comments() {
    let a = b"// MIT (c) 2022\n#include \"u.h\" // utils\n#include <v>\nint x;\n";
    let b = b"/* (c) 2023\n */\n#include \"u.h\"\n#include /* std */ <v>\nint y;\n";
    let (ca, cb) = (cut_points(a), cut_points(b));
    assert_eq!(normalized(a, ca[0]), b"#include \"u.h\"\n");
    assert_eq!(normalized(a, ca[0]), normalized(b, cb[0]));
    assert_ne!(
        normalized(a, ca[1]),
        normalized(b, cb[1]),
        "a block comment is a space"
    );
    assert_eq!(
        normalized(b"#define S \"//x\"\n", 16),
        b"#define S \"//x\"\n"
    );
}

#[test]
fn refusing_flags() {
    let refused = [
        "-include",
        "-includefoo.h",
        "-Xclang",
        "-Weverything",
        "-fmodules",
        "-std=c++20",
        "-std=gnu++2b",
        "-g",
        "-gdwarf-5",
    ];
    for f in refused {
        assert!(flag_refuses_pch(OsStr::new(f)), "{f}");
    }
    for f in [
        "-O2",
        "-DX",
        "-Wall",
        "-I/x",
        "-std=c++17",
        "-gno-column-info",
    ] {
        assert!(!flag_refuses_pch(OsStr::new(f)), "{f}");
    }
}

/// A HIP device compile with a ROCm install newer than HIP 3.5 pre-includes clang's runtime
/// wrapper, whose weak functions a PCH would reorder: no PCH for it where they stay in the code
/// object (`-fgpu-rdc`, or not optimized); an optimized whole-program compile, HIP 3.5 (no
/// version given), `-nogpuinc` or `-nohipwrapperinc` keep it.
#[test]
fn no_device_pch_where_clang_preincludes_the_hip_wrapper() {
    let args = |extra: &[&str]| -> Vec<std::ffi::OsString> {
        [
            "clang",
            "-x",
            "hip",
            "--offload-arch=gfx90a",
            "--rocm-path=/usr",
        ]
        .iter()
        .chain(extra)
        .map(Into::into)
        .collect()
    };
    // Not optimized (no -O, or -O0 last): the wrapper's weak functions stay.
    assert!(preincludes_hip_wrapper(&args(&["--hip-version=5.2.21153"])));
    assert!(preincludes_hip_wrapper(&args(&["--hip-version=3.6"])));
    assert!(preincludes_hip_wrapper(&args(&[
        "--hip-version=6.1",
        "-O3",
        "-O0"
    ])));
    // -fgpu-rdc keeps them at any level; -fno-gpu-rdc after it does not.
    assert!(preincludes_hip_wrapper(&args(&[
        "--hip-version=5.2.21153",
        "-fgpu-rdc",
        "-O3"
    ])));
    assert!(!preincludes_hip_wrapper(&args(&[
        "--hip-version=5.2.21153",
        "-fgpu-rdc",
        "-O3",
        "-fno-gpu-rdc"
    ])));
    // hipcc's optimized whole-program compile drops them: PCH allowed (and the wrapper's
    // own PCH, for sources of their own).
    assert!(!preincludes_hip_wrapper(&args(&[
        "--hip-version=5.2.21153",
        "-O3"
    ])));
    let includes = crate::builder::pch::job::includes_hip_wrapper;
    assert!(includes(&args(&["--hip-version=5.2.21153", "-O3"])));
    assert!(!includes(&args(&["--hip-version=3.5.0", "-O3"])));
    assert!(!includes(&args(&["--hip-version=6.1", "-nogpuinc"])));
    assert!(!preincludes_hip_wrapper(&args(&[
        "--hip-version=5.2",
        "-O0",
        "-O2"
    ])));
    // No wrapper: HIP 3.5 or older, -nogpuinc, -nohipwrapperinc.
    assert!(!preincludes_hip_wrapper(&args(&["--hip-version=3.5.0"])));
    assert!(!preincludes_hip_wrapper(&args(&[
        "--hip-version=5.2.21153",
        "--hip-version=3.5.0"
    ])));
    assert!(!preincludes_hip_wrapper(&args(&[])));
    assert!(!preincludes_hip_wrapper(&args(&[
        "--hip-version=5.2.21153",
        "-nohipwrapperinc"
    ])));
    assert!(!preincludes_hip_wrapper(&args(&[
        "--hip-version=6.1",
        "-nogpuinc"
    ])));
}

/// A PCH job keyed `key`, its files in `dir`.
fn job_keyed(dir: &std::path::Path, key: u128) -> crate::builder::pch::PchJob {
    let base = dir.join(format!("preamble-gfx90a-{key:x}"));
    crate::builder::pch::PchJob {
        target: crate::builder::arch::Target::Host,
        preamble: b"#include <a.h>\n".to_vec(),
        preamble_file: base.with_extension("hip"),
        command: crate::builder::command::Command::new("clang"),
        deps_only: crate::builder::command::Command::new("clang"),
        pch: base.with_extension("pch"),
        depfile: base.with_extension("d"),
        record: base.with_extension("rec"),
        key,
        family: key,
    }
}

/// The choice of a compile whose own preamble's PCH is keyed `key` and that uses it (40 bytes
/// of its source), with the wrapper's and the runtime header's PCHs keyed as given.
fn own_choice(
    dir: &std::path::Path,
    key: u128,
    wrapper: Option<u128>,
    hoisted: Option<u128>,
) -> Option<crate::builder::pch::Choice> {
    Some(crate::builder::pch::Choice {
        full: job_keyed(dir, key),
        chosen: job_keyed(dir, key),
        skip: 40,
        wrapper: wrapper.map(|w| job_keyed(dir, w)),
        hoisted: hoisted.map(|h| job_keyed(dir, h)),
    })
}

/// The key of the PCH each choice uses and the bytes it stands for.
fn picked(c: &[Option<crate::builder::pch::Choice>]) -> Vec<(u128, usize)> {
    c.iter().flatten().map(|c| (c.chosen.key, c.skip)).collect()
}

/// The wrapper's PCH goes to the compiles that would use none now, when two or more share
/// it or a build of several sources finds it made; not to one whose own PCH is shared,
/// known, or that has no wrapper.
#[test]
fn compiles_that_would_use_no_pch_share_the_wrappers() {
    use crate::builder::pch::prefer_wrapper;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let own = |key: u128, wrapper: Option<u128>| own_choice(d, key, wrapper, None);
    // Three sources of their own: each takes the wrapper's; one without a wrapper keeps its.
    let mut c = vec![
        own(1, Some(9)),
        own(2, Some(9)),
        own(3, Some(9)),
        own(4, None),
    ];
    prefer_wrapper(&mut c, true);
    assert_eq!(picked(&c), [(9, 0), (9, 0), (9, 0), (4, 40)]);
    // One alone: not worth making; made already, taken in a build of several sources only.
    let mut c = vec![own(1, Some(9))];
    prefer_wrapper(&mut c, true);
    assert_eq!(picked(&c), [(1, 40)]);
    std::fs::write(job_keyed(d, 9).record, b"").unwrap();
    prefer_wrapper(&mut c, false);
    assert_eq!(picked(&c), [(1, 40)]);
    prefer_wrapper(&mut c, true);
    assert_eq!(picked(&c), [(9, 0)]);
    // A preamble two compiles share, or one a build asked for, keeps its own PCH.
    let mut c = vec![own(5, Some(8)), own(5, Some(8)), own(6, Some(8))];
    std::fs::write(job_keyed(d, 6).record.with_extension("seen"), b"").unwrap();
    prefer_wrapper(&mut c, true);
    assert_eq!(picked(&c), [(5, 40), (5, 40), (6, 40)]);
}

/// Sources that include HIP's runtime header after standard headers alone take the PCH of
/// the wrapper and that header when three or more share it (or a build of several finds it
/// made); the others, and those when fewer share it, take the wrapper's.
#[test]
fn sources_including_hips_runtime_after_standard_headers_share_its_pch() {
    use crate::builder::pch::prefer_wrapper;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let own = |key: u128, hoisted: Option<u128>| own_choice(d, key, Some(9), hoisted);
    let mut c = vec![
        own(1, Some(7)),
        own(2, Some(7)),
        own(3, Some(7)),
        own(4, None),
    ];
    prefer_wrapper(&mut c, true);
    assert_eq!(picked(&c), [(7, 0), (7, 0), (7, 0), (4, 40)]);
    let mut c = vec![own(1, Some(7)), own(2, Some(7)), own(4, None)];
    prefer_wrapper(&mut c, true);
    assert_eq!(picked(&c), [(9, 0), (9, 0), (9, 0)]);
    // Made already: taken by a build of several sources; the one left alone keeps its own.
    std::fs::write(job_keyed(d, 7).record, b"").unwrap();
    let mut c = vec![own(1, Some(7)), own(2, Some(7)), own(4, None)];
    prefer_wrapper(&mut c, true);
    assert_eq!(picked(&c), [(7, 0), (7, 0), (4, 40)]);
}

/// What may come before `#include <hip/hip_runtime.h>` for a source to take its PCH: standard
/// headers in angle brackets, comments; nothing else.
#[test]
fn only_standard_headers_may_come_before_hips_runtime() {
    use crate::builder::pch::hoists_runtime;
    let yes: [&[u8]; 4] = [
        b"#include <hip/hip_runtime.h>\nint a;\n",
        b"// (c)\n#include <stdio.h>\n#include <chrono>\n# include <hip/hip_runtime.h> // HIP\n#include \"r.h\"\nint a;\n",
        b"#include <cstdio>\n/* x */\n#include <hip/hip_runtime.h>\n#define N 4\nint a;\n",
        b"#include <vector>\n#include <hip/hip_runtime.h>\n",
    ];
    for t in yes {
        assert!(hoists_runtime(t), "{}", String::from_utf8_lossy(t));
    }
    let no: [&[u8]; 7] = [
        b"#include <stdio.h>\nint a;\n#include <hip/hip_runtime.h>\n",
        b"#define HIP_ENABLE_PRINTF\n#include <hip/hip_runtime.h>\n",
        b"#include \"common.h\"\n#include <hip/hip_runtime.h>\n",
        b"#include <hip/hip_fp16.h>\n#include <hip/hip_runtime.h>\n",
        b"#include <sys/time.h>\n#include <hip/hip_runtime.h>\n",
        b"#ifdef X\n#include <cstdio>\n#endif\n#include <hip/hip_runtime.h>\n",
        b"#include <cstdio>\nint a;\n",
    ];
    for t in no {
        assert!(!hoists_runtime(t), "{}", String::from_utf8_lossy(t));
    }
}

/// Sources sharing their whole preamble take a shorter PCH the build makes anyway when their
/// preamble reads little beyond it (by the weights), and keep their own when it reads much
/// more, when a weight is unknown, or when their own PCH was made.
#[test]
fn a_shared_preamble_takes_a_shorter_pch_it_adds_little_to() {
    use crate::builder::pch::{Choice, prefer_fewer};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let whole = b"#include \"u.h\"\n#include <n.h>\nint a;\n".as_slice();
    let other = b"#include \"u.h\"\n#include <m.h>\nint c;\n".as_slice();
    let cut = cut_points(whole)[0];
    let job = |key: u128, preamble: Vec<u8>| {
        let mut j = job_keyed(d, key);
        j.preamble = preamble;
        j.family = 7;
        j
    };
    let w = job(1, whole[..preamble_len(whole)].to_vec());
    let p = job(2, normalized(whole, cut));
    assert_eq!(p.preamble, normalized(other, cut_points(other)[0]));
    let choices = || {
        let own = Choice {
            full: w.clone(),
            chosen: w.clone(),
            skip: w.len(),
            wrapper: None,
            hoisted: None,
        };
        let third = Choice {
            full: job(3, other[..preamble_len(other)].to_vec()),
            chosen: p.clone(),
            skip: cut,
            wrapper: None,
            hoisted: None,
        };
        vec![Some(own.clone()), Some(own), Some(third)]
    };
    let texts = [Some(whole), Some(whole), Some(other)];
    let picked = |c: &[Option<Choice>]| -> Vec<(u128, usize)> {
        c.iter().flatten().map(|c| (c.chosen.key, c.skip)).collect()
    };
    let weights = |ww: Option<u64>, wp: Option<u64>| {
        move |j: &PchJob| match j.key {
            1 => ww,
            2 => wp,
            _ => None,
        }
    };
    // Two sources reading 100 bytes more than P's 900: P (2 x 100 < 1000).
    let mut c = choices();
    prefer_fewer(&mut c, &texts, &weights(Some(1000), Some(900)));
    assert_eq!(picked(&c), [(2, cut), (2, cut), (2, cut)]);
    // 600 bytes more: their own (2 x 600 >= 1000); a weight unknown: their own.
    for (ww, wp) in [
        (Some(1000), Some(400)),
        (None, Some(900)),
        (Some(1000), None),
    ] {
        let mut c = choices();
        prefer_fewer(&mut c, &texts, &weights(ww, wp));
        assert_eq!(picked(&c), [(1, w.len()), (1, w.len()), (2, cut)]);
    }
    // Their own PCH made already: kept.
    std::fs::write(&w.record, b"").unwrap();
    let mut c = choices();
    prefer_fewer(&mut c, &texts, &weights(Some(1000), Some(900)));
    assert_eq!(picked(&c), [(1, w.len()), (1, w.len()), (2, cut)]);
}
