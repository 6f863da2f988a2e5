//! Target IDs (`gfx90a:sramecc-:xnack+`): parsing, AMDGPU processor knowledge, compatibility
//! and the bundling-time conflict check.
//!
//! Mirrors, as of clang 19 and clang 22:
//! - `clang/lib/Basic/TargetID.cpp`: `parseTargetIDWithFormatCheckingOnly` ([`TargetId::parse`]),
//!   `parseTargetID` ([`parse_for`]), `getCanonicalTargetID` ([`TargetId::canonical`]) and
//!   `getConflictTargetIDCombination` ([`find_conflict`]);
//! - `llvm/lib/TargetParser/TargetParser.cpp`: the AMDGCN and R600 processor tables with their
//!   aliases, canonical names and the `FEATURE_XNACK` / `FEATURE_SRAMECC` bits
//!   ([`amdgpu_processors`]);
//! - the processor/feature half of `isCodeObjectCompatible` in
//!   `clang/lib/Driver/OffloadBundler.cpp` ([`is_compatible`]).
//!
//! The AMDGCN table, its aliases and every feature bit were checked against clang 19.1.7 and
//! 22.1.8 (`clang --target=amdgcn-amd-amdhsa -mcpu=<id>` rejects exactly the target IDs
//! `parseTargetID` rejects; `--offload-arch=<alias>` shows the canonical name; bundling and
//! unbundling with `clang-offload-bundler` shows compatibility and conflicts). The R600 table
//! is taken from the LLVM source only: no R600 processor name is in the bundler's offload-arch
//! table, so the bundler never parses one.
//!
//! The AMDGCN table is in `id/generated/amdgcn.rs`, written by `dev-tools/gen-tables` from
//! `llc -mcpu=help` and clang's answers to `-mcpu=<target ID>` (see `dev-tools/README.md`). The
//! R600 table below stays hand-written: `llc` lists only the canonical R600 names, so the
//! aliases cannot be read off a tool.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use crate::id::generated::amdgcn::AMDGCN;
use crate::llvm::LlvmVersion;

/// Which kind of triple a target ID is interpreted against (`llvm::Triple::isAMDGPU`, split
/// into its AMDGCN and R600 halves).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TargetArch {
    /// `amdgcn`: processors from the AMDGCN table, features `xnack`/`sramecc` where supported.
    Amdgcn,
    /// `r600`: processors from the R600 table, no target-ID features at all.
    R600,
    /// Any other architecture: any non-empty processor, no features at all.
    Other,
}

impl TargetArch {
    /// Classifies the architecture component of a triple as `llvm::Triple` parses it: exactly
    /// `amdgcn` or `r600` (case-sensitive, no sub-architectures); anything else is
    /// [`TargetArch::Other`].
    pub fn from_arch_name(arch: &str) -> TargetArch {
        match arch {
            "amdgcn" => TargetArch::Amdgcn,
            "r600" => TargetArch::R600,
            _ => TargetArch::Other,
        }
    }
}

/// A parsed target ID: a processor followed by `:feature+` / `:feature-` items, in the order
/// given.
///
/// Parsing checks the format only (see [`TargetId::parse`]); whether the processor exists and
/// supports the features is checked by [`parse_for`]. The original text is kept: [`Display`]
/// prints it unchanged and equality compares it, as the bundler compares entry IDs as strings.
///
/// [`Display`]: fmt::Display
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TargetId {
    text: String,
    processor_len: usize,
    features: Vec<(String, bool)>,
}

impl TargetId {
    /// Checks the format only, like clang's `parseTargetIDWithFormatCheckingOnly`.
    ///
    /// Accepted: the processor (everything before the first `:`), then `:`-separated items that
    /// each end in `+` or `-`, with each feature name at most once. Exactly like clang:
    /// - the empty string is accepted, with an empty processor and no features;
    /// - one trailing `:` is accepted (`gfx906:`, `gfx906:xnack+:`);
    /// - the processor and the feature names are not restricted otherwise; even an empty feature
    ///   name (`gfx906:+`) passes the format check (and then fails [`parse_for`]).
    ///
    /// Rejected ([`TargetIdErrorKind`]): an empty processor in front of a `:` (`:xnack+`), an
    /// empty item (`gfx906::xnack+`), an item without sign (`gfx906:xnack`) and a repeated
    /// feature (`gfx906:xnack+:xnack-`).
    pub fn parse(s: &str) -> Result<TargetId, TargetIdError> {
        let scan = scan(s);
        match scan.error {
            Some((kind, offset)) => Err(TargetIdError {
                input: s.to_owned(),
                kind,
                offset,
            }),
            None => Ok(TargetId {
                text: s.to_owned(),
                processor_len: scan.processor.len(),
                features: scan
                    .features
                    .into_iter()
                    .map(|(name, on)| (name.to_owned(), on))
                    .collect(),
            }),
        }
    }

    /// The processor as written (not canonicalized), e.g. `gfx90a`; empty for the empty target
    /// ID.
    pub fn processor(&self) -> &str {
        &self.text[..self.processor_len]
    }

    /// The features in the order given, each with its sign (`true` for `+`).
    pub fn features(&self) -> &[(String, bool)] {
        &self.features
    }

    /// The sign given for feature `name` (`true` for `+`), or `None` if it is not mentioned
    /// (which means "any").
    pub fn feature(&self, name: &str) -> Option<bool> {
        self.features
            .iter()
            .find(|(n, _)| n == name)
            .map(|&(_, on)| on)
    }

    /// The target ID exactly as it was parsed.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Canonical form as clang's `getCanonicalTargetID` builds it: the canonical processor name
    /// followed by the features sorted by name, e.g. `gfx90a:xnack+:sramecc-` →
    /// `gfx90a:sramecc-:xnack+`, `carrizo:xnack+` → `gfx801:xnack+`.
    ///
    /// AMDGCN aliases are resolved when the processor is in the AMDGCN table (of either clang);
    /// any other processor is kept as written. Use [`TargetId::canonical_for`] for R600 names.
    pub fn canonical(&self) -> String {
        self.canonical_for(TargetArch::Amdgcn)
    }

    /// Like [`TargetId::canonical`], resolving processor aliases with the table of `arch`
    /// (AMDGCN or R600; other architectures have no aliases). Processors unknown to that table
    /// are kept as written.
    pub fn canonical_for(&self, arch: TargetArch) -> String {
        let processor =
            canonical_processor(arch, None, self.processor()).unwrap_or(self.processor());
        let mut features: Vec<&(String, bool)> = self.features.iter().collect();
        features.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out = String::from(processor);
        for (name, on) in features {
            out.push(':');
            out.push_str(name);
            out.push(if *on { '+' } else { '-' });
        }
        out
    }
}

impl fmt::Display for TargetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for TargetId {
    type Err = TargetIdError;

    fn from_str(s: &str) -> Result<TargetId, TargetIdError> {
        TargetId::parse(s)
    }
}

