//! Whether a GPU runtime would load a code object on a given GPU.
//!
//! [`compatible`] answers for one bundle entry ID and one [`Gpu`]; [`compatible_entry`] for an
//! entry as [`crate::inspect`] reports it (offload kind, triple, architecture, image kind).
//! The rules, and where each is defined:
//!
//! **AMD** (the HIP runtime, ROCm clr `hipamd/src/hip_code_object.cpp`:
//! `isCodeObjectCompatibleWithDevice` and `extractCodeObjectFromFatBinaryUsingComgr`; target
//! IDs in LLVM's AMDGPUUsage "Target ID" and "Generic processors" sections):
//! 1. Only entries of offload kind `hip`, `hipv4` or `hcc` for `amdgcn-amd-amdhsa` are
//!    looked at (`getTripleTargetID`); LLVM bitcode (offload-binary image kind `bc`) and
//!    device code in relocatable fat objects are linked at build time, never loaded.
//! 2. The code object's processor equals the GPU's (canonical names: `gfx803` ≡ `fiji`).
//! 3. A generic processor (`gfx9-generic`, …) runs on every processor its row of
//!    AMDGPUUsage's generic-processor table lists ([`generic_members`]); the runtime asks for
//!    the GPU's generic target after the exact one and prefers an exact code object.
//!    Generic code objects are code object version 6 (AMDGPUUsage: "generic processor
//!    ... code object V6 and above"), loaded by ROCm 6.4 and later runtimes.
//! 4. `xnack` and `sramecc`: a feature the code object leaves out matches either setting of
//!    the GPU; `+` or `-` matches only a GPU running with that setting (AMDGPUUsage, "Target
//!    ID": "any" vs "on"/"off"). When the GPU is named without that setting (`gfx90a` rather
//!    than `gfx90a:xnack-`) the entry fits only if the GPU runs so: [`Fit::requires`].
//!
//! **NVIDIA** (CUDA C++ Programming Guide, "Binary Compatibility" and "PTX Compatibility";
//! "Feature Availability" for the `a` and `f` suffixes):
//! 1. A cubin for `sm_XY` runs on a GPU of compute capability `X.Z` for `Z >= Y` only
//!    (same major, equal or higher minor).
//! 2. PTX for `compute_XY` is compiled by the driver for any GPU of capability `>= X.Y`.
//! 3. Architecture-specific code (`sm_90a`, `compute_90a`) runs only on exactly `9.0`.
//! 4. Family-specific code (`sm_100f`, `compute_100f`) runs on the same major, equal or
//!    higher minor.
//!
//! ```
//! use offload_formats::compat::{Gpu, Mismatch, Rule, compatible};
//! let gpu = Gpu::parse("gfx1151")?;
//! let fit = compatible("hipv4-amdgcn-amd-amdhsa--gfx11-generic", &gpu).unwrap();
//! assert_eq!(fit.rule, Rule::GenericProcessor("gfx11-generic"));
//! assert_eq!(
//!     compatible("hipv4-amdgcn-amd-amdhsa--gfx1100", &gpu),
//!     Err(Mismatch::Processor { code: "gfx1100".into() })
//! );
//! let ampere = Gpu::parse("8.6")?;
//! assert!(compatible("cuda-nvptx64-nvidia-cuda-sm_80", &ampere).is_ok());
//! # Ok::<(), offload_formats::compat::GpuError>(())
//! ```
//!
//! NVIDIA fat binaries (`.nv_fatbin`) are read by a module of their own; each of their
//! entries (a cubin or a PTX text for one architecture) feeds [`nvidia_compatible`]
//! as an [`NvidiaCode`] — see the `HOOK(nvfatbin)` note on that function.

use std::fmt;

use crate::id::target_id::{self, TargetId, amdgpu_processor};
use crate::id::triple::{Os, Triple};

/// The processors each AMD generic processor covers, from LLVM's AMDGPUUsage
/// generic-processor table (LLVM 22; `gfx1152` and `gfx1153` joined `gfx11-generic` after
/// ROCm clr's own copy of the map was written).
pub const GENERIC_PROCESSORS: &[(&str, &[&str])] = &[
    (
        "gfx9-generic",
        &["gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"],
    ),
    ("gfx9-4-generic", &["gfx940", "gfx941", "gfx942", "gfx950"]),
    (
        "gfx10-1-generic",
        &["gfx1010", "gfx1011", "gfx1012", "gfx1013"],
    ),
    (
        "gfx10-3-generic",
        &[
            "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036",
        ],
    ),
    (
        "gfx11-generic",
        &[
            "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153",
        ],
    ),
    ("gfx12-generic", &["gfx1200", "gfx1201"]),
];

