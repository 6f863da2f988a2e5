//! Fat objects (`-type=o` with an object host, spec A.4).
//!
//! - `fat_object_read`: clang 19's own fat objects listed and unbundled (device entries) by
//!   LLVM 19, 22 and ours through the differential harness.
//! - The other tests write fat objects with ours and with LLVM 19 (llvm-objcopy) from the
//!   same inputs and check: LLVM 19 and 22 list and unbundle ours exactly as their own;
//!   `llvm-readelf -S` shows the same sections with the same type, flags, entry size, link,
//!   info and alignment (ELF x86-64, AArch64, ppc64le); COFF sections carry the same names,
//!   characteristics and sizes; `-###` prints llvm-objcopy's command line as LLVM does
//!   (paths of llvm-objcopy and of LLVM's temporary file aside) and leaves the same empty
//!   outputs; `-compress` has no effect; a missing host target is a clean error where LLVM
//!   crashes; Mach-O hosts are refused by both.
//! - `hip_link_with_our_fat_objects`: a real HIP `-fgpu-rdc` link with clang 19 and lld
//!   accepts our fat objects in place of clang's, and the executable's `.hip_fatbin` is
//!   byte-identical to the one linked from clang's.

use std::path::Path;
use std::time::Duration;

use crate::objects_fixtures::{
    ARCHS, BUNDLER19, HOST_TARGET, OBJCOPY19, READELF19, READOBJ19, objects, safe, tool,
};
use crate::support::run::{RunDir, Status, Tool, run_tool};
use crate::support::{CLANG19, Case};

const LIMIT: Duration = Duration::from_secs(60);

fn hip(arch: &str) -> String {
    format!("hip-amdgcn-amd-amdhsa--{arch}")
}

mod fat_object_read {
    #[test]
    fn references_agree() {
        crate::support::check_references("fat_object_read", super::fat_object_read());
    }
    #[test]
    fn ours() {
        crate::support::check_ours("fat_object_read", super::fat_object_read());
    }
}

/// clang's fat objects: list, unbundle every device entry, unbundle one entry twice over.
fn fat_object_read() -> Vec<Case> {
    let fx = objects();
    let all: Vec<String> = ARCHS.iter().map(|a| hip(a)).collect();
    let mut unbundle = vec![
        "-type=o".to_string(),
        format!("-targets={}", all.join(",")),
        "-input=a.o".into(),
        "-unbundle".into(),
    ];
    unbundle.extend((0..all.len()).map(|i| format!("-output=u{i}")));
    vec![
        Case::new("list")
            .input("a.o", fx.path("a.o"))
            .step(["-type=o", "-list", "-input=a.o"]),
        Case::new("unbundle-devices")
            .input("a.o", fx.path("a.o"))
            .step(unbundle),
        Case::new("xnack-any-entry-for-xnack-target")
            .input("b.o", fx.path("b.o"))
            .step([
                "-type=o",
                "-targets=hip-amdgcn-amd-amdhsa--gfx906:xnack-",
                "-input=b.o",
                "-unbundle",
                "-output=u0",
            ]),
        Case::new("missing-device")
            .input("b.o", fx.path("b.o"))
            .step([
                "-type=o",
                "-targets=hip-amdgcn-amd-amdhsa--gfx908",
                "-input=b.o",
                "-unbundle",
                "-output=u0",
            ]),
    ]
}