/// What is wrong with a target ID that fails [`TargetId::parse`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TargetIdErrorKind {
    /// Nothing before the first `:` (e.g. `:xnack+`).
    EmptyProcessor,
    /// An empty item between two `:` (e.g. `gfx906::xnack+`).
    EmptyFeature,
    /// An item that does not end in `+` or `-` (e.g. `gfx906:xnack`).
    MissingSign,
    /// A feature given a second time (e.g. `gfx906:xnack+:xnack-`).
    DuplicateFeature,
}

/// A target ID that does not have the format `<processor>(:<feature>(+|-))*`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetIdError {
    input: String,
    kind: TargetIdErrorKind,
    offset: usize,
}

impl TargetIdError {
    /// What is wrong.
    pub fn kind(&self) -> TargetIdErrorKind {
        self.kind
    }

    /// Byte offset in the input of the offending part (0 for an empty processor, otherwise the
    /// start of the offending feature item).
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The rejected target ID.
    pub fn input(&self) -> &str {
        &self.input
    }

    fn item(&self) -> &str {
        let rest = &self.input[self.offset..];
        rest.split(':').next().unwrap_or("")
    }
}

impl fmt::Display for TargetIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid target ID '{}': ", self.input)?;
        match self.kind {
            TargetIdErrorKind::EmptyProcessor => {
                f.write_str("expected a processor name before the first ':'")?
            }
            TargetIdErrorKind::EmptyFeature => write!(
                f,
                "empty feature at byte {}; expected '<feature>+' or '<feature>-' after each ':'",
                self.offset
            )?,
            TargetIdErrorKind::MissingSign => write!(
                f,
                "feature '{}' at byte {} must end in '+' or '-'",
                self.item(),
                self.offset
            )?,
            TargetIdErrorKind::DuplicateFeature => {
                let item = self.item();
                write!(
                    f,
                    "feature '{}' at byte {} was already given; each feature may appear at most once",
                    &item[..item.len() - 1],
                    self.offset
                )?
            }
        }
        f.write_str(" (format: <processor>(:<feature>(+|-))*, e.g. 'gfx908:sramecc+:xnack-')")
    }
}

impl std::error::Error for TargetIdError {}

/// Result of the format scan, including what clang has already put into its feature map when
/// it gives up (the conflict check depends on that).
struct Scan<'a> {
    processor: &'a str,
    features: Vec<(&'a str, bool)>,
    error: Option<(TargetIdErrorKind, usize)>,
}

/// clang's `parseTargetIDWithFormatCheckingOnly`, step by step.
fn scan(s: &str) -> Scan<'_> {
    let mut out = Scan {
        processor: "",
        features: Vec::new(),
        error: None,
    };
    if s.is_empty() {
        return out;
    }
    let (processor, rest) = match s.find(':') {
        Some(i) => (&s[..i], Some(i + 1)),
        None => (s, None),
    };
    out.processor = processor;
    if processor.is_empty() {
        out.error = Some((TargetIdErrorKind::EmptyProcessor, 0));
        return out;
    }
    let Some(mut pos) = rest else {
        return out;
    };
    while pos < s.len() {
        let end = s[pos..].find(':').map_or(s.len(), |i| pos + i);
        let item = &s[pos..end];
        // clang reads the sign with `back()`; for an empty item (release build) that is the
        // preceding ':', so an empty item is rejected like a missing sign.
        let on = match item.as_bytes().last() {
            None => {
                out.error = Some((TargetIdErrorKind::EmptyFeature, pos));
                return out;
            }
            Some(b'+') => true,
            Some(b'-') => false,
            Some(_) => {
                out.error = Some((TargetIdErrorKind::MissingSign, pos));
                return out;
            }
        };
        let name = &item[..item.len() - 1];
        if out.features.iter().any(|&(n, _)| n == name) {
            out.error = Some((TargetIdErrorKind::DuplicateFeature, pos));
            return out;
        }
        out.features.push((name, on));
        pos = end + 1;
    }
    out
}

/// One AMDGCN processor of LLVM's TargetParser table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AmdGpuProcessor {
    /// Canonical name, e.g. `gfx803`.
    pub name: &'static str,
    /// Legacy names that resolve to this processor, e.g. `fiji`, `polaris10` (same in 19/22).
    pub aliases: &'static [&'static str],
    /// Supports the `xnack` target-ID feature (`FEATURE_XNACK`).
    pub xnack: bool,
    /// Supports the `sramecc` target-ID feature (`FEATURE_SRAMECC`).
    pub sramecc: bool,
    /// A generic target (`gfx9-generic`, …) rather than a real chip.
    pub generic: bool,
    /// Known to clang/LLVM 19.
    pub clang19: bool,
    /// Known to clang/LLVM 22.
    pub clang22: bool,
}

impl AmdGpuProcessor {
    /// Whether that clang's TargetParser knows this processor.
    pub fn known_by(&self, clang: LlvmVersion) -> bool {
        match clang {
            v if v.is_llvm19() => self.clang19,
            _ => self.clang22,
        }
    }

    /// The target-ID features this processor accepts, in alphabetical order (as clang's
    /// `getAllPossibleTargetIDFeatures` lists them).
    pub fn features(&self) -> &'static [&'static str] {
        match (self.sramecc, self.xnack) {
            (true, true) => &["sramecc", "xnack"],
            (true, false) => &["sramecc"],
            (false, true) => &["xnack"],
            (false, false) => &[],
        }
    }
}

pub(crate) const fn gpu(
    name: &'static str,
    aliases: &'static [&'static str],
    xnack: bool,
    sramecc: bool,
    clang19: bool,
    clang22: bool,
) -> AmdGpuProcessor {
    AmdGpuProcessor {
        name,
        aliases,
        xnack,
        sramecc,
        generic: false,
        clang19,
        clang22,
    }
}

pub(crate) const fn generic(
    name: &'static str,
    xnack: bool,
    sramecc: bool,
    clang19: bool,
    clang22: bool,
) -> AmdGpuProcessor {
    AmdGpuProcessor {
        name,
        aliases: &[],
        xnack,
        sramecc,
        generic: true,
        clang19,
        clang22,
    }
}

pub(crate) const X: bool = true;
pub(crate) const O: bool = false;

/// LLVM's R600 table: (name, canonical name). Same in 19 and 22 (source only, see module doc).
static R600: &[(&str, &str)] = &[
    ("r600", "r600"),
    ("rv630", "r600"),
    ("rv635", "r600"),
    ("r630", "r630"),
    ("rs780", "rs880"),
    ("rs880", "rs880"),
    ("rv610", "rs880"),
    ("rv620", "rs880"),
    ("rv670", "rv670"),
    ("rv710", "rv710"),
    ("rv730", "rv730"),
    ("rv740", "rv770"),
    ("rv770", "rv770"),
    ("cedar", "cedar"),
    ("palm", "cedar"),
    ("cypress", "cypress"),
    ("hemlock", "cypress"),
    ("juniper", "juniper"),
    ("redwood", "redwood"),
    ("sumo", "sumo"),
    ("sumo2", "sumo"),
    ("barts", "barts"),
    ("caicos", "caicos"),
    ("aruba", "cayman"),
    ("cayman", "cayman"),
    ("turks", "turks"),
];

