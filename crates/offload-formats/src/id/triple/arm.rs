//! The pieces of LLVM's ARM target parser (`ARMTargetParser.cpp`,
//! `ARMTargetParserCommon.cpp`, `ARMTargetParser.def`) that `Triple` uses.
//! Works on bytes, as LLVM does, so odd input never splits a character.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum IsaKind {
    Invalid,
    Arm,
    Thumb,
    Aarch64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum EndianKind {
    Invalid,
    Little,
    Big,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ProfileKind {
    Invalid,
    A,
    R,
    M,
}

/// `ARM::ArchKind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ArchKind {
    Invalid,
    V4,
    V4t,
    V5t,
    V5te,
    V5tej,
    V6,
    V6k,
    V6t2,
    V6kz,
    V6m,
    V7a,
    V7ve,
    V7r,
    V7m,
    V7em,
    V8a,
    V8_1a,
    V8_2a,
    V8_3a,
    V8_4a,
    V8_5a,
    V8_6a,
    V8_7a,
    V8_8a,
    V8_9a,
    V9a,
    V9_1a,
    V9_2a,
    V9_3a,
    V9_4a,
    V9_5a,
    V9_6a,
    V9_7a,
    V8r,
    V8mBaseline,
    V8mMainline,
    V8_1mMainline,
    Iwmmxt,
    Iwmmxt2,
    Xscale,
    V7s,
    V7k,
}

/// `ARMArchNames`, in `ARMTargetParser.def` order (the order matters:
/// `parse_arch` returns the first name with a matching suffix).
const ARCH_NAMES: &[(&[u8], ArchKind)] = &[
    (b"invalid", ArchKind::Invalid),
    (b"armv4", ArchKind::V4),
    (b"armv4t", ArchKind::V4t),
    (b"armv5t", ArchKind::V5t),
    (b"armv5te", ArchKind::V5te),
    (b"armv5tej", ArchKind::V5tej),
    (b"armv6", ArchKind::V6),
    (b"armv6k", ArchKind::V6k),
    (b"armv6t2", ArchKind::V6t2),
    (b"armv6kz", ArchKind::V6kz),
    (b"armv6-m", ArchKind::V6m),
    (b"armv7-a", ArchKind::V7a),
    (b"armv7ve", ArchKind::V7ve),
    (b"armv7-r", ArchKind::V7r),
    (b"armv7-m", ArchKind::V7m),
    (b"armv7e-m", ArchKind::V7em),
    (b"armv8-a", ArchKind::V8a),
    (b"armv8.1-a", ArchKind::V8_1a),
    (b"armv8.2-a", ArchKind::V8_2a),
    (b"armv8.3-a", ArchKind::V8_3a),
    (b"armv8.4-a", ArchKind::V8_4a),
    (b"armv8.5-a", ArchKind::V8_5a),
    (b"armv8.6-a", ArchKind::V8_6a),
    (b"armv8.7-a", ArchKind::V8_7a),
    (b"armv8.8-a", ArchKind::V8_8a),
    (b"armv8.9-a", ArchKind::V8_9a),
    (b"armv9-a", ArchKind::V9a),
    (b"armv9.1-a", ArchKind::V9_1a),
    (b"armv9.2-a", ArchKind::V9_2a),
    (b"armv9.3-a", ArchKind::V9_3a),
    (b"armv9.4-a", ArchKind::V9_4a),
    (b"armv9.5-a", ArchKind::V9_5a),
    (b"armv9.6-a", ArchKind::V9_6a),
    (b"armv9.7-a", ArchKind::V9_7a),
    (b"armv8-r", ArchKind::V8r),
    (b"armv8-m.base", ArchKind::V8mBaseline),
    (b"armv8-m.main", ArchKind::V8mMainline),
    (b"armv8.1-m.main", ArchKind::V8_1mMainline),
    (b"iwmmxt", ArchKind::Iwmmxt),
    (b"iwmmxt2", ArchKind::Iwmmxt2),
    (b"xscale", ArchKind::Xscale),
    (b"armv7s", ArchKind::V7s),
    (b"armv7k", ArchKind::V7k),
];

