//! Which LLVM release's behaviour is meant.

use std::fmt;

/// An LLVM major release: the one notion of "which LLVM" in this crate.
///
/// It decides every behaviour that differs between releases:
/// - offload binaries: the offload-kind values changed in LLVM 21 (HIP 3 → 4, SYCL added as
///   8), so a writer must know which LLVM will read its output
///   ([`has_flag_offload_kinds`](LlvmVersion::has_flag_offload_kinds));
/// - bundle entry IDs: LLVM 19 splits IDs positionally, LLVM 20 and later standardize them
///   ([`EntryId::rules`](crate::id::EntryId::rules) says which rules read an ID);
/// - offload-arch tables and target-ID checks: clang 19's or clang 22's
///   ([`crate::id::offload_arch`], [`crate::id::target_id`]); releases before 20 follow
///   clang 19's table, later ones clang 22's (the two releases verified).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LlvmVersion(u32);

impl LlvmVersion {
    /// LLVM 19, the oldest release this crate is tested against.
    pub const LLVM19: LlvmVersion = LlvmVersion(19);
    /// LLVM 20, the last release that numbers HIP as 3.
    pub const LLVM20: LlvmVersion = LlvmVersion(20);
    /// LLVM 21, the first release that numbers HIP as 4 and SYCL as 8.
    pub const LLVM21: LlvmVersion = LlvmVersion(21);
    /// LLVM 22, the newest release (the default everywhere in this crate).
    pub const LLVM22: LlvmVersion = LlvmVersion(22);
    /// The newest LLVM release.
    pub const NEWEST_RELEASE: LlvmVersion = LlvmVersion::LLVM22;
    /// The two releases whose behaviour this crate reproduces and is tested against,
    /// oldest first.
    pub const REFERENCES: [LlvmVersion; 2] = [LlvmVersion::LLVM19, LlvmVersion::LLVM22];

    /// The release with this major version number.
    pub const fn new(major: u32) -> LlvmVersion {
        LlvmVersion(major)
    }

    /// The major version number.
    pub const fn major(self) -> u32 {
        self.0
    }

    /// Whether offload kinds are bit flags (HIP = 4, SYCL = 8), as from LLVM 21 on.
    pub const fn has_flag_offload_kinds(self) -> bool {
        self.0 >= 21
    }

    /// Whether this release reads bundle entry IDs and target IDs as LLVM 19 does (before
    /// the standardization of LLVM 20, and with clang 19's processor table).
    pub const fn is_llvm19(self) -> bool {
        self.0 < 20
    }
}

impl Default for LlvmVersion {
    fn default() -> Self {
        LlvmVersion::NEWEST_RELEASE
    }
}

impl fmt::Display for LlvmVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LLVM {}", self.0)
    }
}
