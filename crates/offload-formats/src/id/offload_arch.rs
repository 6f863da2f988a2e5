//! The processor-name tables of clang 19 and clang 22.
//!
//! Mirrors clang's `OffloadArch` name table (`clang/lib/Basic/Cuda.cpp` in clang 19, where the
//! enum is still called `CudaArch`; `clang/lib/Basic/OffloadArch.cpp` in clang 22) as consulted
//! by `StringToOffloadArch`. The bundler uses it to decide whether the last part of an entry ID
//! is a processor (that is, a target ID) or part of the triple.
//!
//! Every name below, and a set of names that must *not* be present, was checked against
//! Debian's `clang-offload-bundler` 19.1.7 and 22.1.8: a name is in a table iff bundling
//! `hip-amdgcn-amd-amdhsa--NAME` (and, for `sm_*`, `openmp-nvptx64-nvidia-cuda--NAME`) keeps
//! `NAME` in the stored entry ID. Names containing `-` cannot be observed that way in clang 19
//! (its parser splits at the last `-`, so `gfx9-4-generic` "works" through the `generic` entry);
//! for those the clang 19 table follows the clang 19 source and the strings present in
//! `libclang-cpp.so.19.1` (`gfx9-4-generic` does not occur there at all).
//!
//! The tables themselves are in `id/generated/offload_arch.rs`, which `dev-tools/gen-tables`
//! reads out of clang's `arch_names` array in each `libclang-cpp` (see `dev-tools/README.md`).

use super::generated::offload_arch::{CLANG19, CLANG22};

use crate::llvm::LlvmVersion;

/// All names of one clang's offload-arch table, in clang's order.
///
/// The first name is the empty string: clang's table starts with an `UNUSED` entry named `""`,
/// so `StringToOffloadArch("")` does not return `UNKNOWN`.
pub fn offload_arch_names(table: LlvmVersion) -> &'static [&'static str] {
    match table {
        v if v.is_llvm19() => CLANG19,
        _ => CLANG22,
    }
}

/// Whether `name` is in that clang's `OffloadArch` name table, i.e. whether the bundler's entry
/// ID parser accepts it as a processor.
///
/// The comparison is exact (case-sensitive, no alias resolution): legacy AMDGPU aliases such as
/// `fiji`, R600 processors such as `cayman`, virtual architectures such as `compute_70` and
/// Intel names other than `graniterapids`/`bmg_g21` (e.g. `pvc`) are in neither table.
///
/// The empty string is in both tables (clang's `UNUSED` entry). clang 19's parser relies on
/// this: an entry ID ending in `-` has an empty last component, which counts as recognized
/// (the "empty `Last`" quirk of spec A.1.1). clang 22's parser first requires the processor to
/// be non-empty, so callers emulating clang 22 must check that themselves.
pub fn is_offload_arch(name: &str, table: LlvmVersion) -> bool {
    offload_arch_names(table).contains(&name)
}

