//! Target triples: a port of the parts of LLVM 22's `llvm::Triple` that
//! clang-offload-bundler depends on.
//!
//! The facts here come from `llvm/lib/TargetParser/Triple.cpp` and
//! `llvm/include/llvm/TargetParser/Triple.h` of LLVM 22 (plus the pieces of
//! `ARMTargetParser.cpp`, `ARMTargetParserCommon.cpp` and `ARMTargetParser.def`
//! that `Triple` calls to recognise ARM architecture names):
//!
//! - [`Triple::new`] mirrors `llvm::Triple(const Twine &)`: it keeps the string
//!   untouched and parses the first four `-`-separated components positionally.
//! - [`normalize`] mirrors `llvm::Triple::normalize(StringRef, CanonicalForm)`,
//!   including its component shuffling and its Windows, Android, SUSE and DXIL
//!   special cases, byte for byte.
//! - [`Triple::is_compatible_with`] mirrors `llvm::Triple::isCompatibleWith`,
//!   which the bundler uses to match requested targets against bundle entries.
//!
//! The parse functions ([`parse_arch`], [`parse_sub_arch`], [`parse_vendor`],
//! [`parse_os`], [`parse_environment`], [`parse_format`]) reproduce LLVM's
//! `StringSwitch` chains, whose order matters where one name is a prefix of
//! another (`wasip1` before `wasi`, `muslwali` before `musl`, ...), along with
//! LLVM's quirks: for instance `ARM::parseArch` matches by suffix, so the
//! architecture name `ve` carries the ARM sub-architecture `v7ve`.

use std::borrow::Cow;
use std::fmt;
use std::hash::{Hash, Hasher};

