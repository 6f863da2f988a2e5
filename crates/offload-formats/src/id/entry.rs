//! Bundle entry IDs: `<offload-kind>-<triple>[-<target-id>]`.
//!
//! clang-offload-bundler *standardizes* every `-targets` value before writing it into
//! a bundle, and re-parses stored IDs when deciding which entry satisfies which
//! requested target. LLVM changed the rules in release 20; this module follows
//! LLVM 22 and falls back to LLVM 19 only where 22 rejects or loses something 19
//! accepted:
//!
//! | input | LLVM 19 | LLVM 22 | here |
//! |---|---|---|---|
//! | 5 or 6 `-`-separated components, known processor | `kind-a-v-o-e-tid` | normalized triple | as 22 |
//! | `host-x86_64-unknown-linux` (3-field triple) | `host-x86_64-unknown-linux--` | error | as 19 |
//! | `hip-amdgcn-amd-amdhsa-gfx906` (processor in the environment slot) | `hip-amdgcn-amd-amdhsa--gfx906` | `hip-amdgcn-amd-amdhsa--` (processor lost) | processor kept, then as 22 |
//! | `hip-amdgcn-amd-amdhsa--gfx940` (only 19 knows gfx940) | kept | dropped | kept |
//! | `hip-amdgcn-amd-amdhsa--gfx9999` (no clang knows it) | `…--gfx9999-` | `…--` | as 22, with a warning |
//!
//! LLVM 22 standardization of a 5/6-component ID `kind-arch-vendor-os-env[-tid]`:
//! the target ID is kept when its processor (before the first `:`) is a known
//! offload arch; the triple becomes `normalize(arch-vendor-os-env, THREE_IDENT) + "-"`
//! when the OS is `amdhsa`, otherwise `normalize(…, FOUR_IDENT)`.
//!
//! LLVM 19 standardization (used for fewer than 5 components): split the part before
//! the first `:` at its last `-`; when the last piece is a known processor name (or
//! empty) the kind and triple come from what precedes it, and the target ID is the
//! input from the first occurrence of that piece; the triple is kept positionally as
//! `arch-vendor-os-env` with exactly three `-`.

use std::fmt;

use super::offload_arch;
use super::target_id::{self, TargetArch};
use super::triple::{self, CanonicalForm, Triple};
use crate::llvm::LlvmVersion;

/// The offload kind of an entry ID, its first component (`host`, `hip`, `hipv4`, `openmp`);
/// not the numeric [`crate::package::OffloadKind`] of offload binaries.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EntryKind {
    /// `host`: the host object or source.
    Host,
    /// `openmp`: OpenMP offloading.
    OpenMp,
    /// `hip`: HIP (the old driver's spelling; compatible with `hipv4`).
    Hip,
    /// `hipv4`: HIP with code object v4+ (what the HIP driver writes).
    HipV4,
    /// Anything else (`cuda`, `sycl`, …): readable, but rejected in `-targets`.
    Other(String),
}

impl EntryKind {
    /// Parses a kind; every string is accepted (unknown kinds become [`EntryKind::Other`]).
    pub fn parse(s: &str) -> EntryKind {
        match s {
            "host" => EntryKind::Host,
            "openmp" => EntryKind::OpenMp,
            "hip" => EntryKind::Hip,
            "hipv4" => EntryKind::HipV4,
            other => EntryKind::Other(other.to_owned()),
        }
    }

    /// The kind as written.
    pub fn as_str(&self) -> &str {
        match self {
            EntryKind::Host => "host",
            EntryKind::OpenMp => "openmp",
            EntryKind::Hip => "hip",
            EntryKind::HipV4 => "hipv4",
            EntryKind::Other(s) => s,
        }
    }

    /// Whether clang-offload-bundler accepts this kind in `-targets`.
    pub fn is_valid(&self) -> bool {
        !matches!(self, EntryKind::Other(_))
    }

