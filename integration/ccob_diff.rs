//! Compressed bundles (`CCOB`), differential: LLVM 19, LLVM 22 and ours write, list and
//! unbundle the same compressed bundles; see `support::case`.
//!
//! - `ccob_write_v3`: `-compress` at the default level and at 1, 3, 9 and 19: 22 writes v3, 19
//!   v2 (so the references differ); ours must equal 22 byte for byte.
//! - `ccob_write_v2`: the same with `COMPRESSED_BUNDLE_FORMAT_VERSION=2`, which 22 honours and
//!   19 ignores (it always writes v2): all three must be identical.
//! - `ccob_env`: the environment variables and their precedence against the options, with
//!   LLVM's warnings for bad values.
//! - `ccob_read`: bundles that LLVM 22 compressed, and zlib bundles (which Debian's LLVM cannot
//!   write, built here with the library), listed and unbundled by every tool.

use offload_build::bundle::binary::write_bundle;
use offload_build::bundle::compressed::{self, CompressOptions, Method, Version};

use crate::support::args::{bundle_args, co, hip, list_args, unbundle_args};
use crate::support::{CODE_OBJECT_ARCHS, Case, Check, Reference, Role, fixtures};

groups!(ccob_write_v3, ccob_write_v2, ccob_env, ccob_read);

const HOST: &str = "host-x86_64-unknown-linux-gnu";

/// The host payload and the four code objects as inputs, with their targets.
fn with_objects(mut case: Case) -> (Case, Vec<String>, Vec<String>) {
    let fx = fixtures();
    case = case.input("host.bin", fx.payload(4097));
    let mut targets = vec![HOST.to_string()];
    let mut inputs = vec!["host.bin".to_string()];
    for arch in CODE_OBJECT_ARCHS {
        case = case.input(&co(arch), fx.code_object(arch));
        targets.push(hip(arch));
        inputs.push(co(arch));
    }
    (case, targets, inputs)
}

/// Bundle with `extra` options into `fat.<ty>`, list it, unbundle every target.
fn compressed_round_trip(name: &str, ty: &str, extra: &[&str]) -> Case {
    let (case, targets, inputs) = with_objects(Case::new(name));
    let inputs: Vec<&str> = inputs.iter().map(String::as_str).collect();
    let out = format!("fat.{ty}");
    let mut args = bundle_args(ty, &targets, &inputs, &out);
    args.extend(extra.iter().map(|s| s.to_string()));
    case.step(args)
        .step(list_args(ty, &out))
        .step(unbundle_args(ty, &targets, &out))
}

/// `-compress` with each level the issue names, for binary and text bundles.
fn levels(prefix: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    for level in [None, Some(1), Some(3), Some(9), Some(19)] {
        let opt = level.map(|l| format!("-compression-level={l}"));
        let mut extra = vec!["-compress"];
        extra.extend(opt.as_deref());
        let name = format!(
            "{prefix}-bc-level-{}",
            level.map_or("default".into(), |l| l.to_string())
        );
        cases.push(compressed_round_trip(&name, "bc", &extra));
    }
    // `-type=o` with a host that is not an object file falls back to the binary format.
    cases.push(compressed_round_trip(
        &format!("{prefix}-o-binary-fallback"),
        "o",
        &["-compress"],
    ));
    // A text bundle is compressed as a whole too.
    let fx = fixtures();
    let text = Case::new(format!("{prefix}-ll-text"))
        .input("h.ll", fx.text("ll", Role::Host, true))
        .input("d.ll", fx.text("ll", Role::Dev1, false));
    let ts = [HOST.to_string(), hip("gfx906")];
    cases.push(
        text.step({
            let mut a = bundle_args("ll", &ts, &["h.ll", "d.ll"], "fat.ll");
            a.push("-compress".into());
            a
        })
        .step(list_args("ll", "fat.ll"))
        .step(unbundle_args("ll", &ts, "fat.ll")),
    );
    // A 64 MiB payload: large enough for zstd's long-distance matching to matter.
    let large = Case::new(format!("{prefix}-large-payload"))
        .input("host.bin", fx.payload(4097))
        .input(
            "big.bin",
            fx.payload(crate::support::fixtures::LARGE_PAYLOAD),
        );
    let ts = [HOST.to_string(), hip("gfx906")];
    cases.push(
        large
            .step({
                let mut a = bundle_args("bc", &ts, &["host.bin", "big.bin"], "fat.bc");
                a.push("-compress".into());
                a
            })
            .step(unbundle_args("bc", &ts, "fat.bc")),
    );
    cases
}

