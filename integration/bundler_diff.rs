//! Differential cases: LLVM 19, LLVM 22 and ours run the same steps; see `support::case`.
//!
//! Each group below becomes a module with two tests, `references_agree` and `ours`.
//! Conventions: inputs are named in the run directory (`host.bin`, `d1.co`, …), bundles are
//! `fat.<type>`, unbundled outputs `u<i>`; every path is relative so that messages naming a path
//! are the same bytes for every tool.

use std::time::Duration;

use crate::support::args::{
    bundle_args, co, hip, hipv4, list_args, listed, openmp, round_trip, stderr_err, targets,
    unbundle_args,
};
use crate::support::{
    CODE_OBJECT_ARCHS, Case, Check, Reference, Role, Status, TEXT_TYPES, Tool, fixtures,
    fixtures::LARGE_PAYLOAD,
};

groups!(
    code_objects,
    payload_sizes,
    large_payload,
    text_types,
    bundle_align,
    host_position,
    target_count,
    list,
    stdio,
    missing_bundles,
    compatibility,
    driver_invocation,
    id_forms,
    option_syntax,
    validation_errors,
    help_version,
);

const HOST: &str = "host-x86_64-unknown-linux-gnu";
const HOST_ID: &str = "host-x86_64-unknown-linux-gnu-";
/// LLVM 20+'s rejection of IDs that do not have 5 or 6 `-`-separated components.
const FORMAT_ERR: &str = "Targets need to follow the format '<offload kind>-<target triple>', \
    where '<target triple>' follows the format \
    '<kind>-<arch>-<vendor>-<os>-<env>[-<target id>[:target features]]'.";

/// Real AMDGPU code objects compiled by clang 19, one with a target feature.
fn code_objects() -> Vec<Case> {
    let fx = fixtures();
    let with_objects = |mut c: Case| {
        for arch in CODE_OBJECT_ARCHS {
            c = c.input(&co(arch), fx.code_object(arch));
        }
        c
    };
    let names: Vec<String> = CODE_OBJECT_ARCHS.iter().map(|a| co(a)).collect();
    let mut inputs: Vec<&str> = vec!["host.bin"];
    inputs.extend(names.iter().map(String::as_str));
    let mut with_host = vec![HOST.to_string()];
    with_host.extend(CODE_OBJECT_ARCHS.iter().map(|a| hip(a)));
    let hipv4s: Vec<String> = CODE_OBJECT_ARCHS.iter().map(|a| hipv4(a)).collect();
    let xnack = fx.code_object("gfx90a:xnack+");

    vec![
        round_trip(
            with_objects(Case::new("bc-host-and-4-archs")).input("host.bin", fx.payload(4097)),
            "bc",
            &with_host,
            &inputs,
        )
        .expect_llvm(Check::File("u3".into(), std::fs::read(&xnack).unwrap()))
        .step(unbundle_args("bc", &[hip("gfx90a:xnack+")], "fat.bc"))
        .expect_llvm(Check::File("u0".into(), std::fs::read(&xnack).unwrap())),
        // Not `-type=o`: with no host, LLVM picks the handler from the first input, a real
        // object here, and both versions crash (SIGSEGV in BundleFiles).
        round_trip(
            with_objects(Case::new("hipv4-only-4-archs")),
            "bc",
            &hipv4s,
            &inputs[1..],
        )
        .step(unbundle_args(
            "bc",
            &[hipv4("gfx1100"), hipv4("gfx906")],
            "fat.bc",
        )),
    ]
}

/// Pseudo-random payloads of 0, 1, 4095, 4096 and 4097 bytes as host and device entries.
fn payload_sizes() -> Vec<Case> {
    let fx = fixtures();
    let ts = [HOST.to_string(), hip("gfx906"), openmp("gfx908")];
    [0, 1, 4095, 4096, 4097]
        .into_iter()
        .map(|size| {
            round_trip(
                Case::new(format!("size-{size}"))
                    .input("host.bin", fx.payload(size))
                    .input("dev.bin", fx.payload(size))
                    .input("one.bin", fx.payload(1)),
                "bc",
                &ts,
                &["host.bin", "dev.bin", "one.bin"],
            )
            .expect_llvm(Check::File(
                "u1".into(),
                std::fs::read(fx.payload(size)).unwrap(),
            ))
        })
        .collect()
}

/// A 64 MiB device payload: bundle (4096-aligned), list, unbundle to a file and to stdout.
fn large_payload() -> Vec<Case> {
    let fx = fixtures();
    let ts = [HOST.to_string(), hip("gfx906")];
    let mut bundle = bundle_args("bc", &ts, &["host.bin", "big.bin"], "fat.bc");
    bundle.push("-bundle-align=4096".into());
    let big = std::fs::read(fx.payload(LARGE_PAYLOAD)).unwrap();
    vec![
        Case::new("64MiB")
            .limit(Duration::from_secs(180))
            .input("host.bin", fx.payload(1))
            .input("big.bin", fx.payload(LARGE_PAYLOAD))
            .step(bundle)
            .step(list_args("bc", "fat.bc"))
            .step(unbundle_args("bc", &ts, "fat.bc"))
            .expect_llvm(Check::File("u1".into(), big.clone()))
            .step([
                "-type=bc",
                &targets(&[hip("gfx906")]),
                "-input=fat.bc",
                "-unbundle",
                "-output=-",
            ])
            .expect_llvm(Check::Stdout(big)),
    ]
}

/// Every text type, payloads with and without a final newline.
fn text_types() -> Vec<Case> {
    let fx = fixtures();
    let ts = [HOST.to_string(), hip("gfx906"), openmp("gfx908")];
    let mut cases = Vec::new();
    for ty in TEXT_TYPES {
        for nl in [true, false] {
            let name = format!("{ty}-{}", if nl { "newline" } else { "no-newline" });
            let c = Case::new(name)
                .input(&format!("h.{ty}"), fx.text(ty, Role::Host, nl))
                .input(&format!("d1.{ty}"), fx.text(ty, Role::Dev1, nl))
                .input(&format!("d2.{ty}"), fx.text(ty, Role::Dev2, nl));
            let (h, d1, d2) = (format!("h.{ty}"), format!("d1.{ty}"), format!("d2.{ty}"));
            let fat = format!("fat.{ty}");
            cases.push(
                round_trip(c, ty, &ts, &[&h, &d1, &d2])
                    .expect_llvm(Check::File(
                        "u2".into(),
                        std::fs::read(fx.text(ty, Role::Dev2, nl)).unwrap(),
                    ))
                    .step(unbundle_args(ty, &[hip("gfx906")], &fat))
                    .expect_llvm(Check::File(
                        "u0".into(),
                        std::fs::read(fx.text(ty, Role::Dev1, nl)).unwrap(),
                    )),
            );
        }
    }
    // The layout of spec A.3's example (`t19.ii`), pinned independently of the tools.
    let a3 = "\n// __CLANG_OFFLOAD_BUNDLE____START__ host-x86_64-unknown-linux-gnu-\nint host;\n\n// __CLANG_OFFLOAD_BUNDLE____END__ host-x86_64-unknown-linux-gnu-\n\n// __CLANG_OFFLOAD_BUNDLE____START__ hip-amdgcn-amd-amdhsa--gfx906\nint dev;\n// __CLANG_OFFLOAD_BUNDLE____END__ hip-amdgcn-amd-amdhsa--gfx906\n";
    cases.push(
        Case::new("spec-a3-example")
            .file("h.ii", "int host;\n")
            .file("d.ii", "int dev;")
            .step(bundle_args(
                "ii",
                &[HOST.to_string(), hip("gfx906")],
                &["h.ii", "d.ii"],
                "fat.ii",
            ))
            .expect_llvm(Check::File("fat.ii".into(), a3.into())),
    );
    cases
}