    /// LLVM's `isOffloadKindCompatible`: equal kinds, `hip` ≡ `hipv4`, and with
    /// `hip_openmp` any kind starting with `hip` (any case) ≡ `openmp`.
    pub fn is_compatible(&self, requested: &EntryKind, hip_openmp: bool) -> bool {
        let (a, b) = (self.as_str(), requested.as_str());
        if a == b || matches!((a, b), ("hip", "hipv4") | ("hipv4", "hip")) {
            return true;
        }
        // Bytes, not `&s[..3]`: a kind such as `h\u{e9}` has no char boundary at 3.
        let hipish = |s: &str| {
            s.as_bytes()
                .get(..3)
                .is_some_and(|p| p.eq_ignore_ascii_case(b"hip"))
        };
        hip_openmp && ((hipish(a) && b == "openmp") || (a == "openmp" && hipish(b)))
    }
}

impl fmt::Display for EntryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A parsed bundle entry ID.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryId {
    kind: EntryKind,
    triple: Triple,
    target_id: String,
    standardized: String,
    rules: LlvmVersion,
    dropped_processor: Option<String>,
    unnormalizable: Option<triple::NormalizeError>,
}

/// Why a target string is not acceptable in `-targets`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdError {
    /// The target as given.
    pub target: String,
    /// The kind, when it is unknown.
    pub unknown_kind: Option<String>,
    /// The triple string, when its architecture is unknown.
    pub unknown_triple: Option<String>,
    /// Why the triple cannot be normalized (LLVM aborts the process instead).
    pub unnormalizable: Option<triple::NormalizeError>,
}

impl fmt::Display for IdError {
    /// LLVM's text: `invalid target '<T>'[, unknown offloading kind '<k>'][, unknown target triple '<t>']`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid target '{}'", self.target)?;
        if let Some(k) = &self.unknown_kind {
            write!(f, ", unknown offloading kind '{k}'")?;
        }
        if let Some(t) = &self.unknown_triple {
            write!(f, ", unknown target triple '{t}'")?;
        }
        if let Some(reason) = &self.unnormalizable {
            write!(f, ", {reason}")?;
        }
        Ok(())
    }
}

impl std::error::Error for IdError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.unnormalizable
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

fn components(s: &str, max_parts: usize) -> Vec<&str> {
    s.splitn(max_parts, '-').collect()
}

impl EntryId {
    /// Parses an entry ID (a `-targets` value or an ID stored in a bundle).
    ///
    /// Never fails: validity of the kind and triple is a separate question
    /// ([`EntryId::validate`]), as in LLVM.
    pub fn parse(s: &str) -> EntryId {
        let parts = components(s, 6);
        if parts.len() < 5 {
            return Self::parse_llvm19(s);
        }
        let kind = parts[0];
        let (arch, vendor, os) = (parts[1], parts[2], parts[3]);
        let (mut env, mut tid) = (parts[4], parts.get(5).copied().unwrap_or(""));
        // A processor in the environment slot (`hip-amdgcn-amd-amdhsa-gfx906`): 19 kept
        // it as the target ID, 22 loses it. Keep it.
        if parts.len() == 5 && offload_arch::is_known_offload_arch(processor_of(env)) {
            tid = env;
            env = "";
        }
        let processor = processor_of(tid);
        let mut dropped_processor = None;
        let target_id = if tid.is_empty() {
            String::new()
        } else if offload_arch::is_known_offload_arch(processor) {
            tid.to_owned()
        } else {
            dropped_processor = Some(tid.to_owned());
            String::new()
        };
        let triple_str = format!("{arch}-{vendor}-{os}-{env}");
        let triple = Triple::new(&triple_str);
        // LLVM aborts the process on triples it cannot normalize (a DXIL shader
        // model it has no version for); keep the triple as given and let
        // `validate` report it.
        let (form, suffix) = if triple.os() == triple::Os::Amdhsa {
            (CanonicalForm::ThreeIdent, "-")
        } else {
            (CanonicalForm::FourIdent, "")
        };
        let (normalized, unnormalizable) = match triple::try_normalize(&triple_str, form) {
            Ok(t) => (t + suffix, None),
            Err(e) => (triple_str.clone(), Some(e)),
        };
        EntryId {
            kind: EntryKind::parse(kind),
            standardized: format!("{kind}-{normalized}-{target_id}"),
            triple,
            target_id,
            rules: LlvmVersion::LLVM22,
            dropped_processor,
            unnormalizable,
        }
    }

