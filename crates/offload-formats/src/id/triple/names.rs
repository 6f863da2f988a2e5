//! The components' vocabularies: LLVM's architecture, sub-architecture, vendor, OS,
//! environment and object-format enums, each variant with the spelling LLVM prints.

use std::fmt;

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