/// All AMDGCN processors known to clang 19 or clang 22 (canonical entries; aliases are listed
/// in [`AmdGpuProcessor::aliases`]), including the generic targets.
pub fn amdgpu_processors() -> &'static [AmdGpuProcessor] {
    AMDGCN
}

/// Looks up an AMDGCN processor by canonical name or alias (exact, case-sensitive), as known to
/// clang 19 or clang 22. `generic`, `generic-hsa` and `amdgcnspirv` are not processors of
/// this table.
pub fn amdgpu_processor(name: &str) -> Option<&'static AmdGpuProcessor> {
    AMDGCN
        .iter()
        .find(|p| p.name == name || p.aliases.contains(&name))
}

/// Like [`amdgpu_processor`], but only processors that clang's TargetParser knows (e.g.
/// `gfx940` for clang 19 only, `gfx950` for clang 22 only).
pub fn amdgpu_processor_for(name: &str, clang: LlvmVersion) -> Option<&'static AmdGpuProcessor> {
    amdgpu_processor(name).filter(|p| p.known_by(clang))
}

/// The canonical name of an R600 processor or alias (`rv630` → `r600`), or `None`.
pub fn r600_canonical_name(name: &str) -> Option<&'static str> {
    R600.iter().find(|(n, _)| *n == name).map(|&(_, c)| c)
}

/// clang's `getCanonicalProcessorName`: `None` where clang returns the empty string.
fn canonical_processor(
    arch: TargetArch,
    clang: Option<LlvmVersion>,
    processor: &str,
) -> Option<&str> {
    match arch {
        TargetArch::Amdgcn => {
            let p = match clang {
                Some(c) => amdgpu_processor_for(processor, c),
                None => amdgpu_processor(processor),
            };
            p.map(|p| p.name)
        }
        TargetArch::R600 => r600_canonical_name(processor),
        TargetArch::Other => (!processor.is_empty()).then_some(processor),
    }
}

fn parse_checked(arch: TargetArch, clang: Option<LlvmVersion>, s: &str) -> Option<TargetId> {
    let id = TargetId::parse(s).ok()?;
    canonical_processor(arch, clang, id.processor())?;
    let supported: &[&str] = match arch {
        TargetArch::Amdgcn => amdgpu_processor(id.processor()).map_or(&[], |p| p.features()),
        TargetArch::R600 | TargetArch::Other => &[],
    };
    id.features
        .iter()
        .all(|(name, _)| supported.contains(&name.as_str()))
        .then_some(id)
}

/// clang's `parseTargetID(T, TargetID)`: `Some` iff `s` is a valid target ID for this kind of
/// triple.
///
/// - AMDGCN: the format is valid, the processor is a name or alias of the AMDGCN table (known
///   to clang 19 or 22) and every feature is one the processor supports (`xnack`, `sramecc`).
/// - R600: the processor is in the R600 table and there are no features.
/// - Other: the processor is non-empty and there are no features.
///
/// The empty target ID is never valid. The returned [`TargetId`] keeps the processor as
/// written; see [`TargetId::canonical_for`].
///
/// Using the union of both clangs' AMDGCN tables is safe for the bundler: a processor known to
/// only one clang is not in the other clang's offload-arch table either, so that clang's
/// bundler never hands it to `parseTargetID`. [`parse_for_clang`] is the exact per-version
/// variant.
pub fn parse_for(arch: TargetArch, s: &str) -> Option<TargetId> {
    parse_checked(arch, None, s)
}

/// Like [`parse_for`], but with the AMDGCN processors known to one clang only.
pub fn parse_for_clang(arch: TargetArch, clang: LlvmVersion, s: &str) -> Option<TargetId> {
    parse_checked(arch, Some(clang), s)
}

fn compatible(
    arch: TargetArch,
    clang: Option<LlvmVersion>,
    code_object: &str,
    requested: &str,
) -> bool {
    let (Some(co), Some(rq)) = (
        parse_checked(arch, clang, code_object),
        parse_checked(arch, clang, requested),
    ) else {
        return false;
    };
    if canonical_processor(arch, clang, co.processor())
        != canonical_processor(arch, clang, rq.processor())
    {
        return false;
    }
    if co.features.len() > rq.features.len() {
        return false;
    }
    co.features
        .iter()
        .all(|(name, on)| rq.feature(name) == Some(*on))
}

/// The processor/feature part of the bundler's `isCodeObjectCompatible` (spec A.7 rules 4–6):
/// whether a bundle entry with target ID `code_object` satisfies a request for `requested`.
///
/// Both must pass [`parse_for`] for `arch`, name the same canonical processor, the code object
/// must not have more features than the request, and every feature of the code object must
/// appear in the request with the same sign (a feature the code object leaves out means
/// "any"). So `gfx906` satisfies `gfx906:xnack+`, but `gfx906:xnack+` does not satisfy
/// `gfx906`.
///
/// The exact-match rule (rule 1: identical kind, triple and target ID strings are always
/// compatible, even when they do not parse) and the kind/triple rules belong to the entry ID
/// and are not applied here.
pub fn is_compatible(arch: TargetArch, code_object: &str, requested: &str) -> bool {
    compatible(arch, None, code_object, requested)
}

/// Like [`is_compatible`], with the AMDGCN processors known to one clang only.
pub fn is_compatible_for_clang(
    arch: TargetArch,
    clang: LlvmVersion,
    code_object: &str,
    requested: &str,
) -> bool {
    compatible(arch, Some(clang), code_object, requested)
}

/// The bundling-time conflict check of clang 19/22 (`getConflictTargetIDCombination`) within
/// ONE group of targets (same offload kind and triple), behaving like clang 22 for malformed
/// target IDs; see [`find_conflict_for_clang`].
///
/// Returns the conflicting pair `(first seen, later)` as given, for the message
/// `Cannot bundle inputs with conflicting targets: '<group>-<first>' and '<group>-<later>'`.
pub fn find_conflict<'a>(target_ids: &[&'a str]) -> Option<(&'a str, &'a str)> {
    find_conflict_for_clang(LlvmVersion::LLVM22, target_ids)
}