/// `-bundle-align` powers of two and not, applied to every entry; ignored by text bundles.
fn bundle_align() -> Vec<Case> {
    let fx = fixtures();
    let ts = [
        HOST.to_string(),
        hip("gfx906"),
        hip("gfx908"),
        hip("gfx1100"),
    ];
    let mut cases: Vec<Case> = ["1", "8", "4096", "3", "4097"]
        .into_iter()
        .map(|align| {
            let c = Case::new(format!("align-{align}"))
                .input("host.bin", fx.payload(4097))
                .input("d0.bin", fx.payload(0))
                .input("d1.bin", fx.payload(1))
                .input("d2.bin", fx.payload(4095));
            let mut bundle = bundle_args(
                "bc",
                &ts,
                &["host.bin", "d0.bin", "d1.bin", "d2.bin"],
                "fat.bc",
            );
            bundle.push(format!("-bundle-align={align}"));
            let payloads: Vec<Vec<u8>> = [4097, 0, 1, 4095]
                .iter()
                .map(|&n| std::fs::read(fx.payload(n)).unwrap())
                .collect();
            let ids = [
                HOST_ID.to_string(),
                hip("gfx906"),
                hip("gfx908"),
                hip("gfx1100"),
            ];
            let entries: Vec<(&str, &[u8])> = ids
                .iter()
                .map(String::as_str)
                .zip(payloads.iter().map(Vec::as_slice))
                .collect();
            let expected = spec_bundle(&entries, align.parse().unwrap());
            c.step(bundle)
                .expect_llvm(Check::File("fat.bc".into(), expected))
                .step(list_args("bc", "fat.bc"))
                .step(unbundle_args("bc", &ts, "fat.bc"))
        })
        .collect();
    let mut text = bundle_args("s", &ts[..2], &["h.s", "d.s"], "fat.s");
    text.push("-bundle-align=8".into());
    cases.push(
        Case::new("align-8-text-ignored")
            .input("h.s", fx.text("s", Role::Host, true))
            .input("d.s", fx.text("s", Role::Dev1, false))
            .step(text)
            .step(list_args("s", "fat.s")),
    );
    // Spec A.2.1's worked example `b1.bc`, pinned independently of the tools.
    let mut b1 = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
    b1.extend(3u64.to_le_bytes());
    for (off, size, id) in [
        (195u64, 8u64, "host-x86_64-unknown-linux-gnu-"),
        (203, 4, "openmp-amdgcn-amd-amdhsa--gfx906"),
        (207, 9, "hip-amdgcn-amd-amdhsa--gfx908"),
    ] {
        for v in [off, size, id.len() as u64] {
            b1.extend(v.to_le_bytes());
        }
        b1.extend(id.as_bytes());
    }
    b1.extend(b"HOSTDATADEV1DEVICE2!!");
    let b1_targets = [HOST.to_string(), openmp("gfx906"), hip("gfx908")];
    cases.push(
        Case::new("spec-a21-example")
            .file("h", "HOSTDATA")
            .file("d1", "DEV1")
            .file("d2", "DEVICE2!!")
            .step(bundle_args("bc", &b1_targets, &["h", "d1", "d2"], "fat.bc"))
            .expect_llvm(Check::File("fat.bc".into(), b1))
            .step(list_args("bc", "fat.bc"))
            .expect_llvm(Check::Stdout(
                b"hip-amdgcn-amd-amdhsa--gfx908\nopenmp-amdgcn-amd-amdhsa--gfx906\nhost-x86_64-unknown-linux-gnu-\n".to_vec(),
            )),
    );
    cases
}

/// The host entry first, in the middle, last, and absent (all `hip`/`hipv4` kinds).
fn host_position() -> Vec<Case> {
    let fx = fixtures();
    let inputs = |c: Case| {
        c.input("a.bin", fx.payload(4095))
            .input("b.bin", fx.payload(1))
            .input("c.bin", fx.payload(4097))
    };
    let layouts: [(&str, [String; 3]); 6] = [
        ("host-first", [HOST.into(), hip("gfx906"), hip("gfx908")]),
        (
            "host-middle",
            [hip("gfx906"), HOST.into(), openmp("gfx908")],
        ),
        ("host-last", [hipv4("gfx906"), hip("gfx908"), HOST.into()]),
        (
            "no-host-hip",
            [hip("gfx906"), hip("gfx908"), hip("gfx1100")],
        ),
        (
            "no-host-hipv4",
            [hipv4("gfx906"), hipv4("gfx908"), hipv4("gfx1100")],
        ),
        (
            "no-host-mixed",
            [hipv4("gfx906"), hip("gfx908"), hipv4("gfx1100")],
        ),
    ];
    layouts
        .into_iter()
        .map(|(name, ts)| {
            let mut c = round_trip(
                inputs(Case::new(name)),
                "bc",
                &ts,
                &["a.bin", "b.bin", "c.bin"],
            );
            if ts.iter().any(|t| t == HOST) {
                c = c.step(unbundle_args("bc", &[HOST], "fat.bc"));
            }
            c
        })
        .collect()
}

/// 29 device processors known to both LLVM 19 and 22 (gfx940/941 are gone from 22).
const ARCHS_29: [&str; 29] = [
    "gfx600", "gfx601", "gfx602", "gfx700", "gfx701", "gfx702", "gfx703", "gfx704", "gfx705",
    "gfx801", "gfx802", "gfx803", "gfx805", "gfx810", "gfx900", "gfx902", "gfx904", "gfx906",
    "gfx908", "gfx909", "gfx90a", "gfx90c", "gfx942", "gfx1010", "gfx1011", "gfx1012", "gfx1013",
    "gfx1030", "gfx1100",
];

/// One target (host only, device only) and 30 targets (the `-list` order is a hash order).
fn target_count() -> Vec<Case> {
    let fx = fixtures();
    let mut ts = vec![HOST.to_string()];
    for (i, arch) in ARCHS_29.iter().enumerate() {
        ts.push(match i % 3 {
            0 => hip(arch),
            1 => hipv4(arch),
            _ => openmp(arch),
        });
    }
    let names: Vec<String> = (0..ts.len()).map(|i| format!("p{i}")).collect();
    let mut many = Case::new("30-targets");
    for (i, n) in names.iter().enumerate() {
        many = many.file(n, format!("payload {i} for {}\n", ts[i]));
    }
    let inputs: Vec<&str> = names.iter().map(String::as_str).collect();
    let subset = [ts[29].clone(), ts[0].clone(), ts[15].clone()];
    vec![
        round_trip(
            Case::new("1-target-host").input("h.bin", fx.payload(4097)),
            "bc",
            &[HOST],
            &["h.bin"],
        ),
        round_trip(
            Case::new("1-target-hip").input("d.bin", fx.payload(4096)),
            "bc",
            &[hip("gfx906")],
            &["d.bin"],
        ),
        round_trip(
            Case::new("1-target-text").input("h.ll", fx.text("ll", Role::Host, true)),
            "ll",
            &[HOST],
            &["h.ll"],
        ),
        round_trip(many.clone(), "bc", &ts, &inputs).step(unbundle_args("bc", &subset, "fat.bc")),
        round_trip(many.rename("30-targets-text"), "hipi", &ts, &inputs),
    ]
}

