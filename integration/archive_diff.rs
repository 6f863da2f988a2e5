//! Differential cases for heterogeneous device archives (`-type=a -unbundle`, spec A.8):
//! archives made by llvm-ar 19 from fat objects that clang 19 compiled (HIP `-fgpu-rdc`,
//! device bitcode for gfx906, gfx90a:xnack+ and gfx1100), unbundled by LLVM 19, LLVM 22 and
//! ours; the device archives, messages and exit statuses must be byte-identical.
//! Host targets are left out: their member would be llvm-objcopy's output (see
//! `bundle::archive`).

use crate::objects_fixtures::objects;
use crate::support::fixtures::prng_bytes;
use crate::support::{Case, Check, fixtures};

groups!(
    archive_unbundle,
    archive_errors,
    archive_check,
    archive_not_an_archive
);

use crate::support::args::{ERR, hip};

fn unbundle(input: &str, targets: &[String], extra: &[&str]) -> Vec<String> {
    let mut a = vec![
        "-type=a".to_string(),
        format!("-targets={}", targets.join(",")),
        format!("-input={input}"),
        "-unbundle".into(),
    ];
    a.extend((0..targets.len()).map(|i| format!("-output=lib{i}.a")));
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn with_archives(c: Case) -> Case {
    let fx = objects();
    c.input("libab.a", fx.path("libab.a"))
        .input("libab-bsd.a", fx.path("libab-bsd.a"))
        .input("libmixed.a", fx.path("libmixed.a"))
}

/// Unbundling for three and more targets, xnack variants and kind aliases included.
fn archive_unbundle() -> Vec<Case> {
    let three = vec![
        hip("gfx906"),
        "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+".to_string(),
        hip("gfx1100"),
    ];
    // gfx906 entries are "any xnack": they satisfy both xnack+ and xnack-; the gfx90a:xnack+
    // entries also satisfy a target that adds sramecc+.
    let variants = vec![
        hip("gfx906:xnack+"),
        hip("gfx906:xnack-"),
        hip("gfx90a:sramecc+:xnack+"),
        hip("gfx90a:xnack+"),
    ];
    vec![
        with_archives(Case::new("gnu-3-targets"))
            .step(unbundle("libab.a", &three, &[]))
            .expect_llvm(Check::HasFile("lib2.a".into())),
        with_archives(Case::new("bsd-3-targets")).step(unbundle("libab-bsd.a", &three, &[])),
        with_archives(Case::new("xnack-variants")).step(unbundle("libab.a", &variants, &[])),
        with_archives(Case::new("binary-bundle-member")).step(unbundle(
            "libmixed.a",
            &[hip("gfx906"), hip("gfx1100")],
            &[],
        )),
        with_archives(Case::new("openmp-needs-hip-openmp-compatible")).step(unbundle(
            "libab.a",
            &["openmp-amdgcn-amd-amdhsa--gfx906".to_string()],
            &["-hip-openmp-compatible"],
        )),
        with_archives(Case::new("allow-missing-empty-archive"))
            .step(unbundle(
                "libab.a",
                &[hip("gfx908"), hip("gfx906")],
                &["-allow-missing-bundles"],
            ))
            .expect_llvm(Check::File("lib0.a".into(), b"!<arch>\n".to_vec())),
        with_archives(Case::new("list-prints-nothing"))
            .step(["-type=a", "-list", "-input=libab.a"])
            .expect_llvm(Check::Stdout(Vec::new())),
    ]
}

/// Missing targets, incompatible feature requests, unreadable inputs.
fn archive_errors() -> Vec<Case> {
    let no_compat = |t: &str| {
        Check::Stderr(
            format!(
                "{ERR}no compatible code object found for the target '{t}' in heterogeneous archive library: libab.a\n"
            )
            .into_bytes(),
        )
    };
    vec![
        with_archives(Case::new("missing-target"))
            .step(unbundle("libab.a", &[hip("gfx908")], &[]))
            .expect_llvm(no_compat("hip-amdgcn-amd-amdhsa--gfx908")),
        // The first archive is written by LLVM before the error; ours writes nothing.
        with_archives(Case::new("second-target-missing"))
            .step(unbundle("libab.a", &[hip("gfx906"), hip("gfx90a")], &[]))
            .expect_llvm(no_compat("hip-amdgcn-amd-amdhsa--gfx90a"))
            .expect_llvm(Check::HasFile("lib0.a".into())),
        with_archives(Case::new("xnack-minus-not-satisfied"))
            .step(unbundle("libab.a", &[hip("gfx90a:xnack-")], &[]))
            .expect_llvm(no_compat("hip-amdgcn-amd-amdhsa--gfx90a:xnack-")),
        with_archives(Case::new("no-such-archive")).step(unbundle("nope.a", &[hip("gfx906")], &[])),
        with_archives(Case::new("bundling-archives")).step([
            "-type=a",
            "-targets=hip-amdgcn-amd-amdhsa--gfx906",
            "-input=libab.a",
            "-output=x.a",
        ]),
    ]
}

/// `-check-input-archive`: a consistent archive passes and unbundles as without the flag; a
/// member combining `gfx906` with `gfx906:xnack+` is reported with LLVM's message.
fn archive_check() -> Vec<Case> {
    let fx = objects();
    vec![
        with_archives(Case::new("consistent-archive")).step(unbundle(
            "libab.a",
            &[hip("gfx906"), hip("gfx1100")],
            &["-check-input-archive"],
        )),
        Case::new("conflicting-member")
            .input("libconflict.a", fx.path("libconflict.a"))
            .step(unbundle(
                "libconflict.a",
                &[hip("gfx906")],
                &["-check-input-archive"],
            ))
            .expect_llvm(Check::Stderr(
                format!(
                    "{ERR}conflicting TargetIDs [hip-amdgcn-amd-amdhsa--gfx906, hip-amdgcn-amd-amdhsa--gfx906:xnack+] found in conflicting-member.bc of libconflict.a\n"
                )
                .into_bytes(),
            )),
        Case::new("conflicting-member-unchecked")
            .input("libconflict.a", fx.path("libconflict.a"))
            .step(unbundle("libconflict.a", &[hip("gfx906:xnack+")], &[])),
        with_archives(Case::new("check-requires-type-a")).step([
            "-type=o",
            "-targets=hip-amdgcn-amd-amdhsa--gfx906",
            "-input=libab.a",
            "-unbundle",
            "-output=x",
            "-check-input-archive",
        ]),
    ]
}

/// Inputs that are not archives (issue 19): LLVM 19 and 22 say `file too small to be an
/// archive` for every one, however long, with and without `-check-input-archive`.
fn archive_not_an_archive() -> Vec<Case> {
    let not_archive =
        || Check::Stderr(format!("{ERR}file too small to be an archive\n").into_bytes());
    let mut bitcode = b"BC\xc0\xde\x35\x14\x00\x00\x05\x00\x00\x00\x62\x0c\x30\x24".to_vec();
    bitcode.extend(prng_bytes(19, 500));
    let inputs: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("shorter-than-magic", b"!<arch>".to_vec()),
        ("three-bytes", b"abc".to_vec()),
        ("text", b"int main(void) { return 0; }\n".repeat(40)),
        (
            "elf-object",
            std::fs::read(fixtures().code_object("gfx1100")).expect("code object"),
        ),
        ("bitcode", bitcode),
        ("random-100k", prng_bytes(7, 100_000)),
    ];
    let mut cases = Vec::new();
    for (name, bytes) in inputs {
        for (suffix, extra) in [("", &[][..]), ("-checked", &["-check-input-archive"][..])] {
            cases.push(
                Case::new(format!("{name}{suffix}"))
                    .file("in.a", bytes.clone())
                    .step(unbundle("in.a", &[hip("gfx906"), hip("gfx1100")], extra))
                    .expect_llvm(not_archive()),
            );
        }
    }
    cases
}