/// `StringRef::substr(start, n)`, which clamps instead of failing.
fn substr(s: &[u8], start: usize, n: usize) -> &[u8] {
    let start = start.min(s.len());
    &s[start..start + n.min(s.len() - start)]
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// `ARM::getArchSynonym`.
fn arch_synonym(arch: &[u8]) -> &[u8] {
    match arch {
        b"v5" => b"v5t",
        b"v5e" => b"v5te",
        b"v6j" => b"v6",
        b"v6hl" => b"v6k",
        b"v6m" | b"v6sm" | b"v6s-m" => b"v6-m",
        b"v6z" | b"v6zk" => b"v6kz",
        b"v7" | b"v7a" | b"v7hl" | b"v7l" => b"v7-a",
        b"v7r" => b"v7-r",
        b"v7m" => b"v7-m",
        b"v7em" => b"v7e-m",
        b"v8" | b"v8a" | b"v8l" | b"aarch64" | b"arm64" => b"v8-a",
        b"v8.1a" => b"v8.1-a",
        b"v8.2a" => b"v8.2-a",
        b"v8.3a" => b"v8.3-a",
        b"v8.4a" => b"v8.4-a",
        b"v8.5a" => b"v8.5-a",
        b"v8.6a" => b"v8.6-a",
        b"v8.7a" => b"v8.7-a",
        b"v8.8a" => b"v8.8-a",
        b"v8.9a" => b"v8.9-a",
        b"v8r" => b"v8-r",
        b"v9" | b"v9a" => b"v9-a",
        b"v9.1a" => b"v9.1-a",
        b"v9.2a" => b"v9.2-a",
        b"v9.3a" => b"v9.3-a",
        b"v9.4a" => b"v9.4-a",
        b"v9.5a" => b"v9.5-a",
        b"v9.6a" => b"v9.6-a",
        b"v9.7a" => b"v9.7-a",
        b"v8m.base" => b"v8-m.base",
        b"v8m.main" => b"v8-m.main",
        b"v8.1m.main" => b"v8.1-m.main",
        other => other,
    }
}

/// `ARM::getCanonicalArchName`: strips the `arm`/`thumb`/`aarch64`/`arm64`
/// prefix and the `eb` marker, leaving a `vN...` version or a marketing
/// name (`xscale`); the empty slice means "invalid".
pub(super) fn canonical_arch_name(arch: &[u8]) -> &[u8] {
    let mut a = arch;
    let mut offset = if a.starts_with(b"arm64_32") {
        Some(8)
    } else if a.starts_with(b"arm64e") {
        Some(6)
    } else if a.starts_with(b"arm64") {
        Some(5)
    } else if a.starts_with(b"aarch64_32") {
        Some(10)
    } else if a.starts_with(b"arm") {
        Some(3)
    } else if a.starts_with(b"thumb") {
        Some(5)
    } else if a.starts_with(b"aarch64") {
        // AArch64 uses "_be", not "eb".
        if contains(a, b"eb") {
            return b"";
        }
        if substr(a, 7, 3) == b"_be" {
            Some(10)
        } else {
            Some(7)
        }
    } else {
        None
    };

    // "armebv7": move past the "eb"; otherwise chop a trailing one
    // ("armv7eb").
    match offset {
        Some(off) if substr(a, off, 2) == b"eb" => offset = Some(off + 2),
        _ => a = a.strip_suffix(b"eb").unwrap_or(a),
    }
    if let Some(off) = offset {
        a = substr(a, off, usize::MAX);
    }

    // Offset reached the end: valid.
    if a.is_empty() {
        return arch;
    }
    if offset.is_some() {
        // Must start with 'vN'.
        if a.len() >= 2 && (a[0] != b'v' || !a[1].is_ascii_digit()) {
            return b"";
        }
        // Can't have an extra "eb".
        if contains(a, b"eb") {
            return b"";
        }
    }
    a
}

/// `ARM::parseArchISA`.
pub(super) fn parse_arch_isa(arch: &str) -> IsaKind {
    if arch.starts_with("aarch64") || arch.starts_with("arm64") {
        IsaKind::Aarch64
    } else if arch.starts_with("thumb") {
        IsaKind::Thumb
    } else if arch.starts_with("arm") {
        IsaKind::Arm
    } else {
        IsaKind::Invalid
    }
}

/// `ARM::parseArchEndian`.
pub(super) fn parse_arch_endian(arch: &str) -> EndianKind {
    if arch.starts_with("armeb") || arch.starts_with("thumbeb") || arch.starts_with("aarch64_be") {
        return EndianKind::Big;
    }
    if arch.starts_with("arm") || arch.starts_with("thumb") {
        return if arch.ends_with("eb") {
            EndianKind::Big
        } else {
            EndianKind::Little
        };
    }
    if arch.starts_with("aarch64") {
        return EndianKind::Little;
    }
    EndianKind::Invalid
}

/// `ARM::parseArch`: the first table entry whose name *ends with* the
/// canonical synonym (so "v7a" matches "armv7-a", and short non-ARM
/// strings match too).
pub(super) fn parse_arch(arch: &[u8]) -> ArchKind {
    let synonym = arch_synonym(canonical_arch_name(arch));
    ARCH_NAMES
        .iter()
        .find(|(name, _)| name.ends_with(synonym))
        .map_or(ArchKind::Invalid, |&(_, kind)| kind)
}

/// `ARM::parseArchVersion`.
pub(super) fn parse_arch_version(arch: &[u8]) -> u32 {
    use ArchKind::*;
    match parse_arch(canonical_arch_name(arch)) {
        V4 | V4t => 4,
        V5t | V5te | Iwmmxt | Iwmmxt2 | Xscale | V5tej => 5,
        V6 | V6k | V6t2 | V6kz | V6m => 6,
        V7a | V7ve | V7r | V7m | V7s | V7em | V7k => 7,
        V8a | V8_1a | V8_2a | V8_3a | V8_4a | V8_5a | V8_6a | V8_7a | V8_8a | V8_9a | V8r
        | V8mBaseline | V8mMainline | V8_1mMainline => 8,
        V9a | V9_1a | V9_2a | V9_3a | V9_4a | V9_5a | V9_6a | V9_7a => 9,
        Invalid => 0,
    }
}

/// `ARM::parseArchProfile`.
pub(super) fn parse_arch_profile(arch: &[u8]) -> ProfileKind {
    use ArchKind::*;
    match parse_arch(canonical_arch_name(arch)) {
        V6m | V7m | V7em | V8mMainline | V8mBaseline | V8_1mMainline => ProfileKind::M,
        V7r | V8r => ProfileKind::R,
        V7a | V7ve | V7k | V8a | V8_1a | V8_2a | V8_3a | V8_4a | V8_5a | V8_6a | V8_7a | V8_8a
        | V8_9a | V9a | V9_1a | V9_2a | V9_3a | V9_4a | V9_5a | V9_6a | V9_7a => ProfileKind::A,
        V4 | V4t | V5t | V5te | V5tej | V6 | V6k | V6t2 | V6kz | V7s | Iwmmxt | Iwmmxt2
        | Xscale | Invalid => ProfileKind::Invalid,
    }
}
