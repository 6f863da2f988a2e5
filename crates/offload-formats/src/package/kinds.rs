//! The two enumerations of the offload binary format (LLVM's `llvm/Object/OffloadBinary.h`):
//! image kinds, and offload kinds with both of their numberings. The layout itself (headers,
//! entries, string entries and their sizes) is defined with the crate's other on-disk
//! structures.

use std::fmt;

pub use crate::llvm::LlvmVersion;

/// The kind of an image (`ImageKind` in LLVM). Values are the same in every release.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ImageKind {
    /// 0: unknown or unspecified.
    None,
    /// 1: an object file (`o`).
    Object,
    /// 2: LLVM bitcode (`bc`).
    Bitcode,
    /// 3: NVIDIA cubin (`cubin`).
    Cubin,
    /// 4: NVIDIA fat binary (`fatbin`).
    Fatbinary,
    /// 5: PTX assembly (`s`).
    Ptx,
    /// 6: SPIR-V (`spv`; defined from LLVM 21, named from LLVM 23).
    Spirv,
}

impl ImageKind {
    /// Every kind, by value.
    pub const ALL: [ImageKind; 7] = [
        ImageKind::None,
        ImageKind::Object,
        ImageKind::Bitcode,
        ImageKind::Cubin,
        ImageKind::Fatbinary,
        ImageKind::Ptx,
        ImageKind::Spirv,
    ];

    /// The value stored in an entry.
    pub const fn value(self) -> u16 {
        match self {
            ImageKind::None => 0,
            ImageKind::Object => 1,
            ImageKind::Bitcode => 2,
            ImageKind::Cubin => 3,
            ImageKind::Fatbinary => 4,
            ImageKind::Ptx => 5,
            ImageKind::Spirv => 6,
        }
    }

    /// The kind of a stored value (`None` for values no LLVM defines).
    pub fn from_value(value: u16) -> Option<ImageKind> {
        ImageKind::ALL.into_iter().find(|k| k.value() == value)
    }

    /// The name LLVM's `getImageKindName` gives, used as the extension of extracted
    /// files: empty for [`ImageKind::None`], and for [`ImageKind::Spirv`] before LLVM 23.
    pub fn name(self, llvm: LlvmVersion) -> &'static str {
        match self {
            ImageKind::None => "",
            ImageKind::Object => "o",
            ImageKind::Bitcode => "bc",
            ImageKind::Cubin => "cubin",
            ImageKind::Fatbinary => "fatbin",
            ImageKind::Ptx => "s",
            ImageKind::Spirv if llvm.major() >= 23 => "spv",
            ImageKind::Spirv => "",
        }
    }

    /// The kind for a file extension without its dot, as LLVM's `getImageKind`
    /// (`spv` is known from LLVM 23 on; anything unknown is [`ImageKind::None`]).
    pub fn from_extension(ext: &str, llvm: LlvmVersion) -> ImageKind {
        match ext {
            "o" => ImageKind::Object,
            "bc" => ImageKind::Bitcode,
            "cubin" => ImageKind::Cubin,
            "fatbin" => ImageKind::Fatbinary,
            "s" => ImageKind::Ptx,
            "spv" if llvm.major() >= 23 => ImageKind::Spirv,
            _ => ImageKind::None,
        }
    }
}

/// The producer of an image (`OffloadKind` in LLVM), independent of its numbering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OffloadKind {
    /// No producer (`none`), 0 in every release.
    None,
    /// OpenMP offloading, 1 in every release.
    OpenMp,
    /// CUDA, 2 in every release.
    Cuda,
    /// HIP: 3 up to LLVM 20, 4 from LLVM 21.
    Hip,
    /// SYCL: 8 from LLVM 21; unknown before.
    Sycl,
}

impl OffloadKind {
    /// Every kind.
    pub const ALL: [OffloadKind; 5] = [
        OffloadKind::None,
        OffloadKind::OpenMp,
        OffloadKind::Cuda,
        OffloadKind::Hip,
        OffloadKind::Sycl,
    ];

    /// The value `llvm` stores for this kind (`None` for SYCL before LLVM 21).
    pub const fn value(self, llvm: LlvmVersion) -> Option<u16> {
        let flags = llvm.has_flag_offload_kinds();
        match self {
            OffloadKind::None => Some(0),
            OffloadKind::OpenMp => Some(1),
            OffloadKind::Cuda => Some(2),
            OffloadKind::Hip if flags => Some(4),
            OffloadKind::Hip => Some(3),
            OffloadKind::Sycl if flags => Some(8),
            OffloadKind::Sycl => None,
        }
    }

    /// How `llvm` interprets a stored value (`None` for values it does not define).
    pub fn from_value(value: u16, llvm: LlvmVersion) -> Option<OffloadKind> {
        OffloadKind::ALL
            .into_iter()
            .find(|k| k.value(llvm) == Some(value))
    }

    /// The name LLVM's `getOffloadKindName` gives (`none` for [`OffloadKind::None`]).
    pub fn name(self) -> &'static str {
        match self {
            OffloadKind::None => "none",
            OffloadKind::OpenMp => "openmp",
            OffloadKind::Cuda => "cuda",
            OffloadKind::Hip => "hip",
            OffloadKind::Sycl => "sycl",
        }
    }

    /// The kind for a `kind=` value as `llvm`'s `getOffloadKind` reads it: unknown
    /// names, and `sycl` before LLVM 21, are [`OffloadKind::None`].
    pub fn from_name(name: &str, llvm: LlvmVersion) -> OffloadKind {
        match name {
            "openmp" => OffloadKind::OpenMp,
            "cuda" => OffloadKind::Cuda,
            "hip" => OffloadKind::Hip,
            "sycl" if llvm.has_flag_offload_kinds() => OffloadKind::Sycl,
            _ => OffloadKind::None,
        }
    }
}