/// `-list` of bundles written by LLVM and of files that are not bundles.
fn list() -> Vec<Case> {
    let fx = fixtures();
    let mut ts = vec![HOST.to_string()];
    ts.extend(CODE_OBJECT_ARCHS.iter().map(|a| hip(a)));
    let mut inputs = vec!["host.bin".to_string()];
    inputs.extend(CODE_OBJECT_ARCHS.iter().map(|a| co(a)));
    let input_refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
    let mut made = Case::new("llvm22-made-bundle").input("host.bin", fx.payload(1));
    for arch in CODE_OBJECT_ARCHS {
        made = made.input(&co(arch), fx.code_object(arch));
    }
    vec![
        made.setup(bundle_args("bc", &ts, &input_refs, "fat.bc"))
            .step(list_args("bc", "fat.bc"))
            .step(list_args("o", "fat.bc"))
            .step(list_args("gch", "fat.bc")),
        Case::new("llvm22-made-text-bundle")
            .input("h.s", fx.text("s", Role::Host, false))
            .input("d.s", fx.text("s", Role::Dev1, true))
            .setup(bundle_args(
                "s",
                &[hip("gfx906"), HOST.to_string()],
                &["h.s", "d.s"],
                "fat.s",
            ))
            .step(list_args("s", "fat.s"))
            .expect_llvm(Check::Stdout(
                format!("{}\n{HOST}-\n", hip("gfx906")).into_bytes(),
            )),
        Case::new("not-a-bundle-binary")
            .input("x.bin", fx.payload(4097))
            .step(list_args("bc", "x.bin"))
            .expect_llvm(Check::Stdout(Vec::new())),
        Case::new("empty-file")
            .input("x.bin", fx.payload(0))
            .step(list_args("bc", "x.bin")),
        // The magic alone is a truncated header: ours reports it (bundler_malformed::
        // truncated_after_magic) where LLVM lists nothing.
        Case::new("not-a-bundle-text")
            .input("x.ii", fx.text("ii", Role::Host, true))
            .step(list_args("ii", "x.ii")),
        Case::new("code-object-as-bc")
            .input("x.co", fx.code_object("gfx906"))
            .step(list_args("bc", "x.co")),
    ]
}

/// `-output=-` (stdout) and `-input=-` (stdin).
fn stdio() -> Vec<Case> {
    let fx = fixtures();
    let ts = [HOST.to_string(), hip("gfx906"), hip("gfx90a:xnack+")];
    let base = || {
        Case::new("")
            .input("host.bin", fx.payload(4095))
            .input(&co("gfx906"), fx.code_object("gfx906"))
            .input(&co("gfx90a:xnack+"), fx.code_object("gfx90a:xnack+"))
    };
    let inputs = ["host.bin", &co("gfx906"), &co("gfx90a:xnack+")];
    let bundle = bundle_args("bc", &ts, &inputs, "fat.bc");
    let one = targets(&[hip("gfx90a:xnack+")]);
    let text = |c: Case| {
        c.input("h.ii", fx.text("ii", Role::Host, true))
            .input("d.ii", fx.text("ii", Role::Dev1, false))
    };
    let tts = [HOST.to_string(), hip("gfx906")];
    vec![
        base()
            .rename("unbundle-to-stdout")
            .setup(bundle.clone())
            .step(["-type=bc", &one, "-input=fat.bc", "-unbundle", "-output=-"])
            .expect_llvm(Check::Stdout(std::fs::read(fx.code_object("gfx90a:xnack+")).unwrap())),
        base()
            .rename("unbundle-stdout-and-file")
            .setup(bundle.clone())
            .step(["-type=bc", &targets(&ts[..2]), "-input=fat.bc", "-unbundle", "-output=u0", "-output=-"]),
        text(Case::new("unbundle-text-to-stdout"))
            .setup(bundle_args("ii", &tts, &["h.ii", "d.ii"], "fat.ii"))
            .step(["-type=ii", &targets(&tts[1..]), "-input=fat.ii", "-unbundle", "-output=-"]),
        base().rename("bundle-to-stdout").step(bundle_args("bc", &ts, &inputs, "-")),
        Case::new("list-from-empty-stdin")
            .step(["-type=bc", "-list", "-input=-"])
            .stdin(Vec::new()),
        base()
            .rename("list-from-stdin-bundle")
            .step(["-type=bc", "-list", "-input=-"])
            .stdin(stdin_bundle()),
        base()
            .rename("unbundle-from-stdin")
            .step(["-type=bc", &one, "-input=-", "-unbundle", "-output=u0"])
            .stdin(stdin_bundle()),
        base()
            .rename("bundle-device-from-stdin")
            .step(bundle_args("bc", &ts, &["host.bin", "-", &co("gfx90a:xnack+")], "fat.bc"))
            .stdin_file(fx.code_object("gfx906"))
            .step(unbundle_args("bc", &ts, "fat.bc")),
        text(Case::new("unbundle-text-from-stdin"))
            .step(["-type=ii", &targets(&tts), "-input=-", "-unbundle", "-output=u0", "-output=u1"])
            .stdin(
                "\n// __CLANG_OFFLOAD_BUNDLE____START__ hip-amdgcn-amd-amdhsa--gfx906\nint dev;\n// __CLANG_OFFLOAD_BUNDLE____END__ hip-amdgcn-amd-amdhsa--gfx906\n\n// __CLANG_OFFLOAD_BUNDLE____START__ host-x86_64-unknown-linux-gnu-\nint host;\n\n// __CLANG_OFFLOAD_BUNDLE____END__ host-x86_64-unknown-linux-gnu-\n",
            ),
    ]
}

/// A binary bundle laid out as spec A.2.1 describes: descriptors in the given order, each payload
/// at the next multiple of `align` (the first one too), zero padding, nothing after the last.
fn spec_bundle(entries: &[(&str, &[u8])], align: u64) -> Vec<u8> {
    let header: u64 = 32
        + entries
            .iter()
            .map(|(id, _)| 24 + id.len() as u64)
            .sum::<u64>();
    let mut cursor = header;
    let mut out = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
    out.extend((entries.len() as u64).to_le_bytes());
    let mut offsets = Vec::new();
    for (id, payload) in entries {
        let off = cursor.div_ceil(align) * align;
        offsets.push(off);
        cursor = off + payload.len() as u64;
        for v in [off, payload.len() as u64, id.len() as u64] {
            out.extend(v.to_le_bytes());
        }
        out.extend(id.as_bytes());
    }
    for ((_, payload), off) in entries.iter().zip(offsets) {
        out.resize(off as usize, 0);
        out.extend(*payload);
    }
    out
}

/// A small bundle for stdin: host `HOST!`, gfx90a:xnack+ entry `DEVICE`.
fn stdin_bundle() -> Vec<u8> {
    spec_bundle(
        &[(HOST_ID, b"HOST!"), (&hip("gfx90a:xnack+"), b"DEVICE")],
        1,
    )
}

