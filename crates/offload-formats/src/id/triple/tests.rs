//! The tests of triples.
//!
//! The golden tables were produced against LLVM 22.1.8 and are checked in,
//! so these tests prove byte-identity without LLVM:
//!
//! - `BUNDLER_*`: gen-tables runs `clang-offload-bundler -type=bc` (LLVM 22)
//!   over ~700 four-component triples (real and misplaced arches, vendors,
//!   OSes with versions, environments, object formats, empty and garbage
//!   components) as `-targets=host-A-B-C-D`, then read the stored entry ID
//!   back with `-list`; and bundled/unbundled `openmp-` entries pairwise to
//!   observe which stored triples satisfy which requests.
//! - `LLVM_*`: a small C++ program linked against `libLLVM-22.so` printed
//!   `Triple::normalize` in all four forms, the components parsed by
//!   `Triple(StringRef)`, and `isCompatibleWith` for the listed inputs.
//!
//! The same programs also agreed with this port on ~250,000 further
//! generated and fuzzed strings (not kept here).
//!
//! The tables live in `id/generated/triple_golden.rs`; `dev-tools/gen-tables`
//! regenerates them from the inputs in its `src/probes.rs` (see
//! `dev-tools/README.md`).

use super::*;
use crate::id::generated::triple_golden::*;

#[test]
fn bundler_four_ident_normalization() {
    for &(input, stored) in BUNDLER_FOUR_IDENT {
        assert_eq!(
            normalize(input, CanonicalForm::FourIdent),
            stored,
            "input {input:?}"
        );
    }
}

#[test]
fn bundler_three_ident_normalization() {
    for &(input, stored) in BUNDLER_THREE_IDENT {
        assert_eq!(
            normalize(input, CanonicalForm::ThreeIdent),
            stored,
            "input {input:?}"
        );
    }
}

#[test]
fn bundler_accepts_exactly_known_positional_arches() {
    for &input in BUNDLER_UNKNOWN_ARCH {
        assert!(!Triple::new(input).is_arch_known(), "input {input:?}");
    }
    for &(input, _) in BUNDLER_FOUR_IDENT.iter().chain(BUNDLER_THREE_IDENT) {
        assert!(Triple::new(input).is_arch_known(), "input {input:?}");
    }
}

#[test]
fn bundler_compatibility() {
    for &(stored, requested, found) in BUNDLER_COMPATIBLE {
        let stored_triple = Triple::new(stored);
        assert_eq!(
            stored_triple.is_compatible_with(&Triple::new(requested)),
            found,
            "stored {stored:?}, requested {requested:?}"
        );
    }
}

#[test]
fn known_bundler_examples() {
    let four = |s| normalize(s, CanonicalForm::FourIdent);
    assert_eq!(four("x86_64-unknown-linux-gnu"), "x86_64-unknown-linux-gnu");
    assert_eq!(
        four("x86_64-unknown-linux-"),
        "x86_64-unknown-linux-unknown"
    );
    assert_eq!(four("x86_64--linux-gnu"), "x86_64-unknown-linux-gnu");
    assert_eq!(four("x86_64-linux-gnu-"), "x86_64-unknown-linux-gnu");
    assert_eq!(
        four("aarch64-apple-darwin-"),
        "aarch64-apple-darwin-unknown"
    );
    assert_eq!(four("nvptx64---"), "nvptx64-unknown-unknown-unknown");
    assert_eq!(four("nvptx64-nvidia-cuda-"), "nvptx64-nvidia-cuda-unknown");
    for env in ["", "unknown", "gnu", "foo"] {
        let input = format!("amdgcn-amd-amdhsa-{env}");
        assert_eq!(
            normalize(&input, CanonicalForm::ThreeIdent),
            "amdgcn-amd-amdhsa"
        );
    }
}

#[test]
fn llvm_normalize_all_forms() {
    let forms = [
        CanonicalForm::Any,
        CanonicalForm::ThreeIdent,
        CanonicalForm::FourIdent,
        CanonicalForm::FiveIdent,
    ];
    for &(input, expected) in LLVM_NORMALIZE {
        for (form, expected) in forms.into_iter().zip(expected) {
            assert_eq!(
                normalize(input, form),
                expected,
                "input {input:?}, {form:?}"
            );
        }
        assert_eq!(
            Triple::new(input).normalize(CanonicalForm::Any),
            expected[0]
        );
    }
}