/// The processors a generic processor covers (`gfx11-generic` → `gfx1100`, …); `None` for a
/// name that is not a generic processor.
pub fn generic_members(generic: &str) -> Option<&'static [&'static str]> {
    GENERIC_PROCESSORS
        .iter()
        .find(|(g, _)| *g == generic)
        .map(|(_, m)| *m)
}

/// The generic processor covering `processor`, if any (`gfx1151` → `gfx11-generic`).
pub fn generic_of(processor: &str) -> Option<&'static str> {
    GENERIC_PROCESSORS
        .iter()
        .find(|(_, m)| m.contains(&processor))
        .map(|(g, _)| *g)
}

/// A GPU to check code objects against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Gpu {
    /// An AMD GPU: canonical processor and the xnack/sramecc settings it runs with (`None`:
    /// not given, or not a feature of the processor).
    Amd {
        /// Canonical processor name (`gfx1151`).
        processor: &'static str,
        /// `xnack` setting, if given.
        xnack: Option<bool>,
        /// `sramecc` setting, if given.
        sramecc: Option<bool>,
    },
    /// An NVIDIA GPU of compute capability `major.minor`.
    Nvidia {
        /// Major compute capability.
        major: u32,
        /// Minor compute capability.
        minor: u32,
    },
}

/// A GPU name that cannot be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuError {
    /// The name as given.
    pub input: String,
    /// Why it is not a GPU.
    pub reason: String,
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}' is not a GPU: {}", self.input, self.reason)
    }
}

impl std::error::Error for GpuError {}

impl Gpu {
    /// Parses a GPU: an AMD target ID of a real processor (`gfx1151`, `gfx90a:xnack+`,
    /// `gfx942:sramecc+:xnack-`, aliases such as `fiji` included), or an NVIDIA compute
    /// capability (`sm_86`, `8.6`). Generic processors are not GPUs.
    pub fn parse(s: &str) -> Result<Gpu, GpuError> {
        let fail = |reason: &str| GpuError {
            input: s.to_owned(),
            reason: reason.to_owned(),
        };
        if let Some(cc) = s.strip_prefix("sm_") {
            let a = NvArch::parse_number(cc)
                .ok_or_else(|| fail("expected sm_XY with a compute capability X.Y"))?;
            return Ok(Gpu::Nvidia {
                major: a.major,
                minor: a.minor,
            });
        }
        if let Some((ma, mi)) = s.split_once('.') {
            if let (Ok(major), Ok(minor)) = (ma.parse(), mi.parse()) {
                if !ma.is_empty() && !mi.is_empty() && mi.len() == 1 {
                    return Ok(Gpu::Nvidia { major, minor });
                }
            }
            return Err(fail("expected a compute capability X.Y"));
        }
        let tid = TargetId::parse(s).map_err(|e| fail(&e.to_string()))?;
        let p = amdgpu_processor(tid.processor())
            .ok_or_else(|| fail("unknown AMD GPU processor (and not sm_XY or X.Y)"))?;
        if p.generic {
            return Err(fail(
                "a generic processor is a code-object target, not a GPU",
            ));
        }
        for (name, _) in tid.features() {
            if !p.features().contains(&name.as_str()) {
                return Err(fail(&format!(
                    "{} has no '{name}' setting (it has: {})",
                    p.name,
                    if p.features().is_empty() {
                        "none".to_owned()
                    } else {
                        p.features().join(", ")
                    }
                )));
            }
        }
        Ok(Gpu::Amd {
            processor: p.name,
            xnack: tid.feature("xnack"),
            sramecc: tid.feature("sramecc"),
        })
    }
}

impl fmt::Display for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Gpu::Amd {
                processor,
                xnack,
                sramecc,
            } => {
                f.write_str(processor)?;
                let sign = |b: bool| if b { '+' } else { '-' };
                if let Some(s) = sramecc {
                    write!(f, ":sramecc{}", sign(*s))?;
                }
                if let Some(x) = xnack {
                    write!(f, ":xnack{}", sign(*x))?;
                }
                Ok(())
            }
            Gpu::Nvidia { major, minor } => write!(f, "sm_{major}{minor}"),
        }
    }
}

