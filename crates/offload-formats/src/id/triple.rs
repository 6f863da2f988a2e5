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

    use arm::ArchKind as K;
    match arm::parse_arch(arm_sub_arch) {
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
    let count = components.len();

    // A component that already parses in its own position stays there; this
    // avoids moving a component that is both (say) a valid arch and OS.
    let mut arch = parse_arch(&components[0]);
    let mut vendor = if count > 1 {
        parse_vendor(&components[1])
    } else {
        Vendor::Unknown
    };
    let mut os = Os::Unknown;
    let mut is_cygwin = false;
    let mut is_mingw32 = false;
    if count > 2 {
        let c = &components[2];
        os = parse_os(c);
        is_cygwin = c.starts_with("cygwin") || c.starts_with("msys");
        is_mingw32 = c.starts_with("mingw");
    }
    let mut environment = if count > 3 {
        parse_environment(&components[3])
    } else {
        Environment::Unknown
    };
    let mut object_format = if count > 4 {
        parse_format(&components[4])
    } else {
        ObjectFormat::Unknown
    };

    let mut found = [
        arch != Arch::Unknown,
        vendor != Vendor::Unknown,
        os != Os::Unknown,
        environment != Environment::Unknown,
    ];
    let fixed = |found: &[bool; 4], i: usize| i < found.len() && found[i];

    for pos in 0..found.len() {
        if found[pos] {
            continue;
        }
        let mut idx = 0;
        while idx < components.len() {
            if fixed(&found, idx) {
                idx += 1;
                continue;
            }
            let comp = components[idx].clone();
            let valid = match pos {
                0 => {
                    arch = parse_arch(&comp);
                    arch != Arch::Unknown
                }
                1 => {
                    vendor = parse_vendor(&comp);
                    vendor != Vendor::Unknown
                }
                2 => {
                    os = parse_os(&comp);
                    is_cygwin = comp.starts_with("cygwin") || comp.starts_with("msys");
                    is_mingw32 = comp.starts_with("mingw");
                    os != Os::Unknown || is_cygwin || is_mingw32
                }
                _ => {
                    environment = parse_environment(&comp);
                    let mut valid = environment != Environment::Unknown;
                    if !valid {
                        object_format = parse_format(&comp);
                        valid = object_format != ObjectFormat::Unknown;
                    }
                    valid
                }
            };
            if !valid {
                idx += 1;
                continue;
            }

            // Move the component to its position, pushing non-fixed
            // components in the way to the right.
            if pos < idx {
                // Insert left: a-b-i386 -> i386-a-b. The moved component's
                // old slot becomes empty, which ends the chain of pushes.
                let mut current = std::mem::replace(&mut components[idx], Cow::Borrowed(""));
                let mut i = pos;
                while !current.is_empty() {
                    while fixed(&found, i) {
                        i += 1;
                    }
                    std::mem::swap(&mut current, &mut components[i]);
                    i += 1;
                }
            } else if pos > idx {
                // Push right by inserting empty components until the component
                // reaches its position: pc-a -> -pc-a.
                loop {
                    let mut current: Cow<'_, str> = Cow::Borrowed("");
                    let mut i = idx;
                    while i < components.len() {
                        std::mem::swap(&mut current, &mut components[i]);
                        if current.is_empty() {
                            break;
                        }
                        i += 1;
                        while fixed(&found, i) {
                            i += 1;
                        }
                    }
                    if !current.is_empty() {
                        components.push(current);
                    }
                    idx += 1;
                    while fixed(&found, idx) {
                        idx += 1;
                    }
                    if idx >= pos {
                        break;
                    }
                }
            }
            debug_assert!(pos < components.len() && components[pos] == comp);
            found[pos] = true;
            break;
        }
    }

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

    if environment == Environment::Android {
        if let Some(version) = components[3].strip_prefix("androideabi") {
            components[3] = if version.is_empty() {
                Cow::Borrowed("android")
            } else {
                Cow::Owned(format!("android{version}"))
            };
        }
    }

    // SUSE uses "gnueabi" to mean "gnueabihf".
    if vendor == Vendor::Suse && environment == Environment::GnuEabi {
        components[3] = Cow::Borrowed("gnueabihf");
    }

    // `SmallVector::resize` pads with empty strings here: the "unknown"
    // replacement has already happened.
    if os == Os::Win32 {
        components.resize(4, Cow::Borrowed(""));
        components[2] = Cow::Borrowed("windows");
        if environment == Environment::Unknown {
            components[3] = match object_format {
                ObjectFormat::Unknown | ObjectFormat::Coff => Cow::Borrowed("msvc"),
                other => Cow::Borrowed(other.name()),
            };
        }
    } else if is_mingw32 {
        components.resize(4, Cow::Borrowed(""));
        components[2] = Cow::Borrowed("windows");
        components[3] = Cow::Borrowed("gnu");
    } else if is_cygwin {
        components.resize(4, Cow::Borrowed(""));
        components[2] = Cow::Borrowed("windows");
        components[3] = Cow::Borrowed("cygnus");
    }
    if (is_mingw32 || is_cygwin || (os == Os::Win32 && environment != Environment::Unknown))
        && object_format != ObjectFormat::Unknown
        && object_format != ObjectFormat::Coff
    {
        components.resize(5, Cow::Borrowed(""));
        components[4] = Cow::Borrowed(object_format.name());
    }

    // A DXIL triple without a version takes it from the shader model.
    if components[0] == "dxil" {
        components.truncate(4);
        if os == Os::ShaderModel {
            components[0] = Cow::Borrowed(dxil_arch_from_shader_model(&components[2])?);
        }
    }

    if let Some(n) = form.component_count() {
        components.resize(n, Cow::Borrowed("unknown"));
    }

    Ok(components.join("-"))
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
    //! The tables below were produced against LLVM 22.1.8 on this project's
    //! development machine, so these tests prove byte-identity without LLVM:
    //!
    //! - `BUNDLER_*`: a script ran `clang-offload-bundler -type=bc` (LLVM 22)
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

    use super::*;

    /// `(A-B-C-D, stored)`: clang-offload-bundler 22 run with `-targets=host-A-B-C-D`
    /// lists the entry `host-<stored>-`, i.e. `normalize(A-B-C-D, FourIdent)`.
    #[rustfmt::skip]
    const BUNDLER_FOUR_IDENT: &[(&str, &str)] = &[
        ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-gnu"),
        ("x86_64-unknown-linux-", "x86_64-unknown-linux-unknown"),
        ("x86_64--linux-gnu", "x86_64-unknown-linux-gnu"),
        ("x86_64-linux-gnu-", "x86_64-unknown-linux-gnu"),
        ("aarch64-apple-darwin-", "aarch64-apple-darwin-unknown"),
        ("nvptx64---", "nvptx64-unknown-unknown-unknown"),
        ("nvptx64-nvidia-cuda-", "nvptx64-nvidia-cuda-unknown"),
        ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-gnu"),
        ("amd64-unknown-linux-gnu", "amd64-unknown-linux-gnu"),
        ("i386-unknown-linux-gnu", "i386-unknown-linux-gnu"),
        ("i686-unknown-linux-gnu", "i686-unknown-linux-gnu"),
        ("aarch64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"),
        ("arm64-unknown-linux-gnu", "arm64-unknown-linux-gnu"),
        ("arm64e-unknown-linux-gnu", "arm64e-unknown-linux-gnu"),
        ("arm64ec-unknown-linux-gnu", "arm64ec-unknown-linux-gnu"),
        ("aarch64_be-unknown-linux-gnu", "aarch64_be-unknown-linux-gnu"),
        ("aarch64_32-unknown-linux-gnu", "aarch64_32-unknown-linux-gnu"),
        ("arm64_32-unknown-linux-gnu", "arm64_32-unknown-linux-gnu"),
        ("arm-unknown-linux-gnu", "arm-unknown-linux-gnu"),
        ("armeb-unknown-linux-gnu", "armeb-unknown-linux-gnu"),
        ("armv7-unknown-linux-gnu", "armv7-unknown-linux-gnu"),
        ("armv7a-unknown-linux-gnu", "armv7a-unknown-linux-gnu"),
        ("armv7s-unknown-linux-gnu", "armv7s-unknown-linux-gnu"),
        ("armv7k-unknown-linux-gnu", "armv7k-unknown-linux-gnu"),
        ("armv7em-unknown-linux-gnu", "armv7em-unknown-linux-gnu"),
        ("armv6m-unknown-linux-gnu", "armv6m-unknown-linux-gnu"),
        ("armebv7-unknown-linux-gnu", "armebv7-unknown-linux-gnu"),
        ("armv7eb-unknown-linux-gnu", "armv7eb-unknown-linux-gnu"),
        ("thumb-unknown-linux-gnu", "thumb-unknown-linux-gnu"),
        ("thumbv7m-unknown-linux-gnu", "thumbv7m-unknown-linux-gnu"),
        ("thumbv6m-unknown-linux-gnu", "thumbv6m-unknown-linux-gnu"),
        ("thumbebv7-unknown-linux-gnu", "thumbebv7-unknown-linux-gnu"),
        ("xscale-unknown-linux-gnu", "xscale-unknown-linux-gnu"),
        ("powerpc-unknown-linux-gnu", "powerpc-unknown-linux-gnu"),
        ("powerpc64-unknown-linux-gnu", "powerpc64-unknown-linux-gnu"),
        ("powerpc64le-unknown-linux-gnu", "powerpc64le-unknown-linux-gnu"),
        ("ppc64le-unknown-linux-gnu", "ppc64le-unknown-linux-gnu"),
        ("ppc-unknown-linux-gnu", "ppc-unknown-linux-gnu"),
        ("mips-unknown-linux-gnu", "mips-unknown-linux-gnu"),
        ("mipsel-unknown-linux-gnu", "mipsel-unknown-linux-gnu"),
        ("mips64-unknown-linux-gnu", "mips64-unknown-linux-gnu"),
        ("mips64el-unknown-linux-gnu", "mips64el-unknown-linux-gnu"),
        ("mipsisa64r6-unknown-linux-gnu", "mipsisa64r6-unknown-linux-gnu"),
        ("mipsn32-unknown-linux-gnu", "mipsn32-unknown-linux-gnu"),
        ("mipsallegrex-unknown-linux-gnu", "mipsallegrex-unknown-linux-gnu"),
        ("riscv32-unknown-linux-gnu", "riscv32-unknown-linux-gnu"),
        ("riscv64-unknown-linux-gnu", "riscv64-unknown-linux-gnu"),
        ("riscv64be-unknown-linux-gnu", "riscv64be-unknown-linux-gnu"),
        ("s390x-unknown-linux-gnu", "s390x-unknown-linux-gnu"),
        ("systemz-unknown-linux-gnu", "systemz-unknown-linux-gnu"),
        ("sparc-unknown-linux-gnu", "sparc-unknown-linux-gnu"),
        ("sparcv9-unknown-linux-gnu", "sparcv9-unknown-linux-gnu"),
        ("sparc64-unknown-linux-gnu", "sparc64-unknown-linux-gnu"),
        ("amdgcn-unknown-linux-gnu", "amdgcn-unknown-linux-gnu"),
        ("r600-unknown-linux-gnu", "r600-unknown-linux-gnu"),
        ("nvptx-unknown-linux-gnu", "nvptx-unknown-linux-gnu"),
        ("nvptx64-unknown-linux-gnu", "nvptx64-unknown-linux-gnu"),
        ("spirv-unknown-linux-gnu", "spirv-unknown-linux-gnu"),
        ("spirv64-unknown-linux-gnu", "spirv64-unknown-linux-gnu"),
        ("spirv32-unknown-linux-gnu", "spirv32-unknown-linux-gnu"),
        ("spirv64v1.3-unknown-linux-gnu", "spirv64v1.3-unknown-linux-gnu"),
        ("spir64-unknown-linux-gnu", "spir64-unknown-linux-gnu"),
        ("wasm32-unknown-linux-gnu", "wasm32-unknown-linux-gnu"),
        ("wasm64-unknown-linux-gnu", "wasm64-unknown-linux-gnu"),
        ("hexagon-unknown-linux-gnu", "hexagon-unknown-linux-gnu"),
        ("loongarch64-unknown-linux-gnu", "loongarch64-unknown-linux-gnu"),
        ("csky-unknown-linux-gnu", "csky-unknown-linux-gnu"),
        ("m68k-unknown-linux-gnu", "m68k-unknown-linux-gnu"),
        ("msp430-unknown-linux-gnu", "msp430-unknown-linux-gnu"),
        ("avr-unknown-linux-gnu", "avr-unknown-linux-gnu"),
        ("ve-unknown-linux-gnu", "ve-unknown-linux-gnu"),
        ("xtensa-unknown-linux-gnu", "xtensa-unknown-linux-gnu"),
        ("bpf-unknown-linux-gnu", "bpf-unknown-linux-gnu"),
        ("bpfel-unknown-linux-gnu", "bpfel-unknown-linux-gnu"),
        ("bpfeb-unknown-linux-gnu", "bpfeb-unknown-linux-gnu"),
        ("lanai-unknown-linux-gnu", "lanai-unknown-linux-gnu"),
        ("kalimba-unknown-linux-gnu", "kalimba-unknown-linux-gnu"),
        ("kalimba4-unknown-linux-gnu", "kalimba4-unknown-linux-gnu"),
        ("hsail64-unknown-linux-gnu", "hsail64-unknown-linux-gnu"),
        ("amdil64-unknown-linux-gnu", "amdil64-unknown-linux-gnu"),
        ("renderscript64-unknown-linux-gnu", "renderscript64-unknown-linux-gnu"),
        ("dxil-unknown-linux-gnu", "dxil-unknown-linux-gnu"),
        ("dxilv1.3-unknown-linux-gnu", "dxilv1.3-unknown-linux-gnu"),
        ("x86_64h-unknown-linux-gnu", "x86_64h-unknown-linux-gnu"),
        ("arc-unknown-linux-gnu", "arc-unknown-linux-gnu"),
        ("xcore-unknown-linux-gnu", "xcore-unknown-linux-gnu"),
        ("tce-unknown-linux-gnu", "tce-unknown-linux-gnu"),
        ("x86_64-unknown-linux-", "x86_64-unknown-linux-unknown"),
        ("x86_64-pc-linux-", "x86_64-pc-linux-unknown"),
        ("x86_64-apple-linux-", "x86_64-apple-linux-unknown"),
        ("x86_64-nvidia-linux-", "x86_64-nvidia-linux-unknown"),
        ("x86_64-amd-linux-", "x86_64-amd-linux-unknown"),
        ("x86_64-intel-linux-", "x86_64-intel-linux-unknown"),
        ("x86_64-ibm-linux-", "x86_64-ibm-linux-unknown"),
        ("x86_64-suse-linux-", "x86_64-suse-linux-unknown"),
        ("x86_64-oe-linux-", "x86_64-oe-linux-unknown"),
        ("x86_64-mesa-linux-", "x86_64-mesa-linux-unknown"),
        ("x86_64-img-linux-", "x86_64-img-linux-unknown"),
        ("x86_64-mti-linux-", "x86_64-mti-linux-unknown"),
        ("x86_64-fsl-linux-", "x86_64-fsl-linux-unknown"),
        ("x86_64-csr-linux-", "x86_64-csr-linux-unknown"),
        ("x86_64-scei-linux-", "x86_64-scei-linux-unknown"),
        ("x86_64-sie-linux-", "x86_64-sie-linux-unknown"),
        ("x86_64-meta-linux-", "x86_64-meta-linux-unknown"),
        ("x86_64-w64-linux-", "x86_64-w64-linux-unknown"),
        ("x86_64-none-linux-", "x86_64-none-linux-unknown"),
        ("x86_64-redhat-linux-", "x86_64-redhat-linux-unknown"),
        ("x86_64-foo-linux-", "x86_64-foo-linux-unknown"),
        ("aarch64-unknown-linux-", "aarch64-unknown-linux-unknown"),
        ("aarch64-unknown-linux6-", "aarch64-unknown-linux6-unknown"),
        ("aarch64-unknown-windows-", "aarch64-unknown-windows-msvc"),
        ("aarch64-unknown-win32-", "aarch64-unknown-windows-msvc"),
        ("aarch64-unknown-mingw32-", "aarch64-unknown-windows-gnu"),
        ("aarch64-unknown-cygwin-", "aarch64-unknown-windows-cygnus"),
        ("aarch64-unknown-msys-", "aarch64-unknown-windows-cygnus"),
        ("aarch64-unknown-darwin-", "aarch64-unknown-darwin-unknown"),
        ("aarch64-unknown-darwin23.1.0-", "aarch64-unknown-darwin23.1.0-unknown"),
        ("aarch64-unknown-macosx-", "aarch64-unknown-macosx-unknown"),
        ("aarch64-unknown-macosx15.0.0-", "aarch64-unknown-macosx15.0.0-unknown"),
        ("aarch64-unknown-macos-", "aarch64-unknown-macos-unknown"),
        ("aarch64-unknown-ios-", "aarch64-unknown-ios-unknown"),
        ("aarch64-unknown-ios17.0-", "aarch64-unknown-ios17.0-unknown"),
        ("aarch64-unknown-tvos-", "aarch64-unknown-tvos-unknown"),
        ("aarch64-unknown-watchos-", "aarch64-unknown-watchos-unknown"),
        ("aarch64-unknown-xros-", "aarch64-unknown-xros-unknown"),
        ("aarch64-unknown-visionos-", "aarch64-unknown-visionos-unknown"),
        ("aarch64-unknown-driverkit-", "aarch64-unknown-driverkit-unknown"),
        ("aarch64-unknown-bridgeos-", "aarch64-unknown-bridgeos-unknown"),
        ("aarch64-unknown-amdpal-", "aarch64-unknown-amdpal-unknown"),
        ("aarch64-unknown-mesa3d-", "aarch64-unknown-mesa3d-unknown"),
        ("aarch64-unknown-cuda-", "aarch64-unknown-cuda-unknown"),
        ("aarch64-unknown-nvcl-", "aarch64-unknown-nvcl-unknown"),
        ("aarch64-unknown-freebsd-", "aarch64-unknown-freebsd-unknown"),
        ("aarch64-unknown-freebsd14.0-", "aarch64-unknown-freebsd14.0-unknown"),
        ("aarch64-unknown-netbsd-", "aarch64-unknown-netbsd-unknown"),
        ("aarch64-unknown-openbsd-", "aarch64-unknown-openbsd-unknown"),
        ("aarch64-unknown-dragonfly-", "aarch64-unknown-dragonfly-unknown"),
        ("aarch64-unknown-fuchsia-", "aarch64-unknown-fuchsia-unknown"),
        ("aarch64-unknown-haiku-", "aarch64-unknown-haiku-unknown"),
        ("aarch64-unknown-hurd-", "aarch64-unknown-hurd-unknown"),
        ("aarch64-unknown-aix-", "aarch64-unknown-aix-unknown"),
        ("aarch64-unknown-zos-", "aarch64-unknown-zos-unknown"),
        ("aarch64-unknown-solaris-", "aarch64-unknown-solaris-unknown"),
        ("aarch64-unknown-uefi-", "aarch64-unknown-uefi-unknown"),
        ("aarch64-unknown-wasi-", "aarch64-unknown-wasi-unknown"),
        ("aarch64-unknown-wasip1-", "aarch64-unknown-wasip1-unknown"),
        ("aarch64-unknown-wasip2-", "aarch64-unknown-wasip2-unknown"),
        ("aarch64-unknown-emscripten-", "aarch64-unknown-emscripten-unknown"),
        ("aarch64-unknown-elfiamcu-", "aarch64-unknown-elfiamcu-unknown"),
        ("aarch64-unknown-ps4-", "aarch64-unknown-ps4-unknown"),
        ("aarch64-unknown-ps5-", "aarch64-unknown-ps5-unknown"),
        ("aarch64-unknown-lv2-", "aarch64-unknown-lv2-unknown"),
        ("aarch64-unknown-rtems-", "aarch64-unknown-rtems-unknown"),
        ("aarch64-unknown-hermit-", "aarch64-unknown-hermit-unknown"),
        ("aarch64-unknown-liteos-", "aarch64-unknown-liteos-unknown"),
        ("aarch64-unknown-serenity-", "aarch64-unknown-serenity-unknown"),
        ("aarch64-unknown-vulkan-", "aarch64-unknown-vulkan-unknown"),
        ("aarch64-unknown-vulkan1.3-", "aarch64-unknown-vulkan1.3-unknown"),
        ("aarch64-unknown-shadermodel6.3-", "aarch64-unknown-shadermodel6.3-unknown"),
        ("aarch64-unknown-managarm-", "aarch64-unknown-managarm-unknown"),
        ("aarch64-unknown-cheriotrtos-", "aarch64-unknown-cheriotrtos-unknown"),
        ("aarch64-unknown-none-", "aarch64-unknown-none-unknown"),
        ("aarch64-unknown-unknown-", "aarch64-unknown-unknown-unknown"),
        ("aarch64-unknown-nacl-", "aarch64-unknown-nacl-unknown"),
        ("aarch64-unknown-foo-", "aarch64-unknown-foo-unknown"),
        ("armv7-unknown-linux-gnu", "armv7-unknown-linux-gnu"),
        ("armv7-unknown-linux-gnueabi", "armv7-unknown-linux-gnueabi"),
        ("armv7-unknown-linux-gnueabihf", "armv7-unknown-linux-gnueabihf"),
        ("armv7-unknown-linux-gnux32", "armv7-unknown-linux-gnux32"),
        ("armv7-unknown-linux-gnuabi64", "armv7-unknown-linux-gnuabi64"),
        ("armv7-unknown-linux-gnuabin32", "armv7-unknown-linux-gnuabin32"),
        ("armv7-unknown-linux-gnu_ilp32", "armv7-unknown-linux-gnu_ilp32"),
        ("armv7-unknown-linux-gnut64", "armv7-unknown-linux-gnut64"),
        ("armv7-unknown-linux-gnuf64", "armv7-unknown-linux-gnuf64"),
        ("armv7-unknown-linux-eabi", "armv7-unknown-linux-eabi"),
        ("armv7-unknown-linux-eabihf", "armv7-unknown-linux-eabihf"),
        ("armv7-unknown-linux-android", "armv7-unknown-linux-android"),
        ("armv7-unknown-linux-android21", "armv7-unknown-linux-android21"),
        ("armv7-unknown-linux-androideabi", "armv7-unknown-linux-android"),
        ("armv7-unknown-linux-androideabi16", "armv7-unknown-linux-android16"),
        ("armv7-unknown-linux-musl", "armv7-unknown-linux-musl"),
        ("armv7-unknown-linux-musleabihf", "armv7-unknown-linux-musleabihf"),
        ("armv7-unknown-linux-muslx32", "armv7-unknown-linux-muslx32"),
        ("armv7-unknown-linux-muslwali", "armv7-unknown-linux-muslwali"),
        ("armv7-unknown-linux-msvc", "armv7-unknown-linux-msvc"),
        ("armv7-unknown-linux-itanium", "armv7-unknown-linux-itanium"),
        ("armv7-unknown-linux-cygnus", "armv7-unknown-linux-cygnus"),
        ("armv7-unknown-linux-coreclr", "armv7-unknown-linux-coreclr"),
        ("armv7-unknown-linux-simulator", "armv7-unknown-linux-simulator"),
        ("armv7-unknown-linux-macabi", "armv7-unknown-linux-macabi"),
        ("armv7-unknown-linux-elf", "armv7-unknown-linux-elf"),
        ("armv7-unknown-linux-coff", "armv7-unknown-linux-coff"),
        ("armv7-unknown-linux-macho", "armv7-unknown-linux-macho"),
        ("armv7-unknown-linux-wasm", "armv7-unknown-linux-wasm"),
        ("armv7-unknown-linux-xcoff", "armv7-unknown-linux-xcoff"),
        ("armv7-unknown-linux-goff", "armv7-unknown-linux-goff"),
        ("armv7-unknown-linux-spirv", "armv7-unknown-linux-spirv"),
        ("armv7-unknown-linux-opencl", "armv7-unknown-linux-opencl"),
        ("armv7-unknown-linux-ohos", "armv7-unknown-linux-ohos"),
        ("armv7-unknown-linux-llvm", "armv7-unknown-linux-llvm"),
        ("armv7-unknown-linux-pauthtest", "armv7-unknown-linux-pauthtest"),
        ("armv7-unknown-linux-mlibc", "armv7-unknown-linux-mlibc"),
        ("armv7-unknown-linux-mtia", "armv7-unknown-linux-mtia"),
        ("armv7-unknown-linux-library", "armv7-unknown-linux-library"),
        ("armv7-unknown-linux-compute", "armv7-unknown-linux-compute"),
        ("armv7-unknown-linux-pixel", "armv7-unknown-linux-pixel"),
        ("armv7-unknown-linux-unknown", "armv7-unknown-linux-unknown"),
        ("armv7-unknown-linux-foo", "armv7-unknown-linux-foo"),
        ("xcore-hexagon-cygwin-foo", "xcore-hexagon-windows-cygnus"),
        ("x86_64h-compute-elfiamcu-gnu", "x86_64h-compute-elfiamcu-gnu"),
        ("arm64ec--csky-pauthtest", "arm64ec-unknown-csky-pauthtest"),
        ("mipsel-suse-linux6-", "mipsel-suse-linux6-unknown"),
        ("spirv-none-vulkan-cygnus", "spirv-none-vulkan-cygnus"),
        ("armv7k-fsl--androideabi", "armv7k-fsl-unknown-android"),
        ("armeb---gnu", "armeb-unknown-unknown-gnu"),
        ("x86_64h-redhat-wasi-llvm", "x86_64h-redhat-wasi-llvm"),
        ("kalimba4-fsl-spirv64v1.3-", "kalimba4-fsl-spirv64v1.3-unknown"),
        ("mipsisa64r6-ibm-mingw32-wasm", "mipsisa64r6-ibm-windows-gnu"),
        ("arm64-mti-darwin23.1.0-", "arm64-mti-darwin23.1.0-unknown"),
        ("i386-mti-windows-", "i386-mti-windows-msvc"),
        ("msp430--darwin23.1.0-hexagon", "msp430-unknown-darwin23.1.0-hexagon"),
        ("arm64-img-ps5-gnuabi64", "arm64-img-ps5-gnuabi64"),
        ("nvptx64-wasm-zos-", "nvptx64-unknown-zos-wasm"),
        ("riscv64-sie--ve", "riscv64-sie-unknown-ve"),
        ("sparc-scei-watchos-pixel", "sparc-scei-watchos-pixel"),
        ("wasm32-ibm-wasi-amd", "wasm32-ibm-wasi-amd"),
        ("powerpc64-library-ps5-mtia", "powerpc64-library-ps5-mtia"),
        ("aarch64_32-unknown-ps5-llvm", "aarch64_32-unknown-ps5-llvm"),
        ("amdil64---gnueabi", "amdil64-unknown-unknown-gnueabi"),
        ("xscale-sie-rtems-", "xscale-sie-rtems-unknown"),
        ("aarch64-oe-fsl-apple", "aarch64-oe-fsl-apple"),
        ("nvptx64--emscripten-nvptx", "nvptx64-unknown-emscripten-nvptx"),
        ("xtensa-dragonfly-ios17.0-", "xtensa-dragonfly-ios17.0-unknown"),
        ("powerpc64-fsl-zos-xros", "powerpc64-fsl-zos-xros"),
        ("sparcv9-pc-solaris-muslx32", "sparcv9-pc-solaris-muslx32"),
        ("i686-apple-windows-cygnus", "i686-apple-windows-cygnus"),
        ("armv7em-meta-spirv-foo", "armv7em-meta-unknown-spirv"),
        ("bpf-bridgeos-none-mesa", "bpf-mesa-bridgeos-none"),
        ("lanai-opencl-avr-", "lanai-unknown-unknown-opencl"),
        ("lanai-fsl-fuchsia-cygnus", "lanai-fsl-fuchsia-cygnus"),
        ("m68k-nvidia-wasip2-", "m68k-nvidia-wasip2-unknown"),
        ("i386--linux-itanium", "i386-unknown-linux-itanium"),
        ("mips-nvidia-wasi-", "mips-nvidia-wasi-unknown"),
        ("lanai-foo-ios17.0-opencl", "lanai-foo-ios17.0-opencl"),
        ("armv7em-foo-img-android21", "armv7em-img-foo-android21"),
        ("thumbebv7-suse--", "thumbebv7-suse-unknown-unknown"),
        ("wasm32-opencl-ibm-unknown", "wasm32-ibm-unknown-opencl"),
        ("xscale-mti-darwin-library", "xscale-mti-darwin-library"),
        ("dxil--gnuabi64-freebsd", "dxil-unknown-freebsd-gnuabi64"),
        ("bpf-ibm-linux-gnueabihf", "bpf-ibm-linux-gnueabihf"),
        ("sparc-visionos-fsl-", "sparc-fsl-visionos-unknown"),
        ("lanai-csr-androideabi-gnuabi64", "lanai-csr-androideabi-gnuabi64"),
        ("powerpc64-none-mingw32-spirv", "powerpc64-none-windows-gnu"),
        ("armv7s-armv7a-liteos-wasm", "armv7s-armv7a-liteos-wasm"),
        ("arm64e-gnu--cygnus", "arm64e-gnu-unknown-cygnus"),
        ("bpf-meta-msys-compute", "bpf-meta-windows-cygnus"),
        ("mips64el-mesa-liteos-gnu", "mips64el-mesa-liteos-gnu"),
        ("armv7eb-fsl--elf", "armv7eb-fsl-unknown-elf"),
        ("arm64e-scei--aix", "arm64e-scei-aix-unknown"),
        ("amdgcn-csr-xros-unknown", "amdgcn-csr-xros-unknown"),
        ("mips-foo-arm64ec-", "mips-foo-arm64ec-unknown"),
        ("i686-nvidia-visionos-", "i686-nvidia-visionos-unknown"),
        ("sparc-amd-armv7s-mtia", "sparc-amd-armv7s-mtia"),
        ("kalimba--haiku-msvc", "kalimba-unknown-haiku-msvc"),
        ("aarch64_32-redhat--foo", "aarch64_32-redhat-unknown-foo"),
        ("armv6m-img-darwin-wasm", "armv6m-img-darwin-wasm"),
        ("amdgcn-amdgcn-wasi-android21", "amdgcn-amdgcn-wasi-android21"),
        ("r600-none-macos-", "r600-none-macos-unknown"),
        ("mipsn32-meta--muslwali", "mipsn32-meta-unknown-muslwali"),
        ("riscv64be--macosx-", "riscv64be-unknown-macosx-unknown"),
        ("systemz-sie-shadermodel6.3-mtia", "systemz-sie-shadermodel6.3-mtia"),
        ("amd64-coff-intel-unknown", "amd64-intel-unknown-coff"),
        ("powerpc-meta-nacl-", "powerpc-meta-nacl-unknown"),
        ("armv7a-amd-pc-dxil", "armv7a-amd-pc-dxil"),
        ("aarch64-ibm-ios17.0-mlibc", "aarch64-ibm-ios17.0-mlibc"),
        ("x86_64h-scei-visionos-msvc", "x86_64h-scei-visionos-msvc"),
        ("kalimba4-oe-freebsd-ps4", "kalimba4-oe-freebsd-ps4"),
        ("lanai--macos-", "lanai-unknown-macos-unknown"),
        ("arm64_32-linux6-android21-wasm64", "arm64_32-unknown-linux6-android21"),
        ("kalimba-sie-cheriotrtos-bridgeos", "kalimba-sie-cheriotrtos-bridgeos"),
        ("hsail64-scei-mingw32-unknown", "hsail64-scei-windows-gnu"),
        ("nvptx-amdpal-mipsel-macabi", "nvptx-unknown-amdpal-macabi"),
        ("systemz-oe-hermit-wasm", "systemz-oe-hermit-wasm"),
        ("armv7---android", "armv7-unknown-unknown-android"),
        ("spirv64--rtems-", "spirv64-unknown-rtems-unknown"),
        ("spirv64-img-redhat-musleabihf", "spirv64-img-redhat-musleabihf"),
        ("mipsallegrex-oe-solaris-mtia", "mipsallegrex-oe-solaris-mtia"),
        ("armv6m-ibm-none-apple", "armv6m-ibm-none-apple"),
        ("amdgcn-none-macosx15.0.0-ohos", "amdgcn-none-macosx15.0.0-ohos"),
        ("i386-csr-macosx-gnut64", "i386-csr-macosx-gnut64"),
        ("thumbv7m-amd-uefi-aarch64", "thumbv7m-amd-uefi-aarch64"),
        ("armv6m-sie-fuchsia-mtia", "armv6m-sie-fuchsia-mtia"),
        ("xcore-mlibc-vulkan1.3-pauthtest", "xcore-mlibc-vulkan1.3-pauthtest"),
        ("armv7k--dragonfly-", "armv7k-unknown-dragonfly-unknown"),
        ("riscv32--openbsd-eabi", "riscv32-unknown-openbsd-eabi"),
        ("dxil-mesa--amdhsa", "dxil-mesa-amdhsa-unknown"),
        ("m68k-mesa-xscale-coreclr", "m68k-mesa-xscale-coreclr"),
        ("thumbv7m-w64-emscripten-gnux32", "thumbv7m-w64-emscripten-gnux32"),
        ("riscv64-img-unknown-gnuf64", "riscv64-img-unknown-gnuf64"),
        ("wasm64-intel-bridgeos-", "wasm64-intel-bridgeos-unknown"),
        ("mips64el-suse-driverkit-shadermodel6.3", "mips64el-suse-driverkit-shadermodel6.3"),
        ("armv7a-suse-suse-library", "armv7a-suse-suse-library"),
        ("lanai-none--android21", "lanai-unknown-none-android21"),
        ("mipsisa64r6-unknown-foo-gnueabihf", "mipsisa64r6-unknown-foo-gnueabihf"),
        ("dxil-sie--", "dxil-sie-unknown-unknown"),
        ("powerpc64le-musleabihf--gnux32", "powerpc64le-musleabihf-unknown-gnux32"),
        ("thumbv6m-redhat--macho", "thumbv6m-redhat-unknown-macho"),
        ("mips64-aarch64_32--library", "mips64-aarch64_32-unknown-library"),
        ("ppc-pc-windows-mtia", "ppc-pc-windows-mtia"),
        ("mips64-gnuabin32-hurd-musleabihf", "mips64-gnuabin32-hurd-musleabihf"),
        ("ve-redhat-riscv64be-simulator", "ve-redhat-riscv64be-simulator"),
        ("arm64--aix-", "arm64-unknown-aix-unknown"),
        ("riscv32-apple-mesa-ohos", "riscv32-apple-mesa-ohos"),
        ("armv7eb-foo-uefi-pauthtest", "armv7eb-foo-uefi-pauthtest"),
        ("kalimba4-androideabi-wasip1-msvc", "kalimba4-androideabi-wasip1-msvc"),
        ("avr-sie-nvcl-gnux32", "avr-sie-nvcl-gnux32"),
        ("amdgcn-bpfel-xros-llvm", "amdgcn-bpfel-xros-llvm"),
        ("nvptx-meta-bridgeos-musl", "nvptx-meta-bridgeos-musl"),
        ("thumbebv7-redhat--coff", "thumbebv7-redhat-unknown-coff"),
        ("kalimba-meta-xros-wasm", "kalimba-meta-xros-wasm"),
        ("armv6m-zos-freebsd-", "armv6m-zos-freebsd-unknown"),
        ("sparc64-mesa-wasip2-gnueabihf", "sparc64-mesa-wasip2-gnueabihf"),
        ("sparc64-mti-emscripten-macho", "sparc64-mti-emscripten-macho"),
        ("spirv64-intel-rtems-gnuabin32", "spirv64-intel-rtems-gnuabin32"),
        ("spir64-pauthtest-none-foo", "spir64-unknown-unknown-pauthtest"),
        ("s390x-i686--simulator", "s390x-i686-unknown-simulator"),
        ("mips64-foo-wasip2-simulator", "mips64-foo-wasip2-simulator"),
        ("mipsisa64r6--openbsd-macabi", "mipsisa64r6-unknown-openbsd-macabi"),
        ("i386-ibm-ps5-android21", "i386-ibm-ps5-android21"),
        ("aarch64_be-riscv64--unknown", "aarch64_be-riscv64-unknown-unknown"),
        ("spirv-foo-rtems-android", "spirv-foo-rtems-android"),
        ("powerpc-none-redhat-muslx32", "powerpc-none-redhat-muslx32"),
        ("armv7em-oe-emscripten-macabi", "armv7em-oe-emscripten-macabi"),
        ("spirv64-unknown-eabihf-msvc", "spirv64-unknown-eabihf-msvc"),
        ("mipsn32-redhat-macosx-unknown", "mipsn32-redhat-macosx-unknown"),
        ("kalimba-amd-cheriotrtos-", "kalimba-amd-cheriotrtos-unknown"),
        ("armv6m-fsl-tvos-", "armv6m-fsl-tvos-unknown"),
        ("kalimba4-pc-linux-ps4", "kalimba4-pc-linux-ps4"),
        ("tce-ibm-scei-gnux32", "tce-ibm-scei-gnux32"),
        ("i686-aarch64_32-linux6-mingw32", "i686-aarch64_32-linux6-mingw32"),
        ("amd64-amdgcn--musl", "amd64-amdgcn-unknown-musl"),
        ("tce--tvos-simulator", "tce-unknown-tvos-simulator"),
        ("mipsisa64r6-emscripten-mesa3d-gnuabi64", "mipsisa64r6-emscripten-mesa3d-gnuabi64"),
        ("kalimba-ibm-msys-simulator", "kalimba-ibm-windows-cygnus"),
        ("wasm32--win32-itanium", "wasm32-unknown-windows-itanium"),
        ("sparc64-unknown--macabi", "sparc64-unknown-unknown-macabi"),
        ("sparcv9-w64--spirv", "sparcv9-w64-unknown-spirv"),
        ("ppc--vulkan1.3-apple", "ppc-apple-vulkan1.3-unknown"),
        ("kalimba4-armebv7-nvidia-coreclr", "kalimba4-nvidia-armebv7-coreclr"),
        ("csky-arm-w64-android21", "csky-arm-w64-android21"),
        ("wasm32-img-none-muslx32", "wasm32-img-none-muslx32"),
        ("powerpc-intel-none-gnuf64", "powerpc-intel-none-gnuf64"),
        ("mips64-bridgeos-mingw32-simulator", "mips64-unknown-bridgeos-simulator"),
        ("loongarch64---", "loongarch64-unknown-unknown-unknown"),
        ("spirv64v1.3-none--", "spirv64v1.3-none-unknown-unknown"),
        ("loongarch64-sie-liteos-androideabi16", "loongarch64-sie-liteos-android16"),
        ("aarch64_be-img-openbsd-muslx32", "aarch64_be-img-openbsd-muslx32"),
        ("amd64-suse--pauthtest", "amd64-suse-unknown-pauthtest"),
        ("loongarch64-amdgcn--", "loongarch64-amdgcn-unknown-unknown"),
        ("arc--linux6-macho", "arc-unknown-linux6-macho"),
        ("arm64ec--freebsd-meta", "arm64ec-meta-freebsd-unknown"),
        ("mipsallegrex-suse-freebsd14.0-androideabi", "mipsallegrex-suse-freebsd14.0-android"),
        ("thumb-scei--amd", "thumb-scei-unknown-amd"),
        ("nvptx-meta-freebsd-", "nvptx-meta-freebsd-unknown"),
        ("kalimba-pc-bridgeos-", "kalimba-pc-bridgeos-unknown"),
        ("armv7a-csr-haiku-ohos", "armv7a-csr-haiku-ohos"),
        ("spirv-oe-xros-gnuabin32", "spirv-oe-xros-gnuabin32"),
        ("msp430-foo-openbsd-", "msp430-foo-openbsd-unknown"),
        ("bpfeb--solaris-androideabi16", "bpfeb-unknown-solaris-android16"),
        ("amd64-none-dxilv1.3-musl", "amd64-none-dxilv1.3-musl"),
        ("x86_64h-mesa-serenity-itanium", "x86_64h-mesa-serenity-itanium"),
        ("armv7s-mti--", "armv7s-mti-unknown-unknown"),
        ("mips64el-compute-gnuabin32-unknown", "mips64el-unknown-unknown-compute"),
        ("i386-ibm-linux-coff", "i386-ibm-linux-coff"),
        ("aarch64_32-apple-serenity-", "aarch64_32-apple-serenity-unknown"),
        ("hsail64--spirv64v1.3-gnuf64", "hsail64-unknown-spirv64v1.3-gnuf64"),
        ("armebv7-coff--macabi", "armebv7-coff-unknown-macabi"),
        ("ve-fsl-fuchsia-", "ve-fsl-fuchsia-unknown"),
        ("thumb-ios--nvcl", "thumb-unknown-ios-nvcl"),
        ("bpfel-scei-cheriotrtos-pauthtest", "bpfel-scei-cheriotrtos-pauthtest"),
        ("spirv32-oe-nvcl-androideabi", "spirv32-oe-nvcl-android"),
        ("tce--freebsd14.0-macabi", "tce-unknown-freebsd14.0-macabi"),
        ("ppc64le-redhat--eabi", "ppc64le-redhat-unknown-eabi"),
        ("sparc64-mips-ibm-darwin", "sparc64-ibm-darwin-mips"),
        ("thumbebv7-mti-cuda-", "thumbebv7-mti-cuda-unknown"),
        ("mipsn32-amd-mingw32-muslwali", "mipsn32-amd-windows-gnu"),
        ("r600-ibm-uefi-androideabi16", "r600-ibm-uefi-android16"),
        ("dxilv1.3-macosx15.0.0--gnueabihf", "dxilv1.3-unknown-macosx15.0.0-gnueabihf"),
        ("x86_64-ibm-csr-androideabi16", "x86_64-ibm-csr-android16"),
        ("amd64-oe--cygnus", "amd64-oe-unknown-cygnus"),
        ("sparc64-suse-android-androideabi", "sparc64-suse-android-android"),
        ("msp430-img-ps5-musleabihf", "msp430-img-ps5-musleabihf"),
        ("renderscript64-unknown-tvos-", "renderscript64-unknown-tvos-unknown"),
        ("powerpc64--darwin23.1.0-coreclr", "powerpc64-unknown-darwin23.1.0-coreclr"),
        ("loongarch64-nvidia-apple-ps5", "loongarch64-nvidia-ps5-apple"),
        ("avr-ibm--unknown", "avr-ibm-unknown-unknown"),
        ("powerpc64-powerpc64le-haiku-gnuabi64", "powerpc64-powerpc64le-haiku-gnuabi64"),
        ("thumbv6m-intel-windows-mtia", "thumbv6m-intel-windows-mtia"),
        ("m68k-img-macosx-macho", "m68k-img-macosx-macho"),
        ("loongarch64-sie-wasip2-scei", "loongarch64-sie-wasip2-scei"),
        ("mipsn32-watchos-freebsd-cygnus", "mipsn32-watchos-freebsd-cygnus"),
        ("armeb-unknown-solaris-", "armeb-unknown-solaris-unknown"),
        ("bpf-unknown-freebsd-llvm", "bpf-unknown-freebsd-llvm"),
        ("hexagon-suse-shadermodel6.3-android", "hexagon-suse-shadermodel6.3-android"),
        ("mips64-pc-freebsd14.0-amdil64", "mips64-pc-freebsd14.0-amdil64"),
        ("ve-sie-rtems-gnueabi", "ve-sie-rtems-gnueabi"),
        ("thumbv6m--vulkan-amdpal", "thumbv6m-unknown-vulkan-amdpal"),
        ("mipsallegrex-none-dragonfly-msys", "mipsallegrex-none-dragonfly-msys"),
        ("bpfel-aarch64--gnux32", "bpfel-aarch64-unknown-gnux32"),
        ("bpfeb-ibm-watchos-elf", "bpfeb-ibm-watchos-elf"),
        ("ppc-armv7s-fuchsia-library", "ppc-armv7s-fuchsia-library"),
        ("xtensa-wasi-linux-android21", "xtensa-wasi-linux-android21"),
        ("arm64ec-intel-visionos-visionos", "arm64ec-intel-visionos-visionos"),
        ("arm64ec-csr-android21-kalimba4", "arm64ec-csr-unknown-android21"),
        ("renderscript64-unknown-liteos-xcoff", "renderscript64-unknown-liteos-xcoff"),
        ("powerpc-pauthtest-systemz-androideabi16", "powerpc-pauthtest-systemz-android16"),
        ("powerpc-csr-netbsd-mtia", "powerpc-csr-netbsd-mtia"),
        ("xtensa-pixel--androideabi16", "xtensa-pixel-unknown-android16"),
        ("x86_64h-scei-elfiamcu-mlibc", "x86_64h-scei-elfiamcu-mlibc"),
        ("powerpc64le-ios-netbsd-", "powerpc64le-ios-netbsd-unknown"),
        ("powerpc64-gnuabi64-rtems-cygnus", "powerpc64-gnuabi64-rtems-cygnus"),
        ("dxil-oe-solaris-eabihf", "dxil-oe-solaris-eabihf"),
        ("arm64e--lv2-simulator", "arm64e-unknown-lv2-simulator"),
        ("spirv64--unknown-ibm", "spirv64-ibm-unknown-unknown"),
        ("armv7s-thumbebv7-haiku-", "armv7s-thumbebv7-haiku-unknown"),
        ("mipsallegrex-redhat-lv2-androideabi", "mipsallegrex-redhat-lv2-android"),
        ("tce-foo-vulkan1.3-macho", "tce-foo-vulkan1.3-macho"),
        ("thumbv6m-sie-rtems-itanium", "thumbv6m-sie-rtems-itanium"),
        ("aarch64_be-armeb-wasi-spirv", "aarch64_be-armeb-wasi-spirv"),
        ("thumbv7m-pc-lv2-gnux32", "thumbv7m-pc-lv2-gnux32"),
        ("mipsn32-unknown-cuda-", "mipsn32-unknown-cuda-unknown"),
        ("armv7eb-unknown-bridgeos-mtia", "armv7eb-unknown-bridgeos-mtia"),
        ("bpfeb-suse-driverkit-gnueabihf", "bpfeb-suse-driverkit-gnueabihf"),
        ("arm64-mesa-cuda-foo", "arm64-mesa-cuda-foo"),
        ("loongarch64--tvos-apple", "loongarch64-apple-tvos-unknown"),
        ("armv7a-csr-zos-pauthtest", "armv7a-csr-zos-pauthtest"),
        ("aarch64_be-suse-ios17.0-uefi", "aarch64_be-suse-ios17.0-uefi"),
        ("amd64-ibm-watchos-macos", "amd64-ibm-watchos-macos"),
        ("thumbv6m-suse-sparcv9-", "thumbv6m-suse-sparcv9-unknown"),
        ("armv7a-pc-nvcl-nvcl", "armv7a-pc-nvcl-nvcl"),
        ("thumbv6m-foo-none-android21", "thumbv6m-foo-none-android21"),
        ("aarch64_be-suse-none-gnut64", "aarch64_be-suse-none-gnut64"),
        ("armv7a--solaris-eabi", "armv7a-unknown-solaris-eabi"),
        ("avr-apple-windows-", "avr-apple-windows-msvc"),
        ("powerpc64le-eabihf-sparcv9-oe", "powerpc64le-oe-unknown-eabihf"),
        ("aarch64-foo-cygwin-gnuf64", "aarch64-foo-windows-cygnus"),
        ("dxilv1.3--ios-macho", "dxilv1.3-unknown-ios-macho"),
        ("bpfel-intel-coff-", "bpfel-intel-unknown-coff"),
        ("bpf---mtia", "bpf-unknown-unknown-mtia"),
        ("armeb-foo-freebsd-serenity", "armeb-foo-freebsd-serenity"),
        ("hsail64-unknown-wasip1-llvm", "hsail64-unknown-wasip1-llvm"),
        ("mips64el-unknown-cuda-mlibc", "mips64el-unknown-cuda-mlibc"),
        ("mips64-w64-hermit-", "mips64-w64-hermit-unknown"),
        ("aarch64_be-suse-scei-muslx32", "aarch64_be-suse-scei-muslx32"),
        ("spirv-scei-wasip2-compute", "spirv-scei-wasip2-compute"),
        ("thumbebv7-mti-r600-", "thumbebv7-mti-r600-unknown"),
        ("i686-nvidia--gnuabi64", "i686-nvidia-unknown-gnuabi64"),
        ("sparcv9--managarm-r600", "sparcv9-unknown-managarm-r600"),
        ("mips64el---unknown", "mips64el-unknown-unknown-unknown"),
        ("msp430-coreclr--", "msp430-unknown-unknown-coreclr"),
        ("lanai--macosx-llvm", "lanai-unknown-macosx-llvm"),
        ("arc-amd-driverkit-macabi", "arc-amd-driverkit-macabi"),
        ("arm64e-pc-macosx-gnuabi64", "arm64e-pc-macosx-gnuabi64"),
        ("spirv64v1.3-foo-ios-android", "spirv64v1.3-foo-ios-android"),
        ("arc-coff-cuda-darwin", "arc-unknown-cuda-coff"),
        ("sparc64-w64-mesa-compute", "sparc64-mesa-w64-compute"),
        ("armv7a-foo-emscripten-", "armv7a-foo-emscripten-unknown"),
        ("avr-apple-fuchsia-netbsd", "avr-apple-fuchsia-netbsd"),
        ("riscv64be--mesa3d-gnuf64", "riscv64be-unknown-mesa3d-gnuf64"),
        ("renderscript64--emscripten-", "renderscript64-unknown-emscripten-unknown"),
        ("armeb-intel-macosx15.0.0-itanium", "armeb-intel-macosx15.0.0-itanium"),
        ("mipsallegrex-compute--", "mipsallegrex-unknown-unknown-compute"),
        ("armv7s-meta-gnuabin32-armv7eb", "armv7s-meta-unknown-gnuabin32"),
        ("systemz-ve-cygwin-apple", "systemz-apple-windows-cygnus"),
        ("dxilv1.3-csr-elfiamcu-xcoff", "dxilv1.3-csr-elfiamcu-xcoff"),
        ("lanai-sie--library", "lanai-sie-unknown-library"),
        ("wasm64-sie-foo-", "wasm64-sie-foo-unknown"),
        ("ppc64le-x86_64-darwin23.1.0-ppc", "ppc64le-x86_64-darwin23.1.0-ppc"),
        ("s390x-amd--coreclr", "s390x-amd-unknown-coreclr"),
        ("spir64-suse-arm64_32-simulator", "spir64-suse-arm64_32-simulator"),
        ("sparc--intel-gnuabin32", "sparc-intel-unknown-gnuabin32"),
        ("nvptx-apple-bridgeos-", "nvptx-apple-bridgeos-unknown"),
        ("mips64el-fsl-cuda-", "mips64el-fsl-cuda-unknown"),
        ("systemz-fsl--gnu", "systemz-fsl-unknown-gnu"),
        ("riscv32-suse--gnueabi", "riscv32-suse-unknown-gnueabihf"),
        ("i686-scei-macosx15.0.0-", "i686-scei-macosx15.0.0-unknown"),
        ("x86_64h-fsl--llvm", "x86_64h-fsl-unknown-llvm"),
        ("avr--managarm-systemz", "avr-unknown-managarm-systemz"),
        ("nvptx-cygwin-dragonfly-gnux32", "nvptx-cygwin-dragonfly-gnux32"),
        ("bpfeb--watchos-gnu_ilp32", "bpfeb-unknown-watchos-gnu_ilp32"),
        ("i386-suse-elfiamcu-coreclr", "i386-suse-elfiamcu-coreclr"),
        ("mipsallegrex-unknown--ppc", "mipsallegrex-unknown-unknown-ppc"),
        ("powerpc64-nvidia-compute-arm64ec", "powerpc64-nvidia-unknown-compute"),
        ("hexagon-img-cuda-", "hexagon-img-cuda-unknown"),
        ("armv7eb--watchos-suse", "armv7eb-suse-watchos-unknown"),
        ("aarch64_32-xcoff-redhat-gnux32", "aarch64_32-xcoff-redhat-gnux32"),
        ("powerpc-foo-linux-coreclr", "powerpc-foo-linux-coreclr"),
        ("armv7s--mesa3d-wasip2", "armv7s-unknown-mesa3d-wasip2"),
        ("avr-lv2-mingw32-muslwali", "avr-unknown-lv2-muslwali"),
        ("loongarch64-img-oe-cygwin", "loongarch64-img-windows-cygnus"),
        ("armv7k--wasm-wasm", "armv7k-unknown-unknown-wasm"),
        ("arm64-unknown-systemz-foo", "arm64-unknown-systemz-foo"),
        ("dxil--cheriotrtos-muslwali", "dxil-unknown-cheriotrtos-muslwali"),
        ("mipsallegrex-fsl-ios-arm", "mipsallegrex-fsl-ios-arm"),
        ("arm64_32-amd-sie-coff", "arm64_32-amd-sie-coff"),
        ("riscv64be-ibm-msys-coreclr", "riscv64be-ibm-windows-cygnus"),
        ("bpf--tvos-android21", "bpf-unknown-tvos-android21"),
        ("armebv7-sie-w64-simulator", "armebv7-sie-w64-simulator"),
        ("powerpc64le-msp430-w64-freebsd14.0", "powerpc64le-msp430-freebsd14.0-w64"),
        ("arm64e-macabi-intel-", "arm64e-intel-unknown-macabi"),
        ("hsail64-unknown-fuchsia-", "hsail64-unknown-fuchsia-unknown"),
        ("loongarch64-amd-netbsd-serenity", "loongarch64-amd-netbsd-serenity"),
        ("mips64el-w64--llvm", "mips64el-w64-unknown-llvm"),
        ("armv6m-w64--gnuabin32", "armv6m-w64-unknown-gnuabin32"),
        ("armv6m-apple--compute", "armv6m-apple-unknown-compute"),
        ("armv7em---", "armv7em-unknown-unknown-unknown"),
        ("armv7eb-i386-netbsd-", "armv7eb-i386-netbsd-unknown"),
        ("armv7em-oe-ios17.0-coff", "armv7em-oe-ios17.0-coff"),
        ("sparcv9-suse-ios-hermit", "sparcv9-suse-ios-hermit"),
        ("mipsallegrex-ibm-unknown-w64", "mipsallegrex-ibm-unknown-w64"),
        ("hsail64-oe-riscv64-gnueabihf", "hsail64-oe-riscv64-gnueabihf"),
        ("mips-nvidia-ps5-", "mips-nvidia-ps5-unknown"),
        ("dxil-nvidia-uefi-compute", "dxil-nvidia-uefi-compute"),
    ];

    /// `(A-B-C-D, stored)` for `amdhsa` triples, which the bundler lists as
    /// `host-<stored>--`, i.e. `normalize(A-B-C-D, ThreeIdent)`.
    #[rustfmt::skip]
    const BUNDLER_THREE_IDENT: &[(&str, &str)] = &[
        ("amdgcn-amd-amdhsa-", "amdgcn-amd-amdhsa"),
        ("amdgcn-amd-amdhsa-gnu", "amdgcn-amd-amdhsa"),
        ("amdgcn-amd-amdhsa-foo", "amdgcn-amd-amdhsa"),
        ("amdgcn-amd-amdhsa-unknown", "amdgcn-amd-amdhsa"),
        ("aarch64-unknown-amdhsa-", "aarch64-unknown-amdhsa"),
        ("csky-oe-amdhsa-goff", "csky-oe-amdhsa"),
        ("arm64ec-goff-amdhsa-ios", "arm64ec-unknown-amdhsa"),
        ("r600-pc-amdhsa-muslwali", "r600-pc-amdhsa"),
    ];

    /// `A-B-C-D` that the bundler rejects with "unknown target triple": exactly
    /// the ones whose positional arch does not parse.
    #[rustfmt::skip]
    const BUNDLER_UNKNOWN_ARCH: &[&str] = &[
        "foo-unknown-dragonfly-coff",
        "gnu_ilp32-gnuabi64-powerpc64-gnux32",
        "-csr-armv7em-gnu_ilp32",
        "-nacl--mlibc",
        "cheriotrtos-apple--library",
        "-foo-tvos-ibm",
        "-oe-rtems-coff",
        "muslwali-apple--compute",
        "-img-lv2-gnuf64",
        "gnueabi-tce-nvcl-mlibc",
        "---coff",
        "-pc-visionos-hexagon",
        "watchos-armv7a-emscripten-library",
        "-meta-cheriotrtos-library",
        "uefi-csr-hurd-",
        "eabi-nvidia-cheriotrtos-muslwali",
        "csr-mti-ios-gnu_ilp32",
        "fuchsia--ppc64le-pixel",
        "-pc-macosx15.0.0-eabihf",
        "-mingw32-csr-musleabihf",
        "pc-scei--redhat",
        "visionos-none-ios-musl",
        "-w64-cuda-coreclr",
        "scei-oe-macosx-compute",
        "driverkit-intel-cuda-xcoff",
        "gnuabi64-mesa-systemz-",
        "musl-sie-serenity-coreclr",
        "pixel-unknown-csky-bpfeb",
        "vulkan1.3-unknown-openbsd-mlibc",
        "eabihf-oe-foo-mtia",
        "amd--rtems-goff",
        "-scei-vulkan1.3-gnu",
        "musl-nvidia-linux-redhat",
        "-amd-goff-coff",
        "-csr-amdpal-",
        "dragonfly-gnuf64-uefi-ohos",
        "-img-darwin-mipsn32",
        "gnueabihf-amd-ps4-mtia",
        "muslwali-scei-macho-",
        "-aix-freebsd14.0-win32",
        "ps4-suse-unknown-llvm",
        "foo-none--",
        "amdhsa-pc-hurd-redhat",
        "nvidia-suse-solaris-oe",
        "xcoff--bridgeos-mtia",
        "scei-fsl-win32-coreclr",
        "oe---simulator",
        "-nvidia--macabi",
        "llvm--ps4-androideabi",
        "-sie-amdpal-muslx32",
        "gnut64-apple-win32-pauthtest",
        "-ibm-tce-mtia",
        "--bridgeos-goff",
        "redhat-suse-tvos-gnu",
        "gnu-sie-tce-xros",
        "img-sie-cuda-simulator",
        "ibm-mesa-macos-pauthtest",
        "pc-nvidia-mesa-opencl",
        "nacl-nvidia-nacl-",
        "-sie--goff",
        "-w64-win32-mtia",
        "elf-w64-msp430-coff",
        "wasip1--liteos-gnux32",
        "unknown-mingw32-dxil-goff",
        "sie-intel-nvptx64-nacl",
        "macho-csr-fsl-llvm",
        "-wasm-windows-itanium",
        "gnux32-sie--compute",
        "nvidia-xros--xros",
        "mesa--nvcl-",
        "android21--netbsd-mtia",
        "nvcl-img--kalimba",
        "sie-amd-msys-gnuabin32",
        "-ps4-gnut64-eabi",
        "-armv7-zos-gnut64",
        "csr-nvidia-linux-gnut64",
        "-suse-windows-eabi",
        "win32-gnux32-cygwin-cygnus",
        "gnut64-apple-ps4-armv7s",
        "-fsl-lv2-library",
        "-none-haiku-eabi",
        "wasip1-darwin-linux6-musleabihf",
        "fsl-w64-kalimba-w64",
        "bridgeos--elfiamcu-sie",
        "-none-riscv32-amdil64",
        "mti-amd--gnuabi64",
        "-amd-wasm32-android",
        "-redhat-ios-spirv64v1.3",
        "-sie--armv7em",
        "amdpal-oe-csr-arc",
        "-mesa-spirv64v1.3-",
        "--csr-img",
        "fsl-m68k-arm64e-macabi",
        "eabihf--nacl-androideabi16",
        "darwin23.1.0-img-suse-",
        "-intel-visionos-opencl",
        "intel-mipsallegrex-foo-coreclr",
        "-opencl--android",
        "gnux32--fuchsia-",
        "--win32-",
        "none-mipsel-emscripten-macho",
        "-suse--fuchsia",
        "compute-nvidia-driverkit-xros",
        "androideabi16-redhat-meta-xcoff",
        "--aix-androideabi",
        "-redhat-darwin23.1.0-llvm",
        "fsl-redhat-cygwin-gnuf64",
        "elf-oe--",
        "-loongarch64-emscripten-pixel",
        "uefi-unknown-vulkan-gnuabin32",
        "macosx15.0.0-pixel-foo-unknown",
        "-scei-solaris-mipsallegrex",
        "muslx32--hurd-",
        "linux6-none-hurd-w64",
        "sie-suse-ps4-",
        "xros--freebsd14.0-muslx32",
        "foo-suse-nvcl-musleabihf",
        "-img-hurd-gnueabihf",
        "mingw32-nvidia--",
        "ibm-intel-shadermodel6.3-android",
        "ibm-sie-elfiamcu-musl",
        "-spir64-muslwali-pixel",
        "-mti-arm64-msvc",
        "tvos-uefi--llvm",
        "-wasm32-visionos-mlibc",
        "amd-intel-freebsd14.0-android",
        "-oe-solaris-simulator",
        "-mingw32-hurd-muslx32",
        "unknown--macosx-",
        "-amdil64-ios17.0-android",
        "--fuchsia-androideabi",
        "sie-mesa-foo-eabihf",
        "img--vulkan1.3-amd",
        "watchos-meta-macosx15.0.0-musleabihf",
        "ps5-suse-darwin-androideabi16",
        "-none--wasi",
        "hermit-ibm-shadermodel6.3-android21",
        "-apple-ppc-mlibc",
        "darwin-scei-uefi-mtia",
        "--solaris-",
        "-dxilv1.3-wasip2-android",
        "img-suse--wasm",
        "-mesa-gnuabi64-coff",
        "-redhat-tvos-gnux32",
        "-gnu_ilp32-serenity-macabi",
        "mesa-w64-xcore-ohos",
        "-csr-aix-mlibc",
        "---wasm64",
        "gnuf64-meta-liteos-eabi",
        "--haiku-",
        "elf-ibm--ohos",
        "unknown-redhat-bridgeos-coreclr",
        "-mti-win32-csky",
        "-spirv-none-",
        "-img-lv2-liteos",
        "none-suse-aix-foo",
        "mesa-pc-watchos-opencl",
        "none--dragonfly-",
        "win32-gnuabi64-linux6-androideabi",
        "gnux32-pc-amdpal-muslwali",
        "apple-pc--sparc64",
        "-redhat-nvidia-msvc",
        "-oe-darwin-elf",
        "linux-fsl-rtems-eabi",
        "coff--darwin23.1.0-gnueabi",
        "-android-img-gnux32",
        "androideabi-fsl-openbsd-amdil64",
        "sie-unknown-cygwin-eabi",
        "ios-unknown-redhat-musl",
    ];

    /// `(stored, requested, found)`: a bundle holding `openmp-<stored>-` (as listed
    /// by the bundler) unbundled with `-targets=openmp-<requested>-` (requested as the
    /// bundler standardizes it) extracts the entry, or fails with "Can't find bundles".
    #[rustfmt::skip]
    const BUNDLER_COMPATIBLE: &[(&str, &str, bool)] = &[
        ("amdgcn-amd-amdhsa-", "amdgcn-amd-amdhsa-", true),
        ("amdgcn-amd-amdhsa-", "amdgcn-amd-amdhsa5-", true),
        ("amdgcn-amd-amdhsa-", "amdgcn-amd-amdpal-unknown", false),
        ("amdgcn-amd-amdhsa-", "amdgcn-unknown-amdhsa-", false),
        ("amdgcn-amd-amdhsa5-", "amdgcn-amd-amdhsa-", true),
        ("amdgcn-amd-amdhsa5-", "amdgcn-amd-amdhsa5-", true),
        ("amdgcn-amd-amdhsa5-", "amdgcn-amd-amdpal-unknown", false),
        ("amdgcn-amd-amdhsa5-", "amdgcn-unknown-amdhsa-", false),
        ("amdgcn-amd-amdpal-unknown", "amdgcn-amd-amdhsa-", false),
        ("amdgcn-amd-amdpal-unknown", "amdgcn-amd-amdhsa5-", false),
        ("amdgcn-amd-amdpal-unknown", "amdgcn-amd-amdpal-unknown", true),
        ("amdgcn-amd-amdpal-unknown", "amdgcn-unknown-amdhsa-", false),
        ("amdgcn-unknown-amdhsa-", "amdgcn-amd-amdhsa-", false),
        ("amdgcn-unknown-amdhsa-", "amdgcn-amd-amdhsa5-", false),
        ("amdgcn-unknown-amdhsa-", "amdgcn-amd-amdpal-unknown", false),
        ("amdgcn-unknown-amdhsa-", "amdgcn-unknown-amdhsa-", true),
        ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-gnu", true),
        ("x86_64-unknown-linux-gnu", "x86_64-pc-linux-gnu", false),
        ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-unknown", false),
        ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-gnucoff", false),
        ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-gnuelf", true),
        ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-musl", false),
        ("x86_64-unknown-linux-gnu", "amd64-unknown-linux-gnu", true),
        ("x86_64-unknown-linux-gnu", "i686-unknown-linux-gnu", false),
        ("x86_64-pc-linux-gnu", "x86_64-unknown-linux-gnu", false),
        ("x86_64-pc-linux-gnu", "x86_64-pc-linux-gnu", true),
        ("x86_64-pc-linux-gnu", "x86_64-unknown-linux-unknown", false),
        ("x86_64-pc-linux-gnu", "x86_64-unknown-linux-gnucoff", false),
        ("x86_64-pc-linux-gnu", "x86_64-unknown-linux-gnuelf", false),
        ("x86_64-pc-linux-gnu", "x86_64-unknown-linux-musl", false),
        ("x86_64-pc-linux-gnu", "amd64-unknown-linux-gnu", false),
        ("x86_64-pc-linux-gnu", "i686-unknown-linux-gnu", false),
        ("x86_64-unknown-linux-unknown", "x86_64-unknown-linux-gnu", false),
        ("x86_64-unknown-linux-unknown", "x86_64-pc-linux-gnu", false),
        ("x86_64-unknown-linux-unknown", "x86_64-unknown-linux-unknown", true),
        ("x86_64-unknown-linux-unknown", "x86_64-unknown-linux-gnucoff", false),
        ("x86_64-unknown-linux-unknown", "x86_64-unknown-linux-gnuelf", false),
        ("x86_64-unknown-linux-unknown", "x86_64-unknown-linux-musl", false),
        ("x86_64-unknown-linux-unknown", "amd64-unknown-linux-gnu", false),
        ("x86_64-unknown-linux-unknown", "i686-unknown-linux-gnu", false),
        ("x86_64-unknown-linux-gnucoff", "x86_64-unknown-linux-gnu", false),
        ("x86_64-unknown-linux-gnucoff", "x86_64-pc-linux-gnu", false),
        ("x86_64-unknown-linux-gnucoff", "x86_64-unknown-linux-unknown", false),
        ("x86_64-unknown-linux-gnucoff", "x86_64-unknown-linux-gnucoff", true),
        ("x86_64-unknown-linux-gnucoff", "x86_64-unknown-linux-gnuelf", false),
        ("x86_64-unknown-linux-gnucoff", "x86_64-unknown-linux-musl", false),
        ("x86_64-unknown-linux-gnucoff", "amd64-unknown-linux-gnu", false),
        ("x86_64-unknown-linux-gnucoff", "i686-unknown-linux-gnu", false),
        ("x86_64-unknown-linux-gnuelf", "x86_64-unknown-linux-gnu", true),
        ("x86_64-unknown-linux-gnuelf", "x86_64-pc-linux-gnu", false),
        ("x86_64-unknown-linux-gnuelf", "x86_64-unknown-linux-unknown", false),
        ("x86_64-unknown-linux-gnuelf", "x86_64-unknown-linux-gnucoff", false),
        ("x86_64-unknown-linux-gnuelf", "x86_64-unknown-linux-gnuelf", true),
        ("x86_64-unknown-linux-gnuelf", "x86_64-unknown-linux-musl", false),
        ("x86_64-unknown-linux-gnuelf", "amd64-unknown-linux-gnu", true),
        ("x86_64-unknown-linux-gnuelf", "i686-unknown-linux-gnu", false),
        ("x86_64-unknown-linux-musl", "x86_64-unknown-linux-gnu", false),
        ("x86_64-unknown-linux-musl", "x86_64-pc-linux-gnu", false),
        ("x86_64-unknown-linux-musl", "x86_64-unknown-linux-unknown", false),
        ("x86_64-unknown-linux-musl", "x86_64-unknown-linux-gnucoff", false),
        ("x86_64-unknown-linux-musl", "x86_64-unknown-linux-gnuelf", false),
        ("x86_64-unknown-linux-musl", "x86_64-unknown-linux-musl", true),
        ("x86_64-unknown-linux-musl", "amd64-unknown-linux-gnu", false),
        ("x86_64-unknown-linux-musl", "i686-unknown-linux-gnu", false),
        ("amd64-unknown-linux-gnu", "x86_64-unknown-linux-gnu", true),
        ("amd64-unknown-linux-gnu", "x86_64-pc-linux-gnu", false),
        ("amd64-unknown-linux-gnu", "x86_64-unknown-linux-unknown", false),
        ("amd64-unknown-linux-gnu", "x86_64-unknown-linux-gnucoff", false),
        ("amd64-unknown-linux-gnu", "x86_64-unknown-linux-gnuelf", true),
        ("amd64-unknown-linux-gnu", "x86_64-unknown-linux-musl", false),
        ("amd64-unknown-linux-gnu", "amd64-unknown-linux-gnu", true),
        ("amd64-unknown-linux-gnu", "i686-unknown-linux-gnu", false),
        ("i686-unknown-linux-gnu", "x86_64-unknown-linux-gnu", false),
        ("i686-unknown-linux-gnu", "x86_64-pc-linux-gnu", false),
        ("i686-unknown-linux-gnu", "x86_64-unknown-linux-unknown", false),
        ("i686-unknown-linux-gnu", "x86_64-unknown-linux-gnucoff", false),
        ("i686-unknown-linux-gnu", "x86_64-unknown-linux-gnuelf", false),
        ("i686-unknown-linux-gnu", "x86_64-unknown-linux-musl", false),
        ("i686-unknown-linux-gnu", "amd64-unknown-linux-gnu", false),
        ("i686-unknown-linux-gnu", "i686-unknown-linux-gnu", true),
        ("arm64-apple-macosx15.0.0-unknown", "arm64-apple-macosx15.0.0-unknown", true),
        ("arm64-apple-macosx15.0.0-unknown", "arm64-apple-macosx14.0.0-unknown", true),
        ("arm64-apple-macosx15.0.0-unknown", "arm64-apple-macosx-simulator", true),
        ("arm64-apple-macosx15.0.0-unknown", "aarch64-apple-macosx15.0.0-unknown", true),
        ("arm64-apple-macosx15.0.0-unknown", "arm64e-apple-macosx15.0.0-unknown", false),
        ("arm64-apple-macosx15.0.0-unknown", "arm64-apple-ios17.0-unknown", false),
        ("arm64-apple-macosx15.0.0-unknown", "arm64-apple-darwin-unknown", false),
        ("arm64-apple-macosx15.0.0-unknown", "arm64-apple-macosx15.0.0-macho", true),
        ("arm64-apple-macosx15.0.0-unknown", "arm64-apple-macosx15.0.0-elf", true),
        ("arm64-apple-macosx14.0.0-unknown", "arm64-apple-macosx15.0.0-unknown", true),
        ("arm64-apple-macosx14.0.0-unknown", "arm64-apple-macosx14.0.0-unknown", true),
        ("arm64-apple-macosx14.0.0-unknown", "arm64-apple-macosx-simulator", true),
        ("arm64-apple-macosx14.0.0-unknown", "aarch64-apple-macosx15.0.0-unknown", true),
        ("arm64-apple-macosx14.0.0-unknown", "arm64e-apple-macosx15.0.0-unknown", false),
        ("arm64-apple-macosx14.0.0-unknown", "arm64-apple-ios17.0-unknown", false),
        ("arm64-apple-macosx14.0.0-unknown", "arm64-apple-darwin-unknown", false),
        ("arm64-apple-macosx14.0.0-unknown", "arm64-apple-macosx15.0.0-macho", true),
        ("arm64-apple-macosx14.0.0-unknown", "arm64-apple-macosx15.0.0-elf", true),
        ("arm64-apple-macosx-simulator", "arm64-apple-macosx15.0.0-unknown", true),
        ("arm64-apple-macosx-simulator", "arm64-apple-macosx14.0.0-unknown", true),
        ("arm64-apple-macosx-simulator", "arm64-apple-macosx-simulator", true),
        ("arm64-apple-macosx-simulator", "aarch64-apple-macosx15.0.0-unknown", true),
        ("arm64-apple-macosx-simulator", "arm64e-apple-macosx15.0.0-unknown", false),
        ("arm64-apple-macosx-simulator", "arm64-apple-ios17.0-unknown", false),
        ("arm64-apple-macosx-simulator", "arm64-apple-darwin-unknown", false),
        ("arm64-apple-macosx-simulator", "arm64-apple-macosx15.0.0-macho", true),
        ("arm64-apple-macosx-simulator", "arm64-apple-macosx15.0.0-elf", true),
        ("aarch64-apple-macosx15.0.0-unknown", "arm64-apple-macosx15.0.0-unknown", true),
        ("aarch64-apple-macosx15.0.0-unknown", "arm64-apple-macosx14.0.0-unknown", true),
        ("aarch64-apple-macosx15.0.0-unknown", "arm64-apple-macosx-simulator", true),
        ("aarch64-apple-macosx15.0.0-unknown", "aarch64-apple-macosx15.0.0-unknown", true),
        ("aarch64-apple-macosx15.0.0-unknown", "arm64e-apple-macosx15.0.0-unknown", false),
        ("aarch64-apple-macosx15.0.0-unknown", "arm64-apple-ios17.0-unknown", false),
        ("aarch64-apple-macosx15.0.0-unknown", "arm64-apple-darwin-unknown", false),
        ("aarch64-apple-macosx15.0.0-unknown", "arm64-apple-macosx15.0.0-macho", true),
        ("aarch64-apple-macosx15.0.0-unknown", "arm64-apple-macosx15.0.0-elf", true),
        ("arm64e-apple-macosx15.0.0-unknown", "arm64-apple-macosx15.0.0-unknown", false),
        ("arm64e-apple-macosx15.0.0-unknown", "arm64-apple-macosx14.0.0-unknown", false),
        ("arm64e-apple-macosx15.0.0-unknown", "arm64-apple-macosx-simulator", false),
        ("arm64e-apple-macosx15.0.0-unknown", "aarch64-apple-macosx15.0.0-unknown", false),
        ("arm64e-apple-macosx15.0.0-unknown", "arm64e-apple-macosx15.0.0-unknown", true),
        ("arm64e-apple-macosx15.0.0-unknown", "arm64-apple-ios17.0-unknown", false),
        ("arm64e-apple-macosx15.0.0-unknown", "arm64-apple-darwin-unknown", false),
        ("arm64e-apple-macosx15.0.0-unknown", "arm64-apple-macosx15.0.0-macho", false),
        ("arm64e-apple-macosx15.0.0-unknown", "arm64-apple-macosx15.0.0-elf", false),
        ("arm64-apple-ios17.0-unknown", "arm64-apple-macosx15.0.0-unknown", false),
        ("arm64-apple-ios17.0-unknown", "arm64-apple-macosx14.0.0-unknown", false),
        ("arm64-apple-ios17.0-unknown", "arm64-apple-macosx-simulator", false),
        ("arm64-apple-ios17.0-unknown", "aarch64-apple-macosx15.0.0-unknown", false),
        ("arm64-apple-ios17.0-unknown", "arm64e-apple-macosx15.0.0-unknown", false),
        ("arm64-apple-ios17.0-unknown", "arm64-apple-ios17.0-unknown", true),
        ("arm64-apple-ios17.0-unknown", "arm64-apple-darwin-unknown", false),
        ("arm64-apple-ios17.0-unknown", "arm64-apple-macosx15.0.0-macho", false),
        ("arm64-apple-ios17.0-unknown", "arm64-apple-macosx15.0.0-elf", false),
        ("arm64-apple-darwin-unknown", "arm64-apple-macosx15.0.0-unknown", false),
        ("arm64-apple-darwin-unknown", "arm64-apple-macosx14.0.0-unknown", false),
        ("arm64-apple-darwin-unknown", "arm64-apple-macosx-simulator", false),
        ("arm64-apple-darwin-unknown", "aarch64-apple-macosx15.0.0-unknown", false),
        ("arm64-apple-darwin-unknown", "arm64e-apple-macosx15.0.0-unknown", false),
        ("arm64-apple-darwin-unknown", "arm64-apple-ios17.0-unknown", false),
        ("arm64-apple-darwin-unknown", "arm64-apple-darwin-unknown", true),
        ("arm64-apple-darwin-unknown", "arm64-apple-macosx15.0.0-macho", false),
        ("arm64-apple-darwin-unknown", "arm64-apple-macosx15.0.0-elf", false),
        ("arm64-apple-macosx15.0.0-macho", "arm64-apple-macosx15.0.0-unknown", true),
        ("arm64-apple-macosx15.0.0-macho", "arm64-apple-macosx14.0.0-unknown", true),
        ("arm64-apple-macosx15.0.0-macho", "arm64-apple-macosx-simulator", true),
        ("arm64-apple-macosx15.0.0-macho", "aarch64-apple-macosx15.0.0-unknown", true),
        ("arm64-apple-macosx15.0.0-macho", "arm64e-apple-macosx15.0.0-unknown", false),
        ("arm64-apple-macosx15.0.0-macho", "arm64-apple-ios17.0-unknown", false),
        ("arm64-apple-macosx15.0.0-macho", "arm64-apple-darwin-unknown", false),
        ("arm64-apple-macosx15.0.0-macho", "arm64-apple-macosx15.0.0-macho", true),
        ("arm64-apple-macosx15.0.0-macho", "arm64-apple-macosx15.0.0-elf", true),
        ("arm64-apple-macosx15.0.0-elf", "arm64-apple-macosx15.0.0-unknown", true),
        ("arm64-apple-macosx15.0.0-elf", "arm64-apple-macosx14.0.0-unknown", true),
        ("arm64-apple-macosx15.0.0-elf", "arm64-apple-macosx-simulator", true),
        ("arm64-apple-macosx15.0.0-elf", "aarch64-apple-macosx15.0.0-unknown", true),
        ("arm64-apple-macosx15.0.0-elf", "arm64e-apple-macosx15.0.0-unknown", false),
        ("arm64-apple-macosx15.0.0-elf", "arm64-apple-ios17.0-unknown", false),
        ("arm64-apple-macosx15.0.0-elf", "arm64-apple-darwin-unknown", false),
        ("arm64-apple-macosx15.0.0-elf", "arm64-apple-macosx15.0.0-macho", true),
        ("arm64-apple-macosx15.0.0-elf", "arm64-apple-macosx15.0.0-elf", true),
        ("armv7-apple-ios-unknown", "armv7-apple-ios-unknown", true),
        ("armv7-apple-ios-unknown", "thumbv7-apple-ios-unknown", true),
        ("armv7-apple-ios-unknown", "thumbv7-apple-ios-simulator", true),
        ("armv7-apple-ios-unknown", "armv7s-apple-ios-unknown", false),
        ("armv7-apple-ios-unknown", "thumbv7s-apple-ios-unknown", false),
        ("thumbv7-apple-ios-unknown", "armv7-apple-ios-unknown", true),
        ("thumbv7-apple-ios-unknown", "thumbv7-apple-ios-unknown", true),
        ("thumbv7-apple-ios-unknown", "thumbv7-apple-ios-simulator", true),
        ("thumbv7-apple-ios-unknown", "armv7s-apple-ios-unknown", false),
        ("thumbv7-apple-ios-unknown", "thumbv7s-apple-ios-unknown", false),
        ("thumbv7-apple-ios-simulator", "armv7-apple-ios-unknown", true),
        ("thumbv7-apple-ios-simulator", "thumbv7-apple-ios-unknown", true),
        ("thumbv7-apple-ios-simulator", "thumbv7-apple-ios-simulator", true),
        ("thumbv7-apple-ios-simulator", "armv7s-apple-ios-unknown", false),
        ("thumbv7-apple-ios-simulator", "thumbv7s-apple-ios-unknown", false),
        ("armv7s-apple-ios-unknown", "armv7-apple-ios-unknown", false),
        ("armv7s-apple-ios-unknown", "thumbv7-apple-ios-unknown", false),
        ("armv7s-apple-ios-unknown", "thumbv7-apple-ios-simulator", false),
        ("armv7s-apple-ios-unknown", "armv7s-apple-ios-unknown", true),
        ("armv7s-apple-ios-unknown", "thumbv7s-apple-ios-unknown", true),
        ("thumbv7s-apple-ios-unknown", "armv7-apple-ios-unknown", false),
        ("thumbv7s-apple-ios-unknown", "thumbv7-apple-ios-unknown", false),
        ("thumbv7s-apple-ios-unknown", "thumbv7-apple-ios-simulator", false),
        ("thumbv7s-apple-ios-unknown", "armv7s-apple-ios-unknown", true),
        ("thumbv7s-apple-ios-unknown", "thumbv7s-apple-ios-unknown", true),
        ("armv7-unknown-linux-gnueabi", "armv7-unknown-linux-gnueabi", true),
        ("armv7-unknown-linux-gnueabi", "thumbv7-unknown-linux-gnueabi", true),
        ("armv7-unknown-linux-gnueabi", "thumbv7-unknown-linux-gnueabihf", false),
        ("armv7-unknown-linux-gnueabi", "armv7a-unknown-linux-gnueabi", true),
        ("armv7-unknown-linux-gnueabi", "thumbv7m-unknown-linux-gnueabi", false),
        ("armv7-unknown-linux-gnueabi", "armebv7-unknown-linux-gnueabi", false),
        ("armv7-unknown-linux-gnueabi", "thumbebv7-unknown-linux-gnueabi", false),
        ("armv7-unknown-linux-gnueabi", "arm-unknown-linux-gnueabi", false),
        ("armv7-unknown-linux-gnueabi", "thumb-unknown-linux-gnueabi", false),
        ("thumbv7-unknown-linux-gnueabi", "armv7-unknown-linux-gnueabi", true),
        ("thumbv7-unknown-linux-gnueabi", "thumbv7-unknown-linux-gnueabi", true),
        ("thumbv7-unknown-linux-gnueabi", "thumbv7-unknown-linux-gnueabihf", false),
        ("thumbv7-unknown-linux-gnueabi", "armv7a-unknown-linux-gnueabi", true),
        ("thumbv7-unknown-linux-gnueabi", "thumbv7m-unknown-linux-gnueabi", false),
        ("thumbv7-unknown-linux-gnueabi", "armebv7-unknown-linux-gnueabi", false),
        ("thumbv7-unknown-linux-gnueabi", "thumbebv7-unknown-linux-gnueabi", false),
        ("thumbv7-unknown-linux-gnueabi", "arm-unknown-linux-gnueabi", false),
        ("thumbv7-unknown-linux-gnueabi", "thumb-unknown-linux-gnueabi", false),
        ("thumbv7-unknown-linux-gnueabihf", "armv7-unknown-linux-gnueabi", false),
        ("thumbv7-unknown-linux-gnueabihf", "thumbv7-unknown-linux-gnueabi", false),
        ("thumbv7-unknown-linux-gnueabihf", "thumbv7-unknown-linux-gnueabihf", true),
        ("thumbv7-unknown-linux-gnueabihf", "armv7a-unknown-linux-gnueabi", false),
        ("thumbv7-unknown-linux-gnueabihf", "thumbv7m-unknown-linux-gnueabi", false),
        ("thumbv7-unknown-linux-gnueabihf", "armebv7-unknown-linux-gnueabi", false),
        ("thumbv7-unknown-linux-gnueabihf", "thumbebv7-unknown-linux-gnueabi", false),
        ("thumbv7-unknown-linux-gnueabihf", "arm-unknown-linux-gnueabi", false),
        ("thumbv7-unknown-linux-gnueabihf", "thumb-unknown-linux-gnueabi", false),
        ("armv7a-unknown-linux-gnueabi", "armv7-unknown-linux-gnueabi", true),
        ("armv7a-unknown-linux-gnueabi", "thumbv7-unknown-linux-gnueabi", true),
        ("armv7a-unknown-linux-gnueabi", "thumbv7-unknown-linux-gnueabihf", false),
        ("armv7a-unknown-linux-gnueabi", "armv7a-unknown-linux-gnueabi", true),
        ("armv7a-unknown-linux-gnueabi", "thumbv7m-unknown-linux-gnueabi", false),
        ("armv7a-unknown-linux-gnueabi", "armebv7-unknown-linux-gnueabi", false),
        ("armv7a-unknown-linux-gnueabi", "thumbebv7-unknown-linux-gnueabi", false),
        ("armv7a-unknown-linux-gnueabi", "arm-unknown-linux-gnueabi", false),
        ("armv7a-unknown-linux-gnueabi", "thumb-unknown-linux-gnueabi", false),
        ("thumbv7m-unknown-linux-gnueabi", "armv7-unknown-linux-gnueabi", false),
        ("thumbv7m-unknown-linux-gnueabi", "thumbv7-unknown-linux-gnueabi", false),
        ("thumbv7m-unknown-linux-gnueabi", "thumbv7-unknown-linux-gnueabihf", false),
        ("thumbv7m-unknown-linux-gnueabi", "armv7a-unknown-linux-gnueabi", false),
        ("thumbv7m-unknown-linux-gnueabi", "thumbv7m-unknown-linux-gnueabi", true),
        ("thumbv7m-unknown-linux-gnueabi", "armebv7-unknown-linux-gnueabi", false),
        ("thumbv7m-unknown-linux-gnueabi", "thumbebv7-unknown-linux-gnueabi", false),
        ("thumbv7m-unknown-linux-gnueabi", "arm-unknown-linux-gnueabi", false),
        ("thumbv7m-unknown-linux-gnueabi", "thumb-unknown-linux-gnueabi", false),
        ("armebv7-unknown-linux-gnueabi", "armv7-unknown-linux-gnueabi", false),
        ("armebv7-unknown-linux-gnueabi", "thumbv7-unknown-linux-gnueabi", false),
        ("armebv7-unknown-linux-gnueabi", "thumbv7-unknown-linux-gnueabihf", false),
        ("armebv7-unknown-linux-gnueabi", "armv7a-unknown-linux-gnueabi", false),
        ("armebv7-unknown-linux-gnueabi", "thumbv7m-unknown-linux-gnueabi", false),
        ("armebv7-unknown-linux-gnueabi", "armebv7-unknown-linux-gnueabi", true),
        ("armebv7-unknown-linux-gnueabi", "thumbebv7-unknown-linux-gnueabi", true),
        ("armebv7-unknown-linux-gnueabi", "arm-unknown-linux-gnueabi", false),
        ("armebv7-unknown-linux-gnueabi", "thumb-unknown-linux-gnueabi", false),
        ("thumbebv7-unknown-linux-gnueabi", "armv7-unknown-linux-gnueabi", false),
        ("thumbebv7-unknown-linux-gnueabi", "thumbv7-unknown-linux-gnueabi", false),
        ("thumbebv7-unknown-linux-gnueabi", "thumbv7-unknown-linux-gnueabihf", false),
        ("thumbebv7-unknown-linux-gnueabi", "armv7a-unknown-linux-gnueabi", false),
        ("thumbebv7-unknown-linux-gnueabi", "thumbv7m-unknown-linux-gnueabi", false),
        ("thumbebv7-unknown-linux-gnueabi", "armebv7-unknown-linux-gnueabi", true),
        ("thumbebv7-unknown-linux-gnueabi", "thumbebv7-unknown-linux-gnueabi", true),
        ("thumbebv7-unknown-linux-gnueabi", "arm-unknown-linux-gnueabi", false),
        ("thumbebv7-unknown-linux-gnueabi", "thumb-unknown-linux-gnueabi", false),
        ("arm-unknown-linux-gnueabi", "armv7-unknown-linux-gnueabi", false),
        ("arm-unknown-linux-gnueabi", "thumbv7-unknown-linux-gnueabi", false),
        ("arm-unknown-linux-gnueabi", "thumbv7-unknown-linux-gnueabihf", false),
        ("arm-unknown-linux-gnueabi", "armv7a-unknown-linux-gnueabi", false),
        ("arm-unknown-linux-gnueabi", "thumbv7m-unknown-linux-gnueabi", false),
        ("arm-unknown-linux-gnueabi", "armebv7-unknown-linux-gnueabi", false),
        ("arm-unknown-linux-gnueabi", "thumbebv7-unknown-linux-gnueabi", false),
        ("arm-unknown-linux-gnueabi", "arm-unknown-linux-gnueabi", true),
        ("arm-unknown-linux-gnueabi", "thumb-unknown-linux-gnueabi", true),
        ("thumb-unknown-linux-gnueabi", "armv7-unknown-linux-gnueabi", false),
        ("thumb-unknown-linux-gnueabi", "thumbv7-unknown-linux-gnueabi", false),
        ("thumb-unknown-linux-gnueabi", "thumbv7-unknown-linux-gnueabihf", false),
        ("thumb-unknown-linux-gnueabi", "armv7a-unknown-linux-gnueabi", false),
        ("thumb-unknown-linux-gnueabi", "thumbv7m-unknown-linux-gnueabi", false),
        ("thumb-unknown-linux-gnueabi", "armebv7-unknown-linux-gnueabi", false),
        ("thumb-unknown-linux-gnueabi", "thumbebv7-unknown-linux-gnueabi", false),
        ("thumb-unknown-linux-gnueabi", "arm-unknown-linux-gnueabi", true),
        ("thumb-unknown-linux-gnueabi", "thumb-unknown-linux-gnueabi", true),
        ("x86_64-w64-windows-gnu", "x86_64-w64-windows-gnu", true),
        ("x86_64-w64-windows-gnu", "x86_64-pc-windows-gnu", true),
        ("x86_64-w64-windows-gnu", "x86_64-pc-windows-msvc", false),
        ("x86_64-w64-windows-gnu", "x86_64-w64-windows-msvc", false),
        ("x86_64-w64-windows-gnu", "x86_64-pc-windows-gnuelf", false),
        ("x86_64-pc-windows-gnu", "x86_64-w64-windows-gnu", true),
        ("x86_64-pc-windows-gnu", "x86_64-pc-windows-gnu", true),
        ("x86_64-pc-windows-gnu", "x86_64-pc-windows-msvc", false),
        ("x86_64-pc-windows-gnu", "x86_64-w64-windows-msvc", false),
        ("x86_64-pc-windows-gnu", "x86_64-pc-windows-gnuelf", false),
        ("x86_64-pc-windows-msvc", "x86_64-w64-windows-gnu", false),
        ("x86_64-pc-windows-msvc", "x86_64-pc-windows-gnu", false),
        ("x86_64-pc-windows-msvc", "x86_64-pc-windows-msvc", true),
        ("x86_64-pc-windows-msvc", "x86_64-w64-windows-msvc", false),
        ("x86_64-pc-windows-msvc", "x86_64-pc-windows-gnuelf", false),
        ("x86_64-w64-windows-msvc", "x86_64-w64-windows-gnu", false),
        ("x86_64-w64-windows-msvc", "x86_64-pc-windows-gnu", false),
        ("x86_64-w64-windows-msvc", "x86_64-pc-windows-msvc", false),
        ("x86_64-w64-windows-msvc", "x86_64-w64-windows-msvc", true),
        ("x86_64-w64-windows-msvc", "x86_64-pc-windows-gnuelf", false),
        ("x86_64-pc-windows-gnuelf", "x86_64-w64-windows-gnu", false),
        ("x86_64-pc-windows-gnuelf", "x86_64-pc-windows-gnu", false),
        ("x86_64-pc-windows-gnuelf", "x86_64-pc-windows-msvc", false),
        ("x86_64-pc-windows-gnuelf", "x86_64-w64-windows-msvc", false),
        ("x86_64-pc-windows-gnuelf", "x86_64-pc-windows-gnuelf", true),
        ("nvptx64-nvidia-cuda-unknown", "nvptx64-nvidia-cuda-unknown", true),
        ("nvptx64-nvidia-cuda-unknown", "nvptx64-unknown-cuda-unknown", false),
        ("nvptx64-nvidia-cuda-unknown", "nvptx-nvidia-cuda-unknown", false),
        ("nvptx64-nvidia-cuda-unknown", "nvptx64-unknown-unknown-unknown", false),
        ("nvptx64-unknown-cuda-unknown", "nvptx64-nvidia-cuda-unknown", false),
        ("nvptx64-unknown-cuda-unknown", "nvptx64-unknown-cuda-unknown", true),
        ("nvptx64-unknown-cuda-unknown", "nvptx-nvidia-cuda-unknown", false),
        ("nvptx64-unknown-cuda-unknown", "nvptx64-unknown-unknown-unknown", false),
        ("nvptx-nvidia-cuda-unknown", "nvptx64-nvidia-cuda-unknown", false),
        ("nvptx-nvidia-cuda-unknown", "nvptx64-unknown-cuda-unknown", false),
        ("nvptx-nvidia-cuda-unknown", "nvptx-nvidia-cuda-unknown", true),
        ("nvptx-nvidia-cuda-unknown", "nvptx64-unknown-unknown-unknown", false),
        ("nvptx64-unknown-unknown-unknown", "nvptx64-nvidia-cuda-unknown", false),
        ("nvptx64-unknown-unknown-unknown", "nvptx64-unknown-cuda-unknown", false),
        ("nvptx64-unknown-unknown-unknown", "nvptx-nvidia-cuda-unknown", false),
        ("nvptx64-unknown-unknown-unknown", "nvptx64-unknown-unknown-unknown", true),
    ];

    /// `(input, [Any, ThreeIdent, FourIdent, FiveIdent])` from LLVM 22's
    /// `Triple::normalize`, called directly.
    #[rustfmt::skip]
    const LLVM_NORMALIZE: &[(&str, [&str; 4])] = &[
        ("", ["unknown", "unknown-unknown-unknown", "unknown-unknown-unknown-unknown", "unknown-unknown-unknown-unknown-unknown"]),
        ("-", ["unknown-unknown", "unknown-unknown-unknown", "unknown-unknown-unknown-unknown", "unknown-unknown-unknown-unknown-unknown"]),
        ("x86_64", ["x86_64", "x86_64-unknown-unknown", "x86_64-unknown-unknown-unknown", "x86_64-unknown-unknown-unknown-unknown"]),
        ("x86_64-linux", ["x86_64-unknown-linux", "x86_64-unknown-linux", "x86_64-unknown-linux-unknown", "x86_64-unknown-linux-unknown-unknown"]),
        ("x86_64-linux-gnu", ["x86_64-unknown-linux-gnu", "x86_64-unknown-linux", "x86_64-unknown-linux-gnu", "x86_64-unknown-linux-gnu-unknown"]),
        ("linux-x86_64", ["x86_64-unknown-linux", "x86_64-unknown-linux", "x86_64-unknown-linux-unknown", "x86_64-unknown-linux-unknown-unknown"]),
        ("gnu-linux-x86_64-pc", ["x86_64-pc-linux-gnu", "x86_64-pc-linux", "x86_64-pc-linux-gnu", "x86_64-pc-linux-gnu-unknown"]),
        ("pc-x86_64", ["x86_64-pc", "x86_64-pc-unknown", "x86_64-pc-unknown-unknown", "x86_64-pc-unknown-unknown-unknown"]),
        ("a-b-i386", ["i386-a-b", "i386-a-b", "i386-a-b-unknown", "i386-a-b-unknown-unknown"]),
        ("i386-a-b-c-d-e", ["i386-a-b-c-d-e", "i386-a-b", "i386-a-b-c", "i386-a-b-c-d"]),
        ("x86_64-pc-win32", ["x86_64-pc-windows-msvc", "x86_64-pc-windows", "x86_64-pc-windows-msvc", "x86_64-pc-windows-msvc-unknown"]),
        ("x86_64-pc-windows", ["x86_64-pc-windows-msvc", "x86_64-pc-windows", "x86_64-pc-windows-msvc", "x86_64-pc-windows-msvc-unknown"]),
        ("x86_64-pc-windows-elf", ["x86_64-pc-windows-elf", "x86_64-pc-windows", "x86_64-pc-windows-elf", "x86_64-pc-windows-elf-unknown"]),
        ("x86_64-pc-windows-macho", ["x86_64-pc-windows-macho", "x86_64-pc-windows", "x86_64-pc-windows-macho", "x86_64-pc-windows-macho-unknown"]),
        ("x86_64-pc-windows-gnu-elf", ["x86_64-pc-windows-gnu-elf", "x86_64-pc-windows", "x86_64-pc-windows-gnu", "x86_64-pc-windows-gnu-elf"]),
        ("x86_64-pc-windows-msvc-coff", ["x86_64-pc-windows-msvc", "x86_64-pc-windows", "x86_64-pc-windows-msvc", "x86_64-pc-windows-msvc-unknown"]),
        ("x86_64-pc-windows-msvc-elf-extra", ["x86_64-pc-windows-msvc-elf", "x86_64-pc-windows", "x86_64-pc-windows-msvc", "x86_64-pc-windows-msvc-elf"]),
        ("i686-pc-mingw32", ["i686-pc-windows-gnu", "i686-pc-windows", "i686-pc-windows-gnu", "i686-pc-windows-gnu-unknown"]),
        ("x86_64-w64-mingw32-elf", ["x86_64-w64-windows-gnu-elf", "x86_64-w64-windows", "x86_64-w64-windows-gnu", "x86_64-w64-windows-gnu-elf"]),
        ("i686-pc-cygwin", ["i686-pc-windows-cygnus", "i686-pc-windows", "i686-pc-windows-cygnus", "i686-pc-windows-cygnus-unknown"]),
        ("x86_64-pc-msys", ["x86_64-pc-windows-cygnus", "x86_64-pc-windows", "x86_64-pc-windows-cygnus", "x86_64-pc-windows-cygnus-unknown"]),
        ("x86_64-pc-msys2-foo", ["x86_64-pc-windows-cygnus", "x86_64-pc-windows", "x86_64-pc-windows-cygnus", "x86_64-pc-windows-cygnus-unknown"]),
        ("armv7-none-linux-androideabi", ["armv7-none-linux-android", "armv7-none-linux", "armv7-none-linux-android", "armv7-none-linux-android-unknown"]),
        ("armv7-none-linux-androideabi16", ["armv7-none-linux-android16", "armv7-none-linux", "armv7-none-linux-android16", "armv7-none-linux-android16-unknown"]),
        ("arm-linux-androideabi", ["arm-unknown-linux-android", "arm-unknown-linux", "arm-unknown-linux-android", "arm-unknown-linux-android-unknown"]),
        ("aarch64-linux-android21", ["aarch64-unknown-linux-android21", "aarch64-unknown-linux", "aarch64-unknown-linux-android21", "aarch64-unknown-linux-android21-unknown"]),
        ("armv7-suse-linux-gnueabi", ["armv7-suse-linux-gnueabihf", "armv7-suse-linux", "armv7-suse-linux-gnueabihf", "armv7-suse-linux-gnueabihf-unknown"]),
        ("armv7-suse-linux-gnueabihf", ["armv7-suse-linux-gnueabihf", "armv7-suse-linux", "armv7-suse-linux-gnueabihf", "armv7-suse-linux-gnueabihf-unknown"]),
        ("arm-none-eabi", ["arm-unknown-none-eabi", "arm-unknown-none", "arm-unknown-none-eabi", "arm-unknown-none-eabi-unknown"]),
        ("thumbv7em-none-eabihf", ["thumbv7em-unknown-none-eabihf", "thumbv7em-unknown-none", "thumbv7em-unknown-none-eabihf", "thumbv7em-unknown-none-eabihf-unknown"]),
        ("arm-none-foo-eabi", ["arm-none-foo-eabi", "arm-none-foo", "arm-none-foo-eabi", "arm-none-foo-eabi-unknown"]),
        ("dxil-unknown-shadermodel6.3-library", ["dxilv1.3-unknown-shadermodel6.3-library", "dxilv1.3-unknown-shadermodel6.3", "dxilv1.3-unknown-shadermodel6.3-library", "dxilv1.3-unknown-shadermodel6.3-library-unknown"]),
        ("dxil-unknown-shadermodel6.x-compute", ["dxilv1.9-unknown-shadermodel6.x-compute", "dxilv1.9-unknown-shadermodel6.x", "dxilv1.9-unknown-shadermodel6.x-compute", "dxilv1.9-unknown-shadermodel6.x-compute-unknown"]),
        ("dxil-unknown-shadermodel6-pixel", ["dxilv1.0-unknown-shadermodel6-pixel", "dxilv1.0-unknown-shadermodel6", "dxilv1.0-unknown-shadermodel6-pixel", "dxilv1.0-unknown-shadermodel6-pixel-unknown"]),
        ("dxil-unknown-shadermodel5.1", ["dxilv1.0-unknown-shadermodel5.1", "dxilv1.0-unknown-shadermodel5.1", "dxilv1.0-unknown-shadermodel5.1-unknown", "dxilv1.0-unknown-shadermodel5.1-unknown-unknown"]),
        ("dxil-shadermodel6.0", ["dxilv1.0-unknown-shadermodel6.0", "dxilv1.0-unknown-shadermodel6.0", "dxilv1.0-unknown-shadermodel6.0-unknown", "dxilv1.0-unknown-shadermodel6.0-unknown-unknown"]),
        ("dxil-unknown-shadermodel6.2-library-elf-x", ["dxilv1.2-unknown-shadermodel6.2-library", "dxilv1.2-unknown-shadermodel6.2", "dxilv1.2-unknown-shadermodel6.2-library", "dxilv1.2-unknown-shadermodel6.2-library-unknown"]),
        ("dxilv1.3-unknown-shadermodel6.5", ["dxilv1.3-unknown-shadermodel6.5", "dxilv1.3-unknown-shadermodel6.5", "dxilv1.3-unknown-shadermodel6.5-unknown", "dxilv1.3-unknown-shadermodel6.5-unknown-unknown"]),
        ("amdgcn-amd-amdhsa", ["amdgcn-amd-amdhsa", "amdgcn-amd-amdhsa", "amdgcn-amd-amdhsa-unknown", "amdgcn-amd-amdhsa-unknown-unknown"]),
        ("amdgcn-amd-amdhsa-gnu", ["amdgcn-amd-amdhsa-gnu", "amdgcn-amd-amdhsa", "amdgcn-amd-amdhsa-gnu", "amdgcn-amd-amdhsa-gnu-unknown"]),
        ("amdgcn-amd-amdhsa-elf", ["amdgcn-amd-amdhsa-elf", "amdgcn-amd-amdhsa", "amdgcn-amd-amdhsa-elf", "amdgcn-amd-amdhsa-elf-unknown"]),
        ("amdgcn-amd-amdhsa--gfx90a", ["amdgcn-amd-amdhsa-unknown-gfx90a", "amdgcn-amd-amdhsa", "amdgcn-amd-amdhsa-unknown", "amdgcn-amd-amdhsa-unknown-gfx90a"]),
        ("amdhsa-amdgcn-amd", ["amdgcn-amd-amdhsa", "amdgcn-amd-amdhsa", "amdgcn-amd-amdhsa-unknown", "amdgcn-amd-amdhsa-unknown-unknown"]),
        ("amd-amdgcn-amdhsa", ["amdgcn-amd-amdhsa", "amdgcn-amd-amdhsa", "amdgcn-amd-amdhsa-unknown", "amdgcn-amd-amdhsa-unknown-unknown"]),
        ("nvptx64-nvidia-cuda", ["nvptx64-nvidia-cuda", "nvptx64-nvidia-cuda", "nvptx64-nvidia-cuda-unknown", "nvptx64-nvidia-cuda-unknown-unknown"]),
        ("cuda-nvptx64", ["nvptx64-unknown-cuda", "nvptx64-unknown-cuda", "nvptx64-unknown-cuda-unknown", "nvptx64-unknown-cuda-unknown-unknown"]),
        ("x86_64-apple-macosx15.0.0", ["x86_64-apple-macosx15.0.0", "x86_64-apple-macosx15.0.0", "x86_64-apple-macosx15.0.0-unknown", "x86_64-apple-macosx15.0.0-unknown-unknown"]),
        ("macosx-apple-arm64", ["arm64-apple-macosx", "arm64-apple-macosx", "arm64-apple-macosx-unknown", "arm64-apple-macosx-unknown-unknown"]),
        ("arm64-apple-ios17.0-simulator", ["arm64-apple-ios17.0-simulator", "arm64-apple-ios17.0", "arm64-apple-ios17.0-simulator", "arm64-apple-ios17.0-simulator-unknown"]),
        ("x86_64-unknown-linux-gnu-elf", ["x86_64-unknown-linux-gnu-elf", "x86_64-unknown-linux", "x86_64-unknown-linux-gnu", "x86_64-unknown-linux-gnu-elf"]),
        ("x86_64-unknown-linux-elf", ["x86_64-unknown-linux-elf", "x86_64-unknown-linux", "x86_64-unknown-linux-elf", "x86_64-unknown-linux-elf-unknown"]),
        ("x86_64-elf", ["x86_64-unknown-unknown-elf", "x86_64-unknown-unknown", "x86_64-unknown-unknown-elf", "x86_64-unknown-unknown-elf-unknown"]),
        ("elf-x86_64", ["x86_64-unknown-unknown-elf", "x86_64-unknown-unknown", "x86_64-unknown-unknown-elf", "x86_64-unknown-unknown-elf-unknown"]),
        ("x86_64-gnu", ["x86_64-unknown-unknown-gnu", "x86_64-unknown-unknown", "x86_64-unknown-unknown-gnu", "x86_64-unknown-unknown-gnu-unknown"]),
        ("x86_64-unknown-linux-gnu-extra-more", ["x86_64-unknown-linux-gnu-extra-more", "x86_64-unknown-linux", "x86_64-unknown-linux-gnu", "x86_64-unknown-linux-gnu-extra"]),
        ("mipsel-linux-gnu", ["mipsel-unknown-linux-gnu", "mipsel-unknown-linux", "mipsel-unknown-linux-gnu", "mipsel-unknown-linux-gnu-unknown"]),
        ("mips-mti-linux-gnu", ["mips-mti-linux-gnu", "mips-mti-linux", "mips-mti-linux-gnu", "mips-mti-linux-gnu-unknown"]),
        ("wasm32-wasip2", ["wasm32-unknown-wasip2", "wasm32-unknown-wasip2", "wasm32-unknown-wasip2-unknown", "wasm32-unknown-wasip2-unknown-unknown"]),
        ("wasm32-unknown-unknown-wasm", ["wasm32-unknown-unknown-wasm", "wasm32-unknown-unknown", "wasm32-unknown-unknown-wasm", "wasm32-unknown-unknown-wasm-unknown"]),
        ("spirv64-amd-amdhsa", ["spirv64-amd-amdhsa", "spirv64-amd-amdhsa", "spirv64-amd-amdhsa-unknown", "spirv64-amd-amdhsa-unknown-unknown"]),
        ("spirv64v1.3-unknown-vulkan1.3-compute", ["spirv64v1.3-unknown-vulkan1.3-compute", "spirv64v1.3-unknown-vulkan1.3", "spirv64v1.3-unknown-vulkan1.3-compute", "spirv64v1.3-unknown-vulkan1.3-compute-unknown"]),
        ("foo-bar-baz-qux-quux", ["foo-bar-baz-qux-quux", "foo-bar-baz", "foo-bar-baz-qux", "foo-bar-baz-qux-quux"]),
    ];

    /// `(input, arch, sub-arch, vendor, OS, environment, object format)` from
    /// LLVM 22's `Triple(StringRef)`.
    #[rustfmt::skip]
    const LLVM_PARSE: &[(&str, Arch, SubArch, Vendor, Os, Environment, ObjectFormat)] = &[
        ("x86_64-unknown-linux-gnu", Arch::X86_64, SubArch::NoSubArch, Vendor::Unknown, Os::Linux, Environment::Gnu, ObjectFormat::Elf),
        ("x86_64-pc-windows-msvc", Arch::X86_64, SubArch::NoSubArch, Vendor::Pc, Os::Win32, Environment::Msvc, ObjectFormat::Coff),
        ("x86_64-pc-win32", Arch::X86_64, SubArch::NoSubArch, Vendor::Pc, Os::Win32, Environment::Unknown, ObjectFormat::Coff),
        ("x86_64-w64-windows-gnu", Arch::X86_64, SubArch::NoSubArch, Vendor::Unknown, Os::Win32, Environment::Gnu, ObjectFormat::Coff),
        ("x86_64-pc-windows-gnu-elf", Arch::X86_64, SubArch::NoSubArch, Vendor::Pc, Os::Win32, Environment::Gnu, ObjectFormat::Elf),
        ("x86_64-unknown-uefi", Arch::X86_64, SubArch::NoSubArch, Vendor::Unknown, Os::Uefi, Environment::Unknown, ObjectFormat::Coff),
        ("i686-pc-windows-msvc-coff", Arch::X86, SubArch::NoSubArch, Vendor::Pc, Os::Win32, Environment::Msvc, ObjectFormat::Coff),
        ("aarch64-apple-darwin", Arch::Aarch64, SubArch::ArmV8, Vendor::Apple, Os::Darwin, Environment::Unknown, ObjectFormat::MachO),
        ("arm64-apple-macosx15.0.0", Arch::Aarch64, SubArch::ArmV8, Vendor::Apple, Os::MacOsx, Environment::Unknown, ObjectFormat::MachO),
        ("arm64e-apple-ios17.0-simulator", Arch::Aarch64, SubArch::Aarch64Arm64e, Vendor::Apple, Os::Ios, Environment::Simulator, ObjectFormat::MachO),
        ("arm64ec-pc-windows-msvc", Arch::Aarch64, SubArch::Aarch64Arm64ec, Vendor::Pc, Os::Win32, Environment::Msvc, ObjectFormat::Coff),
        ("aarch64_lfi-unknown-linux", Arch::Aarch64, SubArch::Aarch64Lfi, Vendor::Unknown, Os::Linux, Environment::Unknown, ObjectFormat::Elf),
        ("aarch64_be-unknown-linux-gnu", Arch::Aarch64Be, SubArch::NoSubArch, Vendor::Unknown, Os::Linux, Environment::Gnu, ObjectFormat::Elf),
        ("arm64_32-apple-watchos", Arch::Aarch64_32, SubArch::NoSubArch, Vendor::Apple, Os::WatchOs, Environment::Unknown, ObjectFormat::MachO),
        ("armv7-unknown-linux-gnueabihf", Arch::Arm, SubArch::ArmV7, Vendor::Unknown, Os::Linux, Environment::GnuEabiHf, ObjectFormat::Elf),
        ("armv7s-apple-ios", Arch::Arm, SubArch::ArmV7s, Vendor::Apple, Os::Ios, Environment::Unknown, ObjectFormat::MachO),
        ("armv7k-apple-watchos", Arch::Arm, SubArch::ArmV7k, Vendor::Apple, Os::WatchOs, Environment::Unknown, ObjectFormat::MachO),
        ("armebv7-unknown-linux-gnueabi", Arch::Armeb, SubArch::ArmV7, Vendor::Unknown, Os::Linux, Environment::GnuEabi, ObjectFormat::Elf),
        ("armv7eb-unknown-linux-gnueabi", Arch::Armeb, SubArch::ArmV7, Vendor::Unknown, Os::Linux, Environment::GnuEabi, ObjectFormat::Elf),
        ("thumbv6m-none-eabi", Arch::Thumb, SubArch::ArmV6m, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
        ("armv6m-none-eabi", Arch::Thumb, SubArch::ArmV6m, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
        ("thumbv7em-none-eabihf", Arch::Thumb, SubArch::ArmV7em, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
        ("thumbv8m.main-none-eabi", Arch::Thumb, SubArch::ArmV8mMainline, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
        ("thumbv8.1m.main-none-eabi", Arch::Thumb, SubArch::ArmV8_1mMainline, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
        ("armv8.1a-unknown-linux", Arch::Arm, SubArch::ArmV8_1a, Vendor::Unknown, Os::Linux, Environment::Unknown, ObjectFormat::Elf),
        ("armv9.7a-unknown-linux", Arch::Arm, SubArch::ArmV9_7a, Vendor::Unknown, Os::Linux, Environment::Unknown, ObjectFormat::Elf),
        ("thumbv3-unknown-linux", Arch::Unknown, SubArch::NoSubArch, Vendor::Unknown, Os::Linux, Environment::Unknown, ObjectFormat::Elf),
        ("arm64eb-unknown-linux", Arch::Aarch64Be, SubArch::NoSubArch, Vendor::Unknown, Os::Linux, Environment::Unknown, ObjectFormat::Elf),
        ("aarch64eb-unknown-linux", Arch::Unknown, SubArch::NoSubArch, Vendor::Unknown, Os::Linux, Environment::Unknown, ObjectFormat::Elf),
        ("xscale-unknown-linux", Arch::Arm, SubArch::ArmV5te, Vendor::Unknown, Os::Linux, Environment::Unknown, ObjectFormat::Elf),
        ("amdgcn-amd-amdhsa", Arch::Amdgcn, SubArch::NoSubArch, Vendor::Amd, Os::Amdhsa, Environment::Unknown, ObjectFormat::Elf),
        ("amdgcn-amd-amdhsa-", Arch::Amdgcn, SubArch::NoSubArch, Vendor::Amd, Os::Amdhsa, Environment::Unknown, ObjectFormat::Elf),
        ("amdgcn-amd-amdhsa-unknown", Arch::Amdgcn, SubArch::NoSubArch, Vendor::Amd, Os::Amdhsa, Environment::Unknown, ObjectFormat::Elf),
        ("amdgcn-amd-amdpal", Arch::Amdgcn, SubArch::NoSubArch, Vendor::Amd, Os::Amdpal, Environment::Unknown, ObjectFormat::Elf),
        ("amdgcn-amd-mesa3d", Arch::Amdgcn, SubArch::NoSubArch, Vendor::Amd, Os::Mesa3d, Environment::Unknown, ObjectFormat::Elf),
        ("r600-unknown-unknown", Arch::R600, SubArch::NoSubArch, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
        ("nvptx64-nvidia-cuda", Arch::Nvptx64, SubArch::NoSubArch, Vendor::Nvidia, Os::Cuda, Environment::Unknown, ObjectFormat::Elf),
        ("nvptx-nvidia-cuda", Arch::Nvptx, SubArch::NoSubArch, Vendor::Nvidia, Os::Cuda, Environment::Unknown, ObjectFormat::Elf),
        ("spirv64-amd-amdhsa", Arch::Spirv64, SubArch::NoSubArch, Vendor::Amd, Os::Amdhsa, Environment::Unknown, ObjectFormat::Spirv),
        ("spirv64v1.3-unknown-unknown", Arch::Spirv64, SubArch::SpirvV13, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Spirv),
        ("spirv1.5-unknown-vulkan1.2", Arch::Spirv, SubArch::SpirvV15, Vendor::Unknown, Os::Vulkan, Environment::Unknown, ObjectFormat::Spirv),
        ("spirv1.0-unknown-unknown", Arch::Unknown, SubArch::SpirvV10, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
        ("spirv-unknown-vulkan1.3-compute", Arch::Spirv, SubArch::NoSubArch, Vendor::Unknown, Os::Vulkan, Environment::Compute, ObjectFormat::Spirv),
        ("spir64-unknown-unknown", Arch::Spir64, SubArch::NoSubArch, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
        ("dxil-unknown-shadermodel6.3-library", Arch::Dxil, SubArch::NoSubArch, Vendor::Unknown, Os::ShaderModel, Environment::Library, ObjectFormat::DxContainer),
        ("dxilv1.9-unknown-shadermodel6.9", Arch::Dxil, SubArch::DxilV1_9, Vendor::Unknown, Os::ShaderModel, Environment::Unknown, ObjectFormat::DxContainer),
        ("powerpc64-ibm-aix", Arch::Ppc64, SubArch::NoSubArch, Vendor::Ibm, Os::Aix, Environment::Unknown, ObjectFormat::Xcoff),
        ("powerpc-apple-darwin", Arch::Ppc, SubArch::NoSubArch, Vendor::Apple, Os::Darwin, Environment::Unknown, ObjectFormat::MachO),
        ("powerpc64le-unknown-linux-gnu", Arch::Ppc64le, SubArch::NoSubArch, Vendor::Unknown, Os::Linux, Environment::Gnu, ObjectFormat::Elf),
        ("powerpcspe-unknown-linux-gnuspe", Arch::Ppc, SubArch::PpcSpe, Vendor::Unknown, Os::Linux, Environment::Gnu, ObjectFormat::Elf),
        ("s390x-ibm-zos", Arch::Systemz, SubArch::NoSubArch, Vendor::Ibm, Os::Zos, Environment::Unknown, ObjectFormat::Goff),
        ("systemz-unknown-linux", Arch::Systemz, SubArch::NoSubArch, Vendor::Unknown, Os::Linux, Environment::Unknown, ObjectFormat::Elf),
        ("mips", Arch::Mips, SubArch::NoSubArch, Vendor::Unknown, Os::Unknown, Environment::Gnu, ObjectFormat::Elf),
        ("mipsel", Arch::Mipsel, SubArch::NoSubArch, Vendor::Unknown, Os::Unknown, Environment::Gnu, ObjectFormat::Elf),
        ("mips64", Arch::Mips64, SubArch::NoSubArch, Vendor::Unknown, Os::Unknown, Environment::GnuAbi64, ObjectFormat::Elf),
        ("mipsn32", Arch::Mips64, SubArch::NoSubArch, Vendor::Unknown, Os::Unknown, Environment::GnuAbiN32, ObjectFormat::Elf),
        ("mipsisa64r6el", Arch::Mips64el, SubArch::MipsR6, Vendor::Unknown, Os::Unknown, Environment::GnuAbi64, ObjectFormat::Elf),
        ("mipsisa32r6", Arch::Mips, SubArch::MipsR6, Vendor::Unknown, Os::Unknown, Environment::Gnu, ObjectFormat::Elf),
        ("mipsr6el", Arch::Mipsel, SubArch::MipsR6, Vendor::Unknown, Os::Unknown, Environment::Gnu, ObjectFormat::Elf),
        ("mipsel-unknown-windows", Arch::Mipsel, SubArch::NoSubArch, Vendor::Unknown, Os::Win32, Environment::Unknown, ObjectFormat::Coff),
        ("mips64el-unknown-linux-gnuabi64", Arch::Mips64el, SubArch::NoSubArch, Vendor::Unknown, Os::Linux, Environment::GnuAbi64, ObjectFormat::Elf),
        ("wasm32-unknown-unknown", Arch::Wasm32, SubArch::NoSubArch, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Wasm),
        ("wasm32-unknown-wasip2", Arch::Wasm32, SubArch::NoSubArch, Vendor::Unknown, Os::WasiP2, Environment::Unknown, ObjectFormat::Wasm),
        ("wasm32-unknown-wasi", Arch::Wasm32, SubArch::NoSubArch, Vendor::Unknown, Os::Wasi, Environment::Unknown, ObjectFormat::Wasm),
        ("wasm64-unknown-emscripten", Arch::Wasm64, SubArch::NoSubArch, Vendor::Unknown, Os::Emscripten, Environment::Unknown, ObjectFormat::Wasm),
        ("wasm32-unknown-linux-muslwali", Arch::Wasm32, SubArch::NoSubArch, Vendor::Unknown, Os::Linux, Environment::MuslWali, ObjectFormat::Wasm),
        ("riscv64be-unknown-linux", Arch::Riscv64be, SubArch::NoSubArch, Vendor::Unknown, Os::Linux, Environment::Unknown, ObjectFormat::Elf),
        ("bpf", Arch::Bpfel, SubArch::NoSubArch, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
        ("bpfeb", Arch::Bpfeb, SubArch::NoSubArch, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
        ("bpf_le", Arch::Bpfel, SubArch::NoSubArch, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
        ("kalimba3", Arch::Kalimba, SubArch::NoSubArch, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
        ("kalimba", Arch::Kalimba, SubArch::NoSubArch, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
        ("ve", Arch::Ve, SubArch::ArmV7ve, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
        ("ve-unknown-linux", Arch::Ve, SubArch::ArmV7ve, Vendor::Unknown, Os::Linux, Environment::Unknown, ObjectFormat::Elf),
        ("e", Arch::Unknown, SubArch::ArmV5te, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
        ("i386", Arch::X86, SubArch::NoSubArch, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
        ("x86_64-unknown-linux-gnu-extra", Arch::X86_64, SubArch::NoSubArch, Vendor::Unknown, Os::Linux, Environment::Gnu, ObjectFormat::Elf),
        ("x86_64-unknown-linux-gnux32-elf", Arch::X86_64, SubArch::NoSubArch, Vendor::Unknown, Os::Linux, Environment::GnuX32, ObjectFormat::Elf),
        ("x86_64-unknown-linux-android21", Arch::X86_64, SubArch::NoSubArch, Vendor::Unknown, Os::Linux, Environment::Android, ObjectFormat::Elf),
        ("armv7-none-linux-androideabi16", Arch::Arm, SubArch::ArmV7, Vendor::Unknown, Os::Linux, Environment::Android, ObjectFormat::Elf),
        ("x86_64-unknown-linux-", Arch::X86_64, SubArch::NoSubArch, Vendor::Unknown, Os::Linux, Environment::Unknown, ObjectFormat::Elf),
        ("x86_64--linux-gnu", Arch::X86_64, SubArch::NoSubArch, Vendor::Unknown, Os::Linux, Environment::Gnu, ObjectFormat::Elf),
        ("-unknown-linux-gnu", Arch::Unknown, SubArch::NoSubArch, Vendor::Unknown, Os::Linux, Environment::Gnu, ObjectFormat::Elf),
        ("x86_64", Arch::X86_64, SubArch::NoSubArch, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
        ("x86_64-pc", Arch::X86_64, SubArch::NoSubArch, Vendor::Pc, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
        ("hexagon-unknown-elf", Arch::Hexagon, SubArch::NoSubArch, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
        ("loongarch64-unknown-linux-gnuf64", Arch::Loongarch64, SubArch::NoSubArch, Vendor::Unknown, Os::Linux, Environment::GnuF64, ObjectFormat::Elf),
        ("aarch64-unknown-linux-pauthtest", Arch::Aarch64, SubArch::ArmV8, Vendor::Unknown, Os::Linux, Environment::PAuthTest, ObjectFormat::Elf),
        ("x86_64-scei-ps4", Arch::X86_64, SubArch::NoSubArch, Vendor::Scei, Os::Ps4, Environment::Unknown, ObjectFormat::Elf),
        ("x86_64-sie-ps5", Arch::X86_64, SubArch::NoSubArch, Vendor::Scei, Os::Ps5, Environment::Unknown, ObjectFormat::Elf),
        ("aarch64-meta-linux-mtia", Arch::Aarch64, SubArch::ArmV8, Vendor::Meta, Os::Linux, Environment::Mtia, ObjectFormat::Elf),
        ("x86_64-unknown-managarm-mlibc", Arch::X86_64, SubArch::NoSubArch, Vendor::Unknown, Os::Managarm, Environment::Mlibc, ObjectFormat::Elf),
        ("riscv32cheriot-unknown-cheriotrtos", Arch::Unknown, SubArch::NoSubArch, Vendor::Unknown, Os::CheriotRtos, Environment::Unknown, ObjectFormat::Elf),
        ("x86_64-apple-xros", Arch::X86_64, SubArch::NoSubArch, Vendor::Apple, Os::XrOs, Environment::Unknown, ObjectFormat::MachO),
        ("arm64-apple-visionos2", Arch::Aarch64, SubArch::ArmV8, Vendor::Apple, Os::XrOs, Environment::Unknown, ObjectFormat::MachO),
        ("arm64-apple-driverkit23", Arch::Aarch64, SubArch::ArmV8, Vendor::Apple, Os::DriverKit, Environment::Unknown, ObjectFormat::MachO),
        ("x86_64-unknown-linux-gnu-macho", Arch::X86_64, SubArch::NoSubArch, Vendor::Unknown, Os::Linux, Environment::Gnu, ObjectFormat::MachO),
        ("x86_64-unknown-linux-gnuxcoff", Arch::X86_64, SubArch::NoSubArch, Vendor::Unknown, Os::Linux, Environment::Gnu, ObjectFormat::Xcoff),
        ("", Arch::Unknown, SubArch::NoSubArch, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
        ("-", Arch::Unknown, SubArch::NoSubArch, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
        ("---", Arch::Unknown, SubArch::NoSubArch, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
        ("foo-bar-baz-qux", Arch::Unknown, SubArch::NoSubArch, Vendor::Unknown, Os::Unknown, Environment::Unknown, ObjectFormat::Elf),
    ];

    /// `(a, b, Triple(a).isCompatibleWith(Triple(b)))` from LLVM 22.
    #[rustfmt::skip]
    const LLVM_COMPATIBLE: &[(&str, &str, bool)] = &[
        ("amdgcn-amd-amdhsa-", "amdgcn-amd-amdhsa-unknown", true),
        ("amdgcn-amd-amdhsa-unknown", "amdgcn-amd-amdhsa-", true),
        ("amdgcn-amd-amdhsa", "amdgcn-amd-amdhsa-", true),
        ("amdgcn-amd-amdhsa-", "amdgcn-amd-amdhsa-gnu", false),
        ("x86_64-unknown-linux-gnu", "x86_64-pc-linux-gnu", false),
        ("x86_64-unknown-linux-", "x86_64-unknown-linux-gnu", false),
        ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-gnu-elf", true),
        ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-gnu-coff", false),
        ("x86_64-unknown-linux-gnu", "amd64-unknown-linux-gnu", true),
        ("x86_64-unknown-linux-gnu", "x86_64h-unknown-linux-gnu", true),
        ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-gnu2.35", true),
        ("arm64-apple-macosx15.0.0", "arm64-apple-macosx14.0.0", true),
        ("arm64-apple-macosx15.0.0", "arm64-apple-macosx15.0.0-simulator", true),
        ("arm64-apple-macosx15.0.0-simulator", "arm64-apple-macosx15.0.0", true),
        ("arm64-apple-macosx15.0.0", "arm64-apple-macosx15.0.0-elf", true),
        ("arm64-apple-macosx15.0.0", "arm64-apple-darwin", false),
        ("arm64-apple-macosx15.0.0", "arm64e-apple-macosx15.0.0", false),
        ("arm64-apple-macosx15.0.0", "aarch64-apple-macosx15.0.0", true),
        ("arm64-apple-ios17.0", "arm64-apple-ios17.0-simulator", true),
        ("arm64-apple-ios17.0", "arm64-apple-ios16.0-macabi", true),
        ("arm64-apple-macosx15.0.0", "arm64-unknown-macosx15.0.0", false),
        ("arm64-unknown-macosx15.0.0", "arm64-apple-macosx15.0.0", false),
        ("armv7-apple-ios", "thumbv7-apple-ios-simulator", true),
        ("thumbv7-apple-ios-simulator", "armv7-apple-ios", true),
        ("armv7-apple-ios", "thumbv7s-apple-ios", false),
        ("armv7s-apple-ios", "thumbv7s-apple-ios", true),
        ("armv7-apple-ios", "thumbv7-unknown-ios", false),
        ("armv7-unknown-linux-gnueabi", "thumbv7-unknown-linux-gnueabi", true),
        ("armv7-unknown-linux-gnueabi", "thumbv7-unknown-linux-gnueabihf", false),
        ("armv7-unknown-linux-gnueabi", "thumbv7-pc-linux-gnueabi", false),
        ("armebv7-unknown-linux-gnueabi", "thumbebv7-unknown-linux-gnueabi", true),
        ("armv7-unknown-linux-gnueabi", "thumbebv7-unknown-linux-gnueabi", false),
        ("armv7-unknown-linux-gnueabi", "armv7a-unknown-linux-gnueabi", true),
        ("armv7-unknown-linux-gnueabi", "armv8-unknown-linux-gnueabi", false),
        ("thumbv6m-none-eabi", "armv6m-none-eabi", true),
        ("x86_64-w64-windows-gnu", "x86_64-pc-windows-gnu", true),
        ("x86_64-pc-windows-gnu", "x86_64-w64-windows-gnu", true),
        ("x86_64-pc-windows-msvc", "x86_64-w64-windows-msvc", false),
        ("x86_64-pc-windows-gnu", "x86_64-pc-windows-msvc", false),
        ("x86_64-pc-windows-gnu", "x86_64-pc-windows-gnu-elf", false),
        ("armv7-w64-windows-gnu", "thumbv7-pc-windows-gnu", true),
        ("armv7-apple-windows-gnu", "thumbv7-pc-windows-gnu", false),
        ("x86_64-apple-windows-gnu", "x86_64-pc-windows-msvc", true),
        ("x86_64-pc-windows-msvc", "x86_64-apple-windows-gnu", false),
        ("nvptx64-nvidia-cuda", "nvptx64-nvidia-cuda-", true),
        ("nvptx64-nvidia-cuda", "nvptx-nvidia-cuda", false),
        ("nvptx64-nvidia-cuda", "nvptx64-unknown-cuda", false),
        ("spirv64-amd-amdhsa", "spirv64-amd-amdhsa-unknown", true),
        ("spirv64v1.3-amd-amdhsa", "spirv64-amd-amdhsa", false),
        ("amdgcn-amd-amdhsa", "amdgcn-amd-amdpal", false),
        ("amdgcn-amd-amdhsa", "r600-amd-amdhsa", false),
        ("ve-unknown-linux", "ve-unknown-linux-gnu", false),
        ("foo-bar-baz", "qux-quux-corge", true),
        ("", "-", true),
    ];

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