/// Runs `tool` with `args` in `dir`, which must succeed.
fn ok(t: Tool, dir: &Path, args: &[String]) -> Vec<u8> {
    let out = run_tool(t, dir, args, b"", LIMIT);
    assert!(
        out.status.success(),
        "{} {args:?}: {:?}\n{}",
        t.name(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stderr
}

/// Bundle args for the host object `host` (target `host_target`) and the device payloads of
/// translation unit a, host last (as clang orders them).
fn bundle_args(host: &str, host_target: &str, out: &str) -> Vec<String> {
    let mut targets: Vec<String> = ARCHS.iter().map(|a| hip(a)).collect();
    targets.push(host_target.into());
    let mut args = vec![
        "-type=o".to_string(),
        format!("-targets={}", targets.join(",")),
    ];
    args.extend(ARCHS.iter().map(|a| format!("-input=a-{}.bc", safe(a))));
    args.push(format!("-input={host}"));
    args.push(format!("-output={out}"));
    args
}

/// A run directory holding the device payloads of a.o and the named fixtures.
fn stage(label: &str, files: &[&str]) -> RunDir {
    let fx = objects();
    let dir = RunDir::new(label);
    for arch in ARCHS {
        let name = format!("a-{}.bc", safe(arch));
        std::fs::copy(fx.path(&name), dir.path().join(&name)).expect("copy");
    }
    for f in files {
        std::fs::copy(fx.path(f), dir.path().join(f)).expect("copy");
    }
    dir
}

/// `llvm-readelf -S` rows without address, offset and size: name, type, ES, flags, link,
/// info, alignment.
fn section_rows(dir: &Path, file: &str) -> Vec<String> {
    let text = String::from_utf8(tool(dir, READELF19, &["-S", "-W", file])).expect("utf8");
    let mut rows = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix('[') else {
            continue;
        };
        let Some((_, rest)) = rest.split_once(']') else {
            continue;
        };
        let cols: Vec<&str> = rest.split_whitespace().collect();
        if cols.first() == Some(&"Name") || cols.len() < 7 {
            continue;
        }
        // Name Type Address Off Size ES Flg Lk Inf Al (Flg may be empty).
        let (name, ty) = (cols[0], cols[1]);
        let tail = &cols[5..];
        rows.push(format!("{name} {ty} {}", tail.join(" ")));
    }
    rows
}

#[test]
fn fat_objects_match_llvm_objcopy_output() {
    for (host, target) in [
        ("host-x86_64.o", HOST_TARGET),
        ("host-aarch64.o", "host-aarch64-unknown-linux-gnu"),
        ("host-ppc64le.o", "host-powerpc64le-unknown-linux-gnu"),
    ] {
        let dir = stage(&format!("fatobj-{host}"), &[host]);
        ok(
            Tool::Llvm19,
            dir.path(),
            &bundle_args(host, target, "llvm.o"),
        );
        ok(Tool::Ours, dir.path(), &bundle_args(host, target, "ours.o"));
        let (theirs, ours) = (
            section_rows(dir.path(), "llvm.o"),
            section_rows(dir.path(), "ours.o"),
        );
        assert!(
            theirs
                .iter()
                .any(|r| r.contains("__CLANG_OFFLOAD_BUNDLE__hip")),
            "{host}: no bundle sections in LLVM's output: {theirs:?}"
        );
        assert_eq!(ours, theirs, "{host}: llvm-readelf -S differs");

        // LLVM 19 and 22 list and unbundle ours as their own.
        for t in [Tool::Llvm19, Tool::Llvm22] {
            let list = |f: &str| {
                run_tool(
                    t,
                    dir.path(),
                    &["-type=o".into(), "-list".into(), format!("-input={f}")],
                    b"",
                    LIMIT,
                )
                .stdout
            };
            assert_eq!(list("ours.o"), list("llvm.o"), "{host}: {} -list", t.name());
            for arch in ARCHS {
                for f in ["ours.o", "llvm.o"] {
                    let args = vec![
                        "-type=o".to_string(),
                        format!("-targets={}", hip(arch)),
                        format!("-input={f}"),
                        "-unbundle".into(),
                        format!("-output={f}.{}", safe(arch)),
                    ];
                    ok(t, dir.path(), &args);
                }
                let read = |f: &str| {
                    std::fs::read(dir.path().join(format!("{f}.{}", safe(arch)))).expect("read")
                };
                let payload =
                    std::fs::read(dir.path().join(format!("a-{}.bc", safe(arch)))).expect("read");
                assert_eq!(
                    read("ours.o"),
                    payload,
                    "{host}: {} unbundled {arch} from ours",
                    t.name()
                );
                assert_eq!(
                    read("llvm.o"),
                    payload,
                    "{host}: {} unbundled {arch} from LLVM's",
                    t.name()
                );
            }
        }

        // The host entry of ours: an object with the host's sections and symbols.
        let mut args = vec![
            "-type=o".to_string(),
            format!("-targets={target}"),
            "-input=ours.o".into(),
            "-unbundle".into(),
            "-output=host-back.o".into(),
        ];
        ok(Tool::Ours, dir.path(), &args);
        let nm = |f: &str| tool(dir.path(), "/usr/lib/llvm-19/bin/llvm-nm", &[f]);
        assert_eq!(
            nm("host-back.o"),
            nm(host),
            "{host}: symbols of the extracted host object"
        );
        assert_eq!(
            section_rows(dir.path(), "host-back.o"),
            section_rows(dir.path(), host)
        );
        args[2] = "-input=host-back.o".into();
        args[4] = "-output=again.o".into();
        args.push("-allow-missing-bundles".into());
        // Not a fat object any more: the whole input is the host's (LLVM's rule, A.6).
        ok(Tool::Ours, dir.path(), &args);
        let again = std::fs::read(dir.path().join("again.o")).expect("read");
        assert_eq!(
            again,
            std::fs::read(dir.path().join("host-back.o")).expect("read")
        );
    }
}

#[test]
fn coff_fat_object_matches_llvm_objcopy_output() {
    let host = "host-coff.obj";
    let target = "host-x86_64-pc-windows-msvc";
    let dir = stage("fatobj-coff", &[host]);
    ok(
        Tool::Llvm19,
        dir.path(),
        &bundle_args(host, target, "llvm.obj"),
    );
    ok(
        Tool::Ours,
        dir.path(),
        &bundle_args(host, target, "ours.obj"),
    );
    let sections = |f: &str| -> Vec<String> {
        let text =
            String::from_utf8(tool(dir.path(), READOBJ19, &["--sections", f])).expect("utf8");
        text.lines()
            .map(str::trim)
            .filter(|l| {
                l.starts_with("Name: ")
                    || l.starts_with("Characteristics [")
                    || l.starts_with("VirtualSize:")
                    || l.starts_with("VirtualAddress:")
                    || l.starts_with("RawDataSize:")
            })
            // The long-name offsets in parentheses depend on the string table layout.
            .map(|l| l.split(" (2F").next().unwrap_or(l).to_string())
            .collect()
    };
    let (theirs, ours) = (sections("llvm.obj"), sections("ours.obj"));
    assert!(
        theirs
            .iter()
            .any(|l| l.contains("__CLANG_OFFLOAD_BUNDLE__hip"))
    );
    assert_eq!(ours, theirs);
    for t in [Tool::Llvm19, Tool::Llvm22] {
        let args = vec![
            "-type=o".to_string(),
            format!("-targets={}", hip("gfx906")),
            "-input=ours.obj".into(),
            "-unbundle".into(),
            "-output=dev".into(),
        ];
        ok(t, dir.path(), &args);
        let got = std::fs::read(dir.path().join("dev")).expect("read");
        assert_eq!(
            got,
            std::fs::read(dir.path().join("a-gfx906.bc")).expect("read")
        );
    }
    let args = vec![
        "-type=o".to_string(),
        format!("-targets={target}"),
        "-input=ours.obj".into(),
        "-unbundle".into(),
        "-output=host-back.obj".into(),
    ];
    ok(Tool::Ours, dir.path(), &args);
    let nm = |f: &str| tool(dir.path(), "/usr/lib/llvm-19/bin/llvm-nm", &[f]);
    assert_eq!(nm("host-back.obj"), nm(host));
}

/// `"<objcopy>" … "<tmp>" …` with the llvm-objcopy path and LLVM's temporary file names
/// replaced, for comparing `-###` output across tools.
fn normalize_command(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr).into_owned();
    let mut out = String::new();
    for line in text.lines() {
        let mut parts: Vec<String> = line.split("\" \"").map(str::to_string).collect();
        if let Some(first) = parts.first_mut() {
            if first.ends_with("llvm-objcopy") {
                *first = "\"<objcopy>".into();
            }
        }
        let mut joined = parts.join("\" \"");
        while let Some(at) = joined.find("/clang-offload-bundler-") {
            let start = joined[..at].rfind(['"', '=']).map_or(0, |i| i + 1);
            let end = joined[at..]
                .find(".tmp")
                .map_or(joined.len(), |i| at + i + 4);
            joined.replace_range(start..end, "<tmp>");
        }
        out.push_str(&joined);
        out.push('\n');
    }
    out
}