/// Requested targets missing from the bundle: 1, 2, 3 and 4 missing (message list formats
/// `A`, `A and B`, `A, B, and C`), with and without `-allow-missing-bundles`.
fn missing_bundles() -> Vec<Case> {
    let fx = fixtures();
    let ts = [HOST.to_string(), hip("gfx906"), hip("gfx908")];
    let base = |name: &str| {
        Case::new(name)
            .input("h.bin", fx.payload(4097))
            .input("d1.bin", fx.payload(4095))
            .input("d2.bin", fx.payload(1))
            .setup(bundle_args(
                "bc",
                &ts,
                &["h.bin", "d1.bin", "d2.bin"],
                "fat.bc",
            ))
    };
    let requests: [(&str, Vec<String>, &str); 4] = [
        (
            "1-missing",
            vec![HOST.into(), hip("gfx1100")],
            "hip-amdgcn-amd-amdhsa--gfx1100",
        ),
        (
            "2-missing",
            vec![hip("gfx906"), hip("gfx1100"), hip("gfx1030")],
            "hip-amdgcn-amd-amdhsa--gfx1030 and hip-amdgcn-amd-amdhsa--gfx1100",
        ),
        (
            "3-missing",
            vec![HOST.into(), hip("gfx90c"), hip("gfx1100"), hip("gfx1030")],
            "hip-amdgcn-amd-amdhsa--gfx1030, hip-amdgcn-amd-amdhsa--gfx1100, and hip-amdgcn-amd-amdhsa--gfx90c",
        ),
        (
            "4-missing-none-found",
            vec![
                openmp("gfx906"),
                hip("gfx90c"),
                hip("gfx1100"),
                hip("gfx1030"),
            ],
            "hip-amdgcn-amd-amdhsa--gfx1030, hip-amdgcn-amd-amdhsa--gfx1100, hip-amdgcn-amd-amdhsa--gfx90c, and openmp-amdgcn-amd-amdhsa--gfx906",
        ),
    ];
    let mut cases = Vec::new();
    for (name, req, list) in requests {
        let mut c = base(name)
            .step(unbundle_args("bc", &req, "fat.bc"))
            .expect_llvm(stderr_err(&format!("Can't find bundles for {list}")));
        c = if name == "4-missing-none-found" {
            c.expect_llvm(Check::NoFile("u0".into()))
        } else {
            // LLVM writes the outputs it found before reporting the error; ours writes none.
            c.expect_llvm(Check::HasFile("u0".into()))
        };
        cases.push(c);
        let mut allow = unbundle_args("bc", &req, "fat.bc");
        allow.push("-allow-missing-bundles".into());
        cases.push(base(&format!("{name}-allowed")).step(allow));
    }
    let plain = |name: &str| Case::new(name).input("x.bin", fx.payload(4096));
    let mut allow = unbundle_args("bc", &ts[..2], "x.bin");
    allow.push("-allow-missing-bundles".into());
    cases.push(
        plain("not-a-bundle-allowed")
            .step(allow)
            .expect_llvm(Check::File(
                "u0".into(),
                std::fs::read(fx.payload(4096)).unwrap(),
            ))
            .expect_llvm(Check::File("u1".into(), Vec::new())),
    );
    cases.push(
        plain("not-a-bundle")
            .step(unbundle_args("bc", &ts[..2], "x.bin"))
            .expect_llvm(stderr_err(&format!(
                "Can't find bundles for {} and {HOST}-",
                hip("gfx906")
            ))),
    );
    // One entry satisfies one target only: the first in worklist (hash) order takes it.
    let two = [hip("gfx906:xnack+"), hip("gfx906:xnack-")];
    let gfx906_payload = std::fs::read(fx.payload(4095)).unwrap();
    cases.push(
        base("one-entry-two-targets")
            .step(unbundle_args("bc", &two, "fat.bc"))
            .expect_llvm(stderr_err(&format!("Can't find bundles for {}", two[1])))
            .expect_llvm(Check::File("u0".into(), gfx906_payload.clone())),
    );
    let mut two_allowed = unbundle_args("bc", &two, "fat.bc");
    two_allowed.push("-allow-missing-bundles".into());
    cases.push(
        base("one-entry-two-targets-allowed")
            .step(two_allowed)
            .expect_llvm(Check::File("u0".into(), gfx906_payload))
            .expect_llvm(Check::File("u1".into(), Vec::new())),
    );
    cases
}

/// Kind compatibility (hip/hipv4, openmp with `-hip-openmp-compatible`) and the xnack/sramecc
/// matrix of spec A.7: each row bundles one entry and requests another ID.
fn compatibility() -> Vec<Case> {
    let fx = fixtures();
    let gfx906 = |f: &str| format!("hip-amdgcn-amd-amdhsa--gfx906{f}");
    // `kind processor` -> `kind-amdgcn-amd-amdhsa--processor`.
    let amd = |spec: &str| {
        let (kind, arch) = spec.split_once(' ').expect("kind and processor");
        format!("{kind}-amdgcn-amd-amdhsa--{arch}")
    };
    // Name, bundle entry, requested target, outcome: `+` extracted, `-` not found; a trailing
    // `c` runs with -hip-openmp-compatible.
    let rows = [
        ("hip-to-hipv4", "hip gfx906", "hipv4 gfx906", "+"),
        ("hipv4-to-hip", "hipv4 gfx906", "hip gfx906", "+"),
        ("hip-to-openmp", "hip gfx906", "openmp gfx906", "-"),
        (
            "hip-to-openmp-compatible",
            "hip gfx906",
            "openmp gfx906",
            "+c",
        ),
        (
            "hipv4-to-openmp-compatible",
            "hipv4 gfx906",
            "openmp gfx906",
            "+c",
        ),
        ("openmp-to-hip", "openmp gfx906", "hip gfx906", "-"),
        (
            "openmp-to-hip-compatible",
            "openmp gfx906",
            "hip gfx906",
            "+c",
        ),
        ("any-to-xnack+", "hip gfx906", "hip gfx906:xnack+", "+"),
        ("xnack+-to-any", "hip gfx906:xnack+", "hip gfx906", "-"),
        (
            "xnack+-to-xnack-",
            "hip gfx906:xnack+",
            "hip gfx906:xnack-",
            "-",
        ),
        (
            "xnack+-to-both",
            "hip gfx906:xnack+",
            "hip gfx906:sramecc+:xnack+",
            "+",
        ),
        (
            "both-to-xnack+",
            "hip gfx906:sramecc-:xnack+",
            "hip gfx906:xnack+",
            "-",
        ),
        (
            "both-reordered",
            "hip gfx906:sramecc-:xnack+",
            "hip gfx906:xnack+:sramecc-",
            "+",
        ),
        (
            "gfx9-generic-to-gfx906",
            "hip gfx9-generic",
            "hip gfx906",
            "-",
        ),
        (
            "gfx90a-xnack+-to-both",
            "hip gfx90a:xnack+",
            "hip gfx90a:sramecc-:xnack+",
            "+",
        ),
    ];
    let mut cases = Vec::new();
    for (name, entry, request, outcome) in rows {
        let mut unbundle = unbundle_args("bc", &[amd(request)], "fat.bc");
        if outcome.ends_with('c') {
            unbundle.push("-hip-openmp-compatible".into());
        }
        let status = if outcome.starts_with('+') { 0 } else { 1 };
        let c = Case::new(name)
            .input("h.bin", fx.payload(1))
            .input("d.bin", fx.code_object("gfx90a:xnack+"))
            .step(bundle_args(
                "bc",
                &[HOST.to_string(), amd(entry)],
                &["h.bin", "d.bin"],
                "fat.bc",
            ))
            .step(unbundle)
            .expect_llvm(Check::Status(Status::Exit(status)));
        cases.push(c);
    }
    // An entry whose feature has no sign never matches. LLVM accepts such an entry when
    // bundling only by undefined behaviour (spec A.7: the conflict check reads a stale value;
    // 19.1.7 and 22.1.8 now crash on it), so the bundle is written by our library, with the
    // bytes LLVM wrote when it did not crash.
    let device = std::fs::read(fx.payload(4095)).expect("payload");
    let host = std::fs::read(fx.payload(1)).expect("payload");
    let fat = offload_build::bundle::binary::write_bundle(
        &[
            (HOST_ID.as_bytes(), &host[..]),
            (gfx906(":xnack").as_bytes(), &device[..]),
        ],
        1,
    )
    .expect("bundle");
    cases.push(
        Case::new("unsigned-xnack-to-any")
            .file("fat.bc", fat)
            .step(unbundle_args("bc", &[gfx906("")], "fat.bc"))
            .expect_llvm(stderr_err(&format!(
                "Can't find bundles for {}",
                gfx906("")
            ))),
    );
    // The amdhsa environment: 22 drops it when standardizing, 19 compares it.
    cases.push(
        Case::new("gnu-env-request")
            .input("h.bin", fx.payload(1))
            .input("d.bin", fx.payload(4095))
            .step(bundle_args(
                "bc",
                &[HOST.to_string(), hip("gfx906")],
                &["h.bin", "d.bin"],
                "fat.bc",
            ))
            .step(unbundle_args(
                "bc",
                &["hip-amdgcn-amd-amdhsa-gnu-gfx906"],
                "fat.bc",
            ))
            .expect(Tool::Llvm22, Check::Status(Status::Exit(0)))
            .expect(
                Tool::Llvm19,
                stderr_err("Can't find bundles for hip-amdgcn-amd-amdhsa-gnu-gfx906"),
            )
            .reference(Reference::Llvm22(
                "5/6-component IDs follow LLVM 22: the environment of an amdhsa triple is dropped",
            )),
    );
    cases
}

