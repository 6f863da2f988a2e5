//! [`Triple`]: a triple string kept as given, with the components LLVM's string
//! constructor parses from it, and the questions the bundler asks of them.

use std::fmt;
use std::hash::{Hash, Hasher};

use super::names::{Arch, Environment, ObjectFormat, Os, SubArch, Vendor};
use super::normalize::{CanonicalForm, normalize};
use super::parse::{
    parse_arch, parse_environment, parse_format, parse_os, parse_sub_arch, parse_vendor,
    split_first,
};

/// A target triple, parsed like `llvm::Triple`.
///
/// The string is kept exactly as given; the parsed components are what LLVM's
/// string constructor computes. Equality (like LLVM's `operator==`) compares
/// the parsed components only, not the string: `x86_64-pc-linux` equals
/// `x86_64-pc-linux-unknown`.
#[derive(Clone, Debug)]
pub struct Triple {
    data: String,
    arch: Arch,
    sub_arch: SubArch,
    vendor: Vendor,
    os: Os,
    environment: Environment,
    object_format: ObjectFormat,
}

impl PartialEq for Triple {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Triple {}

impl Hash for Triple {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

impl fmt::Display for Triple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.data)
    }
}

impl Triple {
    /// Like `llvm::Triple(const Twine &Str)`: keeps the string as given
    /// ([`Triple::as_str`] returns it unchanged) and parses components
    /// positionally: arch and sub-arch from the first `-` component, vendor
    /// from the second, OS from the third, environment and object format from
    /// the rest (everything after the third `-`, which may itself contain `-`).
    ///
    /// A string without any `-` gets a default environment for MIPS names
    /// (`mips64` → `gnuabi64`, ...), and an object format that the string
    /// does not name is derived from arch and OS, exactly as in LLVM.
    pub fn new(s: &str) -> Triple {
        let mut triple = Triple {
            data: s.to_owned(),
            arch: Arch::Unknown,
            sub_arch: SubArch::NoSubArch,
            vendor: Vendor::Unknown,
            os: Os::Unknown,
            environment: Environment::Unknown,
            object_format: ObjectFormat::Unknown,
        };
        // `StringRef::split(Components, '-', 3)` keeps empty pieces and always
        // yields at least one component.
        let mut components = s.splitn(4, '-');
        let first = components.next().unwrap_or("");
        triple.arch = parse_arch(first);
        triple.sub_arch = parse_sub_arch(first);
        if let Some(vendor) = components.next() {
            triple.vendor = parse_vendor(vendor);
            if let Some(os) = components.next() {
                triple.os = parse_os(os);
                if let Some(env) = components.next() {
                    triple.environment = parse_environment(env);
                    triple.object_format = parse_format(env);
                }
            }
        } else {
            triple.environment = default_mips_environment(first);
        }
        if triple.object_format == ObjectFormat::Unknown {
            triple.object_format = default_format(triple.arch, triple.os);
        }
        triple
    }

    /// The string this triple was built from, unchanged (LLVM's `str()`).
    pub fn as_str(&self) -> &str {
        &self.data
    }

    /// The parsed architecture (LLVM's `getArch`).
    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// The parsed sub-architecture (LLVM's `getSubArch`).
    pub fn sub_arch(&self) -> SubArch {
        self.sub_arch
    }

    /// The parsed vendor (LLVM's `getVendor`).
    pub fn vendor(&self) -> Vendor {
        self.vendor
    }

    /// The parsed operating system (LLVM's `getOS`).
    pub fn os(&self) -> Os {
        self.os
    }

    /// The parsed environment (LLVM's `getEnvironment`).
    pub fn environment(&self) -> Environment {
        self.environment
    }

    /// The object format: parsed from the environment component's suffix
    /// (`-elf`, `coff`, ...) or else LLVM's default for arch and OS
    /// (LLVM's `getObjectFormat`).
    pub fn object_format(&self) -> ObjectFormat {
        self.object_format
    }

    /// The first component of the string (LLVM's `getArchName`).
    pub fn arch_name(&self) -> &str {
        split_first(&self.data).0
    }