fn ccob_write_v3() -> Vec<Case> {
    levels("v3")
        .into_iter()
        .map(|c| c.reference(Reference::Llvm22("LLVM 19 writes CCOB v2, LLVM 22 v3")))
        .collect()
}

fn ccob_write_v2() -> Vec<Case> {
    levels("v2")
        .into_iter()
        .map(|c| c.env("COMPRESSED_BUNDLE_FORMAT_VERSION", "2"))
        .collect()
}

fn ccob_env() -> Vec<Case> {
    let v2 = |name: &str, extra: &[&str]| {
        compressed_round_trip(name, "bc", extra).env("COMPRESSED_BUNDLE_FORMAT_VERSION", "2")
    };
    let warn = |text: &str| Check::StderrContains(text.to_string());
    vec![
        // OFFLOAD_BUNDLER_COMPRESS=1 compresses without the option.
        v2("env-compress", &[]).env("OFFLOAD_BUNDLER_COMPRESS", "1"),
        // The option wins over the environment, both ways.
        v2("env-compress-option-false", &["-compress=false"]).env("OFFLOAD_BUNDLER_COMPRESS", "1"),
        v2("env-compress-0-option", &["-compress"]).env("OFFLOAD_BUNDLER_COMPRESS", "0"),
        // Any value but "1" leaves compression off.
        v2("env-compress-yes", &[]).env("OFFLOAD_BUNDLER_COMPRESS", "yes"),
        // OFFLOAD_BUNDLER_IGNORE_ENV_VAR=1 ignores all of them.
        v2("env-ignored", &[])
            .env("OFFLOAD_BUNDLER_COMPRESS", "1")
            .env("OFFLOAD_BUNDLER_IGNORE_ENV_VAR", "1"),
        // The level from the environment, and the option over it.
        v2("env-level-9", &["-compress"]).env("OFFLOAD_BUNDLER_COMPRESSION_LEVEL", "9"),
        v2("env-level-option-wins", &["-compress", "-compression-level=1"])
            .env("OFFLOAD_BUNDLER_COMPRESSION_LEVEL", "19"),
        v2("env-level-negative", &["-compress"]).env("OFFLOAD_BUNDLER_COMPRESSION_LEVEL", "-1"),
        // A level that is not a decimal integer is ignored with LLVM's warning.
        v2("env-level-invalid", &["-compress"])
            .env("OFFLOAD_BUNDLER_COMPRESSION_LEVEL", "0x3")
            .expect_llvm(warn(
                "Warning: Invalid value for OFFLOAD_BUNDLER_COMPRESSION_LEVEL: 0x3. Ignoring it.",
            )),
        // Format versions: 22 honours 2 and 3 and warns about anything else; 19 ignores the
        // variable (always v2).
        compressed_round_trip("version-3", "bc", &["-compress"])
            .env("COMPRESSED_BUNDLE_FORMAT_VERSION", "3")
            .reference(Reference::Llvm22("LLVM 19 ignores COMPRESSED_BUNDLE_FORMAT_VERSION")),
        compressed_round_trip("version-02", "bc", &["-compress"])
            .env("COMPRESSED_BUNDLE_FORMAT_VERSION", "02"),
        compressed_round_trip("version-4", "bc", &["-compress"])
            .env("COMPRESSED_BUNDLE_FORMAT_VERSION", "4")
            .expect(
                crate::support::Tool::Llvm22,
                warn("Warning: Invalid value for COMPRESSED_BUNDLE_FORMAT_VERSION: 4. Valid values are 2 or 3. Using default version 3."),
            )
            .reference(Reference::Llvm22("LLVM 19 ignores COMPRESSED_BUNDLE_FORMAT_VERSION")),
        compressed_round_trip("version-word", "bc", &["-compress"])
            .env("COMPRESSED_BUNDLE_FORMAT_VERSION", "two")
            .expect(
                crate::support::Tool::Llvm22,
                warn("Warning: Invalid value for COMPRESSED_BUNDLE_FORMAT_VERSION: two. Using default version 3."),
            )
            .reference(Reference::Llvm22("LLVM 19 ignores COMPRESSED_BUNDLE_FORMAT_VERSION")),
        // The warning comes before any error about the command line.
        Case::new("version-warning-then-error")
            .env("COMPRESSED_BUNDLE_FORMAT_VERSION", "-2")
            .step(["-type=zz", "-list", "-input=x"])
            .reference(Reference::Llvm22("LLVM 19 ignores COMPRESSED_BUNDLE_FORMAT_VERSION")),
    ]
}