/// The HIP driver's invocation: `-type=o -bundle-align=4096`, host input `/dev/null` (not an
/// object, so the binary format results), hipv4 code objects.
fn driver_invocation() -> Vec<Case> {
    let fx = fixtures();
    let driver = |name: &str, host: &str| {
        let mut c = Case::new(name);
        let mut args = vec![
            "-type=o".to_string(),
            "-bundle-align=4096".into(),
            targets(
                &std::iter::once(host.to_string())
                    .chain(CODE_OBJECT_ARCHS.iter().map(|a| hipv4(a)))
                    .collect::<Vec<_>>(),
            ),
            "-input=/dev/null".into(),
        ];
        for arch in CODE_OBJECT_ARCHS {
            c = c.input(&co(arch), fx.code_object(arch));
            args.push(format!("-input={}", co(arch)));
        }
        args.push("-output=k.hipfb".into());
        c.step(args)
    };
    let devices: Vec<String> = CODE_OBJECT_ARCHS.iter().map(|a| hipv4(a)).collect();
    // Binary format: the empty host entry and the first device payload both at 4096.
    let objects: Vec<Vec<u8>> = CODE_OBJECT_ARCHS
        .iter()
        .map(|a| std::fs::read(fx.code_object(a)).unwrap())
        .collect();
    let hipfb_bytes = |host_id: &str| {
        let mut entries: Vec<(&str, &[u8])> = vec![(host_id, b"")];
        entries.extend(
            devices
                .iter()
                .map(String::as_str)
                .zip(objects.iter().map(Vec::as_slice)),
        );
        spec_bundle(&entries, 4096)
    };
    let hipfb = |host_id: &str| Check::File("k.hipfb".into(), hipfb_bytes(host_id));
    vec![
        driver("llvm22-driver", HOST)
            .expect_llvm(hipfb(HOST_ID))
            .step(list_args("o", "k.hipfb"))
            .step(unbundle_args("o", &devices, "k.hipfb"))
            .step(unbundle_args("o", &[HOST], "k.hipfb"))
            .expect_llvm(Check::File("u0".into(), Vec::new())),
        // LLVM 19's driver names the host `host-x86_64-unknown-linux` (a 3-field triple).
        driver("llvm19-driver", "host-x86_64-unknown-linux")
            .expect(Tool::Llvm19, hipfb("host-x86_64-unknown-linux--"))
            .expect(Tool::Llvm22, stderr_err(FORMAT_ERR))
            .reference(Reference::Llvm19(
                "ours accepts the 3-field host triple that LLVM 19's HIP driver writes \
                 (stored as `host-x86_64-unknown-linux--`); 22 rejects it",
            ))
            .step(list_args("o", "k.hipfb"))
            .step(unbundle_args("o", &devices[..2], "k.hipfb")),
        // A fat binary as LLVM 19's driver writes it (pinned above), read by both versions.
        Case::new("llvm19-fatbin-read")
            .file("k.hipfb", hipfb_bytes("host-x86_64-unknown-linux--"))
            .step(list_args("o", "k.hipfb"))
            .step(unbundle_args("o", &devices, "k.hipfb")),
    ]
}

/// ID standardization (spec A.1): where 19 and 22 differ, ours follows 22 for 5/6-component IDs
/// but keeps what 19 keeps for short triples and for processor names 22 would drop.
fn id_forms() -> Vec<Case> {
    let fx = fixtures();
    // Bundles `ids`; the callers add expectations on that step, then list the bundle.
    let bundle = |name: &str, ids: &[&str]| {
        let inputs: Vec<String> = (0..ids.len()).map(|i| format!("p{i}")).collect();
        let mut c = Case::new(name);
        for (i, n) in inputs.iter().enumerate() {
            c = c.input(n, fx.payload([1, 4095, 4097][i % 3]));
        }
        let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
        c.step(bundle_args("bc", ids, &refs, "fat.bc"))
    };
    let list = list_args("bc", "fat.bc");
    vec![
        bundle(
            "features-kept-verbatim",
            &[HOST, "hip-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc-"],
        )
        .step(&list),
        bundle("spirv", &[HOST, "hip-spirv64-amd-amdhsa--amdgcnspirv"]).step(&list),
        bundle(
            "3-field-host-triple",
            &["host-x86_64-unknown-linux", "hip-amdgcn-amd-amdhsa--gfx906"],
        )
        .expect(Tool::Llvm19, Check::Status(Status::Exit(0)))
        .expect(Tool::Llvm22, stderr_err(FORMAT_ERR))
        .reference(Reference::Llvm19(
            "ours accepts `host-x86_64-unknown-linux` and stores \
                 `host-x86_64-unknown-linux--` like 19; 22 rejects 4-component IDs",
        ))
        .step(&list)
        .expect(
            Tool::Llvm19,
            listed(&[&hip("gfx906"), "host-x86_64-unknown-linux--"]),
        )
        .step(unbundle_args(
            "bc",
            &["host-x86_64-unknown-linux"],
            "fat.bc",
        )),
        bundle(
            "processor-without-empty-env",
            &[HOST, "hip-amdgcn-amd-amdhsa-gfx906"],
        )
        .reference(Reference::Llvm19(
            "ours keeps gfx906 of `hip-amdgcn-amd-amdhsa-gfx906` (stored \
                 `hip-amdgcn-amd-amdhsa--gfx906`) like 19; 22 takes it for the environment \
                 and drops it",
        ))
        .step(&list)
        .expect(Tool::Llvm19, listed(&[&hip("gfx906"), HOST_ID]))
        .expect(Tool::Llvm22, listed(&[HOST_ID, "hip-amdgcn-amd-amdhsa--"]))
        .step(unbundle_args("bc", &[hip("gfx906")], "fat.bc"))
        .expect(Tool::Llvm19, Check::Status(Status::Exit(0)))
        .expect(Tool::Llvm22, Check::Status(Status::Exit(1))),
        bundle("gfx940-kept", &[HOST, "hip-amdgcn-amd-amdhsa--gfx940"])
            .reference(Reference::Llvm19(
                "ours keeps gfx940 (stored `hip-amdgcn-amd-amdhsa--gfx940`) like 19; \
                 22 no longer knows it and drops it",
            ))
            .step(&list)
            .expect(Tool::Llvm19, listed(&[&hip("gfx940"), HOST_ID]))
            .expect(Tool::Llvm22, listed(&[HOST_ID, "hip-amdgcn-amd-amdhsa--"])),
        bundle(
            "unknown-env-6-components",
            &[HOST, "hip-amdgcn-amd-amdhsa-unknown-gfx906"],
        )
        .reference(Reference::Llvm22(
            "6-component IDs follow 22: stored `hip-amdgcn-amd-amdhsa--gfx906`",
        ))
        .step(&list)
        .expect(
            Tool::Llvm19,
            listed(&["hip-amdgcn-amd-amdhsa-unknown-gfx906", HOST_ID]),
        )
        .expect(Tool::Llvm22, listed(&[&hip("gfx906"), HOST_ID])),
        bundle(
            "host-empty-vendor",
            &["host-x86_64--linux-gnu", hip("gfx906").as_str()],
        )
        .reference(Reference::Llvm22(
            "5-component IDs follow 22: the triple is normalized",
        ))
        .step(&list)
        .expect(
            Tool::Llvm19,
            listed(&[&hip("gfx906"), "host-x86_64--linux-gnu-"]),
        )
        .expect(Tool::Llvm22, listed(&[&hip("gfx906"), HOST_ID])),
        bundle(
            "host-trailing-dash",
            &["host-x86_64-unknown-linux-", hip("gfx906").as_str()],
        )
        .reference(Reference::Llvm22(
            "5-component IDs follow 22: `host-x86_64-unknown-linux-unknown-`",
        ))
        .step(&list)
        .expect(
            Tool::Llvm19,
            listed(&[
                &hip("gfx906"),
                "host-x86_64-unknown-linux--host-x86_64-unknown-linux-",
            ]),
        )
        .expect(
            Tool::Llvm22,
            listed(&[&hip("gfx906"), "host-x86_64-unknown-linux-unknown-"]),
        ),
        Case::new("2-field-device-triple-entry")
            .file(
                "fat.bc",
                spec_bundle(
                    &[
                        (HOST_ID, b"HOST!"),
                        ("hip-spirv-amdhsa---gfx1100", b"DEVICE"),
                    ],
                    1,
                ),
            )
            .reference(Reference::Llvm19(
                "an entry `hip-spirv-amdhsa---gfx1100` (what 19 stores for \
                 `hip-spirv-amdhsa-gfx1100`) is found for that very target by 19 and ours; \
                 22 standardizes the target into `hip-spirv-unknown-amdhsa-unknown-gfx1100`, \
                 which no longer matches its entry",
            ))
            .step(unbundle_args(
                "bc",
                &[HOST, "hip-spirv-amdhsa---gfx1100"],
                "fat.bc",
            ))
            .expect(Tool::Llvm19, Check::Status(Status::Exit(0)))
            .expect(
                Tool::Llvm22,
                stderr_err("Can't find bundles for hip-spirv-unknown-amdhsa-unknown-gfx1100"),
            ),
        bundle("nvptx-sm_70", &[HOST, "openmp-nvptx64-nvidia-cuda--sm_70"])
            .reference(Reference::Llvm22(
                "5/6-component IDs follow 22: `openmp-nvptx64-nvidia-cuda-unknown-sm_70`",
            ))
            .step(&list)
            .expect(
                Tool::Llvm19,
                listed(&["openmp-nvptx64-nvidia-cuda--sm_70", HOST_ID]),
            )
            .expect(
                Tool::Llvm22,
                listed(&[HOST_ID, "openmp-nvptx64-nvidia-cuda-unknown-sm_70"]),
            ),
    ]
}