impl fmt::Display for OffloadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An image-kind value as read from an entry: the raw value, and what it means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ImageKindValue(pub u16);

impl ImageKindValue {
    /// The stored value.
    pub const fn raw(self) -> u16 {
        self.0
    }

    /// The kind, when some LLVM defines the value.
    pub fn kind(self) -> Option<ImageKind> {
        ImageKind::from_value(self.0)
    }
}

impl fmt::Display for ImageKindValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind() {
            Some(ImageKind::None) => f.write_str("none (0)"),
            Some(ImageKind::Spirv) => f.write_str("spv (6)"),
            Some(k) => write!(f, "{} ({})", k.name(LlvmVersion::NEWEST_RELEASE), self.0),
            None => write!(f, "unknown ({})", self.0),
        }
    }
}

/// An offload-kind value as read from an entry. The value alone does not say which
/// numbering its writer used: 3 is HIP for LLVM ≤ 20 and no kind for LLVM ≥ 21; 4
/// and 8 are HIP and SYCL for LLVM ≥ 21 and no kind before. This type reports both
/// readings instead of guessing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OffloadKindValue(pub u16);

impl OffloadKindValue {
    /// The stored value.
    pub const fn raw(self) -> u16 {
        self.0
    }

    /// The kind as a given LLVM release reads the value.
    pub fn as_of(self, llvm: LlvmVersion) -> Option<OffloadKind> {
        OffloadKind::from_value(self.0, llvm)
    }

    /// The kind under the numbering of LLVM 20 and earlier (HIP = 3).
    pub fn up_to_llvm20(self) -> Option<OffloadKind> {
        self.as_of(LlvmVersion::LLVM20)
    }

    /// The kind under the numbering of LLVM 21 and later (HIP = 4, SYCL = 8).
    pub fn from_llvm21(self) -> Option<OffloadKind> {
        self.as_of(LlvmVersion::LLVM21)
    }

    /// Whether the two numberings read the value differently.
    pub fn is_ambiguous(self) -> bool {
        self.up_to_llvm20() != self.from_llvm21()
    }

    /// The name LLVM `llvm` prints for the value (`none` for values it does not define).
    pub fn name(self, llvm: LlvmVersion) -> &'static str {
        self.as_of(llvm).map_or("none", OffloadKind::name)
    }
}

impl fmt::Display for OffloadKindValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.up_to_llvm20(), self.from_llvm21()) {
            (Some(a), Some(b)) if a == b => write!(f, "{a} ({})", self.0),
            (Some(a), None) => write!(f, "{a} ({}, LLVM <= 20 numbering)", self.0),
            (None, Some(b)) => write!(f, "{b} ({}, LLVM >= 21 numbering)", self.0),
            (Some(a), Some(b)) => {
                write!(f, "{a} or {b} ({}, depending on the writer's LLVM)", self.0)
            }
            (None, None) => write!(f, "unknown ({})", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offload_kind_numberings() {
        let v19 = LlvmVersion::LLVM19;
        let v22 = LlvmVersion::LLVM22;
        assert_eq!(OffloadKind::Hip.value(v19), Some(3));
        assert_eq!(OffloadKind::Hip.value(v22), Some(4));
        assert_eq!(OffloadKind::Sycl.value(v19), None);
        assert_eq!(OffloadKind::Sycl.value(v22), Some(8));
        assert_eq!(OffloadKind::from_name("sycl", v19), OffloadKind::None);
        assert_eq!(OffloadKind::from_name("sycl", v22), OffloadKind::Sycl);
        assert_eq!(OffloadKind::from_name("HIP", v22), OffloadKind::None);
        let three = OffloadKindValue(3);
        assert!(three.is_ambiguous());
        assert_eq!(three.up_to_llvm20(), Some(OffloadKind::Hip));
        assert_eq!(three.from_llvm21(), None);
        assert_eq!(three.name(v22), "none");
        assert_eq!(three.to_string(), "hip (3, LLVM <= 20 numbering)");
        assert_eq!(
            OffloadKindValue(4).to_string(),
            "hip (4, LLVM >= 21 numbering)"
        );
        assert_eq!(OffloadKindValue(1).to_string(), "openmp (1)");
        assert!(!OffloadKindValue(2).is_ambiguous());
        assert_eq!(OffloadKindValue(99).to_string(), "unknown (99)");
    }

    #[test]
    fn image_kinds() {
        for k in ImageKind::ALL {
            assert_eq!(ImageKind::from_value(k.value()), Some(k));
        }
        let v22 = LlvmVersion::LLVM22;
        assert_eq!(ImageKind::from_extension("spv", v22), ImageKind::None);
        assert_eq!(
            ImageKind::from_extension("spv", LlvmVersion::new(23)),
            ImageKind::Spirv
        );
        assert_eq!(ImageKind::from_extension("O", v22), ImageKind::None);
        assert_eq!(ImageKind::Ptx.name(v22), "s");
        assert_eq!(ImageKindValue(7).to_string(), "unknown (7)");
        assert_eq!(ImageKindValue(2).to_string(), "bc (2)");
    }
}