/// Declares a fieldless enum whose variants carry LLVM's canonical spelling,
/// with `ALL` (declaration order, as in LLVM) and `name()`.
macro_rules! llvm_enum {
    (
        $(#[$meta:meta])*
        $name:ident, $what:literal {
            $($variant:ident => $text:literal,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $(
                #[doc = concat!("LLVM's `", $text, "` ", $what, ".")]
                $variant,
            )*
        }

        impl $name {
            /// Every value, in LLVM's declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The canonical name LLVM prints for this value.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

llvm_enum! {
    /// LLVM's `Triple::ArchType`. Names are those of `getArchTypeName`
    /// (so [`Arch::X86`] is `i386`, [`Arch::Ppc64`] is `powerpc64`).
    Arch, "architecture" {
        Unknown => "unknown",
        Arm => "arm",
        Armeb => "armeb",
        Aarch64 => "aarch64",
        Aarch64Be => "aarch64_be",
        Aarch64_32 => "aarch64_32",
        Arc => "arc",
        Avr => "avr",
        Bpfel => "bpfel",
        Bpfeb => "bpfeb",
        Csky => "csky",
        Dxil => "dxil",
        Hexagon => "hexagon",
        Loongarch32 => "loongarch32",
        Loongarch64 => "loongarch64",
        M68k => "m68k",
        Mips => "mips",
        Mipsel => "mipsel",
        Mips64 => "mips64",
        Mips64el => "mips64el",
        Msp430 => "msp430",
        Ppc => "powerpc",
        Ppcle => "powerpcle",
        Ppc64 => "powerpc64",
        Ppc64le => "powerpc64le",
        R600 => "r600",
        Amdgcn => "amdgcn",
        Riscv32 => "riscv32",
        Riscv64 => "riscv64",
        Riscv32be => "riscv32be",
        Riscv64be => "riscv64be",
        Sparc => "sparc",
        Sparcv9 => "sparcv9",
        Sparcel => "sparcel",
        Systemz => "s390x",
        Tce => "tce",
        Tcele => "tcele",
        Thumb => "thumb",
        Thumbeb => "thumbeb",
        X86 => "i386",
        X86_64 => "x86_64",
        Xcore => "xcore",
        Xtensa => "xtensa",
        Nvptx => "nvptx",
        Nvptx64 => "nvptx64",
        Amdil => "amdil",
        Amdil64 => "amdil64",
        Hsail => "hsail",
        Hsail64 => "hsail64",
        Spir => "spir",
        Spir64 => "spir64",
        Spirv => "spirv",
        Spirv32 => "spirv32",
        Spirv64 => "spirv64",
        Kalimba => "kalimba",
        Shave => "shave",
        Lanai => "lanai",
        Wasm32 => "wasm32",
        Wasm64 => "wasm64",
        Renderscript32 => "renderscript32",
        Renderscript64 => "renderscript64",
        Ve => "ve",
    }
}

llvm_enum! {
    /// LLVM's `Triple::SubArchType`. The name is the suffix LLVM uses for the
    /// sub-architecture; [`SubArch::NoSubArch`] is the empty string.
    SubArch, "sub-architecture" {
        NoSubArch => "",
        ArmV9_7a => "v9.7a",
        ArmV9_6a => "v9.6a",
        ArmV9_5a => "v9.5a",
        ArmV9_4a => "v9.4a",
        ArmV9_3a => "v9.3a",
        ArmV9_2a => "v9.2a",
        ArmV9_1a => "v9.1a",
        ArmV9 => "v9",
        ArmV8_9a => "v8.9a",
        ArmV8_8a => "v8.8a",
        ArmV8_7a => "v8.7a",
        ArmV8_6a => "v8.6a",
        ArmV8_5a => "v8.5a",
        ArmV8_4a => "v8.4a",
        ArmV8_3a => "v8.3a",
        ArmV8_2a => "v8.2a",
        ArmV8_1a => "v8.1a",
        ArmV8 => "v8",
        ArmV8r => "v8r",
        ArmV8mBaseline => "v8m.base",
        ArmV8mMainline => "v8m.main",
        ArmV8_1mMainline => "v8.1m.main",
        ArmV7 => "v7",
        ArmV7em => "v7em",
        ArmV7m => "v7m",
        ArmV7s => "v7s",
        ArmV7k => "v7k",
        ArmV7ve => "v7ve",
        ArmV6 => "v6",
        ArmV6m => "v6m",
        ArmV6k => "v6k",
        ArmV6t2 => "v6t2",
        ArmV5 => "v5",
        ArmV5te => "v5te",
        ArmV4t => "v4t",
        Aarch64Arm64e => "arm64e",
        Aarch64Arm64ec => "arm64ec",
        Aarch64Lfi => "lfi",
        KalimbaV3 => "kalimba3",
        KalimbaV4 => "kalimba4",
        KalimbaV5 => "kalimba5",
        MipsR6 => "r6",
        PpcSpe => "spe",
        SpirvV10 => "v1.0",
        SpirvV11 => "v1.1",
        SpirvV12 => "v1.2",
        SpirvV13 => "v1.3",
        SpirvV14 => "v1.4",
        SpirvV15 => "v1.5",
        SpirvV16 => "v1.6",
        DxilV1_0 => "v1.0",
        DxilV1_1 => "v1.1",
        DxilV1_2 => "v1.2",
        DxilV1_3 => "v1.3",
        DxilV1_4 => "v1.4",
        DxilV1_5 => "v1.5",
        DxilV1_6 => "v1.6",
        DxilV1_7 => "v1.7",
        DxilV1_8 => "v1.8",
        DxilV1_9 => "v1.9",
    }
}

llvm_enum! {
    /// LLVM's `Triple::VendorType`.
    Vendor, "vendor" {
        Unknown => "unknown",
        Apple => "apple",
        Pc => "pc",
        Scei => "scei",
        Freescale => "fsl",
        Ibm => "ibm",
        ImaginationTechnologies => "img",
        MipsTechnologies => "mti",
        Nvidia => "nvidia",
        Csr => "csr",
        Amd => "amd",
        Mesa => "mesa",
        Suse => "suse",
        OpenEmbedded => "oe",
        Intel => "intel",
        Meta => "meta",
    }
}

llvm_enum! {
    /// LLVM's `Triple::OSType`.
    Os, "operating system" {
        Unknown => "unknown",
        Darwin => "darwin",
        DragonFly => "dragonfly",
        FreeBsd => "freebsd",
        Fuchsia => "fuchsia",
        Ios => "ios",
        KFreeBsd => "kfreebsd",
        Linux => "linux",
        Lv2 => "lv2",
        MacOsx => "macosx",
        Managarm => "managarm",
        NetBsd => "netbsd",
        OpenBsd => "openbsd",
        Solaris => "solaris",
        Uefi => "uefi",
        Win32 => "windows",
        Zos => "zos",
        Haiku => "haiku",
        Rtems => "rtems",
        Aix => "aix",
        Cuda => "cuda",
        Nvcl => "nvcl",
        Amdhsa => "amdhsa",
        Ps4 => "ps4",
        Ps5 => "ps5",
        ElfIamcu => "elfiamcu",
        TvOs => "tvos",
        WatchOs => "watchos",
        BridgeOs => "bridgeos",
        DriverKit => "driverkit",
        XrOs => "xros",
        Mesa3d => "mesa3d",
        Amdpal => "amdpal",
        HermitCore => "hermit",
        Hurd => "hurd",
        Wasi => "wasi",
        WasiP1 => "wasip1",
        WasiP2 => "wasip2",
        WasiP3 => "wasip3",
        Emscripten => "emscripten",
        ShaderModel => "shadermodel",
        LiteOs => "liteos",
        Serenity => "serenity",
        Vulkan => "vulkan",
        CheriotRtos => "cheriotrtos",
    }
}

llvm_enum! {
    /// LLVM's `Triple::EnvironmentType`.
    Environment, "environment" {
        Unknown => "unknown",
        Gnu => "gnu",
        GnuT64 => "gnut64",
        GnuAbiN32 => "gnuabin32",
        GnuAbi64 => "gnuabi64",
        GnuEabi => "gnueabi",
        GnuEabiT64 => "gnueabit64",
        GnuEabiHf => "gnueabihf",
        GnuEabiHfT64 => "gnueabihft64",
        GnuF32 => "gnuf32",
        GnuF64 => "gnuf64",
        GnuSf => "gnusf",
        GnuX32 => "gnux32",
        GnuIlp32 => "gnu_ilp32",
        Code16 => "code16",
        Eabi => "eabi",
        EabiHf => "eabihf",
        Android => "android",
        Musl => "musl",
        MuslAbiN32 => "muslabin32",
        MuslAbi64 => "muslabi64",
        MuslEabi => "musleabi",
        MuslEabiHf => "musleabihf",
        MuslF32 => "muslf32",
        MuslSf => "muslsf",
        MuslX32 => "muslx32",
        MuslWali => "muslwali",
        Llvm => "llvm",
        Msvc => "msvc",
        Itanium => "itanium",
        Cygnus => "cygnus",
        CoreClr => "coreclr",
        Simulator => "simulator",
        MacAbi => "macabi",
        Pixel => "pixel",
        Vertex => "vertex",
        Geometry => "geometry",
        Hull => "hull",
        Domain => "domain",
        Compute => "compute",
        Library => "library",
        RayGeneration => "raygeneration",
        Intersection => "intersection",
        AnyHit => "anyhit",
        ClosestHit => "closesthit",
        Miss => "miss",
        Callable => "callable",
        Mesh => "mesh",
        Amplification => "amplification",
        RootSignature => "rootsignature",
        OpenCl => "opencl",
        OpenHos => "ohos",
        Mlibc => "mlibc",
        PAuthTest => "pauthtest",
        Mtia => "mtia",
    }
}

llvm_enum! {
    /// LLVM's `Triple::ObjectFormatType`. [`ObjectFormat::Unknown`] is named
    /// by the empty string, as in `getObjectFormatTypeName`.
    ObjectFormat, "object format" {
        Unknown => "",
        Coff => "coff",
        DxContainer => "dxcontainer",
        Elf => "elf",
        Goff => "goff",
        MachO => "macho",
        Spirv => "spirv",
        Wasm => "wasm",
        Xcoff => "xcoff",
    }
}

/// LLVM's `Triple::CanonicalForm`: how many components [`normalize`] emits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CanonicalForm {
    /// Keep however many components normalization produced.
    Any,
    /// `ARCHITECTURE-VENDOR-OPERATING_SYSTEM`.
    ThreeIdent,
    /// `ARCHITECTURE-VENDOR-OPERATING_SYSTEM-ENVIRONMENT`.
    FourIdent,
    /// `ARCHITECTURE-VENDOR-OPERATING_SYSTEM-ENVIRONMENT-FORMAT`.
    FiveIdent,
}

impl CanonicalForm {
    /// The number of components this form pads or truncates to, if any.
    pub fn component_count(self) -> Option<usize> {
        match self {
            CanonicalForm::Any => None,
            CanonicalForm::ThreeIdent => Some(3),
            CanonicalForm::FourIdent => Some(4),
            CanonicalForm::FiveIdent => Some(5),
        }
    }
}

/// Why [`try_normalize`] could not normalize a triple.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NormalizeError {
    /// A `dxil` triple names a shader model `6.N` with `N` above 9, for which
    /// LLVM has no DXIL version: LLVM stops the process with
    /// `LLVM ERROR: Unsupported Shader Model version`.
    UnsupportedShaderModel,
}

impl fmt::Display for NormalizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NormalizeError::UnsupportedShaderModel => {
                f.write_str("Unsupported Shader Model version")
            }
        }
    }
}