/// Which rule makes a code object load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// AMD: the GPU's own processor.
    ExactProcessor,
    /// AMD: a generic processor covering the GPU's (`gfx11-generic`).
    GenericProcessor(&'static str),
    /// NVIDIA: a cubin of the same major and an equal or lower minor.
    Cubin,
    /// NVIDIA: PTX of an equal or lower capability, compiled by the driver at load time.
    Ptx,
    /// NVIDIA: architecture-specific code (`sm_90a`) for exactly this GPU.
    ArchSpecific,
    /// NVIDIA: family-specific code (`sm_100f`) for this family.
    FamilySpecific,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::ExactProcessor => f.write_str("same processor"),
            Rule::GenericProcessor(g) => write!(f, "generic processor {g}"),
            Rule::Cubin => f.write_str("cubin of the same major and an equal or lower minor"),
            Rule::Ptx => f.write_str("PTX, compiled by the driver"),
            Rule::ArchSpecific => f.write_str("architecture-specific code for this GPU"),
            Rule::FamilySpecific => f.write_str("family-specific code for this family"),
        }
    }
}

/// A code object that loads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fit {
    /// The rule that makes it load.
    pub rule: Rule,
    /// GPU settings the code object needs that the GPU was named without
    /// (`[("xnack", false)]`: loads only if the GPU runs with `xnack-`). Empty: loads.
    pub requires: Vec<(&'static str, bool)>,
}

/// Why a code object does not load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// Not device code a GPU runtime loads (host code, an OpenMP entry, bitcode, a
    /// relocatable fat-object section); the text says what it is.
    NotLoadable(String),
    /// Code for the other vendor's GPUs.
    OtherVendor,
    /// AMD: another processor.
    Processor {
        /// The code object's processor.
        code: String,
    },
    /// AMD: a generic processor that does not cover the GPU's.
    NotCovered {
        /// The generic processor.
        generic: &'static str,
    },
    /// AMD: a feature set differently (or one the GPU does not have).
    Feature {
        /// `xnack` or `sramecc`.
        name: &'static str,
        /// The code object's setting.
        code: bool,
        /// The GPU's setting; `None` when the GPU has no such setting.
        gpu: Option<bool>,
    },
    /// NVIDIA: a cubin for another major capability.
    Major,
    /// NVIDIA: code for a higher capability than the GPU's.
    Newer,
    /// NVIDIA: architecture-specific code for another GPU.
    ArchSpecificOther,
    /// The architecture cannot be read.
    Unreadable(String),
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::NotLoadable(what) => write!(f, "not loaded by a GPU runtime ({what})"),
            Mismatch::OtherVendor => f.write_str("code for another vendor's GPUs"),
            Mismatch::Processor { code } => write!(f, "code for {code}, another processor"),
            Mismatch::NotCovered { generic } => {
                write!(f, "{generic} does not cover this processor")
            }
            Mismatch::Feature { name, code, gpu } => {
                let sign = |b: bool| if b { '+' } else { '-' };
                match gpu {
                    Some(g) => write!(
                        f,
                        "built for {name}{}, the GPU runs with {name}{}",
                        sign(*code),
                        sign(*g)
                    ),
                    None => write!(
                        f,
                        "built for {name}{}, a setting the GPU does not have",
                        sign(*code)
                    ),
                }
            }
            Mismatch::Major => f.write_str("cubin for another major compute capability"),
            Mismatch::Newer => f.write_str("code for a higher compute capability"),
            Mismatch::ArchSpecificOther => {
                f.write_str("architecture-specific code for another GPU")
            }
            Mismatch::Unreadable(a) => write!(f, "unreadable architecture '{a}'"),
        }
    }
}

/// Whether the code object of bundle entry `entry_id`
/// (`hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+`) would be loaded on `gpu`.
pub fn compatible(entry_id: &str, gpu: &Gpu) -> Result<Fit, Mismatch> {
    let id = crate::id::EntryId::parse(entry_id);
    compatible_entry(
        id.kind().as_str(),
        id.triple().as_str(),
        id.target_id(),
        None,
        gpu,
    )
}

