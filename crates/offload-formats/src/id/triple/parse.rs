//! LLVM's name tables: the `StringSwitch` chains of `Triple.cpp` that turn a component into
//! an architecture, sub-architecture, vendor, OS, environment or object format, in LLVM's
//! order (where one name is a prefix of another, the order decides).

use super::arm;
use super::names::{Arch, Environment, ObjectFormat, Os, SubArch, Vendor};

/// `StringRef::split('-')`: the text before the first `-` and the text after
/// it (empty when there is no `-`).
pub(super) fn split_first(s: &str) -> (&str, &str) {
    s.split_once('-').unwrap_or((s, ""))
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
/// and `mingw*` are not OSes here; [`normalize`](super::normalize()) rewrites them.)
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