    /// The second component of the string (LLVM's `getVendorName`).
    pub fn vendor_name(&self) -> &str {
        split_first(split_first(&self.data).1).0
    }

    /// The third component of the string (LLVM's `getOSName`).
    pub fn os_name(&self) -> &str {
        split_first(self.os_and_environment_name()).0
    }

    /// Everything after the third `-`, or `""` (LLVM's `getEnvironmentName`).
    pub fn environment_name(&self) -> &str {
        split_first(self.os_and_environment_name()).1
    }

    /// Everything after the second `-`, or `""`
    /// (LLVM's `getOSAndEnvironmentName`).
    pub fn os_and_environment_name(&self) -> &str {
        split_first(split_first(&self.data).1).1
    }

    /// Whether the string has a non-empty fourth component
    /// (LLVM's `hasEnvironment`).
    pub fn has_environment(&self) -> bool {
        !self.environment_name().is_empty()
    }

    /// This triple's string normalized (LLVM's `Triple::normalize(Form)`).
    ///
    /// # Panics
    ///
    /// Where LLVM aborts; see [`normalize`].
    pub fn normalize(&self, form: CanonicalForm) -> String {
        normalize(&self.data, form)
    }

    /// `arch() != Arch::Unknown` (the bundler's `getArch() != UnknownArch`).
    pub fn is_arch_known(&self) -> bool {
        self.arch != Arch::Unknown
    }

    /// The architecture is `amdgcn` (LLVM's `isAMDGCN`).
    pub fn is_amdgcn(&self) -> bool {
        self.arch == Arch::Amdgcn
    }

    /// The architecture is `r600` (LLVM's `isAMDGPU` minus `amdgcn`).
    pub fn is_r600(&self) -> bool {
        self.arch == Arch::R600
    }

    /// The architecture is `amdgcn` or `r600` (LLVM's `isAMDGPU`).
    pub fn is_amdgpu(&self) -> bool {
        self.is_amdgcn() || self.is_r600()
    }

    /// The architecture is `nvptx` or `nvptx64` (LLVM's `isNVPTX`).
    pub fn is_nvptx(&self) -> bool {
        matches!(self.arch, Arch::Nvptx | Arch::Nvptx64)
    }

    /// The OS is one of Apple's: macOS (`darwin`/`macosx`), iOS, tvOS,
    /// watchOS, DriverKit, xrOS or bridgeOS (LLVM's `isOSDarwin`).
    pub fn is_os_darwin(&self) -> bool {
        os_is_darwin(self.os)
    }

    /// The OS is Windows (LLVM's `isOSWindows`).
    pub fn is_os_windows(&self) -> bool {
        self.os == Os::Win32
    }

    /// Windows with the `gnu` environment, i.e. MinGW
    /// (LLVM's `isWindowsGNUEnvironment`).
    pub fn is_windows_gnu_environment(&self) -> bool {
        self.is_os_windows() && self.environment == Environment::Gnu
    }

    /// `llvm::Triple::isCompatibleWith`, exactly.
    ///
    /// Arch, sub-arch, vendor, OS, environment and object format must all be
    /// equal, except that
    /// - the vendor is ignored when `self` is MinGW (Windows + `gnu`);
    /// - `arm`/`thumb` (and `armeb`/`thumbeb`) are interchangeable, in either
    ///   order;
    /// - when `self`'s vendor is Apple, the environment and object format are
    ///   ignored (the environment field carries versions there), and for
    ///   `arm`/`thumb` pairs the vendor must then match even for MinGW.
    ///
    /// The relation is not symmetric: only `self`'s vendor and environment
    /// choose the rule.
    pub fn is_compatible_with(&self, other: &Triple) -> bool {
        let ignore_vendor = self.is_windows_gnu_environment();
        let same_vendor = self.vendor == other.vendor || ignore_vendor;
        let arm_thumb_pair = matches!(
            (self.arch, other.arch),
            (Arch::Thumb, Arch::Arm)
                | (Arch::Arm, Arch::Thumb)
                | (Arch::Thumbeb, Arch::Armeb)
                | (Arch::Armeb, Arch::Thumbeb)
        );
        if arm_thumb_pair {
            if self.vendor == Vendor::Apple {
                return self.sub_arch == other.sub_arch
                    && self.vendor == other.vendor
                    && self.os == other.os;
            }
            return self.sub_arch == other.sub_arch
                && same_vendor
                && self.os == other.os
                && self.environment == other.environment
                && self.object_format == other.object_format;
        }
        if self.vendor == Vendor::Apple {
            return self.arch == other.arch
                && self.sub_arch == other.sub_arch
                && same_vendor
                && self.os == other.os;
        }
        self.arch == other.arch
            && self.sub_arch == other.sub_arch
            && same_vendor
            && self.os == other.os
            && self.environment == other.environment
            && self.object_format == other.object_format
    }