    /// Parses with LLVM 19's rules exactly (see the module docs).
    pub fn parse_llvm19(s: &str) -> EntryId {
        let first = s.split(':').next().unwrap_or("");
        let (prefix, last) = match first.rfind('-') {
            Some(i) => (&first[..i], &first[i + 1..]),
            None => ("", first),
        };
        let is_processor =
            last.is_empty() || offload_arch::is_offload_arch(last, LlvmVersion::LLVM19);
        let (kind_and_triple, target_id) = if is_processor && first.contains('-') {
            let at = s.find(last).unwrap_or(s.len());
            (prefix, &s[at..])
        } else {
            (first, "")
        };
        let (kind, triple) = kind_and_triple
            .split_once('-')
            .unwrap_or((kind_and_triple, ""));
        let mut pieces = triple.splitn(4, '-');
        let triple4 = format!(
            "{}-{}-{}-{}",
            pieces.next().unwrap_or(""),
            pieces.next().unwrap_or(""),
            pieces.next().unwrap_or(""),
            pieces.next().unwrap_or("")
        );
        EntryId {
            kind: EntryKind::parse(kind),
            standardized: format!("{kind}-{triple4}-{target_id}"),
            triple: Triple::new(&triple4),
            target_id: target_id.to_owned(),
            rules: LlvmVersion::LLVM19,
            dropped_processor: None,
            unnormalizable: None,
        }
    }

    /// The ID re-parsed from its standardized string: what clang-offload-bundler
    /// compares bundle entries against when unbundling (its work list holds the
    /// standardized names, so for example an `amdhsa` environment is gone).
    pub fn standardized(&self) -> EntryId {
        EntryId::parse(&self.standardized)
    }

    /// The standardized ID, as written into bundles.
    pub fn as_str(&self) -> &str {
        &self.standardized
    }

    /// The offload kind.
    pub fn kind(&self) -> &EntryKind {
        &self.kind
    }

    /// The triple (the positional `arch-vendor-os-env` string LLVM compares with).
    pub fn triple(&self) -> &Triple {
        &self.triple
    }

    /// The target ID (`gfx90a:xnack+`), empty when there is none.
    pub fn target_id(&self) -> &str {
        &self.target_id
    }

    /// Whose rules parsed this ID: [`LlvmVersion::LLVM19`] (positional split) or
    /// [`LlvmVersion::LLVM22`] (standardized, LLVM 20 and later).
    pub fn rules(&self) -> LlvmVersion {
        self.rules
    }

    /// A target ID that was dropped because no clang knows its processor (LLVM 22 does
    /// the same, silently; callers should warn).
    pub fn dropped_processor(&self) -> Option<&str> {
        self.dropped_processor.as_deref()
    }

    /// Whether the kind is `host`.
    pub fn is_host(&self) -> bool {
        self.kind == EntryKind::Host
    }

    /// Whether the kind is `hip` or `hipv4` (bundles of only those need no host).
    pub fn is_hip(&self) -> bool {
        matches!(self.kind, EntryKind::Hip | EntryKind::HipV4)
    }

    /// LLVM's check of a `-targets` value: known kind and known triple architecture.
    pub fn validate(&self, given: &str) -> Result<(), IdError> {
        let kind_ok = self.kind.is_valid();
        let triple_ok = !self.triple.as_str().is_empty() && self.triple.is_arch_known();
        if kind_ok && triple_ok && self.unnormalizable.is_none() {
            return Ok(());
        }
        Err(IdError {
            target: given.to_owned(),
            unknown_kind: (!kind_ok).then(|| self.kind.as_str().to_owned()),
            unknown_triple: (!triple_ok).then(|| self.triple.as_str().to_owned()),
            unnormalizable: self.unnormalizable,
        })
    }