#[test]
fn llvm_parse_components() {
    for &(input, arch, sub_arch, vendor, os, environment, object_format) in LLVM_PARSE {
        let t = Triple::new(input);
        assert_eq!(t.as_str(), input);
        assert_eq!(
            (
                t.arch(),
                t.sub_arch(),
                t.vendor(),
                t.os(),
                t.environment(),
                t.object_format()
            ),
            (arch, sub_arch, vendor, os, environment, object_format),
            "input {input:?}"
        );
    }
}

#[test]
fn llvm_compatibility() {
    for &(a, b, compatible) in LLVM_COMPATIBLE {
        assert_eq!(
            Triple::new(a).is_compatible_with(&Triple::new(b)),
            compatible,
            "{a:?} vs {b:?}"
        );
    }
}

#[test]
fn canonical_names_parse_back() {
    for &arch in &Arch::ALL[1..] {
        assert_eq!(parse_arch(arch.name()), arch);
    }
    for &vendor in &Vendor::ALL[1..] {
        assert_eq!(parse_vendor(vendor.name()), vendor);
    }
    for &os in &Os::ALL[1..] {
        assert_eq!(parse_os(os.name()), os);
        assert_eq!(parse_os(&format!("{}1.2.3", os.name())), os);
    }
    for &env in &Environment::ALL[1..] {
        assert_eq!(parse_environment(env.name()), env);
    }
    for &format in &ObjectFormat::ALL[1..] {
        let expected = if format == ObjectFormat::DxContainer {
            ObjectFormat::Unknown
        } else {
            format
        };
        assert_eq!(parse_format(format.name()), expected);
    }
    assert_eq!(parse_arch("unknown"), Arch::Unknown);
    assert_eq!(parse_os("unknown"), Os::Unknown);
}

#[test]
fn unsupported_shader_model_is_an_error() {
    for input in [
        "dxil-unknown-shadermodel6.10",
        "dxil-unknown-shadermodel6.99-library",
    ] {
        assert_eq!(
            try_normalize(input, CanonicalForm::Any),
            Err(NormalizeError::UnsupportedShaderModel)
        );
    }
    assert_eq!(
        try_normalize("dxil-unknown-shadermodel6.9", CanonicalForm::Any).as_deref(),
        Ok("dxilv1.9-unknown-shadermodel6.9")
    );
}

#[test]
#[should_panic(expected = "Unsupported Shader Model version")]
fn normalize_panics_where_llvm_aborts() {
    normalize("dxil-unknown-shadermodel6.10", CanonicalForm::FourIdent);
}

#[test]
fn component_names_and_equality() {
    let t = Triple::new("x86_64-pc-linux-gnu-elf-extra");
    assert_eq!(t.arch_name(), "x86_64");
    assert_eq!(t.vendor_name(), "pc");
    assert_eq!(t.os_name(), "linux");
    assert_eq!(t.environment_name(), "gnu-elf-extra");
    assert_eq!(t.os_and_environment_name(), "linux-gnu-elf-extra");
    assert!(t.has_environment());
    assert_eq!(t.to_string(), "x86_64-pc-linux-gnu-elf-extra");

    let short = Triple::new("nvptx64");
    assert_eq!(
        (
            short.vendor_name(),
            short.os_name(),
            short.environment_name()
        ),
        ("", "", "")
    );
    assert!(!short.has_environment());
    assert!(short.is_nvptx() && !short.is_amdgpu());

    // Like LLVM's operator==, equality looks at the parsed components only.
    assert_eq!(
        Triple::new("amdgcn-amd-amdhsa"),
        Triple::new("amdgcn-amd-amdhsa-unknown")
    );
    assert_ne!(
        Triple::new("amdgcn-amd-amdhsa"),
        Triple::new("amdgcn-amd-amdhsa-gnu")
    );

    let gpu = Triple::new("amdgcn-amd-amdhsa");
    assert!(gpu.is_amdgcn() && gpu.is_amdgpu() && !gpu.is_r600() && !gpu.is_nvptx());
    let r600 = Triple::new("r600-unknown-unknown");
    assert!(r600.is_r600() && r600.is_amdgpu() && !r600.is_amdgcn());
}