    fn key(&self) -> (Arch, SubArch, Vendor, Os, Environment, ObjectFormat) {
        (
            self.arch,
            self.sub_arch,
            self.vendor,
            self.os,
            self.environment,
            self.object_format,
        )
    }
}

/// The environment `Triple`'s constructor assumes for a dash-less MIPS name.
fn default_mips_environment(name: &str) -> Environment {
    if name.starts_with("mipsn32") {
        Environment::GnuAbiN32
    } else if name.starts_with("mips64") || name.starts_with("mipsisa64") {
        Environment::GnuAbi64
    } else if name.starts_with("mipsisa32")
        || matches!(name, "mips" | "mipsel" | "mipsr6" | "mipsr6el")
    {
        Environment::Gnu
    } else {
        Environment::Unknown
    }
}

fn os_is_darwin(os: Os) -> bool {
    matches!(
        os,
        Os::Darwin
            | Os::MacOsx
            | Os::Ios
            | Os::TvOs
            | Os::WatchOs
            | Os::DriverKit
            | Os::XrOs
            | Os::BridgeOs
    )
}

/// LLVM's `getDefaultFormat`: the object format a triple implies when its
/// environment component does not name one.
pub fn default_format(arch: Arch, os: Os) -> ObjectFormat {
    use Arch::*;
    match arch {
        Unknown | Aarch64 | Aarch64_32 | Arm | Thumb | X86 | X86_64 => match os {
            Os::Win32 | Os::Uefi => ObjectFormat::Coff,
            _ if os_is_darwin(os) => ObjectFormat::MachO,
            _ => ObjectFormat::Elf,
        },
        Aarch64Be | Amdgcn | Amdil64 | Amdil | Arc | Armeb | Avr | Bpfeb | Bpfel | Csky
        | Hexagon | Hsail64 | Hsail | Kalimba | Lanai | Loongarch32 | Loongarch64 | M68k
        | Mips64 | Mips64el | Mips | Msp430 | Nvptx64 | Nvptx | Ppc64le | Ppcle | R600
        | Renderscript32 | Renderscript64 | Riscv32 | Riscv64 | Riscv32be | Riscv64be | Shave
        | Sparc | Sparcel | Sparcv9 | Spir64 | Spir | Tce | Tcele | Thumbeb | Ve | Xcore
        | Xtensa => ObjectFormat::Elf,
        Mipsel => {
            if os == Os::Win32 {
                ObjectFormat::Coff
            } else {
                ObjectFormat::Elf
            }
        }
        Ppc64 | Ppc => {
            if os == Os::Aix {
                ObjectFormat::Xcoff
            } else if os_is_darwin(os) {
                ObjectFormat::MachO
            } else {
                ObjectFormat::Elf
            }
        }
        Systemz => {
            if os == Os::Zos {
                ObjectFormat::Goff
            } else {
                ObjectFormat::Elf
            }
        }
        Wasm32 | Wasm64 => ObjectFormat::Wasm,
        Spirv | Spirv32 | Spirv64 => ObjectFormat::Spirv,
        Dxil => ObjectFormat::DxContainer,
    }
}