/// The bundling-time conflict check of the given clang within ONE group of targets.
///
/// The target IDs are deduplicated and visited in sorted (byte-wise) order. Each one is
/// format-checked only (processors are not canonicalized). The first ID seen for a processor
/// is remembered with its features; a later ID for the same processor conflicts if it has
/// **any feature not present in the remembered one** (signs are ignored). The rule is
/// asymmetric: `{gfx906:sramecc+:xnack+, gfx906:xnack+}` passes because the superset sorts
/// first, `{gfx906, gfx906:xnack+}` conflicts, `{gfx906:xnack+, gfx906:xnack-}` passes.
///
/// Malformed target IDs: clang dereferences an empty `std::optional` here (undefined
/// behaviour). What the released binaries do, and what this function reproduces (verified
/// with both bundlers): the malformed ID keeps the features clang had accepted before it gave
/// up, and is filed under whatever processor is left in the reused result slot:
/// - clang 22: the processor of the last well-formed ID visited;
/// - clang 19: the same, except that after an ID was filed under a new processor the slot
///   holds that whole ID string instead (a compiler temporary shares the slot), so a malformed
///   ID after `gfx906` is filed under `gfx906`, but after `gfx906:sramecc+` under the
///   (non-existent) processor `gfx906:sramecc+`.
///
/// Before any ID has filled the slot it holds stack garbage, modelled as a key that matches no
/// processor. Hence e.g. `{gfx906, gfx906:xnack}` passes but `{gfx906, gfx906:sramecc+:xnack}`
/// conflicts in both versions, and `{gfx906:sramecc-, gfx906:xnack+:sramecc}` conflicts only
/// in clang 22. Never panics.
pub fn find_conflict_for_clang<'a>(
    clang: LlvmVersion,
    target_ids: &[&'a str],
) -> Option<(&'a str, &'a str)> {
    struct Seen<'a> {
        id: &'a str,
        features: Vec<&'a str>,
    }
    let mut ids = target_ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    // `None` is the uninitialised slot.
    let mut slot: Option<&'a str> = None;
    let mut seen: HashMap<Option<&'a str>, Seen<'a>> = HashMap::new();
    for id in ids {
        let scan = scan(id);
        if scan.error.is_none() {
            slot = Some(scan.processor);
        }
        let features: Vec<&'a str> = scan.features.iter().map(|&(n, _)| n).collect();
        match seen.get(&slot) {
            Some(prev) => {
                if features.iter().any(|f| !prev.features.contains(f)) {
                    return Some((prev.id, id));
                }
            }
            None => {
                seen.insert(slot, Seen { id, features });
                if clang.is_llvm19() {
                    slot = Some(id);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feats(id: &TargetId) -> Vec<(&str, bool)> {
        id.features()
            .iter()
            .map(|(n, o)| (n.as_str(), *o))
            .collect()
    }

    #[test]
    fn format_check_accepts() {
        type Case = (&'static str, &'static str, &'static [(&'static str, bool)]);
        let cases: &[Case] = &[
            ("", "", &[]),
            ("gfx906", "gfx906", &[]),
            ("gfx906:", "gfx906", &[]),
            ("gfx906:xnack+", "gfx906", &[("xnack", true)]),
            ("gfx906:xnack+:", "gfx906", &[("xnack", true)]),
            (
                "gfx90a:xnack+:sramecc-",
                "gfx90a",
                &[("xnack", true), ("sramecc", false)],
            ),
            ("gfx906:+", "gfx906", &[("", true)]),
            ("gfx906:foo-", "gfx906", &[("foo", false)]),
            ("gfx906:a+b+", "gfx906", &[("a+b", true)]),
            ("sm_70", "sm_70", &[]),
            ("hip-amdgcn-amd-amdhsa-", "hip-amdgcn-amd-amdhsa-", &[]),
        ];
        for &(s, proc, fs) in cases {
            let id = TargetId::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"));
            assert_eq!(id.processor(), proc, "{s:?}");
            assert_eq!(feats(&id), fs, "{s:?}");
            assert_eq!(id.to_string(), s);
            assert_eq!(id.as_str(), s);
            assert_eq!(s.parse::<TargetId>().unwrap(), id);
        }
    }

    #[test]
    fn format_check_rejects() {
        use TargetIdErrorKind::*;
        let cases: &[(&str, TargetIdErrorKind, usize)] = &[
            (":xnack+", EmptyProcessor, 0),
            (":", EmptyProcessor, 0),
            ("gfx906::xnack+", EmptyFeature, 7),
            ("gfx906:xnack+::", EmptyFeature, 14),
            ("gfx906:xnack", MissingSign, 7),
            ("gfx906:xnack+:sramecc", MissingSign, 14),
            ("gfx906:xnack+:xnack-", DuplicateFeature, 14),
            ("gfx906:xnack+:xnack+", DuplicateFeature, 14),
            ("gfx906:é", MissingSign, 7),
        ];
        for &(s, kind, offset) in cases {
            let e = TargetId::parse(s).expect_err(s);
            assert_eq!(
                (e.kind(), e.offset(), e.input()),
                (kind, offset, s),
                "{s:?}"
            );
            let msg = e.to_string();
            assert!(
                msg.starts_with(&format!("invalid target ID '{s}': ")),
                "{msg}"
            );
            assert!(msg.contains("<processor>(:<feature>(+|-))*"), "{msg}");
        }
        let e = TargetId::parse("gfx906:xnack").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid target ID 'gfx906:xnack': feature 'xnack' at byte 7 must end in '+' or '-' \
             (format: <processor>(:<feature>(+|-))*, e.g. 'gfx908:sramecc+:xnack-')"
        );
        let e = TargetId::parse("gfx906:xnack+:xnack-").unwrap_err();
        assert!(
            e.to_string()
                .contains("feature 'xnack' at byte 14 was already given")
        );
    }

    #[test]
    fn accessors_and_canonical() {
        let id = TargetId::parse("gfx90a:xnack+:sramecc-").unwrap();
        assert_eq!(id.feature("xnack"), Some(true));
        assert_eq!(id.feature("sramecc"), Some(false));
        assert_eq!(id.feature("foo"), None);
        assert_eq!(id.canonical(), "gfx90a:sramecc-:xnack+");
        assert_eq!(id.to_string(), "gfx90a:xnack+:sramecc-");
        let canon = [
            ("gfx906", "gfx906"),
            ("gfx906:", "gfx906"),
            ("carrizo:xnack+", "gfx801:xnack+"),
            ("fiji", "gfx803"),
            ("tahiti", "gfx600"),
            ("gfx9-generic:xnack-", "gfx9-generic:xnack-"),
            ("sm_70", "sm_70"),
            ("unknown:b+:a-", "unknown:a-:b+"),
            ("rv630", "rv630"),
        ];
        for (s, c) in canon {
            assert_eq!(TargetId::parse(s).unwrap().canonical(), c, "{s}");
        }
        let r = TargetId::parse("rv630").unwrap();
        assert_eq!(r.canonical_for(TargetArch::R600), "r600");
        assert_eq!(
            TargetId::parse("fiji")
                .unwrap()
                .canonical_for(TargetArch::Other),
            "fiji"
        );
        assert_eq!(TargetArch::from_arch_name("amdgcn"), TargetArch::Amdgcn);
        assert_eq!(TargetArch::from_arch_name("r600"), TargetArch::R600);
        assert_eq!(TargetArch::from_arch_name("nvptx64"), TargetArch::Other);
        assert_eq!(TargetArch::from_arch_name("AMDGCN"), TargetArch::Other);
    }

    /// `clang --target=amdgcn-amd-amdhsa -mcpu=<id>` per version (it runs `parseTargetID`):
    /// (processor, 19 accepts it, 19 accepts `:xnack+`, 19 accepts `:sramecc+`, the same for 22).
    /// The feature columns also match unbundling `<p>` with `-targets=…<p>:xnack+` / `:sramecc+`
    /// for every processor in that bundler's offload-arch table.
    const OBSERVED_MCPU: &[(&str, bool, bool, bool, bool, bool, bool)] = &[
        ("gfx9-4-generic", false, false, false, true, true, true),
        ("gfx9-generic", true, true, false, true, true, false),
        ("gfx10-1-generic", true, true, false, true, true, false),
        ("gfx10-3-generic", true, false, false, true, false, false),
        ("gfx11-generic", true, false, false, true, false, false),
        ("gfx12-5-generic", false, false, false, false, false, false),
        ("gfx12-generic", true, false, false, true, false, false),
        ("gfx13-generic", false, false, false, false, false, false),
        ("gfx90a", true, true, true, true, true, true),
        ("gfx90c", true, true, false, true, true, false),
        ("gfx600", true, false, false, true, false, false),
        ("gfx601", true, false, false, true, false, false),
        ("gfx602", true, false, false, true, false, false),
        ("gfx700", true, false, false, true, false, false),
        ("gfx701", true, false, false, true, false, false),
        ("gfx702", true, false, false, true, false, false),
        ("gfx703", true, false, false, true, false, false),
        ("gfx704", true, false, false, true, false, false),
        ("gfx705", true, false, false, true, false, false),
        ("gfx801", true, true, false, true, true, false),
        ("gfx802", true, false, false, true, false, false),
        ("gfx803", true, false, false, true, false, false),
        ("gfx805", true, false, false, true, false, false),
        ("gfx810", true, true, false, true, true, false),
        ("gfx900", true, true, false, true, true, false),
        ("gfx902", true, true, false, true, true, false),
        ("gfx904", true, true, false, true, true, false),
        ("gfx906", true, true, true, true, true, true),
        ("gfx908", true, true, true, true, true, true),
        ("gfx909", true, true, false, true, true, false),
        ("gfx940", true, true, true, false, false, false),
        ("gfx941", true, true, true, false, false, false),
        ("gfx942", true, true, true, true, true, true),
        ("gfx950", false, false, false, true, true, true),
        ("gfx1010", true, true, false, true, true, false),
        ("gfx1011", true, true, false, true, true, false),
        ("gfx1012", true, true, false, true, true, false),
        ("gfx1013", true, true, false, true, true, false),
        ("gfx1030", true, false, false, true, false, false),
        ("gfx1031", true, false, false, true, false, false),
        ("gfx1032", true, false, false, true, false, false),
        ("gfx1033", true, false, false, true, false, false),
        ("gfx1034", true, false, false, true, false, false),
        ("gfx1035", true, false, false, true, false, false),
        ("gfx1036", true, false, false, true, false, false),
        ("gfx1100", true, false, false, true, false, false),
        ("gfx1101", true, false, false, true, false, false),
        ("gfx1102", true, false, false, true, false, false),
        ("gfx1103", true, false, false, true, false, false),
        ("gfx1150", true, false, false, true, false, false),
        ("gfx1151", true, false, false, true, false, false),
        ("gfx1152", true, false, false, true, false, false),
        ("gfx1153", false, false, false, true, false, false),
        ("gfx1200", true, false, false, true, false, false),
        ("gfx1201", true, false, false, true, false, false),
        ("gfx1250", false, false, false, true, false, false),
        ("gfx1251", false, false, false, true, false, false),
        ("generic", false, false, false, false, false, false),
        ("generic-hsa", false, false, false, false, false, false),
        ("amdgcnspirv", false, false, false, false, false, false),
        ("gfx1105", false, false, false, false, false, false),
        ("gfx1170", false, false, false, false, false, false),
        // Aliases: accepted by both, canonical names checked in `aliases_resolve`.
        ("tahiti", true, false, false, true, false, false),
        ("pitcairn", true, false, false, true, false, false),
        ("verde", true, false, false, true, false, false),
        ("hainan", true, false, false, true, false, false),
        ("oland", true, false, false, true, false, false),
        ("kaveri", true, false, false, true, false, false),
        ("hawaii", true, false, false, true, false, false),
        ("kabini", true, false, false, true, false, false),
        ("mullins", true, false, false, true, false, false),
        ("bonaire", true, false, false, true, false, false),
        ("carrizo", true, true, false, true, true, false),
        ("iceland", true, false, false, true, false, false),
        ("tonga", true, false, false, true, false, false),
        ("fiji", true, false, false, true, false, false),
        ("polaris10", true, false, false, true, false, false),
        ("polaris11", true, false, false, true, false, false),
        ("tongapro", true, false, false, true, false, false),
        ("stoney", true, true, false, true, true, false),
    ];

    #[test]
    fn parse_for_amdgcn_matches_clang() {
        for &(p, m19, x19, s19, m22, x22, s22) in OBSERVED_MCPU {
            for (clang, m, x, s) in [
                (LlvmVersion::LLVM19, m19, x19, s19),
                (LlvmVersion::LLVM22, m22, x22, s22),
            ] {
                let ok = |id: String| parse_for_clang(TargetArch::Amdgcn, clang, &id).is_some();
                assert_eq!(ok(p.to_string()), m, "{clang:?} {p}");
                assert_eq!(ok(format!("{p}:xnack+")), x, "{clang:?} {p}:xnack+");
                assert_eq!(ok(format!("{p}:xnack-")), x, "{clang:?} {p}:xnack-");
                assert_eq!(ok(format!("{p}:sramecc+")), s, "{clang:?} {p}:sramecc+");
                assert_eq!(
                    ok(format!("{p}:sramecc-:xnack+")),
                    s && x,
                    "{clang:?} {p}:sramecc-:xnack+"
                );
                assert!(!ok(format!("{p}:foo+")));
                // The union accepts what either version accepts.
                if m {
                    assert!(parse_for(TargetArch::Amdgcn, p).is_some());
                }
            }
            assert_eq!(
                parse_for(TargetArch::Amdgcn, p).is_some(),
                m19 || m22,
                "union {p}"
            );
        }
        // Format errors observed as "invalid target ID" by both clangs.
        for s in [
            "gfx906:xnack",
            "gfx906:xnack+:xnack-",
            "gfx906::xnack+",
            "gfx906:+",
            "gfx906:foo+",
            "",
        ] {
            assert!(parse_for(TargetArch::Amdgcn, s).is_none(), "{s}");
        }
        // ... and accepted ones.
        for s in ["gfx906:", "gfx906:xnack+", "gfx906:sramecc+:xnack-"] {
            assert!(parse_for(TargetArch::Amdgcn, s).is_some(), "{s}");
        }
    }

    #[test]
    fn processor_table_matches_observations() {
        // Every processor in the table is accepted by exactly the clangs it claims, with the
        // features it claims (checked against the observation rows above).
        for p in amdgpu_processors() {
            let row = OBSERVED_MCPU
                .iter()
                .find(|r| r.0 == p.name)
                .unwrap_or_else(|| panic!("{} not observed", p.name));
            assert_eq!((p.clang19, p.clang22), (row.1, row.4), "{}", p.name);
            if p.clang19 {
                assert_eq!((p.xnack, p.sramecc), (row.2, row.3), "{}", p.name);
            }
            if p.clang22 {
                assert_eq!((p.xnack, p.sramecc), (row.5, row.6), "{}", p.name);
            }
            assert_eq!(p.generic, p.name.ends_with("-generic"), "{}", p.name);
            assert_eq!(amdgpu_processor(p.name), Some(p));
        }
        for name in [
            "gfx9-generic",
            "gfx9-4-generic",
            "gfx10-1-generic",
            "gfx10-3-generic",
            "gfx11-generic",
            "gfx12-generic",
        ] {
            assert!(amdgpu_processor(name).is_some_and(|p| p.generic), "{name}");
        }
        // The canonical names equal `clang -print-supported-cpus` (gfx*) of each version.
        let n19 = amdgpu_processors().iter().filter(|p| p.clang19).count();
        let n22 = amdgpu_processors().iter().filter(|p| p.clang22).count();
        assert_eq!((n19, n22), (50, 53));
        assert_eq!(
            amdgpu_processor("gfx906").unwrap().features(),
            ["sramecc", "xnack"]
        );
        assert_eq!(amdgpu_processor("gfx900").unwrap().features(), ["xnack"]);
        assert!(amdgpu_processor("gfx1030").unwrap().features().is_empty());
        assert!(amdgpu_processor_for("gfx940", LlvmVersion::LLVM19).is_some());
        assert!(amdgpu_processor_for("gfx940", LlvmVersion::LLVM22).is_none());
        assert!(amdgpu_processor_for("gfx950", LlvmVersion::LLVM19).is_none());
        assert!(amdgpu_processor_for("gfx950", LlvmVersion::LLVM22).is_some());
        for name in ["generic", "generic-hsa", "amdgcnspirv", "GFX906", "r600"] {
            assert!(amdgpu_processor(name).is_none(), "{name}");
        }
    }

    #[test]
    fn aliases_resolve() {
        // Observed: `clang -x hip --offload-arch=<alias>` passes `-target-cpu <canonical>`
        // (19 and 22 alike).
        let observed = [
            ("bonaire", "gfx704"),
            ("carrizo", "gfx801"),
            ("fiji", "gfx803"),
            ("hainan", "gfx602"),
            ("hawaii", "gfx701"),
            ("iceland", "gfx802"),
            ("kabini", "gfx703"),
            ("kaveri", "gfx700"),
            ("mullins", "gfx703"),
            ("oland", "gfx602"),
            ("pitcairn", "gfx601"),
            ("polaris10", "gfx803"),
            ("polaris11", "gfx803"),
            ("stoney", "gfx810"),
            ("tahiti", "gfx600"),
            ("tonga", "gfx802"),
            ("tongapro", "gfx805"),
            ("verde", "gfx601"),
        ];
        for (alias, canonical) in observed {
            assert_eq!(amdgpu_processor(alias).map(|p| p.name), Some(canonical));
        }
        let n_aliases: usize = amdgpu_processors().iter().map(|p| p.aliases.len()).sum();
        assert_eq!(n_aliases, observed.len());
        // An alias and its canonical name are the same processor for compatibility.
        assert!(is_compatible(
            TargetArch::Amdgcn,
            "carrizo",
            "gfx801:xnack+"
        ));
        assert!(is_compatible(
            TargetArch::Amdgcn,
            "gfx801:xnack-",
            "carrizo:xnack-"
        ));
    }

    #[test]
    fn r600_and_other_triples() {
        assert_eq!(r600_canonical_name("rv630"), Some("r600"));
        assert_eq!(r600_canonical_name("aruba"), Some("cayman"));
        assert_eq!(r600_canonical_name("gfx906"), None);
        assert!(parse_for(TargetArch::R600, "cayman").is_some());
        assert!(parse_for(TargetArch::R600, "hemlock").is_some());
        assert!(parse_for(TargetArch::R600, "cayman:xnack+").is_none());
        assert!(parse_for(TargetArch::R600, "gfx906").is_none());
        assert!(is_compatible(TargetArch::R600, "hemlock", "cypress"));
        assert!(parse_for(TargetArch::Other, "sm_70").is_some());
        assert!(parse_for(TargetArch::Other, "anything").is_some());
        assert!(parse_for(TargetArch::Other, "sm_70:").is_some());
        assert!(parse_for(TargetArch::Other, "sm_70:xnack+").is_none());
        assert!(parse_for(TargetArch::Other, "").is_none());
        assert!(parse_for(TargetArch::Amdgcn, "").is_none());
        assert!(!is_compatible(TargetArch::Other, "", ""));
    }

    /// Target IDs of the observed compatibility matrix (bundle entry × request, every ordered
    /// pair of distinct IDs; `hip-amdgcn-amd-amdhsa--<id>` with clang 19 and 22; clang 19 without
    /// the dashed generic names, which its parser mangles). Both versions agree on every pair.
    const MATRIX_AMDGCN: &[&str] = &[
        "gfx906",
        "gfx906:xnack+",
        "gfx906:xnack-",
        "gfx906:sramecc+",
        "gfx906:sramecc-",
        "gfx906:sramecc+:xnack+",
        "gfx906:xnack+:sramecc+",
        "gfx906:sramecc-:xnack+",
        "gfx906:xnack+:sramecc-",
        "gfx906:xnack",
        "gfx906:",
        "gfx906:xnack+:",
        "gfx906:xnack+:xnack+",
        "gfx906:foo+",
        "gfx900",
        "gfx900:xnack+",
        "gfx900:sramecc+",
        "gfx1030",
        "gfx1030:xnack+",
        "gfx90a:xnack-",
        "gfx90a:sramecc+:xnack-",
        "gfx9-generic",
        "gfx9-generic:xnack+",
    ];

    /// The pairs (entry, request) of [`MATRIX_AMDGCN`] that were extracted; all others were not.
    const COMPATIBLE_AMDGCN: &[(&str, &str)] = &[
        ("gfx906", "gfx906:xnack+"),
        ("gfx906", "gfx906:xnack-"),
        ("gfx906", "gfx906:sramecc+"),
        ("gfx906", "gfx906:sramecc-"),
        ("gfx906", "gfx906:sramecc+:xnack+"),
        ("gfx906", "gfx906:xnack+:sramecc+"),
        ("gfx906", "gfx906:sramecc-:xnack+"),
        ("gfx906", "gfx906:xnack+:sramecc-"),
        ("gfx906", "gfx906:"),
        ("gfx906", "gfx906:xnack+:"),
        ("gfx906:xnack+", "gfx906:sramecc+:xnack+"),
        ("gfx906:xnack+", "gfx906:xnack+:sramecc+"),
        ("gfx906:xnack+", "gfx906:sramecc-:xnack+"),
        ("gfx906:xnack+", "gfx906:xnack+:sramecc-"),
        ("gfx906:xnack+", "gfx906:xnack+:"),
        ("gfx906:sramecc+", "gfx906:sramecc+:xnack+"),
        ("gfx906:sramecc+", "gfx906:xnack+:sramecc+"),
        ("gfx906:sramecc-", "gfx906:sramecc-:xnack+"),
        ("gfx906:sramecc-", "gfx906:xnack+:sramecc-"),
        ("gfx906:sramecc+:xnack+", "gfx906:xnack+:sramecc+"),
        ("gfx906:xnack+:sramecc+", "gfx906:sramecc+:xnack+"),
        ("gfx906:sramecc-:xnack+", "gfx906:xnack+:sramecc-"),
        ("gfx906:xnack+:sramecc-", "gfx906:sramecc-:xnack+"),
        ("gfx906:", "gfx906"),
        ("gfx906:", "gfx906:xnack+"),
        ("gfx906:", "gfx906:xnack-"),
        ("gfx906:", "gfx906:sramecc+"),
        ("gfx906:", "gfx906:sramecc-"),
        ("gfx906:", "gfx906:sramecc+:xnack+"),
        ("gfx906:", "gfx906:xnack+:sramecc+"),
        ("gfx906:", "gfx906:sramecc-:xnack+"),
        ("gfx906:", "gfx906:xnack+:sramecc-"),
        ("gfx906:", "gfx906:xnack+:"),
        ("gfx906:xnack+:", "gfx906:xnack+"),
        ("gfx906:xnack+:", "gfx906:sramecc+:xnack+"),
        ("gfx906:xnack+:", "gfx906:xnack+:sramecc+"),
        ("gfx906:xnack+:", "gfx906:sramecc-:xnack+"),
        ("gfx906:xnack+:", "gfx906:xnack+:sramecc-"),
        ("gfx900", "gfx900:xnack+"),
        ("gfx90a:xnack-", "gfx90a:sramecc+:xnack-"),
        ("gfx9-generic", "gfx9-generic:xnack+"),
    ];

    fn check_matrix(arch: TargetArch, ids: &[&str], compatible: &[(&str, &str)]) {
        for &e in ids {
            for &r in ids {
                if e == r {
                    continue;
                }
                let want = compatible.contains(&(e, r));
                assert_eq!(is_compatible(arch, e, r), want, "{arch:?} {e} -> {r}");
                for clang in LlvmVersion::REFERENCES {
                    assert_eq!(
                        is_compatible_for_clang(arch, clang, e, r),
                        want,
                        "{clang:?} {arch:?} {e} -> {r}"
                    );
                }
            }
        }
    }

    #[test]
    fn observed_compatibility_matrix() {
        check_matrix(TargetArch::Amdgcn, MATRIX_AMDGCN, COMPATIBLE_AMDGCN);
        // openmp-nvptx64-nvidia-cuda--<id>
        check_matrix(
            TargetArch::Other,
            &[
                "sm_70",
                "sm_70:",
                "sm_70:xnack+",
                "sm_70:sm+",
                "sm_80",
                "generic",
            ],
            &[("sm_70", "sm_70:"), ("sm_70:", "sm_70")],
        );
        // openmp-r600-amd-amdhsa--<id>: gfx names are no R600 processors, nothing is compatible
        // unless the strings are identical (rule 1, not applied here).
        check_matrix(
            TargetArch::R600,
            &["gfx906", "gfx906:", "gfx906:xnack+", "generic"],
            &[],
        );
    }

    #[test]
    fn spec_a7_matrix() {
        let a = TargetArch::Amdgcn;
        // bundle entry -> requested
        assert!(is_compatible(a, "gfx906", "gfx906:xnack+"));
        assert!(!is_compatible(a, "gfx906:xnack+", "gfx906"));
        assert!(!is_compatible(a, "gfx906:xnack+", "gfx906:xnack-"));
        assert!(is_compatible(a, "gfx906:xnack+", "gfx906:sramecc+:xnack+"));
        assert!(!is_compatible(a, "gfx906:sramecc-:xnack+", "gfx906:xnack+"));
        assert!(is_compatible(
            a,
            "gfx906:sramecc-:xnack+",
            "gfx906:xnack+:sramecc-"
        ));
        assert!(!is_compatible(a, "gfx906:xnack", "gfx906"));
        // hip/hipv4, hip/openmp and the env rows differ only in kind/triple; the processor
        // part is compatible.
        assert!(is_compatible(a, "gfx906", "gfx906"));
        // No generic -> specific mapping.
        assert!(!is_compatible(a, "gfx9-generic", "gfx906"));
        assert!(!is_compatible(a, "gfx906", "gfx9-generic"));
    }

    #[test]
    fn feature_support_per_processor_spec_a7() {
        let both: &[&str] = &[
            "gfx906",
            "gfx908",
            "gfx90a",
            "gfx942",
            "gfx950",
            "gfx940",
            "gfx941",
            "gfx9-4-generic",
        ];
        let xnack_only: &[&str] = &[
            "gfx801",
            "gfx810",
            "gfx900",
            "gfx902",
            "gfx904",
            "gfx909",
            "gfx90c",
            "gfx1010",
            "gfx1011",
            "gfx1012",
            "gfx1013",
            "gfx9-generic",
            "gfx10-1-generic",
        ];
        for p in amdgpu_processors() {
            let want = if both.contains(&p.name) {
                (true, true)
            } else if xnack_only.contains(&p.name) {
                (true, false)
            } else {
                (false, false)
            };
            assert_eq!((p.xnack, p.sramecc), want, "{}", p.name);
        }
    }

    /// Observed bundling results: (target IDs, clang 19 conflict, clang 22 conflict).
    #[allow(clippy::type_complexity)]
    const OBSERVED_CONFLICTS: &[(&[&str], Option<(&str, &str)>, Option<(&str, &str)>)] = &[
        // Well-formed IDs (spec A.7 examples first).
        (
            &["gfx906", "gfx906:xnack+"],
            Some(("gfx906", "gfx906:xnack+")),
            Some(("gfx906", "gfx906:xnack+")),
        ),
        (
            &["gfx906:xnack+", "gfx906"],
            Some(("gfx906", "gfx906:xnack+")),
            Some(("gfx906", "gfx906:xnack+")),
        ),
        (&["gfx906:sramecc+:xnack+", "gfx906:xnack+"], None, None),
        (&["gfx906:xnack+", "gfx906:xnack-"], None, None),
        (
            &["gfx906:xnack-", "gfx906:xnack+", "gfx906:sramecc+:xnack+"],
            None,
            None,
        ),
        (
            &["gfx906:sramecc+", "gfx906:xnack+"],
            Some(("gfx906:sramecc+", "gfx906:xnack+")),
            Some(("gfx906:sramecc+", "gfx906:xnack+")),
        ),
        (
            &["gfx906:xnack+:sramecc+", "gfx906:sramecc+:xnack+"],
            None,
            None,
        ),
        (&["gfx906", "gfx908:xnack+"], None, None),
        (&["gfx906", "gfx906:"], None, None),
        (
            &["gfx906:", "gfx906:xnack+"],
            Some(("gfx906:", "gfx906:xnack+")),
            Some(("gfx906:", "gfx906:xnack+")),
        ),
        (
            &["gfx90a:sramecc-:xnack+", "gfx90a:xnack+", "gfx90a"],
            Some(("gfx90a", "gfx90a:sramecc-:xnack+")),
            Some(("gfx90a", "gfx90a:sramecc-:xnack+")),
        ),
        (
            &["gfx1030", "gfx1031", "gfx1030:foo+"],
            Some(("gfx1030", "gfx1030:foo+")),
            Some(("gfx1030", "gfx1030:foo+")),
        ),
        (
            &["gfx906:xnack+", "gfx906:+"],
            Some(("gfx906:+", "gfx906:xnack+")),
            Some(("gfx906:+", "gfx906:xnack+")),
        ),
        (
            &[
                "gfx900:xnack+",
                "gfx906",
                "gfx906:sramecc+",
                "gfx906:xnack+:bad",
            ],
            Some(("gfx906", "gfx906:sramecc+")),
            Some(("gfx906", "gfx906:sramecc+")),
        ),
        // Malformed IDs (undefined behaviour in clang; see `find_conflict_for_clang`).
        (&["gfx906", "gfx906:xnack"], None, None),
        (
            &["gfx906:sramecc+:xnack", "gfx906"],
            Some(("gfx906", "gfx906:sramecc+:xnack")),
            Some(("gfx906", "gfx906:sramecc+:xnack")),
        ),
        (&["gfx906:xnack", "gfx906:xnack+"], None, None),
        (
            &["gfx906:xnack+:sramecc", "gfx906:sramecc+"],
            None,
            Some(("gfx906:sramecc+", "gfx906:xnack+:sramecc")),
        ),
        (
            &["gfx906:xnack+:xnack-", "gfx906"],
            Some(("gfx906", "gfx906:xnack+:xnack-")),
            Some(("gfx906", "gfx906:xnack+:xnack-")),
        ),
        (&["gfx906::xnack+", "gfx906:sramecc+"], None, None),
        (
            &["gfx906", "gfx906:xnack+:sramecc"],
            Some(("gfx906", "gfx906:xnack+:sramecc")),
            Some(("gfx906", "gfx906:xnack+:sramecc")),
        ),
        (
            &["gfx906:sramecc-", "gfx906:xnack+:sramecc"],
            None,
            Some(("gfx906:sramecc-", "gfx906:xnack+:sramecc")),
        ),
        (
            &["gfx900", "gfx906:sramecc+:xnack"],
            Some(("gfx900", "gfx906:sramecc+:xnack")),
            Some(("gfx900", "gfx906:sramecc+:xnack")),
        ),
        (
            &["gfx906:sramecc+", "gfx906:xnack+:xnack+"],
            None,
            Some(("gfx906:sramecc+", "gfx906:xnack+:xnack+")),
        ),
        (
            &["gfx900", "gfx906:sramecc+", "gfx906:xnack+:bad"],
            None,
            Some(("gfx906:sramecc+", "gfx906:xnack+:bad")),
        ),
        (
            &["gfx906:sramecc+", "gfx906:xnack+:bad", "gfx906:zz+:bad"],
            None,
            Some(("gfx906:sramecc+", "gfx906:xnack+:bad")),
        ),
        (
            &["gfx906:xnack", "gfx906:zz+:bad"],
            None,
            Some(("gfx906:xnack", "gfx906:zz+:bad")),
        ),
        (
            &["gfx906:xnack", "gfx906:zz+:bad", "gfx906:yy+:bad"],
            None,
            Some(("gfx906:xnack", "gfx906:yy+:bad")),
        ),
        (
            &["gfx906:sramecc+:xnack", "gfx906:sramecc+:xnack+:bad"],
            None,
            Some(("gfx906:sramecc+:xnack", "gfx906:sramecc+:xnack+:bad")),
        ),
        (
            &["gfx1030", "gfx906:xnack+:bad", "gfx906"],
            Some(("gfx906", "gfx906:xnack+:bad")),
            Some(("gfx906", "gfx906:xnack+:bad")),
        ),
        (
            &[
                "gfx906:sramecc+",
                "gfx906:sramecc+:xnack",
                "gfx906:tt+:xnack",
            ],
            None,
            Some(("gfx906:sramecc+", "gfx906:tt+:xnack")),
        ),
        (
            &["gfx906:xnack", "gfx906:xnack+", "gfx906:xnack-"],
            None,
            None,
        ),
        (
            &[
                "gfx906:sramecc+",
                "gfx906:sramecc+:xnack+:bad",
                "gfx906:sramecc+:xnack+:zz+:bad",
            ],
            None,
            Some(("gfx906:sramecc+", "gfx906:sramecc+:xnack+:bad")),
        ),
        (&["gfx906:xnack+", "gfx906:xnack+:zz"], None, None),
        (
            &["gfx906:xnack+", "gfx906:xnack+:zz", "gfx906:xnack+:zz+:q"],
            None,
            Some(("gfx906:xnack+", "gfx906:xnack+:zz+:q")),
        ),
        (
            &["gfx900", "gfx906:xnack+", "gfx906:zz+:q", "gfx906:zz+:q2"],
            None,
            Some(("gfx906:xnack+", "gfx906:zz+:q")),
        ),
        (
            &["gfx900", "gfx906:xnack", "gfx906:zz+:q"],
            Some(("gfx900", "gfx906:zz+:q")),
            Some(("gfx900", "gfx906:zz+:q")),
        ),
        (
            &["gfx906:xnack+", "gfx906:xnack-", "gfx906:zz+:q"],
            Some(("gfx906:xnack+", "gfx906:zz+:q")),
            Some(("gfx906:xnack+", "gfx906:zz+:q")),
        ),
        (
            &[
                "gfx906:xnack+",
                "gfx906:xnack+:zz",
                "gfx906:xnack+:zz+:q",
                "gfx906:yy+:q",
            ],
            None,
            Some(("gfx906:xnack+", "gfx906:xnack+:zz+:q")),
        ),
        (
            &["gfx906", "gfx906:zz+:q"],
            Some(("gfx906", "gfx906:zz+:q")),
            Some(("gfx906", "gfx906:zz+:q")),
        ),
    ];

    #[test]
    fn observed_conflicts() {
        for &(ids, c19, c22) in OBSERVED_CONFLICTS {
            assert_eq!(
                find_conflict_for_clang(LlvmVersion::LLVM19, ids),
                c19,
                "19 {ids:?}"
            );
            assert_eq!(
                find_conflict_for_clang(LlvmVersion::LLVM22, ids),
                c22,
                "22 {ids:?}"
            );
            assert_eq!(find_conflict(ids), c22, "{ids:?}");
        }
    }

    #[test]
    fn conflict_edge_cases() {
        assert_eq!(find_conflict(&[]), None);
        assert_eq!(find_conflict(&["gfx906"]), None);
        // Duplicates collapse like std::set does.
        assert_eq!(find_conflict(&["gfx906:xnack+", "gfx906:xnack+"]), None);
        // The empty target ID (entries without one) is its own processor.
        assert_eq!(
            find_conflict(&["", "gfx906", "gfx906:xnack-"]),
            Some(("gfx906", "gfx906:xnack-"))
        );
        assert_eq!(find_conflict(&["", ":xnack+", "gfx906"]), None);
        // Processors are not canonicalized.
        assert_eq!(find_conflict(&["fiji", "gfx803:xnack+"]), None);
        // Returned strings borrow from the input.
        let owned = [String::from("gfx906"), String::from("gfx906:sramecc-")];
        let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
        let (a, b) = find_conflict(&refs).unwrap();
        assert!(std::ptr::eq(a, refs[0]) && std::ptr::eq(b, refs[1]));
    }
}