#[test]
fn print_commands_as_llvm() {
    let dir = stage("fatobj-###", &["host-x86_64.o", "a.o"]);
    let mut bundle = bundle_args("host-x86_64.o", HOST_TARGET, "out.o");
    bundle.insert(0, "-###".into());
    let unbundle_host = vec![
        "-###".to_string(),
        "-type=o".into(),
        format!("-targets={HOST_TARGET},{}", hip("gfx906")),
        "-input=a.o".into(),
        "-unbundle".into(),
        "-output=host-out.o".into(),
        "-output=dev-out".into(),
    ];
    let mut seen = Vec::new();
    for t in [Tool::Llvm19, Tool::Llvm22, Tool::Ours] {
        std::fs::write(dir.path().join("out.o"), b"previous contents").expect("write");
        let e1 = ok(t, dir.path(), &bundle);
        let out = std::fs::read(dir.path().join("out.o")).expect("read");
        assert!(
            out.is_empty(),
            "{}: -### must leave the output empty",
            t.name()
        );
        let e2 = ok(t, dir.path(), &unbundle_host);
        let host = std::fs::read(dir.path().join("host-out.o")).expect("read");
        assert!(
            host.is_empty(),
            "{}: -### leaves the host output empty",
            t.name()
        );
        let dev = std::fs::read(dir.path().join("dev-out")).expect("read");
        seen.push((normalize_command(&e1), normalize_command(&e2), dev));
    }
    assert!(
        seen[0]
            .0
            .contains("\"--add-section=__CLANG_OFFLOAD_BUNDLE__"),
        "{}",
        seen[0].0
    );
    assert!(
        seen[0].1.contains("\"--regex\" \"--remove-section="),
        "{}",
        seen[0].1
    );
    assert_eq!(seen[0], seen[1], "LLVM 19 and 22 print differently");
    assert_eq!(seen[2], seen[1], "ours prints differently from LLVM 22");
}