/// Whether an entry (as [`crate::inspect::EntryReport`] describes it: offload kind, triple,
/// target ID or architecture, offload-binary image kind) would be loaded on `gpu`.
pub fn compatible_entry(
    offload_kind: &str,
    triple: &str,
    arch: &str,
    image_kind: Option<&str>,
    gpu: &Gpu,
) -> Result<Fit, Mismatch> {
    let t = Triple::new(triple);
    if t.is_amdgcn() {
        if !matches!(offload_kind, "hip" | "hipv4" | "hcc") {
            return Err(Mismatch::NotLoadable(format!(
                "offload kind '{offload_kind}'"
            )));
        }
        if t.os() != Os::Amdhsa {
            return Err(Mismatch::NotLoadable(format!("triple '{triple}'")));
        }
        if image_kind == Some("bc") {
            return Err(Mismatch::NotLoadable("LLVM bitcode".to_owned()));
        }
        match gpu {
            Gpu::Amd {
                processor,
                xnack,
                sramecc,
            } => amd_compatible(arch, processor, *xnack, *sramecc),
            Gpu::Nvidia { .. } => Err(Mismatch::OtherVendor),
        }
    } else if t.is_nvptx() {
        if offload_kind == "host" {
            return Err(Mismatch::NotLoadable("host code".to_owned()));
        }
        let code = match image_kind {
            Some("bc") => return Err(Mismatch::NotLoadable("LLVM bitcode".to_owned())),
            Some("s") => NvArch::parse(arch).map(NvidiaCode::Ptx),
            _ => NvArch::parse(arch).map(NvidiaCode::Cubin),
        }
        .ok_or_else(|| Mismatch::Unreadable(arch.to_owned()))?;
        match gpu {
            Gpu::Nvidia { major, minor } => nvidia_compatible(&code, *major, *minor),
            Gpu::Amd { .. } => Err(Mismatch::OtherVendor),
        }
    } else if offload_kind == "host" {
        Err(Mismatch::NotLoadable("host code".to_owned()))
    } else {
        Err(Mismatch::NotLoadable(format!("triple '{triple}'")))
    }
}

/// The AMD rules over a code object's target ID and a GPU (see the module docs).
pub fn amd_compatible(
    code_target_id: &str,
    gpu_processor: &str,
    gpu_xnack: Option<bool>,
    gpu_sramecc: Option<bool>,
) -> Result<Fit, Mismatch> {
    let tid = TargetId::parse(code_target_id)
        .map_err(|_| Mismatch::Unreadable(code_target_id.to_owned()))?;
    let code_processor = target_id::amdgpu_processor(tid.processor());
    let code_name = code_processor.map_or(tid.processor(), |p| p.name);
    let gpu_proc = amdgpu_processor(gpu_processor);
    let rule = if code_name == gpu_processor {
        Rule::ExactProcessor
    } else if let Some(&(generic, members)) =
        GENERIC_PROCESSORS.iter().find(|(g, _)| *g == code_name)
    {
        if !members.contains(&gpu_processor) {
            return Err(Mismatch::NotCovered { generic });
        }
        Rule::GenericProcessor(generic)
    } else {
        return Err(Mismatch::Processor {
            code: code_name.to_owned(),
        });
    };
    let mut requires = Vec::new();
    for (name, gpu_setting, supported) in [
        ("sramecc", gpu_sramecc, gpu_proc.is_some_and(|p| p.sramecc)),
        ("xnack", gpu_xnack, gpu_proc.is_some_and(|p| p.xnack)),
    ] {
        let Some(code) = tid.feature(name) else {
            continue;
        };
        match gpu_setting {
            Some(g) if g == code => {}
            Some(g) => {
                return Err(Mismatch::Feature {
                    name,
                    code,
                    gpu: Some(g),
                });
            }
            None if supported => requires.push((name, code)),
            None => {
                return Err(Mismatch::Feature {
                    name,
                    code,
                    gpu: None,
                });
            }
        }
    }
    Ok(Fit { rule, requires })
}

/// An NVIDIA architecture: `sm_90` / `compute_90` → 9.0, with its suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NvArch {
    /// Major compute capability.
    pub major: u32,
    /// Minor compute capability.
    pub minor: u32,
    /// `a` (architecture-specific), `f` (family-specific) or none.
    pub suffix: Option<char>,
}

impl NvArch {
    /// Parses `sm_XY[a|f]` or `compute_XY[a|f]` (the last digit is the minor).
    pub fn parse(s: &str) -> Option<NvArch> {
        let n = s
            .strip_prefix("sm_")
            .or_else(|| s.strip_prefix("compute_"))?;
        NvArch::parse_number(n)
    }

    fn parse_number(n: &str) -> Option<NvArch> {
        let (digits, suffix) = match n.strip_suffix(['a', 'f']) {
            Some(d) => (d, n.chars().last()),
            None => (n, None),
        };
        if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let (ma, mi) = digits.split_at(digits.len() - 1);
        Some(NvArch {
            major: ma.parse().ok()?,
            minor: mi.parse().ok()?,
            suffix,
        })
    }
}

/// NVIDIA device code for one architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NvidiaCode {
    /// Machine code (a cubin / ELF) for `sm_XY`.
    Cubin(NvArch),
    /// PTX for `compute_XY`.
    Ptx(NvArch),
}