    /// The key clang-offload-bundler groups targets by for the conflict check:
    /// `kind-triple` with the triple as parsed.
    pub fn group(&self) -> String {
        format!("{}-{}", self.kind, self.triple.as_str())
    }

    fn target_arch(&self) -> TargetArch {
        if self.triple.is_amdgcn() {
            TargetArch::Amdgcn
        } else if self.triple.is_r600() {
            TargetArch::R600
        } else {
            TargetArch::Other
        }
    }

    /// LLVM's `isCodeObjectCompatible(code_object = self, target = requested)`:
    /// whether a bundle entry with this ID may be extracted for `requested`.
    pub fn is_compatible(&self, requested: &EntryId, hip_openmp: bool) -> bool {
        if self.kind == requested.kind
            && self.triple.is_compatible_with(&requested.triple)
            && self.target_id == requested.target_id
        {
            return true;
        }
        if !self.kind.is_compatible(&requested.kind, hip_openmp)
            || !self.triple.is_compatible_with(&requested.triple)
        {
            return false;
        }
        target_id::is_compatible(self.target_arch(), &self.target_id, &requested.target_id)
    }
}

impl fmt::Display for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.standardized)
    }
}

fn processor_of(tid: &str) -> &str {
    tid.split(':').next().unwrap_or("")
}