impl std::error::Error for NormalizeError {}

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

/// `StringRef::split('-')`: the text before the first `-` and the text after
/// it (empty when there is no `-`).
fn split_first(s: &str) -> (&str, &str) {
    s.split_once('-').unwrap_or((s, ""))
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

/// LLVM's `parseBPFArch`. Plain `bpf` follows the host's byte order, as in
/// LLVM (`sys::IsLittleEndianHost`).
fn parse_bpf_arch(name: &str) -> Arch {
    match name {
        "bpf" => {
            if cfg!(target_endian = "little") {
                Arch::Bpfel
            } else {
                Arch::Bpfeb
            }
        }
        "bpf_be" | "bpfeb" => Arch::Bpfeb,
        "bpf_le" | "bpfel" => Arch::Bpfel,
        _ => Arch::Unknown,
    }
}

/// LLVM's `parseArch`: the architecture named by a triple's first component,
/// including every alias (`amd64`, `i686`, `arm64`, `powerpc64le`, `sparc64`,
/// `mipsallegrex`, ...) and the special parsing of ARM/Thumb/AArch64 names
/// with versions (`armv7a`, `thumbv6m`, `armebv7`) and of BPF names.
pub fn parse_arch(name: &str) -> Arch {
    use Arch::*;
    let arch = match name {
        "i386" | "i486" | "i586" | "i686" | "i786" | "i886" | "i986" => X86,
        "amd64" | "x86_64" | "x86_64h" => X86_64,
        "powerpc" | "powerpcspe" | "ppc" | "ppc32" => Ppc,
        "powerpcle" | "ppcle" | "ppc32le" => Ppcle,
        "powerpc64" | "ppu" | "ppc64" => Ppc64,
        "powerpc64le" | "ppc64le" => Ppc64le,
        "xscale" => Arm,
        "xscaleeb" => Armeb,
        "aarch64" | "aarch64_lfi" | "arm64" | "arm64e" | "arm64ec" => Aarch64,
        "aarch64_be" => Aarch64Be,
        "aarch64_32" | "arm64_32" => Aarch64_32,
        "arc" => Arc,
        "arm" => Arm,
        "armeb" => Armeb,
        "thumb" => Thumb,
        "thumbeb" => Thumbeb,
        "avr" => Avr,
        "m68k" => M68k,
        "msp430" => Msp430,
        "mips" | "mipseb" | "mipsallegrex" | "mipsisa32r6" | "mipsr6" => Mips,
        "mipsel" | "mipsallegrexel" | "mipsisa32r6el" | "mipsr6el" => Mipsel,
        "mips64" | "mips64eb" | "mipsn32" | "mipsisa64r6" | "mips64r6" | "mipsn32r6" => Mips64,
        "mips64el" | "mipsn32el" | "mipsisa64r6el" | "mips64r6el" | "mipsn32r6el" => Mips64el,
        "r600" => R600,
        "amdgcn" => Amdgcn,
        "riscv32" => Riscv32,
        "riscv64" => Riscv64,
        "riscv32be" => Riscv32be,
        "riscv64be" => Riscv64be,
        "hexagon" => Hexagon,
        "s390x" | "systemz" => Systemz,
        "sparc" => Sparc,
        "sparcel" => Sparcel,
        "sparcv9" | "sparc64" => Sparcv9,
        "tce" => Tce,
        "tcele" => Tcele,
        "xcore" => Xcore,
        "nvptx" => Nvptx,
        "nvptx64" => Nvptx64,
        "amdil" => Amdil,
        "amdil64" => Amdil64,
        "hsail" => Hsail,
        "hsail64" => Hsail64,
        "spir" => Spir,
        "spir64" => Spir64,
        // Only these two versions are accepted without a width.
        "spirv" | "spirv1.5" | "spirv1.6" => Spirv,
        "spirv32" | "spirv32v1.0" | "spirv32v1.1" | "spirv32v1.2" | "spirv32v1.3"
        | "spirv32v1.4" | "spirv32v1.5" | "spirv32v1.6" => Spirv32,
        "spirv64" | "spirv64v1.0" | "spirv64v1.1" | "spirv64v1.2" | "spirv64v1.3"
        | "spirv64v1.4" | "spirv64v1.5" | "spirv64v1.6" => Spirv64,
        "lanai" => Lanai,
        "renderscript32" => Renderscript32,
        "renderscript64" => Renderscript64,
        "shave" => Shave,
        "ve" => Ve,
        "wasm32" => Wasm32,
        "wasm64" => Wasm64,
        "csky" => Csky,
        "loongarch32" => Loongarch32,
        "loongarch64" => Loongarch64,
        "dxil" | "dxilv1.0" | "dxilv1.1" | "dxilv1.2" | "dxilv1.3" | "dxilv1.4" | "dxilv1.5"
        | "dxilv1.6" | "dxilv1.7" | "dxilv1.8" | "dxilv1.9" => Dxil,
        "xtensa" => Xtensa,
        // The one prefix match of the chain; no exact name above starts with it.
        _ if name.starts_with("kalimba") => Kalimba,
        _ => Unknown,
    };
    if arch != Unknown {
        return arch;
    }
    if name.starts_with("arm") || name.starts_with("thumb") || name.starts_with("aarch64") {
        return parse_arm_arch(name);
    }
    if name.starts_with("bpf") {
        return parse_bpf_arch(name);
    }
    Unknown
}

/// LLVM's `parseARMArch`: ISA and byte order from the prefix, validity from
/// the canonical version suffix; v6-M is always Thumb.
fn parse_arm_arch(name: &str) -> Arch {
    use arm::{EndianKind, IsaKind, ProfileKind};
    let isa = arm::parse_arch_isa(name);
    let endian = arm::parse_arch_endian(name);
    let arch = match (endian, isa) {
        (EndianKind::Little, IsaKind::Arm) => Arch::Arm,
        (EndianKind::Little, IsaKind::Thumb) => Arch::Thumb,
        (EndianKind::Little, IsaKind::Aarch64) => Arch::Aarch64,
        (EndianKind::Big, IsaKind::Arm) => Arch::Armeb,
        (EndianKind::Big, IsaKind::Thumb) => Arch::Thumbeb,
        (EndianKind::Big, IsaKind::Aarch64) => Arch::Aarch64Be,
        _ => Arch::Unknown,
    };

    let canonical = arm::canonical_arch_name(name.as_bytes());
    if canonical.is_empty() {
        return Arch::Unknown;
    }
    // Thumb only exists in v4+.
    if isa == IsaKind::Thumb && (canonical.starts_with(b"v2") || canonical.starts_with(b"v3")) {
        return Arch::Unknown;
    }
    // Thumb only for v6m.
    if arm::parse_arch_profile(canonical) == ProfileKind::M
        && arm::parse_arch_version(canonical) == 6
    {
        return if endian == EndianKind::Big {
            Arch::Thumbeb
        } else {
            Arch::Thumb
        };
    }
    arch
}

/// LLVM's `parseSubArch`: the sub-architecture named by a triple's first
/// component.
///
/// ARM versions are recognised by LLVM's suffix match against its ARM
/// architecture table, which also fires on names that are not ARM at all
/// (`ve` → [`SubArch::ArmV7ve`], `e` → [`SubArch::ArmV5te`]); and the Kalimba
/// versions are only reachable for names the ARM parser rejects, so
/// `kalimba3` has [`SubArch::NoSubArch`]. Both quirks are LLVM's.
pub fn parse_sub_arch(name: &str) -> SubArch {
    use SubArch::*;
    if name.starts_with("mips") && (name.ends_with("r6el") || name.ends_with("r6")) {
        return MipsR6;
    }
    match name {
        "powerpcspe" => return PpcSpe,
        "arm64e" => return Aarch64Arm64e,
        "arm64ec" => return Aarch64Arm64ec,
        "aarch64_lfi" => return Aarch64Lfi,
        _ => {}
    }
    if name.starts_with("spirv") {
        const SPIRV: [(&str, SubArch); 7] = [
            ("v1.0", SpirvV10),
            ("v1.1", SpirvV11),
            ("v1.2", SpirvV12),
            ("v1.3", SpirvV13),
            ("v1.4", SpirvV14),
            ("v1.5", SpirvV15),
            ("v1.6", SpirvV16),
        ];
        return first_suffix(name, &SPIRV).unwrap_or(NoSubArch);
    }
    if name.starts_with("dxil") {
        const DXIL: [(&str, SubArch); 10] = [
            ("v1.0", DxilV1_0),
            ("v1.1", DxilV1_1),
            ("v1.2", DxilV1_2),
            ("v1.3", DxilV1_3),
            ("v1.4", DxilV1_4),
            ("v1.5", DxilV1_5),
            ("v1.6", DxilV1_6),
            ("v1.7", DxilV1_7),
            ("v1.8", DxilV1_8),
            ("v1.9", DxilV1_9),
        ];
        return first_suffix(name, &DXIL).unwrap_or(NoSubArch);
    }

    let arm_sub_arch = arm::canonical_arch_name(name.as_bytes());
    if arm_sub_arch.is_empty() {
        const KALIMBA: [(&str, SubArch); 3] = [
            ("kalimba3", KalimbaV3),
            ("kalimba4", KalimbaV4),
            ("kalimba5", KalimbaV5),
        ];
        return first_suffix(name, &KALIMBA).unwrap_or(NoSubArch);
    }

    arm_sub_arch_of(arm::parse_arch(arm_sub_arch))
}

/// The sub-architecture of an ARM architecture version (a table).
fn arm_sub_arch_of(kind: arm::ArchKind) -> SubArch {
    use SubArch::*;
    use arm::ArchKind as K;
    match kind {
        K::V4 => NoSubArch,
        K::V4t => ArmV4t,
        K::V5t => ArmV5,
        K::V5te | K::Iwmmxt | K::Iwmmxt2 | K::Xscale | K::V5tej => ArmV5te,
        K::V6 => ArmV6,
        K::V6k | K::V6kz => ArmV6k,
        K::V6t2 => ArmV6t2,
        K::V6m => ArmV6m,
        K::V7a | K::V7r => ArmV7,
        K::V7ve => ArmV7ve,
        K::V7k => ArmV7k,
        K::V7m => ArmV7m,
        K::V7s => ArmV7s,
        K::V7em => ArmV7em,
        K::V8a => ArmV8,
        K::V8_1a => ArmV8_1a,
        K::V8_2a => ArmV8_2a,
        K::V8_3a => ArmV8_3a,
        K::V8_4a => ArmV8_4a,
        K::V8_5a => ArmV8_5a,
        K::V8_6a => ArmV8_6a,
        K::V8_7a => ArmV8_7a,
        K::V8_8a => ArmV8_8a,
        K::V8_9a => ArmV8_9a,
        K::V9a => ArmV9,
        K::V9_1a => ArmV9_1a,
        K::V9_2a => ArmV9_2a,
        K::V9_3a => ArmV9_3a,
        K::V9_4a => ArmV9_4a,
        K::V9_5a => ArmV9_5a,
        K::V9_6a => ArmV9_6a,
        K::V9_7a => ArmV9_7a,
        K::V8r => ArmV8r,
        K::V8mBaseline => ArmV8mBaseline,
        K::V8mMainline => ArmV8mMainline,
        K::V8_1mMainline => ArmV8_1mMainline,
        K::Invalid => NoSubArch,
    }
}

/// `StringSwitch::EndsWith` chain: the value of the first suffix that `s` has.
fn first_suffix<T: Copy>(s: &str, table: &[(&str, T)]) -> Option<T> {
    table
        .iter()
        .find(|(suffix, _)| s.ends_with(suffix))
        .map(|&(_, value)| value)
}

/// `StringSwitch::StartsWith` chain: the value of the first prefix `s` has.
fn first_prefix<T: Copy>(s: &str, table: &[(&str, T)]) -> Option<T> {
    table
        .iter()
        .find(|(prefix, _)| s.starts_with(prefix))
        .map(|&(_, value)| value)
}

/// LLVM's `parseVendor`: exact vendor names, plus `sie` for SCEI.
pub fn parse_vendor(name: &str) -> Vendor {
    use Vendor::*;
    match name {
        "apple" => Apple,
        "pc" => Pc,
        "scei" | "sie" => Scei,
        "fsl" => Freescale,
        "ibm" => Ibm,
        "img" => ImaginationTechnologies,
        "mti" => MipsTechnologies,
        "nvidia" => Nvidia,
        "csr" => Csr,
        "amd" => Amd,
        "mesa" => Mesa,
        "suse" => Suse,
        "oe" => OpenEmbedded,
        "intel" => Intel,
        "meta" => Meta,
        _ => Unknown,
    }
}

/// LLVM's `parseOS` chain, in order: the first prefix that matches wins, so
/// versions may follow (`macosx15.0.0`, `ios17`), `macos` covers `macosx`,
/// and the `wasip*` names must precede `wasi`.
const OS_PREFIXES: &[(&str, Os)] = &[
    ("darwin", Os::Darwin),
    ("dragonfly", Os::DragonFly),
    ("freebsd", Os::FreeBsd),
    ("fuchsia", Os::Fuchsia),
    ("ios", Os::Ios),
    ("kfreebsd", Os::KFreeBsd),
    ("linux", Os::Linux),
    ("lv2", Os::Lv2),
    ("macos", Os::MacOsx),
    ("managarm", Os::Managarm),
    ("netbsd", Os::NetBsd),
    ("openbsd", Os::OpenBsd),
    ("solaris", Os::Solaris),
    ("uefi", Os::Uefi),
    ("win32", Os::Win32),
    ("windows", Os::Win32),
    ("zos", Os::Zos),
    ("haiku", Os::Haiku),
    ("rtems", Os::Rtems),
    ("aix", Os::Aix),
    ("cuda", Os::Cuda),
    ("nvcl", Os::Nvcl),
    ("amdhsa", Os::Amdhsa),
    ("ps4", Os::Ps4),
    ("ps5", Os::Ps5),
    ("elfiamcu", Os::ElfIamcu),
    ("tvos", Os::TvOs),
    ("watchos", Os::WatchOs),
    ("bridgeos", Os::BridgeOs),
    ("driverkit", Os::DriverKit),
    ("xros", Os::XrOs),
    ("visionos", Os::XrOs),
    ("mesa3d", Os::Mesa3d),
    ("amdpal", Os::Amdpal),
    ("hermit", Os::HermitCore),
    ("hurd", Os::Hurd),
    ("wasip1", Os::WasiP1),
    ("wasip2", Os::WasiP2),
    ("wasip3", Os::WasiP3),
    ("wasi", Os::Wasi),
    ("emscripten", Os::Emscripten),
    ("shadermodel", Os::ShaderModel),
    ("liteos", Os::LiteOs),
    ("serenity", Os::Serenity),
    ("vulkan", Os::Vulkan),
    ("cheriotrtos", Os::CheriotRtos),
];

/// LLVM's `parseOS`: the OS named by a triple's third component, matched by
/// prefix so that version suffixes (`macosx15.0.0`, `amdhsa5`) are accepted.
/// `win32` and `windows` are Windows, `visionos` is xrOS. (`cygwin`, `msys`
/// and `mingw*` are not OSes here; [`normalize`] rewrites them.)
pub fn parse_os(name: &str) -> Os {
    first_prefix(name, OS_PREFIXES).unwrap_or(Os::Unknown)
}

/// LLVM's `parseEnvironment` chain, in order (longer names before their
/// prefixes: `eabihf` before `eabi`, `gnueabihf` before `gnueabi`, ...).
const ENVIRONMENT_PREFIXES: &[(&str, Environment)] = &[
    ("eabihf", Environment::EabiHf),
    ("eabi", Environment::Eabi),
    ("gnuabin32", Environment::GnuAbiN32),
    ("gnuabi64", Environment::GnuAbi64),
    ("gnueabihft64", Environment::GnuEabiHfT64),
    ("gnueabihf", Environment::GnuEabiHf),
    ("gnueabit64", Environment::GnuEabiT64),
    ("gnueabi", Environment::GnuEabi),
    ("gnuf32", Environment::GnuF32),
    ("gnuf64", Environment::GnuF64),
    ("gnusf", Environment::GnuSf),
    ("gnux32", Environment::GnuX32),
    ("gnu_ilp32", Environment::GnuIlp32),
    ("code16", Environment::Code16),
    ("gnut64", Environment::GnuT64),
    ("gnu", Environment::Gnu),
    ("android", Environment::Android),
    ("muslabin32", Environment::MuslAbiN32),
    ("muslabi64", Environment::MuslAbi64),
    ("musleabihf", Environment::MuslEabiHf),
    ("musleabi", Environment::MuslEabi),
    ("muslf32", Environment::MuslF32),
    ("muslsf", Environment::MuslSf),
    ("muslx32", Environment::MuslX32),
    ("muslwali", Environment::MuslWali),
    ("musl", Environment::Musl),
    ("msvc", Environment::Msvc),
    ("itanium", Environment::Itanium),
    ("cygnus", Environment::Cygnus),
    ("coreclr", Environment::CoreClr),
    ("simulator", Environment::Simulator),
    ("macabi", Environment::MacAbi),
    ("pixel", Environment::Pixel),
    ("vertex", Environment::Vertex),
    ("geometry", Environment::Geometry),
    ("hull", Environment::Hull),
    ("domain", Environment::Domain),
    ("compute", Environment::Compute),
    ("library", Environment::Library),
    ("raygeneration", Environment::RayGeneration),
    ("intersection", Environment::Intersection),
    ("anyhit", Environment::AnyHit),
    ("closesthit", Environment::ClosestHit),
    ("miss", Environment::Miss),
    ("callable", Environment::Callable),
    ("mesh", Environment::Mesh),
    ("amplification", Environment::Amplification),
    ("rootsignature", Environment::RootSignature),
    ("opencl", Environment::OpenCl),
    ("ohos", Environment::OpenHos),
    ("pauthtest", Environment::PAuthTest),
    ("llvm", Environment::Llvm),
    ("mlibc", Environment::Mlibc),
    ("mtia", Environment::Mtia),
];

/// LLVM's `parseEnvironment`: the environment named by a triple's fourth
/// component, matched by prefix (`android21` is Android, `gnueabihf-elf` is
/// `gnueabihf`).
pub fn parse_environment(name: &str) -> Environment {
    first_prefix(name, ENVIRONMENT_PREFIXES).unwrap_or(Environment::Unknown)
}

/// LLVM's `parseFormat`: the object format named at the end of a triple's
/// fourth component (`...-gnu-elf`, `...-msvc-coff`, `...-macho`). `xcoff` is
/// tested before `coff`; `dxcontainer` is never parsed.
pub fn parse_format(name: &str) -> ObjectFormat {
    const FORMATS: [(&str, ObjectFormat); 7] = [
        ("xcoff", ObjectFormat::Xcoff),
        ("coff", ObjectFormat::Coff),
        ("elf", ObjectFormat::Elf),
        ("goff", ObjectFormat::Goff),
        ("macho", ObjectFormat::MachO),
        ("wasm", ObjectFormat::Wasm),
        ("spirv", ObjectFormat::Spirv),
    ];
    first_suffix(name, &FORMATS).unwrap_or(ObjectFormat::Unknown)
}

/// `llvm::Triple::normalize(Str, Form)` of LLVM 22, byte-exact.
///
/// Components that parse as an arch, vendor, OS or environment/object format
/// are moved to their canonical positions, empty ones become `unknown`, and
/// the Windows (`win32`, `mingw*`, `cygwin`, `msys`), Android
/// (`androideabi`), SUSE and DXIL shader-model rules are applied. `form`
/// then pads with `unknown` or truncates to 3, 4 or 5 components.
///
/// # Panics
///
/// Where LLVM stops the process: a `dxil` triple whose shader model is `6.N`
/// with `N > 9` (see [`try_normalize`]).
pub fn normalize(s: &str, form: CanonicalForm) -> String {
    match try_normalize(s, form) {
        Ok(normalized) => normalized,
        Err(err) => panic!("LLVM ERROR: {err} (normalizing target triple {s:?})"),
    }
}

/// [`normalize`], reporting as an error the one input on which LLVM aborts
/// instead of returning.
pub fn try_normalize(s: &str, form: CanonicalForm) -> Result<String, NormalizeError> {
    let mut components: Vec<Cow<'_, str>> = s.split('-').map(Cow::Borrowed).collect();
    // A component that already parses in its own position stays there; this
    // avoids moving a component that is both (say) a valid arch and OS.
    let mut r = Recognized::in_place(&components);
    let mut found = r.found();
    for pos in 0..found.len() {
        if !found[pos] {
            place(&mut components, &mut found, &mut r, pos);
        }
    }
    r.finish(&mut components, &found)?;
    if let Some(n) = form.component_count() {
        components.resize(n, Cow::Borrowed("unknown"));
    }
    Ok(components.join("-"))
}

/// What `normalize` recognised the components of a triple as.
struct Recognized {
    arch: Arch,
    vendor: Vendor,
    os: Os,
    environment: Environment,
    object_format: ObjectFormat,
    is_cygwin: bool,
    is_mingw32: bool,
}

/// Whether position `i` holds a component recognised in place.
fn fixed(found: &[bool; 4], i: usize) -> bool {
    i < found.len() && found[i]
}

impl Recognized {
    /// Each component parsed in its own position.
    fn in_place(components: &[Cow<'_, str>]) -> Recognized {
        let count = components.len();
        let mut r = Recognized {
            arch: parse_arch(&components[0]),
            vendor: Vendor::Unknown,
            os: Os::Unknown,
            environment: Environment::Unknown,
            object_format: ObjectFormat::Unknown,
            is_cygwin: false,
            is_mingw32: false,
        };
        if count > 1 {
            r.vendor = parse_vendor(&components[1]);
        }
        if count > 2 {
            let c = &components[2];
            r.os = parse_os(c);
            r.is_cygwin = c.starts_with("cygwin") || c.starts_with("msys");
            r.is_mingw32 = c.starts_with("mingw");
        }
        if count > 3 {
            r.environment = parse_environment(&components[3]);
        }
        if count > 4 {
            r.object_format = parse_format(&components[4]);
        }
        r
    }

    /// Which of arch, vendor, OS and environment were recognised.
    fn found(&self) -> [bool; 4] {
        [
            self.arch != Arch::Unknown,
            self.vendor != Vendor::Unknown,
            self.os != Os::Unknown,
            self.environment != Environment::Unknown,
        ]
    }

    /// Parses `comp` as the component of position `pos` (the last one: environment or object
    /// format), keeping what it is; whether it is one.
    fn try_position(&mut self, pos: usize, comp: &str) -> bool {
        match pos {
            0 => {
                self.arch = parse_arch(comp);
                self.arch != Arch::Unknown
            }
            1 => {
                self.vendor = parse_vendor(comp);
                self.vendor != Vendor::Unknown
            }
            2 => {
                self.os = parse_os(comp);
                self.is_cygwin = comp.starts_with("cygwin") || comp.starts_with("msys");
                self.is_mingw32 = comp.starts_with("mingw");
                self.os != Os::Unknown || self.is_cygwin || self.is_mingw32
            }
            _ => {
                self.environment = parse_environment(comp);
                let mut valid = self.environment != Environment::Unknown;
                if !valid {
                    self.object_format = parse_format(comp);
                    valid = self.object_format != ObjectFormat::Unknown;
                }
                valid
            }
        }
    }

    /// The canonical spellings once every component is in place: `unknown` for empty
    /// components, and LLVM's rewrites of Android, SUSE, Windows and DXIL triples.
    fn finish(
        &self,
        components: &mut Vec<Cow<'_, str>>,
        found: &[bool; 4],
    ) -> Result<(), NormalizeError> {
        // "none" in the middle of a three-component triple is the OS, not the
        // vendor.
        if found[0]
            && !found[1]
            && !found[2]
            && found[3]
            && components[1] == "none"
            && components[2].is_empty()
        {
            components.swap(1, 2);
        }
        for c in components.iter_mut() {
            if c.is_empty() {
                *c = Cow::Borrowed("unknown");
            }
        }
        if self.environment == Environment::Android {
            if let Some(version) = components[3].strip_prefix("androideabi") {
                components[3] = if version.is_empty() {
                    Cow::Borrowed("android")
                } else {
                    Cow::Owned(format!("android{version}"))
                };
            }
        }
        // SUSE uses "gnueabi" to mean "gnueabihf".
        if self.vendor == Vendor::Suse && self.environment == Environment::GnuEabi {
            components[3] = Cow::Borrowed("gnueabihf");
        }
        self.windows(components);
        // A DXIL triple without a version takes it from the shader model.
        if components[0] == "dxil" {
            components.truncate(4);
            if self.os == Os::ShaderModel {
                components[0] = Cow::Borrowed(dxil_arch_from_shader_model(&components[2])?);
            }
        }
        Ok(())
    }

    /// The OS and environment of Windows triples (MSVC, MinGW, Cygwin), and their object
    /// format when it is not COFF.
    fn windows(&self, components: &mut Vec<Cow<'_, str>>) {
        // `SmallVector::resize` pads with empty strings here: the "unknown"
        // replacement has already happened.
        let (os, environment, format) = (self.os, self.environment, self.object_format);
        if os == Os::Win32 {
            components.resize(4, Cow::Borrowed(""));
            components[2] = Cow::Borrowed("windows");
            if environment == Environment::Unknown {
                components[3] = match format {
                    ObjectFormat::Unknown | ObjectFormat::Coff => Cow::Borrowed("msvc"),
                    other => Cow::Borrowed(other.name()),
                };
            }
        } else if self.is_mingw32 {
            components.resize(4, Cow::Borrowed(""));
            components[2] = Cow::Borrowed("windows");
            components[3] = Cow::Borrowed("gnu");
        } else if self.is_cygwin {
            components.resize(4, Cow::Borrowed(""));
            components[2] = Cow::Borrowed("windows");
            components[3] = Cow::Borrowed("cygnus");
        }
        let windows = self.is_mingw32
            || self.is_cygwin
            || (os == Os::Win32 && environment != Environment::Unknown);
        if windows && format != ObjectFormat::Unknown && format != ObjectFormat::Coff {
            components.resize(5, Cow::Borrowed(""));
            components[4] = Cow::Borrowed(format.name());
        }
    }
}

/// Finds the first component not fixed in place that parses as the component of position
/// `pos`, and moves it there.
fn place(
    components: &mut Vec<Cow<'_, str>>,
    found: &mut [bool; 4],
    r: &mut Recognized,
    pos: usize,
) {
    let mut idx = 0;
    while idx < components.len() {
        if fixed(found, idx) {
            idx += 1;
            continue;
        }
        let comp = components[idx].clone();
        if !r.try_position(pos, &comp) {
            idx += 1;
            continue;
        }
        // Move the component to its position, pushing non-fixed
        // components in the way to the right.
        if pos < idx {
            move_left(components, found, pos, idx);
        } else if pos > idx {
            push_right(components, found, pos, idx);
        }
        debug_assert!(pos < components.len() && components[pos] == comp);
        found[pos] = true;
        return;
    }
}

/// Insert left: a-b-i386 -> i386-a-b. The moved component's old slot becomes empty, which
/// ends the chain of pushes.
fn move_left(components: &mut [Cow<'_, str>], found: &[bool; 4], pos: usize, idx: usize) {
    let mut current = std::mem::replace(&mut components[idx], Cow::Borrowed(""));
    let mut i = pos;
    while !current.is_empty() {
        while fixed(found, i) {
            i += 1;
        }
        std::mem::swap(&mut current, &mut components[i]);
        i += 1;
    }
}

/// Push right by inserting empty components until the component at `idx` reaches `pos`:
/// pc-a -> -pc-a.
fn push_right(components: &mut Vec<Cow<'_, str>>, found: &[bool; 4], pos: usize, mut idx: usize) {
    loop {
        let mut current: Cow<'_, str> = Cow::Borrowed("");
        let mut i = idx;
        while i < components.len() {
            std::mem::swap(&mut current, &mut components[i]);
            if current.is_empty() {
                break;
            }
            i += 1;
            while fixed(found, i) {
                i += 1;
            }
        }
        if !current.is_empty() {
            components.push(current);
        }
        idx += 1;
        while fixed(found, idx) {
            idx += 1;
        }
        if idx >= pos {
            break;
        }
    }
}

/// LLVM's `getDXILArchNameFromShaderModel`: `shadermodel6.N` → `dxilv1.N`,
/// `shadermodel6.x` → the latest, anything else → `dxilv1.0`.
fn dxil_arch_from_shader_model(shader_model: &str) -> Result<&'static str, NormalizeError> {
    const DXIL_NAMES: [&str; 10] = [
        "dxilv1.0", "dxilv1.1", "dxilv1.2", "dxilv1.3", "dxilv1.4", "dxilv1.5", "dxilv1.6",
        "dxilv1.7", "dxilv1.8", "dxilv1.9",
    ];
    const LATEST: &str = DXIL_NAMES[DXIL_NAMES.len() - 1];
    let version = parse_version(shader_model.get("shadermodel".len()..).unwrap_or(""));
    if !version.is_empty() {
        if version.major == 6 {
            if let Some(minor) = version.minor {
                return usize::try_from(minor)
                    .ok()
                    .and_then(|m| DXIL_NAMES.get(m).copied())
                    .ok_or(NormalizeError::UnsupportedShaderModel);
            }
        }
    } else if shader_model == "shadermodel6.x" {
        return Ok(LATEST);
    }
    Ok(DXIL_NAMES[0])
}

/// The parts of `llvm::VersionTuple` that `normalize` looks at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Version {
    major: u32,
    minor: Option<u32>,
    subminor: Option<u32>,
}

impl Version {
    /// `VersionTuple::empty`: every number zero (present or not).
    fn is_empty(self) -> bool {
        self.major == 0 && self.minor.unwrap_or(0) == 0 && self.subminor.unwrap_or(0) == 0
    }
}

/// LLVM's `parseVersionFromName`: `VersionTuple::tryParse` (up to four
/// dot-separated decimal numbers, nothing else; an empty tuple on any error),
/// then `withoutBuild`. Numbers wrap around like LLVM's `unsigned`.
fn parse_version(input: &str) -> Version {
    fn parse_int(input: &mut &[u8]) -> Option<u32> {
        let (&first, rest) = input.split_first()?;
        if !first.is_ascii_digit() {
            return None;
        }
        let mut value = u32::from(first - b'0');
        *input = rest;
        while let Some((&c, rest)) = input.split_first() {
            if !c.is_ascii_digit() {
                break;
            }
            value = value.wrapping_mul(10).wrapping_add(u32::from(c - b'0'));
            *input = rest;
        }
        Some(value)
    }

    fn try_parse(mut input: &[u8]) -> Option<Version> {
        let mut numbers = [0u32; 4];
        let mut count = 0;
        loop {
            numbers[count] = parse_int(&mut input)?;
            count += 1;
            if input.is_empty() {
                break;
            }
            if count == numbers.len() || input[0] != b'.' {
                return None;
            }
            input = &input[1..];
        }
        Some(Version {
            major: numbers[0],
            minor: (count > 1).then_some(numbers[1]),
            subminor: (count > 2).then_some(numbers[2]),
        })
    }

    try_parse(input.as_bytes()).unwrap_or_default()
}

/// The pieces of LLVM's ARM target parser (`ARMTargetParser.cpp`,
/// `ARMTargetParserCommon.cpp`, `ARMTargetParser.def`) that `Triple` uses.
/// Works on bytes, as LLVM does, so odd input never splits a character.
mod arm {
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
        if arch.starts_with("armeb")
            || arch.starts_with("thumbeb")
            || arch.starts_with("aarch64_be")
        {
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
            V7a | V7ve | V7k | V8a | V8_1a | V8_2a | V8_3a | V8_4a | V8_5a | V8_6a | V8_7a
            | V8_8a | V8_9a | V9a | V9_1a | V9_2a | V9_3a | V9_4a | V9_5a | V9_6a | V9_7a => {
                ProfileKind::A
            }
            V4 | V4t | V5t | V5te | V5tej | V6 | V6k | V6t2 | V6kz | V7s | Iwmmxt | Iwmmxt2
            | Xscale | Invalid => ProfileKind::Invalid,
        }
    }
}

#[cfg(test)]
mod tests {
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
}