/// The NVIDIA rules (see the module docs) for `code` on a GPU of capability `major.minor`.
///
/// HOOK(nvfatbin): NVIDIA fat binaries (`.nv_fatbin`, `__nv_relfatbin`) hold several cubins
/// and PTX texts, each tagged with its architecture. When the `nvfatbin` reader lands, map
/// each of its entries to [`NvidiaCode::Cubin`] or [`NvidiaCode::Ptx`] with its [`NvArch`]
/// and call this function; `offload-build check` then treats them like bundle entries.
pub fn nvidia_compatible(code: &NvidiaCode, major: u32, minor: u32) -> Result<Fit, Mismatch> {
    let (arch, ptx) = match code {
        NvidiaCode::Cubin(a) => (a, false),
        NvidiaCode::Ptx(a) => (a, true),
    };
    let fit = |rule| {
        Ok(Fit {
            rule,
            requires: Vec::new(),
        })
    };
    match arch.suffix {
        Some('a') => {
            if (arch.major, arch.minor) == (major, minor) {
                fit(Rule::ArchSpecific)
            } else {
                Err(Mismatch::ArchSpecificOther)
            }
        }
        Some(_) => {
            if arch.major != major {
                Err(Mismatch::Major)
            } else if arch.minor > minor {
                Err(Mismatch::Newer)
            } else {
                fit(Rule::FamilySpecific)
            }
        }
        None if ptx => {
            if (arch.major, arch.minor) <= (major, minor) {
                fit(Rule::Ptx)
            } else {
                Err(Mismatch::Newer)
            }
        }
        None => {
            if arch.major != major {
                Err(Mismatch::Major)
            } else if arch.minor > minor {
                Err(Mismatch::Newer)
            } else {
                fit(Rule::Cubin)
            }
        }
    }
}

/// AMDGPU ELF `e_flags` processor numbers (`EF_AMDGPU_MACH_AMDGCN_*` of LLVM's
/// `BinaryFormat/ELF.h`, as `llvm-readobj` 22 names them; `gfx940` and `gfx941` from LLVM 19).
const AMDGCN_MACH: &[(u32, &str)] = &[
    (0x20, "gfx600"),
    (0x21, "gfx601"),
    (0x22, "gfx700"),
    (0x23, "gfx701"),
    (0x24, "gfx702"),
    (0x25, "gfx703"),
    (0x26, "gfx704"),
    (0x28, "gfx801"),
    (0x29, "gfx802"),
    (0x2a, "gfx803"),
    (0x2b, "gfx810"),
    (0x2c, "gfx900"),
    (0x2d, "gfx902"),
    (0x2e, "gfx904"),
    (0x2f, "gfx906"),
    (0x30, "gfx908"),
    (0x31, "gfx909"),
    (0x32, "gfx90c"),
    (0x33, "gfx1010"),
    (0x34, "gfx1011"),
    (0x35, "gfx1012"),
    (0x36, "gfx1030"),
    (0x37, "gfx1031"),
    (0x38, "gfx1032"),
    (0x39, "gfx1033"),
    (0x3a, "gfx602"),
    (0x3b, "gfx705"),
    (0x3c, "gfx805"),
    (0x3d, "gfx1035"),
    (0x3e, "gfx1034"),
    (0x3f, "gfx90a"),
    (0x40, "gfx940"),
    (0x41, "gfx1100"),
    (0x42, "gfx1013"),
    (0x43, "gfx1150"),
    (0x44, "gfx1103"),
    (0x45, "gfx1036"),
    (0x46, "gfx1101"),
    (0x47, "gfx1102"),
    (0x48, "gfx1200"),
    (0x49, "gfx1250"),
    (0x4a, "gfx1151"),
    (0x4b, "gfx941"),
    (0x4c, "gfx942"),
    (0x4e, "gfx1201"),
    (0x4f, "gfx950"),
    (0x51, "gfx9-generic"),
    (0x52, "gfx10-1-generic"),
    (0x53, "gfx10-3-generic"),
    (0x54, "gfx11-generic"),
    (0x55, "gfx1152"),
    (0x58, "gfx1153"),
    (0x59, "gfx12-generic"),
    (0x5a, "gfx1251"),
    (0x5f, "gfx9-4-generic"),
];