#[test]
fn compress_has_no_effect_on_fat_objects() {
    let dir = stage("fatobj-compress", &["host-x86_64.o"]);
    let plain = bundle_args("host-x86_64.o", HOST_TARGET, "plain.o");
    let mut compressed = bundle_args("host-x86_64.o", HOST_TARGET, "compressed.o");
    compressed.push("-compress".into());
    for t in [Tool::Llvm19, Tool::Ours] {
        ok(t, dir.path(), &plain);
        ok(t, dir.path(), &compressed);
        let a = std::fs::read(dir.path().join("plain.o")).expect("read");
        let b = std::fs::read(dir.path().join("compressed.o")).expect("read");
        assert_eq!(a, b, "{}: -compress changed the fat object", t.name());
    }
}

#[test]
fn fat_object_errors() {
    let dir = stage("fatobj-errors", &["host-x86_64.o", "host-macho.o"]);
    // No host target with an object input: LLVM 19 and 22 crash (SIGSEGV); ours must not.
    let no_host = vec![
        "-type=o".to_string(),
        format!("-targets={}", hip("gfx906")),
        "-input=host-x86_64.o".into(),
        "-output=out.o".into(),
    ];
    let out = run_tool(Tool::Ours, dir.path(), &no_host, b"", LIMIT);
    assert_eq!(out.status, Status::Exit(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("clang-offload-bundler: error: 'host-x86_64.o':")
            && err.contains("host target")
            && err.lines().count() == 1,
        "{err}"
    );
    assert!(
        !dir.path().join("out.o").exists(),
        "ours created the output on error"
    );

    // Mach-O hosts: LLVM's llvm-objcopy refuses; ours refuses with a message of its own.
    let macho = vec![
        "-type=o".to_string(),
        format!("-targets=host-x86_64-apple-macos,{}", hip("gfx906")),
        "-input=host-macho.o".into(),
        "-input=a-gfx906.bc".into(),
        "-output=out.o".into(),
    ];
    for t in [Tool::Llvm19, Tool::Llvm22, Tool::Ours] {
        let out = run_tool(t, dir.path(), &macho, b"", LIMIT);
        assert_eq!(
            out.status,
            Status::Exit(1),
            "{}: {}",
            t.name(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = run_tool(Tool::Ours, dir.path(), &macho, b"", LIMIT);
    assert!(String::from_utf8_lossy(&out.stderr).contains("Mach-O"));
}

#[test]
fn hip_link_with_our_fat_objects() {
    let fx = objects();
    let dir = stage(
        "fatobj-link",
        &["a.o", "b.o", "a-host.o", "b-host.o", "stubs.o"],
    );
    for tu in ["b"] {
        for arch in ARCHS {
            let name = format!("{tu}-{}.bc", safe(arch));
            std::fs::copy(fx.path(&name), dir.path().join(&name)).expect("copy");
        }
    }
    // Our fat objects from LLVM's host objects and device payloads.
    for tu in ["a", "b"] {
        let mut targets: Vec<String> = ARCHS.iter().map(|a| hip(a)).collect();
        targets.push(HOST_TARGET.into());
        let mut args = vec![
            "-type=o".to_string(),
            format!("-targets={}", targets.join(",")),
        ];
        args.extend(ARCHS.iter().map(|a| format!("-input={tu}-{}.bc", safe(a))));
        args.push(format!("-input={tu}-host.o"));
        args.push(format!("-output=our-{tu}.o"));
        ok(Tool::Ours, dir.path(), &args);
    }
    let link = |inputs: [&str; 2], out: &str| {
        let mut args = vec!["--hip-link", "-fgpu-rdc", "-no-hip-rt", "-fuse-ld=lld"];
        let archs: Vec<String> = ARCHS
            .iter()
            .map(|a| format!("--offload-arch={a}"))
            .collect();
        args.extend(archs.iter().map(String::as_str));
        args.extend(inputs);
        args.extend(["stubs.o", "-o", out]);
        tool(dir.path(), CLANG19, &args);
        let section = format!("--dump-section=.hip_fatbin={out}.hipfb");
        tool(dir.path(), OBJCOPY19, &[&section, out]);
        std::fs::read(dir.path().join(format!("{out}.hipfb"))).expect("read fatbin")
    };
    let theirs = link(["a.o", "b.o"], "app-clang");
    let ours = link(["our-a.o", "our-b.o"], "app-ours");
    assert!(
        ours.starts_with(b"__CLANG_OFFLOAD_BUNDLE__"),
        "no bundle in .hip_fatbin"
    );
    assert_eq!(ours, theirs, ".hip_fatbin differs between the links");
    // The fat binary holds one linked code object per architecture.
    let listed = tool(
        dir.path(),
        BUNDLER19,
        &["-type=o", "-list", "-input=app-ours.hipfb"],
    );
    let listed = String::from_utf8(listed).expect("utf8");
    for arch in ARCHS {
        assert!(
            listed.contains(&format!("hipv4-amdgcn-amd-amdhsa--{arch}\n")),
            "{listed}"
        );
    }
    let target = format!("-targets=hipv4-amdgcn-amd-amdhsa--{}", ARCHS[1]);
    tool(
        dir.path(),
        BUNDLER19,
        &[
            "-type=o",
            &target,
            "-input=app-ours.hipfb",
            "-unbundle",
            "-output=co",
        ],
    );
    let co = std::fs::read(dir.path().join("co")).expect("read");
    assert!(co.starts_with(b"\x7fELF"), "not a code object");
    assert!(co.windows(2).any(|w| w == b"ka") && co.windows(2).any(|w| w == b"kb"));
}

/// Where `name`'s section header lies in the object `data` and where, in that header, the
/// contents' file offset is (ELF64: `sh_offset`; COFF: `PointerToRawData`).
fn section_offset_field(data: &[u8], name: &str) -> (usize, usize) {
    use object::{Object, ObjectSection};
    let file = object::File::parse(data).expect("object");
    let index = file.section_by_name(name).expect("section").index().0;
    let u16_at = |o: usize| usize::from(u16::from_le_bytes([data[o], data[o + 1]]));
    match file.format() {
        object::BinaryFormat::Elf => {
            let shoff = u64::from_le_bytes(data[0x28..0x30].try_into().expect("8")) as usize;
            (index, shoff + index * u16_at(0x3a) + 24)
        }
        object::BinaryFormat::Coff => (index, 20 + u16_at(16) + (index - 1) * 40 + 20),
        f => panic!("{f:?}"),
    }
}

/// A fat object (ELF and COFF hosts) whose gfx906 section's contents lie past the end of the
/// file, the gfx1100 and host sections intact (issue 16, finding 5). LLVM 22 lists every ID
/// and extracts the intact sections; extracting the broken one fails ("The end of the file
/// was unexpectedly encountered", exit 1). Ours does the same, names the section and its
/// offset, and leaves no output.
#[test]
fn fat_object_with_an_unreadable_section() {
    for (host, host_target) in [
        ("host-x86_64.o", "host-x86_64-pc-linux-gnu"),
        ("host-coff.obj", "host-x86_64-pc-windows-msvc"),
    ] {
        let dir = stage("fatobj-unreadable", &[host]);
        ok(
            Tool::Llvm22,
            dir.path(),
            &bundle_args(host, host_target, "fat.o"),
        );
        let mut data = std::fs::read(dir.path().join("fat.o")).expect("read");
        let broken = format!("__CLANG_OFFLOAD_BUNDLE__{}", hip("gfx906"));
        let (index, field) = section_offset_field(&data, &broken);
        let past_end = data.len() as u64 + 0x10_0000;
        if host.ends_with(".obj") {
            data[field..field + 4].copy_from_slice(&(past_end as u32).to_le_bytes());
        } else {
            data[field..field + 8].copy_from_slice(&past_end.to_le_bytes());
        }
        std::fs::write(dir.path().join("bad.o"), &data).expect("write");
        let unbundle = |targets: &[String], extra: &[&str]| -> Vec<String> {
            let mut a = vec![
                "-type=o".to_string(),
                format!("-targets={}", targets.join(",")),
                "-input=bad.o".into(),
                "-unbundle".into(),
            ];
            a.extend((0..targets.len()).map(|i| format!("-output=u{i}")));
            a.extend(extra.iter().map(|s| s.to_string()));
            a
        };
        let good = vec![hip("gfx1100")];
        let with_missing = vec![hip("gfx1100"), hip("gfx908")];
        let all = vec![hip("gfx1100"), hip("gfx906"), host_target.to_string()];
        let steps: Vec<(Vec<String>, bool)> = vec![
            (
                vec!["-type=o".into(), "-list".into(), "-input=bad.o".into()],
                true,
            ),
            (unbundle(&good, &[]), true),
            (unbundle(&with_missing, &["-allow-missing-bundles"]), true),
            (unbundle(&[hip("gfx906")], &[]), false),
            (unbundle(&all, &["-allow-missing-bundles"]), false),
            (unbundle(&all, &[]), false),
        ];
        for (args, succeeds) in steps {
            let mut results = Vec::new();
            for t in [Tool::Llvm22, Tool::Ours] {
                for i in 0..3 {
                    let _ = std::fs::remove_file(dir.path().join(format!("u{i}")));
                }
                let out = run_tool(t, dir.path(), &args, b"", LIMIT);
                let u0 = std::fs::read(dir.path().join("u0")).ok();
                results.push((out, u0));
            }
            let (llvm, ours) = (&results[0], &results[1]);
            let err = String::from_utf8_lossy(&ours.0.stderr).into_owned();
            let what = format!(
                "{host} {args:?}: llvm {:?}, ours {:?}: {err}",
                llvm.0.status, ours.0.status
            );
            assert_eq!(llvm.0.status.success(), succeeds, "{what}");
            assert_eq!(ours.0.status, llvm.0.status, "{what}");
            assert_eq!(ours.0.stdout, llvm.0.stdout, "{what}");
            if succeeds {
                assert!(ours.0.stderr.is_empty(), "{what}");
                if args.contains(&"-unbundle".to_string()) {
                    let want = std::fs::read(dir.path().join("a-gfx1100.bc")).expect("payload");
                    assert_eq!(llvm.1.as_deref(), Some(&want[..]), "{what}");
                    assert_eq!(ours.1.as_deref(), Some(&want[..]), "{what}");
                }
            } else {
                assert_eq!(err.lines().count(), 1, "{what}");
                assert!(
                    err.starts_with("clang-offload-bundler: error: 'bad.o': ")
                        && err.contains(&format!("section {index} '{broken}'"))
                        && err.contains(&format!("offset {past_end} ")),
                    "{what}"
                );
                assert!(ours.1.is_none(), "ours left an output: {what}");
            }
        }
        let listed = String::from_utf8_lossy(&results_list(&dir)).into_owned();
        let want: Vec<String> = ARCHS
            .iter()
            .map(|a| hip(a))
            .chain([format!("{host_target}-")])
            .collect();
        assert_eq!(listed.lines().collect::<Vec<_>>(), want, "{host}");
    }
}

/// Our `-list` of `bad.o` in `dir`.
fn results_list(dir: &RunDir) -> Vec<u8> {
    let args: Vec<String> = vec!["-type=o".into(), "-list".into(), "-input=bad.o".into()];
    run_tool(Tool::Ours, dir.path(), &args, b"", LIMIT).stdout
}