/// `-opt=v`, `--opt=v`, `-opt v`, repeated options, deprecated `-inputs`/`-outputs`, booleans.
fn option_syntax() -> Vec<Case> {
    let fx = fixtures();
    let ts = [HOST.to_string(), hip("gfx906")];
    let base = |name: &str| {
        Case::new(name)
            .input("h.bin", fx.payload(4095))
            .input("d.bin", fx.payload(4097))
    };
    let t = targets(&ts);
    let d = &hip("gfx906");
    let warn_in =
        b"clang-offload-bundler: warning: -inputs is deprecated, use -input instead\n".to_vec();
    let warn_out = "clang-offload-bundler: warning: -outputs is deprecated, use -output instead\n";
    let bundled =
        |name: &str| base(name).setup(bundle_args("bc", &ts, &["h.bin", "d.bin"], "fat.bc"));
    vec![
        base("single-dash-equals").step([
            "-type=bc",
            &t,
            "-input=h.bin",
            "-input=d.bin",
            "-output=fat.bc",
        ]),
        base("double-dash-equals").step([
            "--type=bc",
            &format!("-{t}"),
            "--input=h.bin",
            "--input=d.bin",
            "--output=fat.bc",
        ]),
        base("single-dash-space").step([
            "-type",
            "bc",
            "-targets",
            &t[9..],
            "-input",
            "h.bin",
            "-input",
            "d.bin",
            "-output",
            "fat.bc",
        ]),
        base("double-dash-space").step([
            "--type",
            "bc",
            "--targets",
            &t[9..],
            "--input",
            "h.bin",
            "--input",
            "d.bin",
            "--output",
            "fat.bc",
        ]),
        base("mixed-forms").step([
            "-output",
            "fat.bc",
            "--input=h.bin",
            "-type=bc",
            "-input",
            "d.bin",
            &t,
        ]),
        base("repeated-targets").step([
            "-type=bc",
            &format!("-targets={HOST}"),
            &format!("-targets={d}"),
            "-input=h.bin",
            "-input=d.bin",
            "-output=fat.bc",
        ]),
        base("repeated-type-last-wins")
            .step([
                "-type=zz",
                "-type=bc",
                &t,
                "-input=h.bin",
                "-input=d.bin",
                "-output=fat.bc",
            ])
            .step(["-type=bc", "-type=zz", "-list", "-input=fat.bc"])
            .expect_llvm(stderr_err("'zz': invalid file type specified")),
        base("deprecated-inputs")
            .step(["-type=bc", &t, "-inputs=h.bin,d.bin", "-output=fat.bc"])
            .expect_llvm(Check::Stderr(warn_in.clone())),
        base("deprecated-inputs-and-outputs")
            .step(["-type=bc", &t, "-inputs=h.bin,d.bin", "-outputs=fat.bc"])
            .expect_llvm(Check::Stderr([warn_in.clone(), warn_out.into()].concat())),
        bundled("deprecated-outputs-unbundle")
            .step([
                "-type=bc",
                &t,
                "-input=fat.bc",
                "-unbundle",
                "-outputs=u0,u1",
            ])
            .expect_llvm(Check::Stderr(warn_out.into())),
        bundled("deprecated-inputs-unbundle").step([
            "-type=bc",
            &t,
            "-inputs=fat.bc",
            "-unbundle",
            "-output=u0",
            "-output=u1",
        ]),
        base("inputs-with-input")
            .step([
                "-type=bc",
                &t,
                "-inputs=h.bin",
                "-input=d.bin",
                "-output=fat.bc",
            ])
            .expect_llvm(stderr_err(
                "-inputs and -input cannot be used together, use only -input instead",
            )),
        base("outputs-with-output")
            .step([
                "-type=bc",
                &t,
                "-input=h.bin",
                "-input=d.bin",
                "-outputs=fat.bc",
                "-output=x",
            ])
            .expect_llvm(stderr_err(
                "-outputs and -output cannot be used together, use only -output instead",
            )),
        bundled("boolean-true").step([
            "-type=bc",
            &t,
            "-input=fat.bc",
            "-unbundle=true",
            "-output=u0",
            "-output=u1",
        ]),
        base("boolean-false").step([
            "-type=bc",
            &t,
            "-input=h.bin",
            "-input=d.bin",
            "-unbundle=false",
            "-output=fat.bc",
        ]),
        bundled("allow-missing-true").step([
            "-type=bc",
            &targets(&[hip("gfx1100")]),
            "-input=fat.bc",
            "-unbundle",
            "-allow-missing-bundles=true",
            "-output=u0",
        ]),
        bundled("list-double-dash").step(["--type", "bc", "--list", "--input", "fat.bc"]),
        base("bundle-align-space").step([
            "-type=bc",
            &t,
            "-input=h.bin",
            "-input=d.bin",
            "-output=fat.bc",
            "-bundle-align",
            "8",
        ]),
        base("bundle-align-repeated").step([
            "-type=bc",
            &t,
            "-input=h.bin",
            "-input=d.bin",
            "-output=fat.bc",
            "-bundle-align=8",
            "--bundle-align=16",
        ]),
    ]
}