/// The target ID an AMDGPU code object was compiled for, as the HIP runtime's loader reads
/// it from the ELF header: the processor from `e_flags`' `EF_AMDGPU_MACH` and the `xnack` /
/// `sramecc` settings it records (`gfx90a:sramecc+:xnack-`; a feature left out is "any" or
/// unsupported). Code object v2 (`EI_ABIVERSION` 0) records `xnack` only when on; v3 records
/// on or any; v4 and later on, off or any. `None` when `data` is not a 64-bit little-endian
/// AMDGPU ELF file or names a processor unknown to LLVM 19 and 22.
pub fn code_object_target_id(data: &[u8]) -> Option<String> {
    use object::elf::{EM_AMDGPU, FileHeader64};
    const ELFOSABI_AMDGPU_HSA: u8 = 64;
    use object::{LittleEndian as LE, read::elf::FileHeader};
    let header = FileHeader64::<LE>::parse(data).ok()?;
    if header.e_machine(LE) != EM_AMDGPU || !header.is_little_endian() {
        return None;
    }
    let flags = header.e_flags(LE);
    let processor = AMDGCN_MACH.iter().find(|(m, _)| *m == flags & 0xff)?.1;
    let abi = header.e_ident().abi_version;
    let hsa = header.e_ident().os_abi == ELFOSABI_AMDGPU_HSA;
    // (feature, setting) pairs: `Some(true)` on, `Some(false)` off, `None` any.
    let (xnack, sramecc) = match (hsa, abi) {
        (true, 2..) => {
            let v4 = |bits: u32| match bits {
                3 => Some(true),
                2 => Some(false),
                _ => None,
            };
            (v4((flags >> 8) & 3), v4((flags >> 10) & 3))
        }
        (true, 1) => (
            (flags & 0x100 != 0).then_some(true),
            (flags & 0x200 != 0).then_some(true),
        ),
        _ => ((flags & 0x100 != 0).then_some(true), None),
    };
    let mut id = processor.to_string();
    for (name, on) in [("sramecc", sramecc), ("xnack", xnack)] {
        if let Some(on) = on {
            id.push_str(&format!(":{name}{}", if on { '+' } else { '-' }));
        }
    }
    Some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(s: &str) -> Gpu {
        Gpu::parse(s).unwrap()
    }

    fn loads(entry: &str, g: &str) -> bool {
        compatible(entry, &gpu(g)).is_ok_and(|f| f.requires.is_empty())
    }

    /// clr `isCodeObjectCompatibleWithDevice`: "agent_isa_processor != co_processor" fails;
    /// AMDGPUUsage processor table: `fiji` is an alternative name of `gfx803`.
    #[test]
    fn exact_processor() {
        assert!(loads("hipv4-amdgcn-amd-amdhsa--gfx1151", "gfx1151"));
        assert!(loads("hip-amdgcn-amd-amdhsa--gfx1100", "gfx1100"));
        assert!(loads("hipv4-amdgcn-amd-amdhsa--gfx803", "fiji"));
        assert_eq!(
            compatible("hipv4-amdgcn-amd-amdhsa--gfx1100", &gpu("gfx1151")),
            Err(Mismatch::Processor {
                code: "gfx1100".into()
            })
        );
        assert_eq!(
            compatible("hipv4-amdgcn-amd-amdhsa--gfx1151", &gpu("gfx1151"))
                .unwrap()
                .rule,
            Rule::ExactProcessor
        );
    }

    /// AMDGPUUsage, "Generic processors" table; clr `QueryGenericTarget` /
    /// `IsCompatibleWithGenericTarget`.
    #[test]
    fn generic_processors() {
        for (generic, members) in GENERIC_PROCESSORS {
            for m in *members {
                let e = format!("hipv4-amdgcn-amd-amdhsa--{generic}");
                let fit = compatible(&e, &gpu(m)).unwrap();
                assert_eq!(
                    fit.rule,
                    Rule::GenericProcessor(generic),
                    "{generic} on {m}"
                );
            }
            // Every member is a real processor of LLVM's table, and the generic one too.
            assert!(amdgpu_processor(generic).is_some_and(|p| p.generic));
        }
        assert!(loads("hipv4-amdgcn-amd-amdhsa--gfx11-generic", "gfx1151"));
        assert!(!loads("hipv4-amdgcn-amd-amdhsa--gfx11-generic", "gfx1200"));
        assert!(!loads("hipv4-amdgcn-amd-amdhsa--gfx9-generic", "gfx90a"));
        assert!(loads("hipv4-amdgcn-amd-amdhsa--gfx9-4-generic", "gfx942"));
        assert!(loads("hipv4-amdgcn-amd-amdhsa--gfx10-3-generic", "gfx1036"));
        assert!(!loads(
            "hipv4-amdgcn-amd-amdhsa--gfx10-1-generic",
            "gfx1030"
        ));
        assert!(loads("hipv4-amdgcn-amd-amdhsa--gfx12-generic", "gfx1201"));
        assert_eq!(
            compatible("hipv4-amdgcn-amd-amdhsa--gfx12-generic", &gpu("gfx1100")),
            Err(Mismatch::NotCovered {
                generic: "gfx12-generic"
            })
        );
        // A GPU is never a generic processor.
        assert!(Gpu::parse("gfx11-generic").is_err());
        // The generic processors every table of ours knows are the ones with members.
        for p in target_id::amdgpu_processors().iter().filter(|p| p.generic) {
            assert!(generic_members(p.name).is_some(), "{}", p.name);
        }
    }

    /// AMDGPUUsage, "Target ID": a feature left out means "any" and matches both settings;
    /// `+`/`-` only that setting. clr: `if (co_xnack != ' ') if (co_xnack != isa_xnack)`.
    #[test]
    fn xnack_and_sramecc() {
        assert!(loads("hipv4-amdgcn-amd-amdhsa--gfx90a", "gfx90a:xnack+"));
        assert!(loads("hipv4-amdgcn-amd-amdhsa--gfx90a", "gfx90a:xnack-"));
        assert!(loads(
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
            "gfx90a:xnack+"
        ));
        assert_eq!(
            compatible(
                "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
                &gpu("gfx90a:xnack-")
            ),
            Err(Mismatch::Feature {
                name: "xnack",
                code: true,
                gpu: Some(false)
            })
        );
        assert!(loads(
            "hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
            "gfx942:sramecc+:xnack-"
        ));
        assert!(!loads(
            "hipv4-amdgcn-amd-amdhsa--gfx942:sramecc-",
            "gfx942:sramecc+:xnack-"
        ));
        assert!(loads(
            "hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+",
            "gfx942:sramecc+"
        ));
        // The GPU named without a setting: loads only if the GPU runs so.
        let f = compatible("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", &gpu("gfx90a")).unwrap();
        assert_eq!(f.requires, vec![("xnack", false)]);
        // Generic code objects follow the same feature rule.
        assert!(!loads(
            "hipv4-amdgcn-amd-amdhsa--gfx9-generic:xnack+",
            "gfx906:xnack-"
        ));
        assert!(loads(
            "hipv4-amdgcn-amd-amdhsa--gfx9-generic:xnack+",
            "gfx906:xnack+"
        ));
        // A GPU without the setting (gfx1100 has no xnack) takes no code object with it.
        assert!(Gpu::parse("gfx1100:xnack+").is_err());
        assert_eq!(
            compatible("hipv4-amdgcn-amd-amdhsa--gfx10-3-generic", &gpu("gfx1030"))
                .unwrap()
                .requires,
            vec![]
        );
    }

    /// clr `getTripleTargetID`: only hip, hipv4 and hcc entries; host and OpenMP entries and
    /// bitcode are not code objects of the HIP runtime.
    #[test]
    fn only_hip_code_objects() {
        let g = gpu("gfx90a");
        assert!(matches!(
            compatible("host-x86_64-unknown-linux-gnu-", &g),
            Err(Mismatch::NotLoadable(_))
        ));
        assert!(matches!(
            compatible("openmp-amdgcn-amd-amdhsa--gfx90a", &g),
            Err(Mismatch::NotLoadable(_))
        ));
        assert!(matches!(
            compatible_entry("hip", "amdgcn-amd-amdhsa", "gfx90a", Some("bc"), &g),
            Err(Mismatch::NotLoadable(_))
        ));
        assert!(compatible_entry("hip", "amdgcn-amd-amdhsa", "gfx90a", Some("o"), &g).is_ok());
        assert_eq!(
            compatible("hipv4-amdgcn-amd-amdhsa--gfx90a", &gpu("sm_90")),
            Err(Mismatch::OtherVendor)
        );
    }

    /// CUDA C++ Programming Guide, "Binary Compatibility": a cubin for X.y runs on X.z, z ≥ y.
    #[test]
    fn nvidia_cubin_major_minor() {
        let sm = |s| NvidiaCode::Cubin(NvArch::parse(s).unwrap());
        assert_eq!(
            nvidia_compatible(&sm("sm_80"), 8, 6).unwrap().rule,
            Rule::Cubin
        );
        assert!(nvidia_compatible(&sm("sm_86"), 8, 6).is_ok());
        assert_eq!(nvidia_compatible(&sm("sm_86"), 8, 0), Err(Mismatch::Newer));
        assert_eq!(nvidia_compatible(&sm("sm_80"), 9, 0), Err(Mismatch::Major));
        assert_eq!(
            nvidia_compatible(&sm("sm_120"), 12, 0).unwrap().rule,
            Rule::Cubin
        );
        // Through the entry API: an offload-binary cubin for sm_70 on an 8.0 GPU.
        assert_eq!(
            compatible_entry(
                "cuda",
                "nvptx64-nvidia-cuda",
                "sm_70",
                Some("cubin"),
                &gpu("8.0")
            ),
            Err(Mismatch::Major)
        );
        assert!(
            compatible_entry(
                "cuda",
                "nvptx64-nvidia-cuda",
                "sm_75",
                Some("cubin"),
                &gpu("sm_75")
            )
            .is_ok()
        );
    }

    /// CUDA C++ Programming Guide, "PTX Compatibility": PTX for X.Y is compiled for any GPU of
    /// capability ≥ X.Y.
    #[test]
    fn nvidia_ptx() {
        let ptx = |s| NvidiaCode::Ptx(NvArch::parse(s).unwrap());
        assert_eq!(
            nvidia_compatible(&ptx("compute_70"), 9, 0).unwrap().rule,
            Rule::Ptx
        );
        assert!(nvidia_compatible(&ptx("compute_86"), 8, 6).is_ok());
        assert_eq!(
            nvidia_compatible(&ptx("compute_86"), 8, 0),
            Err(Mismatch::Newer)
        );
        assert_eq!(
            nvidia_compatible(&ptx("compute_90"), 8, 9),
            Err(Mismatch::Newer)
        );
        assert!(
            compatible_entry(
                "cuda",
                "nvptx64-nvidia-cuda",
                "sm_70",
                Some("s"),
                &gpu("12.0")
            )
            .is_ok()
        );
    }

    /// CUDA C++ Programming Guide, "Feature Availability": `sm_90a` / `compute_90a` run only
    /// on 9.0; family-specific `sm_100f` on the same major with an equal or higher minor.
    #[test]
    fn nvidia_arch_and_family_specific() {
        let a = NvidiaCode::Cubin(NvArch::parse("sm_90a").unwrap());
        assert_eq!(
            nvidia_compatible(&a, 9, 0).unwrap().rule,
            Rule::ArchSpecific
        );
        assert_eq!(
            nvidia_compatible(&a, 10, 0),
            Err(Mismatch::ArchSpecificOther)
        );
        let pa = NvidiaCode::Ptx(NvArch::parse("compute_90a").unwrap());
        assert_eq!(
            nvidia_compatible(&pa, 10, 0),
            Err(Mismatch::ArchSpecificOther)
        );
        let f = NvidiaCode::Cubin(NvArch::parse("sm_100f").unwrap());
        assert_eq!(
            nvidia_compatible(&f, 10, 3).unwrap().rule,
            Rule::FamilySpecific
        );
        assert_eq!(nvidia_compatible(&f, 12, 0), Err(Mismatch::Major));
    }

    #[test]
    fn gpu_names() {
        assert_eq!(
            gpu("gfx90a:xnack+"),
            Gpu::Amd {
                processor: "gfx90a",
                xnack: Some(true),
                sramecc: None
            }
        );
        assert_eq!(gpu("fiji").to_string(), "gfx803");
        assert_eq!(gpu("8.6"), Gpu::Nvidia { major: 8, minor: 6 });
        assert_eq!(gpu("sm_120").to_string(), "sm_120");
        for bad in [
            "gfx9999",
            "sm_x",
            "8.",
            "gfx1151:xnack+",
            "",
            "gfx90a:xnack",
        ] {
            assert!(Gpu::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn code_object_target_ids_from_the_elf_header() {
        let elf = |abi: u8, flags: u32| {
            let mut v = vec![0u8; 64];
            v[..4].copy_from_slice(b"\x7fELF");
            v[4] = 2;
            v[5] = 1;
            v[6] = 1;
            v[7] = 64;
            v[8] = abi;
            v[18..20].copy_from_slice(&224u16.to_le_bytes());
            v[48..52].copy_from_slice(&flags.to_le_bytes());
            v[52..54].copy_from_slice(&64u16.to_le_bytes());
            v
        };
        let id = |abi, flags| code_object_target_id(&elf(abi, flags));
        assert_eq!(id(3, 0x3f | 0x100 | 0x400).as_deref(), Some("gfx90a"));
        assert_eq!(
            id(3, 0x3f | 0x300 | 0x800).as_deref(),
            Some("gfx90a:sramecc-:xnack+")
        );
        assert_eq!(id(1, 0x36).as_deref(), Some("gfx1030"));
        assert_eq!(id(1, 0x2c | 0x100).as_deref(), Some("gfx900:xnack+"));
        assert_eq!(id(3, 0x27), None, "a reserved number");
        let mut x86 = elf(3, 0x3f);
        x86[18] = 62;
        assert_eq!(code_object_target_id(&x86), None);
        assert_eq!(code_object_target_id(b"garbage"), None);
    }
}