/// Whether `name` is in clang 19's or clang 22's offload-arch table.
pub fn is_known_offload_arch(name: &str) -> bool {
    LlvmVersion::REFERENCES
        .iter()
        .any(|&t| is_offload_arch(name, t))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In both tables (observed with both bundlers; dashed names via clang 22 only).
    const BOTH: &[&str] = &[
        "",
        "sm_20",
        "sm_21",
        "sm_30",
        "sm_32",
        "sm_35",
        "sm_37",
        "sm_50",
        "sm_52",
        "sm_53",
        "sm_60",
        "sm_61",
        "sm_62",
        "sm_70",
        "sm_72",
        "sm_75",
        "sm_80",
        "sm_86",
        "sm_87",
        "sm_89",
        "sm_90",
        "sm_90a",
        "gfx600",
        "gfx601",
        "gfx602",
        "gfx700",
        "gfx701",
        "gfx702",
        "gfx703",
        "gfx704",
        "gfx705",
        "gfx801",
        "gfx802",
        "gfx803",
        "gfx805",
        "gfx810",
        "gfx9-generic",
        "gfx900",
        "gfx902",
        "gfx904",
        "gfx906",
        "gfx908",
        "gfx909",
        "gfx90a",
        "gfx90c",
        "gfx942",
        "gfx10-1-generic",
        "gfx1010",
        "gfx1011",
        "gfx1012",
        "gfx1013",
        "gfx10-3-generic",
        "gfx1030",
        "gfx1031",
        "gfx1032",
        "gfx1033",
        "gfx1034",
        "gfx1035",
        "gfx1036",
        "gfx11-generic",
        "gfx1100",
        "gfx1101",
        "gfx1102",
        "gfx1103",
        "gfx1150",
        "gfx1151",
        "gfx1152",
        "gfx12-generic",
        "gfx1200",
        "gfx1201",
        "amdgcnspirv",
        "generic",
    ];

    /// Only in clang 19 (observed: kept by 19, dropped by 22).
    const ONLY19: &[&str] = &["gfx940", "gfx941"];

    /// Only in clang 22 (observed: kept by 22, dropped by 19, or absent from clang 19's strings).
    const ONLY22: &[&str] = &[
        "sm_88",
        "sm_100",
        "sm_100a",
        "sm_101",
        "sm_101a",
        "sm_103",
        "sm_103a",
        "sm_110",
        "sm_110a",
        "sm_120",
        "sm_120a",
        "sm_121",
        "sm_121a",
        "gfx9-4-generic",
        "gfx950",
        "gfx1153",
        "gfx1250",
        "gfx1251",
        "graniterapids",
        "bmg_g21",
    ];

    /// In neither table (observed with both bundlers; dashed ones via clang 22 only).
    const NEITHER: &[&str] = &[
        // Legacy AMDGCN aliases and pseudo-processors.
        "bonaire",
        "carrizo",
        "fiji",
        "hainan",
        "hawaii",
        "iceland",
        "kabini",
        "kaveri",
        "mullins",
        "oland",
        "pitcairn",
        "polaris10",
        "polaris11",
        "stoney",
        "tahiti",
        "tonga",
        "tongapro",
        "verde",
        "generic-hsa",
        // R600 processors.
        "r600",
        "r630",
        "rs880",
        "rv670",
        "rv710",
        "rv730",
        "rv770",
        "cedar",
        "cypress",
        "juniper",
        "redwood",
        "sumo",
        "barts",
        "caicos",
        "cayman",
        "turks",
        // AMDGPU names neither clang has in this table.
        "gfx1105",
        "gfx1170",
        "gfx1171",
        "gfx1172",
        "gfx1310",
        "gfx12-5-generic",
        "gfx13-generic",
        "gfx9999",
        "gfx906a",
        "GFX906",
        "Gfx906",
        // CUDA names that do not exist (yet) in either.
        "sm_",
        "sm_10",
        "sm_70a",
        "sm_89a",
        "sm_90f",
        "sm_100f",
        "sm_101f",
        "sm_102",
        "sm_103f",
        "sm_104",
        "sm_110f",
        "sm_120f",
        "sm_121f",
        "sm_122",
        "sm_130",
        "sm_1000",
        "compute_70",
        "compute_amdgcn",
        // Intel names from later LLVM sources, and x86 CPUs.
        "pvc",
        "pvc_vg",
        "bmg",
        "bmg_g31",
        "ptl",
        "lnl_m",
        "mtl",
        "mtl_u",
        "mtl_s",
        "mtl_h",
        "arl_u",
        "arl_s",
        "arl_h",
        "dg2",
        "dg2_g10",
        "dg2_g11",
        "dg2_g12",
        "acm_g10",
        "acm_g11",
        "acm_g12",
        "skl",
        "kbl",
        "icllp",
        "tgllp",
        "sapphirerapids",
        "x86-64",
        // Odds and ends.
        "nvptx",
        "unknown",
        "UNUSED",
    ];

    #[test]
    fn observed_membership() {
        for &n in BOTH {
            assert!(is_offload_arch(n, LlvmVersion::LLVM19), "{n:?} in 19");
            assert!(is_offload_arch(n, LlvmVersion::LLVM22), "{n:?} in 22");
            assert!(is_known_offload_arch(n));
        }
        for &n in ONLY19 {
            assert!(is_offload_arch(n, LlvmVersion::LLVM19), "{n:?} in 19");
            assert!(!is_offload_arch(n, LlvmVersion::LLVM22), "{n:?} not in 22");
            assert!(is_known_offload_arch(n));
        }
        for &n in ONLY22 {
            assert!(!is_offload_arch(n, LlvmVersion::LLVM19), "{n:?} not in 19");
            assert!(is_offload_arch(n, LlvmVersion::LLVM22), "{n:?} in 22");
            assert!(is_known_offload_arch(n));
        }
        for &n in NEITHER {
            assert!(!is_known_offload_arch(n), "{n:?} in neither");
        }
    }

    #[test]
    fn tables_are_exactly_the_observed_sets() {
        let mut t19: Vec<&str> = BOTH.iter().chain(ONLY19).copied().collect();
        let mut t22: Vec<&str> = BOTH.iter().chain(ONLY22).copied().collect();
        let mut n19 = offload_arch_names(LlvmVersion::LLVM19).to_vec();
        let mut n22 = offload_arch_names(LlvmVersion::LLVM22).to_vec();
        for v in [&mut t19, &mut t22, &mut n19, &mut n22] {
            v.sort_unstable();
        }
        assert_eq!(n19, t19);
        assert_eq!(n22, t22);
        // No duplicates in clang's tables.
        for n in [n19, n22] {
            let mut d = n.clone();
            d.dedup();
            assert_eq!(d, n);
        }
    }

    #[test]
    fn empty_name_is_the_unused_entry() {
        assert_eq!(offload_arch_names(LlvmVersion::LLVM19)[0], "");
        assert_eq!(offload_arch_names(LlvmVersion::LLVM22)[0], "");
        assert!(is_offload_arch("", LlvmVersion::LLVM19));
        assert!(is_known_offload_arch(""));
    }
}