/// The bundling-time conflict check: among targets of the same kind and triple, two
/// target IDs for one processor conflict when the later (in sorted order) has a
/// feature the first lacks. Returns LLVM's two strings `group-tidA` and `group-tidB`.
pub fn find_conflict(ids: &[EntryId]) -> Option<(String, String)> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut groups: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for id in ids {
        groups.entry(id.group()).or_default().insert(id.target_id());
    }
    for (group, tids) in &groups {
        let tids: Vec<&str> = tids.iter().copied().collect();
        if let Some((a, b)) = target_id::find_conflict(&tids) {
            return Some((format!("{group}-{a}"), format!("{group}-{b}")));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unnormalizable_triple_is_the_source() {
        use std::error::Error as _;
        let given = "hip-dxil-unknown-shadermodel6.10-";
        let e = EntryId::parse(given).validate(given).unwrap_err();
        assert_eq!(
            e.unnormalizable,
            Some(triple::NormalizeError::UnsupportedShaderModel)
        );
        assert!(
            e.to_string()
                .ends_with(", Unsupported Shader Model version"),
            "{e}"
        );
        assert_eq!(
            e.source()
                .and_then(|s| s.downcast_ref::<triple::NormalizeError>()),
            Some(&triple::NormalizeError::UnsupportedShaderModel)
        );
    }

    /// Found by fuzzing: a multi-byte character across byte 3 of a kind panicked the
    /// `-hip-openmp-compatible` check.
    #[test]
    fn kind_compatibility_with_multibyte_kind() {
        let odd = EntryKind::parse("h\u{fffd}p");
        let openmp = EntryKind::parse("openmp");
        assert!(!odd.is_compatible(&openmp, true));
        assert!(!openmp.is_compatible(&odd, true));
        assert!(EntryKind::parse("HIPx").is_compatible(&openmp, true));
    }

    fn std22(s: &str) -> String {
        EntryId::parse(s).as_str().to_owned()
    }

    #[test]
    fn llvm22_standardization() {
        // Spec A.1.2, observed with clang-offload-bundler 22.
        let cases = [
            (
                "host-x86_64-unknown-linux-gnu",
                "host-x86_64-unknown-linux-gnu-",
            ),
            (
                "host-x86_64-unknown-linux-",
                "host-x86_64-unknown-linux-unknown-",
            ),
            ("host-x86_64--linux-gnu", "host-x86_64-unknown-linux-gnu-"),
            ("host-x86_64-linux-gnu-", "host-x86_64-unknown-linux-gnu-"),
            (
                "host-aarch64-apple-darwin-",
                "host-aarch64-apple-darwin-unknown-",
            ),
            (
                "hip-amdgcn-amd-amdhsa-unknown-gfx906",
                "hip-amdgcn-amd-amdhsa--gfx906",
            ),
            (
                "openmp-amdgcn-amd-amdhsa-gnu-gfx906",
                "openmp-amdgcn-amd-amdhsa--gfx906",
            ),
            (
                "hip-spirv64-amd-amdhsa-unknown-amdgcnspirv",
                "hip-spirv64-amd-amdhsa--amdgcnspirv",
            ),
            (
                "openmp-nvptx64-nvidia-cuda--sm_70",
                "openmp-nvptx64-nvidia-cuda-unknown-sm_70",
            ),
            (
                "openmp-nvptx64---",
                "openmp-nvptx64-unknown-unknown-unknown-",
            ),
            (
                "openmp-x86_64-unknown-linux-gnu-extra-more",
                "openmp-x86_64-unknown-linux-gnu-",
            ),
            (
                "hip-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc-",
                "hip-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc-",
            ),
        ];
        for (given, want) in cases {
            assert_eq!(std22(given), want, "{given}");
        }
    }

    #[test]
    fn llvm19_fallbacks() {
        // 3-field triples as clang 19's HIP driver passes them.
        assert_eq!(
            std22("host-x86_64-unknown-linux"),
            "host-x86_64-unknown-linux--"
        );
        assert_eq!(
            EntryId::parse("host-x86_64-unknown-linux").rules(),
            LlvmVersion::LLVM19
        );
        // A processor in the environment slot is kept, as 19 does.
        assert_eq!(
            std22("hip-amdgcn-amd-amdhsa-gfx906"),
            "hip-amdgcn-amd-amdhsa--gfx906"
        );
        assert_eq!(
            std22("openmp-nvptx64-nvidia-cuda-sm_70"),
            "openmp-nvptx64-nvidia-cuda-unknown-sm_70"
        );
        // gfx940 is known to 19 only: kept.
        assert_eq!(
            std22("hip-amdgcn-amd-amdhsa--gfx940"),
            "hip-amdgcn-amd-amdhsa--gfx940"
        );
        // Unknown processors are dropped as 22 does, and reported.
        let id = EntryId::parse("hip-amdgcn-amd-amdhsa--gfx9999");
        assert_eq!(id.as_str(), "hip-amdgcn-amd-amdhsa--");
        assert_eq!(id.dropped_processor(), Some("gfx9999"));
    }

    #[test]
    fn llvm19_rules_exactly() {
        // Spec A.1.1, observed with clang-offload-bundler 19.
        let cases = [
            (
                "host-x86_64-unknown-linux-gnu",
                "host-x86_64-unknown-linux-gnu-",
            ),
            ("host-x86_64-unknown-linux", "host-x86_64-unknown-linux--"),
            ("host-x86_64-linux", "host-x86_64-linux---"),
            ("host-x86_64", "host-x86_64----"),
            (
                "host-x86_64-pc-linux-gnu-extra",
                "host-x86_64-pc-linux-gnu-extra-",
            ),
            (
                "host-x86_64-unknown-linux-",
                "host-x86_64-unknown-linux--host-x86_64-unknown-linux-",
            ),
            (
                "hip-amdgcn-amd-amdhsa-gfx906",
                "hip-amdgcn-amd-amdhsa--gfx906",
            ),
            (
                "hip-amdgcn-amd-amdhsa--gfx906",
                "hip-amdgcn-amd-amdhsa--gfx906",
            ),
            (
                "hip-amdgcn-amd-amdhsa-unknown-gfx906",
                "hip-amdgcn-amd-amdhsa-unknown-gfx906",
            ),
            ("hip-amdgcn-amd-amdhsa", "hip-amdgcn-amd-amdhsa--"),
            (
                "hip-amdgcn-amd-amdhsa--",
                "hip-amdgcn-amd-amdhsa--hip-amdgcn-amd-amdhsa--",
            ),
            (
                "hip-amdgcn-amd-amdhsa--gfx9999",
                "hip-amdgcn-amd-amdhsa--gfx9999-",
            ),
            (
                "hip-amdgcn-amd-amdhsa--gfx9-generic",
                "hip-amdgcn-amd-amdhsa--gfx9-generic",
            ),
            (
                "hip-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc-",
                "hip-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc-",
            ),
            (
                "openmp-nvptx64-nvidia-cuda-sm_70",
                "openmp-nvptx64-nvidia-cuda--sm_70",
            ),
            ("openmp-nvptx64-nvidia-cuda", "openmp-nvptx64-nvidia-cuda--"),
            (
                "openmp-r600-amd-amdhsa--cayman",
                "openmp-r600-amd-amdhsa--cayman-",
            ),
            ("hip-amdgcn", "hip-amdgcn----"),
            ("openmp-nvptx64---", "openmp-nvptx64----openmp-nvptx64---"),
        ];
        for (given, want) in cases {
            assert_eq!(EntryId::parse_llvm19(given).as_str(), want, "{given}");
        }
    }

    #[test]
    fn validation_messages() {
        let e = EntryId::parse("foo").validate("foo").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid target 'foo', unknown offloading kind 'foo', unknown target triple '---'"
        );
        let e = EntryId::parse("cuda-nvptx64-nvidia-cuda--sm_70")
            .validate("cuda-nvptx64-nvidia-cuda--sm_70")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid target 'cuda-nvptx64-nvidia-cuda--sm_70', unknown offloading kind 'cuda'"
        );
        assert!(
            EntryId::parse("host-x86_64-unknown-linux")
                .validate("x")
                .is_ok()
        );
    }

    #[test]
    fn compatibility() {
        let c = |entry: &str, req: &str, ho: bool| {
            EntryId::parse(entry).is_compatible(&EntryId::parse(req).standardized(), ho)
        };
        assert!(c(
            "hip-amdgcn-amd-amdhsa--gfx906",
            "hipv4-amdgcn-amd-amdhsa--gfx906",
            false
        ));
        assert!(c(
            "hipv4-amdgcn-amd-amdhsa--gfx906",
            "hip-amdgcn-amd-amdhsa--gfx906",
            false
        ));
        assert!(!c(
            "hip-amdgcn-amd-amdhsa--gfx906",
            "openmp-amdgcn-amd-amdhsa--gfx906",
            false
        ));
        assert!(c(
            "hip-amdgcn-amd-amdhsa--gfx906",
            "openmp-amdgcn-amd-amdhsa--gfx906",
            true
        ));
        assert!(c(
            "hip-amdgcn-amd-amdhsa--gfx906",
            "hip-amdgcn-amd-amdhsa--gfx906:xnack+",
            false
        ));
        assert!(!c(
            "hip-amdgcn-amd-amdhsa--gfx906:xnack+",
            "hip-amdgcn-amd-amdhsa--gfx906",
            false
        ));
        assert!(c(
            "host-x86_64-unknown-linux--",
            "host-x86_64-unknown-linux",
            false
        ));
        assert!(!c(
            "host-x86_64-unknown-linux-gnu-",
            "host-x86_64-pc-linux-gnu",
            false
        ));
        // 22 drops the environment for amdhsa.
        assert!(c(
            "hip-amdgcn-amd-amdhsa--gfx906",
            "hip-amdgcn-amd-amdhsa-gnu-gfx906",
            false
        ));
    }

    #[test]
    fn conflicts() {
        let ids: Vec<EntryId> = [
            "hip-amdgcn-amd-amdhsa--gfx906",
            "hip-amdgcn-amd-amdhsa--gfx906:xnack+",
        ]
        .iter()
        .map(|s| EntryId::parse(s))
        .collect();
        assert_eq!(
            find_conflict(&ids),
            Some((
                "hip-amdgcn-amd-amdhsa--gfx906".to_owned(),
                "hip-amdgcn-amd-amdhsa--gfx906:xnack+".to_owned()
            ))
        );
        let ids: Vec<EntryId> = [
            "hip-amdgcn-amd-amdhsa--gfx906:xnack+",
            "hip-amdgcn-amd-amdhsa--gfx906:xnack-",
        ]
        .iter()
        .map(|s| EntryId::parse(s))
        .collect();
        assert_eq!(find_conflict(&ids), None);
    }
}