/// A binary bundle of the host payload and two code objects, compressed by the library.
fn library_ccob(method: Method, version: Version) -> (Vec<u8>, Vec<String>) {
    let fx = fixtures();
    let host = std::fs::read(fx.payload(4097)).expect("payload");
    let a = std::fs::read(fx.code_object("gfx906")).expect("code object");
    let b = std::fs::read(fx.code_object("gfx90a:xnack+")).expect("code object");
    let ids = [format!("{HOST}-"), hip("gfx906"), hip("gfx90a:xnack+")];
    let entries: Vec<(&[u8], &[u8])> = vec![
        (ids[0].as_bytes(), &host),
        (ids[1].as_bytes(), &a),
        (ids[2].as_bytes(), &b),
    ];
    let bundle = write_bundle(&entries, 1).expect("bundle");
    let options = CompressOptions {
        method,
        version,
        ..CompressOptions::default()
    };
    let ccob = compressed::compress(&bundle, &options).expect("compress");
    (ccob, vec![HOST.into(), hip("gfx906"), hip("gfx90a:xnack+")])
}

fn ccob_read() -> Vec<Case> {
    let (case, targets, inputs) = with_objects(Case::new("llvm22-v3"));
    let inputs: Vec<&str> = inputs.iter().map(String::as_str).collect();
    let make = |extra: &[&str]| {
        let mut a = bundle_args("bc", &targets, &inputs, "fat.bc");
        a.push("-compress".into());
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let v3 = case
        .setup(make(&[]))
        .step(list_args("bc", "fat.bc"))
        .step(unbundle_args("bc", &targets, "fat.bc"))
        .reference(Reference::Llvm22(
            "LLVM 19 cannot read CCOB v3 (Unknown frame descriptor)",
        ));
    let (case, _, _) = with_objects(Case::new("llvm22-v2-level-19"));
    let v2 = case
        .env("COMPRESSED_BUNDLE_FORMAT_VERSION", "2")
        .setup(make(&["-compression-level=19"]))
        .step(list_args("bc", "fat.bc"))
        .step(unbundle_args("bc", &targets, "fat.bc"))
        .step(unbundle_args("o", &targets[1..2], "fat.bc"));
    let mut cases = vec![v3, v2];
    for (method, version) in [
        (Method::Zlib, Version::V2),
        (Method::Zlib, Version::V3),
        (Method::Zstd, Version::V2),
    ] {
        let (bytes, ts) = library_ccob(method, version);
        let name = format!("library-{}-v{}", method.name(), version.raw());
        let case = Case::new(name)
            .file("fat.bc", bytes)
            .step(list_args("bc", "fat.bc"))
            .step(unbundle_args("bc", &ts, "fat.bc"));
        cases.push(if version == Version::V3 {
            case.reference(Reference::Llvm22("LLVM 19 cannot read CCOB v3"))
        } else {
            case
        });
    }
    cases
}

/// `-verbose` (and `OFFLOAD_BUNDLER_VERBOSE=1`): ours prints LLVM 22's lines with the same
/// values, speeds excepted, when compressing, listing and unbundling (v2 and v3, and an
/// uncompressed input).
#[test]
fn verbose_lines_match_llvm22() {
    use crate::support::run::{RunDir, Tool, run_tool_env};
    use std::time::Duration;

    /// Speeds differ from run to run; everything else must not.
    fn normalize(stderr: &[u8]) -> String {
        String::from_utf8_lossy(stderr)
            .lines()
            .map(|l| match l.split_once(" speed: ") {
                Some((label, _)) => format!("{label} speed: <n> MB/s"),
                None => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
    let fx = fixtures();
    let ts = format!("-targets={HOST},{}", hip("gfx906"));
    // A host payload whose bundle's hash has a leading zero digit: LLVM prints hashes without
    // padding.
    let device = std::fs::read(fx.code_object("gfx906")).expect("code object");
    let host_id = format!("{HOST}-");
    let dev_id = hip("gfx906");
    let zero_led = (0u32..)
        .map(|i| format!("host {i}\n").into_bytes())
        .find(|h| {
            let b = write_bundle(&[(host_id.as_bytes(), h), (dev_id.as_bytes(), &device)], 1)
                .expect("bundle");
            compressed::truncated_md5(&b) >> 60 == 0
        })
        .expect("some payload");
    type Env = Vec<(String, String)>;
    let steps: Vec<(Vec<String>, Env)> = vec![
        (
            bundle_args(
                "bc",
                &[HOST, &hip("gfx906")],
                &["host.bin", "d.co"],
                "fat.bc",
            )
            .into_iter()
            .chain(["-compress".to_string(), "-verbose".to_string()])
            .collect(),
            vec![],
        ),
        (
            list_args("bc", "fat.bc")
                .into_iter()
                .chain(["-verbose".to_string()])
                .collect(),
            vec![],
        ),
        (
            vec![
                "-type=bc".into(),
                ts.clone(),
                "-input=fat.bc".into(),
                "-unbundle".into(),
                "-output=u0".into(),
                "-output=u1".into(),
            ],
            vec![("OFFLOAD_BUNDLER_VERBOSE".into(), "1".into())],
        ),
        (
            bundle_args(
                "bc",
                &[HOST, &hip("gfx906")],
                &["host.bin", "d.co"],
                "v2.bc",
            )
            .into_iter()
            .chain([
                "-compress".to_string(),
                "-verbose".to_string(),
                "-compression-level=9".to_string(),
            ])
            .collect(),
            vec![("COMPRESSED_BUNDLE_FORMAT_VERSION".into(), "2".into())],
        ),
        (
            list_args("bc", "v2.bc")
                .into_iter()
                .chain(["-verbose".to_string()])
                .collect(),
            vec![],
        ),
        (
            bundle_args("bc", &[HOST, &hip("gfx906")], &["zero.bin", "d.co"], "z.bc")
                .into_iter()
                .chain(["-compress".to_string(), "-verbose".to_string()])
                .collect(),
            vec![],
        ),
        (
            list_args("bc", "z.bc")
                .into_iter()
                .chain(["-verbose".to_string()])
                .collect(),
            vec![],
        ),
        (
            list_args("bc", "host.bin")
                .into_iter()
                .chain(["-verbose".to_string()])
                .collect(),
            vec![],
        ),
    ];
    let mut outputs: Vec<Vec<String>> = Vec::new();
    for tool in [Tool::Llvm22, Tool::Ours] {
        let dir = RunDir::new(&format!("ccob-verbose-{}", tool.name()));
        std::fs::copy(fx.payload(4097), dir.path().join("host.bin")).expect("copy");
        std::fs::copy(fx.code_object("gfx906"), dir.path().join("d.co")).expect("copy");
        std::fs::write(dir.path().join("zero.bin"), &zero_led).expect("write");
        let mut seen = Vec::new();
        for (args, env) in &steps {
            let out = run_tool_env(tool, dir.path(), args, b"", Duration::from_secs(60), env);
            assert!(out.status.success(), "{}: {args:?} failed", tool.name());
            seen.push(normalize(&out.stderr));
        }
        outputs.push(seen);
    }
    for (i, (llvm, ours)) in outputs[0].iter().zip(&outputs[1]).enumerate() {
        assert!(!llvm.is_empty(), "step {i}: LLVM 22 printed nothing");
        assert_eq!(ours, llvm, "step {i}: {:?}", steps[i].0);
    }
}