/// The validation errors of spec A.10, each alone and in pairs that show which one wins.
///
/// Table rows: case name, arguments (split at spaces; `$HD` = host + gfx906 targets, `$HOSTS` =
/// two host targets, `$CONFLICT` = host, gfx906:xnack+, gfx906), the message after
/// `clang-offload-bundler: error: `, or after `clang-offload-bundler: ` where it starts with `!`
/// (errors of LLVM's option parser, printed without `error:`).
fn validation_errors() -> Vec<Case> {
    const MISSING_TYPE: &str = "!for the --type option: must be specified at least once!";
    const SM70: &str = "cuda-nvptx64-nvidia-cuda--sm_70";
    const CUDA: &str =
        "invalid target 'cuda-nvptx64-nvidia-cuda--sm_70', unknown offloading kind 'cuda'";
    const CONFLICT: &str = "Cannot bundle inputs with conflicting targets: \
        'hip-amdgcn-amd-amdhsa--gfx906' and 'hip-amdgcn-amd-amdhsa--gfx906:xnack+'";
    const TARGETS: &str = "for the --targets option: must be specified at least once!";
    const NOPE: &str = "'nope': No such file or directory";
    const TWO_HOSTS: &str = "expecting exactly one host target but got 2";
    const ZZ: &str = "'zz': invalid file type specified";
    const IN2: &str = "-input=h.bin -input=d.bin";
    let unknown = |opt: &str, suggestion: &str| {
        format!(
            "!Unknown command line argument '{opt}'.  Try: 'clang-offload-bundler --help'{}",
            if suggestion.is_empty() {
                String::new()
            } else {
                format!("\nclang-offload-bundler: Did you mean '{suggestion}'?")
            }
        )
    };
    let rows: Vec<(&str, String, String)> = vec![
        (
            "missing-type",
            format!("$HD {IN2} -output=fat.bc"),
            MISSING_TYPE.to_string(),
        ),
        ("no-arguments", String::new(), MISSING_TYPE.into()),
        ("h-alone", "-h".into(), MISSING_TYPE.into()),
        (
            "missing-type-and-unknown-option",
            "$HD -input=h.bin -foo -output=fat.bc".into(),
            format!(
                "{}\nclang-offload-bundler: {}",
                unknown("-foo", "--###"),
                &MISSING_TYPE[1..]
            ),
        ),
        (
            "list-with-unbundle",
            "-type=bc -list -unbundle -input=h.bin".into(),
            "-unbundle and -list cannot be used together".into(),
        ),
        (
            "list-two-inputs",
            format!("-type=bc -list {IN2}"),
            "only one input file supported for -list".into(),
        ),
        (
            "list-with-output",
            "-type=bc -list -input=h.bin -output=x".into(),
            "-outputs option is invalid for -list".into(),
        ),
        (
            "list-with-targets",
            "-type=bc -list -input=h.bin $HD".into(),
            "-targets option is invalid for -list".into(),
        ),
        (
            "no-output",
            format!("-type=bc $HD {IN2}"),
            "no output file specified!".into(),
        ),
        (
            "no-output-and-no-targets",
            "-type=bc -input=h.bin".into(),
            "no output file specified!".into(),
        ),
        (
            "no-targets",
            "-type=bc -input=h.bin -output=fat.bc".into(),
            TARGETS.into(),
        ),
        (
            "no-targets-unbundle",
            "-type=bc -input=h.bin -output=u0 -unbundle".into(),
            TARGETS.into(),
        ),
        (
            "unbundle-two-inputs",
            format!("-type=bc $HD {IN2} -output=u0 -output=u1 -unbundle"),
            "only one input file supported in unbundling mode".into(),
        ),
        (
            "unbundle-output-count",
            "-type=bc $HD -input=h.bin -output=u0 -unbundle".into(),
            "number of output files and targets should match in unbundling mode".into(),
        ),
        (
            "bundle-two-outputs",
            format!("-type=bc $HD {IN2} -output=a -output=b"),
            "only one output file supported in bundling mode".into(),
        ),
        (
            "bundle-input-count",
            "-type=bc $HD -input=h.bin -output=fat.bc".into(),
            "number of input files and targets should match in bundling mode".into(),
        ),
        (
            "input-count-before-duplicate",
            format!("-type=bc -targets={HOST},{HOST} -input=h.bin -output=fat.bc"),
            "number of input files and targets should match in bundling mode".into(),
        ),
        (
            "duplicate-targets",
            format!(
                "-type=bc $HD,{} {IN2} -input=d.bin -output=fat.bc",
                hip("gfx906")
            ),
            "Duplicate targets are not allowed".into(),
        ),
        (
            "duplicate-before-invalid",
            format!("-type=bc -targets={HOST},{HOST},{SM70} {IN2} -input=d.bin -output=fat.bc"),
            "Duplicate targets are not allowed".into(),
        ),
        (
            "invalid-before-duplicate",
            format!("-type=bc -targets={SM70},{HOST},{HOST} {IN2} -input=d.bin -output=fat.bc"),
            CUDA.into(),
        ),
        (
            "invalid-kind",
            format!("-type=bc -targets={HOST},sycl-spir64-unknown-unknown- {IN2} -output=fat.bc"),
            "invalid target 'sycl-spir64-unknown-unknown-', unknown offloading kind 'sycl'".into(),
        ),
        (
            "invalid-triple",
            format!("-type=bc -targets={HOST},hip-foo-amd-amdhsa--gfx906 {IN2} -output=fat.bc"),
            "invalid target 'hip-foo-amd-amdhsa--gfx906', unknown target triple 'foo-amd-amdhsa-'"
                .into(),
        ),
        (
            "invalid-kind-and-triple",
            format!("-type=bc -targets={HOST},foo-bar-amd-amdhsa--gfx906 {IN2} -output=fat.bc"),
            "invalid target 'foo-bar-amd-amdhsa--gfx906', unknown offloading kind 'foo', \
             unknown target triple 'bar-amd-amdhsa-'"
                .into(),
        ),
        (
            "invalid-kind-unbundle",
            format!("-type=bc -targets={SM70} -input=h.bin -output=u0 -unbundle"),
            CUDA.into(),
        ),
        (
            "invalid-before-conflict",
            format!("-type=bc $CONFLICT,{SM70} {IN2} -input=d.bin -input=d.bin -output=fat.bc"),
            CUDA.into(),
        ),
        (
            "conflicting-targets",
            format!("-type=bc $CONFLICT {IN2} -input=d.bin -output=fat.bc"),
            CONFLICT.into(),
        ),
        (
            "conflict-before-host-count",
            format!(
                "-type=bc -targets={},{},{} {IN2} -input=d.bin -output=fat.bc",
                hip("gfx906:xnack+"),
                hip("gfx906"),
                openmp("gfx908")
            ),
            CONFLICT.into(),
        ),
        (
            "conflicting-targets-unbundle",
            "-type=bc $CONFLICT -input=h.bin -output=u0 -output=u1 -output=u2 -unbundle".into(),
            CONFLICT.into(),
        ),
        (
            "no-host-with-openmp",
            format!(
                "-type=bc -targets={},{} {IN2} -output=fat.bc",
                hip("gfx906"),
                openmp("gfx908")
            ),
            "expecting exactly one host target but got 0".into(),
        ),
        (
            "two-hosts",
            format!("-type=bc $HOSTS {IN2} -output=fat.bc"),
            TWO_HOSTS.into(),
        ),
        (
            "two-hosts-unbundle",
            "-type=bc $HOSTS -input=h.bin -output=u0 -output=u1 -unbundle".into(),
            TWO_HOSTS.into(),
        ),
        (
            "host-count-before-file-type",
            format!("-type=zz $HOSTS {IN2} -output=fat.bc"),
            TWO_HOSTS.into(),
        ),
        // Spec A.10 lists I/O errors last; in fact inputs are checked right after the host
        // count, before the file type; outputs after it.
        (
            "host-count-before-missing-input",
            "-type=bc $HOSTS -input=nope -input=d.bin -output=fat.bc".into(),
            TWO_HOSTS.into(),
        ),
        (
            "missing-input-before-file-type",
            "-type=zz $HD -input=nope -input=d.bin -output=fat.bc".into(),
            NOPE.into(),
        ),
        (
            "missing-input-before-file-type-list",
            "-type=zz -list -input=nope".into(),
            NOPE.into(),
        ),
        (
            "file-type-before-output-dir",
            format!("-type=zz $HD {IN2} -output=nodir/fat.bc"),
            ZZ.into(),
        ),
        (
            "invalid-file-type",
            format!("-type=zz $HD {IN2} -output=fat.bc"),
            ZZ.into(),
        ),
        (
            "invalid-file-type-list",
            "-type=exe -list -input=h.bin".into(),
            "'exe': invalid file type specified".into(),
        ),
        (
            "missing-input",
            "-type=bc $HD -input=h.bin -input=nope -output=fat.bc".into(),
            NOPE.into(),
        ),
        (
            "missing-input-unbundle",
            "-type=bc $HD -input=nope -output=u0 -output=u1 -unbundle".into(),
            NOPE.into(),
        ),
        (
            "missing-input-list",
            "-type=bc -list -input=nope".into(),
            NOPE.into(),
        ),
        (
            "output-dir-missing",
            format!("-type=bc $HD {IN2} -output=nodir/fat.bc"),
            "'nodir/fat.bc': No such file or directory".into(),
        ),
        (
            "unknown-option",
            format!("-type=bc $HD {IN2} -output=fat.bc -foo"),
            unknown("-foo", "--###"),
        ),
        (
            "positional-argument",
            format!("-type=bc $HD {IN2} -output=fat.bc stray"),
            unknown("stray", ""),
        ),
        (
            "bundle-align-negative",
            format!("-type=bc $HD {IN2} -output=fat.bc -bundle-align=-1"),
            "!for the --bundle-align option: '-1' value invalid for uint argument!".into(),
        ),
        (
            "bundle-align-text",
            format!("-type=bc $HD {IN2} -output=fat.bc -bundle-align=abc"),
            "!for the --bundle-align option: 'abc' value invalid for uint argument!".into(),
        ),
    ];

    let fx = fixtures();
    let hd = [HOST.to_string(), hip("gfx906")];
    let base = |name: &str| {
        Case::new(name)
            .input("h.bin", fx.payload(4095))
            .input("d.bin", fx.payload(4097))
    };
    let expand = |args: &str| -> Vec<String> {
        args.replace("$HD", &targets(&hd))
            .replace("$HOSTS", &targets(&[HOST, "host-x86_64-pc-linux-gnu"]))
            .replace(
                "$CONFLICT",
                &targets(&[HOST, &hip("gfx906:xnack+"), &hip("gfx906")]),
            )
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    let mut cases: Vec<Case> = rows
        .into_iter()
        .map(|(name, args, msg)| {
            let stderr = match msg.strip_prefix('!') {
                Some(cl) => Check::Stderr(format!("clang-offload-bundler: {cl}\n").into_bytes()),
                None => stderr_err(&msg),
            };
            base(name).step(expand(&args)).expect_llvm(stderr)
        })
        .collect();

    cases.extend([
        base("one-component-target")
            .step(["-type=bc", "-targets=foo", "-input=h.bin", "-output=fat.bc"])
            .expect(Tool::Llvm22, stderr_err(FORMAT_ERR))
            .expect(
                Tool::Llvm19,
                stderr_err(
                    "invalid target 'foo', unknown offloading kind 'foo', unknown target triple '---'",
                ),
            )
            .reference(Reference::Llvm22(
                "IDs that are not 3-field host triples follow 22's format check",
            )),
        base("unknown-option-suggestion")
            .step(expand(&format!("-type=bc $HD {IN2} -output=fat.bc -inptu=3")))
            .expect(
                Tool::Llvm22,
                Check::Stderr(
                    format!("clang-offload-bundler: {}\n", &unknown("-inptu=3", "--inputs=3")[1..])
                        .into_bytes(),
                ),
            )
            .expect(Tool::Llvm19, Check::StderrContains("Did you mean '--input=3'?".into()))
            .reference(Reference::Llvm22(
                "the nearest option among equally distant ones follows 22's option table \
                 (19 suggests '--input=3')",
            )),
        // LLVM writes the outputs it finds before failing on a later one; ours writes none.
        base("unbundle-output-dir-missing")
            .setup(bundle_args("bc", &hd, &["h.bin", "d.bin"], "fat.bc"))
            .step(expand("-type=bc $HD -input=fat.bc -unbundle -output=nodir/u0 -output=u1"))
            .expect_llvm(stderr_err("'nodir/u0': No such file or directory"))
            .expect_llvm(Check::HasFile("u1".into())),
    ]);
    cases
}

/// `--version` and `--help`: exit status only (the version text differs between 19 and 22 and
/// ours need not copy LLVM's help layout), plus what every version prints.
fn help_version() -> Vec<Case> {
    let case = |name: &str, arg: &str, says: &str| {
        let c = Case::new(name)
            .step([arg])
            .status_only()
            .expect_llvm(Check::Status(Status::Exit(0)));
        [Tool::Llvm19, Tool::Llvm22, Tool::Ours]
            .into_iter()
            .fold(c, |c, t| {
                c.expect(t, Check::StdoutContains(says.into()))
                    .expect(t, Check::Stderr(Vec::new()))
            })
    };
    vec![
        case("version", "--version", "version"),
        case("help", "--help", "--targets="),
        case("help-list", "--help-list", "--targets="),
    ]
}

/// A bundle that older clang (ROCm 4.x/5.0 era: Debian's librocrand.so.1.1, CuPy for ROCm 4.3
/// and 5.0) wrote with the 3-field host ID `host-x86_64-unknown-linux`, unbundled with that
/// same ID (issue 19). LLVM 22 rejects the target syntax; LLVM 19 standardizes the request to
/// `host-x86_64-unknown-linux--` and then cannot find the stored entry. Ours, which accepts
/// 3-field targets as 19 does, finds the entry stored under exactly the name given: a
/// deliberate difference listed in docs/formats-and-clis.md. Every tool lists the bundle the
/// same way.
#[test]
fn three_field_host_id_stored_by_older_clang() {
    use crate::support::run::{RunDir, run_tool};
    let limit = Duration::from_secs(20);
    let bundle = spec_bundle(
        &[
            ("hip-amdgcn-amd-amdhsa-gfx906", b"DEVICE"),
            ("host-x86_64-unknown-linux", b"HOST!"),
        ],
        4096,
    );
    let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let unbundle = args(&[
        "-type=o",
        "-targets=host-x86_64-unknown-linux",
        "-input=old.bundle",
        "-output=u0",
        "-unbundle",
    ]);
    let list = args(&["-type=o", "-list", "-input=old.bundle"]);
    let mut listed = Vec::new();
    for tool in [Tool::Llvm19, Tool::Llvm22, Tool::Ours] {
        let dir = RunDir::new("three-field-host-id");
        std::fs::write(dir.path().join("old.bundle"), &bundle).unwrap();
        let l = run_tool(tool, dir.path(), &list, b"", limit);
        assert_eq!(l.status, Status::Exit(0), "{tool:?} -list");
        listed.push(l.stdout);
        let out = run_tool(tool, dir.path(), &unbundle, b"", limit);
        let err = String::from_utf8_lossy(&out.stderr);
        let u0 = std::fs::read(dir.path().join("u0")).ok();
        match tool {
            Tool::Llvm19 => {
                assert_eq!(out.status, Status::Exit(1));
                assert!(
                    err.ends_with("error: Can't find bundles for host-x86_64-unknown-linux--\n"),
                    "{err}"
                );
            }
            Tool::Llvm22 => {
                assert_eq!(out.status, Status::Exit(1));
                assert!(err.ends_with(&format!("error: {FORMAT_ERR}\n")), "{err}");
            }
            Tool::Ours => {
                assert_eq!(out.status, Status::Exit(0), "{err}");
                assert_eq!(u0.as_deref(), Some(&b"HOST!"[..]));
            }
        }
    }
    assert_eq!(listed[0], listed[1]);
    assert_eq!(listed[0], listed[2]);
    assert_eq!(
        String::from_utf8_lossy(&listed[2]),
        "host-x86_64-unknown-linux\nhip-amdgcn-amd-amdhsa-gfx906\n"
    );
}
